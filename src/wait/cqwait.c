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
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "util/fdutil.h"
#include "util/usercopy.h"

#define KERNEL_SIGSET_SIZE 8 /* _NSIG / 8 on x86-64 */

static __thread int wait_efd = -1;
static __thread ino_t wait_efd_ino;
static pthread_key_t efd_key;
static pthread_once_t efd_once = PTHREAD_ONCE_INIT;

static void efd_destroy(void *arg)
{
	(void)arg;
	if (wait_efd >= 0 && uu_fd_ino(wait_efd) == wait_efd_ino)
		close(wait_efd);
	wait_efd = -1;
}

static void efd_key_init(void)
{
	pthread_key_create(&efd_key, efd_destroy);
}

/* This thread's wake eventfd, re-created if the app closed it (T4). */
static int thread_efd(void)
{
	if (wait_efd >= 0 && uu_fd_ino(wait_efd) == wait_efd_ino)
		return wait_efd;
	pthread_once(&efd_once, efd_key_init);
	wait_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (wait_efd < 0)
		return -errno;
	wait_efd = uu_fd_to_reserved(wait_efd);
	wait_efd_ino = uu_fd_ino(wait_efd);
	pthread_setspecific(efd_key, (void *)1);
	return wait_efd;
}

/*
 * fork: the child's copy of the wake eventfd is the parent thread's file;
 * sleeping on it in the child would consume the parent's wakeups.  The
 * child's first sleep creates its own.
 */
void uu_wait_atfork_child(void)
{
	if (wait_efd >= 0 && uu_fd_ino(wait_efd) == wait_efd_ino)
		close(wait_efd);
	wait_efd = -1;
}

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

/* Poster side, after the seq_cst fence in uu_cq_commit_locked. */
void uu_wake_waiters(struct uu_ring *r)
{
	uint32_t tail = atomic_load_explicit(r->cq_tail, memory_order_relaxed);
	struct uu_waiter *w;
	uint64_t one = 1;

	pthread_mutex_lock(&r->wait_lock);
	for (w = r->waiters; w; w = w->next) {
		if (atomic_load_explicit(&w->woken, memory_order_relaxed) ||
		    !waiter_satisfied(r, w, tail))
			continue;
		atomic_store_explicit(&w->woken, true, memory_order_relaxed);
		if (write(w->efd, &one, sizeof(one)) < 0) {
			/* the eventfd is non-blocking and never near full */
		}
	}
	pthread_mutex_unlock(&r->wait_lock);
}

/* Every waiter of this process, satisfied or not: they look again (a
 * ring becoming shared across processes, ring/xproc.c). */
void uu_wake_all_waiters(struct uu_ring *r)
{
	struct uu_waiter *w;
	uint64_t one = 1;

	pthread_mutex_lock(&r->wait_lock);
	for (w = r->waiters; w; w = w->next) {
		atomic_store_explicit(&w->woken, true, memory_order_relaxed);
		if (write(w->efd, &one, sizeof(one)) < 0) {
		}
	}
	pthread_mutex_unlock(&r->wait_lock);
}

#define NS_PER_SEC 1000000000LL
#define KTIME_MAX INT64_MAX
/* while a ring is shared across processes, a sleeping waiter looks at
 * the CQ at least this often (ring/xproc.c) */
#define XPROC_RECHECK_NS (1000 * 1000)

static __thread clockid_t wait_clock = CLOCK_MONOTONIC;

static int64_t mono_now(void)
{
	struct timespec t;

	clock_gettime(wait_clock, &t);
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
};

static int parse_args(unsigned int flags, const void *argp, size_t argsz,
		      struct wait_args *a, uint64_t *min_wait_ns)
{
	const void *sig = argp;
	size_t sigsz = argsz;
	int ret;

	a->ts_set = false;
	*min_wait_ns = 0;
	if (flags & IORING_ENTER_EXT_ARG) {
		struct io_uring_getevents_arg arg;

		if (flags & IORING_ENTER_EXT_ARG_REG)
			return -EINVAL; /* no registered wait regions yet */
		if (argsz != sizeof(arg))
			return -EINVAL;
		ret = uu_copy_from_user(&arg, argp, sizeof(arg));
		if (ret)
			return ret;
		*min_wait_ns = (uint64_t)arg.min_wait_usec * 1000ull;
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
 * itself, inside the interrupted wait, takes the next slot.
 */
#define WAIT_SLOTS 8
static __thread struct uu_waiter wait_slots[WAIT_SLOTS];

static void waiter_del(struct uu_ring *r, struct uu_waiter *w);

static struct uu_waiter *waiter_slot(void *frame)
{
	struct uu_waiter *free_slot = NULL;

	for (int i = 0; i < WAIT_SLOTS; i++) {
		struct uu_waiter *w = &wait_slots[i];

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

static void waiter_add(struct uu_ring *r, struct uu_waiter *w)
{
	atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
	w->ring = r;
#ifdef UURING_MUTATE_NO_WAKE_FENCE
	/* the broken build also widens the window between the caller's
	 * "not enough CQEs" check and the registration, so that the missing
	 * recheck is hit within a few rounds on 2 CPUs */
	usleep(2000);
#endif
	pthread_mutex_lock(&r->wait_lock);
	w->prev = NULL;
	w->next = r->waiters;
	if (r->waiters)
		r->waiters->prev = w;
	r->waiters = w;
	pthread_mutex_unlock(&r->wait_lock);
	/* seq_cst RMW + fence: pairs with the poster's fence in
	 * uu_cq_commit_locked (store tail; fence; load nr_sleepers) */
	atomic_fetch_add_explicit(&r->nr_sleepers, 1, memory_order_seq_cst);
#ifndef UURING_MUTATE_NO_WAKE_FENCE
	atomic_thread_fence(memory_order_seq_cst);
#endif
}

static void waiter_del(struct uu_ring *r, struct uu_waiter *w)
{
	/* already taken off (a stale-slot sweep from a handler on another
	 * stack): nothing to undo */
	if (w->ring != r)
		return;
	atomic_fetch_sub_explicit(&r->nr_sleepers, 1, memory_order_relaxed);
	pthread_mutex_lock(&r->wait_lock);
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

static inline uint32_t cq_tail_acquire(struct uu_ring *r)
{
	return atomic_load_explicit(r->cq_tail, memory_order_acquire);
}

int uu_cq_wait(struct uu_ring *r, unsigned int min_events, unsigned int flags,
	       const void *argp, size_t argsz)
{
	struct wait_args a;
	struct uu_waiter *wp;
	sigset_t mask;
	bool min_phase;
	uint64_t min_wait_ns;
	int64_t start, deadline = KTIME_MAX, min_deadline = KTIME_MAX;
	uint32_t head, min_tail;
	bool xcounted = false;
	int ret, efd;

	bool defer = r->setup_flags & IORING_SETUP_DEFER_TASKRUN;

	ret = parse_args(flags, argp, argsz, &a, &min_wait_ns);
	if (ret)
		return ret;
	if (defer) {
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

	/* IORING_REGISTER_CLOCK: timeouts (and ABS_TIMER) on that clock */
	wait_clock = r->clockid;
	start = mono_now();
	if (a.ts_set)
		deadline = (flags & IORING_ENTER_ABS_TIMER) ? a.ts_ns :
							     add_sat(start, a.ts_ns);
	min_phase = min_wait_ns != 0;
	if (min_phase)
		min_deadline = add_sat(start, (int64_t)min_wait_ns);
	ret = load_sigmask(&a, &mask);
	if (ret)
		return ret;

	efd = thread_efd();
	if (efd < 0)
		return efd;
	wp = waiter_slot(__builtin_frame_address(0));
	if (!wp)
		return -EINTR; /* waits nested deeper than any program does */
#define w (*wp)
	w.frame = __builtin_frame_address(0);
	w.target = head + min_events;
	w.efd = efd;
	w.any_new = false;
	w.nr_timeouts = atomic_load_explicit(&r->cq_timeouts,
					     memory_order_relaxed);
	atomic_store(&w.woken, false);
	min_tail = cq_tail_acquire(r);
	uu_stat_inc(r, waits);
	waiter_add(r, &w);

	for (bool first = true;; first = false) {
		struct pollfd pfd[2] = { { .fd = efd, .events = POLLIN },
					 { .fd = -1, .events = POLLIN } };
		struct timespec buf, *tmo;
		bool capped = false, xshared;
		uint32_t tail;
		int32_t nr_wait;
		int n;

		/*
		 * A ring a forked child may use (ring/xproc.c): also watch the
		 * eventfd its other processes' posts write, counted in
		 * xs->xsleepers before the CQ check below (the fence of the
		 * Dekker pair with uu_cq_commit_locked).
		 */
		pfd[1].fd = atomic_load_explicit(&r->xwake_fd,
						 memory_order_relaxed);
		if (pfd[1].fd >= 0 && !xcounted) {
			atomic_fetch_add_explicit(&r->xs->xsleepers, 1,
						  memory_order_seq_cst);
			atomic_thread_fence(memory_order_seq_cst);
			xcounted = true;
		}
		xshared = pfd[1].fd >= 0 && uu_ring_xshared(r);
		/* a process of the ring that is gone without posting its
		 * CQEs: they are posted now (ring/xlife.c) */
		if (xshared)
			uu_xlife_check();

		if (atomic_load_explicit(&r->ovf_pending, memory_order_acquire))
			uu_cq_flush_overflow(r);
		if (atomic_load_explicit(&r->cq_dropped, memory_order_acquire)) {
			ret = -EBADR;
			break;
		}
		tail = cq_tail_acquire(r);
#ifdef UURING_MUTATE_NO_WAKE_FENCE
		/* deliberately broken build: no recheck after registering */
		if (first)
			tail = w.target - 1;
#endif
		(void)first;
		/* cq_timeouts is read after waiter_add's fence: either we see
		 * an expiry or its poster sees us (uu_wake_waiters) */
		if ((int32_t)(tail - w.target) >= 0 || timeout_hit(r, &w)) {
			ret = 0;
			break;
		}
		/*
		 * min_wait (the kernel's two-phase rule): the first timer is
		 * start + min_wait, whatever the overall timeout says.
		 */
		/* the completions still needed (io_cqring_wait's nr_wait) */
		nr_wait = (int32_t)(w.target - tail);
		if (nr_wait < 1)
			nr_wait = 1;
		if (defer) {
			/* lazy wake: publish how many completions we need;
			 * pairs with the fence in core/req.c tw_queue */
			atomic_store_explicit(&r->tw_waiter_efd, efd,
					      memory_order_relaxed);
			atomic_store_explicit(&r->tw_wait_nr,
					      (unsigned int)nr_wait,
					      memory_order_seq_cst);
			atomic_thread_fence(memory_order_seq_cst);
			/* any queued task_work is run rather than slept on
			 * (io_cqring_wait_schedule), nr_wait items at most */
			if (atomic_load_explicit(&r->tw_pending,
						 memory_order_relaxed)) {
				atomic_store(&r->tw_wait_nr, 0);
				uu_tw_run_local(r, nr_wait, nr_wait);
				continue;
			}
		}
		tmo = until(min_phase ? min_deadline : deadline, &buf);
		if (xshared && (!tmo || tmo->tv_sec ||
				tmo->tv_nsec > XPROC_RECHECK_NS)) {
			/* a wakeup taken by another process's waiter is
			 * made up for by looking again (ring/xproc.c) */
			buf.tv_sec = 0;
			buf.tv_nsec = XPROC_RECHECK_NS;
			tmo = &buf;
			capped = true;
		}
		n = ppoll(pfd, pfd[1].fd >= 0 ? 2 : 1, tmo,
			  a.sig ? &mask : NULL);
		if (defer) {
			atomic_store(&r->tw_wait_nr, 0);
			/* as the kernel: completions queued meanwhile are
			 * posted even when the wait ends in -ETIME/-EINTR */
			uu_tw_run_local(r, nr_wait, nr_wait);
		}
		if (n < 0) {
			ret = errno == EINTR ? -EINTR : -errno;
			break;
		}
		if (n > 0 && (pfd[1].revents & POLLIN)) {
			uint64_t v;

			if (read(pfd[1].fd, &v, sizeof(v)) < 0) {
				/* another waiter drained it first */
			}
			/* the ring just became shared: this process's other
			 * waiters, asleep without the recheck, look again */
			if (!xshared)
				uu_wake_all_waiters(r);
		}
		if (n > 0) {
			uint64_t v;

			if ((pfd[0].revents & POLLIN) &&
			    read(efd, &v, sizeof(v)) < 0) {
				/* EAGAIN: a stale wake; harmless */
			}
			uu_stat_inc(r, wakeups);
			atomic_store_explicit(&w.woken, false, memory_order_relaxed);
			tail = cq_tail_acquire(r);
			if ((int32_t)(tail - w.target) < 0 &&
			    !timeout_hit(r, &w) &&
			    !atomic_load(&r->ovf_pending) &&
			    !atomic_load(&r->cq_dropped))
				uu_stat_inc(r, spurious_wakeups);
			continue;
		}
		if (capped)
			continue;
		if (!min_phase) {
			ret = -ETIME;
			break;
		}
		/* min_wait expired.  No overall timeout: done.  Any CQE in
		 * the ring (posted since the wait began or not): done.  Otherwise any new CQE ends the
		 * wait, up to the overall timeout. */
		min_phase = false;
		if (!a.ts_set || cq_tail_acquire(r) != min_tail ||
		    min_tail != atomic_load_explicit(r->cq_head,
						     memory_order_acquire)) {
			ret = -ETIME;
			break;
		}
		pthread_mutex_lock(&r->wait_lock);
		w.target = min_tail + 1;
		pthread_mutex_unlock(&r->wait_lock);
	}
	waiter_del(r, &w);
	if (xcounted)
		atomic_fetch_sub_explicit(&r->xs->xsleepers, 1,
					  memory_order_relaxed);
	/* drain a wake that raced with our exit so it cannot look spurious
	 * to the next wait of this thread */
	if (atomic_load_explicit(&w.woken, memory_order_relaxed)) {
		uint64_t v;

		if (read(efd, &v, sizeof(v)) < 0) {
		}
	}
#undef w
	if (atomic_load_explicit(r->cq_head, memory_order_acquire) !=
	    cq_tail_acquire(r))
		return 0;
	return ret;
}
