// SPDX-License-Identifier: MIT
/*
 * Half of test_abi built against the system's <linux/io_uring.h>; the
 * other half (test_abi.c) is built against src/abi/io_uring_abi.h.  The two
 * headers define the same struct tags, so they need separate units.
 */
#include <linux/io_uring.h>

#include "abi_table.h"

#define ABI_PICK(ours, sys)	sys

const struct abi_entry abi_sys[] = {
#include "abi_names.h"
};

const size_t abi_sys_count = sizeof(abi_sys) / sizeof(abi_sys[0]);
