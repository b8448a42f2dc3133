/* SPDX-License-Identifier: MIT */
/*
 * io_uring_setup's sizes (core/setup.c) and REGISTER_RESIZE_RINGS
 * (core/resize.c).
 */
#ifndef UURING_CORE_SETUP_H
#define UURING_CORE_SETUP_H

#include "core/types.h"
#include "ring/mem.h"

/* io_uring_fill_params's sizes: 0 or -EINVAL (core/setup.c) */
int uu_setup_fill_sizes(unsigned int *entries, struct io_uring_params *p);
/* REGISTER_RESIZE_RINGS (core/resize.c) */
int uu_register_resize_rings(struct uu_ring *ring, void *arg,
			     unsigned int nr_args);
void uu_resize_free_retired(struct uu_ring *ring);

#endif /* UURING_CORE_SETUP_H */
