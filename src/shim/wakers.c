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
 * itself (readiness bytes, eventfd signals, kicks); those calls bind to
 * these wrappers too.  They must not wait for the poller (the caller may
 * hold a lock the poller's round needs), so a call whose return address
 * lies in this library's code is passed straight through.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
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

static struct {
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*writev)(int, const struct iovec *, int);
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*sendto)(int, const void *, size_t, int,
			  const struct sockaddr *, socklen_t);
	int (*shutdown)(int, int);
	int (*eventfd_write)(int, eventfd_t);
} next;

/* this library's executable segments: [self_lo, self_hi) */
static uintptr_t self_lo, self_hi;

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t base = (uintptr_t)arg;

	(void)size;
	if (info->dlpi_addr != base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (!self_lo || lo < self_lo)
			self_lo = lo;
		if (lo + ph->p_memsz > self_hi)
			self_hi = lo + ph->p_memsz;
	}
	return 1;
}

/* From uu_shim_init, before the program runs: resolves the next
 * definitions and this library's code range (neither is async-signal-safe
 * to do later, and write() is called from signal handlers). */
void uu_shim_wakers_init(void)
{
	Dl_info info;

	next.write = dlsym(RTLD_NEXT, "write");
	next.writev = dlsym(RTLD_NEXT, "writev");
	next.send = dlsym(RTLD_NEXT, "send");
	next.sendto = dlsym(RTLD_NEXT, "sendto");
	next.shutdown = dlsym(RTLD_NEXT, "shutdown");
	next.eventfd_write = dlsym(RTLD_NEXT, "eventfd_write");
	if (dladdr((void *)uu_shim_wakers_init, &info) && info.dli_fbase)
		dl_iterate_phdr(find_self, info.dli_fbase);
}

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

static inline bool from_engine(const void *caller)
{
	uintptr_t pc = (uintptr_t)caller;

	return pc >= self_lo && pc < self_hi;
}

/* A call of the application's (not of the engine inside this library)
 * on fd that succeeded: let the readiness engine catch up (errno kept).
 * While the engine watches nothing: one relaxed load. */
static inline void woke(int fd, const void *caller)
{
	if (__builtin_expect(!atomic_load_explicit(&uu_inproc_watched,
						   memory_order_relaxed),
			     1) ||
	    from_engine(caller) || class_of(fd) == FD_QUIET)
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
		__atomic_load_n(&next.write, __ATOMIC_RELAXED);
	ssize_t ret;

	if (__builtin_expect(!fn, 0))
		return raw_ret(uu_rawsys6(__NR_write, fd, (long)buf, (long)n, 0,
					  0, 0));
	ret = fn(fd, buf, n);
	if (ret > 0)
		woke(fd, __builtin_return_address(0));
	return ret;
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	ssize_t (*fn)(int, const struct iovec *, int) =
		__atomic_load_n(&next.writev, __ATOMIC_RELAXED);
	ssize_t ret;

	if (__builtin_expect(!fn, 0))
		return raw_ret(uu_rawsys6(__NR_writev, fd, (long)iov, cnt, 0, 0,
					  0));
	ret = fn(fd, iov, cnt);
	if (ret > 0)
		woke(fd, __builtin_return_address(0));
	return ret;
}

EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	ssize_t (*fn)(int, const void *, size_t, int) =
		__atomic_load_n(&next.send, __ATOMIC_RELAXED);
	ssize_t ret;

	if (__builtin_expect(!fn, 0))
		return raw_ret(uu_rawsys6(__NR_sendto, fd, (long)buf, (long)n,
					  flags, 0, 0));
	ret = fn(fd, buf, n, flags);
	if (ret > 0)
		woke(fd, __builtin_return_address(0));
	return ret;
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
		      const struct sockaddr *to, socklen_t tolen)
{
	ssize_t (*fn)(int, const void *, size_t, int, const struct sockaddr *,
		      socklen_t) = __atomic_load_n(&next.sendto,
						   __ATOMIC_RELAXED);
	ssize_t ret;

	if (__builtin_expect(!fn, 0))
		return raw_ret(uu_rawsys6(__NR_sendto, fd, (long)buf, (long)n,
					  flags, (long)to, tolen));
	ret = fn(fd, buf, n, flags, to, tolen);
	if (ret >= 0) /* a zero-length datagram is readiness too */
		woke(fd, __builtin_return_address(0));
	return ret;
}

EXPORT int shutdown(int fd, int how)
{
	int (*fn)(int, int) = __atomic_load_n(&next.shutdown, __ATOMIC_RELAXED);
	int ret;

	if (__builtin_expect(!fn, 0))
		return (int)raw_ret(uu_rawsys6(__NR_shutdown, fd, how, 0, 0, 0,
					       0));
	ret = fn(fd, how);
	if (ret == 0)
		woke(fd, __builtin_return_address(0));
	return ret;
}

/* glibc's eventfd_write writes through an internal call, not write() */
EXPORT int eventfd_write(int fd, eventfd_t value)
{
	int (*fn)(int, eventfd_t) = __atomic_load_n(&next.eventfd_write,
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
		woke(fd, __builtin_return_address(0));
	return ret;
}

/* preload.c's sendmsg and sendmmsg, after a call that succeeded */
void uu_shim_woke(int fd, const void *caller)
{
	woke(fd, caller);
}

/*
 * preload.c's close, before the real close: whether closing fd may wake
 * a watched file (a pipe's or socket's last writer gone: EOF, POLLHUP).
 * The class must be learned while the number still names the file.
 */
bool uu_shim_close_may_wake(int fd, const void *caller)
{
	bool wake = atomic_load_explicit(&uu_inproc_watched,
					 memory_order_relaxed) &&
		    !from_engine(caller) && class_of(fd) != FD_QUIET;

	uu_shim_fd_forget(fd);
	return wake;
}

/* preload.c's close, after the real close succeeded */
void uu_shim_closed_wake(void)
{
	uu_poller_inproc_wake_slow();
}
