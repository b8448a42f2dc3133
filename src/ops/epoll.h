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

#endif /* UURING_OPS_EPOLL_H */
