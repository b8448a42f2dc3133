/* SPDX-License-Identifier: MIT */
/*
 * READ, WRITE, READV, WRITEV, READ_MULTISHOT (ops/rw.c), their IOPOLL
 * path (ops/rw_iopoll.c) and the registered-buffer variants (ops/rwfixed.c).
 */
#ifndef UURING_OPS_RW_H
#define UURING_OPS_RW_H

#include "core/types.h"

int uu_rw_prep(struct uu_req *req);
int uu_rwv_prep(struct uu_req *req);
int uu_read_issue(struct uu_req *req, unsigned int issue_flags);
int uu_read_mshot_prep(struct uu_req *req);
int uu_read_mshot_issue(struct uu_req *req, unsigned int issue_flags);
int uu_write_issue(struct uu_req *req, unsigned int issue_flags);
void uu_rw_cleanup(struct uu_req *req);
void uu_rw_forget_fd(int fd); /* an fd number was closed */
int uu_rw_iopoll_issue(struct uu_req *req, bool is_write,
		       unsigned int issue_flags); /* ops/rw_iopoll.c */

/*
 * Files whose read and write are a driver's of ours, not the kernel's:
 * the ublk char device's USER_COPY (ublk/ublk_cmd.c sets it when the
 * first ublk file is opened).  The hook returns false when req's file is
 * not one of them; else *res is the CQE's result.
 */
typedef bool (*uu_rw_file_fn)(struct uu_req *req, bool is_write, int *res);
void uu_rw_set_file_hook(uu_rw_file_fn fn);

/* ---- registered-buffer opcodes (ops/rwfixed.c) ---- */
int uu_rw_fixed_prep(struct uu_req *req);
int uu_rwv_fixed_prep(struct uu_req *req);
int uu_read_fixed_issue(struct uu_req *req, unsigned int issue_flags);
int uu_write_fixed_issue(struct uu_req *req, unsigned int issue_flags);
int uu_readv_fixed_issue(struct uu_req *req, unsigned int issue_flags);
int uu_writev_fixed_issue(struct uu_req *req, unsigned int issue_flags);
void uu_rw_fixed_cleanup(struct uu_req *req);

/* per-op state, in the request's area (uu_req_cmd in core/types.h) */
struct uu_rw_cmd {
	int64_t pos;
	uint32_t rw_flags;
	bool ring_file;    /* parked on a ring fd's readiness
			    * (rw.c ring_file_rw) */
	bool meta;         /* a PI attribute (rw.c
			    * prep_attr) */
	bool kbuf_mapped;  /* *_FIXED on a driver's buffer: iov holds our
			    * addresses already (rwfixed.c import_kbuf) */
	int nr_iov;
	size_t total;
	struct iovec *iov;
	struct iovec inline_iov[UU_INLINE_IOVS];
};

#endif /* UURING_OPS_RW_H */
