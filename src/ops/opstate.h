/* SPDX-License-Identifier: MIT */
/*
 * The header of the file-family opcodes' per-request state (ops/fsops.c
 * and friends): each family's struct in its own header (ops/fs.h,
 * ops/openclose.h, ops/xattr.h, ...) starts with struct uu_os_hdr and
 * lives in the request's per-op area (uu_req_cmd in core/types.h), filled
 * by prep, consumed by issue.
 *
 * Whatever an SQE points to (paths, xattr names and values, futex
 * vectors, a network opcode's msghdr) is copied at prep into heap blocks,
 * hdr.mem and hdr.mem2, released by the opcode's cleanup
 * (uu_os_release).  hdr.tag records which SQE the state belongs to: the
 * core may run cleanup on a request whose prep never ran (an SQE refused
 * before prep), whose area still holds an older request's state (see
 * uu_os_release in ops/fsops.c).  hdr.issued says the opcode produced the
 * result itself (uu_os_done), for the opcodes whose errors do not break a
 * link chain in the kernel (uu_os_release_nofail).
 */
#ifndef UURING_OPSTATE_H
#define UURING_OPSTATE_H

#include <stdbool.h>
#include <stdint.h>

#define UU_XATTR_NAME_LEN 256 /* XATTR_NAME_MAX + 1 */

struct uu_os_hdr {
	void *mem, *mem2;
	uint64_t tag;            /* uu_os_tag() of the SQE prep ran for */
	bool issued;
};

/* the header every file-family state starts with, in the request's
 * per-op area (uu_req_cmd in core/types.h) */
#define uu_os_hdr(req) uu_req_cmd(req, struct uu_os_hdr)

#endif
