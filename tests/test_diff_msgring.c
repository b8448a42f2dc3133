// SPDX-License-Identifier: MIT
/*
 * Differential tests: MSG_RING (data, flags pass, CQE_SKIP, send fd,
 * errors), REGISTER_SEND_MSG_RING without a ring (fd -1),
 * REGISTER_IOWQ_MAX_WORKERS, REGISTER_CLOCK and REGISTER_SYNC_CANCEL.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtest.h"

static struct io_uring_sqe *prep_msg(struct tring *r, int fd, uint32_t len,
				     uint64_t data, uint64_t ud)
{
	struct io_uring_sqe *sqe = tring_get_sqe(r);

	tring_prep_rw(sqe, IORING_OP_MSG_RING, fd, NULL, len, data, ud);
	return sqe;
}

static void sc_msg_data(struct dctx *c)
{
	struct tring a, b;
	struct io_uring_sqe *sqe;
	int nfd;

	if (dring_flags(c, &a, 8, 0) || dring_flags(c, &b, 8, 0))
		return;
	prep_msg(&a, b.fd, 0x1234, 0xcafe, 1);
	drec_int(c, tring_submit(&a), "msg to b");
	dreap(c, &a, 1, true, "sender");
	dreap(c, &b, 1, true, "target");
	/* FLAGS_PASS: file_index becomes the target CQE's flags */
	sqe = prep_msg(&a, b.fd, 7, 0xbeef, 2);
	sqe->msg_ring_flags = IORING_MSG_RING_FLAGS_PASS;
	sqe->file_index = 0x10000;
	drec_int(c, tring_submit(&a), "msg flags pass");
	dreap(c, &a, 1, true, "sender 2");
	dreap(c, &b, 1, true, "target 2");
	/* to itself */
	prep_msg(&a, a.fd, 3, 9, 3);
	drec_int(c, tring_submit(&a), "msg to self");
	dreap(c, &a, 2, false, "self");
	/* errors: not a ring, bad fd, bad cmd, bad flags, src_fd with data */
	nfd = open("/dev/null", O_RDONLY);
	prep_msg(&a, nfd, 1, 1, 10);
	prep_msg(&a, 9999, 1, 1, 11);
	drec_int(c, tring_submit(&a), "not a ring / bad fd");
	dreap(c, &a, 2, false, "errors 1");
	sqe = prep_msg(&a, b.fd, 1, 1, 12);
	sqe->addr = 7;
	drec_int(c, tring_submit(&a), "bad cmd");
	dreap(c, &a, 1, true, "bad cmd");
	sqe = prep_msg(&a, b.fd, 1, 1, 13);
	sqe->msg_ring_flags = 1U << 5;
	drec_int(c, tring_submit(&a), "bad flags");
	dreap(c, &a, 1, true, "bad flags");
	sqe = prep_msg(&a, b.fd, 1, 1, 14);
	sqe->addr3 = 2;
	drec_int(c, tring_submit(&a), "src_fd with data");
	dreap(c, &a, 1, true, "src_fd");
	sqe = prep_msg(&a, b.fd, 1, 1, 15);
	sqe->file_index = 3;
	drec_int(c, tring_submit(&a), "dst_fd without pass");
	dreap(c, &a, 1, true, "dst_fd");
	drec_int(c, tring_cq_ready(&b), "nothing more on b");
	close(nfd);
	tring_exit(&b);
	tring_exit(&a);
}

static void sc_msg_send_fd(struct dctx *c)
{
	struct io_uring_rsrc_register rr;
	struct tring a, b;
	struct io_uring_sqe *sqe;
	int fd = dtmpfile(c, 4096, 1);
	char buf[8];

	if (fd < 0 || dring_flags(c, &a, 8, 0) || dring_flags(c, &b, 8, 0))
		return;
	drec_int(c, c->be->reg((unsigned int)a.fd, IORING_REGISTER_FILES, &fd, 1),
		 "a: register file");
	memset(&rr, 0, sizeof(rr));
	rr.nr = 4;
	rr.flags = IORING_RSRC_REGISTER_SPARSE;
	drec_int(c, c->be->reg((unsigned int)b.fd, IORING_REGISTER_FILES2, &rr,
			       sizeof(rr)), "b: sparse table");
	sqe = prep_msg(&a, b.fd, 0, 0x77, 1);
	sqe->addr = IORING_MSG_SEND_FD;
	sqe->addr3 = 0;
	sqe->file_index = 3; /* slot 2 */
	drec_int(c, tring_submit(&a), "send fd");
	dreap(c, &a, 1, true, "send fd sender");
	dreap(c, &b, 1, true, "send fd target");
	sqe = tring_get_sqe(&b);
	tring_prep_rw(sqe, IORING_OP_READ, 2, buf, sizeof(buf), 0, 5);
	sqe->flags |= IOSQE_FIXED_FILE;
	drec_int(c, tring_submit(&b), "read passed file");
	dreap(c, &b, 1, true, "read passed file");
	/* errors: len, to itself, empty source slot */
	sqe = prep_msg(&a, b.fd, 1, 0, 2);
	sqe->addr = IORING_MSG_SEND_FD;
	sqe = prep_msg(&a, a.fd, 0, 0, 3);
	sqe->addr = IORING_MSG_SEND_FD;
	sqe = prep_msg(&a, b.fd, 0, 0, 4);
	sqe->addr = IORING_MSG_SEND_FD;
	sqe->addr3 = 5;
	sqe->file_index = 1;
	drec_int(c, tring_submit(&a), "send fd errors");
	dreap(c, &a, 3, false, "send fd errors");
	close(fd);
	tring_exit(&b);
	tring_exit(&a);
}

static void sc_registers(struct dctx *c)
{
	struct io_uring_clock_register cr;
	uint32_t vals[2] = { 0, 0 };
	struct tring r;

	if (dring_flags(c, &r, 8, 0))
		return;
	/* the thread's io-wq exists with its io_uring context */
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_IOWQ_MAX_WORKERS,
			       vals, 2), "max workers query");
	drec_int(c, vals[0], "bounded default");
	drec_int(c, vals[1], "unbounded default");
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_IOWQ_MAX_WORKERS,
			       vals, 1), "max workers nr 1");
	/* after an async request the pool exists */
	tring_queue_nops(&r, 1, 1, IOSQE_ASYNC);
	tring_submit_and_wait(&r, 1);
	dreap(c, &r, 1, true, "async nop");
	vals[0] = 3;
	vals[1] = 0;
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_IOWQ_MAX_WORKERS,
			       vals, 2), "max workers set 3");
	drec_int(c, vals[0] > 0, "old bounded limit reported");
	vals[0] = vals[1] = 0;
	c->be->reg((unsigned int)r.fd, IORING_REGISTER_IOWQ_MAX_WORKERS, vals, 2);
	drec_int(c, vals[0], "bounded limit now");

	memset(&cr, 0, sizeof(cr));
	cr.clockid = CLOCK_BOOTTIME;
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_CLOCK, &cr, 0),
		 "clock boottime");
	cr.clockid = CLOCK_REALTIME;
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_CLOCK, &cr, 0),
		 "clock realtime");
	cr.clockid = CLOCK_MONOTONIC;
	cr.__resv[1] = 1;
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_CLOCK, &cr, 0),
		 "clock resv");
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_CLOCK, NULL, 0),
		 "clock NULL");
	tring_exit(&r);
}

static void sc_sync_cancel(struct dctx *c)
{
	struct io_uring_sync_cancel_reg sc;
	struct tring r;
	char buf[8];
	int p[2];

	if (dring_flags(c, &r, 8, 0) || pipe(p))
		return;
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, p[0], buf, sizeof(buf), 0, 1);
	drec_int(c, tring_submit(&r), "parked read");
	memset(&sc, 0, sizeof(sc));
	sc.addr = 1;
	sc.timeout.tv_sec = -1;
	sc.timeout.tv_nsec = -1;
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_SYNC_CANCEL, &sc, 1),
		 "sync cancel");
	dreap(c, &r, 1, true, "cancelled");
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_SYNC_CANCEL, &sc, 1),
		 "sync cancel again");
	sc.pad[0] = 1;
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_SYNC_CANCEL, &sc, 1),
		 "sync cancel pad");
	sc.pad[0] = 0;
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_SYNC_CANCEL, &sc, 2),
		 "sync cancel nr 2");
	close(p[0]);
	close(p[1]);
	tring_exit(&r);
}

/* IORING_REGISTER_SEND_MSG_RING with fd -1 (no source ring) */
static int blind(struct dctx *c, const void *sqe, unsigned int nr)
{
	return c->be->reg((unsigned int)-1, IORING_REGISTER_SEND_MSG_RING,
			  (void *)sqe, nr);
}

static void sc_blind(struct dctx *c)
{
	struct io_uring_sqe sqe, t;
	struct tring b;
	int nfd;

	if (dring_flags(c, &b, 8, 0))
		return;
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_MSG_RING;
	sqe.fd = b.fd;
	sqe.len = 0x42;
	sqe.off = 0xabc;
	drec_int(c, blind(c, &sqe, 1), "data");
	dreap(c, &b, 1, true, "target");
	t = sqe;
	t.msg_ring_flags = IORING_MSG_RING_FLAGS_PASS;
	t.file_index = 0x777;
	drec_int(c, blind(c, &t, 1), "flags pass");
	dreap(c, &b, 1, true, "target 2");
	/* errors */
	drec_int(c, blind(c, NULL, 1), "NULL");
	drec_int(c, blind(c, &sqe, 0), "nr 0");
	drec_int(c, blind(c, &sqe, 2), "nr 2");
	drec_int(c, blind(c, dunmapped_addr(), 1), "unmapped");
	t = sqe;
	t.flags = IOSQE_FIXED_FILE;
	drec_int(c, blind(c, &t, 1), "sqe flags");
	t = sqe;
	t.opcode = IORING_OP_NOP;
	drec_int(c, blind(c, &t, 1), "a NOP");
	t = sqe;
	t.buf_index = 1;
	drec_int(c, blind(c, &t, 1), "buf_index");
	t = sqe;
	t.personality = 1;
	drec_int(c, blind(c, &t, 1), "personality");
	t = sqe;
	t.msg_ring_flags = 1U << 5;
	drec_int(c, blind(c, &t, 1), "unknown msg flag");
	t = sqe;
	t.msg_ring_flags = IORING_MSG_RING_CQE_SKIP;
	drec_int(c, blind(c, &t, 1), "CQE_SKIP with data");
	t = sqe;
	t.addr = IORING_MSG_SEND_FD;
	drec_int(c, blind(c, &t, 1), "send fd");
	t = sqe;
	t.addr = 7;
	drec_int(c, blind(c, &t, 1), "unknown cmd");
	t = sqe;
	t.addr3 = 1;
	drec_int(c, blind(c, &t, 1), "src_fd");
	t = sqe;
	t.file_index = 3;
	drec_int(c, blind(c, &t, 1), "dst_fd without pass");
	t = sqe;
	t.fd = 9999;
	drec_int(c, blind(c, &t, 1), "bad fd");
	nfd = open("/dev/null", O_RDONLY);
	t.fd = nfd;
	drec_int(c, blind(c, &t, 1), "not a ring");
	t.fd = -1;
	drec_int(c, blind(c, &t, 1), "fd -1");
	close(nfd);
	drec_int(c, tring_cq_ready(&b), "nothing more on the target");
	/* with the target's own registered-ring flag: still fd -1 */
	drec_int(c, c->be->reg((unsigned int)-1,
			       IORING_REGISTER_SEND_MSG_RING |
			       IORING_REGISTER_USE_REGISTERED_RING, &sqe, 1),
		 "USE_REGISTERED_RING bit");
	dreap(c, &b, 1, true, "target 3");
	tring_exit(&b);
}

static const struct dscenario scenarios[] = {
	{ "msg_data", sc_msg_data, NULL, NULL },
	{ "msg_send_fd", sc_msg_send_fd, NULL, NULL },
	{ "registers", sc_registers, NULL, NULL },
	{ "sync_cancel", sc_sync_cancel, NULL, NULL },
	{ "blind", sc_blind, NULL, NULL },
};

DTEST_MAIN(scenarios)
