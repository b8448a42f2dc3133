/* SPDX-License-Identifier: MIT */
/*
 * The ring object: creation, its memory, its fd's readiness (core/ring.c),
 * and its end (core/ring_exit.c).
 */
#ifndef UURING_CORE_RING_H
#define UURING_CORE_RING_H

#include "core/types.h"
#include "ring/mem.h"

void uu_ring_mem_install(struct uu_ring *ring, const struct uu_ring_mem *m);
int uu_ring_create(struct uu_ring **out, unsigned int entries,
		   struct io_uring_params *p);
void uu_ring_free(struct uu_ring *ring);
void uu_ring_init_private_locks(struct uu_ring *ring);
void uu_ring_signal_readiness(struct uu_ring *ring);
void uu_registry_sync_readiness(void);
void uu_ring_sync_readiness_fd(int fd);
void uu_ring_watch_edges_fd(int fd);
void uu_ring_drain_readiness(struct uu_ring *ring, int fd);

int uu_ring_close_fd(int fd);             /* close(2) of a ring fd */
void uu_ring_unpin(struct uu_ring *ring); /* a RING_FDS slot let go */
void uu_ring_sweep(void); /* rings whose fds were closed behind our back */

#endif /* UURING_CORE_RING_H */
