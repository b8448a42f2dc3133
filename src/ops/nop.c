// SPDX-License-Identifier: MIT
/* IORING_OP_NOP */
#include <errno.h>
#include <fcntl.h>

#include "core/buffers.h"
#include "core/rsrc.h"
#include "core/types.h"
#include "ops/nop.h"

#define NOP_FLAGS                                                          \
	(IORING_NOP_INJECT_RESULT | IORING_NOP_FIXED_FILE |                \
	 IORING_NOP_FIXED_BUFFER | IORING_NOP_FILE | IORING_NOP_TW |       \
	 IORING_NOP_CQE32)

int uu_nop_prep(struct uu_req *req)
{
	struct uu_nop_cmd *nop_st = uu_cmd(req, nop);
	const struct io_uring_sqe *sqe = &req->sqe;

	nop_st->flags = sqe->nop_flags;
	if (nop_st->flags & ~NOP_FLAGS)
		return -EINVAL;
	nop_st->result = (nop_st->flags & IORING_NOP_INJECT_RESULT) ?
		(int32_t)sqe->len : 0;
	nop_st->fd = (nop_st->flags & IORING_NOP_FILE) ? sqe->fd : -1;
	if (nop_st->flags & IORING_NOP_CQE32) {
		unsigned int f = req->ring->setup_flags;

		if (!(f & (IORING_SETUP_CQE32 | IORING_SETUP_CQE_MIXED)))
			return -EINVAL;
		req->big[0] = sqe->off;
		req->big[1] = sqe->addr;
		if (f & IORING_SETUP_CQE_MIXED)
			req->cflags |= IORING_CQE_F_32;
	}
	return 0;
}

static int nop_result(struct uu_req *req)
{
	struct uu_nop_cmd *nop_st = uu_cmd(req, nop);

	if (nop_st->flags & IORING_NOP_FILE) {
		if (nop_st->flags & IORING_NOP_FIXED_FILE) {
			if (uu_fixed_file(req->ring, (unsigned int)nop_st->fd) < 0)
				return -EBADF;
		} else if (fcntl(nop_st->fd, F_GETFD) < 0)
			return -EBADF;
	}
	if (nop_st->flags & IORING_NOP_FIXED_BUFFER) {
		/* the kernel's lookup in the buffer table: an empty or
		 * out-of-range slot is -EFAULT */
		struct uu_rbuf_node *node =
			uu_rbuf_get(req->ring, req->sqe.buf_index);

		if (!node)
			return -EFAULT;
		uu_rbuf_put(node);
	}
	return nop_st->result;
}

int uu_nop_issue(struct uu_req *req, unsigned int issue_flags)
{
	int res = nop_result(req);

	(void)issue_flags;
	if (!(uu_cmd(req, nop)->flags & IORING_NOP_TW))
		return res;
	/* the result, good or bad, is posted from task_work */
	req->res = res;
	return uu_park(req, UU_ISSUE_PARK_TW);
}
