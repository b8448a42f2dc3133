// SPDX-License-Identifier: MIT
/*
 * Under `uuring run`: pread, pwrite and their vectored forms on a
 * /dev/ublkcN fd (a socket to uublkd underneath, ublkfiles.c) are
 * UBLK_F_USER_COPY's copies, ublk_drv's ublk_ch_read_iter and
 * ublk_ch_write_iter (src/ublk/client_io.c); on /dev/ublk-control they
 * fail -EINVAL, the control file having no read or write.  Every other
 * fd goes to libc's function: while the process holds no ublk file the
 * cost is one relaxed load, after that one fstat per call.
 *
 * read/write/readv/writev at the file position are not answered here
 * (the kernel's position stays 0, where a copy always fails).
 */
/* both the plain and the 64 names are defined here (the same on x86-64) */
#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/uio.h>
#include <unistd.h>

#include "shim/shim.h"
#include "ublk/client.h"

#define EXPORT __attribute__((visibility("default")))

#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x00000008
#endif
/* RWF_HIPRI .. RWF_NOAPPEND, RWF_ATOMIC, RWF_DONTCACHE: what
 * kiocb_set_rw_flags knows */
#define UBLKRW_RWF_KNOWN 0xffu

typedef ssize_t (*prw_fn)(int, void *, size_t, off_t);
typedef ssize_t (*prwv_fn)(int, const struct iovec *, int, off_t);
typedef ssize_t (*prwv2_fn)(int, const struct iovec *, int, off_t, int);
typedef ssize_t (*pread_chk_fn)(int, void *, size_t, off_t, size_t);

static struct ufile *ublk_fd(int fd)
{
	if (!atomic_load_explicit(&uu_ublk_nfiles, memory_order_relaxed))
		return NULL;
	return uu_ublk_file(fd);
}

static ssize_t ublk_rw(struct ufile *f, bool is_write, const struct iovec *iov,
		       int cnt, off_t pos, int flags)
{
	ssize_t n;

	if (f->kind != UK_CHAR)
		n = -EINVAL;
	else if (cnt < 0 || cnt > IOV_MAX)
		n = -EINVAL;
	else if (flags & ~UBLKRW_RWF_KNOWN)
		n = -EOPNOTSUPP;
	else if (flags & RWF_NOWAIT)
		n = -EOPNOTSUPP; /* no FMODE_NOWAIT */
	else /* preadv2's -1: the file position, always 0 here */
		n = uu_ublk_user_copy(f, is_write, iov, cnt,
				      pos == -1 ? 0 : pos, true);
	if (n < 0) {
		errno = (int)-n;
		return -1;
	}
	return n;
}

static ssize_t ublk_rw1(struct ufile *f, bool is_write, const void *buf,
			size_t len, off_t pos)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	/* pread(2) takes no -1: a negative offset is -EINVAL */
	if (pos < 0) {
		errno = EINVAL;
		return -1;
	}
	return ublk_rw(f, is_write, &iov, 1, pos, 0);
}

#define PRW(name, is_write, cbuf)                                          \
	static void *real_##name;                                          \
	EXPORT ssize_t name(int fd, cbuf void *buf, size_t n, off_t pos)   \
	{                                                                  \
		struct ufile *f = ublk_fd(fd);                             \
                                                                           \
		if (f)                                                     \
			return ublk_rw1(f, is_write, buf, n, pos);         \
		return ((prw_fn)uu_shim_real_next(&real_##name, #name))(   \
			fd, (void *)buf, n, pos);                          \
	}

PRW(pread, false, )
PRW(pread64, false, )
PRW(pwrite, true, const)
PRW(pwrite64, true, const)

#define PRWV(name, is_write)                                               \
	static void *real_##name;                                          \
	EXPORT ssize_t name(int fd, const struct iovec *iov, int cnt,      \
			    off_t pos)                                     \
	{                                                                  \
		struct ufile *f = ublk_fd(fd);                             \
                                                                           \
		if (f && pos < 0) {                                        \
			errno = EINVAL;                                    \
			return -1;                                         \
		}                                                          \
		if (f)                                                     \
			return ublk_rw(f, is_write, iov, cnt, pos, 0);     \
		return ((prwv_fn)uu_shim_real_next(&real_##name, #name))(  \
			fd, iov, cnt, pos);                                \
	}

PRWV(preadv, false)
PRWV(preadv64, false)
PRWV(pwritev, true)
PRWV(pwritev64, true)

#define PRWV2(name, is_write)                                              \
	static void *real_##name;                                          \
	EXPORT ssize_t name(int fd, const struct iovec *iov, int cnt,      \
			    off_t pos, int flags)                          \
	{                                                                  \
		struct ufile *f = ublk_fd(fd);                             \
                                                                           \
		if (f && pos < -1) {                                       \
			errno = EINVAL;                                    \
			return -1;                                         \
		}                                                          \
		if (f)                                                     \
			return ublk_rw(f, is_write, iov, cnt, pos, flags); \
		return ((prwv2_fn)uu_shim_real_next(&real_##name, #name))( \
			fd, iov, cnt, pos, flags);                         \
	}

PRWV2(preadv2, false)
PRWV2(preadv64v2, false)
PRWV2(pwritev2, true)
PRWV2(pwritev64v2, true)

/* _FORTIFY_SOURCE's pread: libc's checks the object size */
#define PREAD_CHK(name)                                                    \
	static void *real_##name;                                          \
	EXPORT ssize_t name(int fd, void *buf, size_t n, off_t pos,        \
			    size_t buflen)                                 \
	{                                                                  \
		struct ufile *f = ublk_fd(fd);                             \
                                                                           \
		if (f && n <= buflen)                                      \
			return ublk_rw1(f, false, buf, n, pos);            \
		return ((pread_chk_fn)uu_shim_real_next(&real_##name,      \
							#name))(           \
			fd, buf, n, pos, buflen);                          \
	}

PREAD_CHK(__pread_chk)
PREAD_CHK(__pread64_chk)
