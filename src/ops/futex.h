/* SPDX-License-Identifier: MIT */
/*
 * FUTEX_WAKE, FUTEX_WAIT, FUTEX_WAITV (ops/futex.c).
 */
#ifndef UURING_OPS_FUTEX_H
#define UURING_OPS_FUTEX_H

#include "core/types.h"

int uu_futex_prep(struct uu_req *req);
int uu_futex_wake_issue(struct uu_req *req, unsigned int issue_flags);
int uu_futex_wait_prep(struct uu_req *req);
int uu_futex_wait_issue(struct uu_req *req, unsigned int issue_flags);
void uu_futex_wait_cleanup(struct uu_req *req);
int uu_futexv_prep(struct uu_req *req);
int uu_futexv_issue(struct uu_req *req, unsigned int issue_flags);
void uu_futexv_cleanup(struct uu_req *req);

/* per-op state, in the request's area (uu_req_cmd in core/types.h) */
/* FUTEX_WAKE, FUTEX_WAIT (the wait's job, shared with its thread,
 * in hdr.mem) */
struct uu_futex_cmd {
	struct uu_os_hdr hdr;
	uint64_t uaddr;
	uint64_t val, mask;
	uint32_t flags;          /* FUTEX2_* */
};

#endif /* UURING_OPS_FUTEX_H */
