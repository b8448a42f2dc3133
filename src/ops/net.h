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

/* per-op state, in the request's area (uu_req_cmd in core/types.h) */
/* SEND, RECV, SENDMSG, RECVMSG, ACCEPT, CONNECT, SOCKET, SHUTDOWN,
 * BIND, LISTEN: what the SQE points to (a msghdr, its iovecs, a
 * socket address) is imported at prep into hdr.mem (struct
 * uu_netmsg in ops/net.c) */
struct uu_net_cmd {
	struct uu_os_hdr hdr;
	uint64_t addr;           /* buffer, user msghdr, accept addr,
				  * SOCKET: domain */
	uint64_t addr2;          /* ACCEPT: the user's addrlen */
	uint32_t len;            /* SOCKET: protocol, LISTEN: backlog */
	uint32_t msg_flags;      /* accept4 flags, SHUTDOWN how,
				  * SOCKET type */
	uint32_t done;           /* bytes moved by earlier tries */
	uint32_t file_slot;      /* ACCEPT, SOCKET: direct descriptor */
	uint16_t flags;          /* IORING_RECVSEND_ / IORING_ACCEPT_ */
	uint8_t st;              /* UU_NET_* (ops/net.c) */
	int8_t kind;             /* socket kind cache (ops/net.c) */
	uint8_t loops;           /* multishot RECV: receives in a row
				  * (the kernel's nr_multishot_loops) */
};

#endif /* UURING_OPS_NET_H */
