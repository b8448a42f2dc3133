/* SPDX-License-Identifier: MIT */
/*
 * MSG_RING (ops/msg_ring.c).
 */
#ifndef UURING_OPS_MSG_RING_H
#define UURING_OPS_MSG_RING_H

#include "core/types.h"

int uu_msg_ring_prep(struct uu_req *req);
int uu_msg_ring_issue(struct uu_req *req, unsigned int issue_flags);
int uu_msg_ring_blind(void *arg, unsigned int nr_args);

/* per-op state, in the request's area (uu_req_cmd in core/types.h) */
struct uu_msg_cmd {
	uint64_t user_data, cmd;
	uint32_t len, src_fd, dst_fd, flags;
};

#endif /* UURING_OPS_MSG_RING_H */
