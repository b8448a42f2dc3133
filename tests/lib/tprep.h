/* SPDX-License-Identifier: MIT */
/*
 * tprep: the SQE and recording helpers many differential tests share, so
 * that a scenario reads as what it submits and what it records.
 *
 * The recording helpers come in two flavours where SQPOLL rings
 * (UURING_TEST_RING_MODE=sqpoll) make a raw value timing-dependent: the
 * plain one records the value as is, the _sqp one what does not depend on
 * the SQ thread's timing.  A test keeps the flavour it was written with,
 * since that decides what it compares.
 */
#ifndef TESTS_TPREP_H
#define TESTS_TPREP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtest.h"

/* ---- SQEs (from tring_get_sqe: zeroed) ---- */

/* tring_prep_rw on the next free SQE, with the given sqe->flags. */
struct io_uring_sqe *tprep(struct tring *r, int op, int fd, const void *addr,
			   unsigned int len, uint64_t off, uint64_t ud,
			   uint8_t flags);
/* A NOP with user_data ud and sqe->flags flags. */
void tprep_nop(struct tring *r, uint64_t ud, uint8_t flags);
/* An SQE template (all other fields zero), for drun1_sqe and dsubmit_nop. */
struct io_uring_sqe tsqe(int op, int fd, uint64_t addr, uint32_t len,
			 uint64_t off, uint64_t ud);

/* ---- recording ---- */

/* Submits what is queued and records enter's result as "LABEL: submit". */
void dsubmit(struct dctx *c, struct tring *r, const char *label);
/*
 * The same, but on an SQPOLL ring, where enter returns the count of SQEs
 * the SQ thread has not taken yet, a success is recorded as 1.
 */
void dsubmit_sqp(struct dctx *c, struct tring *r, const char *label);

/*
 * Waits up to ms for a CQE; records whether one came ("a CQE within MS
 * ms": enter did not return -ETIME) and how many are ready.
 */
void dnone(struct dctx *c, struct tring *r, int ms, const char *label);
/*
 * The same for scenarios that also run on SQPOLL rings, where an enter
 * that hands SQEs to the SQ thread returns their count without waiting:
 * it waits once more then, and "a CQE within" is whether one is ready.
 */
void dnone_sqp(struct dctx *c, struct tring *r, int ms, const char *label);

/* Reaps up to n CQEs into q (2 s per wait) and records them. */
unsigned int dreapq(struct dctx *c, struct tring *r, struct tcqe *q,
		    unsigned int n, bool ordered, const char *label);
/* The same into a buffer of its own. */
unsigned int dreapn(struct dctx *c, struct tring *r, unsigned int n,
		    bool ordered, const char *label);
/* Reaps one CQE (waiting up to ns) and records it; its res or -99999. */
int dreap1_within(struct dctx *c, struct tring *r, int64_t ns,
		  const char *label);
/* The same, waiting up to 2 s. */
int dreap1(struct dctx *c, struct tring *r, const char *label);
/* Submits one request and records its CQE (it must complete at once). */
int dnow(struct dctx *c, struct tring *r, const char *label);
/* The same with dsubmit_sqp. */
int dnow_sqp(struct dctx *c, struct tring *r, const char *label);
/*
 * Submits what is queued (one SQE), recording enter's result only when it
 * is not 1, then reaps one CQE (2 s) and records it; its res or -99999.
 */
int drun1(struct dctx *c, struct tring *r, const char *label);
/* The same for a copy of *t. */
int drun1_sqe(struct dctx *c, struct tring *r, const struct io_uring_sqe *t,
	      const char *label);
/*
 * Queues a copy of *t and a NOP (user_data nop_ud) behind it, submits and
 * records the count as "LABEL: submitted"; when a prep error stopped the
 * submission after the first, the NOP goes in a second enter.  Returns
 * the total submitted (2 unless an enter failed).
 */
int dsubmit_nop(struct dctx *c, struct tring *r, const struct io_uring_sqe *t,
		uint64_t nop_ud, const char *label);

/*
 * On a fresh 8-entry ring: records REGISTER_PROBE (256 ops) as "probe",
 * then for each of the n opcodes ops[] whether the probe marks it
 * supported, labelled labels[i] (labels NULL: "opcode N supported").
 */
void dprobe_ops(struct dctx *c, const int *ops, const char *const *labels,
		unsigned int n);

/* ---- provided-buffer rings ---- */

/* REGISTER_PBUF_RING of ring (entries, group bgid, flags) on r. */
int tpbuf_reg(struct tring *r, void *ring, unsigned int entries,
	      uint16_t bgid, uint16_t flags);
/* REGISTER_PBUF_STATUS of group bgid: its head, or the error. */
int tpbuf_head(struct tring *r, uint32_t bgid);
/*
 * Adds a buffer at *tail (masked by mask) and publishes the new tail
 * with a release store (pairs with the acquire load of the tail by the
 * ring when it selects a buffer).
 */
void tbuf_ring_add(struct io_uring_buf_ring *br, unsigned int mask,
		   uint16_t *tail, void *addr, uint32_t len, uint16_t bid);

/* ---- fds ---- */

/* write(2) of all n bytes, or abort: the scenario cannot go on. */
void twrite(int fd, const void *b, size_t n);
/* Writes 4 KiB blocks without blocking until the pipe is full; the bytes. */
int tfill_pipe(int fd);
/* Reads without blocking until fd is empty; the bytes read. */
int tdrain_fd(int fd);
/* A connected AF_UNIX stream pair, close-on-exec; socketpair's result. */
int tsockpair(int sp[2]);
/* Closes fds[0], then fds[1]. */
void tclose2(const int fds[2]);

/* ---- threads ---- */

/*
 * Calls fn(tid, arg) (fn may be NULL) for each thread of this process
 * whose name (comm) is name, or starts with it when prefix is true, in
 * /proc/self/task order.  Returns how many matched, or -1 when
 * /proc/self/task cannot be read.
 */
int tthreads_named(const char *name, bool prefix,
		   void (*fn)(const char *tid, void *arg), void *arg);

/*
 * Of the threads tthreads_named(name, prefix) finds, how many are inside
 * system call nr now (/proc/self/task/TID/syscall); *all (if not NULL)
 * gets how many there are, or -1 when /proc/self/task cannot be read.
 */
int tthreads_in_syscall(const char *name, bool prefix, long nr, int *all);

/*
 * Of the threads tthreads_named(name, prefix) finds, how many sleep in the
 * kernel function wchan now (/proc/self/task/TID/wchan, for example
 * "wait_for_partner" for a FIFO open, "pipe_wait_readable" for a splice
 * from an empty pipe), or -1 when /proc/self/task cannot be read.  Unlike
 * the system call number it also works for the kernel's io-wq workers,
 * which block inside the kernel without a system call of their own.
 */
int tthreads_in_wchan(const char *name, bool prefix, const char *wchan);

/* In secs seconds, unless the process is gone: "FAIL: watchdog (hung)"
 * on stdout and _exit(2) (SIGALRM). */
void twatchdog(unsigned int secs);

#endif /* TESTS_TPREP_H */
