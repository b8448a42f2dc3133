// SPDX-License-Identifier: MIT
/*
 * Waiting for CQEs (enter with GETEVENTS), and the wakeups.
 * Protocol and fence pairing: docs/architecture.md "Waiting and wakeups".
 *
 * A waiter sleeps in ppoll() on its thread's eventfd.  ppoll installs the
 * enter's sigmask atomically and returns EINTR for any handled signal
 * whatever SA_RESTART says, exactly as io_uring_enter does.  Posters wake
 * only waiters whose target tail was reached (seed 003), so a waiter for
 * 128 CQEs is woken once, not 128 times.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
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

static inline bool waiter_satisfied(struct uu_ring *r, struct uu_waiter *w,
				    uint32_t tail)
{
	return (int32_t)(tail - w->target) >= 0 ||
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

static void ts_add_ns(struct timespec *t, uint64_t ns)
{
	t->tv_sec += (time_t)(ns / 1000000000ull);
	t->tv_nsec += (long)(ns % 1000000000ull);
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static int ts_cmp(const struct timespec *a, const struct timespec *b)
{
	if (a->tv_sec != b->tv_sec)
		return a->tv_sec < b->tv_sec ? -1 : 1;
	return a->tv_nsec < b->tv_nsec ? -1 : a->tv_nsec > b->tv_nsec;
}

/* Relative time from now to deadline, or zero if past. */
static struct timespec ts_remaining(const struct timespec *deadline)
{
	struct timespec now, rem = { 0, 0 };

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (ts_cmp(&now, deadline) >= 0)
		return rem;
	rem.tv_sec = deadline->tv_sec - now.tv_sec;
	rem.tv_nsec = deadline->tv_nsec - now.tv_nsec;
	if (rem.tv_nsec < 0) {
		rem.tv_sec--;
		rem.tv_nsec += 1000000000L;
	}
	return rem;
}

/* io_get_ext_arg + set_user_sigmask checks. */
static int parse_args(unsigned int flags, const void *argp, size_t argsz,
		      sigset_t *mask, bool *has_mask, bool *ts_set,
		      struct timespec *ts, uint64_t *min_wait_ns)
{
	const void *sig = argp;
	size_t sigsz = argsz;
	int ret;

	*has_mask = false;
	*ts_set = false;
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
			ts->tv_sec = (time_t)kts.tv_sec;
			ts->tv_nsec = (long)kts.tv_nsec;
			*ts_set = true;
		}
	}
	if (sig) {
		if (sigsz != KERNEL_SIGSET_SIZE)
			return -EINVAL;
		sigemptyset(mask);
		ret = uu_copy_from_user(mask, sig, KERNEL_SIGSET_SIZE);
		if (ret)
			return ret;
		*has_mask = true;
	}
	return 0;
}

static void waiter_add(struct uu_ring *r, struct uu_waiter *w)
{
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
	atomic_fetch_sub_explicit(&r->nr_sleepers, 1, memory_order_relaxed);
	pthread_mutex_lock(&r->wait_lock);
	if (w->prev)
		w->prev->next = w->next;
	else
		r->waiters = w->next;
	if (w->next)
		w->next->prev = w->prev;
	pthread_mutex_unlock(&r->wait_lock);
}

static inline uint32_t cq_tail_acquire(struct uu_ring *r)
{
	return atomic_load_explicit(r->cq_tail, memory_order_acquire);
}

int uu_cq_wait(struct uu_ring *r, unsigned int min_events, unsigned int flags,
	       const void *argp, size_t argsz)
{
	struct timespec ts = { 0, 0 }, start, deadline, min_deadline;
	struct uu_waiter w;
	sigset_t mask;
	bool has_mask, ts_set, min_phase;
	uint64_t min_wait_ns;
	uint32_t head, min_tail;
	int ret, efd;

	ret = parse_args(flags, argp, argsz, &mask, &has_mask, &ts_set, &ts,
			 &min_wait_ns);
	if (ret)
		return ret;

	uu_cq_flush_overflow(r);
	head = atomic_load_explicit(r->cq_head, memory_order_acquire);
	if (cq_tail_acquire(r) - head >= min_events)
		return 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	if (ts_set) {
		if (flags & IORING_ENTER_ABS_TIMER) {
			deadline = ts;
		} else {
			deadline = start;
			ts_add_ns(&deadline, (uint64_t)ts.tv_sec * 1000000000ull +
					     (uint64_t)ts.tv_nsec);
		}
	}
	min_phase = min_wait_ns != 0;
	if (min_phase) {
		min_deadline = start;
		ts_add_ns(&min_deadline, min_wait_ns);
	}

	efd = thread_efd();
	if (efd < 0)
		return efd;
	w.target = head + min_events;
	w.efd = efd;
	w.any_new = false;
	atomic_init(&w.woken, false);
	min_tail = cq_tail_acquire(r);
	uu_stat_inc(r, waits);
	waiter_add(r, &w);

	for (bool first = true;; first = false) {
		struct pollfd pfd = { .fd = efd, .events = POLLIN };
		struct timespec rem, *tmo = NULL;
		uint32_t tail;
		int n;

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
		if ((int32_t)(tail - w.target) >= 0) {
			ret = 0;
			break;
		}
		if (min_phase) {
			if (ts_set && ts_cmp(&deadline, &min_deadline) < 0)
				rem = ts_remaining(&deadline);
			else
				rem = ts_remaining(&min_deadline);
			tmo = &rem;
		} else if (ts_set) {
			rem = ts_remaining(&deadline);
			tmo = &rem;
		}
		n = ppoll(&pfd, 1, tmo, has_mask ? &mask : NULL);
		if (n < 0) {
			if (errno == EINTR) {
				ret = -EINTR;
				break;
			}
			ret = -errno;
			break;
		}
		if (n > 0) {
			uint64_t v;

			if (read(efd, &v, sizeof(v)) < 0) {
				/* EAGAIN: someone else's stale wake; harmless */
			}
			uu_stat_inc(r, wakeups);
			atomic_store_explicit(&w.woken, false, memory_order_relaxed);
			tail = cq_tail_acquire(r);
			if ((int32_t)(tail - w.target) < 0 &&
			    !atomic_load(&r->ovf_pending) &&
			    !atomic_load(&r->cq_dropped))
				uu_stat_inc(r, spurious_wakeups);
			continue;
		}
		/* a timer expired */
		if (min_phase && !(ts_set && ts_cmp(&deadline, &min_deadline) <= 0)) {
			/* min_wait over: return what arrived, if anything;
			 * otherwise any new CQE ends the wait */
			min_phase = false;
			tail = cq_tail_acquire(r);
			if (tail != min_tail ||
			    tail != atomic_load_explicit(r->cq_head,
							 memory_order_acquire)) {
				ret = -ETIME;
				break;
			}
			pthread_mutex_lock(&r->wait_lock);
			w.target = min_tail + 1;
			pthread_mutex_unlock(&r->wait_lock);
			if (!ts_set) {
				/* no overall timeout: wait for that CQE */
			}
			continue;
		}
		ret = -ETIME;
		break;
	}
	waiter_del(r, &w);
	/* drain a wake that raced with our exit so it cannot look spurious
	 * to the next wait of this thread */
	if (atomic_load_explicit(&w.woken, memory_order_relaxed)) {
		uint64_t v;

		if (read(efd, &v, sizeof(v)) < 0) {
		}
	}
	if (atomic_load_explicit(r->cq_head, memory_order_acquire) !=
	    cq_tail_acquire(r))
		return 0;
	return ret;
}
