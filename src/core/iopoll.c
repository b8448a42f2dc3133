// SPDX-License-Identifier: MIT
/*
 * IORING_SETUP_IOPOLL without SQPOLL: completions are reaped by the
 * application's enter(GETEVENTS), never posted on their own.
 *
 * The kernel's rules (io_uring.c io_iopoll_check, rw.c io_do_iopoll):
 *   - a polled read/write that was issued goes on the ring's iopoll list;
 *     its CQE is posted only when an enter with GETEVENTS polls it done,
 *     even if the device finished long before (no wakeups, no eventfd,
 *     no ring-fd readiness until then);
 *   - GETEVENTS returns 0 at once if the CQ already holds CQEs, and 0
 *     as soon as the iopoll list is empty, whatever min_complete says: it
 *     never sleeps for completions that are not on the list;
 *   - otherwise it polls until min_complete requests were reaped
 *     (min_complete 0: one pass); a pending signal ends it with -EINTR;
 *   - EXT_ARG is only validated (size, readable); its timeout and the
 *     sigmask are ignored;
 *   - the overflow backlog is flushed first, and a dropped CQE gives
 *     -EBADR; DEFER_TASKRUN rings give -EEXIST to other threads.
 *   - an error or a short count reported through this path is only the
 *     CQE's result: it does not fail the request's link chain.
 * Here the I/O runs through Linux AIO (exec/aio.c) or, for IOSQE_ASYNC,
 * in io-wq; when it finishes, uu_iopoll_complete() marks the request done
 * and wakes a reaper that waits, instead of completing it.  The reaper
 * sleeps on a futex rather than spinning (the kernel spins; that is not
 * observable but CPU time).
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/cq.h"
#include "core/iopoll.h"
#include "core/registry.h"
#include "core/req.h"
#include "core/task_work.h"
#include "core/tctx.h"
#include "core/types.h"
#include "util/usercopy.h"

/* Called with the request on the heap, parked, before it is handed to
 * AIO or io-wq (which may finish it at once). */
void uu_iopoll_add(struct uu_req *req)
{
	struct uu_ring *r = req->ring;

	req->iopoll_next = NULL;
	atomic_store_explicit(&req->iopoll_done, false, memory_order_relaxed);
	pthread_mutex_lock(&r->iopoll_lock);
	if (r->iopoll_tail)
		r->iopoll_tail->iopoll_next = req;
	else
		r->iopoll_head = req;
	r->iopoll_tail = req;
	req->iopoll_listed = true;
	pthread_mutex_unlock(&r->iopoll_lock);
}

/* iopoll_lock held */
static void unlink_locked(struct uu_ring *r, struct uu_req *req)
{
	struct uu_req **pp, *prev = NULL;

	for (pp = &r->iopoll_head; *pp; prev = *pp, pp = &(*pp)->iopoll_next) {
		if (*pp != req)
			continue;
		*pp = req->iopoll_next;
		if (r->iopoll_tail == req)
			r->iopoll_tail = prev;
		break;
	}
	req->iopoll_next = NULL;
	req->iopoll_listed = false;
}

static long futex(_Atomic uint32_t *uaddr, int op, uint32_t val,
		  const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

bool uu_iopoll_complete(struct uu_req *req)
{
	struct uu_ring *r = req->ring;

	pthread_mutex_lock(&r->iopoll_lock);
	if (r->iopoll_dead || (req->flags & UU_REQ_FAIL)) {
		/* nobody will reap (the ring has no fd left), or the issue
		 * itself failed in io-wq: the kernel posts that at once */
		unlink_locked(r, req);
		pthread_mutex_unlock(&r->iopoll_lock);
		return false;
	}
	/* once done, a reaper may free req and drop the ring reference it
	 * held: keep the ring for the wake-up below */
	atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
	/* release: the result (req->res, flags) is read by the reaper after
	 * its acquire load of iopoll_done */
	atomic_store_explicit(&req->iopoll_done, true, memory_order_release);
	pthread_mutex_unlock(&r->iopoll_lock);
	/*
	 * Dekker pair with the reaper in uu_iopoll_check: we bump the
	 * sequence then read the sleeper count; it counts itself in then
	 * re-reads the sequence (all seq_cst), so either it sees the new
	 * sequence or we see it and wake it.
	 */
	atomic_fetch_add_explicit(&r->iopoll_seq, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&r->iopoll_sleepers, memory_order_seq_cst))
		futex(&r->iopoll_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
	uu_ring_put(r);
	return true;
}

/* Takes the done requests off the list, in issue order, and completes
 * them (one CQ commit); returns how many. */
static unsigned int reap(struct uu_ring *r)
{
	struct uu_req **pp, *req, *prev = NULL, *head = NULL, **tail = &head;
	unsigned int n = 0;

	pthread_mutex_lock(&r->iopoll_lock);
	pp = &r->iopoll_head;
	while ((req = *pp)) {
		/* acquire: pairs with the release in uu_iopoll_complete */
		if (!atomic_load_explicit(&req->iopoll_done,
					  memory_order_acquire)) {
			prev = req;
			pp = &req->iopoll_next;
			continue;
		}
		*pp = req->iopoll_next;
		if (r->iopoll_tail == req)
			r->iopoll_tail = prev;
		req->iopoll_listed = false;
		req->iopoll_next = NULL;
		*tail = req;
		tail = &req->iopoll_next;
		n++;
	}
	pthread_mutex_unlock(&r->iopoll_lock);
	if (head)
		uu_req_complete_reaped(r, head);
	return n;
}

static bool list_empty(struct uu_ring *r)
{
	bool empty;

	pthread_mutex_lock(&r->iopoll_lock);
	empty = !r->iopoll_head;
	pthread_mutex_unlock(&r->iopoll_lock);
	return empty;
}

/* io_validate_ext_arg: the wait arguments are checked, not used */
static int validate_ext_arg(unsigned int flags, const void *argp,
			    size_t argsz)
{
	struct io_uring_getevents_arg arg;

	if (!(flags & IORING_ENTER_EXT_ARG))
		return 0;
	if (flags & IORING_ENTER_EXT_ARG_REG)
		return -EINVAL; /* no registered wait regions (cqwait.c) */
	if (argsz != sizeof(arg))
		return -EINVAL;
	return uu_copy_from_user(&arg, argp, sizeof(arg));
}

int uu_iopoll_check(struct uu_ring *r, unsigned int min_complete,
		    unsigned int flags, const void *argp, size_t argsz)
{
	bool defer = r->setup_flags & IORING_SETUP_DEFER_TASKRUN;
	unsigned int nr = 0;
	int ret;

	ret = validate_ext_arg(flags, argp, argsz);
	if (ret)
		return ret;
	if (defer && atomic_load(r->submitter_tid) != uu_gettid())
		return -EEXIST;
	uu_cq_flush_overflow(r);
	if (atomic_load_explicit(&r->cq_dropped, memory_order_acquire))
		return -EBADR;
	if (uu_cq_ready(r))
		return 0;
	for (;;) {
		struct timespec ts = { 1, 0 };
		uint32_t seq;
		long w;

		if (defer && atomic_load_explicit(&r->tw_pending,
						  memory_order_acquire)) {
			uint32_t tail = atomic_load(r->cq_tail);

			uu_tw_run_local(r, (int)min_complete,
					uu_tw_max_events((int)min_complete));
			if (tail != atomic_load(r->cq_tail))
				break; /* some requests are not polled */
		}
		if (list_empty(r))
			break;
		seq = atomic_load_explicit(&r->iopoll_seq, memory_order_acquire);
		nr += reap(r);
		if (nr >= min_complete || list_empty(r))
			break;
		atomic_fetch_add_explicit(&r->iopoll_sleepers, 1,
					  memory_order_seq_cst);
		w = 0;
		if (atomic_load_explicit(&r->iopoll_seq, memory_order_seq_cst) ==
		    seq)
			/* a timed wait: a handled signal then ends it with
			 * EINTR whatever SA_RESTART says (the kernel's iopoll
			 * returns -EINTR on a pending signal) */
			w = futex(&r->iopoll_seq, FUTEX_WAIT_PRIVATE, seq, &ts);
		atomic_fetch_sub_explicit(&r->iopoll_sleepers, 1,
					  memory_order_relaxed);
		if (w < 0 && errno == EINTR)
			return -EINTR;
	}
	return 0;
}

/* The ring's last fd is gone: post what is done, and let the rest be
 * finished by whoever completes it (io_ring_exit_work reaps them too). */
void uu_iopoll_ring_dead(struct uu_ring *r)
{
	if (!r->syscall_iopoll)
		return;
	pthread_mutex_lock(&r->iopoll_lock);
	r->iopoll_dead = true;
	pthread_mutex_unlock(&r->iopoll_lock);
	reap(r);
}
