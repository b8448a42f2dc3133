/* SPDX-License-Identifier: MIT */
/*
 * Waiting for CQEs (wait/cqwait.c).  Declared in core/ so that core/
 * does not include a header of src/wait/ (tests/check_layering.sh).
 */
#ifndef UURING_CORE_WAIT_H
#define UURING_CORE_WAIT_H

#include "core/types.h"

struct uu_wait_args {
	const sigset_t *sigmask; /* NULL: keep the thread's mask */
	bool ts_set;
	struct timespec deadline; /* absolute, CLOCK_MONOTONIC */
	uint64_t min_wait_ns;
};
int uu_cq_wait(struct uu_ring *ring, unsigned int min_events,
	       unsigned int flags, const void *argp, size_t argsz);
void uu_wake_waiters(struct uu_ring *ring);
void uu_wake_all_waiters(struct uu_ring *ring); /* satisfied or not */

void uu_wait_prewarm(void);

void uu_wait_atfork_child(void);

#endif /* UURING_CORE_WAIT_H */
