// SPDX-License-Identifier: MIT
/*
 * The receiving socket opcodes (the kernel's io_uring/net.c, its receive
 * side): RECV and RECVMSG, one-shot and multishot, into the caller's
 * buffers or provided ones.  What the socket opcodes share, and their
 * rules, are in ops/net.c; RECV bundles are ops/net_bundle.c's.
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

#ifndef MSG_CMSG_COMPAT
#define MSG_CMSG_COMPAT 0
#endif

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
	return uu_net_range_ok(net_st->addr, net_st->len);
}

int uu_recvmsg_prep(struct uu_req *req)
{
	int ret = recv_common_prep(req);

	if (ret)
		return ret;
	return uu_net_import_msghdr(req, false);
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

	if (uu_net_recv_start(req, issue_flags, mshot, &ret) || ret)
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
	res = uu_net_ring_fd_check(req);
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
		res = uu_net_sr_finish(req, n, (flags & MSG_WAITALL) ? want : 0,
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
	res = uu_net_ring_fd_check(req);
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
		res = uu_net_sr_finish(req, n,
				(flags & MSG_WAITALL) && !m->controllen ? want : 0,
				UU_ISSUE_PARK_POLLIN, trunc, &again);
		if (again)
			uu_net_iov_advance(m, (size_t)n);
	} while (again);
	if (!req->park && n >= 0)
		req->cflags = recv_cflags(req);
	return res;
}
