/* SPDX-License-Identifier: MIT */
/*
 * WAITID (ops/waitid.c).
 */
#ifndef UURING_OPS_WAITID_H
#define UURING_OPS_WAITID_H

#include "core/types.h"

int uu_waitid_prep(struct uu_req *req);
int uu_waitid_issue(struct uu_req *req, unsigned int issue_flags);

#endif /* UURING_OPS_WAITID_H */
