// SPDX-License-Identifier: MIT
/*
 * The raw-instruction path: a seccomp SECCOMP_RET_TRAP filter and the
 * SIGSYS handler that serves the trapped calls (docs/architecture.md,
 * "Interception").
 *
 * The filter (classic BPF, written by hand because libseccomp cannot
 * compare the instruction pointer) traps, for x86-64 system calls:
 *   io_uring_setup/enter/register                  always;
 *   close, dup, fcntl(F_DUPFD, F_DUPFD_CLOEXEC)    fd (args[0]) in the ring range;
 *   dup2, dup3                                     old or new fd in the ring range;
 *   mmap                                           fd (args[4]) in the ring range;
 * (close_range and rt_sigaction(SIGSYS) are deliberately not trapped: glibc
 * issues them in posix_spawn's child with every signal blocked, where a
 * trap would kill; the libc interposers cover them instead)
 * except when the instruction pointer lies in the engine's exempt stub
 * (uu_exempt_text, util/rawsys.c) of the image that installed the filter,
 * or the first int argument's high 32 bits hold UU_PASS_MAGIC (our own
 * calls, and replays by the static-exec supervisor; see shim.h).  Everything else
 * is allowed, so the filter costs every other system call a few BPF
 * instructions.  It is installed with TSYNC: threads started before are
 * covered too.  TRAP outranks ERRNO, so it wins over a Docker-like filter
 * that makes io_uring fail with EPERM; it loses to KILL (tools/uuring
 * refuses to start then).
 *
 * The handler runs in signal context (T10): it saves and restores errno,
 * uses no stdio, dlsym or malloc of its own, and reaches the engine only
 * through ringfd.c.  What the engine itself does on those paths is listed
 * in docs/architecture.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "shim/shim.h"
#include "util/rawsys.h"
#include "util/usercopy.h"

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif
#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif
#ifndef F_DUPFD_CLOEXEC
#define F_DUPFD_CLOEXEC 1030
#endif

/* The kernel's struct sigaction on x86-64. */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

/* SIGSYS as the application believes it set it (we keep the real one). */
static struct ksigaction app_sigsys;

/* The action found at install time, restored if we step back. */
static struct ksigaction prev_sigsys;
static bool handler_installed;

/* rt_sigreturn trampoline; the exact bytes debuggers and unwinders
 * recognise as a signal frame (mov $15, %rax; syscall). */
void uu_restore_rt(void);
__asm__(".text\n"
	".globl uu_restore_rt\n"
	".hidden uu_restore_rt\n"
	".type uu_restore_rt,@function\n"
	"uu_restore_rt:\n"
	"	movq $15, %rax\n"
	"	syscall\n"
	".size uu_restore_rt, .-uu_restore_rt\n");

long uu_raw_syscall6(long nr, long a1, long a2, long a3, long a4, long a5,
		     long a6)
{
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10),
			   "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

long uu_pass(long nr, const long a[6])
{
	long b[6] = { a[0], a[1], a[2], a[3], a[4], a[5] };
	int i = nr == __NR_mmap ? 4 : 0;

	b[i] = (long)(((unsigned long)b[i] & 0xffffffffu) |
		      ((unsigned long)UU_PASS_MAGIC << 32));
	return uu_raw_syscall6(nr, b[0], b[1], b[2], b[3], b[4], b[5]);
}

static long sys_getpid(void)
{
	return uu_rawsys6(__NR_getpid, 0, 0, 0, 0, 0, 0);
}

/* Dies of SIGSYS, as the kernel would have killed us without a handler. */
static void die_of_sigsys(void)
{
	struct ksigaction dfl = { .handler = SIG_DFL };
	uint64_t set = 1ull << (SIGSYS - 1);

	uu_pass6(__NR_rt_sigaction, SIGSYS, (long)&dfl, 0, 8, 0, 0);
	uu_rawsys6(__NR_rt_sigprocmask, SIG_UNBLOCK, (long)&set, 0, 8, 0, 0);
	uu_rawsys6(__NR_tgkill, sys_getpid(),
		   uu_rawsys6(__NR_gettid, 0, 0, 0, 0, 0, 0), SIGSYS, 0, 0, 0);
	uu_rawsys6(__NR_exit_group, 128 + SIGSYS, 0, 0, 0, 0, 0);
}

/* A SIGSYS that is not ours: give it to the application's handler. */
static void chain(int sig, siginfo_t *si, void *ctx)
{
	struct ksigaction a = app_sigsys;

	if (a.handler == SIG_IGN && si->si_code != SYS_SECCOMP)
		return;
	if (a.handler == SIG_DFL || a.handler == SIG_IGN) {
		die_of_sigsys();
		return;
	}
	if (a.flags & SA_SIGINFO)
		((void (*)(int, siginfo_t *, void *))a.handler)(sig, si, ctx);
	else
		((void (*)(int))a.handler)(sig);
}

/* Traps served, for tests and benchmarks: uuring_shim_traps(). */
static unsigned long trap_count;

__attribute__((visibility("default"))) unsigned long uuring_shim_traps(void)
{
	return __atomic_load_n(&trap_count, __ATOMIC_RELAXED);
}

static void sigsys_handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *g = uc->uc_mcontext.gregs;
	int saved_errno = errno;
	long a[6], nr, ret;
	bool handled;

	if (si->si_code != SYS_SECCOMP || si->si_errno != (int)UU_TRAP_TAG) {
		chain(sig, si, ctx);
		errno = saved_errno;
		return;
	}
	__atomic_fetch_add(&trap_count, 1, __ATOMIC_RELAXED);
	nr = si->si_syscall;
	a[0] = g[REG_RDI];
	a[1] = g[REG_RSI];
	a[2] = g[REG_RDX];
	a[3] = g[REG_R10];
	a[4] = g[REG_R8];
	a[5] = g[REG_R9];

	if ((uintptr_t)si->si_call_addr > (uintptr_t)__start_uu_exempt_text &&
	    (uintptr_t)si->si_call_addr <= (uintptr_t)__stop_uu_exempt_text) {
		/* the engine's own stub, in an image exec'd after the filter
		 * was installed (whose exempt range names the old image) */
		ret = uu_pass(nr, a);
	} else if (sys_getpid() != uu_shim.pid) {
		/* a vfork/posix_spawn child sharing our memory, or a raw
		 * clone that skipped pthread_atfork: leave the engine alone */
		ret = uu_pass(nr, a);
	} else {
		ret = uu_shim_dispatch(nr, a, &handled);
		if (!handled)
			ret = uu_pass(nr, a);
		if (nr == __NR_io_uring_enter)
			uu_patch_enter_site((uintptr_t)si->si_call_addr);
	}
	g[REG_RAX] = ret;
	errno = saved_errno;
}

int uu_trap_install_handler(void)
{
	struct ksigaction act = {
		.handler = (void *)sigsys_handler,
		/* SA_NODEFER: a signal handler of the application that runs
		 * nested in ours (while enter waits) may trap again */
		.flags = SA_SIGINFO | SA_NODEFER | SA_RESTORER,
		.restorer = (void *)uu_restore_rt,
		.mask = 0,
	};
	uint64_t set = 1ull << (SIGSYS - 1);
	long ret;

	ret = uu_pass6(__NR_rt_sigaction, SIGSYS, (long)&act,
		       (long)&prev_sigsys, 8, 0, 0);
	if (ret < 0)
		return (int)ret;
	/* What the application sees: SIG_DFL, or SIG_IGN inherited over
	 * exec.  A handler cannot survive exec, so nothing else. */
	if (prev_sigsys.handler == SIG_IGN)
		app_sigsys.handler = SIG_IGN;
	handler_installed = true;
	/* a blocked SIGSYS turns every trap into a kill */
	uu_rawsys6(__NR_rt_sigprocmask, SIG_UNBLOCK, (long)&set, 0, 8, 0, 0);
	return 0;
}

void uu_trap_restore_handler(void)
{
	if (!handler_installed)
		return;
	uu_pass6(__NR_rt_sigaction, SIGSYS, (long)&prev_sigsys, 0, 8, 0, 0);
	handler_installed = false;
}

bool uu_trap_sentinel(void)
{
	return uu_raw_syscall6(__NR_io_uring_register, -1, UU_SENTINEL_OP, 0,
			       UU_SENTINEL_NR, 0, 0) == UU_SENTINEL_REPLY;
}

/* ---- the filter ---------------------------------------------------- */

#define MAXI 128
#define MAXL 16

struct bpf_b {
	struct sock_filter f[MAXI];
	int n;
	int lab[MAXL];
	int nlab;
	struct {
		int at, jt, jf;
	} fix[MAXI];
	int nfix;
	bool bad;
};

enum { NEXT = -1 };

static int newlab(struct bpf_b *b)
{
	if (b->nlab >= MAXL) {
		b->bad = true;
		return 0;
	}
	b->lab[b->nlab] = -1;
	return b->nlab++;
}

static void bind(struct bpf_b *b, int l)
{
	b->lab[l] = b->n;
}

static void emit(struct bpf_b *b, struct sock_filter s)
{
	if (b->n >= MAXI) {
		b->bad = true;
		return;
	}
	b->f[b->n++] = s;
}

static void ld(struct bpf_b *b, unsigned int off)
{
	emit(b, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, off));
}

static void ret(struct bpf_b *b, unsigned int v)
{
	emit(b, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, v));
}

/* Conditional jump to labels (NEXT: the following instruction). */
static void jmp(struct bpf_b *b, unsigned int op, unsigned int k, int jt,
		int jf)
{
	b->fix[b->nfix].at = b->n;
	b->fix[b->nfix].jt = jt;
	b->fix[b->nfix].jf = jf;
	b->nfix++;
	emit(b, (struct sock_filter)BPF_JUMP(BPF_JMP | op | BPF_K, k, 0, 0));
}

static bool resolve(struct bpf_b *b)
{
	for (int i = 0; i < b->nfix; i++) {
		int at = b->fix[i].at, t[2] = { b->fix[i].jt, b->fix[i].jf };
		int off[2];

		for (int j = 0; j < 2; j++) {
			if (t[j] == NEXT) {
				off[j] = 0;
				continue;
			}
			if (b->lab[t[j]] < 0)
				return false;
			off[j] = b->lab[t[j]] - (at + 1);
			if (off[j] < 0 || off[j] > 255)
				return false;
		}
		b->f[at].jt = (unsigned char)off[0];
		b->f[at].jf = (unsigned char)off[1];
	}
	return !b->bad;
}

#define OFF_NR offsetof(struct seccomp_data, nr)
#define OFF_ARCH offsetof(struct seccomp_data, arch)
#define OFF_IP_LO offsetof(struct seccomp_data, instruction_pointer)
#define OFF_IP_HI (OFF_IP_LO + 4)
#define OFF_ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define OFF_ARG_HI(i) (OFF_ARG_LO(i) + 4)

/* "fd argument i in the ring range" -> ipchk, else fall to `other`. */
static void fd_check(struct bpf_b *b, int i, int ipchk, int other)
{
	ld(b, OFF_ARG_LO(i));
	jmp(b, BPF_JGE, (unsigned int)uu_shim.ring_hi, other, NEXT);
	jmp(b, BPF_JGE, (unsigned int)uu_shim.ring_lo, ipchk, other);
}

static void magic_check(struct bpf_b *b, int i, int allow)
{
	ld(b, OFF_ARG_HI(i));
	jmp(b, BPF_JEQ, UU_PASS_MAGIC, allow, NEXT);
}

static bool build_filter(struct bpf_b *b)
{
	uintptr_t start = (uintptr_t)__start_uu_exempt_text;
	uintptr_t stop = (uintptr_t)__stop_uu_exempt_text;
	int allow = newlab(b), trap = newlab(b), ipchk = newlab(b);
	int fd0 = newlab(b), fcntl_l = newlab(b), dup2_l = newlab(b);
	int dup2b = newlab(b), mmap_l = newlab(b);
	int uring = newlab(b);

	if ((start >> 32) != (stop >> 32) || start >= stop)
		return false; /* cannot express the exempt range */

	ld(b, OFF_ARCH);
	jmp(b, BPF_JEQ, AUDIT_ARCH_X86_64, NEXT, allow);
	ld(b, OFF_NR);
	jmp(b, BPF_JEQ, __NR_io_uring_setup, uring, NEXT);
	jmp(b, BPF_JEQ, __NR_io_uring_enter, uring, NEXT);
	jmp(b, BPF_JEQ, __NR_io_uring_register, uring, NEXT);
	jmp(b, BPF_JEQ, __NR_close, fd0, NEXT);
	jmp(b, BPF_JEQ, __NR_mmap, mmap_l, NEXT);
	jmp(b, BPF_JEQ, __NR_dup, fd0, NEXT);
	jmp(b, BPF_JEQ, __NR_dup2, dup2_l, NEXT);
	jmp(b, BPF_JEQ, __NR_dup3, dup2_l, NEXT);
	jmp(b, BPF_JEQ, __NR_fcntl, fcntl_l, allow);

	bind(b, uring);
	magic_check(b, 0, allow);
	jmp(b, BPF_JEQ, 0, trap, trap);

	/* fcntl: only the duplicating commands */
	bind(b, fcntl_l);
	ld(b, OFF_ARG_LO(1));
	jmp(b, BPF_JEQ, F_DUPFD, fd0, NEXT);
	jmp(b, BPF_JEQ, F_DUPFD_CLOEXEC, fd0, allow);

	bind(b, fd0);
	magic_check(b, 0, allow);
	fd_check(b, 0, ipchk, allow);

	bind(b, dup2_l);
	magic_check(b, 0, allow);
	fd_check(b, 0, ipchk, dup2b);
	bind(b, dup2b);
	fd_check(b, 1, ipchk, allow);

	bind(b, mmap_l);
	magic_check(b, 4, allow);
	fd_check(b, 4, ipchk, allow);

	/* exempt: the engine's raw stub */
	bind(b, ipchk);
	ld(b, OFF_IP_HI);
	jmp(b, BPF_JEQ, (unsigned int)(start >> 32), NEXT, trap);
	ld(b, OFF_IP_LO);
	jmp(b, BPF_JGE, (unsigned int)stop, trap, NEXT);
	jmp(b, BPF_JGE, (unsigned int)start, allow, trap);

	bind(b, allow);
	ret(b, SECCOMP_RET_ALLOW);
	bind(b, trap);
	ret(b, SECCOMP_RET_TRAP | UU_TRAP_TAG);
	return resolve(b);
}

int uu_trap_install_filter(char *why, size_t whylen)
{
	static struct bpf_b b;
	struct sock_fprog prog;
	unsigned long flags = SECCOMP_FILTER_FLAG_TSYNC |
			      SECCOMP_FILTER_FLAG_SPEC_ALLOW;
	long ret;

	memset(&b, 0, sizeof(b));
	if (!build_filter(&b)) {
		snprintf(why, whylen, "cannot build the trap filter");
		return -EINVAL;
	}
	prog.len = (unsigned short)b.n;
	prog.filter = b.f;
	ret = uu_raw_syscall6(__NR_seccomp, SECCOMP_SET_MODE_FILTER, (long)flags,
			      (long)&prog, 0, 0, 0);
	if (ret == -EINVAL) {
		flags &= ~SECCOMP_FILTER_FLAG_SPEC_ALLOW;
		ret = uu_raw_syscall6(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
				      (long)flags, (long)&prog, 0, 0, 0);
	}
	if (ret == -EACCES) {
		/* no CAP_SYS_ADMIN: filters need no_new_privs */
		ret = uu_raw_syscall6(__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0,
				      0, 0);
		if (ret < 0) {
			snprintf(why, whylen,
				 "no_new_privs refused (prctl: %s)",
				 strerror((int)-ret));
			return (int)ret;
		}
		ret = uu_raw_syscall6(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
				      (long)flags, (long)&prog, 0, 0, 0);
	}
	if (ret > 0) {
		snprintf(why, whylen,
			 "TSYNC failed: thread %ld has another seccomp filter",
			 ret);
		return -EBUSY;
	}
	if (ret < 0) {
		snprintf(why, whylen, "seccomp(SET_MODE_FILTER): %s",
			 strerror((int)-ret));
		return (int)ret;
	}
	return 0;
}

int uu_trap_sigaction(int sig, const struct sigaction *act,
		      struct sigaction *old)
{
	struct ksigaction prev = app_sigsys;

	(void)sig;
	if (act) {
		struct ksigaction n = {
			.handler = (void *)act->sa_handler,
			.flags = (unsigned long)act->sa_flags,
		};

		memcpy(&n.mask, &act->sa_mask, sizeof(n.mask));
		app_sigsys = n;
	}
	if (old) {
		memset(old, 0, sizeof(*old));
		old->sa_handler = (void (*)(int))prev.handler;
		old->sa_flags = (int)prev.flags;
		memcpy(&old->sa_mask, &prev.mask, sizeof(prev.mask));
	}
	return 0;
}
