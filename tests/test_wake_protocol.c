// SPDX-License-Identifier: MIT
/*
 * The CQ wake protocol (docs/architecture.md "Waiting and wakeups") under a
 * ping-pong that makes a lost wakeup visible: a poster thread posts exactly
 * one CQE each round, right when the waiter is entering enter(GETEVENTS,
 * min_complete = 1), and waits for the waiter to consume it before the
 * next round.  Nothing else would ever wake the waiter, so a lost wakeup
 * shows up as a wait that runs into its timeout with a CQE in the ring.
 *
 * Built twice:
 *   test_wake_protocol         against libuuring: must never lose a wakeup;
 *   test_wake_protocol_mutant  against a library built with
 *       -DUURING_MUTATE_NO_WAKE_FENCE (waiter fence and recheck removed):
 *       must detect a lost wakeup, proving the test can fail.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "abi/io_uring_abi.h"
#include "uuring.h"
#include "api_ring.h"

#define ROUNDS 400
#define ROUND_TIMEOUT_NS (300 * 1000000LL)
/*
 * A wait that lasted its timeout is a lost wakeup only if no wakeup ended
 * it (the engine's count of them did not move) and the CQE had been
 * posted at least this long before the timeout.  Elapsed time alone is
 * not enough on a loaded machine (two CPU hogs beside the test): a poster
 * kept off the CPU for the whole timeout owes no wakeup yet, and a waiter
 * that was woken but got the CPU only after the timeout was not lost.
 */
#define LOST_MARGIN_NS (100 * 1000000LL)

static struct ring R;
static atomic_int waiter_ready, round_done, stop;
/* the round posted last and when (taken after its enter returned, so no
 * earlier than the CQE's post) */
static atomic_int posted;
static _Atomic long long posted_at;

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *poster(void *arg)
{
	unsigned int tail = 0;

	(void)arg;
	for (int i = 0; i < ROUNDS && !atomic_load(&stop); i++) {
		struct io_uring_sqe *sqe;

		while (atomic_load_explicit(&waiter_ready, memory_order_acquire) <= i &&
		       !atomic_load(&stop))
			;
		/* let the waiter reach its check of the CQ before posting: a
		 * post that always lands before the check would never test the
		 * window between the check and the sleep (on a loaded machine
		 * the poster can otherwise win every round) */
		usleep(300);
		sqe = (struct io_uring_sqe *)(R.sqes +
					      (tail & R.sq_mask) * sizeof(*sqe));
		memset(sqe, 0, sizeof(*sqe));
		sqe->opcode = IORING_OP_NOP;
		sqe->user_data = (uint64_t)i;
		atomic_store_explicit(R.sq_tail, ++tail, memory_order_release);
		if (uuring_enter((unsigned int)R.fd, 1, 0, 0, NULL, 0) != 1) {
			fprintf(stderr, "poster: enter failed\n");
			atomic_store(&stop, 1);
			break;
		}
		atomic_store(&posted_at, now_ns());
		atomic_store(&posted, i + 1);
		while (atomic_load_explicit(&round_done, memory_order_acquire) <= i &&
		       !atomic_load(&stop))
			;
	}
	return NULL;
}

int main(void)
{
	struct io_uring_getevents_arg arg;
	struct __kernel_timespec ts = { 0, ROUND_TIMEOUT_NS };
	pthread_t th;
	int lost = 0, rounds = 0, ret;
	struct uuring_stats st0, st1;

	ret = ring_init(&R);
	if (ret) {
		fprintf(stderr, "setup: %s\n", strerror(-ret));
		return 1;
	}
	pthread_create(&th, NULL, poster, NULL);
	for (int i = 0; i < ROUNDS; i++) {
		long long t0;
		unsigned int head;

		memset(&arg, 0, sizeof(arg));
		arg.ts = (uint64_t)(uintptr_t)&ts;
		uuring_get_stats(R.fd, &st0, sizeof(st0));
		t0 = now_ns();
		atomic_store_explicit(&waiter_ready, i + 1, memory_order_release);
		ret = uuring_enter((unsigned int)R.fd, 0, 1,
				   IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
				   &arg, sizeof(arg));
		if (ret == -ETIME) {
			/* the CQE can only be late, never absent */
			ret = uuring_enter((unsigned int)R.fd, 0, 1,
					   IORING_ENTER_GETEVENTS, NULL, 0);
		}
		if (ret < 0) {
			fprintf(stderr, "round %d: enter %s\n", i, strerror(-ret));
			atomic_store(&stop, 1);
			break;
		}
		if (now_ns() - t0 >= ROUND_TIMEOUT_NS) {
			uuring_get_stats(R.fd, &st1, sizeof(st1));
			/* the CQE is here: its poster stores the time next */
			while (atomic_load(&posted) <= i && !atomic_load(&stop))
				;
			if (st1.wakeups == st0.wakeups &&
			    atomic_load(&posted_at) + LOST_MARGIN_NS <=
			    t0 + ROUND_TIMEOUT_NS) {
				lost++;
				fprintf(stderr, "round %d: woken only by the timeout, %lld ms after the CQE: lost wakeup\n",
					i, (t0 + ROUND_TIMEOUT_NS -
					    atomic_load(&posted_at)) / 1000000);
			}
		}
		head = atomic_load_explicit(R.cq_head, memory_order_relaxed);
		atomic_store_explicit(R.cq_head, head + 1, memory_order_release);
		atomic_store_explicit(&round_done, i + 1, memory_order_release);
		rounds++;
#ifdef EXPECT_LOST_WAKEUP
		if (lost)
			break;
#endif
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
#ifdef EXPECT_LOST_WAKEUP
	if (lost) {
		printf("mutant (no waiter fence/recheck): lost wakeup detected after %d rounds, as it must be\n",
		       rounds);
		return 0;
	}
	printf("FAIL: the mutant build lost no wakeup in %d rounds: the test cannot see the bug\n",
	       rounds);
	return 1;
#else
	{
		struct uuring_stats st;

		uuring_get_stats(R.fd, &st, sizeof(st));
		printf("%d rounds, %d lost wakeups; waits that slept %llu, wakeups %llu, spurious %llu\n",
		       rounds, lost, (unsigned long long)st.waits,
		       (unsigned long long)st.wakeups,
		       (unsigned long long)st.spurious_wakeups);
	}
	return lost || rounds != ROUNDS ? 1 : 0;
#endif
}
