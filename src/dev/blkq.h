/* SPDX-License-Identifier: MIT */
/*
 * blkq: a user-space model of blk-mq as the engine sees it, shared by the
 * devices the engine serves itself (the null target, dev/nullb.c; later
 * the ublk driver).  A device is a struct uu_blkq with a target (struct
 * uu_blkq_ops) behind it:
 *
 *  - hardware queues (hctx): a request goes to the queue of the CPU its
 *    issuing thread runs on (sched_getcpu), with blk-mq's default map
 *    (blk_mq_map_queues on a flat topology: CPUs split into nr_hw_queues
 *    contiguous groups of nearly equal size);
 *  - tags: each hctx has queue_depth of them, one per request in flight;
 *    a request that finds none waits on its hctx's FIFO and is dispatched,
 *    in order, by whoever frees a tag (the tag is handed over directly, so
 *    a newcomer never overtakes a waiter);
 *  - the completion context: a target ends a request with uu_blkq_end()
 *    from wherever it completes (inside queue_rq, as null_blk's irqmode
 *    0/1, or from its own thread, as its timer); the tag is freed there and
 *    the io_uring request is handed back to its ring the way the engine's
 *    other asynchronous completions are (uu_exec_finish_late in a thread
 *    that runs a context of the ring, else uu_req_finish_async_batch: the
 *    CQE is posted by that thread, or queued as task_work for a
 *    DEFER_TASKRUN submitter or an SQPOLL thread).
 *
 * How an io_uring request gets here: the target's issue hook (called from
 * the opcode's issue function) decides that the request is the device's,
 * calls uu_blkq_prepare() and returns uu_park(req, UU_ISSUE_PARK_DEV); the
 * core's park() then calls uu_blkq_park() with the request on the heap,
 * counted in flight and on the parked list (core/req.c).
 */
#ifndef UURING_DEV_BLKQ_H
#define UURING_DEV_BLKQ_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct uu_req;
struct uu_blkq;

enum { UU_BLKQ_READ, UU_BLKQ_WRITE, UU_BLKQ_FLUSH };

/* One per tag, preallocated (blk-mq's static requests). */
struct uu_blkq_rq {
	struct uu_blkq *q;
	struct uu_blkq_hctx *hctx;
	struct uu_req *req;      /* the io_uring request it serves */
	void *raw;               /* or, from uu_blkq_submit_raw, the
				  * submitter's (req is NULL then) */
	unsigned int tag;
	uint8_t op;              /* UU_BLKQ_* */
	uint64_t pos;            /* bytes */
	uint64_t len;            /* bytes (after truncation at the end) */
	int64_t start_ns;        /* CLOCK_MONOTONIC at dispatch */
	bool inl;                /* run inside its issue (uu_blkq_run_inline):
				  * no parked request behind it */
	int res;                 /* inl: the result uu_blkq_end gave */
	/* the target's own: its timer's deadline and list link */
	int64_t deadline;
	struct uu_blkq_rq *tnext;
};

struct uu_blkq_ops {
	/* Starts rq (its tag is held).  The target ends it with uu_blkq_end,
	 * in this call or later from another thread. */
	void (*queue_rq)(struct uu_blkq_rq *rq);
	/* the last reference to the queue is gone: free the target */
	void (*release)(struct uu_blkq *q);
	/* a request of uu_blkq_submit_raw ends with res (called by
	 * uu_blkq_end while rq and its tag are still the request's) */
	void (*end_raw)(struct uu_blkq_rq *rq, int res);
};

struct uu_blkq_hctx {
	pthread_mutex_t lock;
	unsigned int nr_free;
	unsigned int *free_tags;       /* stack of free tag numbers */
	struct uu_blkq_rq *rqs;        /* [depth] */
	struct uu_req *wait_head, *wait_tail; /* FIFO (req->wq_next) */
	unsigned int busy;             /* tags in use */
};

/* delays below 8 ns one bucket each, then 4 buckets per power of two
 * of nanoseconds (uu_blkq_lat_bucket; 8-11 unused) */
#define UU_BLKQ_LAT_BUCKETS 160

struct uu_blkq {
	atomic_int refs;
	const struct uu_blkq_ops *ops;
	void *priv;                    /* the target's */
	unsigned int nr_hw_queues, depth;
	struct uu_blkq_hctx *hctx;
	unsigned int nr_cpus;
	unsigned int *cpu_map;         /* CPU -> hctx */
	/* statistics (relaxed; busy_max under the hctx locks) */
	atomic_ullong dispatched, completed, tag_waits;
	atomic_uint busy_max;          /* most tags in use on one hctx */
	atomic_ullong lat[UU_BLKQ_LAT_BUCKETS]; /* dispatch -> end */
};

/* nr_hw_queues >= 1, depth >= 1; 0 or -ENOMEM.  One reference. */
int uu_blkq_init(struct uu_blkq *q, const struct uu_blkq_ops *ops,
		 void *priv, unsigned int nr_hw_queues, unsigned int depth);
void uu_blkq_get(struct uu_blkq *q);
void uu_blkq_put(struct uu_blkq *q);

/*
 * For a target's issue hook: the request being issued in this thread
 * goes to q (op, pos, len in bytes; the hook has checked them): the hook
 * then returns uu_park(req, UU_ISSUE_PARK_DEV).  Takes a reference to q
 * that the request holds until it ends.
 */
void uu_blkq_prepare(struct uu_blkq *q, uint8_t op, uint64_t pos,
		     uint64_t len, bool nowait);
/* core/req.c park(): the prepared request, now parked (heap) */
void uu_blkq_park(struct uu_req *req);

/*
 * irq "none" (null_blk irqmode=0): run the request to its end inside the
 * issue, if a tag is free now and nobody waits for one.  True with *res
 * set: done (the caller returns *res); false: park it instead.
 * queue_rq must end the request before it returns.
 */
bool uu_blkq_run_inline(struct uu_blkq *q, struct uu_req *req, uint8_t op,
			uint64_t pos, uint64_t len, int *res);

/*
 * A request that is not an io_uring request of this process (the ublk
 * driver's block side, src/ublk/ublkd_io.c): it goes to the hardware
 * queue of cpu (the submitter's, as blk-mq's map sends it), takes a tag
 * or waits in the FIFO, and ends through ops->end_raw with raw set.  0,
 * or -ENOMEM (no tag free and no memory to wait).
 */
int uu_blkq_submit_raw(struct uu_blkq *q, int cpu, uint8_t op, uint64_t pos,
		       uint64_t len, void *raw);

/* The target completes rq with res (bytes, or -errno). */
void uu_blkq_end(struct uu_blkq_rq *rq, int res);

/*
 * A completion section (the target's completion thread around a batch of
 * uu_blkq_end calls): requests ended inside are handed to their rings
 * together when the outermost section ends.
 */
void uu_blkq_section_begin(void);
void uu_blkq_section_end(void);

static inline unsigned int uu_blkq_lat_bucket(uint64_t ns)
{
	unsigned int l, b;

	if (ns < 8)
		return (unsigned int)ns;
	l = 63u - (unsigned int)__builtin_clzll(ns);
	b = l * 4 + (unsigned int)((ns >> (l - 2)) & 3);
	return b < UU_BLKQ_LAT_BUCKETS ? b : UU_BLKQ_LAT_BUCKETS - 1;
}

/* the smallest delay of bucket b */
static inline uint64_t uu_blkq_lat_floor(unsigned int b)
{
	if (b < 8)
		return b;
	return (uint64_t)(4 + (b & 3)) << (b / 4 - 2);
}

/* fork: reset every queue of the child (the parent's requests are
 * forgotten); called by the targets' atfork child handlers */
void uu_blkq_reset_child(struct uu_blkq *q);
void uu_blkq_lock_all(struct uu_blkq *q);
void uu_blkq_unlock_all(struct uu_blkq *q);

#endif
