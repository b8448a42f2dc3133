// SPDX-License-Identifier: MIT
#include <errno.h>
#include <sys/mman.h>

#include "util/mapalias.h"

int uu_map_alias(void *src, void *addr, size_t len, int prot, int flags,
		 void **out)
{
	void *p;

	if (!len)
		return -EINVAL;
	if (flags & MAP_FIXED)
		p = mremap(src, 0, len, MREMAP_MAYMOVE | MREMAP_FIXED, addr);
	else
		p = mremap(src, 0, len, MREMAP_MAYMOVE);
	if (p == MAP_FAILED)
		return -errno;
	if ((prot & (PROT_READ | PROT_WRITE)) != (PROT_READ | PROT_WRITE) &&
	    mprotect(p, len, prot)) {
		int err = -errno;

		munmap(p, len);
		return err;
	}
	*out = p;
	return 0;
}
