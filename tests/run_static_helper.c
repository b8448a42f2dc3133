// SPDX-License-Identifier: MIT
/*
 * A fully static program (no PT_INTERP: LD_PRELOAD cannot reach it) for
 * tests/test_run_process.c, case exec-static (T11).  Exec'd by a program
 * running under `uuring run --block-kernel-uring`, it inherits uuring's
 * trap filter without its handler.  Without uuring it would get EPERM for
 * io_uring and fall back; under uuring it must get the same, never die of
 * SIGSYS.  It also touches fds in the ring range (trapped, replayed) and
 * installs its own SIGSYS handler (also trapped, replayed).
 * Exit 0 when everything behaved; prints what did not.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

static volatile sig_atomic_t got_sigsys;

static void on_sigsys(int sig)
{
	(void)sig;
	got_sigsys++;
}

static int bad;

#define EXPECT(cond, ...)                                                 \
	do {                                                              \
		if (!(cond)) {                                            \
			fprintf(stderr, "static helper: " __VA_ARGS__);  \
			fputc('\n', stderr);                              \
			bad++;                                            \
		}                                                         \
	} while (0)

int main(int argc, char **argv)
{
	struct io_uring_params p;
	int hi = argc > 1 ? atoi(argv[1]) : 3900;
	long ret;
	void *m;
	pid_t pid;
	int st;

	memset(&p, 0, sizeof(p));
	ret = raw6(__NR_io_uring_setup, 8, (long)&p, 0, 0, 0, 0);
	EXPECT(ret == -EPERM, "io_uring_setup: %ld, want -EPERM", ret);
	ret = raw6(__NR_io_uring_enter, 3, 0, 0, 0, 0, 0);
	EXPECT(ret == -EPERM, "io_uring_enter: %ld, want -EPERM", ret);

	/* an fd in uuring's ring range: the trap is replayed for real */
	ret = raw6(__NR_dup2, 2, hi, 0, 0, 0, 0);
	EXPECT(ret == hi, "dup2(2, %d): %ld", hi, ret);
	m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	EXPECT(m != MAP_FAILED, "anonymous mmap");
	ret = raw6(__NR_close, hi, 0, 0, 0, 0, 0);
	EXPECT(ret == 0, "close(%d): %ld", hi, ret);
	ret = raw6(__NR_close, hi, 0, 0, 0, 0, 0);
	EXPECT(ret == -EBADF, "second close(%d): %ld", hi, ret);

	/* its own SIGSYS handler, and a SIGSYS that is really its own */
	EXPECT(signal(SIGSYS, on_sigsys) != SIG_ERR, "signal(SIGSYS)");
	raise(SIGSYS);
	EXPECT(got_sigsys == 1, "own SIGSYS handler ran %d times",
	       (int)got_sigsys);
	ret = raw6(__NR_io_uring_register, 3, 0, 0, 0, 0, 0);
	EXPECT(ret == -EPERM, "io_uring_register: %ld", ret);
	EXPECT(got_sigsys == 1, "uuring's trap reached the own handler");

	/* a child of the static program */
	pid = fork();
	if (pid == 0) {
		ret = raw6(__NR_io_uring_setup, 8, (long)&p, 0, 0, 0, 0);
		_exit(ret == -EPERM ? 0 : 1);
	}
	EXPECT(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       WEXITSTATUS(st) == 0, "forked child: status %#x", st);
	return bad ? 1 : 0;
}
