/* SPDX-License-Identifier: MIT */
/*
 * Shared state of tests/test_diff_fuzz2.c (the driver) and tests/fuzz2_gen.c
 * (the SQE generator) and tests/fuzz2_sys.c (hostile register/enter calls).
 */
#ifndef TESTS_FUZZ2_H
#define TESTS_FUZZ2_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>

#include "dtest.h"

#define F2_MAXN 8		/* SQEs per round */
#define F2_SLOT 2048		/* buffer slot per SQE index */
#define F2_BUF_SZ (F2_SLOT * F2_MAXN)
#define F2_REGION 4096		/* region of the main file per SQE index */
#define F2_FILE_SZ (F2_REGION * F2_MAXN)
#define F2_PAGE 4096
#define F2_PIPE_FILL 256	/* bytes in the pipe and socket per round */
#define F2_PBUF_SZ 64		/* one provided buffer */
#define F2_PBUF_N 16		/* classic group 1: buffers in its area */
#define F2_RING_N 8		/* PBUF ring group 2: entries */
#define F2_FIXED_MAIN F2_MAXN	/* fixed slot of the main file */
#define F2_FIXED_HOLE (F2_MAXN + 1)
#define F2_FIXED_PIPE (F2_MAXN + 2)
#define F2_NFIXED (F2_MAXN + 3)
#define F2_UD_CANCEL_ALL 0xca11ULL

enum f2_kind {
	F2_EVENT,		/* pipes, sockets, polls, timers, cancels */
	F2_FILE,		/* files, fixed resources, the scratch dir */
};

/* What the driver must know about a generated SQE. */
struct f2_meta {
	uint8_t op;
	bool must_fire;		/* posts by itself (zero timer): wait for it */
	bool ltimeout;		/* LINK_TIMEOUT: its CQE is unordered */
	bool fd_result;		/* OPENAT into the fd table: res is a number */
	bool tail;		/* a chain's last SQE, or standalone */
	bool skip;		/* IOSQE_CQE_SKIP_SUCCESS */
	int chain;		/* chain id (-1: standalone) */
};

struct f2_env {
	struct dctx *c;
	struct tring *r;
	enum f2_kind kind;
	int file;		/* main temp file, F2_FILE_SZ bytes */
	int tfd[F2_MAXN];	/* per-index scratch file t<i> */
	int dirfd;		/* the scratch directory */
	char dir[64];
	int pr, pw;		/* pipe, F2_PIPE_FILL bytes in it per round */
	int s0, s1;		/* socketpair; s0 readable per round */
	int closed_fd;		/* a number that is not open */
	char *buf;		/* F2_BUF_SZ, slot i for SQE i (hashed) */
	char *pbuf;		/* classic provided buffers (hashed) */
	char *rbuf;		/* PBUF ring buffers (hashed) */
	struct io_uring_buf_ring *br;	/* page-aligned ring memory */
	bool br_registered;
	char *scratch;		/* statx output etc., not hashed */
	/* hostile pages: edge (RW) | none | ro | pedge (RW) | none2 */
	char *edge, *none, *ro, *pedge;
	struct iovec iov[F2_MAXN][3];
	struct __kernel_timespec ts[F2_MAXN][2];
	char names[F2_MAXN][3][16];
	struct f2_meta meta[F2_MAXN];
	unsigned int n;
	bool any_allowed;	/* round may use ASYNC_CANCEL_ANY */
	uint64_t ud_base;
};

uint32_t f2_rnd(void);
uint32_t f2_pick(uint32_t n);
void f2_seed(uint64_t seed);
/* The generator's choices come from data first (4 bytes each), then from
 * the seeded xorshift (the libFuzzer target fuzz_uuring's inputs). */
void f2_stream(const uint8_t *data, size_t len);
/* Every choice made is also written to f (NULL: stop), 4 bytes each: the
 * stream that replays the run (tests/fuzz/corpus). */
void f2_record(FILE *f);

/* Fills the round's n SQEs (env->kind chooses the family). */
void f2_gen_round(struct f2_env *e);

/* A round of hostile register and enter calls; restores the resources. */
void f2_sys_round(struct f2_env *e, unsigned int round);
/* Registers the fixed file table and buffers the rounds expect. */
void f2_register_resources(struct f2_env *e, const char *label);

#endif /* TESTS_FUZZ2_H */
