// SPDX-License-Identifier: MIT
/*
 * FUTEX_WAKE and FUTEX_WAIT (futex2 flags in sqe->fd, the value or count
 * in addr2, the bitset in addr3).
 *
 * FUTEX_WAKE issues futex_wake(2), which applies FLAGS_STRICT like the
 * kernel's io_futex_wake (waking 0 futexes yields 0).
 *
 * FUTEX_WAIT: the kernel queues the waiter on the futex before enter
 * returns, so any later wake finds it.  A user-space waiter is a thread
 * sleeping in the kernel; one that starts to sleep only later (an io-wq
 * worker) would miss the wakes that come in between.  So a pool of
 * sleeper threads waits, idle, each on a private word of its own, and the
 * issuing thread moves one of them onto the application's futex with
 * FUTEX_CMP_REQUEUE (which tells whether it moved a waiter: an idle
 * sleeper not yet asleep is retried) after checking the futex value,
 * where the kernel's futex_wait_setup queues, and behind the waiters
 * already there (see wait_queue), once it has settled there (a sleeper
 * moved in the instant it queues itself can get a spurious wakeup).  A
 * moved sleeper that still gets one queues itself on the futex again
 * (rewait), at the tail.  The value is checked again
 * after the move: if it changed in between, a wake may have gone by
 * unseen, and everybody on the futex is woken (a spurious wakeup for the
 * other waiters, which futex users tolerate; this request completes 0).
 * A woken sleeper writes to its pipe, on which the request waits in the
 * readiness engine, so ASYNC_CANCEL and ring teardown cancel it as they
 * cancel a poll (-ECANCELED), as in the kernel; the cancelled sleeper is
 * then taken off the futex alone, as the kernel dequeues just the one
 * waiter: the canceller interrupts its wait with the engine's private
 * signal (UURING_CANCEL_SIGNAL, util/cpsys.h), the only signal a sleeper
 * takes, so no other waiter of that futex sees a wakeup.  Only if that
 * signal has no handler is everybody there woken instead (a spurious
 * wakeup for the application's waiters, other FUTEX_WAITs complete 0).
 *
 * A requeued waiter keeps the bitset it went to sleep with, so sleepers
 * idle with the request's bitset (one pool, matched by bitset and
 * private/shared).  NUMA/MPOL futexes hash apart, so those waits are made
 * by an io-wq worker itself, which misses the wakes that come before it
 * sleeps (documented).  FUTEX_WAITV is not implemented: one sleeper per
 * futex would leave the others queued, absorbing wakes, once one of them
 * is woken.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "ops/ops.h"
#include "util/cpsys.h"
#include "util/fdutil.h"
#include "util/rawsys.h"
#include "util/usercopy.h"

#ifndef SYS_futex_wake
#define SYS_futex_wake 454
#endif
#ifndef SYS_futex_wait
#define SYS_futex_wait 455
#endif

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

#define UU_FUTEX2_SIZE_U32 0x02
#define UU_FUTEX2_NUMA 0x04
#define UU_FUTEX2_MPOL 0x08
#define UU_FUTEX2_PRIVATE 0x80

/*
 * The kernel's flag check (FUTEX2_VALID_MASK, futex_flags_valid) is the
 * one futex_wake(2) makes: asking the kernel once per flags value, with
 * nothing to wake, gives exactly its answer.  0 unknown, 1 valid, 2 not.
 */
static _Atomic uint8_t flags_ok[256];

static bool futex2_flags_valid(uint32_t flags)
{
	uint32_t word[4] __attribute__((aligned(16))) = { 0 };
	uint8_t v;
	long ret;

	if (flags > 0xff)
		return false;
	v = atomic_load_explicit(&flags_ok[flags], memory_order_relaxed);
	if (v)
		return v == 1;
	ret = syscall(SYS_futex_wake, word, 1UL, 0, flags);
	v = ret < 0 ? 2 : 1;
	atomic_store_explicit(&flags_ok[flags], v, memory_order_relaxed);
	return v == 1;
}

int uu_futex_prep(struct uu_req *req)
{
	const struct io_uring_sqe *sqe = &req->sqe;

	if (sqe->len || sqe->futex_flags || sqe->buf_index || sqe->file_index)
		return -EINVAL;
	req->os.futex.uaddr = sqe->addr;
	req->os.futex.val = sqe->addr2;
	req->os.futex.mask = sqe->addr3;
	req->os.futex.flags = (uint32_t)sqe->fd;
	if (!futex2_flags_valid(req->os.futex.flags))
		return -EINVAL;
	/* futex_validate_input: both fit the (32-bit) futex */
	if ((req->os.futex.val >> 32) || (req->os.futex.mask >> 32))
		return -EINVAL;
	return 0;
}

int uu_futex_wake_issue(struct uu_req *req, unsigned int issue_flags)
{
	long ret;

	(void)issue_flags;
	ret = syscall(SYS_futex_wake, (void *)(uintptr_t)req->os.futex.uaddr,
		      (unsigned long)req->os.futex.mask,
		      (int)req->os.futex.val, req->os.futex.flags);
	return ret < 0 ? -errno : (int)ret;
}

/* ---- FUTEX_WAIT ---- */

enum { FW_WAITING, FW_WOKEN, FW_CANCELED };

/* A wait's shared state: the request's (hdr.mem) and its sleeper's. */
struct fwait {
	_Atomic uint32_t state;  /* FW_*; also a futex word */
	atomic_int refs;
	struct sleeper *s;
	/* the wait, for a sleeper that must queue itself again (rewait) */
	uint64_t uaddr;
	uint32_t val, bitset, flags2;
};

/*
 * A sleeper's word, the futex it sleeps on between jobs.  The kernel
 * checks it again whenever the sleeper's wait restarts after a spurious
 * wakeup (a late wake_up from an earlier wake of the same thread, a
 * freeze): with SL_MOVED there such a restart fails with EAGAIN instead
 * of silently putting a sleeper that was requeued onto a job's futex
 * back on its own word, where no wake of the job's futex finds it.
 */
enum {
	SL_IDLE,   /* asleep (or about to be), queued whenever it fell asleep */
	SL_REARM,  /* the issuer asks for a new sleep: set SL_FRESH, sleep */
	SL_FRESH,  /* asleep, queued after the issuer asked */
	SL_MOVED,  /* requeued onto the job's futex by the issuer; a return
		    * from the wait means it has left that futex */
};

struct sleeper {
	_Atomic uint32_t idle;   /* SL_*: the futex word it sleeps on */
	_Atomic pid_t tid;       /* its thread, for the cancel's tgkill
				  * (0 until it runs) */
	struct fwait *_Atomic job;
	uint32_t bitset;
	bool shared;
	int pipe[2];             /* reserved-range fds: "job done" */
	struct sleeper *next;    /* idle list */
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sleeper *pool_idle;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static long sys_futex(void *uaddr, int op, uint32_t val, unsigned long val2,
		      void *uaddr2, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, val2, uaddr2, val3);
}

static void fwait_put(struct fwait *w)
{
	if (atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) == 1)
		free(w);
}

/* The sleepers do not survive fork: the child starts a new pool. */
static void pool_atfork_child(void)
{
	pthread_mutex_init(&pool_lock, NULL);
	pool_idle = NULL;
}

static void pool_init(void)
{
	pthread_atfork(NULL, NULL, pool_atfork_child);
}

static void sleeper_put_idle(struct sleeper *s)
{
	pthread_mutex_lock(&pool_lock);
	s->next = pool_idle;
	pool_idle = s;
	pthread_mutex_unlock(&pool_lock);
}

/*
 * A moved sleeper's wait ended without a wake: a spurious wakeup, after
 * which the kernel restarts the wait on the futex the sleeper first
 * queued on, s->idle, and fails it (EAGAIN) because that word now says
 * SL_MOVED.  The sleeper is queued nowhere and nobody can requeue it, so
 * it waits on the job's futex itself, with the value the request was
 * issued with.  A wake that came before it is queued again changed the
 * value (the usual protocol): the wait fails with EAGAIN and ends as
 * woken, as the value check after the move does.  It is queued at the
 * futex's tail (its FIFO place is lost; the kernel's waiter keeps it).
 *
 * A cancel moves w->state off FW_WAITING and wakes that word (cleanup):
 * with the match-any bitset the wait is a futex_waitv on both words;
 * futex_waitv has no bitsets, so with another bitset it is a
 * FUTEX_WAIT_BITSET that looks at w->state again every 50 ms.
 */
static void rewait(const struct sleeper *s, struct fwait *w)
{
	int op = FUTEX_WAIT_BITSET | (s->shared ? 0 : FUTEX_PRIVATE_FLAG);

	for (;;) {
		struct timespec ts;
		long ret;

		/* acquire: pairs with the cancel's CAS (cleanup) */
		if (atomic_load_explicit(&w->state, memory_order_acquire) !=
		    FW_WAITING)
			return;
		if (w->bitset == FUTEX_BITSET_MATCH_ANY) {
			struct futex_waitv v[2] = {
				{ .val = w->val, .uaddr = w->uaddr,
				  .flags = w->flags2 },
				{ .val = FW_WAITING,
				  .uaddr = (uint64_t)(uintptr_t)&w->state,
				  .flags = UU_FUTEX2_SIZE_U32 |
					   UU_FUTEX2_PRIVATE },
			};

			ret = syscall(SYS_futex_waitv, v, 2U, 0U, NULL, 0);
		} else {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += 50 * 1000 * 1000;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			ret = sys_futex((void *)(uintptr_t)w->uaddr, op, w->val,
					(unsigned long)(uintptr_t)&ts, NULL,
					w->bitset);
		}
		/* woken, the value changed, or a fault: the caller's CAS on
		 * w->state decides between woken and cancelled */
		if (ret >= 0 || (errno != ETIMEDOUT && errno != EINTR))
			return;
	}
}

static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	int op = FUTEX_WAIT_BITSET | (s->shared ? 0 : FUTEX_PRIVATE_FLAG);
	int sig = uu_cp_signal();

	/* every other async signal stays blocked (T8): the private one ends
	 * the wait of a cancelled request (uu_futex_wait_cleanup) */
	if (sig > 0) {
		sigset_t one;

		sigemptyset(&one);
		sigaddset(&one, sig);
		pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	}
	/* release: pairs with the acquire in shake_off; a sleeper is moved
	 * onto a futex (and so cancelled) only after it slept, after this */
	atomic_store_explicit(&s->tid, uu_gettid(), memory_order_release);
	for (;;) {
		/* acquire: the job stored before SL_MOVED (release, wait_queue) */
		uint32_t v = atomic_load_explicit(&s->idle,
						  memory_order_acquire);
		uint32_t waiting = FW_WAITING;
		struct fwait *w;

		if (v == SL_REARM) {
			atomic_compare_exchange_strong(&s->idle, &v, SL_FRESH);
			continue;
		}
		if (v != SL_MOVED) {
			/* asleep here, on s->idle or (requeued) on a job's
			 * futex; whatever it returns, s->idle says what now */
			if (sys_futex(&s->idle, op, v, 0, NULL, s->bitset) < 0 &&
			    (errno == EAGAIN || errno == EINTR) &&
			    atomic_load_explicit(&s->idle,
						 memory_order_acquire) ==
				    SL_MOVED) {
				/* s->idle was v when the wait began, and only
				 * a successful requeue of the queued sleeper
				 * leads to SL_MOVED: the restart after a
				 * spurious wakeup failed (see rewait), or the
				 * private signal interrupted the wait: a
				 * cancel's (the state is no longer
				 * FW_WAITING, rewait returns at once) or a
				 * stray one of that number sent to the
				 * process (it waits again) */
				w = atomic_load_explicit(&s->job,
							 memory_order_acquire);
				if (w)
					rewait(s, w);
			}
			continue;
		}
		/* off the job's futex: woken (a requeued wait that returns
		 * 0 was woken), or shaken off by a cancel */
		w = atomic_exchange_explicit(&s->job, NULL,
					     memory_order_acq_rel);
		atomic_store_explicit(&s->idle, SL_IDLE, memory_order_release);
		if (!w)
			continue; /* cannot be: SL_MOVED comes with a job */
		if (atomic_compare_exchange_strong(&w->state, &waiting,
						   FW_WOKEN)) {
			/* the request returns us to the pool when it ends */
			sys_futex(&w->state, FUTEX_WAKE_PRIVATE, INT_MAX, 0,
				  NULL, 0);
			if (write(s->pipe[1], "", 1) < 0) {
				/* full only if never drained: cannot be */
			}
		} else {
			sleeper_put_idle(s); /* cancelled: shaken off */
		}
		fwait_put(w);
	}
	return NULL;
}

static struct sleeper *sleeper_new(bool shared, uint32_t bitset)
{
	struct sleeper *s = calloc(1, sizeof(*s));
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t th;
	int ret;

	if (!s)
		return NULL;
	s->shared = shared;
	s->bitset = bitset;
	atomic_init(&s->tid, 0);
	(void)uu_cp_signal(); /* the handler is in place before any cancel */
	if (pipe2(s->pipe, O_CLOEXEC | O_NONBLOCK)) {
		free(s);
		return NULL;
	}
	s->pipe[0] = uu_fd_to_reserved(s->pipe[0]);
	s->pipe[1] = uu_fd_to_reserved(s->pipe[1]);
	/* engine threads take no signals (T8); small stacks */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	ret = pthread_create(&th, &attr, sleeper_main, s);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		uu_sys_close(s->pipe[0]);
		uu_sys_close(s->pipe[1]);
		free(s);
		return NULL;
	}
	pthread_setname_np(th, "iou-futex");
	return s;
}

static struct sleeper *sleeper_get(bool shared, uint32_t bitset)
{
	struct sleeper **pp, *s = NULL;

	pthread_once(&pool_once, pool_init);
	pthread_mutex_lock(&pool_lock);
	for (pp = &pool_idle; *pp; pp = &(*pp)->next) {
		if ((*pp)->shared == shared && (*pp)->bitset == bitset) {
			s = *pp;
			*pp = s->next;
			break;
		}
	}
	pthread_mutex_unlock(&pool_lock);
	return s ? s : sleeper_new(shared, bitset);
}

/* Wakes every waiter of the request's futex. */
static void wake_all(struct uu_req *req)
{
	syscall(SYS_futex_wake, (void *)(uintptr_t)req->os.futex.uaddr,
		(unsigned long)FUTEX_BITSET_MATCH_ANY, INT_MAX,
		req->os.futex.flags);
}

/*
 * A cancelled wait (w->state already FW_CANCELED) takes its sleeper off
 * the futex: the private signal interrupts its wait (no SA_RESTART: the
 * wait returns EINTR), which dequeues that one waiter, as the kernel's
 * cancel does.  Without the signal's handler, everybody is woken.
 */
static void shake_off(struct uu_req *req, struct fwait *w)
{
	int sig = uu_cp_signal();
	pid_t tid = atomic_load_explicit(&w->s->tid, memory_order_acquire);

	if (sig > 0 && tid > 0 &&
	    syscall(SYS_tgkill, getpid(), tid, sig) == 0)
		return;
	wake_all(req);
}

int uu_futex_wait_prep(struct uu_req *req)
{
	struct fwait *w;
	int ret;

	uu_os_init(req);
	ret = uu_futex_prep(req);
	if (ret)
		return ret;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	atomic_init(&w->refs, 1);
	req->os.futex.queued = false;
	uu_os_take(req, w, NULL);
	return 0;
}

/*
 * At completion, whatever it was: a woken wait gives its sleeper back to
 * the pool (after emptying its pipe); a wait that ends otherwise
 * (cancelled, the ring closed) interrupts its sleeper (shake_off), which
 * goes back to the pool itself.
 */
void uu_futex_wait_cleanup(struct uu_req *req)
{
	struct fwait *w = req->os.hdr.mem;
	uint32_t waiting = FW_WAITING;
	char buf[8];

	req->os.hdr.mem = NULL; /* shared with the sleeper: not uu_os_drop */
	if (w && req->os.hdr.tag == uu_os_tag(req)) {
		if (!w->s) {
			/* never queued */
		} else if (atomic_compare_exchange_strong(&w->state, &waiting,
							  FW_CANCELED)) {
			shake_off(req, w);
			/* a sleeper waiting by itself (rewait) also waits
			 * on the state word */
			sys_futex(&w->state, FUTEX_WAKE_PRIVATE, INT_MAX, 0,
				  NULL, 0);
		} else if (atomic_load(&w->state) == FW_WOKEN) {
			while (read(w->s->pipe[0], buf, sizeof(buf)) > 0)
				;
			sleeper_put_idle(w->s);
		}
		fwait_put(w);
	}
	uu_os_release(req);
}

/* futex_wait_setup's checks: alignment, a readable word, its value */
static int check_value(struct uu_req *req)
{
	uint64_t uaddr = req->os.futex.uaddr;
	uint32_t v;

	if (uaddr & 3)
		return -EINVAL;
	if (uu_copy_from_user(&v, (const void *)(uintptr_t)uaddr, sizeof(v)))
		return -EFAULT;
	return v == (uint32_t)req->os.futex.val ? 0 : -EAGAIN;
}

/*
 * Queues a sleeper on the futex (in the issuing thread), behind the
 * waiters already there, as the kernel's futex_queue does.
 *
 * FUTEX_CMP_REQUEUE moves a waiter to the tail of the target's hash
 * bucket only when the two futexes hash to different buckets; when they
 * share one (1 in 16 for private futexes in a small process's private
 * hash), the waiter keeps its place, which for an idle sleeper dates from
 * when it fell asleep: a later wake would find it before waiters queued
 * since.  So if the futex already has waiters, the sleeper is first made
 * to sleep again (SL_REARM), which queues it now, and only then moved.
 * With no waiter there yet, its place does not matter.
 *
 * A sleeper is moved only once it has been queued on its word for a
 * moment.  Requeued in the instant after it queued itself, it can miss
 * the move (seen with ftrace: its wait failed 4 us after the requeue,
 * with no wake-up of the thread); the likely path: the kernel's
 * futex_do_wait looks at its queue entry without the bucket lock, may
 * see it unlinked between the requeue's delete and add, skips
 * schedule(), finds itself still queued and restarts the wait on
 * s->idle, which then says SL_MOVED (a spurious wakeup: rewait).  So
 * the issuer first counts the sleeper on its word by requeueing that
 * word onto itself (same bucket: no unlink, nothing moves) and, if it
 * had to wait for it, lets it settle before the real move.
 */
static void settle(void)
{
	struct timespec ts = { 0, 20 * 1000 };

	nanosleep(&ts, NULL);
}

static int wait_queue(struct uu_req *req)
{
	struct fwait *w = req->os.hdr.mem;
	bool shared = !(req->os.futex.flags & UU_FUTEX2_PRIVATE);
	int priv = shared ? 0 : FUTEX_PRIVATE_FLAG;
	int op = FUTEX_CMP_REQUEUE | priv;
	void *uaddr = (void *)(uintptr_t)req->os.futex.uaddr;
	uint32_t val = (uint32_t)req->os.futex.val;
	struct sleeper *s;
	unsigned int tries;
	bool ask, waited = false;
	long n = 0;
	int ret;

	ret = check_value(req);
	if (ret)
		return ret;
	/* requeueing a futex onto itself moves nothing and counts its
	 * waiters (and fails with EAGAIN if the value changed meanwhile) */
	n = sys_futex(uaddr, op, 0, INT_MAX, uaddr, val);
	if (n < 0)
		return -errno;
	ask = n > 0;
	s = sleeper_get(shared, (uint32_t)req->os.futex.mask);
	if (!s)
		return -ENOMEM;
	w->uaddr = req->os.futex.uaddr;
	w->val = val;
	w->bitset = (uint32_t)req->os.futex.mask;
	w->flags2 = req->os.futex.flags;
	atomic_fetch_add_explicit(&w->refs, 1, memory_order_relaxed);
	atomic_store_explicit(&s->job, w, memory_order_release);
	/* moves the sleeper once it sleeps on its word (a new one, or one
	 * just released, may not sleep yet) */
	for (tries = 0; tries < 100000; tries++) {
		uint32_t v = atomic_load_explicit(&s->idle,
						  memory_order_acquire);

		if (v == SL_MOVED || v == SL_REARM) {
			/* still leaving its last job, or waking to rearm */
			sched_yield();
			continue;
		}
		if (ask) {
			if (atomic_compare_exchange_strong(&s->idle, &v,
							   SL_REARM)) {
				ask = false;
				waited = true; /* it sleeps again just now */
				/* ends its present sleep; one about to start
				 * sees SL_REARM and fails */
				sys_futex(&s->idle, FUTEX_WAKE | priv, 1, 0,
					  NULL, 0);
			}
			continue;
		}
		/* asleep on its word yet? (counted, not moved) */
		n = sys_futex(&s->idle, op, 0, INT_MAX, &s->idle, v);
		if (n == 1) {
			if (waited)
				settle();
			n = sys_futex(&s->idle, op, 0, 1, uaddr, v);
			if (n == 1)
				break;
		}
		if (n < 0 && errno != EAGAIN)
			break;
		/* EAGAIN: its word changed under us; 0: not asleep yet */
		waited = true;
		sched_yield();
	}
	if (n != 1) {
		ret = n < 0 && errno != EAGAIN ? -errno : -EAGAIN;
		/* the sleeper takes a job only once SL_MOVED: take it back */
		atomic_store_explicit(&s->job, NULL, memory_order_relaxed);
		fwait_put(w);
		sleeper_put_idle(s);
		return ret;
	}
	/* from here on a restart of its wait fails instead of putting it
	 * back on s->idle; one that came before (between the move and this
	 * store) did put it back, and it is moved again (still queued after
	 * this issue began) */
	atomic_store_explicit(&s->idle, SL_MOVED, memory_order_seq_cst);
	sys_futex(&s->idle, op, 0, 1, uaddr, SL_MOVED);
	w->s = s;
	req->os.futex.queued = true;
	/* a change in between may have come with an unseen wake */
	if (check_value(req))
		wake_all(req);
	return 0;
}

/* NUMA/MPOL: the io-wq worker waits itself (see the top of the file) */
static int wait_in_worker(struct uu_req *req, unsigned int issue_flags)
{
	void *uaddr = (void *)(uintptr_t)req->os.futex.uaddr;
	long ret;

	if (!(issue_flags & UU_ISSUE_F_WORKER)) {
		ret = check_value(req);
		return ret ? (int)ret : uu_park(req, UU_ISSUE_PUNT_UNBOUND);
	}
	uu_iowq_blocking(true);
	do {
		ret = syscall(SYS_futex_wait, uaddr,
			      (unsigned long)req->os.futex.val,
			      (unsigned long)req->os.futex.mask,
			      req->os.futex.flags, NULL, 0);
	} while (ret < 0 && errno == EINTR && !uu_req_cancelled(req));
	uu_iowq_blocking(false);
	if (ret < 0)
		return errno == EINTR ? -ECANCELED :
		       errno == EAGAIN ? 0 : -errno;
	return 0;
}

/*
 * Issued by the submitting thread (or an io-wq worker for IOSQE_ASYNC):
 * queue a sleeper, then wait on the readiness engine for its pipe.  The
 * readiness engine issues it again when the pipe is readable; if the pipe
 * cannot be polled, an io-wq worker issues it and blocks instead.
 */
int uu_futex_wait_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct fwait *w = req->os.hdr.mem;
	int ret;

	if (!req->os.futex.mask)
		return -EINVAL;
	if (req->os.futex.flags & (UU_FUTEX2_NUMA | UU_FUTEX2_MPOL))
		return wait_in_worker(req, issue_flags);
	if (!req->os.futex.queued) {
		ret = wait_queue(req);
		if (ret)
			return ret;
	} else if (issue_flags & UU_ISSUE_F_WORKER) {
		uu_iowq_blocking(true);
		while (atomic_load(&w->state) == FW_WAITING)
			sys_futex(&w->state, FUTEX_WAIT_PRIVATE, FW_WAITING, 0,
				  NULL, 0);
		uu_iowq_blocking(false);
	}
	if (atomic_load_explicit(&w->state, memory_order_acquire) == FW_WOKEN)
		return 0;
	req->fd = w->s->pipe[0];
	return uu_park(req, UU_ISSUE_PARK_POLLIN);
}

/* ---- FUTEX_WAITV ---- */

/*
 * The kernel queues one futex_q per futex at issue, all owned by the
 * request; the first wake claims it and the CQE says which futex it was.
 * uuring checks every value at issue (completing at once, as the kernel
 * does, if one differs), then hands the wait to threads blocked in
 * futex_waitv(2) on the same futexes.  Each thread's vector carries one
 * extra entry, the job's state word (expected 0 = waiting): whoever ends
 * the job (a thread that was woken, a cancel, the ring's exit) moves the
 * state off 0 and wakes it, so every thread returns without a signal.
 * That extra entry leaves 127 of the syscall's 128 slots to the
 * application, so a vector of 128 is split over two threads.
 *
 * The issue returns only once the threads are queued on the futexes
 * (vjob_await_queued), so a wake after enter returns finds them, also
 * one that changes no value.  A change of value between the issue's
 * check and the threads' queueing is not missed either: futex_waitv then
 * returns -EAGAIN and the request completes with the index of a futex
 * whose value differs, which is the futex the usual protocol (change the
 * value, then wake) woke.
 *
 * The request waits on the readiness engine for an eventfd that the
 * winning thread signals, so ASYNC_CANCEL and ring teardown find it
 * there and complete it -ECANCELED, as the kernel's futex list does.
 */
#define VCHUNK (FUTEX_WAITV_MAX - 1)

enum { VJ_WAITING, VJ_DONE, VJ_ENDED };

struct vjob {
	_Atomic uint32_t state;  /* VJ_*; a futex word in every vector */
	atomic_int refs;         /* the request's and each thread's */
	int efd;                 /* "done" eventfd, -1 before issue */
	int res;                 /* the CQE res when VJ_DONE */
	unsigned int nr;
	struct futex_waitv v[];  /* the application's vector, copied at prep */
};

struct vthread {
	struct vjob *j;
	unsigned int base, n;
	struct futex_waitv v[FUTEX_WAITV_MAX];
};

static void vjob_put(struct vjob *j)
{
	if (atomic_fetch_sub_explicit(&j->refs, 1, memory_order_acq_rel) != 1)
		return;
	if (j->efd >= 0)
		uu_sys_close(j->efd);
	free(j);
}

/* Moves the job off VJ_WAITING (once) and wakes every thread of it. */
static bool vjob_end(struct vjob *j, uint32_t to)
{
	uint32_t waiting = VJ_WAITING;

	/* release: res is visible to whoever sees VJ_DONE (acquire load in
	 * uu_futexv_issue) */
	if (!atomic_compare_exchange_strong_explicit(&j->state, &waiting, to,
						     memory_order_acq_rel,
						     memory_order_acquire))
		return false;
	sys_futex(&j->state, FUTEX_WAKE_PRIVATE, INT_MAX, 0, NULL, 0);
	return true;
}

static long sys_futex_waitv(struct futex_waitv *v, unsigned int nr)
{
	long ret = syscall(SYS_futex_waitv, v, nr, 0, NULL, 0);

	return ret < 0 ? -errno : ret;
}

/* The index of the first entry of v[0..nr) whose value differs, -1 if
 * none; -EFAULT if one cannot be read. */
static int vdiffers(const struct futex_waitv *v, unsigned int nr)
{
	uint32_t val;

	for (unsigned int i = 0; i < nr; i++) {
		if (uu_copy_from_user(&val, (const void *)(uintptr_t)v[i].uaddr,
				      sizeof(val)))
			return -EFAULT;
		if (val != (uint32_t)v[i].val)
			return (int)i;
	}
	return -1;
}

static void *vthread_main(void *arg)
{
	struct vthread *t = arg;
	struct vjob *j = t->j;
	long ret;
	int res;

	t->v[t->n] = (struct futex_waitv){
		.val = VJ_WAITING,
		.uaddr = (uint64_t)(uintptr_t)&j->state,
		.flags = UU_FUTEX2_SIZE_U32 | UU_FUTEX2_PRIVATE,
	};
	for (;;) {
		ret = sys_futex_waitv(t->v, t->n + 1);
		/* acquire: pairs with vjob_end's release */
		if (atomic_load_explicit(&j->state, memory_order_acquire) !=
		    VJ_WAITING)
			break;
		if (ret == -EINTR || ret == (long)t->n)
			continue;
		if (ret >= 0) {
			res = (int)(t->base + ret);
		} else if (ret == -EAGAIN) {
			/* a value changed after the issue's check */
			res = vdiffers(t->v, t->n);
			if (res == -1)
				continue; /* changed back: wait again */
			if (res >= 0)
				res += (int)t->base;
		} else {
			res = (int)ret;
		}
		j->res = res;
		if (vjob_end(j, VJ_DONE)) {
			uint64_t one = 1;

			if (write(j->efd, &one, sizeof(one)) < 0) {
				/* an eventfd counter cannot overflow here */
			}
		}
		break;
	}
	vjob_put(j);
	free(t);
	return NULL;
}

/* Starts the threads that wait for the job; false if none could start. */
static int vjob_start(struct vjob *j)
{
	sigset_t all, old;
	pthread_attr_t attr;
	unsigned int base;
	int ret = 0;

	/* engine threads take no signals (T8); small stacks */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (base = 0; base < j->nr; base += VCHUNK) {
		struct vthread *t = malloc(sizeof(*t));
		pthread_t th;

		if (!t) {
			ret = -ENOMEM;
			break;
		}
		t->j = j;
		t->base = base;
		t->n = j->nr - base < VCHUNK ? j->nr - base : VCHUNK;
		memcpy(t->v, &j->v[base], t->n * sizeof(t->v[0]));
		atomic_fetch_add_explicit(&j->refs, 1, memory_order_relaxed);
		if (pthread_create(&th, &attr, vthread_main, t)) {
			atomic_fetch_sub_explicit(&j->refs, 1,
						  memory_order_relaxed);
			free(t);
			ret = -ENOMEM;
			break;
		}
		pthread_setname_np(th, "iou-futexv");
	}
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		vjob_end(j, VJ_ENDED); /* the started ones return */
	return ret;
}

/*
 * Returns once every thread of the job is queued on all its futexes, as
 * the kernel's futex_wait_multiple_setup queues the request's before
 * enter returns, so a wake that follows (even one that changes no value)
 * finds them.  futex_waitv(2) queues its entries in order and the state
 * word is each thread's last: once the word has a waiter per thread
 * (counted by requeueing it onto itself, which moves nothing), the
 * application's futexes have them too.  A job that ended meanwhile, or a
 * thread that never sleeps (its wait failed), ends the wait; so does a
 * second (the machine is starved: a wake before then may be missed).
 */
static void vjob_await_queued(struct vjob *j)
{
	long want = (long)((j->nr + VCHUNK - 1) / VCHUNK), n;
	struct timespec t0, now;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned int i = 0;; i++) {
		n = sys_futex(&j->state, FUTEX_CMP_REQUEUE_PRIVATE, 0, INT_MAX,
			      &j->state, VJ_WAITING);
		/* n < 0: EAGAIN, the job ended */
		if (n < 0 || n >= want)
			return;
		if (i % 64 == 63) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec - t0.tv_sec > 1)
				return;
		}
		sched_yield();
	}
}

/*
 * Whether the kernel accepts these futex2 flags in a waitv entry: asked
 * once per value, with an entry whose value differs (-EAGAIN: valid).
 * 0 unknown, 1 valid, 2 not.
 */
static _Atomic uint8_t vflags_ok[256];

static bool futexv_flags_valid(uint32_t flags)
{
	static uint32_t word[4] __attribute__((aligned(16))) = {
		1, 0xffffffffu, 0, 0
	};
	struct futex_waitv v = {
		.val = 0, .uaddr = (uint64_t)(uintptr_t)word, .flags = flags,
	};
	uint8_t ok;

	if (flags > 0xff)
		return false;
	ok = atomic_load_explicit(&vflags_ok[flags], memory_order_relaxed);
	if (ok)
		return ok == 1;
	ok = sys_futex_waitv(&v, 1) == -EINVAL ? 2 : 1;
	atomic_store_explicit(&vflags_ok[flags], ok, memory_order_relaxed);
	return ok == 1;
}

/* io_futexv_prep: no flags or mask, 1..128 entries read and checked now */
int uu_futexv_prep(struct uu_req *req)
{
	const struct io_uring_sqe *sqe = &req->sqe;
	unsigned int nr = sqe->len, i;
	struct vjob *j;

	uu_os_init(req);
	if (sqe->fd || sqe->buf_index || sqe->file_index || sqe->addr2 ||
	    sqe->futex_flags || sqe->addr3)
		return -EINVAL;
	if (!nr || nr > FUTEX_WAITV_MAX)
		return -EINVAL;
	j = calloc(1, sizeof(*j) + nr * sizeof(j->v[0]));
	if (!j)
		return -ENOMEM;
	atomic_init(&j->refs, 1);
	j->efd = -1;
	j->nr = nr;
	for (i = 0; i < nr; i++) {
		struct futex_waitv *w = &j->v[i];

		/* integer arithmetic: addr may be 0 (the copy then faults) */
		if (uu_copy_from_user(w, (const void *)(uintptr_t)
				      (sqe->addr + i * sizeof(*w)),
				      sizeof(*w))) {
			free(j);
			return -EFAULT;
		}
		/* futex_validate_input: the value fits the 32-bit futex */
		if (w->__reserved || !futexv_flags_valid(w->flags) ||
		    (w->val >> 32)) {
			free(j);
			return -EINVAL;
		}
	}
	uu_os_take(req, j, NULL);
	return 0;
}

/*
 * futex_wait_multiple_setup's checks, by the kernel itself: every key
 * (alignment, a mapped page for a shared futex), then the values in
 * order.  The vector gets one more entry whose value differs, so that the
 * call never sleeps; -EAGAIN then means "all equal, or one differs",
 * which reading the values tells apart.  (A vector of 128 takes two
 * calls: a key error in the second still beats a value in the first, a
 * fault's place in the order is approximate there.)  A wake that finds
 * the check's queued entries completes the request as woken, as the
 * kernel's would.
 */
static int futexv_check(struct vjob *j)
{
	static uint32_t never = 1;
	struct futex_waitv v[FUTEX_WAITV_MAX];
	unsigned int base, n;
	int err = 0;
	long ret;

	for (base = 0; base < j->nr; base += VCHUNK) {
		n = j->nr - base < VCHUNK ? j->nr - base : VCHUNK;
		memcpy(v, &j->v[base], n * sizeof(v[0]));
		v[n] = (struct futex_waitv){
			.val = 0, .uaddr = (uint64_t)(uintptr_t)&never,
			.flags = UU_FUTEX2_SIZE_U32 | UU_FUTEX2_PRIVATE,
		};
		ret = sys_futex_waitv(v, n + 1);
		/* woken while queued by the check: the wake was for us */
		if (ret >= 0 && ret < n)
			return (int)(base + ret);
		/* only the keys give -EINVAL, and they come first */
		if (ret == -EINVAL)
			return -EINVAL;
		if (ret < 0 && ret != -EAGAIN && !err)
			err = (int)ret;
	}
	if (err)
		return err;
	ret = vdiffers(j->v, j->nr);
	return ret == -1 ? 0 : ret == -EFAULT ? -EFAULT : -EAGAIN;
}

int uu_futexv_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct vjob *j = req->os.hdr.mem;
	uint64_t cnt;
	int ret;

	if (j->efd < 0) {
		ret = futexv_check(j);
		if (ret)
			return ret;
		ret = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (ret < 0)
			return -errno;
		j->efd = uu_fd_to_reserved(ret);
		ret = vjob_start(j);
		if (ret)
			return ret;
		vjob_await_queued(j);
	} else if (issue_flags & UU_ISSUE_F_WORKER) {
		/* the eventfd could not be polled: wait here, interruptible
		 * by a cancel (T7) */
		uu_iowq_blocking(true);
		while (atomic_load_explicit(&j->state, memory_order_acquire) ==
		       VJ_WAITING && !uu_req_cancelled(req))
			uu_sys_cp(SYS_futex, (long)&j->state,
				  FUTEX_WAIT_PRIVATE, VJ_WAITING, 0, 0, 0);
		uu_iowq_blocking(false);
		if (atomic_load_explicit(&j->state, memory_order_acquire) !=
		    VJ_DONE)
			return -ECANCELED;
	}
	/* acquire: pairs with vjob_end's release of res */
	if (atomic_load_explicit(&j->state, memory_order_acquire) == VJ_DONE)
		return j->res;
	/* not done: a stale readiness; drain it and wait again */
	while (read(j->efd, &cnt, sizeof(cnt)) > 0)
		;
	if (atomic_load_explicit(&j->state, memory_order_acquire) == VJ_DONE)
		return j->res;
	req->fd = j->efd;
	return uu_park(req, UU_ISSUE_PARK_POLLIN);
}

/* At completion, whatever it was: the threads still waiting are woken off
 * their futexes by the state word (no spurious wakeups for anyone). */
void uu_futexv_cleanup(struct uu_req *req)
{
	struct vjob *j = req->os.hdr.mem;

	req->os.hdr.mem = NULL; /* shared with the threads: not uu_os_drop */
	if (j && req->os.hdr.tag == uu_os_tag(req)) {
		vjob_end(j, VJ_ENDED);
		vjob_put(j);
	}
	uu_os_release(req);
}
