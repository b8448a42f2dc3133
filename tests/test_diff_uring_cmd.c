// SPDX-License-Identifier: MIT
/*
 * IORING_OP_URING_CMD, kernel vs uuring (every CQE compared): the socket
 * sub-commands (the kernel's io_uring_cmd_sock: SIOCINQ, SIOCOUTQ,
 * GETSOCKOPT, SETSOCKOPT, TX_TIMESTAMP's refusal without CQE32) on TCP and
 * UDP sockets, plain and fixed, with their errors (bad optlen, level,
 * optname, unmapped option buffers); the answer for files without a
 * ->uring_cmd (pipe, regular file, eventfd, the ring fd), for AF_UNIX
 * sockets (SIOCINQ/SIOCOUTQ need a protocol ioctl method, the options do
 * not), /dev/null's uring_cmd_null, bad fds and fixed slots; the
 * checks of io_uring_cmd_prep (__pad1, unknown flags, FIXED with
 * MULTISHOT, MULTISHOT without provided buffers, ioprio); IOPOLL rings;
 * CQE32 and SQE128 rings; links, IOSQE_ASYNC and CQE_SKIP_SUCCESS; the
 * listener liburing sets up: SOCKET into a fixed slot, linked SETSOCKOPT
 * on that slot, BIND and LISTEN; and PROBE.  TX_TIMESTAMP on a ring with
 * big CQEs is a known divergence (docs/compatibility.md #34).
 *
 * The file-type interface behind it (commands a handler keeps, ends
 * later or has cancelled) is tested, uuring only, by
 * tests/test_uring_cmd_types.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"

#define LIMIT_MS 8000
#define MS 1000000LL

/* include/uapi/linux/io_uring.h's socket sub-commands */
#define SOCK_SIOCINQ 0
#define SOCK_SIOCOUTQ 1
#define SOCK_GETSOCKOPT 2
#define SOCK_SETSOCKOPT 3
#define SOCK_TX_TIMESTAMP 4

#define ISOLATED(sc, body) DISOLATED_SCENARIO(sc, body, LIMIT_MS)

static struct io_uring_sqe *cmdp(struct tring *r, int fd, uint32_t op,
				 uint64_t ud, uint8_t flags)
{
	struct io_uring_sqe *s = tprep(r, IORING_OP_URING_CMD, fd, NULL, 0, 0,
				       ud, flags);

	s->cmd_op = op;
	return s;
}

static struct io_uring_sqe *optp(struct tring *r, int fd, uint32_t op,
				 int level, int optname, void *val,
				 uint32_t len, uint64_t ud, uint8_t flags)
{
	struct io_uring_sqe *s = cmdp(r, fd, op, ud, flags);

	s->level = (uint32_t)level;
	s->optname = (uint32_t)optname;
	s->optval = (uint64_t)(uintptr_t)val;
	s->optlen = len;
	return s;
}

/* uuring creates a thread's wake eventfd at its first wait: before the
 * scenario's own fds (test_diff_net.c's warm) */
static void warm(struct tring *r)
{
	tring_wait(r, 1, 1 * MS);
}

static void await_inq(int fd, int n)
{
	int inq = 0;

	for (int i = 0; i < LIMIT_MS && !ioctl(fd, FIONREAD, &inq) && inq < n;
	     i++)
		usleep(1000);
}

static int udp_bound(struct sockaddr_in *sa)
{
	socklen_t l = sizeof(*sa);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)sa, sizeof(*sa)) ||
	    getsockname(fd, (struct sockaddr *)sa, &l))
		abort();
	return fd;
}

static int tcp_listener(struct sockaddr_in *sa)
{
	socklen_t l = sizeof(*sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)sa, sizeof(*sa)) ||
	    listen(fd, 8) || getsockname(fd, (struct sockaddr *)sa, &l))
		abort();
	return fd;
}

/* ---- TCP ---- */

static long body_tcp(struct dctx *c, void *arg)
{
	struct sockaddr_in sa;
	struct tring r;
	int ln, cl, sv, v, big[4];

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return 0;
	warm(&r);
	ln = tcp_listener(&sa);
	cl = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (cl < 0 || connect(cl, (struct sockaddr *)&sa, sizeof(sa)))
		abort();
	sv = accept4(ln, NULL, NULL, SOCK_CLOEXEC);
	if (sv < 0)
		abort();

	cmdp(&r, sv, SOCK_SIOCINQ, 1, 0);
	dnow_sqp(c, &r, "SIOCINQ, nothing queued");
	twrite(cl, "seven b", 7);
	await_inq(sv, 7);
	cmdp(&r, sv, SOCK_SIOCINQ, 2, 0);
	dnow_sqp(c, &r, "SIOCINQ, 7 bytes queued");
	cmdp(&r, cl, SOCK_SIOCOUTQ, 3, 0);
	dnow_sqp(c, &r, "SIOCOUTQ, all acknowledged");
	cmdp(&r, ln, SOCK_SIOCINQ, 4, 0);
	dnow_sqp(c, &r, "SIOCINQ on a listener: -EINVAL");
	cmdp(&r, ln, SOCK_SIOCOUTQ, 5, 0);
	dnow_sqp(c, &r, "SIOCOUTQ on a listener: -EINVAL");

	/* SO_RCVBUF: set, then read back (the kernel doubles it) */
	v = 65536;
	optp(&r, sv, SOCK_SETSOCKOPT, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v), 10,
	     0);
	dnow_sqp(c, &r, "SETSOCKOPT SO_RCVBUF 65536");
	v = -1;
	optp(&r, sv, SOCK_GETSOCKOPT, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v), 11,
	     0);
	dnow_sqp(c, &r, "GETSOCKOPT SO_RCVBUF: the length");
	drec_int(c, v, "SO_RCVBUF read back");
	/* the option length is what the kernel wrote: longer is cut */
	memset(big, 0xff, sizeof(big));
	optp(&r, sv, SOCK_GETSOCKOPT, SOL_SOCKET, SO_RCVBUF, big, sizeof(big),
	     12, 0);
	dnow_sqp(c, &r, "GETSOCKOPT SO_RCVBUF, 16-byte buffer");
	drec_int(c, big[0], "its first int");
	drec_int(c, big[1], "its second int, untouched");
	v = 7;
	optp(&r, sv, SOCK_GETSOCKOPT, SOL_SOCKET, SO_RCVBUF, &v, 0, 13, 0);
	dnow_sqp(c, &r, "GETSOCKOPT optlen 0");
	drec_int(c, v, "nothing written");
	optp(&r, sv, SOCK_GETSOCKOPT, SOL_SOCKET, SO_RCVBUF, &v, 0xffffffffu,
	     14, 0);
	dnow_sqp(c, &r, "GETSOCKOPT optlen -1: -EINVAL");

	/* SO_REUSEADDR */
	v = -1;
	optp(&r, ln, SOCK_GETSOCKOPT, SOL_SOCKET, SO_REUSEADDR, &v, sizeof(v),
	     20, 0);
	dnow_sqp(c, &r, "GETSOCKOPT SO_REUSEADDR, off");
	drec_int(c, v, "SO_REUSEADDR");
	v = 1;
	optp(&r, ln, SOCK_SETSOCKOPT, SOL_SOCKET, SO_REUSEADDR, &v, sizeof(v),
	     21, 0);
	dnow_sqp(c, &r, "SETSOCKOPT SO_REUSEADDR 1");
	v = -1;
	optp(&r, ln, SOCK_GETSOCKOPT, SOL_SOCKET, SO_REUSEADDR, &v, sizeof(v),
	     22, 0);
	dnow_sqp(c, &r, "GETSOCKOPT SO_REUSEADDR, on");
	drec_int(c, v, "SO_REUSEADDR");
	optp(&r, ln, SOCK_SETSOCKOPT, SOL_SOCKET, SO_REUSEADDR, &v, 2, 23, 0);
	dnow_sqp(c, &r, "SETSOCKOPT optlen 2: -EINVAL");
	optp(&r, ln, SOCK_SETSOCKOPT, SOL_SOCKET, SO_REUSEADDR, &v,
	     0xffffffffu, 24, 0);
	dnow_sqp(c, &r, "SETSOCKOPT optlen -1: -EINVAL");
	optp(&r, ln, SOCK_SETSOCKOPT, SOL_SOCKET, SO_REUSEADDR,
	     dunmapped_addr(), sizeof(v), 25, 0);
	dnow_sqp(c, &r, "SETSOCKOPT unmapped optval: -EFAULT");
	optp(&r, ln, SOCK_GETSOCKOPT, SOL_SOCKET, SO_REUSEADDR,
	     dunmapped_addr(), sizeof(v), 26, 0);
	dnow_sqp(c, &r, "GETSOCKOPT unmapped optval: -EFAULT");
	optp(&r, ln, SOCK_GETSOCKOPT, SOL_SOCKET, 9999, &v, sizeof(v), 27, 0);
	dnow_sqp(c, &r, "GETSOCKOPT unknown optname: -ENOPROTOOPT");
	optp(&r, ln, SOCK_SETSOCKOPT, SOL_SOCKET, 9999, &v, sizeof(v), 28, 0);
	dnow_sqp(c, &r, "SETSOCKOPT unknown optname: -ENOPROTOOPT");

	/* levels: GETSOCKOPT is SOL_SOCKET only, SETSOCKOPT takes any */
	optp(&r, sv, SOCK_GETSOCKOPT, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v),
	     30, 0);
	dnow_sqp(c, &r, "GETSOCKOPT IPPROTO_TCP: -EOPNOTSUPP");
	v = 1;
	optp(&r, sv, SOCK_SETSOCKOPT, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v),
	     31, 0);
	dnow_sqp(c, &r, "SETSOCKOPT TCP_NODELAY 1");
	v = -1;
	{
		socklen_t l = sizeof(v);

		getsockopt(sv, IPPROTO_TCP, TCP_NODELAY, &v, &l);
	}
	drec_int(c, v != 0, "TCP_NODELAY set");
	optp(&r, sv, SOCK_SETSOCKOPT, 9999, 1, &v, sizeof(v), 32, 0);
	dnow_sqp(c, &r, "SETSOCKOPT unknown level");
	optp(&r, sv, SOCK_GETSOCKOPT, 9999, 1, &v, sizeof(v), 33, 0);
	dnow_sqp(c, &r, "GETSOCKOPT unknown level: -EOPNOTSUPP");

	/* sub-commands */
	cmdp(&r, sv, SOCK_TX_TIMESTAMP, 40, 0);
	dnow_sqp(c, &r, "TX_TIMESTAMP without CQE32: -EINVAL");
	cmdp(&r, sv, 99, 41, 0);
	dnow_sqp(c, &r, "cmd_op 99: -EOPNOTSUPP");
	cmdp(&r, sv, 0x80000000u, 42, 0);
	dnow_sqp(c, &r, "cmd_op 1<<31: -EOPNOTSUPP");
	cmdp(&r, sv, 5, 43, 0);
	dnow_sqp(c, &r, "cmd_op 5 (GETSOCKNAME of later kernels)");
	close(cl);
	close(sv);
	close(ln);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_tcp, body_tcp)

/* ---- UDP ---- */

static long body_udp(struct dctx *c, void *arg)
{
	struct sockaddr_in sa;
	struct tring r;
	int fd, v;

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return 0;
	warm(&r);
	fd = udp_bound(&sa);
	cmdp(&r, fd, SOCK_SIOCINQ, 1, 0);
	dnow_sqp(c, &r, "SIOCINQ, empty");
	/* loopback delivery is done when sendto returns */
	sendto(fd, "abcde", 5, 0, (struct sockaddr *)&sa, sizeof(sa));
	sendto(fd, "xyz", 3, 0, (struct sockaddr *)&sa, sizeof(sa));
	cmdp(&r, fd, SOCK_SIOCINQ, 2, 0);
	dnow_sqp(c, &r, "SIOCINQ, two datagrams: the first's size");
	cmdp(&r, fd, SOCK_SIOCOUTQ, 3, 0);
	dnow_sqp(c, &r, "SIOCOUTQ");
	v = -1;
	optp(&r, fd, SOCK_GETSOCKOPT, SOL_SOCKET, SO_TYPE, &v, sizeof(v), 4, 0);
	dnow_sqp(c, &r, "GETSOCKOPT SO_TYPE");
	drec_int(c, v, "SO_TYPE");
	v = 32768;
	optp(&r, fd, SOCK_SETSOCKOPT, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v), 5,
	     0);
	dnow_sqp(c, &r, "SETSOCKOPT SO_RCVBUF");
	v = -1;
	optp(&r, fd, SOCK_GETSOCKOPT, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v), 6,
	     0);
	dnow_sqp(c, &r, "GETSOCKOPT SO_RCVBUF");
	drec_int(c, v, "SO_RCVBUF");
	v = 9;
	optp(&r, fd, SOCK_SETSOCKOPT, IPPROTO_IP, IP_TTL, &v, sizeof(v), 7, 0);
	dnow_sqp(c, &r, "SETSOCKOPT IP_TTL 9");
	{
		socklen_t l = sizeof(v);

		v = -1;
		getsockopt(fd, IPPROTO_IP, IP_TTL, &v, &l);
	}
	drec_int(c, v, "IP_TTL");
	optp(&r, fd, SOCK_GETSOCKOPT, SOL_SOCKET, SO_ERROR, &v, sizeof(v), 8, 0);
	dnow_sqp(c, &r, "GETSOCKOPT SO_ERROR");
	close(fd);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_udp, body_udp)

/* ---- files without ->uring_cmd, and sockets without prot->ioctl ---- */

static long body_not_sock(struct dctx *c, void *arg)
{
	struct tring r;
	int p[2], sp[2], file, null, efd, v = 1;

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return 0;
	warm(&r);
	if (pipe(p) || tsockpair(sp))
		abort();
	file = dtmpfile(c, 64, 1);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	efd = eventfd(0, EFD_CLOEXEC);
	cmdp(&r, p[0], SOCK_SIOCINQ, 1, 0);
	dnow_sqp(c, &r, "pipe: -EOPNOTSUPP");
	cmdp(&r, file, SOCK_SIOCINQ, 2, 0);
	dnow_sqp(c, &r, "regular file: -EOPNOTSUPP");
	cmdp(&r, null, SOCK_SIOCINQ, 3, 0);
	dnow_sqp(c, &r, "/dev/null: 0 (uring_cmd_null)");
	cmdp(&r, null, 12345, 33, IOSQE_ASYNC);
	dnow_sqp(c, &r, "/dev/null, any cmd_op, ASYNC: 0");
	cmdp(&r, efd, SOCK_SIOCINQ, 4, 0);
	dnow_sqp(c, &r, "eventfd: -EOPNOTSUPP");
	cmdp(&r, r.fd, SOCK_SIOCINQ, 5, 0);
	dnow_sqp(c, &r, "the ring itself: -EOPNOTSUPP");
	optp(&r, r.fd, SOCK_GETSOCKOPT, SOL_SOCKET, SO_TYPE, &v, sizeof(v), 9,
	     0);
	dnow_sqp(c, &r, "GETSOCKOPT on the ring itself: -EOPNOTSUPP");
	cmdp(&r, 9999, SOCK_SIOCINQ, 6, 0);
	dnow_sqp(c, &r, "bad fd: -EBADF");
	cmdp(&r, -1, SOCK_SIOCINQ, 7, 0);
	dnow_sqp(c, &r, "fd -1: -EBADF");
	cmdp(&r, 3, SOCK_SIOCINQ, 8, IOSQE_FIXED_FILE);
	dnow_sqp(c, &r, "fixed, no table: -EBADF");
	/* AF_UNIX: a socket whose protocol has no ioctl method */
	twrite(sp[0], "abc", 3);
	cmdp(&r, sp[1], SOCK_SIOCINQ, 10, 0);
	dnow_sqp(c, &r, "unix SIOCINQ: -EOPNOTSUPP");
	cmdp(&r, sp[1], SOCK_SIOCOUTQ, 11, 0);
	dnow_sqp(c, &r, "unix SIOCOUTQ: -EOPNOTSUPP");
	optp(&r, sp[1], SOCK_GETSOCKOPT, SOL_SOCKET, SO_TYPE, &v, sizeof(v), 12,
	     0);
	dnow_sqp(c, &r, "unix GETSOCKOPT: no ioctl needed");
	drec_int(c, v, "SO_TYPE");
	v = 4096;
	optp(&r, sp[1], SOCK_SETSOCKOPT, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v),
	     13, 0);
	dnow_sqp(c, &r, "unix SETSOCKOPT");
	cmdp(&r, sp[1], SOCK_TX_TIMESTAMP, 14, 0);
	dnow_sqp(c, &r, "unix TX_TIMESTAMP: -EINVAL");
	cmdp(&r, sp[1], 77, 15, 0);
	dnow_sqp(c, &r, "unix cmd_op 77: -EOPNOTSUPP");
	close(file);
	close(null);
	close(efd);
	tclose2(p);
	tclose2(sp);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_not_sock, body_not_sock)

/* ---- io_uring_cmd_prep and io_init_req ---- */

static long body_prep(struct dctx *c, void *arg)
{
	struct sockaddr_in sa;
	struct io_uring_sqe *s;
	struct tring r;
	int fd;

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return 0;
	warm(&r);
	fd = udp_bound(&sa);
	s = cmdp(&r, fd, SOCK_SIOCINQ, 1, 0);
	s->__pad1 = 1;
	dnow_sqp(c, &r, "__pad1: -EINVAL");
	s = cmdp(&r, fd, SOCK_SIOCINQ, 2, 0);
	s->uring_cmd_flags = 1u << 2;
	dnow_sqp(c, &r, "unknown uring_cmd_flags: -EINVAL");
	s = cmdp(&r, fd, SOCK_SIOCINQ, 3, IOSQE_BUFFER_SELECT);
	s->uring_cmd_flags = IORING_URING_CMD_FIXED |
			     IORING_URING_CMD_MULTISHOT;
	dnow_sqp(c, &r, "FIXED and MULTISHOT: -EINVAL");
	s = cmdp(&r, fd, SOCK_SIOCINQ, 4, 0);
	s->uring_cmd_flags = IORING_URING_CMD_MULTISHOT;
	dnow_sqp(c, &r, "MULTISHOT without BUFFER_SELECT: -EINVAL");
	cmdp(&r, fd, SOCK_SIOCINQ, 5, IOSQE_BUFFER_SELECT);
	dnow_sqp(c, &r, "BUFFER_SELECT without MULTISHOT: -EINVAL");
	/*
	 * A multishot socket command that succeeds never completes on the
	 * kernel (IOU_ISSUE_SKIP_COMPLETE, and the socket posts nothing):
	 * not run here, since on an SQPOLL ring the kernel's SQ thread then
	 * never exits (io_uring_cancel_generic waits for it for ever).
	 * tests/test_uring_cmd_types checks that uuring posts nothing too.
	 */
	s = cmdp(&r, fd, 99, 56, IOSQE_BUFFER_SELECT);
	s->uring_cmd_flags = IORING_URING_CMD_MULTISHOT;
	dnow_sqp(c, &r, "MULTISHOT, cmd_op 99: -EOPNOTSUPP");
	s = cmdp(&r, fd, SOCK_SIOCINQ, 6, 0);
	s->uring_cmd_flags = IORING_URING_CMD_FIXED;
	s->buf_index = 7;
	dnow_sqp(c, &r, "FIXED, no buffer 7: imported only by a driver");
	s = cmdp(&r, fd, SOCK_SIOCINQ, 7, 0);
	s->ioprio = 1;
	dnow_sqp(c, &r, "ioprio: -EINVAL");
	s = cmdp(&r, fd, SOCK_SIOCINQ, 8, 0);
	s->len = 5;
	s->addr = 0x1000;
	dnow_sqp(c, &r, "len and addr are not looked at");
	/* a prep error ends the submission, the NOP goes next time */
	{
		struct io_uring_sqe t = tsqe(IORING_OP_URING_CMD, fd, 0, 0, 0,
					     9);

		t.__pad1 = 3;
		dsubmit_nop(c, &r, &t, 10, "bad URING_CMD then NOP");
		dreapn(c, &r, 2, true, "bad URING_CMD then NOP");
	}
	close(fd);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_prep, body_prep)

/* ---- fixed files, links, ASYNC, CQE_SKIP ---- */

static long body_fixed_links(struct dctx *c, void *arg)
{
	struct sockaddr_in sa;
	struct tring r;
	int fd, p[2], table[2], v = 1;

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return 0;
	warm(&r);
	fd = udp_bound(&sa);
	if (pipe(p))
		abort();
	table[0] = fd;
	table[1] = p[0];
	drec_int(c, r.be->reg((unsigned int)r.fd, IORING_REGISTER_FILES, table,
			      2), "register the socket and a pipe");
	sendto(fd, "fixed", 5, 0, (struct sockaddr *)&sa, sizeof(sa));
	cmdp(&r, 0, SOCK_SIOCINQ, 1, IOSQE_FIXED_FILE);
	dnow_sqp(c, &r, "fixed SIOCINQ");
	optp(&r, 0, SOCK_GETSOCKOPT, SOL_SOCKET, SO_TYPE, &v, sizeof(v), 2,
	     IOSQE_FIXED_FILE);
	dnow_sqp(c, &r, "fixed GETSOCKOPT SO_TYPE");
	drec_int(c, v, "SO_TYPE");
	cmdp(&r, 1, SOCK_SIOCINQ, 3, IOSQE_FIXED_FILE);
	dnow_sqp(c, &r, "fixed pipe: -EOPNOTSUPP");
	cmdp(&r, 5, SOCK_SIOCINQ, 4, IOSQE_FIXED_FILE);
	dnow_sqp(c, &r, "fixed slot out of range: -EBADF");

	/* an error breaks the chain, a result does not */
	cmdp(&r, p[0], SOCK_SIOCINQ, 10, IOSQE_IO_LINK);
	tprep_nop(&r, 11, 0);
	dsubmit_sqp(c, &r, "failing command, linked NOP");
	dreapn(c, &r, 2, true, "failing command, linked NOP");
	v = 1;
	optp(&r, fd, SOCK_SETSOCKOPT, SOL_SOCKET, SO_REUSEADDR, &v, sizeof(v),
	     12, IOSQE_IO_LINK);
	cmdp(&r, fd, SOCK_SIOCINQ, 13, IOSQE_IO_LINK);
	tprep_nop(&r, 14, 0);
	dsubmit_sqp(c, &r, "SETSOCKOPT, SIOCINQ, NOP linked");
	dreapn(c, &r, 3, true, "SETSOCKOPT, SIOCINQ, NOP linked");
	cmdp(&r, fd, SOCK_SIOCINQ, 15, IOSQE_ASYNC);
	dnow_sqp(c, &r, "IOSQE_ASYNC SIOCINQ");
	cmdp(&r, fd, SOCK_SIOCOUTQ, 16, IOSQE_CQE_SKIP_SUCCESS);
	tprep_nop(&r, 17, 0);
	dsubmit_sqp(c, &r, "CQE_SKIP_SUCCESS SIOCOUTQ, NOP");
	dreapn(c, &r, 1, true, "CQE_SKIP_SUCCESS SIOCOUTQ, NOP");
	cmdp(&r, p[0], SOCK_SIOCOUTQ, 18, IOSQE_CQE_SKIP_SUCCESS);
	dnow_sqp(c, &r, "CQE_SKIP_SUCCESS on a failure");
	tclose2(p);
	close(fd);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_fixed_links, body_fixed_links)

/* ---- liburing's listener: SOCKET direct -> SETSOCKOPT -> BIND -> LISTEN */

static long body_listener(struct dctx *c, void *arg)
{
	struct sockaddr_in sa;
	struct io_uring_sqe *s;
	struct tring r;
	socklen_t l;
	int table[2] = { -1, -1 }, one = 1, fd, v;

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return 0;
	warm(&r);
	drec_int(c, r.be->reg((unsigned int)r.fd, IORING_REGISTER_FILES, table,
			      2), "register 2 empty slots");
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = tprep(&r, IORING_OP_SOCKET, AF_INET, NULL, 0, SOCK_STREAM, 1,
		  IOSQE_IO_LINK);
	s->file_index = 2; /* slot 1 */
	optp(&r, 1, SOCK_SETSOCKOPT, SOL_SOCKET, SO_REUSEADDR, &one,
	     sizeof(one), 2, IOSQE_FIXED_FILE | IOSQE_IO_LINK);
	tprep(&r, IORING_OP_BIND, 1, &sa, 0, sizeof(sa), 3,
	      IOSQE_FIXED_FILE | IOSQE_IO_LINK);
	tprep(&r, IORING_OP_LISTEN, 1, NULL, 16, 0, 4, IOSQE_FIXED_FILE);
	dsubmit_sqp(c, &r, "listener chain");
	dreapn(c, &r, 4, true, "listener chain");
	/* look at it through a regular fd */
	tprep(&r, IORING_OP_FIXED_FD_INSTALL, 1, NULL, 0, 0, 5,
	      IOSQE_FIXED_FILE);
	tring_submit(&r);
	{
		/* its fd number is not compared: the engine holds fds */
		struct tcqe q;

		fd = tring_reap_wait(&r, &q, 1, 2000 * MS) == 1 ? q.res : -1;
	}
	drec_int(c, fd >= 0, "installed");
	if (fd >= 0) {
		l = sizeof(v);
		v = -1;
		getsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &v, &l);
		drec_int(c, v, "SO_REUSEADDR of the listener");
		l = sizeof(v);
		v = -1;
		getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &l);
		drec_int(c, v, "SO_ACCEPTCONN of the listener");
		close(fd);
	}
	/* the same chain with a SETSOCKOPT that fails: the rest cancelled */
	s = tprep(&r, IORING_OP_SOCKET, AF_INET, NULL, 0, SOCK_STREAM, 11,
		  IOSQE_IO_LINK);
	s->file_index = 1; /* slot 0 */
	optp(&r, 0, SOCK_SETSOCKOPT, SOL_SOCKET, SO_REUSEADDR, &one, 1, 12,
	     IOSQE_FIXED_FILE | IOSQE_IO_LINK);
	tprep(&r, IORING_OP_BIND, 0, &sa, 0, sizeof(sa), 13,
	      IOSQE_FIXED_FILE | IOSQE_IO_LINK);
	tprep(&r, IORING_OP_LISTEN, 0, NULL, 16, 0, 14, IOSQE_FIXED_FILE);
	dsubmit_sqp(c, &r, "chain with a bad optlen");
	dreapn(c, &r, 4, true, "chain with a bad optlen");
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_listener, body_listener)

/* ---- ring flavours: IOPOLL, CQE32, SQE128 ---- */

static long body_rings(struct dctx *c, void *arg)
{
	struct sockaddr_in sa;
	struct io_uring_sqe *s;
	struct tcqe q;
	struct tring r;
	int fd, v = -1;

	(void)arg;
	fd = udp_bound(&sa);
	sendto(fd, "abcdef", 6, 0, (struct sockaddr *)&sa, sizeof(sa));
	if (!dring_flags(c, &r, 8, IORING_SETUP_IOPOLL)) {
		cmdp(&r, fd, SOCK_SIOCINQ, 1, 0);
		dnow_sqp(c, &r, "IOPOLL: -EOPNOTSUPP");
		tring_exit(&r);
	}
	if (!dring_flags(c, &r, 8, IORING_SETUP_CQE32)) {
		optp(&r, fd, SOCK_GETSOCKOPT, SOL_SOCKET, SO_TYPE, &v,
		     sizeof(v), 2, 0);
		tring_submit(&r);
		if (tring_reap_wait(&r, &q, 1, 2000 * MS) == 1) {
			drec_int(c, q.res, "CQE32 GETSOCKOPT res");
			drec_int(c, (long)q.big[0], "CQE32 big[0]");
			drec_int(c, (long)q.big[1], "CQE32 big[1]");
		}
		cmdp(&r, fd, SOCK_SIOCINQ, 3, 0);
		dnow_sqp(c, &r, "CQE32 SIOCINQ");
		tring_exit(&r);
	}
	if (!dring_flags(c, &r, 8, IORING_SETUP_SQE128)) {
		s = cmdp(&r, fd, SOCK_SIOCINQ, 4, 0);
		memset(s->cmd, 0xab, 80); /* command bytes: not looked at */
		dnow_sqp(c, &r, "SQE128 SIOCINQ");
		v = -1;
		optp(&r, fd, SOCK_GETSOCKOPT, SOL_SOCKET, SO_TYPE, &v,
		     sizeof(v), 5, 0);
		dnow_sqp(c, &r, "SQE128 GETSOCKOPT");
		drec_int(c, v, "SO_TYPE");
		tring_exit(&r);
	}
	close(fd);
	return 0;
}
ISOLATED(sc_rings, body_rings)

/*
 * TX_TIMESTAMP on a ring with big CQEs (CQE32, or CQE_MIXED): the kernel
 * arms a multishot poll on the error queue and posts nothing until a
 * timestamp is queued; uuring refuses it (-EOPNOTSUPP).
 */
static long body_tx_timestamp(struct dctx *c, void *arg)
{
	static const unsigned int flags[] = { IORING_SETUP_CQE32,
					      IORING_SETUP_CQE_MIXED };
	struct sockaddr_in sa;
	struct tring r;
	int fd;

	(void)arg;
	fd = udp_bound(&sa);
	for (unsigned int i = 0; i < 2; i++) {
		if (dring_flags(c, &r, 8, flags[i]))
			continue;
		cmdp(&r, fd, SOCK_TX_TIMESTAMP, 1, 0);
		dsubmit_sqp(c, &r, "TX_TIMESTAMP, big CQEs");
		dnone_sqp(c, &r, 50, "TX_TIMESTAMP, big CQEs");
		tring_exit(&r);
	}
	close(fd);
	return 0;
}
ISOLATED(sc_tx_timestamp, body_tx_timestamp)

static void sc_probe(struct dctx *c)
{
	static const int ops[] = { IORING_OP_URING_CMD };

	dprobe_ops(c, ops, NULL, 1);
}

static const struct dscenario scenarios[] = {
	{ "cmd_tcp", sc_tcp, NULL },
	{ "cmd_udp", sc_udp, NULL },
	{ "cmd_not_socket", sc_not_sock, NULL },
	{ "cmd_prep", sc_prep, NULL },
	{ "cmd_fixed_links", sc_fixed_links, NULL },
	{ "cmd_listener_chain", sc_listener, NULL },
	{ "cmd_rings", sc_rings, NULL },
	{ "cmd_probe", sc_probe, NULL },
	{ "cmd_tx_timestamp_big_cqes", sc_tx_timestamp, NULL,
	  "docs/compatibility.md #34" },
};

DTEST_MAIN(scenarios)
