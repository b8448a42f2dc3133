/* SPDX-License-Identifier: MIT */
/*
 * TIMEOUT, LINK_TIMEOUT, TIMEOUT_REMOVE and the ring's timeout list
 * (ops/timeout.c).
 */
#ifndef UURING_OPS_TIMEOUT_H
#define UURING_OPS_TIMEOUT_H

#include "core/types.h"

int uu_timeout_prep(struct uu_req *req);
int uu_link_timeout_prep(struct uu_req *req);
int uu_link_timeout_issue(struct uu_req *req, unsigned int issue_flags);
int uu_timeout_issue(struct uu_req *req, unsigned int issue_flags);
int uu_timeout_remove_prep(struct uu_req *req);
int uu_timeout_remove_issue(struct uu_req *req, unsigned int issue_flags);

void uu_timeout_arm(struct uu_req *req);           /* parked TIMEOUT */
void uu_timeouts_flush_locked(struct uu_ring *ring); /* at CQ commit */
int uu_timeout_cancel(struct uu_ring *ring, uint64_t user_data);
struct uu_cancel_match;
/* ASYNC_CANCEL on the TIMEOUT list: 0, -EALREADY, -ENOENT; all: a count */
int uu_timeout_cancel_match(struct uu_ring *ring,
			    const struct uu_cancel_match *m, bool all);
void uu_timeouts_cancel_all(struct uu_ring *ring);
void uu_link_timeout_arm(struct uu_req *target);  /* target parked */
/* target completed: decide the LINK_TIMEOUT that follows it */
void uu_link_timeout_disarm(struct uu_req *target);

#endif /* UURING_OPS_TIMEOUT_H */
