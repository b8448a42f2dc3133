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

/* per-op state, in the request's area (uu_req_cmd in core/types.h) */
/* FGETXATTR, FSETXATTR, GETXATTR, SETXATTR: hdr.mem holds the name
 * (UU_XATTR_NAME_LEN bytes) then the path of GETXATTR/SETXATTR;
 * hdr.mem2 the value of a set */
struct uu_xattr_cmd {
	struct uu_os_hdr hdr;
	uint64_t uvalue;         /* get: the user's buffer */
	uint32_t size;
	int flags;
	bool has_path;
};

#endif /* UURING_OPS_XATTR_H */
