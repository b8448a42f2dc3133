/* SPDX-License-Identifier: MIT */
/*
 * The interception layer (libuuring-preload.so): see docs/architecture.md,
 * "Interception".  Internal to the preload library.
 */
#ifndef UURING_SHIM_H
#define UURING_SHIM_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/types.h>

/* Which io_uring serves the process. */
enum uu_shim_mode {
	UU_MODE_UNSET = 0,
	UU_MODE_KERNEL, /* auto mode found a working kernel io_uring */
	UU_MODE_UURING, /* the engine serves every io_uring call */
};

/* SECCOMP_RET_DATA of our TRAP rules ("uu"): tells our traps from others. */
#define UU_TRAP_TAG 0x7575u

/*
 * A trapped syscall whose first int argument (the fd; args[4] for mmap,
 * args[0] otherwise: fd, entries, signal number) carries this in its high
 * 32 bits is let through by the filter.  The kernel truncates those
 * arguments to 32 bits, so the call is unchanged.  This is how the
 * interception layer issues its own system calls in any process image
 * (the instruction-pointer exemption names the engine stub's address in
 * the image that installed the filter, which exec makes stale), and how
 * the static-exec supervisor (tools/uuring.c) replays the trapped calls of
 * a program that has no handler.
 */
#define UU_PASS_MAGIC 0x55755575u

/*
 * The sentinel: io_uring_register(-1, UU_SENTINEL_OP, NULL, UU_SENTINEL_NR)
 * returns UU_SENTINEL_REPLY only when our trap filter and handler are in
 * place.  Used to never stack a second filter after exec.
 */
#define UU_SENTINEL_OP 0x75757273u
#define UU_SENTINEL_NR 0x5e17u
#define UU_SENTINEL_REPLY 0x75757275L

/*
 * Ring fds are kept at or above UU_RING_FD_BASE_DEFAULT (the "ring
 * range" has no upper end, so it can never be full); the fd table is grown
 * over the first UU_RING_FD_SPAN numbers of it at load.
 */
#define UU_RING_FD_BASE_DEFAULT 3840
#define UU_RING_FD_SPAN 256

struct uu_shim {
	enum uu_shim_mode mode;
	bool trap_on;           /* our seccomp filter is in place */
	bool verbose;
	int ring_lo, ring_hi;   /* ring fds live in [ring_lo, ring_hi);
				 * ring_hi is INT_MAX: no upper end */
	int reserve_fd;         /* top of the pre-grown fd table */
	int max_ring_fd;        /* highest ring fd number handed out */
	pid_t pid;              /* updated at fork; a vfork child differs */
	char preload_path[4096];
	char tool_path[4096];
};

extern struct uu_shim uu_shim;

/* ublkfiles.c: the ublk driver's files are ours in this process
 * (docs/ublk.md, "What servers look for before they start") */
bool uu_shim_ublk_ours(void);
/* the next definition of name (libc's), looked up once into *slot, for
 * the ublk files' interposers (ublkfiles.c, ublksys.c) */
void *uu_shim_real_next(void **slot, const char *name);

/* preload.c */
void uu_shim_init(void);
void uu_shim_msg(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
long uu_shim_errno_ret(long ret); /* -errno -> -1 + errno */

/* Real libc functions (dlsym RTLD_NEXT, resolved at init). */
struct msghdr;
struct mmsghdr;
struct iovec;
struct sockaddr;
struct stat;
struct uu_real {
	long (*syscall)(long, ...);
	int (*close)(int);
	int (*dup)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*fcntl)(int, int, ...);
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	int (*sigprocmask)(int, const sigset_t *, sigset_t *);
	int (*pthread_sigmask)(int, const sigset_t *, sigset_t *);
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
	int (*execveat)(int, const char *, char *const[], char *const[], int);
	int (*posix_spawn)(pid_t *, const char *, const void *, const void *,
			   char *const[], char *const[]);
	int (*posix_spawnp)(pid_t *, const char *, const void *, const void *,
			    char *const[], char *const[]);
	int (*epoll_ctl)(int, int, int, struct epoll_event *);
	int (*epoll_wait)(int, struct epoll_event *, int, int);
	int (*epoll_pwait)(int, struct epoll_event *, int, int,
			   const sigset_t *);
	int (*epoll_pwait2)(int, struct epoll_event *, int,
			    const struct timespec *, const sigset_t *);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *,
		     const sigset_t *);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	int (*sendmmsg)(int, struct mmsghdr *, unsigned int, int);
	/* the wakers' (wakers.c) and the engine's direct calls (direct.c) */
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*writev)(int, const struct iovec *, int);
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*sendto)(int, const void *, size_t, int,
			  const struct sockaddr *, socklen_t);
	int (*shutdown)(int, int);
	int (*eventfd_write)(int, uint64_t);
	int (*open)(const char *, int, ...);
	int (*stat)(const char *, struct stat *);
	int (*close_range)(unsigned int, unsigned int, int);
	void (*(*signal)(int, void (*)(int)))(int);
	int (*access)(const char *, int);
	int (*lstat)(const char *, struct stat *);
	void *(*opendir)(const char *);
	int (*closedir)(void *);
};
extern struct uu_real uu_real;
/* Resolves uu_real (once; uu_shim_init does it before the program runs,
 * an engine call made earlier does it itself). */
void uu_shim_resolve_real(void);
/* pthread_sigmask (thread) or sigprocmask, SIGSYS never blocked while the
 * trap filter is on */
int uu_shim_sigmask(bool thread, int how, const sigset_t *set, sigset_t *old);

/* wakers.c: in-process wakers (exec/poller.h) */
void uu_shim_woke(int fd);
bool uu_shim_close_may_wake(int fd);
void uu_shim_closed_wake(void);
void uu_shim_fd_forget(int fd);

/* ringfd.c: ring-fd aware system calls, shared by the libc interposers
 * and the SIGSYS handler.  All return the raw syscall result (-errno). */
static inline bool uu_in_ring_range(long fd)
{
	return fd >= uu_shim.ring_lo && fd < uu_shim.ring_hi;
}
bool uu_shim_is_ring(int fd);
long uu_shim_setup(unsigned int entries, void *params);
long uu_shim_close(int fd);
long uu_shim_dup(int fd);
long uu_shim_dup3(int oldfd, int newfd, int flags, bool is_dup2);
long uu_shim_fcntl_dupfd(int fd, int cmd, int minfd);
long uu_shim_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off);
long uu_shim_close_range(unsigned int first, unsigned int last,
			 unsigned int flags);
/* Dispatch of a syscall that the interception layer handles; *handled
 * is set to false for anything it leaves alone. */
long uu_shim_dispatch(long nr, const long a[6], bool *handled);

/* patch.c */
void uu_patch_init(void);
void uu_patch_enter_site(uintptr_t call_addr);
unsigned long uuring_shim_patched(void); /* exported, for tests */

/* trap.c */
unsigned long uuring_shim_traps(void); /* exported, for tests/benchmarks */
int uu_trap_install_handler(void);
void uu_trap_restore_handler(void);
bool uu_trap_sentinel(void);
int uu_trap_install_filter(char *why, size_t whylen);
int uu_trap_sigaction(int sig, const struct sigaction *act,
		      struct sigaction *old);
long uu_raw_syscall6(long nr, long a1, long a2, long a3, long a4, long a5,
		     long a6); /* a trappable (non-exempt) raw syscall */
/* nr(a[0..5]) marked with UU_PASS_MAGIC: never trapped by our filter. */
long uu_pass(long nr, const long a[6]);
static inline long uu_pass6(long nr, long a1, long a2, long a3, long a4,
			    long a5, long a6)
{
	const long a[6] = { a1, a2, a3, a4, a5, a6 };

	return uu_pass(nr, a);
}

#endif
