// SPDX-License-Identifier: MIT
/*
 * The experiment switches and the lock statistics (README "Configuration
 * knobs"), uuring only: the machinery, never timings.  Built against
 * libuuring_hooks (UURING_TEST_HOOKS in core/task_work.c holds the SQPOLL
 * thread's task_work runs and counts what is queued).  Every switch is
 * set through uuring_set_knob, so the test needs no environment.
 *
 *   knobs       uuring_set_knob accepts the documented values and refuses
 *               anything else with -EINVAL
 *   prio_order  SQPOLL ring with UURING_ISSUE_VIA_TW: a NOP's issue item
 *               is queued, then a pipe read's completion behind it; with
 *               UURING_PRIO_TW=1 the completion's CQE comes first, with 0
 *               the NOP's (queue order)
 *   wake_count  a waiter for 16 CQEs while another thread posts one per
 *               CQ commit, each once the waiter is asleep again:
 *               UURING_WAKE=every wakes it about once per commit,
 *               threshold about once per batch (statistics, with slack)
 *   lockstat    UURING_LOCKSTAT=1 and an io-wq workload, with split and
 *               with global io-wq locks: acquisitions counted where the
 *               workload takes locks, contended <= acquired everywhere,
 *               uuring_dump_stats prints the lines
 *
 * Waits are for events (a counter, a CQE, a thread's state), bounded by
 * a deadline of seconds that only a broken engine reaches.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "abi/io_uring_abi.h"
#include "uuring.h"

/* the hooks, in libuuring_hooks (hidden, but this is one static link) */
extern _Atomic bool uu_test_tw_hold;
extern _Atomic unsigned int uu_test_tw_done_queued, uu_test_tw_issue_queued;

static int failures;

#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__);  \
			fprintf(stderr, __VA_ARGS__);                         \
			fputc('\n', stderr);                                  \
			failures++;                                           \
		}                                                             \
	} while (0)

struct ring {
	int fd;
	unsigned char *rings;
	struct io_uring_sqe *sqes;
	_Atomic unsigned int *sq_tail, *sq_flags, *cq_head, *cq_tail;
	unsigned int sq_mask, cq_mask;
	struct io_uring_cqe *cqes;
	size_t rings_sz, sqes_sz;
};

static int ring_open(struct ring *r, unsigned int entries, unsigned int flags)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_NO_SQARRAY | flags;
	p.sq_thread_idle = 1000;
	r->fd = uuring_setup(entries, &p);
	if (r->fd < 0)
		return r->fd;
	r->rings_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	r->sqes_sz = p.sq_entries * sizeof(struct io_uring_sqe);
	r->rings = uuring_mmap(NULL, r->rings_sz, PROT_READ | PROT_WRITE,
			       MAP_SHARED, r->fd, IORING_OFF_SQ_RING);
	r->sqes = uuring_mmap(NULL, r->sqes_sz, PROT_READ | PROT_WRITE,
			      MAP_SHARED, r->fd, IORING_OFF_SQES);
	if (r->rings == MAP_FAILED || r->sqes == MAP_FAILED ||
	    (uintptr_t)r->rings > (uintptr_t)-4096 ||
	    (uintptr_t)r->sqes > (uintptr_t)-4096)
		return -ENOMEM;
	r->sq_tail = (_Atomic unsigned int *)(r->rings + p.sq_off.tail);
	r->sq_flags = (_Atomic unsigned int *)(r->rings + p.sq_off.flags);
	r->cq_head = (_Atomic unsigned int *)(r->rings + p.cq_off.head);
	r->cq_tail = (_Atomic unsigned int *)(r->rings + p.cq_off.tail);
	r->sq_mask = *(unsigned int *)(r->rings + p.sq_off.ring_mask);
	r->cq_mask = *(unsigned int *)(r->rings + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(r->rings + p.cq_off.cqes);
	return 0;
}

static void ring_close(struct ring *r)
{
	uuring_munmap(r->rings, r->rings_sz);
	uuring_munmap(r->sqes, r->sqes_sz);
	uuring_close(r->fd);
}

/* Queues one SQE (not yet visible to the engine: ring_publish). */
static struct io_uring_sqe *ring_sqe(struct ring *r, unsigned int *tail,
				     uint8_t opcode, uint64_t user_data)
{
	struct io_uring_sqe *sqe = &r->sqes[*tail & r->sq_mask];

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = opcode;
	sqe->fd = -1;
	sqe->user_data = user_data;
	(*tail)++;
	return sqe;
}

/* The SQ tail store, and on an SQPOLL ring the wakeup it may need. */
static void ring_publish(struct ring *r, unsigned int tail)
{
	atomic_store_explicit(r->sq_tail, tail, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(r->sq_flags, memory_order_relaxed) &
	    IORING_SQ_NEED_WAKEUP)
		uuring_enter(r->fd, 0, 0, IORING_ENTER_SQ_WAKEUP, NULL, 0);
}

/* Takes the next CQE, waiting up to ~10 s; false if none came. */
static bool ring_reap(struct ring *r, struct io_uring_cqe *out)
{
	for (int i = 0; i < 10000; i++) {
		unsigned int head = atomic_load(r->cq_head);

		if (atomic_load_explicit(r->cq_tail, memory_order_acquire) != head) {
			*out = r->cqes[head & r->cq_mask];
			atomic_store_explicit(r->cq_head, head + 1,
					      memory_order_release);
			return true;
		}
		uuring_enter(r->fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0);
		if (i >= 100)
			usleep(1000); /* only a broken engine gets here */
	}
	return false;
}

/* Waits (bounded, ~10 s) until *counter reaches target. */
static bool await_count(_Atomic unsigned int *counter, unsigned int target)
{
	for (int i = 0; i < 1000000; i++) {
		if (atomic_load(counter) >= target)
			return true;
		if (i < 1000)
			sched_yield();
		else
			usleep(10);
	}
	return false;
}

static void knobs(void)
{
	static const char *const good[][2] = {
		{ "UURING_PRIO_TW", "1" },	  { "UURING_PRIO_TW", "0" },
		{ "UURING_ISSUE_VIA_TW", "1" },	  { "UURING_ISSUE_VIA_TW", "0" },
		{ "UURING_WAKE", "every" },	  { "UURING_WAKE", "threshold" },
		{ "UURING_IOWQ_LOCK", "global" }, { "UURING_IOWQ_LOCK", "split" },
		{ "UURING_SQPOLL_TW_CAP", "8" },  { "UURING_SQPOLL_TW_CAP", "32" },
		{ "UURING_LOCKSTAT", "0" },
	};
	static const char *const bad[][2] = {
		{ "UURING_WAKE", "sometimes" },	  { "UURING_WAKE", "" },
		{ "UURING_IOWQ_LOCK", "both" },	  { "UURING_SQPOLL_TW_CAP", "0" },
		{ "UURING_SQPOLL_TW_CAP", "8x" }, { "UURING_NO_SUCH_KNOB", "1" },
		{ "UURING_STATS", "/tmp/x" }, /* environment only */
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int ret = uuring_set_knob(good[i][0], good[i][1]);

		CHECK(ret == 0, "%s=%s: %d", good[i][0], good[i][1], ret);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = uuring_set_knob(bad[i][0], bad[i][1]);

		CHECK(ret == -EINVAL, "%s=%s: %d", bad[i][0], bad[i][1], ret);
	}
	CHECK(uuring_set_knob(NULL, "1") == -EINVAL, "NULL name");
	CHECK(uuring_set_knob("UURING_PRIO_TW", NULL) == -EINVAL, "NULL value");
}

/* One round of prio_order; the two user_data in the order they came. */
static void prio_round(bool prio, uint64_t order[2])
{
	unsigned int tail = 0, done0, issue0;
	struct uuring_stats st;
	struct io_uring_cqe cqe;
	struct io_uring_sqe *sqe;
	struct ring r;
	char byte = 'x', buf[1];
	int p[2], ret;

	uuring_set_knob("UURING_PRIO_TW", prio ? "1" : "0");
	uuring_set_knob("UURING_ISSUE_VIA_TW", "1");
	order[0] = order[1] = 0;
	ret = ring_open(&r, 8, IORING_SETUP_SQPOLL);
	CHECK(ret == 0, "setup %d", ret);
	if (ret)
		return;
	CHECK(pipe(p) == 0, "pipe");
	/* 1: a read that parks on the (empty) pipe */
	sqe = ring_sqe(&r, &tail, IORING_OP_READ, 1);
	sqe->fd = p[0];
	sqe->addr = (uintptr_t)buf;
	sqe->len = 1;
	ring_publish(&r, tail);
	for (int i = 0; i < 100000; i++) {
		uuring_get_stats(r.fd, &st, sizeof(st));
		if (st.route_poll >= 1)
			break;
		usleep(100);
	}
	CHECK(st.route_poll == 1, "the read did not park (route_poll %llu)",
	      (unsigned long long)st.route_poll);
	/* the SQPOLL thread runs no task_work from here on */
	atomic_store(&uu_test_tw_hold, true);
	issue0 = atomic_load(&uu_test_tw_issue_queued);
	done0 = atomic_load(&uu_test_tw_done_queued);
	/* 2: a NOP, queued as an item that issues */
	ring_sqe(&r, &tail, IORING_OP_NOP, 2);
	ring_publish(&r, tail);
	CHECK(await_count(&uu_test_tw_issue_queued, issue0 + 1),
	      "the NOP's issue was not queued");
	/* then the read's completion, queued behind it */
	CHECK(write(p[1], &byte, 1) == 1, "write");
	CHECK(await_count(&uu_test_tw_done_queued, done0 + 1),
	      "the read's completion was not queued");
	atomic_store(&uu_test_tw_hold, false);
	for (int i = 0; i < 2; i++) {
		bool got = ring_reap(&r, &cqe);

		CHECK(got, "CQE %d missing", i);
		if (!got)
			break;
		CHECK(cqe.res == (cqe.user_data == 1 ? 1 : 0),
		      "ud %llu res %d", (unsigned long long)cqe.user_data,
		      cqe.res);
		order[i] = cqe.user_data;
	}
	ring_close(&r);
	close(p[0]);
	close(p[1]);
}

static void prio_order(void)
{
	uint64_t order[2];

	prio_round(true, order);
	CHECK(order[0] == 1 && order[1] == 2,
	      "PRIO_TW=1: the completion did not overtake the issue: %llu %llu",
	      (unsigned long long)order[0], (unsigned long long)order[1]);
	prio_round(false, order);
	CHECK(order[0] == 2 && order[1] == 1,
	      "PRIO_TW=0: not in queue order: %llu %llu",
	      (unsigned long long)order[0], (unsigned long long)order[1]);
	uuring_set_knob("UURING_PRIO_TW", "0");
	uuring_set_knob("UURING_ISSUE_VIA_TW", "0");
}

#define WAKE_BATCH 16
#define WAKE_BATCHES 8

struct poster {
	struct ring *r;
	_Atomic pid_t waiter_tid;
};

/* 'S' (or 'D'...) from /proc: the thread's scheduler state */
static char thread_state(pid_t tid)
{
	char path[64], buf[256], *p;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] && p[2] ? p[2] : '?';
}

/* Waits (bounded, ~5 s) for tid to be asleep. */
static void await_asleep(pid_t tid)
{
	for (int i = 0; i < 50000; i++) {
		if (thread_state(tid) == 'S')
			return;
		if (i < 100)
			sched_yield();
		else
			usleep(100);
	}
}

/* One NOP per enter, so one CQ commit per CQE, each posted once the
 * waiter sleeps: a wake per commit has someone to wake every time. */
static void *poster_main(void *arg)
{
	struct poster *ps = arg;
	pid_t tid;
	unsigned int tail = 0;

	while (!(tid = atomic_load(&ps->waiter_tid)))
		sched_yield();
	for (int i = 0; i < WAKE_BATCH * WAKE_BATCHES; i++) {
		await_asleep(tid);
		ring_sqe(ps->r, &tail, IORING_OP_NOP, (uint64_t)i);
		atomic_store_explicit(ps->r->sq_tail, tail, memory_order_release);
		uuring_enter(ps->r->fd, 1, 0, 0, NULL, 0);
	}
	return NULL;
}

static void wake_round(const char *mode, struct uuring_stats *st)
{
	struct poster ps;
	pthread_t th;
	struct ring r;
	int ret;

	memset(st, 0, sizeof(*st));
	uuring_set_knob("UURING_WAKE", mode);
	ret = ring_open(&r, 256, 0);
	CHECK(ret == 0, "setup %d", ret);
	if (ret)
		return;
	ps.r = &r;
	atomic_init(&ps.waiter_tid, 0);
	pthread_create(&th, NULL, poster_main, &ps);
	atomic_store(&ps.waiter_tid, (pid_t)syscall(SYS_gettid));
	for (int b = 0; b < WAKE_BATCHES; b++) {
		unsigned int head = atomic_load(r.cq_head);

		ret = uuring_enter(r.fd, 0, WAKE_BATCH, IORING_ENTER_GETEVENTS,
				   NULL, 0);
		CHECK(ret == 0, "wait %d", ret);
		CHECK(atomic_load(r.cq_tail) - head >= WAKE_BATCH,
		      "woken with %u CQEs", atomic_load(r.cq_tail) - head);
		atomic_store(r.cq_head, head + WAKE_BATCH);
	}
	pthread_join(th, NULL);
	uuring_get_stats(r.fd, st, sizeof(*st));
	printf("UURING_WAKE=%s: %llu CQEs, %llu waits, %llu wakeups "
	       "(%llu spurious)\n",
	       mode, (unsigned long long)st->cqes_posted,
	       (unsigned long long)st->waits, (unsigned long long)st->wakeups,
	       (unsigned long long)st->spurious_wakeups);
	ring_close(&r);
}

static void wake_count(void)
{
	const unsigned int cqes = WAKE_BATCH * WAKE_BATCHES;
	struct uuring_stats st;

	wake_round("threshold", &st);
	CHECK(st.cqes_posted == cqes, "posted %llu",
	      (unsigned long long)st.cqes_posted);
	/* once per batch; slack for a wait that began with CQEs missing
	 * after its first look, and for a stray wake */
	CHECK(st.wakeups <= WAKE_BATCHES * 3 / 2 + 2,
	      "threshold: %llu wakeups for %u batches",
	      (unsigned long long)st.wakeups, WAKE_BATCHES);
	wake_round("every", &st);
	CHECK(st.cqes_posted == cqes, "posted %llu",
	      (unsigned long long)st.cqes_posted);
	/* about once per commit (each CQE is its own commit, posted while
	 * the waiter sleeps); slack: half of them */
	CHECK(st.wakeups >= cqes / 2,
	      "every: %llu wakeups for %u commits",
	      (unsigned long long)st.wakeups, cqes);
	CHECK(st.spurious_wakeups >= cqes / 2 - WAKE_BATCHES,
	      "every: %llu spurious wakeups for %u commits",
	      (unsigned long long)st.spurious_wakeups, cqes);
	uuring_set_knob("UURING_WAKE", "threshold");
}

/* 256 IOSQE_ASYNC NOPs through io-wq, reaped; in a thread of its own so
 * that its io-wq pool is created with the lock mode set now. */
static void *async_workload(void *arg)
{
	struct io_uring_cqe cqe;
	unsigned int tail = 0;
	struct ring r;
	int ret, reaped = 0;

	(void)arg;
	ret = ring_open(&r, 64, 0);
	CHECK(ret == 0, "setup %d", ret);
	if (ret)
		return NULL;
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < 64; i++) {
			struct io_uring_sqe *sqe =
				ring_sqe(&r, &tail, IORING_OP_NOP, (uint64_t)i);

			sqe->flags = IOSQE_ASYNC;
		}
		atomic_store_explicit(r.sq_tail, tail, memory_order_release);
		ret = uuring_enter(r.fd, 64, 0, 0, NULL, 0);
		CHECK(ret == 64, "submit %d", ret);
		for (int i = 0; i < 64 && ring_reap(&r, &cqe); i++)
			reaped++;
	}
	CHECK(reaped == 256, "reaped %d of 256", reaped);
	uuring_dump_stats(r.fd, STDOUT_FILENO);
	ring_close(&r);
	return NULL;
}

static void lockstat_check(const char *lockmode)
{
	struct uuring_lockstat ls;
	pthread_t th;
	int ret;

	memset(&ls, 0, sizeof(ls));
	uuring_set_knob("UURING_IOWQ_LOCK", lockmode);
	pthread_create(&th, NULL, async_workload, NULL);
	pthread_join(th, NULL);
	ret = uuring_get_lockstat(&ls, sizeof(ls));
	CHECK(ret == (int)sizeof(ls), "get_lockstat %d", ret);
	CHECK(ls.enabled == 1, "not enabled");
	CHECK(ls.wall_ns > 0, "no wall time");
	for (int c = 0; c < UURING_LOCK_CLASSES; c++) {
		const char *n = ls.lock[c].name;
		bool used = !strcmp(n, "sq") || !strcmp(n, "cq") ||
			    !strcmp(n, "iowq_work") ||
			    !strcmp(n, !strcmp(lockmode, "global") ?
						"iowq_global" :
						"iowq_workers");

		CHECK(n[0], "class %d has no name", c);
		CHECK(ls.lock[c].contended <= ls.lock[c].acquired,
		      "%s: contended %llu > acquired %llu", n,
		      (unsigned long long)ls.lock[c].contended,
		      (unsigned long long)ls.lock[c].acquired);
		CHECK(ls.lock[c].contended || !ls.lock[c].wait_ns,
		      "%s: waited %llu ns without contention", n,
		      (unsigned long long)ls.lock[c].wait_ns);
		CHECK(!used || ls.lock[c].acquired > 0,
		      "%s (%s io-wq): never counted", n, lockmode);
	}
}

static void lockstat(void)
{
	struct uuring_lockstat ls;

	CHECK(uuring_set_knob("UURING_LOCKSTAT", "1") == 0, "knob");
	lockstat_check("split");
	/* the global lock is taken only by a pool created in global mode */
	uuring_get_lockstat(&ls, sizeof(ls));
	for (int c = 0; c < UURING_LOCK_CLASSES; c++)
		if (!strcmp(ls.lock[c].name, "iowq_global"))
			CHECK(ls.lock[c].acquired == 0,
			      "iowq_global taken in split mode");
	lockstat_check("global");
	uuring_set_knob("UURING_IOWQ_LOCK", "split");
	uuring_set_knob("UURING_LOCKSTAT", "0");
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} cases[] = {
		{ "knobs", knobs },
		{ "prio_order", prio_order },
		{ "wake_count", wake_count },
		{ "lockstat", lockstat },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool run = argc < 2;
		int before = failures;

		for (int a = 1; a < argc; a++)
			run |= !strcmp(argv[a], cases[i].name);
		if (!run)
			continue;
		cases[i].fn();
		printf("%s %s\n", failures > before ? "FAIL" : "ok",
		       cases[i].name);
	}
	return failures ? 1 : 0;
}
