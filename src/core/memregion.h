/* SPDX-License-Identifier: MIT */
#ifndef UURING_MEMREGION_H
#define UURING_MEMREGION_H

#include <stddef.h>
#include <stdint.h>

struct uu_ring;
struct io_uring_reg_wait;

/* The mmap offset of an engine-allocated parameter region (the kernel's
 * IORING_MAP_OFF_PARAM_REGION) */
#define UU_MAP_OFF_PARAM_REGION 0x20000000ULL

/* IORING_REGISTER_MEM_REGION: 0 or -errno */
int uu_register_mem_region(struct uu_ring *r, void *arg, unsigned int nr_args);
/* uuring_mmap at UU_MAP_OFF_PARAM_REGION: 0 and *out, or -errno */
int uu_mem_region_mmap(struct uu_ring *r, void *addr, size_t len, int prot,
		       int flags, void **out);
/* IORING_ENTER_EXT_ARG_REG: the wait argument at byte offset of the
 * registered wait region, copied to *w; 0 or -errno */
int uu_wait_arg_reg(struct uu_ring *r, uint64_t offset,
		    struct io_uring_reg_wait *w);
/* at ring free */
void uu_mem_region_free(struct uu_ring *r);

/* IORING_REGISTER_QUERY, with or without a ring: 0 or -errno */
int uu_register_query(void *arg, unsigned int nr_args);

#endif
