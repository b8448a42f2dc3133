// SPDX-License-Identifier: MIT
/*
 * Posting CQEs, the overflow backlog (T14), and the poster's half of the
 * wake protocol.  Every function here runs with ring->completion_lock held
 * (the single-poster rule of docs/architecture.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/cq.h"
#include "core/req.h"
#include "core/ring.h"
#include "core/rsrc.h"
#include "core/types.h"
#include "core/wait.h"
#include "core/xproc.h"
#include "ops/timeout.h"
#include "ring/mem.h"
#include "util/fault.h"

static inline struct io_uring_cqe *cqe_at(struct uu_ring *r, uint32_t idx)
{
	return uu_ring_cqe_at(r->cqes, r->cq_mask, r->cqe_shift, idx);
}

/* Slots a CQE needs: 1; on a CQE_MIXED ring a 32-byte CQE takes 2, plus a
 * filler CQE (IORING_CQE_F_SKIP) when it would straddle the ring's end. */
static inline unsigned int slots_needed(struct uu_ring *r, uint32_t cflags)
{
	if (likely(!(r->setup_flags & IORING_SETUP_CQE_MIXED)) ||
	    !(cflags & IORING_CQE_F_32))
		return 1;
	return (r->cq_cached_tail & r->cq_mask) == r->cq_mask ? 3 : 2;
}

/* No room in the CQ as the application sees it. */
static inline bool cq_full(struct uu_ring *r, unsigned int need)
{
	/* acquire: pairs with the application's release of cq head, so the
	 * slot we overwrite has really been consumed */
	uint32_t head = atomic_load_explicit(r->cq_head, memory_order_acquire);

	return r->mem.cq_entries - (r->cq_cached_tail - head) < need;
}

static void fill_cq(struct uu_ring *r, unsigned int need, uint64_t user_data,
		    int32_t res, uint32_t cflags, const uint64_t *big)
{
	struct io_uring_cqe *cqe;

	if (need == 3) {
		cqe = cqe_at(r, r->cq_cached_tail++);
		cqe->user_data = 0;
		cqe->res = 0;
		cqe->flags = IORING_CQE_F_SKIP;
	}
	cqe = cqe_at(r, r->cq_cached_tail);
	cqe->user_data = user_data;
	cqe->res = res;
	cqe->flags = cflags;
	if (r->cqe_shift == 5 || need > 1) {
		/* CQE32 ring, or the second slot of a mixed 32-byte CQE */
		cqe->big_cqe[0] = big ? big[0] : 0;
		cqe->big_cqe[1] = big ? big[1] : 0;
	}
	r->cq_cached_tail += need > 1 ? 2 : 1;
	uu_stat_inc_locked(r, cqes_posted); /* under the CQ lock */
}

static void overflow_append(struct uu_ring *r, uint64_t user_data,
			    int32_t res, uint32_t cflags, const uint64_t *big)
{
	struct uu_ocqe *o = NULL;

	if (!uu_fault(UU_FAULT_OCQE_ALLOC))
		o = malloc(sizeof(*o));
	if (!o) {
		/* dropped on the floor: counted, and the next wait says so */
		atomic_store_explicit(r->cq_overflow,
				      atomic_load_explicit(r->cq_overflow,
							   memory_order_relaxed) + 1,
				      memory_order_release);
		atomic_store_explicit(&r->cq_dropped, true, memory_order_release);
		uu_stat_inc(r, cqes_lost);
		return;
	}
	o->next = NULL;
	o->user_data = user_data;
	o->res = res;
	o->flags = cflags;
	o->big[0] = big ? big[0] : 0;
	o->big[1] = big ? big[1] : 0;
	if (!r->ovf_head) {
		r->ovf_head = o;
		atomic_store_explicit(&r->ovf_pending, true, memory_order_release);
		r->ovf_wake = true;
		/* published to the app by the next cq tail release */
		atomic_fetch_or_explicit(r->sq_flags, IORING_SQ_CQ_OVERFLOW,
					 memory_order_relaxed);
	} else {
		r->ovf_tail->next = o;
	}
	r->ovf_tail = o;
	uu_stat_inc(r, cqes_overflowed);
}

/*
 * Before each post (what matters is the first of a hold of
 * completion_lock): another process using the ring (a forked child,
 * xproc/xproc.c) may have moved cq tail since this engine's last commit.
 * Every holder commits before it unlocks, so under the lock cq tail is
 * exact and our cached tail is either equal (no one else posted), behind
 * (someone did: take theirs), or ahead (our own posts of this hold, not
 * yet committed).  One load of a line the commit writes anyway.
 */
static inline void cq_sync_tail(struct uu_ring *r)
{
	uint32_t tail = atomic_load_explicit(r->cq_tail, memory_order_relaxed);

	if (unlikely((int32_t)(tail - r->cq_cached_tail) > 0))
		r->cq_cached_tail = tail;
}

/*
 * Whether one more CQE fits in the CQ, besides `pending` ones the caller
 * has reserved but not posted yet: no overflow backlog, and a free slot
 * between the tail and the head the application last published.  A
 * multishot request that finds no room ends with its final CQE instead
 * (T14).  completion_lock held.
 */
bool uu_cq_has_room_locked(struct uu_ring *r, uint32_t pending)
{
	/* acquire: the application's release of the head it consumed */
	return !r->ovf_head &&
	       r->cq_cached_tail + pending -
			       atomic_load_explicit(r->cq_head,
						    memory_order_acquire) <
		       r->mem.cq_entries;
}

void uu_cq_post_locked(struct uu_ring *r, uint64_t user_data, int32_t res,
		       uint32_t cflags, const uint64_t *big)
{
	unsigned int need;

	cq_sync_tail(r);
	need = slots_needed(r, cflags);

	r->cq_produced++; /* the count-timeout sequence (T15) */
	/* while a backlog exists, new CQEs queue behind it (ordering) */
	if (unlikely(r->ovf_head) || unlikely(cq_full(r, need))) {
		overflow_append(r, user_data, res, cflags, big);
		return;
	}
	fill_cq(r, need, user_data, res, cflags, big);
}

/*
 * n CQEs in order, as n uu_cq_post_locked calls would post them.  When
 * there is no backlog, every CQE takes one slot (not a CQE_MIXED ring)
 * and the CQ has room for all n, that is one tail sync and one room check
 * for the batch instead of one per CQE: the room a sequence of checks
 * would find only grows (the head only moves forward), so the outcome is
 * the same.  Otherwise one at a time, overflow included.
 */
void uu_cq_post_batch_locked(struct uu_ring *r, const struct uu_cqe_rec *e,
			     unsigned int n)
{
	bool wide = r->cqe_shift == 5;
	uint32_t tail;
	unsigned int i;

	cq_sync_tail(r);
	if (unlikely(r->ovf_head) ||
	    unlikely(r->setup_flags & IORING_SETUP_CQE_MIXED) ||
	    unlikely(cq_full(r, n))) {
		for (i = 0; i < n; i++)
			uu_cq_post_locked(r, e[i].user_data, e[i].res,
					  e[i].cflags, e[i].big);
		return;
	}
	tail = r->cq_cached_tail;
	for (i = 0; i < n; i++) {
		struct io_uring_cqe *cqe = cqe_at(r, tail + i);

		cqe->user_data = e[i].user_data;
		cqe->res = e[i].res;
		cqe->flags = e[i].cflags;
		if (wide) {
			cqe->big_cqe[0] = e[i].big[0];
			cqe->big_cqe[1] = e[i].big[1];
		}
	}
	r->cq_cached_tail = tail + n;
	r->cq_produced += n; /* the count-timeout sequence (T15) */
	/* under the CQ lock, its only writers' lock (uu_stat_inc_locked) */
	atomic_store_explicit(&r->st.cqes_posted,
			      atomic_load_explicit(&r->st.cqes_posted,
						   memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/* Moves backlog entries into the CQ while there is room; true if the
 * backlog is now empty. */
bool uu_cq_flush_overflow_locked(struct uu_ring *r)
{
	struct uu_ocqe *o;

	cq_sync_tail(r);
	while ((o = r->ovf_head) &&
	       !cq_full(r, slots_needed(r, o->flags))) {
		fill_cq(r, slots_needed(r, o->flags), o->user_data, o->res,
			o->flags, o->big);
		r->ovf_head = o->next;
		free(o);
	}
	if (!r->ovf_head) {
		r->ovf_tail = NULL;
		atomic_store_explicit(&r->ovf_pending, false, memory_order_release);
		atomic_fetch_and_explicit(r->sq_flags, ~(uint32_t)IORING_SQ_CQ_OVERFLOW,
					  memory_order_relaxed);
		return true;
	}
	return false;
}

/*
 * The new cq tail (moved), then the ring fd's readiness.  cq_commit's
 * publication, a function of its own so that the mutant below replaces
 * exactly this and nothing else.
 */
#ifndef UURING_MUTATE_NO_READINESS_FENCE
static inline void cq_publish(struct uu_ring *r, bool moved)
{
	if (moved) {
		/* release: CQE contents are visible before the new tail
		 * (pairs with the application's load-acquire of cq tail) */
		atomic_store_explicit(r->cq_tail, r->cq_cached_tail,
				      memory_order_release);
		uu_eventfd_signal_locked(r, r->cq_cached_tail);
	}
	/*
	 * One seq_cst fence between the stores above (cq tail; ovf_pending in
	 * overflow_append) and the loads after it (here and in cq_commit),
	 * for two Dekker pairs:
	 *  - the ring fd's readiness: uu_ring_drain_readiness clears the
	 *    flag, fences, then reads cq tail; we store cq tail, fence, then
	 *    read the flag in uu_ring_signal_readiness.  Without this fence
	 *    the flag load could pass the tail store (x86 store buffer): we
	 *    saw a stale "sent", the drain saw the old tail, and the CQE sat
	 *    behind an unreadable fd (libuv's loop asleep in epoll_wait for
	 *    good, tests/test_run_node, about one run in 150 beside load);
	 *  - the waiters (wait/cqwait.c, register_waiter): the waiter
	 *    increments nr_sleepers, fences, then reads cq tail and
	 *    ovf_pending; cq_commit reads nr_sleepers after us.
	 * With both sides' fences seq_cst, at least one side sees the other's
	 * store: no lost readiness, no lost wakeup.
	 */
	atomic_thread_fence(memory_order_seq_cst);
	uu_ring_signal_readiness(r);
}
#else
/*
 * Deliberately broken build (src/meson.build libuuring_mutant_rdy, used
 * only by tests/test_readiness_protocol_mutant): the readiness flag is
 * loaded before the cq tail store, which is what a store buffer did
 * before the fence above existed (b6b0fdd): the load passed the store.
 * A busy wait between the two widens that window to tens of
 * microseconds, and a yield lets a drainer that shares this CPU run in it,
 * so that a drain (flag cleared, fence, old tail seen) lands there within
 * a few rounds.  The value loaded first decides: not CLEAR, no signal (a
 * stale SENT).  The fence stays, for the waiters' Dekker pair: only the
 * readiness pair is broken.
 */
static void cq_publish(struct uu_ring *r, bool moved)
{
	uint32_t st = atomic_load_explicit(r->signalled, memory_order_relaxed);

	if (moved) {
		for (volatile int i = 0; i < 20000; i++)
			;
		sched_yield();
		atomic_store_explicit(r->cq_tail, r->cq_cached_tail,
				      memory_order_release);
		uu_eventfd_signal_locked(r, r->cq_cached_tail);
	}
	atomic_thread_fence(memory_order_seq_cst);
	if (st == READY_CLEAR)
		uu_ring_signal_readiness(r);
}
#endif

/*
 * Publishes the CQEs written since the last commit, then wakes waiters
 * whose target was reached.  sq_head (a submission batch's last commit,
 * uu_cq_commit_sq_head_locked): the new SQ head is stored after the CQ
 * tail, the eventfd and the ring fd's readiness, and before any wakeup,
 * so a waiter woken by these CQEs, which may run before this thread does
 * again, finds the SQEs consumed too.
 */
static void cq_commit(struct uu_ring *r, const uint32_t *sq_head)
{
	bool moved, ovf_wake;
	uint32_t tail;

	/* count timeouts complete in the same flush as the CQE that
	 * satisfied them (T15) */
	if (unlikely(r->off_timeout_used) && r->tmo_head)
		uu_timeouts_flush_locked(r);
	tail = atomic_load_explicit(r->cq_tail, memory_order_relaxed);
	moved = tail != r->cq_cached_tail;
	ovf_wake = r->ovf_wake;
	r->ovf_wake = false;
	/*
	 * A backlog that just began needs a wake too: a waiter that found
	 * the CQ empty and no backlog may sleep while our CQEs go to the
	 * backlog because the head we read was older than the one it
	 * published (its flush at wake-up moves them); the kernel wakes
	 * waiters when it queues an overflow entry as well.
	 */
	if (!moved && !ovf_wake) {
		/* release: pairs with the application's acquire of the
		 * head; nothing of this batch to publish before it */
		if (sq_head)
			atomic_store_explicit(r->sq_head, *sq_head,
					      memory_order_release);
		return;
	}
	/* the ring fd's readiness (a byte on its socket) before the SQ head
	 * and the wakeups: whoever sees either finds the ring readable */
	cq_publish(r, moved);
	/* release, after the tail: an application that sees its SQEs
	 * consumed sees their inline CQEs (as the kernel's io_submit_sqes
	 * commits the SQ ring after its flush) */
	if (sq_head)
		atomic_store_explicit(r->sq_head, *sq_head,
				      memory_order_release);
	/* the waiters' side of the Dekker pair (the fence above) */
	if (atomic_load_explicit(&r->nr_sleepers, memory_order_relaxed))
		uu_wake_waiters(r);
	/*
	 * Waiters of other processes (a ring shared across fork): the same
	 * Dekker pair over xs->xsleepers, which such a waiter increments
	 * before its fence (wait/cqwait.c); acquire: a count we see comes
	 * after the store of xs->shared in its process (uu_ring_adopt).
	 */
	if (unlikely(atomic_load_explicit(&r->xs->xsleepers,
					  memory_order_acquire)) &&
	    uu_ring_xshared(r))
		uu_xproc_wake(r);
}

void uu_cq_commit_locked(struct uu_ring *r)
{
	cq_commit(r, NULL);
}

void uu_cq_commit_sq_head_locked(struct uu_ring *r, uint32_t sq_head)
{
	cq_commit(r, &sq_head);
}

void uu_cq_flush_overflow(struct uu_ring *r)
{
	if (!atomic_load_explicit(&r->ovf_pending, memory_order_acquire))
		return;
	uu_shared_lock(r->completion_lock);
	uu_cq_flush_overflow_locked(r);
	uu_cq_commit_locked(r);
	pthread_mutex_unlock(r->completion_lock);
}
