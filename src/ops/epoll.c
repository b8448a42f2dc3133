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
	const struct io_uring_sqe *sqe = &req->sqe;
	int op;

	uu_os_init(req);
	if (sqe->buf_index || sqe->splice_fd_in)
		return -EINVAL;
	op = (int)sqe->len;
	req->os.epoll.epfd = sqe->fd;
	req->os.epoll.op = op;
	req->os.epoll.fd = (int)sqe->off;
	req->os.epoll.events = 0;
	req->os.epoll.data = 0;
	/* every op but DEL carries an event (ep_op_has_event) */
	if (op != EPOLL_CTL_DEL) {
		struct epoll_event ev;
		int ret = uu_copy_from_user(&ev,
					    (const void *)(uintptr_t)sqe->addr,
					    sizeof(ev));

		if (ret)
			return ret;
		req->os.epoll.events = ev.events;
		req->os.epoll.data = ev.data.u64;
	}
	return 0;
}

int uu_epoll_ctl_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct epoll_event ev;

	(void)issue_flags;
	ev.events = req->os.epoll.events;
	ev.data.u64 = req->os.epoll.data;
	if (epoll_ctl(req->os.epoll.epfd, req->os.epoll.op, req->os.epoll.fd,
		      &ev) < 0)
		return -errno;
	return 0;
}

int uu_epoll_wait_prep(struct uu_req *req)
{
	const struct io_uring_sqe *sqe = &req->sqe;

	uu_os_init(req);
	if (sqe->off || sqe->rw_flags || sqe->buf_index || sqe->splice_fd_in)
		return -EINVAL;
	req->os.epoll.op = (int)sqe->len; /* maxevents */
	req->os.epoll.uevents = sqe->addr;
	return 0;
}

int uu_epoll_wait_issue(struct uu_req *req, unsigned int issue_flags)
{
	int n;

	(void)issue_flags;
	do {
		n = epoll_wait(req->fd,
			       (struct epoll_event *)(uintptr_t)req->os.epoll.uevents,
			       req->os.epoll.op, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return uu_park(req, UU_ISSUE_PARK_POLLIN);
	return n;
}
