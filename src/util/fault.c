// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/fault.h"

atomic_bool uu_fault_armed;

struct site_state {
	atomic_long skip;   /* passes left to succeed first */
	atomic_long fail;   /* failures left; LONG_MAX: every pass */
	atomic_ulong hits;  /* failures so far */
};

static struct site_state sites[UU_FAULT_NR];

static const char *const site_names[UU_FAULT_NR] = {
#define UU_FAULT_NAME(id, name, what) [UU_FAULT_##id] = name,
	UU_FAULT_SITES(UU_FAULT_NAME)
#undef UU_FAULT_NAME
};

/* decrements *v if it is positive; true if it did */
static bool take(atomic_long *v)
{
	long n = atomic_load_explicit(v, memory_order_relaxed);

	while (n > 0)
		if (atomic_compare_exchange_weak_explicit(
			    v, &n, n == __LONG_MAX__ ? n : n - 1,
			    memory_order_relaxed, memory_order_relaxed))
			return true;
	return false;
}

bool uu_fault_hit(enum uu_fault_site site)
{
	struct site_state *s = &sites[site];

	if (take(&s->skip) || !take(&s->fail))
		return false;
	atomic_fetch_add_explicit(&s->hits, 1, memory_order_relaxed);
	return true;
}

unsigned long uu_fault_count(enum uu_fault_site site)
{
	return atomic_load_explicit(&sites[site].hits, memory_order_relaxed);
}

int uu_fault_site_of(const char *name)
{
	for (int i = 0; i < UU_FAULT_NR; i++)
		if (!strcmp(name, site_names[i]))
			return i;
	return -EINVAL;
}

static int parse_one(const char *item, size_t len)
{
	char buf[64], *colon, *end;
	long skip = 0, count = 1;
	int i;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, item, len);
	buf[len] = '\0';
	colon = strchr(buf, ':');
	if (colon) {
		*colon++ = '\0';
		skip = strtol(colon, &end, 10);
		if (end == colon || skip < 0 || (*end && *end != ':'))
			return -EINVAL;
		if (*end == ':') {
			count = strtol(end + 1, &end, 10);
			if (*end || count < 0)
				return -EINVAL;
		}
	}
	i = uu_fault_site_of(buf);
	if (i < 0)
		return -EINVAL;
	atomic_store_explicit(&sites[i].skip, skip, memory_order_relaxed);
	atomic_store_explicit(&sites[i].fail, count ? count : __LONG_MAX__,
			      memory_order_relaxed);
	atomic_store_explicit(&uu_fault_armed, true, memory_order_relaxed);
	return 0;
}

int uu_fault_parse(const char *spec)
{
	while (spec && *spec) {
		const char *comma = strchr(spec, ',');
		size_t len = comma ? (size_t)(comma - spec) : strlen(spec);
		int ret = parse_one(spec, len);

		if (ret)
			return ret;
		spec = comma ? comma + 1 : NULL;
	}
	return 0;
}
