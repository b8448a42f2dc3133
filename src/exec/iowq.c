// SPDX-License-Identifier: MIT
/*
 * io-wq: worker pools that run requests which must block.
 *
 * One pool per submitting thread, as the kernel has one io_wq per task:
 * workers are created by that thread (pthread_create inherits its
 * credentials, seccomp filter and signal mask), so work runs with the
 * submitter's identity (T9).  Two classes, each with its own work-list
 * lock and its own worker-list lock (seed 001): bounded (regular files,
 * block devices, no file) and unbounded (everything else).  No lock is
 * shared by all workers on the hot path and there are no spinlocks (T18):
 * futex-based mutexes, and each worker sleeps on its own futex word, so a
 * free worker is woken without holding the work-list lock.
 *
 * Workers are created on demand, up to the class limit (bounded:
 * min(sq_entries, 4 * CPUs); unbounded: RLIMIT_NPROC), exit after
 * UURING_IOWQ_IDLE_MS idle (default 5000), except the last one, and are
 * named iou-wrk-<owner tid> with every async signal blocked (T8).
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

#include "core/internal.h"

struct uu_worker {
	struct uu_worker *next_free;
	struct uu_wq_acct *acct;
	_Atomic uint32_t wake;    /* futex word: 1 = work may be waiting */
	bool on_free_list;
};

struct uu_wq_acct {
	pthread_mutex_t lock;     /* work list */
	struct uu_req *head, *tail;
	pthread_mutex_t workers_lock; /* free list and counts */
	struct uu_worker *free_list;
	unsigned int nr_workers, max_workers;
	struct uu_iowq *wq;
};

struct uu_iowq {
	atomic_int refs;          /* owner thread + queued work + workers */
	atomic_bool exiting;      /* the owner thread is gone */
	pid_t owner_tid;
	struct uu_wq_acct acct[2]; /* [0] bounded, [1] unbounded */
};

static __thread struct uu_iowq *thread_wq;
__thread bool uu_engine_thread; /* poller/timer: no pool of its own */
__thread bool uu_in_iowq_worker;
static pthread_key_t wq_key;
static pthread_once_t wq_once = PTHREAD_ONCE_INIT;

static long futex(_Atomic uint32_t *uaddr, int op, uint32_t val,
		  const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

void uu_iowq_put(struct uu_iowq *wq)
{
	if (atomic_fetch_sub_explicit(&wq->refs, 1, memory_order_acq_rel) == 1) {
		for (int i = 0; i < 2; i++) {
			pthread_mutex_destroy(&wq->acct[i].lock);
			pthread_mutex_destroy(&wq->acct[i].workers_lock);
		}
		free(wq);
	}
}

static void wq_thread_exit(void *arg)
{
	struct uu_iowq *wq = arg;

	/* like the kernel's io-wq at task exit: idle workers leave now,
	 * busy ones once their work is done (the pool lives on while work
	 * or workers hold references) */
	thread_wq = NULL;
	atomic_store(&wq->exiting, true);
	for (int i = 0; i < 2; i++) {
		struct uu_wq_acct *a = &wq->acct[i];

		pthread_mutex_lock(&a->workers_lock);
		for (struct uu_worker *w = a->free_list; w; w = w->next_free) {
			atomic_store_explicit(&w->wake, 1, memory_order_release);
			futex(&w->wake, FUTEX_WAKE_PRIVATE, 1, NULL);
		}
		pthread_mutex_unlock(&a->workers_lock);
	}
	uu_iowq_put(wq);
}

static void wq_key_init(void)
{
	pthread_key_create(&wq_key, wq_thread_exit);
}

static unsigned int cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned int)n : 1;
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
	struct uu_iowq *wq = thread_wq;
	struct rlimit rl;

	if (wq)
		return wq;
	wq = calloc(1, sizeof(*wq));
	if (!wq)
		return NULL;
	atomic_init(&wq->refs, 1);
	wq->owner_tid = uu_gettid();
	for (int i = 0; i < 2; i++) {
		pthread_mutex_init(&wq->acct[i].lock, NULL);
		pthread_mutex_init(&wq->acct[i].workers_lock, NULL);
		wq->acct[i].wq = wq;
	}
	wq->acct[0].max_workers = ring->sq_entries < 4 * cpus() ?
		ring->sq_entries : 4 * cpus();
	if (getrlimit(RLIMIT_NPROC, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > 4096)
		wq->acct[1].max_workers = 4096;
	else
		wq->acct[1].max_workers = (unsigned int)rl.rlim_cur;
	pthread_once(&wq_once, wq_key_init);
	pthread_setspecific(wq_key, wq);
	thread_wq = wq;
	return wq;
}

static struct uu_req *pop_work(struct uu_wq_acct *a)
{
	struct uu_req *req;

	pthread_mutex_lock(&a->lock);
	req = a->head;
	if (req) {
		a->head = req->wq_next;
		if (!a->head)
			a->tail = NULL;
	}
	pthread_mutex_unlock(&a->lock);
	return req;
}

static bool has_work(struct uu_wq_acct *a)
{
	bool r;

	pthread_mutex_lock(&a->lock);
	r = a->head != NULL;
	pthread_mutex_unlock(&a->lock);
	return r;
}

static void *worker_main(void *arg)
{
	struct uu_worker *w = arg;
	struct uu_wq_acct *a = w->acct;
	struct uu_iowq *wq = a->wq;
	int ms = idle_ms();
	char name[16];

	uu_engine_thread = true;
	uu_in_iowq_worker = true;
	thread_wq = wq; /* continuations punted from here stay in this pool */
	snprintf(name, sizeof(name), "iou-wrk-%d", (int)wq->owner_tid);
	pthread_setname_np(pthread_self(), name);
	for (;;) {
		struct uu_req *req;
		struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
		long ret;

		while ((req = pop_work(a))) {
			/* the queued work's pool reference passes to the run */
			uu_req_run_in_worker(req);
		}
		/*
		 * Go idle: free list first, then recheck the work list.  An
		 * enqueuer appends (work-list lock) and then looks for a free
		 * worker (workers lock); we push ourselves (workers lock) and
		 * then check the list (work-list lock).  Whichever runs second
		 * sees the other: no work is left with every worker asleep.
		 */
		atomic_store_explicit(&w->wake, 0, memory_order_relaxed);
		pthread_mutex_lock(&a->workers_lock);
		w->next_free = a->free_list;
		a->free_list = w;
		w->on_free_list = true;
		pthread_mutex_unlock(&a->workers_lock);
		if (has_work(a)) {
			pthread_mutex_lock(&a->workers_lock);
			if (w->on_free_list) {
				struct uu_worker **pp = &a->free_list;

				while (*pp != w)
					pp = &(*pp)->next_free;
				*pp = w->next_free;
				w->on_free_list = false;
			}
			pthread_mutex_unlock(&a->workers_lock);
			continue;
		}
		/* pairs with the enqueuer's store of wake = 1 before FUTEX_WAKE */
		if (!atomic_load(&wq->exiting)) {
			ret = futex(&w->wake, FUTEX_WAIT_PRIVATE, 0, &ts);
			if (!atomic_load(&wq->exiting)) {
				if (ret == 0 || atomic_load(&w->wake))
					continue; /* woken off the free list */
				if (errno != ETIMEDOUT)
					continue;
			}
		}
		pthread_mutex_lock(&a->workers_lock);
		if (w->on_free_list &&
		    (a->nr_workers > 1 || atomic_load(&wq->exiting))) {
			struct uu_worker **pp = &a->free_list;

			while (*pp != w)
				pp = &(*pp)->next_free;
			*pp = w->next_free;
			a->nr_workers--;
			pthread_mutex_unlock(&a->workers_lock);
			break;
		}
		pthread_mutex_unlock(&a->workers_lock);
	}
	free(w);
	uu_iowq_put(wq);
	return NULL;
}

static int create_worker(struct uu_wq_acct *a)
{
	struct uu_worker *w = calloc(1, sizeof(*w));
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t th;
	int ret;

	if (!w)
		return -ENOMEM;
	w->acct = a;
	atomic_fetch_add(&a->wq->refs, 1);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	/* T8: engine threads never take the application's signals */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&th, &attr, worker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (ret) {
		free(w);
		uu_iowq_put(a->wq);
		return -ret;
	}
	return 0;
}

/* Removes req from its pool's queue if no worker took it yet. */
bool uu_iowq_cancel_pending(struct uu_req *req)
{
	struct uu_iowq *wq = req->wq;
	bool found = false;

	if (!wq)
		return false;
	for (int i = 0; i < 2 && !found; i++) {
		struct uu_wq_acct *a = &wq->acct[i];
		struct uu_req *r, *prev = NULL;

		pthread_mutex_lock(&a->lock);
		for (r = a->head; r; prev = r, r = r->wq_next) {
			if (r != req)
				continue;
			if (prev)
				prev->wq_next = r->wq_next;
			else
				a->head = r->wq_next;
			if (a->tail == r)
				a->tail = prev;
			found = true;
			break;
		}
		pthread_mutex_unlock(&a->lock);
	}
	return found;
}

void uu_iowq_enqueue(struct uu_req *req, bool unbound)
{
	struct uu_iowq *wq = uu_engine_thread ? thread_wq : current_wq(req->ring);
	struct uu_wq_acct *a;
	struct uu_worker *w;
	bool create = false;

	if (!wq)
		wq = req->ring->wq_default;
	if (!wq) {
		req->res = -ENOMEM;
		uu_req_finish_async(req);
		return;
	}
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
	req->wq = wq;
	a = &wq->acct[unbound ? 1 : 0];
	req->wq_next = NULL;
	pthread_mutex_lock(&a->lock);
	if (a->tail)
		a->tail->wq_next = req;
	else
		a->head = req;
	a->tail = req;
	pthread_mutex_unlock(&a->lock);

	pthread_mutex_lock(&a->workers_lock);
	w = a->free_list;
	if (w) {
		a->free_list = w->next_free;
		w->on_free_list = false;
	} else if (a->nr_workers < a->max_workers) {
		a->nr_workers++;
		create = true;
	}
	pthread_mutex_unlock(&a->workers_lock);
	if (w) {
		atomic_store_explicit(&w->wake, 1, memory_order_release);
		futex(&w->wake, FUTEX_WAKE_PRIVATE, 1, NULL);
		return;
	}
	if (create && create_worker(a)) {
		bool none;

		pthread_mutex_lock(&a->workers_lock);
		a->nr_workers--;
		none = a->nr_workers == 0;
		pthread_mutex_unlock(&a->workers_lock);
		/* like the kernel: cancel only if no worker exists at all */
		if (none) {
			struct uu_req *r;

			while ((r = pop_work(a))) {
				r->res = -ECANCELED;
				uu_req_finish_async(r);
			}
		}
	}
}
