// SPDX-License-Identifier: MIT
/*
 * IORING_REGISTER_RESIZE_RINGS, after the kernel's
 * io_register_resize_rings: new SQ and CQ rings of the sizes asked for,
 * the entries not yet consumed copied across, the ring switched over
 * under the CQ lock.  As in the kernel, only DEFER_TASKRUN rings can be
 * resized: their one submitter is the thread that resizes, so no
 * submission runs meanwhile, and every other thread that posts a CQE
 * (io-wq, the readiness engine, the timer thread) does so under the CQ
 * lock held here.
 *
 * The application maps the new rings afresh (uuring_mmap at the usual
 * offsets, or its own memory with NO_MMAP) and unmaps its old mappings.
 * The engine keeps its own mapping of the old memory until the ring is
 * freed: a thread that looks at the CQ without the lock (a ring fd's
 * readiness check) may still hold the old pointers.  A later resize to
 * the same sizes takes that memory back (take_retired), so what is kept
 * is one memory per size a program resizes to, not one per resize (a
 * program resizing in a loop ran out of mappings, vm.max_map_count,
 * within seconds).  A reader still holding a pointer into reused memory
 * finds the live ring's word at the same offset.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/ring.h"
#include "core/setup.h"
#include "core/types.h"
#include "ring/mem.h"
#include "util/usercopy.h"

/* setup flags a resize may ask for, and those the new rings inherit */
#define RESIZE_FLAGS (IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP)
#define COPY_FLAGS                                                        \
	(IORING_SETUP_NO_SQARRAY | IORING_SETUP_SQE128 |                  \
	 IORING_SETUP_CQE32 | IORING_SETUP_NO_MMAP |                      \
	 IORING_SETUP_CQE_MIXED | IORING_SETUP_SQE_MIXED)

/* entries [head, tail) of an old ring into the same indexes of a new one */
static void copy_entries(unsigned char *dst, unsigned int dst_mask,
			 const unsigned char *src, unsigned int src_mask,
			 uint32_t head, uint32_t tail, unsigned int shift)
{
	for (uint32_t i = head; i != tail; i++)
		memcpy(dst + ((size_t)(i & dst_mask) << shift),
		       src + ((size_t)(i & src_mask) << shift),
		       (size_t)1 << shift);
}

/* the word of the new rings at the offset w has in r's (same layout) */
static _Atomic uint32_t *same_word(const struct uu_ring *r, void *nrings,
				   _Atomic uint32_t *w)
{
	return (_Atomic uint32_t *)((unsigned char *)nrings +
				    ((unsigned char *)w -
				     (unsigned char *)r->mem.rings));
}

static void copy_word(const struct uu_ring *r, void *nrings,
		      _Atomic uint32_t *w)
{
	atomic_store_explicit(same_word(r, nrings, w),
			      atomic_load_explicit(w, memory_order_relaxed),
			      memory_order_relaxed);
}

/* Under the CQ lock: 0, or -EOVERFLOW if n cannot hold what r holds. */
static int switch_over(struct uu_ring *r, const struct uu_ring_mem *n)
{
	unsigned char *ncqes = (unsigned char *)n->rings +
			       (r->cqes - (unsigned char *)r->mem.rings);
	uint32_t sq_head, sq_tail, cq_head, cq_tail;

	/* the application's tail store is a release: its SQEs are seen */
	sq_tail = atomic_load_explicit(r->sq_tail, memory_order_acquire);
	sq_head = atomic_load_explicit(r->sq_head, memory_order_relaxed);
	if (sq_tail - sq_head > n->sq_entries)
		return -EOVERFLOW;
	/* the kernel's rule reads the shared words, which the application
	 * may have scribbled over; CQEs filled but not yet committed (the
	 * poller's shots) are moved too, and counted when they fit */
	cq_head = atomic_load_explicit(r->cq_head, memory_order_acquire);
	cq_tail = atomic_load_explicit(r->cq_tail, memory_order_relaxed);
	if (cq_tail - cq_head > n->cq_entries)
		return -EOVERFLOW;
	if (r->cq_cached_tail - cq_tail <= r->mem.cq_entries) {
		if (r->cq_cached_tail - cq_head > n->cq_entries)
			return -EOVERFLOW;
		cq_tail = r->cq_cached_tail;
	}
	copy_entries(n->sqes, n->sq_entries - 1, r->mem.sqes, r->sq_mask,
		     sq_head, sq_tail, r->sqe_shift);
	copy_entries(ncqes, n->cq_entries - 1, r->cqes, r->cq_mask, cq_head,
		     cq_tail, r->cqe_shift);
	copy_word(r, n->rings, r->sq_head);
	copy_word(r, n->rings, r->sq_tail);
	copy_word(r, n->rings, r->cq_head);
	copy_word(r, n->rings, r->cq_tail);
	copy_word(r, n->rings, r->sq_dropped);
	copy_word(r, n->rings, r->sq_flags);
	copy_word(r, n->rings, r->cq_flags);
	copy_word(r, n->rings, r->cq_overflow);
	uu_ring_mem_install(r, n);
	return 0;
}

/* a retired engine-mapped memory of these entries, off the list, or NULL */
static struct uu_ring_mem *take_retired(struct uu_ring *r,
					unsigned int sq_entries,
					unsigned int cq_entries)
{
	struct uu_ring_mem **pp, *m;

	for (pp = &r->retired_mem; (m = *pp); pp = &m->next) {
		if (m->sq_entries == sq_entries &&
		    m->cq_entries == cq_entries && m->rings_owned &&
		    m->sqes_owned) {
			*pp = m->next;
			m->next = NULL;
			return m;
		}
	}
	return NULL;
}

static void retire(struct uu_ring *r, struct uu_ring_mem *m)
{
	m->next = r->retired_mem;
	r->retired_mem = m;
}

static int resize_locked(struct uu_ring *r, void *arg)
{
	struct uu_ring_mem n, *old, *reused = NULL;
	struct io_uring_params p;
	unsigned int entries;
	int ret;

	ret = uu_copy_from_user(&p, arg, sizeof(p));
	if (ret)
		return ret;
	if (p.flags & ~(uint32_t)RESIZE_FLAGS)
		return -EINVAL;
	p.flags |= r->setup_flags & COPY_FLAGS;
	entries = p.sq_entries;
	ret = uu_setup_fill_sizes(&entries, &p);
	if (ret)
		return ret;
	p.sq_entries = entries;
	if (!(p.flags & IORING_SETUP_NO_MMAP))
		reused = take_retired(r, p.sq_entries, p.cq_entries);
	if (reused) {
		n = *reused;
		uu_ring_mem_reset(&n, p.flags, &p);
		old = reused; /* its record now holds the memory retired */
	} else {
		old = calloc(1, sizeof(*old));
		if (!old)
			return -ENOMEM;
		ret = uu_ring_mem_create(&n, p.flags, p.sq_entries,
					 p.cq_entries, &p);
		if (ret)
			goto fail;
	}
	/* the kernel reports no SQ array offset here (its layout sets it
	 * at setup only); the new array lies where setup's layout puts it,
	 * and programs that resize use NO_SQARRAY */
	p.sq_off.array = 0;
	ret = uu_copy_to_user(arg, &p, sizeof(p));
	if (ret)
		goto fail_mem;
	*old = r->mem; /* retired below once n is in */
	uu_shared_lock(r->completion_lock);
	ret = switch_over(r, &n);
	pthread_mutex_unlock(r->completion_lock);
	if (ret)
		goto fail_mem;
	retire(r, old);
	return 0;
fail_mem:
	if (reused) {
		*reused = n;
		retire(r, reused);
		return ret;
	}
	uu_ring_mem_free(&n);
fail:
	free(old);
	return ret;
}

int uu_register_resize_rings(struct uu_ring *r, void *arg,
			     unsigned int nr_args)
{
	int ret;

	if (!arg || nr_args != 1)
		return -EINVAL;
	/* limited to DEFER_TASKRUN, as the kernel's */
	if (!(r->setup_flags & IORING_SETUP_DEFER_TASKRUN))
		return -EINVAL;
	uu_shared_lock(r->uring_lock);
	ret = resize_locked(r, arg);
	pthread_mutex_unlock(r->uring_lock);
	return ret;
}

void uu_resize_free_retired(struct uu_ring *r)
{
	struct uu_ring_mem *m, *next;

	for (m = r->retired_mem; m; m = next) {
		next = m->next;
		uu_ring_mem_free(m);
		free(m);
	}
	r->retired_mem = NULL;
}
