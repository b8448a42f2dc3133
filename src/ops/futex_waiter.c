// SPDX-License-Identifier: MIT
/*
 * FUTEX_WAIT and FUTEX_WAITV: the threads that wait on the application's
 * futexes for a request (ops/futex.c issues the opcodes).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/registry.h"
#include "core/tctx.h"
#include "core/types.h"
#include "ops/futex_waiter.h"
#include "util/cpsys.h"
#include "util/rawsys.h"
#include "util/usercopy.h"

static long sys_futex(void *uaddr, int op, uint32_t val, unsigned long val2,
		      void *uaddr2, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, val2, uaddr2, val3);
}

/*
 * The kernel queues the request's futex_q (one per futex for WAITV) before
 * enter returns, so any later wake finds it, also one that changes no
 * value; the first wake claims the request and the CQE says which futex it
 * was (WAITV) or 0 (WAIT); a cancel takes the request's entries off alone.
 *
 * A user-space waiter is a thread sleeping in the kernel.  Each job (one
 * request) gets fresh threads that wait on the application's futexes
 * themselves, and the issue returns only once they are queued there
 * (uu_vjob_await_queued).  Threads are never reused: a thread woken by the
 * application's wake may still have that wake's wake-up pending in the
 * kernel (the waker marks the waiter, drops the bucket lock, and only then
 * wakes the task), and a reused thread would take it as a spurious wakeup
 * in its next wait, after which the kernel requeues the wait at the tail
 * and checks the value again (the early completions and FIFO losses of
 * the pooled, requeued sleepers this replaces; docs/compatibility.md #15).
 * A fresh thread has no such past: nothing but a wake of its futexes or
 * the job's end ends its wait.
 *
 * Two kinds of job:
 *  - futex_waitv(2) threads (FUTEX_WAITV, and FUTEX_WAIT with the
 *    match-any bitset): each thread's vector carries one extra entry, the
 *    job's state word (expected VJ_WAITING).  Whoever ends the job (a
 *    thread that was woken, a cancel, the ring's exit) moves the state off
 *    VJ_WAITING and wakes that word, which takes every thread off all its
 *    futexes without a signal and without waking anybody else.  That
 *    extra entry leaves 127 of the syscall's 128 slots to the
 *    application, so a vector of 128 is split over two threads.
 *  - a direct thread (FUTEX_WAIT with another bitset, or NUMA/MPOL
 *    flags, which futex_waitv(2) cannot express): it waits in
 *    futex_wait(2) with the request's own value, bitset and flags, so the
 *    kernel applies the bitset; a cancel interrupts that wait with the
 *    engine's private signal (util/cpsys.h: the window check makes it
 *    exact), which dequeues that waiter alone.
 *
 * The values are checked at issue as the kernel's setup checks them (same
 * errors, -EAGAIN if one differs): by a futex_waitv(2) that cannot sleep
 * (futexv_check), or by the direct thread's own first wait.  A change of
 * value between the check and the threads' queueing is not missed:
 * the wait then fails with EAGAIN and the request completes with the index
 * of the first futex whose value differs (0 for FUTEX_WAIT), the futex the
 * usual protocol (change the value, then wake) woke; if the value changed
 * back, the thread waits again.
 *
 * The request waits on the readiness engine for an eventfd that the
 * winning thread signals, so ASYNC_CANCEL and ring teardown find it there
 * and complete it -ECANCELED, as the kernel's futex list does.
 */
struct vthread {
	struct vjob *j;
	unsigned int base, n;
	struct futex_waitv v[FUTEX_WAITV_MAX];
};

void uu_vjob_put(struct vjob *j)
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
	 * vjob_issue) */
	if (!atomic_compare_exchange_strong_explicit(&j->state, &waiting, to,
						     memory_order_acq_rel,
						     memory_order_acquire))
		return false;
	sys_futex(&j->state, FUTEX_WAKE_PRIVATE, INT_MAX, 0, NULL, 0);
	return true;
}

/* A thread that won the job signals the request's eventfd. */
static void vjob_done(struct vjob *j, int res)
{
	uint64_t one = 1;

	j->res = res;
	if (vjob_end(j, VJ_DONE) && write(j->efd, &one, sizeof(one)) < 0) {
		/* an eventfd counter cannot overflow here */
	}
}

/*
 * A thread was woken by the application's wake but the job had already
 * ended (cancelled, the ring closed): on the kernel that wake would not
 * have found the cancelled request and woken another waiter instead, so
 * it is passed on (one wake, with the same bitset where it is known).
 */
static void pass_wake_on(const struct futex_waitv *v, uint32_t mask)
{
	syscall(SYS_futex_wake, (void *)(uintptr_t)v->uaddr,
		(unsigned long)mask, 1, v->flags);
}

/*
 * A thread has left its futexes for good (and passed on a wake it took
 * after the job's end): counted for uu_vjob_await_left.
 */
static void vjob_left(struct vjob *j)
{
	/* release: pairs with the acquire in uu_vjob_await_left */
	atomic_fetch_add_explicit(&j->left, 1, memory_order_release);
	sys_futex(&j->left, FUTEX_WAKE_PRIVATE, INT_MAX, 0, NULL, 0);
}

/* A thread is about to wait: counted for uu_vjob_await_queued. */
static void vjob_started(struct vjob *j)
{
	/* release: the direct thread's tid before the count (acquire in
	 * uu_vjob_await_queued and uu_vjob_stop) */
	atomic_fetch_add_explicit(&j->started, 1, memory_order_release);
	sys_futex(&j->started, FUTEX_WAKE_PRIVATE, INT_MAX, 0, NULL, 0);
}

long uu_futex_waitv(struct futex_waitv *v, unsigned int nr)
{
	long ret = syscall(SYS_futex_waitv, v, nr, 0, NULL, 0);

	return ret < 0 ? -errno : ret;
}

/* The index of the first entry of v[0..nr) whose value differs, -1 if
 * none; -EFAULT if one cannot be read. */
int uu_futex_vdiffers(const struct futex_waitv *v, unsigned int nr)
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

static void spares_refill(void);

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
	vjob_started(j);
	for (;;) {
		ret = uu_futex_waitv(t->v, t->n + 1);
		/* acquire: pairs with vjob_end's release */
		if (atomic_load_explicit(&j->state, memory_order_acquire) !=
		    VJ_WAITING) {
			if (ret >= 0 && ret < (long)t->n)
				pass_wake_on(&t->v[ret],
					     FUTEX_BITSET_MATCH_ANY);
			break;
		}
		if (ret == -EINTR || ret == (long)t->n)
			continue;
		if (ret >= 0) {
			res = (int)(t->base + ret);
		} else if (ret == -EAGAIN) {
			/* a value changed after the check */
			res = uu_futex_vdiffers(t->v, t->n);
			if (res == -1)
				continue; /* changed back: wait again */
			if (res >= 0)
				res += (int)t->base;
		} else {
			res = (int)ret;
		}
		vjob_done(j, res);
		break;
	}
	vjob_left(j);
	uu_vjob_put(j);
	free(t);
	spares_refill(); /* this thread's replacement */
	return NULL;
}

/*
 * The direct thread: futex_wait(2) with the request's value, bitset and
 * flags, through the cancellable stub (util/cpsys.h) with the job's own
 * cancel word.  Its first wait's errors are the (the kernel's
 * futex_wait_setup: -EINVAL, -EFAULT, -EAGAIN); a wait restarted after a
 * stray signal of the private number that finds the value changed counts
 * as woken, as a change after the issue does for futex_waitv threads.
 */
static void *direct_main(void *arg)
{
	struct vjob *j = arg;
	const struct futex_waitv *v = &j->v[0];
	int sig = uu_cp_signal();
	bool first = true;
	long ret;

	/* every other async signal stays blocked (T8) */
	if (sig > 0) {
		sigset_t one;

		sigemptyset(&one);
		sigaddset(&one, sig);
		pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	}
	atomic_store_explicit(&j->tid, uu_gettid(), memory_order_relaxed);
	vjob_started(j);
	for (;;) {
		ret = uu_cp_syscall6(&j->cp, SYS_futex_wait, (long)v->uaddr,
				     (long)v->val, (long)j->mask,
				     (long)v->flags, 0, 0);
		/* acquire: pairs with vjob_end's release */
		if (atomic_load_explicit(&j->state, memory_order_acquire) !=
		    VJ_WAITING) {
			if (ret == 0)
				pass_wake_on(v, j->mask);
			vjob_left(j);
			/* the job's end kicks this thread (uu_vjob_stop): it
			 * lives until then, so the tgkill finds it */
			while (!atomic_load_explicit(&j->kicked,
						     memory_order_acquire))
				sys_futex(&j->kicked, FUTEX_WAIT_PRIVATE, 0, 0,
					  NULL, 0);
			break;
		}
		if (ret == -EINTR) {
			first = false; /* a stray signal: wait again */
			continue;
		}
		vjob_done(j, ret == -EAGAIN && !first ? 0 : (int)ret);
		vjob_left(j);
		break;
	}
	uu_vjob_put(j);
	spares_refill(); /* this thread's replacement */
	return NULL;
}

/*
 * Waiter threads are started as spares: a spare is a thread that has
 * never waited on an application futex, asleep on a word of its own until
 * it is given a job (waiter_spawn wakes it with FUTEX_WAKE, whose wake-up
 * is delivered before that call returns; the spare starts the job only
 * after that, so none is left pending for the job's wait).  A job's thread that ends starts one replacement spare
 * (spares_refill), so the thread creation is off the path; the
 * thread itself then exits (never reused, see above).  Spare records are
 * recycled, never freed: a late FUTEX_WAKE on one can only reach another
 * spare, which looks at its word again.
 */
#define SPARES_MAX 4

struct spare {
	_Atomic uint32_t go;    /* 1 once it has a job (a futex word) */
	_Atomic uint32_t handed; /* 1 once the FUTEX_WAKE of go returned */
	void *(*fn)(void *);
	void *arg;
	struct spare *next;     /* spares or free records */
};

static pthread_mutex_t spares_lock = PTHREAD_MUTEX_INITIALIZER;
static struct spare *spares, *spare_records;
static unsigned int nspares; /* spares, and spares being started */
static pthread_once_t spares_once = PTHREAD_ONCE_INIT;

/* The spares do not survive fork: the child starts its own. */
static void spares_atfork_child(void)
{
	pthread_mutex_init(&spares_lock, NULL);
	spares = NULL;
	nspares = 0;
}

static void spares_init(void)
{
	pthread_atfork(NULL, NULL, spares_atfork_child);
}

/* Every waiter thread starts here (uu_thread_start: no signals, T8),
 * as a spare or with its job already given (waiter_spawn). */
static void *spare_main(void *arg)
{
	struct spare *sp = arg;
	void *(*fn)(void *);
	void *fn_arg;

	pthread_setname_np(pthread_self(), "iou-futex");
	uu_thread_ready();
	/* acquire: pairs with the release in waiter_spawn */
	while (!atomic_load_explicit(&sp->go, memory_order_acquire))
		sys_futex(&sp->go, FUTEX_WAIT_PRIVATE, 0, 0, NULL, 0);
	/*
	 * The spawner's FUTEX_WAKE may not have delivered its wake-up yet:
	 * the kernel unqueues a waiter under the bucket lock and wakes the
	 * task only after dropping it, and a waiter that was unqueued
	 * before it slept returns without sleeping.  Taken into the job's
	 * wait, that wake-up is a spurious one, and the kernel's retry
	 * takes the thread off the application's futex for a moment: a
	 * FUTEX_WAKE then finds nobody (test_diff_futex futex_wait, about
	 * once in 1000 runs beside two CPU hogs).  So wait, spinning (a
	 * futex wait could take that very wake-up), until the call has
	 * returned.  Acquire: pairs with the release in waiter_spawn.
	 */
	while (!atomic_load_explicit(&sp->handed, memory_order_acquire))
		sched_yield();
	fn = sp->fn;
	fn_arg = sp->arg;
	atomic_store_explicit(&sp->go, 0, memory_order_relaxed);
	atomic_store_explicit(&sp->handed, 0, memory_order_relaxed);
	pthread_mutex_lock(&spares_lock);
	sp->next = spare_records;
	spare_records = sp;
	pthread_mutex_unlock(&spares_lock);
	return fn(fn_arg);
}

/* One more spare if there are fewer than SPARES_MAX. */
static void spares_refill(void)
{
	struct spare *sp;

	pthread_once(&spares_once, spares_init);
	pthread_mutex_lock(&spares_lock);
	if (nspares >= SPARES_MAX) {
		pthread_mutex_unlock(&spares_lock);
		return;
	}
	nspares++;
	sp = spare_records;
	if (sp)
		spare_records = sp->next;
	pthread_mutex_unlock(&spares_lock);
	if (!sp)
		sp = calloc(1, sizeof(*sp));
	if (!sp || uu_thread_start(spare_main, sp)) {
		pthread_mutex_lock(&spares_lock);
		nspares--;
		if (sp) {
			sp->next = spare_records;
			spare_records = sp;
		}
		pthread_mutex_unlock(&spares_lock);
		return;
	}
	pthread_mutex_lock(&spares_lock);
	sp->next = spares;
	spares = sp;
	pthread_mutex_unlock(&spares_lock);
}

/* No spare: a new thread, started as a spare whose job is already given
 * (go set before it starts). */
static int waiter_start(void *(*fn)(void *), void *arg)
{
	struct spare *sp;

	pthread_mutex_lock(&spares_lock);
	sp = spare_records;
	if (sp)
		spare_records = sp->next;
	pthread_mutex_unlock(&spares_lock);
	if (!sp && !(sp = calloc(1, sizeof(*sp))))
		return -ENOMEM;
	sp->fn = fn;
	sp->arg = arg;
	atomic_store_explicit(&sp->go, 1, memory_order_relaxed);
	atomic_store_explicit(&sp->handed, 1, memory_order_relaxed);
	if (uu_thread_start(spare_main, sp)) {
		atomic_store_explicit(&sp->go, 0, memory_order_relaxed);
		atomic_store_explicit(&sp->handed, 0, memory_order_relaxed);
		pthread_mutex_lock(&spares_lock);
		sp->next = spare_records;
		spare_records = sp;
		pthread_mutex_unlock(&spares_lock);
		return -ENOMEM;
	}
	return 0;
}

/* Runs fn(arg) on a spare, or on a new thread if there is none. */
static int waiter_spawn(void *(*fn)(void *), void *arg)
{
	struct spare *sp;

	pthread_once(&spares_once, spares_init);
	pthread_mutex_lock(&spares_lock);
	sp = spares;
	if (sp) {
		spares = sp->next;
		nspares--;
	}
	pthread_mutex_unlock(&spares_lock);
	if (!sp)
		return waiter_start(fn, arg);
	sp->fn = fn;
	sp->arg = arg;
	/* release: fn and arg before go (acquire in spare_main) */
	atomic_store_explicit(&sp->go, 1, memory_order_release);
	sys_futex(&sp->go, FUTEX_WAKE_PRIVATE, 1, 0, NULL, 0);
	/* release: pairs with spare_main's acquire; the spare may recycle
	 * sp from here on, so this is the last access */
	atomic_store_explicit(&sp->handed, 1, memory_order_release);
	return 0;
}

/* Starts the threads that wait for the job; -ENOMEM if one could not
 * start (the started ones return). */
int uu_vjob_start(struct vjob *j)
{
	unsigned int base;
	int ret = 0;

	if (j->direct) {
		atomic_fetch_add_explicit(&j->refs, 1, memory_order_relaxed);
		if (waiter_spawn(direct_main, j)) {
			atomic_fetch_sub_explicit(&j->refs, 1,
						  memory_order_relaxed);
			ret = -ENOMEM;
		} else {
			j->nthreads++;
		}
	}
	for (base = 0; !j->direct && base < j->nr; base += VCHUNK) {
		struct vthread *t = malloc(sizeof(*t));

		if (!t) {
			ret = -ENOMEM;
			break;
		}
		t->j = j;
		t->base = base;
		t->n = j->nr - base < VCHUNK ? j->nr - base : VCHUNK;
		memcpy(t->v, &j->v[base], t->n * sizeof(t->v[0]));
		atomic_fetch_add_explicit(&j->refs, 1, memory_order_relaxed);
		if (waiter_spawn(vthread_main, t)) {
			atomic_fetch_sub_explicit(&j->refs, 1,
						  memory_order_relaxed);
			free(t);
			ret = -ENOMEM;
			break;
		}
		j->nthreads++;
	}
	if (ret)
		vjob_end(j, VJ_ENDED); /* the started ones return */
	return ret;
}

/*
 * Whether the direct thread sleeps in its futex_wait(2) on the job's
 * futex.  /proc/self/task/TID/syscall names the call a thread is blocked
 * in only once the scheduler has taken it off the CPU ("running"
 * otherwise); inside futex_wait(2) that happens in futex_do_wait's
 * schedule(), after futex_queue.  (Only a page fault on the word, just
 * read by the issue, could block it there earlier.)  Without /proc the
 * thread counts as queued once it started: a wake in the few
 * instructions before it sleeps may then be missed.
 */
static bool direct_queued(struct vjob *j)
{
	pid_t tid = atomic_load_explicit(&j->tid, memory_order_relaxed);
	unsigned long long a1;
	char path[64], buf[128];
	long nr;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	uu_sys_close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	return sscanf(buf, "%ld %llx", &nr, &a1) == 2 &&
	       nr == SYS_futex_wait && a1 == j->v[0].uaddr;
}

/*
 * Returns once every thread of the job is queued on all its futexes, as
 * the kernel's futex_wait_multiple_setup / futex_wait_setup queue the
 * request's before enter returns, so a wake that follows (even one that
 * changes no value) finds them; or once the job has ended (a thread was
 * woken, or its wait failed).  First it sleeps until every thread has
 * started (vjob_started); then, for the few instructions from there into
 * the kernel's queue, it looks and yields.  futex_waitv(2) queues its
 * entries in order and the state word is each thread's last: once the
 * word has a waiter per thread (counted by requeueing it onto itself,
 * which moves nothing), the application's futexes have them too.  No time
 * limit: each thread either gets queued or ends the job.
 */
void uu_vjob_await_queued(struct vjob *j)
{
	long want = j->direct ? 1 : (long)((j->nr + VCHUNK - 1) / VCHUNK);
	uint32_t s;
	long n;

	/* acquire: pairs with vjob_started's release */
	while ((s = atomic_load_explicit(&j->started, memory_order_acquire)) <
	       (uint32_t)want) {
		if (atomic_load_explicit(&j->state, memory_order_acquire) !=
		    VJ_WAITING)
			return;
		sys_futex(&j->started, FUTEX_WAIT_PRIVATE, s, 0, NULL, 0);
	}
	for (;;) {
		if (atomic_load_explicit(&j->state, memory_order_acquire) !=
		    VJ_WAITING)
			return;
		if (j->direct) {
			if (direct_queued(j))
				return;
		} else {
			n = sys_futex(&j->state, FUTEX_CMP_REQUEUE_PRIVATE, 0,
				      INT_MAX, &j->state, VJ_WAITING);
			/* n < 0: EAGAIN, the job ended */
			if (n < 0 || n >= want)
				return;
		}
		sched_yield();
	}
}

/*
 * The job's end, whoever ends it: its threads are taken off their futexes
 * (the state word; the direct thread by the private signal, or, only if
 * that signal has no handler, by waking everybody on the futex).
 */
void uu_vjob_stop(struct vjob *j)
{
	pid_t tid;
	int sig;

	if (!vjob_end(j, VJ_ENDED) || !j->direct)
		return;
	/* acquire: the thread's tid (stored before it counted itself) */
	if (!atomic_load_explicit(&j->started, memory_order_acquire))
		return; /* never started */
	tid = atomic_load_explicit(&j->tid, memory_order_relaxed);
	sig = uu_cp_signal();
	/* the cancel word before the signal: the handler reads it */
	atomic_store_explicit(&j->cp.cancel, 1, memory_order_seq_cst);
	if (sig <= 0 || syscall(SYS_tgkill, getpid(), tid, sig))
		syscall(SYS_futex_wake, (void *)(uintptr_t)j->v[0].uaddr,
			(unsigned long)FUTEX_BITSET_MATCH_ANY, INT_MAX,
			j->v[0].flags);
	/* release: pairs with the acquire in direct_main's kick wait */
	atomic_store_explicit(&j->kicked, 1, memory_order_release);
	sys_futex(&j->kicked, FUTEX_WAKE_PRIVATE, INT_MAX, 0, NULL, 0);
}

/*
 * Returns once every thread of an ended job has left its futexes.  The
 * kernel's cancel (and the wake that claims a WAITV request) takes all
 * of the request's entries off their futexes before it returns; a
 * thread's wait ends only when it runs, so the request's end waits for
 * that: a wake right after the cancel must not find the thread there.
 */
void uu_vjob_await_left(struct vjob *j)
{
	uint32_t n;

	/* acquire: pairs with vjob_left's release */
	while ((n = atomic_load_explicit(&j->left, memory_order_acquire)) <
	       j->nthreads)
		sys_futex(&j->left, FUTEX_WAIT_PRIVATE, n, 0, NULL, 0);
}
