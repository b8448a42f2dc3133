/* SPDX-License-Identifier: MIT */
/*
 * Raw system calls issued from one known code range (the section
 * "uu_exempt_text").  The interception layer's seccomp filter lets
 * syscalls whose instruction pointer lies in that range through untrapped,
 * so the engine can close, dup and map ring fds from inside the SIGSYS
 * handler without trapping itself (T10).  Every engine call that may
 * target a ring fd (close, dup, fcntl(F_DUPFD*), mmap) goes through here.
 * All return -errno on failure; errno is not touched.
 */
#ifndef UURING_RAWSYS_H
#define UURING_RAWSYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

long uu_rawsys6(long nr, long a1, long a2, long a3, long a4, long a5,
		long a6);

/* [start, end) of the exempt code range */
extern const char __start_uu_exempt_text[], __stop_uu_exempt_text[];

static inline int uu_sys_close(int fd)
{
	return (int)uu_rawsys6(3 /* __NR_close */, fd, 0, 0, 0, 0, 0);
}

static inline int uu_sys_dup(int fd)
{
	return (int)uu_rawsys6(32 /* __NR_dup */, fd, 0, 0, 0, 0, 0);
}

static inline int uu_sys_fcntl(int fd, int cmd, long arg)
{
	return (int)uu_rawsys6(72 /* __NR_fcntl */, fd, cmd, arg, 0, 0, 0);
}

static inline void *uu_sys_mmap(void *addr, size_t len, int prot, int flags,
				int fd, off_t off)
{
	return (void *)uu_rawsys6(9 /* __NR_mmap */, (long)addr, (long)len,
				  prot, flags, fd, (long)off);
}

#endif
