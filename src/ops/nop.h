/* SPDX-License-Identifier: MIT */
/*
 * NOP (ops/nop.c).
 */
#ifndef UURING_OPS_NOP_H
#define UURING_OPS_NOP_H

#include "core/types.h"

int uu_nop_prep(struct uu_req *req);
int uu_nop_issue(struct uu_req *req, unsigned int issue_flags);

/* per-op state, in the request's area (uu_req_cmd in core/types.h) */
struct uu_nop_cmd {
	int32_t result;
	uint32_t flags;
	int fd;
};

#endif /* UURING_OPS_NOP_H */
