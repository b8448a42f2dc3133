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
/* Starts req->os.hdr for this SQE: the first thing a prep does. */
void uu_os_init(struct uu_req *req);
/* Makes the request the owner of the blocks prep allocated (either may
 * be NULL). */
void uu_os_take(struct uu_req *req, void *mem, void *mem2);
/* Frees req->os.hdr's blocks: for a prep that fails after allocating. */
void uu_os_drop(struct uu_req *req);
/* Frees req->os.hdr's blocks if this request owns them: the cleanup of
 * the opcodes that allocate at prep. */
void uu_os_release(struct uu_req *req);
/* The same, for the opcodes whose errors do not fail a link chain. */
void uu_os_release_nofail(struct uu_req *req);

/* The kernel's file lookup for needs_file opcodes: -EBADF for a fixed
 * file, a closed fd or an O_PATH fd (ops/fsops.c). */
int uu_file_check(struct uu_req *req);

/*
 * The result of installing into the registered file table when none is
 * registered (file_index != 0 on OPENAT, PIPE ...): -ENFILE for
 * IORING_FILE_INDEX_ALLOC, else -ENXIO.  The file was opened first and is
 * closed again, as the kernel does.
 */

/* ---- ops/openclose.c ---- */
int uu_openat_prep(struct uu_req *req);
int uu_openat2_prep(struct uu_req *req);
int uu_openat_issue(struct uu_req *req, unsigned int issue_flags);
int uu_close_prep(struct uu_req *req);
int uu_close_issue(struct uu_req *req, unsigned int issue_flags);
int uu_fixed_fd_install_prep(struct uu_req *req);
int uu_fixed_fd_install_issue(struct uu_req *req, unsigned int issue_flags);
int uu_pipe_prep(struct uu_req *req);
int uu_pipe_issue(struct uu_req *req, unsigned int issue_flags);

/* ---- ops/fsops.c ---- */
int uu_statx_prep(struct uu_req *req);
int uu_statx_issue(struct uu_req *req, unsigned int issue_flags);
int uu_renameat_prep(struct uu_req *req);
int uu_renameat_issue(struct uu_req *req, unsigned int issue_flags);
int uu_unlinkat_prep(struct uu_req *req);
int uu_unlinkat_issue(struct uu_req *req, unsigned int issue_flags);
int uu_mkdirat_prep(struct uu_req *req);
int uu_mkdirat_issue(struct uu_req *req, unsigned int issue_flags);
int uu_symlinkat_prep(struct uu_req *req);
int uu_symlinkat_issue(struct uu_req *req, unsigned int issue_flags);
int uu_linkat_prep(struct uu_req *req);
int uu_linkat_issue(struct uu_req *req, unsigned int issue_flags);
int uu_fallocate_prep(struct uu_req *req);
int uu_fallocate_issue(struct uu_req *req, unsigned int issue_flags);
int uu_fadvise_prep(struct uu_req *req);
int uu_fadvise_issue(struct uu_req *req, unsigned int issue_flags);
int uu_madvise_prep(struct uu_req *req);
int uu_madvise_issue(struct uu_req *req, unsigned int issue_flags);
int uu_ftruncate_prep(struct uu_req *req);
int uu_ftruncate_issue(struct uu_req *req, unsigned int issue_flags);
int uu_sfr_prep(struct uu_req *req);
int uu_sfr_issue(struct uu_req *req, unsigned int issue_flags);

/* ---- ops/xattr.c ---- */
int uu_fgetxattr_prep(struct uu_req *req);
int uu_getxattr_prep(struct uu_req *req);
int uu_fgetxattr_issue(struct uu_req *req, unsigned int issue_flags);
int uu_getxattr_issue(struct uu_req *req, unsigned int issue_flags);
int uu_fsetxattr_prep(struct uu_req *req);
int uu_setxattr_prep(struct uu_req *req);
int uu_fsetxattr_issue(struct uu_req *req, unsigned int issue_flags);
int uu_setxattr_issue(struct uu_req *req, unsigned int issue_flags);

/* ---- ops/splice.c ---- */
int uu_splice_prep(struct uu_req *req);
int uu_splice_issue(struct uu_req *req, unsigned int issue_flags);
int uu_tee_prep(struct uu_req *req);
int uu_tee_issue(struct uu_req *req, unsigned int issue_flags);

/* ---- ops/futex.c ---- */
int uu_futex_prep(struct uu_req *req);
int uu_futex_wake_issue(struct uu_req *req, unsigned int issue_flags);
int uu_futex_wait_prep(struct uu_req *req);
int uu_futex_wait_issue(struct uu_req *req, unsigned int issue_flags);
void uu_futex_wait_cleanup(struct uu_req *req);
int uu_futexv_prep(struct uu_req *req);
int uu_futexv_issue(struct uu_req *req, unsigned int issue_flags);
void uu_futexv_cleanup(struct uu_req *req);

/* ---- ops/waitid.c ---- */
int uu_waitid_prep(struct uu_req *req);
int uu_waitid_issue(struct uu_req *req, unsigned int issue_flags);

/* ---- ops/epoll.c ---- */
int uu_epoll_ctl_prep(struct uu_req *req);
int uu_epoll_ctl_issue(struct uu_req *req, unsigned int issue_flags);
int uu_epoll_wait_prep(struct uu_req *req);
int uu_epoll_wait_issue(struct uu_req *req, unsigned int issue_flags);

/* ---- ops/net.c ---- */
int uu_send_prep(struct uu_req *req);
int uu_send_issue(struct uu_req *req, unsigned int issue_flags);
int uu_sendmsg_prep(struct uu_req *req);
int uu_sendmsg_issue(struct uu_req *req, unsigned int issue_flags);
int uu_recv_prep(struct uu_req *req);
int uu_recv_issue(struct uu_req *req, unsigned int issue_flags);
int uu_recvmsg_prep(struct uu_req *req);
int uu_recvmsg_issue(struct uu_req *req, unsigned int issue_flags);
void uu_net_cleanup(struct uu_req *req);
int uu_send_zc_prep(struct uu_req *req);
int uu_sendmsg_zc_prep(struct uu_req *req);
int uu_send_zc_issue(struct uu_req *req, unsigned int issue_flags);
void uu_send_zc_cleanup(struct uu_req *req);
int uu_accept_prep(struct uu_req *req);
int uu_accept_issue(struct uu_req *req, unsigned int issue_flags);
int uu_connect_prep(struct uu_req *req);
int uu_connect_issue(struct uu_req *req, unsigned int issue_flags);
int uu_socket_prep(struct uu_req *req);
int uu_socket_issue(struct uu_req *req, unsigned int issue_flags);
int uu_shutdown_prep(struct uu_req *req);
int uu_shutdown_issue(struct uu_req *req, unsigned int issue_flags);
int uu_bind_prep(struct uu_req *req);
int uu_bind_issue(struct uu_req *req, unsigned int issue_flags);
int uu_listen_prep(struct uu_req *req);
int uu_listen_issue(struct uu_req *req, unsigned int issue_flags);

#endif
