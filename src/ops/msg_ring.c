// SPDX-License-Identifier: MIT
/*
 * IORING_OP_MSG_RING: post a CQE into another ring of this process
 * (IORING_MSG_DATA), or pass a registered file into its table
 * (IORING_MSG_SEND_FD); IORING_REGISTER_SEND_MSG_RING sends data without
 * a ring of its own (uu_msg_ring_blind).  The target is posted to under its completion
 * lock, from the thread that issues the message.
 */
#include <errno.h>

#include "core/cq_post.h"
#include "core/registry.h"
#include "core/rsrc.h"
#include "core/types.h"
#include "core/xproc.h"
#include "ops/msg_ring.h"
#include "util/fdutil.h"
#include "util/rawsys.h"
#include "util/usercopy.h"

#define MSG_RING_MASK (IORING_MSG_RING_CQE_SKIP | IORING_MSG_RING_FLAGS_PASS)

int uu_msg_ring_prep(struct uu_req *req)
{
	struct uu_msg_cmd *msg_st = uu_cmd(req, msg);
	const struct io_uring_sqe *sqe = &req->sqe;

	if (sqe->buf_index || sqe->personality)
		return -EINVAL;
	msg_st->user_data = sqe->off;
	msg_st->len = sqe->len;
	msg_st->cmd = sqe->addr;
	msg_st->src_fd = (uint32_t)sqe->addr3;
	msg_st->dst_fd = sqe->file_index;
	msg_st->flags = sqe->msg_ring_flags;
	if (msg_st->flags & ~MSG_RING_MASK)
		return -EINVAL;
	return 0;
}

/* __io_msg_ring_data: a CQE of user_data and len into t */
static int post_data(struct uu_ring *t, uint64_t user_data, uint32_t len,
		     uint32_t src_fd, uint32_t dst_fd, uint32_t flags)
{
	uint32_t cflags = 0;

	if (src_fd || (flags & ~IORING_MSG_RING_FLAGS_PASS))
		return -EINVAL;
	if (!(flags & IORING_MSG_RING_FLAGS_PASS) && dst_fd)
		return -EINVAL;
	if (atomic_load(t->disabled))
		return -EBADFD;
	if (flags & IORING_MSG_RING_FLAGS_PASS)
		cflags = dst_fd;
	uu_post_aux_cqe(t, user_data, (int32_t)len, cflags);
	return 0;
}

static int msg_data(struct uu_req *req, struct uu_ring *t)
{
	struct uu_msg_cmd *msg_st = uu_cmd(req, msg);

	return post_data(t, msg_st->user_data, msg_st->len, msg_st->src_fd,
			 msg_st->dst_fd, msg_st->flags);
}

static int msg_send_fd(struct uu_req *req, struct uu_ring *t)
{
	struct uu_msg_cmd *msg_st = uu_cmd(req, msg);
	struct uu_ring *src = req->ring;
	unsigned int slot = msg_st->dst_fd;
	int fd, ret;

	if (msg_st->len)
		return -EINVAL;
	if (t == src)
		return -EINVAL;
	if (atomic_load(t->disabled))
		return -EBADFD;
	fd = uu_fixed_file(src, msg_st->src_fd);
	if (fd < 0)
		return -EBADF;
	fd = uu_fd_dup_reserved(fd);
	if (fd < 0)
		return fd;
	ret = uu_fixed_install(t, fd, slot); /* closes fd */
	if (ret < 0)
		return ret;
	if (!(msg_st->flags & IORING_MSG_RING_CQE_SKIP))
		uu_post_aux_cqe(t, msg_st->user_data, ret, 0);
	return ret;
}

int uu_msg_ring_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_ring *t;
	int err, ret;

	(void)issue_flags;
	t = uu_ring_get(req->fd, &err);
	if (!t)
		return err == -EBADF ? -EBADF : -EBADFD; /* not a ring */
	if (uu_ring_use(t)) {
		uu_ring_put(t);
		return -EBADFD;
	}
	switch (uu_cmd(req, msg)->cmd) {
	case IORING_MSG_DATA:
		ret = msg_data(req, t);
		break;
	case IORING_MSG_SEND_FD:
		ret = msg_send_fd(req, t);
		break;
	default:
		ret = -EINVAL;
	}
	uu_ring_put(t);
	return ret;
}

/*
 * IORING_REGISTER_SEND_MSG_RING with fd -1 (the kernel's
 * io_uring_register_send_msg_ring and io_uring_sync_msg_ring): a
 * MSG_RING SQE run at once without a ring of its own, IORING_MSG_DATA
 * only; the target must be a uuring ring.  0 or -errno.
 */
int uu_msg_ring_blind(void *arg, unsigned int nr_args)
{
	struct io_uring_sqe sqe;
	struct uu_ring *t;
	int err, ret;

	if (!arg || nr_args != 1)
		return -EINVAL;
	ret = uu_copy_from_user(&sqe, arg, sizeof(sqe));
	if (ret)
		return ret;
	if (sqe.flags || sqe.opcode != IORING_OP_MSG_RING)
		return -EINVAL;
	/* __io_msg_ring_prep */
	if (sqe.buf_index || sqe.personality)
		return -EINVAL;
	if (sqe.msg_ring_flags & ~MSG_RING_MASK)
		return -EINVAL;
	if (sqe.addr != IORING_MSG_DATA)
		return -EINVAL;
	t = uu_ring_get(sqe.fd, &err);
	if (!t)
		return err == -EBADF ? -EBADF : -EBADFD; /* not a ring */
	if (uu_ring_use(t)) {
		uu_ring_put(t);
		return -EBADFD;
	}
	ret = post_data(t, sqe.off, sqe.len, (uint32_t)sqe.addr3,
			sqe.file_index, sqe.msg_ring_flags);
	uu_ring_put(t);
	return ret;
}
