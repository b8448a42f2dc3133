// SPDX-License-Identifier: MIT
/*
 * Threaded wake stress: one thread submits NOPs one per enter while another
 * waits for batches of N with GETEVENTS (min_complete = N, EXT_ARG
 * timeout).  Checks that no wakeup is lost (a wait that times out while N
 * CQEs are in the ring, or a run that does not finish in bounded time) and,
 * on uuring, that the waiter is woken about once per batch rather than once
 * per CQE: wakeups <= batches * 1.5 + slack (uuring_get_stats).
 *
 * Runs on uuring always, and on the kernel's io_uring as a sanity reference
 * when it is available (no statistics there).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tring.h"
#include "uuring.h"

#define TOTAL 8192		/* NOPs per run, a multiple of every N */
#define WAIT_TIMEOUT_NS (2000 * 1000000LL)
#define RUN_DEADLINE_NS (20000 * 1000000LL)

struct run {
	struct tring r;
	unsigned int batch;
	unsigned int total;
	int64_t pace_ns;		/* busy pause after each submit */
	unsigned int inflight_max;
	unsigned int reaped;		/* atomic: CQEs consumed by the waiter */
	unsigned int submitted;		/* atomic */
	int submit_err;
	int lost_wakeups;
	int bad_cqes;
	int timeouts;
	int deadline_hit;
	int64_t start;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *submitter(void *arg)
{
	struct run *run = arg;
	unsigned int i;

	for (i = 0; i < run->total; i++) {
		struct io_uring_sqe *sqe;
		int ret;

		/* never let more CQEs be outstanding than the CQ holds */
		while (i - __atomic_load_n(&run->reaped, __ATOMIC_ACQUIRE) >=
		       run->inflight_max) {
			if (now_ns() - run->start > RUN_DEADLINE_NS) {
				run->deadline_hit = 1;
				return NULL;
			}
			sched_yield();
		}
		sqe = tring_get_sqe(&run->r);
		if (!sqe) {
			run->submit_err = -ENOSPC;
			return NULL;
		}
		tring_prep_nop(sqe, i);
		ret = tring_submit(&run->r);
		if (ret != 1) {
			run->submit_err = ret;
			return NULL;
		}
		__atomic_store_n(&run->submitted, i + 1, __ATOMIC_RELEASE);
		if (run->pace_ns) {
			int64_t until = now_ns() + run->pace_ns;

			while (now_ns() < until)
				;
		}
	}
	return NULL;
}

static void *waiter(void *arg)
{
	struct run *run = arg;
	unsigned int expect = 0;

	while (expect < run->total) {
		struct io_uring_cqe *cqe;
		unsigned int head, n = 0;
		int ret;

		if (now_ns() - run->start > RUN_DEADLINE_NS) {
			run->deadline_hit = 1;
			return NULL;
		}
		if (tring_cq_ready(&run->r) < run->batch) {
			struct timespec ts = {
				WAIT_TIMEOUT_NS / 1000000000LL,
				WAIT_TIMEOUT_NS % 1000000000LL,
			};

			ret = tring_wait_ext(&run->r, 0, run->batch, 0, &ts,
					     NULL, 0);
			if (ret == -ETIME || ret == -EINTR) {
				unsigned int sub = __atomic_load_n(
					&run->submitted, __ATOMIC_ACQUIRE);

				run->timeouts++;
				/* target reached but nobody woke us */
				if (tring_cq_ready(&run->r) >= run->batch)
					run->lost_wakeups++;
				if (run->submit_err || (sub == run->total &&
				    tring_cq_ready(&run->r) < run->batch))
					return NULL;
				continue;
			} else if (ret < 0) {
				fprintf(stderr, "wait: %s\n", strerror(-ret));
				run->bad_cqes++;
				return NULL;
			}
		}
		tring_for_each_cqe(&run->r, head, cqe) {
			if (n == run->batch)
				break;
			if (cqe->user_data != expect || cqe->res != 0)
				run->bad_cqes++;
			expect++;
			n++;
		}
		tring_cq_advance(&run->r, n);
		__atomic_store_n(&run->reaped, expect, __ATOMIC_RELEASE);
	}
	return NULL;
}

static int one_run(const struct backend *be, unsigned int batch,
		   int64_t pace_ns)
{
	struct uuring_stats st;
	pthread_t ts, tw;
	struct run *run = calloc(1, sizeof(*run));
	unsigned int batches;
	int64_t t;
	int ret, fail = 0;

	if (!run)
		abort();
	ret = tring_init(&run->r, be, 64, 0);
	if (ret) {
		printf("FAIL %s: setup: %s\n", be->name, strerror(-ret));
		free(run);
		return 1;
	}
	run->batch = batch;
	run->total = TOTAL;
	run->pace_ns = pace_ns;
	run->inflight_max = run->r.cq_entries;
	run->start = now_ns();
	pthread_create(&tw, NULL, waiter, run);
	pthread_create(&ts, NULL, submitter, run);
	pthread_join(ts, NULL);
	pthread_join(tw, NULL);
	t = now_ns() - run->start;
	batches = TOTAL / batch;

	printf("%-6s N=%-3u pace %2u us: %u NOPs in %.0f ms, %d wait timeouts, %d lost wakeups, reaped %u\n",
	       be->name, batch, (unsigned int)(pace_ns / 1000), TOTAL,
	       t / 1e6, run->timeouts,
	       run->lost_wakeups, run->reaped);
	if (run->submit_err) {
		printf("FAIL %s N=%u: submit: %d\n", be->name, batch,
		       run->submit_err);
		fail = 1;
	}
	if (run->deadline_hit || run->reaped != TOTAL) {
		printf("FAIL %s N=%u: did not finish (hang or lost wakeup): reaped %u of %u\n",
		       be->name, batch, run->reaped, TOTAL);
		fail = 1;
	}
	if (run->lost_wakeups) {
		printf("FAIL %s N=%u: %d lost wakeups\n", be->name, batch,
		       run->lost_wakeups);
		fail = 1;
	}
	if (run->bad_cqes) {
		printf("FAIL %s N=%u: %d CQEs out of order or failed\n",
		       be->name, batch, run->bad_cqes);
		fail = 1;
	}
	if (be->kind == BACKEND_UURING) {
		memset(&st, 0, sizeof(st));
		ret = uuring_get_stats(run->r.fd, &st, sizeof(st));
		if (ret < 0) {
			printf("FAIL uuring_get_stats: %s\n", strerror(-ret));
			fail = 1;
		} else {
			double slack = 16;

			printf("        waits %llu, wakeups %llu, spurious %llu, cqes %llu: %.4f wakeups/CQE, %.2f wakeups/batch (%u batches)\n",
			       (unsigned long long)st.waits,
			       (unsigned long long)st.wakeups,
			       (unsigned long long)st.spurious_wakeups,
			       (unsigned long long)st.cqes_posted,
			       st.cqes_posted ? (double)st.wakeups /
						(double)st.cqes_posted : 0.0,
			       (double)st.wakeups / batches, batches);
			if (st.cqes_posted != TOTAL) {
				printf("FAIL cqes_posted %llu != %u\n",
				       (unsigned long long)st.cqes_posted,
				       TOTAL);
				fail = 1;
			}
			if ((double)st.wakeups > batches * 1.5 + slack) {
				printf("FAIL N=%u: %llu wakeups for %u batches (> batches * 1.5 + %.0f): woken per CQE, not per batch\n",
				       batch, (unsigned long long)st.wakeups,
				       batches, slack);
				fail = 1;
			}
		}
	}
	tring_exit(&run->r);
	free(run);
	return fail;
}

int main(void)
{
	static const struct {
		unsigned int batch;
		int64_t pace_ns;
	} cfg[] = {
		{ 1, 0 }, { 64, 0 },		/* throughput: races */
		{ 1, 5000 }, { 16, 5000 }, { 64, 5000 }, { 128, 2000 },
	};
	unsigned int i;
	int fail = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++) {
		if (backend_kernel_available())
			fail |= one_run(&backend_kernel, cfg[i].batch,
					cfg[i].pace_ns);
		fail |= one_run(&backend_uuring, cfg[i].batch, cfg[i].pace_ns);
	}
	if (!backend_kernel_available())
		printf("# kernel io_uring not available: uuring runs only\n");
	printf("%s\n", fail ? "FAIL" : "PASS");
	return fail;
}
