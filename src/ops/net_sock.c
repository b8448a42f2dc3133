// SPDX-License-Identifier: MIT
/*
 * The socket opcodes that move no data (the kernel's io_uring/net.c and
 * its ACCEPT): ACCEPT (one-shot and multishot), CONNECT, BIND, LISTEN,
 * SHUTDOWN, SOCKET.  What the socket opcodes share, and their rules, are
 * in ops/net.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/buffers.h"
#include "core/cq_post.h"
#include "core/registry.h"
#include "core/rsrc.h"
#include "core/tctx.h"
#include "core/types.h"
#include "core/xproc.h"
#include "ops/kbuf.h"
#include "ops/net.h"
#include "ops/net_int.h"
#include "ops/ops.h"
#include "util/cpsys.h"
#include "util/usercopy.h"

/* ---- ACCEPT ---- */

int uu_accept_prep(struct uu_req *req)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	const struct io_uring_sqe *sqe = &req->sqe;
	uint32_t fl;

	uu_os_init(req);
	net_st->st = 0;
	net_st->kind = KIND_UNKNOWN;
	if (sqe->len || sqe->buf_index)
		return -EINVAL;
	net_st->addr = sqe->addr;
	net_st->addr2 = sqe->addr2;
	fl = sqe->accept_flags;
	net_st->msg_flags = fl;
	net_st->flags = sqe->ioprio;
	if (net_st->flags & ~ACCEPT_FLAGS)
		return -EINVAL;
	net_st->file_slot = sqe->file_index;
	if (net_st->file_slot) {
		if (fl & SOCK_CLOEXEC)
			return -EINVAL;
		if ((net_st->flags & IORING_ACCEPT_MULTISHOT) &&
		    net_st->file_slot != IORING_FILE_INDEX_ALLOC)
			return -EINVAL;
	}
	if (fl & ~(uint32_t)(SOCK_CLOEXEC | SOCK_NONBLOCK))
		return -EINVAL;
	if (net_st->flags & IORING_ACCEPT_MULTISHOT)
		net_st->st |= NET_MULTISHOT;
	return 0;
}

/* One accept4(2); -errno on failure.  *nonempty: another connection is
 * queued (TCP: the kernel's is_empty). */
static int accept_one(struct uu_req *req, bool *nonempty)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	int fd;

	do {
		fd = accept4(req->fd, (struct sockaddr *)(uintptr_t)net_st->addr,
			     (socklen_t *)(uintptr_t)net_st->addr2,
			     (int)net_st->msg_flags);
	} while (fd < 0 && errno == EINTR && !uu_cp_cancelled());
	*nonempty = false;
	if (fd < 0)
		return -errno;
	if (net_st->file_slot) {
		/* a direct descriptor: the CQE has 0 or the allocated slot */
		fd = uu_fixed_install(req->ring, fd, net_st->file_slot);
		if (fd < 0)
			return fd;
	}
	if (uu_net_sock_kind(req) == KIND_TCP) {
		struct pollfd p = { .fd = req->fd, .events = POLLIN };

		*nonempty = poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
	}
	return fd;
}

/* a blocking listener: is a connection queued right now? */
static bool listener_ready(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLERR | POLLHUP |
						    POLLNVAL));
}

static bool is_blocking_listener(struct uu_req *req)
{
	int fl = fcntl(req->fd, F_GETFL), acc = 0;
	socklen_t l = sizeof(acc);

	if (fl < 0 || (fl & O_NONBLOCK))
		return false;
	/* a socket that is not listening fails accept4 at once */
	return !getsockopt(req->fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l) && acc;
}

int uu_accept_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	bool dontwait = net_st->flags & IORING_ACCEPT_DONTWAIT;
	bool multishot = net_st->st & NET_MULTISHOT;
	bool blocking;
	int ret;

	if ((net_st->flags & IORING_ACCEPT_POLL_FIRST) &&
	    !(net_st->st & NET_POLLED))
		return dontwait ? -EAGAIN : uu_net_park(req, UU_ISSUE_PARK_POLLIN);
	blocking = is_blocking_listener(req);
	for (;;) {
		bool nonempty;

		if (blocking) {
			/* never accept4 on a blocking listener in the
			 * submitting thread (T5): a worker or the poller
			 * does, once a connection is queued */
			bool may = (issue_flags & UU_ISSUE_F_WORKER) ||
				   in_poller(issue_flags);

			if (!may)
				return dontwait ? uu_park(req, UU_ISSUE_PUNT_UNBOUND) :
						  uu_net_park(req, UU_ISSUE_PARK_POLLIN);
			if (!listener_ready(req->fd)) {
				ret = -EAGAIN;
				goto again;
			}
		}
		ret = accept_one(req, &nonempty);
		if (ret >= 0 && multishot &&
		    uu_req_post_cqe(req, ret,
				    nonempty ? IORING_CQE_F_SOCK_NONEMPTY : 0,
				    issue_flags)) {
			/* unknown emptiness (not TCP): try again at once */
			if (nonempty || uu_net_sock_kind(req) != KIND_TCP)
				continue;
			ret = -EAGAIN;
			goto again;
		}
		req->cflags = nonempty ? IORING_CQE_F_SOCK_NONEMPTY : 0;
		if (ret != -EAGAIN)
			return ret;
again:
		req->cflags = 0;
		if (dontwait)
			return -EAGAIN;
		return uu_net_park(req, UU_ISSUE_PARK_POLLIN);
	}
}

/* ---- CONNECT, BIND ---- */

static int addr_op_prep(struct uu_req *req)
{
	const struct io_uring_sqe *sqe = &req->sqe;
	struct uu_netmsg *m;
	int ret;

	uu_os_init(req);
	uu_cmd(req, net)->st = 0;
	if (sqe->len || sqe->buf_index || sqe->rw_flags || sqe->splice_fd_in)
		return -EINVAL;
	m = uu_net_alloc_msg(req, 0, 0);
	if (!m)
		return -ENOMEM;
	m->addrlen = (int)(uint32_t)sqe->addr2;
	ret = uu_net_import_addr(sqe->addr, m->addrlen, &m->addr);
	if (ret)
		uu_os_drop(req);
	return ret;
}

int uu_connect_prep(struct uu_req *req)
{
	return addr_op_prep(req);
}

int uu_bind_prep(struct uu_req *req)
{
	return addr_op_prep(req);
}

static int sock_error(int fd)
{
	int err = 0;
	socklen_t l = sizeof(err);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l))
		return -errno;
	return -err;
}

/* How a socket is connected without blocking the thread. */
enum { CONN_NOWAIT, CONN_TFO, CONN_WORKER };

static int connect_way(struct uu_req *req, int fl)
{
	int type = 0, proto = 0;
	socklen_t l = sizeof(type);

	if (fl & O_NONBLOCK)
		return CONN_NOWAIT;
	/* not a socket, datagram sockets: connect(2) does not wait */
	if (getsockopt(req->fd, SOL_SOCKET, SO_TYPE, &type, &l) ||
	    (type != SOCK_STREAM && type != SOCK_SEQPACKET))
		return CONN_NOWAIT;
	l = sizeof(proto);
	if (type == SOCK_STREAM &&
	    !getsockopt(req->fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l) &&
	    proto == IPPROTO_TCP)
		return CONN_TFO;
	return CONN_WORKER;
}

/*
 * CONNECT, as the kernel's io_connect: a non-blocking connect, then wait
 * for POLLOUT; EINPROGRESS seen, the retry takes the socket's error.
 * connect(2) has no per-call non-blocking flag and O_NONBLOCK is the
 * application's (T5).  A blocking TCP socket starts its connection with
 * sendto(MSG_FASTOPEN | MSG_DONTWAIT) and no data, which connects without
 * waiting (its SYN asks for a Fast Open cookie); other blocking stream
 * sockets (AF_UNIX, which waits only for a full backlog) connect in an
 * io-wq worker.
 */
int uu_connect_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	struct uu_netmsg *m = nmsg(req);
	int fl, way, ret;

	fl = fcntl(req->fd, F_GETFL);
	if (fl < 0)
		return -EBADF;
	if (net_st->st & NET_IN_PROGRESS) {
		struct pollfd p = { .fd = req->fd, .events = POLLOUT };

		if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR))
			return sock_error(req->fd);
		if (!(fl & O_NONBLOCK)) {
			/* a second connect(2) on a blocking socket would
			 * wait: established is what POLLOUT says */
			if (p.revents & POLLOUT)
				return sock_error(req->fd);
			return uu_net_park(req, UU_ISSUE_PARK_POLLOUT);
		}
	}
	way = connect_way(req, fl);
	if (way == CONN_TFO) {
		ret = sendto(req->fd, NULL, 0,
			     MSG_FASTOPEN | MSG_DONTWAIT | MSG_NOSIGNAL,
			     (struct sockaddr *)&m->addr,
			     (socklen_t)m->addrlen) < 0 ? -errno : 0;
		/* Fast Open disabled (sysctl), or AF_UNSPEC (a disconnect,
		 * which never waits) */
		if (ret == -EOPNOTSUPP)
			way = m->addr.ss_family == AF_UNSPEC ? CONN_NOWAIT :
							       CONN_WORKER;
	}
	if (way == CONN_WORKER && !(issue_flags & UU_ISSUE_F_WORKER))
		return uu_park(req, UU_ISSUE_PUNT_UNBOUND);
	if (way != CONN_TFO)
		ret = connect(req->fd, (struct sockaddr *)&m->addr,
			      (socklen_t)m->addrlen) ? -errno : 0;
	if (way != CONN_WORKER) {
		switch (ret) {
		case -EINPROGRESS:
			net_st->st |= NET_IN_PROGRESS;
			return uu_net_park(req, UU_ISSUE_PARK_POLLOUT);
		case -EALREADY:
			if (net_st->st & NET_IN_PROGRESS)
				return uu_net_park(req, UU_ISSUE_PARK_POLLOUT);
			break;
		case -EAGAIN:
			return uu_net_park(req, UU_ISSUE_PARK_POLLOUT);
		case -ECONNABORTED:
			if (net_st->st & NET_SEEN_ABORT)
				return ret;
			net_st->st |= NET_SEEN_ABORT;
			return uu_net_park(req, UU_ISSUE_PARK_POLLOUT);
		}
	}
	if ((net_st->st & NET_IN_PROGRESS) &&
	    (ret == -EBADFD || ret == -EISCONN))
		ret = sock_error(req->fd);
	return ret;
}

int uu_bind_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_netmsg *m = nmsg(req);

	(void)issue_flags;
	if (bind(req->fd, (struct sockaddr *)&m->addr, (socklen_t)m->addrlen))
		return -errno;
	return 0;
}

/* ---- LISTEN, SHUTDOWN, SOCKET ---- */

int uu_listen_prep(struct uu_req *req)
{
	const struct io_uring_sqe *sqe = &req->sqe;

	uu_os_init(req);
	if (sqe->addr || sqe->buf_index || sqe->rw_flags || sqe->splice_fd_in ||
	    sqe->addr2)
		return -EINVAL;
	uu_cmd(req, net)->len = sqe->len;
	return 0;
}

int uu_listen_issue(struct uu_req *req, unsigned int issue_flags)
{
	(void)issue_flags;
	if (listen(req->fd, (int)uu_cmd(req, net)->len))
		return -errno;
	return 0;
}

int uu_shutdown_prep(struct uu_req *req)
{
	const struct io_uring_sqe *sqe = &req->sqe;

	uu_os_init(req);
	if (sqe->off || sqe->addr || sqe->rw_flags || sqe->buf_index ||
	    sqe->splice_fd_in)
		return -EINVAL;
	uu_cmd(req, net)->msg_flags = sqe->len;
	return 0;
}

/* The kernel's shutdown does not fail the link chain with its own errors
 * (only with a bad file or a non-socket): see uu_os_release_nofail. */
int uu_shutdown_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	int ret;

	(void)issue_flags;
	ret = shutdown(req->fd, (int)net_st->msg_flags) ? -errno : 0;
	if (ret != -ENOTSOCK && ret != -EBADF)
		net_st->hdr.issued = true;
	return ret;
}

int uu_socket_prep(struct uu_req *req)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	const struct io_uring_sqe *sqe = &req->sqe;
	uint32_t type, fl;

	uu_os_init(req);
	if (sqe->addr || sqe->rw_flags || sqe->buf_index)
		return -EINVAL;
	net_st->addr = (uint64_t)(int64_t)sqe->fd; /* domain */
	type = (uint32_t)sqe->off;
	net_st->msg_flags = type;
	net_st->len = sqe->len; /* protocol */
	net_st->file_slot = sqe->file_index;
	fl = type & ~0xfu; /* SOCK_TYPE_MASK */
	if (net_st->file_slot && (fl & SOCK_CLOEXEC))
		return -EINVAL;
	if (fl & ~(uint32_t)(SOCK_CLOEXEC | SOCK_NONBLOCK))
		return -EINVAL;
	return 0;
}

int uu_socket_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	int fd;

	(void)issue_flags;
	fd = socket((int)net_st->addr, (int)net_st->msg_flags,
		    (int)net_st->len);
	if (fd < 0)
		return -errno;
	if (net_st->file_slot)
		return uu_fixed_install(req->ring, fd, net_st->file_slot);
	return fd;
}
