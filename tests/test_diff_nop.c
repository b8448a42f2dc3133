// SPDX-License-Identifier: MIT
/*
 * Differential tests: NOP (incl. IORING_NOP_INJECT_RESULT, and FILE,
 * FIXED_FILE, CQE32, TW, FIXED_BUFFER in nop_flags), SQE flag
 * validation, unknown opcodes, SUBMIT_ALL vs stopping at the first failed
 * SQE, enter's to_submit/min_complete/flags handling.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

#include "dtest.h"

static void sc_nop_basic(struct dctx *c)
{
	struct tring r;
	unsigned int i;

	if (dring_flags(c, &r, 16, 0))
		return;
	tring_queue_nops(&r, 16, 1, 0);
	drec_int(c, tring_submit_and_wait(&r, 16), "submit 16");
	dreap(c, &r, 16, true, "16 nops");
	/* 64-bit user_data survives */
	for (i = 0; i < 4; i++) {
		static const uint64_t ud[] = { ~0ULL, 1ULL << 63, 0,
					       0x0123456789abcdefULL };
		tring_prep_nop(tring_get_sqe(&r), ud[i]);
	}
	drec_int(c, tring_submit_and_wait(&r, 4), "submit ud");
	dreap(c, &r, 4, true, "user_data");
	/* many NOPs through a small ring, batch by batch */
	for (i = 0; i < 64; i++) {
		tring_queue_nops(&r, 16, 1000 + 16 * i, 0);
		if (tring_submit_and_wait(&r, 16) != 16)
			break;
		dreap(c, &r, 16, true, "batch");
	}
	drec_int(c, i, "batches");
	drec_int(c, *r.cq_overflow, "cq overflow");
	tring_exit(&r);
}

static void sc_inject(struct dctx *c)
{
	static const int32_t vals[] = { 0, 1, -1, INT_MAX, INT_MIN, -EAGAIN,
					-ECANCELED, 4096, -4096, -4095 };
	struct tring r;
	unsigned int i;

	if (dring_flags(c, &r, 16, 0))
		return;
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		struct io_uring_sqe *sqe = tring_get_sqe(&r);

		tring_prep_nop(sqe, i);
		sqe->nop_flags = IORING_NOP_INJECT_RESULT;
		sqe->len = (uint32_t)vals[i];
	}
	drec_int(c, tring_submit_and_wait(&r, i), "submit");
	dreap(c, &r, i, true, "injected");

	tring_exit(&r);

	/* len ignored without the flag; unknown nop flags; other fields */
	if (dring_flags(c, &r, 16, IORING_SETUP_SUBMIT_ALL))
		return;
	for (i = 0; i < 9; i++) {
		struct io_uring_sqe *sqe = tring_get_sqe(&r);

		tring_prep_nop(sqe, 100 + i);
		switch (i) {
		case 0: sqe->len = 1234; break;
		case 1: sqe->nop_flags = 1U << 30; break;
		case 2: sqe->nop_flags = IORING_NOP_INJECT_RESULT | (1U << 31);
			sqe->len = 5; break;
		case 3: sqe->off = 77; break;
		case 4: sqe->addr = 0x1234; break;
		case 5: sqe->fd = 1000; break;
		case 6: sqe->ioprio = 3; break;
		case 7: sqe->buf_index = 9; break;
		case 8: sqe->personality = 1; break;
		}
	}
	drec_int(c, tring_submit_and_wait(&r, i), "submit misc");
	dreap(c, &r, i, true, "misc fields");
	tring_exit(&r);
}

/*
 * One NOP with the given SQE flags, followed by a marker NOP; compared as a
 * multiset (ASYNC goes to io-wq on the kernel: no defined order).
 */
static void sc_sqe_flags(struct dctx *c)
{
	struct tring r;
	unsigned int b;

	if (dring_flags(c, &r, 8, 0))
		return;
	for (b = 0; b < 8; b++) {
		struct io_uring_sqe *sqe = tring_get_sqe(&r);
		struct tcqe out[4];
		unsigned int n;
		int ret;

		tring_prep_nop(sqe, 10 + b);
		sqe->flags = (uint8_t)(1U << b);
		tring_prep_nop(tring_get_sqe(&r), 100 + b);
		ret = tring_submit(&r);
		drec_int(c, ret, "submit flag bit %u", b);
		/* wait for the marker (and the NOP if it posts) */
		n = tring_reap_wait(&r, out, 1, 1000000000LL);
		if (n < 2)
			n += tring_reap_wait(&r, out + n, 1, 50 * 1000 * 1000);
		drec_cqes(c, out, n, false, "flag bit %u", b);
		/* SQEs not consumed by a stopped submission: drop them */
		if (tring_flush(&r)) {
			ret = tring_submit(&r);
			n = tring_reap_wait(&r, out, (unsigned int)(ret > 0 ? ret : 0),
					    1000000000LL);
			drec_cqes(c, out, n, false, "flag bit %u leftovers", b);
		}
	}
	tring_exit(&r);
}

/* Opcodes the kernel does not know */
static void sc_unknown_opcode(struct dctx *c)
{
	static const uint8_t ops[] = { IORING_OP_LAST, IORING_OP_LAST + 1,
				       100, 200, 255 };
	struct tring r;
	unsigned int i;

	if (dring_flags(c, &r, 8, IORING_SETUP_SUBMIT_ALL))
		return;
	for (i = 0; i < sizeof(ops); i++) {
		struct io_uring_sqe *sqe = tring_get_sqe(&r);

		tring_prep_nop(sqe, ops[i]);
		sqe->opcode = ops[i];
	}
	drec_int(c, tring_submit_and_wait(&r, i), "submit");
	dreap(c, &r, i, true, "unknown opcodes");
	tring_exit(&r);
}

enum bad_kind {
	BAD_SQE_FLAG,
	BAD_OPCODE,
	BAD_BUFSELECT,
	BAD_NOP_FLAGS,
	BAD_READ_FD,		/* fails at issue, not at init */
	BAD_FIXED_FILE,		/* FIXED_FILE with no registered files */
	BAD_OFFSET,		/* WRITE at offset -2 */
	BAD_OFFSET_FD,		/* WRITE at offset -2 on a bad fd */
	BAD_IOVEC,		/* READV with an unmapped iovec array */
	BAD_NR
};

static const char *const bad_names[] = {
	"sqe flag bit 7", "opcode 250", "BUFFER_SELECT on NOP",
	"nop_flags bit 30", "READ fd -1", "READ FIXED_FILE unregistered",
	"WRITE offset -2", "WRITE offset -2 fd 9999", "READV iovec unmapped",
};

/*
 * NOP-only batches complete inline on the kernel, in submission order; rw
 * ops on the ext4 temp file may be punted to io-wq (buffered writes are),
 * so their CQEs are compared as a multiset.
 */
static bool kind_ordered(enum bad_kind k)
{
	return k <= BAD_NOP_FLAGS;
}

/* a regular file the rw cases can target (set by each scenario) */
static int bad_fd_target = -1;

static void make_bad(struct io_uring_sqe *sqe, enum bad_kind k, uint64_t ud)
{
	static char buf[16];

	tring_prep_nop(sqe, ud);
	switch (k) {
	case BAD_SQE_FLAG:
		sqe->flags = 1U << 7;
		break;
	case BAD_OPCODE:
		sqe->opcode = 250;
		break;
	case BAD_BUFSELECT:
		sqe->flags = IOSQE_BUFFER_SELECT;
		break;
	case BAD_NOP_FLAGS:
		sqe->nop_flags = 1U << 30;
		break;
	case BAD_READ_FD:
		tring_prep_rw(sqe, IORING_OP_READ, -1, buf, sizeof(buf), 0, ud);
		break;
	case BAD_FIXED_FILE:
		tring_prep_rw(sqe, IORING_OP_READ, 0, buf, sizeof(buf), 0, ud);
		sqe->flags = IOSQE_FIXED_FILE;
		break;
	case BAD_OFFSET:
		tring_prep_rw(sqe, IORING_OP_WRITE, bad_fd_target, buf, 4,
			      (uint64_t)-2, ud);
		break;
	case BAD_OFFSET_FD:
		tring_prep_rw(sqe, IORING_OP_WRITE, 9999, buf, 4, (uint64_t)-2,
			      ud);
		break;
	case BAD_IOVEC:
		tring_prep_rw(sqe, IORING_OP_READV, bad_fd_target,
			      dunmapped_addr(), 1, 0, ud);
		break;
	case BAD_NR:
		break;
	}
}

/* 5 SQEs, the 3rd bad: stop (default) or continue (SUBMIT_ALL) */
static void submit_bad(struct dctx *c, unsigned int setup_flags)
{
	unsigned int k;

	bad_fd_target = dtmpfile(c, 100, 1);
	for (k = 0; k < BAD_NR; k++) {
		struct tring r;
		unsigned int i, head0;
		int ret;

		if (dring_flags(c, &r, 8, setup_flags))
			return;
		head0 = *r.sq_head;
		for (i = 0; i < 5; i++) {
			struct io_uring_sqe *sqe = tring_get_sqe(&r);

			if (i == 2)
				make_bad(sqe, k, i);
			else
				tring_prep_nop(sqe, i);
		}
		ret = tring_submit(&r);
		drec_int(c, ret, "%s: submit 5", bad_names[k]);
		drec_int(c, *r.sq_head - head0, "%s: sq head moved", bad_names[k]);
		dreap(c, &r, (unsigned int)(ret > 0 ? ret : 0),
		      kind_ordered(k), bad_names[k]);
		tring_reap_wait(&r, NULL, 0, 0);
		drec_int(c, tring_cq_ready(&r), "%s: no extra CQEs",
			 bad_names[k]);
		/* what stayed in the SQ is submitted by the next enter */
		ret = tring_submit(&r);
		drec_int(c, ret, "%s: resubmit", bad_names[k]);
		dreap(c, &r, (unsigned int)(ret > 0 ? ret : 0),
		      kind_ordered(k), "resubmitted");
		tring_exit(&r);
	}
}

static void sc_submit_stop(struct dctx *c)
{
	submit_bad(c, 0);
}

static void sc_submit_all(struct dctx *c)
{
	submit_bad(c, IORING_SETUP_SUBMIT_ALL);
}

/* A bad SQE inside a link chain (soft or hard links) */
static void bad_in_link(struct dctx *c, uint8_t link_flag)
{
	unsigned int k, pos;

	bad_fd_target = dtmpfile(c, 100, 1);
	for (k = 0; k < BAD_NR; k++) {
		for (pos = 0; pos < 4; pos++) {
			struct tring r;
			unsigned int i;
			int ret;

			if (dring_flags(c, &r, 8, 0))
				return;
			for (i = 0; i < 4; i++) {
				struct io_uring_sqe *sqe = tring_get_sqe(&r);

				if (i == pos)
					make_bad(sqe, k, i);
				else
					tring_prep_nop(sqe, i);
				if (i < 3)
					sqe->flags |= link_flag;
			}
			tring_prep_nop(tring_get_sqe(&r), 4);
			ret = tring_submit(&r);
			drec_int(c, ret, "%s at %u: submit", bad_names[k], pos);
			/* one CQE per SQE consumed (init failures stop) */
			dreap(c, &r, (unsigned int)(ret > 0 ? ret : 0),
			      kind_ordered(k), "chain");
			drec_int(c, tring_cq_ready(&r), "no extra CQEs");
			tring_exit(&r);
		}
	}
	close(bad_fd_target);
}

static void sc_bad_in_link(struct dctx *c)
{
	bad_in_link(c, IOSQE_IO_LINK);
}

static void sc_bad_in_hardlink(struct dctx *c)
{
	bad_in_link(c, IOSQE_IO_HARDLINK);
}

static void sc_enter_args(struct dctx *c)
{
	struct io_uring_getevents_arg arg;
	struct __kernel_timespec ts = { .tv_sec = 1 };
	struct tring r;
	unsigned int tail;

	if (dring_flags(c, &r, 4, 0))
		return;
	drec_int(c, tring_enter(&r, 0, 0, 0, NULL, 0), "enter 0");
	drec_int(c, tring_enter(&r, 0, 0, 1U << 31, NULL, 0), "enter bad flag");
	{
		unsigned int b;

		/* SQ_WAKEUP, SQ_WAIT on a non-SQPOLL ring; EXT_ARG_REG;
		 * NO_IOWAIT; unknown bits */
		for (b = 1; b < 10; b++) {
			if (b == 3 || b == 4 || b == 5)
				continue;	/* EXT_ARG, REGISTERED_RING, ABS */
			drec_int(c, tring_enter(&r, 0, 0, 1U << b, NULL, 0),
				 "enter flag bit %u", b);
		}
	}
	drec_int(c, tring_enter(&r, 5, 0, 0, NULL, 0),
		 "to_submit 5 with empty SQ");
	tring_queue_nops(&r, 3, 1, 0);
	tring_flush(&r);
	drec_int(c, tring_enter(&r, 10, 0, 0, NULL, 0), "to_submit 10, 3 queued");
	dreap(c, &r, 3, true, "nops");
	tring_queue_nops(&r, 3, 11, 0);
	tring_flush(&r);
	drec_int(c, tring_enter(&r, 1, 0, 0, NULL, 0), "to_submit 1, 3 queued");
	drec_int(c, tring_enter(&r, 2, 0, 0, NULL, 0), "to_submit 2");
	dreap(c, &r, 3, true, "nops");
	/* min_complete above the CQ size is capped at cq_entries */
	tring_queue_nops(&r, 4, 21, 0);
	drec_int(c, tring_submit(&r), "fill 4");
	tring_queue_nops(&r, 4, 25, 0);
	tring_flush(&r);
	memset(&arg, 0, sizeof(arg));
	arg.ts = (uint64_t)(uintptr_t)&ts;
	drec_int(c, tring_enter(&r, 4, 100, IORING_ENTER_GETEVENTS |
				IORING_ENTER_EXT_ARG, &arg, sizeof(arg)),
		 "min_complete 100 on an 8-entry CQ");
	dreap(c, &r, 8, true, "full CQ");
	/* GETEVENTS with min_complete 0 returns at once */
	drec_int(c, tring_enter(&r, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0),
		 "getevents 0");
	/* a hostile SQ tail, far ahead of head: at most sq_entries taken */
	tring_queue_nops(&r, 4, 31, 0);
	tring_flush(&r);
	tail = *r.sq_tail;
	__atomic_store_n(r.sq_tail, tail + 100, __ATOMIC_RELEASE);
	drec_int(c, tring_enter(&r, 100, 0, 0, NULL, 0), "tail 100 ahead");
	drec_int(c, *r.sq_head - tail, "head after hostile tail");
	__atomic_store_n(r.sq_tail, *r.sq_head, __ATOMIC_RELEASE);
	r.sqe_head = r.sqe_tail = *r.sq_head;
	dreap(c, &r, 4, true, "hostile tail nops");
	tring_exit(&r);
}

/*
 * NOP's own flags beyond INJECT_RESULT: NOP_FILE (the fd, or with
 * NOP_FIXED_FILE the registered slot, must resolve: -EBADF), NOP_CQE32
 * (the SQE's off and addr in the big CQE's extra words; -EINVAL on a ring
 * without 32-byte CQEs), NOP_TW, and NOP_FIXED_BUFFER with no buffer
 * table (-EFAULT).  With a buffer registered: nop_fixed_buffer.
 */
static struct io_uring_sqe *nop_f(struct tring *r, unsigned int flags, int fd,
				  uint64_t ud)
{
	struct io_uring_sqe *sqe = tring_get_sqe(r);

	tring_prep_nop(sqe, ud);
	sqe->nop_flags = flags;
	sqe->fd = fd;
	return sqe;
}

static void sc_nop_flags(struct dctx *c)
{
	struct io_uring_sqe *sqe;
	struct tring r;
	int p[2], fd;

	if (pipe(p)) {
		drec_int(c, -errno, "pipe");
		return;
	}
	if (dring_flags(c, &r, 16, IORING_SETUP_SUBMIT_ALL |
			IORING_SETUP_CQE32))
		goto out_pipe;
	nop_f(&r, IORING_NOP_FILE, p[0], 1);
	nop_f(&r, IORING_NOP_FILE, -1, 2);
	nop_f(&r, IORING_NOP_FILE, 9999, 3);
	/* closed since: the fd is looked up at issue */
	fd = dup(p[0]);
	close(fd);
	nop_f(&r, IORING_NOP_FILE, fd, 4);
	nop_f(&r, IORING_NOP_FILE | IORING_NOP_INJECT_RESULT, p[1], 5)->len = 42;
	nop_f(&r, IORING_NOP_FILE | IORING_NOP_INJECT_RESULT, -1, 6)->len = 42;
	/* FIXED_FILE alone does not ask for a file */
	nop_f(&r, IORING_NOP_FIXED_FILE, -1, 7);
	nop_f(&r, IORING_NOP_FILE | IORING_NOP_FIXED_FILE, 0, 8);
	drec_int(c, tring_submit(&r), "submit files");
	dreap(c, &r, 8, true, "NOP_FILE");
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_FILES, p, 2),
		 "register the pipe");
	nop_f(&r, IORING_NOP_FILE | IORING_NOP_FIXED_FILE, 0, 10);
	nop_f(&r, IORING_NOP_FILE | IORING_NOP_FIXED_FILE, 1, 11);
	nop_f(&r, IORING_NOP_FILE | IORING_NOP_FIXED_FILE, 2, 12);
	nop_f(&r, IORING_NOP_FILE | IORING_NOP_FIXED_FILE, -1, 13);
	drec_int(c, tring_submit(&r), "submit fixed files");
	dreap(c, &r, 4, true, "NOP_FILE | NOP_FIXED_FILE");
	/* 32-byte CQEs */
	sqe = nop_f(&r, IORING_NOP_CQE32, -1, 20);
	sqe->off = 0x1122334455667788ULL;
	sqe->addr = 0x99aabbccddeeff00ULL;
	sqe = nop_f(&r, IORING_NOP_CQE32 | IORING_NOP_INJECT_RESULT, -1, 21);
	sqe->len = (uint32_t)-EAGAIN;
	sqe->addr = 7;
	nop_f(&r, IORING_NOP_CQE32 | IORING_NOP_FILE, -1, 22)->off = 5;
	nop_f(&r, 0, -1, 23)->off = 5;	/* no flag: extra words stay 0 */
	drec_int(c, tring_submit(&r), "submit cqe32");
	dreap(c, &r, 4, true, "NOP_CQE32");
	/* task_work completions (their place among other CQEs:
	 * nop_tw_order) */
	nop_f(&r, IORING_NOP_TW, -1, 30);
	nop_f(&r, IORING_NOP_TW | IORING_NOP_INJECT_RESULT, -1, 31)->len = 3;
	nop_f(&r, IORING_NOP_TW | IORING_NOP_FILE, -1, 32);
	drec_int(c, tring_submit(&r), "submit tw");
	dreap(c, &r, 3, true, "NOP_TW");
	/* no buffer table */
	nop_f(&r, IORING_NOP_FIXED_BUFFER, -1, 33);
	nop_f(&r, IORING_NOP_FIXED_BUFFER, -1, 34)->buf_index = 3;
	drec_int(c, tring_submit(&r), "submit fixed buffer");
	dreap(c, &r, 2, true, "NOP_FIXED_BUFFER, no table");
	tring_exit(&r);

	/* NOP_CQE32 needs a ring with 32-byte CQEs */
	if (dring_flags(c, &r, 4, IORING_SETUP_SUBMIT_ALL))
		goto out_pipe;
	nop_f(&r, IORING_NOP_CQE32, -1, 40);
	nop_f(&r, IORING_NOP_CQE32 | IORING_NOP_INJECT_RESULT, -1, 41)->len = 1;
	nop_f(&r, IORING_NOP_INJECT_RESULT, -1, 42)->len = 2;
	drec_int(c, tring_submit(&r), "submit cqe32, 16-byte CQEs");
	dreap(c, &r, 3, true, "NOP_CQE32 without CQE32");
	tring_exit(&r);
out_pipe:
	close(p[0]);
	close(p[1]);
}

/*
 * NOP_FIXED_BUFFER with a registered buffer: the kernel looks the index
 * up in the buffer table (0, or -EFAULT for an empty or out-of-range
 * slot).
 */
static void sc_nop_fixed_buffer(struct dctx *c)
{
	static char buf[4096];
	struct iovec iov[2] = { { buf, sizeof(buf) }, { NULL, 0 } };
	struct tring r;

	if (dring_flags(c, &r, 8, 0))
		return;
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_BUFFERS,
			       iov, 2), "register a buffer and a hole");
	nop_f(&r, IORING_NOP_FIXED_BUFFER, -1, 1);
	nop_f(&r, IORING_NOP_FIXED_BUFFER, -1, 2)->buf_index = 1;
	nop_f(&r, IORING_NOP_FIXED_BUFFER, -1, 3)->buf_index = 2;
	nop_f(&r, IORING_NOP_FIXED_BUFFER | IORING_NOP_INJECT_RESULT, -1,
	      4)->len = 9;
	drec_int(c, tring_submit(&r), "submit");
	dreap(c, &r, 4, true, "NOP_FIXED_BUFFER");
	tring_exit(&r);
}

/*
 * Reaps `slots` CQ slots of a CQE_MIXED ring as they are: a CQE with
 * IORING_CQE_F_32 takes two slots (its extra words in the second), a
 * filler (IORING_CQE_F_SKIP) one.
 */
static void reap_mixed(struct dctx *c, struct tring *r, unsigned int slots,
		       const char *label)
{
	struct tcqe out[16];
	unsigned int n = 0, used = 0, head;

	for (int i = 0; i < 1000 && tring_cq_ready(r) < slots; i++) {
		tring_wait(r, 1, 10 * 1000 * 1000);
		usleep(1000);
	}
	drec_int(c, tring_cq_ready(r), "%s: slots used", label);
	head = *r->cq_head;
	while (used < slots && n < 16 && tring_cq_ready(r) > used) {
		struct io_uring_cqe *cqe =
			&r->cqes[(head + used) & r->cq_mask];

		out[n].user_data = cqe->user_data;
		out[n].res = cqe->res;
		out[n].flags = cqe->flags;
		out[n].big[0] = out[n].big[1] = 0;
		used++;
		if (cqe->flags & IORING_CQE_F_32) {
			/* never split by the ring's end (a filler comes first) */
			dcheck(c, ((head + used) & r->cq_mask) != 0,
			       "%s: 32-byte CQE split", label);
			memcpy(out[n].big, cqe + 1, sizeof(out[n].big));
			used++;
		}
		n++;
	}
	drec_cqes(c, out, n, true, "%s", label);
	tring_cq_advance(r, used);
}

/*
 * IORING_SETUP_CQE_MIXED: 16- and 32-byte CQEs in one ring; NOP_CQE32
 * posts a 32-byte one (IORING_CQE_F_32), and one that would straddle the
 * ring's end is preceded by a filler CQE (IORING_CQE_F_SKIP).
 */
static void sc_nop_cqe_mixed(struct dctx *c)
{
	struct io_uring_sqe *sqe;
	struct tring r;
	unsigned int i;

	/* 4 SQEs, 8 CQ slots */
	if (dring_flags(c, &r, 4, IORING_SETUP_CQE_MIXED))
		return;
	drec_int(c, r.cq_entries, "cq_entries");
	drec_int(c, r.cqe_shift, "cqe_shift");
	/* slots 0..1: one 32-byte CQE; 2: a plain one */
	sqe = nop_f(&r, IORING_NOP_CQE32, -1, 1);
	sqe->off = 11;
	sqe->addr = 12;
	nop_f(&r, 0, -1, 2);
	drec_int(c, tring_submit(&r), "submit 1");
	reap_mixed(c, &r, 3, "big, plain");
	/* 3..6: plain, then a 32-byte CQE at slot 7 would straddle: filler
	 * at 7, the CQE at 0..1 */
	for (i = 0; i < 4; i++)
		nop_f(&r, 0, -1, 10 + i);
	drec_int(c, tring_submit(&r), "submit 2");
	reap_mixed(c, &r, 4, "four plain");
	sqe = nop_f(&r, IORING_NOP_CQE32 | IORING_NOP_INJECT_RESULT, -1, 20);
	sqe->len = 77;
	sqe->off = 21;
	sqe->addr = 22;
	nop_f(&r, 0, -1, 23);
	drec_int(c, tring_submit(&r), "submit 3");
	reap_mixed(c, &r, 4, "filler, big, plain");
	/* a failing NOP_CQE32 still posts a 32-byte CQE */
	sqe = nop_f(&r, IORING_NOP_CQE32 | IORING_NOP_FILE, -1, 30);
	sqe->off = 31;
	drec_int(c, tring_submit(&r), "submit 4");
	reap_mixed(c, &r, 2, "failed big");
	tring_exit(&r);
}

/*
 * NOP_TW completes through task_work: the kernel posts its CQE after the
 * inline completions of the same submission.
 */
static void sc_nop_tw_order(struct dctx *c)
{
	struct tring r;

	if (dring_flags(c, &r, 8, 0))
		return;
	nop_f(&r, IORING_NOP_TW, -1, 1);
	nop_f(&r, 0, -1, 2);
	nop_f(&r, IORING_NOP_TW | IORING_NOP_INJECT_RESULT, -1, 3)->len = 5;
	nop_f(&r, 0, -1, 4);
	drec_int(c, tring_submit(&r), "submit");
	dreap(c, &r, 4, true, "NOP_TW among inline NOPs");
	/* in chains: a NOP_TW head's successor runs after it completes; a
	 * failing one (no file) cancels the rest; IOSQE_ASYNC ones too */
	nop_f(&r, IORING_NOP_TW, -1, 10)->flags |= IOSQE_IO_LINK;
	nop_f(&r, 0, -1, 11);
	nop_f(&r, IORING_NOP_TW | IORING_NOP_FILE, -1, 12)->flags |=
		IOSQE_IO_LINK;
	nop_f(&r, 0, -1, 13);
	nop_f(&r, IORING_NOP_TW, -1, 14)->flags |= IOSQE_ASYNC;
	nop_f(&r, 0, -1, 15);
	drec_int(c, tring_submit(&r), "submit chains");
	dreap(c, &r, 6, false, "NOP_TW in chains, async (sorted)");
	tring_exit(&r);
}

static const struct dscenario scenarios[] = {
	{ "nop_basic", sc_nop_basic, NULL },
	{ "inject", sc_inject, NULL },
	{ "sqe_flags", sc_sqe_flags, NULL },
	{ "unknown_opcode", sc_unknown_opcode, NULL },
	{ "submit_stop", sc_submit_stop, NULL },
	{ "submit_all", sc_submit_all, NULL },
	{ "bad_in_link", sc_bad_in_link, NULL },
	{ "bad_in_hardlink", sc_bad_in_hardlink, NULL },
	{ "enter_args", sc_enter_args, NULL },
	{ "nop_flags", sc_nop_flags, NULL },
	{ "nop_cqe_mixed", sc_nop_cqe_mixed, NULL },
	{ "nop_fixed_buffer", sc_nop_fixed_buffer, NULL },
	{ "nop_tw_order", sc_nop_tw_order, NULL },
};

DTEST_MAIN(scenarios)
