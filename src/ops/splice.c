// SPDX-License-Identifier: MIT
/*
 * SPLICE and TEE on plain fds.
 *
 * The kernel runs both in io-wq (its splice prep forces async) and
 * resolves splice_fd_in there, by number, when the request runs; so does
 * uuring (unbounded workers: a pipe may stay empty for ever), making the
 * call the application asked for, blocking unless it asked otherwise.
 * Never in the submitting thread: SPLICE_F_NONBLOCK makes only the pipe
 * side non-blocking, so a try there could still block enter on a socket
 * or a file on the other side (and deadlock a runtime whose writer runs
 * on that thread).
 *
 * As in the kernel, offset -1 means "the file position" and a result
 * other than the full length fails a link chain.  SPLICE_F_FD_IN_FIXED
 * names splice_fd_in in the registered file table, looked up at each
 * issue as the kernel does in io-wq (an empty slot is -EBADF), through a
 * dup of our own for the call; the output's IOSQE_FIXED_FILE is resolved
 * by the core.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/rsrc.h"
#include "core/types.h"
#include "ops/ops.h"
#include "ops/splice.h"
#include "util/cpsys.h"
#include "util/rawsys.h"

#ifndef SPLICE_F_NONBLOCK
#define SPLICE_F_NONBLOCK 0x02
#endif
#define UU_SPLICE_F_ALL 0x0f /* MOVE | NONBLOCK | MORE | GIFT */

static int splice_prep_common(struct uu_req *req)
{
	struct uu_splice_cmd *splice_st = uu_cmd(req, splice);
	const struct io_uring_sqe *sqe = &req->sqe;

	splice_st->len = sqe->len;
	splice_st->flags = sqe->splice_flags;
	if (splice_st->flags & ~(SPLICE_F_FD_IN_FIXED | UU_SPLICE_F_ALL))
		return -EINVAL;
	splice_st->fd_in = sqe->splice_fd_in;
	return 0;
}

int uu_splice_prep(struct uu_req *req)
{
	struct uu_splice_cmd *splice_st = uu_cmd(req, splice);
	const struct io_uring_sqe *sqe = &req->sqe;

	splice_st->off_in = (int64_t)sqe->splice_off_in;
	splice_st->off_out = (int64_t)sqe->off;
	return splice_prep_common(req);
}

int uu_tee_prep(struct uu_req *req)
{
	const struct io_uring_sqe *sqe = &req->sqe;

	if (sqe->splice_off_in || sqe->off)
		return -EINVAL;
	return splice_prep_common(req);
}

/*
 * io_splice_get_file: the input, a plain fd (a closed or O_PATH fd is
 * -EBADF) or a registered file (our own dup, *owned set).
 */
static int get_in(struct uu_req *req, bool *owned)
{
	struct uu_splice_cmd *splice_st = uu_cmd(req, splice);
	int fl, fd = splice_st->fd_in;

	*owned = false;
	if (splice_st->flags & SPLICE_F_FD_IN_FIXED) {
		fd = uu_fixed_file_dup(req->ring, (unsigned int)fd);
		*owned = fd >= 0;
		return fd;
	}
	fl = fcntl(fd, F_GETFL);
	return fl < 0 || (fl & O_PATH) ? -EBADF : fd;
}

static long do_call(struct uu_req *req, int in, bool tee, unsigned int flags)
{
	struct uu_splice_cmd *splice_st = uu_cmd(req, splice);
	int64_t off_in = splice_st->off_in, off_out = splice_st->off_out;

	/* -errno; interruptible by a cancel in a worker (T7) */
	if (tee)
		return uu_sys_cp(SYS_tee, in, req->fd,
				 (long)splice_st->len, flags, 0, 0);
	return uu_sys_cp(SYS_splice, in, off_in == -1 ? 0 : (long)&off_in,
			 req->fd, off_out == -1 ? 0 : (long)&off_out,
			 (long)splice_st->len, flags);
}

static int splice_issue(struct uu_req *req, unsigned int issue_flags,
			bool tee)
{
	struct uu_splice_cmd *splice_st = uu_cmd(req, splice);
	unsigned int flags = splice_st->flags & ~SPLICE_F_FD_IN_FIXED;
	bool worker = issue_flags & UU_ISSUE_F_WORKER, owned;
	int ret, in;
	long n;

	if (!worker)
		return uu_park(req, UU_ISSUE_PUNT_UNBOUND);
	/* the files are resolved first: out (req->fd), then in */
	if (!splice_st->len) {
		ret = uu_file_check(req);
		if (ret)
			return ret;
		in = get_in(req, &owned);
		if (owned)
			uu_sys_close(in);
		return in < 0 ? in : 0;
	}
	in = get_in(req, &owned);
	if (in < 0)
		return in;
	/* an interrupt that is not a cancel (none reaches a worker but
	 * ours) is retried; a cancel's is not: the kernel leaves the
	 * wait's -ERESTARTSYS in the CQE (T7) */
	for (;;) {
		n = do_call(req, in, tee, flags);
		if (n != -EINTR)
			break;
		if (uu_cp_cancelled()) {
			n = -UU_ERESTARTSYS;
			break;
		}
	}
	if (owned)
		uu_sys_close(in);
	if (n < 0)
		return (int)n;
	if ((uint64_t)n != splice_st->len)
		req->flags |= UU_REQ_SHORT;
	return (int)n;
}

int uu_splice_issue(struct uu_req *req, unsigned int issue_flags)
{
	return splice_issue(req, issue_flags, false);
}

int uu_tee_issue(struct uu_req *req, unsigned int issue_flags)
{
	return splice_issue(req, issue_flags, true);
}
