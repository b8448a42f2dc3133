// SPDX-License-Identifier: MIT
/*
 * The ublk files as a URING_CMD file type (ops/uring_cmd.h): the
 * kernel's ublk_ctrl_uring_cmd (/dev/ublk-control) and ublk_ch_uring_cmd
 * (/dev/ublkcN), and the public calls that open them and submit block
 * I/O to a device.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "core/registry.h"
#include "core/types.h"
#include "ops/rw.h"
#include "ops/uring_cmd.h"
#include "ublk/client.h"
#include "ublk/ublk.h"

/* what a ublk command keeps in its pdu */
struct ublk_pdu {
	struct ufile *f;
	uint16_t q_id, tag;
};

_Static_assert(sizeof(struct ublk_pdu) <= UU_CMD_PDU_SIZE, "pdu size");

static bool ublk_match(int fd, const struct stat *st)
{
	(void)fd;
	return uu_ublk_file_st(st) != NULL;
}

/* ublk_ctrl_uring_cmd's checks before the command reaches the driver */
static int ctrl_issue(struct uu_req *req, unsigned int flags)
{
	struct ublksrv_ctrl_cmd hdr;
	size_t len;
	const void *p;

	/* IO_URING_F_NONBLOCK: control commands run in io-wq */
	if (!(flags & UU_ISSUE_F_WORKER))
		return -EAGAIN;
	if (!(flags & UU_CMD_F_SQE128))
		return -EINVAL;
	p = uu_cmd_payload(req, &len);
	memcpy(&hdr, p, sizeof(hdr));
	return uu_ublk_ctrl(uu_cmd_op(req), &hdr);
}

static int ublk_issue(struct uu_req *req, unsigned int flags)
{
	struct ublk_pdu *pdu = uu_cmd_pdu(req);
	struct ublksrv_io_cmd cmd;
	size_t len;

	if (!pdu->f)
		pdu->f = uu_ublk_file(uu_cmd_fd(req));
	if (!pdu->f)
		return -EOPNOTSUPP;
	if (pdu->f->kind == UK_CTRL)
		return ctrl_issue(req, flags);
	if (flags & UU_CMD_F_CANCEL) {
		/* ublk_uring_cmd_cancel_fn */
		if (uu_ublk_io_cancel(pdu->f, req, pdu->q_id, pdu->tag))
			uu_uring_cmd_done(req, UBLK_IO_RES_ABORT, 0, flags);
		return 0;
	}
	/* buffer registration completes at once, in the ring it is for */
	if ((uu_cmd_op(req) & 0xff) == UBLK_IO_REGISTER_IO_BUF ||
	    (uu_cmd_op(req) & 0xff) == UBLK_IO_UNREGISTER_IO_BUF) {
		memcpy(&cmd, uu_cmd_payload(req, &len), sizeof(cmd));
		return uu_ublk_buf_cmd(pdu->f, uu_cmd_op(req), &cmd,
				       uu_cmd_task(req), req->ring);
	}
	/* every I/O command may be queued: it needs a stable request */
	if (!(flags & UU_CMD_F_STABLE))
		return UU_CMD_PARK;
	memcpy(&cmd, uu_cmd_payload(req, &len), sizeof(cmd));
	pdu->q_id = cmd.q_id;
	pdu->tag = cmd.tag;
	return uu_ublk_io(pdu->f, uu_cmd_op(req), &cmd, uu_cmd_task(req), req,
			  flags);
}

static const struct uu_cmd_file_type ublk_type = {
	.name = "ublk",
	.match = ublk_match,
	.issue = ublk_issue,
};

static void cmd_done(struct uu_req *req, int res)
{
	uu_uring_cmd_done(req, res, 0, 0);
}

static void cmd_mark(struct uu_req *req, unsigned int flags)
{
	uu_uring_cmd_mark_cancelable(req, flags);
}

/*
 * READ, WRITE, READV, WRITEV (plain or fixed file) on a ublk file: the
 * control file has no read_iter/write_iter (-EINVAL, as io_iter_do_read
 * finds); on /dev/ublkcN they are USER_COPY's ublk_ch_read_iter and
 * ublk_ch_write_iter.  The char device has no FMODE_NOWAIT, so a NOWAIT
 * read is kiocb_set_rw_flags's -EOPNOTSUPP; a registered buffer is not a
 * user-backed iterator (-EACCES); offset -1 is the file position, which
 * stays 0 (no llseek, and a copy at 0 never succeeds).
 */
static bool ublk_rw(struct uu_req *req, bool is_write, int *res)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);
	uint8_t op = req->sqe.opcode;
	struct ufile *f;
	ssize_t n;

	if (!atomic_load_explicit(&uu_ublk_nfiles, memory_order_relaxed))
		return false;
	f = uu_ublk_file(req->fd);
	if (!f)
		return false;
	if (f->kind != UK_CHAR) {
		*res = -EINVAL;
		return true;
	}
	if (rw_st->rw_flags & RWF_NOWAIT) {
		*res = -EOPNOTSUPP;
		return true;
	}
	n = uu_ublk_user_copy(f, is_write, rw_st->iov, rw_st->nr_iov,
			      rw_st->pos == -1 ? 0 : rw_st->pos,
			      op != IORING_OP_READ_FIXED &&
				      op != IORING_OP_WRITE_FIXED &&
				      op != IORING_OP_READV_FIXED &&
				      op != IORING_OP_WRITEV_FIXED);
	if (n >= 0 && (size_t)n != rw_st->total)
		req->flags |= UU_REQ_SHORT;
	*res = (int)n;
	return true;
}

static pthread_once_t type_once = PTHREAD_ONCE_INIT;

static void type_register(void)
{
	uu_ublk_set_ops(cmd_done, cmd_mark);
	uu_cmd_register_file_type(&ublk_type);
	uu_rw_set_file_hook(ublk_rw);
}

/* open(2) of /dev/ublk-control or /dev/ublkcN through the driver */
UU_EXPORT int uuring_ublk_open(const char *path, int flags)
{
	pthread_once(&type_once, type_register);
	if (!path)
		return -EFAULT;
	return uu_ublk_open(path, flags);
}

UU_EXPORT int uuring_ublk_bdev_io(int dev_id, int op, void *buf, size_t len,
				  uint64_t pos)
{
	return uu_ublk_bdev_io(dev_id, op, buf, len, pos);
}

/* uuring_mmap's case for a /dev/ublkcN fd (NULL: not one) */
void *uu_ublk_try_mmap(void *addr, size_t len, int prot, int flags, int fd,
		       off_t off)
{
	struct ufile *f;

	if (fd < 0 || (flags & MAP_ANONYMOUS))
		return NULL;
	f = uu_ublk_file(fd);
	if (!f || f->kind != UK_CHAR)
		return NULL;
	return uu_ublk_mmap(f, addr, len, prot, flags, off);
}
