/* SPDX-License-Identifier: MIT */
/*
 * A minimal io_uring ring and one ublk control command on it, for the
 * ublk driver's tests.  By default the ring is uuring's, through its API
 * (test_ublk, test_ublkb); a test run under `uuring run` (test_run_ublk)
 * defines TR_SETUP, TR_MMAP, TR_ENTER and TR_CLOSE as the raw system
 * calls first.  TR_SETUP returns a ring fd or -errno, TR_MMAP MAP_FAILED
 * or a (void *)-errno on failure.  The includer provides the headers
 * (abi/io_uring_abi.h, abi/ublk_abi.h, <stdatomic.h>, <string.h>,
 * <sys/mman.h>, and uuring.h for the defaults).
 */
#ifndef UURING_TESTS_UBLK_TR_H
#define UURING_TESTS_UBLK_TR_H

#ifndef TR_SETUP
#define TR_SETUP uuring_setup
#define TR_MMAP uuring_mmap
#define TR_ENTER uuring_enter
#define TR_CLOSE uuring_close
#endif

struct tr {
	int fd;
	unsigned char *rings, *sqes;
	_Atomic unsigned int *sq_tail, *cq_head, *cq_tail;
	unsigned int sq_mask, cq_mask, sqe_size;
	unsigned int enter_flags; /* SQPOLL: every submit wakes the thread */
	struct io_uring_cqe *cqes;
};

static int tr_init(struct tr *r, unsigned int entries, unsigned int flags)
{
	struct io_uring_params p;
	size_t rsz, ssz;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_NO_SQARRAY | flags;
	r->fd = TR_SETUP(entries, &p);
	if (r->fd < 0)
		return r->fd;
	r->sqe_size = (flags & IORING_SETUP_SQE128) ? 128 : 64;
	r->enter_flags = (flags & IORING_SETUP_SQPOLL) ?
				 IORING_ENTER_SQ_WAKEUP : 0;
	rsz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	ssz = p.sq_entries * r->sqe_size;
	r->rings = TR_MMAP(NULL, rsz, PROT_READ | PROT_WRITE, MAP_SHARED,
			   r->fd, IORING_OFF_SQ_RING);
	r->sqes = TR_MMAP(NULL, ssz, PROT_READ | PROT_WRITE, MAP_SHARED,
			  r->fd, IORING_OFF_SQES);
	if ((intptr_t)r->rings < 0 || (intptr_t)r->sqes < 0)
		return -ENOMEM;
	r->sq_tail = (_Atomic unsigned int *)(r->rings + p.sq_off.tail);
	r->cq_head = (_Atomic unsigned int *)(r->rings + p.cq_off.head);
	r->cq_tail = (_Atomic unsigned int *)(r->rings + p.cq_off.tail);
	r->sq_mask = *(unsigned int *)(r->rings + p.sq_off.ring_mask);
	r->cq_mask = *(unsigned int *)(r->rings + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(r->rings + p.cq_off.cqes);
	return 0;
}

/* queues one URING_CMD (not submitted yet) */
static void tr_cmd(struct tr *r, int fd, uint32_t op, const void *cmd,
		   size_t len, uint64_t ud)
{
	unsigned int t = atomic_load_explicit(r->sq_tail, memory_order_relaxed);
	struct io_uring_sqe *sqe =
		(struct io_uring_sqe *)(r->sqes +
					(t & r->sq_mask) * r->sqe_size);

	memset(sqe, 0, r->sqe_size);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = op;
	sqe->user_data = ud;
	memcpy(sqe->cmd, cmd, len);
	atomic_store_explicit(r->sq_tail, t + 1, memory_order_release);
}

static int tr_submit(struct tr *r, unsigned int n)
{
	return TR_ENTER((unsigned int)r->fd, n, 0, r->enter_flags, NULL, 0);
}

static struct io_uring_cqe tr_wait(struct tr *r)
{
	struct io_uring_cqe c;
	unsigned int h;

	for (;;) {
		h = atomic_load_explicit(r->cq_head, memory_order_relaxed);
		if (h != atomic_load_explicit(r->cq_tail, memory_order_acquire))
			break;
		TR_ENTER((unsigned int)r->fd, 0, 1, IORING_ENTER_GETEVENTS,
			 NULL, 0);
	}
	c = r->cqes[h & r->cq_mask];
	atomic_store_explicit(r->cq_head, h + 1, memory_order_release);
	return c;
}

static void tr_exit(struct tr *r)
{
	TR_CLOSE(r->fd);
}

/* one control command on an SQE128 ring, waited for */
static int ctrl(struct tr *r, int cfd, uint32_t op, uint32_t dev_id,
		uint16_t queue_id, void *buf, uint16_t len, uint64_t data0)
{
	struct ublksrv_ctrl_cmd c = { .dev_id = dev_id, .queue_id = queue_id,
				      .len = len, .addr = (uintptr_t)buf,
				      .data = { data0 } };

	tr_cmd(r, cfd, op, &c, sizeof(c), op);
	tr_submit(r, 1);
	return tr_wait(r).res;
}

#endif
