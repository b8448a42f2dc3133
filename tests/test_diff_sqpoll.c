// SPDX-License-Identifier: MIT
/*
 * Differential tests of IORING_SETUP_SQPOLL: submission without enter,
 * IORING_SQ_NEED_WAKEUP after sq_thread_idle and IORING_ENTER_SQ_WAKEUP,
 * enter's return value, ATTACH_WQ sharing and its errors, SQ_AFF, reads
 * and parked pipe reads through the SQPOLL thread, the iou-sqp thread,
 * the SQ head moving only after the inline CQEs are posted.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/*
 * How long a wait for something the SQ thread does may take before the
 * scenario gives up: a hang guard, far beyond any scheduling delay, as
 * every wait below ends as soon as its event is seen.
 */
#define GUARD_MS 10000

/* Waits (polling the CQ, never entering) for n CQEs; returns how many. */
static unsigned int poll_cq(struct tring *r, unsigned int n, int ms)
{
	int64_t end = now_ms() + ms;

	while (tring_cq_ready(r) < n && now_ms() < end)
		usleep(200);
	return tring_cq_ready(r);
}

/* The SQPOLL submission protocol: publish the tail, full fence, and wake
 * the thread only if it asked for it (IORING_SQ_NEED_WAKEUP). */
static void sq_submit(struct tring *r)
{
	tring_flush(r);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (tring_sq_flags(r) & IORING_SQ_NEED_WAKEUP)
		tring_enter(r, 0, 0, IORING_ENTER_SQ_WAKEUP, NULL, 0);
}

static int sq_ring(struct dctx *c, struct tring *r, unsigned int idle_ms,
		   unsigned int extra, int wq_fd)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | extra;
	p.sq_thread_idle = idle_ms;
	p.wq_fd = (unsigned int)wq_fd;
	return dring(c, r, 8, &p, "sqpoll ring");
}

static void sc_no_enter(struct dctx *c)
{
	struct tring r;

	if (sq_ring(c, &r, 1000, 0, 0))
		return;
	tring_queue_nops(&r, 4, 1, 0);
	sq_submit(&r);
	drec_int(c, poll_cq(&r, 4, GUARD_MS), "CQEs without enter");
	dreap(c, &r, 4, true, "nops");
	/*
	 * The SQ thread posts a batch's CQEs before it stores the new SQ
	 * head (the kernel's io_submit_sqes too), so seeing the 4 CQEs does
	 * not mean the head has moved: on a loaded machine the thread can be
	 * preempted in between, and a count taken now would include the 4
	 * old SQEs (CI saw enter return 6).  Wait for the head first.
	 */
	drec_int(c, (int)tring_sqpoll_await_sq_taken(&r, GUARD_MS),
		 "SQEs not taken after their CQEs");
	/* enter returns to_submit and waits as usual */
	tring_queue_nops(&r, 2, 10, 0);
	drec_int(c, tring_submit_and_wait(&r, 2), "enter(2, wait 2)");
	dreap(c, &r, 2, true, "waited");
	tring_exit(&r);
}

/*
 * The SQ head moves only after the inline CQEs of the SQEs it passes are
 * posted (the kernel flushes a batch's completions before committing the
 * head): an application that sees its SQEs consumed sees their CQEs.
 * Repeated, as a wrong order shows only now and then.
 */
static void sc_head_after_cqes(struct dctx *c)
{
	struct io_uring_params p;
	unsigned int i, missing = 0, stuck = 0;
	struct tcqe out[32];
	struct tring r;

	/* a batch of 31 CQEs, posted in one flush: a wide window */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL;
	p.sq_thread_idle = 1000;
	if (dring(c, &r, 32, &p, "sqpoll ring"))
		return;
	for (i = 0; i < 200; i++) {
		int64_t end = now_ms() + 3000;
		unsigned int spins = 0;
		bool moved;

		tring_queue_nops(&r, 31, 100 * i, 0);
		sq_submit(&r);
		/* spin (yielding now and then, the SQ thread may share our
		 * CPU) until the head moves, at most 3 s.  Acquire: pairs
		 * with the SQ thread's release of the head. */
		while (!(moved = __atomic_load_n(r.sq_head, __ATOMIC_ACQUIRE) ==
				 *r.sq_tail)) {
			if (++spins % 4096)
				continue;
			if (now_ms() > end)
				break;
			sched_yield();
		}
		if (!moved) {
			stuck++;
			break;
		}
		if (tring_cq_ready(&r) != 31)
			missing++;
		if (tring_reap_wait(&r, out, 31, 1000000000LL) != 31) {
			stuck++;
			break;
		}
	}
	drec_int(c, stuck, "SQ head stuck");
	drec_int(c, missing, "rounds with CQEs missing when the head moved");
	tring_exit(&r);
}

static void sc_need_wakeup(struct dctx *c)
{
	struct tring r;
	unsigned int f;

	if (sq_ring(c, &r, 10, 0, 0))
		return;
	tring_queue_nops(&r, 1, 1, 0);
	sq_submit(&r);
	drec_int(c, poll_cq(&r, 1, GUARD_MS), "first CQE");
	dreap(c, &r, 1, true, "first");
	/*
	 * The thread sets NEED_WAKEUP once it has been idle for 10 ms; wait
	 * for the flag rather than a fixed time "well past" the idle time,
	 * which a loaded machine can stretch.
	 */
	for (int64_t end = now_ms() + GUARD_MS;
	     !(tring_sq_flags(&r) & IORING_SQ_NEED_WAKEUP) && now_ms() < end;)
		usleep(1000);
	f = tring_sq_flags(&r);
	drec_int(c, !!(f & IORING_SQ_NEED_WAKEUP), "NEED_WAKEUP after idle");
	tring_queue_nops(&r, 1, 2, 0);
	tring_flush(&r);
	usleep(50000);
	drec_int(c, tring_cq_ready(&r), "asleep: nothing without a wakeup");
	drec_int(c, tring_enter(&r, 0, 0, IORING_ENTER_SQ_WAKEUP, NULL, 0),
		 "enter(SQ_WAKEUP)");
	drec_int(c, poll_cq(&r, 1, GUARD_MS), "woken: CQE");
	dreap(c, &r, 1, true, "after wakeup");
	tring_exit(&r);
}

static void sc_attach(struct dctx *c)
{
	struct tring a, b, x;
	char name[64];

	if (sq_ring(c, &a, 1000, 0, 0))
		return;
	if (!sq_ring(c, &b, 1000, IORING_SETUP_ATTACH_WQ, a.fd)) {
		tring_queue_nops(&a, 3, 1, 0);
		tring_queue_nops(&b, 3, 11, 0);
		sq_submit(&a);
		sq_submit(&b);
		drec_int(c, poll_cq(&a, 3, GUARD_MS), "ring a CQEs");
		drec_int(c, poll_cq(&b, 3, GUARD_MS), "ring b CQEs");
		dreap(c, &a, 3, true, "a");
		dreap(c, &b, 3, true, "b");
		tring_exit(&b);
	}
	/* attach to a bad fd, to a non-ring fd */
	{
		struct io_uring_params p;
		int fd;

		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_ATTACH_WQ;
		p.wq_fd = 9999;
		fd = c->be->setup(8, &p);
		drec_int(c, fd < 0 ? fd : 0, "attach to a closed fd");
		if (fd >= 0)
			c->be->close(fd);
		p.wq_fd = 0;
		snprintf(name, sizeof(name), "/dev/null");
		p.wq_fd = (unsigned int)open(name, O_RDONLY);
		fd = c->be->setup(8, &p);
		drec_int(c, fd < 0 ? fd : 0, "attach to /dev/null");
		if (fd >= 0)
			c->be->close(fd);
		close((int)p.wq_fd);
		/* SQ_AFF: a CPU that does not exist */
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF;
		p.sq_thread_cpu = 4096;
		fd = c->be->setup(8, &p);
		drec_int(c, fd < 0 ? fd : 0, "SQ_AFF cpu 4096");
		if (fd >= 0)
			c->be->close(fd);
		p.sq_thread_cpu = 0;
		fd = c->be->setup(8, &p);
		drec_int(c, fd < 0 ? fd : 0, "SQ_AFF cpu 0");
		if (fd >= 0)
			c->be->close(fd);
		/* SQPOLL with DEFER_TASKRUN / COOP_TASKRUN: invalid */
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_COOP_TASKRUN;
		fd = c->be->setup(8, &p);
		drec_int(c, fd < 0 ? fd : 0, "SQPOLL + COOP");
		if (fd >= 0)
			c->be->close(fd);
	}
	(void)x;
	tring_exit(&a);
}

static int count_sqp_threads(void)
{
	return tthreads_named("iou-sqp-", true, NULL, NULL);
}

static void sc_io(struct dctx *c)
{
	struct io_uring_sqe *sqe;
	struct tring r;
	char buf[64], pbuf[8];
	int fd, p[2];

	if (sq_ring(c, &r, 1000, 0, 0))
		return;
	/* the thread names itself once it runs: wait for that, not for a
	 * fixed time a loaded machine can stretch */
	for (int64_t end = now_ms() + GUARD_MS;
	     count_sqp_threads() < 1 && now_ms() < end;)
		usleep(1000);
	drec_int(c, count_sqp_threads(), "iou-sqp threads");
	fd = dtmpfile(c, 4096, 7);
	if (fd < 0 || pipe(p))
		return;
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, fd, buf, sizeof(buf), 100, 1);
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, p[0], pbuf, sizeof(pbuf), 0, 2);
	sq_submit(&r);
	drec_int(c, poll_cq(&r, 1, GUARD_MS), "file read done, pipe read parked");
	drec_int(c, (int)write(p[1], "abc", 3), "write pipe");
	drec_int(c, poll_cq(&r, 2, GUARD_MS), "pipe read done");
	dreap(c, &r, 2, false, "reads");
	close(fd);
	close(p[0]);
	close(p[1]);
	tring_exit(&r);
}

static const struct dscenario scenarios[] = {
	{ "no_enter", sc_no_enter, NULL, NULL },
	{ "head_after_cqes", sc_head_after_cqes, NULL, NULL },
	{ "need_wakeup", sc_need_wakeup, NULL, NULL },
	{ "attach", sc_attach, NULL, NULL },
	{ "io", sc_io, NULL, NULL },
};

DTEST_MAIN(scenarios)
