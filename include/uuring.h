/* SPDX-License-Identifier: MIT */
/*
 * uuring: io_uring in user space — the public API.
 *
 * uuring_setup/enter/register take exactly the arguments of the
 * io_uring_setup(2), io_uring_enter2(2) and io_uring_register(2) system
 * calls and return what the raw system call would: a non-negative result or
 * -errno.  errno is never touched.
 *
 * A ring fd returned by uuring_setup() is a real file descriptor (see
 * docs/architecture.md, "The ring fd"), but its memory can only be mapped,
 * and its last close only observed, through uuring_mmap()/uuring_close().
 * Those wrappers pass every other fd straight to the kernel, so a program
 * (or liburing's syscall layer) can route all of its mmap/munmap/close/dup
 * calls through them unconditionally.
 *
 * The io_uring structures (struct io_uring_params, io_uring_sqe, ...) are
 * those of <linux/io_uring.h>, or of liburing's copy of it; this header only
 * declares them.
 */
#ifndef UURING_H
#define UURING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct io_uring_params;

/* io_uring_setup(2): a ring fd, or -errno. */
int uuring_setup(unsigned int entries, struct io_uring_params *p);

/*
 * io_uring_enter2(2): argp is a sigset_t * (argsz = its size) or, with
 * IORING_ENTER_EXT_ARG, a struct io_uring_getevents_arg * (argsz = its size).
 */
int uuring_enter(unsigned int fd, unsigned int to_submit,
		 unsigned int min_complete, unsigned int flags,
		 const void *argp, size_t argsz);

/* io_uring_register(2). */
int uuring_register(unsigned int fd, unsigned int opcode, void *arg,
		    unsigned int nr_args);

/*
 * mmap(2) with the raw system call's convention: the address, or
 * (void *)(intptr_t)-errno.  On a ring fd, offsets IORING_OFF_SQ_RING,
 * IORING_OFF_CQ_RING and IORING_OFF_SQES map the ring's memory with the
 * kernel's aliasing (SQ and CQ ring share pages); other fds go to mmap(2).
 */
void *uuring_mmap(void *addr, size_t length, int prot, int flags, int fd,
		  off_t offset);

/* munmap(2): 0 or -errno. */
int uuring_munmap(void *addr, size_t length);

/* close(2): 0 or -errno.  Closing the last fd of a ring releases it. */
int uuring_close(int fd);

/* dup(2): the new fd or -errno; a dup of a ring fd is the same ring. */
int uuring_dup(int fd);

/* 1 if fd refers to a uuring ring, else 0. */
int uuring_is_ring_fd(int fd);

/*
 * Per-ring statistics.  Counters only grow.  uuring_get_stats() copies
 * min(size, sizeof(struct uuring_stats)) bytes and returns that count, or
 * -EBADF / -EOPNOTSUPP like io_uring_register on a bad fd.
 */
struct uuring_stats {
	uint64_t enter_calls;       /* uuring_enter calls on this ring */
	uint64_t sqes_consumed;     /* SQEs taken off the SQ ring */
	uint64_t sqes_dropped;      /* SQ index out of range (sq_dropped) */
	uint64_t cqes_posted;       /* CQEs written to the CQ ring */
	uint64_t cqes_overflowed;   /* CQEs that went to the overflow backlog */
	uint64_t cqes_lost;         /* CQEs dropped (allocation failed) */
	uint64_t route_inline;      /* requests issued in the submitting thread */
	uint64_t route_iowq;        /* requests run by an io-wq worker */
	uint64_t route_poll;        /* requests parked on the readiness engine */
	uint64_t route_sqpoll;      /* requests submitted by the SQPOLL thread */
	uint64_t waits;             /* enter calls that had to sleep for CQEs */
	uint64_t wakeups;           /* times a sleeping waiter was woken */
	uint64_t spurious_wakeups;  /* wakeups that found the wait unsatisfied */
	uint64_t readiness_signals; /* writes making the ring fd readable */
	uint64_t readiness_drains;  /* reads making it unreadable again */
	/* task_work queue of DEFER_TASKRUN and SQPOLL rings (completions
	 * and link continuations the submitter or the SQ thread runs; other
	 * rings get their CQEs posted where the work finished): runs that
	 * ran at least one item, and the items they ran */
	uint64_t tw_runs;
	uint64_t tw_items;
	/* io-wq pools are per submitting thread and shared by all its rings
	 * (the kernel's io-wq is per task): these three are process-wide */
	uint64_t iowq_workers_bound;   /* workers alive now, bounded class */
	uint64_t iowq_workers_unbound; /* workers alive now, unbounded class */
	uint64_t iowq_workers_created; /* worker threads started so far */
	/* O_DIRECT reads and writes io_submit'ed to Linux AIO (exec/aio.c);
	 * those AIO refused count in route_iowq */
	uint64_t route_aio;
	/* requests served by a null device (UURING_NULLB, below) */
	uint64_t route_nullb;
};

int uuring_get_stats(int ring_fd, struct uuring_stats *st, size_t size);

/* Writes the statistics as "name value" lines to out_fd; 0 or -errno. */
int uuring_dump_stats(int ring_fd, int out_fd);

/*
 * Null block devices (the block-queue model's null target, after the
 * kernel's null_blk): spec is UURING_NULLB's format,
 * "PATH[:opt=val,...][;PATH2...]" with the options irqmode,
 * completion_nsec, hw_queue_depth, submit_queues, bs, size and
 * memory_backed (README, "Null block devices").  Reads, writes and FSYNC
 * that rings issue on an fd of one of those regular files are served by
 * the model instead of the file.  Replaces the configuration (of
 * UURING_NULLB too); NULL or "" removes every device.  0, or -EINVAL
 * after one line on stderr naming the bad option (the configuration is
 * then unchanged), or -ENOMEM.
 */
int uuring_nullb_config(const char *spec);

#define UURING_NULLB_LAT_BUCKETS 160
struct uuring_nullb_stats {
	uint64_t dispatched;     /* requests started on the device (a tag) */
	uint64_t completed;
	uint64_t tag_waits;      /* requests that waited for a free tag */
	uint64_t inflight_max;   /* most tags in use at once on one queue */
	uint64_t bytes_read, bytes_written, flushes;
	uint64_t hw_queues, hw_queue_depth;
	/* dispatch -> completion delays: below 8 ns one bucket per ns, then
	 * 4 buckets per power of two (bucket b >= 12 holds
	 * [(4 + b % 4) << (b / 4 - 2), the next bucket's start) ns) */
	uint64_t lat_hist[UURING_NULLB_LAT_BUCKETS];
	uint64_t lat_p50_ns, lat_p99_ns; /* the start of their buckets */
};

/* The device configured for path (matched by its inode): copies
 * min(size, sizeof) bytes and returns that count, or -ENOENT. */
int uuring_nullb_stats(const char *path, struct uuring_nullb_stats *st,
		       size_t size);

/*
 * Knobs through the API: name is the environment variable's
 * ("UURING_PRIO_TW", ...; README "Configuration knobs" lists which the
 * API takes), value what it would hold.  The environment is read once at
 * load; this overrides it for decisions made from then on (rings set up,
 * SQPOLL threads and io-wq pools started, CQ commits made after the
 * call).  0, or -EINVAL for an unknown name or a bad value (the knob is
 * then unchanged).
 */
int uuring_set_knob(const char *name, const char *value);

/*
 * Tests: how many times the fault-injection site `site` (UURING_FAULT,
 * `uuring faults` lists them) has failed in this process so far, or
 * -EINVAL for an unknown site.
 */
long uuring_fault_hits(const char *site);

/*
 * Lock statistics (UURING_LOCKSTAT=1, or uuring_set_knob): process-wide,
 * per class of engine lock.  A contended acquisition is one whose first
 * try found the lock held; its taker then slept (the engine's locks are
 * futex mutexes) for wait_ns in all.  wall_ns: time since counting was
 * switched on.  Copies min(size, sizeof) bytes and returns that count.
 */
#define UURING_LOCK_CLASSES 8
struct uuring_lockstat {
	uint64_t enabled;
	uint64_t wall_ns;
	struct {
		char name[16]; /* "sq", "cq", "cq_waiters", "task_work",
				* "sqpoll", "iowq_work", "iowq_workers",
				* "iowq_global" */
		uint64_t acquired, contended, wait_ns;
	} lock[UURING_LOCK_CLASSES];
};

int uuring_get_lockstat(struct uuring_lockstat *st, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* UURING_H */
