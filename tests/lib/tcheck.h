/* SPDX-License-Identifier: MIT */
/*
 * CHECK for the tests that are not differential (uuring-only counters,
 * fault injection, thread counts): a failed condition is printed with
 * its place and counted in tcheck_failures (defined in tprep.c).
 */
#ifndef TCHECK_H
#define TCHECK_H

#include <stdio.h>

extern int tcheck_failures;

#define CHECK(cond, ...)                                            \
	do {                                                        \
		if (!(cond)) {                                      \
			tcheck_failures++;                          \
			printf("FAIL %s:%d: ", __func__, __LINE__); \
			printf(__VA_ARGS__);                        \
			printf("\n");                               \
		}                                                   \
	} while (0)

#endif /* TCHECK_H */
