// SPDX-License-Identifier: MIT
/*
 * The timer thread: one per process, started on first use.  Timers live
 * in one min-heap per clock (MONOTONIC, BOOTTIME, REALTIME); each heap's
 * earliest deadline is programmed into a timerfd with TFD_TIMER_ABSTIME,
 * so REALTIME timeouts follow clock_settime (T15).  The thread runs with
 * 1 ns timer slack (the default 50 us would make short timeouts and
 * min_wait meaningless) and every async signal blocked (T8).
 *
 * A timer is armed with uu_timer_arm() and disarmed with
 * uu_timer_cancel(), which says whether it was still pending: false means
 * the callback has run or is about to, and owns what follows.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "core/registry.h"
#include "core/tctx.h"
#include "core/types.h"
#include "exec/timer.h"
#include "util/fault.h"
#include "util/fdutil.h"
#include "util/forkhook.h"
#include "util/rawsys.h"

#define NCLOCKS 3
static const clockid_t clock_ids[NCLOCKS] = { CLOCK_MONOTONIC, CLOCK_BOOTTIME,
					      CLOCK_REALTIME };

static struct {
	pthread_mutex_t lock;
	struct uu_timer **heap[NCLOCKS];
	unsigned int nr[NCLOCKS], cap[NCLOCKS];
	int tfd[NCLOCKS];
	int epfd;
	bool up;
} T = { .lock = PTHREAD_MUTEX_INITIALIZER, .epfd = -1,
	.tfd = { -1, -1, -1 } };

/* Started on first use, and again in a forked child (see ensure_started;
 * the inherited timerfds are the parent's: programming them from the
 * child would move the parent's deadlines). */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool started; /* release: pairs with ensure_started's acquire */

int64_t uu_clock_now(int clock)
{
	struct timespec ts;

	clock_gettime(clock_ids[clock], &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void swap_at(struct uu_timer **h, unsigned int a, unsigned int b)
{
	struct uu_timer *t = h[a];

	h[a] = h[b];
	h[b] = t;
	h[a]->heap_idx = (int)a;
	h[b]->heap_idx = (int)b;
}

static void sift_up(struct uu_timer **h, unsigned int i)
{
	while (i && h[(i - 1) / 2]->expires > h[i]->expires) {
		swap_at(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void sift_down(struct uu_timer **h, unsigned int n, unsigned int i)
{
	for (;;) {
		unsigned int l = 2 * i + 1, m = i;

		if (l < n && h[l]->expires < h[m]->expires)
			m = l;
		if (l + 1 < n && h[l + 1]->expires < h[m]->expires)
			m = l + 1;
		if (m == i)
			return;
		swap_at(h, i, m);
		i = m;
	}
}

static void heap_remove(int c, unsigned int i)
{
	struct uu_timer **h = T.heap[c];
	unsigned int last = --T.nr[c];

	h[i]->heap_idx = -1;
	if (i != last) {
		h[i] = h[last];
		h[i]->heap_idx = (int)i;
		sift_down(h, last, i);
		sift_up(h, i);
	}
}

/* Program clock c's timerfd for its earliest deadline (lock held). */
static void reprogram(int c)
{
	struct itimerspec its = { 0 };

	if (T.nr[c]) {
		int64_t e = T.heap[c][0]->expires;

		if (e <= 0)
			e = 1; /* 0 would disarm */
		its.it_value.tv_sec = e / 1000000000LL;
		its.it_value.tv_nsec = e % 1000000000LL;
	}
	timerfd_settime(T.tfd[c], TFD_TIMER_ABSTIME, &its, NULL);
}

static void *timer_main(void *arg)
{
	struct epoll_event evs[NCLOCKS];

	(void)arg;
	uu_tctx.engine_thread = true;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	pthread_setname_np(pthread_self(), "uuring-timer");
	uu_thread_ready();
	for (;;) {
		/* EINTR: no events, wait again */
		int n = uu_fault_errno(UU_FAULT_EPOLL_WAIT_EINTR, EINTR) ?
				-1 :
				epoll_wait(T.epfd, evs, NCLOCKS, -1);

		for (int i = 0; i < n; i++) {
			int c = (int)evs[i].data.u32;
			uint64_t v;

			if (uu_fault_errno(UU_FAULT_EVENTFD_EAGAIN, EAGAIN) ||
			    read(T.tfd[c], &v, sizeof(v)) < 0) {
				/* EAGAIN: re-programmed meanwhile */
			}
			for (;;) {
				struct uu_timer *t = NULL;

				pthread_mutex_lock(&T.lock);
				if (T.nr[c] &&
				    T.heap[c][0]->expires <= uu_clock_now(c)) {
					t = T.heap[c][0];
					heap_remove(c, 0);
				}
				if (!t)
					reprogram(c);
				pthread_mutex_unlock(&T.lock);
				if (!t)
					break;
				t->fn(t);
			}
		}
	}
	return NULL;
}

static void timer_start(void)
{
	T.epfd = uu_fault(UU_FAULT_EPOLL_CREATE) ? -1 :
						   epoll_create1(EPOLL_CLOEXEC);
	if (T.epfd < 0)
		goto fail;
	T.epfd = uu_fd_to_reserved(T.epfd);
	for (int c = 0; c < NCLOCKS; c++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)c };

		T.tfd[c] = uu_fault(UU_FAULT_TIMERFD) ? -1 :
			   timerfd_create(clock_ids[c],
					  TFD_CLOEXEC | TFD_NONBLOCK);
		if (T.tfd[c] < 0)
			goto fail;
		T.tfd[c] = uu_fd_to_reserved(T.tfd[c]);
		if (epoll_ctl(T.epfd, EPOLL_CTL_ADD, T.tfd[c], &ev))
			goto fail;
	}
	if (!uu_thread_start(timer_main, NULL)) {
		T.up = true;
		return;
	}
fail:
	/* nothing stays behind a start that failed (its timers got
	 * -ENOMEM): the next timer tries again */
	for (int c = 0; c < NCLOCKS; c++) {
		if (T.tfd[c] >= 0)
			close(T.tfd[c]);
		T.tfd[c] = -1;
	}
	if (T.epfd >= 0)
		close(T.epfd);
	T.epfd = -1;
}

static void ensure_started(void)
{
	/* acquire: pairs with the release below (T.up, the fds) */
	if (atomic_load_explicit(&started, memory_order_acquire))
		return;
	pthread_mutex_lock(&start_lock);
	if (!atomic_load_explicit(&started, memory_order_relaxed)) {
		timer_start();
		if (T.up)
			atomic_store_explicit(&started, true,
					      memory_order_release);
	}
	pthread_mutex_unlock(&start_lock);
}

void uu_timer_prewarm(void)
{
	ensure_started();
}

/*
 * fork: the child has no timer thread.  The pending timers are the
 * parent's requests (foreign rings in the child): forgotten; the child's
 * copies of the epoll and timerfds are closed, and its first timer starts
 * a new set.
 */
void uu_timer_atfork_prepare(void)
{
	pthread_mutex_lock(&start_lock);
	pthread_mutex_lock(&T.lock);
}

void uu_timer_atfork_parent(void)
{
	pthread_mutex_unlock(&T.lock);
	pthread_mutex_unlock(&start_lock);
}

void uu_timer_atfork_child(void)
{
	/* released, not re-initialised (see uu_poller_atfork_child) */
	pthread_mutex_unlock(&T.lock);
	pthread_mutex_unlock(&start_lock);
	if (!atomic_load_explicit(&started, memory_order_relaxed))
		return;
	for (int c = 0; c < NCLOCKS; c++) {
		/* a cancel of one of them in the child finds it not pending */
		for (unsigned int i = 0; i < T.nr[c]; i++)
			T.heap[c][i]->heap_idx = -1;
		T.nr[c] = 0;
		if (T.tfd[c] >= 0)
			uu_sys_close(T.tfd[c]);
		T.tfd[c] = -1;
	}
	if (T.epfd >= 0)
		uu_sys_close(T.epfd);
	T.epfd = -1;
	T.up = false;
	atomic_store_explicit(&started, false, memory_order_relaxed);
}

UU_FORK_HOOK(timer_fork_hook, UU_FORK_RANK_TIMER, uu_timer_atfork_prepare,
	     uu_timer_atfork_parent, uu_timer_atfork_child)

int uu_timer_arm(struct uu_timer *t)
{
	int c = t->clock;

	ensure_started();
	if (!T.up)
		return -ENOMEM;
	pthread_mutex_lock(&T.lock);
	if (T.nr[c] == T.cap[c]) {
		unsigned int cap = T.cap[c] ? 2 * T.cap[c] : 64;
		struct uu_timer **h = realloc(T.heap[c], cap * sizeof(*h));

		if (!h) {
			pthread_mutex_unlock(&T.lock);
			return -ENOMEM;
		}
		T.heap[c] = h;
		T.cap[c] = cap;
	}
	t->heap_idx = (int)T.nr[c];
	T.heap[c][T.nr[c]++] = t;
	sift_up(T.heap[c], (unsigned int)t->heap_idx);
	if (T.heap[c][0] == t)
		reprogram(c);
	pthread_mutex_unlock(&T.lock);
	return 0;
}

bool uu_timer_cancel(struct uu_timer *t)
{
	bool pending;

	if (!T.up)
		return false;
	pthread_mutex_lock(&T.lock);
	pending = t->heap_idx >= 0;
	if (pending)
		heap_remove(t->clock, (unsigned int)t->heap_idx);
	pthread_mutex_unlock(&T.lock);
	return pending;
}
