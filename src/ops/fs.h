/* SPDX-License-Identifier: MIT */
/*
 * FSYNC (ops/fs.c) and the path and file-range opcodes (ops/fsops.c).
 */
#ifndef UURING_OPS_FS_H
#define UURING_OPS_FS_H

#include "core/types.h"

int uu_fsync_prep(struct uu_req *req);
int uu_fsync_issue(struct uu_req *req, unsigned int issue_flags);

int uu_statx_prep(struct uu_req *req);
int uu_statx_issue(struct uu_req *req, unsigned int issue_flags);
int uu_renameat_prep(struct uu_req *req);
int uu_renameat_issue(struct uu_req *req, unsigned int issue_flags);
int uu_unlinkat_prep(struct uu_req *req);
int uu_unlinkat_issue(struct uu_req *req, unsigned int issue_flags);
int uu_mkdirat_prep(struct uu_req *req);
int uu_mkdirat_issue(struct uu_req *req, unsigned int issue_flags);
int uu_symlinkat_prep(struct uu_req *req);
int uu_symlinkat_issue(struct uu_req *req, unsigned int issue_flags);
int uu_linkat_prep(struct uu_req *req);
int uu_linkat_issue(struct uu_req *req, unsigned int issue_flags);
int uu_fallocate_prep(struct uu_req *req);
int uu_fallocate_issue(struct uu_req *req, unsigned int issue_flags);
int uu_fadvise_prep(struct uu_req *req);
int uu_fadvise_issue(struct uu_req *req, unsigned int issue_flags);
int uu_madvise_prep(struct uu_req *req);
int uu_madvise_issue(struct uu_req *req, unsigned int issue_flags);
int uu_ftruncate_prep(struct uu_req *req);
int uu_ftruncate_issue(struct uu_req *req, unsigned int issue_flags);
int uu_sfr_prep(struct uu_req *req);
int uu_sfr_issue(struct uu_req *req, unsigned int issue_flags);

#endif /* UURING_OPS_FS_H */
