/* SPDX-License-Identifier: MIT */
/*
 * IOPOLL without SQPOLL (core/iopoll.c).
 */
#ifndef UURING_CORE_IOPOLL_H
#define UURING_CORE_IOPOLL_H

#include "core/types.h"

void uu_iopoll_add(struct uu_req *req);
/* an IOPOLL request's result is final; true if it was taken (on the
 * list), false if the caller must finish it */
bool uu_iopoll_complete(struct uu_req *req);
int uu_iopoll_check(struct uu_ring *ring, unsigned int min_complete,
		    unsigned int flags, const void *argp, size_t argsz);
void uu_iopoll_ring_dead(struct uu_ring *ring);

#endif /* UURING_CORE_IOPOLL_H */
