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

/* per-op state, in the request's area (uu_req_cmd in core/types.h) */
struct uu_tmo_cmd {
	struct uu_timer t;
	struct uu_req *prev, *next; /* ring timeout list */
	int64_t ts_ns;      /* relative or absolute */
	uint32_t off;       /* completion count, 0 = none */
	uint32_t target;    /* cq sequence that completes it */
	uint32_t repeats;   /* multishot: remaining, 0 = inf */
	uint32_t flags;     /* IORING_TIMEOUT_* */
	bool listed;        /* on the ring's timeout list */
	struct uu_req *target_req; /* LINK_TIMEOUT: guarded req */
	int32_t lt_res;     /* LINK_TIMEOUT result once fired */
	bool fired;
};

struct uu_tmo_rm_cmd {
	uint64_t addr;
	uint32_t flags;
	int64_t ts_ns;
};

#endif /* UURING_OPS_TIMEOUT_H */
