// SPDX-License-Identifier: MIT
/*
 * Ring-fd aware system calls: what setup, close, dup*, fcntl(F_DUPFD*),
 * mmap and close_range do when the process runs on uuring.  Used by the
 * libc interposers (preload.c) and by the SIGSYS handler (trap.c), so
 * everything here is written for signal context: no stdio, no dlsym; the
 * only allocations are the engine's own (see docs/architecture.md,
 * "Interception").  No system call that may target a ring-range fd goes
 * through libc,
 * so it cannot trap again: the engine's own calls through its exempt stub
 * (util/rawsys.h), ours marked with UU_PASS_MAGIC (shim.h).
 *
 * Ring fds are kept in a reserved range, at or above ring_lo (setup moves
 * them there, dup places copies there): the seccomp filter then traps raw
 * close/dup/mmap/fcntl only for fds in that range, which costs nothing for
 * every other fd.  The range has no upper end, so it is never full: a
 * program with thousands of fds pays a trap per raw close/dup/mmap of its
 * fds up there (libc callers pay nothing: the interposers pass them on).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uuring.h"
#include "core/registry.h"
#include "core/ring.h"
#include "core/types.h"
#include "shim/shim.h"
#include "util/rawsys.h"

#ifndef F_DUPFD_CLOEXEC
#define F_DUPFD_CLOEXEC 1030
#endif

/* Our own calls on possibly-ring fds: never trapped (shim.h). */
static int pass_close(int fd)
{
	return (int)uu_pass6(__NR_close, fd, 0, 0, 0, 0, 0);
}

static int pass_dup(int fd)
{
	return (int)uu_pass6(__NR_dup, fd, 0, 0, 0, 0, 0);
}

static int pass_fcntl(int fd, int cmd, long arg)
{
	return (int)uu_pass6(__NR_fcntl, fd, cmd, arg, 0, 0, 0);
}

/* The engine has no "forget this number" call: storing a NULL ring in the
 * slot is exactly that (the slot holds no reference). */
static void forget_fd(int fd)
{
	uu_registry_note_fd(NULL, fd);
}

static void note_max(int fd)
{
	if (fd > __atomic_load_n(&uu_shim.max_ring_fd, __ATOMIC_RELAXED))
		__atomic_store_n(&uu_shim.max_ring_fd, fd, __ATOMIC_RELAXED);
}

/*
 * The ring behind fd (a reference), or NULL.  Every ring fd of this process
 * was handed out (setup, dup) or looked up by the engine, so it is cached;
 * an uncached number is not a ring of ours (one received from another
 * process is not served here anyway).  A cached number is checked against
 * the ring's inode (one fstat: these are rare calls), since the program
 * may have closed it behind our back (a raw close_range, a raw close below
 * the ring range) and reused the number.
 */
static struct uu_ring *ring_of(int fd)
{
	struct uu_ring *r = uu_ring_get_cached(fd);
	struct stat st;

	if (!r)
		return NULL;
	if (!fstat(fd, &st) && st.st_ino == r->ring_ino &&
	    st.st_dev == r->ring_dev)
		return r;
	forget_fd(fd); /* stale */
	uu_ring_put(r);
	return NULL;
}

bool uu_shim_is_ring(int fd)
{
	struct uu_ring *r = ring_of(fd);

	if (!r)
		return false;
	uu_ring_put(r);
	return true;
}

/* A duplicate of ring fd `fd` in the ring range (F_DUPFD semantics, or
 * F_DUPFD_CLOEXEC with cloexec), the lowest free number at or above
 * max(minfd, ring_lo); the plain lowest number if that fails (a limit
 * lowered under ring_lo). */
static int dup_into_range(int fd, int minfd, bool cloexec)
{
	int cmd = cloexec ? F_DUPFD_CLOEXEC : F_DUPFD;
	int nfd;

	if (minfd < uu_shim.ring_lo)
		minfd = uu_shim.ring_lo;
	nfd = pass_fcntl(fd, cmd, minfd);
	if (nfd == -EINVAL || nfd == -EMFILE)
		nfd = pass_fcntl(fd, cmd, 0);
	return nfd;
}

long uu_shim_setup(unsigned int entries, void *params)
{
	struct io_uring_params *p = params;
	struct uu_ring *r;
	int fd, nfd, err;

	fd = uuring_setup(entries, p);
	if (fd < 0)
		return fd;
	/* setup succeeded, so p is valid memory */
	if (p->flags & IORING_SETUP_REGISTERED_FD_ONLY)
		return fd; /* a registered index, not an fd */
	if (uu_in_ring_range(fd))
		goto out;
	r = uu_ring_get(fd, &err);
	if (!r)
		goto out;
	nfd = pass_fcntl(fd, F_DUPFD_CLOEXEC, uu_shim.ring_lo);
	if (nfd < 0 || !uu_in_ring_range(nfd)) {
		/* RLIMIT_NOFILE lowered under the range: keep the low number
		 * (raw close/mmap of it are then not seen; documented) */
		if (nfd >= 0)
			pass_close(nfd);
		uu_ring_put(r);
		goto out;
	}
	uu_registry_note_fd(r, nfd);
	r->app_fd_hint = nfd;
	uu_ring_put(r);
	/* the peer sees HUP only when every reference is gone */
	uuring_close(fd);
	fd = nfd;
out:
	note_max(fd);
	return fd;
}

long uu_shim_close(int fd)
{
	if (uu_shim_is_ring(fd))
		return uuring_close(fd);
	return pass_close(fd);
}

long uu_shim_dup(int fd)
{
	struct uu_ring *r = ring_of(fd);
	int nfd;

	if (!r)
		return pass_dup(fd);
	nfd = dup_into_range(fd, 0, false);
	if (nfd >= 0) {
		uu_registry_note_fd(r, nfd);
		note_max(nfd);
	}
	uu_ring_put(r);
	return nfd;
}

long uu_shim_fcntl_dupfd(int fd, int cmd, int minfd)
{
	struct uu_ring *r = ring_of(fd);
	int nfd;

	if (!r)
		return pass_fcntl(fd, cmd, minfd);
	if (minfd < 0) {
		uu_ring_put(r);
		return -EINVAL;
	}
	nfd = dup_into_range(fd, minfd, cmd == F_DUPFD_CLOEXEC);
	if (nfd >= 0) {
		uu_registry_note_fd(r, nfd);
		note_max(nfd);
	}
	uu_ring_put(r);
	return nfd;
}

long uu_shim_dup3(int oldfd, int newfd, int flags, bool is_dup2)
{
	struct uu_ring *oldr, *newr;
	long ret;

	if (is_dup2 && oldfd == newfd) {
		/* dup2(fd, fd): fd if open, else EBADF */
		ret = pass_fcntl(oldfd, F_GETFD, 0);
		return ret < 0 ? ret : newfd;
	}
	oldr = ring_of(oldfd);
	newr = ring_of(newfd);
	if (is_dup2)
		ret = uu_pass6(__NR_dup2, oldfd, newfd, 0, 0, 0, 0);
	else
		ret = uu_pass6(__NR_dup3, oldfd, newfd, flags, 0, 0, 0);
	if (ret >= 0) {
		if (oldr) {
			uu_registry_note_fd(oldr, newfd);
			note_max(newfd);
		} else if (newr) {
			forget_fd(newfd);
		}
		/* newfd may have been the last fd of its ring */
		if (newr && newr != oldr)
			uu_ring_sweep();
	}
	if (oldr)
		uu_ring_put(oldr);
	if (newr)
		uu_ring_put(newr);
	return ret;
}

long uu_shim_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	if ((flags & MAP_ANONYMOUS) || !uu_shim_is_ring(fd))
		return uu_pass6(__NR_mmap, (long)addr, (long)len, prot, flags,
				fd, (long)off);
	return (long)uuring_mmap(addr, len, prot, flags, fd, off);
}

long uu_shim_close_range(unsigned int first, unsigned int last,
			 unsigned int flags)
{
	unsigned int max = (unsigned int)__atomic_load_n(&uu_shim.max_ring_fd,
							 __ATOMIC_RELAXED);
	bool any = false;
	long ret;

	if (!(flags & CLOSE_RANGE_CLOEXEC) && first <= last) {
		for (unsigned int fd = first; fd <= last && fd <= max; fd++) {
			struct uu_ring *r = uu_ring_get_cached((int)fd);

			if (r) {
				forget_fd((int)fd);
				uu_ring_put(r);
				any = true;
			}
		}
	}
	ret = uu_pass6(__NR_close_range, first, last, flags, 0, 0, 0);
	if (any)
		uu_ring_sweep();
	return ret;
}

long uu_shim_dispatch(long nr, const long a[6], bool *handled)
{
	*handled = true;
	switch (nr) {
	case __NR_io_uring_setup:
		return uu_shim_setup((unsigned int)a[0], (void *)a[1]);
	case __NR_io_uring_enter:
		return uuring_enter((unsigned int)a[0], (unsigned int)a[1],
				    (unsigned int)a[2], (unsigned int)a[3],
				    (const void *)a[4], (size_t)a[5]);
	case __NR_io_uring_register:
		if ((int)a[0] == -1 && (unsigned int)a[1] == UU_SENTINEL_OP &&
		    (unsigned int)a[3] == UU_SENTINEL_NR)
			return UU_SENTINEL_REPLY;
		return uuring_register((unsigned int)a[0], (unsigned int)a[1],
				       (void *)a[2], (unsigned int)a[3]);
	case __NR_close:
		return uu_shim_close((int)a[0]);
	case __NR_dup:
		return uu_shim_dup((int)a[0]);
	case __NR_dup2:
		return uu_shim_dup3((int)a[0], (int)a[1], 0, true);
	case __NR_dup3:
		return uu_shim_dup3((int)a[0], (int)a[1], (int)a[2], false);
	case __NR_fcntl:
		if ((int)a[1] == F_DUPFD || (int)a[1] == F_DUPFD_CLOEXEC)
			return uu_shim_fcntl_dupfd((int)a[0], (int)a[1],
						   (int)a[2]);
		break;
	case __NR_mmap:
		return uu_shim_mmap((void *)a[0], (size_t)a[1], (int)a[2],
				    (int)a[3], (int)a[4], (off_t)a[5]);
	case __NR_close_range:
		return uu_shim_close_range((unsigned int)a[0],
					   (unsigned int)a[1],
					   (unsigned int)a[2]);
	}
	*handled = false;
	return -ENOSYS;
}
