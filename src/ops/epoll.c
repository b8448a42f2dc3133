// SPDX-License-Identifier: MIT
/*
 * IORING_OP_EPOLL_CTL and IORING_OP_EPOLL_WAIT.
 *
 * EPOLL_CTL copies the event at prep (as the kernel does) and issues
 * epoll_ctl(2) in the submitting thread: the errors are epoll_ctl's own,
 * which matters to libuv, which batches its epoll_ctl calls through this
 * opcode and aborts on any error but -EEXIST for an ADD (T17).
 *
 * EPOLL_WAIT is a non-blocking epoll_wait(2) (timeout 0) into the user's
 * array: the system call writes the events itself and returns EINVAL for a
 * bad maxevents or a file that is not an epoll instance, and EFAULT for an
 * unwritable array, in the kernel's order.  No event ready: the request
 * waits on the readiness engine for the epoll fd to become readable (an
 * epoll instance is pollable; the engine's registration is on its own dup,
 * T4, T16) and tries again.  6.18 has no multishot EPOLL_WAIT (no
 * epoll_flags in the SQE), nor provided buffers for it.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "core/types.h"
#include "ops/epoll.h"
#include "ops/ops.h"
#include "util/usercopy.h"

int uu_epoll_ctl_prep(struct uu_req *req)
{
	struct uu_epoll_cmd *epoll_st = uu_cmd(req, epoll);
	const struct io_uring_sqe *sqe = &req->sqe;
	int op;

	uu_os_init(req);
	if (sqe->buf_index || sqe->splice_fd_in)
		return -EINVAL;
	op = (int)sqe->len;
	epoll_st->epfd = sqe->fd;
	epoll_st->op = op;
	epoll_st->fd = (int)sqe->off;
	epoll_st->events = 0;
	epoll_st->data = 0;
	/* every op but DEL carries an event (ep_op_has_event) */
	if (op != EPOLL_CTL_DEL) {
		struct epoll_event ev;
		int ret = uu_copy_from_user(&ev,
					    (const void *)(uintptr_t)sqe->addr,
					    sizeof(ev));

		if (ret)
			return ret;
		epoll_st->events = ev.events;
		epoll_st->data = ev.data.u64;
	}
	return 0;
}

int uu_epoll_ctl_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_epoll_cmd *epoll_st = uu_cmd(req, epoll);
	struct epoll_event ev;

	(void)issue_flags;
	ev.events = epoll_st->events;
	ev.data.u64 = epoll_st->data;
	if (epoll_ctl(epoll_st->epfd, epoll_st->op, epoll_st->fd,
		      &ev) < 0)
		return -errno;
	return 0;
}

int uu_epoll_wait_prep(struct uu_req *req)
{
	struct uu_epoll_cmd *epoll_st = uu_cmd(req, epoll);
	const struct io_uring_sqe *sqe = &req->sqe;

	uu_os_init(req);
	if (sqe->off || sqe->rw_flags || sqe->buf_index || sqe->splice_fd_in)
		return -EINVAL;
	epoll_st->op = (int)sqe->len; /* maxevents */
	epoll_st->uevents = sqe->addr;
	return 0;
}

int uu_epoll_wait_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_epoll_cmd *epoll_st = uu_cmd(req, epoll);
	int n;

	(void)issue_flags;
	do {
		n = epoll_wait(req->fd,
			       (struct epoll_event *)(uintptr_t)epoll_st->uevents,
			       epoll_st->op, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return uu_park(req, UU_ISSUE_PARK_POLLIN);
	return n;
}
