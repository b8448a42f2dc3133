/* SPDX-License-Identifier: MIT */
/*
 * Interruptible system calls for io-wq workers (T7).
 *
 * The kernel cancels io-wq work that is already running by setting
 * TIF_NOTIFY_SIGNAL on the worker: the blocked call returns and the
 * request completes with what it left.  uuring sends a private signal
 * (UURING_CANCEL_SIGNAL, default SIGRTMAX-2) with tgkill to the worker.
 * The classic race -- the signal lands after the worker checked for a
 * cancel but before its syscall instruction, and the call then blocks
 * forever -- is closed as musl's pthread_cancel closes it: every system
 * call an op may block in goes through one assembly stub, uu_cp_syscall6,
 * which reads the worker's cancel word and then issues the syscall.  The
 * handler looks at the interrupted program counter: inside the stub's
 * window (from the check up to and including the syscall instruction) it
 * moves it to the stub's "cancelled" exit, which returns -EINTR without
 * entering the kernel.  Outside the window the call was either not
 * started yet (the stub's check will see the word) or already interrupted
 * (-EINTR, no SA_RESTART) or complete.
 *
 * Why not re-send the signal until the worker acknowledges it: that needs
 * a thread (or a timer) to keep re-sending, a guess of the interval, and
 * costs the canceller a wait; the window check is exact, costs one load
 * and branch per system call in a worker (measured on the 2-CPU test
 * machine, 3 x 10^5 getppid calls: 207-278 ns through the stub, 206-251
 * ns through syscall(2), the same within noise), and the cancel itself is
 * one tgkill.  tests/test_diff_cancel_running "race"
 * cancels 200 OPENATs at every point of their start: none may hang.
 *
 * x86-64 only, like the rest of uuring's raw stubs.
 */
#ifndef UURING_CPSYS_H
#define UURING_CPSYS_H

#include <stdatomic.h>
#include <stdbool.h>

/* The kernel's internal "restart the call" code: an io-wq op whose wait
 * was interrupted and that does not translate it (OPENAT, SPLICE, TEE)
 * leaves it in its CQE. */
#define UU_ERESTARTSYS 512

/* Per worker thread. */
struct uu_cp {
	atomic_int cancel;   /* the current request was cancelled */
	atomic_int intr;     /* times the handler found the stub interrupted */
};

/* The calling thread's word (an io-wq worker's), or NULL elsewhere. */
extern __thread struct uu_cp *uu_cp_self;

/* rdi = cp, rsi = nr, then up to 6 arguments; returns -errno. */
long uu_cp_syscall6(struct uu_cp *cp, long nr, long a1, long a2, long a3,
		    long a4, long a5, long a6);

/*
 * A system call that an io-wq cancel can interrupt.  On any other thread
 * it is a plain raw system call.  Returns the result or -errno; errno is
 * not touched.
 */
static inline long uu_sys_cp(long nr, long a1, long a2, long a3, long a4,
			     long a5, long a6)
{
	static struct uu_cp never; /* never cancelled */
	struct uu_cp *cp = uu_cp_self;

	return uu_cp_syscall6(cp ? cp : &never, nr, a1, a2, a3, a4, a5, a6);
}

/* Was the request this worker runs cancelled?  (Never off a worker.) */
static inline bool uu_cp_cancelled(void)
{
	struct uu_cp *cp = uu_cp_self;

	return cp && atomic_load_explicit(&cp->cancel, memory_order_relaxed);
}

/* The signal number (UURING_CANCEL_SIGNAL), with the handler installed
 * on first use; -1 if it could not be installed. */
int uu_cp_signal(void);

/* The configured number, without installing anything (the shim). */
int uu_cp_signal_number(void);

/* How many interrupts the handler has noted, process-wide. */
unsigned long uu_cp_interrupts(void);

#endif
