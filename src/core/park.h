/* SPDX-License-Identifier: MIT */
/*
 * Parking a request whose issue would block (core/park.c), for the
 * request lifecycle (core/req.c).
 */
#ifndef UURING_CORE_PARK_H
#define UURING_CORE_PARK_H

#include <stdbool.h>

#include "core/req.h"
#include "core/types.h"

/* true: parked; false: *res is the CQE result (it could not be) */
bool uu_exec_park(struct uu_exec *s, struct uu_req **reqp, bool *heap,
		  int how, int *res);
/* the context's O_DIRECT requests to Linux AIO, in batches */
void uu_exec_aio_flush(struct uu_exec *s);
static inline void uu_exec_aio_flush_pending(struct uu_exec *s)
{
	if (s->aio_head)
		uu_exec_aio_flush(s);
}
/* T4: the request's own dup of its file, off the submitting thread */
int uu_req_take_file_ref(struct uu_req *req);

#endif /* UURING_CORE_PARK_H */
