/* SPDX-License-Identifier: MIT */
/*
 * EPOLL_CTL and EPOLL_WAIT (ops/epoll.c).
 */
#ifndef UURING_OPS_EPOLL_H
#define UURING_OPS_EPOLL_H

#include "core/types.h"

int uu_epoll_ctl_prep(struct uu_req *req);
int uu_epoll_ctl_issue(struct uu_req *req, unsigned int issue_flags);
int uu_epoll_wait_prep(struct uu_req *req);
int uu_epoll_wait_issue(struct uu_req *req, unsigned int issue_flags);

/* per-op state, in the request's area (uu_req_cmd in core/types.h) */
/* EPOLL_CTL, EPOLL_WAIT */
struct uu_epoll_cmd {
	struct uu_os_hdr hdr;
	uint64_t uevents;        /* EPOLL_WAIT: the user's array */
	uint64_t data;           /* EPOLL_CTL: the event, copied */
	uint32_t events;
	int epfd, op, fd;        /* EPOLL_WAIT: maxevents in op */
};

#endif /* UURING_OPS_EPOLL_H */
