// SPDX-License-Identifier: MIT
/*
 * wakercost: what the in-process waker wrappers of `uuring run` (the
 * preload's write/send/close wrappers, src/shim/wakers.c) cost a program
 * that writes a lot.  One write(2) of 1 byte to /dev/null per iteration,
 * in three configurations measured interleaved, REPS times each:
 *
 *   plain          the program alone (no preload library);
 *   idle           under `uuring run --mode=force`: every write passes
 *                  through the wrapper, the readiness engine watches
 *                  nothing;
 *   idle-bypass    the same, but the loop calls libc's write directly
 *                  (dlopen of libc.so.6), around the wrapper: the same
 *                  process with the same seccomp filter;
 *   watching       under uuring run with one POLL_ADD parked on a pipe
 *                  nobody writes: the wrapper then looks up the class of
 *                  the fd written (/dev/null: cannot wake anything);
 *   watching-bypass  the same around the wrapper.
 *
 *   wakercost [-r reps=9] [-n writes=1000000] [-t path/to/uuring]
 *
 * Prints the median ns per write of each and the wrapper's share:
 * idle/idle-bypass and watching/watching-bypass (and idle/plain, which
 * also holds the seccomp filter `uuring run` installs).  The tool defaults to ../tools/uuring next to this
 * binary's directory (the build tree).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/* a ring with one POLL_ADD parked on a pipe's read end; 0 or -1 */
static int park_a_poll(void)
{
	struct io_uring_params p;
	struct io_uring_sqe *sqes;
	unsigned char *sq;
	uint32_t *tail, *array;
	int fd, pfd[2];

	memset(&p, 0, sizeof(p));
	fd = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (fd < 0 || pipe(pfd))
		return -1;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * 4,
		  PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_SQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || sqes == MAP_FAILED)
		return -1;
	tail = (uint32_t *)(sq + p.sq_off.tail);
	array = (uint32_t *)(sq + p.sq_off.array);
	memset(&sqes[0], 0, sizeof(sqes[0]));
	sqes[0].opcode = IORING_OP_POLL_ADD;
	sqes[0].fd = pfd[0];
	sqes[0].poll32_events = POLLIN;
	array[0] = 0;
	__atomic_store_n(tail, 1, __ATOMIC_RELEASE);
	return syscall(__NR_io_uring_enter, fd, 1, 0, 0, NULL, 0) == 1 ? 0 : -1;
}

static int child(long n, int watching, int bypass)
{
	ssize_t (*wr)(int, const void *, size_t) = write;
	int fd = open("/dev/null", O_WRONLY);
	double t0;
	char b = 'x';

	if (bypass) {
		void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

		wr = libc ? (ssize_t(*)(int, const void *, size_t))dlsym(
				    libc, "write") :
			    NULL;
		if (!wr)
			return 2;
	}
	if (fd < 0 || (watching && park_a_poll()))
		return 2;
	for (int i = 0; i < 10000; i++) /* warm up */
		if (wr(fd, &b, 1) != 1)
			return 2;
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		if (wr(fd, &b, 1) != 1)
			return 2;
	printf("%.2f\n", (now_ns() - t0) / (double)n);
	return 0;
}

/* one run of a configuration; ns per write, or -1 */
static double run(const char *self, const char *tool, int cfg, long n)
{
	char nbuf[32], out[64] = "";
	int pfd[2], st;
	pid_t pid;
	ssize_t got;

	snprintf(nbuf, sizeof(nbuf), "%ld", n);
	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		static const char *const modes[] = { "child", "child",
						     "bypass", "watching",
						     "watching-bypass" };
		const char *mode = modes[cfg];

		dup2(pfd[1], 1);
		if (cfg == 0)
			execl(self, self, mode, nbuf, (char *)NULL);
		else
			execl(tool, tool, "run", "--mode=force", "--", self,
			      mode, nbuf, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	got = read(pfd[0], out, sizeof(out) - 1);
	close(pfd[0]);
	waitpid(pid, &st, 0);
	if (got <= 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	out[got] = 0;
	return strtod(out, NULL);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "plain", "idle", "idle-bypass",
					     "watching", "watching-bypass" };
	char self[PATH_MAX], tool[PATH_MAX + 32];
	double v[5][64], med[5];
	long n = 1000000;
	int reps = 9, opt;
	ssize_t l;

	if (argc == 3 && !strcmp(argv[1], "child"))
		return child(atol(argv[2]), 0, 0);
	if (argc == 3 && !strcmp(argv[1], "bypass"))
		return child(atol(argv[2]), 0, 1);
	if (argc == 3 && !strcmp(argv[1], "watching"))
		return child(atol(argv[2]), 1, 0);
	if (argc == 3 && !strcmp(argv[1], "watching-bypass"))
		return child(atol(argv[2]), 1, 1);
	l = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (l <= 0)
		return 2;
	self[l] = 0;
	snprintf(tool, sizeof(tool), "%s", self);
	*strrchr(tool, '/') = 0;
	strcat(tool, "/../tools/uuring");
	while ((opt = getopt(argc, argv, "r:n:t:")) != -1) {
		if (opt == 'r')
			reps = atoi(optarg);
		else if (opt == 'n')
			n = atol(optarg);
		else if (opt == 't')
			snprintf(tool, sizeof(tool), "%s", optarg);
	}
	if (reps < 1 || reps > 64)
		reps = 9;
	for (int r = 0; r < reps; r++)
		for (int c = 0; c < 5; c++) {
			v[c][r] = run(self, tool, c, n);
			if (v[c][r] < 0) {
				fprintf(stderr, "%s run failed\n", names[c]);
				return 1;
			}
		}
	for (int c = 0; c < 5; c++) {
		qsort(v[c], (size_t)reps, sizeof(double), cmp);
		med[c] = v[c][reps / 2];
		printf("%-16s %8.2f ns per write (median of %d)\n", names[c],
		       med[c], reps);
	}
	printf("wrapper: idle/idle-bypass %.3f, watching/watching-bypass "
	       "%.3f; idle/plain %.3f (with uuring run's seccomp filter)\n",
	       med[1] / med[2], med[3] / med[4], med[1] / med[0]);
	return 0;
}
