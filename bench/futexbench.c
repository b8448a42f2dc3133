// SPDX-License-Identifier: MIT
/*
 * futexbench: FUTEX_WAIT round trips, kernel io_uring vs uuring,
 * measured interleaved in one run.
 *
 *   futexbench [-n rounds=2000] [-r reps=5] [-m any|bitset]
 *
 * One round submits a FUTEX_WAIT (value 0, on a word that stays 0) and,
 * in the same enter, a FUTEX_WAKE of that word, and waits for both CQEs:
 * the wait is queued at issue and the wake that follows it in the batch
 * finds it (on uuring: a fresh waiter thread queued before the wake is
 * issued, then the completion through the readiness engine).  -m bitset
 * uses the bitset 0x1 (uuring's futex_wait(2) thread) instead of the
 * match-any one (its futex_waitv(2) thread).  Prints per repetition the
 * round-trip time of each backend, then the medians and their ratio
 * (uuring / kernel: above 1 means uuring is slower).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "tring.h"

#define FUTEX2_SIZE_U32 0x02
#define FUTEX2_PRIVATE 0x80

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Microseconds per round on one backend; negative on error. */
static double run(const struct backend *be, unsigned int rounds,
		  uint32_t mask)
{
	static uint32_t word;
	struct tring r;
	struct tcqe cqe[2];
	double t0;

	if (tring_init(&r, be, 8, 0))
		return -1;
	t0 = now_s();
	for (unsigned int i = 0; i < rounds; i++) {
		struct io_uring_sqe *s = tring_get_sqe(&r);

		memset(s, 0, sizeof(*s));
		s->opcode = IORING_OP_FUTEX_WAIT;
		s->fd = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE;
		s->addr = (uint64_t)(uintptr_t)&word;
		s->addr2 = 0;
		s->addr3 = mask;
		s->user_data = 1;
		s = tring_get_sqe(&r);
		memset(s, 0, sizeof(*s));
		s->opcode = IORING_OP_FUTEX_WAKE;
		s->fd = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE;
		s->addr = (uint64_t)(uintptr_t)&word;
		s->addr2 = 1;
		s->addr3 = mask;
		s->user_data = 2;
		if (tring_submit(&r) != 2 ||
		    tring_reap_wait(&r, cqe, 2, 10000000000LL) != 2 ||
		    cqe[0].res < 0 || cqe[1].res < 0) {
			tring_exit(&r);
			return -1;
		}
	}
	t0 = (now_s() - t0) * 1e6 / rounds;
	tring_exit(&r);
	return t0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	unsigned int rounds = 2000, reps = 5;
	uint32_t mask = 0xffffffffu;
	double k[64], u[64];
	int opt;

	while ((opt = getopt(argc, argv, "n:r:m:")) != -1) {
		switch (opt) {
		case 'n':
			rounds = (unsigned int)atoi(optarg);
			break;
		case 'r':
			reps = (unsigned int)atoi(optarg);
			break;
		case 'm':
			mask = !strcmp(optarg, "bitset") ? 0x1 : 0xffffffffu;
			break;
		default:
			fprintf(stderr, "usage: %s [-n rounds] [-r reps] "
				"[-m any|bitset]\n", argv[0]);
			return 2;
		}
	}
	if (!rounds || !reps || reps > 64)
		return 2;
	for (unsigned int i = 0; i < reps; i++) {
		/* interleaved, the order alternating */
		if (i & 1) {
			u[i] = run(&backend_uuring, rounds, mask);
			k[i] = run(&backend_kernel, rounds, mask);
		} else {
			k[i] = run(&backend_kernel, rounds, mask);
			u[i] = run(&backend_uuring, rounds, mask);
		}
		if (k[i] < 0 || u[i] < 0) {
			fprintf(stderr, "round failed (kernel %.1f, uuring "
				"%.1f)\n", k[i], u[i]);
			return 1;
		}
		printf("rep %u: kernel %.2f us, uuring %.2f us per round trip\n",
		       i, k[i], u[i]);
	}
	qsort(k, reps, sizeof(k[0]), cmp);
	qsort(u, reps, sizeof(u[0]), cmp);
	printf("futex %s: median kernel %.2f us, uuring %.2f us, "
	       "uuring/kernel %.2f\n", mask == 0x1 ? "bitset" : "any",
	       k[reps / 2], u[reps / 2], u[reps / 2] / k[reps / 2]);
	return 0;
}
