// SPDX-License-Identifier: MIT
/*
 * libuuring-preload.so: the engine plus the interception layer, injected
 * by `uuring run` with LD_PRELOAD (docs/architecture.md, "Interception").
 *
 * At load time it decides the mode (UURING_MODE):
 *   auto   (default) the kernel's io_uring if io_uring_setup works, else
 *          uuring;
 *   force  uuring, whatever the kernel says;
 *   kernel (or off) pass everything through (unless the trap filter was
 *          inherited: then uuring, as nothing else can answer the traps).
 * In uuring mode it installs the SIGSYS handler and the trap filter
 * (trap.c) unless the filter is already there (exec under `uuring run`:
 * the sentinel answers), and the libc interposers below serve libc-routed
 * callers (fio, the Rust io-uring crate, libuv) without any trap:
 * syscall(2) for the io_uring calls and for the ring-fd calls, and
 * close/dup/dup2/dup3/fcntl/mmap/close_range on ring fds.  sigaction,
 * sigprocmask and pthread_sigmask keep SIGSYS ours and unblocked.  The
 * epoll and poll waits first make drained rings unreadable (readiness at
 * the wait boundary, as the kernel's poll reports it).
 */
/* Meson defines _FILE_OFFSET_BITS=64, which renames fcntl and mmap to
 * fcntl64 and mmap64 in glibc's headers; we define both names ourselves
 * (on x86-64 they are the same functions). */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "abi/io_uring_abi.h"
#include "uuring.h"
#include "core/registry.h"
#include "core/ring.h"
#include "core/tctx.h"
#include "core/types.h"
#include "exec/poller.h"
#include "util/fault.h"
#include "shim/shim.h"
#include "ublk/ublk.h"
#include "util/cpsys.h"
#include "util/rawsys.h"
#include "util/usercopy.h"

#define EXPORT __attribute__((visibility("default")))

struct uu_shim uu_shim = { .ring_lo = -1, .ring_hi = -1 };
struct uu_real uu_real;

static int init_state; /* 0 not yet, 1 running, 2 done */

void uu_shim_msg(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "uuring: ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(2, buf, (size_t)n) < 0) {
		/* nothing to do */
	}
}

long uu_shim_errno_ret(long ret)
{
	if (ret < 0 && ret >= -4095) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

static void *real(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static pthread_once_t real_once = PTHREAD_ONCE_INIT;

static void resolve_real(void)
{
	uu_real.syscall = real("syscall");
	uu_real.close = real("close");
	uu_real.dup = real("dup");
	uu_real.dup2 = real("dup2");
	uu_real.dup3 = real("dup3");
	uu_real.fcntl = real("fcntl");
	uu_real.mmap = real("mmap");
	uu_real.sigaction = real("sigaction");
	uu_real.sigprocmask = real("sigprocmask");
	uu_real.pthread_sigmask = real("pthread_sigmask");
	uu_real.execve = real("execve");
	uu_real.execvpe = real("execvpe");
	uu_real.fexecve = real("fexecve");
	uu_real.execveat = real("execveat");
	uu_real.posix_spawn = real("posix_spawn");
	uu_real.posix_spawnp = real("posix_spawnp");
	uu_real.epoll_ctl = real("epoll_ctl");
	uu_real.epoll_wait = real("epoll_wait");
	uu_real.epoll_pwait = real("epoll_pwait");
	uu_real.epoll_pwait2 = real("epoll_pwait2");
	uu_real.poll = real("poll");
	uu_real.ppoll = real("ppoll");
	uu_real.sendmsg = real("sendmsg");
	uu_real.sendmmsg = real("sendmmsg");
	/* wakers.c tests these for NULL with relaxed atomic loads */
	__atomic_store_n(&uu_real.writev, real("writev"), __ATOMIC_RELAXED);
	__atomic_store_n(&uu_real.send, real("send"), __ATOMIC_RELAXED);
	__atomic_store_n(&uu_real.sendto, real("sendto"), __ATOMIC_RELAXED);
	__atomic_store_n(&uu_real.shutdown, real("shutdown"), __ATOMIC_RELAXED);
	__atomic_store_n(&uu_real.eventfd_write, real("eventfd_write"),
			 __ATOMIC_RELAXED);
	uu_real.open = real("open64");
	uu_real.stat = real("stat64");
	uu_real.close_range = real("close_range");
	uu_real.signal = real("signal");
	uu_real.access = real("access");
	uu_real.lstat = real("lstat64");
	uu_real.opendir = real("opendir");
	uu_real.closedir = real("closedir");
	/* last, and released: direct.c's acquire load of it tells that
	 * every entry above is there (pairs with libc() in direct.c) */
	__atomic_store_n(&uu_real.write, real("write"), __ATOMIC_RELEASE);
}

void uu_shim_resolve_real(void)
{
	pthread_once(&real_once, resolve_real);
}

/* The ring range: fds >= base, base + span within the soft RLIMIT_NOFILE. */
static void pick_ring_range(void)
{
	const char *v = getenv("UURING_RING_FD_BASE");
	long base = UU_RING_FD_BASE_DEFAULT, span = UU_RING_FD_SPAN;
	struct rlimit rl;

	if (v && *v)
		base = strtol(v, NULL, 0);
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    (long)rl.rlim_cur < base + span) {
		if ((long)rl.rlim_cur >= 2 * span) {
			base = (long)rl.rlim_cur - span;
		} else {
			base = (long)rl.rlim_cur / 2;
			span = (long)rl.rlim_cur - base;
		}
	}
	if (base < 3)
		base = 3;
	uu_shim.ring_lo = (int)base;
	uu_shim.ring_hi = INT_MAX;
	uu_shim.reserve_fd = (int)(base + span - 1);
}

/*
 * Grows the fd table over the ring range now, while the process has one
 * thread: growing it later, from a thread of a multi-threaded process,
 * waits for an RCU grace period (expand_fdtable(): synchronize_rcu(), ~10
 * ms here) at the first ring of every process.  A placeholder (O_PATH of
 * "/", close-on-exec) stays open at ring_lo + UU_RING_FD_SPAN - 1, so that
 * forked children inherit the grown table too.
 */
static void reserve_fd_table(void)
{
	int fd = open("/", O_PATH | O_CLOEXEC), hi;

	if (fd < 0)
		return;
	hi = (int)uu_pass6(__NR_fcntl, fd, F_DUPFD_CLOEXEC, uu_shim.reserve_fd,
			   0, 0, 0);
	uu_real.close(fd);
	(void)hi; /* kept open; -EMFILE/-EINVAL under a lower limit: fine */
}

static void atfork_child(void)
{
	uu_shim.pid = (pid_t)uu_rawsys6(__NR_getpid, 0, 0, 0, 0, 0, 0);
}

/* auto mode: does the kernel's io_uring work here? 0 or -errno */
static long probe_kernel(void)
{
	struct io_uring_params p;
	long fd;

	memset(&p, 0, sizeof(p));
	fd = uu_raw_syscall6(__NR_io_uring_setup, 1, (long)&p, 0, 0, 0, 0);
	if (fd >= 0) {
		uu_real.close((int)fd);
		return 0;
	}
	return fd;
}

static void choose_mode(void)
{
	const char *m = getenv("UURING_MODE");
	char why[160];
	long kret = 0;
	bool force = m && !strcmp(m, "force");

	if (uu_trap_install_handler()) {
		uu_shim_msg("cannot install the SIGSYS handler: raw io_uring "
			    "system calls are not intercepted");
		uu_shim.mode = UU_MODE_UURING;
		return;
	}
	if (uu_trap_sentinel()) {
		/* our filter is inherited (exec under uuring run) */
		uu_shim.mode = UU_MODE_UURING;
		uu_shim.trap_on = true;
		reserve_fd_table();
		uu_patch_init();
		return;
	}
	if (m && (!strcmp(m, "kernel") || !strcmp(m, "off"))) {
		uu_trap_restore_handler();
		uu_shim.mode = UU_MODE_KERNEL;
		return;
	}
	if (!force) {
		kret = probe_kernel();
		if (!kret) {
			uu_trap_restore_handler();
			uu_shim.mode = UU_MODE_KERNEL;
			if (uu_shim.verbose)
				uu_shim_msg("mode auto: the kernel's io_uring "
					    "works, using it");
			return;
		}
	}
	uu_shim.mode = UU_MODE_UURING;
	reserve_fd_table();
	if (uu_trap_install_filter(why, sizeof(why))) {
		uu_trap_restore_handler();
		uu_shim_msg("cannot install the trap filter: %s; only libc "
			    "syscall() callers are served, raw io_uring system "
			    "calls get the kernel's answer", why);
		return;
	}
	uu_shim.trap_on = true;
	uu_patch_init();
	if (uu_shim.verbose)
		uu_shim_msg("mode %s: uuring serves io_uring%s%s%s; ring fds "
			    ">= %d", force ? "force" : "auto",
			    force ? "" : " (the kernel's: ",
			    force ? "" : strerror((int)-kret),
			    force ? "" : ")",
			    uu_shim.ring_lo);
}

void uu_shim_init(void)
{
	static pid_t init_tid;
	pid_t tid = (pid_t)uu_rawsys6(__NR_gettid, 0, 0, 0, 0, 0, 0);
	Dl_info info;
	const char *v;
	int expected = 0;

	if (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2)
		return;
	if (!__atomic_compare_exchange_n(&init_state, &expected, 1, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		/* the initialising thread recursed (uu_real is resolved
		 * first, so it can pass through), or another thread is
		 * initialising: wait for it (the constructor runs before
		 * the program starts threads, so this is rare) */
		if (__atomic_load_n(&init_tid, __ATOMIC_RELAXED) == tid)
			return;
		while (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
		return;
	}
	__atomic_store_n(&init_tid, tid, __ATOMIC_RELAXED);
	uu_shim_resolve_real();
	v = getenv("UURING_VERBOSE");
	uu_shim.verbose = v && *v && strcmp(v, "0");
	if (dladdr((void *)uu_shim_init, &info) && info.dli_fname &&
	    info.dli_fname[0] == '/')
		snprintf(uu_shim.preload_path, sizeof(uu_shim.preload_path),
			 "%s", info.dli_fname);
	v = getenv("UURING_TOOL");
	if (v && *v == '/')
		snprintf(uu_shim.tool_path, sizeof(uu_shim.tool_path), "%s", v);
	pick_ring_range();
	uu_shim.pid = getpid();
	pthread_atfork(NULL, NULL, atfork_child);
	choose_mode();
	__atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
}

__attribute__((constructor(101))) static void shim_ctor(void)
{
	uu_shim_init();
}

static inline bool uuring_mode(void)
{
	if (__builtin_expect(__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != 2, 0))
		uu_shim_init();
	return uu_shim.mode == UU_MODE_UURING;
}

/* An fd the engine may have to see: in the ring range, or a cached ring
 * number (a dup2 target outside the range). */
static inline bool maybe_ring(int fd)
{
	struct uu_ring *r;

	if (uu_in_ring_range(fd))
		return true;
	r = uu_ring_get_cached(fd);
	if (!r)
		return false;
	uu_ring_put(r);
	return true;
}

/* ---- syscall(2) ------------------------------------------------------ */

EXPORT long syscall(long nr, ...)
{
	va_list ap;
	long a[6], ret;
	bool handled;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (uuring_mode()) {
		switch (nr) {
		case __NR_io_uring_setup:
		case __NR_io_uring_enter:
		case __NR_io_uring_register:
		case __NR_close:
		case __NR_dup:
		case __NR_dup2:
		case __NR_dup3:
		case __NR_fcntl:
		case __NR_mmap:
		case __NR_close_range:
			ret = uu_shim_dispatch(nr, a, &handled);
			if (handled)
				return uu_shim_errno_ret(ret);
			break;
		}
	}
	return uu_real.syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* ---- ring-fd calls --------------------------------------------------- */

EXPORT int close(int fd)
{
	bool wake;
	int ret;

	if (uuring_mode() && maybe_ring(fd))
		return (int)uu_shim_errno_ret(uu_shim_close(fd));
	/* the last close of a pipe's or socket's end wakes its peer's
	 * pollers (EOF, POLLHUP): wakers.c */
	wake = uu_shim_close_may_wake(fd);
	ret = uu_real.close(fd);
	if (ret == 0 && wake)
		uu_shim_closed_wake();
	return ret;
}

EXPORT int __close(int fd)
{
	return close(fd);
}

EXPORT int dup(int fd)
{
	if (uuring_mode() && maybe_ring(fd))
		return (int)uu_shim_errno_ret(uu_shim_dup(fd));
	return uu_real.dup(fd);
}

EXPORT int dup2(int oldfd, int newfd)
{
	uu_shim_fd_forget(newfd);
	if (uuring_mode() && (maybe_ring(oldfd) || maybe_ring(newfd)))
		return (int)uu_shim_errno_ret(
			uu_shim_dup3(oldfd, newfd, 0, true));
	return uu_real.dup2(oldfd, newfd);
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
	uu_shim_fd_forget(newfd);
	if (uuring_mode() && (maybe_ring(oldfd) || maybe_ring(newfd)))
		return (int)uu_shim_errno_ret(
			uu_shim_dup3(oldfd, newfd, flags, false));
	return uu_real.dup3(oldfd, newfd, flags);
}

static int fcntl_common(int fd, int cmd, void *arg)
{
	if (uuring_mode() && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) &&
	    maybe_ring(fd))
		return (int)uu_shim_errno_ret(
			uu_shim_fcntl_dupfd(fd, cmd, (int)(intptr_t)arg));
	return uu_real.fcntl(fd, cmd, arg);
}

EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(fd, cmd, arg);
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(fd, cmd, arg);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	long ret = 0;

	if (uuring_mode() && !(flags & MAP_ANONYMOUS)) {
		if (maybe_ring(fd))
			ret = uu_shim_mmap(addr, len, prot, flags, fd, off);
		else /* a ublk char device's descriptors (shim/ublkfiles.c) */
			ret = (long)uu_ublk_try_mmap(addr, len, prot, flags,
						     fd, off);
	}
	if (!ret)
		return uu_real.mmap(addr, len, prot, flags, fd, off);
	if (ret < 0 && ret >= -4095) {
		errno = (int)-ret;
		return MAP_FAILED;
	}
	return (void *)ret;
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	if (uuring_mode())
		return (int)uu_shim_errno_ret(
			uu_shim_close_range(first, last, (unsigned int)flags));
	return (int)uu_real.syscall(__NR_close_range, first, last, flags);
}

EXPORT void closefrom(int lowfd)
{
	if (uuring_mode() && lowfd >= 0) {
		uu_shim_close_range((unsigned int)lowfd, ~0u, 0);
		return;
	}
	uu_real.syscall(__NR_close_range, lowfd, ~0u, 0);
}

/* ---- SIGSYS stays ours ---------------------------------------------- */

EXPORT int sigaction(int sig, const struct sigaction *act,
		     struct sigaction *old)
{
	struct sigaction copy;

	if (uuring_mode() && sig == uu_cp_signal_number()) {
		/*
		 * The engine's private signal (UURING_CANCEL_SIGNAL, T7):
		 * taking it over would leave cancelled io-wq work blocked.
		 * The program's action is remembered and reported back, not
		 * installed (docs/compatibility.md).
		 */
		static struct sigaction app_cp;
		static bool told;
		struct sigaction prev = app_cp;

		if (act && act->sa_handler != SIG_DFL && !told &&
		    uu_shim.verbose) {
			told = true;
			uu_shim_msg("the program installs a handler for signal "
				    "%d, which uuring uses to interrupt "
				    "cancelled io-wq work: it is not installed "
				    "(choose another with UURING_CANCEL_SIGNAL)",
				    sig);
		}
		if (act)
			app_cp = *act;
		if (old)
			*old = prev;
		return 0;
	}
	if (!uu_shim.trap_on)
		return uu_real.sigaction(sig, act, old);
	if (sig == SIGSYS) {
		static bool told;

		if (act && act->sa_handler != SIG_DFL && !told &&
		    uu_shim.verbose) {
			told = true;
			uu_shim_msg("the program installs its own SIGSYS "
				    "handler: uuring keeps its own and passes "
				    "it every SIGSYS that is not uuring's");
		}
		return uu_trap_sigaction(sig, act, old);
	}
	if (act && sigismember(&act->sa_mask, SIGSYS)) {
		/* a handler that blocks SIGSYS would be killed by a trap */
		copy = *act;
		sigdelset(&copy.sa_mask, SIGSYS);
		act = &copy;
	}
	return uu_real.sigaction(sig, act, old);
}

EXPORT int __sigaction(int sig, const struct sigaction *act,
		       struct sigaction *old)
{
	return sigaction(sig, act, old);
}

/* glibc's signal() family reaches rt_sigaction without the PLT */
static sighandler_t set_handler(int sig, sighandler_t h, int flags)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = flags;
	sigaddset(&sa.sa_mask, sig);
	if (sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART);
}

EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART);
}

EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = SA_NODEFER | SA_RESETHAND;
	if (sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

static const sigset_t *strip_sigsys(int how, const sigset_t *set,
				    sigset_t *copy)
{
	if (!uu_shim.trap_on || !set || how == SIG_UNBLOCK ||
	    !sigismember(set, SIGSYS))
		return set;
	*copy = *set;
	sigdelset(copy, SIGSYS);
	return copy;
}

/*
 * Every thread keeps SIGSYS deliverable while the trap filter is on (a
 * trap with SIGSYS blocked kills the process): the program's threads
 * through these interposers, the engine's through direct.c.
 */
int uu_shim_sigmask(bool thread, int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	uuring_mode();
	set = strip_sigsys(how, set, &copy);
	return thread ? uu_real.pthread_sigmask(how, set, old) :
			uu_real.sigprocmask(how, set, old);
}

EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	return uu_shim_sigmask(false, how, set, old);
}

EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return uu_shim_sigmask(true, how, set, old);
}

/* ---- waits: ring readiness as of the wait ----------------------------- */

/*
 * A ring fd stays readable until its CQ is seen empty (architecture.md,
 * "Readiness approximation").  A program that reaps the CQ in shared
 * memory and waits again without entering (libuv's SQPOLL ring in an
 * epoll set) would find it readable forever and spin: before the wait,
 * rings whose CQ is empty are made unreadable.  The epoll set's members
 * are unknown here, so every live ring of the process is checked (a short
 * list, and only rings still signalled cost a system call).  The engine's
 * own threads (poller, timer) have no rings in their sets.
 */
static inline void sync_all(void)
{
	if (uuring_mode() && !uu_tctx.engine_thread)
		uu_registry_sync_readiness();
}

static void sync_pollfds(const struct pollfd *fds, nfds_t n)
{
	if (!uuring_mode() || uu_tctx.engine_thread)
		return;
	for (nfds_t i = 0; i < n; i++)
		if (fds[i].fd >= 0 && (fds[i].events & POLLIN) &&
		    maybe_ring(fds[i].fd))
			uu_ring_sync_readiness_fd(fds[i].fd);
}

/*
 * A ring fd added to an epoll set edge-triggered: the kernel gives such a
 * watcher an edge per CQ commit (it wakes the ring's poll waiters on
 * every post), which uuring then does too (core/ring.c edge_again).
 */
EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	if (uuring_mode() && ev && (ev->events & EPOLLET) &&
	    (op == EPOLL_CTL_ADD || op == EPOLL_CTL_MOD) && maybe_ring(fd))
		uu_ring_watch_edges_fd(fd);
	return uu_real.epoll_ctl(epfd, op, fd, ev);
}

EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int n, int timeout)
{
	sync_all();
	return uu_real.epoll_wait(epfd, ev, n, timeout);
}

EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int n, int timeout,
		       const sigset_t *mask)
{
	sync_all();
	return uu_real.epoll_pwait(epfd, ev, n, timeout, mask);
}

EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int n,
			const struct timespec *timeout, const sigset_t *mask)
{
	sync_all();
	if (!uu_real.epoll_pwait2) /* a libc older than 2.35 */
		return (int)uu_real.syscall(__NR_epoll_pwait2, epfd, ev, n,
					    timeout, mask, _NSIG / 8);
	return uu_real.epoll_pwait2(epfd, ev, n, timeout, mask);
}

EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	sync_pollfds(fds, n);
	return uu_real.poll(fds, n, timeout);
}

EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
		 const sigset_t *mask)
{
	sync_pollfds(fds, n);
	return uu_real.ppoll(fds, n, timeout, mask);
}

/* ---- SCM_RIGHTS ------------------------------------------------------ */

/*
 * Linux 6.18 refuses to pass an io_uring fd in SCM_RIGHTS (scm_fp_copy:
 * -EINVAL), so no ring can end up referenced only from a message in
 * flight (liburing's ring-leak).  A uuring ring fd is an AF_UNIX socket,
 * which the kernel would pass: the interposed sendmsg/sendmmsg refuse it
 * the same way.  The message is read with the fault-safe copy; a bad
 * pointer is left for the real call to report (EFAULT).
 */
static bool control_passes_ring(const struct msghdr *umsg)
{
	unsigned char control[4096];
	struct msghdr m;
	struct cmsghdr *c;

	if (uu_copy_from_user(&m, umsg, sizeof(m)) || !m.msg_control ||
	    m.msg_controllen < sizeof(struct cmsghdr))
		return false;
	if (m.msg_controllen > sizeof(control))
		m.msg_controllen = sizeof(control); /* 253 fds fit (SCM_MAX_FD) */
	if (uu_copy_from_user(control, m.msg_control, m.msg_controllen))
		return false;
	m.msg_control = control;
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (maybe_ring(fd) && uu_shim_is_ring(fd))
				return true;
		}
	}
	return false;
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	ssize_t ret;

	if (uuring_mode() && msg && control_passes_ring(msg)) {
		errno = EINVAL;
		return -1;
	}
	ret = uu_real.sendmsg(fd, msg, flags);
	if (ret >= 0)
		uu_shim_woke(fd);
	return ret;
}

/* as the kernel's sendmmsg: the messages before the refused one are
 * sent and counted; a refused first message is the call's error */
EXPORT int sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)
{
	unsigned int i;
	int ret;

	if (uuring_mode() && vec) {
		for (i = 0; i < vlen; i++)
			if (control_passes_ring(&vec[i].msg_hdr))
				break;
		if (i == 0 && vlen) {
			errno = EINVAL;
			return -1;
		}
		vlen = i;
	}
	ret = uu_real.sendmmsg(fd, vec, vlen, flags);
	if (ret > 0)
		uu_shim_woke(fd);
	return ret;
}
