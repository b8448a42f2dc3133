// SPDX-License-Identifier: MIT
/*
 * Where a request goes when its issue would block (the kernel's
 * io_queue_async: io_arm_poll_handler or io_queue_iowq), as the issue's
 * UU_ISSUE_* code names it: io-wq, the readiness engine (a read or write
 * waiting for readiness, a POLL_ADD), Linux AIO for O_DIRECT, the timer
 * thread, task_work, a device of the block-queue model or a URING_CMD
 * file type.  A parked request lives on the heap, holds its own file
 * reference where it needs one (T4), a reference to its ring, and counts
 * in ring->inflight; core/req.c issues and completes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "core/cancel.h"
#include "core/iopoll.h"
#include "core/park.h"
#include "core/req.h"
#include "core/tctx.h"
#include "core/types.h"
#include "dev/blkq.h"
#include "exec/aio.h"
#include "exec/poller.h"
#include "ops/timeout.h"
#include "ops/uring_cmd.h"
#include "util/fdutil.h"

/*
 * T4: a request that leaves the submitting thread holds its own
 * reference to the file, so a close() and reuse of the number by the
 * application cannot redirect it.  The dup lives until the request ends.
 */
int uu_req_take_file_ref(struct uu_req *req)
{
	int fd;

	if (!uu_opdefs[req->opcode].needs_file || req->fd_owned || req->fd < 0)
		return 0;
	fd = uu_fd_dup_reserved(req->fd);
	if (fd < 0)
		return fd;
	req->fd = fd;
	req->fd_owned = true;
	return 0;
}

/* batched: queued to io-wq at this context's next flush */
static void punt_append(struct uu_exec *s, struct uu_req *req, bool unbound)
{
	req->wq_unbound = unbound;
	req->wq_next = NULL;
	if (s->punt_tail)
		s->punt_tail->wq_next = req;
	else
		s->punt_head = req;
	s->punt_tail = req;
}

/*
 * An O_DIRECT request AIO cannot take: a worker, uncapped.  It takes its
 * file reference now (AIO requests hold none until here, see uu_park);
 * if the number was closed meanwhile, it ends with that error.
 */
static void aio_fallback(struct uu_exec *s, struct uu_req *req)
{
	struct uu_ring *r = req->ring;
	int ret = uu_req_take_file_ref(req);

	if (ret) {
		req->res = ret;
		uu_exec_finish_late(req);
		return;
	}
	uu_stat_inc(r, route_iowq);
	pthread_mutex_lock(&r->park_lock);
	req->parked_on = UU_PARKED_IOWQ;
	pthread_mutex_unlock(&r->park_lock);
	punt_append(s, req, true);
}

/*
 * The batch's O_DIRECT requests, in io_submit calls of up to
 * UU_AIO_BATCH; what AIO refuses goes to io-wq (punted right after).
 * A parked AIO request cannot be cancelled meanwhile (-EALREADY: the
 * cancel leaves it alone), so nobody else touches it until it is
 * submitted.
 */
void uu_exec_aio_flush(struct uu_exec *s)
{
	while (s->aio_head) {
		struct uu_req *v[UU_AIO_BATCH];
		struct uu_ring *rings[UU_AIO_BATCH];
		unsigned int n = 0, done;

		while (n < UU_AIO_BATCH && s->aio_head) {
			v[n++] = s->aio_head;
			s->aio_head = s->aio_head->wq_next;
		}
		if (!s->aio_head)
			s->aio_tail = NULL;
		/* the rings first: once submitted, a request may be the
		 * reaper's to finish and free */
		for (unsigned int i = 0; i < n; i++)
			rings[i] = v[i]->ring;
		done = uu_aio_submit_batch(v, n);
		for (unsigned int i = 0; i < done; i++)
			uu_stat_inc(rings[i], route_aio);
		for (unsigned int i = done; i < n; i++)
			aio_fallback(s, v[i]);
	}
}

static uint8_t park_place(int how)
{
	switch (how) {
	case UU_ISSUE_PUNT:
	case UU_ISSUE_PUNT_UNBOUND:
		return UU_PARKED_IOWQ;
	case UU_ISSUE_PARK_TIMEOUT:
		return UU_PARKED_TIMEOUT;
	case UU_ISSUE_PARK_AIO_READ:
	case UU_ISSUE_PARK_AIO_WRITE:
		return UU_PARKED_AIO;
	case UU_ISSUE_PARK_TW:
	case UU_ISSUE_PARK_REQUEUE:
		return UU_PARKED_TW;
	case UU_ISSUE_PARK_DEV:
		return UU_PARKED_DEV;
	case UU_ISSUE_PARK_CMD:
		return UU_PARKED_CMD;
	default:
		return UU_PARKED_POLL;
	}
}

/*
 * The part of a park common to every backend: the request moves to the
 * heap, takes its file reference where it needs one, joins the ring's
 * park list (or, re-parked by a worker, changes its place there), is
 * listed for IOPOLL and arms its LINK_TIMEOUT.  0 or -errno.
 */
static int park_prepare(struct uu_req **reqp, bool *heap, int how)
{
	struct uu_req *req = *reqp;
	struct uu_ring *r = req->ring;
	int ret;

	if (!*heap) {
		req = uu_req_to_heap(req);
		if (!req)
			return -ENOMEM;
		*reqp = req;
		*heap = true;
	}
	/* a POLL_ADD is armed right here, in this thread, and then holds
	 * its file through the readiness engine's registration: a dup per
	 * request would double the fds a program polling many files needs
	 * (liburing's poll-mshot-update arms 5000 pipes).  An O_DIRECT
	 * request is io_submit'ed before this enter returns (aio_flush), and
	 * from then the kernel's iocb holds the file: it resolves the number
	 * within the submitting call, as the kernel's issue does, and a dup
	 * and its close (two syscalls of about six per read) buy nothing.
	 * aio_fallback takes the reference if it goes to io-wq instead. */
	/* A request for a device of the block-queue model (dev/) does not
	 * need the file either: the device was recognised at issue and
	 * never touches the file. */
	ret = how == UU_ISSUE_PARK_POLLREQ || how == UU_ISSUE_PARK_AIO_READ ||
			      how == UU_ISSUE_PARK_AIO_WRITE ||
			      how == UU_ISSUE_PARK_DEV ?
		      0 :
		      uu_req_take_file_ref(req);
	if (ret)
		return ret;
	if (!req->on_park_list) {
		atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&r->inflight, 1, memory_order_relaxed);
		req->on_park_list = true;
		req->parked_on = park_place(how);
		uu_park_list_add(req);
	} else {
		/* re-parked by a worker (pollable file): cancels look at
		 * parked_on under park_lock */
		bool cancelled;

		pthread_mutex_lock(&r->park_lock);
		/* a cancel that found it running in the worker (-EALREADY)
		 * marked it: it must not start waiting now (the kernel's
		 * io-wq checks its work's cancel flag the same way) */
		cancelled = uu_req_cancelled(req);
		req->parked_on = park_place(how);
		pthread_mutex_unlock(&r->park_lock);
		if (cancelled)
			return -ECANCELED;
	}
	/* IOPOLL: enter(GETEVENTS) reaps it (core/iopoll.c); listed before
	 * AIO or io-wq can finish it */
	if (unlikely(r->syscall_iopoll) && !req->iopoll_listed &&
	    uu_opdefs[req->opcode].iopoll_queue &&
	    (how == UU_ISSUE_PARK_AIO_READ || how == UU_ISSUE_PARK_AIO_WRITE ||
	     how == UU_ISSUE_PUNT || how == UU_ISSUE_PUNT_UNBOUND ||
	     how == UU_ISSUE_PARK_DEV))
		uu_iopoll_add(req);
	/* a LINK_TIMEOUT guards this request from now on */
	if ((req->flags & UU_REQ_ARM_LTIMEOUT) && req->link &&
	    req->link->opcode == IORING_OP_LINK_TIMEOUT) {
		req->flags &= ~UU_REQ_ARM_LTIMEOUT;
		uu_link_timeout_arm(req);
	}
	return 0;
}

/*
 * UU_ISSUE_PARK_REQUEUE: the kernel's poll arm finds the socket ready and
 * queues the retry as task_work, which runs once the submission is done,
 * behind what the batch queued before it; a retry at the cap again goes
 * to the back (IOU_REQUEUE).  So requests flooded at once take turns
 * (MULTISHOT_MAX_RETRY; tests/test_diff_bundle fair_mode).  Parked on
 * task_work, so a cancel finds it (core/cancel.c try_remove).
 */
static void park_requeue(struct uu_exec *s, struct uu_req *req)
{
	struct uu_ring *r = req->ring;

	uu_stat_inc(r, route_poll);
	pthread_mutex_lock(&r->park_lock);
	req->flags |= UU_REQ_TW_REISSUE;
	pthread_mutex_unlock(&r->park_lock);
	req->late_next = NULL;
	if (s->late_tail)
		s->late_tail->late_next = req;
	else
		s->late_head = req;
	s->late_tail = req;
}

/* An O_DIRECT read or write: Linux AIO, or io-wq where AIO cannot take
 * it (counted in route_aio or route_iowq when it goes) */
static void park_aio(struct uu_exec *s, struct uu_req *req)
{
	if (uu_aio_usable(req)) {
		/* io_submit'ed with the batch's others (aio_flush);
		 * req->park keeps the direction until then */
		req->wq_next = NULL;
		if (s->aio_tail)
			s->aio_tail->wq_next = req;
		else
			s->aio_head = req;
		s->aio_tail = req;
		return;
	}
	aio_fallback(s, req);
}

/* POLL_ADD: armed on the readiness engine now */
static void park_pollreq(struct uu_exec *s, struct uu_req *req)
{
	struct uu_ring *r = req->ring;
	bool hold;

	/* its wakeups during this batch run at the batch's end, as
	 * the kernel's task_work after io_submit_sqes (a DEFER_TASKRUN
	 * ring's run at GETEVENTS anyway) */
	hold = !(r->setup_flags & IORING_SETUP_DEFER_TASKRUN) &&
	       uu_tctx.exec == s;
	req->poll_hold = hold;
	/* once armed, a request not held may complete and be freed
	 * by another thread at once (a worker's park, a DEFER ring's
	 * task_work): only the local copy is read after the arm */
	if (!uu_poll_arm_request(req)) {
		uu_stat_inc(r, route_poll);
		if (hold) {
			req->hold_next = s->hold_head;
			s->hold_head = req;
		}
		return;
	}
	/* completed at once (no poll support: always ready) */
	req->late_inline = true;
	uu_exec_finish_late(req);
}

/* A read or write that would block: it waits for readiness */
static void park_poll(struct uu_req *req, int how)
{
	uu_stat_inc(req->ring, route_poll);
	if (uu_poll_arm(req, how == UU_ISSUE_PARK_POLLIN ?
				     UU_POLL_IN : UU_POLL_OUT)) {
		/* cancelled before it was armed */
		req->res = -ECANCELED;
		req->late_inline = true;
		uu_exec_finish_late(req);
	}
}

/*
 * Hands the request to the backend how names (core/types.h UU_ISSUE_*).
 * true: it is parked (another thread, or this context's flush, goes on
 * with it); false: it could not be parked, *res is the CQE result.
 */
bool uu_exec_park(struct uu_exec *s, struct uu_req **reqp, bool *heap, int how,
		  int *res)
{
	struct uu_req *req;
	int ret = park_prepare(reqp, heap, how);

	if (ret) {
		*res = ret;
		return false;
	}
	req = *reqp;
	switch (how) {
	case UU_ISSUE_PUNT:
	case UU_ISSUE_PUNT_UNBOUND:
		uu_stat_inc(req->ring, route_iowq);
		punt_append(s, req, how == UU_ISSUE_PUNT_UNBOUND);
		break;
	case UU_ISSUE_PARK_TIMEOUT:
		uu_timeout_arm(req);
		break;
	case UU_ISSUE_PARK_DEV:
		/* the device ends it (its route counted at issue) */
		uu_blkq_park(req);
		break;
	case UU_ISSUE_PARK_CMD:
		/* the file type's handler, now with a stable request */
		uu_uring_cmd_park(req);
		break;
	case UU_ISSUE_PARK_TW:
		/* finished already: the kernel's io_req_task_work_add, so
		 * its CQE comes after the batch's inline ones (and on a
		 * DEFER_TASKRUN ring at the submitter's GETEVENTS) */
		uu_exec_finish_late(req);
		break;
	case UU_ISSUE_PARK_REQUEUE:
		park_requeue(s, req);
		break;
	case UU_ISSUE_PARK_AIO_READ:
	case UU_ISSUE_PARK_AIO_WRITE:
		park_aio(s, req);
		break;
	case UU_ISSUE_PARK_POLLREQ:
		park_pollreq(s, req);
		break;
	default:
		park_poll(req, how);
		break;
	}
	return true;
}
