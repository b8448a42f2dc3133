// SPDX-License-Identifier: MIT
/*
 * Posting CQEs outside a request's own completion, and the flush of an
 * execution context's batch: see core/cq_post.h.  The slots, the backlog
 * and the commit itself are core/cq.c's (uu_cq_post_locked,
 * uu_cq_commit_locked), which all of these call with the CQ lock held.
 */
#include "core/cq.h"
#include "core/cq_post.h"
#include "core/req.h"
#include "core/tctx.h"
#include "core/types.h"
#include "core/xproc.h"

void uu_cq_lock(struct uu_ring *r)
{
	uu_shared_lock(r->completion_lock);
}

void uu_cq_unlock_post(struct uu_ring *r)
{
	uu_cq_commit_locked(r);
	pthread_mutex_unlock(r->completion_lock);
}

void uu_cq_unlock(struct uu_ring *r)
{
	pthread_mutex_unlock(r->completion_lock);
}

void uu_cq_commit(struct uu_ring *r)
{
	uu_cq_lock(r);
	uu_cq_unlock_post(r);
}

void uu_post_aux_cqe(struct uu_ring *r, uint64_t user_data, int32_t res,
		     uint32_t cflags)
{
	uu_cq_lock(r);
	uu_cq_post_locked(r, user_data, res, cflags, NULL);
	uu_cq_unlock_post(r);
}

bool uu_req_post_cqe_locked(struct uu_req *req, int32_t res, uint32_t cflags)
{
	struct uu_ring *r = req->ring;

	if (!uu_cq_has_room_locked(r, 0))
		return false;
	uu_cq_post_locked(r, req->user_data, res, cflags | IORING_CQE_F_MORE,
			  NULL);
	uu_cq_commit_locked(r);
	return true;
}

/* the batch an extra CQE of req joins, if the caller runs in one */
static struct uu_exec *batch_of(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_exec *s;

	if (!(issue_flags & UU_ISSUE_F_BATCH))
		return NULL;
	s = uu_tctx.exec;
	return s && s->ring == req->ring ? s : NULL;
}

/*
 * Batched, the room check counts the CQEs the batch holds, and the shot
 * goes in behind them.  On the poller, the shots of one wakeup and the
 * final CQE appear together, as the kernel's task_work run fills its aux
 * CQEs and commits them once at the end (io_req_post_cqe sets cq_flush):
 * an application woken by the first shot does not find the rest missing.
 */
bool uu_req_post_cqe(struct uu_req *req, int32_t res, uint32_t cflags,
		     unsigned int issue_flags)
{
	struct uu_ring *r = req->ring;
	struct uu_exec *s = batch_of(req, issue_flags);
	bool ok;

	cflags |= IORING_CQE_F_MORE;
	uu_cq_lock(r);
	ok = uu_cq_has_room_locked(r, s ? s->cb.nr : 0);
	if (ok && !s) {
		uu_cq_post_locked(r, req->user_data, res, cflags, NULL);
		if (issue_flags & UU_ISSUE_F_POLLER)
			req->cq_uncommitted = true; /* exec/poller.c commits */
		else
			uu_cq_commit_locked(r);
	}
	uu_cq_unlock(r);
	if (ok && s)
		uu_exec_post(s, req->user_data, res, cflags, NULL);
	return ok;
}

void uu_req_post_extra_cqe(struct uu_req *req, int32_t res, uint32_t cflags)
{
	/* the completion path always runs in an execution context; one of
	 * another ring (a request finished by a cancel from there) is not
	 * this ring's batch */
	struct uu_exec *s = batch_of(req, UU_ISSUE_F_BATCH);

	if (s)
		uu_exec_post(s, req->user_data, res, cflags, NULL);
	else
		uu_post_aux_cqe(req->ring, req->user_data, res, cflags);
}

void uu_exec_flush_cqes(struct uu_exec *s)
{
	struct uu_ring *r = s->ring;
	unsigned int i;

	if (!s->cb.nr)
		return;
	uu_cq_lock(r);
	uu_cq_post_batch_locked(r, s->cb.e, s->cb.nr);
	/* under the CQ lock, in the same hold as the posts: a survivor
	 * posting this process's orphans (xproc/xlife.c) sees the CQE and the
	 * journal slot freed, or neither */
	for (i = 0; i < s->cb.nr; i++)
		if (unlikely(s->cb.e[i].xj))
			uu_xj_release(r, s->cb.e[i].xj);
	if (s->publish_sq_head) {
		s->publish_sq_head = false;
		s->sq_head_published = true;
		uu_cq_commit_sq_head_locked(r, r->sq_cached_head);
	} else {
		uu_cq_commit_locked(r);
	}
	uu_cq_unlock(r);
	s->cb.nr = 0;
}
