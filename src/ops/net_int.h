/* SPDX-License-Identifier: MIT */
/*
 * What the socket opcodes share: the common part and the imports
 * (ops/net.c), the sends (ops/net_send.c), the receives (ops/net_recv.c),
 * the opcodes that move no data (ops/net_sock.c) and the bundles
 * (ops/net_bundle.c): the state flags, the import block and the helpers.
 */
#ifndef UURING_OPS_NET_INT_H
#define UURING_OPS_NET_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "core/registry.h"
#include "core/task_work.h"
#include "core/types.h"

/* uu_net_cmd.st */
enum {
	NET_POLLED = 1u << 0,      /* waited for readiness once (REQ_F_POLLED) */
	NET_IN_PROGRESS = 1u << 1, /* CONNECT: EINPROGRESS seen */
	NET_SEEN_ABORT = 1u << 2,  /* CONNECT: ECONNABORTED seen */
	NET_MULTISHOT = 1u << 3,   /* ACCEPT, RECV, RECVMSG */
	NET_SENT = 1u << 4,        /* SEND*: bytes went out */
	NET_ZC_REPORT = 1u << 5,   /* IORING_SEND_ZC_REPORT_USAGE */
	NET_MSHOT_LIM = 1u << 6,   /* multishot RECV: a byte limit (addr2) */
	NET_RING_FILE = 1u << 7,   /* POLL_FIRST on a ring fd (no socket) */
};

/* uu_net_cmd.kind: what the kernel reports msg_inq / is_empty for */
enum { KIND_UNKNOWN, KIND_TCP, KIND_UNIX_STREAM, KIND_OTHER };

#define SEND_FLAGS (IORING_RECVSEND_POLL_FIRST | IORING_RECVSEND_BUNDLE | \
		    IORING_SEND_VECTORIZED)
#define RECV_FLAGS (IORING_RECVSEND_POLL_FIRST | IORING_RECV_MULTISHOT | \
		    IORING_RECVSEND_BUNDLE)
#define ACCEPT_FLAGS (IORING_ACCEPT_MULTISHOT | IORING_ACCEPT_DONTWAIT | \
		      IORING_ACCEPT_POLL_FIRST)

/*
 * What prep imported, in one heap block (hdr.mem): nothing here points
 * into the request, which the core moves with memcpy when it parks.
 */
struct uu_netmsg {
	struct sockaddr_storage addr; /* SENDMSG/SEND/CONNECT/BIND address */
	int addrlen;
	bool has_addr;
	uint64_t uname;          /* RECVMSG: the user's msg_name */
	int namelen;             /* RECVMSG: its length as imported */
	uint64_t ucontrol;       /* the user's msg_control */
	size_t controllen;
	void *control;           /* SENDMSG: the imported control data, or
				  * NULL (the user's, read by sendmsg) */
	int mnamelen;            /* multishot RECVMSG: the layout's name */
	uint64_t mcontrollen;    /* and control lengths, as the user set */
	unsigned int nr_iov, first; /* first iovec not used up (WAITALL) */
	size_t total;            /* bytes the iovecs cover */
	struct {                 /* provided buffers of a RECV bundle or a
				  * SEND (ops/net_bundle.c) */
		uint32_t len;    /* what to map (the kernel's sr->len) */
		uint32_t saved_cflags; /* the first part of an appended CQE */
		int inq;         /* msg_inq of the last receive */
		uint16_t vec_nr; /* the request's vector size */
		uint16_t nr;     /* buffers mapped now */
		size_t mapped;   /* their bytes */
		uint32_t wa_off; /* MSG_WAITALL: bytes in them before a
				  * wait (the kernel's sr->done_io part) */
		uint32_t wa_clen; /* the bytes committed at the first */
		uint16_t wa_nbufs; /* and the buffers */
		uint8_t fl;      /* BNDL_* (ops/net_bundle.c) */
		bool selected;   /* SEND: buffers held */
	} b;
	struct iovec iov[];      /* then the control data */
};

static inline struct uu_netmsg *nmsg(struct uu_req *req)
{
	return uu_cmd(req, net)->hdr.mem;
}

/*
 * On the readiness engine's thread, retrying a request after a wakeup (a
 * multishot receive's shots, an accept on a blocking listener).
 */
static inline bool in_poller(unsigned int issue_flags)
{
	return issue_flags & UU_ISSUE_F_POLLER;
}

struct uu_netmsg *uu_net_alloc_msg(struct uu_req *req, size_t nr_iov,
				   size_t extra);
int uu_net_sock_kind(struct uu_req *req);
/* Is the request's file a socket?  -ENOTSOCK / -EBADF otherwise. */
int uu_net_is_socket(struct uu_req *req);
/* waits for readiness; the first wait marks the request polled */
int uu_net_park(struct uu_req *req, int how);
/* skips n bytes of the iovecs (a partial transfer before a retry) */
void uu_net_iov_advance(struct uu_netmsg *m, size_t n);
/* io_net_retry: a partial MSG_WAITALL transfer continues (stream and
 * seqpacket sockets) */
bool uu_net_retry(struct uu_req *req);
/*
 * The start of a receive into provided buffers (recv_select_issue, the
 * bundles): a DEFER_TASKRUN ring's multishot shots are the submitter's to
 * post, when it waits, like the rest of the ring's completions, so on the
 * readiness engine the request goes back to task_work: true, and *ret is
 * the issue's result.  Otherwise false, and *ret is uu_net_is_socket's.
 */
static inline bool uu_net_recv_start(struct uu_req *req,
				     unsigned int issue_flags, bool mshot,
				     int *ret)
{
	if (mshot && in_poller(issue_flags) &&
	    (req->ring->setup_flags & IORING_SETUP_DEFER_TASKRUN)) {
		*ret = uu_tw_reissue(req);
		return true;
	}
	*ret = uu_net_is_socket(req);
	return false;
}
/* IORING_RECVSEND_POLL_FIRST's first issue */
int uu_net_poll_first(struct uu_req *req, int how); /* 1: ready, go on */
/* a positive result that still fails the chain */
int uu_net_short_res(struct uu_req *req, int res);
/* the kernel's access_ok(): -EFAULT for a range past the user half */
int uu_net_range_ok(uint64_t addr, uint64_t len);
/* move_addr_to_kernel() */
int uu_net_import_addr(uint64_t uaddr, int len,
		       struct sockaddr_storage *dst);
/* import_iovec() of nr iovecs at uiov (raw: into a registered buffer) */
int uu_net_import_iov(struct uu_netmsg *m, uint64_t uiov, size_t nr,
		      bool raw);
/* SENDMSG/RECVMSG prep: the user's msghdr at the request's addr */
int uu_net_import_msghdr(struct uu_req *req, bool is_send);
/* -ENOTSOCK for a ring fd, before anything reads or writes it */
int uu_net_ring_fd_check(struct uu_req *req);
/* the end of a send or receive try: the kernel's "ret < min_ret" */
int uu_net_sr_finish(struct uu_req *req, ssize_t n, size_t min, int how,
		     bool trunc, bool *again);

/* ops/net_bundle.c */
int uu_net_bundle_prep(struct uu_req *req);
int uu_recv_bundle_issue(struct uu_req *req, unsigned int issue_flags);
int uu_send_select_issue(struct uu_req *req, unsigned int issue_flags);
/* a multishot receive that posted a shot with data still queued: true
 * to receive again now, false at the retry cap (cap: the bundle's) */
bool uu_net_mshot_again(struct uu_req *req, bool cap);
/* ... then it waits behind the requests ready now */
int uu_net_requeue(struct uu_req *req, unsigned int issue_flags);

#endif /* UURING_OPS_NET_INT_H */
