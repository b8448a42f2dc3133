/* SPDX-License-Identifier: MIT */
/*
 * uuring: liburing's system call layer, routed to uuring.
 *
 * conformance/build-liburing.sh copies this file to src/arch/ of a copy of
 * liburing's source and makes src/arch/<arch>/syscall.h include it instead
 * of "../syscall-defs.h".  That is the whole change: liburing's raw
 * io_uring_setup/enter/register, mmap, munmap and close calls (the library's
 * own, the exported io_uring_* wrappers in src/syscall.c, and those of the
 * tests that include ../src/syscall.h) go to the uuring API, which keeps the
 * raw system calls' conventions (-errno, and IS_ERR pointers for mmap).
 * Every other system call of the layer stays a raw system call.
 *
 * The original definitions are kept under a __kernel prefix and unused.
 */
#ifndef UURING_LIBURING_SYSCALL_DEFS_H
#define UURING_LIBURING_SYSCALL_DEFS_H

#include <uuring.h>

#define __sys_io_uring_setup	__kernel_sys_io_uring_setup
#define __sys_io_uring_enter	__kernel_sys_io_uring_enter
#define __sys_io_uring_enter2	__kernel_sys_io_uring_enter2
#define __sys_io_uring_register	__kernel_sys_io_uring_register
#define __sys_mmap		__kernel_sys_mmap
#define __sys_munmap		__kernel_sys_munmap
#define __sys_close		__kernel_sys_close

#include "syscall-defs.h"

#undef __sys_io_uring_setup
#undef __sys_io_uring_enter
#undef __sys_io_uring_enter2
#undef __sys_io_uring_register
#undef __sys_mmap
#undef __sys_munmap
#undef __sys_close

static inline void *__sys_mmap(void *addr, size_t length, int prot, int flags,
			       int fd, off_t offset)
{
	return uuring_mmap(addr, length, prot, flags, fd, offset);
}

static inline int __sys_munmap(void *addr, size_t length)
{
	return uuring_munmap(addr, length);
}

static inline int __sys_close(int fd)
{
	return uuring_close(fd);
}

static inline int __sys_io_uring_register(unsigned int fd, unsigned int opcode,
					  const void *arg, unsigned int nr_args)
{
	return uuring_register(fd, opcode, (void *)arg, nr_args);
}

static inline int __sys_io_uring_setup(unsigned int entries,
				       struct io_uring_params *p)
{
	return uuring_setup(entries, p);
}

static inline int __sys_io_uring_enter2(unsigned int fd, unsigned int to_submit,
					unsigned int min_complete,
					unsigned int flags, sigset_t *sig,
					size_t sz)
{
	return uuring_enter(fd, to_submit, min_complete, flags, sig, sz);
}

static inline int __sys_io_uring_enter(unsigned int fd, unsigned int to_submit,
				       unsigned int min_complete,
				       unsigned int flags, sigset_t *sig)
{
	return uuring_enter(fd, to_submit, min_complete, flags, sig, _NSIG / 8);
}

#endif /* UURING_LIBURING_SYSCALL_DEFS_H */
