// SPDX-License-Identifier: MIT
/*
 * The socket opcodes: SEND, RECV, SENDMSG, RECVMSG, ACCEPT (one-shot and
 * multishot), CONNECT, SOCKET, SHUTDOWN, BIND, LISTEN.  This file holds
 * what they share (the imports, the readiness waits, the end of a try,
 * the cleanup); the sends are in ops/net_send.c, the receives in
 * ops/net_recv.c, the opcodes that move no data in ops/net_sock.c, and
 * their common declarations in ops/net_int.h.
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
 * SEND_ZC and SENDMSG_ZC copy (ops/net_send.c).  ACCEPT and SOCKET with
 * file_index install the new socket into the registered file table (a
 * direct descriptor).
 *
 * RECV and RECVMSG take provided buffers (IOSQE_BUFFER_SELECT, legacy
 * groups and buffer rings, see recv_select_issue in ops/net_recv.c),
 * one-shot and IORING_RECV_MULTISHOT.  RECV bundles
 * (IORING_RECVSEND_BUNDLE) and SEND with provided buffers, bundles or
 * not, are ops/net_bundle.c's.
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

/* ---- helpers ---- */

/* The kernel's access_ok(): the range lies in the user half. */
int uu_net_range_ok(uint64_t addr, uint64_t len)
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
int uu_net_import_addr(uint64_t uaddr, int len,
		       struct sockaddr_storage *dst)
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
int uu_net_import_iov(struct uu_netmsg *m, uint64_t uiov, size_t nr,
		      bool raw)
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
		if (uu_net_range_ok((uintptr_t)m->iov[i].iov_base,
				    (uint64_t)len))
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
int uu_net_ring_fd_check(struct uu_req *req)
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
int uu_net_sr_finish(struct uu_req *req, ssize_t n, size_t min, int how,
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
int uu_net_import_msghdr(struct uu_req *req, bool is_send)
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

			ret = uu_net_import_addr((uintptr_t)um.msg_name,
						 namelen, &tmp);
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
			ret = uu_net_import_addr((uintptr_t)um.msg_name,
						 namelen, &m->addr);
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
	ret = uu_net_import_iov(m, (uintptr_t)um.msg_iov, um.msg_iovlen,
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
