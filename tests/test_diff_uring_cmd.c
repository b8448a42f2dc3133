// SPDX-License-Identifier: MIT
/*
 * IORING_OP_URING_CMD, kernel vs uuring (every CQE compared): the socket
 * sub-commands (the kernel's io_uring_cmd_sock: SIOCINQ, SIOCOUTQ,
 * GETSOCKOPT, SETSOCKOPT, TX_TIMESTAMP's refusal without CQE32) on TCP and
 * UDP sockets, plain and fixed, with their errors (bad optlen, level,
 * optname, unmapped option buffers); the answer for files without a
 * ->uring_cmd (pipe, regular file, /dev/null, eventfd, AF_UNIX sockets,
 * whose protocol has no ioctl method), bad fds and fixed slots; the
 * checks of io_uring_cmd_prep (__pad1, unknown flags, FIXED with
 * MULTISHOT, MULTISHOT without provided buffers, ioprio); IOPOLL rings;
 * CQE32 and SQE128 rings; links, IOSQE_ASYNC and CQE_SKIP_SUCCESS; the
 * listener liburing sets up: SOCKET into a fixed slot, linked SETSOCKOPT
 * on that slot, BIND and LISTEN; and PROBE.  TX_TIMESTAMP on a ring with
 * big CQEs is a known divergence (docs/compatibility.md #34).
 *
 * Then, uuring only (no file on this machine gives the kernel a command
 * that stays queued): a file type registered through ops/uring_cmd.h that
 * parks its commands, ends them from another thread (res2 in the big
 * CQE), ends one inside its stable call, sends one to io-wq with -EAGAIN,
 * marks some cancelable, and sees the cancel call at ring exit, not at an
 * ASYNC_CANCEL (-ENOENT, as the kernel's io_try_cancel answers), with a
 * done from another thread during that call held back until it returns.
 * Those run after the differential scenarios ("cmd_type*" names select
 * them alone; UURING_TEST_BACKEND=kernel skips them).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dtest.h"
#include "tcheck.h"
#include "tprep.h"
#include "ops/uring_cmd.h"

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

/* ==== uuring only: a file type of the test's own (ops/uring_cmd.h) ==== */

enum {
	TT_SYNC = 1,       /* ends at once: 1000 + payload[0] */
	TT_WORKER,         /* -EAGAIN, then 2000 in an io-wq worker */
	TT_QUEUE,          /* parks; kept in slot payload[0]; payload[1]:
			    * cancelable; payload[2]: how the cancel call
			    * ends it (1 in the call, 2 from a thread) */
	TT_DONE_INLINE,    /* parks, ends inside its stable call: 4000 */
	TT_LOOK,           /* ends with what it saw (see tt_look) */
};

#define TT_SLOTS 8
static dev_t tt_dev;
static ino_t tt_ino;
static struct uu_req *_Atomic tt_slot[TT_SLOTS];
static atomic_int tt_cancel_calls, tt_cancel_mask, tt_worker_calls;
static atomic_int tt_stable_calls;

static bool tt_match(int fd, const struct stat *st)
{
	(void)fd;
	return S_ISREG(st->st_mode) && st->st_dev == tt_dev &&
	       st->st_ino == tt_ino;
}

static const unsigned char *tt_bytes(const struct uu_req *req, size_t *len)
{
	return uu_cmd_payload(req, len);
}

static void *tt_done_thread(void *arg)
{
	uu_uring_cmd_done(arg, -ECANCELED, 0xdd, 0);
	return NULL;
}

static int tt_cancel(struct uu_req *req, unsigned int flags)
{
	size_t len;
	const unsigned char *b = tt_bytes(req, &len);
	pthread_t t;

	atomic_fetch_add(&tt_cancel_calls, 1);
	atomic_fetch_or(&tt_cancel_mask, 1 << b[0]);
	atomic_store(&tt_slot[b[0]], NULL);
	if (b[2] == 1) {
		uu_uring_cmd_done(req, -ECANCELED, 0xcc, flags);
	} else if (b[2] == 2) {
		/* a done from another thread during the cancel call: held
		 * until this call returns, so req is still ours here */
		pthread_create(&t, NULL, tt_done_thread, req);
		pthread_join(t, NULL);
		if (uu_cmd_op(req) != TT_QUEUE)
			abort();
	}
	return 0;
}

/* what a handler reads: op, payload size, flags, fd, task */
static int tt_look(struct uu_req *req, unsigned int flags)
{
	size_t len;
	const unsigned char *b = tt_bytes(req, &len);
	struct stat st;
	int ok = 0;

	ok |= (len == ((flags & UU_CMD_F_SQE128) ? 80u : 16u)) << 0;
	ok |= (b[len - 1] == 0x5a) << 1;
	ok |= (!fstat(uu_cmd_fd(req), &st) && tt_match(-1, &st)) << 2;
	ok |= (uu_cmd_task(req) > 0) << 3;
	ok |= (uu_cmd_user_data(req) == 0x1100) << 4;
	ok |= !!(flags & UU_CMD_F_CQE32) << 5;
	ok |= (uu_cmd_flags(req) == IORING_URING_CMD_FIXED &&
	       uu_cmd_buf_index(req) == 3) << 6;
	ok |= (uu_cmd_sqe(req)->cmd_op == TT_LOOK) << 7;
	return ok;
}

static int tt_issue(struct uu_req *req, unsigned int flags)
{
	size_t len;
	const unsigned char *b = tt_bytes(req, &len);

	if (flags & UU_CMD_F_CANCEL)
		return tt_cancel(req, flags);
	switch (uu_cmd_op(req)) {
	case TT_SYNC:
		return 1000 + b[0];
	case TT_WORKER:
		if (!(flags & 1u)) /* UU_ISSUE_F_WORKER */
			return -EAGAIN;
		atomic_fetch_add(&tt_worker_calls, 1);
		return 2000;
	case TT_QUEUE:
		if (!(flags & UU_CMD_F_STABLE))
			return UU_CMD_PARK;
		atomic_fetch_add(&tt_stable_calls, 1);
		memcpy(uu_cmd_pdu(req), "pdu", 4);
		if (b[1])
			uu_uring_cmd_mark_cancelable(req, flags);
		atomic_store(&tt_slot[b[0] % TT_SLOTS], req);
		return UU_CMD_QUEUED;
	case TT_DONE_INLINE:
		if (!(flags & UU_CMD_F_STABLE))
			return UU_CMD_PARK;
		uu_uring_cmd_done(req, 4000, 0x44, flags);
		return UU_CMD_QUEUED;
	case TT_LOOK:
		return tt_look(req, flags);
	default:
		return -EOPNOTSUPP;
	}
}

static const struct uu_cmd_file_type tt_type = {
	.name = "test",
	.match = tt_match,
	.issue = tt_issue,
};

static struct io_uring_sqe *ttp(struct tring *r, int fd, uint32_t op,
				uint8_t b0, uint8_t b1, uint8_t b2,
				uint64_t ud, uint8_t flags)
{
	struct io_uring_sqe *s = cmdp(r, fd, op, ud, flags);

	s->cmd[0] = b0;
	s->cmd[1] = b1;
	s->cmd[2] = b2;
	return s;
}

static struct uu_req *tt_take(int slot)
{
	struct uu_req *req = NULL;

	for (int i = 0; i < 2000 && !req; i++) {
		req = atomic_exchange(&tt_slot[slot], NULL);
		if (!req)
			usleep(1000); /* the SQ thread issues it (SQPOLL) */
	}
	return req;
}

struct tt_end {
	struct uu_req *req;
	int32_t res;
	uint64_t res2;
};

static void *tt_end_thread(void *arg)
{
	struct tt_end *e = arg;

	uu_uring_cmd_done(e->req, e->res, e->res2, 0);
	return NULL;
}

/* ends req from a thread of its own: no engine context there */
static void tt_end(struct uu_req *req, int32_t res, uint64_t res2)
{
	struct tt_end e = { req, res, res2 };
	pthread_t t;

	if (!req)
		return;
	pthread_create(&t, NULL, tt_end_thread, &e);
	pthread_join(t, NULL);
}

/* submits what is queued; on an SQPOLL ring wakes the SQ thread as
 * liburing does and waits until it has taken the SQEs */
static void tt_submit(struct tring *r)
{
	unsigned int n = tring_flush(r);

	r->be->enter((unsigned int)r->fd, n, 0,
		     tring_sqpoll_wakeup_flag(r, n), NULL, 0);
	tring_sqpoll_await_sq_taken(r, 2000);
}

static int tt_reap(struct tring *r, struct tcqe *q, unsigned int n)
{
	return (int)tring_reap_wait(r, q, n, 2000 * MS);
}

struct tt_thread_sub {
	struct tring *r;
	int fd;
};

/* another thread submits a cancelable command, then exits */
static void *tt_thread_submit(void *arg)
{
	struct tt_thread_sub *ts = arg;

	ttp(ts->r, ts->fd, TT_QUEUE, 7, 1, 1, 27, 0);
	tt_submit(ts->r);
	if (!(ts->r->flags & IORING_SETUP_SQPOLL))
		atomic_store(&tt_slot[7], NULL); /* ended by the exit */
	return NULL;
}

static void tt_mode(const char *mode, unsigned int flags, int fd)
{
	struct tring r;
	struct tcqe q[4];
	struct io_uring_sqe *s;
	int table[1] = { fd }, n;

	printf("# cmd_type: %s ring\n", mode);
	if (tring_init(&r, &backend_uuring, 16, flags | IORING_SETUP_CQE32)) {
		CHECK(0, "%s: ring setup", mode);
		return;
	}
	ttp(&r, fd, TT_SYNC, 7, 0, 0, 1, 0);
	tt_submit(&r);
	CHECK(tt_reap(&r, q, 1) == 1 && q[0].res == 1007 && !q[0].big[0],
	      "%s: SYNC: %d", mode, q[0].res);
	ttp(&r, fd, TT_WORKER, 0, 0, 0, 2, 0);
	tt_submit(&r);
	CHECK(tt_reap(&r, q, 1) == 1 && q[0].res == 2000 &&
		      atomic_load(&tt_worker_calls) > 0,
	      "%s: -EAGAIN then a worker: %d", mode, q[0].res);
	ttp(&r, fd, TT_DONE_INLINE, 0, 0, 0, 3, 0);
	tt_submit(&r);
	CHECK(tt_reap(&r, q, 1) == 1 && q[0].res == 4000 &&
		      q[0].big[0] == 0x44 && q[0].big[1] == 0,
	      "%s: done in the stable call: %d big %llx", mode, q[0].res,
	      (unsigned long long)q[0].big[0]);
	r.be->reg((unsigned int)r.fd, IORING_REGISTER_FILES, table, 1);
	s = ttp(&r, 0, TT_LOOK, 0, 0, 0, 0x1100, IOSQE_FIXED_FILE);
	s->uring_cmd_flags = IORING_URING_CMD_FIXED;
	s->buf_index = 3;
	s->cmd[15] = 0x5a;
	tt_submit(&r);
	CHECK(tt_reap(&r, q, 1) == 1 && q[0].res == 0xff,
	      "%s: what the handler saw (fixed file): %#x", mode, q[0].res);

	/* queued: ended from another thread; ASYNC_CANCEL does not reach
	 * it, cancelable or not (-ENOENT) */
	ttp(&r, fd, TT_QUEUE, 0, 0, 0, 10, 0);
	ttp(&r, fd, TT_QUEUE, 1, 1, 1, 11, 0);
	tt_submit(&r);
	struct uu_req *a = tt_take(0), *b = tt_take(1);

	CHECK(a && b, "%s: both queued", mode);
	CHECK(a && !memcmp(uu_cmd_pdu(a), "pdu", 4), "%s: pdu", mode);
	CHECK(tring_wait(&r, 1, 30 * MS) == -ETIME, "%s: no CQE while queued",
	      mode);
	tprep(&r, IORING_OP_ASYNC_CANCEL, -1, (void *)(uintptr_t)11, 0, 0, 12,
	      0);
	tt_submit(&r);
	CHECK(tt_reap(&r, q, 1) == 1 && q[0].user_data == 12 &&
		      q[0].res == -ENOENT,
	      "%s: ASYNC_CANCEL of a queued command: %d", mode, q[0].res);
	tt_end(a, 42, 0xabc);
	tt_end(b, -EIO, 0);
	n = tt_reap(&r, q, 2);
	CHECK(n == 2 && q[0].user_data == 10 && q[0].res == 42 &&
		      q[0].big[0] == 0xabc && q[1].user_data == 11 &&
		      q[1].res == -EIO,
	      "%s: ended from a thread: %d CQEs, %d %d", mode, n, q[0].res,
	      q[1].res);

	/* a negative result breaks its chain */
	ttp(&r, fd, TT_QUEUE, 2, 0, 0, 20, IOSQE_IO_LINK);
	tprep_nop(&r, 21, 0);
	tt_submit(&r);
	tt_end(tt_take(2), -5, 0);
	n = tt_reap(&r, q, 2);
	CHECK(n == 2 && q[0].res == -5 && q[1].user_data == 21 &&
		      q[1].res == -ECANCELED,
	      "%s: chain after -5: %d CQEs, %d %d", mode, n, q[0].res,
	      q[1].res);

	/* a LINK_TIMEOUT does not cancel it either: -ENOENT, and the
	 * command ends when its handler says (io_req_task_link_timeout;
	 * uuring posts the timeout's CQE with the command's, where the
	 * kernel posts it when it fires: docs/compatibility.md #34) */
	{
		struct __kernel_timespec ts = { 0, 10 * MS };
		struct uu_req *lt_cmd;

		ttp(&r, fd, TT_QUEUE, 6, 1, 1, 25, IOSQE_IO_LINK);
		tprep(&r, IORING_OP_LINK_TIMEOUT, -1, &ts, 1, 0, 26, 0);
		tt_submit(&r);
		lt_cmd = tt_take(6);
		tring_wait(&r, 1, 30 * MS); /* the timeout fires meanwhile */
		tt_end(lt_cmd, 6, 0);
		n = tt_reap(&r, q, 2);
		CHECK(n == 2 && q[0].user_data + q[1].user_data == 51 &&
			      (q[0].user_data == 26 ? q[0].res : q[1].res) ==
				      -ENOENT &&
			      (q[0].user_data == 25 ? q[0].res : q[1].res) == 6,
		      "%s: LINK_TIMEOUT on a queued command: %d CQEs, %d %d",
		      mode, n, q[0].res, q[1].res);
	}

	/* a task's exit: the cancelable commands it submitted (on an
	 * SQPOLL ring the SQ thread submits them: not cancelled) */
	{
		struct tt_thread_sub ts = { &r, fd };
		bool sq = flags & IORING_SETUP_SQPOLL;
		pthread_t t;

		atomic_store(&tt_cancel_calls, 0);
		if (!(flags & IORING_SETUP_SINGLE_ISSUER)) {
			pthread_create(&t, NULL, tt_thread_submit, &ts);
			pthread_join(t, NULL);
			CHECK(atomic_load(&tt_cancel_calls) == !sq,
			      "%s: cancel calls at a thread's exit: %d", mode,
			      atomic_load(&tt_cancel_calls));
			if (sq)
				tt_end(tt_take(7), -ECANCELED, 0xcc);
			n = tt_reap(&r, q, 1);
			CHECK(n == 1 && q[0].user_data == 27 &&
				      q[0].res == -ECANCELED &&
				      q[0].big[0] == 0xcc,
			      "%s: the exited thread's command: %d CQEs, %d",
			      mode, n, q[0].res);
		}
	}

	/* ring exit: the cancel call for the cancelable ones only */
	atomic_store(&tt_cancel_calls, 0);
	atomic_store(&tt_cancel_mask, 0);
	ttp(&r, fd, TT_QUEUE, 3, 1, 1, 30, 0);
	ttp(&r, fd, TT_QUEUE, 4, 1, 2, 31, 0);
	ttp(&r, fd, TT_QUEUE, 5, 0, 0, 32, 0);
	tt_submit(&r);
	struct uu_req *keep = tt_take(5);

	CHECK(tt_take(3) && tt_take(4) && keep, "%s: three queued", mode);
	/* the slots are read back by the cancel call itself */
	atomic_store(&tt_slot[3], NULL);
	tring_exit(&r);
	CHECK(atomic_load(&tt_cancel_calls) == 2 &&
		      atomic_load(&tt_cancel_mask) == ((1 << 3) | (1 << 4)),
	      "%s: cancel calls at exit: %d (mask %#x)", mode,
	      atomic_load(&tt_cancel_calls), atomic_load(&tt_cancel_mask));
	/* the one that was not cancelable is still the handler's */
	tt_end(keep, 0, 0);
}

/* only: a mode's name ("cmd_type_sqpoll" runs that one), or NULL */
static int tt_main(const char *only)
{
	static const struct {
		const char *name;
		unsigned int flags;
	} modes[] = {
		{ "plain", 0 },
		{ "coop", IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG },
		{ "defer", IORING_SETUP_DEFER_TASKRUN |
				   IORING_SETUP_SINGLE_ISSUER },
		{ "sqpoll", IORING_SETUP_SQPOLL },
	};
	struct stat st;
	int fd;

	/* each mode is run here: no flags added by the ring-mode reruns */
	unsetenv("UURING_TEST_RING_MODE");
	fd = memfd_create("uu-test-cmd", MFD_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		return 1;
	tt_dev = st.st_dev;
	tt_ino = st.st_ino;
	CHECK(uu_cmd_register_file_type(&tt_type) == 0, "register");
	CHECK(uu_cmd_register_file_type(&tt_type) == -EEXIST, "twice");
	for (unsigned int i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!only || !strcmp(only, modes[i].name))
			tt_mode(modes[i].name, modes[i].flags, fd);
	close(fd);
	printf("%s cmd_type (uuring only)\n", tcheck_failures ? "FAIL" : "ok  ");
	return tcheck_failures ? 1 : 0;
}

static bool tt_selected(int argc, char **argv, bool *diff_too,
			const char **only)
{
	bool any = false;

	*diff_too = argc < 2;
	*only = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "cmd_type", 8)) {
			any = true;
			if (argv[i][8] == '_')
				*only = argv[i] + 9;
		} else {
			*diff_too = true;
		}
	}
	return argc < 2 || any;
}

int main(int argc, char **argv)
{
	const char *only;
	bool diff_too;
	bool type = tt_selected(argc, argv, &diff_too, &only);
	int ret = 0;

	if (diff_too) {
		ret = dtest_main(argc, argv, scenarios,
				 sizeof(scenarios) / sizeof(scenarios[0]));
		if (ret == 77)
			return ret;
	}
	if (type && backend_under_test()->kind == BACKEND_UURING) {
		/* in a child: the registered type stays for the process */
		pid_t pid = fork();
		int st = 0;

		if (pid == 0) {
			int fail = tt_main(only);

			fflush(stdout);
			_exit(fail);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			ret = 1;
	}
	return ret;
}
