// SPDX-License-Identifier: MIT
/*
 * fd number -> ring (docs/architecture.md, "Lookup" and "Last close").
 *
 * Ring structs are type-stable: once allocated they are recycled through a
 * free list, never returned to malloc.  The fd table holds no references;
 * a lookup loads the slot, takes a reference only if the count is non-zero
 * (inc-not-zero), and then re-checks that the slot still names this ring
 * and that it is alive.  A reader that raced with the ring's death and
 * recycling therefore either fails the inc or fails the re-check, and only
 * ever touches memory that is still a struct uu_ring.
 */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/config.h"
#include "core/cq.h"
#include "core/registry.h"
#include "core/ring.h"
#include "core/tctx.h"
#include "core/types.h"
#include "ring/mem.h"
#include "util/fault.h"
#include "util/fdutil.h"
#include "util/forkhook.h"
#include "util/rawsys.h"

#define L1_BITS 10
#define L2_BITS 10
#define L1_SIZE (1u << L1_BITS)
#define L2_SIZE (1u << L2_BITS)
#define MAX_FD (L1_SIZE * L2_SIZE)

typedef _Atomic(struct uu_ring *) slot_t;
static _Atomic(slot_t *) fd_table[L1_SIZE];
static atomic_int max_fd_seen = -1;

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct live_node {
	struct uu_ring *ring;
	struct live_node *next;
} *live_list;
static atomic_int live_count;

static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uu_ring *free_rings[64];
static int nr_free_rings;

atomic_uint uu_fork_generation;

pid_t uu_gettid_slow(void)
{
	uu_tctx.tid = (pid_t)syscall(SYS_gettid);
	return uu_tctx.tid;
}

/*
 * Engine threads that start at setup, at a fork or at a child's first use
 * of a ring (poller, timer, SQPOLL, xproc service): the starter returns
 * only once the new thread calls uu_thread_ready, at the end of its own
 * start-up, just before it blocks in its loop.
 *
 * Why: a thread's start-up allocates and takes locks of the runtime
 * beneath the engine (a sanitizer's allocator and thread registry; clang
 * 14's ASan holds none of them across fork, unlike glibc's malloc), and
 * the application does not know these threads exist: it may fork right
 * after io_uring_setup returns, as liburing's tests do.  A fork in the
 * middle of such a start-up gives the child that lock held for good, and
 * the child's next thread start, allocation in that size class, or its
 * leak check at exit blocks forever (test_diff_fork under ASan: a child
 * forked just after setup hung in its exit handler's leak check, its
 * poller and timer threads stuck in calloc in ASan's thread start).
 */
struct thread_start {
	void *(*fn)(void *);
	void *arg;
	/* futex word: 1 once the thread is up, 2 once its FUTEX_WAKE of this
	 * word has returned */
	_Atomic uint32_t ready;
};

void uu_thread_ready(void)
{
	struct thread_start *s = uu_tctx.thread_start;

	if (!s)
		return;
	uu_tctx.thread_start = NULL;
	/* release, paired with the starter's acquire: our start-up is
	 * over when it goes on */
	atomic_store_explicit(&s->ready, 1, memory_order_release);
	syscall(SYS_futex, &s->ready, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	/* s is on the starter's stack, gone once it sees 2.  Not before: a
	 * FUTEX_WAKE still in flight once the word is reused could wake
	 * whoever then waits there (an application futex, which an
	 * io_uring FUTEX_WAIT's waiter would take as its wake), and the
	 * starter, if it saw 1 without sleeping, could take the wake-up
	 * the call has yet to deliver in its next sleep.  Release: pairs
	 * with the starter's acquire; the last access to s. */
	atomic_store_explicit(&s->ready, 2, memory_order_release);
}

static void *thread_trampoline(void *p)
{
	struct thread_start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg;
	void *ret;

	uu_tctx.thread_start = s;
	ret = fn(arg);
	uu_thread_ready(); /* a thread that ended before its loop */
	return ret;
}

/* 0 or -errno; the thread runs detached, with every signal blocked (T8) */
int uu_thread_start(void *(*fn)(void *), void *arg)
{
	struct thread_start s = { .fn = fn, .arg = arg };
	sigset_t all, old;
	pthread_t th;
	int ret;

	if (uu_fault(UU_FAULT_THREAD_START))
		return -EAGAIN;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&th, NULL, thread_trampoline, &s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return ret;
	pthread_detach(th);
	while (!atomic_load_explicit(&s.ready, memory_order_acquire))
		syscall(SYS_futex, &s.ready, FUTEX_WAIT_PRIVATE, 0, NULL, NULL,
			0);
	/* the thread's FUTEX_WAKE returns at once: spin, a futex wait
	 * here could take that very wake-up (uu_thread_ready) */
	while (atomic_load_explicit(&s.ready, memory_order_acquire) != 2)
		sched_yield();
	return 0;
}

/*
 * fork: the live-ring list is consistent in the child (the forking thread
 * holds its lock across the fork).  Each mechanism forgets its own state
 * in its own hook (util/forkhook.h); the shared-ring machinery looks at
 * the live rings from its hook, ranked inside this one
 * (uu_registry_fork_each).
 */
static void registry_atfork_prepare(void)
{
	pthread_mutex_lock(&live_lock);
}

static void registry_atfork_parent(void)
{
	pthread_mutex_unlock(&live_lock);
}

static void registry_atfork_child(void)
{
	/* every ring is now the parent's, until this process's first use
	 * of it adopts it (xproc/xproc.c) */
	atomic_fetch_add(&uu_fork_generation, 1);
	uu_tctx.tid = 0;
	pthread_mutex_unlock(&live_lock);
}

UU_FORK_HOOK(registry_fork_hook, UU_FORK_RANK_REGISTRY,
	     registry_atfork_prepare, registry_atfork_parent,
	     registry_atfork_child)

/* fn on each live ring of this process's engine, inside the fork window
 * (prepare, between this file's hook and its parent/child: live_lock is
 * held by the forking thread) */
void uu_registry_fork_each(void (*fn)(struct uu_ring *ring))
{
	for (struct live_node *n = live_list; n; n = n->next)
		if (!uu_ring_foreign(n->ring))
			fn(n->ring);
}

__attribute__((constructor)) static void registry_init(void)
{
	uu_config_load();
}

static slot_t *slot_of(int fd, bool create)
{
	slot_t *l2;

	if (fd < 0 || (unsigned int)fd >= MAX_FD)
		return NULL;
	l2 = atomic_load_explicit(&fd_table[fd >> L2_BITS],
				  memory_order_acquire);
	if (!l2 && create) {
		slot_t *fresh = calloc(L2_SIZE, sizeof(*fresh));
		slot_t *expected = NULL;

		if (!fresh)
			return NULL;
		if (atomic_compare_exchange_strong_explicit(
			    &fd_table[fd >> L2_BITS], &expected, fresh,
			    memory_order_acq_rel, memory_order_acquire))
			l2 = fresh;
		else {
			free(fresh);
			l2 = expected;
		}
	}
	return l2 ? &l2[fd & (L2_SIZE - 1)] : NULL;
}

struct uu_ring *uu_ring_alloc(void)
{
	struct uu_ring *r = NULL;

	pthread_mutex_lock(&free_lock);
	if (nr_free_rings)
		r = free_rings[--nr_free_rings];
	pthread_mutex_unlock(&free_lock);
	if (!r)
		return calloc(1, sizeof(*r));
	/* refs stays 0 (a stale reader's inc-not-zero keeps failing) */
	memset((char *)r + sizeof(r->refs), 0, sizeof(*r) - sizeof(r->refs));
	return r;
}

void uu_ring_recycle(struct uu_ring *r)
{
	pthread_mutex_lock(&free_lock);
	if (nr_free_rings < (int)(sizeof(free_rings) / sizeof(free_rings[0]))) {
		free_rings[nr_free_rings++] = r;
		r = NULL;
	}
	pthread_mutex_unlock(&free_lock);
	/* More than 64 dead rings at once: keep the struct allocated anyway
	 * (type-stable memory); it is leaked, not freed. */
	(void)r;
}

void uu_registry_note_fd(struct uu_ring *ring, int fd)
{
	slot_t *s = slot_of(fd, true);
	int m;

	if (!s)
		return;
	atomic_store_explicit(s, ring, memory_order_release);
	m = atomic_load(&max_fd_seen);
	while (fd > m && !atomic_compare_exchange_weak(&max_fd_seen, &m, fd))
		;
}

int uu_registry_add(struct uu_ring *ring, int fd)
{
	struct live_node *n = malloc(sizeof(*n));

	if (!n)
		return -ENOMEM;
	n->ring = ring;
	pthread_mutex_lock(&live_lock);
	n->next = live_list;
	live_list = n;
	atomic_fetch_add(&live_count, 1);
	pthread_mutex_unlock(&live_lock);
	uu_registry_note_fd(ring, fd);
	return 0;
}

static bool get_not_zero(struct uu_ring *r)
{
	int v = atomic_load_explicit(&r->refs, memory_order_relaxed);

	while (v > 0) {
		if (atomic_compare_exchange_weak_explicit(
			    &r->refs, &v, v + 1, memory_order_acquire,
			    memory_order_relaxed))
			return true;
	}
	return false;
}

void uu_ring_put(struct uu_ring *r)
{
	if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1) {
		if (uu_config.stats_path)
			uu_stats_report(r, "release");
		uu_ring_free(r);
	}
}

struct uu_ring *uu_ring_get_cached(int fd)
{
	slot_t *s = slot_of(fd, false);
	struct uu_ring *r;

	if (!s)
		return NULL;
	r = atomic_load_explicit(s, memory_order_acquire);
	if (!r || !get_not_zero(r))
		return NULL;
	if (atomic_load_explicit(s, memory_order_acquire) != r ||
	    atomic_load_explicit(&r->dead, memory_order_acquire)) {
		uu_ring_put(r);
		return NULL;
	}
	return r;
}

bool uu_registry_fd_cached(int fd)
{
	slot_t *s = slot_of(fd, false);

	return s && atomic_load_explicit(s, memory_order_relaxed);
}

/* Slow path: identify the ring behind fd by its inode. */
struct uu_ring *uu_ring_get(int fd, int *err)
{
	struct uu_ring *r = uu_ring_get_cached(fd);
	struct live_node *n;
	struct stat st;

	if (r)
		return r;
	if (fd < 0 || fstat(fd, &st)) {
		*err = -EBADF;
		return NULL;
	}
	*err = -EOPNOTSUPP;
	if (!S_ISSOCK(st.st_mode) || !atomic_load(&live_count))
		return NULL;
	pthread_mutex_lock(&live_lock);
	for (n = live_list; n; n = n->next) {
		if (n->ring->ring_ino == st.st_ino &&
		    n->ring->ring_dev == st.st_dev &&
		    !atomic_load(&n->ring->dead) && get_not_zero(n->ring)) {
			r = n->ring;
			break;
		}
	}
	pthread_mutex_unlock(&live_lock);
	if (r)
		uu_registry_note_fd(r, fd);
	return r;
}

/* fn on each live ring, outside the registry's lock (with a reference) */
void uu_registry_for_each_arg(void (*fn)(struct uu_ring *ring, void *arg),
			      void *arg)
{
	struct uu_ring **v = NULL;
	struct live_node *n;
	int nr = 0, cap = 0;

	pthread_mutex_lock(&live_lock);
	for (n = live_list; n; n = n->next) {
		if (nr == cap) {
			struct uu_ring **nv;

			cap = cap ? 2 * cap : 16;
			nv = realloc(v, (size_t)cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		if (!atomic_load(&n->ring->dead) && get_not_zero(n->ring))
			v[nr++] = n->ring;
	}
	pthread_mutex_unlock(&live_lock);
	for (int i = 0; i < nr; i++) {
		fn(v[i], arg);
		uu_ring_put(v[i]);
	}
	free(v);
}

struct each_plain {
	void (*fn)(struct uu_ring *ring);
};

static void each_plain(struct uu_ring *ring, void *arg)
{
	((struct each_plain *)arg)->fn(ring);
}

void uu_registry_for_each(void (*fn)(struct uu_ring *ring))
{
	struct each_plain p = { fn };

	uu_registry_for_each_arg(each_plain, &p);
}

/* The ring has no fd left anywhere: unlink it and drop the registry ref. */
static void ring_kill_locked(struct uu_ring *r, struct live_node **pp)
{
	struct live_node *n = *pp;
	int m = atomic_load(&max_fd_seen);

	*pp = n->next;
	free(n);
	atomic_fetch_sub(&live_count, 1);
	atomic_store_explicit(&r->dead, true, memory_order_release);
	for (int fd = 0; fd <= m; fd++) {
		slot_t *s = slot_of(fd, false);
		struct uu_ring *expected = r;

		if (s)
			atomic_compare_exchange_strong(s, &expected, NULL);
	}
}

static bool peer_hung_up(struct uu_ring *r)
{
	struct pollfd pfd = { .fd = r->peer_fd, .events = POLLIN };

	if (uu_fd_ino(r->peer_fd) != r->peer_ino)
		return false; /* peer closed by the app: cannot tell (T4) */
	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP);
}

/*
 * After a close of an fd that referred to r (or of its last RING_FDS
 * slot): true if that was the ring's last fd anywhere, in which case it
 * is unlinked and dead, and the caller owns the registry's reference and
 * runs the ring's exit (core/ring_exit.c).
 */
bool uu_registry_kill_closed(struct uu_ring *r)
{
	struct live_node **pp;

	if (atomic_load_explicit(&r->regfd_pins, memory_order_acquire) ||
	    !peer_hung_up(r))
		return false;
	pthread_mutex_lock(&live_lock);
	for (pp = &live_list; *pp; pp = &(*pp)->next) {
		if ((*pp)->ring == r) {
			ring_kill_locked(r, pp);
			pthread_mutex_unlock(&live_lock);
			return true;
		}
	}
	pthread_mutex_unlock(&live_lock);
	return false;
}

/*
 * Readiness at a wait boundary (docs/architecture.md, "Readiness
 * approximation"): a ring whose fd is still readable although its CQ has
 * been drained in shared memory, without an enter (libuv's SQPOLL ring:
 * epoll says readable, the loop reaps the CQ, epolls again), is made
 * unreadable before the caller waits, as the kernel's poll would report
 * it then.  Without this such a loop spins at 100% CPU.  Rings with
 * overflowed CQEs or deferred task_work stay readable (the kernel's
 * io_has_work() reports them too); a forked child leaves the parent's
 * rings alone (the byte it would read is the parent's).
 */
void uu_registry_sync_readiness(void)
{
	struct uu_ring *stale[16];
	struct live_node *n;
	int nr = 0;

	if (!atomic_load_explicit(&live_count, memory_order_relaxed))
		return;
	pthread_mutex_lock(&live_lock);
	for (n = live_list; n && nr < 16; n = n->next) {
		struct uu_ring *r = n->ring;

		if (!atomic_load_explicit(r->signalled, memory_order_relaxed) ||
		    atomic_load_explicit(&r->dead, memory_order_acquire) ||
		    uu_ring_foreign(r) || uu_cq_ready(r) ||
		    atomic_load_explicit(&r->ovf_pending, memory_order_acquire) ||
		    atomic_load_explicit(&r->tw_pending, memory_order_acquire))
			continue;
		if (get_not_zero(r))
			stale[nr++] = r;
	}
	pthread_mutex_unlock(&live_lock);
	while (nr) {
		struct uu_ring *r = stale[--nr];

		if (!uu_cq_ready(r))
			uu_ring_drain_readiness(r, -1);
		uu_ring_put(r);
	}
}

/* The same for one fd a program polls (poll/ppoll): only that ring. */
void uu_ring_sync_readiness_fd(int fd)
{
	struct uu_ring *r = uu_ring_get_cached(fd);

	if (!r)
		return;
	if (atomic_load_explicit(r->signalled, memory_order_relaxed) &&
	    !uu_ring_foreign(r) && !uu_cq_ready(r) &&
	    !atomic_load_explicit(&r->ovf_pending, memory_order_acquire) &&
	    !atomic_load_explicit(&r->tw_pending, memory_order_acquire))
		uu_ring_drain_readiness(r, fd);
	uu_ring_put(r);
}

/* fd is about to be watched edge-triggered (the preload's epoll_ctl). */
void uu_ring_watch_edges_fd(int fd)
{
	struct uu_ring *r = uu_ring_get_cached(fd);

	if (!r)
		return;
	atomic_store_explicit(&r->edge_watch, true, memory_order_relaxed);
	uu_ring_put(r);
}

/*
 * UURING_STATS at exit: a line for each ring still open.  trylock: a
 * thread that exits the process while another holds live_lock must not
 * hang in a destructor (the lines are then missing).
 */
void uu_registry_report_live(void)
{
	struct live_node *n;

	if (!uu_config.stats_path || !atomic_load(&live_count))
		return;
	for (int i = 0; pthread_mutex_trylock(&live_lock); i++) {
		if (i == 100)
			return;
		usleep(1000);
	}
	for (n = live_list; n; n = n->next)
		uu_stats_report(n->ring, "exit");
	pthread_mutex_unlock(&live_lock);
}

__attribute__((destructor)) static void registry_fini(void)
{
	uu_registry_report_live();
}

/* Is addr the start of a live ring's engine mapping?  (TSan builds) */
bool uu_registry_is_engine_mapping(const void *addr)
{
	/* a live ring's or one retired by a resize (ring/mem.c) */
	return uu_ring_mem_is_engine_map(addr);
}

/*
 * Rings of this process whose every fd was closed behind our back (a raw
 * close_range): unlinked and dead, at most max of them into dead[], whose
 * registry references the caller owns (core/ring_exit.c uu_ring_sweep).
 */
int uu_registry_reap_closed(struct uu_ring **dead, int max)
{
	struct live_node **pp;
	int nr = 0;

	if (!atomic_load(&live_count))
		return 0;
	pthread_mutex_lock(&live_lock);
	for (pp = &live_list; *pp && nr < max;) {
		struct uu_ring *r = (*pp)->ring;

		if (r->owner_pid == getpid() &&
		    !atomic_load_explicit(&r->regfd_pins,
					  memory_order_acquire) &&
		    peer_hung_up(r)) {
			ring_kill_locked(r, pp);
			dead[nr++] = r;
		} else {
			pp = &(*pp)->next;
		}
	}
	pthread_mutex_unlock(&live_lock);
	return nr;
}

/* The fd no longer names its ring here; the ring it named, with a
 * reference, or NULL (core/ring_exit.c uu_ring_close_fd). */
struct uu_ring *uu_registry_forget_fd(int fd)
{
	struct uu_ring *r = NULL;
	int err;

	if (atomic_load_explicit(&live_count, memory_order_relaxed))
		r = uu_ring_get(fd, &err);
	if (r) {
		slot_t *s = slot_of(fd, false);
		struct uu_ring *expected = r;

		if (s)
			atomic_compare_exchange_strong(s, &expected, NULL);
	}
	return r;
}
