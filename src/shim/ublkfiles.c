// SPDX-License-Identifier: MIT
/*
 * Under `uuring run`: /dev/ublk-control and /dev/ublkcN opened by the
 * program are the ublk driver's files (docs/ublk.md, src/ublk/), while
 * the kernel has no /dev/ublk-control of its own (UURING_UBLK=force: even
 * then; =off: never).  Every other path goes to libc's open untouched;
 * the cost for them is one compare of the path's first bytes.  The
 * mapping of a char device's descriptors is preload.c's mmap.
 */
/* Meson's _FILE_OFFSET_BITS=64 renames open to open64 in glibc's
 * headers; both names are defined here (the same on x86-64). */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim/shim.h"
#include "uuring_ublk.h"

#define EXPORT __attribute__((visibility("default")))

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);

/* 1: ours, 0: the kernel's (or off), -1: not decided yet */
static int ublk_ours = -1;

static bool ublk_path(const char *path)
{
	const char *v;
	struct stat st;

	if (!path || strncmp(path, "/dev/ublk", 9) ||
	    (path[9] != '-' && path[9] != 'c') ||
	    uu_shim.mode != UU_MODE_UURING)
		return false;
	if (__atomic_load_n(&ublk_ours, __ATOMIC_RELAXED) < 0) {
		v = getenv("UURING_UBLK");
		if (v && !strcmp(v, "off"))
			ublk_ours = 0;
		else if (v && !strcmp(v, "force"))
			ublk_ours = 1;
		else /* a raw stat: no wrapper of ours on the way */
			ublk_ours = syscall(SYS_newfstatat, AT_FDCWD,
					    "/dev/ublk-control", &st, 0) != 0;
	}
	return ublk_ours == 1;
}

static int ublk_open_errno(const char *path, int flags)
{
	int fd = uuring_ublk_open(path, flags);

	if (fd < 0) {
		errno = -fd;
		return -1;
	}
	return fd;
}

static mode_t open_mode(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

/* libc's function behind one of ours, looked up once (a racing first
 * call looks it up twice and stores the same pointer: relaxed is
 * enough, the pointer is all that is published) */
static void *real_fn(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_RELAXED);

	if (!p) {
		p = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, p, __ATOMIC_RELAXED);
	}
	return p;
}

static int open_common(void **slot, const char *name, const char *path,
		       int flags, mode_t mode)
{
	open_fn real;

	if (ublk_path(path))
		return ublk_open_errno(path, flags);
	real = (open_fn)real_fn(slot, name);
	return real(path, flags, mode);
}

static int openat_common(void **slot, const char *name, int dirfd,
			 const char *path, int flags, mode_t mode)
{
	openat_fn real;

	/* only absolute paths can name the driver's files */
	if (ublk_path(path))
		return ublk_open_errno(path, flags);
	real = (openat_fn)real_fn(slot, name);
	return real(dirfd, path, flags, mode);
}

static void *real_open, *real_open64, *real_openat, *real_openat64,
	*real_open_2, *real_open64_2;

EXPORT int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	return open_common(&real_open, "open", path, flags, mode);
}

EXPORT int open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	return open_common(&real_open64, "open64", path, flags, mode);
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	return openat_common(&real_openat, "openat", dirfd, path, flags,
			     mode);
}

EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	return openat_common(&real_openat64, "openat64", dirfd, path, flags,
			     mode);
}

/* _FORTIFY_SOURCE's checked forms */
EXPORT int __open_2(const char *path, int flags)
{
	return open_common(&real_open_2, "__open_2", path, flags, 0);
}

EXPORT int __open64_2(const char *path, int flags)
{
	return open_common(&real_open64_2, "__open64_2", path, flags, 0);
}
