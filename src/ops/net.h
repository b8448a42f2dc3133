/* SPDX-License-Identifier: MIT */
/*
 * The socket opcodes (ops/net.c); their shared internals are in
 * ops/net_int.h.
 */
#ifndef UURING_OPS_NET_H
#define UURING_OPS_NET_H

#include "core/types.h"

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

#endif /* UURING_OPS_NET_H */
