/* SPDX-License-Identifier: MIT */
/*
 * SPLICE and TEE (ops/splice.c).
 */
#ifndef UURING_OPS_SPLICE_H
#define UURING_OPS_SPLICE_H

#include "core/types.h"

int uu_splice_prep(struct uu_req *req);
int uu_splice_issue(struct uu_req *req, unsigned int issue_flags);
int uu_tee_prep(struct uu_req *req);
int uu_tee_issue(struct uu_req *req, unsigned int issue_flags);

/* per-op state, in the request's area (uu_req_cmd in core/types.h) */
/* SPLICE, TEE */
struct uu_splice_cmd {
	struct uu_os_hdr hdr;
	int64_t off_in, off_out;
	uint32_t len;
	uint32_t flags;
	int fd_in;
};

#endif /* UURING_OPS_SPLICE_H */
