// SPDX-License-Identifier: MIT
/*
 * The data plane in the server's process: FETCH_REQ, COMMIT_AND_FETCH_REQ
 * and NEED_GET_DATA of a /dev/ublkcN file go to uublkd over the engine's
 * data connection, and a receiver thread (one per open char file) takes
 * the driver's answers and slot events.
 *
 * A command that arms a slot is installed in the engine's copy of the
 * slot by the receiver when the driver's answer says "queued", before
 * the receiver reads the next message: the driver sends any event for
 * that slot after the answer (ublkd_io.c), so the event finds it.  The
 * submitter then marks it cancelable; an event that arrives before the
 * mark is kept in the slot (pending) and delivered by the submitter
 * right after the mark, since a command may be marked only until it is
 * done (ops/uring_cmd.h).
 *
 * Default copy mode, done here because only this process can reach the
 * server's buffers: a write's data is copied from the slot's shared
 * buffer to the command's addr before its CQE; a read's data from the
 * COMMIT's addr to the slot's buffer before the COMMIT goes out.  With
 * UBLK_F_USER_COPY the server copies itself, by pread/pwrite (and
 * READ/WRITE SQEs) on /dev/ublkcN at UBLKSRV_IO_BUF_OFFSET-encoded
 * offsets: uu_ublk_user_copy, on the same shared buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/buffers.h"
#include "core/registry.h"
#include "core/types.h"
#include "ublk/client.h"
#include "util/usercopy.h"

static uu_ublk_done_fn done_fn;
static uu_ublk_mark_fn mark_fn;

void uu_ublk_set_ops(uu_ublk_done_fn done, uu_ublk_mark_fn mark)
{
	done_fn = done;
	mark_fn = mark;
}

static const struct ublksrv_io_desc *iod_of(struct ufile *f, unsigned int idx)
{
	unsigned int q = idx / f->info.queue_depth;
	unsigned int tag = idx % f->info.queue_depth;

	return (const struct ublksrv_io_desc *)(f->desc_map +
						(size_t)q * UBLKD_DESC_STRIDE) +
	       tag;
}

static uint8_t *slot_buf(struct ufile *f, unsigned int idx)
{
	return f->data_map + (size_t)idx * f->slot_bytes;
}

static size_t io_bytes(struct ufile *f, const struct ublksrv_io_desc *iod)
{
	size_t n = (size_t)iod->nr_sectors << 9;

	return n < f->slot_bytes ? n : f->slot_bytes;
}

/* !ublk_dev_need_map_io: the server moves the data itself, by copies
 * or through the buffer table (zero copy, automatic or not) */
static bool user_copy(const struct ufile *f)
{
	return f->info.flags & (UBLK_F_USER_COPY | UBLK_F_SUPPORT_ZERO_COPY |
				UBLK_F_AUTO_BUF_REG);
}

static bool auto_reg(const struct ufile *f)
{
	return f->info.flags & UBLK_F_AUTO_BUF_REG;
}

/* ublk_set_auto_buf_reg's checks of a FETCH's or COMMIT's sqe->addr */
static int auto_reg_check(uint64_t a)
{
	if (((a >> 24) & 0xff) || (a >> 32))
		return -EINVAL;
	if (((a >> 16) & 0xff) & ~UBLK_AUTO_BUF_REG_F_MASK)
		return -EINVAL;
	return 0;
}

/*
 * ublk_io_release: a buffer of the request (REGISTER_IO_BUF's or
 * AUTO_BUF_REG's) is gone (unregistered and unused, or its ring's table
 * freed); with the last one, a COMMIT
 * held meanwhile goes to the driver and the request completes.  Called
 * from whichever thread put the node, never under f->lock.
 */
static void kbuf_release(void *priv)
{
	struct ucslot *s = priv;
	struct ufile *f = s->file;
	struct um_io m;
	bool send;

	pthread_mutex_lock(&f->lock);
	send = !--s->nbufs && s->commit_held;
	if (send) {
		m = s->held;
		s->commit_held = false;
	}
	pthread_mutex_unlock(&f->lock);
	if (send)
		um_send(f->data_conn, &m, sizeof(m), NULL, 0, NULL, 0);
}

/*
 * __ublk_do_auto_buf_reg, at the dispatch of a request with data to the
 * armed command: its buffer goes into the command's ring at the index
 * the command named.  When that fails, with FALLBACK the request is
 * dispatched with UBLK_IO_F_NEED_REG_BUF in its descriptor (the server
 * registers it itself); without, the request fails with -EIO and the
 * command stays armed (false: not to be completed).
 */
static bool auto_register(struct ufile *f, unsigned int idx,
			  struct uu_req *req)
{
	struct ucslot *s = &f->slots[idx];
	const struct ublksrv_io_desc *iod = iod_of(f, idx);
	uint16_t bidx = (uint16_t)s->auto_addr;
	unsigned int q = idx / f->info.queue_depth;
	unsigned int tag = idx % f->info.queue_depth;
	uint32_t op = iod->op_flags & 0xff;
	struct um_io m = { .h = { .type = UM_IO_ASYNC },
			   .cmd_op = UBLK_U_IO_COMMIT_AND_FETCH_REQ,
			   .tid = s->task,
			   .cmd = { .q_id = (uint16_t)q, .tag = (uint16_t)tag,
				    .result = -EIO } };
	uint32_t flags;
	int ret;

	/* counted as REGISTER_IO_BUF's are (ublk_prep_auto_buf_reg_io's
	 * task_registered_buffers): a COMMIT from another ring, which
	 * leaves it registered, is held until it goes */
	pthread_mutex_lock(&f->lock);
	s->nbufs++;
	pthread_mutex_unlock(&f->lock);
	ret = uu_rbuf_register_kbuf(s->ring, bidx, slot_buf(f, idx),
				    io_bytes(f, iod),
				    op == UBLK_IO_OP_WRITE ? UU_KBUF_SOURCE :
							     UU_KBUF_DEST,
				    kbuf_release, s);
	if (ret)
		kbuf_release(s);
	if (!ret) {
		pthread_mutex_lock(&f->lock);
		s->reg_ring = s->ring;
		s->reg_idx = bidx;
		pthread_mutex_unlock(&f->lock);
		return true;
	}
	if ((s->auto_addr >> 16) & UBLK_AUTO_BUF_REG_FALLBACK) {
		/* ublk_auto_buf_reg_fallback: the descriptor is mapped
		 * read-only here; the memfd is written instead */
		flags = iod->op_flags | UBLK_IO_F_NEED_REG_BUF;
		ret = (int)pwrite(f->desc_fd, &flags, sizeof(flags),
				  (off_t)((size_t)q * UBLKD_DESC_STRIDE +
					  tag * sizeof(*iod)));
		(void)ret; /* our own memfd, open for writing */
		return true;
	}
	/* ublk_end_request(BLK_STS_IOERR), the command kept: the driver
	 * ends the request as at a failed COMMIT, which re-arms the slot
	 * with this same command */
	pthread_mutex_lock(&f->lock);
	s->req = req;
	s->owned = false;
	pthread_mutex_unlock(&f->lock);
	um_send(f->data_conn, &m, sizeof(m), NULL, 0, NULL, 0);
	return false;
}

/* A slot's command ends with the driver's res. */
static void deliver(struct ufile *f, unsigned int idx, struct uu_req *req,
		    int res)
{
	struct ucslot *s = &f->slots[idx];
	const struct ublksrv_io_desc *iod = iod_of(f, idx);

	/* ublk_map_io: a write's data reaches the server's buffer before
	 * the server hears of the request (a fault leaves it short, as the
	 * kernel's copy does) */
	if (res == UBLK_IO_RES_OK && !user_copy(f) &&
	    (iod->op_flags & 0xff) == UBLK_IO_OP_WRITE)
		uu_copy_to_user((void *)(uintptr_t)s->addr, slot_buf(f, idx),
				io_bytes(f, iod));
	if (res == UBLK_IO_RES_OK && auto_reg(f) &&
	    ((iod->op_flags & 0xff) == UBLK_IO_OP_READ ||
	     (iod->op_flags & 0xff) == UBLK_IO_OP_WRITE) &&
	    !auto_register(f, idx, req))
		return;
	pthread_mutex_lock(&f->lock);
	s->owned = res == UBLK_IO_RES_OK || res == UBLK_IO_RES_NEED_GET_DATA;
	s->ngd = res == UBLK_IO_RES_NEED_GET_DATA;
	pthread_mutex_unlock(&f->lock);
	done_fn(req, res);
}

/* the driver's answer to w (called with f->lock held) */
static void answered(struct ufile *f, uint64_t seq, int res)
{
	struct ucwait **pp, *w;

	for (pp = &f->waiters; (w = *pp); pp = &w->next)
		if (w->seq == seq)
			break;
	if (!w)
		return;
	*pp = w->next;
	if (res == UM_QUEUED && w->req) {
		struct ucslot *s = &f->slots[w->idx];

		s->req = w->req;
		s->addr = w->addr;
		s->marked = false;
		s->pending = false;
		s->owned = false;
		s->ngd = false;
		s->task = w->tid;
		s->auto_addr = w->auto_addr;
		s->ring = w->ring;
		s->reg_ring = NULL;
	}
	w->res = res;
	w->done = true;
	pthread_cond_broadcast(&f->cond);
}

static void slot_event(struct ufile *f, const struct um_slot *ev)
{
	unsigned int idx = (unsigned int)ev->q_id * f->info.queue_depth +
			   ev->tag;
	struct ucslot *s;
	struct uu_req *req;

	if (ev->q_id >= f->info.nr_hw_queues || ev->tag >= f->info.queue_depth)
		return;
	s = &f->slots[idx];
	pthread_mutex_lock(&f->lock);
	req = s->req;
	if (req && !s->marked) {
		s->pending = true;
		s->pending_res = ev->h.res;
		req = NULL;
	} else {
		s->req = NULL;
	}
	pthread_mutex_unlock(&f->lock);
	if (req)
		deliver(f, idx, req, ev->h.res);
}

/* The driver closed the data connection (the char file's release, or
 * the driver is gone): every command still queued ends aborted. */
static void receiver_end(struct ufile *f)
{
	size_t n = (size_t)f->info.nr_hw_queues * f->info.queue_depth;

	pthread_mutex_lock(&f->lock);
	f->dead = true;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	for (size_t i = 0; i < n; i++) {
		struct ucslot *s = &f->slots[i];
		struct uu_req *req;

		pthread_mutex_lock(&f->lock);
		req = s->marked ? s->req : NULL;
		if (req)
			s->req = NULL;
		else if (s->req)
			s->pending = true, s->pending_res = UBLK_IO_RES_ABORT;
		pthread_mutex_unlock(&f->lock);
		if (req)
			done_fn(req, UBLK_IO_RES_ABORT);
	}
}

static void *receiver_main(void *arg)
{
	struct ufile *f = arg;
	union {
		struct um_hdr h;
		struct um_slot slot;
		uint8_t raw[256];
	} m;

	uu_thread_ready();
	for (;;) {
		ssize_t n = recv(f->data_conn, &m, sizeof(m), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < (ssize_t)sizeof(m.h))
			break;
		if (m.h.type == UM_SLOT && n >= (ssize_t)sizeof(m.slot)) {
			slot_event(f, &m.slot);
		} else if (m.h.type == UM_IO_RES || m.h.type == UM_MMAP ||
			   m.h.type == UM_UCOPY) {
			pthread_mutex_lock(&f->lock);
			answered(f, m.h.seq, m.h.res);
			pthread_mutex_unlock(&f->lock);
		}
	}
	receiver_end(f);
	return NULL;
}

int uu_ublk_start_receiver(struct ufile *f)
{
	return uu_thread_start(receiver_main, f);
}

/* Sends m (its seq set here) and waits for the receiver's answer. */
static int call(struct ufile *f, struct um_hdr *m, size_t len,
		struct ucwait *w)
{
	int res;

	pthread_mutex_lock(&f->lock);
	if (f->dead) {
		pthread_mutex_unlock(&f->lock);
		return -ENODEV;
	}
	m->seq = w->seq = ++f->seq;
	w->next = f->waiters;
	f->waiters = w;
	pthread_mutex_unlock(&f->lock);
	res = (int)um_send(f->data_conn, m, len, NULL, 0, NULL, 0);
	pthread_mutex_lock(&f->lock);
	while (res >= 0 && !w->done && !f->dead)
		pthread_cond_wait(&f->cond, &f->lock);
	if (!w->done) {
		struct ucwait **pp;

		for (pp = &f->waiters; *pp; pp = &(*pp)->next)
			if (*pp == w) {
				*pp = w->next;
				break;
			}
		res = -ENODEV;
	} else {
		res = w->res;
	}
	pthread_mutex_unlock(&f->lock);
	return res;
}

int uu_ublk_mmap_check(struct ufile *f)
{
	struct um_hdr m = { .type = UM_MMAP };
	struct ucwait w = { 0 };

	/* ublk_ch_mmap: another mm than the first mapper's (a forked
	 * child's, which also has no receiver here) */
	if (f->pid != getpid())
		return -EINVAL;
	return call(f, &m, sizeof(m), &w);
}

/* A READ's data, from the COMMIT's buffer to the slot's (ublk_unmap_io),
 * when this task owns the slot's request. */
static void commit_copy(struct ufile *f, unsigned int idx,
			const struct ublksrv_io_cmd *cmd, pid_t tid)
{
	const struct ublksrv_io_desc *iod = iod_of(f, idx);
	size_t n;
	bool mine;

	pthread_mutex_lock(&f->lock);
	mine = f->slots[idx].owned && f->slots[idx].task == tid;
	pthread_mutex_unlock(&f->lock);
	if (!mine || user_copy(f) || (iod->op_flags & 0xff) != UBLK_IO_OP_READ ||
	    cmd->result <= 0 || !cmd->addr)
		return;
	n = io_bytes(f, iod);
	if ((size_t)cmd->result < n)
		n = (size_t)cmd->result;
	uu_copy_from_user(slot_buf(f, idx), (const void *)(uintptr_t)cmd->addr,
			  n);
}

/*
 * COMMIT_AND_FETCH_REQ without the round trip: when this process's view
 * of the slot gives the driver's answer (ublkd_io's checks: the daemon
 * owns the request and owes no NEED_GET_DATA, and the buffer rule), the
 * command is installed in its slot here, before it is sent, so the slot
 * event the COMMIT may cause finds it (as answered() installs it for a
 * waited command), and UM_IO_ASYNC asks for no answer.  False: the
 * driver is asked and waited for.
 */
enum { COMMIT_ASK, COMMIT_SEND, COMMIT_HELD };

static int commit_async(struct ufile *f, unsigned int idx, uint32_t cmd_op,
			const struct ublksrv_io_cmd *cmd, pid_t tid,
			struct uu_req *req, const struct um_io *m)
{
	struct ucslot *s = &f->slots[idx];
	uint32_t type = (cmd_op >> 8) & 0xff;
	bool ok, held = false;

	if (type != 'u' && type != 0)
		return COMMIT_ASK;
	/* ublk_check_commit_and_fetch's buffer rule */
	if (user_copy(f) ? !!cmd->addr :
			   !cmd->addr &&
				   (!(f->info.flags & UBLK_F_NEED_GET_DATA) ||
				    (iod_of(f, idx)->op_flags & 0xff) ==
					    UBLK_IO_OP_READ))
		return COMMIT_ASK;
	struct uu_ring *reg_ring = NULL;
	uint16_t reg_idx = 0;

	pthread_mutex_lock(&f->lock);
	ok = !f->dead && s->owned && !s->ngd && s->task == tid && !s->req;
	if (ok) {
		s->req = req;
		s->addr = cmd->addr;
		s->marked = false;
		s->pending = false;
		s->owned = false;
		/* ublk_handle_auto_buf_reg: the buffer registered at the
		 * dispatch leaves the ring at the COMMIT from that ring (from
		 * another, it is the server's to unregister) */
		if (s->reg_ring == req->ring) {
			reg_ring = s->reg_ring;
			reg_idx = s->reg_idx;
		}
		s->reg_ring = NULL;
		s->auto_addr = req->sqe.addr;
		s->ring = req->ring;
		/* buffers of the request still registered: it completes
		 * when the last is released (kbuf_release sends this) */
		if (s->nbufs) {
			s->held = *m;
			s->commit_held = held = true;
		}
	}
	pthread_mutex_unlock(&f->lock);
	/* the buffer leaves its ring before the COMMIT goes (its release
	 * sends the COMMIT held for it): the tag's next request registers
	 * again (io_buffer_unregister_bvec's error is ignored, as there) */
	if (reg_ring)
		uu_rbuf_unregister_kbuf(reg_ring, reg_idx);
	return !ok ? COMMIT_ASK : held ? COMMIT_HELD : COMMIT_SEND;
}

/* req is queued in its slot: marked cancelable, then an event that came
 * before the mark is delivered */
static int queued(struct ufile *f, unsigned int idx, struct uu_req *req,
		  unsigned int mark_arg)
{
	struct ucslot *s = &f->slots[idx];
	int pending_res = 0;
	bool pending;

	mark_fn(req, mark_arg);
	pthread_mutex_lock(&f->lock);
	s->marked = true;
	pending = s->pending && s->req == req;
	if (pending) {
		pending_res = s->pending_res;
		s->pending = false;
		s->req = NULL;
	}
	pthread_mutex_unlock(&f->lock);
	if (pending)
		deliver(f, idx, req, pending_res);
	return UM_QUEUED;
}

int uu_ublk_io(struct ufile *f, uint32_t cmd_op,
	       const struct ublksrv_io_cmd *cmd, pid_t tid, struct uu_req *req,
	       unsigned int mark_arg)
{
	uint32_t nr = cmd_op & 0xff;
	bool in_range = cmd->q_id < f->info.nr_hw_queues &&
			cmd->tag < f->info.queue_depth;
	unsigned int idx = in_range ? (unsigned int)cmd->q_id *
						  f->info.queue_depth +
					      cmd->tag : 0;
	struct um_io m = { .h = { .type = UM_IO }, .cmd_op = cmd_op,
			   .tid = tid, .cmd = *cmd };
	struct ucwait w = { .addr = cmd->addr, .idx = idx, .tid = tid };
	struct ucslot *s = &f->slots[idx];
	int res;

	/* a forked child has no receiver for the parent's data connection
	 * (docs/ublk.md): its commands are another task's, -EINVAL */
	if (f->pid != getpid())
		return -EINVAL;
	if (in_range && (nr == UBLK_IO_FETCH_REQ ||
			 nr == UBLK_IO_COMMIT_AND_FETCH_REQ))
		w.req = req;
	if (w.req && auto_reg(f)) {
		if (auto_reg_check(req->sqe.addr))
			return -EINVAL;
		w.auto_addr = req->sqe.addr;
		w.ring = req->ring;
	}
	if (in_range && nr == UBLK_IO_COMMIT_AND_FETCH_REQ) {
		int how = COMMIT_ASK;

		commit_copy(f, idx, cmd, tid);
		m.h.type = UM_IO_ASYNC;
		if (req)
			how = commit_async(f, idx, cmd_op, cmd, tid, req, &m);
		if (how == COMMIT_HELD)
			return queued(f, idx, req, mark_arg);
		m.h.type = UM_IO;
		if (how == COMMIT_SEND) {
			m.h.type = UM_IO_ASYNC;
			if (um_send(f->data_conn, &m, sizeof(m), NULL, 0, NULL,
				    0) >= 0)
				return queued(f, idx, req, mark_arg);
			/* the driver is gone: as call() answers then */
			pthread_mutex_lock(&f->lock);
			if (s->req == req)
				s->req = NULL;
			s->pending = false;
			pthread_mutex_unlock(&f->lock);
			return -ENODEV;
		}
	}
	res = call(f, &m.h, sizeof(m), &w);
	if (res == UM_QUEUED && w.req)
		return queued(f, idx, req, mark_arg);
	if (res == UBLK_IO_RES_OK && nr == UBLK_IO_NEED_GET_DATA && in_range) {
		/* ublk_get_data: the write's data into the new buffer */
		uu_copy_to_user((void *)(uintptr_t)cmd->addr, slot_buf(f, idx),
				io_bytes(f, iod_of(f, idx)));
		pthread_mutex_lock(&f->lock);
		s->addr = cmd->addr;
		s->owned = true;
		s->ngd = false;
		pthread_mutex_unlock(&f->lock);
	}
	return res;
}

bool uu_ublk_io_cancel(struct ufile *f, struct uu_req *req, unsigned int q,
		       unsigned int tag)
{
	struct um_io m = { .h = { .type = UM_CANCEL } };
	unsigned int idx;
	bool mine;

	if (q >= f->info.nr_hw_queues || tag >= f->info.queue_depth)
		return false;
	idx = q * f->info.queue_depth + tag;
	pthread_mutex_lock(&f->lock);
	mine = f->slots[idx].req == req;
	if (mine)
		f->slots[idx].req = NULL;
	pthread_mutex_unlock(&f->lock);
	if (!mine)
		return false;
	m.cmd.q_id = (uint16_t)q;
	m.cmd.tag = (uint16_t)tag;
	um_send(f->data_conn, &m, sizeof(m), NULL, 0, NULL, 0);
	return true;
}

/*
 * The engine's answer to ublk_check_and_get_req when this process's view
 * of the slot suffices: the server holds the request (its CQE was
 * posted, no COMMIT yet), so the kernel's reference exists and the
 * device is not DEAD.  UCOPY_ASK when the driver must be asked (the slot
 * is not held here: its errno depends on the device's state), else the
 * bytes from off on or -errno.
 */
#define UCOPY_ASK LONG_MIN
static long ucopy_local(struct ufile *f, unsigned int q, unsigned int tag,
			uint64_t off, bool is_write)
{
	const struct ublksrv_io_desc *iod;
	unsigned int idx, op;
	size_t bytes;
	bool held;

	if (q >= f->info.nr_hw_queues || tag >= f->info.queue_depth ||
	    !(f->info.flags & UBLK_F_USER_COPY))
		return UCOPY_ASK;
	idx = q * f->info.queue_depth + tag;
	pthread_mutex_lock(&f->lock);
	held = f->slots[idx].owned && !f->slots[idx].ngd;
	pthread_mutex_unlock(&f->lock);
	if (!held)
		return UCOPY_ASK;
	/* the descriptor was written before the slot's event (the
	 * receiver's recv orders it before owned was set) */
	iod = iod_of(f, idx);
	op = iod->op_flags & 0xff;
	if (op != UBLK_IO_OP_READ && op != UBLK_IO_OP_WRITE)
		return -EINVAL; /* ublk_rq_has_data */
	bytes = io_bytes(f, iod);
	if (off > bytes)
		return -EINVAL;
	if ((op == UBLK_IO_OP_READ) != is_write)
		return -EACCES; /* ublk_check_ubuf_dir */
	return (long)(bytes - off);
}

/*
 * Copies between iov and the slot's buffer from off, at most avail
 * bytes, page by page of the caller's memory: a fault ends the copy with
 * what was done, as ublk_copy_user_pages stops where pinning fails.
 */
static ssize_t ucopy_move(uint8_t *buf, size_t avail,
			  const struct iovec *iov, int nr, bool is_write)
{
	size_t done = 0;

	for (int i = 0; i < nr && done < avail; i++) {
		uint8_t *u = iov[i].iov_base;
		size_t left = iov[i].iov_len;

		while (left && done < avail) {
			size_t n = UBLKD_PAGE - ((uintptr_t)u & (UBLKD_PAGE - 1));
			int ret;

			if (n > left)
				n = left;
			if (n > avail - done)
				n = avail - done;
			ret = is_write ? uu_copy_from_user(buf + done, u, n) :
					 uu_copy_to_user(u, buf + done, n);
			if (ret)
				return (ssize_t)done;
			done += n;
			u += n;
			left -= n;
		}
	}
	return (ssize_t)done;
}

ssize_t uu_ublk_user_copy(struct ufile *f, bool is_write,
			  const struct iovec *iov, int nr, int64_t pos,
			  bool user_backed)
{
	uint64_t rel = (uint64_t)pos - UBLKSRV_IO_BUF_OFFSET;
	unsigned int q = (unsigned int)(rel >> UBLK_QID_OFF) &
			 UBLK_QID_BITS_MASK;
	unsigned int tag = (unsigned int)(rel >> UBLK_TAG_OFF) &
			   UBLK_TAG_BITS_MASK;
	uint64_t off = rel & UBLK_IO_BUF_BITS_MASK;
	long avail;

	/* vfs_read / vfs_write: the file's open mode first */
	if ((f->accmode == O_WRONLY && !is_write) ||
	    (f->accmode == O_RDONLY && is_write))
		return -EBADF;
	if (pos < 0)
		return -EINVAL; /* rw_verify_area */
	if (!user_backed)
		return -EACCES;
	/* a forked child has no receiver for the parent's connection
	 * (docs/ublk.md) */
	if (f->pid != getpid())
		return -EINVAL;
	avail = ucopy_local(f, q, tag, off, is_write);
	if (avail == UCOPY_ASK) {
		struct um_ucopy m = { .h = { .type = UM_UCOPY }, .pos = pos,
				      .is_write = is_write };
		struct ucwait w = { 0 };

		avail = call(f, &m.h, sizeof(m), &w);
	}
	if (avail < 0)
		return avail;
	return ucopy_move(f->data_map + ((size_t)q * f->info.queue_depth + tag) *
						f->slot_bytes + off,
			  (size_t)avail, iov, nr, is_write);
}

/*
 * UBLK_IO_REGISTER_IO_BUF (ublk_register_io_buf from any task,
 * ublk_daemon_register_io_buf from the tag's daemon): the request's data,
 * the slot's shared buffer, becomes buffer cmd->addr of the command's
 * ring r, usable in the request's direction (a write's data is written
 * out of it, a read's read into it).  UBLK_IO_UNREGISTER_IO_BUF
 * (ublk_unregister_io_buf): unchecked beyond the zero-copy flag, as in
 * 6.18.  Both complete at once.
 */
int uu_ublk_buf_cmd(struct ufile *f, uint32_t cmd_op,
		    const struct ublksrv_io_cmd *cmd, pid_t tid,
		    struct uu_ring *r)
{
	uint32_t type = (cmd_op >> 8) & 0xff;
	bool zc = f->info.flags & UBLK_F_SUPPORT_ZERO_COPY;
	const struct ublksrv_io_desc *iod;
	unsigned int idx, op;
	bool owned, ngd, daemon;
	int ret;

	if (type != 'u' && type != 0)
		return -EOPNOTSUPP; /* ublk_check_cmd_op */
	if (f->pid != getpid())
		return -EINVAL; /* a forked child (docs/ublk.md) */
	if ((cmd_op & 0xff) == UBLK_IO_UNREGISTER_IO_BUF)
		return zc ? uu_rbuf_unregister_kbuf(r, (unsigned int)cmd->addr) :
			    -EINVAL;
	if (cmd->q_id >= f->info.nr_hw_queues ||
	    cmd->tag >= f->info.queue_depth)
		return -EINVAL;
	idx = (unsigned int)cmd->q_id * f->info.queue_depth + cmd->tag;
	pthread_mutex_lock(&f->lock);
	owned = f->slots[idx].owned;
	ngd = f->slots[idx].ngd;
	daemon = f->slots[idx].task == tid;
	pthread_mutex_unlock(&f->lock);
	iod = iod_of(f, idx);
	op = iod->op_flags & 0xff;
	if (!daemon) {
		/* __ublk_check_and_get_req: the request's reference exists
		 * from its dispatch to the server until the COMMIT */
		if (!zc || !owned || ngd)
			return -EINVAL;
	} else {
		if (!owned)
			return -EBUSY;
		if (ngd || !zc)
			return -EINVAL;
	}
	if (op != UBLK_IO_OP_READ && op != UBLK_IO_OP_WRITE)
		return -EINVAL; /* ublk_rq_has_data */
	/* counted before the node exists, so its release finds it */
	pthread_mutex_lock(&f->lock);
	f->slots[idx].nbufs++;
	pthread_mutex_unlock(&f->lock);
	ret = uu_rbuf_register_kbuf(r, (unsigned int)cmd->addr,
				    slot_buf(f, idx), io_bytes(f, iod),
				    op == UBLK_IO_OP_WRITE ? UU_KBUF_SOURCE :
							     UU_KBUF_DEST,
				    kbuf_release, &f->slots[idx]);
	if (ret)
		kbuf_release(&f->slots[idx]);
	return ret;
}
