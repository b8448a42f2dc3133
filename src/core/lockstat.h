/* SPDX-License-Identifier: MIT */
/*
 * Lock statistics (UURING_LOCKSTAT=1): per class of engine lock, how often
 * it was taken, how often the taker found it held (its trylock failed
 * first) and how long such takers waited.  The engine's locks are futex
 * mutexes: a contended taker sleeps, so the wait is wall time, not CPU.
 *
 * Off (the default), taking a lock costs one relaxed load and a branch
 * more than pthread_mutex_lock: bench/run-bench.sh's nop_async_qd128 A/B.
 */
#ifndef UURING_LOCKSTAT_H
#define UURING_LOCKSTAT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

enum uu_lock_class {
	UU_LOCK_SQ,           /* the ring's uring_lock (SQ consumption) */
	UU_LOCK_CQ,           /* the ring's completion_lock (CQ posting) */
	UU_LOCK_CQ_WAITERS,   /* the ring's wait_lock (waiter list) */
	UU_LOCK_TW,           /* the ring's tw_lock (task_work runner) */
	UU_LOCK_SQPOLL,       /* an SQPOLL thread's ring list */
	UU_LOCK_IOWQ_WORK,    /* an io-wq class's work list */
	UU_LOCK_IOWQ_WORKERS, /* an io-wq class's free and all lists (split) */
	UU_LOCK_IOWQ_GLOBAL,  /* the io-wq-wide lock (UURING_IOWQ_LOCK=global) */
	UU_LOCK_NR
};

extern atomic_bool uu_lockstat_on;

int uu_lock_counted(pthread_mutex_t *m, enum uu_lock_class cls);
void uu_lockstat_enable(bool on);
/* appends one "uuring-lockstat ..." line per class that was taken */
int uu_lockstat_format(char *buf, size_t size, const char *prefix);

/*
 * pthread_mutex_lock's result (EOWNERDEAD for a robust mutex whose
 * holder died).  The statistics switch is read relaxed: it orders
 * nothing, and a lock taken while it flips is simply counted or not.
 */
static inline int uu_lock_cls(pthread_mutex_t *m, enum uu_lock_class cls)
{
	if (__builtin_expect(atomic_load_explicit(&uu_lockstat_on,
						  memory_order_relaxed), 0))
		return uu_lock_counted(m, cls);
	return pthread_mutex_lock(m);
}

#endif
