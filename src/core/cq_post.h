/* SPDX-License-Identifier: MIT */
/*
 * Posting CQEs outside a request's own completion (core/cq_post.c): the
 * one place that takes the CQ lock to post, decides whether an extra CQE
 * fits, and commits.  The kernel's counterparts: io_cq_lock and
 * io_cq_unlock_post, io_post_aux_cqe, io_req_post_cqe, and
 * __io_submit_flush_completions for an execution context's batch.
 *
 * Where the caller runs travels in its issue flags (core/types.h):
 * UU_ISSUE_F_BATCH, inside an execution context of the request's ring,
 * whose batch an extra CQE joins behind the completions already batched;
 * UU_ISSUE_F_POLLER, the readiness engine's thread, which fills a shot at
 * once and commits it when the request waits again or finishes
 * (exec/poller.c); neither, posted and committed at once.
 */
#ifndef UURING_CQ_POST_H
#define UURING_CQ_POST_H

#include <stdbool.h>
#include <stdint.h>

#include "core/req.h"
#include "core/types.h"

/* The ring's CQ lock for a series of uu_cq_post_locked (io_cq_lock). */
void uu_cq_lock(struct uu_ring *ring);
/* Commits what this hold posted, then unlocks (io_cq_unlock_post). */
void uu_cq_unlock_post(struct uu_ring *ring);
/* Unlocks a hold that posted nothing. */
void uu_cq_unlock(struct uu_ring *ring);
/* Commits CQEs filled earlier without a commit (the poller's shots). */
void uu_cq_commit(struct uu_ring *ring);

/*
 * One CQE that belongs to no batch of this ring (a message from another
 * ring, a buffer tag without a request to carry it): posted and
 * committed now, behind an overflow backlog if there is one
 * (io_post_aux_cqe).
 */
void uu_post_aux_cqe(struct uu_ring *ring, uint64_t user_data, int32_t res,
		     uint32_t cflags);

/*
 * A multishot request's CQE with IORING_CQE_F_MORE (added here).  False
 * if the CQ has no room for it, or holds a backlog: the request must then
 * end with its final CQE (T14), as with the kernel's io_req_post_cqe.
 */
bool uu_req_post_cqe(struct uu_req *req, int32_t res, uint32_t cflags,
		     unsigned int issue_flags);
/* The same with the CQ lock already held (a timer's shot); commits. */
bool uu_req_post_cqe_locked(struct uu_req *req, int32_t res, uint32_t cflags);

/*
 * A CQE of req besides its final one, from its cleanup (which runs in the
 * completion path, core/req.c req_complete): in the completing context's
 * batch when that context is of req's ring, else posted at once.  No room
 * check: like the final CQE it overflows rather than being dropped.
 */
void uu_req_post_extra_cqe(struct uu_req *req, int32_t res, uint32_t cflags);

/* Posts and commits an execution context's batch in one CQ lock hold
 * (__io_submit_flush_completions). */
void uu_exec_flush_cqes(struct uu_exec *s);

/* Adds a CQE to the batch, flushing it first when it is full. */
static inline void uu_exec_post(struct uu_exec *s, uint64_t user_data,
				int32_t res, uint32_t cflags,
				const uint64_t *big)
{
	if (s->cb.nr == UU_COMPL_BATCH)
		uu_exec_flush_cqes(s);
	s->cb.e[s->cb.nr].user_data = user_data;
	s->cb.e[s->cb.nr].res = res;
	s->cb.e[s->cb.nr].cflags = cflags;
	s->cb.e[s->cb.nr].big[0] = big ? big[0] : 0;
	s->cb.e[s->cb.nr].big[1] = big ? big[1] : 0;
	s->cb.e[s->cb.nr].xj = 0;
	s->cb.nr++;
}

#endif
