/* SPDX-License-Identifier: MIT */
#ifndef UURING_MAPALIAS_H
#define UURING_MAPALIAS_H

#include <stddef.h>

/*
 * A second mapping of the shared mapping at src (mremap with an old size of
 * 0), len bytes at addr if flags has MAP_FIXED, else anywhere, then
 * protected with prot when that is not read-write: how the engine's ring
 * memory, provided-buffer rings and parameter regions are mapped through a
 * ring fd.  0 and *out, or -errno (-EINVAL for len 0).
 */
int uu_map_alias(void *src, void *addr, size_t len, int prot, int flags,
		 void **out);

#endif
