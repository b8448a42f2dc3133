/* SPDX-License-Identifier: MIT */
/*
 * What the engine asks of the multi-process machinery (src/xproc/):
 * rings shared across fork (xproc/xproc.c), the request journal and
 * lifelines (xproc/xlife.c).  Declared in core/ so that core/ does not
 * include a header of src/xproc/ (tests/check_layering.sh: no cycle).
 */
#ifndef UURING_CORE_XPROC_H
#define UURING_CORE_XPROC_H

#include "core/types.h"
#include "core/registry.h"

/* A ring inherited from the parent, at its first use in this process:
 * makes this process's engine serve it too.  0 or -errno. */
int uu_ring_adopt(struct uu_ring *ring);
static inline int uu_ring_use(struct uu_ring *ring)
{
	return unlikely(uu_ring_foreign(ring)) ? uu_ring_adopt(ring) : 0;
}
int uu_xshared_init(struct uu_ring *ring);
void uu_xshared_free(struct uu_ring *ring);
/* fork, in the parent: each live ring gets its xwake eventfd */
void uu_xproc_atfork_prepare_ring(struct uu_ring *ring);
/* after a commit on a ring another process uses (cq.c) */
void uu_xproc_wake(struct uu_ring *ring);
static inline bool uu_ring_xshared(const struct uu_ring *ring)
{
	return atomic_load_explicit(&ring->xs->shared, memory_order_relaxed);
}

void uu_xproc_atfork_prepare(void);
void uu_xproc_atfork_parent(void);
void uu_xproc_atfork_child(void);
void uu_xproc_before_exec(void);
pid_t uu_self_pid(void);

struct uu_xjournal;
void uu_xj_setup(struct uu_ring *ring);
void uu_xj_unmap(struct uu_ring *ring);
void uu_xj_claim(struct uu_ring *ring, struct uu_req *req);
void uu_xj_release(struct uu_ring *ring, unsigned int xj);
void uu_xj_mark_timeout(struct uu_ring *ring, unsigned int xj,
			unsigned int head_xj);
void uu_xj_set_expiry(struct uu_ring *ring, unsigned int xj, int clock,
		      int64_t expires);
void uu_xlife_atfork_prepare(void);
void uu_xlife_prepare_pair(void);
void uu_xlife_atfork_parent(void);
void uu_xlife_atfork_child(void);
void uu_xlife_check(void);
void uu_xlife_goodbye(void);
void uu_xlife_adopted(struct uu_ring *ring);
void uu_xlife_ring_dead(struct uu_ring *ring);
struct uu_cancel_match;
int uu_xlife_cancel(struct uu_ring *ring, const struct uu_cancel_match *m,
		    int local);

#endif /* UURING_CORE_XPROC_H */
