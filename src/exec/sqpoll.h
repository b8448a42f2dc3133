/* SPDX-License-Identifier: MIT */
/*
 * The SQ thread (exec/sqpoll.c).
 */
#ifndef UURING_EXEC_SQPOLL_H
#define UURING_EXEC_SQPOLL_H

#include "core/types.h"

int uu_sqpoll_setup(struct uu_ring *ring, struct io_uring_params *p);
void uu_sqpoll_detach(struct uu_ring *ring);
void uu_sqd_wake(struct uu_sqd *sqd);
bool uu_sqpoll_dead(struct uu_ring *ring);
void uu_sqpoll_wait_sq(struct uu_ring *ring);

#endif /* UURING_EXEC_SQPOLL_H */
