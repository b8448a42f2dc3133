// SPDX-License-Identifier: MIT
/*
 * trapbench: the trapped path of `uuring run`, measured with an ordinary
 * liburing program (Debian's liburing issues raw `syscall` instructions,
 * so under `uuring run` every io_uring_enter is a seccomp trap).
 *
 *   trapbench -m nop [-s batch=32] [-t secs=2] [-w warmup]
 *       NOP flood: prepare `batch` NOPs, io_uring_submit_and_wait(batch),
 *       reap them; one enter per batch.  Prints the RESULT line of
 *       bench/ubench (ops_per_s, cpu_us_per_op, ...); the route and wait
 *       counters come from uuring_get_stats() when the program runs under
 *       uuring run (the preload library exports it), else -1.
 *   trapbench -m trap [-t secs]
 *       The cost of an empty trap: a trapped system call that the SIGSYS
 *       handler answers at once (io_uring_register's sentinel, see
 *       src/shim/shim.h), against a plain getppid(2).  Prints
 *       TRAP empty_trap_ns=.. raw_syscall_ns=.. (only under uuring run).
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <liburing.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "uuring.h"

#define SENTINEL_OP 0x75757273u /* src/shim/shim.h */
#define SENTINEL_NR 0x5e17u
#define SENTINEL_REPLY 0x75757275L

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static long raw6(long nr, long a1, long a2, long a3, long a4, long a5,
		 long a6)
{
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10),
			   "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

static int bench_trap(double secs)
{
	double t0, dt, trap_ns, raw_ns;
	long n;

	if (raw6(__NR_io_uring_register, -1, SENTINEL_OP, 0, SENTINEL_NR, 0,
		 0) != SENTINEL_REPLY) {
		fprintf(stderr, "trapbench: not under uuring run: no trap to "
			"measure\n");
		return 77;
	}
	for (int pass = 0; pass < 2; pass++) {
		n = 0;
		t0 = now();
		do {
			for (int i = 0; i < 1000; i++)
				raw6(__NR_io_uring_register, -1, SENTINEL_OP, 0,
				     SENTINEL_NR, 0, 0);
			n += 1000;
		} while ((dt = now() - t0) < secs / 2);
		trap_ns = dt * 1e9 / (double)n;
		n = 0;
		t0 = now();
		do {
			for (int i = 0; i < 1000; i++)
				raw6(__NR_getppid, 0, 0, 0, 0, 0, 0);
			n += 1000;
		} while ((dt = now() - t0) < secs / 4);
		raw_ns = dt * 1e9 / (double)n;
	}
	printf("TRAP empty_trap_ns=%.0f raw_syscall_ns=%.0f\n", trap_ns,
	       raw_ns);
	return 0;
}

static int bench_nop(unsigned int batch, double secs, double warmup)
{
	int (*get_stats)(int, struct uuring_stats *, size_t) =
		(int (*)(int, struct uuring_stats *, size_t))dlsym(
			RTLD_DEFAULT, "uuring_get_stats");
	struct uuring_stats st;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	double t0, c0 = 0, tw = 0, end;
	uint64_t ops = 0, ops0 = 0, enters = 0, enters0 = 0;
	int ret;

	ret = io_uring_queue_init(batch < 8 ? 8 : batch, &ring, 0);
	if (ret) {
		fprintf(stderr, "trapbench: queue_init: %s\n", strerror(-ret));
		return 1;
	}
	t0 = now();
	end = t0 + secs;
	for (bool measuring = false;;) {
		double t = now();

		if (!measuring && t - t0 >= warmup) {
			measuring = true;
			tw = t;
			c0 = cpu_now();
			ops0 = ops;
			enters0 = enters;
		}
		if (t >= end)
			break;
		for (int k = 0; k < 64; k++) {
			unsigned int head, n = 0;

			for (unsigned int i = 0; i < batch; i++) {
				struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

				io_uring_prep_nop(sqe);
				sqe->user_data = i + 1;
			}
			ret = io_uring_submit_and_wait(&ring, batch);
			if (ret != (int)batch) {
				fprintf(stderr, "trapbench: submit: %d\n", ret);
				return 1;
			}
			enters++;
			io_uring_for_each_cqe(&ring, head, cqe) {
				if (cqe->res || !cqe->user_data) {
					fprintf(stderr, "trapbench: bad cqe\n");
					return 1;
				}
				n++;
			}
			io_uring_cq_advance(&ring, n);
			ops += n;
		}
	}
	{
		double wall = now() - tw, cpu = cpu_now() - c0;
		uint64_t m = ops - ops0;
		long long s[7] = { -1, -1, -1, -1, -1, -1, -1 };

		if (get_stats &&
		    get_stats(ring.ring_fd, &st, sizeof(st)) == (int)sizeof(st)) {
			s[0] = (long long)st.route_inline;
			s[1] = (long long)st.route_iowq;
			s[2] = (long long)st.route_poll;
			s[3] = (long long)st.route_sqpoll;
			s[4] = (long long)st.waits;
			s[5] = (long long)st.wakeups;
			s[6] = (long long)st.route_aio;
		}
		printf("RESULT ops_per_s=%.0f cpu_us_per_op=%.4f "
		       "enters_per_op=%.4f ops_total=%llu route_inline=%lld "
		       "route_iowq=%lld route_poll=%lld route_sqpoll=%lld route_aio=%lld "
		       "waits=%lld wakeups=%lld resid_start=-1 resid_end=-1 "
		       "other_cores=0 steal_cores=0 checked=0\n",
		       (double)m / wall, cpu * 1e6 / (double)m,
		       (double)(enters - enters0) / (double)m,
		       (unsigned long long)m, s[0], s[1], s[2], s[3], s[6],
		       s[4], s[5]);
	}
	io_uring_queue_exit(&ring);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = "nop";
	unsigned int batch = 32;
	double secs = 2, warmup = -1;
	int c;

	while ((c = getopt(argc, argv, "m:s:t:w:")) != -1) {
		switch (c) {
		case 'm':
			mode = optarg;
			break;
		case 's':
			batch = (unsigned int)atoi(optarg);
			break;
		case 't':
			secs = atof(optarg);
			break;
		case 'w':
			warmup = atof(optarg);
			break;
		default:
			fprintf(stderr, "usage: trapbench -m nop|trap [-s batch] "
				"[-t secs] [-w warmup]\n");
			return 2;
		}
	}
	if (warmup < 0)
		warmup = secs / 4 < 1 ? secs / 4 : 1;
	if (!batch || batch > 4096)
		return 2;
	if (!strcmp(mode, "trap"))
		return bench_trap(secs);
	return bench_nop(batch, secs, warmup);
}
