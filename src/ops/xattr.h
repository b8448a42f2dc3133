/* SPDX-License-Identifier: MIT */
/*
 * The xattr opcodes (ops/xattr.c).
 */
#ifndef UURING_OPS_XATTR_H
#define UURING_OPS_XATTR_H

#include "core/types.h"

int uu_fgetxattr_prep(struct uu_req *req);
int uu_getxattr_prep(struct uu_req *req);
int uu_fgetxattr_issue(struct uu_req *req, unsigned int issue_flags);
int uu_getxattr_issue(struct uu_req *req, unsigned int issue_flags);
int uu_fsetxattr_prep(struct uu_req *req);
int uu_setxattr_prep(struct uu_req *req);
int uu_fsetxattr_issue(struct uu_req *req, unsigned int issue_flags);
int uu_setxattr_issue(struct uu_req *req, unsigned int issue_flags);

#endif /* UURING_OPS_XATTR_H */
