/* SPDX-License-Identifier: MIT */
/*
 * Provided buffers (ops/kbuf.c, ops/kbuf_multi.c): the groups, selection
 * for a request, PROVIDE_BUFFERS and REMOVE_BUFFERS.
 */
#ifndef UURING_OPS_KBUF_H
#define UURING_OPS_KBUF_H

#include "core/types.h"

enum { UU_KB_NONE, UU_KB_LEGACY, UU_KB_RING };

struct uu_kbuf_ctx;
int uu_kbuf_register(struct uu_ring *r, unsigned int opcode, void *arg,
		     unsigned int nr_args);
void uu_kbuf_free(struct uu_ring *r);
/* a forked child adopts the ring (xproc/xproc.c): its copy's lock */
void uu_kbuf_adopt(struct uu_ring *r);
/* uuring_mmap at IORING_OFF_PBUF_RING (IOU_PBUF_RING_MMAP): 0 and *out,
 * or -errno */
int uu_kbuf_mmap(struct uu_ring *r, uint64_t offset, void *addr, size_t len,
		 int prot, int flags, void **out);
int uu_provide_buffers_prep(struct uu_req *req);
int uu_remove_buffers_prep(struct uu_req *req);
int uu_manage_buffers_issue(struct uu_req *req, unsigned int issue_flags);

/*
 * IOSQE_BUFFER_SELECT for a read (ops/rw.c):
 * uu_kbuf_prep() at prep, with the length asked for;
 * uu_kbuf_select() at issue, unless req->kb.state already holds a buffer:
 * 0 with req->kb.addr/len set, or -ENOBUFS.  can_poll: the file is
 * pollable (a ring buffer is then committed only when the read completes,
 * and the group stays locked until uu_kbuf_after_issue; otherwise it is
 * committed at once, as the kernel does for io-wq and unpollable files);
 * uu_kbuf_after_issue() after the I/O: a parked request gives the buffer
 * back (unless it is a committed ring buffer), a completed one consumes it
 * and gets its CQE flags in req->cflags;
 * uu_kbuf_cleanup() at completion: a buffer still held (a cancelled
 * request) is consumed, with the CQE flags.
 */
void uu_kbuf_prep(struct uu_req *req, uint32_t want);
int uu_kbuf_select(struct uu_req *req, unsigned int issue_flags, bool can_poll);
void uu_kbuf_after_issue(struct uu_req *req, int res);
void uu_kbuf_cleanup(struct uu_req *req);
/*
 * The socket receives (ops/net.c) settle a selection themselves, each
 * releasing the group lock a pollable selection holds:
 * uu_kbuf_recycle() gives the buffer back (legacy: to the head of its
 * group; uncommitted ring: not committed), unless it is a committed ring
 * buffer, which stays with the request (returns false);
 * uu_kbuf_consume() consumes it and returns the CQE flags;
 * uu_kbuf_hold() keeps it with a request that waits after a partial
 * transfer (a ring buffer is committed).
 */
bool uu_kbuf_recycle(struct uu_req *req);
uint32_t uu_kbuf_consume(struct uu_req *req, int res);
void uu_kbuf_hold(struct uu_req *req);

/*
 * Several buffers for one transfer (ops/kbuf_multi.c, for the bundles
 * of ops/net_bundle.c; the kernel's io_buffers_select and
 * io_buffers_peek): a ring gives up to
 * nr_iovs buffers from its head (up to what max_len needs when grow is
 * set and a limit given; nr_iovs then becomes the count mapped), a
 * legacy group one.  Returns the count, or -ENOENT (unknown group),
 * -ENOBUFS, -EFAULT.  commit: the ring's head moves at once (sends);
 * otherwise the group lock is held, as for a pollable single selection,
 * until uu_kbuf_recycle or uu_kbuf_consume_multi, which commits len
 * bytes in nr buffers and returns the CQE flags of the first.
 */
#define UU_KBUF_PEEK_MAX 256
struct iovec;
struct uu_kbuf_multi {
	struct iovec *iovs;      /* room for UU_KBUF_PEEK_MAX */
	size_t max_len;          /* 0: no limit */
	unsigned int nr_iovs;    /* the request's vector size */
	bool grow;               /* the vector may grow (KBUF_MODE_EXPAND) */
	bool send;               /* a legacy buffer is taken whole */
	size_t out_len;          /* out: bytes mapped */
	bool empty;              /* out: the ring has no buffer left */
	bool partial;            /* out: the last buffer was cut short */
};
int uu_kbuf_select_multi(struct uu_req *req, struct uu_kbuf_multi *a,
			 unsigned int issue_flags, bool commit);
uint32_t uu_kbuf_consume_multi(struct uu_req *req, int len, unsigned int nr);
/*
 * A MSG_WAITALL bundle that has to wait after len bytes (the kernel's
 * io_net_kbuf_recyle): the nr buffers they reached are committed and the
 * group lock is dropped; the rest of the selection stays with the
 * request.  uu_kbuf_commit_more commits len more bytes in nr more
 * buffers of it later (locked here), before uu_kbuf_consume_multi posts.
 */
void uu_kbuf_commit_part(struct uu_req *req, int len, unsigned int nr);
void uu_kbuf_commit_more(struct uu_req *req, int len, unsigned int nr);

#endif /* UURING_OPS_KBUF_H */
