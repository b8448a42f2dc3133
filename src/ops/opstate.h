/* SPDX-License-Identifier: MIT */
/*
 * Per-request state of the file-family opcodes (ops/fsops.c and friends):
 * a union member of struct uu_req (req->os), filled by prep, consumed by
 * issue.  Kept apart from core/types.h so that opcode families can grow
 * without touching the core's request layout.
 *
 * Every state starts with struct uu_os_hdr.  Whatever an SQE points to
 * (paths, xattr names and values, futex vectors) is copied at prep into
 * heap blocks, hdr.mem and hdr.mem2, released by the opcode's cleanup
 * (uu_os_release).  hdr.tag records which SQE the state belongs to: the
 * core may run cleanup on a request whose prep never ran (an SQE refused
 * before prep), whose union still holds an older request's state (see
 * uu_os_release in ops/fsops.c).  hdr.issued says the opcode produced the
 * result itself (uu_os_done), for the opcodes whose errors do not break a
 * link chain in the kernel (uu_os_release_nofail).
 */
#ifndef UURING_OPSTATE_H
#define UURING_OPSTATE_H

#include <stdbool.h>
#include <stdint.h>

#define UU_XATTR_NAME_LEN 256 /* XATTR_NAME_MAX + 1 */

struct uu_cmd_file_type;
struct uu_req;

struct uu_os_hdr {
	void *mem, *mem2;
	uint64_t tag;            /* uu_os_tag() of the SQE prep ran for */
	bool issued;
};

/* the header every file-family state starts with, in the request's
 * per-op area (uu_req_cmd in core/types.h) */
#define uu_os_hdr(req) uu_req_cmd(req, struct uu_os_hdr)

union uu_op_state {
	struct uu_os_hdr hdr;












	/* ---- network and epoll opcodes (ops/net.c, ops/epoll.c) ---- */



	/* URING_CMD (ops/uring_cmd.c): no heap blocks, no hdr.  The
	 * cancel fields are guarded by the ring's park_lock. */
	struct {
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
	} cmd;

	uint64_t raw[10];
};

#endif
