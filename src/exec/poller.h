/* SPDX-License-Identifier: MIT */
/*
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

#endif /* UURING_EXEC_POLLER_H */
