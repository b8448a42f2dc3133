/* SPDX-License-Identifier: MIT */
/*
 * The per-thread context (the kernel's struct io_uring_task): what the
 * engine keeps for each thread, in one struct in initial-exec TLS.  It is
 * never allocated lazily, so a signal handler (the SIGSYS trap of
 * src/shim/) may read it at any time.
 *
 * Thread exit: one pthread key, set the first time a thread acquires
 * something its exit must release (uu_tctx_note_exit), runs that work in
 * a fixed order (core/tctx.c tctx_exit).
 *
 * fork: the child's one thread starts with the forking thread's copy; the
 * child handlers reset what is the parent's: the cached tid
 * (core/registry.c), the io-wq pool and its exit work
 * (uu_iowq_atfork_child), the wake eventfd (uu_wait_atfork_child).
 *
 * Not in it: the cancellable system-call stub's frame pointer (util/cpsys.c:
 * util/ does not depend on core/), the block-queue model's dispatch section
 * (dev/blkq.c, a type of its own) and the ublk client's block-device fd
 * (ublk/client.c).
 */
#ifndef UURING_CORE_TCTX_H
#define UURING_CORE_TCTX_H

#include "core/types.h"

#define UU_WAIT_SLOTS 8 /* nested waits of one thread (wait/cqwait.c) */

/* what a thread's exit runs, in this order (tctx_exit) */
enum {
	UU_TCTX_EXIT_CMD = 1u << 0,     /* its cancelable URING_CMDs
					 * (ops/uring_cmd.c) */
	UU_TCTX_EXIT_RINGFDS = 1u << 1, /* its registered ring fds
					 * (core/register.c) */
	UU_TCTX_EXIT_IOWQ = 1u << 2,    /* its io-wq pool (exec/iowq.c) */
	UU_TCTX_EXIT_WAIT = 1u << 3,    /* its wake eventfd (wait/cqwait.c) */
};

struct uu_wq_acct;
struct uu_worker;

struct uu_tctx {
	pid_t tid;                /* gettid(), cached: 0 until the first
				   * uu_gettid and after fork */
	unsigned int exit_work;   /* UU_TCTX_EXIT_* noted */
	bool has_tctx;            /* the kernel's per-task context exists:
				   * the thread created a ring, submitted,
				   * or registered a ring fd; registered-ring
				   * calls without one get -EINVAL */
	bool engine_thread;       /* an engine thread (poller, timer, io-wq
				   * worker, ...): no io-wq pool of its own */
	bool iowq_worker;         /* an io-wq worker */
	bool poller;              /* the readiness engine's thread */
	bool readiness_sent;      /* sent a readiness byte since its enter
				   * began (core/ring.c; core/enter.c
				   * clears it) */
	struct uu_exec *exec;     /* innermost execution context (core/req.c) */
	void *thread_start;       /* an engine thread's start handoff, until
				   * uu_thread_ready (core/registry.c) */
	struct uu_iowq *wq;       /* its io-wq pool, created at its first
				   * punt; a worker's: the pool it serves */
	struct uu_wq_acct *wq_acct;  /* an io-wq worker's class */
	struct uu_worker *wq_worker; /* an io-wq worker itself */
	struct uu_req *firing_lt; /* the LINK_TIMEOUT whose timer callback
				   * runs here (ops/timeout.c) */
	/* RING_FDS: registrations belong to the calling thread (T17) */
	struct uu_ring *ringfds[UU_RINGFD_REG_MAX];
	int wait_efd;             /* its wake eventfd, -1: none yet */
	ino_t wait_efd_ino;
	clockid_t wait_clock;     /* the clock of its current wait */
	struct uu_waiter wait_slots[UU_WAIT_SLOTS];
};

extern __thread struct uu_tctx uu_tctx
	__attribute__((tls_model("initial-exec")));

/* the thread's exit must run `work` (UU_TCTX_EXIT_*) */
void uu_tctx_note_exit(unsigned int work);

/* the exit work of each part, called by tctx_exit only */
void uu_uring_cmd_task_exit(void);
void uu_ringfds_thread_exit(void);
void uu_iowq_thread_exit(void);
void uu_wait_thread_exit(void);

pid_t uu_gettid_slow(void);
static inline pid_t uu_gettid(void)
{
	return likely(uu_tctx.tid) ? uu_tctx.tid : uu_gettid_slow();
}

#endif /* UURING_CORE_TCTX_H */
