/* SPDX-License-Identifier: MIT */
/*
 * Does this machine's kernel let us use io_uring?  Sets up (and closes) a
 * one-entry ring with the raw system call.  Exit 0 and print "available",
 * or exit 1 and print why not (ENOSYS: no io_uring; EPERM: blocked by
 * seccomp or kernel.io_uring_disabled).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/io_uring.h>

int main(void)
{
	struct io_uring_params p;
	long fd;

	memset(&p, 0, sizeof(p));
	fd = syscall(__NR_io_uring_setup, 1, &p);
	if (fd < 0) {
		printf("blocked (io_uring_setup: %s)\n", strerror(errno));
		return 1;
	}
	close((int)fd);
	printf("available\n");
	return 0;
}
