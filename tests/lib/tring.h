/* SPDX-License-Identifier: MIT */
/*
 * tring: a minimal io_uring ring helper over a test backend (struct
 * backend), with liburing's memory ordering: SQ tail and CQ head are
 * published with release stores, CQ tail and SQ head read with acquire loads.
 *
 * Usable with the kernel's or uuring's io_uring; no liburing dependency.
 */
#ifndef TESTS_TRING_H
#define TESTS_TRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "abi/io_uring_abi.h"
#include "backend.h"

struct tring {
	const struct backend *be;
	int fd;			/* ring fd */
	int enter_fd;		/* fd or registered index passed to enter */
	unsigned int enter_flags;	/* IORING_ENTER_REGISTERED_RING or 0 */
	struct io_uring_params p;	/* as returned by setup */
	unsigned int flags;	/* p.flags */

	/* mappings (or NO_MMAP user memory) */
	void *sq_ring;
	size_t sq_ring_sz;
	void *cq_ring;
	size_t cq_ring_sz;
	struct io_uring_sqe *sqes;
	size_t sqes_sz;
	bool user_mem;		/* NO_MMAP: we allocated sq_ring/sqes */
	bool ext_mem;		/* NO_MMAP: the caller's memory (user_addr) */
	bool mode_added;	/* UURING_TEST_RING_MODE added setup flags */

	/* SQ */
	unsigned int *sq_head, *sq_tail, *sq_flags, *sq_dropped, *sq_array;
	unsigned int sq_mask, sq_entries;
	unsigned int sqe_head, sqe_tail;	/* local, not yet published */
	unsigned int sqe_shift;			/* 1 with SQE128 */

	/* CQ */
	unsigned int *cq_head, *cq_tail, *cq_overflow, *cq_flags;
	struct io_uring_cqe *cqes;
	unsigned int cq_mask, cq_entries;
	unsigned int cqe_shift;			/* 1 with CQE32 */
};

/* A CQE copied out of the ring (CQE32 extra words in big[]). */
struct tcqe {
	uint64_t user_data;
	int32_t res;
	uint32_t flags;
	uint64_t big[2];
};

/*
 * Sets up a ring on backend be.  p may be NULL (flags 0); otherwise it is
 * passed to setup as is and receives the returned params.  For
 * IORING_SETUP_NO_MMAP the helper allocates the ring and SQE memory and
 * fills p->sq_off.user_addr / p->cq_off.user_addr itself, unless both are
 * already set: then that memory is used and stays the caller's.
 * Returns 0 or the negative errno of setup/mmap (ring torn down).
 */
int tring_init_params(struct tring *r, const struct backend *be,
		      unsigned int entries, struct io_uring_params *p);
int tring_init(struct tring *r, const struct backend *be,
	       unsigned int entries, unsigned int flags);
/* Unmaps and closes the ring (safe on a zeroed or exited tring). */
void tring_exit(struct tring *r);
/*
 * IORING_REGISTER_RESIZE_RINGS with p (published SQEs flushed first), then
 * the new rings mapped in place of the old ones, as liburing's
 * io_uring_resize_rings.  0 or the negative errno; -EOPNOTSUPP for a
 * NO_MMAP ring.
 */
int tring_resize(struct tring *r, struct io_uring_params *p);

/*
 * Next free SQE (zeroed, 64 or 128 bytes), or NULL if the SQ is full.
 */
struct io_uring_sqe *tring_get_sqe(struct tring *r);
/* Publishes pending SQEs (SQ array + release store of tail); returns the
 * number of SQEs not yet consumed by the ring (tail - head). */
unsigned int tring_flush(struct tring *r);

/*
 * On a ring made SQPOLL by UURING_TEST_RING_MODE: waits (about 2 s at
 * most) until the SQ thread has consumed every published SQE, so that,
 * as after a plain enter, the CQEs of the SQEs that completed inline are
 * posted (the SQ head moves after them on both backends).  Returns false
 * on timeout; true at once on other rings.  tring_enter calls it after
 * an enter that submits.
 */
bool tring_sqpoll_settle(struct tring *r);
/* Raw enter on this ring (honours a registered ring fd). */
int tring_enter(struct tring *r, unsigned int to_submit,
		unsigned int min_complete, unsigned int flags,
		const void *arg, size_t argsz);
/*
 * IORING_ENTER_SQ_WAKEUP when r is an SQPOLL ring whose SQ thread sleeps
 * (IORING_SQ_NEED_WAKEUP) and to_submit SQEs were published, else 0: what
 * liburing adds to enter.  For scenarios that call be->enter directly.
 */
unsigned int tring_sqpoll_wakeup_flag(struct tring *r, unsigned int to_submit);
/* flush + enter(to_submit = pending).  Returns enter's result. */
int tring_submit(struct tring *r);
int tring_submit_and_wait(struct tring *r, unsigned int wait_nr);
/*
 * GETEVENTS with an EXT_ARG relative timeout (timeout_ns < 0: none) and
 * optional min_wait_usec; also submits pending SQEs.  Returns enter's
 * result (-ETIME on timeout).
 */
int tring_wait(struct tring *r, unsigned int wait_nr, int64_t timeout_ns);
int tring_wait_ext(struct tring *r, unsigned int to_submit,
		   unsigned int wait_nr, unsigned int flags,
		   const struct timespec *ts, const void *sigmask,
		   unsigned int min_wait_usec);

/* CQ access */
unsigned int tring_cq_ready(struct tring *r);
/* CQE at head, or NULL when the CQ is empty. */
struct io_uring_cqe *tring_peek_cqe(struct tring *r);
void tring_cq_advance(struct tring *r, unsigned int n);
/* Copies up to max CQEs out and advances over them; returns the count. */
unsigned int tring_reap(struct tring *r, struct tcqe *out, unsigned int max);
/*
 * Reaps until `want` CQEs have been collected (waiting with GETEVENTS and
 * the given per-wait timeout, submitting nothing); returns the count
 * (< want on timeout/error).
 */
unsigned int tring_reap_wait(struct tring *r, struct tcqe *out,
			     unsigned int want, int64_t timeout_ns);

/*
 * On an SQPOLL ring, the SQ thread submits and completes after enter has
 * returned: waits (sleeping 1 ms steps, no enter, so nothing else runs)
 * until at least n CQEs are in the CQ or timeout_ms passed.  Returns
 * tring_cq_ready().  A no-op on other rings, where a scenario that reads
 * the CQ right after enter means to look at it then.
 */
unsigned int tring_sqpoll_await_cqes(struct tring *r, unsigned int n,
				     int timeout_ms);
/*
 * The same for the SQ: on an SQPOLL ring, waits until the SQ thread has
 * taken every published SQE (SQ head == tail) or timeout_ms passed.
 * Returns the SQEs still not taken (0 at once on other rings).
 */
unsigned int tring_sqpoll_await_sq_taken(struct tring *r, int timeout_ms);

#define tring_for_each_cqe(r, head, cqe)					\
	for ((head) = *(r)->cq_head;						\
	     (head) != __atomic_load_n((r)->cq_tail, __ATOMIC_ACQUIRE) &&	\
	     ((cqe) = &(r)->cqes[((head) & (r)->cq_mask) << (r)->cqe_shift], 1); \
	     (head)++)

static inline unsigned int tring_sq_flags(struct tring *r)
{
	return __atomic_load_n(r->sq_flags, __ATOMIC_ACQUIRE);
}

static inline unsigned int tring_sq_space_left(struct tring *r)
{
	return r->sq_entries -
	       (r->sqe_tail - __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE));
}

/* SQE prep helpers (sqe must come from tring_get_sqe: already zeroed). */
static inline void tring_prep_rw(struct io_uring_sqe *sqe, int op, int fd,
				 const void *addr, unsigned int len,
				 uint64_t off, uint64_t user_data)
{
	sqe->opcode = (uint8_t)op;
	sqe->fd = fd;
	sqe->addr = (uint64_t)(uintptr_t)addr;
	sqe->len = len;
	sqe->off = off;
	sqe->user_data = user_data;
}

static inline void tring_prep_nop(struct io_uring_sqe *sqe, uint64_t user_data)
{
	tring_prep_rw(sqe, IORING_OP_NOP, -1, NULL, 0, 0, user_data);
}

/* Queues n NOPs with user_data base..base+n-1 and given sqe flags. */
int tring_queue_nops(struct tring *r, unsigned int n, uint64_t base,
		     uint8_t sqe_flags);

/* Registers the ring fd (RING_FDS, offset = -1 i.e. any) and switches
 * enter to IORING_ENTER_REGISTERED_RING; returns the index or -errno. */
int tring_register_ring_fd(struct tring *r);
int tring_unregister_ring_fd(struct tring *r);

#endif /* TESTS_TRING_H */
