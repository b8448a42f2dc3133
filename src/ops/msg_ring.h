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

#endif /* UURING_OPS_MSG_RING_H */
