// SPDX-License-Identifier: MIT
/*
 * The two test backends: raw kernel system calls and the uuring API.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "abi/io_uring_abi.h"
#include "uuring.h"
#include "backend.h"

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter 426
#endif
#ifndef __NR_io_uring_register
#define __NR_io_uring_register 427
#endif

static long neg_errno(long ret)
{
	return ret < 0 ? -errno : ret;
}

static int k_setup(unsigned int entries, struct io_uring_params *p)
{
	int saved = errno;
	long ret = neg_errno(syscall(__NR_io_uring_setup, entries, p));

	errno = saved;
	return (int)ret;
}

static int k_enter(unsigned int fd, unsigned int to_submit,
		   unsigned int min_complete, unsigned int flags,
		   const void *argp, size_t argsz)
{
	int saved = errno;
	long ret = neg_errno(syscall(__NR_io_uring_enter, fd, to_submit,
				     min_complete, flags, argp, argsz));

	errno = saved;
	return (int)ret;
}

static int k_register(unsigned int fd, unsigned int opcode, void *arg,
		      unsigned int nr_args)
{
	int saved = errno;
	long ret = neg_errno(syscall(__NR_io_uring_register, fd, opcode, arg,
				     nr_args));

	errno = saved;
	return (int)ret;
}

static void *k_mmap(void *addr, size_t length, int prot, int flags, int fd,
		    off_t offset)
{
	int saved = errno;
	void *p = mmap(addr, length, prot, flags, fd, offset);

	if (p == MAP_FAILED)
		p = (void *)(intptr_t)-errno;
	errno = saved;
	return p;
}

static int k_munmap(void *addr, size_t length)
{
	int saved = errno;
	int ret = (int)neg_errno(munmap(addr, length));

	errno = saved;
	return ret;
}

static int k_close(int fd)
{
	int saved = errno;
	int ret = (int)neg_errno(close(fd));

	errno = saved;
	return ret;
}

static int k_dup(int fd)
{
	int saved = errno;
	int ret = (int)neg_errno(dup(fd));

	errno = saved;
	return ret;
}

const struct backend backend_kernel = {
	.name = "kernel",
	.kind = BACKEND_KERNEL,
	.setup = k_setup,
	.enter = k_enter,
	.reg = k_register,
	.mmap = k_mmap,
	.munmap = k_munmap,
	.close = k_close,
	.dup = k_dup,
};

const struct backend backend_uuring = {
	.name = "uuring",
	.kind = BACKEND_UURING,
	.setup = uuring_setup,
	.enter = uuring_enter,
	.reg = uuring_register,
	.mmap = uuring_mmap,
	.munmap = uuring_munmap,
	.close = uuring_close,
	.dup = uuring_dup,
};

int backend_kernel_available(void)
{
	static int cached = -1;
	struct io_uring_params p;
	int fd;

	if (cached >= 0)
		return cached;
	memset(&p, 0, sizeof(p));
	fd = k_setup(2, &p);
	if (fd >= 0) {
		cached = backend_fd_is_kernel_ring(fd);
		close(fd);
	} else {
		cached = 0;
	}
	return cached;
}

int backend_fd_is_kernel_ring(int fd)
{
	char path[64], link[128];
	ssize_t n;
	int saved = errno;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	errno = saved;
	if (n < 0)
		return 0;
	link[n] = '\0';
	return strcmp(link, "anon_inode:[io_uring]") == 0;
}

int backend_fd_is_uuring_ring(int fd)
{
	return uuring_is_ring_fd(fd) == 1 && !backend_fd_is_kernel_ring(fd);
}

int backend_owns_fd(const struct backend *b, int fd)
{
	switch (b->kind) {
	case BACKEND_KERNEL:
		return backend_fd_is_kernel_ring(fd) &&
		       uuring_is_ring_fd(fd) != 1;
	case BACKEND_UURING:
		return backend_fd_is_uuring_ring(fd);
	}
	return 0;
}

const struct backend *backend_by_name(const char *name)
{
	if (!name)
		return NULL;
	if (!strcmp(name, "kernel"))
		return &backend_kernel;
	if (!strcmp(name, "uuring"))
		return &backend_uuring;
	return NULL;
}

const struct backend *backend_under_test(void)
{
	const char *env = getenv("UURING_TEST_BACKEND");
	const struct backend *b = backend_by_name(env);

	return b ? b : &backend_uuring;
}
