// SPDX-License-Identifier: MIT
/*
 * The ring fd's readiness protocol (docs/architecture.md "Readiness
 * approximation") under a ping-pong that makes a lost readiness visible.
 * Each round a poster thread posts exactly one CQE (a NOP through enter)
 * while the waiter, which reaped the previous round's CQE from memory
 * (cq head moved, no enter), does what the engine does before an
 * application waits on the ring fd (uu_ring_sync_readiness_fd, as the
 * preload's poll does; uu_registry_sync_readiness, as its epoll_wait
 * does) and then waits in poll or epoll_wait.  The drain and the
 * poster's commit race: the drain clears the flag, fences and reads cq
 * tail; the commit stores cq tail, fences and reads the flag.  Each round
 * starts with the flag SENT (the previous round's byte), the state in
 * which a flag load passing the tail store loses the signal.  Nothing
 * else makes the fd readable, so a lost readiness is a state: the
 * poster's enter has returned, its CQE sits in the CQ, and the fd is not
 * readable.  A wait that times out only because the poster was off the
 * CPU (a loaded machine) ends with the fd readable once the enter has
 * returned, and is counted as late, never as lost.
 *
 * Built twice:
 *   test_readiness_protocol         against libuuring: must never lose
 *       readiness;
 *   test_readiness_protocol_mutant  against a library built with
 *       -DUURING_MUTATE_NO_READINESS_FENCE (the commit loads the flag
 *       before it stores cq tail, core/cq.c): must detect a lost
 *       readiness, proving the test can fail.
 * The plain build also sees the bug itself: against the engine of
 * b6b0fdd with only its new fence deleted it reported 20 to 40 lost
 * readiness per run on a 2-CPU x86 machine (7 to 12 beside two CPU hogs).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "abi/io_uring_abi.h"
#include "uuring.h"
#include "api_ring.h"
/*
 * For what the preload runs before a poll or an epoll wait
 * (src/shim/preload.c): uu_ring_sync_readiness_fd and
 * uu_registry_sync_readiness, not exported by the shared library but
 * linked in from the static one like the rest of the engine.
 */
#include "core/config.h"
#include "core/cq.h"
#include "core/registry.h"
#include "core/ring.h"
#include "core/types.h"
#include "core/xproc.h"
#include "exec/poller.h"
#include "util/fault.h"

/* rounds until the time budget is spent, but at least MIN_ROUNDS (a
 * loaded machine does far fewer rounds in the time) */
#define MAX_ROUNDS 50000
#define MIN_ROUNDS 200
#define TIME_BUDGET_NS (5 * 1000000000LL)
#define POLL_TIMEOUT_MS 100
/* each side waits a random time before its half of the round, so that
 * the two halves meet at every offset of a few microseconds, in both
 * orders */
#define JITTER_NS 20000

static struct ring R;
static atomic_int waiter_ready, poster_ready, posted, round_done, stop;

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static unsigned int rnd(unsigned int *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void spin_ns(long long ns)
{
	long long end = now_ns() + ns;

	while (now_ns() < end)
		;
}

/* spins while *v <= i; yields after a while (beside CPU hogs the other
 * side may need this CPU) */
static void wait_past(atomic_int *v, int i)
{
	for (int n = 0; atomic_load_explicit(v, memory_order_acquire) <= i &&
			!atomic_load(&stop);
	     n++) {
		if (n > 2000)
			sched_yield();
	}
}

static int post_nop(unsigned int *tail, int i)
{
	struct io_uring_sqe *sqe;

	sqe = (struct io_uring_sqe *)(R.sqes + (*tail & R.sq_mask) * sizeof(*sqe));
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_NOP;
	sqe->user_data = (uint64_t)i;
	atomic_store_explicit(R.sq_tail, ++*tail, memory_order_release);
	return uuring_enter((unsigned int)R.fd, 1, 0, 0, NULL, 0);
}

static void *poster(void *arg)
{
	unsigned int tail = 0, seed = 0x9e3779b9u;

	(void)arg;
	for (int i = 0; !atomic_load(&stop); i++) {
		wait_past(&waiter_ready, i);
		if (atomic_load(&stop))
			break;
		atomic_store_explicit(&poster_ready, i + 1, memory_order_release);
		spin_ns(rnd(&seed) % JITTER_NS);
		if (post_nop(&tail, i) != 1) {
			fprintf(stderr, "poster: enter failed\n");
			atomic_store(&stop, 1);
			break;
		}
		/* the commit (tail, readiness) is over; the waiter reaps only
		 * after this, so this enter never found the CQ empty (it
		 * would have drained the fd itself) */
		atomic_store_explicit(&posted, i + 1, memory_order_release);
		wait_past(&round_done, i);
	}
	return NULL;
}

/*
 * The poster on one CPU, the waiter on another, when two are allowed: the
 * race is between two CPUs (a store buffer), and on a loaded machine two
 * unpinned threads often end up taking turns on one.
 */
static void pin_apart(pthread_t poster_th)
{
	int cpu[2], n = 0;
	cpu_set_t cs;

	if (sched_getaffinity(0, sizeof(cs), &cs))
		return;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &cs))
			cpu[n++] = c;
	if (n < 2)
		return;
	CPU_ZERO(&cs);
	CPU_SET(cpu[0], &cs);
	pthread_setaffinity_np(poster_th, sizeof(cs), &cs);
	CPU_ZERO(&cs);
	CPU_SET(cpu[1], &cs);
	pthread_setaffinity_np(pthread_self(), sizeof(cs), &cs);
}

static int fd_readable_now(void)
{
	struct pollfd pfd = { .fd = R.fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

int main(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	unsigned int seed = 0x2545f491u;
	int lost = 0, late = 0, rounds = 0, ret, epfd;
	struct uuring_stats st;
	long long start;
	pthread_t th;

	ret = ring_init(&R);
	if (ret) {
		fprintf(stderr, "setup: %s\n", strerror(-ret));
		return 1;
	}
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, R.fd, &ev)) {
		perror("epoll");
		return 1;
	}
	pthread_create(&th, NULL, poster, NULL);
	pin_apart(th);
	start = now_ns();
	for (int i = 0; i < MAX_ROUNDS &&
	     (i < MIN_ROUNDS || now_ns() - start < TIME_BUDGET_NS); i++) {
		unsigned int head, tail;
		int n;

		/* both sides on a CPU at once, then each its jitter */
		atomic_store_explicit(&waiter_ready, i + 1, memory_order_release);
		wait_past(&poster_ready, i);
		spin_ns(rnd(&seed) % JITTER_NS);
		/* the CQ is empty unless this round's CQE is already there;
		 * the wait boundary makes the fd unreadable if it is */
		if (i & 1) {
			uu_registry_sync_readiness();
			n = epoll_wait(epfd, &ev, 1, POLL_TIMEOUT_MS);
		} else {
			struct pollfd pfd = { .fd = R.fd, .events = POLLIN };

			uu_ring_sync_readiness_fd(R.fd);
			n = poll(&pfd, 1, POLL_TIMEOUT_MS);
		}
		if (n < 0) {
			if (errno == EINTR) {
				n = 0;
			} else {
				perror("round wait");
				break;
			}
		}
		/* the poster's enter has returned: its commit is complete */
		wait_past(&posted, i);
		if (atomic_load(&stop))
			break;
		tail = atomic_load_explicit(R.cq_tail, memory_order_acquire);
		head = atomic_load_explicit(R.cq_head, memory_order_relaxed);
		if (tail - head != 1) {
			fprintf(stderr, "round %d: %u CQEs in the CQ, expected 1\n",
				i, tail - head);
			break;
		}
		if (!n) {
			if (fd_readable_now()) {
				late++; /* the poster was slow, not lost */
			} else {
				if (++lost <= 10)
					fprintf(stderr, "round %d (%s): a CQE in the CQ (head %u, tail %u) and the ring fd not readable: lost readiness\n",
						i, i & 1 ? "epoll" : "poll", head,
						tail);
			}
		}
		/* reap from memory, as libuv does with its SQPOLL ring */
		atomic_store_explicit(R.cq_head, head + 1, memory_order_release);
		atomic_store_explicit(&round_done, i + 1, memory_order_release);
		rounds++;
#ifdef EXPECT_LOST_READINESS
		if (lost)
			break;
#endif
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	uuring_get_stats(R.fd, &st, sizeof(st));
#ifdef EXPECT_LOST_READINESS
	if (lost) {
		printf("mutant (flag loaded before the cq tail store): lost readiness detected after %d rounds, as it must be\n",
		       rounds);
		return 0;
	}
	printf("FAIL: the mutant build lost no readiness in %d rounds: the test cannot see the bug\n",
	       rounds);
	return 1;
#else
	printf("%d rounds, %d lost readiness, %d late; readiness signals %llu, drains %llu\n",
	       rounds, lost, late, (unsigned long long)st.readiness_signals,
	       (unsigned long long)st.readiness_drains);
	return lost || rounds < MIN_ROUNDS ? 1 : 0;
#endif
}
