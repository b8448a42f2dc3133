// SPDX-License-Identifier: MIT
/*
 * READ_FIXED, WRITE_FIXED, READV_FIXED, WRITEV_FIXED: reads and writes
 * whose memory must lie within the registered buffer sqe->buf_index.
 *
 * As in the kernel (6.18), the buffer is looked up and the range checked
 * at issue, before the file's own checks: no buffer at the index, a range
 * that leaves the buffer, a length above MAX_RW_COUNT or (vectored) a
 * zero-length segment are -EFAULT in the CQE.  The request holds a
 * reference to the buffer's node until it completes (a replaced buffer
 * stays usable for it, and the tag CQE waits for it).  The I/O itself is
 * the plain read/write path of ops/rw.c on the application's addresses:
 * see core/rsrc_buf.c for what that means after munmap (T3).
 */
#include <errno.h>
#include <fcntl.h>

#include "core/buffers.h"
#include "core/types.h"
#include "ops/rw.h"

int uu_rw_fixed_prep(struct uu_req *req)
{
	int ret = uu_rw_prep(req);

	req->buf_node = NULL;
	uu_cmd(req, rw)->kbuf_mapped = false;
	return ret;
}

int uu_rwv_fixed_prep(struct uu_req *req)
{
	int ret;

	req->buf_node = NULL;
	ret = uu_rwv_prep(req);
	uu_cmd(req, rw)->kbuf_mapped = false;
	return ret;
}

void uu_rw_fixed_cleanup(struct uu_req *req)
{
	uu_rw_cleanup(req);
	if (req->buf_node) {
		uu_rbuf_put(req->buf_node);
		req->buf_node = NULL;
	}
}

/* validate_fixed_range */
static int check_range(const struct uu_rbuf *b, uint64_t addr, uint64_t len)
{
	uint64_t end;

	if (__builtin_add_overflow(addr, len, &end))
		return -EFAULT;
	if (addr < b->addr || end > b->addr + b->len)
		return -EFAULT;
	if (len > UU_MAX_RW_COUNT)
		return -EFAULT;
	return 0;
}

/*
 * A driver's buffer (core/buffers.h, kbase): io_import_fixed refuses a
 * direction the buffer was not registered for (-EFAULT), and its
 * addresses are offsets into kbase, turned into ours once, checked.
 */
static int import_kbuf(struct uu_req *req, const struct uu_rbuf *b,
		       bool is_write)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);

	if (rw_st->kbuf_mapped)
		return 0;
	if (!(b->kdir & (is_write ? UU_KBUF_SOURCE : UU_KBUF_DEST)))
		return -EFAULT;
	for (int i = 0; i < rw_st->nr_iov; i++) {
		uint64_t addr = (uintptr_t)rw_st->iov[i].iov_base;
		int ret = check_range(b, addr, rw_st->iov[i].iov_len);

		if (ret)
			return ret;
		rw_st->iov[i].iov_base = b->kbase + (addr - b->addr);
	}
	rw_st->kbuf_mapped = true;
	return 0;
}

static int import_fixed(struct uu_req *req, bool vec, bool is_write)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);
	const struct uu_rbuf *b;
	uint64_t total = 0;

	if (!req->buf_node) {
		req->buf_node = uu_rbuf_get(req->ring, req->sqe.buf_index);
		if (!req->buf_node)
			return -EFAULT;
	}
	b = req->buf_node->buf;
	if (b->kbase)
		return import_kbuf(req, b, is_write);
	for (int i = 0; i < rw_st->nr_iov; i++) {
		uint64_t addr = (uintptr_t)rw_st->iov[i].iov_base;
		uint64_t len = rw_st->iov[i].iov_len;
		int ret = check_range(b, addr, len);

		if (ret)
			return ret;
		if (vec) {
			if (!len)
				return -EFAULT;
			if (__builtin_add_overflow(total, len, &total))
				return -EOVERFLOW;
		}
	}
	return 0;
}

/*
 * The kernel resolves the file before issue: a bad fd is -EBADF whatever
 * the buffer.  Checked only when the import failed (one fcntl).
 */
static int import_or_ebadf(struct uu_req *req, bool vec, bool is_write)
{
	int ret = import_fixed(req, vec, is_write);

	if (unlikely(ret) && (req->fd < 0 || fcntl(req->fd, F_GETFD) < 0))
		return -EBADF;
	return ret;
}

int uu_read_fixed_issue(struct uu_req *req, unsigned int issue_flags)
{
	int ret = import_or_ebadf(req, false, false);

	return ret ? ret : uu_read_issue(req, issue_flags);
}

int uu_write_fixed_issue(struct uu_req *req, unsigned int issue_flags)
{
	int ret = import_or_ebadf(req, false, true);

	return ret ? ret : uu_write_issue(req, issue_flags);
}

int uu_readv_fixed_issue(struct uu_req *req, unsigned int issue_flags)
{
	int ret = import_or_ebadf(req, true, false);

	return ret ? ret : uu_read_issue(req, issue_flags);
}

int uu_writev_fixed_issue(struct uu_req *req, unsigned int issue_flags)
{
	int ret = import_or_ebadf(req, true, true);

	return ret ? ret : uu_write_issue(req, issue_flags);
}
