/* SPDX-License-Identifier: MIT */
/*
 * WAITID (ops/waitid.c).
 */
#ifndef UURING_OPS_WAITID_H
#define UURING_OPS_WAITID_H

#include "core/types.h"

int uu_waitid_prep(struct uu_req *req);
int uu_waitid_issue(struct uu_req *req, unsigned int issue_flags);

/* per-op state, in the request's area (uu_req_cmd in core/types.h) */
/* WAITID */
struct uu_waitid_cmd {
	struct uu_os_hdr hdr;
	uint64_t uinfop;         /* siginfo_t in user memory */
	int which, upid, options;
};

#endif /* UURING_OPS_WAITID_H */
