/* SPDX-License-Identifier: MIT */
/*
 * Provided buffers' internals that ops/kbuf.c (groups, single
 * selections, registration) shares with ops/kbuf_multi.c (several
 * buffers for one transfer).
 */
#ifndef UURING_OPS_KBUF_INT_H
#define UURING_OPS_KBUF_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/types.h"

#define NR_HASH 64

struct kb_buf {
	struct kb_buf *next;
	uint64_t addr;
	uint32_t len;
	uint16_t bid;
};

struct kb_group {
	struct kb_group *next;  /* hash chain */
	uint16_t bgid;
	bool ring;
	/* legacy */
	struct kb_buf *head, *tail;
	unsigned int nbufs;
	/* ring */
	uint64_t ring_addr;
	uint32_t mask;
	uint16_t rhead;
	bool inc;
	void *region;           /* IOU_PBUF_RING_MMAP: engine memory */
	size_t region_size;
};

struct uu_kbuf_ctx {
	pthread_mutex_t lock;
	struct kb_group *hash[NR_HASH];
};

struct uu_kbuf_ctx *uu_kb_ctx_get(struct uu_ring *r, bool create);
struct kb_group *uu_kb_group_find(struct uu_kbuf_ctx *c, uint16_t bgid);
/* the ring's tail and entry idx (fault-safe on an application's ring) */
int uu_kb_ring_tail(const struct kb_group *g, uint16_t *tail);
int uu_kb_ring_entry(const struct kb_group *g, uint16_t idx,
		     struct io_uring_buf *b);
/* io_kbuf_commit of nr buffers (len bytes on an incremental ring): true
 * when they were used up */
bool uu_kb_ring_commit_n(struct kb_group *g, int len, unsigned int nr);
/* the CQE flags of the selected buffer(s), which are consumed; an
 * uncommitted ring selection needs the group lock (held by the caller) */
uint32_t uu_kb_put(struct uu_req *req, int res);

#endif /* UURING_OPS_KBUF_INT_H */
