// SPDX-License-Identifier: MIT
/*
 * IORING_OP_TIMEOUT, TIMEOUT_REMOVE and LINK_TIMEOUT.
 *
 * A TIMEOUT is a parked request with a timer.  A count timeout (off > 0)
 * also completes, with 0, once `off` CQEs have been produced after it,
 * counted the kernel's way (T15): the target is the CQ sequence at issue
 * minus expired timeouts plus off, so expired timeouts and CQE_SKIP
 * completions do not count and every multishot CQE does; it completes in
 * the same flush as the CQE that satisfied it.  Timer clocks start at
 * issue, in the submitting thread.
 *
 * The ring's timeout list is protected by the completion lock.
 */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>

#include "core/cancel.h"
#include "core/cq.h"
#include "core/cq_post.h"
#include "core/req.h"
#include "core/task_work.h"
#include "core/tctx.h"
#include "core/types.h"
#include "core/xproc.h"
#include "exec/timer.h"
#include "ops/timeout.h"
#include "util/usercopy.h"

#define TIMEOUT_CLOCK_MASK (IORING_TIMEOUT_BOOTTIME | IORING_TIMEOUT_REALTIME)
#define TIMEOUT_UPDATE_MASK (IORING_TIMEOUT_UPDATE | IORING_LINK_TIMEOUT_UPDATE)

static int clock_of(uint32_t flags)
{
	if (flags & IORING_TIMEOUT_BOOTTIME)
		return UU_CLOCK_BOOT;
	if (flags & IORING_TIMEOUT_REALTIME)
		return UU_CLOCK_REAL;
	return UU_CLOCK_MONO;
}

static int read_ts(uint64_t uaddr, int64_t *ns)
{
	struct __kernel_timespec ts;
	int ret = uu_copy_from_user(&ts, (const void *)(uintptr_t)uaddr,
				    sizeof(ts));

	if (ret)
		return ret;
	if (ts.tv_sec < 0 || ts.tv_nsec < 0)
		return -EINVAL;
	if (ts.tv_sec >= INT64_MAX / 1000000000LL)
		*ns = INT64_MAX;
	else
		*ns = ts.tv_sec * 1000000000LL + ts.tv_nsec;
	return 0;
}

static int prep_common(struct uu_req *req, bool is_link)
{
	struct uu_tmo_cmd *tmo_st = uu_cmd(req, tmo);
	const struct io_uring_sqe *sqe = &req->sqe;
	uint32_t flags = sqe->timeout_flags;
	uint32_t off = (uint32_t)sqe->off;

	if (sqe->buf_index || sqe->len != 1 || sqe->splice_fd_in)
		return -EINVAL;
	if (off && is_link)
		return -EINVAL;
	if (flags & ~(IORING_TIMEOUT_ABS | TIMEOUT_CLOCK_MASK |
		      IORING_TIMEOUT_ETIME_SUCCESS | IORING_TIMEOUT_MULTISHOT))
		return -EINVAL;
	if (__builtin_popcount(flags & TIMEOUT_CLOCK_MASK) > 1)
		return -EINVAL;
	/* multishot only makes sense with relative times */
	if ((flags & IORING_TIMEOUT_MULTISHOT) && (flags & IORING_TIMEOUT_ABS))
		return -EINVAL;
	memset(tmo_st, 0, sizeof(*tmo_st));
	tmo_st->t.heap_idx = -1;
	tmo_st->off = off;
	tmo_st->flags = flags;
	if ((flags & IORING_TIMEOUT_MULTISHOT) && off > 0)
		tmo_st->repeats = off;
	tmo_st->t.clock = clock_of(flags);
	return read_ts(sqe->addr, &tmo_st->ts_ns);
}

int uu_timeout_prep(struct uu_req *req)
{
	return prep_common(req, false);
}

/* LINK_TIMEOUT: must follow a linked request (checked by core/submit.c,
 * which knows the chain being assembled). */
int uu_link_timeout_prep(struct uu_req *req)
{
	return prep_common(req, true);
}

/* Reached only if the request it guards never ran (its chain failed). */
int uu_link_timeout_issue(struct uu_req *req, unsigned int issue_flags)
{
	(void)req;
	(void)issue_flags;
	return -ECANCELED;
}

static bool noseq(const struct uu_req *req)
{
	const struct uu_tmo_cmd *tmo_st = uu_cmd(req, tmo);

	return !tmo_st->off || (tmo_st->flags & IORING_TIMEOUT_MULTISHOT);
}

static void list_del_tmo(struct uu_ring *r, struct uu_req *req)
{
	struct uu_tmo_cmd *tmo_st = uu_cmd(req, tmo);

	if (!tmo_st->listed)
		return;
	if (tmo_st->prev)
		uu_cmd(uu_cmd(req, tmo)->prev, tmo)->next = tmo_st->next;
	else
		r->tmo_head = tmo_st->next;
	if (tmo_st->next)
		uu_cmd(uu_cmd(req, tmo)->next, tmo)->prev = tmo_st->prev;
	else
		r->tmo_tail = tmo_st->prev;
	tmo_st->prev = tmo_st->next = NULL;
	tmo_st->listed = false;
}

static void list_add_tail_tmo(struct uu_ring *r, struct uu_req *req)
{
	struct uu_tmo_cmd *tmo_st = uu_cmd(req, tmo);

	tmo_st->next = NULL;
	tmo_st->prev = r->tmo_tail;
	if (r->tmo_tail)
		uu_cmd(r->tmo_tail, tmo)->next = req;
	else
		r->tmo_head = req;
	r->tmo_tail = req;
	tmo_st->listed = true;
}

/* insertion by target, so the list head is always the next to fire */
static void list_add_sorted_tmo(struct uu_ring *r, struct uu_req *req)
{
	struct uu_tmo_cmd *tmo_st = uu_cmd(req, tmo);
	struct uu_req *pos;
	uint32_t mine = tmo_st->target - r->cq_last_tm_flush;

	for (pos = r->tmo_tail; pos; pos = uu_cmd(pos, tmo)->prev) {
		if (!noseq(pos) && uu_cmd(pos, tmo)->target - r->cq_last_tm_flush <= mine)
			break;
	}
	if (!pos) {
		tmo_st->prev = NULL;
		tmo_st->next = r->tmo_head;
		if (r->tmo_head)
			uu_cmd(r->tmo_head, tmo)->prev = req;
		else
			r->tmo_tail = req;
		r->tmo_head = req;
	} else {
		tmo_st->prev = pos;
		tmo_st->next = uu_cmd(pos, tmo)->next;
		if (uu_cmd(pos, tmo)->next)
			uu_cmd(uu_cmd(pos, tmo)->next, tmo)->prev = req;
		else
			r->tmo_tail = req;
		uu_cmd(pos, tmo)->next = req;
	}
	tmo_st->listed = true;
}

static void set_expiry(struct uu_req *req)
{
	struct uu_tmo_cmd *tmo_st = uu_cmd(req, tmo);

	if (tmo_st->flags & IORING_TIMEOUT_ABS)
		tmo_st->t.expires = tmo_st->ts_ns;
	else if (tmo_st->ts_ns == INT64_MAX)
		tmo_st->t.expires = INT64_MAX;
	else
		tmo_st->t.expires = uu_clock_now(tmo_st->t.clock) +
				     tmo_st->ts_ns;
}

static void timeout_fired(struct uu_timer *t);

/* a ring shared across fork: a process that exits leaves its TIMEOUTs
 * to a survivor to fire (xproc/xlife.c), which reads when from here */
static void journal_expiry(struct uu_req *req)
{
	struct uu_tmo_cmd *tmo_st = uu_cmd(req, tmo);

	if (likely(!req->xj) || req->opcode != IORING_OP_TIMEOUT)
		return;
	uu_xj_set_expiry(req->ring, req->xj, tmo_st->t.clock,
			 (tmo_st->flags & IORING_TIMEOUT_MULTISHOT) ?
				 INT64_MAX :
				 tmo_st->t.expires);
}

int uu_timeout_issue(struct uu_req *req, unsigned int issue_flags)
{
	(void)issue_flags;
	/* the clock starts now, at issue, in the submitting thread */
	set_expiry(req);
	return uu_park(req, UU_ISSUE_PARK_TIMEOUT);
}

/* core/req.c, once req is on the heap and parked */
void uu_timeout_arm(struct uu_req *req)
{
	struct uu_tmo_cmd *tmo_st = uu_cmd(req, tmo);
	struct uu_ring *r = req->ring;

	tmo_st->t.fn = timeout_fired;
	journal_expiry(req);
	uu_shared_lock(r->completion_lock);
	if (noseq(req)) {
		list_add_tail_tmo(r, req);
	} else {
		uint32_t tail = r->cq_produced -
				atomic_load_explicit(&r->cq_timeouts,
						     memory_order_relaxed);

		tmo_st->target = tail + tmo_st->off;
		r->cq_last_tm_flush = tail;
		r->off_timeout_used = true;
		list_add_sorted_tmo(r, req);
	}
	pthread_mutex_unlock(r->completion_lock);
	if (uu_timer_arm(&tmo_st->t)) {
		uu_shared_lock(r->completion_lock);
		list_del_tmo(r, req);
		pthread_mutex_unlock(r->completion_lock);
		req->res = -ENOMEM;
		uu_req_finish_async(req);
	}
}

/* the request whose per-op area holds this timer */
static struct uu_req *tmo_req(struct uu_timer *t)
{
	return (struct uu_req *)((char *)t - offsetof(struct uu_tmo_cmd, t) -
				 offsetof(struct uu_req, cmd));
}

static void timeout_fired(struct uu_timer *t)
{
	struct uu_req *req = tmo_req(t);
	struct uu_ring *r = req->ring;

	uu_shared_lock(r->completion_lock);
	if (!uu_cmd(req, tmo)->listed) {
		/* completed by count or removed meanwhile */
		pthread_mutex_unlock(r->completion_lock);
		return;
	}
	atomic_fetch_add_explicit(&r->cq_timeouts, 1, memory_order_relaxed);
	if ((uu_cmd(req, tmo)->flags & IORING_TIMEOUT_MULTISHOT) &&
	    uu_cmd(req, tmo)->repeats != 1 &&
	    uu_req_post_cqe_locked(req, -ETIME, 0)) {
		if (uu_cmd(req, tmo)->repeats)
			uu_cmd(req, tmo)->repeats--;
		pthread_mutex_unlock(r->completion_lock);
		set_expiry(req);
		if (!uu_timer_arm(&uu_cmd(req, tmo)->t))
			return;
		uu_shared_lock(r->completion_lock);
	}
	list_del_tmo(r, req);
	pthread_mutex_unlock(r->completion_lock);
	req->res = -ETIME;
	if (uu_cmd(req, tmo)->flags & IORING_TIMEOUT_ETIME_SUCCESS)
		req->flags |= UU_REQ_RES_NOFAIL;
	uu_req_finish_async(req);
}

/*
 * At CQ commit (completion_lock held): complete count timeouts whose
 * target was reached.  Their CQE (res 0) is posted right here, in the
 * same flush; the rest of their completion runs after the batch.
 */
void uu_timeouts_flush_locked(struct uu_ring *r)
{
	uint32_t seq = r->cq_produced -
		       atomic_load_explicit(&r->cq_timeouts, memory_order_relaxed);
	struct uu_req *req, *next;

	for (req = r->tmo_head; req; req = next) {
		uint32_t needed, got;

		next = uu_cmd(req, tmo)->next;
		if (noseq(req))
			continue;
		needed = uu_cmd(req, tmo)->target - r->cq_last_tm_flush;
		got = seq - r->cq_last_tm_flush;
		if (got < needed)
			break;
		if (!uu_timer_cancel(&uu_cmd(req, tmo)->t))
			continue; /* firing right now: the timer wins */
		list_del_tmo(r, req);
		atomic_fetch_add_explicit(&r->cq_timeouts, 1, memory_order_relaxed);
		req->res = 0;
		if (!(req->flags & UU_REQ_CQE_SKIP))
			uu_cq_post_locked(r, req->user_data, 0, 0, NULL);
		req->flags |= UU_REQ_CQE_POSTED;
		uu_exec_finish_late(req);
	}
	r->cq_last_tm_flush = seq;
}

/*
 * Finds the timeout with user_data and stops its timer, with the
 * completion lock held on success (0); -ENOENT, or -EALREADY if it is
 * firing, with the lock dropped.
 */
static int find_and_stop(struct uu_ring *r, uint64_t user_data,
			 struct uu_req **out)
{
	struct uu_req *req;

	uu_shared_lock(r->completion_lock);
	for (req = r->tmo_head; req; req = uu_cmd(req, tmo)->next)
		if (req->user_data == user_data)
			break;
	if (!req) {
		pthread_mutex_unlock(r->completion_lock);
		return -ENOENT;
	}
	if (!uu_timer_cancel(&uu_cmd(req, tmo)->t)) {
		pthread_mutex_unlock(r->completion_lock);
		return -EALREADY;
	}
	*out = req;
	return 0;
}

/* TIMEOUT_REMOVE without UPDATE: 0, -EALREADY, -ENOENT */
int uu_timeout_cancel(struct uu_ring *r, uint64_t user_data)
{
	struct uu_req *req;
	int ret = find_and_stop(r, user_data, &req);

	if (ret)
		return ret;
	list_del_tmo(r, req);
	pthread_mutex_unlock(r->completion_lock);
	req->res = -ECANCELED;
	uu_exec_finish_late(req);
	return 0;
}

/*
 * ASYNC_CANCEL's pass over the TIMEOUT list (io_timeout_cancel through
 * io_timeout_extract, which matches with io_cancel_req_match: ANY, OP
 * and USERDATA as for any request).  In list order, the first match only
 * unless all; a TIMEOUT that is firing is found but not stopped (its
 * timer completes it).  Without all: 0, -EALREADY (firing) or -ENOENT;
 * with all: how many matched, as the kernel's ALL loop counts each
 * io_try_cancel that did not answer -ENOENT.  The cancelled ones finish
 * after the current batch, in list order.
 */
int uu_timeout_cancel_match(struct uu_ring *r, const struct uu_cancel_match *m,
			    bool all)
{
	struct uu_req *req, *next, *done = NULL, **tail = &done;
	int nr = 0, ret = -ENOENT;

	uu_shared_lock(r->completion_lock);
	for (req = r->tmo_head; req; req = next) {
		next = uu_cmd(req, tmo)->next;
		if (!uu_cancel_match_req(req, m))
			continue;
		nr++;
		if (uu_timer_cancel(&uu_cmd(req, tmo)->t)) {
			list_del_tmo(r, req);
			req->late_next = NULL;
			*tail = req;
			tail = &req->late_next;
			ret = 0;
		} else {
			ret = -EALREADY; /* firing right now: the timer wins */
		}
		if (!all)
			break;
	}
	pthread_mutex_unlock(r->completion_lock);
	while (done) {
		req = done;
		done = req->late_next;
		req->res = -ECANCELED;
		uu_exec_finish_late(req);
	}
	return all ? nr : ret;
}

/*
 * A process that used a shared ring exits (xproc/xproc.c): its TIMEOUTs
 * are cancelled, as the kernel's io_kill_timeouts does for an exiting
 * task.  One that is firing completes by itself.
 */
void uu_timeouts_cancel_all(struct uu_ring *r)
{
	for (;;) {
		struct uu_req *req;

		uu_shared_lock(r->completion_lock);
		for (req = r->tmo_head; req; req = uu_cmd(req, tmo)->next)
			if (uu_timer_cancel(&uu_cmd(req, tmo)->t))
				break;
		if (!req) {
			pthread_mutex_unlock(r->completion_lock);
			return;
		}
		list_del_tmo(r, req);
		pthread_mutex_unlock(r->completion_lock);
		req->res = -ECANCELED;
		uu_exec_finish_late(req);
	}
}

static int timeout_update(struct uu_ring *r, uint64_t user_data,
			  int64_t ts_ns, uint32_t flags)
{
	struct uu_req *req;
	int ret = find_and_stop(r, user_data, &req);

	if (ret)
		return ret;
	/* an updated timeout is a pure timer: it leaves the count order */
	list_del_tmo(r, req);
	uu_cmd(req, tmo)->off = 0;
	uu_cmd(req, tmo)->ts_ns = ts_ns;
	uu_cmd(req, tmo)->flags =
		(uu_cmd(req, tmo)->flags &
		 ~(IORING_TIMEOUT_ABS | TIMEOUT_CLOCK_MASK)) |
		(flags & (IORING_TIMEOUT_ABS | TIMEOUT_CLOCK_MASK));
	uu_cmd(req, tmo)->t.clock = clock_of(flags);
	list_add_tail_tmo(r, req);
	pthread_mutex_unlock(r->completion_lock);
	set_expiry(req);
	journal_expiry(req);
	if (uu_timer_arm(&uu_cmd(req, tmo)->t)) {
		uu_shared_lock(r->completion_lock);
		list_del_tmo(r, req);
		pthread_mutex_unlock(r->completion_lock);
		req->res = -ENOMEM;
		uu_exec_finish_late(req);
	}
	return 0;
}

/*
 * The armed LINK_TIMEOUTs (the kernel's ltimeout_list): listed while
 * their timer may fire, so TIMEOUT_REMOVE can update them.  They use the
 * tmo list fields, which a LINK_TIMEOUT never needs for the TIMEOUT list.
 */
static void lt_list_add(struct uu_ring *r, struct uu_req *lt)
{
	struct uu_tmo_cmd *lt_tmo = uu_cmd(lt, tmo);

	lt_tmo->prev = NULL;
	lt_tmo->next = r->lt_head;
	if (r->lt_head)
		uu_cmd(r->lt_head, tmo)->prev = lt;
	r->lt_head = lt;
	lt_tmo->listed = true;
}

static void lt_list_del(struct uu_ring *r, struct uu_req *lt)
{
	struct uu_tmo_cmd *lt_tmo = uu_cmd(lt, tmo);

	if (!lt_tmo->listed)
		return;
	if (lt_tmo->prev)
		uu_cmd(lt_tmo->prev, tmo)->next = lt_tmo->next;
	else
		r->lt_head = lt_tmo->next;
	if (lt_tmo->next)
		uu_cmd(lt_tmo->next, tmo)->prev = lt_tmo->prev;
	lt_tmo->prev = lt_tmo->next = NULL;
	lt_tmo->listed = false;
}

/*
 * io_linked_timeout_update: a new expiry (relative or absolute, on the
 * link timeout's own clock) for an armed LINK_TIMEOUT; -ENOENT if none
 * with user_data is armed, -EALREADY if it is firing.  Under the
 * completion lock, which the disarm and the fire also take, so neither
 * sees the timer between the stop and the new start.
 */
static int link_timeout_update(struct uu_ring *r, uint64_t user_data,
			       int64_t ts_ns, uint32_t flags)
{
	struct uu_req *lt;
	int ret = 0;

	uu_shared_lock(r->completion_lock);
	for (lt = r->lt_head; lt; lt = uu_cmd(lt, tmo)->next)
		if (lt->user_data == user_data)
			break;
	if (!lt) {
		ret = -ENOENT;
	} else if (!uu_timer_cancel(&uu_cmd(lt, tmo)->t)) {
		ret = -EALREADY;
	} else {
		uu_cmd(lt, tmo)->ts_ns = ts_ns;
		uu_cmd(lt, tmo)->flags =
			(uu_cmd(lt, tmo)->flags & ~IORING_TIMEOUT_ABS) |
			(flags & IORING_TIMEOUT_ABS);
		set_expiry(lt);
		if (uu_timer_arm(&uu_cmd(lt, tmo)->t)) {
			/* no memory for the timer: the target waits on */
			uu_cmd(lt, tmo)->t.heap_idx = -1;
			lt_list_del(r, lt);
			ret = -ENOMEM;
		}
	}
	pthread_mutex_unlock(r->completion_lock);
	return ret;
}

int uu_timeout_remove_prep(struct uu_req *req)
{
	struct uu_tmo_rm_cmd *tmo_rm_st = uu_cmd(req, tmo_rm);
	const struct io_uring_sqe *sqe = &req->sqe;

	if (req->flags & (UU_REQ_FIXED_FILE | UU_REQ_BUFFER_SELECT))
		return -EINVAL;
	if (sqe->buf_index || sqe->len || sqe->splice_fd_in)
		return -EINVAL;
	tmo_rm_st->addr = sqe->addr;
	tmo_rm_st->flags = sqe->timeout_flags;
	if (tmo_rm_st->flags & TIMEOUT_UPDATE_MASK) {
		/* io_timeout_remove_prep: an update keeps the timeout's
		 * clock, so a clock flag is invalid */
		if (tmo_rm_st->flags & ~(TIMEOUT_UPDATE_MASK | IORING_TIMEOUT_ABS))
			return -EINVAL;
		return read_ts(sqe->addr2, &tmo_rm_st->ts_ns);
	}
	if (tmo_rm_st->flags)
		return -EINVAL;
	return 0;
}

int uu_timeout_remove_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_tmo_rm_cmd *tmo_rm_st = uu_cmd(req, tmo_rm);
	uint32_t f = tmo_rm_st->flags;

	(void)issue_flags;
	/* io_timeout_remove: without TIMEOUT_UPDATE it is a remove, even
	 * with LINK_TIMEOUT_UPDATE */
	if (!(f & IORING_TIMEOUT_UPDATE))
		return uu_timeout_cancel(req->ring, tmo_rm_st->addr);
	if (f & IORING_LINK_TIMEOUT_UPDATE)
		return link_timeout_update(req->ring, tmo_rm_st->addr,
					   tmo_rm_st->ts_ns, f);
	return timeout_update(req->ring, tmo_rm_st->addr, tmo_rm_st->ts_ns, f);
}

/*
 * LINK_TIMEOUT.  The guarded request ("target") is the one before it in
 * the chain.  If the target completes inline, the link timeout is never
 * armed and completes -ECANCELED right after it.  If the target parks,
 * the timer is armed then; if it fires first, the target is cancelled and
 * the link timeout completes with -ETIME (or the cancel's error, T7);
 * otherwise the target's completion disarms it (-ECANCELED).
 */

static void link_timeout_fired(struct uu_timer *t)
{
	struct uu_req *lt = tmo_req(t);
	struct uu_req *target = uu_cmd(lt, tmo)->target_req;
	int ret;

	struct uu_exec s;

	uu_shared_lock(lt->ring->completion_lock);
	lt_list_del(lt->ring, lt); /* fired: no longer updatable */
	pthread_mutex_unlock(lt->ring->completion_lock);
	/* a cancelled target completes in this context's late list, after
	 * our result is final (it frees the link timeout) */
	uu_exec_init(&s, target->ring, false);
	uu_cmd(lt, tmo)->lt_res = -ETIME;
	uu_tctx.firing_lt = lt;
	/* io_req_task_link_timeout: the cancel's answer, -ETIME for 0 */
	ret = uu_cancel_req_counted(target);
	if (ret)
		uu_cmd(lt, tmo)->lt_res = ret; /* -EALREADY: running, cannot cancel;
				       * 1: a futex or waitid list's count */
	__atomic_store_n(&uu_cmd(lt, tmo)->fired, true, __ATOMIC_RELEASE);
	uu_exec_end(&s);
	uu_tctx.firing_lt = NULL;
}

void uu_link_timeout_arm(struct uu_req *target)
{
	struct uu_req *lt = target->link;

	uu_cmd(lt, tmo)->target_req = target;
	uu_cmd(lt, tmo)->t.fn = link_timeout_fired;
	uu_cmd(lt, tmo)->fired = false;
	set_expiry(lt);
	uu_shared_lock(lt->ring->completion_lock);
	if (uu_timer_arm(&uu_cmd(lt, tmo)->t))
		uu_cmd(lt, tmo)->t.heap_idx = -1;
	else
		lt_list_add(lt->ring, lt);
	pthread_mutex_unlock(lt->ring->completion_lock);
}

/*
 * The target completed: settle the result of the link timeout that
 * follows it (-ECANCELED if the timer had not fired).  The caller then
 * completes the link timeout separately, and the chain goes on after it.
 */
void uu_link_timeout_disarm(struct uu_req *target)
{
	struct uu_req *lt = target->link;
	bool stopped = true;

	if (uu_cmd(lt, tmo)->t.fn == link_timeout_fired) {
		/* the lock orders this stop with an update's stop and
		 * restart (link_timeout_update) */
		uu_shared_lock(lt->ring->completion_lock);
		stopped = uu_timer_cancel(&uu_cmd(lt, tmo)->t);
		if (stopped)
			lt_list_del(lt->ring, lt);
		pthread_mutex_unlock(lt->ring->completion_lock);
	}
	if (stopped) {
		uu_cmd(lt, tmo)->lt_res = -ECANCELED; /* never armed, or disarmed */
		return;
	}
	if (uu_tctx.firing_lt == lt)
		return; /* completing inside our own callback: -ETIME */
	while (!__atomic_load_n(&uu_cmd(lt, tmo)->fired, __ATOMIC_ACQUIRE))
		sched_yield(); /* the callback is finishing in the timer */
}
