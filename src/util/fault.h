/* SPDX-License-Identifier: MIT */
/*
 * Fault injection for tests: UURING_FAULT=site[:skip[:count]],... makes the
 * engine fail at a site (util/fault_sites.h) as the system would: after
 * `skip` passes that succeed, the next `count` (default 1; 0 = every one)
 * fail.  Off, a site costs one relaxed load of uu_fault_armed.
 */
#ifndef UURING_FAULT_H
#define UURING_FAULT_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "util/fault_sites.h"

enum uu_fault_site {
#define UU_FAULT_ENUM(id, name, what) UU_FAULT_##id,
	UU_FAULT_SITES(UU_FAULT_ENUM)
#undef UU_FAULT_ENUM
	UU_FAULT_NR
};

extern atomic_bool uu_fault_armed;

bool uu_fault_hit(enum uu_fault_site site);
/* parses a UURING_FAULT value (adding to what is armed): 0 or -EINVAL */
int uu_fault_parse(const char *spec);
/* the number of times the site has failed so far */
unsigned long uu_fault_count(enum uu_fault_site site);
/* the site of that name, or -EINVAL */
int uu_fault_site_of(const char *name);

/* true when this pass of the site must fail */
static inline bool uu_fault(enum uu_fault_site site)
{
	return __builtin_expect(atomic_load_explicit(&uu_fault_armed,
						     memory_order_relaxed), 0) &&
	       uu_fault_hit(site);
}

/* the same, setting errno to err when it must fail (a system call's fault) */
static inline bool uu_fault_errno(enum uu_fault_site site, int err)
{
	if (!uu_fault(site))
		return false;
	errno = err;
	return true;
}

#endif
