// SPDX-License-Identifier: MIT
/*
 * Lock statistics (core/lockstat.h).  Process-wide counters per lock
 * class, relaxed atomics on a cache line of their own per class: they are
 * read only for the report, where a count a moment old is good enough.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/lockstat.h"
#include "core/types.h"
#include "uuring.h"

atomic_bool uu_lockstat_on;

struct lock_counters {
	_Atomic uint64_t acquired, contended, wait_ns;
} __attribute__((aligned(64)));

static struct lock_counters counters[UU_LOCK_NR];
/* CLOCK_MONOTONIC ns when counting was last switched on */
static _Atomic int64_t counting_since;

static const char *const class_names[UU_LOCK_NR] = {
	[UU_LOCK_SQ] = "sq",
	[UU_LOCK_CQ] = "cq",
	[UU_LOCK_CQ_WAITERS] = "cq_waiters",
	[UU_LOCK_TW] = "task_work",
	[UU_LOCK_SQPOLL] = "sqpoll",
	[UU_LOCK_IOWQ_WORK] = "iowq_work",
	[UU_LOCK_IOWQ_WORKERS] = "iowq_workers",
	[UU_LOCK_IOWQ_GLOBAL] = "iowq_global",
};

static int64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int uu_lock_counted(pthread_mutex_t *m, enum uu_lock_class cls)
{
	struct lock_counters *k = &counters[cls];
	int64_t start;
	int ret = pthread_mutex_trylock(m);

	atomic_fetch_add_explicit(&k->acquired, 1, memory_order_relaxed);
	if (ret != EBUSY)
		return ret; /* 0, or EOWNERDEAD: taken without waiting */
	start = mono_ns();
	ret = pthread_mutex_lock(m);
	atomic_fetch_add_explicit(&k->contended, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&k->wait_ns, (uint64_t)(mono_ns() - start),
				  memory_order_relaxed);
	return ret;
}

void uu_lockstat_enable(bool on)
{
	if (on && !atomic_load_explicit(&uu_lockstat_on, memory_order_relaxed))
		atomic_store_explicit(&counting_since, mono_ns(),
				      memory_order_relaxed);
	atomic_store_explicit(&uu_lockstat_on, on, memory_order_relaxed);
}

UU_EXPORT int uuring_get_lockstat(struct uuring_lockstat *st, size_t size)
{
	struct uuring_lockstat s;
	int64_t since = atomic_load_explicit(&counting_since,
					     memory_order_relaxed);

	memset(&s, 0, sizeof(s));
	s.enabled = atomic_load_explicit(&uu_lockstat_on, memory_order_relaxed);
	s.wall_ns = since ? (uint64_t)(mono_ns() - since) : 0;
	for (int c = 0; c < UU_LOCK_NR && c < UURING_LOCK_CLASSES; c++) {
		struct lock_counters *k = &counters[c];

		snprintf(s.lock[c].name, sizeof(s.lock[c].name), "%s",
			 class_names[c]);
		s.lock[c].acquired = atomic_load_explicit(&k->acquired,
							  memory_order_relaxed);
		s.lock[c].contended = atomic_load_explicit(&k->contended,
							   memory_order_relaxed);
		s.lock[c].wait_ns = atomic_load_explicit(&k->wait_ns,
							 memory_order_relaxed);
	}
	if (size > sizeof(s))
		size = sizeof(s);
	memcpy(st, &s, size);
	return (int)size;
}

/*
 * "PREFIX lock=cq acquired=N contended=N wait_ns=N contended_per_s=X
 * wait_share=Y\n" per class taken at least once.  wait_share is the wait
 * time summed over threads divided by wall time since counting began: 0.5
 * means that on average half a thread was asleep on that lock.  Returns
 * the length written, or -1 if buf is too small.
 */
int uu_lockstat_format(char *buf, size_t size, const char *prefix)
{
	struct uuring_lockstat s;
	size_t len = 0;
	double wall;

	uuring_get_lockstat(&s, sizeof(s));
	wall = s.wall_ns ? (double)s.wall_ns / 1e9 : 0;
	for (int c = 0; c < UU_LOCK_NR; c++) {
		int n;

		if (!s.lock[c].acquired)
			continue;
		n = snprintf(buf + len, size - len,
			     "%slock=%s acquired=%llu contended=%llu "
			     "wait_ns=%llu contended_per_s=%.1f wait_share=%.4f\n",
			     prefix, s.lock[c].name,
			     (unsigned long long)s.lock[c].acquired,
			     (unsigned long long)s.lock[c].contended,
			     (unsigned long long)s.lock[c].wait_ns,
			     wall > 0 ? (double)s.lock[c].contended / wall : 0.0,
			     wall > 0 ? (double)s.lock[c].wait_ns / 1e9 / wall :
					0.0);
		if (n < 0 || (size_t)n >= size - len)
			return -1;
		len += (size_t)n;
	}
	return (int)len;
}
