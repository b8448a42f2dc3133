/* SPDX-License-Identifier: MIT */
/*
 * Fault-safe access to memory the application handed us a pointer to (T1):
 * -EFAULT for unmapped or inaccessible memory, never a signal.
 */
#ifndef UURING_USERCOPY_H
#define UURING_USERCOPY_H

#include <stddef.h>

int uu_copy_from_user(void *dst, const void *usrc, size_t len);
int uu_copy_to_user(void *udst, const void *src, size_t len);
/* 0 if [uaddr, uaddr+len) is readable (and writable if write), else -EFAULT */
int uu_check_user(const void *uaddr, size_t len, int write);

#endif
