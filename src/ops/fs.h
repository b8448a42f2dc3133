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

/* per-op state, in the request's area (uu_req_cmd in core/types.h) */
/* STATX: path in hdr.mem */
struct uu_statx_cmd {
	struct uu_os_hdr hdr;
	uint64_t ubuf;           /* struct statx in user memory */
	int dfd;
	uint32_t mask;
	int flags;
};

/* RENAMEAT, LINKAT, SYMLINKAT, UNLINKAT, MKDIRAT: the (old) path in
 * hdr.mem, the new one in hdr.mem2 */
struct uu_path_cmd {
	struct uu_os_hdr hdr;
	int old_dfd, new_dfd;
	int flags;               /* rename/link/unlink flags, mkdir mode */
};

/* FALLOCATE, SYNC_FILE_RANGE, FTRUNCATE, FADVISE, MADVISE */
struct uu_fsync_cmd {
	struct uu_os_hdr hdr;
	uint64_t off;            /* MADVISE: the address */
	uint64_t len;
	int mode;                /* fallocate mode, sfr flags, advice */
};

/* per-op state, in the request's area (uu_req_cmd in core/types.h) */
struct uu_sync_cmd {
	unsigned int flags;
	uint64_t off, len;
};

#endif /* UURING_OPS_FS_H */
