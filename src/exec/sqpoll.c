// SPDX-License-Identifier: MIT
/*
 * SQPOLL: a thread that takes SQEs off the rings without the application
 * entering (IORING_SETUP_SQPOLL), shared by rings set up with ATTACH_WQ.
 *
 * Loop (the kernel's __io_sq_thread): for each attached ring, submit what the SQ holds
 * (at most 8 SQEs per ring per loop when several rings share the
 * thread, for fairness), then run at most UURING_SQPOLL_TW_CAP (default
 * 32) completions of parked requests (the task_work the kernel hands to
 * the SQPOLL thread), and spin while there was work in the last
 * sq_thread_idle (default 1 s).  The clock is read only every 64 idle
 * loops, never per loop.  Then sleep:
 *
 *   thread:  seq = wake_seq; set IORING_SQ_NEED_WAKEUP; seq_cst fence;
 *            re-read every SQ tail and the task_work count; sleep on
 *            futex(wake_seq, seq) only if all are empty
 *   app:     store SQ tail (release); full fence; read NEED_WAKEUP;
 *            if set, enter(IORING_ENTER_SQ_WAKEUP): wake_seq++; FUTEX_WAKE
 *
 * Either the thread sees the new tail or the application sees the flag
 * (Dekker pair, T13).  The thread is named iou-sqp-<tid>, runs with every
 * async signal blocked (T8), and is created by the setting-up thread, so
 * it submits with that thread's credentials (T9, as the kernel's SQPOLL
 * uses the creds of setup time).
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/lockstat.h"
#include "core/registry.h"
#include "core/req.h"
#include "core/task_work.h"
#include "core/tctx.h"
#include "core/types.h"
#include "exec/iowq.h"
#include "exec/sqpoll.h"
#include "util/fault.h"

#define SQPOLL_CAP_ENTRIES 8

/*
 * The words a forked child that uses one of the thread's rings reads and
 * writes (xproc/xproc.c): enter(SQ_WAKEUP) in the child wakes the parent's
 * thread, and finds it dead.  In a MAP_SHARED page, so the futex on
 * wake_seq is a shared (not FUTEX_PRIVATE) one.
 */
struct sqd_shared {
	_Atomic uint32_t wake_seq;   /* futex word */
	atomic_bool sleeping;
	atomic_bool dead;
};

struct uu_sqd {
	atomic_int refs;
	pthread_mutex_t lock;        /* rings, nr */
	struct uu_ring **rings;
	unsigned int nr, cap;
	struct sqd_shared *sh;
	atomic_bool stop;
	int64_t idle_ns;
	int cpu;                     /* -1: unpinned */
	pid_t tgid;
	unsigned int tw_cap;
	/* the thread's io-wq pool (IOWQ_AFF/MAX_WORKERS act on it), set
	 * by the thread at start (release; acquire in uu_sqd_iowq) */
	struct uu_iowq *_Atomic wq;
	struct uu_sqd *retired_next;  /* on retired_sqds once stopped */
};

/*
 * Stopped threads' sqds.  Not freed: the thread may still be leaving its
 * loop when its last ring detaches, and a ring being torn down may still
 * read r->sqd (a few hundred bytes per SQPOLL thread a process ever
 * started).  Kept on this list so the memory stays reachable (and
 * LeakSanitizer quiet about a leak that is deliberate).
 */
static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uu_sqd *retired_sqds;

static long futex(_Atomic uint32_t *uaddr, int op, uint32_t val,
		  const struct timespec *ts)
{
	/* EINTR: every wait here rechecks its condition (a spurious wake) */
	if ((op & FUTEX_CMD_MASK) == FUTEX_WAIT &&
	    uu_fault_errno(UU_FAULT_FUTEX_WAIT_EINTR, EINTR))
		return -1;
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/*
 * The SQPOLL thread's io-wq pool: the kernel's SQPOLL task has its
 * io_uring context from creation on, so a register right after setup
 * waits for the thread to publish it.  NULL if the thread is gone.
 */
struct uu_iowq *uu_sqd_iowq(struct uu_sqd *sqd)
{
	struct uu_iowq *wq;

	for (int i = 0; i < 100000; i++) {
		wq = atomic_load_explicit(&sqd->wq, memory_order_acquire);
		if (wq || atomic_load(&sqd->sh->dead) || atomic_load(&sqd->stop))
			return wq;
		sched_yield();
	}
	return NULL;
}

void uu_sqd_wake(struct uu_sqd *sqd)
{
	atomic_fetch_add_explicit(&sqd->sh->wake_seq, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&sqd->sh->sleeping, memory_order_seq_cst))
		futex(&sqd->sh->wake_seq, FUTEX_WAKE, 1, NULL);
}

static unsigned int sq_entries_pending(struct uu_ring *r)
{
	return atomic_load_explicit(r->sq_tail, memory_order_acquire) -
	       r->sq_cached_head;
}

/* One pass over the rings; returns the number of SQEs and items done. */
static unsigned int sqpoll_pass(struct uu_sqd *sqd)
{
	unsigned int work = 0;

	uu_lock_cls(&sqd->lock, UU_LOCK_SQPOLL);
	for (unsigned int i = 0; i < sqd->nr; i++) {
		struct uu_ring *r = sqd->rings[i];
		unsigned int n;

		if (atomic_load_explicit(r->disabled, memory_order_acquire))
			continue;
		n = sq_entries_pending(r);
		if (n) {
			int ret;

			if (sqd->nr > 1 && n > SQPOLL_CAP_ENTRIES)
				n = SQPOLL_CAP_ENTRIES;
			uu_shared_lock(r->uring_lock);
			ret = uu_submit_sqes(r, n);
			pthread_mutex_unlock(r->uring_lock);
			if (ret > 0) {
				uu_stat_add(r, route_sqpoll, (unsigned int)ret);
				work += (unsigned int)ret;
			}
			/*
			 * SQ_WAIT sleepers: there is room now.  Dekker pair
			 * with uu_sqpoll_wait_sq (waiters++, load seq and the
			 * SQ head): we bump seq after moving the head, then
			 * load the count, all seq_cst; either it sees the new
			 * seq (and the head: the RMW releases it) or we see
			 * it and wake.  No futex call while nobody waits.
			 */
			atomic_fetch_add_explicit(&r->sq_space_seq, 1,
						  memory_order_seq_cst);
			if (atomic_load_explicit(&r->sq_space_waiters,
						 memory_order_seq_cst))
				futex(&r->sq_space_seq, FUTEX_WAKE_PRIVATE,
				      INT32_MAX, NULL);
		}
		if (atomic_load_explicit(&r->tw_pending, memory_order_acquire))
			work += uu_tw_run_deferred(r, sqd->tw_cap);
	}
	pthread_mutex_unlock(&sqd->lock);
	return work;
}

static bool anything_pending(struct uu_sqd *sqd)
{
	bool any = false;

	uu_lock_cls(&sqd->lock, UU_LOCK_SQPOLL);
	for (unsigned int i = 0; i < sqd->nr && !any; i++) {
		struct uu_ring *r = sqd->rings[i];

		any = (sq_entries_pending(r) &&
		       !atomic_load(r->disabled)) ||
		      atomic_load(&r->tw_pending);
	}
	pthread_mutex_unlock(&sqd->lock);
	return any;
}

static void set_need_wakeup(struct uu_sqd *sqd, bool on)
{
	pthread_mutex_lock(&sqd->lock);
	for (unsigned int i = 0; i < sqd->nr; i++) {
		if (on)
			atomic_fetch_or_explicit(sqd->rings[i]->sq_flags,
						 IORING_SQ_NEED_WAKEUP,
						 memory_order_relaxed);
		else
			atomic_fetch_and_explicit(sqd->rings[i]->sq_flags,
						  ~(uint32_t)IORING_SQ_NEED_WAKEUP,
						  memory_order_relaxed);
	}
	pthread_mutex_unlock(&sqd->lock);
}

static void *sqpoll_main(void *arg)
{
	struct uu_sqd *sqd = arg;
	int64_t idle_until;
	unsigned int idle_loops = 0;
	char name[16];

	snprintf(name, sizeof(name), "iou-sqp-%d", (int)uu_gettid());
	pthread_setname_np(pthread_self(), name);
	if (sqd->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(sqd->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	pthread_mutex_lock(&sqd->lock);
	if (sqd->nr)
		atomic_store_explicit(&sqd->wq, uu_iowq_current_create(sqd->rings[0]),
				      memory_order_release);
	pthread_mutex_unlock(&sqd->lock);
	uu_thread_ready();
	/*
	 * A new thread has had no work yet, so its idle period is already
	 * over, as the kernel's io_sq_thread starts with its timeout at 0:
	 * if the first pass finds nothing, it goes to sleep at once with
	 * IORING_SQ_NEED_WAKEUP set, and the first submission after setup
	 * needs IORING_ENTER_SQ_WAKEUP.  idle_loops = 63 makes that first
	 * idle loop read the clock.
	 */
	idle_until = 0;
	idle_loops = 63;
	while (!atomic_load_explicit(&sqd->stop, memory_order_acquire)) {
		uint32_t seq;

		if (sqpoll_pass(sqd)) {
			/* spin while there was work in the last idle period;
			 * the clock is read once per loop that did work */
			idle_until = now_ns() + sqd->idle_ns;
			idle_loops = 0;
			continue;
		}
		if (++idle_loops % 64 || now_ns() < idle_until) {
			sched_yield();
			continue;
		}
		/* go to sleep: the Dekker pair described at the top */
		seq = atomic_load_explicit(&sqd->sh->wake_seq, memory_order_acquire);
		atomic_store_explicit(&sqd->sh->sleeping, true, memory_order_seq_cst);
		set_need_wakeup(sqd, true);
		atomic_thread_fence(memory_order_seq_cst);
		if (!anything_pending(sqd) &&
		    !atomic_load_explicit(&sqd->stop, memory_order_acquire))
			futex(&sqd->sh->wake_seq, FUTEX_WAIT, seq, NULL);
		atomic_store_explicit(&sqd->sh->sleeping, false, memory_order_relaxed);
		set_need_wakeup(sqd, false);
		idle_until = now_ns() + sqd->idle_ns;
		idle_loops = 0;
	}
	/* draining: run what is left so parked requests can finish */
	while (sqpoll_pass(sqd))
		;
	atomic_store(&sqd->sh->dead, true);
	pthread_mutex_lock(&sqd->lock);
	for (unsigned int i = 0; i < sqd->nr; i++)
		atomic_fetch_or(sqd->rings[i]->sq_flags, IORING_SQ_NEED_WAKEUP);
	pthread_mutex_unlock(&sqd->lock);
	return NULL;
}

static int sqd_add_ring(struct uu_sqd *sqd, struct uu_ring *r)
{
	pthread_mutex_lock(&sqd->lock);
	if (sqd->nr == sqd->cap) {
		unsigned int cap = sqd->cap ? 2 * sqd->cap : 4;
		struct uu_ring **n = realloc(sqd->rings, cap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&sqd->lock);
			return -ENOMEM;
		}
		sqd->rings = n;
		sqd->cap = cap;
	}
	sqd->rings[sqd->nr++] = r;
	atomic_fetch_add(&r->refs, 1); /* the thread uses the ring */
	pthread_mutex_unlock(&sqd->lock);
	return 0;
}

/*
 * io_sq_offload_create: attach to the SQPOLL thread of p->wq_fd's ring
 * (ATTACH_WQ, same process) or start a new one.  0 or -errno.
 */
int uu_sqpoll_setup(struct uu_ring *r, struct io_uring_params *p)
{
	struct uu_sqd *sqd = NULL;
	int64_t idle = p->sq_thread_idle ?
		(int64_t)p->sq_thread_idle * 1000000LL : 1000000000LL;
	int ret;

	if (p->flags & IORING_SETUP_ATTACH_WQ) {
		int err;
		struct uu_ring *other = uu_ring_get((int)p->wq_fd, &err);

		if (!other)
			return err == -EOPNOTSUPP ? -EINVAL : err;
		if (other->sqd && other->sqd->tgid == getpid() &&
		    !atomic_load(&other->sqd->sh->dead)) {
			sqd = other->sqd;
			atomic_fetch_add(&sqd->refs, 1);
		}
		uu_ring_put(other);
	}
	if (sqd) {
		if (idle > sqd->idle_ns)
			sqd->idle_ns = idle;
		/* before the thread can see the ring (its lock orders it) */
		r->sqd = sqd;
		ret = sqd_add_ring(sqd, r);
		if (ret) {
			r->sqd = NULL;
			return ret;
		}
		uu_sqd_wake(sqd);
		return 0;
	}
	if (p->flags & IORING_SETUP_SQ_AFF) {
		long ncpu = sysconf(_SC_NPROCESSORS_CONF);

		if ((long)p->sq_thread_cpu >= ncpu)
			return -EINVAL;
	}
	sqd = calloc(1, sizeof(*sqd));
	if (!sqd)
		return -ENOMEM;
	sqd->sh = mmap(NULL, sizeof(*sqd->sh), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sqd->sh == MAP_FAILED) {
		free(sqd);
		return -ENOMEM;
	}
	atomic_init(&sqd->refs, 1);
	pthread_mutex_init(&sqd->lock, NULL);
	sqd->idle_ns = idle;
	sqd->cpu = (p->flags & IORING_SETUP_SQ_AFF) ? (int)p->sq_thread_cpu : -1;
	sqd->tgid = getpid();
	sqd->tw_cap = uu_knob(sqpoll_tw_cap); /* api.c: at least 1 */
	/* before the thread starts (pthread_create orders it): its work
	 * reaches io-wq workers that read it */
	r->sqd = sqd;
	ret = sqd_add_ring(sqd, r);
	if (!ret)
		ret = uu_thread_start(sqpoll_main, sqd);
	if (ret) {
		r->sqd = NULL;
		free(sqd->rings);
		munmap(sqd->sh, sizeof(*sqd->sh));
		free(sqd);
		return ret;
	}
	return 0;
}

/* The ring is going away: leave the thread; the last ring stops it. */
void uu_sqpoll_detach(struct uu_ring *r)
{
	struct uu_sqd *sqd = r->sqd;
	bool found = false, last;

	/* a forked child that used the ring never owned the thread (its
	 * copy of sqd is the parent's, as of the fork) */
	if (!sqd || sqd->tgid != getpid())
		return;
	pthread_mutex_lock(&sqd->lock);
	for (unsigned int i = 0; i < sqd->nr; i++) {
		if (sqd->rings[i] == r) {
			sqd->rings[i] = sqd->rings[--sqd->nr];
			found = true;
			break;
		}
	}
	last = sqd->nr == 0;
	pthread_mutex_unlock(&sqd->lock);
	if (last) {
		atomic_store(&sqd->stop, true);
		uu_sqd_wake(sqd);
	}
	if (last && found) {
		/* the sqd itself stays (retired_sqds), listed once: by the
		 * detach that removed its last ring */
		pthread_mutex_lock(&retired_lock);
		sqd->retired_next = retired_sqds;
		retired_sqds = sqd;
		pthread_mutex_unlock(&retired_lock);
	}
	if (found)
		uu_ring_put(r);
}

bool uu_sqpoll_dead(struct uu_ring *r)
{
	return atomic_load_explicit(&r->sqd->sh->dead, memory_order_acquire);
}

/* IORING_ENTER_SQ_WAIT: until the SQ has room */
void uu_sqpoll_wait_sq(struct uu_ring *r)
{
	/* counted before the seq and head loads: the Dekker pair in
	 * sqpoll_pass (seq_cst RMW here, seq_cst loads below) */
	atomic_fetch_add_explicit(&r->sq_space_waiters, 1, memory_order_seq_cst);
	for (;;) {
		uint32_t seq = atomic_load_explicit(&r->sq_space_seq,
						    memory_order_seq_cst);
		struct timespec ts = { 0, 10000000 };

		if (atomic_load_explicit(r->sq_tail, memory_order_acquire) -
			    atomic_load_explicit(r->sq_head, memory_order_acquire) <
		    r->mem.sq_entries || uu_sqpoll_dead(r))
			break;
		uu_sqd_wake(r->sqd);
		futex(&r->sq_space_seq, FUTEX_WAIT_PRIVATE, seq, &ts);
	}
	atomic_fetch_sub_explicit(&r->sq_space_waiters, 1, memory_order_relaxed);
}
