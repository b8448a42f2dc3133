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

#endif /* UURING_OPS_SPLICE_H */
