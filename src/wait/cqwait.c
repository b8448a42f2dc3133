// SPDX-License-Identifier: MIT
/*
 * Waiting for CQEs (enter with GETEVENTS), and the wakeups.
 * Protocol and fence pairing: docs/architecture.md "Waiting and wakeups".
 *
 * A waiter sleeps in ppoll() on its thread's eventfd.  ppoll installs the
 * enter's sigmask atomically and returns EINTR for any handled signal
 * whatever SA_RESTART says, exactly as io_uring_enter does.  Posters wake
 * only waiters whose target tail was reached (as the kernel's
 * io_wake_function checks io_should_wake), so a waiter for
 * 128 CQEs is woken once, not 128 times.
 */
#include <errno.h>
#include <sched.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/cq.h"
#include "core/lockstat.h"
#include "core/memregion.h"
#include "core/registry.h"
#include "core/task_work.h"
#include "core/tctx.h"
#include "core/types.h"
#include "core/wait.h"
#include "core/xproc.h"
#include "exec/poller.h"
#include "util/fault.h"
#include "util/fdutil.h"
#include "util/forkhook.h"
#include "util/usercopy.h"

#define KERNEL_SIGSET_SIZE 8 /* _NSIG / 8 on x86-64 */

/* the thread's wake eventfd is still the one it made (T4) */
static bool efd_ours(void)
{
	return uu_tctx.wait_efd >= 0 &&
	       uu_fd_ino(uu_tctx.wait_efd) == uu_tctx.wait_efd_ino;
}

/*
 * The lazy wake is withdrawn: no new waker can claim it, and one that
 * did (core/task_work.c uu_tw_queue) has written our eventfd before we
 * go on, so the thread never closes it under a writer.  The seq_cst
 * store pairs with the waker's increment of tw_wakers before its CAS;
 * the acquire load with its release decrement after the write.
 */
static void tw_unpublish(struct uu_ring *r)
{
	atomic_store_explicit(&r->tw_wait_nr, 0, memory_order_seq_cst);
	while (atomic_load_explicit(&r->tw_wakers, memory_order_acquire))
		sched_yield();
}

/* the thread's exit (core/tctx.c) */
void uu_wait_thread_exit(void)
{
	if (efd_ours())
		close(uu_tctx.wait_efd);
	uu_tctx.wait_efd = -1;
}

/* This thread's wake eventfd, re-created if the app closed it (T4). */
static int thread_efd(void)
{
	if (efd_ours())
		return uu_tctx.wait_efd;
	uu_tctx.wait_efd = uu_engine_eventfd(EFD_CLOEXEC | EFD_NONBLOCK);
	if (uu_tctx.wait_efd < 0)
		return -errno;
	uu_tctx.wait_efd = uu_fd_to_reserved(uu_tctx.wait_efd);
	uu_tctx.wait_efd_ino = uu_fd_ino(uu_tctx.wait_efd);
	uu_tctx_note_exit(UU_TCTX_EXIT_WAIT);
	return uu_tctx.wait_efd;
}

/*
 * fork: the child's copy of the wake eventfd is the parent thread's file;
 * sleeping on it in the child would consume the parent's wakeups.  The
 * child's first sleep creates its own.
 */
void uu_wait_atfork_child(void)
{
	if (efd_ours())
		close(uu_tctx.wait_efd);
	uu_tctx.wait_efd = -1;
}

UU_FORK_HOOK(wait_fork_hook, UU_FORK_RANK_WAIT, NULL, NULL,
	     uu_wait_atfork_child)

void uu_wait_prewarm(void)
{
	thread_efd();
}

/* A TIMEOUT request expired (or was satisfied by its count) since the
 * wait began: as in the kernel, the wait returns whatever the count. */
static inline bool timeout_hit(struct uu_ring *r, struct uu_waiter *w)
{
	return atomic_load_explicit(&r->cq_timeouts, memory_order_relaxed) !=
	       w->nr_timeouts;
}

static inline bool waiter_satisfied(struct uu_ring *r, struct uu_waiter *w,
				    uint32_t tail)
{
	return (int32_t)(tail - w->target) >= 0 || timeout_hit(r, w) ||
	       atomic_load_explicit(&r->ovf_pending, memory_order_relaxed) ||
	       atomic_load_explicit(&r->cq_dropped, memory_order_relaxed);
}

/*
 * Poster side, after the seq_cst fence in uu_cq_commit_locked.  Wakes the
 * waiters whose target the CQ reached (io_cqring_wait's threshold), or,
 * with UURING_WAKE=every, every sleeping waiter on each commit: as before
 * the kernel had that threshold, each looks again and sleeps if short
 * (counted as spurious_wakeups).
 */
void uu_wake_waiters(struct uu_ring *r)
{
	uint32_t tail = atomic_load_explicit(r->cq_tail, memory_order_relaxed);
	bool every = uu_knob(wake_every);
	struct uu_waiter *w;
	uint64_t one = 1;

	uu_lock_cls(&r->wait_lock, UU_LOCK_CQ_WAITERS);
	for (w = r->waiters; w; w = w->next) {
		if (atomic_load_explicit(&w->woken, memory_order_relaxed) ||
		    (!every && !waiter_satisfied(r, w, tail)))
			continue;
		atomic_store_explicit(&w->woken, true, memory_order_relaxed);
		if (write(w->efd, &one, sizeof(one)) < 0 ||
		    uu_fault_errno(UU_FAULT_EVENTFD_EAGAIN, EAGAIN)) {
			/* the eventfd is non-blocking and never near full;
			 * full, it is readable all the same */
		}
	}
	pthread_mutex_unlock(&r->wait_lock);
}

/* Every waiter of this process, satisfied or not: they look again (a
 * ring becoming shared across processes, xproc/xproc.c). */
void uu_wake_all_waiters(struct uu_ring *r)
{
	struct uu_waiter *w;
	uint64_t one = 1;

	uu_lock_cls(&r->wait_lock, UU_LOCK_CQ_WAITERS);
	for (w = r->waiters; w; w = w->next) {
		atomic_store_explicit(&w->woken, true, memory_order_relaxed);
		if (write(w->efd, &one, sizeof(one)) < 0 ||
		    uu_fault_errno(UU_FAULT_EVENTFD_EAGAIN, EAGAIN)) {
		}
	}
	pthread_mutex_unlock(&r->wait_lock);
}

#define NS_PER_SEC 1000000000LL
#define KTIME_MAX INT64_MAX
/* while a ring is shared across processes, a sleeping waiter looks at
 * the CQ at least this often (xproc/xproc.c) */
#define XPROC_RECHECK_NS (1000 * 1000)

static int64_t mono_now(void)
{
	struct timespec t;

	clock_gettime(uu_tctx.wait_clock, &t);
	return (int64_t)t.tv_sec * NS_PER_SEC + t.tv_nsec;
}

/* ktime_set(): saturating, like the kernel's timespec64_to_ktime */
static int64_t ts_to_ns(int64_t sec, int64_t nsec)
{
	if (sec >= KTIME_MAX / NS_PER_SEC)
		return KTIME_MAX;
	return (int64_t)((uint64_t)sec * (uint64_t)NS_PER_SEC + (uint64_t)nsec);
}

static int64_t add_sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? KTIME_MAX : INT64_MIN;
	return r;
}

/* ppoll timeout until an absolute CLOCK_MONOTONIC deadline (NULL: none) */
static struct timespec *until(int64_t deadline, struct timespec *buf)
{
	int64_t rem;

	if (deadline == KTIME_MAX)
		return NULL;
	rem = deadline - mono_now();
	if (rem < 0)
		rem = 0;
	buf->tv_sec = rem / NS_PER_SEC;
	buf->tv_nsec = rem % NS_PER_SEC;
	return buf;
}

/* io_get_ext_arg + set_user_sigmask checks. */
struct wait_args {
	const void *sig;
	size_t sigsz;
	bool ts_set;
	int64_t ts_ns;
	uint64_t min_wait_ns;
};

/*
 * IORING_ENTER_EXT_ARG_REG: argp is a byte offset into the ring's
 * registered wait region (core/memregion.c), whose entry is read once
 */
static int parse_reg_arg(struct uu_ring *r, const void *argp, size_t argsz,
			 struct wait_args *a)
{
	struct io_uring_reg_wait w;
	int ret;

	if (argsz != sizeof(w))
		return -EINVAL;
	ret = uu_wait_arg_reg(r, (uintptr_t)argp, &w);
	if (ret)
		return ret;
	if (w.flags & ~(uint32_t)IORING_REG_WAIT_TS)
		return -EINVAL;
	a->min_wait_ns = (uint64_t)w.min_wait_usec * 1000ull;
	a->sig = (const void *)(uintptr_t)w.sigmask;
	a->sigsz = w.sigmask_sz;
	if (w.flags & IORING_REG_WAIT_TS) {
		a->ts_ns = ts_to_ns(w.ts.tv_sec, w.ts.tv_nsec);
		a->ts_set = true;
	}
	return 0;
}

static int parse_args(struct uu_ring *r, unsigned int flags, const void *argp,
		      size_t argsz, struct wait_args *a)
{
	const void *sig = argp;
	size_t sigsz = argsz;
	int ret;

	a->ts_set = false;
	a->min_wait_ns = 0;
	/* without EXT_ARG, argp is the signal mask whatever EXT_ARG_REG
	 * says (io_get_ext_arg) */
	if ((flags & IORING_ENTER_EXT_ARG) && (flags & IORING_ENTER_EXT_ARG_REG))
		return parse_reg_arg(r, argp, argsz, a);
	if (flags & IORING_ENTER_EXT_ARG) {
		struct io_uring_getevents_arg arg;

		if (argsz != sizeof(arg))
			return -EINVAL;
		ret = uu_copy_from_user(&arg, argp, sizeof(arg));
		if (ret)
			return ret;
		a->min_wait_ns = (uint64_t)arg.min_wait_usec * 1000ull;
		sig = (const void *)(uintptr_t)arg.sigmask;
		sigsz = arg.sigmask_sz;
		if (arg.ts) {
			struct __kernel_timespec kts;

			ret = uu_copy_from_user(&kts, (const void *)(uintptr_t)arg.ts,
						sizeof(kts));
			if (ret)
				return ret;
			a->ts_ns = ts_to_ns(kts.tv_sec, kts.tv_nsec);
			a->ts_set = true;
		}
	}
	a->sig = sig;
	a->sigsz = sigsz;
	return 0;
}

/* set_user_sigmask(): only once the wait really sleeps */
static int load_sigmask(const struct wait_args *a, sigset_t *mask)
{
	if (!a->sig)
		return 0;
	if (a->sigsz != KERNEL_SIGSET_SIZE)
		return -EINVAL;
	sigemptyset(mask);
	return uu_copy_from_user(mask, a->sig, KERNEL_SIGSET_SIZE);
}

/*
 * Waiters live in thread-local slots, not on the waiting stack frame: an
 * application signal handler that runs during the wait (it may: the wait
 * is ppoll with the enter's sigmask) and leaves with siglongjmp abandons
 * the wait without unregistering.  The slot then stays valid memory on the
 * ring's list (a poster may still write its eventfd: harmless), and the
 * thread's next wait finds it — registered by a frame deeper than its own,
 * which no longer exists — and unregisters it first.  A handler that waits
 * itself, inside the interrupted wait, takes the next slot.  The slots
 * are uu_tctx.wait_slots (core/tctx.h).
 */
static void waiter_del(struct uu_ring *r, struct uu_waiter *w);

static struct uu_waiter *waiter_slot(void *frame)
{
	struct uu_waiter *free_slot = NULL;

	for (int i = 0; i < UU_WAIT_SLOTS; i++) {
		struct uu_waiter *w = &uu_tctx.wait_slots[i];

		/* the stack grows down: a registration made by a frame
		 * below ours was abandoned (siglongjmp) */
		if (w->ring && (char *)w->frame < (char *)frame) {
			struct uu_ring *r = w->ring;

			waiter_del(r, w);
		}
		if (!w->ring && !free_slot)
			free_slot = w;
	}
	return free_slot;
}

/* a waiter on the ring's list (with its reference), before the fence */
static void waiter_link(struct uu_ring *r, struct uu_waiter *w)
{
	atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
	w->ring = r;
	uu_lock_cls(&r->wait_lock, UU_LOCK_CQ_WAITERS);
	w->prev = NULL;
	w->next = r->waiters;
	if (r->waiters)
		r->waiters->prev = w;
	r->waiters = w;
	pthread_mutex_unlock(&r->wait_lock);
}

static inline uint32_t cq_tail_acquire(struct uu_ring *r)
{
	return atomic_load_explicit(r->cq_tail, memory_order_acquire);
}

#ifndef UURING_MUTATE_NO_WAKE_FENCE
/*
 * The waiter's half of the Dekker pair: register, fence, then the check
 * that follows reads the CQ tail (registered_tail).
 */
static void register_waiter(struct uu_ring *r, struct uu_waiter *w)
{
	waiter_link(r, w);
	/* seq_cst RMW + fence: pairs with the poster's fence in
	 * uu_cq_commit_locked (store tail; fence; load nr_sleepers) */
	atomic_fetch_add_explicit(&r->nr_sleepers, 1, memory_order_seq_cst);
	atomic_thread_fence(memory_order_seq_cst);
}

/* the CQ tail for the check before each sleep, the first one included:
 * read after register_waiter's fence */
static inline uint32_t registered_tail(struct uu_ring *r,
				       const struct uu_waiter *w, bool first)
{
	(void)w;
	(void)first;
	return cq_tail_acquire(r);
}
#else
/*
 * Deliberately broken build (src/meson.build libuuring_mutant, used only
 * by tests/test_wake_protocol_mutant): no fence after registering and no
 * recheck of the CQ before the first sleep.  It also widens the window
 * between the caller's "not enough CQEs" check and the registration, so
 * that the missing recheck is hit within a few rounds on 2 CPUs.
 */
static void register_waiter(struct uu_ring *r, struct uu_waiter *w)
{
	usleep(2000);
	waiter_link(r, w);
	atomic_fetch_add_explicit(&r->nr_sleepers, 1, memory_order_seq_cst);
}

static inline uint32_t registered_tail(struct uu_ring *r,
				       const struct uu_waiter *w, bool first)
{
	return first ? w->target - 1 : cq_tail_acquire(r);
}
#endif

static void waiter_del(struct uu_ring *r, struct uu_waiter *w)
{
	/* already taken off (a stale-slot sweep from a handler on another
	 * stack): nothing to undo */
	if (w->ring != r)
		return;
	atomic_fetch_sub_explicit(&r->nr_sleepers, 1, memory_order_relaxed);
	uu_lock_cls(&r->wait_lock, UU_LOCK_CQ_WAITERS);
	if (w->prev)
		w->prev->next = w->next;
	else
		r->waiters = w->next;
	if (w->next)
		w->next->prev = w->prev;
	pthread_mutex_unlock(&r->wait_lock);
	w->ring = NULL;
	uu_ring_put(r); /* the registration's reference */
}

/* One wait (the kernel's struct io_wait_queue and io_cqring_wait's
 * locals). */
struct cq_wait {
	struct uu_ring *r;
	struct uu_waiter *w;
	struct wait_args a;
	sigset_t mask;           /* the sleep's sigmask, if a.sig */
	int efd;                 /* this thread's wake eventfd */
	bool defer;              /* DEFER_TASKRUN ring */
	bool min_phase;          /* min_wait's timer is the one in force */
	bool xcounted;           /* counted in r->xs->xsleepers */
	bool xshared;            /* the ring is shared across processes */
	int64_t deadline;        /* the overall timeout (KTIME_MAX: none) */
	int64_t min_deadline;    /* start + min_wait */
	uint32_t min_tail;       /* the CQ tail when the wait began */
	int32_t nr_wait;         /* completions still needed */
	struct pollfd pfd[2];    /* efd, and the cross-process wake fd */
};

/* what a step of the wait says when the wait goes on */
enum { WAIT_AGAIN = 1, WAIT_SLEEP, WAIT_TIMEOUT };

/*
 * The timers and the sigmask of a wait that sleeps (the kernel sets them
 * up once the CQ check failed): the overall timeout, relative or
 * ABS_TIMER, and min_wait's, both from one start on the ring's clock.
 */
static int wait_init_timers(struct cq_wait *cw, unsigned int flags)
{
	int64_t start;

	/* IORING_REGISTER_CLOCK: timeouts (and ABS_TIMER) on that clock */
	uu_tctx.wait_clock = cw->r->clockid;
	start = mono_now();
	cw->deadline = KTIME_MAX;
	cw->min_deadline = KTIME_MAX;
	if (cw->a.ts_set)
		cw->deadline = (flags & IORING_ENTER_ABS_TIMER) ?
				       cw->a.ts_ns :
				       add_sat(start, cw->a.ts_ns);
	cw->min_phase = cw->a.min_wait_ns != 0;
	if (cw->min_phase)
		cw->min_deadline = add_sat(start, (int64_t)cw->a.min_wait_ns);
	return load_sigmask(&cw->a, &cw->mask);
}

/*
 * Before each sleep: whether the wait is over; on a DEFER_TASKRUN ring,
 * the lazy wake published, or the queued task_work run instead of a sleep
 * (io_cqring_wait_schedule).  Returns WAIT_SLEEP, WAIT_AGAIN (task_work
 * ran: look again) or the wait's result.
 */
static int wait_check(struct cq_wait *cw, bool first)
{
	struct uu_ring *r = cw->r;
	struct uu_waiter *w = cw->w;
	uint32_t tail;

	/*
	 * A ring a forked child may use (xproc/xproc.c): also watch the
	 * eventfd its other processes' posts write, counted in
	 * xs->xsleepers before the CQ check below (the fence of the
	 * Dekker pair with uu_cq_commit_locked).
	 */
	cw->pfd[0] = (struct pollfd){ .fd = cw->efd, .events = POLLIN };
	cw->pfd[1] = (struct pollfd){ .fd = atomic_load_explicit(
					      &r->xwake_fd, memory_order_relaxed),
				      .events = POLLIN };
	if (cw->pfd[1].fd >= 0 && !cw->xcounted) {
		atomic_fetch_add_explicit(&r->xs->xsleepers, 1,
					  memory_order_seq_cst);
		atomic_thread_fence(memory_order_seq_cst);
		cw->xcounted = true;
	}
	cw->xshared = cw->pfd[1].fd >= 0 && uu_ring_xshared(r);
	/* a process of the ring that is gone without posting its
	 * CQEs: they are posted now (xproc/xlife.c) */
	if (cw->xshared)
		uu_xlife_check();

	if (atomic_load_explicit(&r->ovf_pending, memory_order_acquire))
		uu_cq_flush_overflow(r);
	if (atomic_load_explicit(&r->cq_dropped, memory_order_acquire))
		return -EBADR;
	tail = registered_tail(r, w, first);
	/* cq_timeouts is read after register_waiter's fence: either we see
	 * an expiry or its poster sees us (uu_wake_waiters) */
	if ((int32_t)(tail - w->target) >= 0 || timeout_hit(r, w))
		return 0;
	/* the completions still needed (io_cqring_wait's nr_wait) */
	cw->nr_wait = (int32_t)(w->target - tail);
	if (cw->nr_wait < 1)
		cw->nr_wait = 1;
	if (cw->defer) {
		/* lazy wake: publish how many completions we need;
		 * pairs with the fence in core/task_work.c uu_tw_queue */
		atomic_store_explicit(&r->tw_waiter_efd, cw->efd,
				      memory_order_relaxed);
		atomic_store_explicit(&r->tw_wait_nr, (unsigned int)cw->nr_wait,
				      memory_order_seq_cst);
		atomic_thread_fence(memory_order_seq_cst);
		/* any queued task_work is run rather than slept on
		 * (io_cqring_wait_schedule), nr_wait items at most */
		if (atomic_load_explicit(&r->tw_pending, memory_order_relaxed)) {
			tw_unpublish(r);
			uu_tw_run_local(r, cw->nr_wait, cw->nr_wait);
			return WAIT_AGAIN;
		}
	}
	return WAIT_SLEEP;
}

/*
 * One sleep (io_cqring_schedule_timeout): until a wakeup, a signal or the
 * timer in force.  Returns WAIT_AGAIN (woken: look again), WAIT_TIMEOUT
 * (that timer expired) or the wait's result.
 */
static int wait_sleep(struct cq_wait *cw)
{
	struct uu_ring *r = cw->r;
	struct uu_waiter *w = cw->w;
	struct timespec buf, *tmo;
	bool capped = false;
	uint32_t tail;
	int n;

	/*
	 * min_wait (the kernel's two-phase rule): the first timer is
	 * start + min_wait, whatever the overall timeout says.
	 */
	tmo = until(cw->min_phase ? cw->min_deadline : cw->deadline, &buf);
	if (cw->xshared &&
	    (!tmo || tmo->tv_sec || tmo->tv_nsec > XPROC_RECHECK_NS)) {
		/* a wakeup taken by another process's waiter is
		 * made up for by looking again (xproc/xproc.c) */
		buf.tv_sec = 0;
		buf.tv_nsec = XPROC_RECHECK_NS;
		tmo = &buf;
		capped = true;
	}
	/* EINTR ends the wait in -EINTR as a signal ends the kernel's */
	n = uu_fault_errno(UU_FAULT_PPOLL_EINTR, EINTR) ?
		    -1 :
		    ppoll(cw->pfd, cw->pfd[1].fd >= 0 ? 2 : 1, tmo,
			  cw->a.sig ? &cw->mask : NULL);
	if (cw->defer) {
		tw_unpublish(r);
		/* as the kernel: completions queued meanwhile are
		 * posted even when the wait ends in -ETIME/-EINTR */
		uu_tw_run_local(r, cw->nr_wait, cw->nr_wait);
	}
	if (n < 0)
		return errno == EINTR ? -EINTR : -errno;
	if (n > 0 && (cw->pfd[1].revents & POLLIN)) {
		uint64_t v;

		if (uu_fault_errno(UU_FAULT_EVENTFD_EAGAIN, EAGAIN) ||
		    read(cw->pfd[1].fd, &v, sizeof(v)) < 0) {
			/* another waiter drained it first */
		}
		/* the ring just became shared: this process's other
		 * waiters, asleep without the recheck, look again */
		if (!cw->xshared)
			uu_wake_all_waiters(r);
	}
	if (n > 0) {
		uint64_t v;

		if ((cw->pfd[0].revents & POLLIN) &&
		    (uu_fault_errno(UU_FAULT_EVENTFD_EAGAIN, EAGAIN) ||
		     read(cw->efd, &v, sizeof(v)) < 0)) {
			/* EAGAIN: a stale wake; harmless */
		}
		uu_stat_inc(r, wakeups);
		atomic_store_explicit(&w->woken, false, memory_order_relaxed);
		tail = cq_tail_acquire(r);
		if ((int32_t)(tail - w->target) < 0 && !timeout_hit(r, w) &&
		    !atomic_load(&r->ovf_pending) && !atomic_load(&r->cq_dropped))
			uu_stat_inc(r, spurious_wakeups);
		return WAIT_AGAIN;
	}
	return capped ? WAIT_AGAIN : WAIT_TIMEOUT;
}

/*
 * The timer in force expired (io_cqring_min_timer_wakeup): the overall
 * timeout ends the wait; min_wait's ends it too when there is no overall
 * timeout or any CQE is in the ring (posted since the wait began or not).
 * Otherwise any new CQE ends the wait, up to the overall timeout.
 */
static int wait_timeout(struct cq_wait *cw)
{
	struct uu_ring *r = cw->r;

	if (!cw->min_phase)
		return -ETIME;
	cw->min_phase = false;
	if (!cw->a.ts_set || cq_tail_acquire(r) != cw->min_tail ||
	    cw->min_tail != atomic_load_explicit(r->cq_head,
						 memory_order_acquire))
		return -ETIME;
	uu_lock_cls(&r->wait_lock, UU_LOCK_CQ_WAITERS);
	cw->w->target = cw->min_tail + 1;
	pthread_mutex_unlock(&r->wait_lock);
	return WAIT_AGAIN;
}

/* the waiter leaves the ring; the wait's result */
static int wait_end(struct cq_wait *cw, int ret)
{
	struct uu_ring *r = cw->r;

	waiter_del(r, cw->w);
	if (cw->xcounted)
		atomic_fetch_sub_explicit(&r->xs->xsleepers, 1,
					  memory_order_relaxed);
	/* drain a wake that raced with our exit so it cannot look spurious
	 * to the next wait of this thread */
	if (atomic_load_explicit(&cw->w->woken, memory_order_relaxed)) {
		uint64_t v;

		if (uu_fault_errno(UU_FAULT_EVENTFD_EAGAIN, EAGAIN) ||
		    read(cw->efd, &v, sizeof(v)) < 0) {
		}
	}
	if (atomic_load_explicit(r->cq_head, memory_order_acquire) !=
	    cq_tail_acquire(r))
		return 0;
	return ret;
}

int uu_cq_wait(struct uu_ring *r, unsigned int min_events, unsigned int flags,
	       const void *argp, size_t argsz)
{
	struct cq_wait cw;
	struct uu_waiter *w;
	uint32_t head;
	int ret;

	cw.r = r;
	cw.defer = r->setup_flags & IORING_SETUP_DEFER_TASKRUN;
	ret = parse_args(r, flags, argp, argsz, &cw.a);
	if (ret)
		return ret;
	if (cw.defer) {
		/* only the submitter may run its deferred task_work */
		if (atomic_load(r->submitter_tid) != uu_gettid())
			return -EEXIST;
		/* readiness already signalled becomes task_work first */
		if (atomic_load_explicit(&r->inflight, memory_order_relaxed))
			uu_poller_sync();
		uu_tw_run_local(r, (int)min_events,
				uu_tw_max_events((int)min_events));
	}

	uu_cq_flush_overflow(r);
	head = atomic_load_explicit(r->cq_head, memory_order_acquire);
	if (cq_tail_acquire(r) - head >= min_events)
		return 0;

	ret = wait_init_timers(&cw, flags);
	if (ret)
		return ret;
	cw.efd = thread_efd();
	if (cw.efd < 0)
		return cw.efd;
	/* the slot is this frame's (waiter_slot says why) */
	w = waiter_slot(__builtin_frame_address(0));
	if (!w)
		return -EINTR; /* waits nested deeper than any program does */
	w->frame = __builtin_frame_address(0);
	w->target = head + min_events;
	w->efd = cw.efd;
	w->any_new = false;
	w->nr_timeouts = atomic_load_explicit(&r->cq_timeouts,
					      memory_order_relaxed);
	atomic_store(&w->woken, false);
	cw.w = w;
	cw.min_tail = cq_tail_acquire(r);
	cw.xcounted = false;
	uu_stat_inc(r, waits);
	register_waiter(r, w);

	for (bool first = true;; first = false) {
		ret = wait_check(&cw, first);
		if (ret == WAIT_SLEEP)
			ret = wait_sleep(&cw);
		if (ret == WAIT_TIMEOUT)
			ret = wait_timeout(&cw);
		if (ret != WAIT_AGAIN)
			break;
	}
	return wait_end(&cw, ret);
}
