/* SPDX-License-Identifier: MIT */
/*
 * The request lifecycle and the execution context a batch of requests
 * runs in (core/req.c), and the submission loop (core/submit.c).
 */
#ifndef UURING_CORE_REQ_H
#define UURING_CORE_REQ_H

#include "core/types.h"

void uu_exec_finish_late(struct uu_req *req); /* after the batch */

#define UU_COMPL_BATCH 32

/* a CQE an execution context holds until its next flush */
struct uu_cqe_rec {
	uint64_t user_data;
	int32_t res;
	uint32_t cflags;
	uint64_t big[2];
	unsigned int xj; /* journal slot + 1 to free */
};

struct uu_exec {
	struct uu_ring *ring;
	struct uu_req *head, *last;       /* link chain being assembled */
	struct uu_req *tw_head, *tw_tail; /* link continuations, FIFO */
	bool submitter;                   /* the thread inside enter */
	struct uu_req *late_head, *late_tail; /* finish after the batch */
	struct uu_req *hold_head;         /* POLL_ADDs armed by this batch
					   * (poll_hold), released at its end */
	struct uu_req *punt_head, *punt_tail; /* to io-wq at the next flush */
	struct uu_req *aio_head, *aio_tail;   /* to Linux AIO at the next
					       * flush, in one io_submit */
	struct uu_exec *prev;             /* enclosing context, this thread */
	unsigned int ring_puts;           /* ring refs to drop at the end */
	unsigned int nr_inline;           /* route_inline not yet counted */
	bool publish_sq_head;             /* the next CQ commit also stores
					   * the SQ head (uu_submit_sqes) */
	bool sq_head_published;           /* ... and it did */
	unsigned int finishing_puts;      /* of them, off ring->finishing
					   * once their CQEs are posted */
	unsigned int inflight_puts;       /* parked requests of ring that
					   * finished: counted out of
					   * ring->inflight after their CQEs
					   * are posted (drain, T6) */
	struct {
		unsigned int nr;
		struct uu_cqe_rec e[UU_COMPL_BATCH];
	} cb;                             /* CQEs posted at the next flush */
};

void uu_exec_init(struct uu_exec *s, struct uu_ring *ring, bool submitter);
void uu_exec_flush(struct uu_exec *s);
void uu_exec_flush_direct(struct uu_exec *s);
void uu_exec_end(struct uu_exec *s);
void uu_req_set_fail(struct uu_req *req);
void uu_req_discard(struct uu_req *req);
struct uu_req *uu_req_to_heap(struct uu_req *req);
void uu_req_queue_head(struct uu_exec *s, struct uu_req *req, bool heap);
void uu_req_finish_async_batch(struct uu_req **reqs, unsigned int n);
void uu_req_run_in_worker(struct uu_req *req);
/* completes reaped IOPOLL requests (iopoll_next list) in one context */
void uu_req_complete_reaped(struct uu_ring *ring, struct uu_req *list);

void uu_req_run_batch_in_worker(struct uu_req *list);

int uu_submit_sqes(struct uu_ring *ring, unsigned int nr);

#endif /* UURING_CORE_REQ_H */
