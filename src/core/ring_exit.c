// SPDX-License-Identifier: MIT
/*
 * A ring's end (docs/architecture.md, "Last close"): once no fd of it is
 * left anywhere (every close of a ring fd, the last RING_FDS slot let go,
 * or a sweep for fds closed behind our back), the ring is unlinked from
 * the registry (core/registry.c) and this file runs its exit, as the
 * kernel's io_ring_exit_work: what is parked is cancelled, polls and
 * IOPOLL reaping stop, the SQ thread detaches, the task_work queue is
 * left to whoever queues, and the registry's reference goes (the ring's
 * memory goes with its last reference, core/ring.c uu_ring_free).
 */
#include "core/cancel.h"
#include "core/config.h"
#include "core/iopoll.h"
#include "core/registry.h"
#include "core/ring.h"
#include "core/task_work.h"
#include "core/types.h"
#include "core/xproc.h"
#include "exec/poller.h"
#include "exec/sqpoll.h"
#include "ops/rw.h"
#include "util/rawsys.h"

static void ring_exit(struct uu_ring *r)
{
	uu_xlife_ring_dead(r); /* TIMEOUTs taken over from another process */
	uu_cancel_ring_all(r); /* io-wq work too (T7) */
	uu_poll_cancel_ring(r); /* polls would wait forever */
	uu_iopoll_ring_dead(r); /* nobody will reap */
	uu_sqpoll_detach(r);
	uu_tw_ring_dead(r); /* no submitter will run it */
	/*
	 * UURING_STATS: the ring's line now, at its last close, not when
	 * the last reference goes: requests still finishing (a timer's
	 * completion, a worker's cancel) may hold one past the process's
	 * _exit, and the line was then never written (test_nullb under_run
	 * failed 4 of 12 runs so).
	 */
	if (uu_config.stats_path)
		uu_stats_report(r, "close"); /* once: the release adds none */
	uu_ring_put(r); /* the registry's reference */
}

static void check_last_close(struct uu_ring *r)
{
	if (uu_registry_kill_closed(r))
		ring_exit(r);
}

/*
 * A RING_FDS slot let go of the ring (unregister, or its thread exited):
 * if that was the last slot and every fd of the ring was closed before,
 * this is the ring's last close.
 */
void uu_ring_unpin(struct uu_ring *r)
{
	/* acq_rel: orders the slot's use of the ring before the kill */
	if (atomic_fetch_sub_explicit(&r->regfd_pins, 1,
				      memory_order_acq_rel) == 1)
		check_last_close(r);
}

/* close(2) of an fd the engine may know as a ring */
int uu_ring_close_fd(int fd)
{
	struct uu_ring *r = uu_registry_forget_fd(fd);
	int ret;

	uu_rw_forget_fd(fd);
	ret = uu_sys_close(fd);
	if (r) {
		check_last_close(r);
		uu_ring_put(r);
	}
	return ret;
}

/* Rings whose last fd was closed behind our back (setup, the preload's
 * close_range/closefrom): their exit, 32 at a time at most. */
void uu_ring_sweep(void)
{
	struct uu_ring *dead[32];
	int nr = uu_registry_reap_closed(dead, 32);

	while (nr)
		ring_exit(dead[--nr]);
}
