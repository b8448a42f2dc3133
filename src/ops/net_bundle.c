// SPDX-License-Identifier: MIT
/*
 * Provided buffers that one transfer spreads over several buffers:
 * IORING_RECVSEND_BUNDLE on RECV (one-shot and multishot) and SEND, and
 * IOSQE_BUFFER_SELECT on SEND, as the kernel's io_uring/net.c (io_recv
 * with io_recv_buf_select and io_recv_finish, io_send with
 * io_send_select_buffer and io_send_finish) and kbuf.c
 * (io_buffers_peek, io_buffers_select; here ops/kbuf_multi.c
 * uu_kbuf_select_multi).
 *
 * RECV bundle: the buffers from the ring's head are mapped as one
 * iovec array, as many as the length asked for needs (sqe->len; without
 * one, what the last receive said was still queued, the kernel's
 * msg_inq; without that, as many as the request's vector holds, one at
 * first), and received into at once.  The CQE carries the first
 * buffer's id and the bytes received; the buffers the bytes reached are
 * consumed (io_bundle_nbufs), or on an incremental ring the bytes.  When
 * the mapped buffers were filled and more is queued, the request maps
 * again and appends (IORING_RECV_RETRY) before it posts.  It ends (a
 * multishot one too) once a selection took the ring's last buffer
 * (REQ_F_BL_EMPTY).  A legacy group gives one buffer per selection.  In
 * an io-wq worker one buffer is selected, as the kernel does unlocked.
 *
 * SEND with provided buffers: the buffers are committed when selected
 * (a bundle: up to what sqe->len allows), sent as one message, and the
 * CQE carries the first id.  A bundle that sent everything posts with
 * IORING_CQE_F_MORE and takes the next buffers, unless the ring is empty,
 * the send had to wait for room, or it failed.
 *
 * Multishot receives are capped at MULTISHOT_MAX_RETRY receives in a row
 * while the socket still has data (io_recv_finish): the request then
 * waits behind the other ready requests (uu_net_requeue).
 *
 * msg_inq is what the kernel reports after a receive: TCP's
 * tcp_inq_hint (the bytes queued, plus one for a FIN), an AF_UNIX
 * stream's queued bytes, and "unknown" (-1) for other sockets.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <linux/sockios.h>

#include "core/buffers.h"
#include "core/cq_post.h"
#include "core/registry.h"
#include "core/types.h"
#include "ops/kbuf.h"
#include "ops/net.h"
#include "ops/net_int.h"
#include "util/cpsys.h"

/* m->b.fl, the kernel's sr->flags bits and REQ_F_BL_EMPTY */
enum {
	BNDL_RETRY = 1u << 0,   /* IORING_RECV_RETRY: appending */
	BNDL_PARTIAL = 1u << 1, /* IORING_RECV_PARTIAL_MAP */
	BNDL_CAP = 1u << 2,     /* IORING_RECV_MSHOT_CAP */
	BNDL_DONE = 1u << 3,    /* IORING_RECV_MSHOT_DONE */
	BNDL_EMPTY = 1u << 4,   /* REQ_F_BL_EMPTY */
	BNDL_WAIT = 1u << 5,    /* MSG_WAITALL: the mapping waits for the
				 * rest (REQ_F_BL_NO_RECYCLE) */
};
#define BNDL_NO_RETRY (BNDL_RETRY | BNDL_PARTIAL | BNDL_CAP | BNDL_DONE)
/* what an appended receive takes of its own flags */
#define CQE_F_MASK (IORING_CQE_F_SOCK_NONEMPTY | IORING_CQE_F_MORE)

int uu_net_bundle_prep(struct uu_req *req)
{
	struct uu_netmsg *m = uu_net_alloc_msg(req, UU_KBUF_PEEK_MAX, 0);

	if (!m)
		return -ENOMEM;
	m->b.len = uu_cmd(req, net)->len;
	m->b.vec_nr = 1;
	uu_kbuf_prep(req, 0);
	return 0;
}

/* the kernel's msg_inq after a receive that returned >= 0 */
static int sock_inq(struct uu_req *req)
{
	struct pollfd p = { .fd = req->fd, .events = POLLRDHUP };
	int inq = 0;

	switch (uu_net_sock_kind(req)) {
	case KIND_TCP:
		if (ioctl(req->fd, SIOCINQ, &inq))
			return -1;
		/* tcp_inq_hint counts a FIN as one byte */
		if (poll(&p, 1, 0) == 1 && (p.revents & POLLRDHUP))
			inq++;
		return inq;
	case KIND_UNIX_STREAM:
		return ioctl(req->fd, FIONREAD, &inq) ? -1 : inq;
	default:
		return -1;
	}
}

/* io_bundle_nbufs: the buffers ret bytes reached */
static unsigned int bundle_nbufs(const struct uu_netmsg *m, int ret)
{
	unsigned int n = 0;

	if (ret <= 0)
		return 0;
	if (m->b.nr == 1 || (size_t)ret >= m->b.mapped)
		return m->b.nr;
	do {
		size_t l = m->iov[n].iov_len < (size_t)ret ? m->iov[n].iov_len :
							      (size_t)ret;

		n++;
		ret -= (int)l;
	} while (ret > 0 && n < m->b.nr);
	return n;
}

/*
 * After a multishot receive posted a shot with the socket still holding
 * data: receive again at once, up to MULTISHOT_MAX_RETRY times, then
 * let the other ready requests go first (the kernel requeues its task
 * work, IOU_REQUEUE).  Returns true to receive again now.
 */
#define MULTISHOT_MAX_RETRY 32
bool uu_net_mshot_again(struct uu_req *req, bool cap)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);

	if (net_st->loops++ < MULTISHOT_MAX_RETRY && !cap)
		return true;
	net_st->loops = 0;
	return false;
}

int uu_net_requeue(struct uu_req *req, unsigned int issue_flags)
{
	if (in_poller(issue_flags)) {
		req->requeue = true;
		return uu_net_park(req, UU_ISSUE_PARK_POLLIN);
	}
	/* issued by a submission batch (or its task_work): again once the
	 * batch's other work ran (core/req.c); a DEFER_TASKRUN ring's
	 * retry waits for the submitter's GETEVENTS anyway */
	if ((issue_flags & UU_ISSUE_F_BATCH) &&
	    !(issue_flags & UU_ISSUE_F_WORKER) &&
	    !(req->ring->setup_flags & IORING_SETUP_DEFER_TASKRUN)) {
		uu_cmd(req, net)->st |= NET_POLLED;
		return uu_park(req, UU_ISSUE_PARK_REQUEUE);
	}
	/* elsewhere the park's arm rechecks the file itself */
	return uu_net_park(req, UU_ISSUE_PARK_POLLIN);
}

/* io_recv_buf_select for a bundle */
static int recv_select(struct uu_req *req, struct uu_netmsg *m,
		       unsigned int issue_flags)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	struct uu_kbuf_multi a;
	int ret;

	if (req->kb.state != UU_KB_NONE ||
	    (issue_flags & UU_ISSUE_F_WORKER)) {
		/* unlocked (io-wq): one buffer, committed at once, which
		 * stays with the request if it has to wait */
		if (req->kb.state == UU_KB_NONE) {
			req->kb.want = m->b.len;
			ret = uu_kbuf_select(req, issue_flags, true);
			if (ret)
				return ret;
		}
		m->iov[0].iov_base = (void *)(uintptr_t)req->kb.addr;
		m->iov[0].iov_len = req->kb.len;
		m->b.nr = 1;
		m->b.mapped = req->kb.len;
		return 0;
	}
	memset(&a, 0, sizeof(a));
	a.iovs = m->iov;
	a.nr_iovs = m->b.vec_nr;
	a.grow = true;
	if (m->b.len)
		a.max_len = m->b.len;
	else if (m->b.inq > 1)
		a.max_len = (size_t)m->b.inq;
	/* a multishot byte limit: never map beyond it */
	if ((net_st->st & NET_MSHOT_LIM) &&
	    (!a.max_len || net_st->addr2 < a.max_len))
		a.max_len = net_st->addr2;
	ret = uu_kbuf_select_multi(req, &a, issue_flags, false);
	if (ret < 0)
		return ret;
	m->b.vec_nr = (uint16_t)a.nr_iovs;
	m->b.nr = (uint16_t)ret;
	m->b.mapped = a.out_len;
	if (a.empty)
		m->b.fl |= BNDL_EMPTY;
	if (a.partial)
		m->b.fl |= BNDL_PARTIAL;
	return 0;
}

/* receives into the mapped buffers from byte off on (a MSG_WAITALL
 * receive goes on where it stopped) */
static ssize_t recv_iov(struct uu_req *req, struct uu_netmsg *m, size_t off,
			int flags)
{
	unsigned int k = 0;
	struct iovec save;
	struct msghdr h;
	ssize_t n;

	while (k + 1 < m->b.nr && off >= m->iov[k].iov_len)
		off -= m->iov[k++].iov_len;
	save = m->iov[k];
	m->iov[k].iov_base = (char *)save.iov_base + off;
	m->iov[k].iov_len = save.iov_len - off;
	do {
		memset(&h, 0, sizeof(h));
		h.msg_iov = &m->iov[k];
		h.msg_iovlen = m->b.nr - k;
		n = recvmsg(req->fd, &h, flags);
	} while (n < 0 && errno == EINTR);
	m->iov[k] = save;
	return n < 0 ? -errno : n;
}

/*
 * A one-shot MSG_WAITALL bundle on a stream socket got part of what it
 * mapped (the kernel's io_recv: ret < min_ret, io_net_retry): the
 * buffers the part reached are committed at the first such wait
 * (io_net_kbuf_recyle), and the request waits to receive the rest into
 * the same buffers.
 */
static int waitall_wait(struct uu_req *req, struct uu_netmsg *m, ssize_t n)
{
	if (!(m->b.fl & BNDL_WAIT)) {
		m->b.wa_nbufs = (uint16_t)bundle_nbufs(m, (int)n);
		m->b.wa_clen = (uint32_t)n;
		uu_kbuf_commit_part(req, (int)n, m->b.wa_nbufs);
		m->b.fl |= BNDL_WAIT;
	}
	m->b.wa_off += (uint32_t)n;
	return uu_net_park(req, UU_ISSUE_PARK_POLLIN);
}

/* (119 lines: one receive loop, io_recv with io_recv_finish, whose exits
 * (wait, requeue, the final CQE) share its locals) */
int uu_recv_bundle_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	struct uu_netmsg *m = nmsg(req);
	bool mshot = net_st->st & NET_MULTISHOT;
	uint32_t mshot_len = mshot ? net_st->len : 0;
	int flags = (int)(net_st->msg_flags | MSG_DONTWAIT);
	int ret;

	if (uu_net_recv_start(req, issue_flags, mshot, &ret) || ret)
		return ret;
	for (;;) {
		uint32_t done = net_st->done, cflags = 0;
		bool finished, fail = false;
		ssize_t n;
		int res, this_ret;

		uint32_t part = m->b.wa_off;
		size_t min = 0;

		/* a MSG_WAITALL receive goes on in the buffers it has */
		ret = (m->b.fl & BNDL_WAIT) ? 0 :
					      recv_select(req, m, issue_flags);
		if (ret < 0) {
			n = ret;
			fail = true;
		} else {
			n = recv_iov(req, m, part, flags);
			if (n == -EAGAIN &&
			    !(net_st->msg_flags & MSG_DONTWAIT)) {
				if (m->b.fl & BNDL_WAIT)
					return uu_net_park(req,
							   UU_ISSUE_PARK_POLLIN);
				uu_kbuf_recycle(req);
				return uu_net_park(req, UU_ISSUE_PARK_POLLIN);
			}
			if (flags & MSG_WAITALL)
				min = m->b.mapped - part;
			if (n > 0 && (size_t)n < min && uu_net_retry(req))
				return waitall_wait(req, m, n);
			fail = n < 0 || (size_t)n < min;
		}
		m->b.inq = n >= 0 ? sock_inq(req) : -1;
		finished = n <= 0;
		if (n > 0) {
			res = (int)n + (int)part + (int)done;
		} else if (done || part) {
			res = (int)part + (int)done;
		} else {
			res = (int)n;
			uu_kbuf_recycle(req);
		}
		/* io_recv_finish */
		if (m->b.inq > 0)
			cflags |= IORING_CQE_F_SOCK_NONEMPTY;
		if (res > 0 && (net_st->st & NET_MSHOT_LIM)) {
			net_st->addr2 -= (uint64_t)res < net_st->addr2 ?
					     (uint64_t)res : net_st->addr2;
			if (!net_st->addr2) {
				m->b.fl |= BNDL_DONE;
				finished = true;
			}
		}
		this_ret = res - (int)done;
		if (m->b.fl & BNDL_WAIT) {
			/* what the rest reached beyond the buffers committed
			 * at the wait (the kernel leaves those in the ring:
			 * docs/compatibility.md #31) */
			unsigned int nb = bundle_nbufs(m, this_ret);

			uu_kbuf_commit_more(req, this_ret - (int)m->b.wa_clen,
					    nb > m->b.wa_nbufs ?
					    nb - m->b.wa_nbufs : 0);
			m->b.fl &= (uint8_t)~BNDL_WAIT;
		}
		m->b.wa_off = 0;
		cflags |= uu_kbuf_consume_multi(req, this_ret,
						bundle_nbufs(m, this_ret));
		/* an appended part keeps the first part's buffer id; on an
		 * incremental ring whether its last buffer has room left
		 * is the last part's (6.18: tests/test_diff_bundle inc) */
		if (m->b.fl & BNDL_RETRY)
			cflags = m->b.saved_cflags |
				 (cflags & (CQE_F_MASK | IORING_CQE_F_BUF_MORE));
		if (mshot_len && (uint32_t)res >= mshot_len)
			m->b.fl |= BNDL_CAP;
		if (!(m->b.fl & BNDL_EMPTY)) {
			/* the mapped buffers were filled and more waits:
			 * map again and append to this completion */
			if (!(m->b.fl & BNDL_NO_RETRY) && m->b.inq > 1 &&
			    this_ret > 0 && (size_t)this_ret == m->b.mapped) {
				m->b.saved_cflags = cflags & ~CQE_F_MASK;
				m->b.len = (uint32_t)m->b.inq;
				net_st->done = done + (uint32_t)this_ret;
				m->b.fl |= BNDL_RETRY;
				continue;
			}
			if (mshot && !finished &&
			    uu_req_post_cqe(req, res, cflags, issue_flags)) {
				bool cap = m->b.fl & BNDL_CAP;

				/* io_mshot_prep_retry */
				m->b.fl &= (uint8_t)~(BNDL_EMPTY | BNDL_RETRY |
						      BNDL_PARTIAL | BNDL_CAP);
				net_st->done = 0;
				m->b.len = mshot_len;
				if (m->b.inq != 0 &&
				    uu_net_mshot_again(req, cap))
					continue;
				if (m->b.inq != 0)
					return uu_net_requeue(req,
							      issue_flags);
				return uu_net_park(req, UU_ISSUE_PARK_POLLIN);
			}
		}
		req->cflags = cflags;
		return fail && res >= 0 ? uu_net_short_res(req, res) : res;
	}
}

/* ---- SEND with provided buffers ---- */

/* io_send_select_buffer */
static int send_select(struct uu_req *req, struct uu_netmsg *m,
		       unsigned int issue_flags, bool bundle)
{
	struct uu_kbuf_multi a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.iovs = m->iov;
	a.nr_iovs = bundle ? m->b.vec_nr : 1;
	a.grow = bundle;
	a.send = true;
	a.max_len = m->b.len && m->b.len < INT32_MAX ? m->b.len : INT32_MAX;
	ret = uu_kbuf_select_multi(req, &a, issue_flags, true);
	if (ret < 0)
		return ret;
	if (bundle)
		m->b.vec_nr = (uint16_t)a.nr_iovs;
	m->b.nr = (uint16_t)ret;
	m->b.mapped = a.out_len;
	m->b.selected = true;
	m->nr_iov = (unsigned int)ret;
	m->first = 0;
	m->total = a.out_len;
	if (a.empty)
		m->b.fl |= BNDL_EMPTY;
	return 0;
}

static ssize_t send_iov(struct uu_req *req, struct uu_netmsg *m, int flags)
{
	struct msghdr h;
	ssize_t n;

	do {
		memset(&h, 0, sizeof(h));
		if (m->has_addr) {
			h.msg_name = &m->addr;
			h.msg_namelen = (socklen_t)m->addrlen;
		}
		h.msg_iov = m->iov + m->first;
		h.msg_iovlen = m->nr_iov - m->first;
		n = sendmsg(req->fd, &h, flags);
	} while (n < 0 && errno == EINTR && !uu_cp_cancelled());
	return n < 0 ? -errno : n;
}

int uu_send_select_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_net_cmd *net_st = uu_cmd(req, net);
	struct uu_netmsg *m = nmsg(req);
	bool bundle = net_st->flags & IORING_RECVSEND_BUNDLE;
	int flags = (int)(net_st->msg_flags | MSG_DONTWAIT);
	int ret = uu_net_is_socket(req);

	if (ret)
		return ret;
	if ((net_st->flags & IORING_RECVSEND_POLL_FIRST) &&
	    !(net_st->st & NET_POLLED)) {
		ret = uu_net_poll_first(req, UU_ISSUE_PARK_POLLOUT);
		if (ret != 1)
			return ret; /* 1: ready now, tried at once */
	}
	for (;;) {
		uint32_t done = net_st->done, cflags;
		size_t want;
		bool fail = false;
		ssize_t n;
		int res;

		if (!m->b.selected) {
			ret = send_select(req, m, issue_flags, bundle);
			if (ret < 0)
				return ret;
		}
		want = m->total - done;
		n = send_iov(req, m, flags);
		if (n == -EAGAIN && !(net_st->msg_flags & MSG_DONTWAIT))
			return uu_net_park(req, UU_ISSUE_PARK_POLLOUT);
		if (n > 0)
			net_st->st |= NET_SENT;
		if (n < 0 || ((flags & MSG_WAITALL) && (size_t)n < want)) {
			if (n > 0 && uu_net_retry(req)) {
				/* the rest after a wait, as the kernel's
				 * retry, which goes through poll */
				net_st->done = done + (uint32_t)n;
				uu_net_iov_advance(m, (size_t)n);
				net_st->st |= NET_POLLED;
				continue;
			}
			fail = true;
		}
		if (n >= 0)
			res = (int)n + (int)done;
		else
			res = done ? (int)done : (int)n;
		cflags = uu_kbuf_consume_multi(req, res, m->b.nr);
		m->b.selected = false;
		if (bundle && res > 0 && !(m->b.fl & BNDL_EMPTY) && !(net_st->st & NET_POLLED) &&
		    uu_req_post_cqe(req, res, cflags, issue_flags)) {
			/* io_mshot_prep_retry: the next bundle */
			m->b.fl = 0;
			m->b.len = 0;
			net_st->done = 0;
			continue;
		}
		req->cflags = cflags;
		return fail && res >= 0 ? uu_net_short_res(req, res) : res;
	}
}
