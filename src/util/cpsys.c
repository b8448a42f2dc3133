// SPDX-License-Identifier: MIT
/* Interruptible system calls for io-wq workers: see cpsys.h.  x86-64. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "util/cpsys.h"

#if !defined(__x86_64__)
#error "uuring's interruptible syscall stub is written for x86-64"
#endif

__thread struct uu_cp *uu_cp_self;

/*
 * r12 (callee-saved, kept by the syscall instruction) holds cp through
 * the window, so the handler finds the cancel word without touching TLS
 * (TLS of a shared object is not async-signal-safe on first touch).
 * The window is [uu_cp_begin, uu_cp_end): from the check to the syscall
 * instruction itself.  uu_cp_end is the instruction after the syscall: a
 * call interrupted there has returned -EINTR (no SA_RESTART); one the
 * kernel restarts is rewound onto the syscall instruction, inside the
 * window, and is diverted too.
 */
__asm__(".text\n"
	".globl uu_cp_syscall6\n"
	".hidden uu_cp_syscall6\n"
	".type uu_cp_syscall6,@function\n"
	"uu_cp_syscall6:\n"
	"	pushq %r12\n"
	"	movq %rdi, %r12\n"
	"uu_cp_begin:\n"
	"	movl (%r12), %eax\n"
	"	testl %eax, %eax\n"
	"	jnz uu_cp_cancel_exit\n"
	"	movq %rsi, %rax\n"
	"	movq %rdx, %rdi\n"
	"	movq %rcx, %rsi\n"
	"	movq %r8, %rdx\n"
	"	movq %r9, %r10\n"
	"	movq 16(%rsp), %r8\n"
	"	movq 24(%rsp), %r9\n"
	"	syscall\n"
	"uu_cp_end:\n"
	"	popq %r12\n"
	"	ret\n"
	"uu_cp_cancel_exit:\n"
	"	movq $-4, %rax\n" /* -EINTR */
	"	popq %r12\n"
	"	ret\n"
	".size uu_cp_syscall6, .-uu_cp_syscall6\n");

extern const char uu_cp_begin[], uu_cp_end[], uu_cp_cancel_exit[];

/* The handler is entered straight from the kernel: rt_sigaction is
 * issued raw, with this restorer, so that no libc or sanitizer wrapper
 * sits in between (TSan would defer the handler to its next interceptor,
 * too late to divert the program counter). */
__asm__(".text\n"
	".type uu_cp_restore_rt,@function\n"
	"uu_cp_restore_rt:\n"
	"	movq $15, %rax\n" /* __NR_rt_sigreturn */
	"	syscall\n"
	".size uu_cp_restore_rt, .-uu_cp_restore_rt\n");
extern const char uu_cp_restore_rt[];

struct ksigaction {
	void *handler;
	unsigned long flags;
	const void *restorer;
	uint64_t mask;
};
#define UU_SA_RESTORER 0x04000000UL

static unsigned long interrupts; /* only touched with lock-prefixed asm */
static int cp_sig = -1;
static pthread_once_t cp_once = PTHREAD_ONCE_INIT;

static inline void atomic_inc_raw(void *p, bool wide)
{
	if (wide)
		__asm__ volatile("lock incq %0" : "+m"(*(unsigned long *)p));
	else
		__asm__ volatile("lock incl %0" : "+m"(*(unsigned int *)p));
}

/*
 * Does nothing but note the interrupt: the blocked call has already been
 * made to return by the signal's arrival; a call about to start is
 * diverted to return -EINTR.  A signal that finds no cancelled request in
 * the window (one that arrives after the request ended, or one the
 * application sent to the process) changes nothing.  Not instrumented:
 * it runs without the sanitizer's knowledge and touches only the cancel
 * word (read once) and two counters (locked increments).
 */
__attribute__((no_sanitize("thread", "address", "undefined")))
static void cp_handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];

	(void)sig;
	(void)si;
	atomic_inc_raw(&interrupts, true);
	if (pc >= (uintptr_t)uu_cp_begin && pc < (uintptr_t)uu_cp_end) {
		struct uu_cp *cp = (struct uu_cp *)uc->uc_mcontext.gregs[REG_R12];

		/* the canceller stored the word before tgkill: the signal's
		 * delivery orders the two */
		if (*(volatile int *)&cp->cancel) {
			atomic_inc_raw(&cp->intr, false);
			uc->uc_mcontext.gregs[REG_RIP] =
				(greg_t)(uintptr_t)uu_cp_cancel_exit;
		}
	}
}

/* "SIGRTMIN+N", "SIGRTMAX-N", "RTMIN+N", "RTMAX-N" or a number. */
static int parse_signal(const char *v)
{
	char *end;
	long base, n;

	if (!strncmp(v, "SIG", 3))
		v += 3;
	if (!strncmp(v, "RTMIN", 5) || !strncmp(v, "RTMAX", 5)) {
		base = v[4] == 'N' ? SIGRTMIN : SIGRTMAX;
		v += 5;
		n = 0;
		if (*v) {
			n = strtol(v, &end, 10);
			if (*end)
				return -1;
		}
		n += base;
	} else {
		n = strtol(v, &end, 10);
		if (*end || end == v)
			return -1;
	}
	return n >= SIGRTMIN && n <= SIGRTMAX ? (int)n : -1;
}

static int cp_number = -1;
static pthread_once_t number_once = PTHREAD_ONCE_INIT;

static void number_init(void)
{
	const char *v = getenv("UURING_CANCEL_SIGNAL");
	int sig = SIGRTMAX - 2;

	if (v && *v) {
		int s = parse_signal(v);

		if (s < 0)
			fprintf(stderr, "uuring: UURING_CANCEL_SIGNAL=%s is not "
				"a real-time signal; using SIGRTMAX-2\n", v);
		else
			sig = s;
	}
	cp_number = sig;
}

int uu_cp_signal_number(void)
{
	pthread_once(&number_once, number_init);
	return cp_number;
}

static void cp_init(void)
{
	struct ksigaction ka;
	int sig = uu_cp_signal_number();
	memset(&ka, 0, sizeof(ka));
	ka.handler = (void *)cp_handler;
	/* no SA_RESTART: the blocked call must return; every signal masked
	 * while the handler runs */
	ka.flags = SA_SIGINFO | UU_SA_RESTORER;
	ka.restorer = uu_cp_restore_rt;
	ka.mask = ~0ULL;
	if (syscall(SYS_rt_sigaction, sig, &ka, NULL, sizeof(ka.mask)))
		return;
	cp_sig = sig;
}

int uu_cp_signal(void)
{
	pthread_once(&cp_once, cp_init);
	return cp_sig;
}

unsigned long uu_cp_interrupts(void)
{
	return __atomic_load_n(&interrupts, __ATOMIC_RELAXED);
}
