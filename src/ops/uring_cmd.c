// SPDX-License-Identifier: MIT
/*
 * IORING_OP_URING_CMD: dispatch by file type (ops/uring_cmd.h says what a
 * file type sees and does), the kernel's io_uring_cmd_prep, io_uring_cmd,
 * io_uring_cmd_done, io_uring_cmd_mark_cancelable and
 * io_uring_try_cancel_uring_cmd, and the built-in socket type (the
 * kernel's io_uring_cmd_sock).
 *
 * A command a handler keeps is parked like any request that waits
 * (UU_PARKED_CMD: on the ring's parked list, holding a ring reference and
 * its own file reference, counted in inflight), so the core's drain,
 * teardown and CQE posting treat it as they treat the others; it ends
 * through uu_exec_finish_late, which posts the CQE in the finishing
 * thread's context, or hands it to the ring's task_work or SQ thread
 * where the kernel's io_req_task_work_add would run it.
 */
#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "core/registry.h"
#include "core/req.h"
#include "core/rsrc.h"
#include "core/tctx.h"
#include "core/types.h"
#include "ops/opstate.h"
#include "ops/uring_cmd.h"

/* include/uapi/linux/io_uring.h's socket sub-commands (sqe->cmd_op) */
enum {
	SOCKET_OP_SIOCINQ = 0,
	SOCKET_OP_SIOCOUTQ = 1,
	SOCKET_OP_GETSOCKOPT = 2,
	SOCKET_OP_SETSOCKOPT = 3,
	SOCKET_OP_TX_TIMESTAMP = 4,
};

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

/* the command bytes run on from the SQE into its second half */
_Static_assert(offsetof(struct uu_req, sqe_ext) ==
		       offsetof(struct uu_req, sqe) + sizeof(struct io_uring_sqe),
	       "sqe_ext follows the SQE copy");

/* ---- the registered file types ---- */

/*
 * Written under types_lock; read without it: a slot is stored before the
 * release store of nr_types that publishes it, and readers load nr_types
 * with acquire, so every slot below the count they see is complete.
 */
static pthread_mutex_t types_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct uu_cmd_file_type *types[UU_CMD_MAX_TYPES];
static atomic_uint nr_types;

int uu_cmd_register_file_type(const struct uu_cmd_file_type *type)
{
	unsigned int i, n;
	int ret = 0;

	if (!type || !type->match || !type->issue)
		return -EINVAL;
	pthread_mutex_lock(&types_lock);
	n = atomic_load_explicit(&nr_types, memory_order_relaxed);
	for (i = 0; i < n; i++)
		if (types[i] == type)
			ret = -EEXIST;
	if (!ret && n == UU_CMD_MAX_TYPES)
		ret = -ENOSPC;
	if (!ret) {
		types[n] = type;
		/* pairs with the acquire in find_type */
		atomic_store_explicit(&nr_types, n + 1, memory_order_release);
	}
	pthread_mutex_unlock(&types_lock);
	return ret;
}

static const struct uu_cmd_file_type sock_type, null_type;

/* the file's ->uring_cmd, or NULL: the kernel's -EOPNOTSUPP */
static const struct uu_cmd_file_type *find_type(int fd, const struct stat *st)
{
	/* acquire: pairs with the release in uu_cmd_register_file_type */
	unsigned int i, n = atomic_load_explicit(&nr_types,
						 memory_order_acquire);

	for (i = 0; i < n; i++)
		if (types[i]->match(fd, st))
			return types[i];
	if (sock_type.match(fd, st))
		return &sock_type;
	if (null_type.match(fd, st))
		return &null_type;
	return NULL;
}

/* ---- what a handler reads ---- */

uint32_t uu_cmd_op(const struct uu_req *req)
{
	return uu_cmd(req, ucmd)->cmd_op;
}

uint32_t uu_cmd_flags(const struct uu_req *req)
{
	return uu_cmd(req, ucmd)->flags;
}

uint16_t uu_cmd_buf_index(const struct uu_req *req)
{
	return uu_cmd(req, ucmd)->buf_index;
}

const void *uu_cmd_payload(const struct uu_req *req, size_t *len)
{
	*len = req->ring->sqe_shift == 7 ? 80 : 16;
	return req->sqe.cmd;
}

const struct io_uring_sqe *uu_cmd_sqe(const struct uu_req *req)
{
	return &req->sqe;
}

int uu_cmd_fd(const struct uu_req *req)
{
	return req->fd;
}

uint64_t uu_cmd_user_data(const struct uu_req *req)
{
	return req->user_data;
}

pid_t uu_cmd_task(const struct uu_req *req)
{
	return req->submit_tid;
}

void *uu_cmd_pdu(struct uu_req *req)
{
	return uu_cmd(req, ucmd)->pdu;
}

/* ---- prep and issue ---- */

static void task_note(void);

/* io_uring_cmd_prep: the SQE's own checks, in the kernel's order */
int uu_uring_cmd_prep(struct uu_req *req)
{
	struct uu_ucmd_cmd *ucmd_st = uu_cmd(req, ucmd);
	const struct io_uring_sqe *sqe = &req->sqe;
	uint32_t flags = sqe->uring_cmd_flags;
	bool multishot = flags & IORING_URING_CMD_MULTISHOT;

	memset(uu_cmd(req, ucmd), 0, sizeof(struct uu_ucmd_cmd));
	task_note(); /* the submitting task: its exit cancels */
	if (sqe->__pad1)
		return -EINVAL;
	if (flags & ~IORING_URING_CMD_MASK)
		return -EINVAL;
	if (flags & IORING_URING_CMD_FIXED) {
		if (multishot)
			return -EINVAL;
		/* a driver imports the buffer when it uses it */
		ucmd_st->buf_index = sqe->buf_index;
	}
	if (multishot != !!(req->flags & UU_REQ_BUFFER_SELECT))
		return -EINVAL;
	ucmd_st->flags = (uint16_t)flags;
	ucmd_st->cmd_op = sqe->cmd_op;
	return 0;
}

/* what io_uring_cmd adds to a handler's issue_flags */
static unsigned int ring_cmd_flags(const struct uu_ring *r)
{
	unsigned int f = 0;

	if (r->sqe_shift == 7)
		f |= UU_CMD_F_SQE128;
	if (r->setup_flags & (IORING_SETUP_CQE32 | IORING_SETUP_CQE_MIXED))
		f |= UU_CMD_F_CQE32;
	return f;
}

int uu_uring_cmd_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_ucmd_cmd *ucmd_st = uu_cmd(req, ucmd);
	const struct uu_cmd_file_type *type;
	unsigned int flags;
	struct stat st;
	int ret;

	if (fstat(req->fd, &st))
		return -EBADF;
	type = find_type(req->fd, &st);
	if (!type)
		return -EOPNOTSUPP;
	/* no type here has the kernel's ->uring_cmd_iopoll */
	if (req->ring->setup_flags & IORING_SETUP_IOPOLL)
		return -EOPNOTSUPP;
	flags = ring_cmd_flags(req->ring);
	ucmd_st->type = type;
	ucmd_st->issue_flags = (uint16_t)flags;
	ret = type->issue(req, flags | (issue_flags & UU_ISSUE_F_WORKER));
	if (ret == UU_CMD_PARK)
		return uu_park(req, UU_ISSUE_PARK_CMD);
	if ((ucmd_st->flags & IORING_URING_CMD_MULTISHOT) && ret >= 0) {
		/*
		 * The kernel's IOU_ISSUE_SKIP_COMPLETE: a multishot command's
		 * handler posts its own CQEs and ends it.  No type here does,
		 * so, as on the kernel for a socket, it never completes: it
		 * stays parked, holding its ring, never cancelled.
		 */
		ucmd_st->orphan = true;
		return uu_park(req, UU_ISSUE_PARK_CMD);
	}
	/* the kernel queues a command that would block to io-wq: the
	 * opcode has no poll hooks to arm instead */
	if (ret == -EAGAIN && !(issue_flags & UU_ISSUE_F_WORKER))
		return uu_park(req, UU_ISSUE_PUNT);
	if (ret == UU_CMD_QUEUED) {
		/* only a stable (parked) request may be kept: a handler
		 * that queues here broke the contract of uring_cmd.h */
		return -EFAULT;
	}
	return ret;
}

/*
 * park() put the request on the ring's parked list (UU_PARKED_CMD) at
 * its final address: the handler's stable call.
 */
void uu_uring_cmd_park(struct uu_req *req)
{
	struct uu_ucmd_cmd *ucmd_st = uu_cmd(req, ucmd);
	const struct uu_cmd_file_type *type = ucmd_st->type;
	int ret;

	if (ucmd_st->orphan)
		return;
	ret = type->issue(req, ucmd_st->issue_flags | UU_CMD_F_STABLE);
	if (ret == UU_CMD_QUEUED)
		return; /* the handler ends it: uu_uring_cmd_done */
	if (ret == UU_CMD_PARK)
		ret = -EFAULT; /* parked already: a broken handler */
	req->res = ret;
	uu_exec_finish_late(req);
}

/* ---- ending a queued command ---- */

void uu_uring_cmd_mark_cancelable(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_ring *r = req->ring;

	(void)issue_flags;
	pthread_mutex_lock(&r->park_lock);
	uu_cmd(req, ucmd)->cancelable = true;
	pthread_mutex_unlock(&r->park_lock);
}

static void cmd_finish(struct uu_req *req, int32_t res, uint64_t res2)
{
	req->res = res;
	if (req->ring->setup_flags & IORING_SETUP_CQE32) {
		req->big[0] = res2;
		req->big[1] = 0;
	}
	/* the fail of a negative result is finish_parked's (req_set_fail) */
	uu_exec_finish_late(req);
}

void uu_uring_cmd_done(struct uu_req *req, int32_t res, uint64_t res2,
		       unsigned int issue_flags)
{
	struct uu_ucmd_cmd *ucmd_st = uu_cmd(req, ucmd);
	struct uu_ring *r = req->ring;
	bool held;

	(void)issue_flags;
	/* io_uring_cmd_del_cancelable, and the guarantee the kernel's
	 * uring_lock gives its cancel call: no done while it runs */
	pthread_mutex_lock(&r->park_lock);
	ucmd_st->cancelable = false;
	held = ucmd_st->in_cancel;
	if (held) {
		ucmd_st->done_held = true;
		ucmd_st->done_res = res;
		ucmd_st->done_res2 = res2;
	}
	pthread_mutex_unlock(&r->park_lock);
	if (!held)
		cmd_finish(req, res, res2);
}

/*
 * io_uring_try_cancel_uring_cmd: every command still marked cancelable
 * (of task tid only, unless tid is 0) gets its handler's cancel call.
 * The calls run without park_lock (a handler may end the command inside
 * its call, which takes it); in_cancel keeps each request alive
 * meanwhile.
 */
static void cancel_pass(struct uu_ring *r, pid_t tid)
{
	struct uu_req *req, *list = NULL;

	pthread_mutex_lock(&r->park_lock);
	for (req = r->parked; req; req = req->park_next) {
		if (req->parked_on != UU_PARKED_CMD ||
		    !uu_cmd(req, ucmd)->cancelable ||
		    uu_cmd(req, ucmd)->in_cancel ||
		    (tid && req->submit_tid != tid))
			continue;
		uu_cmd(req, ucmd)->cancelable = false;
		uu_cmd(req, ucmd)->in_cancel = true;
		uu_cmd(req, ucmd)->cancel_next = list;
		list = req;
	}
	pthread_mutex_unlock(&r->park_lock);
	while (list) {
		const struct uu_cmd_file_type *type;
		bool held;

		req = list;
		list = uu_cmd(req, ucmd)->cancel_next;
		type = uu_cmd(req, ucmd)->type;
		type->issue(req, uu_cmd(req, ucmd)->issue_flags |
					 UU_CMD_F_STABLE | UU_CMD_F_CANCEL);
		pthread_mutex_lock(&r->park_lock);
		uu_cmd(req, ucmd)->in_cancel = false;
		held = uu_cmd(req, ucmd)->done_held;
		pthread_mutex_unlock(&r->park_lock);
		if (held)
			cmd_finish(req, uu_cmd(req, ucmd)->done_res,
				   uu_cmd(req, ucmd)->done_res2);
	}
}

/* the ring's exit (io_ring_exit_work): all of them */
void uu_uring_cmd_cancel_ring(struct uu_ring *r)
{
	cancel_pass(r, 0);
}

/*
 * A task's exit (the kernel's io_uring_cancel_generic from do_exit): the
 * cancelable commands it submitted, on every ring of the process.  A
 * thread that preps a URING_CMD notes this as its exit work (core/tctx.c);
 * the commands an SQ thread submitted are its own, as the kernel's
 * requests on an SQPOLL ring belong to the SQ task.
 */
static void cancel_exiting_task(struct uu_ring *r, void *tid)
{
	cancel_pass(r, *(pid_t *)tid);
}

void uu_uring_cmd_task_exit(void)
{
	pid_t tid = uu_gettid();

	uu_registry_for_each_arg(cancel_exiting_task, &tid);
}

static void task_note(void)
{
	if (likely(uu_tctx.exit_work & UU_TCTX_EXIT_CMD))
		return;
	uu_tctx_note_exit(UU_TCTX_EXIT_CMD);
}

/* ---- sockets: the kernel's io_uring_cmd_sock ---- */

/*
 * Whether the socket's protocol has an ioctl method (sk->sk_prot->ioctl),
 * which io_uring_cmd_sock requires of SIOCINQ and SIOCOUTQ: TCP, UDP,
 * UDP-Lite, SCTP, MPTCP and raw sockets of IPv4 and IPv6 have one; AF_UNIX,
 * netlink, packet and ping sockets, among others, do not.
 */
static bool sock_proto_has_ioctl(int fd)
{
	int domain = -1, type = -1, proto = -1;
	socklen_t len = sizeof(int);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len))
		return false;
	if (domain != AF_INET && domain != AF_INET6)
		return false;
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len))
		return false;
	if (type == SOCK_RAW)
		return true;
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len))
		return false;
	switch (proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
	case IPPROTO_SCTP:
	case IPPROTO_MPTCP:
		return true;
	default:
		return false;
	}
}

/* prot->ioctl(sk, cmd, &arg): what ioctl(2) reaches for these protocols */
static int sock_queue_ioctl(int fd, unsigned long cmd)
{
	int arg = 0;

	if (ioctl(fd, cmd, &arg) < 0)
		return -errno;
	return arg;
}

/* io_uring_cmd_getsockopt: SOL_SOCKET only; the result is the length */
static int sock_getsockopt(int fd, const struct io_uring_sqe *sqe)
{
	socklen_t optlen = sqe->optlen;

	if (sqe->level != SOL_SOCKET)
		return -EOPNOTSUPP;
	if (getsockopt(fd, (int)sqe->level, (int)sqe->optname,
		       (void *)(uintptr_t)sqe->optval, &optlen))
		return -errno;
	return (int)optlen;
}

/* io_uring_cmd_setsockopt: do_sock_setsockopt, any level */
static int sock_setsockopt(int fd, const struct io_uring_sqe *sqe)
{
	if (setsockopt(fd, (int)sqe->level, (int)sqe->optname,
		       (const void *)(uintptr_t)sqe->optval,
		       (socklen_t)sqe->optlen))
		return -errno;
	return 0;
}

static int sock_issue(struct uu_req *req, unsigned int issue_flags)
{
	const struct io_uring_sqe *sqe = uu_cmd_sqe(req);
	int fd = uu_cmd_fd(req);

	switch (uu_cmd_op(req)) {
	case SOCKET_OP_SIOCINQ:
		if (!sock_proto_has_ioctl(fd))
			return -EOPNOTSUPP;
		return sock_queue_ioctl(fd, SIOCINQ);
	case SOCKET_OP_SIOCOUTQ:
		if (!sock_proto_has_ioctl(fd))
			return -EOPNOTSUPP;
		return sock_queue_ioctl(fd, SIOCOUTQ);
	case SOCKET_OP_GETSOCKOPT:
		return sock_getsockopt(fd, sqe);
	case SOCKET_OP_SETSOCKOPT:
		return sock_setsockopt(fd, sqe);
	case SOCKET_OP_TX_TIMESTAMP:
		/*
		 * The kernel needs a CQE32 ring, then arms a multishot poll
		 * on the error queue and posts one big CQE per timestamp:
		 * not built (docs/compatibility.md), refused as an unknown
		 * sub-command would be.
		 */
		if (!(issue_flags & UU_CMD_F_CQE32))
			return -EINVAL;
		return -EOPNOTSUPP;
	default:
		return -EOPNOTSUPP;
	}
}

/* a uuring ring fd is a socket too (core/ring.c), but an io_uring
 * instance has no ->uring_cmd */
static bool sock_match(int fd, const struct stat *st)
{
	return S_ISSOCK(st->st_mode) && !uu_is_ring_fd(fd, st);
}

static const struct uu_cmd_file_type sock_type = {
	.name = "socket",
	.match = sock_match,
	.issue = sock_issue,
};

/* ---- /dev/null: the kernel's uring_cmd_null, 0 for every command ---- */

static bool null_match(int fd, const struct stat *st)
{
	(void)fd;
	return S_ISCHR(st->st_mode) && major(st->st_rdev) == 1 &&
	       minor(st->st_rdev) == 3;
}

static int null_issue(struct uu_req *req, unsigned int issue_flags)
{
	(void)req;
	(void)issue_flags;
	return 0;
}

static const struct uu_cmd_file_type null_type = {
	.name = "null",
	.match = null_match,
	.issue = null_issue,
};
