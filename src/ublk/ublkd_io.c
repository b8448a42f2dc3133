// SPDX-License-Identifier: MIT
/*
 * uublkd's data plane: the (queue, tag) slots, the I/O commands of
 * /dev/ublkcN (ublk_drv's ublk_ch_uring_cmd_local, ublk_fetch), the
 * block side (requests from BDEV connections through the block-queue
 * model, dev/blkq.c, into the slots: ublk_queue_rq), and what the char
 * device's release does (ublk_ch_release_work_fn).
 *
 * Ordering with the client (client_cmd.c): a command's answer
 * (UM_IO_RES) is sent before any slot event its effect may cause (a
 * COMMIT that ends a request can hand the freed tag, the same slot, to
 * a waiting request at once), so the engine has installed the command
 * in its slot when the event arrives.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ublk/front.h"
#include "ublk/ublkd.h"

static struct uslot *slot_of(struct udev *d, unsigned int q, unsigned int tag)
{
	return &d->slots[(size_t)q * d->info.queue_depth + tag];
}

static uint8_t *slot_buf(struct udev *d, unsigned int q, unsigned int tag)
{
	return d->data_map +
	       ((size_t)q * d->info.queue_depth + tag) * d->slot_bytes;
}

static struct ublksrv_io_desc *iod_of(struct udev *d, unsigned int q,
				      unsigned int tag)
{
	return (struct ublksrv_io_desc *)(d->desc_map +
					  (size_t)q * UBLKD_DESC_STRIDE) +
	       tag;
}

static bool need_get_data(const struct udev *d)
{
	return d->info.flags & UBLK_F_NEED_GET_DATA;
}

/* ublk_dev_need_map_io: the driver copies the data to the server's
 * buffers (neither USER_COPY nor zero copy, automatic or not) */
static bool need_map_io(const struct udev *d)
{
	return !(d->info.flags & (UBLK_F_USER_COPY | UBLK_F_SUPPORT_ZERO_COPY |
				  UBLK_F_AUTO_BUF_REG));
}

static void io_answer(struct uconn *c, uint64_t seq, int res)
{
	struct um_hdr h = { .type = UM_IO_RES, .res = res, .seq = seq };

	ublkd_reply(c, &h, sizeof(h), NULL, 0);
}

void ublkd_slot_event(struct udev *d, unsigned int q, unsigned int tag,
		      int res)
{
	struct um_slot ev = {
		.h = { .type = UM_SLOT, .res = res },
		.q_id = (uint16_t)q,
		.tag = (uint16_t)tag,
	};

	ublkd_reply(slot_of(d, q, tag)->data, &ev, sizeof(ev), NULL, 0);
}

/* ublk_cancel_dev: every command still waiting for a request ends with
 * UBLK_IO_RES_ABORT, once */
void ublkd_abort_active(struct udev *d)
{
	for (unsigned int q = 0; q < d->info.nr_hw_queues; q++)
		for (unsigned int t = 0; t < d->info.queue_depth; t++) {
			struct uslot *s = slot_of(d, q, t);

			if (!(s->flags & US_ACTIVE) ||
			    (s->flags & US_CANCELED))
				continue;
			s->flags |= US_CANCELED;
			ublkd_slot_event(d, q, t, UBLK_IO_RES_ABORT);
		}
}

/* errno_to_blk_status then blk_status_to_errno: what a block user sees */
static int blk_errno(int res)
{
	switch (res) {
	case -ENOSPC: case -EOPNOTSUPP: case -ETIMEDOUT: case -EAGAIN:
	case -EREMOTEIO: case -ENOMEM: case -ENOLINK: case -EBADE:
	case -ENODATA: case -EILSEQ:
		return res;
	default:
		return -EIO;
	}
}

/* __ublk_complete_rq: the server's result becomes the request's */
static void complete_rq(struct udev *d, struct uu_blkq_rq *rq,
			unsigned int q, int res)
{
	struct breq *b = rq->raw;

	if (!res && b->op == UBLK_IO_OP_READ)
		res = -EIO;
	if (res < 0) {
		res = blk_errno(res);
	} else if (b->op == UBLK_IO_OP_READ || b->op == UBLK_IO_OP_WRITE) {
		/* a short count ends the request short (the kernel requeues
		 * the rest: docs/ublk.md) */
		if ((uint32_t)res > b->len)
			res = (int)b->len;
		/* a FUSE read's data goes from the slot's buffer straight
		 * to /dev/fuse, before the tag (and the buffer) is free */
		if (b->op == UBLK_IO_OP_READ && b->front) {
			ublkd_fuse_reply(b->front, b->unique, 0,
					 slot_buf(d, q, rq->tag), (size_t)res);
			b->replied = true;
		} else if (b->op == UBLK_IO_OP_READ) {
			memcpy(b->data, slot_buf(d, q, rq->tag), (size_t)res);
		}
	} else {
		res = 0;
	}
	uu_blkq_section_begin();
	uu_blkq_end(rq, res);
	uu_blkq_section_end();
}

/* ublk_nosrv_dev_should_queue_io: USER_RECOVERY without FAIL_IO */
static bool should_queue(const struct udev *d)
{
	return (d->info.flags & UBLK_F_USER_RECOVERY) &&
	       !(d->info.flags & UBLK_F_USER_RECOVERY_FAIL_IO);
}

/* blk_mq_requeue_request: rq keeps its tag and waits for a server */
static void requeue(struct udev *d, struct uu_blkq_rq *rq)
{
	rq->tnext = NULL;
	if (d->requeue_tail)
		d->requeue_tail->tnext = rq;
	else
		d->requeue_head = rq;
	d->requeue_tail = rq;
}

static struct uu_blkq_rq *requeue_take(struct udev *d)
{
	struct uu_blkq_rq *list = d->requeue_head;

	d->requeue_head = d->requeue_tail = NULL;
	return list;
}

void ublkd_fail_requeue(struct udev *d)
{
	struct uu_blkq_rq *rq = requeue_take(d), *next;

	uu_blkq_section_begin();
	for (; rq; rq = next) {
		next = rq->tnext;
		uu_blkq_end(rq, -EIO);
	}
	uu_blkq_section_end();
}

static void ublk_queue_rq(struct uu_blkq_rq *rq);

void ublkd_kick_requeue(struct udev *d)
{
	struct uu_blkq_rq *rq = requeue_take(d), *next;

	uu_blkq_section_begin();
	for (; rq; rq = next) {
		next = rq->tnext;
		ublk_queue_rq(rq);
	}
	uu_blkq_section_end();
}

/* ublk_queue_rq and ublk_dispatch_req for one request given a tag */
static void ublk_queue_rq(struct uu_blkq_rq *rq)
{
	struct udev *d = rq->q->priv;
	unsigned int q = (unsigned int)(rq->hctx - rq->q->hctx);
	struct uslot *s = slot_of(d, q, rq->tag);
	struct ublksrv_io_desc *iod = iod_of(d, q, rq->tag);
	struct breq *b = rq->raw;

	if (d->fail_io) {
		uu_blkq_end(rq, -EREMOTEIO);  /* BLK_STS_TARGET */
		return;
	}
	if (!d->disk || d->force_abort) {
		uu_blkq_end(rq, -EIO);
		return;
	}
	if (d->canceling || !(s->flags & US_ACTIVE) ||
	    (s->flags & US_CANCELED)) {
		/* __ublk_abort_rq: no server to take it */
		if (should_queue(d))
			requeue(d, rq);
		else
			uu_blkq_end(rq, -EIO);
		return;
	}
	iod->op_flags = b->op;
	iod->nr_sectors = b->len >> 9;
	iod->start_sector = b->pos >> 9;
	iod->addr = s->addr;
	s->rq = rq;
	s->flags &= ~US_ACTIVE;
	s->flags |= US_OWNED;
	if (b->op == UBLK_IO_OP_WRITE && need_get_data(d)) {
		s->flags |= US_NEED_GET_DATA;
		ublkd_slot_event(d, q, rq->tag, UBLK_IO_RES_NEED_GET_DATA);
		return;
	}
	if (b->op == UBLK_IO_OP_WRITE)
		memcpy(slot_buf(d, q, rq->tag), b->data, b->len);
	ublkd_slot_event(d, q, rq->tag, UBLK_IO_RES_OK);
}

/* a FUSE request's answer (its READ data went in complete_rq) */
static void front_answer(const struct breq *b, int res)
{
	struct fuse_write_out wo = { .size = res > 0 ? (uint32_t)res : 0 };

	if (b->replied)
		return;
	if (res < 0)
		ublkd_fuse_reply(b->front, b->unique, res, NULL, 0);
	else if (b->op == UBLK_IO_OP_WRITE)
		ublkd_fuse_reply(b->front, b->unique, 0, &wo, sizeof(wo));
	else
		ublkd_fuse_reply(b->front, b->unique, 0, NULL, 0);
}

/* The request's end: its answer to the submitter. */
static void ublk_end_raw(struct uu_blkq_rq *rq, int res)
{
	struct breq *b = rq->raw;
	struct udev *d = b->dev;
	struct um_hdr h = { .type = UM_BDEV, .res = res, .seq = b->seq };

	if (b->front) {
		front_answer(b, res);
		ublkd_front_put(b->front);
		d->inflight--;
		free(b->data);
		free(b);
		ublkd_dev_maybe_free(d);
		return;
	}
	ublkd_reply(b->conn, &h, sizeof(h), b->data,
		    b->op == UBLK_IO_OP_READ && res > 0 ? (size_t)res : 0);
	b->conn->refs--;
	d->inflight--;
	free(b->data);
	free(b);
	ublkd_dev_maybe_free(d);
}

static void ublk_blk_release(struct uu_blkq *q)
{
	free(q);
}

static const struct uu_blkq_ops ublk_blk_ops = {
	.queue_rq = ublk_queue_rq,
	.release = ublk_blk_release,
	.end_raw = ublk_end_raw,
};

int ublkd_start_blk(struct udev *d)
{
	struct uu_blkq *q;

	if (d->q)
		return 0;
	q = malloc(sizeof(*q));
	if (!q || uu_blkq_init(q, &ublk_blk_ops, d, d->info.nr_hw_queues,
			       d->info.queue_depth)) {
		free(q);
		return -ENOMEM;
	}
	d->q = q;
	return 0;
}

/* the op's limit in bytes: discard and write-zeroes only as declared in
 * the device's discard parameters (blk_queue_max_discard_sectors) */
static uint64_t op_max(const struct udev *d, uint32_t op)
{
	const struct ublk_param_discard *p = &d->params.discard;

	if (op == UBLK_IO_OP_READ || op == UBLK_IO_OP_WRITE)
		return d->info.max_io_buf_bytes < UM_BDEV_MAX ?
			       d->info.max_io_buf_bytes : UM_BDEV_MAX;
	if (!(d->params.types & UBLK_PARAM_TYPE_DISCARD))
		return 0;
	if (op == UBLK_IO_OP_DISCARD)
		return (uint64_t)p->max_discard_sectors << 9;
	if (op == UBLK_IO_OP_WRITE_ZEROES)
		return (uint64_t)p->max_write_zeroes_sectors << 9;
	return 0;
}

static int bdev_check(struct udev *d, const struct um_bdev *m, uint32_t *len)
{
	uint64_t size = d->params.basic.dev_sectors << 9;
	uint32_t op = m->op & 0xff;

	if (!d->disk || d->info.state == UBLK_S_DEV_DEAD)
		return -ENODEV;
	/* only write-zeroes carries a flag (NOUNMAP) */
	if (m->op & ~0xffu &&
	    (op != UBLK_IO_OP_WRITE_ZEROES || m->op != (op | UBLK_IO_F_NOUNMAP)))
		return -EINVAL;
	if (op == UBLK_IO_OP_FLUSH) {
		*len = 0;
		return 0;
	}
	if (op != UBLK_IO_OP_READ && op != UBLK_IO_OP_WRITE &&
	    op != UBLK_IO_OP_DISCARD && op != UBLK_IO_OP_WRITE_ZEROES)
		return -EOPNOTSUPP;
	if (!op_max(d, op))
		return -EOPNOTSUPP;
	if ((m->pos | m->len) & 511 || m->len > op_max(d, op))
		return -EINVAL;
	*len = m->len;
	/* a block device's ends: a read is cut, anything else refused */
	if (m->pos >= size)
		return op == UBLK_IO_OP_READ ? 0 : -ENOSPC;
	if (m->pos + m->len > size) {
		if (op != UBLK_IO_OP_READ)
			return -ENOSPC;
		*len = (uint32_t)(size - m->pos);
	}
	return *len ? 1 : 0;
}

void ublkd_bdev(struct uconn *c, const struct um_bdev *m, size_t n)
{
	struct udev *d = ublkd_dev_find((int)m->dev_id);
	struct um_hdr h = { .type = UM_BDEV, .seq = m->h.seq };
	struct breq *b;
	uint32_t len = 0;
	int ret;

	ret = d ? bdev_check(d, m, &len) : -ENODEV;
	if (ret == 0 && m->op == UBLK_IO_OP_FLUSH)
		ret = 1;
	if (ret <= 0)
		goto answer;
	if (m->op == UBLK_IO_OP_WRITE && n < sizeof(*m) + m->len) {
		ret = -EINVAL;
		goto answer;
	}
	b = calloc(1, sizeof(*b));
	/* data only for reads and writes */
	if (b && (m->op == UBLK_IO_OP_READ || m->op == UBLK_IO_OP_WRITE))
		b->data = malloc(len);
	if (!b || (!b->data && (m->op == UBLK_IO_OP_READ ||
				m->op == UBLK_IO_OP_WRITE))) {
		free(b);
		ret = -ENOMEM;
		goto answer;
	}
	b->conn = c;
	b->seq = m->h.seq;
	b->op = m->op;
	b->pos = m->pos;
	b->len = len;
	b->dev = d;
	if (m->op == UBLK_IO_OP_WRITE)
		memcpy(b->data, m + 1, len);
	c->refs++;
	d->inflight++;
	/* discard and write-zeroes are writes for the queue model; the
	 * server sees their own op (iod->op_flags = b->op) */
	ret = uu_blkq_submit_raw(d->q, m->cpu,
				 m->op == UBLK_IO_OP_READ ? UU_BLKQ_READ :
				 m->op == UBLK_IO_OP_FLUSH ? UU_BLKQ_FLUSH :
							     UU_BLKQ_WRITE,
				 m->pos, len, b);
	if (!ret)
		return;
	c->refs--;
	d->inflight--;
	free(b->data);
	free(b);
answer:
	h.res = ret;
	ublkd_reply(c, &h, sizeof(h), NULL, 0);
}

/*
 * A FUSE reader's request (front.h): ublkd_bdev's checks and submission,
 * from the reader's thread under uublkd's lock.  A read needs no buffer
 * of its own (complete_rq replies from the slot's); a write's data is
 * copied, since the request may wait for a tag after the reader has
 * reused its buffer.
 */
void ublkd_front_io(struct ufront *f, uint64_t unique, uint32_t op,
		    uint64_t pos, uint32_t len, const void *data, int cpu)
{
	struct um_bdev m = { .op = op, .cpu = cpu, .pos = pos, .len = len,
			     .dev_id = (uint32_t)f->id };
	struct udev *d;
	struct breq *b;
	int ret;

	ublkd_lock();
	d = ublkd_dev_find(f->id);
	/* the front is being torn down (ublkd_front_stop) */
	if (!d || d->front != f) {
		ret = -EIO;
		goto answer;
	}
	ret = bdev_check(d, &m, &len);
	if (ret == 0 && op == UBLK_IO_OP_FLUSH)
		ret = 1;
	if (ret <= 0)
		goto answer;
	b = calloc(1, sizeof(*b));
	if (b && op == UBLK_IO_OP_WRITE) {
		b->data = malloc(len);
		if (b->data)
			memcpy(b->data, data, len);
	}
	if (!b || (op == UBLK_IO_OP_WRITE && !b->data)) {
		free(b);
		ret = -ENOMEM;
		goto answer;
	}
	b->front = f;
	b->unique = unique;
	b->op = op;
	b->pos = pos;
	b->len = len;
	b->dev = d;
	d->inflight++;
	f->refs++;
	ret = uu_blkq_submit_raw(d->q, cpu,
				 op == UBLK_IO_OP_READ ? UU_BLKQ_READ :
				 op == UBLK_IO_OP_FLUSH ? UU_BLKQ_FLUSH :
							  UU_BLKQ_WRITE,
				 pos, len, b);
	if (!ret) {
		ublkd_unlock();
		return;
	}
	d->inflight--;
	f->refs--;
	free(b->data);
	free(b);
answer:
	ublkd_unlock();
	/* a read cut to nothing at the end: no data; write and flush
	 * never end here with a count */
	if (ret >= 0 && op == UBLK_IO_OP_WRITE) {
		struct fuse_write_out wo = { .size = 0 };

		ublkd_fuse_reply(f, unique, 0, &wo, sizeof(wo));
		return;
	}
	ublkd_fuse_reply(f, unique, ret < 0 ? ret : 0, NULL, 0);
}

void ublkd_bdev_gone(struct uconn *c)
{
	/* its requests finish in the device; their answers go nowhere
	 * (ublkd_reply checks dead) and the last one lets c be freed */
	(void)c;
}

/* ublk_fetch: FETCH_REQ, on any task; that task becomes the daemon */
static int fetch(struct udev *d, struct uconn *c, struct uslot *s,
		 const struct um_io *m)
{
	/* ublk_check_fetch_buf: a buffer unless NEED_GET_DATA; with
	 * USER_COPY none may be given */
	if (need_map_io(d) ? !m->cmd.addr && !need_get_data(d) : !!m->cmd.addr)
		return -EINVAL;
	if (ublkd_dev_ready(d))
		return -EBUSY;
	if (s->flags & US_ACTIVE)
		return -EINVAL;
	s->flags |= US_ACTIVE;
	s->flags &= ~US_OWNED;
	s->addr = m->cmd.addr;
	s->task = m->tid;
	s->data = c;
	d->nr_io_ready++;
	return UM_QUEUED;
}

/* ublk_ch_uring_cmd_local (its COMMIT part in commit() below) */
void ublkd_io(struct uconn *c, const struct um_io *m)
{
	struct udev *d = c->dev;
	uint32_t nr = m->cmd_op & 0xff, type = (m->cmd_op >> 8) & 0xff;
	unsigned int q = m->cmd.q_id, tag = m->cmd.tag;
	struct uu_blkq_rq *rq;
	struct uslot *s;
	int ret = -EOPNOTSUPP;

	if (type != 'u' && type != 0)
		goto out;
	/* REGISTER_IO_BUF and UNREGISTER_IO_BUF are the engine's
	 * (client_io.c uu_ublk_buf_cmd): the buffer table is its ring's */
	ret = -EINVAL;
	if (nr == UBLK_IO_UNREGISTER_IO_BUF || nr == UBLK_IO_REGISTER_IO_BUF)
		goto out;
	if (q >= d->info.nr_hw_queues || tag >= d->info.queue_depth)
		goto out;
	s = slot_of(d, q, tag);
	if (nr == UBLK_IO_FETCH_REQ) {
		ret = fetch(d, c, s, m);
		io_answer(c, m->h.seq, ret);
		if (ret == UM_QUEUED && ublkd_dev_ready(d)) {
			/* ublk_mark_io_ready -> ublk_reset_io_flags */
			for (size_t i = 0; i < (size_t)d->info.nr_hw_queues *
						     d->info.queue_depth; i++)
				d->slots[i].flags &= ~US_CANCELED;
			d->canceling = false;
			d->fail_io = false;
			ublkd_ctrl_rewait(d);
		}
		return;
	}
	if (s->task != m->tid)
		goto out;
	ret = -EBUSY;
	if (!(s->flags & US_OWNED))
		goto out;
	ret = -EINVAL;
	if (!!(s->flags & US_NEED_GET_DATA) ^ (nr == UBLK_IO_NEED_GET_DATA))
		goto out;
	rq = s->rq;
	if (nr == UBLK_IO_COMMIT_AND_FETCH_REQ) {
		const struct breq *b = rq->raw;

		/* ublk_check_commit_and_fetch (no zoned devices, so no
		 * ZONE_APPEND's lba in addr) */
		if (need_map_io(d) ? !m->cmd.addr && (!need_get_data(d) ||
						      b->op == UBLK_IO_OP_READ) :
				     !!m->cmd.addr)
			goto out;
		s->flags |= US_ACTIVE;
		s->flags &= ~US_OWNED;
		s->addr = m->cmd.addr;
		s->data = c;
		s->rq = NULL;
		if (m->h.type != UM_IO_ASYNC)
			io_answer(c, m->h.seq, UM_QUEUED);
		complete_rq(d, rq, q, m->cmd.result);
		/* stopping: the re-armed command is cancelled at once, as
		 * the ring's exit would cancel it (docs/ublk.md) */
		if (d->canceling && (s->flags & US_ACTIVE) &&
		    !(s->flags & US_CANCELED)) {
			s->flags |= US_CANCELED;
			ublkd_slot_event(d, q, tag, UBLK_IO_RES_ABORT);
		}
		return;
	}
	if (nr == UBLK_IO_NEED_GET_DATA) {
		const struct breq *b = rq->raw;

		/* ublk_get_data: the write's data to the new buffer, and
		 * the command completes at once */
		s->flags &= ~US_NEED_GET_DATA;
		s->addr = m->cmd.addr;
		s->data = c;
		iod_of(d, q, tag)->addr = m->cmd.addr;
		memcpy(slot_buf(d, q, tag), b->data, b->len);
		ret = UBLK_IO_RES_OK;
	}
out:
	if (m->h.type == UM_IO_ASYNC) {
		/* the engine queued it already: the refusal ends the command
		 * (its checks mirror these, so this is not expected) */
		struct um_slot ev = {
			.h = { .type = UM_SLOT, .res = ret },
			.q_id = (uint16_t)q,
			.tag = (uint16_t)tag,
		};

		ublkd_log("ublk%d: async COMMIT of %u/%u refused: %d", d->id,
			  q, tag, ret);
		ublkd_reply(c, &ev, sizeof(ev), NULL, 0);
		return;
	}
	io_answer(c, m->h.seq, ret);
}

/*
 * ublk_check_and_get_req: may the server copy at pos (USER_COPY's
 * pread/pwrite of /dev/ublkcN), in its order of checks.  The request's
 * bytes from the offset on, or -errno.  The reference the kernel takes
 * exists from the dispatch to the server until its COMMIT: here the slot
 * is US_OWNED with its request.  A flush, discard or write-zeroes has no
 * data (ublk_rq_has_data).  The data lives in the slot's buffer: a
 * write's was put there at the dispatch, a read's is taken at the COMMIT.
 */
static int ucopy_check(struct udev *d, int64_t pos, bool is_write)
{
	uint64_t rel = (uint64_t)pos - UBLKSRV_IO_BUF_OFFSET;
	unsigned int q = (unsigned int)(rel >> UBLK_QID_OFF) &
			 UBLK_QID_BITS_MASK;
	unsigned int tag = (unsigned int)(rel >> UBLK_TAG_OFF) &
			   UBLK_TAG_BITS_MASK;
	uint64_t off = rel & UBLK_IO_BUF_BITS_MASK;
	const struct breq *b;
	struct uslot *s;

	if (d->info.state == UBLK_S_DEV_DEAD)
		return -EACCES;
	if (q >= d->info.nr_hw_queues)
		return -EINVAL;
	if (!(d->info.flags & UBLK_F_USER_COPY))
		return -EACCES;
	if (tag >= d->info.queue_depth)
		return -EINVAL;
	s = slot_of(d, q, tag);
	if (!(s->flags & US_OWNED) || !s->rq)
		return -EINVAL;
	b = s->rq->raw;
	if (b->op != UBLK_IO_OP_READ && b->op != UBLK_IO_OP_WRITE)
		return -EINVAL;
	if (off > b->len)
		return -EINVAL;
	/* ublk_check_ubuf_dir: into a read, out of a write */
	if ((b->op == UBLK_IO_OP_READ) != is_write)
		return -EACCES;
	return (int)(b->len - off);
}

void ublkd_ucopy(struct uconn *c, const struct um_ucopy *m)
{
	struct um_hdr h = { .type = UM_UCOPY, .seq = m->h.seq };

	h.res = ucopy_check(c->dev, m->pos, m->is_write);
	ublkd_reply(c, &h, sizeof(h), NULL, 0);
}

void ublkd_cancel(struct uconn *c, const struct um_io *m)
{
	struct udev *d = c->dev;
	unsigned int q = m->cmd.q_id, tag = m->cmd.tag;
	struct uslot *s;

	if (q >= d->info.nr_hw_queues || tag >= d->info.queue_depth)
		return;
	s = slot_of(d, q, tag);
	/* ublk_uring_cmd_cancel_fn: the device starts canceling; the
	 * engine has ended the command with UBLK_IO_RES_ABORT itself */
	d->canceling = true;
	if ((s->flags & US_ACTIVE) && s->data == c)
		s->flags |= US_CANCELED;
}

void ublkd_data_gone(struct uconn *c)
{
	struct udev *d = c->dev;

	if (!d)
		return;
	for (size_t i = 0;
	     i < (size_t)d->info.nr_hw_queues * d->info.queue_depth; i++)
		if (d->slots[i].data == c)
			d->slots[i].data = NULL;
}

/*
 * ublk_ch_release_work_fn: the server's last reference to /dev/ublkcN is
 * gone.  Its requests fail, and the device goes DEAD (no recovery flag),
 * QUIESCED or FAIL_IO; the slots forget their daemons.
 */
void ublkd_char_release(struct udev *d)
{
	size_t n = (size_t)d->info.nr_hw_queues * d->info.queue_depth;

	d->chr = NULL;
	/* commands still parked (the application closed the fd under
	 * them): the kernel's file reference would have kept it open */
	ublkd_abort_active(d);
	if (d->disk) {
		d->canceling = true;
		for (size_t i = 0; i < n; i++) {
			struct uslot *s = &d->slots[i];
			struct uu_blkq_rq *rq = s->rq;

			if (!(s->flags & US_OWNED) || !rq)
				continue;
			s->rq = NULL;
			s->flags &= ~(US_OWNED | US_NEED_GET_DATA);
			/* __ublk_fail_req: reissued to the next server, or
			 * failed */
			if ((d->info.flags & UBLK_F_USER_RECOVERY) &&
			    (d->info.flags & UBLK_F_USER_RECOVERY_REISSUE)) {
				requeue(d, rq);
				continue;
			}
			uu_blkq_section_begin();
			uu_blkq_end(rq, -EIO);
			uu_blkq_section_end();
		}
		if (!(d->info.flags & UBLK_F_USER_RECOVERY)) {
			d->force_abort = true;
			ublkd_stop_dev(d);
		} else if (!(d->info.flags & UBLK_F_USER_RECOVERY_FAIL_IO)) {
			d->info.state = UBLK_S_DEV_QUIESCED;
		} else {
			d->info.state = UBLK_S_DEV_FAIL_IO;
			d->fail_io = true;
		}
	}
	for (size_t i = 0; i < n; i++) {
		d->slots[i].flags &= US_CANCELED;
		d->slots[i].task = 0;
		d->slots[i].addr = 0;
		d->slots[i].rq = NULL;
	}
	d->mm_tgid = 0;
	d->nr_io_ready = 0;
	d->srv_tgid = -1;
	/* the engine's data connections of this open end: its receiver
	 * aborts what is still queued (after the events sent above) */
	for (struct uconn *c = ublkd_conns; c; c = c->next)
		if (c->kind == UK_DATA && c->dev == d && !c->dead)
			shutdown(c->fd, SHUT_RDWR);
	ublkd_dev_maybe_free(d);
}
