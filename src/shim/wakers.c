// SPDX-License-Identifier: MIT
/*
 * In-process wakers (exec/poller.h): the calls by which a program wakes
 * a file it also polls through io_uring — write, writev, send, sendto,
 * shutdown, eventfd_write here; sendmsg, sendmmsg and close in
 * preload.c — return only once the readiness engine has seen what the
 * call made ready, as the kernel runs a poll's wakeup inside the waker's
 * system call.  While the engine watches no file a writer of this process
 * could wake, a wrapped call costs one relaxed load beyond the call; while
 * it does, a call on an fd that cannot wake anything (a regular file,
 * /dev/null, a socket to another host) costs one more byte test.
 *
 * The engine is linked into this library and calls write() and send()
 * itself (readiness bytes, eventfd signals, kicks); those calls never
 * reach these wrappers (direct.c: the library is linked with --wrap), so
 * they never wait for the poller, whose round may need a lock the engine
 * caller holds.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "exec/poller.h"
#include "shim/shim.h"
#include "util/fdutil.h"
#include "util/rawsys.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * What a write to an fd number can wake, learned at its first wrapped
 * call while the engine watches something (uu_fd_may_wake_inproc,
 * util/fdutil.h): FD_QUIET for files no poll of this process can be
 * waiting on, FD_MAY_WAKE for the rest.  Forgotten
 * when the number is closed or a dup2 target (preload.c); a number the
 * program closed with a raw system call keeps its old class until then
 * (a quiet class is then a missed wakeup, the behaviour without this
 * library; a waking one only a needless look).  Numbers beyond the map
 * count as waking.
 */
#define FD_MAP 65536
enum { FD_UNKNOWN, FD_QUIET, FD_MAY_WAKE };
static _Atomic unsigned char fd_class[FD_MAP];

/* the class of fd, learned now if unknown (the call's errno is kept by
 * the caller) */
static unsigned char class_of(int fd)
{
	unsigned char c;

	if (fd < 0 || fd >= FD_MAP)
		return FD_MAY_WAKE;
	c = atomic_load_explicit(&fd_class[fd], memory_order_relaxed);
	if (c == FD_UNKNOWN) {
		int saved = errno;

		c = uu_fd_may_wake_inproc(fd) ? FD_MAY_WAKE : FD_QUIET;
		errno = saved;
		atomic_store_explicit(&fd_class[fd], c, memory_order_relaxed);
	}
	return c;
}

void uu_shim_fd_forget(int fd)
{
	if (fd >= 0 && fd < FD_MAP)
		atomic_store_explicit(&fd_class[fd], FD_UNKNOWN,
				      memory_order_relaxed);
}

/* A call of the application's (not of the engine inside this library)
 * on fd that succeeded: let the readiness engine catch up (errno kept).
 * While the engine watches nothing: one relaxed load. */
static inline void woke(int fd)
{
	if (__builtin_expect(!atomic_load_explicit(&uu_inproc_watched,
						   memory_order_relaxed),
			     1) ||
	    class_of(fd) == FD_QUIET)
		return;
	uu_poller_inproc_wake_slow();
}

static inline long raw_ret(long r)
{
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* Before uu_shim_init resolved the next definitions (another library's
 * constructor, or the init itself, writing): the system call itself. */
EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	ssize_t (*fn)(int, const void *, size_t) =
		__atomic_load_n(&uu_real.write, __ATOMIC_RELAXED);
	ssize_t ret;

	if (__builtin_expect(!fn, 0))
		return raw_ret(uu_rawsys6(__NR_write, fd, (long)buf, (long)n, 0,
					  0, 0));
	ret = fn(fd, buf, n);
	if (ret > 0)
		woke(fd);
	return ret;
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	ssize_t (*fn)(int, const struct iovec *, int) =
		__atomic_load_n(&uu_real.writev, __ATOMIC_RELAXED);
	ssize_t ret;

	if (__builtin_expect(!fn, 0))
		return raw_ret(uu_rawsys6(__NR_writev, fd, (long)iov, cnt, 0, 0,
					  0));
	ret = fn(fd, iov, cnt);
	if (ret > 0)
		woke(fd);
	return ret;
}

EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	ssize_t (*fn)(int, const void *, size_t, int) =
		__atomic_load_n(&uu_real.send, __ATOMIC_RELAXED);
	ssize_t ret;

	if (__builtin_expect(!fn, 0))
		return raw_ret(uu_rawsys6(__NR_sendto, fd, (long)buf, (long)n,
					  flags, 0, 0));
	ret = fn(fd, buf, n, flags);
	if (ret > 0)
		woke(fd);
	return ret;
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
		      const struct sockaddr *to, socklen_t tolen)
{
	ssize_t (*fn)(int, const void *, size_t, int, const struct sockaddr *,
		      socklen_t) = __atomic_load_n(&uu_real.sendto,
						   __ATOMIC_RELAXED);
	ssize_t ret;

	if (__builtin_expect(!fn, 0))
		return raw_ret(uu_rawsys6(__NR_sendto, fd, (long)buf, (long)n,
					  flags, (long)to, tolen));
	ret = fn(fd, buf, n, flags, to, tolen);
	if (ret >= 0) /* a zero-length datagram is readiness too */
		woke(fd);
	return ret;
}

EXPORT int shutdown(int fd, int how)
{
	int (*fn)(int, int) = __atomic_load_n(&uu_real.shutdown, __ATOMIC_RELAXED);
	int ret;

	if (__builtin_expect(!fn, 0))
		return (int)raw_ret(uu_rawsys6(__NR_shutdown, fd, how, 0, 0, 0,
					       0));
	ret = fn(fd, how);
	if (ret == 0)
		woke(fd);
	return ret;
}

/* glibc's eventfd_write writes through an internal call, not write() */
EXPORT int eventfd_write(int fd, eventfd_t value)
{
	int (*fn)(int, eventfd_t) = __atomic_load_n(&uu_real.eventfd_write,
						    __ATOMIC_RELAXED);
	int ret;

	if (__builtin_expect(!fn, 0))
		return raw_ret(uu_rawsys6(__NR_write, fd, (long)&value,
					  sizeof(value), 0, 0, 0)) ==
				       sizeof(value) ?
			       0 :
			       -1;
	ret = fn(fd, value);
	if (ret == 0)
		woke(fd);
	return ret;
}

/* preload.c's sendmsg and sendmmsg, after a call that succeeded */
void uu_shim_woke(int fd)
{
	woke(fd);
}

/*
 * preload.c's close, before the real close: whether closing fd may wake
 * a watched file (a pipe's or socket's last writer gone: EOF, POLLHUP).
 * The class must be learned while the number still names the file.
 */
bool uu_shim_close_may_wake(int fd)
{
	bool wake = atomic_load_explicit(&uu_inproc_watched,
					 memory_order_relaxed) &&
		    class_of(fd) != FD_QUIET;

	uu_shim_fd_forget(fd);
	return wake;
}

/* preload.c's close, after the real close succeeded */
void uu_shim_closed_wake(void)
{
	uu_poller_inproc_wake_slow();
}
