// SPDX-License-Identifier: MIT
/* IORING_OP_FSYNC */
#include <errno.h>
#include <unistd.h>

#include "core/types.h"
#include "dev/nullb.h"
#include "ops/fs.h"

int uu_fsync_prep(struct uu_req *req)
{
	struct uu_sync_cmd *sync_st = uu_cmd(req, sync);
	const struct io_uring_sqe *sqe = &req->sqe;

	if (sqe->addr || sqe->buf_index || sqe->splice_fd_in)
		return -EINVAL;
	sync_st->flags = sqe->fsync_flags;
	if (sync_st->flags & ~IORING_FSYNC_DATASYNC)
		return -EINVAL;
	sync_st->off = sqe->off;
	sync_st->len = sqe->len;
	return 0;
}

/* The kernel syncs [off, off+len); syncing the whole file is a superset
 * with the same durability guarantee for that range. */
int uu_fsync_issue(struct uu_req *req, unsigned int issue_flags)
{
	int ret;

	if (req->flags & UU_REQ_FIXED_FILE)
		return -EBADF;
	/* a null device's file (dev/nullb.c): a flush through the model */
	if (unlikely(atomic_load_explicit(&uu_nullb_active,
					  memory_order_relaxed)) &&
	    uu_nullb_fsync(req, &ret))
		return ret;
	/* fsync blocks on the device: the kernel always runs it in io-wq */
	if (!(issue_flags & UU_ISSUE_F_WORKER))
		return uu_park(req, UU_ISSUE_PUNT);
	ret = (uu_cmd(req, sync)->flags & IORING_FSYNC_DATASYNC) ?
		fdatasync(req->fd) : fsync(req->fd);
	return ret ? -errno : 0;
}
