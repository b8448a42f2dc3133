// SPDX-License-Identifier: MIT
/*
 * Differential tests: registered ring fds (RING_FDS / UNREGISTER_RING_FDS,
 * enter with IORING_ENTER_REGISTERED_RING, per-thread registrations),
 * R_DISABLED + ENABLE_RINGS, and SINGLE_ISSUER from another thread
 * (-EEXIST).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"

static int reg_ring(struct dctx *c, int fd, unsigned int offset, int data,
		    unsigned int *out)
{
	struct io_uring_rsrc_update up;
	int ret;

	memset(&up, 0, sizeof(up));
	up.offset = offset;
	up.data = (uint64_t)(int64_t)data;
	ret = c->be->reg(fd, IORING_REGISTER_RING_FDS, &up, 1);
	if (out)
		*out = up.offset;
	return ret;
}

static int unreg_ring(struct dctx *c, int fd, unsigned int offset)
{
	struct io_uring_rsrc_update up;

	memset(&up, 0, sizeof(up));
	up.offset = offset;
	return c->be->reg(fd, IORING_UNREGISTER_RING_FDS, &up, 1);
}

static int nop_via(struct dctx *c, struct tring *r, unsigned int idx,
		   unsigned int flags, uint64_t ud)
{
	tring_prep_nop(tring_get_sqe(r), ud);
	tring_flush(r);
	flags |= tring_sqpoll_wakeup_flag(r, 1);
	return c->be->enter(idx, 1, 1, IORING_ENTER_GETEVENTS | flags, NULL, 0);
}

static void sc_ring_fds(struct dctx *c)
{
	struct io_uring_rsrc_update ups[20];
	struct tring r, r2;
	unsigned int off, i;
	int ret, fd;

	if (dring_flags(c, &r, 8, 0) || dring_flags(c, &r2, 8, 0))
		return;
	ret = reg_ring(c, r.fd, -1U, r.fd, &off);
	drec_int(c, ret, "register any slot");
	drec_int(c, off, "slot");
	drec_int(c, nop_via(c, &r, off, IORING_ENTER_REGISTERED_RING, 1),
		 "enter via slot");
	dreap(c, &r, 1, true, "nop via slot");
	drec_int(c, reg_ring(c, r.fd, 5, r2.fd, &off), "register slot 5");
	drec_int(c, off, "slot 5 stays 5");
	drec_int(c, reg_ring(c, r.fd, 5, r.fd, NULL), "slot 5 again");
	drec_int(c, reg_ring(c, r.fd, 16, r.fd, NULL), "slot 16");
	drec_int(c, reg_ring(c, r.fd, 1000, r.fd, NULL), "slot 1000");
	/* slot 5 holds r2: enter through it reaches r2 */
	drec_int(c, nop_via(c, &r2, 5, IORING_ENTER_REGISTERED_RING, 2),
		 "enter r2 via slot 5");
	dreap(c, &r2, 1, true, "nop on r2 via slot 5");
	fd = open("/dev/null", O_RDONLY);
	drec_int(c, reg_ring(c, r.fd, -1U, fd, NULL), "register /dev/null");
	close(fd);
	drec_int(c, reg_ring(c, r.fd, -1U, -1, NULL), "register fd -1");
	drec_int(c, reg_ring(c, r.fd, -1U, 9999, NULL), "register fd 9999");
	{
		struct io_uring_rsrc_update up;

		memset(&up, 0, sizeof(up));
		up.offset = -1U;
		up.data = (uint64_t)r.fd;
		up.resv = 1;
		drec_int(c, c->be->reg(r.fd, IORING_REGISTER_RING_FDS, &up, 1),
			 "register resv != 0");
		drec_int(c, c->be->reg(r.fd, IORING_REGISTER_RING_FDS, &up, 0),
			 "register nr_args 0");
		drec_int(c, c->be->reg(r.fd, IORING_REGISTER_RING_FDS, &up, 17),
			 "register nr_args 17");
	}
	/* enter with bad indices */
	drec_int(c, c->be->enter(7, 0, 0, IORING_ENTER_REGISTERED_RING, NULL, 0),
		 "enter empty slot 7");
	drec_int(c, c->be->enter(16, 0, 0, IORING_ENTER_REGISTERED_RING, NULL,
				 0), "enter slot 16");
	drec_int(c, c->be->enter(~0U, 0, 0, IORING_ENTER_REGISTERED_RING, NULL,
				 0), "enter slot ~0");
	/* unregister */
	drec_int(c, unreg_ring(c, r.fd, 5), "unregister slot 5");
	drec_int(c, c->be->enter(5, 0, 0, IORING_ENTER_REGISTERED_RING, NULL, 0),
		 "enter unregistered slot 5");
	drec_int(c, unreg_ring(c, r.fd, 5), "unregister slot 5 again");
	drec_int(c, unreg_ring(c, r.fd, 16), "unregister slot 16");
	{
		struct io_uring_rsrc_update up;

		memset(&up, 0, sizeof(up));
		up.offset = 0;
		up.data = 1;
		drec_int(c, c->be->reg(r.fd, IORING_UNREGISTER_RING_FDS, &up, 1),
			 "unregister data != 0");
	}
	/* fill all 16 slots in one call (slot 0 is taken) */
	memset(ups, 0, sizeof(ups));
	for (i = 0; i < 16; i++) {
		ups[i].offset = -1U;
		ups[i].data = (uint64_t)r.fd;
	}
	ret = c->be->reg(r.fd, IORING_REGISTER_RING_FDS, ups, 16);
	drec_int(c, ret, "register 16 more");
	for (i = 0; i < 16; i++)
		drec_int(c, ups[i].offset, "bulk slot %u", i);
	memset(ups, 0, sizeof(ups));
	for (i = 0; i < 16; i++)
		ups[i].offset = i;
	drec_int(c, c->be->reg(r.fd, IORING_UNREGISTER_RING_FDS, ups, 16),
		 "unregister all 16");
	tring_exit(&r2);
	tring_exit(&r);
}

/* the registration keeps the ring alive after the fd is closed */
static void sc_ring_fd_closed(struct dctx *c)
{
	struct tring r;
	unsigned int off;

	if (dring_flags(c, &r, 8, 0))
		return;
	drec_int(c, reg_ring(c, r.fd, -1U, r.fd, &off), "register");
	drec_int(c, c->be->close(r.fd), "close ring fd");
	drec_int(c, nop_via(c, &r, off, IORING_ENTER_REGISTERED_RING, 1),
		 "enter via slot after close");
	dreap(c, &r, 1, true, "nop after close");
	drec_int(c, c->be->enter(r.fd, 0, 0, 0, NULL, 0) < 0,
		 "enter via closed fd fails");
	drec_int(c, unreg_ring(c, r.fd, off),
		 "unregister (via a closed fd)");
	r.fd = -1;
	r.enter_flags = 0;
	tring_exit(&r);
}

/*
 * A registered slot keeps the ring alive past the close of its last fd:
 * a read parked on an empty pipe before the close still completes when
 * data arrives, and unregistering the slot (through itself) lets go.
 */
static void sc_ring_fd_closed_inflight(struct dctx *c)
{
	struct io_uring_rsrc_update up;
	struct tring r;
	unsigned int off, fl;
	char buf[8];
	int p[2];

	if (dring_flags(c, &r, 8, 0))
		return;
	if (pipe(p)) {
		dcheck(c, 0, "pipe");
		tring_exit(&r);
		return;
	}
	drec_int(c, reg_ring(c, r.fd, -1U, r.fd, &off), "register");
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, p[0], buf,
		      sizeof(buf), 0, 7);
	tring_flush(&r);
	fl = IORING_ENTER_REGISTERED_RING | tring_sqpoll_wakeup_flag(&r, 1);
	drec_int(c, c->be->enter(off, 1, 0, fl, NULL, 0), "submit read");
	drec_int(c, c->be->close(r.fd), "close ring fd");
	drec_int(c, write(p[1], "abc", 3), "write pipe");
	drec_int(c, c->be->enter(off, 0, 1, IORING_ENTER_GETEVENTS |
				 IORING_ENTER_REGISTERED_RING, NULL, 0),
		 "wait via slot");
	dreap(c, &r, 1, true, "read after close");
	memset(&up, 0, sizeof(up));
	up.offset = off;
	drec_int(c, c->be->reg(off, IORING_UNREGISTER_RING_FDS |
			       IORING_REGISTER_USE_REGISTERED_RING, &up, 1),
		 "unregister through the slot");
	drec_int(c, c->be->enter(off, 0, 0, IORING_ENTER_REGISTERED_RING,
				 NULL, 0), "enter the empty slot");
	tclose2(p);
	r.fd = -1;
	r.enter_flags = 0;
	tring_exit(&r);
}

/* registrations are per thread */
struct thr_arg {
	struct dctx *c;
	struct tring *r;
	unsigned int slot;
	int ret_enter, ret_reg, ret_own;
	unsigned int own_slot;
};

static void *other_thread(void *p)
{
	struct thr_arg *a = p;

	a->ret_enter = a->c->be->enter(a->slot, 0, 0,
				       IORING_ENTER_REGISTERED_RING, NULL, 0);
	a->ret_reg = reg_ring(a->c, a->r->fd, -1U, a->r->fd, &a->own_slot);
	a->ret_own = a->c->be->enter(a->own_slot, 0, 0,
				     IORING_ENTER_REGISTERED_RING, NULL, 0);
	return NULL;
}

static void sc_ring_fds_per_thread(struct dctx *c)
{
	struct thr_arg a;
	struct tring r;
	pthread_t th;
	unsigned int off;

	if (dring_flags(c, &r, 8, 0))
		return;
	drec_int(c, reg_ring(c, r.fd, 3, r.fd, &off), "register slot 3");
	memset(&a, 0, sizeof(a));
	a.c = c;
	a.r = &r;
	a.slot = 3;
	pthread_create(&th, NULL, other_thread, &a);
	pthread_join(th, NULL);
	drec_int(c, a.ret_enter, "other thread: enter slot 3");
	drec_int(c, a.ret_reg, "other thread: register");
	drec_int(c, a.own_slot, "other thread: its slot");
	drec_int(c, a.ret_own, "other thread: enter its slot");
	drec_int(c, c->be->enter(3, 0, 0, IORING_ENTER_REGISTERED_RING, NULL, 0),
		 "this thread: enter slot 3");
	tring_exit(&r);
}

static void sc_register_use_registered(struct dctx *c)
{
	struct io_uring_probe *pr;
	char buf[sizeof(*pr) + 8 * sizeof(struct io_uring_probe_op)];
	struct tring r;
	unsigned int off;

	if (dring_flags(c, &r, 8, 0))
		return;
	drec_int(c, reg_ring(c, r.fd, -1U, r.fd, &off), "register");
	memset(buf, 0, sizeof(buf));
	pr = (struct io_uring_probe *)buf;
	drec_int(c, c->be->reg(off, IORING_REGISTER_PROBE |
			       IORING_REGISTER_USE_REGISTERED_RING, pr, 8),
		 "PROBE via registered ring");
	drec_int(c, pr->ops_len, "ops_len");
	drec_int(c, c->be->reg(9, IORING_REGISTER_PROBE |
			       IORING_REGISTER_USE_REGISTERED_RING, pr, 8),
		 "PROBE via empty slot");
	drec_int(c, unreg_ring(c, r.fd, off), "unregister");
	tring_exit(&r);
}

/* ---- SINGLE_ISSUER ---- */

struct issuer_arg {
	struct dctx *c;
	struct tring *r;
	int submit, wait0, reg_probe, enable;
	bool do_enable;
};

static void *issuer_thread(void *p)
{
	struct issuer_arg *a = p;
	char buf[sizeof(struct io_uring_probe) +
		 4 * sizeof(struct io_uring_probe_op)];

	if (a->do_enable)
		a->enable = a->c->be->reg(a->r->fd, IORING_REGISTER_ENABLE_RINGS,
					  NULL, 0);
	tring_prep_nop(tring_get_sqe(a->r), 77);
	a->submit = tring_submit(a->r);
	a->wait0 = tring_enter(a->r, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0);
	memset(buf, 0, sizeof(buf));
	a->reg_probe = a->c->be->reg(a->r->fd, IORING_REGISTER_PROBE, buf, 4);
	return NULL;
}

static void sc_single_issuer(struct dctx *c)
{
	struct issuer_arg a;
	struct tring r;
	pthread_t th;

	/* the creating thread owns the ring */
	if (dring_flags(c, &r, 8, IORING_SETUP_SINGLE_ISSUER))
		return;
	memset(&a, 0, sizeof(a));
	a.c = c;
	a.r = &r;
	pthread_create(&th, NULL, issuer_thread, &a);
	pthread_join(th, NULL);
	drec_int(c, a.submit, "other thread: submit");
	drec_int(c, a.wait0, "other thread: getevents 0");
	drec_int(c, a.reg_probe, "other thread: register PROBE");
	/* the SQE the other thread queued is still there */
	drec_int(c, tring_submit(&r), "owner: submit");
	dreap(c, &r, 1, true, "owner's CQE");
	tring_exit(&r);

	/* R_DISABLED: the enabling thread becomes the owner */
	if (dring_flags(c, &r, 8, IORING_SETUP_SINGLE_ISSUER |
				  IORING_SETUP_R_DISABLED))
		return;
	memset(&a, 0, sizeof(a));
	a.c = c;
	a.r = &r;
	a.do_enable = true;
	pthread_create(&th, NULL, issuer_thread, &a);
	pthread_join(th, NULL);
	drec_int(c, a.enable, "other thread: ENABLE_RINGS");
	drec_int(c, a.submit, "enabler: submit");
	dreap(c, &r, 1, true, "enabler's CQE");
	tring_prep_nop(tring_get_sqe(&r), 78);
	drec_int(c, tring_submit(&r), "creator: submit");
	drec_int(c, tring_enter(&r, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0),
		 "creator: getevents 0");
	tring_exit(&r);

	/* without SINGLE_ISSUER any thread may submit */
	if (dring_flags(c, &r, 8, 0))
		return;
	memset(&a, 0, sizeof(a));
	a.c = c;
	a.r = &r;
	pthread_create(&th, NULL, issuer_thread, &a);
	pthread_join(th, NULL);
	drec_int(c, a.submit, "no SINGLE_ISSUER: other thread submit");
	dreap(c, &r, 1, true, "other thread's CQE");
	tring_exit(&r);
}

/* REGISTERED_FD_ONLY: setup returns a registered slot, not an fd */
static void sc_registered_fd_only(struct dctx *c)
{
	struct io_uring_params p;
	struct tring r;
	int ret, slot;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_NO_MMAP | IORING_SETUP_REGISTERED_FD_ONLY;
	ret = tring_init_params(&r, c->be, 8, &p);
	drec_int(c, ret, "setup NO_MMAP|REGISTERED_FD_ONLY");
	if (ret)
		return;
	slot = r.fd;
	drec_int(c, slot, "returned slot");
	r.fd = -1;		/* not an fd: never close it */
	r.enter_fd = slot;
	r.enter_flags = IORING_ENTER_REGISTERED_RING;
	tring_queue_nops(&r, 3, 1, 0);
	drec_int(c, tring_submit_and_wait(&r, 3), "submit via slot");
	dreap(c, &r, 3, true, "nops via slot");
	drec_int(c, c->be->enter(slot, 0, 0, 0, NULL, 0) < 0,
		 "enter with the slot as an fd fails");
	{
		char buf[sizeof(struct io_uring_probe) +
			 4 * sizeof(struct io_uring_probe_op)];

		memset(buf, 0, sizeof(buf));
		drec_int(c, c->be->reg(slot, IORING_REGISTER_PROBE |
				       IORING_REGISTER_USE_REGISTERED_RING,
				       buf, 4), "PROBE via slot");
	}
	drec_int(c, unreg_ring(c, -1, slot), "unregister via fd -1");
	{
		struct io_uring_rsrc_update up;

		memset(&up, 0, sizeof(up));
		up.offset = (unsigned int)slot;
		drec_int(c, c->be->reg(slot, IORING_UNREGISTER_RING_FDS |
				       IORING_REGISTER_USE_REGISTERED_RING,
				       &up, 1), "unregister the slot via itself");
	}
	drec_int(c, c->be->enter(slot, 0, 0, IORING_ENTER_REGISTERED_RING,
				 NULL, 0), "enter after unregister");
	r.enter_flags = 0;
	tring_exit(&r);
	/* REGISTERED_FD_ONLY needs NO_MMAP */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_REGISTERED_FD_ONLY;
	drec_int(c, c->be->setup(8, &p), "REGISTERED_FD_ONLY without NO_MMAP");
}

static int restrict_ring(struct dctx *c, struct tring *r,
			 const struct io_uring_restriction *res, unsigned int n,
			 const char *label)
{
	int ret = c->be->reg(r->fd, IORING_REGISTER_RESTRICTIONS, (void *)res,
			     n);

	drec_int(c, ret, "%s: REGISTER_RESTRICTIONS", label);
	return ret;
}

static void res_set(struct io_uring_restriction *e, unsigned int opcode,
		    unsigned int v)
{
	memset(e, 0, sizeof(*e));
	e->opcode = (uint16_t)opcode;
	e->register_op = (uint8_t)v; /* one byte shared by the union */
}

static void submit_one_nop(struct dctx *c, struct tring *r, uint8_t flags,
			   const char *label)
{
	struct io_uring_sqe *s = tring_get_sqe(r);

	tring_prep_nop(s, 1);
	s->flags = flags;
	dsubmit(c, r, label);
	dreap(c, r, 1, true, label);
}

/* IORING_REGISTER_RESTRICTIONS: registration rules and enforcement */
static void sc_restrictions(struct dctx *c)
{
	struct io_uring_restriction res[4];
	struct io_uring_sqe *s;
	struct tring r;
	char buf[8];
	int fds[1];

	/* only while the ring is disabled */
	if (dring_flags(c, &r, 8, 0))
		return;
	res_set(&res[0], IORING_RESTRICTION_SQE_OP, IORING_OP_NOP);
	restrict_ring(c, &r, res, 1, "enabled ring");
	tring_exit(&r);

	if (dring_flags(c, &r, 8, IORING_SETUP_R_DISABLED))
		return;
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_RESTRICTIONS, NULL, 1),
		 "NULL array");
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_RESTRICTIONS,
			       dunmapped_addr(), 1), "unmapped array");
	res_set(&res[0], IORING_RESTRICTION_SQE_OP, IORING_OP_NOP);
	res_set(&res[1], IORING_RESTRICTION_LAST, 0);
	restrict_ring(c, &r, res, 2, "unknown restriction opcode");
	res_set(&res[1], IORING_RESTRICTION_SQE_OP, IORING_OP_LAST);
	restrict_ring(c, &r, res, 2, "SQE op out of range");
	res_set(&res[1], IORING_RESTRICTION_REGISTER_OP, IORING_REGISTER_LAST);
	restrict_ring(c, &r, res, 2, "register op out of range");
	/* failures left nothing behind: a valid set registers now */
	res_set(&res[0], IORING_RESTRICTION_SQE_OP, IORING_OP_NOP);
	res_set(&res[1], IORING_RESTRICTION_SQE_OP, IORING_OP_READ);
	res_set(&res[2], IORING_RESTRICTION_SQE_FLAGS_ALLOWED, IOSQE_IO_LINK);
	res_set(&res[3], IORING_RESTRICTION_REGISTER_OP,
		IORING_REGISTER_FILES);
	restrict_ring(c, &r, res, 4, "valid set");
	restrict_ring(c, &r, res, 4, "second registration");
	/* not yet enforced while disabled: PROBE still allowed */
	{
		char pb[sizeof(struct io_uring_probe) +
			4 * sizeof(struct io_uring_probe_op)];

		memset(pb, 0, sizeof(pb));
		drec_int(c, c->be->reg(r.fd, IORING_REGISTER_PROBE, pb, 4),
			 "PROBE before ENABLE_RINGS");
		drec_int(c, c->be->reg(r.fd, IORING_REGISTER_ENABLE_RINGS,
				       NULL, 0), "ENABLE_RINGS");
		memset(pb, 0, sizeof(pb));
		drec_int(c, c->be->reg(r.fd, IORING_REGISTER_PROBE, pb, 4),
			 "PROBE (not allowed)");
	}
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0),
		 "ENABLE_RINGS (not allowed)");
	fds[0] = 0;
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_FILES, fds, 1),
		 "REGISTER_FILES (allowed)");
	drec_int(c, c->be->reg(r.fd, IORING_UNREGISTER_FILES, NULL, 0),
		 "UNREGISTER_FILES (not allowed)");
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_LAST, NULL, 0),
		 "register opcode out of range");
	submit_one_nop(c, &r, 0, "NOP");
	submit_one_nop(c, &r, IOSQE_ASYNC, "NOP with ASYNC (not allowed)");
	submit_one_nop(c, &r, 0x80, "NOP with an unknown flag");
	s = tring_get_sqe(&r);
	tring_prep_rw(s, IORING_OP_WRITE, 1, buf, 0, 0, 2);
	drec_int(c, tring_submit(&r), "WRITE (not allowed): submit");
	dreap(c, &r, 1, true, "WRITE (not allowed)");
	s = tring_get_sqe(&r);
	tring_prep_rw(s, 250, -1, NULL, 0, 0, 3);
	drec_int(c, tring_submit(&r), "opcode 250: submit");
	dreap(c, &r, 1, true, "opcode 250");
	/* a link of allowed members, and one whose second member is not */
	s = tring_get_sqe(&r);
	tring_prep_nop(s, 4);
	s->flags = IOSQE_IO_LINK;
	tring_prep_nop(tring_get_sqe(&r), 5);
	drec_int(c, tring_submit(&r), "linked NOPs: submit");
	dreap(c, &r, 2, true, "linked NOPs");
	s = tring_get_sqe(&r);
	tring_prep_nop(s, 6);
	s->flags = IOSQE_IO_LINK;
	s = tring_get_sqe(&r);
	tring_prep_rw(s, IORING_OP_WRITE, 1, buf, 0, 0, 7);
	drec_int(c, tring_submit(&r), "NOP -> WRITE: submit");
	dreap(c, &r, 2, false, "NOP -> WRITE");
	tring_exit(&r);

	/* required flags; an empty set forbids every SQE */
	if (dring_flags(c, &r, 8, IORING_SETUP_R_DISABLED))
		return;
	res_set(&res[0], IORING_RESTRICTION_SQE_OP, IORING_OP_NOP);
	res_set(&res[1], IORING_RESTRICTION_SQE_FLAGS_REQUIRED, IOSQE_ASYNC);
	restrict_ring(c, &r, res, 2, "ASYNC required");
	c->be->reg(r.fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0);
	submit_one_nop(c, &r, 0, "NOP without the required ASYNC");
	submit_one_nop(c, &r, IOSQE_ASYNC, "NOP with ASYNC");
	submit_one_nop(c, &r, IOSQE_ASYNC | IOSQE_IO_DRAIN,
		       "NOP with ASYNC and DRAIN (not allowed)");
	tring_exit(&r);
	if (dring_flags(c, &r, 8, IORING_SETUP_R_DISABLED))
		return;
	restrict_ring(c, &r, res, 0, "empty set");
	c->be->reg(r.fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0);
	submit_one_nop(c, &r, 0, "NOP on an empty set");
	tring_exit(&r);
}

static const struct dscenario scenarios[] = {
	{ "registered_fd_only", sc_registered_fd_only, NULL },
	{ "ring_fds", sc_ring_fds, NULL },
	{ "ring_fd_closed", sc_ring_fd_closed, NULL },
	{ "ring_fd_closed_inflight", sc_ring_fd_closed_inflight, NULL },
	{ "ring_fds_per_thread", sc_ring_fds_per_thread, NULL },
	{ "register_use_registered", sc_register_use_registered, NULL },
	{ "single_issuer", sc_single_issuer, NULL },
	{ "restrictions", sc_restrictions, NULL },
};

DTEST_MAIN(scenarios)
