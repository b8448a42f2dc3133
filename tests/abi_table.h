/* SPDX-License-Identifier: MIT */
/*
 * Table entry type and generators for test_abi.  The includer defines
 * ABI_PICK(ours, sys) to select the member name of a renamed field, then
 * expands "abi_names.h" inside an array of struct abi_entry.
 */
#ifndef UURING_TESTS_ABI_TABLE_H
#define UURING_TESTS_ABI_TABLE_H

#include <stddef.h>

struct abi_entry {
	const char	*name;
	long long	value;
	int		width;	/* sizeof the constant expression; 0 if n/a */
};

#define ABI_V(n)	{ #n, (long long)(n), (int)sizeof(n) },
#define ABI_S(t)	{ "sizeof(" #t ")", (long long)sizeof(t), 0 },
#define ABI_FO(t, f)	{ "offsetof(" #t ", " #f ")", \
			  (long long)offsetof(t, f), 0 },
#define ABI_F(t, f)	ABI_FO(t, f) \
			{ "sizeof(" #t "." #f ")", \
			  (long long)sizeof(((t *)0)->f), 0 },
#define ABI_R(t, o, s)	{ "offsetof(" #t ", " #o " | " #s ")", \
			  (long long)offsetof(t, ABI_PICK(o, s)), 0 }, \
			{ "sizeof(" #t "." #o " | " #s ")", \
			  (long long)sizeof(((t *)0)->ABI_PICK(o, s)), 0 },

#endif /* UURING_TESTS_ABI_TABLE_H */
