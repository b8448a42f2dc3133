// SPDX-License-Identifier: MIT
/*
 * Cancellation of parked requests: ASYNC_CANCEL, LINK_TIMEOUT, POLL_REMOVE
 * (poller), TIMEOUT_REMOVE (timeouts).  Every parked request is on its
 * ring's parked list; a cancel finds it there and removes it from where it
 * waits: the poller (completes -ECANCELED), the io-wq queue (not started:
 * -ECANCELED), or, running in an io-wq worker, reports -EALREADY and
 * interrupts the worker (T7: where the kernel sets TIF_NOTIFY_SIGNAL,
 * uu_iowq_cancel_running sets the worker's cancel word and sends it the
 * private signal, see util/cpsys.h; the request then completes with what
 * its interrupted call left, e.g. -ERESTARTSYS for OPENAT), or the
 * timeout list.  With ALL/ANY, io-wq work counts as the kernel counts it
 * (tally_iowq).  At the ring's last close everything parked is cancelled
 * (uu_cancel_ring_all).
 *
 * Lock order: park_lock, then the poller's or io-wq's lock (io-wq:
 * the work-list lock, or the workers lock then a worker's cur_lock).  Requests
 * found are finished after the lock is dropped, after the current batch
 * (the kernel completes cancelled requests through task_work).
 */
#include <errno.h>
#include <sys/stat.h>

#include "core/cancel.h"
#include "core/req.h"
#include "core/rsrc.h"
#include "core/types.h"
#include "core/xproc.h"
#include "exec/iowq.h"
#include "exec/poller.h"
#include "ops/timeout.h"
#include "ops/uring_cmd.h"

void uu_park_list_add(struct uu_req *req)
{
	struct uu_ring *r = req->ring;

	pthread_mutex_lock(&r->park_lock);
	req->park_prev = NULL;
	req->park_next = r->parked;
	if (r->parked)
		r->parked->park_prev = req;
	r->parked = req;
	pthread_mutex_unlock(&r->park_lock);
}

void uu_park_list_del(struct uu_req *req)
{
	struct uu_ring *r = req->ring;

	pthread_mutex_lock(&r->park_lock);
	if (req->park_prev)
		req->park_prev->park_next = req->park_next;
	else if (r->parked == req)
		r->parked = req->park_next;
	if (req->park_next)
		req->park_next->park_prev = req->park_prev;
	req->park_prev = req->park_next = NULL;
	pthread_mutex_unlock(&r->park_lock);
}

static bool file_matches(const struct uu_req *req,
			 const struct uu_cancel_match *m)
{
	const struct uu_poll_cmd *poll_st = uu_cmd(req, poll);
	struct stat st;

	if (req->opcode == IORING_OP_POLL_ADD && req->fd < 0)
		return poll_st->dev == m->dev && poll_st->ino == m->ino;
	if (!uu_opdefs[req->opcode].needs_file || req->fd < 0 || fstat(req->fd, &st))
		return false;
	/* an open file description is compared by its inode: two opens of
	 * one file are not told apart (documented) */
	return st.st_dev == m->dev && st.st_ino == m->ino;
}

/*
 * io_cancel_req_match, ignoring whether it was already cancelled (also
 * for the TIMEOUT list, ops/timeout.c uu_timeout_cancel_match)
 */
bool uu_cancel_match_req(const struct uu_req *req,
			 const struct uu_cancel_match *m)
{
	bool match_ud = !(m->flags & (IORING_ASYNC_CANCEL_FD |
				      IORING_ASYNC_CANCEL_OP)) ||
			(m->flags & IORING_ASYNC_CANCEL_USERDATA);

	if (m->flags & IORING_ASYNC_CANCEL_ANY)
		return true;
	if ((m->flags & IORING_ASYNC_CANCEL_FD) && !file_matches(req, m))
		return false;
	if ((m->flags & IORING_ASYNC_CANCEL_OP) && req->opcode != m->opcode)
		return false;
	if (match_ud && req->user_data != m->user_data)
		return false;
	return true;
}

static bool matches(struct uu_req *req, const struct uu_cancel_match *m)
{
	/* already cancelled by this or an earlier pass: not again; nor one
	 * that finished and only waits for its completion to be posted */
	return !uu_req_cancelled(req) && req->parked_on != UU_PARKED_DONE &&
	       uu_cancel_match_req(req, m);
}

/*
 * The SQPOLL thread's io-wq pool (NULL: not an SQPOLL ring, or ring
 * exit).  The kernel cancels io-wq work first in the canceller's own
 * task context (req->tctx: for an ASYNC_CANCEL on an SQPOLL ring, the SQ
 * thread's), then in those of the tasks on the ring's tctx_list, which
 * the SQ thread never joins (it does not enter): so a REGISTER_SYNC_CANCEL
 * from the application never finds work the SQ thread queued, and an
 * ASYNC_CANCEL that finds it running interrupts it but answers as if it
 * had found nothing (io_try_cancel drops the -EALREADY of its own pool).
 * Ring exit cancels in the SQ thread's pool too (whole_ring).
 */
static struct uu_iowq *sq_pool(struct uu_ring *r,
			       const struct uu_cancel_match *m)
{
	if (!r->sqd || m->whole_ring)
		return NULL;
	return uu_sqd_iowq(r->sqd);
}

/* How many TIMEOUT requests are armed on r (by this process). */
int uu_parked_timeouts(struct uu_ring *r)
{
	struct uu_req *req;
	int n = 0;

	pthread_mutex_lock(&r->park_lock);
	for (req = r->parked; req; req = req->park_next)
		n += req->parked_on == UU_PARKED_TIMEOUT &&
		     req->opcode == IORING_OP_TIMEOUT;
	pthread_mutex_unlock(&r->park_lock);
	return n;
}

/*
 * Whether every parked request this process took off the park list has
 * its CQE posted: a request that finishes leaves the list before its
 * CQE is committed (finish_parked, then the context's flush), and a
 * REGISTER_SYNC_CANCEL returns only once the CQE of what it cancelled is
 * there, as the kernel's io_sync_cancel runs the task_work that posts it.
 */
bool uu_cancel_settled(struct uu_ring *r)
{
	/* acquire: pairs with the release in inflight_put (core/req.c) */
	return !atomic_load_explicit(&r->finishing, memory_order_acquire);
}

/* Is anything matching m still parked (cancelled or not)? */
bool uu_cancel_still_parked(struct uu_ring *r, const struct uu_cancel_match *m)
{
	struct uu_iowq *sqwq = sq_pool(r, m);
	struct uu_req *req;
	bool found = false;

	if (!m->from_app)
		sqwq = NULL;	/* a request's: the SQ thread's own pool */
	pthread_mutex_lock(&r->park_lock);
	for (req = r->parked; req && !found; req = req->park_next)
		found = req->parked_on != UU_PARKED_TIMEOUT &&
			req->parked_on != UU_PARKED_DONE &&
			req->parked_on != UU_PARKED_CMD &&
			!(sqwq && req->parked_on == UU_PARKED_IOWQ &&
			  req->wq == sqwq) &&
			uu_cancel_match_req(req, m);
	pthread_mutex_unlock(&r->park_lock);
	return found;
}

/*
 * With park_lock held.  0: removed (the caller finishes it); 1: cancelled,
 * another thread finishes it (the one arming it on the readiness engine,
 * or the submitter running its task_work); -EALREADY: running.
 */
static int try_remove(struct uu_req *req)
{
	switch (req->parked_on) {
	case UU_PARKED_POLL:
		switch (uu_poll_cancel_req(req)) {
		case UU_POLL_CANCEL_REMOVED:
			return 0;
		case UU_POLL_CANCEL_DEFERRED:
			return 1;
		default:
			return -EALREADY; /* the poller is completing it */
		}
	case UU_PARKED_IOWQ:
		if (uu_iowq_cancel_pending(req))
			return 0;
		/* running: interrupt its worker's system call (T7); taken
		 * off the queue but not started (a quick batch): it sees
		 * the flag and completes -ECANCELED */
		uu_req_mark_cancelled(req);
		uu_iowq_cancel_running(req);
		return -EALREADY;
	case UU_PARKED_TW:
		/* ready, queued for the submitter to issue again: it will
		 * complete it with -ECANCELED instead (uu_tw_reissue) */
		if (!(req->flags & UU_REQ_TW_REISSUE))
			return -EALREADY;
		uu_req_mark_cancelled(req);
		return 1;
	case UU_PARKED_CMD:
		/* its handler holds it: like the kernel's io_try_cancel,
		 * a LINK_TIMEOUT finds nothing to cancel (ops/uring_cmd.h) */
		return -ENOENT;
	default:
		return -EALREADY;
	}
}

/*
 * Requests on a kernel list whose cancel answers with the number it
 * removed (io_futex_cancel, io_waitid_cancel) rather than 0: FUTEX_WAIT,
 * FUTEX_WAITV and a WAITID armed on the readiness engine.  park_lock.
 */
static bool cancel_counts(const struct uu_req *req)
{
	return req->opcode == IORING_OP_FUTEX_WAIT ||
	       req->opcode == IORING_OP_FUTEX_WAITV ||
	       (req->opcode == IORING_OP_WAITID &&
		req->parked_on != UU_PARKED_IOWQ);
}

/* One parked request; *counts: its list answers with a count (above). */
static int cancel_one(struct uu_req *target, bool *counts)
{
	struct uu_ring *r = target->ring;
	int ret;

	pthread_mutex_lock(&r->park_lock);
	*counts = cancel_counts(target);
	ret = try_remove(target);
	/* (not when 1: the finishing thread owns target's flags now) */
	if (!ret)
		uu_req_mark_cancelled(target);
	pthread_mutex_unlock(&r->park_lock);
	if (!ret) {
		target->res = -ECANCELED;
		uu_exec_finish_late(target);
	}
	return ret > 0 ? 0 : ret;
}

int uu_complete_parked(struct uu_req *target, int res)
{
	struct uu_ring *r = target->ring;
	int ret;

	pthread_mutex_lock(&r->park_lock);
	ret = target->parked_on == UU_PARKED_POLL ? try_remove(target) :
						    -EALREADY;
	pthread_mutex_unlock(&r->park_lock);
	if (ret)
		return -EALREADY;
	target->res = res;
	uu_exec_finish_late(target);
	return 0;
}

int uu_cancel_req_counted(struct uu_req *target)
{
	bool counts;
	int ret = cancel_one(target, &counts);

	return !ret && counts ? 1 : ret;
}

int uu_cancel_req(struct uu_req *target)
{
	bool counts;

	return cancel_one(target, &counts);
}

/*
 * How ALL/ANY count io-wq work (observed on the kernel, which cancels a
 * whole io-wq in one io_wq_cancel_cb call and then skips, by sequence,
 * what that call already matched): the canceller's own pool counts 1 if
 * queued work was removed and none was running, else 0; another
 * thread's pool counts 1 if anything matched.  Requests elsewhere (the
 * poller) count one each, except FUTEX_WAIT/WAITV and armed WAITIDs,
 * which count 1 in all (io_futex_cancel and io_waitid_cancel cancel all
 * of them in one call, and answer a single cancel with that count).
 */
struct wq_tally {
	struct uu_iowq *wq;
	bool pending, running;
};

static int tally_iowq(struct wq_tally *t, unsigned int n)
{
	struct uu_iowq *own = uu_iowq_current();
	int nr = 0;

	for (unsigned int i = 0; i < n; i++) {
		if (t[i].wq == own && own)
			nr += t[i].pending && !t[i].running;
		else
			nr += t[i].pending || t[i].running;
	}
	return nr;
}

int uu_cancel(struct uu_ring *r, const struct uu_cancel_match *m)
{
	bool all = m->flags & (IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_ANY);
	struct uu_req *req, *done = NULL;
	struct wq_tally tally[8];
	unsigned int nt = 0;
	int nr = 0, ret = -ENOENT;
	bool futex, futex_counted = false;
	struct uu_iowq *sqwq = sq_pool(r, m);
	/* an ASYNC_CANCEL runs in the SQ thread's task context */
	bool sq_own = !m->from_app;

	pthread_mutex_lock(&r->park_lock);
	for (req = r->parked; req; req = req->park_next) {
		bool iowq = req->parked_on == UU_PARKED_IOWQ;
		bool in_sq = iowq && sqwq && req->wq == sqwq;
		unsigned int t;

		/* a URING_CMD its handler holds is not on any list the
		 * kernel's io_try_cancel walks: only ring exit reaches it */
		if (req->parked_on == UU_PARKED_TIMEOUT ||
		    req->parked_on == UU_PARKED_CMD || !matches(req, m))
			continue;
		if (in_sq && !sq_own)
			continue;	/* not on the tctx_list (sq_pool) */
		/* read now: once removed, another thread may own req */
		futex = cancel_counts(req);
		ret = try_remove(req);
		/* (not when 1: the finishing thread owns the request) */
		if (ret <= 0)
			uu_req_mark_cancelled(req);
		if (!ret) {
			req->late_next = done;
			done = req;
		}
		if (ret > 0)
			ret = 0; /* completed by another thread */
		/* the kernel's io_futex_cancel answers with its count */
		if (!ret && futex)
			ret = 1;
		if (!all && in_sq && ret == -EALREADY) {
			/* interrupted, reported as not found (sq_pool) */
			ret = -ENOENT;
			continue;
		}
		if (!all)
			break;
		if (futex) {
			/* the kernel's io_futex_cancel removes every match in
			 * one call, which the ALL loop counts once */
			nr += !futex_counted;
			futex_counted = true;
			continue;
		}
		if (!iowq) {
			nr++;
			continue;
		}
		for (t = 0; t < nt && tally[t].wq != req->wq; t++)
			;
		if (t == nt) {
			if (nt == sizeof(tally) / sizeof(tally[0])) {
				nr++; /* more pools than any program has */
				continue;
			}
			tally[nt++] = (struct wq_tally){ req->wq, false, false };
		}
		if (ret)
			tally[t].running = true;
		else
			tally[t].pending = true;
	}
	pthread_mutex_unlock(&r->park_lock);
	nr += tally_iowq(tally, nt);
	while (done) {
		req = done;
		done = req->late_next;
		req->res = -ECANCELED;
		uu_exec_finish_late(req);
	}
	/*
	 * Then the TIMEOUT list (io_try_cancel's io_timeout_cancel, matched
	 * by io_cancel_req_match like the rest, never for CANCEL_FD).  Not
	 * at ring exit: TIMEOUTs end there their own way (xproc/xproc.c).
	 */
	if ((all || ret == -ENOENT) && !m->whole_ring &&
	    !(m->flags & IORING_ASYNC_CANCEL_FD)) {
		int t = uu_timeout_cancel_match(r, m, all);

		if (all)
			nr += t;
		else
			ret = t;
	}
	return all ? nr : ret;
}

/* ---- IORING_OP_ASYNC_CANCEL ---- */

#define CANCEL_FLAGS                                                        \
	(IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_FD |                 \
	 IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_FD_FIXED |           \
	 IORING_ASYNC_CANCEL_USERDATA | IORING_ASYNC_CANCEL_OP)

int uu_async_cancel_prep(struct uu_req *req)
{
	struct uu_cancel_cmd *cancel_st = uu_cmd(req, cancel);
	const struct io_uring_sqe *sqe = &req->sqe;

	if (req->flags & UU_REQ_BUFFER_SELECT)
		return -EINVAL;
	if (sqe->off || sqe->splice_fd_in)
		return -EINVAL;
	cancel_st->addr = sqe->addr;
	cancel_st->flags = sqe->cancel_flags;
	if (cancel_st->flags & ~CANCEL_FLAGS)
		return -EINVAL;
	if (cancel_st->flags & IORING_ASYNC_CANCEL_FD) {
		if (cancel_st->flags & IORING_ASYNC_CANCEL_ANY)
			return -EINVAL;
		cancel_st->fd = sqe->fd;
	}
	if (cancel_st->flags & IORING_ASYNC_CANCEL_OP) {
		if (cancel_st->flags & IORING_ASYNC_CANCEL_ANY)
			return -EINVAL;
		cancel_st->opcode = sqe->len;
	}
	return 0;
}

int uu_async_cancel_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_cancel_cmd *cancel_st = uu_cmd(req, cancel);
	struct uu_cancel_match m = {
		.user_data = cancel_st->addr,
		.flags = cancel_st->flags,
		.opcode = cancel_st->opcode,
	};

	(void)issue_flags;
	if (m.flags & IORING_ASYNC_CANCEL_FD) {
		struct stat st;
		int fd = cancel_st->fd;

		/* the slot is looked up at issue, as io_async_cancel does */
		if (m.flags & IORING_ASYNC_CANCEL_FD_FIXED) {
			fd = uu_fixed_file(req->ring, (unsigned int)fd);
			if (fd < 0)
				return -EBADF;
		}
		if (fstat(fd, &st))
			return -EBADF;
		m.dev = st.st_dev;
		m.ino = st.st_ino;
	}
	return uu_cancel_everywhere(req->ring, &m);
}

/*
 * uu_cancel, and on a ring shared across fork the other processes'
 * requests too when this one found nothing (or, with ALL/ANY, always),
 * as the kernel's cancel walks every task of the ring (xproc/xlife.c).
 */
int uu_cancel_everywhere(struct uu_ring *r, const struct uu_cancel_match *m)
{
	int ret;

	/*
	 * Readiness that came before the cancel is processed first, as the
	 * kernel has run its task_work by then: a multishot receive whose
	 * data arrived posts those shots before its -ECANCELED (liburing's
	 * recv-multishot relies on it).
	 */
	if (atomic_load_explicit(&r->inflight, memory_order_relaxed))
		uu_poller_sync();
	ret = uu_cancel(r, m);

	if (unlikely(uu_ring_xshared(r)) &&
	    (ret == -ENOENT || (m->flags & (IORING_ASYNC_CANCEL_ALL |
					    IORING_ASYNC_CANCEL_ANY))))
		ret = uu_xlife_cancel(r, m, ret);
	return ret;
}

/*
 * The ring's last fd is gone (the kernel's io_ring_exit_work): every
 * parked request is cancelled; work queued in io-wq completes -ECANCELED
 * and work running there is interrupted (T7), so that no worker stays
 * blocked for a ring nobody can reap.
 */
void uu_cancel_ring_all(struct uu_ring *r)
{
	struct uu_cancel_match m = {
		.flags = IORING_ASYNC_CANCEL_ANY,
		.whole_ring = true,
	};

	uu_cancel(r, &m);
	/* io_uring_try_cancel_requests: then the cancelable URING_CMDs */
	uu_uring_cmd_cancel_ring(r);
}
