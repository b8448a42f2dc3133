// SPDX-License-Identifier: MIT
/*
 * Submission: take SQEs off the SQ, copy and validate each one once (T2),
 * and assemble link chains; core/req.c issues and completes them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/pers.h"
#include "core/register.h"
#include "core/req.h"
#include "core/tctx.h"
#include "core/types.h"
#include "core/xproc.h"
#include "exec/poller.h"

/*
 * io_init_req: validate the private copy and prep.  0 or -errno.
 * in_chain: a chain is being built (req would be a member, not a head).
 */
/* (109 lines: io_init_req's checks in the kernel's order, which decides
 * the error a bad SQE gets) */
static int init_req(struct uu_ring *r, struct uu_req *req, bool in_chain)
{
	const struct io_uring_sqe *sqe = &req->sqe;
	unsigned int sqe_flags = sqe->flags;
	const struct uu_opdef *def;

	req->opcode = sqe->opcode;
	req->user_data = sqe->user_data;
	req->flags = 0;
	atomic_store_explicit(&req->cancel_mark, false, memory_order_relaxed);
	req->res = 0;
	req->cflags = 0;
	req->big[0] = req->big[1] = 0;
	req->link = NULL;
	req->fd = -1;
	req->sqe_fd = -1;
	req->fd_owned = false;
	req->wq = NULL;
	/* a LINK_TIMEOUT may fire between park and the poll arm: its
	 * cancel must see "not armed yet", not a stale pointer */
	req->pf = NULL;
	req->file_tag = NULL;
	req->tw_reissue_req = false;
	req->link_failed = false;
	req->cq_uncommitted = false;
	req->poll_state = UU_POLLST_UNARMED;
	req->poll_tw = false;
	req->poll_hold = false;
	req->requeue = false;
	req->late_inline = false;
	req->on_park_list = false;
	req->iopoll_listed = false;
	req->submit_tid = uu_gettid();
	req->cred = NULL;
	req->xj = 0;
	/* a ring a forked process uses besides its creator: record the
	 * request, so that the other processes post its CQE if this one
	 * ends without doing it (xproc/xlife.c).  Not merely after a fork:
	 * a program that forks to exec pays nothing per request. */
	if (unlikely(uu_ring_xshared(r)))
		uu_xj_claim(r, req);
	if (sqe_flags & IOSQE_IO_LINK)
		req->flags |= UU_REQ_LINK;
	if (sqe_flags & IOSQE_IO_HARDLINK)
		req->flags |= UU_REQ_LINK | UU_REQ_HARDLINK;
	if (sqe_flags & IOSQE_CQE_SKIP_SUCCESS)
		req->flags |= UU_REQ_CQE_SKIP;
	if (sqe_flags & IOSQE_FIXED_FILE)
		req->flags |= UU_REQ_FIXED_FILE;
	if (sqe_flags & IOSQE_ASYNC)
		req->flags |= UU_REQ_ASYNC;

	if (unlikely(req->opcode >= UU_OP_LAST ||
		     !uu_opdefs[req->opcode].supported)) {
		req->opcode = IORING_OP_NOP;
		return -EINVAL;
	}
	def = &uu_opdefs[req->opcode];
	if (unlikely(sqe_flags & ~(IOSQE_FIXED_FILE | IOSQE_IO_LINK |
				   IOSQE_IO_HARDLINK | IOSQE_ASYNC))) {
		if (sqe_flags & ~UU_SQE_FLAGS)
			return -EINVAL;
		if (sqe_flags & IOSQE_BUFFER_SELECT) {
			if (!def->buffer_select)
				return -EOPNOTSUPP;
		}
		if (sqe_flags & IOSQE_CQE_SKIP_SUCCESS)
			r->drain_disabled = true;
		if (sqe_flags & IOSQE_IO_DRAIN) {
			if (r->drain_disabled)
				return -EOPNOTSUPP;
			req->flags |= UU_REQ_DRAIN;
			/* io_init_drain: a member's DRAIN drains its whole
			 * chain (submit_one marks the head) and the request
			 * or chain that follows it */
			if (in_chain)
				r->drain_next = true;
		}
	}
	if (unlikely(r->drain_next) && !in_chain) {
		r->drain_next = false;
		req->flags |= UU_REQ_DRAIN;
	}
	if (unlikely(r->restricted) && !uu_restriction_allows(r, req->opcode,
							       sqe_flags))
		return -EACCES;
	if (!def->ioprio && sqe->ioprio)
		return -EINVAL;
	if (unlikely(r->setup_flags & IORING_SETUP_IOPOLL) && !def->iopoll)
		return -EINVAL;
	if (def->needs_file) {
		req->fd = sqe->fd;
		if (!(req->flags & UU_REQ_FIXED_FILE))
			req->sqe_fd = sqe->fd;
	}
	if (unlikely(sqe->personality)) {
		/* the snapshot is held until the request is freed: an
		 * unregister meanwhile does not change its identity */
		req->cred = uu_personality_get(r, sqe->personality);
		if (!req->cred)
			return -EINVAL;
	}
	if (sqe_flags & IOSQE_BUFFER_SELECT)
		req->flags |= UU_REQ_BUFFER_SELECT;
	if (def->prep) {
		int ret = def->prep(req);

		if (ret)
			return ret;
	}
	req->flags |= UU_REQ_PREPPED;
	return 0;
}

/*
 * submit_one's answer when a request could not get its record (a chain's
 * members and parked requests live on the heap): the SQE is left in the
 * SQ and the batch ends there, as the kernel's io_submit_sqes stops when
 * io_alloc_req fails before it takes the SQE.  A chain built so far runs
 * as it is (io_submit_state_end).
 */
#define SUBMIT_AGAIN 1

/* the record of a chain member or head, or NULL (req discarded) */
static struct uu_req *chain_record(struct uu_req *req)
{
	struct uu_req *h = uu_req_to_heap(req);

	if (!h)
		uu_req_discard(req);
	return h;
}

/* io_submit_fail_init */
static int submit_fail_init(struct uu_exec *s, struct uu_req *req,
			    int ret, bool *stop)
{
	struct uu_req *h;

	req->res = ret;
	uu_req_set_fail(req);
	if (s->head || (req->flags & UU_REQ_LINK)) {
		req = chain_record(req);
		if (!req) {
			*stop = true;
			return SUBMIT_AGAIN;
		}
	}
	if (s->head && !(s->head->flags & UU_REQ_FAIL)) {
		s->head->res = -ECANCELED;
		uu_req_set_fail(s->head);
	}
	if (!(req->flags & UU_REQ_LINK)) {
		if (s->head) {
			s->last->link = req;
			h = s->head;
			s->head = NULL;
			uu_req_queue_head(s, h, true);
		} else {
			uu_req_queue_head(s, req, false);
		}
		*stop = true;
		return ret;
	}
	if (s->head)
		s->last->link = req;
	else
		s->head = req;
	s->last = req;
	return 0;
}

static int submit_one(struct uu_exec *s, struct uu_req *req, bool *stop)
{
	struct uu_ring *r = s->ring;
	struct uu_req *h;
	int ret;

	*stop = false;
	ret = init_req(r, req, s->head != NULL);
	/* a LINK_TIMEOUT guards the previous request of a chain */
	if (unlikely(req->opcode == IORING_OP_LINK_TIMEOUT) && !ret) {
		if (!s->head || s->last->opcode == IORING_OP_LINK_TIMEOUT)
			ret = -EINVAL;
		else
			s->last->flags |= UU_REQ_ARM_LTIMEOUT;
	}
	if (unlikely(ret))
		return submit_fail_init(s, req, ret, stop);

	if (unlikely(s->head)) {
		h = chain_record(req);
		if (!h) {
			*stop = true;
			return SUBMIT_AGAIN;
		}
		s->last->link = h;
		s->last = h;
		/* the journal (xproc/xlife.c): it ends with its TIMEOUT */
		if (unlikely(h->xj) && s->head->opcode == IORING_OP_TIMEOUT)
			uu_xj_mark_timeout(r, h->xj, s->head->xj);
		if (h->flags & UU_REQ_DRAIN)
			s->head->flags |= UU_REQ_DRAIN; /* the chain drains */
		if (h->flags & UU_REQ_LINK)
			return 0;
		h = s->head;
		s->head = NULL;
		uu_req_queue_head(s, h, true);
		return 0;
	}
	if (unlikely(req->flags & UU_REQ_LINK)) {
		h = chain_record(req);
		if (!h) {
			*stop = true;
			return SUBMIT_AGAIN;
		}
		s->head = s->last = h;
		return 0;
	}
	uu_req_queue_head(s, req, false);
	return 0;
}

static inline const struct io_uring_sqe *get_sqe(struct uu_ring *r)
{
	uint32_t idx = r->sq_cached_head++ & r->sq_mask;

	if (r->sq_array) {
		/* the index is the application's: treat it as hostile */
		idx = __atomic_load_n(&r->sq_array[idx], __ATOMIC_RELAXED);
		if (unlikely(idx >= r->mem.sq_entries)) {
			atomic_store_explicit(r->sq_dropped,
				atomic_load_explicit(r->sq_dropped,
						     memory_order_relaxed) + 1,
				memory_order_release);
			uu_stat_inc(r, sqes_dropped);
			return NULL;
		}
	}
	return (const struct io_uring_sqe *)((char *)r->mem.sqes +
					     ((size_t)idx << r->sqe_shift));
}

/* Called with uring_lock held.  Returns the number of SQEs consumed. */
int uu_submit_sqes(struct uu_ring *r, unsigned int nr)
{
	struct uu_exec s;
	struct uu_req req;
	unsigned int entries, left;
	bool again = false;
	uint32_t head;
	int ret, err;

	/* another process using the ring (a forked child, xproc/xproc.c)
	 * may have consumed SQEs since this engine's last submission: its
	 * head store came before it released uring_lock */
	head = atomic_load_explicit(r->sq_head, memory_order_relaxed);
	if (unlikely((int32_t)(head - r->sq_cached_head) > 0))
		r->sq_cached_head = head;
	/* acquire: pairs with the application's release of sq tail, so the
	 * SQE contents are visible */
	entries = atomic_load_explicit(r->sq_tail, memory_order_acquire) -
		  r->sq_cached_head;
	if (entries > r->mem.sq_entries)
		entries = r->mem.sq_entries; /* hostile tail: clamp */
	if (!entries)
		return 0;
	ret = (int)(left = nr < entries ? nr : entries);
	uu_exec_init(&s, r, true);
	do {
		const struct io_uring_sqe *sqe = get_sqe(r);
		bool stop;

		if (unlikely(!sqe))
			break;
		/* one copy; nothing in the slot is read again (T2) */
		memcpy(&req.sqe, sqe, sizeof(req.sqe));
		if (r->sqe_shift == 7)
			memcpy(req.sqe_ext, (const char *)sqe + 64, 64);
		req.ring = r;
		err = submit_one(&s, &req, &stop);
		if (unlikely(err == SUBMIT_AGAIN)) {
			r->sq_cached_head--; /* the SQE stays in the SQ */
			again = true;
			break;
		}
		if (unlikely(err) && stop &&
		    !(r->setup_flags & IORING_SETUP_SUBMIT_ALL)) {
			left--;
			break;
		}
	} while (--left);
	if (left)
		ret -= (int)left;
	/* one atomic add per batch, not a locked add per SQE */
	uu_stat_add(r, sqes_consumed, (unsigned int)ret);
	/* an unterminated chain at the end of the batch runs as it is */
	if (s.head) {
		struct uu_req *h = s.head;

		s.head = NULL;
		uu_req_queue_head(&s, h, true);
	}
	/*
	 * The batch's direct CQEs are posted before the SQ head moves, as
	 * the kernel's io_submit_sqes does (completions flushed in
	 * io_submit_state_end, then io_commit_sqring): an SQPOLL
	 * application that sees the head past its SQEs also sees the CQEs
	 * of those that completed inline.  Link continuations (task_work)
	 * still run after, in uu_exec_end.
	 */
	s.publish_sq_head = true; /* stored by the commit, before its wakeups */
	uu_exec_flush_direct(&s);
	/* release: the SQ slots may be reused once the app sees the head.
	 * Not a second time: an application may read it plainly once it
	 * has seen the value (acquire) */
	if (!s.sq_head_published)
		atomic_store_explicit(r->sq_head, r->sq_cached_head,
				      memory_order_release);
	uu_exec_end(&s);
	/* nothing taken for want of memory: io_submit_sqes' -EAGAIN */
	return again && !ret ? -EAGAIN : ret;
}
