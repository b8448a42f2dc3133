/* SPDX-License-Identifier: MIT */
/*
 * OPENAT, OPENAT2, CLOSE, FIXED_FD_INSTALL, PIPE (ops/openclose.c).
 */
#ifndef UURING_OPS_OPENCLOSE_H
#define UURING_OPS_OPENCLOSE_H

#include "core/types.h"

int uu_openat_prep(struct uu_req *req);
int uu_openat2_prep(struct uu_req *req);
int uu_openat_issue(struct uu_req *req, unsigned int issue_flags);
int uu_close_prep(struct uu_req *req);
int uu_close_issue(struct uu_req *req, unsigned int issue_flags);
int uu_fixed_fd_install_prep(struct uu_req *req);
int uu_fixed_fd_install_issue(struct uu_req *req, unsigned int issue_flags);
int uu_pipe_prep(struct uu_req *req);
int uu_pipe_issue(struct uu_req *req, unsigned int issue_flags);

#endif /* UURING_OPS_OPENCLOSE_H */
