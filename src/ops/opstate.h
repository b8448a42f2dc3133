/* SPDX-License-Identifier: MIT */
/*
 * Per-request state of the file-family opcodes (ops/fsops.c and friends):
 * a union member of struct uu_req (req->os), filled by prep, consumed by
 * issue.  Kept apart from core/internal.h so that opcode families can grow
 * without touching the core's request layout.
 */
#ifndef UURING_OPSTATE_H
#define UURING_OPSTATE_H

#include <stdint.h>

union uu_op_state {
	/* placeholder so the union is never empty */
	uint64_t raw[8];
};

#endif
