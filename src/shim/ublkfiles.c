// SPDX-License-Identifier: MIT
/*
 * Under `uuring run`: /dev/ublk-control and /dev/ublkcN opened by the
 * program are the ublk driver's files (docs/ublk.md, src/ublk/), while
 * the kernel has no /dev/ublk-control of its own (UURING_UBLK=force: even
 * then; =off: never).  Every other path goes to libc's open untouched;
 * the cost for them is one compare of the path's first bytes.  The
 * mapping of a char device's descriptors is preload.c's mmap.
 *
 * stat, lstat, fstatat, statx, access and faccessat answer for the same
 * paths as for character devices with made-up numbers (root's, mode
 * 0600): the control file always, /dev/ublkcN while device N exists
 * (libublk looks with statx before it opens).  The listing of
 * /sys/class/ublk-char is ublksys.c's.
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
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim/shim.h"
#include "ublk/client.h"
#include "uuring_ublk.h"

#define EXPORT __attribute__((visibility("default")))

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);

/* 1: ours, 0: the kernel's (or off), -1: not decided yet */
static int ublk_ours = -1;

/* does the driver of ours answer for ublk's files in this process? */
bool uu_shim_ublk_ours(void)
{
	const char *v;
	struct stat st;

	if (uu_shim.mode != UU_MODE_UURING)
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

static bool ublk_path(const char *path)
{
	if (!path || strncmp(path, "/dev/ublk", 9) ||
	    (path[9] != '-' && path[9] != 'c'))
		return false;
	return uu_shim_ublk_ours();
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
 * enough, the pointer is all that is published); shim/shim.h */
void *uu_shim_real_next(void **slot, const char *name)
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
	real = (open_fn)uu_shim_real_next(slot, name);
	return real(path, flags, mode);
}

static int openat_common(void **slot, const char *name, int dirfd,
			 const char *path, int flags, mode_t mode)
{
	openat_fn real;

	/* only absolute paths can name the driver's files */
	if (ublk_path(path))
		return ublk_open_errno(path, flags);
	real = (openat_fn)uu_shim_real_next(slot, name);
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

/* ---- the stat family ---- */

typedef int (*fstatat_fn)(int, const char *, struct stat *, int);
typedef int (*statx_fn)(int, const char *, int, unsigned int,
			struct statx *);
typedef int (*faccessat_fn)(int, const char *, int, int);

static void *real_fstatat, *real_statx, *real_faccessat;

/* 0 with *rdev set, or -errno (-ENOENT: no such device) */
static int ublk_node(const char *path, dev_t *rdev)
{
	int ret = uu_ublk_probe(path, rdev);

	return ret == -EINVAL ? -ENOENT : ret;
}

static int fail(int err)
{
	errno = -err;
	return -1;
}

static int ublk_fill_stat(const char *path, struct stat *st)
{
	dev_t rdev;
	int ret = ublk_node(path, &rdev);

	if (ret)
		return fail(ret);
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFCHR | 0600;
	st->st_rdev = rdev;
	st->st_nlink = 1;
	st->st_blksize = 4096;
	st->st_dev = makedev(0, 5); /* devtmpfs's */
	st->st_ino = 1000 + minor(rdev);
	return 0;
}

EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	if (ublk_path(path))
		return ublk_fill_stat(path, st);
	return ((fstatat_fn)uu_shim_real_next(&real_fstatat, "fstatat"))(dirfd, path, st,
							       flags);
}

EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st,
		     int flags)
{
	return fstatat(dirfd, path, (struct stat *)st, flags);
}

EXPORT int stat(const char *path, struct stat *st)
{
	return fstatat(AT_FDCWD, path, st, 0);
}

EXPORT int stat64(const char *path, struct stat64 *st)
{
	return fstatat(AT_FDCWD, path, (struct stat *)st, 0);
}

EXPORT int lstat(const char *path, struct stat *st)
{
	return fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

EXPORT int lstat64(const char *path, struct stat64 *st)
{
	return fstatat(AT_FDCWD, path, (struct stat *)st, AT_SYMLINK_NOFOLLOW);
}

EXPORT int statx(int dirfd, const char *path, int flags, unsigned int mask,
		 struct statx *sx)
{
	struct stat st;

	if (!ublk_path(path))
		return ((statx_fn)uu_shim_real_next(&real_statx, "statx"))(dirfd, path,
								 flags, mask,
								 sx);
	if (ublk_fill_stat(path, &st))
		return -1;
	memset(sx, 0, sizeof(*sx));
	sx->stx_mask = STATX_BASIC_STATS;
	sx->stx_mode = (uint16_t)st.st_mode;
	sx->stx_nlink = 1;
	sx->stx_blksize = 4096;
	sx->stx_ino = st.st_ino;
	sx->stx_rdev_major = major(st.st_rdev);
	sx->stx_rdev_minor = minor(st.st_rdev);
	sx->stx_dev_minor = 5;
	return 0;
}

EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
	dev_t rdev;
	int ret;

	if (!ublk_path(path))
		return ((faccessat_fn)uu_shim_real_next(&real_faccessat, "faccessat"))(
			dirfd, path, mode, flags);
	ret = ublk_node(path, &rdev);
	if (ret)
		return fail(ret);
	/* root's, mode 0600 */
	if ((mode & X_OK) || (mode && geteuid() != 0))
		return fail(-EACCES);
	return 0;
}

EXPORT int access(const char *path, int mode)
{
	return faccessat(AT_FDCWD, path, mode, 0);
}
