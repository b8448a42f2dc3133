// SPDX-License-Identifier: MIT
/*
 * The request lifecycle after validation: issue (non-blocking first),
 * park (core/park.c) when the issue would block, complete, post the CQE,
 * and continue or cancel the link chain.
 * (Past 800 lines: issue, completion and the context's flush share the
 * always-inline fast paths a NOP takes, so they stay in one unit.)
 *
 * The same code runs in the submitting thread (inside enter) and in the
 * threads that finish parked requests (io-wq workers, the poller): each
 * works on its own struct uu_exec, which batches CQEs and holds the FIFO
 * of link continuations ("task_work").
 *
 * CQE order matches the kernel's: the direct completions of a batch first,
 * then the queued continuations, chain by chain (io_queue_next /
 * io_fail_links run as task_work after the batch's completions flush).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "core/cancel.h"
#include "core/config.h"
#include "core/cq_post.h"
#include "core/iopoll.h"
#include "core/park.h"
#include "core/pers.h"
#include "core/registry.h"
#include "core/req.h"
#include "core/rsrc.h"
#include "core/task_work.h"
#include "core/tctx.h"
#include "core/types.h"
#include "core/xproc.h"
#include "exec/iowq.h"
#include "exec/poller.h"
#include "ops/rw.h"
#include "ops/timeout.h"
#include "util/fault.h"
#include "util/fdutil.h"
#include "util/rawsys.h"


void uu_exec_init(struct uu_exec *s, struct uu_ring *ring, bool submitter)
{
	s->ring = ring;
	s->head = s->last = NULL;
	s->tw_head = s->tw_tail = NULL;
	s->late_head = s->late_tail = NULL;
	s->hold_head = NULL;
	s->punt_head = s->punt_tail = NULL;
	s->aio_head = s->aio_tail = NULL;
	s->ring_puts = 0;
	s->nr_inline = 0;
	s->publish_sq_head = false;
	s->sq_head_published = false;
	s->inflight_puts = 0;
	s->finishing_puts = 0;
	s->cb.nr = 0;
	s->submitter = submitter;
	s->prev = uu_tctx.exec;
	uu_tctx.exec = s;
}

static void finish_parked(struct uu_exec *s, struct uu_req *req);

/* Flushes everything and leaves the context. */
void uu_exec_end(struct uu_exec *s)
{
	uu_exec_flush(s);
	uu_tctx.exec = s->prev;
	while (s->ring_puts) {
		s->ring_puts--;
		uu_ring_put(s->ring);
	}
}

/*
 * A parked (or spliced-out) request finished while this thread was busy
 * with something else: complete it after the current batch, as the kernel
 * does with task_work.  Without a context in this thread, at once.
 */
void uu_exec_finish_late(struct uu_req *req)
{
	struct uu_exec *s = uu_tctx.exec;

	if (!s || s->ring != req->ring) {
		if (req->flags & UU_REQ_NOT_PARKED) {
			struct uu_exec tmp;

			uu_exec_init(&tmp, req->ring, false);
			finish_parked(&tmp, req);
			uu_exec_end(&tmp);
			return;
		}
		uu_req_finish_async(req);
		return;
	}
	req->late_next = NULL;
	if (s->late_tail)
		s->late_tail->late_next = req;
	else
		s->late_head = req;
	s->late_tail = req;
}

void uu_req_set_fail(struct uu_req *req)
{
	req->flags |= UU_REQ_FAIL;
	if (req->flags & UU_REQ_CQE_SKIP) {
		req->flags &= ~UU_REQ_CQE_SKIP;
		req->flags |= UU_REQ_SKIP_LINK_CQES;
	}
}

/* inlined: it runs once per request, and a call costs as much as its body */
static inline __attribute__((always_inline)) void
req_complete(struct uu_exec *s, struct uu_req *req)
{
	const struct uu_opdef *def = &uu_opdefs[req->opcode];

	if (def->cleanup && (req->flags & UU_REQ_PREPPED)) {
		def->cleanup(req);
		req->flags &= ~UU_REQ_PREPPED;
	}
	if (req->flags & UU_REQ_CQE_SKIP) {
		uu_xj_release(req->ring, req->xj);
		req->xj = 0;
		return;
	}
	uu_exec_post(s, req->user_data, req->res, req->cflags, req->big);
	/* the journal slot is freed with the post (uu_exec_flush_cqes) */
	s->cb.e[s->cb.nr - 1].xj = req->xj;
	req->xj = 0;
}

static void req_release(struct uu_req *req, bool heap)
{
	if (unlikely(req->xj)) {
		/* ended without a CQE of its own */
		uu_xj_release(req->ring, req->xj);
		req->xj = 0;
	}
	if (req->fd_owned) {
		uu_sys_close(req->fd);
		req->fd_owned = false;
	}
	if (req->file_tag) {
		/* after this request's CQE, like the kernel's node put */
		uu_file_tag_put(req->file_tag);
		req->file_tag = NULL;
	}
	if (req->wq)
		uu_iowq_put(req->wq);
	req->wq = NULL;
	if (unlikely(req->cred)) {
		uu_cred_put(req->cred);
		req->cred = NULL;
	}
	if (heap)
		free(req);
}

/* what a request holds goes with it; most hold nothing (a NOP, a request
 * on a plain fd run inline): one test, no call */
static inline __attribute__((always_inline)) void
req_free(struct uu_req *req, bool heap)
{
	if (heap || req->xj || req->fd_owned || req->file_tag || req->wq ||
	    req->cred)
		req_release(req, heap);
}

/* A request that was set up (init, prep) but will not run: what it holds
 * goes, without a CQE */
void uu_req_discard(struct uu_req *req)
{
	const struct uu_opdef *def = &uu_opdefs[req->opcode];

	if (def->cleanup && (req->flags & UU_REQ_PREPPED)) {
		def->cleanup(req);
		req->flags &= ~UU_REQ_PREPPED;
	}
	req_free(req, false);
}

struct uu_req *uu_req_to_heap(struct uu_req *req)
{
	struct uu_req *h = uu_fault(UU_FAULT_REQ_ALLOC) ? NULL :
						  malloc(sizeof(*h));

	if (!h)
		return NULL;
	memcpy(h, req, sizeof(*h));
	/* prep may point at the inline iovec array of the copy we leave */
	if (uu_opdefs[h->opcode].rw_state &&
	    uu_cmd(h, rw)->iov == uu_cmd(req, rw)->inline_iov)
		uu_cmd(h, rw)->iov = uu_cmd(h, rw)->inline_iov;
	return h;
}

static void tw_push(struct uu_exec *s, struct uu_req *req, bool cancel)
{
	req->tw_cancel = cancel;
	if (s->ring->setup_flags & IORING_SETUP_DEFER_TASKRUN) {
		/*
		 * DEFER_TASKRUN: the kernel queues the rest of a chain as
		 * task_work (io_queue_next -> io_req_task_queue, or one
		 * io_req_tw_fail_links item) on the ring's local list, which
		 * only the submitter runs, in GETEVENTS.  The item holds a
		 * ring reference until it has run (dropped by its runner).
		 * It is never lazy: the kernel drops the lazy wake for
		 * linked requests and queues continuations without it.
		 */
		atomic_fetch_add_explicit(&s->ring->refs, 1,
					  memory_order_relaxed);
		/* in flight for IO_DRAIN until it has run (tw_run_item) */
		atomic_fetch_add_explicit(&s->ring->inflight, 1,
					  memory_order_relaxed);
		req->flags |= UU_REQ_TW_CONT;
		uu_tw_queue(req, true);
		return;
	}
	req->tw_next = NULL;
	if (s->tw_tail)
		s->tw_tail->tw_next = req;
	else
		s->tw_head = req;
	s->tw_tail = req;
}

/* After req completed: queue what follows it in its chain. */
static void queue_next(struct uu_exec *s, struct uu_req *req)
{
	struct uu_req *next = req->link;

	if (!next)
		return;
	if (next->opcode == IORING_OP_LINK_TIMEOUT && !(next->flags & UU_REQ_FAIL)) {
		/* the link timeout is spliced out and completes on its own:
		 * -ECANCELED, or what its timer decided; the chain goes on
		 * after it with req's status */
		uu_link_timeout_disarm(req);
		req->link = next->link;
		next->link = NULL;
		next->res = uu_cmd(next, tmo)->lt_res;
		next->flags |= UU_REQ_NOT_PARKED;
		/* the kernel only sets a link timeout's result, it never
		 * marks it failed: with CQE_SKIP_SUCCESS it posts nothing,
		 * whether disarmed (-ECANCELED) or fired (-ETIME, or the
		 * cancel's error) */
		req_complete(s, next);
		req_free(next, true);
		next = req->link;
		if (!next)
			return;
	}
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

/*
 * Issues one request; true if it completed (res set), false if parked.
 * heap/reqp may change when the request is moved to the heap.
 */
static inline __attribute__((always_inline)) bool
issue_one_inl(struct uu_exec *s, struct uu_req **reqp, bool *heap,
	      unsigned int issue_flags)
{
	struct uu_req *req = *reqp;
	const struct uu_opdef *def = &uu_opdefs[req->opcode];
	int res;

	req->park = UU_ISSUE_DONE;
	if ((req->flags & UU_REQ_FIXED_FILE) && def->needs_file) {
		/* resolved at issue (FEAT_LINKED_FILE): from here on the op
		 * sees a plain fd; off the submitting thread it takes its
		 * own reference, since the table may change meanwhile */
		int fd = uu_fixed_file_ref(req->ring, (unsigned int)req->fd,
					   &req->file_tag);

		if (fd >= 0 && !s->submitter) {
			fd = uu_fd_dup_reserved(fd);
			if (fd >= 0)
				req->fd_owned = true;
		}
		if (fd < 0) {
			req->res = -EBADF;
			uu_req_set_fail(req);
			return true;
		}
		req->fd = fd;
		req->flags &= ~UU_REQ_FIXED_FILE;
	}
	/* inside s: an extra CQE the op posts joins s's batch
	 * (core/cq_post.c) */
	issue_flags |= UU_ISSUE_F_BATCH;
	if ((req->flags & UU_REQ_ASYNC) && !(issue_flags & UU_ISSUE_F_WORKER))
		res = uu_park(req, UU_ISSUE_PUNT);
	else if (unlikely(req->cred))
		res = uu_pers_issue(req, issue_flags); /* T9: its ids */
	else
		res = def->issue(req, issue_flags);
	if (req->park) {
		/* a chain continuation parks: the CQEs of the members before
		 * it must be out first, since it may complete on another
		 * thread at once (CQE order within a chain) */
		if (issue_flags & UU_ISSUE_F_CONT)
			uu_exec_flush_cqes(s);
		if (uu_exec_park(s, reqp, heap, req->park, &res))
			return false;
		req = *reqp;
	} else if (!(issue_flags & UU_ISSUE_F_WORKER) && s->submitter) {
		s->nr_inline++; /* counted at the flush: one atomic add */
	}
	req->res = res;
	if ((res < 0 && !(def->errors_keep_links && res != -EBADF)) ||
	    (req->flags & UU_REQ_SHORT))
		uu_req_set_fail(req);
	return true;
}

/* issue_one_inl for the callers off the submission path */
static bool issue_one(struct uu_exec *s, struct uu_req **reqp, bool *heap,
		      unsigned int issue_flags)
{
	return issue_one_inl(s, reqp, heap, issue_flags);
}

/* Issues a request (a chain head or a continuation) and completes it
 * unless it was parked. */
static inline __attribute__((always_inline)) void
queue_req_inl(struct uu_exec *s, struct uu_req *req, bool heap,
	      unsigned int issue_flags)
{
	if (req->flags & UU_REQ_FAIL) {
		/* failed while the chain was assembled: nothing runs, and
		 * hardlinks are treated as plain links (io_queue_sqe_fallback) */
		req->flags &= ~UU_REQ_HARDLINK;
		uu_req_set_fail(req);
	} else if (!issue_one_inl(s, &req, &heap, issue_flags)) {
		return;
	}
	req_complete(s, req);
	if (req->link)
		queue_next(s, req);
	req_free(req, heap);
}

/* queue_req_inl for the callers off the submission path */
static void queue_req(struct uu_exec *s, struct uu_req *req, bool heap,
		      unsigned int issue_flags)
{
	queue_req_inl(s, req, heap, issue_flags);
}

/* the rest of a failed chain: every member completes -ECANCELED (or its
 * own error if it failed while the chain was assembled) */
static void cancel_chain(struct uu_exec *s, struct uu_req *req)
{
	struct uu_req *l, *next;

	for (l = req; l; l = next) {
		next = l->link;
		l->res = (l->flags & UU_REQ_FAIL) ? l->res : -ECANCELED;
		l->cflags = 0;
		l->link_failed = true;
		req_complete(s, l);
		req_free(l, true);
	}
}

static void run_task_work(struct uu_exec *s)
{
	struct uu_req *req;

	while ((req = s->tw_head)) {
		s->tw_head = req->tw_next;
		if (!s->tw_head)
			s->tw_tail = NULL;
		if (req->tw_cancel) {
			cancel_chain(s, req);
			continue;
		}
		queue_req(s, req, true, UU_ISSUE_F_CONT);
	}
}

static void punt_flush(struct uu_exec *s)
{
	struct uu_req *list = s->punt_head;

	if (!list)
		return;
	s->punt_head = s->punt_tail = NULL;
	uu_iowq_enqueue_list(list);
}

/*
 * The batch's io-wq punts and direct completions, without its task_work
 * (what the kernel's io_submit_state_end flushes before io_submit_sqes
 * commits the SQ head).
 */
static void process_defer(struct uu_ring *r, struct uu_exec *s);

/*
 * Finished parked requests leave ring->inflight only once their CQEs are
 * posted: a DRAIN request queued meanwhile by another thread waits for
 * inflight to reach zero, and must not be issued (and post its CQE)
 * while an earlier request's CQE still sits unposted in this context
 * (the kernel's drain counts posted CQEs, req_need_defer).
 */
static void inflight_put(struct uu_exec *s)
{
	struct uu_ring *r = s->ring;
	unsigned int n = s->inflight_puts;

	if (s->finishing_puts) {
		/* release: the CQEs posted before (acquire in
		 * uu_cancel_settled) */
		atomic_fetch_sub_explicit(&r->finishing, s->finishing_puts,
					  memory_order_release);
		s->finishing_puts = 0;
	}
	if (!n)
		return;
	/*
	 * A link continuation this context queued (the member behind a
	 * parked head that just finished) runs first: a drained request
	 * waits for it too (io_drain_req counts every request submitted
	 * before it), and it holds no inflight count of its own.  The flush
	 * loop puts these once its queue is empty (tests/test_diff_link
	 * drain_behind_waiting_chain).
	 */
	if (s->tw_head)
		return;
	s->inflight_puts = 0;
	if (atomic_fetch_sub_explicit(&r->inflight, (int)n, memory_order_acq_rel) ==
		    (int)n &&
	    atomic_load_explicit(&r->drain_active, memory_order_acquire))
		process_defer(r, s);
}

void uu_exec_flush_direct(struct uu_exec *s)
{
	/* the SQ head goes out with this flush's own commit, after every
	 * CQE the batch posted, not with one that aio_flush or punt_flush
	 * might cause before them */
	bool publish = s->publish_sq_head;

	s->publish_sq_head = false;
	if (s->nr_inline) {
		uu_stat_add(s->ring, route_inline, s->nr_inline);
		s->nr_inline = 0;
	}
	uu_exec_aio_flush_pending(s);
	punt_flush(s);
	s->publish_sq_head = publish;
	uu_exec_flush_cqes(s);
	s->publish_sq_head = false;
	inflight_put(s);
}

/*
 * The POLL_ADDs this batch armed: a wakeup that came meanwhile (or a
 * cancel) waited for now (exec/poller.c uu_poll_release_hold).  Run
 * before the late completions, which cannot include them.
 */
static void release_holds(struct uu_exec *s)
{
	struct uu_req *req, *list = NULL;

	/* in arming order */
	while ((req = s->hold_head)) {
		s->hold_head = req->hold_next;
		req->hold_next = list;
		list = req;
	}
	while ((req = list)) {
		list = req->hold_next;
		req->hold_next = NULL;
		if (uu_poll_release_hold(req)) {
			req->late_inline = true;
			uu_exec_finish_late(req);
		}
	}
}

/* a request parked by UU_ISSUE_PARK_REQUEUE: issued again here (as
 * uu_req_finish_now does for the task_work runner), unless cancelled */
static void reissue_late(struct uu_exec *s, struct uu_req *req)
{
	bool heap = true;

	/* flags is shared with a cancel (park_lock): see try_remove */
	pthread_mutex_lock(&req->ring->park_lock);
	req->flags &= ~UU_REQ_TW_REISSUE;
	pthread_mutex_unlock(&req->ring->park_lock);
	if (uu_req_cancelled(req))
		req->res = -ECANCELED;
	else if (!issue_one(s, &req, &heap, 0))
		return; /* waiting again, or requeued behind the others */
	finish_parked(s, req);
}

void uu_exec_flush(struct uu_exec *s)
{
	uu_exec_flush_direct(s);
	while (s->tw_head || s->late_head || s->hold_head) {
		release_holds(s);
		run_task_work(s);
		while (s->late_head) {
			struct uu_req *req = s->late_head;

			s->late_head = req->late_next;
			if (!s->late_head)
				s->late_tail = NULL;
			if (req->flags & UU_REQ_NOT_PARKED)
				finish_parked(s, req);
			else if (req->flags & UU_REQ_TW_REISSUE)
				reissue_late(s, req);
			else if (req->ring->setup_flags & IORING_SETUP_DEFER_TASKRUN)
				/*
				 * a parked request finished by something
				 * else (a cancel, a timeout removal): the
				 * kernel completes it through task_work,
				 * which on DEFER_TASKRUN rings waits for the
				 * submitter's GETEVENTS even when the
				 * submitter itself did it
				 */
				if (req->late_inline)
					finish_parked(s, req);
				else
					uu_req_finish_async(req);
			else if (req->ring->sqd && !s->submitter)
				uu_req_finish_async(req);
			else
				finish_parked(s, req);
		}
		uu_exec_aio_flush_pending(s);
		punt_flush(s);
		uu_exec_flush_cqes(s);
		inflight_put(s);
	}
}

/*
 * IOSQE_IO_DRAIN (sequence of the kernel's io_drain_req/drain_next): a
 * drained request is issued only when every request submitted before it
 * has completed, and requests submitted after it wait for it.  Requests
 * still in flight are this batch's queued link continuations (run out
 * first) and parked requests (ring->inflight).  Heads that must wait go
 * to the ring's defer list, which is processed here and again by
 * whichever thread brings inflight back to zero.
 */
static void process_defer(struct uu_ring *r, struct uu_exec *s)
{
	pthread_mutex_lock(&r->drain_lock);
	if (r->defer_running) {
		r->defer_recheck = true;
		pthread_mutex_unlock(&r->drain_lock);
		return;
	}
	r->defer_running = true;
	for (;;) {
		struct uu_req *h = r->defer_head;
		bool must_wait;

		r->defer_recheck = false;
		if (!h) {
			atomic_store(&r->drain_active, false);
			break;
		}
		must_wait = (h->flags & UU_REQ_DRAIN) || r->defer_after_drain;
		if (must_wait &&
		    atomic_load_explicit(&r->inflight, memory_order_acquire)) {
			if (r->defer_recheck)
				continue;
			break;
		}
		r->defer_head = h->defer_next;
		if (!r->defer_head)
			r->defer_tail = NULL;
		r->defer_after_drain = h->flags & UU_REQ_DRAIN;
		pthread_mutex_unlock(&r->drain_lock);
		queue_req(s, h, true, 0);
		uu_exec_flush(s);
		pthread_mutex_lock(&r->drain_lock);
	}
	r->defer_running = false;
	pthread_mutex_unlock(&r->drain_lock);
}

/*
 * UURING_ISSUE_VIA_TW on an SQPOLL ring: the head goes to the SQPOLL
 * thread's task_work queue (uu_tw_queue_issue) and is issued when that
 * runs (uu_req_tw_issue drops what is taken here: a ring reference, and
 * the in-flight count IO_DRAIN waits for).
 */
static void queue_head_via_tw(struct uu_exec *s, struct uu_req *req,
			      bool heap)
{
	/* the file as of submission (T4), as the kernel's SQPOLL thread
	 * took it issuing inline: a close right after changes nothing.  A
	 * number that cannot be duplicated is issued at once, to fail as
	 * it would have. */
	if (!(req->flags & UU_REQ_FIXED_FILE) && uu_req_take_file_ref(req)) {
		queue_req(s, req, heap, 0);
		return;
	}
	if (!heap && !(req = uu_req_to_heap(req)))
		return; /* out of memory: the request is lost, like a drop */
	atomic_fetch_add_explicit(&s->ring->refs, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->ring->inflight, 1, memory_order_relaxed);
	uu_tw_queue_issue(req);
}

void uu_req_queue_head(struct uu_exec *s, struct uu_req *req, bool heap)
{
	struct uu_ring *r = s->ring;

	if (likely(!(req->flags & UU_REQ_DRAIN)) &&
	    likely(!atomic_load_explicit(&r->drain_active, memory_order_acquire))) {
		if (unlikely(r->sqd) && unlikely(uu_knob(issue_via_tw)))
			queue_head_via_tw(s, req, heap);
		else
			queue_req_inl(s, req, heap, 0);
		return;
	}
	if (!heap && !(req = uu_req_to_heap(req)))
		return; /* out of memory: the request is lost, like a drop */
	uu_exec_flush(s);
	pthread_mutex_lock(&r->drain_lock);
	req->defer_next = NULL;
	if (r->defer_tail)
		r->defer_tail->defer_next = req;
	else
		r->defer_head = req;
	r->defer_tail = req;
	atomic_store(&r->drain_active, true);
	pthread_mutex_unlock(&r->drain_lock);
	process_defer(r, s);
}

/*
 * A parked request finished (its res is set): complete it and run what
 * follows in its chain, inside the context s of the finishing thread.
 * s is always a context of the request's own ring (uu_exec_finish_late
 * admits only those to its list, every other caller opens one on
 * req->ring): its CQE goes to s's batch, and its count leaves
 * ring->inflight after that batch is posted (inflight_put).
 */
static void finish_parked(struct uu_exec *s, struct uu_req *req)
{
	bool parked = !(req->flags & UU_REQ_NOT_PARKED);

	if (parked) {
		/* counted before it leaves the park list (park_lock orders
		 * the two for uu_cancel_settled) */
		atomic_fetch_add_explicit(&req->ring->finishing, 1,
					  memory_order_relaxed);
		s->finishing_puts++;
		uu_park_list_del(req);
	}
	if ((req->res < 0 && !(req->flags & UU_REQ_RES_NOFAIL) &&
	     !(uu_opdefs[req->opcode].errors_keep_links && req->res != -EBADF)) ||
	    (req->flags & UU_REQ_SHORT))
		uu_req_set_fail(req);
	if (req->flags & UU_REQ_CQE_POSTED) {
		const struct uu_opdef *def = &uu_opdefs[req->opcode];

		if (def->cleanup && (req->flags & UU_REQ_PREPPED))
			def->cleanup(req);
		req->flags &= ~UU_REQ_PREPPED;
	} else {
		req_complete(s, req);
	}
	queue_next(s, req);
	req_free(req, true);
	if (!parked)
		return;
	s->inflight_puts++; /* after its CQE is posted: inflight_put */
	/* the parked request's ring reference: dropped by uu_exec_end,
	 * after this context has posted its last CQE on the ring */
	s->ring_puts++;
}

void uu_req_finish_now(struct uu_req *req, bool submitter)
{
	struct uu_exec s;

	uu_exec_init(&s, req->ring, submitter);
	if (req->flags & UU_REQ_TW_REISSUE) {
		bool heap = true;

		/* flags is shared with a cancel (park_lock): see try_remove */
		pthread_mutex_lock(&req->ring->park_lock);
		req->flags &= ~UU_REQ_TW_REISSUE;
		pthread_mutex_unlock(&req->ring->park_lock);
		if (uu_req_cancelled(req)) {
			req->res = -ECANCELED;
		} else if (!issue_one(&s, &req, &heap, 0)) {
			/* waiting again (on the poller) */
			uu_exec_end(&s);
			return;
		}
	}
	finish_parked(&s, req);
	uu_exec_end(&s);
}

/* DEFER_TASKRUN: the task_work runner (core/task_work.c) runs a link
 * continuation queued by tw_push; dead: the ring lost its last fd */
void uu_req_tw_cont(struct uu_ring *r, struct uu_req *req, bool dead)
{
	struct uu_exec s;

	uu_exec_init(&s, r, true);
	req->flags &= ~UU_REQ_TW_CONT;
	if (req->tw_cancel || dead)
		cancel_chain(&s, req);
	else
		queue_req(&s, req, true, UU_ISSUE_F_CONT);
	s.inflight_puts++; /* after its CQEs are posted: inflight_put */
	s.ring_puts++; /* tw_push's reference, after the last CQE */
	uu_exec_end(&s);
}

/*
 * UURING_ISSUE_VIA_TW: the task_work runner issues a chain head queued by
 * queue_head_via_tw, in a context it shares with the heads it runs next
 * (core/task_work.c): their CQEs go out together and their chains go on
 * after all of them, as they would have after the submission batch.
 */
void uu_req_tw_issue(struct uu_exec *s, struct uu_req *req, bool dead)
{
	req->flags &= ~UU_REQ_TW_ISSUE;
	if (dead)
		cancel_chain(s, req);
	else
		queue_req(s, req, true, 0);
	s->inflight_puts++; /* after its CQEs are posted: inflight_put */
	s->ring_puts++; /* queue_head_via_tw's reference, after the last CQE */
}

/*
 * Parked requests that finished together (one io_getevents of the AIO
 * reaper).  Where the finisher posts the CQEs itself (not DEFER_TASKRUN,
 * SQPOLL or IOPOLL, which hand them on as uu_req_finish_async does), a
 * run of requests of one ring shares one context: its CQEs go out under
 * one CQ lock, in one commit, with one wakeup check, as the kernel's
 * task_work run flushes the completions of a batch together.
 */
void uu_req_finish_async_batch(struct uu_req **reqs, unsigned int n)
{
	struct uu_ring *cur = NULL;
	struct uu_exec s;

	for (unsigned int i = 0; i < n; i++) {
		struct uu_req *req = reqs[i];
		struct uu_ring *r = req->ring;

		if (req->iopoll_listed || r->sqd ||
		    (r->setup_flags & IORING_SETUP_DEFER_TASKRUN) ||
		    (req->flags & UU_REQ_TW_REISSUE)) {
			uu_req_finish_async(req);
			continue;
		}
		if (r != cur) {
			if (cur)
				uu_exec_end(&s);
			cur = r;
			uu_exec_init(&s, r, false);
		}
		finish_parked(&s, req);
	}
	if (cur)
		uu_exec_end(&s);
}

/*
 * IOPOLL: requests reaped by enter(GETEVENTS) (core/iopoll.c), completed
 * in one context, so their CQEs go out in one commit and their chains
 * continue after them, as io_do_iopoll flushes its batch.  The kernel's
 * polled completion records an error or a short count as the result only
 * (io_complete_rw_iopoll does not req_set_fail): the chain goes on.
 */
void uu_req_complete_reaped(struct uu_ring *r, struct uu_req *list)
{
	struct uu_exec s;
	struct uu_req *req, *next;

	uu_exec_init(&s, r, true);
	for (req = list; req; req = next) {
		next = req->iopoll_next;
		req->iopoll_next = NULL;
		req->flags &= ~UU_REQ_SHORT;
		req->flags |= UU_REQ_RES_NOFAIL;
		finish_parked(&s, req);
	}
	uu_exec_end(&s);
}

/*
 * io-wq worker: run a batch of parked requests (wq_next list) with
 * blocking allowed; their completions are posted with one lock per ring.
 */
void uu_req_run_batch_in_worker(struct uu_req *list)
{
	struct uu_exec s;
	struct uu_ring *cur = NULL;
	struct uu_req *req, *next;

	for (req = list; req; req = next) {
		struct uu_ring *r = req->ring;
		bool heap = true;

		next = req->wq_next;
		req->wq_next = NULL;
		if ((r->setup_flags & IORING_SETUP_DEFER_TASKRUN) || r->sqd ||
		    r->syscall_iopoll) {
			/* completions belong to the submitter / SQPOLL thread
			 * (IOPOLL: to the enter that reaps them) */
			uu_req_run_in_worker(req);
			continue;
		}
		if (r != cur) {
			if (cur)
				uu_exec_end(&s);
			uu_exec_init(&s, r, false);
			cur = r;
		}
		if (uu_req_cancelled(req)) {
			uu_iowq_issue_done();
			req->res = -ECANCELED;
		} else {
			/* anything but a quick op may block: count the
			 * worker out while it runs */
			bool may_block = !uu_opdefs[req->opcode].quick;
			bool done;

			if (may_block)
				uu_iowq_blocking(true);
			done = issue_one(&s, &req, &heap, UU_ISSUE_F_WORKER);
			/* before it completes: a cancel must not find it
			 * current here once it may be freed (T7) */
			uu_iowq_issue_done();
			if (may_block)
				uu_iowq_blocking(false);
			if (!done)
				continue; /* parked again (a pollable file) */
		}
		finish_parked(&s, req);
	}
	if (cur)
		uu_exec_end(&s);
}

/* io-wq worker: run a parked request with blocking allowed. */
void uu_req_run_in_worker(struct uu_req *req)
{
	struct uu_ring *r = req->ring;
	struct uu_exec s;
	bool heap = true;

	if (uu_req_cancelled(req)) {
		uu_iowq_issue_done();
		req->res = -ECANCELED;
		uu_req_finish_async(req);
		return;
	}
	uu_exec_init(&s, r, false);
	if (!issue_one(&s, &req, &heap, UU_ISSUE_F_WORKER)) {
		uu_iowq_issue_done();
		/* parked again (a pollable file): it stays on the parked
		 * list with its ring reference */
		uu_exec_end(&s);
		return;
	}
	uu_iowq_issue_done();
	uu_exec_end(&s);
	uu_req_finish_async(req);
}
