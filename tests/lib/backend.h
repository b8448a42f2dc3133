/* SPDX-License-Identifier: MIT */
/*
 * Test backends: the same io_uring system-call surface served either by the
 * kernel (raw system calls) or by uuring (the uuring_* API).  Every function
 * returns what the raw system call would: a result or -errno (mmap: the
 * address or (void *)(intptr_t)-errno).  errno is not a result channel.
 */
#ifndef TESTS_BACKEND_H
#define TESTS_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct io_uring_params;

enum backend_kind {
	BACKEND_KERNEL = 1,
	BACKEND_UURING = 2,
};

struct backend {
	const char *name;
	enum backend_kind kind;
	int (*setup)(unsigned int entries, struct io_uring_params *p);
	int (*enter)(unsigned int fd, unsigned int to_submit,
		     unsigned int min_complete, unsigned int flags,
		     const void *argp, size_t argsz);
	/* io_uring_register(2); "register" is a C keyword */
	int (*reg)(unsigned int fd, unsigned int opcode, void *arg,
		   unsigned int nr_args);
	void *(*mmap)(void *addr, size_t length, int prot, int flags, int fd,
		      off_t offset);
	int (*munmap)(void *addr, size_t length);
	int (*close)(int fd);
	int (*dup)(int fd);
};

extern const struct backend backend_kernel;
extern const struct backend backend_uuring;

/* (void *)-errno convention of backend->mmap */
#define BACKEND_MMAP_FAILED(p) ((uintptr_t)(p) >= (uintptr_t)-4095)
#define BACKEND_MMAP_ERR(p) ((int)(intptr_t)(p))

/* 1 if io_uring_setup(2) works on this machine (result is cached). */
int backend_kernel_available(void);

/* 1 if fd's /proc/self/fd link is "anon_inode:[io_uring]". */
int backend_fd_is_kernel_ring(int fd);

/* 1 if uuring serves fd (uuring_is_ring_fd) and it is not a kernel ring. */
int backend_fd_is_uuring_ring(int fd);

/* 1 if the ring fd was served by backend b (see the two above). */
int backend_owns_fd(const struct backend *b, int fd);

/*
 * Looks a backend up by name ("kernel" or "uuring"); NULL if unknown.
 */
const struct backend *backend_by_name(const char *name);

/*
 * The backend under test: uuring unless the environment variable
 * UURING_TEST_BACKEND names another one ("kernel" gives a kernel-vs-kernel
 * sanity run of the differential tests).
 */
const struct backend *backend_under_test(void);

#endif /* TESTS_BACKEND_H */
