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

/* per-op state, in the request's area (uu_req_cmd in core/types.h) */
/* OPENAT, OPENAT2: path in hdr.mem */
struct uu_open_cmd {
	struct uu_os_hdr hdr;
	uint64_t flags, mode, resolve; /* struct open_how */
	int dfd;
	uint32_t file_slot;
	bool openat2;
	bool force_async;        /* O_CREAT, O_TRUNC, O_TMPFILE */
};

/* CLOSE */
struct uu_close_cmd {
	struct uu_os_hdr hdr;
	int fd;
	uint32_t file_slot;
};

/* FIXED_FD_INSTALL */
struct uu_fd_install_cmd {
	struct uu_os_hdr hdr;
	int dup_cmd;             /* F_DUPFD_CLOEXEC or F_DUPFD */
};

/* PIPE */
struct uu_pipe_cmd {
	struct uu_os_hdr hdr;
	uint64_t ufds;           /* int[2] in user memory */
	int flags;
	uint32_t file_slot;
};

#endif /* UURING_OPS_OPENCLOSE_H */
