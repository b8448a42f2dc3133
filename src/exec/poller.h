/* SPDX-License-Identifier: MIT */
/*
 * The readiness engine (exec/poller.c): parking a request on a file's
 * readiness, POLL_ADD and POLL_REMOVE, and its fork handlers.
 *
 * In-process wakers (exec/poller.c): the kernel runs a poll's wakeup in
 * the waker's context, so by the time write(2) to a pipe a request polls
 * returns, the poll's CQE is posted (on a ring without COOP_TASKRUN or
 * DEFER_TASKRUN) or queued as task_work.  The readiness engine is a
 * thread and would see that readiness a moment later, or never, if the
 * writer reads its data straight back.  Where the waker is in this
 * process and its call passes through the preload library (write, send,
 * close, ...), the library calls uu_poller_inproc_wake() after the call:
 * it waits for a poller round that has seen the readiness the call
 * created, before the call returns.
 *
 * uu_inproc_watched counts the files the readiness engine watches that a
 * writer in this process could wake (pipes, FIFOs, eventfds and other
 * anonymous-inode files, UNIX sockets, sockets bound to a loopback
 * address, character devices such as ptys); while it is 0, a wrapped call
 * costs one relaxed load.  A writer in another process, or one that calls
 * the system call directly, is not seen (docs/compatibility.md).
 */
#ifndef UURING_EXEC_POLLER_H
#define UURING_EXEC_POLLER_H

#include <stdatomic.h>

#include "core/types.h"

extern atomic_int uu_inproc_watched;

void uu_poller_inproc_wake_slow(void);

/* After a call that may have woken a file the readiness engine watches.
 * Preserves errno. */
static inline void uu_poller_inproc_wake(void)
{
	if (__builtin_expect(atomic_load_explicit(&uu_inproc_watched,
						  memory_order_relaxed) > 0,
			     0))
		uu_poller_inproc_wake_slow();
}

/* ---- POLL_ADD, POLL_REMOVE ---- */
int uu_poll_add_prep(struct uu_req *req);
int uu_poll_add_issue(struct uu_req *req, unsigned int issue_flags);
int uu_poll_remove_prep(struct uu_req *req);
int uu_poll_remove_issue(struct uu_req *req, unsigned int issue_flags);

/*
 * A request parked on the readiness engine is armed (on a file's waiter
 * list) a moment after it is put on the parked list: a cancel (a LINK_TIMEOUT
 * firing, ASYNC_CANCEL) may come in between.  Such a cancel is left to the
 * arming thread, which completes the request -ECANCELED instead of arming.
 */
enum { UU_POLLST_UNARMED, UU_POLLST_ARMED, UU_POLLST_TAKEN,
       UU_POLLST_CANCEL_AT_ARM,
       UU_POLLST_CANCEL_AT_TW /* cancelled while a wakeup was queued as
			       * task_work: that item completes it */ };
/* DEFER_TASKRUN: run a queued multishot wakeup in the submitter; true if
 * the request ended (res set: the caller finishes it) */
bool uu_poll_tw_shot(struct uu_req *req);
/* the batch that armed req ended: true when req ended (res set) */
bool uu_poll_release_hold(struct uu_req *req);
enum { UU_POLL_CANCEL_REMOVED, UU_POLL_CANCEL_DEFERRED, UU_POLL_CANCEL_BUSY };
int uu_poll_cancel_req(struct uu_req *req);
/* ---- readiness engine (exec/poller.c) ---- */
struct uu_pollfile;
#define UU_POLL_IN 1
#define UU_POLL_OUT 2
int uu_poll_arm(struct uu_req *req, int dir);
/* POLL_ADD/REMOVE support */
int uu_poll_arm_request(struct uu_req *req);
void uu_poll_cancel_ring(struct uu_ring *ring);
/* engine fds created at setup, not in the middle of the application's
 * own opens (each briefly takes the lowest free number) */
void uu_poller_prewarm(void);
void uu_poller_sync(void);
void uu_poller_atfork_prepare(void);
void uu_poller_atfork_parent(void);
void uu_poller_atfork_child(void);

/* per-op state, in the request's area (uu_req_cmd in core/types.h) */
struct uu_poll_cmd {
	uint32_t events;   /* EPOLL* interest, incl. ERR/HUP */
	uint32_t tw_mask;  /* poll_tw: the first wakeup's mask */
	uint32_t tw_nr;    /* poll_tw: wakeups since it was
			    * queued (0: only readiness
			    * found at arm, not yet seen
			    * by the readiness engine) */
	uint32_t arm_mask; /* multishot: ready at issue */
	bool arm_absorb;   /* the arm-time shot was posted
			    * before the readiness engine
			    * looked: its first look is that
			    * same readiness (P.lock) */
	bool ring_file;    /* polls a ring fd */
	bool ring_seen;    /* ring_file: the readiness engine
			    * reported its arm */
	bool multishot;
	bool armed;        /* on a pollfile's list */
	bool stat_known;   /* dev/ino filled by issue's fstat,
			    * for arm (same thread) */
	bool ring_evfd;    /* multishot on the ring's eventfd */
	bool tw_uring;     /* DEFER: the queued wakeup was the
			    * ring's own signal (one-shot) */
	uint32_t evfd_seen; /* evfd_signals last looked at */
	/* the file polled (cancel by fd): once armed, the
	 * request holds no fd of its own, the pollfile's
	 * dup keeps the file open (the fd number may be
	 * reused meanwhile) */
	dev_t dev;
	ino_t ino;
};

struct uu_poll_upd_cmd {
	uint64_t old_user_data, new_user_data;
	uint32_t events;
	bool update_events, update_user_data, multishot;
};

#endif /* UURING_EXEC_POLLER_H */
