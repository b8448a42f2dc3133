// SPDX-License-Identifier: MIT
/*
 * The engine's own calls of the libc functions this library interposes.
 *
 * libuuring-preload.so exports write, close, mmap, syscall, ... for the
 * program (preload.c, wakers.c).  The engine is linked into the same
 * library, and an engine call of write() would bind to that export: it
 * would run the program's interposer (a readiness wake, ring-fd routing)
 * for the engine's own eventfd signal.  So the library is linked with
 * `--wrap=NAME` for each name below (tools/meson.build, engine_direct):
 * every call of NAME made inside the library binds to __wrap_NAME here,
 * which calls libc's NAME (uu_real, resolved once); the signal masks
 * only keep SIGSYS deliverable, as in every thread while the trap filter
 * is on (uu_shim_sigmask).  The interposers are
 * definitions, which --wrap leaves alone, so the program still reaches
 * them.  tests/check_engine_calls.sh checks that the linked library has
 * no call of an interposed name left.
 *
 * A name the engine starts to call must be added here and to the list in
 * tools/meson.build; the check names it otherwise.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <poll.h>

#include "shim/shim.h"

/* uu_real, resolved: uu_shim_init resolves it before the program runs;
 * an engine call made before (the API called from another library's
 * constructor) resolves it here.  The acquire load pairs with the release
 * store of uu_real.write, the last entry resolve_real (preload.c) sets. */
static inline const struct uu_real *libc(void)
{
	if (__builtin_expect(!__atomic_load_n(&uu_real.write, __ATOMIC_ACQUIRE),
			     0))
		uu_shim_resolve_real();
	return &uu_real;
}

#define WRAP(ret, name, params) \
	ret __wrap_##name params; \
	ret __wrap_##name params

WRAP(ssize_t, write, (int fd, const void *buf, size_t n))
{
	return libc()->write(fd, buf, n);
}

WRAP(ssize_t, writev, (int fd, const struct iovec *iov, int cnt))
{
	return libc()->writev(fd, iov, cnt);
}

WRAP(ssize_t, send, (int fd, const void *buf, size_t n, int flags))
{
	return libc()->send(fd, buf, n, flags);
}

WRAP(ssize_t, sendto, (int fd, const void *buf, size_t n, int flags,
		       const struct sockaddr *to, socklen_t tolen))
{
	return libc()->sendto(fd, buf, n, flags, to, tolen);
}

WRAP(ssize_t, sendmsg, (int fd, const struct msghdr *msg, int flags))
{
	return libc()->sendmsg(fd, msg, flags);
}

WRAP(int, shutdown, (int fd, int how))
{
	return libc()->shutdown(fd, how);
}

WRAP(int, close, (int fd))
{
	return libc()->close(fd);
}

WRAP(int, close_range, (unsigned int first, unsigned int last, int flags))
{
	return libc()->close_range(first, last, flags);
}

WRAP(int, dup2, (int oldfd, int newfd))
{
	return libc()->dup2(oldfd, newfd);
}

WRAP(int, dup3, (int oldfd, int newfd, int flags))
{
	return libc()->dup3(oldfd, newfd, flags);
}

WRAP(int, fcntl64, (int fd, int cmd, ...))
{
	va_list ap;
	void *arg;

	/* every fcntl argument is an int, a pointer or absent: passed on
	 * as one word, as glibc's fcntl reads it */
	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return libc()->fcntl(fd, cmd, arg);
}

WRAP(int, open64, (const char *path, int flags, ...))
{
	va_list ap;
	int mode;

	va_start(ap, flags);
	mode = va_arg(ap, int);
	va_end(ap);
	return libc()->open(path, flags, mode);
}

WRAP(int, stat64, (const char *path, struct stat *st))
{
	return libc()->stat(path, st);
}

WRAP(int, access, (const char *path, int mode))
{
	return libc()->access(path, mode);
}

WRAP(int, lstat64, (const char *path, struct stat *st))
{
	return libc()->lstat(path, st);
}

WRAP(void *, opendir, (const char *path))
{
	return libc()->opendir(path);
}

WRAP(int, closedir, (void *dir))
{
	return libc()->closedir(dir);
}

WRAP(void *, mmap64, (void *addr, size_t len, int prot, int flags, int fd,
		      off_t off))
{
	return libc()->mmap(addr, len, prot, flags, fd, off);
}

WRAP(long, syscall, (long nr, ...))
{
	va_list ap;
	long a[6];

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	return libc()->syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* libc's positioned reads and writes (the program's are ublkrw.c's);
 * looked up by name, as uu_real holds none of them */
static void *real_pread64, *real_pwrite64, *real_preadv64, *real_pwritev64,
	*real_preadv64v2, *real_pwritev64v2;

WRAP(ssize_t, pread64, (int fd, void *buf, size_t n, off_t pos))
{
	return ((ssize_t(*)(int, void *, size_t, off_t))uu_shim_real_next(
		&real_pread64, "pread64"))(fd, buf, n, pos);
}

WRAP(ssize_t, pwrite64, (int fd, const void *buf, size_t n, off_t pos))
{
	return ((ssize_t(*)(int, const void *, size_t, off_t))uu_shim_real_next(
		&real_pwrite64, "pwrite64"))(fd, buf, n, pos);
}

WRAP(ssize_t, preadv64, (int fd, const struct iovec *iov, int cnt, off_t pos))
{
	return ((ssize_t(*)(int, const struct iovec *, int, off_t))
			uu_shim_real_next(&real_preadv64, "preadv64"))(
		fd, iov, cnt, pos);
}

WRAP(ssize_t, pwritev64, (int fd, const struct iovec *iov, int cnt, off_t pos))
{
	return ((ssize_t(*)(int, const struct iovec *, int, off_t))
			uu_shim_real_next(&real_pwritev64, "pwritev64"))(
		fd, iov, cnt, pos);
}

WRAP(ssize_t, preadv64v2, (int fd, const struct iovec *iov, int cnt,
			   off_t pos, int flags))
{
	return ((ssize_t(*)(int, const struct iovec *, int, off_t, int))
			uu_shim_real_next(&real_preadv64v2, "preadv64v2"))(
		fd, iov, cnt, pos, flags);
}

WRAP(ssize_t, pwritev64v2, (int fd, const struct iovec *iov, int cnt,
			    off_t pos, int flags))
{
	return ((ssize_t(*)(int, const struct iovec *, int, off_t, int))
			uu_shim_real_next(&real_pwritev64v2, "pwritev64v2"))(
		fd, iov, cnt, pos, flags);
}

WRAP(int, epoll_ctl, (int epfd, int op, int fd, struct epoll_event *ev))
{
	return libc()->epoll_ctl(epfd, op, fd, ev);
}

WRAP(int, epoll_wait, (int epfd, struct epoll_event *ev, int n, int timeout))
{
	return libc()->epoll_wait(epfd, ev, n, timeout);
}

WRAP(int, poll, (struct pollfd *fds, nfds_t n, int timeout))
{
	return libc()->poll(fds, n, timeout);
}

WRAP(int, ppoll, (struct pollfd *fds, nfds_t n, const struct timespec *ts,
		  const sigset_t *mask))
{
	return libc()->ppoll(fds, n, ts, mask);
}

/* The engine's threads block every async signal; SIGSYS stays
 * deliverable as in every thread (uu_shim_sigmask). */
WRAP(int, pthread_sigmask, (int how, const sigset_t *set, sigset_t *old))
{
	libc();
	return uu_shim_sigmask(true, how, set, old);
}

WRAP(int, sigprocmask, (int how, const sigset_t *set, sigset_t *old))
{
	libc();
	return uu_shim_sigmask(false, how, set, old);
}

WRAP(sighandler_t, signal, (int sig, sighandler_t handler))
{
	return libc()->signal(sig, handler);
}
