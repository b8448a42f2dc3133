/* SPDX-License-Identifier: MIT */
/*
 * io-wq, the pools of worker threads (exec/iowq.c).
 */
#ifndef UURING_EXEC_IOWQ_H
#define UURING_EXEC_IOWQ_H

#include "core/types.h"

bool uu_iowq_cancel_pending(struct uu_req *req);

bool uu_iowq_cancel_running(struct uu_req *req);
struct uu_iowq *uu_iowq_current(void);
void uu_iowq_issue_done(void);

struct uu_iowq;
void uu_iowq_enqueue(struct uu_req *req, bool unbound);
void uu_iowq_enqueue_list(struct uu_req *list);
void uu_iowq_blocking(bool begin);

void uu_iowq_max_workers(struct uu_ring *ring, uint32_t vals[2]);
struct uu_iowq *uu_iowq_of_caller(struct uu_ring *ring);
struct uu_iowq *uu_iowq_current_create(struct uu_ring *ring);
void uu_iowq_set_affinity(struct uu_iowq *wq, const cpu_set_t *mask);
struct uu_iowq *uu_sqd_iowq(struct uu_sqd *sqd);

void uu_iowq_put(struct uu_iowq *wq);

void uu_iowq_prewarm(void);
/* process-wide worker counts: alive[0] bounded, alive[1] unbounded */
void uu_iowq_worker_counts(uint64_t alive[2], uint64_t *created);

void uu_iowq_atfork_child(void);


#endif /* UURING_EXEC_IOWQ_H */
