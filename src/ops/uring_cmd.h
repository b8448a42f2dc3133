/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_URING_CMD (and URING_CMD128): a file's own commands, the
 * kernel's file->f_op->uring_cmd.  A file type plugs in by registering a
 * struct uu_cmd_file_type; the core never learns its name.  Sockets are
 * built in (the kernel's io_uring_cmd_sock, ops/uring_cmd.c).
 *
 * What a handler sees of a request: the SQE copied once at submission
 * (docs/traps.md T2: a later rewrite of the SQE by the application does
 * not matter), its command op and 16 (SQE) or 80 (SQE128) command bytes,
 * and the file, plain or resolved from the fixed table.
 *
 * The life of a command, as the kernel's io_uring_cmd() drives it:
 *
 *   ->issue(req, flags) is called where the request is issued (the
 *   submitting thread, the SQ thread, or an io-wq worker when
 *   UU_ISSUE_F_WORKER is set).  It returns
 *     - a CQE result: the command is done (res2 is 0);
 *     - -EAGAIN without UU_ISSUE_F_WORKER: call me again in an io-wq
 *       worker, where I may block (the kernel's answer to a non-blocking
 *       issue that would block);
 *     - UU_CMD_PARK: I want to keep the request.  The engine parks it
 *       (from then on it stays at one address) and calls ->issue again,
 *       with UU_CMD_F_STABLE added;
 *     - UU_CMD_QUEUED, only from a call with UU_CMD_F_STABLE: the handler
 *       owns the request and ends it later, from any thread, with
 *       uu_uring_cmd_done() (the kernel's -EIOCBQUEUED).  Before that it
 *       may mark it cancelable.
 *
 *   A queued command marked cancelable (uu_uring_cmd_mark_cancelable) is
 *   cancelled where the kernel's io_uring_try_cancel_uring_cmd does it:
 *   at the ring's exit (its last fd closed) and at the exit of the thread
 *   that submitted it, by calling ->issue once more with
 *   UU_CMD_F_CANCEL.  That call never overlaps uu_uring_cmd_done of
 *   the same request: a done from another thread meanwhile is held back
 *   and takes effect when the cancel call returns.  The handler then ends
 *   the command itself (typically uu_uring_cmd_done(req, -ECANCELED, 0,
 *   flags)), in that call or later.  As in the kernel, ASYNC_CANCEL,
 *   REGISTER_SYNC_CANCEL and a firing LINK_TIMEOUT do not reach a queued
 *   command (io_try_cancel has no uring_cmd case): they answer -ENOENT.
 *
 * A file no registered type matches, and that is neither a socket (other
 * than a ring fd) nor /dev/null (the built-in types), gets the kernel's
 * -EOPNOTSUPP.  On an IOPOLL ring every command is -EOPNOTSUPP (no type
 * here has the kernel's ->uring_cmd_iopoll).
 */
#ifndef UURING_OPS_URING_CMD_H
#define UURING_OPS_URING_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "abi/io_uring_abi.h"

struct stat;
struct uu_ring;
struct uu_req;

/*
 * issue_flags bits of a handler's call, besides the core's
 * UU_ISSUE_F_WORKER (1u: an io-wq worker, blocking allowed).
 */
#define UU_CMD_F_SQE128 (1u << 8)  /* 80 command bytes (else 16) */
#define UU_CMD_F_CQE32 (1u << 9)   /* res2 reaches the CQE's big[0] */
#define UU_CMD_F_STABLE (1u << 10) /* parked: the request keeps its
				    * address until uu_uring_cmd_done */
#define UU_CMD_F_CANCEL (1u << 11) /* the ring exits: cancel this
				    * cancelable command (IO_URING_F_CANCEL) */

/* ->issue results that are not a CQE result (see above) */
#define UU_CMD_QUEUED (-529)          /* the kernel's -EIOCBQUEUED */
#define UU_CMD_PARK (-0x40000000 - 1) /* park me, call again STABLE */

/* bytes of handler-private space per request (uu_cmd_pdu) */
#define UU_CMD_PDU_SIZE 32

struct uu_cmd_file_type {
	const char *name; /* for messages */
	/*
	 * Whether fd is a file of this type; st is its fstat.  Called at
	 * every issue of a URING_CMD (before the built-in socket type, so
	 * that a type may claim sockets of its own); must not block.
	 */
	bool (*match)(int fd, const struct stat *st);
	/* the kernel's ->uring_cmd; see the life of a command above */
	int (*issue)(struct uu_req *req, unsigned int issue_flags);
};

/*
 * Registers a file type for the life of the process (types cannot be
 * removed: a parked command may point at one).  0, -EEXIST if it is
 * registered already, -ENOSPC beyond UU_CMD_MAX_TYPES, -EINVAL if match
 * or issue is missing.  Thread-safe.
 */
#define UU_CMD_MAX_TYPES 16
int uu_cmd_register_file_type(const struct uu_cmd_file_type *type);

/* ---- what a handler reads of its request ---- */
uint32_t uu_cmd_op(const struct uu_req *req);       /* sqe->cmd_op */
uint32_t uu_cmd_flags(const struct uu_req *req);    /* IORING_URING_CMD_* */
uint16_t uu_cmd_buf_index(const struct uu_req *req); /* with CMD_FIXED */
/* the command bytes (sqe->cmd): *len is 16, or 80 on an SQE128 ring */
const void *uu_cmd_payload(const struct uu_req *req, size_t *len);
/* the whole SQE as copied at submission (with SQE128 the second 64 bytes
 * follow it) */
const struct io_uring_sqe *uu_cmd_sqe(const struct uu_req *req);
/* the file: valid until the command is done, whatever the application
 * closes meanwhile (a parked request holds its own reference, T4) */
int uu_cmd_fd(const struct uu_req *req);
uint64_t uu_cmd_user_data(const struct uu_req *req);
/* the submitting thread (the kernel's io_uring_cmd_get_task) */
pid_t uu_cmd_task(const struct uu_req *req);
/* UU_CMD_PDU_SIZE bytes for the handler, zeroed at prep (io_uring_cmd's
 * pdu) */
void *uu_cmd_pdu(struct uu_req *req);

/* ---- what a handler does with a queued command ---- */
/*
 * io_uring_cmd_mark_cancelable: only for a command the handler queued
 * (from its UU_CMD_F_STABLE call on), until it is done.
 */
void uu_uring_cmd_mark_cancelable(struct uu_req *req, unsigned int issue_flags);
/*
 * io_uring_cmd_done: ends a queued command with CQE result res; on a
 * CQE32 ring res2 goes to the CQE's big[0].  Any thread, any time after
 * ->issue returned UU_CMD_QUEUED (or inside that call); once only.  The
 * CQE is posted as for any request finishing off the submitting thread
 * (task_work on DEFER_TASKRUN rings, the SQ thread's on SQPOLL rings).
 */
void uu_uring_cmd_done(struct uu_req *req, int32_t res, uint64_t res2,
		       unsigned int issue_flags);

/* ---- core hooks (core/opdef.c, core/req.c, core/cancel.c) ---- */
int uu_uring_cmd_prep(struct uu_req *req);
int uu_uring_cmd_issue(struct uu_req *req, unsigned int issue_flags);
/* park() of a request whose issue returned UU_ISSUE_PARK_CMD */
void uu_uring_cmd_park(struct uu_req *req);
/* the ring exits: the cancel call of every cancelable command */
void uu_uring_cmd_cancel_ring(struct uu_ring *ring);

/* per-op state, in the request's area (uu_req_cmd in core/types.h) */
/* URING_CMD (ops/uring_cmd.c): no heap blocks, no hdr.  The
 * cancel fields are guarded by the ring's park_lock. */
struct uu_ucmd_cmd {
	const struct uu_cmd_file_type *type; /* set at issue */
	struct uu_req *cancel_next; /* ring exit's cancel pass */
	uint64_t done_res2;         /* a done held back by a cancel */
	uint64_t pdu[4];            /* the handler's (uu_cmd_pdu) */
	uint32_t cmd_op;
	int32_t done_res;
	uint16_t flags;             /* sqe->uring_cmd_flags */
	uint16_t buf_index;
	uint16_t issue_flags;       /* UU_CMD_F_* of the ring */
	bool cancelable;            /* marked, not done */
	bool in_cancel;             /* the handler's cancel call runs */
	bool done_held;             /* done during that call */
	bool orphan;                /* multishot, never to end */
};

#endif /* UURING_OPS_URING_CMD_H */
