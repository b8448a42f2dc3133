/* SPDX-License-Identifier: MIT */
/*
 * The file-family opcodes without registered files or
 * buffers: prep/issue/cleanup functions for core/opdef.c, and the helpers
 * they share (ops/fsops.c).
 */
#ifndef UURING_OPS_H
#define UURING_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct uu_req;

/* ---- shared helpers (ops/fsops.c) ---- */

/*
 * Copies the NUL-terminated string at user address uptr into dst (room for
 * max bytes), fault-safe.  Returns its length (without the NUL), -EFAULT
 * if unreadable memory comes before the NUL, or -ENAMETOOLONG if there is
 * no NUL in the first max bytes (strncpy_from_user's contract).
 */
ssize_t uu_strncpy_user(char *dst, uint64_t uptr, size_t max);

/*
 * The kernel's getname() at prep: copies the path at uptr into a fresh
 * heap block (`prefix` bytes, then the path), returned in *out.  0,
 * -EFAULT, -ENAMETOOLONG (no NUL in PATH_MAX bytes), -ENOENT for "" unless
 * allow_empty, -ENOMEM.
 */
int uu_getname(uint64_t uptr, bool allow_empty, size_t prefix, char **out);

/* Tag of the SQE a request was prepped from (see ops/opstate.h). */
uint64_t uu_os_tag(const struct uu_req *req);
/* Starts uu_os_hdr(req) for this SQE: the first thing a prep does. */
void uu_os_init(struct uu_req *req);
/* Makes the request the owner of the blocks prep allocated (either may
 * be NULL). */
void uu_os_take(struct uu_req *req, void *mem, void *mem2);
/* Frees uu_os_hdr(req)'s blocks: for a prep that fails after allocating. */
void uu_os_drop(struct uu_req *req);
/* Frees uu_os_hdr(req)'s blocks if this request owns them: the cleanup of
 * the opcodes that allocate at prep. */
void uu_os_release(struct uu_req *req);
/* The same, for the opcodes whose errors do not fail a link chain. */
void uu_os_release_nofail(struct uu_req *req);

/* The kernel's file lookup for needs_file opcodes: -EBADF for a fixed
 * file, a closed fd or an O_PATH fd (ops/fsops.c). */
int uu_file_check(struct uu_req *req);

#endif
