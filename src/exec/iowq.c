// SPDX-License-Identifier: MIT
/*
 * io-wq: worker pools that run requests which must block.
 * (Past 800 lines: the lists, the idle protocol, wakes and cancels share
 * their locks and are checked against each other, so they stay together.)
 *
 * One pool per submitting thread, as the kernel has one io_wq per task:
 * workers are created by that thread (pthread_create inherits its
 * credentials, seccomp filter and signal mask), so work runs with the
 * submitter's identity (T9).  Two classes, each with its own work-list
 * lock and its own worker-list lock (the kernel's io-wq keeps one per
 * class too): bounded (regular files,
 * block devices, no file) and unbounded (everything else).  No lock is
 * shared by all workers on the hot path and there are no spinlocks (T18):
 * futex-based mutexes, and each worker sleeps on its own futex word, so a
 * free worker is woken without holding the work-list lock.
 *
 * Workers are created on demand, up to the class limit (bounded:
 * min(sq_entries, 4 * CPUs); unbounded: RLIMIT_NPROC), exit after
 * UURING_IOWQ_IDLE_MS idle (default 5000), except the last one, and are
 * named iou-wrk-<owner tid> with every async signal blocked (T8) but the
 * private cancel signal.
 *
 * T7, cancelling running work: a worker's non-quick request is its
 * `cur` from the moment it leaves the work list (under the work-list
 * lock) until its issue returns, so a cancel finds it queued or current.
 * uu_iowq_cancel_running sets the worker's cancel word and tgkills it
 * with UURING_CANCEL_SIGNAL (util/cpsys.h), under the worker's cur_lock;
 * the op's blocking call (through uu_sys_cp) returns -EINTR even if the
 * signal landed just before the syscall instruction, and the op does not
 * retry it.  When the issue returns, the word is cleared and a signal not
 * yet delivered is taken with sigtimedwait, so none reaches a later call.
 * The owner thread's exit cancels queued work and interrupts running
 * work, as the kernel's task exit does; its bounded wait for the workers
 * is then only for ops that ignore the interrupt.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/lockstat.h"
#include "core/req.h"
#include "core/task_work.h"
#include "core/tctx.h"
#include "core/types.h"
#include "exec/iowq.h"
#include "util/cpsys.h"
#include "util/fault.h"
#include "util/forkhook.h"

struct uu_worker {
	struct uu_worker *next_free;
	struct uu_worker *all_next, *all_prev; /* acct->all, workers_lock */
	struct uu_wq_acct *acct;
	_Atomic uint32_t wake;    /* futex word: bumped by every wake */
	bool on_free_list;
	/*
	 * The request that may block here (T7), set when it is taken off
	 * the work list (under the work-list lock, so a cancel finds it
	 * either queued or here) and cleared when its issue returns; the
	 * cancel word is set and the signal sent under cur_lock.
	 */
	pthread_mutex_t cur_lock;
	struct uu_req *cur;
	pid_t tid;
	struct uu_cp cp;
#ifdef UURING_TEST_HOOKS
	bool test_holding;        /* in the push hold (workers_lock) */
#endif
};

struct uu_wq_acct {
	pthread_mutex_t lock;     /* work list */
	struct uu_req *head, *tail;
	unsigned int queued;
	pthread_mutex_t workers_lock; /* free list, all list and counts */
	struct uu_worker *free_list;
	struct uu_worker *all;    /* every worker, for cancels (T7) */
	unsigned int nr_workers, max_workers;
	/* workers awake and not blocked in a syscall (the kernel's
	 * nr_running, kept by hand: there is no scheduler hook) */
	atomic_int nr_running;
	struct uu_iowq *wq;
};

struct uu_iowq {
	atomic_int refs;          /* owner thread + queued work + workers */
	atomic_bool exiting;      /* the owner thread is gone */
	pid_t owner_tid;
	struct uu_wq_acct acct[2]; /* [0] bounded, [1] unbounded */
	/* UURING_IOWQ_LOCK=global, fixed at creation (wl_lock) */
	bool global;
	pthread_mutex_t global_lock;
	struct uu_worker *shared_free; /* both classes' free workers */
	/* IORING_REGISTER_IOWQ_AFF: CPUs of workers created from now on */
	pthread_mutex_t aff_lock;
	bool aff_set;
	cpu_set_t aff;
};

static void activate_more(struct uu_wq_acct *a);
static struct uu_req *pop_work(struct uu_wq_acct *a);
static void interrupt_locked(struct uu_worker *w);

static long futex(_Atomic uint32_t *uaddr, int op, uint32_t val,
		  const struct timespec *ts)
{
	/* EINTR: every wait here rechecks its condition (a spurious wake) */
	if ((op & FUTEX_CMD_MASK) == FUTEX_WAIT &&
	    uu_fault_errno(UU_FAULT_FUTEX_WAIT_EINTR, EINTR))
		return -1;
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

/*
 * UURING_IOWQ_LOCK=global models io-wq before its worker lists moved into
 * struct io_wq_acct with a lock per class: the free
 * and all-worker bookkeeping of both classes under one pool-wide lock
 * (the kernel's wq->lock), with one free list that a waker walks past the
 * other class's workers, and that lock also taken on every enqueue and
 * dequeue, nested inside the work-list lock (order: acct lock, global
 * lock, a worker's cur_lock).  split (the default) is today's io-wq: a
 * workers_lock and a free list per class.
 */
static void wl_lock(struct uu_wq_acct *a)
{
	if (unlikely(a->wq->global))
		uu_lock_cls(&a->wq->global_lock, UU_LOCK_IOWQ_GLOBAL);
	else
		uu_lock_cls(&a->workers_lock, UU_LOCK_IOWQ_WORKERS);
}

static void wl_unlock(struct uu_wq_acct *a)
{
	pthread_mutex_unlock(unlikely(a->wq->global) ? &a->wq->global_lock :
						       &a->workers_lock);
}

static struct uu_worker **free_head(struct uu_wq_acct *a)
{
	return unlikely(a->wq->global) ? &a->wq->shared_free : &a->free_list;
}

/* global mode: the pool-wide lock around a work-list change (the
 * caller holds the class's work-list lock) */
static void global_hold(struct uu_wq_acct *a, bool take)
{
	if (likely(!a->wq->global))
		return;
	if (take)
		uu_lock_cls(&a->wq->global_lock, UU_LOCK_IOWQ_GLOBAL);
	else
		pthread_mutex_unlock(&a->wq->global_lock);
}

void uu_iowq_put(struct uu_iowq *wq)
{
	if (atomic_fetch_sub_explicit(&wq->refs, 1, memory_order_acq_rel) == 1) {
		for (int i = 0; i < 2; i++) {
			pthread_mutex_destroy(&wq->acct[i].lock);
			pthread_mutex_destroy(&wq->acct[i].workers_lock);
		}
		pthread_mutex_destroy(&wq->global_lock);
		free(wq);
	}
}

/* the owner thread's exit (core/tctx.c) */
void uu_iowq_thread_exit(void)
{
	struct uu_iowq *wq = uu_tctx.wq;

	if (!wq)
		return;

	/* like the kernel's io-wq at task exit: idle workers leave now,
	 * busy ones once their work is done (the pool lives on while work
	 * or workers hold references) */
	uu_tctx.wq = NULL;
	atomic_store(&wq->exiting, true);
	for (int i = 0; i < 2; i++) {
		struct uu_wq_acct *a = &wq->acct[i];
		struct uu_req *r;

		/* the kernel's task exit cancels the task's io-wq work:
		 * queued work completes -ECANCELED, running work is
		 * interrupted (T7) */
		while ((r = pop_work(a))) {
			r->res = -ECANCELED;
			uu_req_finish_async(r);
		}
		wl_lock(a);
		for (struct uu_worker *w = *free_head(a); w; w = w->next_free) {
			if (w->acct != a)
				continue; /* global: the other class's */
			atomic_fetch_add_explicit(&w->wake, 1,
						  memory_order_release);
			futex(&w->wake, FUTEX_WAKE_PRIVATE, 1, NULL);
		}
		for (struct uu_worker *w = a->all; w; w = w->all_next) {
			pthread_mutex_lock(&w->cur_lock);
			if (w->cur)
				interrupt_locked(w);
			pthread_mutex_unlock(&w->cur_lock);
		}
		wl_unlock(a);
	}
	/* the kernel's task exit waits for its io-wq to go away: so that no
	 * iou-wrk thread outlives the thread that owned it, wait (bounded:
	 * an op that ignores the interrupt and goes on blocking is waited
	 * for no longer than a second) */
	for (int i = 0; i < 1000; i++) {
		unsigned int left = 0;

		for (int c = 0; c < 2; c++) {
			wl_lock(&wq->acct[c]);
			left += wq->acct[c].nr_workers;
			wl_unlock(&wq->acct[c]);
		}
		if (!left)
			break;
		usleep(1000);
	}
	uu_iowq_put(wq);
}

/*
 * fork: the forking thread's pool has no workers in the child (they are
 * the parent's threads); work queued there would wait forever.  The child
 * forgets it (its copy is the parent's state: leaked, not freed) and its
 * first punt creates a new pool.
 */
/* process-wide, for the statistics (relaxed: counters only) */
static atomic_ullong workers_alive[2], workers_created;

void uu_iowq_atfork_child(void)
{
	/* the child has no workers; it counts its own from zero */
	atomic_store_explicit(&workers_alive[0], 0, memory_order_relaxed);
	atomic_store_explicit(&workers_alive[1], 0, memory_order_relaxed);
	atomic_store_explicit(&workers_created, 0, memory_order_relaxed);
	uu_tctx.exit_work &= ~(unsigned int)UU_TCTX_EXIT_IOWQ;
	uu_tctx.wq = NULL;
	uu_tctx.wq_acct = NULL;
}

UU_FORK_HOOK(iowq_fork_hook, UU_FORK_RANK_IOWQ, NULL, NULL,
	     uu_iowq_atfork_child)

/*
 * Online CPUs, read once.  glibc's sysconf opens a /sys file: done from
 * an engine thread (the SQPOLL thread creates its pool at start) that
 * open would briefly take the lowest free fd number and race with the
 * application's own opens, so ring setup reads it first (uu_iowq_prewarm,
 * in the application's thread).
 */
static _Atomic unsigned int nr_cpus;

static unsigned int cpus(void)
{
	unsigned int n = atomic_load_explicit(&nr_cpus, memory_order_relaxed);
	long v;

	if (n)
		return n;
	v = sysconf(_SC_NPROCESSORS_ONLN);
	n = v > 0 ? (unsigned int)v : 1;
	atomic_store_explicit(&nr_cpus, n, memory_order_relaxed);
	return n;
}

void uu_iowq_prewarm(void)
{
	cpus();
}

static int idle_ms(void)
{
	const char *v = getenv("UURING_IOWQ_IDLE_MS");
	int ms = v ? atoi(v) : 0;

	return ms > 0 ? ms : 5000;
}

/* The calling thread's pool, created on first use. */
static struct uu_iowq *current_wq(struct uu_ring *ring)
{
	struct uu_iowq *wq = uu_tctx.wq;
	struct rlimit rl;

	if (wq)
		return wq;
	wq = calloc(1, sizeof(*wq));
	if (!wq)
		return NULL;
	atomic_init(&wq->refs, 1);
	wq->owner_tid = uu_gettid();
	pthread_mutex_init(&wq->aff_lock, NULL);
	pthread_mutex_init(&wq->global_lock, NULL);
	wq->global = uu_knob(iowq_global);
	for (int i = 0; i < 2; i++) {
		pthread_mutex_init(&wq->acct[i].lock, NULL);
		pthread_mutex_init(&wq->acct[i].workers_lock, NULL);
		wq->acct[i].wq = wq;
	}
	wq->acct[0].max_workers = ring->mem.sq_entries < 4 * cpus() ?
		ring->mem.sq_entries : 4 * cpus();
	if (getrlimit(RLIMIT_NPROC, &rl) || rl.rlim_cur > UINT32_MAX)
		wq->acct[1].max_workers = UINT32_MAX;
	else
		wq->acct[1].max_workers = (unsigned int)rl.rlim_cur;
	uu_tctx.wq = wq;
	uu_tctx_note_exit(UU_TCTX_EXIT_IOWQ);
	return wq;
}

static struct uu_req *pop_work(struct uu_wq_acct *a)
{
	struct uu_req *req;

	uu_lock_cls(&a->lock, UU_LOCK_IOWQ_WORK);
	global_hold(a, true);
	req = a->head;
	if (req) {
		a->head = req->wq_next;
		if (!a->head)
			a->tail = NULL;
		a->queued--;
	}
	global_hold(a, false);
	pthread_mutex_unlock(&a->lock);
	return req;
}

/*
 * Takes work off the queue: a run of up to 16 quick requests (opdef
 * .quick: IOSQE_ASYNC NOPs), whose completions are then posted with one
 * lock, or else one request, which may block (other workers should take
 * the rest in parallel).
 */
static struct uu_req *pop_batch(struct uu_wq_acct *a, struct uu_worker *w)
{
	struct uu_req *head, *req;
	unsigned int n = 1;

	uu_lock_cls(&a->lock, UU_LOCK_IOWQ_WORK);
	head = a->head;
	if (!head) {
		pthread_mutex_unlock(&a->lock);
		return NULL;
	}
	req = head;
	if (uu_opdefs[head->opcode].quick) {
		while (n < 16 && req->wq_next &&
		       uu_opdefs[req->wq_next->opcode].quick) {
			req = req->wq_next;
			n++;
		}
	}
	global_hold(a, true);
	a->head = req->wq_next;
	if (!a->head)
		a->tail = NULL;
	req->wq_next = NULL;
	a->queued -= n;
	global_hold(a, false);
	if (!uu_opdefs[head->opcode].quick) {
		/* off the list and current in one step: a cancel that no
		 * longer finds it queued finds it here (T7) */
		pthread_mutex_lock(&w->cur_lock);
		w->cur = head;
		pthread_mutex_unlock(&w->cur_lock);
	}
	pthread_mutex_unlock(&a->lock);
	return head;
}

static bool has_work(struct uu_wq_acct *a)
{
	bool r;

	uu_lock_cls(&a->lock, UU_LOCK_IOWQ_WORK);
	r = a->head != NULL;
	pthread_mutex_unlock(&a->lock);
	return r;
}

/* With workers_lock held. */
static void all_add(struct uu_wq_acct *a, struct uu_worker *w)
{
	w->all_prev = NULL;
	w->all_next = a->all;
	if (a->all)
		a->all->all_prev = w;
	a->all = w;
}

static void all_del(struct uu_wq_acct *a, struct uu_worker *w)
{
	if (w->all_prev)
		w->all_prev->all_next = w->all_next;
	else
		a->all = w->all_next;
	if (w->all_next)
		w->all_next->all_prev = w->all_prev;
}

/* With w->cur_lock held: interrupt w's current request. */
static void interrupt_locked(struct uu_worker *w)
{
	int sig = uu_cp_signal();

	/* read by the stub and by the handler once the signal is in: the
	 * kernel's delivery orders it after this store */
	atomic_store_explicit(&w->cp.cancel, 1, memory_order_release);
	if (sig > 0)
		syscall(SYS_tgkill, getpid(), w->tid, sig);
}

/*
 * The issue of this worker's current request returned: a cancel can no
 * longer reach it.  A signal sent for it and not delivered yet is taken
 * now (every send happened under cur_lock, before this), so that it
 * cannot interrupt a later call of this worker.
 */
void uu_iowq_issue_done(void)
{
	struct uu_worker *w = uu_tctx.wq_worker;
	int was;

	if (!w || !w->cur)
		return;
	pthread_mutex_lock(&w->cur_lock);
	w->cur = NULL;
	was = atomic_exchange_explicit(&w->cp.cancel, 0, memory_order_relaxed);
	pthread_mutex_unlock(&w->cur_lock);
	if (was && uu_cp_signal() > 0) {
		struct timespec zero = { 0, 0 };
		sigset_t one;

		sigemptyset(&one);
		sigaddset(&one, uu_cp_signal());
		pthread_sigmask(SIG_BLOCK, &one, NULL);
		while (sigtimedwait(&one, NULL, &zero) > 0)
			;
		pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	}
}

/* The pool req was queued to, for a cancel: req is on the parked list (a
 * cancel can see it) before it is queued, so the pool may not be set yet;
 * pairs with the release store in pool_for. */
static struct uu_iowq *req_pool(struct uu_req *req)
{
	return __atomic_load_n(&req->wq, __ATOMIC_ACQUIRE);
}

/*
 * Interrupts req if a worker of its pool is running it (the kernel's
 * io_wq_cancel_running_work with __set_notify_signal).  true if found.
 */
bool uu_iowq_cancel_running(struct uu_req *req)
{
	struct uu_iowq *wq = req_pool(req);
	bool found = false;

	if (!wq)
		return false;
	for (int i = 0; i < 2 && !found; i++) {
		struct uu_wq_acct *a = &wq->acct[i];

		wl_lock(a);
		for (struct uu_worker *w = a->all; w && !found; w = w->all_next) {
			pthread_mutex_lock(&w->cur_lock);
			if (w->cur == req) {
				interrupt_locked(w);
				found = true;
			}
			pthread_mutex_unlock(&w->cur_lock);
		}
		wl_unlock(a);
	}
	return found;
}

/* The calling thread's pool, if it has one (not created). */
struct uu_iowq *uu_iowq_current(void)
{
	return uu_tctx.wq;
}

/* With workers_lock held: takes w (which is on it) off the free list. */
static void free_unlink(struct uu_wq_acct *a, struct uu_worker *w)
{
	struct uu_worker **pp = free_head(a);

	while (*pp != w)
		pp = &(*pp)->next_free;
	*pp = w->next_free;
	w->on_free_list = false;
}

#ifdef UURING_TEST_HOOKS
/*
 * Test build only (libuuring_hooks, tests/test_iowq_stale_wake): holds
 * open the window in which a wake arrives late, so that a test reaches
 * it every round instead of once in thousands, and checks the free list
 * at every push.  Off until the test sets uu_test_iowq_hold_us.
 *   push hold: a worker that just pushed itself waits (up to hold_us) to
 *     be taken off the list before it looks at the work list;
 *   wake hold: a waker that took a worker off the list during its push
 *     hold waits (up to 4 * hold_us) for it to be back on the list (it
 *     found the work itself, ran it and went idle again) before it wakes
 *     it: the wake then lands in the worker's next idle period
 *     (uu_test_iowq_late_wakes counts these).  Here that delays the
 *     FUTEX_WAKE (the futex word is bumped at the pop); c6c7430^, which
 *     the test was checked against, bumped it after the hold too.
 * The knobs are relaxed atomics: they order nothing of the protocol.
 * A hold reads the state of the worker it waits on: the test keeps the
 * idle time far longer than the holds, so that no worker leaves (frees
 * itself) meanwhile.
 */
_Atomic int uu_test_iowq_hold_us;
_Atomic unsigned int uu_test_iowq_late_wakes;

static long long test_now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* Waits up to us for w's presence on the free list to become on; true
 * if it did. */
static bool test_hold(struct uu_wq_acct *a, struct uu_worker *w, bool on,
		      int us)
{
	long long end = test_now_us() + us;
	bool now;

	for (;;) {
		wl_lock(a);
		now = w->on_free_list;
		wl_unlock(a);
		if (now == on)
			return true;
		if (test_now_us() >= end)
			return false;
		usleep(20);
	}
}

/* With workers_lock held, before w is pushed: w is not on the list and
 * the list is a chain of at most nr_workers workers. */
static void test_pushing(struct uu_wq_acct *a, struct uu_worker *w)
{
	unsigned int n = 0;

	if (w->on_free_list) {
		fprintf(stderr, "uuring io-wq: worker %d pushed twice\n", w->tid);
		abort();
	}
	for (struct uu_worker *p = *free_head(a); p; p = p->next_free) {
		if (p == w || (p->acct == a && ++n > a->nr_workers)) {
			fprintf(stderr, "uuring io-wq: free list broken\n");
			abort();
		}
	}
	w->test_holding = atomic_load_explicit(&uu_test_iowq_hold_us,
					       memory_order_relaxed) > 0;
}

/* After the push, workers_lock dropped. */
static void test_push_hold(struct uu_wq_acct *a, struct uu_worker *w)
{
	int us = atomic_load_explicit(&uu_test_iowq_hold_us,
				      memory_order_relaxed);

	if (us > 0)
		test_hold(a, w, false, us);
	wl_lock(a);
	w->test_holding = false;
	wl_unlock(a);
}

/* A waker, workers_lock dropped; held: w was in its push hold when the
 * waker took it off the list. */
static void test_wake_hold(struct uu_wq_acct *a, struct uu_worker *w,
			   bool held)
{
	int us = atomic_load_explicit(&uu_test_iowq_hold_us,
				      memory_order_relaxed);

	if (held && us > 0 && test_hold(a, w, true, 4 * us))
		atomic_fetch_add_explicit(&uu_test_iowq_late_wakes, 1,
					  memory_order_relaxed);
}
#define TEST_PUSHING(a, w) test_pushing(a, w)
#define TEST_PUSH_HOLD(a, w) test_push_hold(a, w)
#define TEST_POPPED(w, held) ((held) = (w)->test_holding)
#define TEST_WAKE_HOLD(a, w, held) test_wake_hold(a, w, held)
#else
#define TEST_PUSHING(a, w) do { } while (0)
#define TEST_PUSH_HOLD(a, w) do { } while (0)
#define TEST_POPPED(w, held) do { } while (0)
#define TEST_WAKE_HOLD(a, w, held) do { } while (0)
#endif

/*
 * An idle worker (on the free list) waits.  Returns true once it counts
 * as running again: a waker took it off the list (and counted it), or it
 * took itself off because work is queued.  Returns false on the idle
 * timeout or the pool's exit, still on the list.  A wake meant for an
 * earlier idle period (the waker's FUTEX_WAKE, made after it dropped
 * workers_lock, landing after the worker had found work on its own and
 * gone idle again) only makes it look again.
 */
static bool idle_wait(struct uu_wq_acct *a, struct uu_worker *w, int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	for (;;) {
		/* acquire: pairs with the waker's release increment, made
		 * when it took us off the list (under workers_lock) */
		uint32_t seen = atomic_load_explicit(&w->wake,
						     memory_order_acquire);
		bool popped;

		wl_lock(a);
		popped = !w->on_free_list;
		wl_unlock(a);
		if (popped)
			return true;
		if (has_work(a)) {
			wl_lock(a);
			if (w->on_free_list) {
				free_unlink(a, w);
				atomic_fetch_add(&a->nr_running, 1);
			}
			wl_unlock(a);
			return true;
		}
		if (atomic_load(&a->wq->exiting))
			return false;
		/* a waker's increment after our load makes this return at
		 * once (EAGAIN): no wake is lost */
		if (futex(&w->wake, FUTEX_WAIT_PRIVATE, seen, &ts) < 0 &&
		    errno == ETIMEDOUT)
			return false;
	}
}

/*
 * The idle period of a worker already on the free list.  Returns true
 * when it counts as running again, false when it has left the pool (off
 * the list, uncounted).  On each idle timeout it leaves unless it is the
 * last worker of a live pool; the last one idles on and looks again at
 * its next timeout, so it leaves then if workers were added meanwhile.
 */
static bool idle_until_leaving(struct uu_wq_acct *a, struct uu_worker *w,
			       int ms)
{
	while (!idle_wait(a, w, ms)) {
		bool running, leave = false;

		wl_lock(a);
		running = !w->on_free_list; /* a waker popped it meanwhile */
		if (!running &&
		    (a->nr_workers > 1 || atomic_load(&a->wq->exiting))) {
			free_unlink(a, w);
			a->nr_workers--;
			all_del(a, w);
			leave = true;
		}
		wl_unlock(a);
		if (running)
			return true;
		if (leave)
			return false;
	}
	return true;
}

void uu_iowq_worker_counts(uint64_t alive[2], uint64_t *created)
{
	alive[0] = atomic_load_explicit(&workers_alive[0], memory_order_relaxed);
	alive[1] = atomic_load_explicit(&workers_alive[1], memory_order_relaxed);
	*created = atomic_load_explicit(&workers_created, memory_order_relaxed);
}

static void *worker_main(void *arg)
{
	struct uu_worker *w = arg;
	struct uu_wq_acct *a = w->acct;
	struct uu_iowq *wq = a->wq;
	int ms = idle_ms();
	char name[16];

	size_t cls = (size_t)(a - wq->acct);

	atomic_fetch_add_explicit(&workers_alive[cls], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&workers_created, 1, memory_order_relaxed);
	uu_tctx.engine_thread = true;
	uu_tctx.iowq_worker = true;
	uu_tctx.wq_acct = a;
	uu_tctx.wq_worker = w;
	w->tid = uu_gettid();
	uu_cp_self = &w->cp;
	/* T8: every async signal stays blocked (create_worker), except the
	 * private one that interrupts a cancelled request (T7) */
	if (uu_cp_signal() > 0) {
		sigset_t one;

		sigemptyset(&one);
		sigaddset(&one, uu_cp_signal());
		pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	}
	uu_tctx.wq = wq; /* continuations punted from here stay in this pool */
	snprintf(name, sizeof(name), "iou-wrk-%d", (int)wq->owner_tid);
	pthread_setname_np(pthread_self(), name);
	for (;;) {
		struct uu_req *req;

		while ((req = pop_batch(a, w))) {
			/* this one may block: if more work waits, bring one
			 * more worker in (the work spreads out as fast as it
			 * arrives) */
			if (!uu_opdefs[req->opcode].quick && has_work(a))
				activate_more(a);
			uu_req_run_batch_in_worker(req);
			uu_iowq_issue_done(); /* if the runner did not */
		}
		/*
		 * Go idle: free list first, then recheck the work list.  An
		 * enqueuer appends (work-list lock) and then looks for a free
		 * worker (workers lock); we push ourselves (workers lock) and
		 * then check the list (work-list lock).  Whichever runs second
		 * sees the other: no work is left with every worker asleep.
		 * The worker is pushed once per idle period and taken off
		 * exactly once, by a waker (wake_one) or by itself: whether it
		 * is still on the list, under workers_lock, is the truth; the
		 * futex word only says when to look again.
		 */
		wl_lock(a);
		TEST_PUSHING(a, w);
		atomic_fetch_sub_explicit(&a->nr_running, 1, memory_order_relaxed);
		w->next_free = *free_head(a);
		*free_head(a) = w;
		w->on_free_list = true;
		wl_unlock(a);
		TEST_PUSH_HOLD(a, w);
		if (!idle_until_leaving(a, w, ms))
			break;
	}
	atomic_fetch_sub_explicit(&workers_alive[cls], 1, memory_order_relaxed);
	uu_cp_self = NULL;
	uu_tctx.wq_worker = NULL;
	pthread_mutex_destroy(&w->cur_lock);
	free(w);
	uu_iowq_put(wq);
	return NULL;
}

/* detached, with a small stack: a worker runs one request at a time */
static void worker_attr_init(pthread_attr_t *attr)
{
	pthread_attr_init(attr);
	pthread_attr_setdetachstate(attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(attr, 256 * 1024);
}

static int create_worker(struct uu_wq_acct *a)
{
	struct uu_worker *w = calloc(1, sizeof(*w));
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t th;
	bool aff;
	int ret;

	if (!w)
		return -ENOMEM;
	w->acct = a;
	pthread_mutex_init(&w->cur_lock, NULL);
	(void)uu_cp_signal(); /* the handler is in place before any cancel */
	wl_lock(a);
	all_add(a, w);
	wl_unlock(a);
	atomic_fetch_add(&a->wq->refs, 1);
	worker_attr_init(&attr);
	pthread_mutex_lock(&a->wq->aff_lock);
	aff = a->wq->aff_set;
	if (aff)
		pthread_attr_setaffinity_np(&attr, sizeof(a->wq->aff),
					    &a->wq->aff);
	pthread_mutex_unlock(&a->wq->aff_lock);
	/* T8: engine threads never take the application's signals */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = uu_fault(UU_FAULT_WORKER_CREATE) ?
		EAGAIN : pthread_create(&th, &attr, worker_main, w);
	if (ret == EINVAL && aff) {
		/* CPUs the cpuset does not allow: the kernel's worker keeps
		 * its inherited affinity when setting the mask fails */
		pthread_attr_destroy(&attr);
		worker_attr_init(&attr);
		ret = pthread_create(&th, &attr, worker_main, w);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (ret) {
		wl_lock(a);
		all_del(a, w);
		wl_unlock(a);
		pthread_mutex_destroy(&w->cur_lock);
		free(w);
		uu_iowq_put(a->wq);
		return -ret;
	}
	return 0;
}

/* Removes req from its pool's queue if no worker took it yet. */
bool uu_iowq_cancel_pending(struct uu_req *req)
{
	struct uu_iowq *wq = req_pool(req);
	bool found = false;

	if (!wq)
		return false;
	for (int i = 0; i < 2 && !found; i++) {
		struct uu_wq_acct *a = &wq->acct[i];
		struct uu_req *r, *prev = NULL;

		uu_lock_cls(&a->lock, UU_LOCK_IOWQ_WORK);
		for (r = a->head; r; prev = r, r = r->wq_next) {
			if (r != req)
				continue;
			if (prev)
				prev->wq_next = r->wq_next;
			else
				a->head = r->wq_next;
			if (a->tail == r)
				a->tail = prev;
			a->queued--;
			found = true;
			break;
		}
		pthread_mutex_unlock(&a->lock);
	}
	return found;
}

/*
 * Wakes or creates a worker for newly queued items if none is running: a
 * flood of short work is drained by the running worker in batches instead
 * of waking every worker (each a futex wake and a context switch).  A
 * running worker that blocks in a syscall counts itself out and wakes
 * another if work is queued (uu_iowq_blocking), and a worker that finds
 * more work queued than it takes wakes one more (the work spreads).
 */
/*
 * Wakes a free worker, or creates one below the limit.  1: done; 0: every
 * worker is busy and the limit is reached (they will get to the work);
 * -1: creating failed and no worker exists at all.
 */
static int wake_one(struct uu_wq_acct *a)
{
	struct uu_worker *w, **pp;
	bool create = false, none;
#ifdef UURING_TEST_HOOKS
	bool held = false;
#endif

	wl_lock(a);
	pp = free_head(a);
	while (*pp && (*pp)->acct != a)
		pp = &(*pp)->next_free; /* global: the other class's */
	w = *pp;
	if (w) {
		*pp = w->next_free;
		w->on_free_list = false;
		TEST_POPPED(w, held);
		atomic_fetch_add(&a->nr_running, 1);
		/*
		 * Bumped before the lock is dropped: from then on w may run,
		 * idle again and, after a whole idle time, leave and free
		 * itself, so w's memory is not written after the unlock.
		 * release: pairs with idle_wait's acquire load.
		 */
		atomic_fetch_add_explicit(&w->wake, 1, memory_order_release);
	} else if (a->nr_workers < a->max_workers) {
		a->nr_workers++;
		atomic_fetch_add(&a->nr_running, 1);
		create = true;
	}
	wl_unlock(a);
	if (w) {
		TEST_WAKE_HOLD(a, w, held);
		/* a private futex is keyed by its address alone: this reads
		 * nothing, and if w is gone it is at worst a spurious wake of
		 * a later user of the address (every futex wait here loops) */
		futex(&w->wake, FUTEX_WAKE_PRIVATE, 1, NULL);
		return 1;
	}
	if (!create)
		return 0;
	for (int retries = 0;; retries++) {
		struct timespec backoff = { 0, (long)(retries + 1) * 5000000L };
		int err = create_worker(a);

		if (!err)
			return 1;
		wl_lock(a);
		/* counted ourselves in: another worker is one besides us */
		none = a->nr_workers == 1;
		wl_unlock(a);
		/*
		 * The kernel retries an EAGAIN (RLIMIT_NPROC, a transient
		 * condition) up to WORKER_INIT_LIMIT = 3 times, 5, 10 and
		 * 15 ms apart, from a delayed work item, and cancels the
		 * queued work only when the last attempt failed and no
		 * worker exists (create_worker_cont).  We retry in this
		 * thread, so only when no worker exists, where the work
		 * would otherwise be cancelled; with workers around, they
		 * get to the work.
		 */
		if (err != -EAGAIN || !none || retries == 3)
			break;
		nanosleep(&backoff, NULL);
	}
	wl_lock(a);
	a->nr_workers--;
	atomic_fetch_sub(&a->nr_running, 1);
	none = a->nr_workers == 0;
	wl_unlock(a);
	return none ? -1 : 0;
}

static void activate(struct uu_wq_acct *a, unsigned int n)
{
	if (!n || atomic_load_explicit(&a->nr_running, memory_order_relaxed) > 0)
		return;
	if (wake_one(a) < 0) {
		/* like the kernel: cancel only if no worker exists at all */
		struct uu_req *r;

		while ((r = pop_work(a))) {
			r->res = -ECANCELED;
			uu_req_finish_async(r);
		}
	}
}

/*
 * A worker is about to block in (or came back from) a syscall: while it
 * is blocked it does not count as running, and queued work with no
 * running worker left gets another one (io_wq_worker_sleeping/running).
 */
void uu_iowq_blocking(bool begin)
{
	struct uu_wq_acct *a = uu_tctx.wq_acct;

	if (!a)
		return;
	if (!begin) {
		atomic_fetch_add_explicit(&a->nr_running, 1, memory_order_relaxed);
		return;
	}
	if (atomic_fetch_sub_explicit(&a->nr_running, 1, memory_order_acq_rel) == 1 &&
	    has_work(a))
		activate(a, 1);
}

static void activate_more(struct uu_wq_acct *a)
{
	wake_one(a); /* a worker exists: this one is running */
}

/*
 * IORING_REGISTER_IOWQ_MAX_WORKERS: new limits (0 = keep) for the calling
 * thread's pool, clamped to RLIMIT_NPROC; the previous limits are
 * returned in vals.
 */
void uu_iowq_max_workers(struct uu_ring *ring, uint32_t vals[2])
{
	/* the kernel's task gets its io-wq with its io_uring context */
	struct uu_iowq *wq = uu_iowq_of_caller(ring);
	struct rlimit rl;
	uint32_t lim = UINT32_MAX;

	if (!getrlimit(RLIMIT_NPROC, &rl) && rl.rlim_cur != RLIM_INFINITY)
		lim = (uint32_t)rl.rlim_cur;
	if (!wq) {
		vals[0] = vals[1] = 0;
		return;
	}
	for (int i = 0; i < 2; i++) {
		struct uu_wq_acct *a = &wq->acct[i];
		uint32_t old;

		wl_lock(a);
		old = a->max_workers;
		if (vals[i])
			a->max_workers = vals[i] > lim ? lim : vals[i];
		wl_unlock(a);
		vals[i] = old;
	}
}

/*
 * The pool IORING_REGISTER_IOWQ_AFF and IOWQ_MAX_WORKERS act on: the
 * calling thread's, as the kernel's (current->io_uring), which exists
 * once the thread set up or submitted to a ring; NULL otherwise.
 */
struct uu_iowq *uu_iowq_of_caller(struct uu_ring *ring)
{
	if (ring->sqd)
		return uu_sqd_iowq(ring->sqd);
	if (uu_tctx.engine_thread)
		return uu_tctx.wq;
	if (!uu_tctx.has_tctx)
		return NULL;
	return current_wq(ring);
}

/* The calling thread's pool, created now if needed (the SQPOLL thread). */
struct uu_iowq *uu_iowq_current_create(struct uu_ring *ring)
{
	return current_wq(ring);
}

/*
 * IORING_REGISTER_IOWQ_AFF (mask) and UNREGISTER_IOWQ_AFF (NULL): the
 * CPUs of the workers created from now on; running workers keep theirs,
 * as the kernel's (it applies the mask when it creates a worker).
 */
void uu_iowq_set_affinity(struct uu_iowq *wq, const cpu_set_t *mask)
{
	pthread_mutex_lock(&wq->aff_lock);
	/* an empty mask is accepted; the kernel's workers then keep the
	 * affinity they inherit (setting an empty one fails) */
	wq->aff_set = mask && CPU_COUNT(mask) > 0;
	if (mask)
		wq->aff = *mask;
	pthread_mutex_unlock(&wq->aff_lock);
}

/* The pool for req (the calling thread's), with a reference in req->wq. */
static struct uu_iowq *pool_for(struct uu_req *req)
{
	struct uu_iowq *wq = uu_tctx.engine_thread ? uu_tctx.wq :
						     current_wq(req->ring);

	if (!wq)
		wq = req->ring->wq_default;
	if (!wq)
		return NULL;
	if (!req->ring->wq_default) {
		struct uu_iowq *expected = NULL;

		atomic_fetch_add(&wq->refs, 1);
		if (!__atomic_compare_exchange_n(&req->ring->wq_default, &expected,
						 wq, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			uu_iowq_put(wq);
	}
	atomic_fetch_add(&wq->refs, 1);
	if (req->wq)
		uu_iowq_put(req->wq);
	/* pairs with the acquire loads of the cancel paths */
	__atomic_store_n(&req->wq, wq, __ATOMIC_RELEASE);
	return wq;
}

/*
 * Queues a list of requests (linked through wq_next, each with its class
 * in wq_unbound) built by one submission batch: one work-list lock per
 * class, and as many workers woken as there is new work.
 */
void uu_iowq_enqueue_list(struct uu_req *list)
{
	struct uu_req *head[2] = { NULL, NULL }, *tail[2] = { NULL, NULL };
	unsigned int n[2] = { 0, 0 };
	struct uu_iowq *wq = NULL;
	struct uu_req *req, *next;

	for (req = list; req; req = next) {
		int c = req->wq_unbound ? 1 : 0;

		next = req->wq_next;
		req->wq_next = NULL;
		wq = pool_for(req);
		if (!wq) {
			req->res = -ENOMEM;
			uu_req_finish_async(req);
			continue;
		}
		if (tail[c])
			tail[c]->wq_next = req;
		else
			head[c] = req;
		tail[c] = req;
		n[c]++;
	}
	for (int c = 0; c < 2; c++) {
		struct uu_wq_acct *a;

		if (!head[c])
			continue;
		a = &head[c]->wq->acct[c];
		uu_lock_cls(&a->lock, UU_LOCK_IOWQ_WORK);
		global_hold(a, true);
		if (a->tail)
			a->tail->wq_next = head[c];
		else
			a->head = head[c];
		a->tail = tail[c];
		a->queued += n[c];
		global_hold(a, false);
		pthread_mutex_unlock(&a->lock);
		activate(a, n[c]);
	}
}

void uu_iowq_enqueue(struct uu_req *req, bool unbound)
{
	req->wq_unbound = unbound;
	req->wq_next = NULL;
	uu_iowq_enqueue_list(req);
}
