/* SPDX-License-Identifier: MIT */
/*
 * Posting CQEs and committing them (core/cq.c).  Called with
 * completion_lock held unless the name says otherwise.
 */
#ifndef UURING_CORE_CQ_H
#define UURING_CORE_CQ_H

#include "core/types.h"

/* Called with completion_lock held. */
void uu_cq_post_locked(struct uu_ring *ring, uint64_t user_data, int32_t res,
		       uint32_t cflags, const uint64_t *big);
struct uu_cqe_rec;
void uu_cq_post_batch_locked(struct uu_ring *ring, const struct uu_cqe_rec *e,
			     unsigned int n);
void uu_cq_commit_locked(struct uu_ring *ring);
bool uu_cq_has_room_locked(struct uu_ring *ring, uint32_t pending);
void uu_cq_commit_sq_head_locked(struct uu_ring *ring, uint32_t sq_head);
bool uu_cq_flush_overflow_locked(struct uu_ring *ring);
void uu_cq_flush_overflow(struct uu_ring *ring);
static inline uint32_t uu_cq_ready(struct uu_ring *ring)
{
	return atomic_load_explicit(ring->cq_tail, memory_order_acquire) -
	       atomic_load_explicit(ring->cq_head, memory_order_acquire);
}

#endif /* UURING_CORE_CQ_H */
