// SPDX-License-Identifier: MIT
/*
 * The sending socket opcodes (the kernel's io_uring/net.c, its send
 * side): SEND, SENDMSG, SEND_ZC, SENDMSG_ZC.  What the socket opcodes
 * share, and their rules, are in ops/net.c; SEND with provided buffers is
 * ops/net_bundle.c's.
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

/* ---- SEND, SENDMSG ---- */

static int send_common_prep(struct uu_req *req)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	const struct io_uring_sqe *sqe = &req->sqe;

	uu_os_init(req);
	net_st->len = sqe->len;
	net_st->flags = sqe->ioprio;
	net_st->done = 0;
	net_st->st = 0;
	net_st->kind = KIND_UNKNOWN;
	if (net_st->flags & ~SEND_FLAGS)
		return -EINVAL;
	net_st->msg_flags = sqe->msg_flags | MSG_NOSIGNAL;
	if (net_st->flags & IORING_RECVSEND_BUNDLE) {
		if (req->opcode == IORING_OP_SENDMSG)
			return -EINVAL;
		net_st->msg_flags |= MSG_WAITALL;
	}
	return 0;
}

int uu_send_prep(struct uu_req *req)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	const struct io_uring_sqe *sqe = &req->sqe;
	struct sockaddr_storage addr;
	struct uu_netmsg *m;
	bool vec;
	int ret = send_common_prep(req);

	if (ret)
		return ret;
	net_st->addr = sqe->addr;
	if (sqe->__pad3[0])
		return -EINVAL;
	if (sqe->addr2) {
		ret = uu_net_import_addr(sqe->addr2, sqe->addr_len, &addr);
		if (ret)
			return ret;
	}
	if (req->flags & UU_REQ_BUFFER_SELECT) {
		/* io_send_setup: the buffers are selected at issue */
		ret = uu_net_bundle_prep(req);
		if (!ret && sqe->addr2) {
			m = nmsg(req);
			memcpy(&m->addr, &addr, sqe->addr_len);
			m->has_addr = true;
			m->addrlen = sqe->addr_len;
		}
		return ret;
	}
	vec = net_st->flags & IORING_SEND_VECTORIZED;
	if (!vec) {
		/* import_ubuf() */
		if (net_st->len > UU_MAX_RW_COUNT)
			net_st->len = UU_MAX_RW_COUNT;
		ret = uu_net_range_ok(sqe->addr, net_st->len);
		if (ret || !sqe->addr2)
			return ret;
	} else if (sqe->len > UU_UIO_MAXIOV) {
		return -EINVAL;
	}
	m = uu_net_alloc_msg(req, vec ? sqe->len : 0, 0);
	if (!m)
		return -ENOMEM;
	if (sqe->addr2) {
		memcpy(&m->addr, &addr, sqe->addr_len);
		m->has_addr = true;
		m->addrlen = sqe->addr_len;
	}
	if (vec) {
		ret = uu_net_import_iov(m, sqe->addr, sqe->len, false);
		if (ret)
			uu_os_drop(req);
	}
	return ret;
}

int uu_sendmsg_prep(struct uu_req *req)
{
	const struct io_uring_sqe *sqe = &req->sqe;
	int ret = send_common_prep(req);

	if (ret)
		return ret;
	if (sqe->addr2 || sqe->file_index)
		return -EINVAL;
	uu_cmd(req, net)->addr = sqe->addr;
	return uu_net_import_msghdr(req, true);
}

static ssize_t do_sendmsg(struct uu_req *req, struct uu_netmsg *m, int flags)
{
	struct msghdr h;

	memset(&h, 0, sizeof(h));
	if (m->has_addr) {
		h.msg_name = &m->addr;
		h.msg_namelen = (socklen_t)m->addrlen;
	}
	h.msg_iov = m->iov + m->first;
	h.msg_iovlen = m->nr_iov - m->first;
	if ((req->opcode == IORING_OP_SENDMSG ||
	     req->opcode == IORING_OP_SENDMSG_ZC) && m->controllen) {
		h.msg_control = m->control ? m->control :
				(void *)(uintptr_t)m->ucontrol;
		h.msg_controllen = m->controllen;
	}
	return sendmsg(req->fd, &h, flags);
}

static int send_issue(struct uu_req *req)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	struct uu_netmsg *m = nmsg(req);
	int flags = (int)(net_st->msg_flags | MSG_DONTWAIT);
	bool again;
	size_t want;
	ssize_t n;
	int res;

	if ((net_st->flags & IORING_RECVSEND_POLL_FIRST) &&
	    !(net_st->st & NET_POLLED)) {
		res = uu_net_poll_first(req, UU_ISSUE_PARK_POLLOUT);
		if (res != 1)
			return res;
	}
	res = uu_net_ring_fd_check(req);
	if (res)
		return res;
	do {
		if (m && (m->nr_iov || req->opcode == IORING_OP_SENDMSG ||
			  req->opcode == IORING_OP_SENDMSG_ZC)) {
			want = m->total - net_st->done;
			do {
				n = do_sendmsg(req, m, flags);
			} while (n < 0 && errno == EINTR && !uu_cp_cancelled());
		} else {
			char *buf = (char *)(uintptr_t)(net_st->addr +
							net_st->done);

			want = net_st->len - net_st->done;
			do {
				if (m)
					n = sendto(req->fd, buf, want, flags,
						   (struct sockaddr *)&m->addr,
						   (socklen_t)m->addrlen);
				else
					n = send(req->fd, buf, want, flags);
			} while (n < 0 && errno == EINTR && !uu_cp_cancelled());
		}
		if (n < 0)
			n = -errno;
		else if (n > 0)
			net_st->st |= NET_SENT;
		res = uu_net_sr_finish(req, n, (flags & MSG_WAITALL) ? want : 0,
				UU_ISSUE_PARK_POLLOUT, false, &again);
		if (again && m) {
			/* the rest, after what went out, without control
			 * data (the kernel clears it) */
			uu_net_iov_advance(m, (size_t)n);
			m->controllen = 0;
		}
	} while (again);
	return res;
}

int uu_send_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	struct uu_netmsg *m = nmsg(req);
	int res;

	if (req->flags & UU_REQ_BUFFER_SELECT)
		return uu_send_select_issue(req, issue_flags);
	res = send_issue(req);
	/*
	 * A bundle without provided buffers (io_send_finish): what went
	 * out is posted with IORING_CQE_F_MORE and the send runs again on
	 * its used-up buffer, sending nothing, which ends it.
	 */
	if ((net_st->flags & IORING_RECVSEND_BUNDLE) && !req->park &&
	    res > 0 && !(net_st->st & NET_POLLED) &&
	    !(m && m->nr_iov) && uu_req_post_cqe(req, res, 0, issue_flags)) {
		net_st->addr += net_st->len;
		net_st->len = 0;
		net_st->done = 0;
		res = send_issue(req);
	}
	return res;
}

int uu_sendmsg_issue(struct uu_req *req, unsigned int issue_flags)
{
	(void)issue_flags;
	return send_issue(req);
}

/* ---- SEND_ZC, SENDMSG_ZC ---- */

/*
 * Zero-copy sends, as the kernel reports them: the send's CQE carries
 * IORING_CQE_F_MORE, and a notification CQE (IORING_CQE_F_NOTIF, same
 * user_data) follows when the buffer may be reused.  User space cannot
 * lend pages to the network stack: the data is copied by an ordinary
 * send, so the buffer is free when the send returns and the notification
 * follows the send's CQE at once; IORING_SEND_ZC_REPORT_USAGE reports
 * IORING_NOTIF_USAGE_ZC_COPIED whenever bytes went out (the kernel's
 * answer over loopback, where zero-copy data is copied too).  As in the
 * kernel, only TCP and UDP sockets take them (-EOPNOTSUPP otherwise), and
 * IORING_RECVSEND_FIXED_BUF sends from a registered buffer.
 */
#define ZC_FLAGS_COMMON (IORING_RECVSEND_POLL_FIRST | IORING_RECVSEND_FIXED_BUF)
#define ZC_FLAGS_VALID (ZC_FLAGS_COMMON | IORING_SEND_ZC_REPORT_USAGE | \
			IORING_SEND_VECTORIZED)

static int zc_prep(struct uu_req *req, bool msg)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	const struct io_uring_sqe *sqe = &req->sqe;
	struct sockaddr_storage addr;
	struct uu_netmsg *m;
	uint16_t fl;
	bool vec, fixed;
	int ret;

	uu_os_init(req);
	req->buf_node = NULL;
	net_st->done = 0;
	net_st->st = 0;
	net_st->kind = KIND_UNKNOWN;
	if (sqe->__pad2[0] || sqe->addr3)
		return -EINVAL;
	if (req->flags & UU_REQ_CQE_SKIP)
		return -EINVAL;
	/*
	 * io_send_zc_prep has its notification from here on: a prep error
	 * below completes with IORING_CQE_F_MORE and then the notification
	 * (io_sendrecv_fail, io_send_zc_cleanup), so the cleanup that posts
	 * both runs for it too (core/req.c req_complete).
	 */
	req->flags |= UU_REQ_PREPPED;
	fl = sqe->ioprio;
	net_st->flags = fl;
	if ((fl & ~ZC_FLAGS_COMMON) && (fl & ~ZC_FLAGS_VALID))
		return -EINVAL;
	if (fl & IORING_SEND_ZC_REPORT_USAGE)
		net_st->st |= NET_ZC_REPORT;
	net_st->len = sqe->len;
	net_st->msg_flags = sqe->msg_flags | MSG_NOSIGNAL;
	net_st->addr = sqe->addr;
	net_st->file_slot = sqe->buf_index; /* the registered buffer */
	if (msg) {
		if (sqe->addr2 || sqe->file_index)
			return -EINVAL;
		return uu_net_import_msghdr(req, true);
	}
	/* io_send_setup() */
	if (sqe->__pad3[0])
		return -EINVAL;
	if (sqe->addr2) {
		ret = uu_net_import_addr(sqe->addr2, sqe->addr_len, &addr);
		if (ret)
			return ret;
	}
	vec = fl & IORING_SEND_VECTORIZED;
	fixed = fl & IORING_RECVSEND_FIXED_BUF;
	if (fixed && vec)
		return -EINVAL;
	if (!vec) {
		if (!fixed) {
			if (net_st->len > UU_MAX_RW_COUNT)
				net_st->len = UU_MAX_RW_COUNT;
			ret = uu_net_range_ok(sqe->addr, net_st->len);
			if (ret)
				return ret;
		}
		if (!sqe->addr2)
			return 0;
	} else if (sqe->len > UU_UIO_MAXIOV) {
		return -EINVAL;
	}
	m = uu_net_alloc_msg(req, vec ? sqe->len : 0, 0);
	if (!m)
		return -ENOMEM;
	if (sqe->addr2) {
		memcpy(&m->addr, &addr, sqe->addr_len);
		m->has_addr = true;
		m->addrlen = sqe->addr_len;
	}
	if (vec) {
		ret = uu_net_import_iov(m, sqe->addr, sqe->len, false);
		if (ret)
			uu_os_drop(req);
	}
	return ret;
}

int uu_send_zc_prep(struct uu_req *req)
{
	return zc_prep(req, false);
}

int uu_sendmsg_zc_prep(struct uu_req *req)
{
	return zc_prep(req, true);
}

/* SOCK_SUPPORT_ZC: TCP and UDP over IPv4 and IPv6 */
static int zc_supported(struct uu_req *req)
{
	int dom = 0, proto = 0;
	socklen_t l = sizeof(dom);
	int ret = uu_net_is_socket(req);

	if (ret)
		return ret;
	if (getsockopt(req->fd, SOL_SOCKET, SO_DOMAIN, &dom, &l))
		return -errno;
	l = sizeof(proto);
	if (getsockopt(req->fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l))
		return -errno;
	if ((dom != AF_INET && dom != AF_INET6) ||
	    (proto != IPPROTO_TCP && proto != IPPROTO_UDP))
		return -EOPNOTSUPP;
	return 0;
}

/* io_import_reg_buf / io_import_reg_vec: the range must lie within the
 * registered buffer (-EFAULT) */
static int zc_import_fixed(struct uu_req *req)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	struct uu_netmsg *m = nmsg(req);
	const struct uu_rbuf *b;
	bool vec;

	if (!req->buf_node) {
		req->buf_node = uu_rbuf_get(req->ring, net_st->file_slot);
		if (!req->buf_node)
			return -EFAULT;
	}
	b = req->buf_node->buf;
	vec = req->opcode == IORING_OP_SENDMSG_ZC;
	for (unsigned int i = 0; i < (vec ? m->nr_iov : 1); i++) {
		uint64_t addr = vec ? (uintptr_t)m->iov[i].iov_base :
				      net_st->addr;
		uint64_t len = vec ? m->iov[i].iov_len : net_st->len;
		uint64_t end;

		if (__builtin_add_overflow(addr, len, &end) || addr < b->addr ||
		    end > b->addr + b->len || len > UU_MAX_RW_COUNT ||
		    (vec && !len))
			return -EFAULT;
	}
	return 0;
}

static int zc_issue(struct uu_req *req)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	bool fixed = net_st->flags & IORING_RECVSEND_FIXED_BUF;
	int ret;

	/* SENDMSG_ZC imports its registered buffer before anything else */
	if (fixed && req->opcode == IORING_OP_SENDMSG_ZC && !req->buf_node) {
		ret = zc_import_fixed(req);
		if (ret)
			return ret;
	}
	if (net_st->kind == KIND_UNKNOWN) {
		ret = zc_supported(req);
		if (ret)
			return ret;
		net_st->kind = KIND_OTHER; /* checked */
	}
	if ((net_st->flags & IORING_RECVSEND_POLL_FIRST) &&
	    !(net_st->st & NET_POLLED)) {
		ret = uu_net_poll_first(req, UU_ISSUE_PARK_POLLOUT);
		if (ret != 1)
			return ret;
	}
	if (fixed && !req->buf_node) {
		ret = zc_import_fixed(req);
		if (ret)
			return ret;
	}
	return send_issue(req);
}

int uu_send_zc_issue(struct uu_req *req, unsigned int issue_flags)
{
	(void)issue_flags;
	return zc_issue(req);
}

/*
 * Completion of a zero-copy send: cleanup runs just before the core posts
 * the request's CQE.  The send's own CQE (with IORING_CQE_F_MORE, the
 * bytes moved before a failure as io_sendrecv_fail) is posted here, and
 * the request's CQE becomes the notification.
 */
void uu_send_zc_cleanup(struct uu_req *req)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	int32_t res = req->res;
	/* a failed chain's member: io_fail_links posts it without the
	 * F_MORE io_sendrecv_fail adds, the notification still follows */
	uint32_t cflags = req->cflags |
			  (req->link_failed ? 0 : IORING_CQE_F_MORE);

	if (res < 0 && net_st->done)
		res = (int32_t)net_st->done;
	if (!(req->flags & UU_REQ_CQE_SKIP))
		uu_req_post_extra_cqe(req, res, cflags);
	req->res = (net_st->st & NET_ZC_REPORT) ?
		   (int32_t)IORING_NOTIF_USAGE_ZC_COPIED : 0;
	req->cflags = IORING_CQE_F_NOTIF;
	if (req->buf_node) {
		uu_rbuf_put(req->buf_node);
		req->buf_node = NULL;
	}
	uu_os_release(req);
}
