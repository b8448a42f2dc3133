/* SPDX-License-Identifier: MIT */
/* What the rest of the engine calls of the ublk driver (src/ublk/). */
#ifndef UURING_UBLK_UBLK_H
#define UURING_UBLK_UBLK_H

#include <stddef.h>
#include <sys/types.h>

/* uuring_mmap of a /dev/ublkcN fd: the mapping or -errno as a pointer;
 * NULL when fd is not one */
void *uu_ublk_try_mmap(void *addr, size_t len, int prot, int flags, int fd,
		       off_t off);

#endif
