// SPDX-License-Identifier: MIT
/*
 * Differential tests: IO_LINK chains failing mid-chain (-ECANCELED for the
 * rest), IO_HARDLINK, CQE_SKIP_SUCCESS inside chains, IO_DRAIN, and DRAIN
 * after CQE_SKIP_SUCCESS (-EOPNOTSUPP).  Link chains complete in a defined
 * order on the kernel, so their CQEs are compared in order.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dtest.h"

/* a NOP that succeeds, or fails with -EIO */
static void nop(struct io_uring_sqe *sqe, uint64_t ud, bool fail,
		uint8_t flags)
{
	tring_prep_nop(sqe, ud);
	if (fail) {
		sqe->nop_flags = IORING_NOP_INJECT_RESULT;
		sqe->len = (unsigned int)-EIO;
	}
	sqe->flags = flags;
}

/*
 * The CQEs a chain run posts, the marker included: a member that ran posts
 * one unless it succeeded with CQE_SKIP_SUCCESS; a failure breaks a soft
 * link, and the rest of the chain then posts -ECANCELED each, none if the
 * failed member had CQE_SKIP_SUCCESS.  Only tells run_chain how many CQEs
 * to wait for: on an SQPOLL ring the next member of a chain runs in a
 * later loop of the SQ thread, after the marker's CQE.
 */
static unsigned int chain_cqes(unsigned int n, const uint8_t *flags,
			       int fail_at)
{
	const uint8_t links = IOSQE_IO_LINK | IOSQE_IO_HARDLINK;
	bool cancelled = false, quiet = false;
	unsigned int i, cqes = 1;

	for (i = 0; i < n; i++) {
		if (cancelled) {
			cqes += !quiet;
		} else if ((int)i == fail_at) {
			cqes++;
			if ((flags[i] & links) == IOSQE_IO_LINK) {
				cancelled = true;
				quiet = flags[i] & IOSQE_CQE_SKIP_SUCCESS;
			}
		} else {
			cqes += !(flags[i] & IOSQE_CQE_SKIP_SUCCESS);
		}
		if (!(flags[i] & links))
			cancelled = quiet = false;
	}
	return cqes;
}

static void run_chain(struct dctx *c, struct tring *r, unsigned int n,
		      const uint8_t *flags, int fail_at, const char *label)
{
	unsigned int i, want = chain_cqes(n, flags, fail_at);
	int ret;

	for (i = 0; i < n; i++)
		nop(tring_get_sqe(r), i, (int)i == fail_at, flags[i]);
	/* a trailing independent NOP marks the end */
	nop(tring_get_sqe(r), 99, false, 0);
	ret = tring_submit(r);
	drec_int(c, ret, "%s: submit", label);
	/* in order: collect up to the marker and at least the CQEs the
	 * chain should post, then whatever else is there */
	{
		struct tcqe out[64];
		unsigned int got = 0;
		bool marker = false;

		while (got < 64 && (!marker || got < want)) {
			unsigned int k = tring_reap_wait(r, out + got, 1,
							 1000000000LL);

			if (!k)
				break;
			got += k;
			if (out[got - 1].user_data == 99)
				marker = true;
		}
		got += tring_reap(r, out + got, 64 - got);
		drec_cqes(c, out, got, true, "%s", label);
		dcheck(c, got == want, "%s: %u CQEs, %u expected", label, got, want);
	}
}

/* chains of 4: every LINK/HARDLINK mix, failure at every position */
static void sc_link_mix(struct dctx *c)
{
	struct tring r;
	unsigned int mask;
	int fail;

	if (dring_flags(c, &r, 16, 0))
		return;
	for (mask = 0; mask < 8; mask++) {
		for (fail = -1; fail < 4; fail++) {
			uint8_t flags[4];
			char label[64];
			unsigned int i;

			for (i = 0; i < 3; i++)
				flags[i] = (mask >> i) & 1 ? IOSQE_IO_HARDLINK :
							      IOSQE_IO_LINK;
			flags[3] = 0;
			snprintf(label, sizeof(label), "hard mask %u fail at %d",
				 mask, fail);
			run_chain(c, &r, 4, flags, fail, label);
		}
	}
	tring_exit(&r);
}

/* chains of 3 with CQE_SKIP_SUCCESS on any subset, failure anywhere */
static void sc_link_skip(struct dctx *c)
{
	struct tring r;
	unsigned int mask, hard;
	int fail;

	if (dring_flags(c, &r, 16, 0))
		return;
	for (hard = 0; hard < 2; hard++) {
		for (mask = 0; mask < 8; mask++) {
			for (fail = -1; fail < 3; fail++) {
				uint8_t flags[3];
				char label[64];
				unsigned int i;

				for (i = 0; i < 3; i++) {
					flags[i] = (mask >> i) & 1 ?
						   IOSQE_CQE_SKIP_SUCCESS : 0;
					if (i < 2)
						flags[i] |= hard ?
							IOSQE_IO_HARDLINK :
							IOSQE_IO_LINK;
				}
				snprintf(label, sizeof(label),
					 "%s skip mask %u fail at %d",
					 hard ? "hardlink" : "link", mask, fail);
				run_chain(c, &r, 3, flags, fail, label);
			}
		}
	}
	/* SKIP_SUCCESS without links */
	{
		uint8_t flags[3] = { IOSQE_CQE_SKIP_SUCCESS,
				     IOSQE_CQE_SKIP_SUCCESS, 0 };

		run_chain(c, &r, 3, flags, -1, "unlinked skips");
		run_chain(c, &r, 3, flags, 0, "unlinked skip, failing");
	}
	tring_exit(&r);
}

/* failures of real ops in chains: bad fd, short read */
static void sc_link_ops(struct dctx *c)
{
	char buf[200];
	struct io_uring_sqe *sqe;
	struct tring r;
	int fd;

	if (dring_flags(c, &r, 16, 0))
		return;
	fd = dtmpfile(c, 100, 1);
	/* read bad fd -> rest cancelled */
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, -1, buf, 10, 0, 1);
	sqe->flags = IOSQE_IO_LINK;
	nop(tring_get_sqe(&r), 2, false, IOSQE_IO_LINK);
	nop(tring_get_sqe(&r), 3, false, 0);
	drec_int(c, tring_submit(&r), "bad fd chain: submit");
	dreap(c, &r, 3, true, "bad fd chain");
	/* short read (100-byte file, read 200) breaks a soft link */
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, fd, buf, 200, 0, 4);
	sqe->flags = IOSQE_IO_LINK;
	nop(tring_get_sqe(&r), 5, false, 0);
	drec_int(c, tring_submit(&r), "short read chain: submit");
	dreap(c, &r, 2, true, "short read chain");
	/* ... but not a hard link */
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, fd, buf, 200, 0, 6);
	sqe->flags = IOSQE_IO_HARDLINK;
	nop(tring_get_sqe(&r), 7, false, 0);
	drec_int(c, tring_submit(&r), "short read hardlink: submit");
	dreap(c, &r, 2, true, "short read hardlink");
	/* a full read keeps the chain going; write then fsync then read */
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_WRITE, fd, "abcdefgh", 8, 100, 8);
	sqe->flags = IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_FSYNC, fd, NULL, 0, 0, 9);
	sqe->flags = IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, fd, buf, 8, 100, 10);
	sqe->flags = IOSQE_IO_LINK | IOSQE_ASYNC;
	nop(tring_get_sqe(&r), 11, false, 0);
	drec_int(c, tring_submit(&r), "write-fsync-read chain: submit");
	dreap(c, &r, 4, true, "write-fsync-read chain");
	drec_int(c, memcmp(buf, "abcdefgh", 8) == 0, "chain read data");
	/* ASYNC head of a failing chain */
	nop(tring_get_sqe(&r), 12, true, IOSQE_IO_LINK | IOSQE_ASYNC);
	nop(tring_get_sqe(&r), 13, false, IOSQE_IO_LINK);
	nop(tring_get_sqe(&r), 14, false, 0);
	drec_int(c, tring_submit(&r), "async failing chain: submit");
	dreap(c, &r, 3, true, "async failing chain");
	close(fd);
	tring_exit(&r);
}

/* a LINK flag on the last SQE of an enter does not join the next enter */
static void sc_link_across_enter(struct dctx *c)
{
	struct tring r;

	if (dring_flags(c, &r, 16, 0))
		return;
	nop(tring_get_sqe(&r), 1, false, IOSQE_IO_LINK);
	drec_int(c, tring_submit(&r), "submit dangling link");
	dreap(c, &r, 1, true, "dangling link head");
	nop(tring_get_sqe(&r), 2, true, IOSQE_IO_LINK);
	drec_int(c, tring_submit(&r), "submit failing dangling link");
	dreap(c, &r, 1, true, "failing dangling link");
	nop(tring_get_sqe(&r), 3, false, 0);
	drec_int(c, tring_submit(&r), "submit next");
	dreap(c, &r, 1, true, "next enter not cancelled");
	/* enter with to_submit splitting a chain */
	nop(tring_get_sqe(&r), 4, true, IOSQE_IO_LINK);
	nop(tring_get_sqe(&r), 5, false, IOSQE_IO_LINK);
	nop(tring_get_sqe(&r), 6, false, 0);
	tring_flush(&r);
	drec_int(c, tring_enter(&r, 2, 0, 0, NULL, 0), "submit 2 of 3");
	dreap(c, &r, 2, true, "split chain, first part");
	drec_int(c, tring_enter(&r, 1, 0, 0, NULL, 0), "submit last");
	dreap(c, &r, 1, true, "split chain, second part");
	tring_exit(&r);
}

/* a long chain */
static void sc_link_long(struct dctx *c)
{
	struct tring r;
	unsigned int i;

	if (dring_flags(c, &r, 128, 0))
		return;
	for (i = 0; i < 100; i++)
		nop(tring_get_sqe(&r), i, i == 50, i < 99 ? IOSQE_IO_LINK : 0);
	drec_int(c, tring_submit(&r), "submit 100-chain");
	dreap(c, &r, 100, true, "100-chain failing at 50");
	for (i = 0; i < 100; i++)
		nop(tring_get_sqe(&r), i, i % 10 == 3,
		    i < 99 ? IOSQE_IO_HARDLINK : 0);
	drec_int(c, tring_submit(&r), "submit 100-hardchain");
	dreap(c, &r, 100, true, "100-hardchain");
	tring_exit(&r);
}

/* index of the CQE with user_data ud, or -1 */
static int pos_of(const struct tcqe *c, unsigned int n, uint64_t ud)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (c[i].user_data == ud)
			return (int)i;
	return -1;
}

static void sc_drain(struct dctx *c)
{
	struct tcqe out[16];
	struct tring r;
	unsigned int n;

	if (dring_flags(c, &r, 16, 0))
		return;
	/* A(async) B DRAIN-C D: C after A and B, D after C */
	nop(tring_get_sqe(&r), 1, false, IOSQE_ASYNC);
	nop(tring_get_sqe(&r), 2, false, 0);
	nop(tring_get_sqe(&r), 3, false, IOSQE_IO_DRAIN);
	nop(tring_get_sqe(&r), 4, false, 0);
	drec_int(c, tring_submit(&r), "submit drain");
	n = tring_reap_wait(&r, out, 4, 1000000000LL);
	drec_cqes(c, out, n, false, "drain");
	drec_int(c, pos_of(out, n, 3) > pos_of(out, n, 1) &&
		 pos_of(out, n, 3) > pos_of(out, n, 2), "drained after A, B");
	drec_int(c, pos_of(out, n, 4) > pos_of(out, n, 3), "D after drained");
	/* a failing drained request */
	nop(tring_get_sqe(&r), 5, false, 0);
	nop(tring_get_sqe(&r), 6, true, IOSQE_IO_DRAIN);
	nop(tring_get_sqe(&r), 7, false, 0);
	drec_int(c, tring_submit(&r), "submit failing drain");
	dreap(c, &r, 3, true, "failing drain");
	/* drain as link head, and on a link member */
	nop(tring_get_sqe(&r), 8, false, IOSQE_ASYNC);
	nop(tring_get_sqe(&r), 9, false, IOSQE_IO_DRAIN | IOSQE_IO_LINK);
	nop(tring_get_sqe(&r), 10, false, 0);
	nop(tring_get_sqe(&r), 11, false, IOSQE_IO_LINK);
	nop(tring_get_sqe(&r), 12, false, IOSQE_IO_DRAIN);
	nop(tring_get_sqe(&r), 13, false, 0);
	drec_int(c, tring_submit(&r), "submit drain in links");
	n = tring_reap_wait(&r, out, 6, 1000000000LL);
	drec_cqes(c, out, n, false, "drain in links");
	drec_int(c, pos_of(out, n, 9) > pos_of(out, n, 8), "9 after 8");
	drec_int(c, pos_of(out, n, 10) > pos_of(out, n, 9), "10 after 9");
	drec_int(c, pos_of(out, n, 13) > pos_of(out, n, 12), "13 after 12");
	/* drain of the very first request, across enters */
	nop(tring_get_sqe(&r), 14, false, IOSQE_ASYNC);
	drec_int(c, tring_submit(&r), "submit async");
	nop(tring_get_sqe(&r), 15, false, IOSQE_IO_DRAIN);
	drec_int(c, tring_submit(&r), "submit drain next enter");
	n = tring_reap_wait(&r, out, 2, 1000000000LL);
	drec_cqes(c, out, n, false, "drain across enters");
	drec_int(c, pos_of(out, n, 15) > pos_of(out, n, 14), "15 after 14");
	tring_exit(&r);
}

/*
 * IO_DRAIN on a member in the middle of a chain (the kernel looks at the
 * head's flag only when the chain is queued; a member's DRAIN makes the
 * whole chain drained): CQE order recorded exactly, in every ring mode.
 */
static void sc_drain_mid_chain(struct dctx *c)
{
	static const uint8_t variants[][5] = {
		{ 0, IOSQE_IO_LINK, IOSQE_IO_DRAIN | IOSQE_IO_LINK, 0, 0 },
		{ 0, IOSQE_IO_LINK, IOSQE_IO_DRAIN, 0, 0 },
		{ IOSQE_ASYNC, IOSQE_IO_LINK, IOSQE_IO_DRAIN | IOSQE_IO_LINK,
		  0, 0 },
		{ 0, IOSQE_IO_LINK, IOSQE_IO_LINK, IOSQE_IO_DRAIN, 0 },
	};
	struct tcqe out[8];
	struct tring r;
	unsigned int v, i, n;

	if (dring_flags(c, &r, 16, 0))
		return;
	for (v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
		for (i = 0; i < 5; i++)
			nop(tring_get_sqe(&r), 10 * v + i, false,
			    variants[v][i]);
		drec_int(c, tring_submit(&r), "variant %u: submit", v);
		n = tring_reap_wait(&r, out, 5, 2000000000LL);
		drec_cqes(c, out, n, true, "variant %u", v);
	}
	tring_exit(&r);
}

/*
 * A drained request behind a chain whose head waits (a POLL_ADD on an
 * empty pipe, a NOP linked to it): the drain waits for the chain's last
 * member, not only for the head (liburing's multicqes_drain mixes).
 */
static void sc_drain_behind_waiting_chain(struct dctx *c)
{
	struct io_uring_sqe *sqe;
	struct tcqe out[4];
	struct tring r;
	unsigned int n;
	int p[2];

	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return;
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_POLL_ADD, p[0], NULL, 0, 0, 1);
	sqe->poll32_events = POLLIN;
	sqe->flags = IOSQE_IO_LINK;
	nop(tring_get_sqe(&r), 2, false, 0);
	nop(tring_get_sqe(&r), 3, false, IOSQE_IO_DRAIN);
	drec_int(c, tring_submit(&r), "submit");
	n = tring_reap_wait(&r, out, 1, 20000000LL);
	drec_int(c, n, "nothing before the pipe is written");
	drec_int(c, write(p[1], "x", 1), "write");
	n = tring_reap_wait(&r, out, 3, 2000000000LL);
	drec_cqes(c, out, n, true, "poll, its linked NOP, the drained NOP");
	close(p[0]);
	close(p[1]);
	tring_exit(&r);
}

static void sc_drain_after_skip(struct dctx *c)
{
	struct tring r;

	/* skip then drain, separate enters */
	if (dring_flags(c, &r, 16, 0))
		return;
	nop(tring_get_sqe(&r), 1, false, IOSQE_IO_DRAIN);
	drec_int(c, tring_submit(&r), "drain before any skip");
	dreap(c, &r, 1, true, "drain ok");
	nop(tring_get_sqe(&r), 2, false, IOSQE_CQE_SKIP_SUCCESS);
	nop(tring_get_sqe(&r), 3, false, 0);
	drec_int(c, tring_submit(&r), "submit skip");
	dreap(c, &r, 1, true, "skip");
	nop(tring_get_sqe(&r), 4, false, IOSQE_IO_DRAIN);
	nop(tring_get_sqe(&r), 5, false, 0);
	drec_int(c, tring_submit(&r), "submit drain after skip");
	dreap(c, &r, 1, true, "drain after skip");
	drec_int(c, tring_submit(&r), "resubmit");
	dreap(c, &r, 1, true, "after");
	nop(tring_get_sqe(&r), 6, false, IOSQE_IO_DRAIN | IOSQE_IO_LINK);
	nop(tring_get_sqe(&r), 7, false, 0);
	drec_int(c, tring_submit(&r), "drain link head after skip");
	dreap(c, &r, 2, true, "drain link head after skip");
	tring_exit(&r);

	/* skip and drain in one enter */
	if (dring_flags(c, &r, 16, 0))
		return;
	nop(tring_get_sqe(&r), 10, false, IOSQE_CQE_SKIP_SUCCESS);
	nop(tring_get_sqe(&r), 11, false, IOSQE_IO_DRAIN);
	nop(tring_get_sqe(&r), 12, false, 0);
	drec_int(c, tring_submit(&r), "skip+drain one enter");
	dreap(c, &r, 1, true, "skip+drain one enter");
	tring_exit(&r);

	/* a failing skip request also disables drain */
	if (dring_flags(c, &r, 16, IORING_SETUP_SUBMIT_ALL))
		return;
	nop(tring_get_sqe(&r), 20, true, IOSQE_CQE_SKIP_SUCCESS);
	nop(tring_get_sqe(&r), 21, false, IOSQE_IO_DRAIN);
	nop(tring_get_sqe(&r), 22, false, IOSQE_IO_DRAIN | IOSQE_CQE_SKIP_SUCCESS);
	drec_int(c, tring_submit(&r), "SUBMIT_ALL: failing skip then drains");
	dreap(c, &r, 3, true, "failing skip then drains");
	tring_exit(&r);

	/* DRAIN|CQE_SKIP_SUCCESS on the same SQE */
	if (dring_flags(c, &r, 16, 0))
		return;
	nop(tring_get_sqe(&r), 30, false,
	    IOSQE_IO_DRAIN | IOSQE_CQE_SKIP_SUCCESS);
	nop(tring_get_sqe(&r), 31, false, 0);
	drec_int(c, tring_submit(&r), "drain|skip on one SQE");
	dreap(c, &r, 1, true, "drain|skip on one SQE");
	tring_exit(&r);
}

static const struct dscenario scenarios[] = {
	{ "link_mix", sc_link_mix, NULL },
	{ "link_skip", sc_link_skip, NULL },
	{ "link_ops", sc_link_ops, NULL },
	{ "link_across_enter", sc_link_across_enter, NULL },
	{ "link_long", sc_link_long, NULL },
	{ "drain", sc_drain, NULL },
	{ "drain_after_skip", sc_drain_after_skip, NULL },
	{ "drain_mid_chain", sc_drain_mid_chain, NULL },
	{ "drain_behind_waiting_chain", sc_drain_behind_waiting_chain, NULL },
};

DTEST_MAIN(scenarios)
