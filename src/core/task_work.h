/* SPDX-License-Identifier: MIT */
/*
 * task_work (core/task_work.c): where a parked request's completion goes
 * once it finished off the submitting thread, and the ring's deferred
 * queue of completions and link continuations that the submitter
 * (DEFER_TASKRUN) or the SQPOLL thread runs.
 */
#ifndef UURING_TASK_WORK_H
#define UURING_TASK_WORK_H

#include <stdbool.h>

struct uu_ring;
struct uu_req;

/* a parked request finished (its res is set) in another thread: post its
 * CQE here, or queue it for whoever posts the ring's completions */
void uu_req_finish_async(struct uu_req *req);
/* queue req on its ring's deferred task_work queue; force: wake a
 * sleeping submitter whatever its lazy-wake count */
void uu_tw_queue(struct uu_req *req, bool force);
/* queue a multishot wakeup of req for the submitter */
void uu_tw_queue_poll_shot(struct uu_req *req);
/*
 * From the poller, for a parked request of a DEFER_TASKRUN ring that is
 * ready: instead of retrying it there, have the submitter issue it again
 * when it runs its task_work (as the kernel runs a poll-driven retry in
 * the task).  The issue function returns what this returns.
 */
int uu_tw_reissue(struct uu_req *req);
void uu_tw_reissue_commit(struct uu_req *req);
/* UURING_ISSUE_VIA_TW: an SQPOLL ring's chain head, issued by the
 * SQPOLL thread's task_work run */
void uu_tw_queue_issue(struct uu_req *req);
unsigned int uu_tw_run_deferred(struct uu_ring *ring, unsigned int max);
/* DEFER_TASKRUN: the submitter runs its task_work (__io_run_local_work) */
int uu_tw_run_local(struct uu_ring *ring, int min_events, int max_events);
/* the ring's last fd is gone: its task_work runs where it is queued */
void uu_tw_ring_dead(struct uu_ring *ring);
#define UU_LOCAL_TW_DEFAULT_MAX 20 /* the kernel's IO_LOCAL_TW_DEFAULT_MAX */
static inline int uu_tw_max_events(int min_events)
{
	return min_events > UU_LOCAL_TW_DEFAULT_MAX ? min_events :
						       UU_LOCAL_TW_DEFAULT_MAX;
}

/* what the task_work runner calls in the request lifecycle (core/req.c) */
void uu_req_finish_now(struct uu_req *req, bool submitter);
void uu_req_tw_cont(struct uu_ring *ring, struct uu_req *req, bool dead);
struct uu_exec;
void uu_req_tw_issue(struct uu_exec *s, struct uu_req *req, bool dead);

#endif
