// SPDX-License-Identifier: MIT
/*
 * IORING_REGISTER_MEM_REGION and the registered wait arguments a region
 * can carry (IORING_ENTER_EXT_ARG_REG), after the kernel's
 * io_register_mem_region, io_create_region and io_get_ext_arg_reg.
 *
 * A region of the application's memory (IORING_MEM_REGION_TYPE_USER) is
 * used where it lies.  The kernel pins its pages; the engine cannot
 * (docs/traps.md T3), so every read of a wait argument goes through the
 * fault-safe copy, and a region the application unmaps afterwards answers
 * -EFAULT where the kernel would still read the pinned pages
 * (docs/compatibility.md).  A region the kernel would allocate is a shared
 * mapping of the engine's, which the application maps through the ring fd
 * at the offset the registration reports (UU_MAP_OFF_PARAM_REGION).
 *
 * The region is set once (a second registration is -EBUSY) and only
 * changes at ring free.  A region that carries wait arguments can only be
 * registered while the ring is disabled (IORING_SETUP_R_DISABLED), so no
 * waiter can look at wait_args_size before ENABLE_RINGS publishes it (the
 * release store of disabled, paired with enter's acquire load).
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>

#include "core/memregion.h"
#include "core/types.h"
#include "util/mapalias.h"
#include "util/usercopy.h"

#define PAGE 4096ull

static bool all_zero(const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i])
			return false;
	return true;
}

/* io_create_region's checks, in its order; then the memory */
static int create_region(struct uu_ring *r, struct io_uring_region_desc *rd)
{
	bool user = rd->flags & IORING_MEM_REGION_TYPE_USER;
	uint64_t end;
	void *p;
	int ret;

	if (!all_zero(rd->__resv, sizeof(rd->__resv)))
		return -EINVAL;
	if (rd->flags & ~(uint32_t)IORING_MEM_REGION_TYPE_USER)
		return -EINVAL;
	/* an address if and only if the memory is the application's */
	if (user != !!rd->user_addr)
		return -EFAULT;
	if (!rd->size || rd->mmap_offset || rd->id)
		return -EINVAL;
	if ((rd->size / PAGE) > INT_MAX)
		return -E2BIG;
	if ((rd->user_addr | rd->size) & (PAGE - 1))
		return -EINVAL;
	if (__builtin_add_overflow(rd->user_addr, rd->size, &end))
		return -EOVERFLOW;
	if (user) {
		/* what pinning for writing checks: every page mapped and
		 * writable */
		ret = uu_check_user((void *)(uintptr_t)rd->user_addr,
				    (size_t)rd->size, 1);
		if (ret)
			return ret;
		p = (void *)(uintptr_t)rd->user_addr;
	} else {
		if (rd->size > SIZE_MAX)
			return -ENOMEM;
		p = mmap(NULL, (size_t)rd->size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -ENOMEM;
		rd->mmap_offset = UU_MAP_OFF_PARAM_REGION;
	}
	r->param_region = p;
	r->param_region_size = (size_t)rd->size;
	r->param_owned = !user;
	return 0;
}

static void region_release(struct uu_ring *r)
{
	if (r->param_owned && r->param_region)
		munmap(r->param_region, r->param_region_size);
	r->param_region = NULL;
	r->param_region_size = 0;
	r->param_owned = false;
	r->wait_args_size = 0;
}

static int register_locked(struct uu_ring *r, void *arg)
{
	struct io_uring_mem_region_reg reg;
	struct io_uring_region_desc rd;
	void *rd_uptr;
	int ret;

	if (r->param_region)
		return -EBUSY;
	ret = uu_copy_from_user(&reg, arg, sizeof(reg));
	if (ret)
		return ret;
	rd_uptr = (void *)(uintptr_t)reg.region_uptr;
	ret = uu_copy_from_user(&rd, rd_uptr, sizeof(rd));
	if (ret)
		return ret;
	if (!all_zero(reg.__resv, sizeof(reg.__resv)))
		return -EINVAL;
	if (reg.flags & ~(uint64_t)IORING_MEM_REGION_REG_WAIT_ARG)
		return -EINVAL;
	/* waiters read the region unlocked: only before the ring runs */
	if ((reg.flags & IORING_MEM_REGION_REG_WAIT_ARG) &&
	    !atomic_load_explicit(r->disabled, memory_order_acquire))
		return -EINVAL;
	ret = create_region(r, &rd);
	if (ret)
		return ret;
	ret = uu_copy_to_user(rd_uptr, &rd, sizeof(rd));
	if (ret) {
		region_release(r);
		return ret;
	}
	if (reg.flags & IORING_MEM_REGION_REG_WAIT_ARG)
		r->wait_args_size = (size_t)rd.size;
	return 0;
}

int uu_register_mem_region(struct uu_ring *r, void *arg, unsigned int nr_args)
{
	int ret;

	if (!arg || nr_args != 1)
		return -EINVAL;
	/* the kernel's uring_lock: one registration at a time, and
	 * uu_mem_region_mmap sees a whole region or none */
	uu_shared_lock(r->uring_lock);
	ret = register_locked(r, arg);
	pthread_mutex_unlock(r->uring_lock);
	return ret;
}

int uu_mem_region_mmap(struct uu_ring *r, void *addr, size_t len, int prot,
		       int flags, void **out)
{
	int ret = -ENOMEM; /* the kernel's lookup fails in get_unmapped_area */

	if (!len)
		return -EINVAL;
	uu_shared_lock(r->uring_lock);
	/* none registered, or the application's own memory */
	if (!r->param_region || !r->param_owned)
		goto out;
	ret = uu_map_alias(r->param_region, addr, len, prot, flags, out);
out:
	pthread_mutex_unlock(r->uring_lock);
	return ret;
}

int uu_wait_arg_reg(struct uu_ring *r, uint64_t offset,
		    struct io_uring_reg_wait *w)
{
	uint64_t end;

	if (offset % sizeof(long))
		return -EFAULT;
	/* no region: a size of 0 fails this too */
	if (__builtin_add_overflow(offset, sizeof(*w), &end) ||
	    end > r->wait_args_size)
		return -EFAULT;
	return uu_copy_from_user(w, (char *)r->param_region + offset,
				 sizeof(*w));
}

void uu_mem_region_free(struct uu_ring *r)
{
	region_release(r);
}
