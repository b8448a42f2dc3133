// SPDX-License-Identifier: MIT
/*
 * test_abi: check src/abi/io_uring_abi.h against the system's
 * <linux/io_uring.h> for every name both define (see abi_names.h):
 * constant values and widths, struct sizes, member offsets and sizes.
 * Exit 0 when all match, 1 on any mismatch.
 */
#include <stdio.h>
#include <string.h>

#include "abi/io_uring_abi.h"

#ifdef LINUX_IO_URING_H
#error "io_uring_abi.h must not pull in <linux/io_uring.h>"
#endif

#include "abi_table.h"

#define ABI_PICK(ours, sys)	ours

static const struct abi_entry abi_ours[] = {
#include "abi_names.h"
};

extern const struct abi_entry abi_sys[];
extern const size_t abi_sys_count;

int main(void)
{
	size_t n = sizeof(abi_ours) / sizeof(abi_ours[0]);
	size_t i, bad = 0;

	if (n != abi_sys_count) {
		printf("table length mismatch: ours %zu, system %zu\n",
		       n, abi_sys_count);
		return 1;
	}

	for (i = 0; i < n; i++) {
		const struct abi_entry *o = &abi_ours[i], *s = &abi_sys[i];

		if (strcmp(o->name, s->name)) {
			printf("entry %zu: name mismatch '%s' vs '%s'\n",
			       i, o->name, s->name);
			bad++;
			continue;
		}
		if (o->value != s->value) {
			printf("MISMATCH %s: ours %lld (0x%llx), system %lld (0x%llx)\n",
			       o->name, o->value, (unsigned long long)o->value,
			       s->value, (unsigned long long)s->value);
			bad++;
		}
		if (o->width != s->width) {
			printf("MISMATCH width of %s: ours %d, system %d\n",
			       o->name, o->width, s->width);
			bad++;
		}
	}

	if (bad) {
		printf("%zu mismatches in %zu names\n", bad, n);
		return 1;
	}
	printf("abi: %zu names compared, all match\n", n);
	return 0;
}
