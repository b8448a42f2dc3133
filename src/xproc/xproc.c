// SPDX-License-Identifier: MIT
/*
 * Rings shared across fork (T12; docs/architecture.md "fork").
 *
 * The ring memory is MAP_SHARED, so after fork the child sees the rings
 * its parent created, and the kernel lets it submit to them, wait on them
 * and register on them.  uuring does the same with two engines, one per
 * process, serving one ring:
 *
 *  - What both must agree on lives in a MAP_SHARED page per ring (struct
 *    uu_xshared): the SQ and CQ locks (PTHREAD_PROCESS_SHARED mutexes),
 *    the SINGLE_ISSUER owner, and the cross-process wakeup state.  Each
 *    engine's cached SQ head and CQ tail are re-read from the ring under
 *    those locks (core/submit.c, core/cq.c), so SQEs are consumed once and
 *    CQEs never overwrite each other.
 *  - Everything else is the engine's own: at its first use of an
 *    inherited ring (uu_ring_adopt) the child forgets its copy of the
 *    parent's requests, waiters, backlog and task_work, re-initialises the
 *    private locks (a parent thread may have held one at the fork), and
 *    runs its own requests with its own fds and threads, as the kernel runs
 *    a task's requests with that task's files.  A cancel that finds
 *    nothing in its process is forwarded to the other processes of the
 *    ring (xproc/xlife.c).
 *  - Waiting: a waiter of one process is woken by posts of the other
 *    through an eventfd made at the first fork (xwake_fd, inherited by the
 *    child): a poster that sees a cross-process sleeper (xs->xsleepers)
 *    after its commit writes it.  A waiter that drains it may take the
 *    wakeup of another waiter, so while a ring is shared the waits also
 *    re-check the CQ every millisecond (wait/cqwait.c).  The child's
 *    adoption writes it once, so that the parent's waiters that went to
 *    sleep before the ring was shared start watching too.
 *  - SQPOLL: the parent's SQ thread serves the child's SQEs (it sleeps on
 *    a shared futex, exec/sqpoll.c), as the kernel's SQPOLL thread does.
 *  - Exit: a process that used a shared ring cancels its requests on it
 *    at exit (atexit; TIMEOUTs too at exec under `uuring run`) and waits
 *    for their CQEs, as the kernel cancels a task's requests when it exits
 *    or execs, so the other process sees them.  One that ends otherwise
 *    has its requests posted by the others (xproc/xlife.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/buffers.h"
#include "core/cancel.h"
#include "core/cq.h"
#include "core/registry.h"
#include "core/ring.h"
#include "core/task_work.h"
#include "core/tctx.h"
#include "core/types.h"
#include "core/wait.h"
#include "core/xproc.h"
#include "ops/kbuf.h"
#include "ops/timeout.h"
#include "util/fdutil.h"
#include "util/forkhook.h"
#include "util/mpscq.h"
#include "util/rawsys.h"

/* serialises adoptions in this process (two threads of the child using
 * one inherited ring for the first time) */
static pthread_mutex_t adopt_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t xs_size(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (sizeof(struct uu_xshared) + page - 1) & ~(page - 1);
}

int uu_xshared_init(struct uu_ring *r)
{
	pthread_mutexattr_t a;
	struct uu_xshared *xs;

	xs = mmap(NULL, xs_size(), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (xs == MAP_FAILED)
		return -ENOMEM;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST); /* uu_shared_lock */
	pthread_mutex_init(&xs->uring_lock, &a);
	pthread_mutex_init(&xs->completion_lock, &a);
	pthread_mutexattr_destroy(&a);
	r->xs = xs;
	r->uring_lock = &xs->uring_lock;
	r->completion_lock = &xs->completion_lock;
	r->submitter_tid = &xs->submitter_tid;
	r->disabled = &xs->disabled;
	r->signalled = &xs->signalled;
	atomic_store(&r->xwake_fd, -1);
	return 0;
}

/*
 * The mutexes are not destroyed: another process may still use them
 * (glibc's destroy marks a mutex unusable); the page goes with the last
 * mapping.
 */
void uu_xshared_free(struct uu_ring *r)
{
	int fd = atomic_exchange(&r->xwake_fd, -1);

	if (fd >= 0 && uu_fd_ino(fd) == r->xwake_ino)
		uu_sys_close(fd);
	if (r->xs) {
		uu_xj_unmap(r);
		munmap(r->xs, xs_size());
	}
	r->xs = NULL;
}

void uu_xproc_wake(struct uu_ring *r)
{
	uint64_t one = 1;
	int fd = atomic_load_explicit(&r->xwake_fd, memory_order_relaxed);

	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
		/* non-blocking, never near full: nothing to do */
	}
}

/* ---- exit ---- */

/*
 * all: at exec, the kernel's __io_uring_cancel(true) also kills the
 * task's TIMEOUTs (io_kill_timeouts); at exit it does not: they stay
 * armed in the ring, and expire there later.  Here they die with the
 * process's timer thread, and a process that still uses the ring fires
 * them from the journal (xproc/xlife.c): the exit waits for everything
 * but them.
 */
static void end_ring(struct uu_ring *r, bool all)
{
	struct timespec ms = { 0, 1000 * 1000 };
	bool defer = r->setup_flags & IORING_SETUP_DEFER_TASKRUN;

	/* owner_pid: the creator or adopter; not a vfork child running on
	 * its parent's memory (no atfork handler told it apart) */
	if (uu_ring_foreign(r) || !uu_ring_xshared(r) ||
	    atomic_load(&r->dead) || r->owner_pid != getpid())
		return;
	if (all)
		uu_timeouts_cancel_all(r);
	uu_cancel_ring_all(r);
	/* their CQEs, up to a second (a blocked worker is interrupted) */
	for (int i = 0; i < 1000; i++) {
		if (defer && atomic_load(r->submitter_tid) == uu_gettid())
			uu_tw_run_local(r, 0, INT32_MAX);
		if (atomic_load(&r->inflight) <= (all ? 0 : uu_parked_timeouts(r)) &&
		    !atomic_load(&r->tw_pending))
			break;
		nanosleep(&ms, NULL);
	}
	uu_cq_flush_overflow(r);
}

static void exit_ring(struct uu_ring *r)
{
	end_ring(r, false);
}

static void exec_ring(struct uu_ring *r)
{
	end_ring(r, true);
}

static void xproc_exit(void)
{
	uu_registry_for_each(exit_ring);
	/* not in a vfork child: the lifelines are its parent's */
	if (getpid() == uu_self_pid())
		uu_xlife_goodbye();
}

/*
 * This process's pid, set at load and in a forked child: a vfork child,
 * which runs on its parent's memory and took no atfork handler, reads
 * its parent's here (getpid() tells them apart).
 */
static pid_t self_pid;

__attribute__((constructor)) static void xproc_init(void)
{
	self_pid = getpid();
}

pid_t uu_self_pid(void)
{
	return self_pid;
}

/* `uuring run`'s execve (shim/exec.c), just before the call: as the
 * kernel cancels a task's requests at exec (begin_new_exec).  Not in a
 * vfork child: the engine's state is its parent's, and so is the heap. */
void uu_xproc_before_exec(void)
{
	if (getpid() != self_pid)
		return;
	uu_registry_for_each(exec_ring);
}

/* ---- fork ---- */

static bool exit_registered;

/*
 * In the parent, before fork, for each live ring: the eventfd both
 * processes' waiters watch (once per ring), and a wakeup of the ring's
 * current waiters so that they watch it from now on.
 */
void uu_xproc_atfork_prepare_ring(struct uu_ring *r)
{
	uu_xj_setup(r);
	uu_xlife_prepare_pair();
	if (!exit_registered) {
		/* inherited by the child with the rest of the process */
		exit_registered = !atexit(xproc_exit);
	}
	if (atomic_load(&r->xwake_fd) < 0) {
		int fd = uu_engine_eventfd(EFD_CLOEXEC | EFD_NONBLOCK);

		if (fd < 0)
			return;
		fd = uu_fd_to_reserved(fd);
		r->xwake_ino = uu_fd_ino(fd);
		atomic_store(&r->xwake_fd, fd);
		uu_wake_all_waiters(r);
	}
}

void uu_xproc_atfork_prepare(void)
{
	pthread_mutex_lock(&adopt_lock);
	uu_xlife_atfork_prepare();
}

void uu_xproc_atfork_parent(void)
{
	uu_xlife_atfork_parent();
	pthread_mutex_unlock(&adopt_lock);
}

void uu_xproc_atfork_child(void)
{
	pthread_mutex_init(&adopt_lock, NULL);
	self_pid = getpid();
	uu_xlife_atfork_child();
}

UU_FORK_HOOK(xproc_fork_hook, UU_FORK_RANK_XPROC, uu_xproc_atfork_prepare,
	     uu_xproc_atfork_parent, uu_xproc_atfork_child)

/* for each ring the child inherits, inside the registry's fork hook (the
 * lock order: adopt_lock, the live-ring list, then each ring's) */
static void xproc_rings_atfork_prepare(void)
{
	uu_registry_fork_each(uu_xproc_atfork_prepare_ring);
}

UU_FORK_HOOK(xproc_rings_fork_hook, UU_FORK_RANK_XPROC_RINGS,
	     xproc_rings_atfork_prepare, NULL, NULL)

/*
 * The child's first use of a ring its parent created (or an earlier
 * generation's child adopted): what the engine knew of the ring is the
 * parent's, as of the fork.  Forget it, keep the configuration and the
 * tables (registered files and buffers, personalities, provided buffers:
 * the child's copies, as of the fork), and serve the ring from now on.
 */
static void reset_engine_state(struct uu_ring *r)
{
	uu_ring_init_private_locks(r);
	uu_kbuf_adopt(r);

	/* the parent's backlog: its CQEs, which its engine will post */
	r->ovf_head = r->ovf_tail = NULL;
	atomic_store(&r->ovf_pending, false);
	r->ovf_wake = false;
	atomic_store(&r->cq_dropped, false);
	r->cq_cached_tail = atomic_load(r->cq_tail);
	r->sq_cached_head = atomic_load(r->sq_head);

	r->waiters = NULL;
	atomic_store(&r->nr_sleepers, 0);

	/* the parent's requests: parked, deferred, timed, queued */
	atomic_store(&r->inflight, 0);
	atomic_store(&r->finishing, 0);
	atomic_store(&r->drain_active, false);
	r->defer_head = r->defer_tail = NULL;
	r->defer_running = r->defer_recheck = r->defer_after_drain = false;
	r->wq_default = NULL; /* the parent's pool: no workers here */
	r->parked = NULL;
	r->tmo_head = r->tmo_tail = NULL;
	r->lt_head = NULL;
	uu_mpscq_init(&r->defer_tw);
	uu_mpscq_init(&r->prio_tw);
	atomic_store(&r->tw_pending, 0);
	atomic_store(&r->tw_prio_pending, 0);
	atomic_store(&r->tw_wait_nr, 0);
	atomic_store(&r->tw_waiter_efd, -1);
	atomic_store(&r->tw_dead, false);
	atomic_store(&r->evfd_async_due, 0);
	r->iopoll_head = r->iopoll_tail = NULL;
	r->iopoll_dead = false;
	atomic_store(&r->iopoll_sleepers, 0);
}

int uu_ring_adopt(struct uu_ring *r)
{
	unsigned int gen = atomic_load(&uu_fork_generation);

	pthread_mutex_lock(&adopt_lock);
	if (atomic_load_explicit(&r->fork_gen, memory_order_relaxed) == gen) {
		pthread_mutex_unlock(&adopt_lock);
		return 0; /* another thread of this process adopted it */
	}
	reset_engine_state(r);
	r->owner_pid = getpid();
	/* before our first post: a poster that counts our waiters sees it
	 * (acquire in uu_cq_commit_locked) */
	atomic_store_explicit(&r->xs->shared, true, memory_order_seq_cst);
	/* the other processes' waiters that sleep without watching for
	 * cross-process posts start to */
	uu_xproc_wake(r);
	/* release: pairs with the acquire in uu_ring_foreign of the other
	 * threads of this process, which then see the reset state */
	atomic_store_explicit(&r->fork_gen, gen, memory_order_release);
	pthread_mutex_unlock(&adopt_lock);
	/* the parent forwards its cancels of this ring here from now on */
	uu_xlife_adopted(r);
	return 0;
}
