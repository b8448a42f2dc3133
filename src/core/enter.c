// SPDX-License-Identifier: MIT
/* io_uring_enter(2) */
#include <errno.h>
#include <stdint.h>

#include "core/cq.h"
#include "core/iopoll.h"
#include "core/register.h"
#include "core/registry.h"
#include "core/req.h"
#include "core/ring.h"
#include "core/task_work.h"
#include "core/tctx.h"
#include "core/types.h"
#include "core/wait.h"
#include "core/xproc.h"
#include "exec/poller.h"
#include "exec/sqpoll.h"
#include "uuring.h"

/* (106 lines: io_uring_enter's checks and steps in the kernel's order) */
UU_EXPORT int uuring_enter(unsigned int fd, unsigned int to_submit,
			   unsigned int min_complete, unsigned int flags,
			   const void *argp, size_t argsz)
{
	struct uu_ring *r;
	int app_fd = -1, err, ret = 0;

	if (unlikely(flags & ~UU_ENTER_FLAGS))
		return -EINVAL;
	if (flags & IORING_ENTER_REGISTERED_RING) {
		r = uu_regring_get(fd, &err);
		if (!r)
			return err;
	} else {
		if (unlikely((int)fd < 0))
			return -EBADF;
		r = uu_ring_get_cached((int)fd);
		if (unlikely(!r) && !(r = uu_ring_get((int)fd, &err)))
			return err;
		app_fd = (int)fd;
	}
	/* a forked child's first use of its parent's ring (xproc/xproc.c) */
	ret = uu_ring_use(r);
	if (unlikely(ret))
		goto out;
	if (unlikely(atomic_load_explicit(r->disabled, memory_order_acquire))) {
		ret = -EBADFD;
		goto out;
	}
	uu_stat_inc(r, enter_calls);
	if (r->sqd) {
		/* the SQPOLL thread submits; enter only wakes or waits */
		if (uu_sqpoll_dead(r)) {
			ret = -EOWNERDEAD;
			goto out;
		}
		if (flags & IORING_ENTER_SQ_WAKEUP)
			uu_sqd_wake(r->sqd);
		if (flags & IORING_ENTER_SQ_WAIT)
			uu_sqpoll_wait_sq(r);
		ret = (int)to_submit;
	} else if (to_submit) {
		pid_t owner = atomic_load_explicit(r->submitter_tid,
						   memory_order_relaxed);

		if ((r->setup_flags & IORING_SETUP_SINGLE_ISSUER) &&
		    owner != uu_gettid()) {
			ret = -EEXIST;
			goto out;
		}
		uu_tctx.has_tctx = true;
		uu_shared_lock(r->uring_lock);
		ret = uu_submit_sqes(r, to_submit);
		pthread_mutex_unlock(r->uring_lock);
		if ((unsigned int)ret != to_submit)
			goto out;
		/* io_run_local_work_locked: completions of this submission
		 * that were deferred are posted before the wait */
		if ((flags & IORING_ENTER_GETEVENTS) &&
		    (r->setup_flags & IORING_SETUP_DEFER_TASKRUN))
			uu_tw_run_local(r, (int)min_complete,
					uu_tw_max_events((int)min_complete));
	}
	if (flags & IORING_ENTER_GETEVENTS) {
		int ret2;

		if (min_complete > r->mem.cq_entries)
			min_complete = r->mem.cq_entries;
		/* io_uring_get_events (nothing to submit or wait for): the
		 * readiness the kernel's task_work would have turned into
		 * CQEs by now is processed first (exec/poller.c) */
		if (!to_submit && !min_complete &&
		    !(r->setup_flags & IORING_SETUP_DEFER_TASKRUN) &&
		    atomic_load_explicit(&r->inflight, memory_order_relaxed))
			uu_poller_sync();
		if (r->syscall_iopoll) /* reap, never wait (core/iopoll.c) */
			ret2 = uu_iopoll_check(r, min_complete, flags, argp,
					       argsz);
		else
			ret2 = uu_cq_wait(r, min_complete, flags, argp, argsz);
		if (!ret) {
			ret = ret2;
			/* the app has been told; it must handle the loss */
			if (ret2 == -EBADR)
				atomic_store(&r->cq_dropped, false);
		}
	}
out:
	if (atomic_load_explicit(r->signalled, memory_order_relaxed) &&
	    !uu_cq_ready(r))
		uu_ring_drain_readiness(r, app_fd);
	uu_ring_put(r);
	/*
	 * This enter made a ring fd readable (a CQE posted inline): the
	 * kernel wakes that fd's pollers inside the call, and a POLL_ADD of
	 * another ring on it posts its CQE before enter returns (liburing's
	 * poll test_disabled_ring_lazy_polling looks at once).  Let the
	 * readiness engine see it first, if it watches such a file
	 * (exec/poller.h; one load otherwise).
	 */
	if (uu_tctx.readiness_sent) {
		uu_tctx.readiness_sent = false;
		uu_poller_inproc_wake();
	}
	return ret;
}
