/* SPDX-License-Identifier: MIT */
/*
 * Cancellation (core/cancel.c): ASYNC_CANCEL, REGISTER_SYNC_CANCEL, the
 * parked list, and the ring exit's cancel of everything.
 */
#ifndef UURING_CORE_CANCEL_H
#define UURING_CORE_CANCEL_H

#include "core/types.h"

int uu_async_cancel_prep(struct uu_req *req);

int uu_async_cancel_issue(struct uu_req *req, unsigned int issue_flags);

struct uu_cancel_match {
	uint64_t user_data;
	uint32_t flags;      /* IORING_ASYNC_CANCEL_* */
	dev_t dev;           /* CANCEL_FD: the file */
	ino_t ino;
	uint32_t opcode;
	/* ring exit: also the SQPOLL thread's io-wq, whoever cancels */
	bool whole_ring;
	/* REGISTER_SYNC_CANCEL: the application's task cancels, not a
	 * request (whose task context on an SQPOLL ring is the SQ thread's) */
	bool from_app;
};
/* 0: cancelled, -EALREADY: running, -ENOENT: none.  With ALL/ANY the
 * number of requests found.  Cancelled requests finish after the current
 * execution context's batch. */
int uu_cancel(struct uu_ring *ring, const struct uu_cancel_match *m);
/* io_cancel_req_match: whether m names req */
bool uu_cancel_match_req(const struct uu_req *req,
			 const struct uu_cancel_match *m);
int uu_cancel_everywhere(struct uu_ring *ring, const struct uu_cancel_match *m);
int uu_cancel_req(struct uu_req *req); /* one parked request */
/*
 * Takes a request parked on the readiness engine off what it waits on and
 * completes it with res (not as cancelled: its links go on), as late work
 * of the caller: the kernel's io_poll_remove when the updated poll is
 * ready at its re-arm.  0 done; -EALREADY when another thread is
 * completing it already.
 */
int uu_complete_parked(struct uu_req *target, int res);
/* the same, answering 1 where the kernel's cancel of that list answers
 * with its count (FUTEX_WAIT/WAITV, armed WAITID) */
int uu_cancel_req_counted(struct uu_req *req);
void uu_cancel_ring_all(struct uu_ring *ring); /* last close */
bool uu_cancel_still_parked(struct uu_ring *ring, const struct uu_cancel_match *m);
bool uu_cancel_settled(struct uu_ring *ring);
int uu_parked_timeouts(struct uu_ring *ring);
void uu_park_list_add(struct uu_req *req);
void uu_park_list_del(struct uu_req *req);

/* per-op state, in the request's area (uu_req_cmd in core/types.h) */
struct uu_cancel_cmd {
	uint64_t addr;
	uint32_t flags;
	int fd;
	uint32_t opcode;
};

#endif /* UURING_CORE_CANCEL_H */
