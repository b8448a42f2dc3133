// SPDX-License-Identifier: MIT
/*
 * io-wq: a wake meant for an earlier idle period of a worker (regression
 * test for c6c7430).  Built against libuuring_hooks (src/exec/iowq.c,
 * UURING_TEST_HOOKS), uuring only.
 *
 * The race: a waker takes an idle worker off the free list and, only
 * after dropping the list lock, wakes it; meanwhile the worker, which had
 * just pushed itself and was about to recheck the work list, finds the
 * work itself, runs it and goes idle again.  The late wake then lands in
 * the worker's next idle period.  The old worker loop took any wake as
 * "taken off the list" and pushed itself a second time: the free list
 * became a cycle that lost the workers behind it (a later unlink of one
 * of them spun for ever under workers_lock; the async NOP benchmark hung
 * about once in 30-100 runs).
 *
 * The hooks hold both windows open (bounded): the worker waits, after its
 * push, to be taken off the list; the waker that took it off during that
 * wait waits for it to be back on the list before it wakes it.  So each
 * round below (see rounds()) delivers a wake in the worker's next idle
 * period, and uu_test_iowq_late_wakes counts how many did: the test
 * requires a tenth of the rounds to have reached the window, so it cannot
 * pass by missing it.  The hook build also aborts on a push of a worker
 * already on the list or on a free list that is not a chain.  Without that check
 * the damage shows too: after the rounds, a burst of blocking work needs
 * a worker per request (FIFO opens), and a free list that lost its
 * workers gives back fewer.
 *
 * Measured with c6c7430^'s worker loop and wake_one (hooks added at the
 * same places): the check aborts in the first round in 10 of 10 runs;
 * with the check left out, 5 of 5 runs fail the first burst ("1 of 3
 * opens got a worker", after its 10 s deadline); with the holds off
 * (HOLD_US 0), 0 of 10 runs pushed a worker twice.
 *
 * The idle time is set far above the test's length: no worker leaves (a
 * hold reads the state of the worker it waits on).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tprep.h"
#include "tcheck.h"
#include "tring.h"
#include "uuring.h"

/* the hooks, in libuuring_hooks (hidden, but this is one static link) */
extern _Atomic int uu_test_iowq_hold_us;
extern _Atomic unsigned int uu_test_iowq_late_wakes;

#define ROUNDS 100
#define ITERS 3
/*
 * Each hold is bounded by HOLD_US, and a round reaches the window only if
 * the submitting thread gets the CPU within it: with 3 ms and a half of
 * the rounds required, two CPU hogs beside the test failed 1 run in 12
 * (121 of 300).  10 ms makes a round's miss rarer, and a tenth of the
 * rounds still shows the window reached (the bug it catches aborted in
 * the first round); the holds that no one ends make the test ~2x slower.
 */
#define HOLD_US 10000
#define SEC 1000000000LL
#define DEADLINE_MS 10000

static char fifo[128];
static char wname[16];		/* iou-wrk-<owner tid> */

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int workers_in(long nr, int *all)
{
	return tthreads_in_syscall(wname, false, nr, all);
}

static int blocked_in_open(void)
{
	return workers_in(SYS_openat, NULL);
}

/* Waits until every worker sleeps in futex (idle), up to ms; true if. */
static bool all_asleep(int ms)
{
	long long end = now_ms() + ms;
	int all, in;

	do {
		in = workers_in(SYS_futex, &all);
		if (in == all)
			return true;
		usleep(200);
	} while (now_ms() < end);
	return false;
}

/*
 * n OPENATs of the FIFO with IOSQE_ASYNC: each blocks a worker of its own
 * until a writer comes.  Checks that all n are blocked at once, then
 * releases and reaps them.
 */
static void burst(struct tring *r, int n, const char *what)
{
	struct tcqe q[8];
	long long end;
	unsigned int got;
	int in = 0, wfd;

	for (int i = 0; i < n; i++) {
		struct io_uring_sqe *s = tprep(r, IORING_OP_OPENAT, AT_FDCWD,
					       fifo, 0, 0, 1 + (uint64_t)i,
					       IOSQE_ASYNC);

		s->open_flags = O_RDONLY | O_CLOEXEC;
	}
	CHECK(tring_submit(r) == n, "%s: submit", what);
	end = now_ms() + DEADLINE_MS;
	while ((in = blocked_in_open()) < n && now_ms() < end)
		usleep(2000);
	CHECK(in == n, "%s: %d of %d opens got a worker", what, in, n);
	wfd = open(fifo, O_RDWR | O_CLOEXEC);
	CHECK(wfd >= 0, "%s: open the FIFO read-write", what);
	got = tring_reap_wait(r, q, (unsigned int)n, 10 * SEC);
	CHECK(got == (unsigned int)n, "%s: %u of %d opens completed", what,
	      got, n);
	for (unsigned int i = 0; i < got; i++)
		if (q[i].res >= 0)
			close(q[i].res);
	if (wfd >= 0)
		close(wfd);
}

/*
 * ROUNDS rounds of two IOSQE_ASYNC NOPs.  The first wakes a sleeping
 * worker, which runs it and pushes itself (push hold); the second,
 * submitted as soon as the first completed, takes that worker off the
 * list during its push hold, and its waker holds the wake until the
 * worker ran the NOP itself and went idle again.  Then every worker is
 * let fall asleep, with the late wake pending on one of them.  Returns
 * how many rounds delivered a late wake.
 */
static unsigned int rounds(struct tring *r, const char *what)
{
	unsigned int before = atomic_load(&uu_test_iowq_late_wakes);
	struct tcqe q;

	atomic_store(&uu_test_iowq_hold_us, HOLD_US);
	for (int i = 0; i < 2 * ROUNDS; i++) {
		tprep_nop(r, 5000 + (uint64_t)i, IOSQE_ASYNC);
		if (tring_submit(r) != 1 ||
		    tring_reap_wait(r, &q, 1, 5 * SEC) != 1 ||
		    q.user_data != 5000 + (uint64_t)i || q.res != 0) {
			CHECK(0, "%s: round %d: NOP lost or wrong", what, i);
			break;
		}
		if (i % 2 && !all_asleep(5000)) {
			CHECK(0, "%s: round %d: the workers did not go idle",
			      what, i);
			break;
		}
	}
	atomic_store(&uu_test_iowq_hold_us, 0);
	return atomic_load(&uu_test_iowq_late_wakes) - before;
}

static void one_ring(unsigned int flags, const char *what)
{
	unsigned int late = 0;
	struct tring r;
	long long t0 = now_ms();
	int ret = tring_init(&r, &backend_uuring, 32, flags);

	if (ret) {
		CHECK(0, "%s: ring setup: %d", what, ret);
		return;
	}
	/* two idle workers, so that a cycle made by the first loses the
	 * second */
	burst(&r, 2, what);
	for (int it = 0; it < ITERS && !tcheck_failures; it++) {
		late += rounds(&r, what);
		/* more workers than were ever made at once: the free list
		 * must give back every idle one */
		burst(&r, 3 + it, what);
	}
	printf("# %s: %u late wakes in %d rounds, %lld ms\n", what, late,
	       ITERS * ROUNDS, now_ms() - t0);
	CHECK(late >= ITERS * ROUNDS / 10,
	      "%s: only %u of %d rounds reached the window", what, late,
	      ITERS * ROUNDS);
	tring_exit(&r);
}

int main(void)
{
	char dir[] = "/tmp/uuring-iowq-stale-XXXXXX";

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* no idle exits during the test (see the top) */
	setenv("UURING_IOWQ_IDLE_MS", "600000", 1);
	twatchdog(45);
	snprintf(wname, sizeof(wname), "iou-wrk-%d", (int)syscall(SYS_gettid));
	if (!mkdtemp(dir)) {
		printf("SKIP: mkdtemp: %s\n", strerror(errno));
		return 77;
	}
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	if (mkfifo(fifo, 0600)) {
		printf("SKIP: mkfifo: %s\n", strerror(errno));
		rmdir(dir);
		return 77;
	}
	one_ring(0, "plain ring");
	/* the benchmark that hung: DEFER_TASKRUN | SINGLE_ISSUER */
	one_ring(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		 "DEFER_TASKRUN ring");
	unlink(fifo);
	rmdir(dir);
	printf("%s\n", tcheck_failures ? "FAIL" : "PASS");
	return tcheck_failures ? 1 : 0;
}
