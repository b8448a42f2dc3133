// SPDX-License-Identifier: MIT
/*
 * Differential tests: TIMEOUT (relative, absolute, clocks, count rule,
 * multishot, ETIME_SUCCESS), TIMEOUT_REMOVE (cancel, update, errors),
 * LINK_TIMEOUT and ASYNC_CANCEL (user_data, FD, FD_FIXED, OP, USERDATA,
 * ANY, ALL), kernel io_uring vs uuring.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"

#define MS 1000000LL

static struct io_uring_sqe *prep_timeout(struct tring *r, struct __kernel_timespec *ts,
					 unsigned int count, unsigned int flags,
					 uint64_t ud)
{
	struct io_uring_sqe *sqe = tring_get_sqe(r);

	tring_prep_rw(sqe, IORING_OP_TIMEOUT, -1, ts, 1, count, ud);
	sqe->timeout_flags = flags;
	return sqe;
}

static int64_t now_ns(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* a 16-entry ring and a pipe for a scenario; false (recorded) on failure */
static bool ring_with_pipe(struct dctx *c, struct tring *r, int p[2])
{
	if (dring_flags(c, r, 16, 0))
		return false;
	if (pipe(p)) {
		drec_int(c, -errno, "pipe");
		tring_exit(r);
		return false;
	}
	return true;
}

/* a pure timeout fires with -ETIME after about its time */
static void sc_basic(struct dctx *c)
{
	struct __kernel_timespec ts = { 0, 20 * MS };
	struct tring r;
	int64_t t;

	if (dring_flags(c, &r, 8, 0))
		return;
	prep_timeout(&r, &ts, 0, 0, 1);
	t = now_ns(CLOCK_MONOTONIC);
	drec_int(c, tring_submit(&r), "submit");
	dreap(c, &r, 1, true, "timeout");
	t = now_ns(CLOCK_MONOTONIC) - t;
	/* a timer never fires early; the upper bound only catches one that
	 * does not fire, far from what a loaded machine adds (was 1 s) */
	drec_int(c, t >= 19 * MS && t < 5000 * MS, "fired after ~20 ms");
	/* ETIME_SUCCESS: same CQE, but a linked NOP still runs */
	prep_timeout(&r, &ts, 0, IORING_TIMEOUT_ETIME_SUCCESS, 2)->flags |=
		IOSQE_IO_LINK;
	tring_prep_nop(tring_get_sqe(&r), 3);
	drec_int(c, tring_submit(&r), "submit etime_success link");
	dreap(c, &r, 2, true, "etime_success link");
	/* a plain timeout failing a link */
	prep_timeout(&r, &ts, 0, 0, 4)->flags |= IOSQE_IO_LINK;
	tring_prep_nop(tring_get_sqe(&r), 5);
	drec_int(c, tring_submit(&r), "submit timeout link");
	dreap(c, &r, 2, true, "timeout link");
	tring_exit(&r);
}

static void sc_abs_and_clocks(struct dctx *c)
{
	static const struct {
		clockid_t id;
		unsigned int flag;
	} clocks[] = {
		{ CLOCK_MONOTONIC, 0 },
		{ CLOCK_BOOTTIME, IORING_TIMEOUT_BOOTTIME },
		{ CLOCK_REALTIME, IORING_TIMEOUT_REALTIME },
	};
	struct tring r;

	if (dring_flags(c, &r, 8, 0))
		return;
	for (unsigned int i = 0; i < 3; i++) {
		int64_t e = now_ns(clocks[i].id) + 15 * MS, t;
		struct __kernel_timespec ts = { e / 1000000000LL, e % 1000000000LL };

		prep_timeout(&r, &ts, 0, IORING_TIMEOUT_ABS | clocks[i].flag, 10 + i);
		t = now_ns(CLOCK_MONOTONIC);
		drec_int(c, tring_submit(&r), "abs clock %u", i);
		dreap(c, &r, 1, true, "abs");
		t = now_ns(CLOCK_MONOTONIC) - t;
		drec_int(c, t >= 10 * MS && t < 5000 * MS, "abs clock %u in time", i);
	}
	/* an absolute time in the past fires at once */
	{
		struct __kernel_timespec ts = { 1, 0 };

		prep_timeout(&r, &ts, 0, IORING_TIMEOUT_ABS, 20);
		drec_int(c, tring_submit(&r), "abs past");
		dreap(c, &r, 1, true, "abs past");
	}
	tring_exit(&r);
}

static void sc_prep_errors(struct dctx *c)
{
	struct __kernel_timespec ts = { 0, MS }, neg = { -1, 0 };
	struct tring r;
	struct io_uring_sqe *sqe;

	if (dring_flags(c, &r, 16, IORING_SETUP_SUBMIT_ALL))
		return;
	sqe = prep_timeout(&r, &ts, 0, 0, 1);
	sqe->len = 2; /* must be 1 */
	prep_timeout(&r, &ts, 0, 1U << 20, 2); /* unknown flag */
	prep_timeout(&r, &ts, 0, IORING_TIMEOUT_BOOTTIME | IORING_TIMEOUT_REALTIME, 3);
	prep_timeout(&r, &ts, 0, IORING_TIMEOUT_MULTISHOT | IORING_TIMEOUT_ABS, 4);
	prep_timeout(&r, &neg, 0, 0, 5);
	prep_timeout(&r, (void *)dunmapped_addr(), 0, 0, 6);
	sqe = prep_timeout(&r, &ts, 0, 0, 7);
	sqe->buf_index = 1;
	drec_int(c, tring_submit(&r), "submit bad timeouts");
	dreap(c, &r, 7, false, "bad timeouts");
	tring_exit(&r);
}

/* count rule (T15): completes with 0 once `off` CQEs were produced */
static void sc_count(struct dctx *c)
{
	struct __kernel_timespec ts = { 5, 0 };
	struct tring r;

	if (dring_flags(c, &r, 16, 0))
		return;
	prep_timeout(&r, &ts, 2, 0, 1);
	drec_int(c, tring_submit(&r), "submit count 2");
	tring_queue_nops(&r, 1, 10, 0);
	drec_int(c, tring_submit(&r), "one nop");
	drec_int(c, tring_cq_ready(&r), "ready after one nop");
	tring_queue_nops(&r, 1, 11, 0);
	drec_int(c, tring_submit(&r), "second nop");
	dreap(c, &r, 3, true, "count satisfied");
	/* CQE_SKIP_SUCCESS completions do not count */
	prep_timeout(&r, &ts, 1, 0, 2);
	drec_int(c, tring_submit(&r), "submit count 1");
	{
		struct io_uring_sqe *sqe = tring_get_sqe(&r);

		tring_prep_nop(sqe, 12);
		sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
	}
	drec_int(c, tring_submit(&r), "skipped nop");
	drec_int(c, tring_cq_ready(&r), "nothing after a skipped nop");
	tring_queue_nops(&r, 1, 13, 0);
	drec_int(c, tring_submit(&r), "nop");
	dreap(c, &r, 2, true, "count after skip");
	/* NOPs in the same submission as the timeout count too */
	prep_timeout(&r, &ts, 2, 0, 3);
	tring_queue_nops(&r, 2, 14, 0);
	drec_int(c, tring_submit(&r), "timeout + 2 nops");
	dreap(c, &r, 3, true, "same batch");
	tring_exit(&r);
}

static void sc_multishot(struct dctx *c)
{
	struct __kernel_timespec ts = { 0, 10 * MS };
	struct tring r;

	if (dring_flags(c, &r, 16, 0))
		return;
	/* 3 repeats: two CQEs with F_MORE, then a final one */
	prep_timeout(&r, &ts, 3, IORING_TIMEOUT_MULTISHOT, 1);
	drec_int(c, tring_submit(&r), "submit multishot x3");
	dreap(c, &r, 3, true, "multishot x3");
	drec_int(c, tring_cq_ready(&r), "no more");
	tring_exit(&r);
}

static void sc_remove(struct dctx *c)
{
	struct __kernel_timespec ts = { 5, 0 }, upd = { 0, 10 * MS };
	struct io_uring_sqe *sqe;
	struct tring r;

	if (dring_flags(c, &r, 16, 0))
		return;
	prep_timeout(&r, &ts, 0, 0, 1);
	drec_int(c, tring_submit(&r), "submit");
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_TIMEOUT_REMOVE, -1, NULL, 0, 0, 2);
	sqe->addr = 1;
	drec_int(c, tring_submit(&r), "remove");
	dreap(c, &r, 2, true, "removed");
	/* not found */
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_TIMEOUT_REMOVE, -1, NULL, 0, 0, 3);
	sqe->addr = 12345;
	drec_int(c, tring_submit(&r), "remove missing");
	dreap(c, &r, 1, true, "missing");
	/* bad: len, flags without update */
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_TIMEOUT_REMOVE, -1, NULL, 1, 0, 4);
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_TIMEOUT_REMOVE, -1, NULL, 0, 0, 5);
	sqe->timeout_flags = IORING_TIMEOUT_ABS;
	drec_int(c, tring_submit(&r), "bad removes");
	dreap(c, &r, 1, true, "bad removes");
	tring_submit(&r);
	dreap(c, &r, 1, true, "bad removes 2");
	/* update a 5 s timeout to 10 ms */
	prep_timeout(&r, &ts, 0, 0, 6);
	drec_int(c, tring_submit(&r), "submit long");
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_TIMEOUT_REMOVE, -1, NULL, 0, 0, 7);
	sqe->addr = 6;
	sqe->addr2 = (uint64_t)(uintptr_t)&upd;
	sqe->timeout_flags = IORING_TIMEOUT_UPDATE;
	drec_int(c, tring_submit(&r), "update");
	dreap(c, &r, 2, true, "updated then fired");
	tring_exit(&r);
}

/* TIMEOUT_REMOVE with an update of target to *ts (flags: the UPDATE bits) */
static void prep_update(struct tring *r, uint64_t target,
			struct __kernel_timespec *ts, uint32_t flags,
			uint64_t ud)
{
	struct io_uring_sqe *sqe = tring_get_sqe(r);

	tring_prep_rw(sqe, IORING_OP_TIMEOUT_REMOVE, -1, NULL, 0, 0, ud);
	sqe->addr = target;
	sqe->addr2 = (uint64_t)(uintptr_t)ts;
	sqe->timeout_flags = flags;
}

/*
 * TIMEOUT_REMOVE with IORING_TIMEOUT_UPDATE | IORING_LINK_TIMEOUT_UPDATE
 * (liburing's io_uring_prep_timeout_update with the link flag): an armed
 * link timeout (its target parked on an empty pipe) gets a new expiry,
 * relative or absolute, and then fires on it; one that does not exist,
 * or whose target completed (disarmed), is -ENOENT; a clock flag is
 * -EINVAL; LINK_TIMEOUT_UPDATE alone is a plain remove.
 */
#define LINK_UPDATE (IORING_TIMEOUT_UPDATE | IORING_LINK_TIMEOUT_UPDATE)
static void sc_link_timeout_update(struct dctx *c)
{
	struct __kernel_timespec ts = { 30, 0 }, upd = { 0, 10 * MS };
	struct io_uring_sqe *sqe;
	struct tring r;
	char buf[8];
	int p[2];

	if (!ring_with_pipe(c, &r, p))
		return;
	/* 30 s -> 10 ms, relative */
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 1);
	sqe->flags |= IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_LINK_TIMEOUT, -1, &ts, 1, 0, 2);
	drec_int(c, tring_submit(&r), "read + 30 s link timeout");
	prep_update(&r, 2, &upd, LINK_UPDATE, 3);
	drec_int(c, tring_submit(&r), "update to 10 ms");
	dreap(c, &r, 3, false, "updated link timeout fired");

	/* absolute, already past: fires at once */
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 4);
	sqe->flags |= IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_LINK_TIMEOUT, -1, &ts, 1, 0, 5);
	drec_int(c, tring_submit(&r), "read + 30 s link timeout (2)");
	{
		struct __kernel_timespec past = { 0, 1 };

		prep_update(&r, 5, &past, LINK_UPDATE | IORING_TIMEOUT_ABS, 6);
		drec_int(c, tring_submit(&r), "update to an absolute past");
		dreap(c, &r, 3, false, "absolute update fired");
	}

	/* nothing armed with that user_data */
	prep_update(&r, 2, &upd, LINK_UPDATE, 7);
	drec_int(c, tring_submit(&r), "update a gone link timeout");
	dreap(c, &r, 1, true, "gone");

	/* LINK_TIMEOUT_UPDATE without TIMEOUT_UPDATE is a plain remove (the
	 * kernel's io_timeout_remove looks only at TIMEOUT_UPDATE) */
	prep_timeout(&r, &ts, 0, 0, 8);
	drec_int(c, tring_submit(&r), "plain timeout");
	prep_update(&r, 8, &upd, IORING_LINK_TIMEOUT_UPDATE /* alone */, 9);
	drec_int(c, tring_submit(&r), "LINK_TIMEOUT_UPDATE alone");
	dreap(c, &r, 2, true, "LINK_TIMEOUT_UPDATE alone removed it");
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_TIMEOUT_REMOVE, -1, NULL, 0, 0, 10);
	sqe->addr = 8;
	drec_int(c, tring_submit(&r), "remove the plain timeout");
	dreap(c, &r, 1, true, "plain timeout already removed");

	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 11);
	sqe->flags |= IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_LINK_TIMEOUT, -1, &ts, 1, 0, 12);
	drec_int(c, tring_submit(&r), "read + 30 s link timeout (3)");
	/* a link timeout is not a TIMEOUT */
	prep_update(&r, 12, &upd, IORING_TIMEOUT_UPDATE, 13);
	drec_int(c, tring_submit(&r), "plain update of a link timeout");
	dreap(c, &r, 1, true, "link timeout not a plain timeout");
	/* bad flags with the update: a clock, two clocks */
	prep_update(&r, 12, &upd, LINK_UPDATE | IORING_TIMEOUT_BOOTTIME, 14);
	drec_int(c, tring_submit(&r), "link update with BOOTTIME");
	dreap(c, &r, 1, true, "link update with BOOTTIME");
	prep_update(&r, 12, &upd,
		    LINK_UPDATE | IORING_TIMEOUT_BOOTTIME | IORING_TIMEOUT_REALTIME,
		    15);
	drec_int(c, tring_submit(&r), "link update with two clocks");
	dreap(c, &r, 1, true, "link update with two clocks");
	/* the read completes in time: its link timeout is disarmed, and
	 * can no longer be updated */
	drec_int(c, (int)write(p[1], "hi", 2), "write");
	dreap(c, &r, 2, true, "read in time");
	prep_update(&r, 12, &upd, LINK_UPDATE, 16);
	drec_int(c, tring_submit(&r), "update a disarmed link timeout");
	dreap(c, &r, 1, true, "disarmed");
	close(p[0]);
	close(p[1]);
	tring_exit(&r);
}

/* LINK_TIMEOUT guarding an inline NOP, a read that parks on a pipe (the
 * timeout fires and cancels it), and a read that completes in time */
static void sc_link_timeout(struct dctx *c)
{
	struct __kernel_timespec ts = { 0, 20 * MS };
	struct io_uring_sqe *sqe;
	struct tring r;
	char buf[8];
	int p[2];

	if (!ring_with_pipe(c, &r, p))
		return;
	sqe = tring_get_sqe(&r);
	tring_prep_nop(sqe, 1);
	sqe->flags |= IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_LINK_TIMEOUT, -1, &ts, 1, 0, 2);
	drec_int(c, tring_submit(&r), "nop + link timeout");
	dreap(c, &r, 2, true, "inline target");

	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 3);
	sqe->flags |= IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_LINK_TIMEOUT, -1, &ts, 1, 0, 4);
	sqe->flags |= IOSQE_IO_LINK;
	tring_prep_nop(tring_get_sqe(&r), 5);
	drec_int(c, tring_submit(&r), "read + link timeout + nop");
	dreap(c, &r, 3, false, "timed out read");

	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 6);
	sqe->flags |= IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	ts.tv_sec = 5;
	tring_prep_rw(sqe, IORING_OP_LINK_TIMEOUT, -1, &ts, 1, 0, 7);
	drec_int(c, tring_submit(&r), "read + long link timeout");
	drec_int(c, (int)write(p[1], "hello", 5), "write");
	dreap(c, &r, 2, true, "read in time");

	/* CQE_SKIP_SUCCESS on the target and on a disarmed link timeout:
	 * only the chain's last CQE is posted */
	sqe = tring_get_sqe(&r);
	tring_prep_nop(sqe, 20);
	sqe->flags |= IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS;
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_LINK_TIMEOUT, -1, &ts, 1, 0, 21);
	sqe->flags |= IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS;
	tring_prep_nop(tring_get_sqe(&r), 22);
	drec_int(c, tring_submit(&r), "skip chain with link timeout");
	dreap(c, &r, 1, true, "skip chain");
	drec_int(c, tring_cq_ready(&r), "nothing else");

	/* a LINK_TIMEOUT without a chain is invalid */
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_LINK_TIMEOUT, -1, &ts, 1, 0, 8);
	drec_int(c, tring_submit(&r), "lone link timeout");
	dreap(c, &r, 1, true, "lone");
	close(p[0]);
	close(p[1]);
	tring_exit(&r);
}

static void sc_cancel(struct dctx *c)
{
	struct __kernel_timespec ts = { 5, 0 };
	struct io_uring_sqe *sqe;
	struct tring r;
	char buf[8];
	int p[2];

	if (!ring_with_pipe(c, &r, p))
		return;
	/* a read parked on an empty pipe, cancelled by user_data */
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, p[0], buf, sizeof(buf), 0, 1);
	drec_int(c, tring_submit(&r), "parked read");
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 2);
	sqe->addr = 1;
	drec_int(c, tring_submit(&r), "cancel");
	dreap(c, &r, 2, false, "cancelled read");
	/* nothing to cancel */
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 3);
	sqe->addr = 999;
	drec_int(c, tring_submit(&r), "cancel missing");
	dreap(c, &r, 1, true, "missing");
	/* a timeout, cancelled */
	prep_timeout(&r, &ts, 0, 0, 4);
	drec_int(c, tring_submit(&r), "timeout");
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 5);
	sqe->addr = 4;
	drec_int(c, tring_submit(&r), "cancel timeout");
	dreap(c, &r, 2, false, "cancelled timeout");
	/* CANCEL_ALL by user_data over three reads, then CANCEL_FD/ANY */
	for (int i = 0; i < 3; i++)
		tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, p[0], buf,
			      sizeof(buf), 0, 6);
	drec_int(c, tring_submit(&r), "three reads");
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 7);
	sqe->addr = 6;
	sqe->cancel_flags = IORING_ASYNC_CANCEL_ALL;
	drec_int(c, tring_submit(&r), "cancel all");
	dreap(c, &r, 4, false, "cancel all");
	for (int i = 0; i < 2; i++)
		tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, p[0], buf,
			      sizeof(buf), 0, 8 + i);
	drec_int(c, tring_submit(&r), "two reads");
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_ASYNC_CANCEL, p[0], NULL, 0, 0, 10);
	sqe->cancel_flags = IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_ALL;
	drec_int(c, tring_submit(&r), "cancel fd all");
	dreap(c, &r, 3, false, "cancel fd");
	/* bad flags */
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_ASYNC_CANCEL, p[0], NULL, 0, 0, 11);
	sqe->cancel_flags = IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_ANY;
	drec_int(c, tring_submit(&r), "fd|any");
	dreap(c, &r, 1, true, "fd|any");
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 12);
	sqe->cancel_flags = 1U << 20;
	drec_int(c, tring_submit(&r), "unknown flag");
	dreap(c, &r, 1, true, "unknown flag");
	close(p[0]);
	close(p[1]);
	tring_exit(&r);
}

static struct io_uring_sqe *prep_cancel(struct tring *r, int fd, uint64_t addr,
					unsigned int flags, uint32_t op,
					uint64_t ud)
{
	struct io_uring_sqe *sqe = tring_get_sqe(r);

	tring_prep_rw(sqe, IORING_OP_ASYNC_CANCEL, fd, NULL, op, 0, ud);
	sqe->addr = addr;
	sqe->cancel_flags = flags;
	return sqe;
}

/*
 * ASYNC_CANCEL by opcode (IORING_ASYNC_CANCEL_OP, the opcode in len),
 * alone, with ALL, with USERDATA (user_data must match too) and with FD;
 * errors: OP with ANY, an opcode nothing uses.
 */
static void sc_cancel_op(struct dctx *c)
{
	struct io_uring_sqe *sqe;
	struct tring r;
	char buf[8];
	int p[2], q[2];

	if (dring_flags(c, &r, 16, 0))
		return;
	if (pipe(p) || pipe(q)) {
		drec_int(c, -errno, "pipe");
		return;
	}
	/* two reads and a poll waiting on p */
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, p[0], buf, 8, 0, 1);
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, p[0], buf, 8, 0, 2);
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_POLL_ADD, p[0], NULL, 0, 0, 3);
	sqe->poll32_events = POLLIN;
	drec_int(c, tring_submit(&r), "reads and a poll");
	/* the first request of that opcode */
	prep_cancel(&r, -1, 0, IORING_ASYNC_CANCEL_OP, IORING_OP_POLL_ADD, 10);
	drec_int(c, tring_submit(&r), "cancel op POLL_ADD");
	dreap(c, &r, 2, false, "poll cancelled");
	prep_cancel(&r, -1, 0, IORING_ASYNC_CANCEL_OP | IORING_ASYNC_CANCEL_ALL,
		    IORING_OP_READ, 11);
	drec_int(c, tring_submit(&r), "cancel op READ all");
	dreap(c, &r, 3, false, "reads cancelled");
	prep_cancel(&r, -1, 0, IORING_ASYNC_CANCEL_OP, IORING_OP_READ, 12);
	drec_int(c, tring_submit(&r), "cancel op READ, none left");
	dreap(c, &r, 1, true, "nothing to cancel");
	/* OP and USERDATA: both must match */
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, p[0], buf, 8, 0, 20);
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, p[0], buf, 8, 0, 21);
	drec_int(c, tring_submit(&r), "two more reads");
	prep_cancel(&r, -1, 21, IORING_ASYNC_CANCEL_OP |
		    IORING_ASYNC_CANCEL_USERDATA | IORING_ASYNC_CANCEL_ALL,
		    IORING_OP_READ, 22);
	drec_int(c, tring_submit(&r), "cancel op READ, user_data 21");
	dreap(c, &r, 2, false, "read 21 cancelled");
	prep_cancel(&r, -1, 20, IORING_ASYNC_CANCEL_OP |
		    IORING_ASYNC_CANCEL_USERDATA, IORING_OP_POLL_ADD, 23);
	drec_int(c, tring_submit(&r), "cancel op POLL_ADD, user_data 20");
	dreap(c, &r, 1, true, "wrong opcode for user_data 20");
	/* OP and FD: a read on q is not cancelled with p's */
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, q[0], buf, 8, 0, 30);
	drec_int(c, tring_submit(&r), "read on q");
	prep_cancel(&r, p[0], 0, IORING_ASYNC_CANCEL_OP | IORING_ASYNC_CANCEL_FD |
		    IORING_ASYNC_CANCEL_ALL, IORING_OP_READ, 31);
	drec_int(c, tring_submit(&r), "cancel op READ, fd p");
	dreap(c, &r, 2, false, "read 20 cancelled");
	/* errors */
	prep_cancel(&r, -1, 0, IORING_ASYNC_CANCEL_OP | IORING_ASYNC_CANCEL_ANY,
		    IORING_OP_READ, 40);
	drec_int(c, tring_submit(&r), "op|any");
	dreap(c, &r, 1, true, "op|any");
	prep_cancel(&r, -1, 0, IORING_ASYNC_CANCEL_OP, IORING_OP_WRITE, 41);
	drec_int(c, tring_submit(&r), "op WRITE");
	dreap(c, &r, 1, true, "op WRITE: nothing");
	prep_cancel(&r, -1, 0, IORING_ASYNC_CANCEL_OP, 250, 42);
	drec_int(c, tring_submit(&r), "op 250");
	dreap(c, &r, 1, true, "op 250");
	/* the read on q is still there: ANY */
	prep_cancel(&r, -1, 0, IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL,
		    0, 43);
	drec_int(c, tring_submit(&r), "cancel any");
	dreap(c, &r, 2, false, "read 30 cancelled");
	tclose2(p);
	tclose2(q);
	tring_exit(&r);
}

/* Registers p[0] and q[0] as slots 0 and 1; a read waits on each slot
 * and one on p[0] itself (user_data 1, 2, 3). */
static int fd_fixed_setup(struct dctx *c, struct tring *r, int p[2], int q[2],
			  char *buf)
{
	struct io_uring_sqe *sqe;
	int files[2];

	if (dring_flags(c, r, 16, 0))
		return -1;
	if (pipe(p) || pipe(q)) {
		drec_int(c, -errno, "pipe");
		tring_exit(r);
		return -1;
	}
	files[0] = p[0];
	files[1] = q[0];
	drec_int(c, c->be->reg((unsigned int)r->fd, IORING_REGISTER_FILES,
			       files, 2), "register p and q");
	for (int i = 0; i < 2; i++) {
		sqe = tring_get_sqe(r);
		tring_prep_rw(sqe, IORING_OP_READ, i, buf, 8, 0, 1 + i);
		sqe->flags |= IOSQE_FIXED_FILE;
	}
	tring_prep_rw(tring_get_sqe(r), IORING_OP_READ, p[0], buf, 8, 0, 3);
	drec_int(c, tring_submit(r), "reads on slots 0, 1 and on p");
	return 0;
}

/*
 * ASYNC_CANCEL with CANCEL_FD | CANCEL_FD_FIXED: fd is a slot of the
 * registered file table; the requests on that slot's file (through the
 * table or not) match.
 */
static void sc_cancel_fd_fixed(struct dctx *c)
{
	struct tring r;
	char buf[8];
	int p[2], q[2];

	if (fd_fixed_setup(c, &r, p, q, buf))
		return;
	prep_cancel(&r, 0, 0, IORING_ASYNC_CANCEL_FD |
		    IORING_ASYNC_CANCEL_FD_FIXED | IORING_ASYNC_CANCEL_ALL, 0, 10);
	drec_int(c, tring_submit(&r), "cancel slot 0");
	dreapn(c, &r, 3, false, "slot 0 cancelled");
	prep_cancel(&r, 5, 0, IORING_ASYNC_CANCEL_FD |
		    IORING_ASYNC_CANCEL_FD_FIXED, 0, 11);
	drec_int(c, tring_submit(&r), "cancel slot 5");
	dreapn(c, &r, 1, true, "slot 5");
	prep_cancel(&r, -1, 0, IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL,
		    0, 12);
	drec_int(c, tring_submit(&r), "cancel any");
	dreapn(c, &r, 2, false, "the rest");
	tclose2(p);
	tclose2(q);
	tring_exit(&r);
}

/* The same through REGISTER_SYNC_CANCEL */
static void sc_sync_cancel_fd_fixed(struct dctx *c)
{
	struct io_uring_sync_cancel_reg sc;
	struct tring r;
	char buf[8];
	int p[2], q[2];

	if (fd_fixed_setup(c, &r, p, q, buf))
		return;
	memset(&sc, 0, sizeof(sc));
	sc.fd = 1;
	sc.flags = IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_FD_FIXED;
	sc.timeout.tv_sec = -1;
	sc.timeout.tv_nsec = -1;
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_SYNC_CANCEL,
			       &sc, 1), "sync cancel slot 1");
	dreap(c, &r, 1, true, "slot 1 cancelled");
	sc.fd = 0;
	sc.flags |= IORING_ASYNC_CANCEL_ALL;
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_SYNC_CANCEL,
			       &sc, 1), "sync cancel slot 0, all");
	dreap(c, &r, 2, false, "slot 0 and p cancelled");
	sc.fd = 5;
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_SYNC_CANCEL,
			       &sc, 1), "sync cancel slot 5");
	tclose2(p);
	tclose2(q);
	tring_exit(&r);
}

/*
 * CANCEL_FD names an open file description: a read on another open of
 * the same pipe is not cancelled.  uuring compares inodes
 * (docs/compatibility.md #13).
 */
static void sc_cancel_fd_same_inode(struct dctx *c)
{
	struct tring r;
	char buf[8], path[64];
	int p[2], other;

	if (!ring_with_pipe(c, &r, p))
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
	other = open(path, O_RDONLY);
	dcheck(c, other >= 0, "reopen the pipe");
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, p[0], buf, 8, 0, 1);
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, other, buf, 8, 0, 2);
	drec_int(c, tring_submit(&r), "reads on two opens of one pipe");
	prep_cancel(&r, p[0], 0, IORING_ASYNC_CANCEL_FD |
		    IORING_ASYNC_CANCEL_ALL, 0, 10);
	drec_int(c, tring_submit(&r), "cancel fd p[0]");
	dreapn(c, &r, 2, false, "what it cancelled");
	prep_cancel(&r, -1, 0, IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL,
		    0, 11);
	drec_int(c, tring_submit(&r), "cancel any");
	dreapn(c, &r, 2, false, "the rest");
	close(other);
	tclose2(p);
	tring_exit(&r);
}

/*
 * Found by tests/test_diff_fuzz2: a far TIMEOUT parked, then
 * ASYNC_CANCEL with ANY|ALL: the kernel's io_timeout_extract matches
 * timeouts with io_cancel_req_match, so ANY cancels it (count 1, the
 * TIMEOUT -ECANCELED).  Then a fired TIMEOUT with CQE_SKIP_SUCCESS and
 * HARDLINK: the NOP behind it still runs and posts (a hard link does not
 * fail its chain; SKIP_LINK_CQES only mutes what io_fail_links cancels).
 */
static void sc_fuzz_found(struct dctx *c)
{
	struct __kernel_timespec far = { 3600, 0 }, past = { 0, 1 };
	struct io_uring_sqe *sqe;
	struct tring r;

	if (dring_flags(c, &r, 8, 0))
		return;
	prep_timeout(&r, &far, 0, 0, 1);
	drec_int(c, tring_submit(&r), "submit far");
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 2);
	sqe->cancel_flags = IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL;
	drec_int(c, tring_submit(&r), "submit cancel any");
	dreap(c, &r, 2, false, "any cancels the timeout");
	/* nothing left for a second pass */
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_TIMEOUT_REMOVE, -1, NULL, 0, 0, 3);
	sqe->addr = 1;
	drec_int(c, tring_submit(&r), "submit remove");
	dreap(c, &r, 1, false, "the timeout is gone");

	prep_timeout(&r, &past, 0, IORING_TIMEOUT_ABS, 4)->flags |=
		IOSQE_IO_HARDLINK | IOSQE_CQE_SKIP_SUCCESS;
	tring_prep_nop(tring_get_sqe(&r), 5);
	drec_int(c, tring_submit(&r), "submit skip+hardlink timer");
	dreap(c, &r, 2, true, "fired skip timer, hard-linked NOP");
	past.tv_nsec = 0;	/* relative zero */
	prep_timeout(&r, &past, 0, 0, 6)->flags |=
		IOSQE_IO_HARDLINK | IOSQE_CQE_SKIP_SUCCESS;
	tring_prep_nop(tring_get_sqe(&r), 7);
	drec_int(c, tring_submit(&r), "submit skip+hardlink zero timer");
	dreap(c, &r, 2, true, "zero skip timer, hard-linked NOP");
	tring_exit(&r);
}

/*
 * ASYNC_CANCEL's match modes on parked TIMEOUTs (io_timeout_extract
 * matches with io_cancel_req_match): OP names the opcode, the first
 * TIMEOUT in list order unless ALL (a count timeout sits before the pure
 * timers: the first); OP with USERDATA needs both; FD never reaches the
 * TIMEOUT list (io_try_cancel; with ALL it counts 0); ANY takes every
 * one left, counted one each.
 */
static void sc_cancel_timeout_modes(struct dctx *c)
{
	struct __kernel_timespec far = { 3600, 0 };
	struct tring r;
	int p[2];

	if (!ring_with_pipe(c, &r, p))
		return;
	prep_timeout(&r, &far, 0, 0, 1);
	prep_timeout(&r, &far, 0, 0, 2);
	prep_timeout(&r, &far, 5, 0, 3);
	prep_timeout(&r, &far, 0, IORING_TIMEOUT_MULTISHOT, 4);
	drec_int(c, tring_submit(&r), "four timeouts");
	prep_cancel(&r, -1, 0, IORING_ASYNC_CANCEL_OP, IORING_OP_NOP, 10);
	drec_int(c, tring_submit(&r), "cancel op NOP");
	dreap(c, &r, 1, true, "no NOP to cancel");
	prep_cancel(&r, p[0], 0, IORING_ASYNC_CANCEL_FD |
		    IORING_ASYNC_CANCEL_ALL, 0, 11);
	drec_int(c, tring_submit(&r), "cancel fd all");
	dreap(c, &r, 1, true, "fd matches no timeout");
	prep_cancel(&r, -1, 0, IORING_ASYNC_CANCEL_OP, IORING_OP_TIMEOUT, 12);
	drec_int(c, tring_submit(&r), "cancel op TIMEOUT");
	dreap(c, &r, 2, false, "the count timeout");
	prep_cancel(&r, -1, 4, IORING_ASYNC_CANCEL_OP |
		    IORING_ASYNC_CANCEL_USERDATA, IORING_OP_TIMEOUT, 13);
	drec_int(c, tring_submit(&r), "cancel op TIMEOUT, user_data 4");
	dreap(c, &r, 2, false, "the multishot timeout");
	prep_cancel(&r, -1, 4, IORING_ASYNC_CANCEL_OP |
		    IORING_ASYNC_CANCEL_USERDATA, IORING_OP_TIMEOUT, 14);
	drec_int(c, tring_submit(&r), "the same again");
	dreap(c, &r, 1, true, "already gone");
	prep_cancel(&r, -1, 1, IORING_ASYNC_CANCEL_OP |
		    IORING_ASYNC_CANCEL_USERDATA, IORING_OP_TIMEOUT, 15);
	drec_int(c, tring_submit(&r), "cancel op TIMEOUT, user_data 1");
	dreap(c, &r, 2, false, "timeout 1");
	prep_timeout(&r, &far, 0, 0, 5);
	drec_int(c, tring_submit(&r), "one more");
	prep_cancel(&r, -1, 0, IORING_ASYNC_CANCEL_ANY, 0, 16);
	drec_int(c, tring_submit(&r), "cancel any");
	dreap(c, &r, 3, false, "the two left, counted");
	prep_cancel(&r, -1, 0, IORING_ASYNC_CANCEL_ANY, 0, 17);
	drec_int(c, tring_submit(&r), "cancel any, none left");
	dreap(c, &r, 1, true, "nothing left");
	tclose2(p);
	tring_exit(&r);
}

static const struct dscenario scenarios[] = {
	{ "basic", sc_basic, NULL, NULL },
	{ "abs_and_clocks", sc_abs_and_clocks, NULL, NULL },
	{ "prep_errors", sc_prep_errors, NULL, NULL },
	{ "count", sc_count, NULL, NULL },
	{ "multishot", sc_multishot, NULL, NULL },
	{ "remove", sc_remove, NULL, NULL },
	{ "link_timeout", sc_link_timeout, NULL, NULL },
	{ "link_timeout_update", sc_link_timeout_update, NULL, NULL },
	{ "cancel", sc_cancel, NULL, NULL },
	{ "cancel_op", sc_cancel_op, NULL, NULL },
	{ "cancel_fd_fixed", sc_cancel_fd_fixed, NULL, NULL },
	{ "sync_cancel_fd_fixed", sc_sync_cancel_fd_fixed, NULL, NULL },
	{ "cancel_fd_same_inode", sc_cancel_fd_same_inode, NULL,
	  "docs/compatibility.md #13" },
	{ "fuzz_found", sc_fuzz_found, NULL, NULL },
	{ "cancel_timeout_modes", sc_cancel_timeout_modes, NULL, NULL },
};

DTEST_MAIN(scenarios)
