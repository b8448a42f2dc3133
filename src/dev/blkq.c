// SPDX-License-Identifier: MIT
/*
 * blkq: hardware queues, tags and the completion context of the engine's
 * block-queue model (see blkq.h for the picture).
 *
 * Locking: each hctx has its own mutex (tags, wait FIFO, busy count),
 * taken for a few instructions and never while any other lock of the
 * model is held; the target's callbacks run without it.  A request
 * belongs to the thread that dispatches it until its target ends it,
 * and to the thread that ends it until it is handed to its ring.
 *
 * Re-entrancy: ending a request may hand its tag to a waiter, whose
 * dispatch may end at once (irqmode 0/1), freeing the tag again...  So
 * dispatches and hand-backs are queued per thread and run by the
 * outermost "section" (uu_blkq_section_end), in a loop, not recursively.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>

#include "core/req.h"
#include "core/tctx.h"
#include "core/types.h"
#include "dev/blkq.h"
#include "ops/rw.h"

/* A request waiting for a tag (only then allocated). */
struct blkq_waiter {
	struct blkq_waiter *next;
	struct uu_req *req;
	void *raw;               /* uu_blkq_submit_raw's (req NULL) */
	uint8_t op;
	uint64_t pos, len;
};

static __thread struct {
	unsigned int depth;                      /* section nesting */
	struct uu_blkq_rq *disp_head, *disp_tail; /* to dispatch */
	struct uu_req *done_head, *done_tail;     /* to hand back (wq_next) */
	/* prepared by a target's issue hook for the park that follows */
	struct uu_blkq *pq;
	uint8_t op;
	bool nowait;
	uint64_t pos, len;
	int inl_res;                             /* uu_blkq_run_inline's */
} T;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int uu_blkq_init(struct uu_blkq *q, const struct uu_blkq_ops *ops,
		 void *priv, unsigned int nr_hw_queues, unsigned int depth)
{
	int ncpu = get_nprocs_conf();

	memset(q, 0, sizeof(*q));
	atomic_init(&q->refs, 1);
	q->ops = ops;
	q->priv = priv;
	q->nr_hw_queues = nr_hw_queues;
	q->depth = depth;
	q->nr_cpus = ncpu > 0 ? (unsigned int)ncpu : 1;
	q->cpu_map = calloc(q->nr_cpus, sizeof(*q->cpu_map));
	q->hctx = calloc(nr_hw_queues, sizeof(*q->hctx));
	if (!q->cpu_map || !q->hctx)
		goto nomem;
	/* blk_mq_map_queues on a flat topology: contiguous, even groups */
	for (unsigned int c = 0; c < q->nr_cpus; c++)
		q->cpu_map[c] = (unsigned int)((uint64_t)c * nr_hw_queues /
					       q->nr_cpus);
	for (unsigned int i = 0; i < nr_hw_queues; i++) {
		struct uu_blkq_hctx *h = &q->hctx[i];

		pthread_mutex_init(&h->lock, NULL);
		h->rqs = calloc(depth, sizeof(*h->rqs));
		h->free_tags = calloc(depth, sizeof(*h->free_tags));
		if (!h->rqs || !h->free_tags)
			goto nomem;
		/* lowest tag on top of the stack */
		for (unsigned int t = 0; t < depth; t++)
			h->free_tags[t] = depth - 1 - t;
		h->nr_free = depth;
	}
	return 0;
nomem:
	if (q->hctx)
		for (unsigned int i = 0; i < nr_hw_queues; i++) {
			free(q->hctx[i].rqs);
			free(q->hctx[i].free_tags);
		}
	free(q->hctx);
	free(q->cpu_map);
	return -ENOMEM;
}

void uu_blkq_get(struct uu_blkq *q)
{
	atomic_fetch_add_explicit(&q->refs, 1, memory_order_relaxed);
}

void uu_blkq_put(struct uu_blkq *q)
{
	/* acq_rel: every user's accesses happen before the release */
	if (atomic_fetch_sub_explicit(&q->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (unsigned int i = 0; i < q->nr_hw_queues; i++) {
		pthread_mutex_destroy(&q->hctx[i].lock);
		free(q->hctx[i].rqs);
		free(q->hctx[i].free_tags);
	}
	free(q->hctx);
	free(q->cpu_map);
	q->ops->release(q);
}

static struct uu_blkq_hctx *pick_hctx(struct uu_blkq *q)
{
	int cpu = sched_getcpu();

	if (q->nr_hw_queues == 1 || cpu < 0 || (unsigned int)cpu >= q->nr_cpus)
		return &q->hctx[0];
	return &q->hctx[q->cpu_map[cpu]];
}

/* A tag of h for a newcomer (none while anyone waits: FIFO), or -1. */
static int get_tag_locked(struct uu_blkq *q, struct uu_blkq_hctx *h)
{
	unsigned int busy;

	if (!h->nr_free || h->wait_head)
		return -1;
	busy = ++h->busy;
	if (busy > atomic_load_explicit(&q->busy_max, memory_order_relaxed))
		atomic_store_explicit(&q->busy_max, busy, memory_order_relaxed);
	return (int)h->free_tags[--h->nr_free];
}

static struct uu_blkq_rq *fill_rq(struct uu_blkq *q, struct uu_blkq_hctx *h,
				  unsigned int tag, struct uu_req *req,
				  uint8_t op, uint64_t pos, uint64_t len)
{
	struct uu_blkq_rq *rq = &h->rqs[tag];

	rq->q = q;
	rq->hctx = h;
	rq->req = req;
	rq->raw = NULL;
	rq->tag = tag;
	rq->op = op;
	rq->pos = pos;
	rq->len = len;
	rq->inl = false;
	rq->res = 0;
	rq->tnext = NULL;
	return rq;
}

static void start_rq(struct uu_blkq_rq *rq)
{
	atomic_fetch_add_explicit(&rq->q->dispatched, 1, memory_order_relaxed);
	rq->start_ns = now_ns();
	rq->q->ops->queue_rq(rq);
}

static void disp_append(struct uu_blkq_rq *rq)
{
	rq->tnext = NULL;
	if (T.disp_tail)
		T.disp_tail->tnext = rq;
	else
		T.disp_head = rq;
	T.disp_tail = rq;
}

static void done_append(struct uu_req *req)
{
	req->wq_next = NULL;
	if (T.done_tail)
		T.done_tail->wq_next = req;
	else
		T.done_head = req;
	T.done_tail = req;
}

void uu_blkq_section_begin(void)
{
	T.depth++;
}

/*
 * The hand-back: in a thread running a context of the ring (the
 * submitter, an io-wq worker, the SQPOLL thread) the request completes
 * after that context's batch, as the kernel's task_work runs after the
 * submission (uu_exec_finish_late); elsewhere (the target's completion
 * thread) a batch at a time, as the AIO reaper does.
 */
static void hand_back(struct uu_req *list)
{
	struct uu_req *batch[64];
	unsigned int n = 0;

	while (list) {
		struct uu_req *req = list;

		list = req->wq_next;
		req->wq_next = NULL;
		if (uu_tctx.exec) {
			uu_exec_finish_late(req);
			continue;
		}
		batch[n++] = req;
		if (n == 64) {
			uu_req_finish_async_batch(batch, n);
			n = 0;
		}
	}
	if (n)
		uu_req_finish_async_batch(batch, n);
}

void uu_blkq_section_end(void)
{
	if (T.depth > 1) {
		T.depth--;
		return;
	}
	/* depth stays 1 while dispatching: nested ends only queue */
	for (;;) {
		struct uu_blkq_rq *rq = T.disp_head;
		struct uu_req *done;

		if (rq) {
			T.disp_head = rq->tnext;
			if (!T.disp_head)
				T.disp_tail = NULL;
			start_rq(rq);
			continue;
		}
		done = T.done_head;
		if (!done)
			break;
		T.done_head = T.done_tail = NULL;
		/* a link continuation issued by the hand-back may come back
		 * here through a park: it opens its own section */
		T.depth = 0;
		hand_back(done);
		T.depth = 1;
	}
	T.depth = 0;
}

void uu_blkq_prepare(struct uu_blkq *q, uint8_t op, uint64_t pos,
		     uint64_t len, bool nowait)
{
	/* a prepared request whose park failed (no memory for the heap
	 * copy) left its reference here */
	if (T.pq)
		uu_blkq_put(T.pq);
	uu_blkq_get(q);
	T.pq = q;
	T.op = op;
	T.pos = pos;
	T.len = len;
	T.nowait = nowait;
}

/* req ends without a tag (res set): its CQE goes the parked way */
static void end_untagged(struct uu_blkq *q, struct uu_req *req, int res)
{
	req->res = res;
	done_append(req);
	uu_blkq_put(q);
}

void uu_blkq_park(struct uu_req *req)
{
	struct uu_blkq *q = T.pq;
	struct uu_blkq_hctx *h;
	struct blkq_waiter *w;
	int tag;

	T.pq = NULL;
	uu_blkq_section_begin();
	if (!q) {
		/* a park without a prepare: a bug of the target's hook */
		req->res = -EIO;
		done_append(req);
		uu_blkq_section_end();
		return;
	}
	h = pick_hctx(q);
	pthread_mutex_lock(&h->lock);
	tag = get_tag_locked(q, h);
	if (tag >= 0) {
		pthread_mutex_unlock(&h->lock);
		disp_append(fill_rq(q, h, (unsigned int)tag, req, T.op, T.pos,
				    T.len));
	} else if (T.nowait) {
		/* blk_mq_get_tag with BLK_MQ_REQ_NOWAIT: BLK_STS_AGAIN */
		pthread_mutex_unlock(&h->lock);
		end_untagged(q, req, -EAGAIN);
	} else if (!(w = malloc(sizeof(*w)))) {
		pthread_mutex_unlock(&h->lock);
		end_untagged(q, req, -ENOMEM);
	} else {
		w->next = NULL;
		w->req = req;
		w->raw = NULL;
		w->op = T.op;
		w->pos = T.pos;
		w->len = T.len;
		if (h->wait_tail)
			((struct blkq_waiter *)h->wait_tail)->next = w;
		else
			h->wait_head = (struct uu_req *)w;
		h->wait_tail = (struct uu_req *)w;
		pthread_mutex_unlock(&h->lock);
		atomic_fetch_add_explicit(&q->tag_waits, 1,
					  memory_order_relaxed);
	}
	uu_blkq_section_end();
}

static struct uu_blkq_hctx *cpu_hctx(struct uu_blkq *q, int cpu)
{
	if (q->nr_hw_queues == 1 || cpu < 0 || (unsigned int)cpu >= q->nr_cpus)
		return &q->hctx[0];
	return &q->hctx[q->cpu_map[cpu]];
}

int uu_blkq_submit_raw(struct uu_blkq *q, int cpu, uint8_t op, uint64_t pos,
		       uint64_t len, void *raw)
{
	struct uu_blkq_hctx *h = cpu_hctx(q, cpu);
	struct blkq_waiter *w;
	int tag, ret = 0;

	uu_blkq_get(q); /* the request's, dropped by uu_blkq_end */
	uu_blkq_section_begin();
	pthread_mutex_lock(&h->lock);
	tag = get_tag_locked(q, h);
	if (tag >= 0) {
		struct uu_blkq_rq *rq;

		pthread_mutex_unlock(&h->lock);
		rq = fill_rq(q, h, (unsigned int)tag, NULL, op, pos, len);
		rq->raw = raw;
		disp_append(rq);
	} else if (!(w = malloc(sizeof(*w)))) {
		pthread_mutex_unlock(&h->lock);
		uu_blkq_put(q);
		ret = -ENOMEM;
	} else {
		w->next = NULL;
		w->req = NULL;
		w->raw = raw;
		w->op = op;
		w->pos = pos;
		w->len = len;
		if (h->wait_tail)
			((struct blkq_waiter *)h->wait_tail)->next = w;
		else
			h->wait_head = (struct uu_req *)w;
		h->wait_tail = (struct uu_req *)w;
		pthread_mutex_unlock(&h->lock);
		atomic_fetch_add_explicit(&q->tag_waits, 1,
					  memory_order_relaxed);
	}
	uu_blkq_section_end();
	return ret;
}

bool uu_blkq_run_inline(struct uu_blkq *q, struct uu_req *req, uint8_t op,
			uint64_t pos, uint64_t len, int *res)
{
	struct uu_blkq_hctx *h = pick_hctx(q);
	struct uu_blkq_rq *rq;
	int tag;

	pthread_mutex_lock(&h->lock);
	tag = get_tag_locked(q, h);
	pthread_mutex_unlock(&h->lock);
	if (tag < 0)
		return false;
	uu_blkq_section_begin();
	rq = fill_rq(q, h, (unsigned int)tag, req, op, pos, len);
	rq->inl = true;
	uu_blkq_get(q); /* uu_blkq_end drops it */
	start_rq(rq);
	/* the tag (and rq) may serve a waiter by now: the result was left
	 * in the thread by uu_blkq_end */
	*res = T.inl_res;
	uu_blkq_section_end();
	return true;
}

void uu_blkq_end(struct uu_blkq_rq *rq, int res)
{
	struct uu_blkq *q = rq->q;
	struct uu_blkq_hctx *h = rq->hctx;
	struct uu_req *req = rq->req;
	int64_t d = now_ns() - rq->start_ns;
	struct blkq_waiter *w;

	uu_blkq_section_begin();
	atomic_fetch_add_explicit(&q->lat[uu_blkq_lat_bucket(d > 0 ? (uint64_t)d : 0)],
				  1, memory_order_relaxed);
	atomic_fetch_add_explicit(&q->completed, 1, memory_order_relaxed);
	if (rq->raw) {
		q->ops->end_raw(rq, res);
	} else if (rq->inl) {
		T.inl_res = res;
	} else {
		req->res = res;
		/* a read or write cut at the device's end is short: it fails
		 * the link chain, as the kernel's short read does */
		if (res >= 0 && rq->op != UU_BLKQ_FLUSH &&
		    (size_t)res != uu_cmd(req, rw)->total)
			req->flags |= UU_REQ_SHORT;
		done_append(req);
	}
	pthread_mutex_lock(&h->lock);
	w = (struct blkq_waiter *)h->wait_head;
	if (w) {
		/* the tag goes to the oldest waiter, with rq */
		h->wait_head = (struct uu_req *)w->next;
		if (!w->next)
			h->wait_tail = NULL;
	} else {
		h->free_tags[h->nr_free++] = rq->tag;
		h->busy--;
	}
	pthread_mutex_unlock(&h->lock);
	if (w) {
		struct uu_blkq_rq *next = fill_rq(q, h, rq->tag, w->req,
						  w->op, w->pos, w->len);

		next->raw = w->raw;
		disp_append(next);
		free(w);
	}
	uu_blkq_put(q); /* the ended request's (a waiter holds its own) */
	uu_blkq_section_end();
}

void uu_blkq_lock_all(struct uu_blkq *q)
{
	for (unsigned int i = 0; i < q->nr_hw_queues; i++)
		pthread_mutex_lock(&q->hctx[i].lock);
}

void uu_blkq_unlock_all(struct uu_blkq *q)
{
	for (unsigned int i = 0; i < q->nr_hw_queues; i++)
		pthread_mutex_unlock(&q->hctx[i].lock);
}

/*
 * fork, in the child (after uu_blkq_unlock_all): the requests in flight
 * and waiting are the parent's (their rings are foreign here): forgotten,
 * every tag free again.  Their waiter records stay allocated (a copy of
 * the parent's memory; freeing them would be correct too, but they are
 * few).  The queue references they held are dropped with them.
 */
void uu_blkq_reset_child(struct uu_blkq *q)
{
	unsigned int lost = 0;

	for (unsigned int i = 0; i < q->nr_hw_queues; i++) {
		struct uu_blkq_hctx *h = &q->hctx[i];
		struct blkq_waiter *w;

		for (w = (struct blkq_waiter *)h->wait_head; w; w = w->next)
			lost++;
		lost += h->busy;
		h->wait_head = h->wait_tail = NULL;
		for (unsigned int t = 0; t < q->depth; t++)
			h->free_tags[t] = q->depth - 1 - t;
		h->nr_free = q->depth;
		h->busy = 0;
	}
	atomic_fetch_sub_explicit(&q->refs, (int)lost, memory_order_relaxed);
	memset(&T, 0, sizeof(T));
}
