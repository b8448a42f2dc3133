/* SPDX-License-Identifier: MIT */
/*
 * fd number -> ring (core/registry.c), the engine's thread start, and
 * the fork generation a ring belongs to.
 */
#ifndef UURING_CORE_REGISTRY_H
#define UURING_CORE_REGISTRY_H

#include "core/types.h"

/* an engine thread, started detached with signals blocked; returns once
 * the thread called uu_thread_ready (core/registry.c says why) */
int uu_thread_start(void *(*fn)(void *), void *arg);
void uu_thread_ready(void);

int uu_registry_add(struct uu_ring *ring, int fd);
struct uu_ring *uu_ring_get(int fd, int *err); /* takes a ref */
struct uu_ring *uu_ring_get_cached(int fd);    /* fast path only */
/* whether fd's number is cached as a ring's (no reference: a hint) */
bool uu_registry_fd_cached(int fd);
/* -1: not a known ring fd; 1: its CQ holds a CQE; 0: empty (core/ring.c) */
int uu_ring_fd_readable(int fd);
void uu_ring_put(struct uu_ring *ring);
void uu_registry_note_fd(struct uu_ring *ring, int fd);
/* the halves of a last close the registry owns (core/ring_exit.c runs
 * the rest) */
bool uu_registry_kill_closed(struct uu_ring *ring);
int uu_registry_reap_closed(struct uu_ring **dead, int max);
struct uu_ring *uu_registry_forget_fd(int fd);
bool uu_registry_is_engine_mapping(const void *addr);
struct uu_ring *uu_ring_alloc(void);
void uu_ring_recycle(struct uu_ring *ring);
extern atomic_uint uu_fork_generation;
static inline bool uu_ring_foreign(struct uu_ring *ring)
{
	/* acquire: pairs with the release in uu_ring_adopt, which reset
	 * the engine's state of the ring before it stored the generation */
	return atomic_load_explicit(&ring->fork_gen, memory_order_acquire) !=
	       atomic_load_explicit(&uu_fork_generation, memory_order_relaxed);
}

void uu_registry_for_each(void (*fn)(struct uu_ring *ring));
/* the same, with an argument for fn */
void uu_registry_for_each_arg(void (*fn)(struct uu_ring *ring, void *arg),
			      void *arg);
/* the same inside the fork window (util/forkhook.h), this engine's rings */
void uu_registry_fork_each(void (*fn)(struct uu_ring *ring));

#endif /* UURING_CORE_REGISTRY_H */
