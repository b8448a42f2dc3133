// SPDX-License-Identifier: MIT
/*
 * Differential tests: FUTEX_WAKE (futex2 flags, bitsets, counts, a waiter
 * in another thread), FUTEX_WAIT (queued before enter returns: woken by
 * FUTEX_WAKE and by raw futex(2) wakes, FIFO order, bitsets, links) and
 * FUTEX_WAITV (prep and issue errors, woken on each index, 128 futexes,
 * IOSQE_ASYNC, links, ASYNC_CANCEL, ring exit) and
 * WAITID (exited, stopped, still running children,
 * WNOHANG, WNOWAIT, pidfds, a wait that blocks until the child exits),
 * with their prep and issue errors.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define F2_U8 0x00
#define F2_U32 0x02
#define F2_U64 0x03
#define F2_NUMA 0x04
#define F2_MPOL 0x08
#define F2_PRIVATE 0x80
#define MATCH_ANY 0xffffffffULL

#define NOP_UD 0xfeedULL

#define P(x) ((uint64_t)(uintptr_t)(x))

/* FUTEX_WAKE: uaddr in addr, count in addr2, bitset in addr3, flags in fd */
static struct io_uring_sqe wake(void *uaddr, uint64_t nr, uint64_t mask,
				uint32_t flags, uint64_t ud)
{
	struct io_uring_sqe s = tsqe(IORING_OP_FUTEX_WAKE, (int)flags, P(uaddr),
				     0, nr, ud);

	s.addr3 = mask;
	return s;
}

/*
 * Submits a copy of *t followed by a NOP and records the CQEs (multiset)
 * and the number submitted: a prep error stops the submission there.
 */
static int run1(struct dctx *c, struct tring *r, const struct io_uring_sqe *t,
		const char *label)
{
	struct tcqe cqe[2];
	unsigned int n, i;
	int res = -99999;

	dsubmit_nop(c, r, t, NOP_UD, label);
	n = tring_reap_wait(r, cqe, 2, 2000000000LL);
	for (i = 0; i < n; i++)
		if (cqe[i].user_data != NOP_UD)
			res = cqe[i].res;
	drec_cqes(c, cqe, n, false, "%s", label);
	return res;
}

/* ---- FUTEX_WAKE ---- */

struct waiter {
	_Atomic uint32_t word;
	uint32_t bitset;
	int op;                 /* FUTEX_WAIT_BITSET (| PRIVATE) */
	atomic_int done;
	long ret;
};

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;

	do {
		w->ret = syscall(SYS_futex, &w->word, w->op, 0, NULL, NULL,
				 w->bitset);
	} while (w->ret < 0 && errno == EINTR);
	atomic_store(&w->done, 1);
	return NULL;
}

/*
 * Waits until n waiters sleep on the private or shared futex word, counted
 * by requeueing it onto itself (which moves nothing; io_uring's own
 * waiters are counted too).  No time limit: the scenario's watchdog
 * catches a waiter that never gets there.
 */
static void await_queued(uint32_t *word, long n, bool priv)
{
	int op = FUTEX_CMP_REQUEUE | (priv ? FUTEX_PRIVATE_FLAG : 0);

	while (syscall(SYS_futex, word, op, 0, INT_MAX, word,
		       __atomic_load_n(word, __ATOMIC_SEQ_CST)) < n)
		sched_yield();
}

/* How many wait on word once none is left, or after 10 s (a hang guard):
 * 0 unless a waiter stays queued for good. */
static long queued_settled(uint32_t *word, bool priv)
{
	int op = FUTEX_CMP_REQUEUE | (priv ? FUTEX_PRIVATE_FLAG : 0);
	struct timespec ts = { 0, 1000000 };
	long n = 0;

	for (int i = 0; i < 10000; i++) {
		/* wakes none, "requeues" all onto the word itself: counts */
		n = syscall(SYS_futex, word, op, 0, INT_MAX, word,
			    __atomic_load_n(word, __ATOMIC_SEQ_CST));
		if (n == 0)
			break;
		nanosleep(&ts, NULL);
	}
	return n;
}

/* Waits until w's thread sleeps on its word. */
static void await_sleeping(struct waiter *w)
{
	await_queued((uint32_t *)&w->word, 1, w->op & FUTEX_PRIVATE_FLAG);
}

/* Waits (10 s at most, a hang guard) for w's thread to return. */
static void await_returned(struct waiter *w)
{
	struct timespec ts = { 0, 1000000 };

	for (int i = 0; i < 10000 && !atomic_load(&w->done); i++)
		nanosleep(&ts, NULL);
}

/* Wakes w with t until a waiter is woken (the thread may not sleep yet):
 * records the attempt that woke it and whether the thread returned. */
static void wake_waiter(struct dctx *c, struct tring *r, struct waiter *w,
			struct io_uring_sqe t, const char *label)
{
	struct timespec ts = { 0, 1000000 };
	struct tcqe cqe;
	int i;

	for (i = 0; i < 2000; i++) {
		*tring_get_sqe(r) = t;
		tring_submit(r);
		if (tring_reap_wait(r, &cqe, 1, 2000000000LL) != 1)
			break;
		if (cqe.res != 0)
			break;
		nanosleep(&ts, NULL);
	}
	drec_cqes(c, &cqe, 1, true, "%s", label);
	await_returned(w);
	drec_int(c, atomic_load(&w->done), "%s: waiter returned", label);
}

static void sc_futex_wake(struct dctx *c)
{
	struct waiter w;
	struct tring r;
	pthread_t th;
	uint32_t word = 0;

	if (dring_flags(c, &r, 16, 0))
		return;
	/* nobody waits */
	run1(c, &r, (struct io_uring_sqe[]){ wake(&word, 1, MATCH_ANY,
		F2_U32 | F2_PRIVATE, 1) }, "no waiter");
	run1(c, &r, (struct io_uring_sqe[]){ wake(&word, 0, MATCH_ANY,
		F2_U32 | F2_PRIVATE, 2) }, "nr 0");
	run1(c, &r, (struct io_uring_sqe[]){ wake(&word, 1, MATCH_ANY,
		F2_U32, 3) }, "shared, no waiter");
	run1(c, &r, (struct io_uring_sqe[]){ wake(&word, 0xffffffffULL,
		MATCH_ANY, F2_U32 | F2_PRIVATE, 4) }, "nr 0xffffffff");
	run1(c, &r, (struct io_uring_sqe[]){ wake(&word, 1, MATCH_ANY,
		F2_U32 | F2_NUMA | F2_PRIVATE, 5) }, "NUMA");
	run1(c, &r, (struct io_uring_sqe[]){ wake(&word, 1, MATCH_ANY,
		F2_U32 | F2_MPOL | F2_PRIVATE, 6) }, "MPOL");
	run1(c, &r, (struct io_uring_sqe[]){ wake(&word, 1, MATCH_ANY,
		F2_U32 | F2_MPOL | F2_NUMA | F2_PRIVATE, 7) }, "MPOL | NUMA");

	/* a private waiter with bitset 0x1 in another thread */
	memset(&w, 0, sizeof(w));
	w.bitset = 0x1;
	w.op = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG;
	pthread_create(&th, NULL, waiter_fn, &w);
	await_sleeping(&w);
	/* a shared wake does not reach a private waiter; nor a bitset that
	 * does not intersect */
	run1(c, &r, (struct io_uring_sqe[]){ wake(&w.word, 1, MATCH_ANY,
		F2_U32, 10) }, "shared wake, private waiter");
	run1(c, &r, (struct io_uring_sqe[]){ wake(&w.word, 1, 0x2,
		F2_U32 | F2_PRIVATE, 11) }, "bitset 0x2 vs 0x1");
	drec_int(c, atomic_load(&w.done), "waiter still waits");
	wake_waiter(c, &r, &w, wake(&w.word, 5, 0x3, F2_U32 | F2_PRIVATE, 12),
		    "bitset 0x3 wakes it");
	pthread_join(th, NULL);
	drec_int(c, w.ret, "waiter result");

	/* a shared waiter, woken with IOSQE_ASYNC */
	memset(&w, 0, sizeof(w));
	w.bitset = FUTEX_BITSET_MATCH_ANY;
	w.op = FUTEX_WAIT_BITSET;
	pthread_create(&th, NULL, waiter_fn, &w);
	{
		struct io_uring_sqe t = wake(&w.word, 1, MATCH_ANY, F2_U32, 13);

		t.flags = IOSQE_ASYNC;
		wake_waiter(c, &r, &w, t, "shared waiter, ASYNC wake");
	}
	pthread_join(th, NULL);

	/* issue errors */
	run1(c, &r, (struct io_uring_sqe[]){ wake(&word, 1, 0,
		F2_U32 | F2_PRIVATE, 20) }, "bitset 0");
	run1(c, &r, (struct io_uring_sqe[]){ wake(dunmapped_addr(), 1,
		MATCH_ANY, F2_U32 | F2_PRIVATE, 21) }, "unmapped");
	run1(c, &r, (struct io_uring_sqe[]){ wake((char *)&word + 1, 1,
		MATCH_ANY, F2_U32 | F2_PRIVATE, 22) }, "unaligned");
	run1(c, &r, (struct io_uring_sqe[]){ wake(NULL, 1, MATCH_ANY,
		F2_U32 | F2_PRIVATE, 23) }, "NULL");
	/* prep errors */
	run1(c, &r, (struct io_uring_sqe[]){ wake(&word, 1, MATCH_ANY,
		F2_U8 | F2_PRIVATE, 30) }, "size u8");
	run1(c, &r, (struct io_uring_sqe[]){ wake(&word, 1, MATCH_ANY,
		F2_U64 | F2_PRIVATE, 31) }, "size u64");
	run1(c, &r, (struct io_uring_sqe[]){ wake(&word, 1, MATCH_ANY,
		F2_U32 | 0x40, 32) }, "unknown flag 0x40");
	run1(c, &r, (struct io_uring_sqe[]){ wake(&word, 1, MATCH_ANY,
		F2_U32 | 0x100, 33) }, "unknown flag 0x100");
	run1(c, &r, (struct io_uring_sqe[]){ wake(&word, 1ULL << 32,
		MATCH_ANY, F2_U32 | F2_PRIVATE, 34) }, "nr above 32 bits");
	run1(c, &r, (struct io_uring_sqe[]){ wake(&word, 1, 1ULL << 32,
		F2_U32 | F2_PRIVATE, 35) }, "bitset above 32 bits");
	{
		struct io_uring_sqe t = wake(&word, 1, MATCH_ANY,
					     F2_U32 | F2_PRIVATE, 36);

		t.len = 1;
		run1(c, &r, &t, "len");
		t = wake(&word, 1, MATCH_ANY, F2_U32 | F2_PRIVATE, 37);
		t.futex_flags = 1;
		run1(c, &r, &t, "futex_flags");
		t = wake(&word, 1, MATCH_ANY, F2_U32 | F2_PRIVATE, 38);
		t.buf_index = 1;
		run1(c, &r, &t, "buf_index");
		t = wake(&word, 1, MATCH_ANY, F2_U32 | F2_PRIVATE, 39);
		t.file_index = 1;
		run1(c, &r, &t, "file_index");
		t = wake(&word, 1, MATCH_ANY, F2_U32 | F2_PRIVATE, 40);
		t.flags = IOSQE_FIXED_FILE;
		run1(c, &r, &t, "FIXED_FILE");
		/* a failed wake fails its chain */
		t = wake(&word, 1, 0, F2_U32 | F2_PRIVATE, 41);
		t.flags = IOSQE_IO_LINK;
		run1(c, &r, &t, "bitset 0, linked");
	}
	tring_exit(&r);
}

/* ---- FUTEX_WAIT ---- */

/* FUTEX_WAIT: uaddr in addr, value in addr2, bitset in addr3 */
static struct io_uring_sqe fwait(void *uaddr, uint64_t val, uint64_t mask,
				 uint32_t flags, uint64_t ud)
{
	struct io_uring_sqe s = tsqe(IORING_OP_FUTEX_WAIT, (int)flags, P(uaddr),
				     0, val, ud);

	s.addr3 = mask;
	return s;
}

/* submits what is queued; records the CQEs that arrive within ms */
static unsigned int submit_reap(struct dctx *c, struct tring *r,
				unsigned int want, int ms, const char *label)
{
	struct tcqe cqe[8];
	unsigned int n;

	if (tring_submit(r) < 0)
		drec_int(c, -1, "%s: submit failed", label);
	n = tring_reap_wait(r, cqe, want, (int64_t)ms * 1000000);
	drec_cqes(c, cqe, n, false, "%s", label);
	return n;
}

static long raw_wake(void *uaddr, int nr, uint32_t bitset, bool priv)
{
	long ret = syscall(SYS_futex, uaddr,
			   FUTEX_WAKE_BITSET | (priv ? FUTEX_PRIVATE_FLAG : 0),
			   nr, NULL, NULL, bitset);

	return ret < 0 ? -errno : ret;
}

static void sc_futex_wait(struct dctx *c)
{
	uint32_t *word = calloc(4, sizeof(*word));
	const uint32_t PF = F2_U32 | F2_PRIVATE;
	struct tring r;

	if (dring_flags(c, &r, 16, 0))
		return;
	/* completed at issue */
	word[0] = 5;
	run1(c, &r, (struct io_uring_sqe[]){ fwait(word, 0, MATCH_ANY, PF, 1) },
	     "value differs");
	run1(c, &r, (struct io_uring_sqe[]){ fwait(word, 5, 0, PF, 2) },
	     "bitset 0");
	run1(c, &r, (struct io_uring_sqe[]){ fwait((char *)word + 2, 5,
		MATCH_ANY, PF, 3) }, "unaligned");
	run1(c, &r, (struct io_uring_sqe[]){ fwait(dunmapped_addr(), 0,
		MATCH_ANY, PF, 4) }, "unmapped");
	run1(c, &r, (struct io_uring_sqe[]){ fwait(NULL, 0, MATCH_ANY, PF, 5) },
	     "NULL");
	run1(c, &r, (struct io_uring_sqe[]){ fwait(word, 1ULL << 32, MATCH_ANY,
		PF, 6) }, "value above 32 bits");
	run1(c, &r, (struct io_uring_sqe[]){ fwait(word, 5, MATCH_ANY,
		F2_U64, 7) }, "size u64");
	{
		struct io_uring_sqe t = fwait(word, 5, MATCH_ANY, PF, 8);

		t.file_index = 1;
		run1(c, &r, &t, "file_index");
		t = fwait(word, 4, MATCH_ANY, PF, 9);
		t.flags = IOSQE_IO_LINK;
		run1(c, &r, &t, "value differs, linked");
	}
	word[0] = 0;

	/* woken by FUTEX_WAKE */
	*tring_get_sqe(&r) = fwait(word, 0, MATCH_ANY, PF, 10);
	submit_reap(c, &r, 1, 50, "wait: nothing yet");
	*tring_get_sqe(&r) = wake(word, 1, MATCH_ANY, PF, 11);
	submit_reap(c, &r, 2, 2000, "woken by FUTEX_WAKE");

	/* FIFO: two waiters, one wake */
	*tring_get_sqe(&r) = fwait(word, 0, MATCH_ANY, PF, 20);
	*tring_get_sqe(&r) = fwait(word, 0, MATCH_ANY, PF, 21);
	submit_reap(c, &r, 1, 50, "two waits: nothing yet");
	word[0] = 1;
	*tring_get_sqe(&r) = wake(word, 1, MATCH_ANY, PF, 22);
	submit_reap(c, &r, 2, 2000, "one of two woken");
	submit_reap(c, &r, 1, 50, "the other still waits");
	*tring_get_sqe(&r) = wake(word, 1, MATCH_ANY, PF, 23);
	submit_reap(c, &r, 2, 2000, "the other woken");
	word[0] = 0;

	/* a raw futex(2) wake right after enter returns finds the waiter */
	*tring_get_sqe(&r) = fwait(word, 0, MATCH_ANY, PF, 30);
	drec_int(c, tring_submit(&r), "submit wait 30");
	drec_int(c, raw_wake(word, 1, FUTEX_BITSET_MATCH_ANY, true),
		 "raw wake right after enter");
	submit_reap(c, &r, 1, 2000, "woken by the raw wake");

	/* bitsets */
	*tring_get_sqe(&r) = fwait(word, 0, 0x1, PF, 40);
	drec_int(c, tring_submit(&r), "submit wait 40");
	drec_int(c, raw_wake(word, 1, 0x2, true), "raw wake, bitset 0x2");
	*tring_get_sqe(&r) = wake(word, 1, 0x4, PF, 41);
	submit_reap(c, &r, 1, 50, "FUTEX_WAKE bitset 0x4");
	*tring_get_sqe(&r) = wake(word, 1, 0x3, PF, 42);
	submit_reap(c, &r, 2, 2000, "FUTEX_WAKE bitset 0x3");


	/* IOSQE_ASYNC: queued when io-wq issues it */
	{
		struct io_uring_sqe t = fwait(word, 0, MATCH_ANY, PF, 60);

		t.flags = IOSQE_ASYNC;
		*tring_get_sqe(&r) = t;
		submit_reap(c, &r, 1, 100, "ASYNC wait: nothing yet");
		/* io-wq (on both sides) queues it when a worker runs: wait
		 * for that, not for a time */
		await_queued(word, 1, true);
		*tring_get_sqe(&r) = wake(word, 1, MATCH_ANY, PF, 61);
		submit_reap(c, &r, 2, 2000, "ASYNC wait woken");
	}

	/* a link waits for the wake */
	{
		struct io_uring_sqe t = fwait(word, 0, MATCH_ANY, PF, 70);

		t.flags = IOSQE_IO_LINK;
		*tring_get_sqe(&r) = t;
		tring_prep_nop(tring_get_sqe(&r), 71);
		submit_reap(c, &r, 1, 50, "linked wait: nothing yet");
		*tring_get_sqe(&r) = wake(word, 5, MATCH_ANY, PF, 72);
		submit_reap(c, &r, 3, 2000, "wait, its link, the wake");
	}
	tring_exit(&r);
	free(word);
}

/* a shared (not FUTEX2_PRIVATE) futex, woken by a raw futex(2) wake */
static void sc_futex_wait_shared(struct dctx *c)
{
	uint32_t *word = calloc(2, sizeof(*word));
	struct tring r;

	if (dring_flags(c, &r, 16, 0))
		return;
	*tring_get_sqe(&r) = fwait(word + 1, 0, MATCH_ANY, F2_U32, 50);
	drec_int(c, tring_submit(&r), "submit shared wait");
	drec_int(c, raw_wake(word + 1, 1, FUTEX_BITSET_MATCH_ANY, true),
		 "private raw wake of a shared waiter");
	drec_int(c, raw_wake(word + 1, 1, FUTEX_BITSET_MATCH_ANY, false),
		 "shared raw wake");
	submit_reap(c, &r, 1, 2000, "shared waiter woken");
	tring_exit(&r);
	free(word);
}

/*
 * FIFO, many times: each round submits two FUTEX_WAITs on a futex word of
 * its own (so that uuring's idle sleepers share a futex hash bucket with
 * some of the words, which kept a requeued sleeper at its old place in
 * the bucket), wakes one, which must be the first, right after enter
 * returns (a FUTEX_WAKE or a raw futex(2) wake; private and shared
 * futexes), then the other.  Records only totals.
 */
static void sc_futex_wait_fifo(struct dctx *c)
{
	enum { ROUNDS = 256 };
	uint32_t *words = calloc(ROUNDS, sizeof(*words));
	unsigned int i, first = 0, second = 0, lost = 0, early = 0, other = 0;
	struct tring r;

	if (dring_flags(c, &r, 16, 0))
		return;
	for (i = 0; i < ROUNDS; i++) {
		uint32_t fl = F2_U32 | ((i & 1) ? F2_PRIVATE : 0);
		uint64_t ud = 1000 + 4 * (uint64_t)i;
		struct tcqe cqe[4];
		unsigned int n, k, woke = 0;
		long nr = -1;

		*tring_get_sqe(&r) = fwait(&words[i], 0, MATCH_ANY, fl, ud);
		*tring_get_sqe(&r) = fwait(&words[i], 0, MATCH_ANY, fl, ud + 1);
		if (i & 2) {
			*tring_get_sqe(&r) = wake(&words[i], 1, MATCH_ANY, fl,
						  ud + 2);
			tring_submit(&r);
		} else {
			tring_submit(&r);
			nr = raw_wake(&words[i], 1, FUTEX_BITSET_MATCH_ANY,
				      fl & F2_PRIVATE);
		}
		n = tring_reap_wait(&r, cqe, nr < 0 ? 2 : 1, 2000000000LL);
		for (k = 0; k < n; k++) {
			if (cqe[k].user_data == ud + 2)
				nr = cqe[k].res;
			else
				woke |= 1u << (cqe[k].user_data - ud);
		}
		if (nr == 0)
			lost++;
		if (woke == 1)
			first++;
		else if (woke == 2)
			second++;
		else
			other++;
		/* the other one: woken by this wake, not before */
		n = tring_reap_wait(&r, cqe, 1, 0);
		early += n;
		raw_wake(&words[i], 1, FUTEX_BITSET_MATCH_ANY, fl & F2_PRIVATE);
		n += tring_reap_wait(&r, cqe, 1, 2000000000LL);
		if (n != 1)
			other++;
	}
	drec_int(c, first, "the first waiter woken first");
	drec_int(c, second, "the second waiter woken first");
	drec_int(c, lost, "wakes that found no waiter");
	drec_int(c, early, "second waits done before their wake");
	drec_int(c, other, "other outcomes");
	tring_exit(&r);
	free(words);
}

/* ASYNC_CANCEL of a waiting FUTEX_WAIT: -ECANCELED, and it is gone */
/*
 * ASYNC_CANCEL of a FUTEX_WAIT dequeues that waiter alone: the other
 * FUTEX_WAIT and an application thread sleeping in futex(2) on the same
 * word stay queued, so the later wake of 5 wakes both (res 2).  (uuring
 * once shook its sleeper off by waking every waiter there: the second
 * wait completed 0 at the cancel and the wake found only the thread.)
 */
static void sc_futex_wait_cancel(struct dctx *c)
{
	struct waiter *app = calloc(1, sizeof(*app));
	const uint32_t PF = F2_U32 | F2_PRIVATE;
	struct io_uring_sqe *sqe;
	struct tring r;
	pthread_t th;

	if (dring_flags(c, &r, 16, 0)) {
		free(app);
		return;
	}
	app->bitset = (uint32_t)MATCH_ANY;
	app->op = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG;
	pthread_create(&th, NULL, waiter_fn, app);
	await_sleeping(app); /* the thread sleeps on the word */
	*tring_get_sqe(&r) = fwait(&app->word, 0, MATCH_ANY, PF, 1);
	*tring_get_sqe(&r) = fwait(&app->word, 0, MATCH_ANY, PF, 2);
	submit_reap(c, &r, 1, 50, "two waits");
	sqe = tring_get_sqe(&r);
	*sqe = tsqe(IORING_OP_ASYNC_CANCEL, -1, 1, 0, 0, 3);
	submit_reap(c, &r, 2, 2000, "cancel the first");
	/* the second is still there, the first is not */
	submit_reap(c, &r, 1, 50, "the other wait still waits");
	drec_int(c, atomic_load(&app->done),
		 "application waiter returned at the cancel");
	*tring_get_sqe(&r) = wake(&app->word, 5, MATCH_ANY, PF, 4);
	submit_reap(c, &r, 2, 2000, "wake the rest");
	await_returned(app);
	drec_int(c, atomic_load(&app->done), "application waiter woken");
	if (!atomic_load(&app->done)) {
		raw_wake(&app->word, INT_MAX, (uint32_t)MATCH_ANY, true);
	}
	pthread_join(th, NULL);
	/* cancel with nothing to cancel */
	sqe = tring_get_sqe(&r);
	*sqe = tsqe(IORING_OP_ASYNC_CANCEL, -1, 1, 0, 0, 5);
	submit_reap(c, &r, 1, 2000, "cancel again");
	tring_exit(&r);
	free(app);
}

/*
 * A bitset other than match-any (uuring's futex_wait(2) thread rather
 * than a futex_waitv one), many rounds: a raw wake right after enter
 * returns, with a bitset that matches, finds the wait (it was queued
 * before enter returned); one that does not match finds nothing.  A
 * cancel (with this bitset and with match-any) takes the wait off alone
 * and at once: an application thread waiting on the same word is still
 * there, and a wake of all right after the cancel's CQE finds it alone.
 * Records only totals.
 */
static void sc_futex_wait_bitset(struct dctx *c)
{
	enum { ROUNDS = 64 };
	const uint32_t PF = F2_U32 | F2_PRIVATE;
	struct waiter *app = calloc(1, sizeof(*app));
	unsigned int i, found = 0, missed = 0, wrong = 0, woken = 0;
	struct tcqe cqe[4];
	struct tring r;
	pthread_t th;

	if (dring_flags(c, &r, 16, 0)) {
		free(app);
		return;
	}
	for (i = 0; i < ROUNDS; i++) {
		*tring_get_sqe(&r) = fwait(&app->word, 0, 0x6, PF, 100 + i);
		tring_submit(&r);
		if (raw_wake(&app->word, 1, 0x1, true) != 0)
			wrong++;
		if (raw_wake(&app->word, 1, 0x4, true) == 1)
			found++;
		else
			missed++;
		if (tring_reap_wait(&r, cqe, 1, 2000000000LL) == 1 &&
		    cqe[0].res == 0)
			woken++;
	}
	drec_int(c, found, "raw wakes that found the wait");
	drec_int(c, missed, "raw wakes that missed it");
	drec_int(c, wrong, "non-matching wakes that woke something");
	drec_int(c, woken, "waits completed 0");

	/* the cancel has taken the wait off when its CQE is out: a wake
	 * right after it finds only the application's waiter */
	for (i = 0; i < 2; i++) {
		uint32_t mask = i ? (uint32_t)MATCH_ANY : 0x2;

		atomic_store(&app->done, 0);
		app->bitset = mask;
		app->op = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG;
		pthread_create(&th, NULL, waiter_fn, app);
		await_sleeping(app);
		*tring_get_sqe(&r) = fwait(&app->word, 0, mask, PF, 1);
		submit_reap(c, &r, 1, 50, "wait: nothing yet");
		*tring_get_sqe(&r) = tsqe(IORING_OP_ASYNC_CANCEL, -1, 1, 0, 0,
					  2);
		submit_reap(c, &r, 2, 2000, "cancel the wait");
		drec_int(c, atomic_load(&app->done),
			 "application waiter returned at the cancel");
		drec_int(c, raw_wake(&app->word, INT_MAX, mask, true),
			 "waiters woken right after the cancel");
		await_returned(app);
		drec_int(c, atomic_load(&app->done),
			 "application waiter woken");
		if (!atomic_load(&app->done))
			raw_wake(&app->word, INT_MAX, (uint32_t)MATCH_ANY,
				 true);
		pthread_join(th, NULL);
	}
	tring_exit(&r);
	free(app);
}

/*
 * Many waits and wakes: threads each submit FUTEX_WAITs on their own
 * word and a helper wakes them with raw futex(2) wakes right after the
 * word changes (a lost wake would hang).  Records only totals.
 */
struct storm {
	_Atomic uint32_t word;
	atomic_int stop;
};

static void *storm_waker(void *arg)
{
	struct storm *st = arg;

	while (!atomic_load(&st->stop)) {
		atomic_fetch_add(&st->word, 1);
		syscall(SYS_futex, &st->word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL,
			NULL, 0);
		usleep(200);
	}
	return NULL;
}

static void sc_futex_wait_storm(struct dctx *c)
{
	const uint32_t PF = F2_U32 | F2_PRIVATE;
	struct storm st = { 0 };
	struct tring r;
	pthread_t th;
	unsigned int i, done = 0, zero = 0, again = 0, other = 0;

	if (dring_flags(c, &r, 64, 0))
		return;
	pthread_create(&th, NULL, storm_waker, &st);
	for (i = 0; i < 300; i++) {
		struct tcqe cqe;

		*tring_get_sqe(&r) = fwait(&st.word, atomic_load(&st.word),
					   MATCH_ANY, PF, i);
		tring_submit(&r);
		if (tring_reap_wait(&r, &cqe, 1, 2000000000LL) != 1)
			break;
		done++;
		if (cqe.res == 0)
			zero++;
		else if (cqe.res == -EAGAIN)
			again++;
		else
			other++;
	}
	atomic_store(&st.stop, 1);
	pthread_join(th, NULL);
	drec_int(c, done, "waits completed");
	drec_int(c, zero + again, "woken or value changed");
	drec_int(c, other, "other results");
	tring_exit(&r);
}

/* ---- WAITID ---- */

/* WAITID: which in len, id in fd, options in file_index, infop in addr2 */
static struct io_uring_sqe waitid_sqe(int which, int id, int options,
				      void *infop, uint64_t ud)
{
	struct io_uring_sqe s = tsqe(IORING_OP_WAITID, id, 0, (uint32_t)which,
				     P(infop), ud);

	s.file_index = (uint32_t)options;
	return s;
}

static void record_si(struct dctx *c, const siginfo_t *si, pid_t pid,
		      const char *label)
{
	drec_int(c, si->si_signo, "%s: si_signo", label);
	drec_int(c, si->si_errno, "%s: si_errno", label);
	drec_int(c, si->si_code, "%s: si_code", label);
	drec_int(c, si->si_pid == pid, "%s: si_pid", label);
	drec_int(c, si->si_uid == getuid(), "%s: si_uid", label);
	drec_int(c, si->si_status, "%s: si_status", label);
	/* a field the kernel does not write keeps its fill */
	drec_int(c, ((unsigned char *)si)[100], "%s: byte 100", label);
}

static pid_t child(int status, int delay_ms)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (delay_ms)
			usleep((useconds_t)delay_ms * 1000);
		_exit(status);
	}
	return pid;
}

/* A child that exits with status once *gate's write end is closed. */
static pid_t gated_child(int status, int gate[2])
{
	pid_t pid;
	char b;

	if (pipe(gate))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(gate[1]);
		while (read(gate[0], &b, 1) > 0)
			;
		_exit(status);
	}
	close(gate[0]);
	return pid;
}

/*
 * A WAITID that waits for one child's exit (P_PID, P_PIDFD) is armed on
 * the child's wait queue on the kernel, so a cancel finds it: a
 * LINK_TIMEOUT fires (-ETIME) and the WAITID completes -ECANCELED; an
 * ASYNC_CANCEL answers 0.  The child is held by a pipe, not a time.
 */
static void sc_waitid_cancel(struct dctx *c)
{
	struct __kernel_timespec ts = { 0, 20 * 1000 * 1000 };
	struct io_uring_sqe *sqe;
	struct tcqe cqe[4];
	struct tring r;
	siginfo_t si;
	int gate[2], pidfd, st;
	unsigned int n;
	pid_t pid;

	if (dring_flags(c, &r, 16, 0))
		return;
	pid = gated_child(5, gate);
	/* P_PID, then P_PIDFD, with a link timeout */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "P_PIDFD" : "P_PID";

		sqe = tring_get_sqe(&r);
		*sqe = waitid_sqe(i ? P_PIDFD : P_PID, i ? pidfd : pid,
				  WEXITED, &si, 1 + 2 * (uint64_t)i);
		sqe->flags |= IOSQE_IO_LINK;
		sqe = tring_get_sqe(&r);
		*sqe = tsqe(IORING_OP_LINK_TIMEOUT, -1, P(&ts), 1, 0,
			    2 + 2 * (uint64_t)i);
		drec_int(c, tring_submit(&r), "%s + link timeout", name);
		n = tring_reap_wait(&r, cqe, 2, 10000 * 1000000LL);
		drec_cqes(c, cqe, n, false, "%s timed out", name);
	}
	/* ASYNC_CANCEL of a waiting P_PID */
	*tring_get_sqe(&r) = waitid_sqe(P_PID, pid, WEXITED, &si, 5);
	drec_int(c, tring_submit(&r), "P_PID");
	n = tring_reap_wait(&r, cqe, 1, 50 * 1000000LL);
	drec_cqes(c, cqe, n, false, "P_PID waits");
	*tring_get_sqe(&r) = tsqe(IORING_OP_ASYNC_CANCEL, -1, 5, 0, 0, 6);
	drec_int(c, tring_submit(&r), "cancel it");
	n = tring_reap_wait(&r, cqe, 2, 10000 * 1000000LL);
	drec_cqes(c, cqe, n, false, "P_PID cancelled");
	/* and one that sees the exit */
	memset(&si, 0xa5, sizeof(si));
	*tring_get_sqe(&r) = waitid_sqe(P_PIDFD, pidfd, WEXITED, &si, 7);
	drec_int(c, tring_submit(&r), "P_PIDFD");
	close(gate[1]);
	n = tring_reap_wait(&r, cqe, 1, 10000 * 1000000LL);
	drec_cqes(c, cqe, n, false, "P_PIDFD sees the exit");
	record_si(c, &si, pid, "exit");
	drec_int(c, waitpid(pid, &st, WNOHANG), "reaped by the WAITID");
	close(pidfd);
	tring_exit(&r);
}

static void sc_waitid(struct dctx *c)
{
	struct tring r;
	siginfo_t si;
	pid_t pid;
	int pidfd, st, gate[2];

	if (dring_flags(c, &r, 16, 0))
		return;
	/* no children at all */
	run1(c, &r, (struct io_uring_sqe[]){ waitid_sqe(P_ALL, 0, WEXITED,
		&si, 1) }, "P_ALL, no children");
	/* an exited child */
	pid = child(7, 0);
	usleep(20000);
	memset(&si, 0xa5, sizeof(si));
	run1(c, &r, (struct io_uring_sqe[]){ waitid_sqe(P_PID, pid, WEXITED,
		&si, 2) }, "exited child");
	record_si(c, &si, pid, "exited");
	/* WNOHANG, child still running (held by a pipe): zeros */
	pid = gated_child(3, gate);
	memset(&si, 0xa5, sizeof(si));
	run1(c, &r, (struct io_uring_sqe[]){ waitid_sqe(P_PID, pid,
		WEXITED | WNOHANG, &si, 3) }, "WNOHANG, running");
	record_si(c, &si, 0, "WNOHANG");
	/* a wait that blocks until the child exits (or finds it exited:
	 * the same CQE and siginfo either way) */
	close(gate[1]);
	memset(&si, 0xa5, sizeof(si));
	run1(c, &r, (struct io_uring_sqe[]){ waitid_sqe(P_ALL, 0, WEXITED,
		&si, 4) }, "blocking P_ALL");
	record_si(c, &si, pid, "blocking");
	/* WNOWAIT leaves it waitable; NULL infop */
	pid = child(9, 0);
	usleep(20000);
	run1(c, &r, (struct io_uring_sqe[]){ waitid_sqe(P_PID, pid,
		WEXITED | WNOWAIT, NULL, 5) }, "WNOWAIT, NULL infop");
	drec_int(c, waitpid(pid, &st, WNOHANG) == pid, "still waitable");
	drec_int(c, WEXITSTATUS(st), "status");
	/* a pidfd, with IOSQE_ASYNC */
	pid = child(11, 30);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	{
		struct io_uring_sqe t = waitid_sqe(P_PIDFD, pidfd, WEXITED,
						   &si, 6);

		t.flags = IOSQE_ASYNC;
		memset(&si, 0xa5, sizeof(si));
		run1(c, &r, &t, "P_PIDFD ASYNC");
		record_si(c, &si, pid, "pidfd");
	}
	close(pidfd);
	/* a stopped child */
	pid = fork();
	if (pid == 0) {
		raise(SIGSTOP);
		_exit(0);
	}
	memset(&si, 0xa5, sizeof(si));
	run1(c, &r, (struct io_uring_sqe[]){ waitid_sqe(P_PID, pid, WSTOPPED,
		&si, 7) }, "stopped child");
	record_si(c, &si, pid, "stopped");
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	/* issue errors */
	pid = child(1, 0);
	usleep(20000);
	run1(c, &r, (struct io_uring_sqe[]){ waitid_sqe(P_PID, pid, WEXITED,
		dunmapped_addr(), 8) }, "unmapped infop");
	drec_int(c, waitpid(pid, &st, WNOHANG), "reaped anyway");
	run1(c, &r, (struct io_uring_sqe[]){ waitid_sqe(P_ALL, 0, 0, &si,
		9) }, "no WEXITED/WSTOPPED/WCONTINUED");
	run1(c, &r, (struct io_uring_sqe[]){ waitid_sqe(P_ALL, 0,
		WEXITED | 0x100, &si, 10) }, "unknown option");
	run1(c, &r, (struct io_uring_sqe[]){ waitid_sqe(99, 0, WEXITED, &si,
		11) }, "unknown which");
	run1(c, &r, (struct io_uring_sqe[]){ waitid_sqe(P_PID, 0, WEXITED,
		&si, 12) }, "P_PID 0");
	run1(c, &r, (struct io_uring_sqe[]){ waitid_sqe(P_PIDFD, 9999,
		WEXITED, &si, 13) }, "P_PIDFD bad fd");
	run1(c, &r, (struct io_uring_sqe[]){ waitid_sqe(P_PID, 1, WEXITED,
		&si, 14) }, "not our child");
	/* prep errors */
	{
		struct io_uring_sqe t = waitid_sqe(P_ALL, 0, WEXITED, &si, 20);

		t.addr = 1;
		run1(c, &r, &t, "addr");
		t = waitid_sqe(P_ALL, 0, WEXITED, &si, 21);
		t.buf_index = 1;
		run1(c, &r, &t, "buf_index");
		t = waitid_sqe(P_ALL, 0, WEXITED, &si, 22);
		t.addr3 = 1;
		run1(c, &r, &t, "addr3");
		t = waitid_sqe(P_ALL, 0, WEXITED, &si, 23);
		t.waitid_flags = 1;
		run1(c, &r, &t, "waitid_flags");
	}
	tring_exit(&r);
}

/* ---- FUTEX_WAITV ---- */

#ifndef FUTEX_WAITV_MAX
#define FUTEX_WAITV_MAX 128
#endif

/* FUTEX_WAITV: the vector in addr, its length in len */
static struct io_uring_sqe fwaitv(const void *v, uint32_t nr, uint64_t ud)
{
	return tsqe(IORING_OP_FUTEX_WAITV, 0, P(v), nr, 0, ud);
}

static void setv(struct futex_waitv *v, unsigned int nr, uint32_t *words,
		 uint32_t flags)
{
	memset(v, 0, nr * sizeof(*v));
	for (unsigned int i = 0; i < nr; i++) {
		v[i].uaddr = P(&words[i]);
		v[i].val = words[i];
		v[i].flags = flags;
	}
}

static void sc_futex_waitv_errors(struct dctx *c)
{
	const uint32_t PF = F2_U32 | F2_PRIVATE;
	struct futex_waitv *v = calloc(FUTEX_WAITV_MAX + 1, sizeof(*v));
	uint32_t *words = calloc(FUTEX_WAITV_MAX + 2, sizeof(*words));
	struct io_uring_sqe t;
	struct tring r;

	if (dring_flags(c, &r, 16, 0))
		return;
	setv(v, 3, words, PF);
	/* prep: the SQE */
	t = fwaitv(v, 3, 1);
	t.fd = 1;
	run1(c, &r, &t, "fd set");
	t = fwaitv(v, 3, 2);
	t.addr2 = 1;
	run1(c, &r, &t, "addr2 set");
	t = fwaitv(v, 3, 3);
	t.addr3 = 1;
	run1(c, &r, &t, "addr3 set");
	t = fwaitv(v, 3, 4);
	t.futex_flags = 1;
	run1(c, &r, &t, "futex_flags set");
	t = fwaitv(v, 3, 5);
	t.buf_index = 1;
	run1(c, &r, &t, "buf_index set");
	run1(c, &r, (struct io_uring_sqe[]){ fwaitv(v, 0, 6) }, "nr 0");
	setv(v, FUTEX_WAITV_MAX + 1, words, PF);
	run1(c, &r, (struct io_uring_sqe[]){ fwaitv(v, FUTEX_WAITV_MAX + 1, 7) },
	     "nr 129");
	run1(c, &r, (struct io_uring_sqe[]){ fwaitv(NULL, 1, 8) }, "NULL vector");
	run1(c, &r, (struct io_uring_sqe[]){ fwaitv(dunmapped_addr(), 1, 9) },
	     "unmapped vector");
	/* prep: the entries */
	setv(v, 3, words, PF);
	v[1].__reserved = 1;
	run1(c, &r, (struct io_uring_sqe[]){ fwaitv(v, 3, 10) }, "reserved set");
	static const uint32_t bad[] = { F2_U8 | F2_PRIVATE, F2_U64 | F2_PRIVATE,
		0x01 | F2_PRIVATE, PF | 0x100, PF | 0x40, PF | F2_NUMA,
		PF | F2_MPOL, F2_U32 };
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char label[64];

		setv(v, 3, words, PF);
		words[2] = 7; /* so a valid one does not wait */
		v[2].flags = bad[i];
		snprintf(label, sizeof(label), "entry flags 0x%x", bad[i]);
		run1(c, &r, (struct io_uring_sqe[]){ fwaitv(v, 3, 11 + i) },
		     label);
		words[2] = 0;
	}
	setv(v, 3, words, PF);
	v[0].val = 1ULL << 32;
	run1(c, &r, (struct io_uring_sqe[]){ fwaitv(v, 3, 30) },
	     "value above 32 bits");
	/* an error in prep beats a bad pointer further on */
	setv(v, 3, words, PF);
	v[0].flags = F2_U64;
	run1(c, &r, (struct io_uring_sqe[]){ fwaitv(v, 3, 31) },
	     "bad flags, then more entries");
	/* issue */
	setv(v, 3, words, PF);
	words[0] = 5;
	run1(c, &r, (struct io_uring_sqe[]){ fwaitv(v, 3, 40) },
	     "value 0 differs");
	words[0] = 0;
	words[2] = 5;
	run1(c, &r, (struct io_uring_sqe[]){ fwaitv(v, 3, 41) },
	     "value 2 differs");
	words[2] = 0;
	setv(v, 3, words, PF);
	v[1].uaddr += 2;
	run1(c, &r, (struct io_uring_sqe[]){ fwaitv(v, 3, 42) }, "unaligned");
	setv(v, 3, words, PF);
	v[2].uaddr = P(dunmapped_addr());
	run1(c, &r, (struct io_uring_sqe[]){ fwaitv(v, 3, 43) },
	     "unmapped futex");
	words[0] = 9;
	run1(c, &r, (struct io_uring_sqe[]){ fwaitv(v, 3, 44) },
	     "value 0 differs, unmapped futex 2 (private)");
	setv(v, 3, words, F2_U32);
	v[2].uaddr = P(dunmapped_addr());
	run1(c, &r, (struct io_uring_sqe[]){ fwaitv(v, 3, 45) },
	     "value 0 differs, unmapped futex 2 (shared)");
	words[0] = 0;
	/* 128 futexes: a key error at the end beats a value at the start */
	setv(v, FUTEX_WAITV_MAX, words, PF);
	v[0].uaddr = P(dunmapped_addr());
	v[FUTEX_WAITV_MAX - 1].uaddr += 1;
	run1(c, &r, (struct io_uring_sqe[]){ fwaitv(v, FUTEX_WAITV_MAX, 47) },
	     "128: futex 0 unmapped (private), 127 unaligned");
	setv(v, FUTEX_WAITV_MAX, words, PF);
	words[0] = 1;
	run1(c, &r, (struct io_uring_sqe[]){ fwaitv(v, FUTEX_WAITV_MAX, 48) },
	     "128: value 0 differs");
	words[0] = 0;
	words[127] = 2;
	run1(c, &r, (struct io_uring_sqe[]){ fwaitv(v, FUTEX_WAITV_MAX, 49) },
	     "128: value 127 differs");
	words[127] = 0;
	setv(v, 3, words, PF);
	words[1] = 3;
	t = fwaitv(v, 3, 46);
	t.flags = IOSQE_IO_LINK;
	run1(c, &r, &t, "value differs, linked");
	tring_exit(&r);
	free(words);
	free(v);
}

static void sc_futex_waitv(struct dctx *c)
{
	const uint32_t PF = F2_U32 | F2_PRIVATE;
	struct futex_waitv *v = calloc(FUTEX_WAITV_MAX, sizeof(*v));
	uint32_t *words = calloc(FUTEX_WAITV_MAX, sizeof(*words));
	struct tring r;
	char label[64];

	if (dring_flags(c, &r, 16, 0))
		return;
	/* woken by FUTEX_WAKE on each index (the value changed first) */
	for (unsigned int i = 0; i < 4; i++) {
		memset(words, 0, 4 * sizeof(*words));
		setv(v, 4, words, i == 3 ? F2_U32 : PF);
		*tring_get_sqe(&r) = fwaitv(v, 4, 100 + i);
		snprintf(label, sizeof(label), "waitv %u: nothing yet", i);
		submit_reap(c, &r, 1, 50, label);
		words[i] = 1;
		*tring_get_sqe(&r) = wake(&words[i], 1, MATCH_ANY,
					  i == 3 ? F2_U32 : PF, 200 + i);
		snprintf(label, sizeof(label), "woken on index %u", i);
		submit_reap(c, &r, 2, 2000, label);
	}
	/* woken without a value change, once it sleeps */
	memset(words, 0, 4 * sizeof(*words));
	setv(v, 4, words, PF);
	*tring_get_sqe(&r) = fwaitv(v, 4, 110);
	submit_reap(c, &r, 1, 200, "waitv: nothing yet");
	*tring_get_sqe(&r) = wake(&words[2], 1, MATCH_ANY, PF, 210);
	submit_reap(c, &r, 2, 2000, "woken on index 2, value unchanged");
	/* a raw futex(2) wake without a value change right after enter
	 * returns: the kernel queued the waits at issue, so it finds them
	 * (uuring's waiting threads used to start sleeping only after enter
	 * returned, and miss it) */
	for (unsigned int i = 0; i < 20; i++) {
		*tring_get_sqe(&r) = fwaitv(v, 4, 130);
		if (tring_submit(&r) != 1)
			drec_int(c, -1, "waitv: submit failed");
		drec_int(c, raw_wake(&words[1], 1, FUTEX_BITSET_MATCH_ANY,
				     true),
			 "raw wake of index 1 at once, value unchanged");
		submit_reap(c, &r, 1, 2000, "woken by it");
	}
	/* woken by a raw futex(2) wake */
	*tring_get_sqe(&r) = fwaitv(v, 4, 111);
	submit_reap(c, &r, 1, 200, "waitv: nothing yet");
	words[1] = 4;
	drec_int(c, raw_wake(&words[1], 1, FUTEX_BITSET_MATCH_ANY, true),
		 "raw wake of index 1");
	submit_reap(c, &r, 1, 2000, "woken by the raw wake");
	/* the full 128 */
	memset(words, 0, FUTEX_WAITV_MAX * sizeof(*words));
	setv(v, FUTEX_WAITV_MAX, words, PF);
	for (unsigned int i = 126; i < 129; i += 1) {
		unsigned int k = i == 128 ? 5 : i;

		*tring_get_sqe(&r) = fwaitv(v, FUTEX_WAITV_MAX, 120 + i);
		submit_reap(c, &r, 1, 100, "waitv 128: nothing yet");
		words[k] = 1;
		*tring_get_sqe(&r) = wake(&words[k], 1, MATCH_ANY, PF, 220 + i);
		snprintf(label, sizeof(label), "128: woken on index %u", k);
		submit_reap(c, &r, 2, 2000, label);
		words[k] = 0;
	}
	/* IOSQE_ASYNC, and a link waiting for the wake */
	memset(words, 0, 4 * sizeof(*words));
	setv(v, 4, words, PF);
	{
		struct io_uring_sqe t = fwaitv(v, 4, 130);

		t.flags = IOSQE_ASYNC;
		*tring_get_sqe(&r) = t;
		submit_reap(c, &r, 1, 100, "ASYNC waitv: nothing yet");
		/* io-wq (on both sides) queues it when a worker runs: wait
		 * for that, not for a time */
		await_queued(&words[3], 1, true);
		words[3] = 1;
		*tring_get_sqe(&r) = wake(&words[3], 1, MATCH_ANY, PF, 230);
		submit_reap(c, &r, 2, 2000, "ASYNC waitv woken on 3");
		words[3] = 0;
		t = fwaitv(v, 4, 131);
		t.flags = IOSQE_IO_LINK;
		*tring_get_sqe(&r) = t;
		tring_prep_nop(tring_get_sqe(&r), 132);
		submit_reap(c, &r, 1, 100, "linked waitv: nothing yet");
		words[0] = 1;
		*tring_get_sqe(&r) = wake(&words[0], 1, MATCH_ANY, PF, 231);
		submit_reap(c, &r, 3, 2000, "waitv, its link, the wake");
	}
	tring_exit(&r);
	free(words);
	free(v);
}

/* ASYNC_CANCEL of a FUTEX_WAITV, and a ring closed with one waiting */
static void sc_futex_waitv_cancel(struct dctx *c)
{
	const uint32_t PF = F2_U32 | F2_PRIVATE;
	struct futex_waitv v[2];
	uint32_t *words = calloc(2, sizeof(*words));
	struct timespec ts = { 0, 200000000 };
	struct tring r;

	if (dring_flags(c, &r, 16, 0))
		return;
	setv(v, 2, words, PF);
	*tring_get_sqe(&r) = fwaitv(v, 2, 1);
	*tring_get_sqe(&r) = fwait(&words[1], 0, MATCH_ANY, PF, 2);
	submit_reap(c, &r, 1, 100, "waitv and wait");
	*tring_get_sqe(&r) = tsqe(IORING_OP_ASYNC_CANCEL, -1, 1, 0, 0, 3);
	submit_reap(c, &r, 2, 2000, "cancel the waitv");
	*tring_get_sqe(&r) = tsqe(IORING_OP_ASYNC_CANCEL, -1, 1, 0, 0, 4);
	submit_reap(c, &r, 1, 2000, "cancel it again");
	/* the cancelled waitv no longer takes wakes of its futexes */
	nanosleep(&ts, NULL);
	*tring_get_sqe(&r) = wake(&words[1], 1, MATCH_ANY, PF, 5);
	submit_reap(c, &r, 2, 2000, "one wake reaches the FUTEX_WAIT");
	drec_int(c, raw_wake(&words[0], 1, FUTEX_BITSET_MATCH_ANY, true),
		 "nobody left on futex 0");
	/* IOSQE_ASYNC, then CANCEL_ALL of two by user_data */
	{
		struct io_uring_sqe t = fwaitv(v, 2, 7);

		t.flags = IOSQE_ASYNC;
		*tring_get_sqe(&r) = t;
		*tring_get_sqe(&r) = fwaitv(v, 2, 7);
		submit_reap(c, &r, 1, 100, "two waitvs, one ASYNC");
		/* the ASYNC one is armed by an io-wq worker (both sides): the
		 * cancel's count depends on whether it is, so wait for both
		 * to be queued, not for a time */
		await_queued(&words[0], 2, true);
		t = tsqe(IORING_OP_ASYNC_CANCEL, -1, 7, 0, 0, 8);
		t.cancel_flags = IORING_ASYNC_CANCEL_ALL;
		*tring_get_sqe(&r) = t;
		submit_reap(c, &r, 3, 2000, "cancel both (ALL)");
	}
	/* ring exit with a waitv waiting */
	*tring_get_sqe(&r) = fwaitv(v, 2, 6);
	submit_reap(c, &r, 1, 100, "waitv before exit");
	tring_exit(&r);
	/* the kernel's ring exit runs in a workqueue (io_ring_exit_work):
	 * wait for the waiters to leave, not for a time */
	drec_int(c, queued_settled(&words[0], true),
		 "nobody left on futex 0 after exit");
	drec_int(c, queued_settled(&words[1], true),
		 "nobody left on futex 1 after exit");
	free(words);
}

static const struct dscenario scenarios[] = {
	{ "futex_wake", sc_futex_wake, NULL },
	{ "futex_wait", sc_futex_wait, NULL },
	{ "futex_wait_shared", sc_futex_wait_shared, NULL },
	{ "futex_wait_cancel", sc_futex_wait_cancel, NULL },
	{ "futex_wait_storm", sc_futex_wait_storm, NULL },
	{ "futex_wait_fifo", sc_futex_wait_fifo, NULL },
	{ "futex_wait_bitset", sc_futex_wait_bitset, NULL },
	{ "futex_waitv_errors", sc_futex_waitv_errors, NULL },
	{ "futex_waitv", sc_futex_waitv, NULL },
	{ "futex_waitv_cancel", sc_futex_waitv_cancel, NULL },
	{ "waitid", sc_waitid, NULL },
	{ "waitid_cancel", sc_waitid_cancel, NULL },
};

DTEST_MAIN(scenarios)
