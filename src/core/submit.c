// SPDX-License-Identifier: MIT
/*
 * The request lifecycle: take SQEs off the SQ, copy and validate each one
 * once (T2), assemble link chains, issue, complete, and post CQEs.
 *
 * In this foundation every request is issued inline in the submitting
 * thread, so a request has completed before the next one is issued: drain
 * is satisfied by construction and link chains run in order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

#define SQE_VALID_FLAGS                                                     \
	(IOSQE_FIXED_FILE | IOSQE_IO_DRAIN | IOSQE_IO_LINK |                \
	 IOSQE_IO_HARDLINK | IOSQE_ASYNC | IOSQE_BUFFER_SELECT |            \
	 IOSQE_CQE_SKIP_SUCCESS)

#define COMPL_BATCH 32

/* Completions waiting to be posted: flushed under completion_lock once per
 * batch, like the kernel's submit_state.compl_reqs. */
struct compl_batch {
	unsigned int nr;
	struct {
		uint64_t user_data;
		int32_t res;
		uint32_t cflags;
		uint64_t big[2];
	} e[COMPL_BATCH];
};

struct submit_state {
	struct uu_ring *ring;
	struct uu_req *head, *last; /* link chain being assembled */
	struct uu_req *tw_head, *tw_tail; /* link continuations, FIFO */
	struct compl_batch cb;
};

static void compl_flush(struct submit_state *s)
{
	struct uu_ring *r = s->ring;
	unsigned int i;

	if (!s->cb.nr)
		return;
	pthread_mutex_lock(&r->completion_lock);
	for (i = 0; i < s->cb.nr; i++)
		uu_cq_post_locked(r, s->cb.e[i].user_data, s->cb.e[i].res,
				  s->cb.e[i].cflags, s->cb.e[i].big);
	uu_cq_commit_locked(r);
	pthread_mutex_unlock(&r->completion_lock);
	s->cb.nr = 0;
}

static void req_set_fail(struct uu_req *req)
{
	req->flags |= UU_REQ_FAIL;
	if (req->flags & UU_REQ_CQE_SKIP) {
		req->flags &= ~UU_REQ_CQE_SKIP;
		req->flags |= UU_REQ_SKIP_LINK_CQES;
	}
}

static void req_complete(struct submit_state *s, struct uu_req *req)
{
	const struct uu_opdef *def = &uu_opdefs[req->opcode];

	if (def->cleanup)
		def->cleanup(req);
	if (req->flags & UU_REQ_CQE_SKIP)
		return;
	if (s->cb.nr == COMPL_BATCH)
		compl_flush(s);
	s->cb.e[s->cb.nr].user_data = req->user_data;
	s->cb.e[s->cb.nr].res = req->res;
	s->cb.e[s->cb.nr].cflags = req->cflags;
	s->cb.e[s->cb.nr].big[0] = req->big[0];
	s->cb.e[s->cb.nr].big[1] = req->big[1];
	s->cb.nr++;
}

static void req_free(struct uu_req *req, bool heap)
{
	if (heap)
		free(req);
}

/*
 * Link continuations run as "task_work" after the submission batch, like
 * the kernel's io_queue_next()/io_fail_links(): a chain's next member (or
 * the cancellation of the rest) is queued when its predecessor completes,
 * and the queue is run FIFO once the batch's own completions are posted.
 * This reproduces the kernel's CQE order: the direct completions of a
 * batch first, then each chain's later members, interleaved chain by chain.
 */
static void tw_push(struct submit_state *s, struct uu_req *req, bool cancel)
{
	req->tw_next = NULL;
	req->tw_cancel = cancel;
	if (s->tw_tail)
		s->tw_tail->tw_next = req;
	else
		s->tw_head = req;
	s->tw_tail = req;
}

/* After req completed: queue what follows it in its chain. */
static void queue_next(struct submit_state *s, struct uu_req *req)
{
	struct uu_req *next = req->link;

	if (!next)
		return;
	req->link = NULL;
	if ((req->flags & UU_REQ_FAIL) && !(req->flags & UU_REQ_HARDLINK)) {
		bool ignore = req->flags & UU_REQ_SKIP_LINK_CQES;
		struct uu_req *l;

		for (l = next; l; l = l->link) {
			if (ignore)
				l->flags |= UU_REQ_CQE_SKIP;
			else
				l->flags &= ~UU_REQ_CQE_SKIP;
		}
		tw_push(s, next, true);
	} else {
		tw_push(s, next, false);
	}
}

static void issue_one(struct uu_req *req)
{
	const struct uu_opdef *def = &uu_opdefs[req->opcode];

	uu_stat_inc(req->ring, route_inline);
	req->res = def->issue(req);
	if (req->res < 0 || (req->flags & UU_REQ_SHORT))
		req_set_fail(req);
}

/* Issues one request (a chain head or a continuation) and completes it. */
static void queue_req(struct submit_state *s, struct uu_req *req, bool heap)
{
	if (req->flags & UU_REQ_FAIL) {
		/* failed while the chain was assembled: nothing runs */
		req_set_fail(req);
	} else {
		issue_one(req);
	}
	req_complete(s, req);
	queue_next(s, req);
	req_free(req, heap);
}

static void run_task_work(struct submit_state *s)
{
	struct uu_req *req;

	while ((req = s->tw_head)) {
		s->tw_head = req->tw_next;
		if (!s->tw_head)
			s->tw_tail = NULL;
		if (req->tw_cancel) {
			struct uu_req *l, *next;

			for (l = req; l; l = next) {
				next = l->link;
				l->res = (l->flags & UU_REQ_FAIL) ? l->res :
								    -ECANCELED;
				l->cflags = 0;
				req_complete(s, l);
				req_free(l, true);
			}
			continue;
		}
		queue_req(s, req, true);
	}
}

/*
 * IOSQE_IO_DRAIN: everything submitted before must have completed, and
 * everything after waits for the drained request (the kernel's drain_next).
 * With inline issue the only requests still in flight are queued link
 * continuations, so draining means running them out first and after.
 */
static void queue_head(struct submit_state *s, struct uu_req *req, bool heap)
{
	if (unlikely(req->flags & UU_REQ_DRAIN)) {
		run_task_work(s);
		queue_req(s, req, heap);
		run_task_work(s);
		return;
	}
	queue_req(s, req, heap);
}

/* io_init_req: validate the private copy and prep.  0 or -errno. */
static int init_req(struct uu_ring *r, struct uu_req *req)
{
	const struct io_uring_sqe *sqe = &req->sqe;
	unsigned int sqe_flags = sqe->flags;
	const struct uu_opdef *def;

	req->opcode = sqe->opcode;
	req->user_data = sqe->user_data;
	req->flags = 0;
	req->res = 0;
	req->cflags = 0;
	req->big[0] = req->big[1] = 0;
	req->link = NULL;
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
		if (sqe_flags & ~SQE_VALID_FLAGS)
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
		}
	}
	if (!def->ioprio && sqe->ioprio)
		return -EINVAL;
	if (sqe->personality)
		return -EINVAL; /* no personalities can be registered yet */
	if (sqe_flags & IOSQE_BUFFER_SELECT)
		req->flags |= UU_REQ_BUFFER_SELECT;
	return def->prep ? def->prep(req) : 0;
}

static struct uu_req *req_to_heap(struct uu_req *req)
{
	struct uu_req *h = malloc(sizeof(*h));

	if (!h)
		return NULL;
	memcpy(h, req, sizeof(*h));
	/* prep may point at the inline iovec array of the copy we leave */
	if (h->rw.iov == req->rw.inline_iov &&
	    (h->opcode == IORING_OP_READV || h->opcode == IORING_OP_WRITEV ||
	     h->opcode == IORING_OP_READ || h->opcode == IORING_OP_WRITE))
		h->rw.iov = h->rw.inline_iov;
	return h;
}

/* io_submit_fail_init */
static int submit_fail_init(struct submit_state *s, struct uu_req *req,
			    int ret, bool *stop)
{
	struct uu_req *h;

	req->res = ret;
	req_set_fail(req);
	if (s->head && !(s->head->flags & UU_REQ_FAIL)) {
		s->head->res = -ECANCELED;
		req_set_fail(s->head);
	}
	if (!(req->flags & UU_REQ_LINK)) {
		if (s->head) {
			h = req_to_heap(req);
			if (h) {
				s->last->link = h;
			}
			h = s->head;
			s->head = NULL;
			queue_head(s, h, true);
		} else {
			queue_head(s, req, false);
		}
		*stop = true;
		return ret;
	}
	h = req_to_heap(req);
	if (!h) {
		*stop = true;
		return -ENOMEM;
	}
	if (s->head)
		s->last->link = h;
	else
		s->head = h;
	s->last = h;
	return 0;
}

static int submit_one(struct submit_state *s, struct uu_req *req, bool *stop)
{
	struct uu_ring *r = s->ring;
	struct uu_req *h;
	int ret;

	*stop = false;
	ret = init_req(r, req);
	if (unlikely(ret))
		return submit_fail_init(s, req, ret, stop);

	if (unlikely(s->head)) {
		h = req_to_heap(req);
		if (!h) {
			if (!(s->head->flags & UU_REQ_FAIL)) {
				s->head->res = -ECANCELED;
				req_set_fail(s->head);
			}
			return -ENOMEM;
		}
		s->last->link = h;
		s->last = h;
		if (h->flags & UU_REQ_DRAIN)
			s->head->flags |= UU_REQ_DRAIN; /* the chain drains */
		if (h->flags & UU_REQ_LINK)
			return 0;
		h = s->head;
		s->head = NULL;
		queue_head(s, h, true);
		return 0;
	}
	if (unlikely(req->flags & UU_REQ_LINK)) {
		h = req_to_heap(req);
		if (!h)
			return -ENOMEM;
		s->head = s->last = h;
		return 0;
	}
	queue_head(s, req, false);
	return 0;
}

static inline const struct io_uring_sqe *get_sqe(struct uu_ring *r)
{
	uint32_t idx = r->sq_cached_head++ & r->sq_mask;

	if (r->sq_array) {
		/* the index is the application's: treat it as hostile */
		idx = __atomic_load_n(&r->sq_array[idx], __ATOMIC_RELAXED);
		if (unlikely(idx >= r->sq_entries)) {
			atomic_store_explicit(r->sq_dropped,
				atomic_load_explicit(r->sq_dropped,
						     memory_order_relaxed) + 1,
				memory_order_release);
			uu_stat_inc(r, sqes_dropped);
			return NULL;
		}
	}
	return (const struct io_uring_sqe *)((char *)r->sqes_mem +
					     ((size_t)idx << r->sqe_shift));
}

/* Called with uring_lock held.  Returns the number of SQEs consumed. */
int uu_submit_sqes(struct uu_ring *r, unsigned int nr)
{
	struct submit_state s;
	struct uu_req req;
	unsigned int entries, left;
	int ret;

	/* acquire: pairs with the application's release of sq tail, so the
	 * SQE contents are visible */
	entries = atomic_load_explicit(r->sq_tail, memory_order_acquire) -
		  r->sq_cached_head;
	if (entries > r->sq_entries)
		entries = r->sq_entries; /* hostile tail: clamp */
	if (!entries)
		return 0;
	ret = (int)(left = nr < entries ? nr : entries);
	s.ring = r;
	s.head = s.last = NULL;
	s.tw_head = s.tw_tail = NULL;
	s.cb.nr = 0;
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
		uu_stat_inc(r, sqes_consumed);
		if (unlikely(submit_one(&s, &req, &stop)) && stop &&
		    !(r->setup_flags & IORING_SETUP_SUBMIT_ALL)) {
			left--;
			break;
		}
	} while (--left);
	if (left)
		ret -= (int)left;
	/* an unterminated chain at the end of the batch runs as it is */
	if (s.head) {
		struct uu_req *h = s.head;

		s.head = NULL;
		queue_head(&s, h, true);
	}
	/* release: the SQ slots may be reused once the app sees the head */
	atomic_store_explicit(r->sq_head, r->sq_cached_head, memory_order_release);
	compl_flush(&s);
	if (s.tw_head) {
		run_task_work(&s);
		compl_flush(&s);
	}
	return ret;
}
