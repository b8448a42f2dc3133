// SPDX-License-Identifier: MIT
/*
 * Differential tests: CQ overflow.  A tiny CQ (4 entries) takes more CQEs
 * than it holds; the rest go to the backlog (FEAT_NODROP),
 * IORING_SQ_CQ_OVERFLOW is set, and the backlog is flushed in order by
 * later enters.  Every CQE must arrive, in submission order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtest.h"

static unsigned int ovf_flag(struct tring *r)
{
	return tring_sq_flags(r) & IORING_SQ_CQ_OVERFLOW;
}

static int tiny_ring(struct dctx *c, struct tring *r, unsigned int flags)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE | flags;
	p.cq_entries = 4;
	return dring(c, r, 4, &p, "tiny ring setup");
}

static void queue_inject(struct tring *r, unsigned int n, uint64_t base)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = tring_get_sqe(r);

		tring_prep_nop(sqe, base + i);
		sqe->nop_flags = IORING_NOP_INJECT_RESULT;
		sqe->len = (unsigned int)(base + i) * 3;
	}
}

/* 20 NOPs into a 4-entry CQ, then drain 4 at a time */
static void overflow_20(struct dctx *c, unsigned int flags)
{
	struct tcqe all[32];
	struct tring r;
	unsigned int i, got = 0, rounds = 0;

	if (tiny_ring(c, &r, flags))
		return;
	drec_int(c, r.cq_entries, "cq entries");
	for (i = 0; i < 5; i++) {
		queue_inject(&r, 4, 4 * i);
		drec_int(c, tring_submit(&r), "submit 4 (round %u)", i);
		drec_int(c, ovf_flag(&r), "CQ_OVERFLOW after round %u", i);
		drec_int(c, tring_cq_ready(&r), "ready after round %u", i);
	}
	drec_int(c, *r.cq_overflow, "cq_overflow counter");
	/* reaping without enter does not flush */
	got += tring_reap(&r, all + got, 32 - got);
	drec_int(c, tring_cq_ready(&r), "ready after reaping, no enter");
	drec_int(c, ovf_flag(&r), "CQ_OVERFLOW still set");
	while (got < 20 && rounds++ < 20) {
		int ret = tring_enter(&r, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0);

		drec_int(c, ret, "flush enter %u", rounds);
		drec_int(c, tring_cq_ready(&r), "ready after flush %u", rounds);
		drec_int(c, ovf_flag(&r), "CQ_OVERFLOW after flush %u", rounds);
		got += tring_reap(&r, all + got, 32 - got);
	}
	drec_cqes(c, all, got, true, "all 20 in order");
	drec_int(c, *r.cq_overflow, "cq_overflow counter at end");
	tring_exit(&r);
}

static void sc_overflow_20(struct dctx *c)
{
	overflow_20(c, 0);
}

static void sc_overflow_20_cqe32(struct dctx *c)
{
	overflow_20(c, IORING_SETUP_CQE32 | IORING_SETUP_SQE128);
}

static void sc_overflow_no_sqarray(struct dctx *c)
{
	overflow_20(c, IORING_SETUP_NO_SQARRAY | IORING_SETUP_NO_MMAP);
}

/* partial drains: each enter moves only as many as fit */
static void sc_overflow_partial(struct dctx *c)
{
	struct tcqe out[32];
	struct tring r;
	unsigned int i, n;

	if (tiny_ring(c, &r, 0))
		return;
	for (i = 0; i < 3; i++) {
		queue_inject(&r, 4, 4 * i);
		tring_submit(&r);
	}
	n = tring_reap(&r, out, 1);
	drec_cqes(c, out, n, true, "first");
	drec_int(c, tring_enter(&r, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0),
		 "enter after reaping 1");
	drec_int(c, tring_cq_ready(&r), "ready");
	n = tring_reap(&r, out, 3);
	drec_cqes(c, out, n, true, "next 3");
	/* new submissions while the backlog is non-empty queue behind it */
	queue_inject(&r, 2, 100);
	drec_int(c, tring_submit(&r), "submit behind backlog");
	drec_int(c, tring_cq_ready(&r), "ready after submit");
	n = 0;
	for (i = 0; i < 10 && n < 10; i++) {
		unsigned int k = tring_reap(&r, out + n, 32 - n);

		n += k;
		tring_enter(&r, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0);
	}
	n += tring_reap(&r, out + n, 32 - n);
	drec_cqes(c, out, n, true, "rest in order");
	drec_int(c, ovf_flag(&r), "CQ_OVERFLOW cleared");
	tring_exit(&r);
}

/* a GETEVENTS wait flushes the backlog */
static void sc_overflow_wait(struct dctx *c)
{
	struct tcqe out[32];
	struct tring r;
	unsigned int i, n = 0;
	int ret;

	if (tiny_ring(c, &r, 0))
		return;
	for (i = 0; i < 3; i++) {
		queue_inject(&r, 4, 4 * i);
		tring_submit(&r);
	}
	/* CQ full: min_complete 4 is satisfied at once */
	ret = tring_wait(&r, 4, 1000000000LL);
	drec_int(c, ret, "wait 4 with full CQ");
	n += tring_reap(&r, out + n, 32 - n);
	/* CQ empty, 8 in the backlog: wait flushes */
	ret = tring_wait(&r, 4, 1000000000LL);
	drec_int(c, ret, "wait 4 with backlog");
	drec_int(c, tring_cq_ready(&r), "ready after wait");
	n += tring_reap(&r, out + n, 32 - n);
	ret = tring_wait(&r, 4, 1000000000LL);
	drec_int(c, ret, "wait 4 again");
	n += tring_reap(&r, out + n, 32 - n);
	drec_cqes(c, out, n, true, "12 in order");
	ret = tring_wait(&r, 1, 10000000LL);
	drec_int(c, ret, "wait with nothing left");
	tring_exit(&r);
}

/* overflow with links and skipped CQEs */
/*
 * On an SQPOLL ring (UURING_TEST_RING_MODE=sqpoll) a chain's later
 * members are the SQ thread's task_work, run in later loops of that
 * thread while the application already submits the next round: how the
 * rounds interleave depends on timing (the kernel differs from itself).
 * There the CQEs are compared grouped by round (user_data / 10), each
 * round's in the order posted; elsewhere in the order posted.
 */
static void group_by_round(struct tring *r, struct tcqe *out, unsigned int n)
{
	struct tcqe tmp[64];
	unsigned int k = 0, round, i;

	if (!(r->flags & IORING_SETUP_SQPOLL) || n > 64)
		return;
	for (round = 0; round < 4; round++)
		for (i = 0; i < n; i++)
			if (out[i].user_data / 10 == round)
				tmp[k++] = out[i];
	for (i = 0; i < n; i++)
		if (out[i].user_data / 10 >= 4)
			tmp[k++] = out[i];
	memcpy(out, tmp, n * sizeof(*out));
}

static void sc_overflow_links(struct dctx *c)
{
	struct tcqe out[64];
	struct tring r;
	unsigned int i, n = 0, round;

	if (tiny_ring(c, &r, 0))
		return;
	for (round = 0; round < 4; round++) {
		for (i = 0; i < 4; i++) {
			struct io_uring_sqe *sqe = tring_get_sqe(&r);

			tring_prep_nop(sqe, round * 10 + i);
			if (i < 3)
				sqe->flags = IOSQE_IO_LINK;
			if (round == 1 && i == 1) {
				sqe->nop_flags = IORING_NOP_INJECT_RESULT;
				sqe->len = (unsigned int)-EIO;
			}
			if (round == 2 && i != 2)
				sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
		}
		drec_int(c, tring_submit(&r), "round %u submit", round);
	}
	for (i = 0; i < 20 && n < 64; i++) {
		n += tring_reap(&r, out + n, 64 - n);
		tring_enter(&r, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0);
	}
	n += tring_reap(&r, out + n, 64 - n);
	group_by_round(&r, out, n);
	drec_cqes(c, out, n, true, "linked rounds through overflow");
	tring_exit(&r);
}

/* a large batch: 256 NOPs through an 8-entry CQ, order preserved */
static void sc_overflow_big(struct dctx *c)
{
	struct io_uring_params p;
	struct tcqe *out = calloc(300, sizeof(*out));
	struct tring r;
	unsigned int i, n = 0;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 8;
	if (dring(c, &r, 8, &p, "setup"))
		return;
	for (i = 0; i < 32; i++) {
		queue_inject(&r, 8, 8 * i);
		if (tring_submit(&r) != 8)
			break;
	}
	drec_int(c, i, "batches submitted");
	for (i = 0; i < 100 && n < 256; i++) {
		n += tring_reap(&r, out + n, 300 - n);
		tring_enter(&r, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0);
	}
	n += tring_reap(&r, out + n, 300 - n);
	drec_cqes(c, out, n, true, "256 in order");
	free(out);
	tring_exit(&r);
}

/* a hostile CQ head (ahead of the tail), then repaired */
static void sc_hostile_cq_head(struct dctx *c)
{
	struct tcqe out[16];
	struct tring r;
	unsigned int tail, n = 0, i;

	if (dring_flags(c, &r, 4, 0))
		return;
	tring_queue_nops(&r, 2, 1, 0);
	drec_int(c, tring_submit(&r), "submit 2");
	n += tring_reap(&r, out + n, 16 - n);
	tail = __atomic_load_n(r.cq_tail, __ATOMIC_ACQUIRE);
	__atomic_store_n(r.cq_head, tail + 5, __ATOMIC_RELEASE);
	tring_queue_nops(&r, 3, 10, 0);
	drec_int(c, tring_submit(&r), "submit 3 with head 5 past tail");
	drec_int(c, __atomic_load_n(r.cq_tail, __ATOMIC_ACQUIRE) - tail,
		 "tail moved");
	drec_int(c, tring_sq_flags(&r) & IORING_SQ_CQ_OVERFLOW,
		 "CQ_OVERFLOW");
	/* the application repairs its head */
	__atomic_store_n(r.cq_head, tail, __ATOMIC_RELEASE);
	for (i = 0; i < 5 && n < 5; i++) {
		tring_enter(&r, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0);
		n += tring_reap(&r, out + n, 16 - n);
	}
	drec_cqes(c, out, n, true, "all CQEs after the repair");
	drec_int(c, tring_sq_flags(&r) & IORING_SQ_CQ_OVERFLOW,
		 "CQ_OVERFLOW after repair");
	tring_exit(&r);
}

static const struct dscenario scenarios[] = {
	{ "hostile_cq_head", sc_hostile_cq_head, NULL },
	{ "overflow_20", sc_overflow_20, NULL },
	{ "overflow_20_cqe32", sc_overflow_20_cqe32, NULL },
	{ "overflow_no_sqarray_no_mmap", sc_overflow_no_sqarray, NULL },
	{ "overflow_partial", sc_overflow_partial, NULL },
	{ "overflow_wait", sc_overflow_wait, NULL },
	{ "overflow_links", sc_overflow_links, NULL },
	{ "overflow_big", sc_overflow_big, NULL },
};

DTEST_MAIN(scenarios)
