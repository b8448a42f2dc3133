/* SPDX-License-Identifier: MIT */
/*
 * io_uring_register (core/register.c): the opcode switch, restrictions,
 * and the per-thread registered ring fds (RING_FDS).
 */
#ifndef UURING_CORE_REGISTER_H
#define UURING_CORE_REGISTER_H

#include "core/types.h"

bool uu_restriction_allows(const struct uu_ring *r, unsigned int opcode,
			   unsigned int sqe_flags);

/* Per-thread registered ring fds (RING_FDS). */
struct uu_ring *uu_regring_get(unsigned int idx, int *err);
int uu_register_ring_fds(struct uu_ring *ring, void *arg, unsigned int nr);
int uu_unregister_ring_fds(void *arg, unsigned int nr);
int uu_regring_add_owned(struct uu_ring *ring);

int uu_do_register(struct uu_ring *ring, unsigned int opcode, void *arg,
		   unsigned int nr_args);

#endif /* UURING_CORE_REGISTER_H */
