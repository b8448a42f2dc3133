/* SPDX-License-Identifier: MIT */
/*
 * The ring memory and its layout (the kernel's struct io_rings): what
 * setup and REGISTER_RESIZE_RINGS map, where each shared word lives, and
 * the CQE slot accessor.  Only abi/ and util/ below this folder
 * (tests/check_layering.sh); the ring object that uses the memory is
 * core's (core/types.h struct uu_ring, core/ring.c).
 */
#ifndef UURING_RING_MEM_H
#define UURING_RING_MEM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abi/io_uring_abi.h"

/* One set of ring memory: the rings (with the SQ array) and the SQEs */
struct uu_ring_mem {
	void *rings, *sqes;
	size_t rings_size, sqes_size, array_off;
	bool rings_owned, sqes_owned;  /* engine mappings to unmap */
	unsigned int sq_entries, cq_entries;
	struct uu_ring_mem *next;      /* a ring's retired list */
};

/* The shared words of one ring memory, where the application sees them */
struct uu_ring_words {
	_Atomic uint32_t *sq_head, *sq_tail, *sq_flags, *sq_dropped;
	uint32_t *sq_array;            /* NULL with NO_SQARRAY */
	_Atomic uint32_t *cq_head, *cq_tail, *cq_overflow, *cq_flags;
	unsigned char *cqes;
};

int uu_ring_mem_create(struct uu_ring_mem *m, unsigned int setup_flags,
		       unsigned int sq_entries, unsigned int cq_entries,
		       struct io_uring_params *p);
/* engine-mapped memory of the same flags and entries made new: zeroed,
 * its header and p's offsets written as uu_ring_mem_create does */
void uu_ring_mem_reset(struct uu_ring_mem *m, unsigned int setup_flags,
		       struct io_uring_params *p);
void uu_ring_mem_free(struct uu_ring_mem *m);
/* addr is the start of a ring mapping the engine made (live or retired) */
bool uu_ring_mem_is_engine_map(const void *addr);
/* the shared words of m, for a ring set up with setup_flags */
void uu_ring_mem_words(const struct uu_ring_mem *m, unsigned int setup_flags,
		       struct uu_ring_words *w);

/* The CQE at index idx (any 32-bit position: masked here) of a CQ of
 * mask cq_mask whose entries are 1 << cqe_shift bytes */
static inline struct io_uring_cqe *uu_ring_cqe_at(unsigned char *cqes,
						   uint32_t cq_mask,
						   unsigned int cqe_shift,
						   uint32_t idx)
{
	return (struct io_uring_cqe *)(cqes +
				       ((size_t)(idx & cq_mask) << cqe_shift));
}

#endif /* UURING_RING_MEM_H */
