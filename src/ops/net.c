// SPDX-License-Identifier: MIT
/*
 * The socket opcodes: SEND, RECV, SENDMSG, RECVMSG, ACCEPT (one-shot and
 * multishot), CONNECT, SOCKET, SHUTDOWN, BIND, LISTEN.
 *
 * Prep validates the SQE as the kernel's io_uring/net.c does (the same
 * fields must be zero, the same flag checks in the same order) and imports
 * everything the SQE points to with the fault-safe copy (T1, T2): the
 * msghdr, its iovec array, the address of SENDMSG and of a SEND with
 * addr2 (sendto), and the address of CONNECT and BIND, into one heap block
 * (struct uu_netmsg) owned by the request.  The data buffers, RECVMSG's
 * name and control buffers, and ACCEPT's addr/addrlen are the system
 * call's to read and write, as they are the kernel's at issue.  RECVMSG
 * writes msg_namelen, msg_flags and msg_controllen back into the user's
 * msghdr at completion, as recvmsg(2) does.
 *
 * Non-blocking first, never touching the file's O_NONBLOCK (T5): sends
 * and receives pass MSG_DONTWAIT; would-block parks the request on the
 * readiness engine (POLLOUT / POLLIN) and the poller issues it again;
 * MSG_DONTWAIT in the SQE (the kernel's REQ_F_NOWAIT) makes -EAGAIN final.
 * MSG_WAITALL on stream and seqpacket sockets accumulates partial
 * transfers across retries; a short final count fails the link chain.
 * IORING_RECVSEND_POLL_FIRST waits for readiness before the first try.
 * SOCK_NONEMPTY (IORING_CQE_F_SOCK_NONEMPTY) is what the kernel's
 * msg_inq / is_empty say: TCP and AF_UNIX stream receives, TCP accepts.
 *
 * accept4(2) and connect(2) have no per-call non-blocking flag:
 *  - a listener with O_NONBLOCK is accepted from directly (EAGAIN parks);
 *  - a blocking listener is never accepted from in the submitting thread:
 *    the request waits for POLLIN, and the retry (poller or io-wq worker)
 *    accepts only after poll(2) says a connection is queued.  Another
 *    process or thread taking that connection first makes the retry block
 *    until the next one (docs/compatibility.md);
 *  - connect(2) on a blocking TCP socket is replaced by a data-less
 *    sendto(MSG_FASTOPEN | MSG_DONTWAIT), which starts the connection
 *    without waiting; other blocking stream sockets connect in io-wq.
 * Multishot ACCEPT posts one CQE per connection with IORING_CQE_F_MORE and
 * ends (a CQE without it) on an error, cancellation or a full CQ (T14).
 *
 * SEND_ZC and SENDMSG_ZC copy (see below).  ACCEPT and SOCKET with
 * file_index install the new socket into the registered file table (a
 * direct descriptor).
 *
 * RECV and RECVMSG take provided buffers (IOSQE_BUFFER_SELECT, legacy
 * groups and buffer rings, see recv_select_issue), one-shot and
 * IORING_RECV_MULTISHOT.  RECV bundles (IORING_RECVSEND_BUNDLE) and SEND
 * with provided buffers, bundles or not, are ops/net_bundle.c's.
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
#include "core/task_work.h"
#include "core/tctx.h"
#include "core/types.h"
#include "core/xproc.h"
#include "ops/kbuf.h"
#include "ops/net.h"
#include "ops/net_int.h"
#include "ops/ops.h"
#include "util/cpsys.h"
#include "util/usercopy.h"

#ifndef MSG_CMSG_COMPAT
#define MSG_CMSG_COMPAT 0
#endif

/* ---- helpers ---- */

/* The kernel's access_ok(): the range lies in the user half. */
static int range_ok(uint64_t addr, uint64_t len)
{
#if defined(__x86_64__)
	uint64_t end = addr + len;

	if (end < addr || end > 0x7fffffffefffULL)
		return -EFAULT;
#else
	(void)addr;
	(void)len;
#endif
	return 0;
}

/* move_addr_to_kernel() */
static int import_addr(uint64_t uaddr, int len, struct sockaddr_storage *dst)
{
	if (len < 0 || (size_t)len > sizeof(*dst))
		return -EINVAL;
	if (!len)
		return 0;
	return uu_copy_from_user(dst, (const void *)(uintptr_t)uaddr,
				 (size_t)len);
}

struct uu_netmsg *uu_net_alloc_msg(struct uu_req *req, size_t nr_iov,
				      size_t extra)
{
	struct uu_netmsg *m = calloc(1, sizeof(*m) +
				     nr_iov * sizeof(struct iovec) + extra);

	if (m)
		uu_os_take(req, m, NULL);
	return m;
}

/* import_iovec(): copy, reject negative lengths, clamp the total.  raw:
 * iovecs into a registered buffer, only copied (checked at issue). */
static int import_iov(struct uu_netmsg *m, uint64_t uiov, size_t nr, bool raw)
{
	size_t total = 0;
	int ret;

	m->nr_iov = (unsigned int)nr;
	m->first = 0;
	if (!nr)
		return 0;
	ret = uu_copy_from_user(m->iov, (const void *)(uintptr_t)uiov,
				nr * sizeof(struct iovec));
	if (ret)
		return ret;
	for (size_t i = 0; i < nr && raw; i++)
		total += m->iov[i].iov_len;
	for (size_t i = 0; i < nr && !raw; i++) {
		ssize_t len = (ssize_t)m->iov[i].iov_len;

		if (len < 0)
			return -EINVAL;
		if (range_ok((uintptr_t)m->iov[i].iov_base, (uint64_t)len))
			return -EFAULT;
		if ((size_t)len > UU_MAX_RW_COUNT - total) {
			len = (ssize_t)(UU_MAX_RW_COUNT - total);
			m->iov[i].iov_len = (size_t)len;
		}
		total += (size_t)len;
	}
	m->total = total;
	return 0;
}

/* Skips n bytes of the iovecs (a partial transfer before a retry). */
void uu_net_iov_advance(struct uu_netmsg *m, size_t n)
{
	while (n && m->first < m->nr_iov) {
		struct iovec *v = &m->iov[m->first];

		if (n < v->iov_len) {
			v->iov_base = (char *)v->iov_base + n;
			v->iov_len -= n;
			return;
		}
		n -= v->iov_len;
		m->first++;
	}
}

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

/* What the kernel reports msg_inq / is_empty for; cached per request. */
int uu_net_sock_kind(struct uu_req *req)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	int proto = -1, dom = 0, type = 0;
	socklen_t l = sizeof(proto);

	if (net_st->kind != KIND_UNKNOWN)
		return net_st->kind;
	net_st->kind = KIND_OTHER;
	if (getsockopt(req->fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l))
		return KIND_OTHER;
	if (proto == IPPROTO_TCP || proto == IPPROTO_MPTCP) {
		net_st->kind = KIND_TCP;
	} else if (proto == 0) {
		l = sizeof(dom);
		if (getsockopt(req->fd, SOL_SOCKET, SO_DOMAIN, &dom, &l) ||
		    dom != AF_UNIX)
			return KIND_OTHER;
		l = sizeof(type);
		if (!getsockopt(req->fd, SOL_SOCKET, SO_TYPE, &type, &l) &&
		    type == SOCK_STREAM)
			net_st->kind = KIND_UNIX_STREAM;
	}
	return net_st->kind;
}

/*
 * IORING_CQE_F_SOCK_NONEMPTY after a receive that returned >= 0: the
 * kernel's msg_inq.  TCP: tcp_inq_hint(), non-zero while data (or a FIN)
 * is unread, which is POLLIN; AF_UNIX stream: the bytes queued
 * (FIONREAD); other sockets do not report it.
 */
static uint32_t recv_cflags(struct uu_req *req)
{
	struct pollfd p = { .fd = req->fd, .events = POLLIN };
	int inq = 0;

	switch (uu_net_sock_kind(req)) {
	case KIND_TCP:
		if (poll(&p, 1, 0) == 1 && (p.revents & POLLIN))
			return IORING_CQE_F_SOCK_NONEMPTY;
		return 0;
	case KIND_UNIX_STREAM:
		if (!ioctl(req->fd, FIONREAD, &inq) && inq > 0)
			return IORING_CQE_F_SOCK_NONEMPTY;
		return 0;
	default:
		return 0;
	}
}

/*
 * After a multishot shot: did it leave the socket empty, as far as the
 * kernel can tell?  io_recv_finish receives again at once only when the
 * socket is known non-empty or its state is unknown (msg_inq < 0: not
 * TCP, not AF_UNIX stream); a socket known empty waits for the next
 * wakeup, and so selects no buffer until data (or EOF) needs one.
 * Selecting first would end the request with -ENOBUFS whenever the
 * application has all its buffers out at that moment, although nothing
 * needed one (tests/test_diff_netbuf netbuf_mshot_credit*).  cflags is
 * recv_cflags' answer for the shot.  An AF_UNIX stream's FIONREAD does
 * not count a pending EOF: the request goes on then, as the wakeup of
 * that EOF may be behind us.
 */
static bool shot_drained(struct uu_req *req, uint32_t cflags)
{
	struct pollfd p = { .fd = req->fd, .events = POLLIN };

	if (cflags & IORING_CQE_F_SOCK_NONEMPTY)
		return false;
	switch (uu_net_sock_kind(req)) {
	case KIND_TCP:
		/* recv_cflags polled: neither data nor a FIN */
		return true;
	case KIND_UNIX_STREAM:
		return poll(&p, 1, 0) == 0;
	default:
		return false;
	}
}

/* io_net_retry(): a partial MSG_WAITALL transfer continues on stream and
 * seqpacket sockets */
bool uu_net_retry(struct uu_req *req)
{
	int type = 0;
	socklen_t l = sizeof(type);

	if (!(uu_cmd(req, net)->msg_flags & MSG_WAITALL))
		return false;
	if (getsockopt(req->fd, SOL_SOCKET, SO_TYPE, &type, &l))
		return false;
	return type == SOCK_STREAM || type == SOCK_SEQPACKET;
}

/*
 * Is the request's file a socket?  -ENOTSOCK / -EBADF otherwise.  A ring
 * fd is not (the kernel's is an io_uring file; uuring's a socket
 * underneath): those whose numbers the registry knows are told apart.
 */
int uu_net_is_socket(struct uu_req *req)
{
	struct stat st;

	if (fstat(req->fd, &st))
		return -EBADF;
	if (!S_ISSOCK(st.st_mode))
		return -ENOTSOCK;
	/* by the SQE's number: req->fd may be a dup the registry does not
	 * know (and must not learn: core/registry.c caches what it finds) */
	if (unlikely(uu_registry_fd_cached(req->sqe_fd)) &&
	    uu_is_ring_fd(req->sqe_fd, &st))
		return -ENOTSOCK;
	return 0;
}

/*
 * -ENOTSOCK for a ring fd, before anything reads or writes it (one that
 * waited for readiness first is known by the flag: it waits on a dup)
 */
static int ring_fd_check(struct uu_req *req)
{
	if (unlikely(uu_cmd(req, net)->st & NET_RING_FILE))
		return -ENOTSOCK;
	return unlikely(uu_registry_fd_cached(req->sqe_fd)) ?
		       uu_net_is_socket(req) :
		       0;
}

/* waits for readiness; the first wait marks the request polled */
int uu_net_park(struct uu_req *req, int how)
{
	uu_cmd(req, net)->st |= NET_POLLED;
	return uu_park(req, how);
}

/*
 * IORING_RECVSEND_POLL_FIRST: the first issue only waits for readiness,
 * whatever the file (io_send/io_recv answer -EAGAIN before they look for
 * a socket, and poll is armed); with MSG_DONTWAIT that wait is refused at
 * once (-EAGAIN, the kernel's REQ_F_NOWAIT).  A file ready now is tried
 * at once, as the kernel's arm finds it ready and issues it again
 * (IO_APOLL_READY; files without a poll method are always ready here):
 * 1, the caller goes on.  A socket's failure then comes from that try.
 */
int uu_net_poll_first(struct uu_req *req, int how)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	struct pollfd pfd = {
		.fd = req->fd,
		.events = how == UU_ISSUE_PARK_POLLIN ? POLLIN : POLLOUT,
	};

	int ready = -1;

	if (net_st->msg_flags & MSG_DONTWAIT)
		return -EAGAIN;
	/* a ring fd: readable when its CQ holds a CQE, always writable (the
	 * kernel's io_uring_poll, SQ not full) */
	if (unlikely(uu_registry_fd_cached(req->sqe_fd))) {
		ready = how == UU_ISSUE_PARK_POLLOUT ? 1 :
			uu_ring_fd_readable(req->sqe_fd);
		if (ready >= 0)
			net_st->st |= NET_RING_FILE;
	}
	if (ready < 0)
		ready = poll(&pfd, 1, 0) == 1 && !(pfd.revents & POLLNVAL);
	if (ready) {
		net_st->st |= NET_POLLED;
		return 1;
	}
	return uu_net_park(req, how);
}

/* A positive result that still fails the chain (MSG_WAITALL cut short). */
int uu_net_short_res(struct uu_req *req, int res)
{
	req->flags |= UU_REQ_SHORT;
	return res;
}

/*
 * The end of a send or receive try that returned n (or -errno), min the
 * count below which MSG_WAITALL is not satisfied: the kernel's
 * "ret < min_ret" logic.  Returns the CQE result, or parks; *again says
 * that a partial transfer was added to the count and the caller must try
 * at once for the rest: the readiness engine reports edges, so a request
 * waits only after a try that would block.
 */
static int sr_finish(struct uu_req *req, ssize_t n, size_t min, int how,
		     bool trunc, bool *again)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	uint32_t done = net_st->done;

	*again = false;
	if (n < 0) {
		if (n == -EAGAIN && !(net_st->msg_flags & MSG_DONTWAIT))
			return uu_net_park(req, how);
		/* the kernel reports what moved before the error */
		return done ? uu_net_short_res(req, (int)done) : (int)n;
	}
	if ((size_t)n < min) {
		if (n > 0 && uu_net_retry(req)) {
			net_st->done = done + (uint32_t)n;
			*again = true;
			return 0;
		}
		return uu_net_short_res(req, (int)(n + done));
	}
	if (trunc)
		return uu_net_short_res(req, (int)(n + done));
	return (int)(n + done);
}

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
		ret = import_addr(sqe->addr2, sqe->addr_len, &addr);
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
		ret = range_ok(sqe->addr, net_st->len);
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
		ret = import_iov(m, sqe->addr, sqe->len, false);
		if (ret)
			uu_os_drop(req);
	}
	return ret;
}

/*
 * RECVMSG with IOSQE_BUFFER_SELECT: no iovecs are imported; at most one
 * may be given, whose length caps the buffer (io_msg_copy_hdr).  A
 * multishot RECVMSG lays out each buffer as struct io_uring_recvmsg_out,
 * then msg_namelen bytes for the name and msg_controllen for the control
 * data, both as the user set them (not the clamped name length), then
 * the payload.
 */
static int import_msghdr_select(struct uu_req *req, const struct msghdr *um,
				int namelen)
{
	struct uu_netmsg *m;
	uint32_t want = 0;
	int ret;

	if (um->msg_iovlen > 1)
		return -EINVAL;
	if (um->msg_iovlen) {
		struct iovec v;

		ret = uu_copy_from_user(&v, um->msg_iov, sizeof(v));
		if (ret)
			return ret;
		want = (uint32_t)v.iov_len;
	}
	if (uu_cmd(req, net)->st & NET_MULTISHOT) {
		int mnl = (int)um->msg_namelen;
		uint64_t hdr;

		if (mnl < 0)
			return -EOVERFLOW;
		hdr = sizeof(struct io_uring_recvmsg_out) + (uint64_t)mnl;
		if (__builtin_add_overflow(hdr, um->msg_controllen, &hdr) ||
		    hdr > INT32_MAX)
			return -EOVERFLOW;
	}
	m = uu_net_alloc_msg(req, 0, 0);
	if (!m)
		return -ENOMEM;
	m->uname = (uintptr_t)um->msg_name;
	m->namelen = namelen;
	m->ucontrol = (uintptr_t)um->msg_control;
	m->controllen = um->msg_controllen;
	m->mnamelen = (int)um->msg_namelen;
	m->mcontrollen = um->msg_controllen;
	uu_kbuf_prep(req, want);
	return 0;
}

/*
 * The user's msghdr (struct user_msghdr on a 64-bit kernel), copied and
 * checked like __copy_msghdr(); for SENDMSG the name is imported and the
 * control data copied when it can be (otherwise sendmsg(2) reads it, as
 * the kernel does at issue).
 */
static int import_msghdr(struct uu_req *req, bool is_send)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	struct msghdr um;
	struct uu_netmsg *m;
	size_t ctl = 0;
	int namelen, ret;

	ret = uu_copy_from_user(&um, (const void *)(uintptr_t)net_st->addr,
				sizeof(um));
	if (ret)
		return ret;
	namelen = um.msg_name ? (int)um.msg_namelen : 0;
	if (namelen < 0)
		return -EINVAL;
	if ((size_t)namelen > sizeof(struct sockaddr_storage))
		namelen = sizeof(struct sockaddr_storage);
	if (is_send && um.msg_controllen && um.msg_controllen <= 65536)
		ctl = um.msg_controllen;
	if (um.msg_iovlen > UU_UIO_MAXIOV) {
		/* the name is imported first (sendmsg) */
		if (is_send && namelen) {
			struct sockaddr_storage tmp;

			ret = import_addr((uintptr_t)um.msg_name, namelen, &tmp);
			if (ret)
				return ret;
		}
		return -EMSGSIZE;
	}
	if (!is_send && (req->flags & UU_REQ_BUFFER_SELECT))
		return import_msghdr_select(req, &um, namelen);
	m = uu_net_alloc_msg(req, um.msg_iovlen, ctl);
	if (!m)
		return -ENOMEM;
	if (is_send) {
		if (namelen) {
			ret = import_addr((uintptr_t)um.msg_name, namelen,
					  &m->addr);
			if (ret)
				goto fail;
			m->has_addr = true;
			m->addrlen = namelen;
		}
	} else {
		m->uname = (uintptr_t)um.msg_name;
		m->namelen = namelen;
	}
	m->ucontrol = (uintptr_t)um.msg_control;
	m->controllen = um.msg_controllen;
	ret = import_iov(m, (uintptr_t)um.msg_iov, um.msg_iovlen,
			 net_st->flags & IORING_RECVSEND_FIXED_BUF);
	if (ret)
		goto fail;
	if (ctl) {
		void *dst = (char *)m->iov + um.msg_iovlen * sizeof(struct iovec);

		/* a fault is sendmsg's to report, at issue */
		if (!uu_copy_from_user(dst, um.msg_control, ctl))
			m->control = dst;
	}
	return 0;
fail:
	uu_os_drop(req);
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
	return import_msghdr(req, true);
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
	res = ring_fd_check(req);
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
		res = sr_finish(req, n, (flags & MSG_WAITALL) ? want : 0,
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
		return import_msghdr(req, true);
	}
	/* io_send_setup() */
	if (sqe->__pad3[0])
		return -EINVAL;
	if (sqe->addr2) {
		ret = import_addr(sqe->addr2, sqe->addr_len, &addr);
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
			ret = range_ok(sqe->addr, net_st->len);
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
		ret = import_iov(m, sqe->addr, sqe->len, false);
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

/* ---- RECV, RECVMSG ---- */

static int recv_common_prep(struct uu_req *req)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	const struct io_uring_sqe *sqe = &req->sqe;

	uu_os_init(req);
	net_st->done = 0;
	net_st->st = 0;
	net_st->loops = 0;
	net_st->kind = KIND_UNKNOWN;
	if (sqe->addr2)
		return -EINVAL;
	net_st->addr = sqe->addr;
	net_st->len = sqe->len;
	net_st->flags = sqe->ioprio;
	if (net_st->flags & ~RECV_FLAGS)
		return -EINVAL;
	net_st->msg_flags = sqe->msg_flags;
	/*
	 * Multishot (6.18): RECV's len caps each shot, and optlen (the
	 * file_index field) limits the bytes in all, after which it ends;
	 * RECVMSG takes no optlen, nor does a one-shot receive.
	 */
	if (net_st->flags & IORING_RECV_MULTISHOT) {
		if (!(req->flags & UU_REQ_BUFFER_SELECT))
			return -EINVAL;
		if (net_st->msg_flags & MSG_WAITALL)
			return -EINVAL;
		if (req->opcode == IORING_OP_RECV) {
			net_st->addr2 = sqe->optlen;
			if (sqe->optlen)
				net_st->st |= NET_MSHOT_LIM;
		} else if (sqe->optlen) {
			return -EINVAL;
		}
		net_st->st |= NET_MULTISHOT;
	} else if (sqe->optlen) {
		return -EINVAL;
	}
	/* bundles: RECV only */
	if ((net_st->flags & IORING_RECVSEND_BUNDLE) &&
	    req->opcode == IORING_OP_RECVMSG)
		return -EINVAL;
	return 0;
}

int uu_recv_prep(struct uu_req *req)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	int ret = recv_common_prep(req);

	if (ret)
		return ret;
	if (net_st->len > UU_MAX_RW_COUNT)
		net_st->len = UU_MAX_RW_COUNT;
	if (req->flags & UU_REQ_BUFFER_SELECT) {
		if (net_st->flags & IORING_RECVSEND_BUNDLE)
			return uu_net_bundle_prep(req);
		/* the address is not looked at; len caps the buffer */
		uu_kbuf_prep(req, net_st->len);
		return 0;
	}
	return range_ok(net_st->addr, net_st->len);
}

int uu_recvmsg_prep(struct uu_req *req)
{
	int ret = recv_common_prep(req);

	if (ret)
		return ret;
	return import_msghdr(req, false);
}

/* recvmsg(2)'s write-back into the user's msghdr */
static int recvmsg_writeback(struct uu_req *req, const struct msghdr *h,
			     const struct uu_netmsg *m)
{
	struct msghdr *um = (struct msghdr *)(uintptr_t)uu_cmd(req, net)->addr;
	struct {
		size_t controllen;
		int flags;
	} __attribute__((packed)) tail;
	int ret;

	if (m->uname) {
		int namelen = (int)h->msg_namelen;

		ret = uu_copy_to_user(&um->msg_namelen, &namelen,
				      sizeof(namelen));
		if (ret)
			return ret;
	}
	_Static_assert(offsetof(struct msghdr, msg_flags) ==
		       offsetof(struct msghdr, msg_controllen) + sizeof(size_t),
		       "msghdr layout");
	tail.controllen = h->msg_controllen;
	tail.flags = h->msg_flags & ~MSG_CMSG_COMPAT;
	return uu_copy_to_user(&um->msg_controllen, &tail,
			       sizeof(size_t) + sizeof(int));
}

/*
 * One receive of a multishot RECVMSG into the selected buffer, laid out
 * as struct io_uring_recvmsg_out, the name (mnamelen bytes), the control
 * data (mcontrollen bytes) and the payload, as io_recvmsg_multishot:
 * the header records the name's full length, the control bytes used,
 * the message flags and the payload's full length (MSG_TRUNC), and the
 * result covers the header, the name and control areas and the payload
 * stored.  *finished: recvmsg returned 0 or failed, which ends it.
 */
static ssize_t recvmsg_mshot_one(struct uu_req *req, int flags, bool *finished)
{
	const struct uu_netmsg *m = nmsg(req);
	struct {
		struct io_uring_recvmsg_out out;
		struct sockaddr_storage name;
	} hdr;
	char *buf = (char *)(uintptr_t)req->kb.addr;
	size_t room = req->kb.len, need, copy;
	struct msghdr h;
	struct iovec v;
	ssize_t n;

	_Static_assert(offsetof(__typeof__(hdr), name) ==
		       sizeof(struct io_uring_recvmsg_out), "no gap");
	*finished = true;
	need = sizeof(hdr.out) + (size_t)m->mnamelen + m->mcontrollen;
	if (room < need)
		return -EFAULT;
	v.iov_base = buf + need;
	v.iov_len = room - need;
	do {
		memset(&h, 0, sizeof(h));
		if (m->mnamelen) {
			h.msg_name = &hdr.name;
			h.msg_namelen = sizeof(hdr.name);
		}
		if (m->mcontrollen) {
			h.msg_control = buf + sizeof(hdr.out) + m->mnamelen;
			h.msg_controllen = m->mcontrollen;
		}
		h.msg_iov = &v;
		h.msg_iovlen = 1;
		n = recvmsg(req->fd, &h, flags);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	*finished = n == 0;
	memset(&hdr.out, 0, sizeof(hdr.out));
	hdr.out.namelen = m->mnamelen ? h.msg_namelen : 0;
	hdr.out.controllen = m->mcontrollen ? (uint32_t)h.msg_controllen : 0;
	hdr.out.flags = (uint32_t)h.msg_flags & ~(uint32_t)MSG_CMSG_COMPAT;
	hdr.out.payloadlen = (uint32_t)n;
	if ((size_t)n > v.iov_len)
		n = (ssize_t)v.iov_len;
	copy = sizeof(hdr.out);
	copy += hdr.out.namelen < (uint32_t)m->mnamelen ? hdr.out.namelen :
							 (uint32_t)m->mnamelen;
	if (uu_copy_to_user(buf, &hdr, copy)) {
		*finished = true;
		return -EFAULT;
	}
	return (ssize_t)need + n;
}

/* One receive into the selected buffer (after the bytes already moved). */
static ssize_t recv_into_buf(struct uu_req *req, int flags, bool *trunc)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	char *buf = (char *)(uintptr_t)(req->kb.addr + net_st->done);
	struct iovec v = { buf, req->kb.len - net_st->done };
	struct msghdr h;
	ssize_t n;
	int ret;

	*trunc = false;
	do {
		memset(&h, 0, sizeof(h));
		h.msg_iov = &v;
		h.msg_iovlen = 1;
		if (req->opcode == IORING_OP_RECVMSG) {
			const struct uu_netmsg *m = nmsg(req);

			h.msg_name = (void *)(uintptr_t)m->uname;
			h.msg_namelen = (socklen_t)m->namelen;
			h.msg_control = (void *)(uintptr_t)m->ucontrol;
			h.msg_controllen = m->controllen;
		}
		n = recvmsg(req->fd, &h, flags);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (req->opcode == IORING_OP_RECVMSG) {
		ret = recvmsg_writeback(req, &h, nmsg(req));
		if (ret)
			return ret;
	}
	*trunc = (flags & MSG_WAITALL) &&
		 (h.msg_flags & (MSG_TRUNC | MSG_CTRUNC));
	return n;
}

/*
 * RECV and RECVMSG with IOSQE_BUFFER_SELECT, one-shot and multishot, as
 * the kernel's io_recv / io_recvmsg with io_recv_finish:
 *  - the socket is checked, then a buffer is selected (-ENOBUFS when the
 *    group is empty or unknown), capped at the length asked for;
 *  - a receive that would block gives the buffer back (ops/kbuf.c,
 *    uu_kbuf_recycle) and waits for readiness; the retry selects again,
 *    so the buffer is consumed only when data arrives;
 *  - a receive that ends with nothing (0 at EOF, an error) gives it back
 *    too: its CQE has no IORING_CQE_F_BUFFER;
 *  - otherwise the buffer is consumed and the CQE carries its id;
 *  - multishot: each receive posts a CQE with IORING_CQE_F_MORE and the
 *    request receives again at once (later shots take whole buffers),
 *    unless the shot left a TCP or AF_UNIX stream socket empty: then it
 *    waits for data before it selects again (shot_drained);
 *    it ends, with a CQE without F_MORE, on an error (-ENOBUFS included),
 *    a receive of 0 (EOF), a full CQ (that CQE carries the data, T14),
 *    or cancellation.
 */
static int recv_select_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	bool mshot = net_st->st & NET_MULTISHOT;
	bool msg = req->opcode == IORING_OP_RECVMSG;
	int flags = (int)(net_st->msg_flags | MSG_DONTWAIT);
	int ret;

	/* DEFER_TASKRUN: the shots are the submitter's to post, when it
	 * waits, like the rest of the ring's completions */
	if (mshot && in_poller(issue_flags) &&
	    (req->ring->setup_flags & IORING_SETUP_DEFER_TASKRUN))
		return uu_tw_reissue(req);
	ret = uu_net_is_socket(req);
	if (ret)
		return ret;
	for (;;) {
		bool finished = true, trunc = false, fail;
		uint32_t done = net_st->done, cflags = 0;
		size_t min;
		ssize_t n;
		int res;

		if (req->kb.state == UU_KB_NONE) {
			ret = uu_kbuf_select(req, issue_flags, true);
			if (ret) {
				req->cflags = 0;
				return ret;
			}
		}
		if (mshot && msg) {
			n = recvmsg_mshot_one(req, flags, &finished);
		} else {
			n = recv_into_buf(req, flags, &trunc);
			finished = n <= 0;
		}
		if (n == -EAGAIN && !(net_st->msg_flags & MSG_DONTWAIT)) {
			/* wait for readiness; what moved stays in the buffer */
			if (done)
				uu_kbuf_hold(req);
			else
				uu_kbuf_recycle(req);
			return uu_net_park(req, UU_ISSUE_PARK_POLLIN);
		}
		/* MSG_WAITALL wants the whole buffer, except on a RECVMSG
		 * with control data (no partial retry then, as the kernel) */
		min = (flags & MSG_WAITALL) && !(msg && nmsg(req)->controllen) ?
		      req->kb.len - done : 0;
		if (n > 0 && (size_t)n < min && uu_net_retry(req)) {
			/* partial: the rest at once, into the same buffer */
			net_st->done = done + (uint32_t)n;
			continue;
		}
		fail = n < 0 || (size_t)n < min || trunc;
		if (n > 0) {
			res = (int)(n + done);
		} else if (done) {
			res = (int)done;
		} else {
			res = (int)n;
			uu_kbuf_recycle(req);
		}
		if (n >= 0)
			cflags = recv_cflags(req);
		cflags |= uu_kbuf_consume(req, res);
		if (res > 0 && (net_st->st & NET_MSHOT_LIM)) {
			/* the byte limit reached ends it, with this CQE */
			net_st->addr2 -= (uint64_t)res < net_st->addr2 ?
					     (uint64_t)res : net_st->addr2;
			if (!net_st->addr2)
				finished = true;
		}
		if (mshot && !finished &&
		    uu_req_post_cqe(req, res, cflags, issue_flags)) {
			/* later shots: RECV's len again, RECVMSG's iovec
			 * only capped the first one */
			if (msg)
				req->kb.want = 0;
			/* a socket known empty: wait for data before the
			 * next buffer is selected.  Data that arrives
			 * after this check is not missed: in the poller it
			 * makes an edge after the one this round consumed
			 * (the registration stays), and an arm from
			 * another thread rechecks with poll(2) */
			if (shot_drained(req, cflags))
				return uu_net_park(req, UU_ISSUE_PARK_POLLIN);
			if (!uu_net_mshot_again(req, false))
				return uu_net_requeue(req, issue_flags);
			continue;
		}
		req->cflags = cflags;
		return fail && res >= 0 ? uu_net_short_res(req, res) : res;
	}
}

int uu_recv_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	int flags = (int)(net_st->msg_flags | MSG_DONTWAIT);
	bool trunc, again;
	ssize_t n;
	int res;

	if ((net_st->flags & IORING_RECVSEND_POLL_FIRST) &&
	    !(net_st->st & NET_POLLED)) {
		res = uu_net_poll_first(req, UU_ISSUE_PARK_POLLIN);
		if (res != 1)
			return res;
	}
	res = ring_fd_check(req);
	if (res)
		return res;
	if (req->flags & UU_REQ_BUFFER_SELECT) {
		if (net_st->flags & IORING_RECVSEND_BUNDLE)
			return uu_recv_bundle_issue(req, issue_flags);
		return recv_select_issue(req, issue_flags);
	}
	do {
		/* the sum before the cast: a NULL buffer (an -EFAULT
		 * to come from the system call) takes no offset */
		char *buf = (char *)(uintptr_t)(net_st->addr +
						net_st->done);
		size_t want = net_st->len - net_st->done;

		trunc = false;
		if (flags & MSG_WAITALL) {
			/* recvmsg for msg_flags (MSG_TRUNC fails a WAITALL) */
			struct iovec v = { buf, want };
			struct msghdr h = { .msg_iov = &v, .msg_iovlen = 1 };

			do {
				n = recvmsg(req->fd, &h, flags);
			} while (n < 0 && errno == EINTR && !uu_cp_cancelled());
			trunc = n >= 0 &&
				(h.msg_flags & (MSG_TRUNC | MSG_CTRUNC));
		} else {
			do {
				n = recv(req->fd, buf, want, flags);
			} while (n < 0 && errno == EINTR && !uu_cp_cancelled());
		}
		if (n < 0)
			n = -errno;
		res = sr_finish(req, n, (flags & MSG_WAITALL) ? want : 0,
				UU_ISSUE_PARK_POLLIN, trunc, &again);
	} while (again);
	if (!req->park && n >= 0)
		req->cflags = recv_cflags(req);
	return res;
}

int uu_recvmsg_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	struct uu_netmsg *m = nmsg(req);
	int flags = (int)(net_st->msg_flags | MSG_DONTWAIT);
	bool trunc, again;
	struct msghdr h;
	size_t want;
	ssize_t n;
	int res;

	if ((net_st->flags & IORING_RECVSEND_POLL_FIRST) &&
	    !(net_st->st & NET_POLLED)) {
		res = uu_net_poll_first(req, UU_ISSUE_PARK_POLLIN);
		if (res != 1)
			return res;
	}
	res = ring_fd_check(req);
	if (res)
		return res;
	if (req->flags & UU_REQ_BUFFER_SELECT)
		return recv_select_issue(req, issue_flags);
	do {
		want = m->total - net_st->done;
		do {
			memset(&h, 0, sizeof(h));
			h.msg_name = (void *)(uintptr_t)m->uname;
			h.msg_namelen = (socklen_t)m->namelen;
			h.msg_iov = m->iov + m->first;
			h.msg_iovlen = m->nr_iov - m->first;
			h.msg_control = (void *)(uintptr_t)m->ucontrol;
			h.msg_controllen = m->controllen;
			n = recvmsg(req->fd, &h, flags);
		} while (n < 0 && errno == EINTR && !uu_cp_cancelled());
		if (n < 0) {
			n = -errno;
		} else {
			res = recvmsg_writeback(req, &h, m);
			if (res)
				n = res;
		}
		trunc = n >= 0 && (flags & MSG_WAITALL) &&
			(h.msg_flags & (MSG_TRUNC | MSG_CTRUNC));
		/* no partial retry with control data attached (as the
		 * kernel) */
		res = sr_finish(req, n,
				(flags & MSG_WAITALL) && !m->controllen ? want : 0,
				UU_ISSUE_PARK_POLLIN, trunc, &again);
		if (again)
			uu_net_iov_advance(m, (size_t)n);
	} while (again);
	if (!req->park && n >= 0)
		req->cflags = recv_cflags(req);
	return res;
}

/*
 * SEND, RECV, SENDMSG, RECVMSG: free the import; a request that fails
 * (cancelled, an error) after a partial MSG_WAITALL transfer reports the
 * bytes moved, as the kernel's io_sendrecv_fail.
 */
void uu_net_cleanup(struct uu_req *req)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);

	if (req->res < 0 && net_st->done &&
	    net_st->hdr.tag == uu_os_tag(req))
		req->res = (int32_t)net_st->done;
	/* a buffer still held (a cancelled wait after a partial receive, or
	 * a committed ring buffer): consumed, with the CQE flag */
	if (req->flags & UU_REQ_BUFFER_SELECT)
		uu_kbuf_cleanup(req);
	uu_os_release(req);
}

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
	ret = import_addr(sqe->addr, m->addrlen, &m->addr);
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
