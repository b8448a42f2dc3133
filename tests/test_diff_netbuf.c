// SPDX-License-Identifier: MIT
/*
 * Differential tests: provided buffers on sockets.  RECV and RECVMSG with
 * IOSQE_BUFFER_SELECT (legacy PROVIDE_BUFFERS groups and registered
 * buffer rings), one-shot and IORING_RECV_MULTISHOT, and READ with
 * IOSQE_BUFFER_SELECT on a socket; loopback only (AF_UNIX socketpairs,
 * UDP on 127.0.0.1).
 *
 * Covered: the buffer a receive takes (IORING_CQE_F_BUFFER and its id),
 * the length cap (sqe->len, RECVMSG's single iovec), -ENOBUFS for an
 * empty or unknown group, that a receive waiting for data does not
 * consume its buffer (REMOVE_BUFFERS counts and PBUF_STATUS heads while
 * it waits), that a receive of 0 (EOF) or an error gives the buffer back
 * (no flag), io-wq (IOSQE_ASYNC), cancellation, the prep checks of
 * multishot (no BUFFER_SELECT, a length, MSG_WAITALL, a negative name
 * length), multishot CQEs with IORING_CQE_F_MORE, its ends (-ENOBUFS,
 * EOF, cancellation, a full CQ), and the io_uring_recvmsg_out layout of
 * multishot RECVMSG (name, control data, MSG_TRUNC, a buffer too small
 * for the header: -EFAULT), and a multishot RECV fed as a program
 * feeds it: every buffer given back to the ring once its CQE is reaped,
 * all of them out at times (no -ENOBUFS, no buffer lost).
 *
 * Every scenario body runs isolated (disolated) with a time limit.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"

#define LIMIT_MS 8000
#define SEC 1000000000LL
#define MS 1000000LL
#define PS 4096

#define ISOLATED(sc, body) DISOLATED_SCENARIO(sc, body, LIMIT_MS)

/* RECV (or RECVMSG with a msghdr) selecting from group bgid */
static struct io_uring_sqe *recv_sel(struct tring *r, int op, int fd,
				     const void *addr, unsigned int len,
				     uint16_t bgid, uint16_t ioprio,
				     uint64_t ud)
{
	struct io_uring_sqe *s = tprep(r, op, fd, addr, len, 0, ud,
				       IOSQE_BUFFER_SELECT);

	s->buf_group = bgid;
	s->ioprio = ioprio;
	return s;
}

static struct io_uring_sqe *provide(struct tring *r, void *addr,
				    unsigned int len, int nbufs, uint16_t bgid,
				    uint64_t bid, uint64_t ud)
{
	struct io_uring_sqe *s = tprep(r, IORING_OP_PROVIDE_BUFFERS, nbufs,
				       addr, len, bid, ud, 0);

	s->buf_group = bgid;
	return s;
}

static struct io_uring_sqe *remove_bufs(struct tring *r, int nbufs,
					uint16_t bgid, uint64_t ud)
{
	struct io_uring_sqe *s = tprep(r, IORING_OP_REMOVE_BUFFERS, nbufs, NULL,
				       0, 0, ud, 0);

	s->buf_group = bgid;
	return s;
}

static struct io_uring_sqe *cancel(struct tring *r, uint64_t target,
				   uint64_t ud)
{
	struct io_uring_sqe *s = tprep(r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0,
				       0, ud, 0);

	s->addr = target;
	return s;
}

static void run(struct dctx *c, struct tring *r, unsigned int n,
		const char *label)
{
	dsubmit_sqp(c, r, label);
	dreapn(c, r, n, true, label);
}

/* no CQE within ms */
static void none(struct dctx *c, struct tring *r, int ms, const char *label)
{
	int ret = tring_wait(r, 1, ms * MS);

	if (ret > 0 && !tring_cq_ready(r))
		tring_wait(r, 1, ms * MS);
	drec_int(c, tring_cq_ready(r), "%s: CQEs ready", label);
}

/* how many buffers group bgid holds: REMOVE_BUFFERS of all, then put
 * them back is not possible, so this empties the group */
static void count_and_empty(struct dctx *c, struct tring *r, uint16_t bgid,
			    const char *label)
{
	remove_bufs(r, 100, bgid, 900);
	run(c, r, 1, label);
}

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int pbuf_reg(struct tring *r, void *ring, unsigned int entries,
		    uint16_t bgid)
{
	return tpbuf_reg(r, ring, entries, bgid, 0);
}

/* ---- one-shot RECV / RECVMSG, legacy groups ---- */

static long body_legacy(struct dctx *c, void *arg)
{
	char *a = map(PS);
	struct tring r;
	int sp[2], p[2];

	(void)arg;
	if (!a || pipe(p) || dring_flags(c, &r, 16, 0) || tsockpair(sp))
		return 0;
	provide(&r, a, 16, 3, 1, 0, 1);
	run(c, &r, 1, "provide 3");

	/* data waiting: the whole buffer, then a capped one */
	twrite(sp[0], "hello", 5);
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1, 0, 2);
	run(c, &r, 1, "RECV, data ready");
	drec_int(c, !memcmp(a, "hello", 5), "data in bid 0");
	twrite(sp[0], "abcdef", 6);
	recv_sel(&r, IORING_OP_RECV, sp[1], (void *)1, 3, 1, 0, 3);
	run(c, &r, 1, "RECV len 3 (addr ignored), more left");
	drec_int(c, !memcmp(a + 16, "abc", 3), "data in bid 1");
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1, 0, 4);
	run(c, &r, 1, "RECV the rest");

	/* empty group, unknown group, not a socket */
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1, 0, 5);
	run(c, &r, 1, "RECV, group empty: -ENOBUFS");
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 77, 0, 6);
	run(c, &r, 1, "RECV, no such group: -ENOBUFS");
	provide(&r, a, 16, 2, 1, 10, 7);
	run(c, &r, 1, "provide 2 more");
	recv_sel(&r, IORING_OP_RECV, p[0], NULL, 0, 1, 0, 8);
	run(c, &r, 1, "RECV on a pipe: -ENOTSOCK");

	/* a waiting receive does not hold its buffer */
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1, 0, 9);
	dsubmit_sqp(c, &r, "RECV waits");
	none(c, &r, 20, "RECV waits");
	remove_bufs(&r, 1, 1, 10);
	run(c, &r, 1, "remove 1 while it waits");
	twrite(sp[0], "xyz", 3);
	dreapn(c, &r, 1, true, "RECV gets data");
	remove_bufs(&r, 5, 1, 11);
	run(c, &r, 1, "remove the rest: none left");

	/* EOF and errors give the buffer back */
	provide(&r, a, 16, 2, 1, 20, 12);
	run(c, &r, 1, "provide 2");
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1, 0, 13);
	dsubmit_sqp(c, &r, "RECV waits for EOF");
	none(c, &r, 20, "RECV waits for EOF");
	shutdown(sp[0], SHUT_WR);
	dreapn(c, &r, 1, true, "RECV at EOF: 0, no buffer");
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1, 0, 14);
	run(c, &r, 1, "RECV at EOF again");
	count_and_empty(c, &r, 1, "both buffers still there");

	/* cancellation of a waiting receive, MSG_DONTWAIT */
	tclose2(sp);
	if (tsockpair(sp))
		return 0;
	provide(&r, a, 16, 2, 1, 30, 15);
	run(c, &r, 1, "provide 2");
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1, 0, 16);
	dsubmit_sqp(c, &r, "RECV to cancel");
	none(c, &r, 20, "RECV to cancel");
	cancel(&r, 16, 17);
	dsubmit_sqp(c, &r, "cancel");
	dreapn(c, &r, 2, false, "cancel");
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1, 0, 18)->msg_flags =
		MSG_DONTWAIT;
	run(c, &r, 1, "RECV MSG_DONTWAIT: -EAGAIN");
	count_and_empty(c, &r, 1, "both buffers still there");

	/* io-wq */
	provide(&r, a, 16, 2, 1, 40, 19);
	run(c, &r, 1, "provide 2");
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1, 0, 20)->flags |=
		IOSQE_ASYNC;
	dsubmit_sqp(c, &r, "async RECV waits");
	none(c, &r, 50, "async RECV waits");
	twrite(sp[0], "async", 5);
	dreapn(c, &r, 1, true, "async RECV");
	count_and_empty(c, &r, 1, "one left");

	/* a link: a failed selection fails the chain */
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1, 0, 21)->flags |=
		IOSQE_IO_LINK;
	tprep(&r, IORING_OP_NOP, -1, NULL, 0, 0, 22, 0);
	run(c, &r, 2, "RECV(-ENOBUFS) -> NOP");

	tclose2(sp);
	tclose2(p);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_legacy, body_legacy)

static long body_recvmsg(struct dctx *c, void *arg)
{
	char *a = map(PS);
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	struct sockaddr_in from;
	struct iovec v[2];
	struct msghdr m;
	struct tring r;
	int u0, u1, sp[2];

	(void)arg;
	if (!a || dring_flags(c, &r, 16, 0) || tsockpair(sp))
		return 0;
	u0 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	u1 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(u1, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(u1, (struct sockaddr *)&sa, &sl))
		return 0;
	provide(&r, a, 32, 4, 2, 0, 1);
	run(c, &r, 1, "provide 4");

	/* no iovec: the whole buffer; the name and flags written back */
	sendto(u0, "datagram-1", 10, 0, (struct sockaddr *)&sa, sizeof(sa));
	memset(&m, 0, sizeof(m));
	memset(&from, 0, sizeof(from));
	m.msg_name = &from;
	m.msg_namelen = sizeof(from);
	recv_sel(&r, IORING_OP_RECVMSG, u1, &m, 1, 2, 0, 2);
	run(c, &r, 1, "RECVMSG, no iovec");
	drec_int(c, m.msg_namelen, "namelen written back");
	drec_int(c, from.sin_family, "family");
	drec_int(c, from.sin_addr.s_addr == htonl(INADDR_LOOPBACK), "addr");
	drec_int(c, !memcmp(a, "datagram-1", 10), "data in bid 0");

	/* one iovec caps the length: MSG_TRUNC written back */
	sendto(u0, "datagram-22", 11, 0, (struct sockaddr *)&sa, sizeof(sa));
	v[0].iov_base = NULL;
	v[0].iov_len = 4;
	m.msg_iov = v;
	m.msg_iovlen = 1;
	m.msg_flags = 0;
	recv_sel(&r, IORING_OP_RECVMSG, u1, &m, 1, 2, 0, 3);
	run(c, &r, 1, "RECVMSG, iovec of 4");
	drec_int(c, m.msg_flags & MSG_TRUNC ? 1 : 0, "MSG_TRUNC");
	drec_int(c, !memcmp(a + 32, "data", 4), "data in bid 1");

	/* two iovecs: -EINVAL; an unreadable iovec: -EFAULT */
	m.msg_iovlen = 2;
	recv_sel(&r, IORING_OP_RECVMSG, u1, &m, 1, 2, 0, 4);
	run(c, &r, 1, "RECVMSG, two iovecs: -EINVAL");
	m.msg_iov = dunmapped_addr();
	m.msg_iovlen = 1;
	recv_sel(&r, IORING_OP_RECVMSG, u1, &m, 1, 2, 0, 5);
	run(c, &r, 1, "RECVMSG, unreadable iovec: -EFAULT");

	/* waiting on a stream socket, then data */
	memset(&m, 0, sizeof(m));
	recv_sel(&r, IORING_OP_RECVMSG, sp[1], &m, 1, 2, 0, 6);
	dsubmit_sqp(c, &r, "RECVMSG waits");
	none(c, &r, 20, "RECVMSG waits");
	remove_bufs(&r, 1, 2, 7);
	run(c, &r, 1, "remove 1 while it waits");
	twrite(sp[0], "stream", 6);
	dreapn(c, &r, 1, true, "RECVMSG gets data");
	recv_sel(&r, IORING_OP_RECVMSG, sp[1], &m, 1, 2, 0, 8);
	run(c, &r, 1, "RECVMSG, group empty: -ENOBUFS");

	/* READ with BUFFER_SELECT on a socket: waits without the buffer */
	provide(&r, a, 32, 2, 3, 50, 9);
	run(c, &r, 1, "provide 2");
	tprep(&r, IORING_OP_READ, sp[1], NULL, 0, 0, 10, IOSQE_BUFFER_SELECT)
		->buf_group = 3;
	dsubmit_sqp(c, &r, "READ waits");
	none(c, &r, 20, "READ waits");
	twrite(sp[0], "read", 4);
	dreapn(c, &r, 1, true, "READ gets data");
	count_and_empty(c, &r, 3, "READ: buffers left");

	close(u0);
	close(u1);
	tclose2(sp);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_recvmsg, body_recvmsg)

/* ---- buffer rings ---- */

static long body_ring(struct dctx *c, void *arg)
{
	struct io_uring_buf_ring *br = map(PS);
	char *a = map(PS);
	uint16_t tail = 0;
	struct tring r;
	int sp[2];

	(void)arg;
	if (!a || !br || dring_flags(c, &r, 16, 0) || tsockpair(sp))
		return 0;
	drec_int(c, pbuf_reg(&r, br, 8, 5), "register a ring");
	for (uint16_t i = 0; i < 3; i++)
		tbuf_ring_add(br, 7, &tail, a + 64 * i, 64,
			      (uint16_t)(100 + i));

	twrite(sp[0], "ring!", 5);
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 5, 0, 1);
	run(c, &r, 1, "RECV from a ring");
	drec_int(c, tpbuf_head(&r, 5), "head");

	/* waiting: the head does not move until data arrives */
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 5, 0, 2);
	dsubmit_sqp(c, &r, "RECV waits");
	none(c, &r, 20, "RECV waits");
	drec_int(c, tpbuf_head(&r, 5), "head while it waits");
	twrite(sp[0], "later", 5);
	dreapn(c, &r, 1, true, "RECV gets data");
	drec_int(c, tpbuf_head(&r, 5), "head");
	drec_int(c, !memcmp(a + 64, "later", 5), "data in bid 101");

	/* EOF: nothing consumed */
	shutdown(sp[0], SHUT_WR);
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 5, 0, 3);
	run(c, &r, 1, "RECV at EOF");
	drec_int(c, tpbuf_head(&r, 5), "head");
	tclose2(sp);
	if (tsockpair(sp))
		return 0;

	/* cancelled while waiting: nothing consumed */
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 5, 0, 4);
	dsubmit_sqp(c, &r, "RECV to cancel");
	none(c, &r, 20, "RECV to cancel");
	cancel(&r, 4, 5);
	dsubmit_sqp(c, &r, "cancel");
	dreapn(c, &r, 2, false, "cancel");
	drec_int(c, tpbuf_head(&r, 5), "head");

	/* the last one, then empty */
	twrite(sp[0], "0123456789", 10);
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 4, 5, 0, 6);
	run(c, &r, 1, "RECV len 4");
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 5, 0, 7);
	run(c, &r, 1, "RECV, ring empty: -ENOBUFS");
	drec_int(c, tpbuf_head(&r, 5), "head");

	tclose2(sp);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_ring, body_ring)

/* ---- multishot ---- */

static long body_mshot_prep(struct dctx *c, void *arg)
{
	struct msghdr m;
	struct tring r;
	int sp[2];

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || tsockpair(sp))
		return 0;
	tprep(&r, IORING_OP_RECV, sp[1], NULL, 0, 0, 1, 0)->ioprio =
		IORING_RECV_MULTISHOT;
	run(c, &r, 1, "multishot without BUFFER_SELECT: -EINVAL");
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1, 0, 2)->file_index = 1;
	run(c, &r, 1, "one-shot RECV with optlen: -EINVAL");
	memset(&m, 0, sizeof(m));
	recv_sel(&r, IORING_OP_RECVMSG, sp[1], &m, 1, 1,
		 IORING_RECV_MULTISHOT, 7)->file_index = 1;
	run(c, &r, 1, "multishot RECVMSG with optlen: -EINVAL");
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1,
		 IORING_RECV_MULTISHOT, 3)->msg_flags = MSG_WAITALL;
	run(c, &r, 1, "multishot MSG_WAITALL: -EINVAL");
	memset(&m, 0, sizeof(m));
	m.msg_namelen = 0x80000000u;
	recv_sel(&r, IORING_OP_RECVMSG, sp[1], &m, 1, 1,
		 IORING_RECV_MULTISHOT, 4);
	run(c, &r, 1, "multishot RECVMSG, negative name length: -EOVERFLOW");
	m.msg_namelen = 0;
	recv_sel(&r, IORING_OP_RECVMSG, sp[1], &m, 1, 1,
		 IORING_RECV_MULTISHOT, 5);
	run(c, &r, 1, "multishot RECVMSG, no buffers: -ENOBUFS");
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1,
		 IORING_RECV_MULTISHOT, 6);
	run(c, &r, 1, "multishot RECV, no buffers: -ENOBUFS");
	tclose2(sp);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_mshot_prep, body_mshot_prep)

static long body_mshot(struct dctx *c, void *arg)
{
	char *a = map(PS);
	struct tring r;
	int sp[2];

	(void)arg;
	if (!a || dring_flags(c, &r, 16, 0) || tsockpair(sp))
		return 0;
	provide(&r, a, 8, 4, 1, 0, 1);
	run(c, &r, 1, "provide 4 of 8 bytes");
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1,
		 IORING_RECV_MULTISHOT, 2);
	dsubmit_sqp(c, &r, "multishot RECV");
	none(c, &r, 20, "multishot RECV waits");
	twrite(sp[0], "one", 3);
	dreapn(c, &r, 1, true, "first shot");
	twrite(sp[0], "two", 3);
	dreapn(c, &r, 1, true, "second shot");
	/* 20 bytes: 8 + 8, then no buffer: -ENOBUFS ends it */
	twrite(sp[0], "abcdefghijklmnopqrst", 20);
	dreapn(c, &r, 3, true, "two shots and -ENOBUFS");
	none(c, &r, 20, "ended");
	drec_int(c, !memcmp(a + 16, "abcdefgh", 8), "data in bid 2");

	/* more buffers: the rest, then EOF ends it (0, no buffer) */
	provide(&r, a, 8, 4, 1, 10, 3);
	run(c, &r, 1, "provide 4");
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1,
		 IORING_RECV_MULTISHOT, 4);
	run(c, &r, 1, "multishot RECV takes the 4 left");
	shutdown(sp[0], SHUT_WR);
	dreapn(c, &r, 1, true, "EOF ends it");
	count_and_empty(c, &r, 1, "three buffers left");
	tclose2(sp);

	/* cancellation ends it */
	if (tsockpair(sp))
		return 0;
	provide(&r, a, 8, 4, 1, 20, 5);
	run(c, &r, 1, "provide 4");
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1,
		 IORING_RECV_MULTISHOT, 6);
	dsubmit_sqp(c, &r, "multishot RECV");
	twrite(sp[0], "x", 1);
	dreapn(c, &r, 1, true, "one shot");
	cancel(&r, 6, 7);
	dsubmit_sqp(c, &r, "cancel");
	dreapn(c, &r, 2, false, "cancelled");
	none(c, &r, 20, "ended");
	count_and_empty(c, &r, 1, "three buffers left");
	tclose2(sp);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_mshot, body_mshot)

/*
 * The shots of one wakeup appear together: 32 bytes in one write, 1-byte
 * buffers.  The kernel receives them as task_work of the writer and
 * commits the CQ once, so the application that sees the first shot sees
 * all 32; uuring's readiness engine commits them together too (not one by
 * one, which let a waiter woken by the first find the rest missing).
 */
static long body_mshot_together(struct dctx *c, void *arg)
{
	char *a = map(PS);
	struct tring r;
	int sp[2];

	(void)arg;
	if (!a || dring_flags(c, &r, 64, 0) || tsockpair(sp))
		return 0;
	provide(&r, a, 1, 40, 1, 0, 1);
	run(c, &r, 1, "provide 40 1-byte buffers");
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1,
		 IORING_RECV_MULTISHOT, 2);
	dsubmit_sqp(c, &r, "multishot RECV");
	none(c, &r, 20, "multishot RECV waits");
	twrite(sp[0], "0123456789abcdefghijklmnopqrstuv", 32);
	drec_int(c, tring_wait(&r, 1, 2000 * MS) > 0, "a shot");
	drec_int(c, tring_cq_ready(&r), "CQEs when the first shot is seen");
	dreapn(c, &r, 32, true, "32 shots");
	drec_int(c, !memcmp(a, "0123456789abcdefghijklmnopqrstuv", 32),
		 "the bytes, one per buffer");
	cancel(&r, 2, 3);
	dsubmit_sqp(c, &r, "cancel");
	dreapn(c, &r, 2, false, "cancelled");
	tclose2(sp);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_mshot_together, body_mshot_together)

/* multishot RECV: len caps each shot, optlen limits the total */
static long body_mshot_limits(struct dctx *c, void *arg)
{
	char *a = map(PS);
	struct tring r;
	int sp[2];

	(void)arg;
	if (!a || dring_flags(c, &r, 16, 0) || tsockpair(sp))
		return 0;
	provide(&r, a, 64, 8, 1, 0, 1);
	run(c, &r, 1, "provide 8 of 64 bytes");
	twrite(sp[0], "0123456789", 10);
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 4, 1,
		 IORING_RECV_MULTISHOT, 2);
	dsubmit_sqp(c, &r, "multishot RECV, 4 bytes a shot");
	dreapn(c, &r, 3, true, "4 + 4 + 2");
	cancel(&r, 2, 3);
	dsubmit_sqp(c, &r, "cancel");
	dreapn(c, &r, 2, false, "cancelled");
	/* a limit of 6 bytes in all: ends after the shot that reaches it */
	twrite(sp[0], "abc", 3);
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1,
		 IORING_RECV_MULTISHOT, 4)->file_index = 6;
	dsubmit_sqp(c, &r, "multishot RECV, 6 bytes in all");
	dreapn(c, &r, 1, true, "3 bytes");
	twrite(sp[0], "defgh", 5);
	dreapn(c, &r, 1, true, "5 more: the limit ends it");
	none(c, &r, 20, "ended");
	tclose2(sp);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_mshot_limits, body_mshot_limits)

/*
 * DEFER_TASKRUN: the shots of a waiting multishot RECV are posted only
 * when the submitter waits, together with the end that followed them.
 */
static long body_mshot_defer(struct dctx *c, void *arg)
{
	char *a = map(PS);
	struct tring r;
	int sp[2];

	(void)arg;
	if (!a || dring_flags(c, &r, 16, IORING_SETUP_SINGLE_ISSUER |
					    IORING_SETUP_DEFER_TASKRUN) ||
	    tsockpair(sp))
		return 0;
	provide(&r, a, 8, 8, 1, 0, 1);
	run(c, &r, 1, "provide 8");
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1,
		 IORING_RECV_MULTISHOT, 2);
	dsubmit_sqp(c, &r, "multishot RECV");
	twrite(sp[0], "one", 3);
	usleep(20000);
	twrite(sp[0], "two", 3);
	usleep(20000);
	shutdown(sp[0], SHUT_WR);
	usleep(20000);
	drec_int(c, tring_cq_ready(&r), "CQEs before waiting");
	dreapn(c, &r, 2, true, "the shots and EOF, at the wait");
	/* cancelled after a shot was queued for the submitter */
	tclose2(sp);
	if (tsockpair(sp))
		return 0;
	recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1,
		 IORING_RECV_MULTISHOT, 3);
	dsubmit_sqp(c, &r, "multishot RECV");
	usleep(20000);
	twrite(sp[0], "three", 5);
	usleep(20000);
	cancel(&r, 3, 4);
	dsubmit_sqp(c, &r, "cancel");
	dreapn(c, &r, 2, false, "cancel");
	tclose2(sp);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_mshot_defer, body_mshot_defer)

/* A full CQ: the shot that does not fit ends the request, its data in
 * the final CQE (which overflows). */
static long body_mshot_overflow(struct dctx *c, void *arg)
{
	char *a = map(PS);
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	struct io_uring_params p;
	struct tring r;
	int u0, u1;

	(void)arg;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 4;
	if (!a || dring(c, &r, 4, &p, "CQ of 4"))
		return 0;
	u0 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	u1 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(u1, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(u1, (struct sockaddr *)&sa, &sl))
		return 0;
	provide(&r, a, 16, 16, 1, 0, 1);
	run(c, &r, 1, "provide 16");
	for (int i = 0; i < 8; i++)
		sendto(u0, "dgram", 1 + (size_t)(i % 5), 0,
		       (struct sockaddr *)&sa, sizeof(sa));
	recv_sel(&r, IORING_OP_RECV, u1, NULL, 0, 1, IORING_RECV_MULTISHOT, 2);
	dsubmit_sqp(c, &r, "multishot RECV, 8 datagrams queued");
	usleep(50000);
	drec_int(c, (tring_sq_flags(&r) & IORING_SQ_CQ_OVERFLOW) ? 1 : 0,
		 "CQ overflow flag");
	dreapn(c, &r, 5, true, "4 shots, then the last CQE");
	none(c, &r, 20, "ended");
	remove_bufs(&r, 100, 1, 3);
	run(c, &r, 1, "buffers left");
	close(u0);
	close(u1);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_mshot_overflow, body_mshot_overflow)

/* multishot RECVMSG: struct io_uring_recvmsg_out, name, control, payload */
static void rec_out(struct dctx *c, const char *buf, int res,
		    const struct msghdr *m, const char *label)
{
	const struct io_uring_recvmsg_out *o = (const void *)buf;
	size_t hdr = sizeof(*o) + m->msg_namelen + m->msg_controllen;

	if (res < (int)sizeof(*o)) {
		drec_int(c, res, "%s: short", label);
		return;
	}
	drec_int(c, (int)o->namelen, "%s: namelen", label);
	drec_int(c, (int)o->controllen, "%s: controllen", label);
	drec_int(c, (int)o->payloadlen, "%s: payloadlen", label);
	drec_int(c, (int)o->flags, "%s: flags", label);
	if (o->namelen >= sizeof(struct sockaddr_in) && m->msg_namelen) {
		const struct sockaddr_in *in = (const void *)(o + 1);

		drec_int(c, in->sin_family, "%s: family", label);
		drec_int(c, in->sin_addr.s_addr == htonl(INADDR_LOOPBACK),
			 "%s: addr", label);
	}
	if (o->controllen >= sizeof(struct cmsghdr)) {
		const struct cmsghdr *cm = (const void *)(buf + sizeof(*o) +
							  m->msg_namelen);

		drec_int(c, cm->cmsg_level, "%s: cmsg level", label);
		drec_int(c, cm->cmsg_type, "%s: cmsg type", label);
		drec_int(c, (int)cm->cmsg_len, "%s: cmsg len", label);
	}
	if (res > (int)hdr)
		drec_int(c, buf[hdr], "%s: first payload byte", label);
}

static long body_mshot_msg(struct dctx *c, void *arg)
{
	char *a = map(PS);
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	struct msghdr m;
	struct tcqe q[8];
	struct tring r;
	int u0, u1, one = 1, sp[2];
	unsigned int got;

	(void)arg;
	if (!a || dring_flags(c, &r, 16, 0) || tsockpair(sp))
		return 0;
	u0 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	u1 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(u1, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(u1, (struct sockaddr *)&sa, &sl) ||
	    setsockopt(u1, IPPROTO_IP, IP_RECVORIGDSTADDR, &one, sizeof(one)))
		return 0;
	/* 3 buffers of 256: header 16 + name 128 + control 40 + payload */
	provide(&r, a, 256, 3, 1, 0, 1);
	run(c, &r, 1, "provide 3");
	memset(&m, 0, sizeof(m));
	m.msg_namelen = sizeof(struct sockaddr_storage);
	m.msg_controllen = 40;
	recv_sel(&r, IORING_OP_RECVMSG, u1, &m, 1, 1, IORING_RECV_MULTISHOT,
		 2)->msg_flags = MSG_TRUNC;
	dsubmit_sqp(c, &r, "multishot RECVMSG");
	none(c, &r, 20, "multishot RECVMSG waits");
	sendto(u0, "small", 5, 0, (struct sockaddr *)&sa, sizeof(sa));
	got = tring_reap_wait(&r, q, 1, 2 * SEC);
	drec_cqes(c, q, got, true, "first datagram");
	if (got == 1 && (q[0].flags & IORING_CQE_F_BUFFER))
		rec_out(c, a + 256 * (q[0].flags >> 16), q[0].res, &m,
			"first datagram");
	{
		static char big[200];

		memset(big, 'B', sizeof(big));
		sendto(u0, big, sizeof(big), 0, (struct sockaddr *)&sa,
		       sizeof(sa));
	}
	got = tring_reap_wait(&r, q, 1, 2 * SEC);
	drec_cqes(c, q, got, true, "a datagram longer than the room");
	if (got == 1 && (q[0].flags & IORING_CQE_F_BUFFER))
		rec_out(c, a + 256 * (q[0].flags >> 16), q[0].res, &m,
			"truncated datagram");
	sendto(u0, "", 0, 0, (struct sockaddr *)&sa, sizeof(sa));
	got = tring_reap_wait(&r, q, 1, 2 * SEC);
	drec_cqes(c, q, got, true, "an empty datagram ends it");
	if (got == 1 && (q[0].flags & IORING_CQE_F_BUFFER))
		rec_out(c, a + 256 * (q[0].flags >> 16), q[0].res, &m,
			"empty datagram");
	none(c, &r, 20, "ended");

	/* a buffer smaller than the header: -EFAULT, the buffer kept */
	provide(&r, a + 1024, 64, 1, 2, 7, 3);
	run(c, &r, 1, "provide a small one");
	recv_sel(&r, IORING_OP_RECVMSG, u1, &m, 1, 2, IORING_RECV_MULTISHOT,
		 4);
	dsubmit_sqp(c, &r, "multishot RECVMSG, small buffer");
	sendto(u0, "x", 1, 0, (struct sockaddr *)&sa, sizeof(sa));
	dreapn(c, &r, 1, true, "buffer too small: -EFAULT");
	count_and_empty(c, &r, 2, "small buffer left");

	/* no name, no control, on a stream socket; then EOF */
	provide(&r, a, 64, 3, 1, 10, 5);
	run(c, &r, 1, "provide 3");
	memset(&m, 0, sizeof(m));
	recv_sel(&r, IORING_OP_RECVMSG, sp[1], &m, 1, 1, IORING_RECV_MULTISHOT,
		 6);
	dsubmit_sqp(c, &r, "multishot RECVMSG on a stream");
	twrite(sp[0], "stream data", 11);
	got = tring_reap_wait(&r, q, 1, 2 * SEC);
	drec_cqes(c, q, got, true, "stream shot");
	if (got == 1 && (q[0].flags & IORING_CQE_F_BUFFER))
		rec_out(c, a + 64 * ((q[0].flags >> 16) - 10), q[0].res, &m,
			"stream shot");
	shutdown(sp[0], SHUT_WR);
	got = tring_reap_wait(&r, q, 1, 2 * SEC);
	drec_cqes(c, q, got, true, "EOF");
	if (got == 1 && (q[0].flags & IORING_CQE_F_BUFFER))
		rec_out(c, a + 64 * ((q[0].flags >> 16) - 10), q[0].res, &m,
			"EOF");
	count_and_empty(c, &r, 1, "buffers left");

	close(u0);
	close(u1);
	tclose2(sp);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_mshot_msg, body_mshot_msg)

/*
 * Multishot RECV from a buffer ring under load, as a real program uses
 * it: the receiver gives each buffer back to the ring as soon as it has
 * reaped its CQE, and the sender never has more messages outstanding
 * (sent, their CQE not yet reaped) than the ring can hold, so the kernel
 * never ends the request with -ENOBUFS:
 *  - on TCP and AF_UNIX stream sockets the kernel knows when a shot
 *    emptied the socket (msg_inq) and then waits for more data before it
 *    selects the next buffer, so all CREDIT_BUFS buffers may be out;
 *  - on other sockets (SOCK_SEQPACKET here) it does not know, receives
 *    again at once and selects first: one buffer must stay in the ring.
 * Every message is one buffer long, so a receive takes one message.  A
 * buffer the engine loses (the head moved without a CQE naming it), or a
 * selection made when no data needs a buffer, runs the ring dry: -ENOBUFS
 * before the end.  Only totals are recorded: the bytes, the buffers
 * named, the -ENOBUFS seen, how it ended, and the accounting of the
 * buffers (every buffer the head passed was named by a CQE; all are back
 * in the ring at the end).  Nothing waits for a time: each step waits
 * for a CQE, with a hang guard of its own.
 */
#define CREDIT_BUFS 8
#define CREDIT_BUFSZ 64
#define CREDIT_MSGS 64
#define CREDIT_ROUNDS 4

enum { CREDIT_SEQPACKET, CREDIT_STREAM, CREDIT_TCP };

static int tcp_pair(int sp[2])
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t l = sizeof(sa);
	int ln, one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ln = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sp[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ln < 0 || sp[0] < 0 ||
	    bind(ln, (struct sockaddr *)&sa, sizeof(sa)) || listen(ln, 1) ||
	    getsockname(ln, (struct sockaddr *)&sa, &l) ||
	    connect(sp[0], (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	sp[1] = accept4(ln, NULL, NULL, SOCK_CLOEXEC);
	close(ln);
	if (sp[1] < 0)
		return -1;
	/* each send a segment of its own, sent at once */
	setsockopt(sp[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

static int credit_pair(int kind, int sp[2])
{
	if (kind == CREDIT_TCP)
		return tcp_pair(sp);
	return socketpair(AF_UNIX, (kind == CREDIT_STREAM ? SOCK_STREAM :
				    SOCK_SEQPACKET) | SOCK_CLOEXEC, 0, sp);
}

struct credit {
	uint16_t tail;		/* ours: the buffers given to the ring */
	unsigned int reaped;	/* messages whose CQE was reaped */
	unsigned int bytes;	/* received, in the CQEs reaped */
	unsigned int bufcqes;	/* CQEs that named a buffer */
	unsigned int enobufs;
	int last_res;		/* of the CQE without F_MORE */
	bool ended;
};

/* Reaps what is there; each buffer named goes back to the ring at once. */
static void credit_reap(struct tring *r, struct io_uring_buf_ring *br,
			char *bufs, struct credit *k)
{
	struct tcqe q[32];
	unsigned int n = tring_reap(r, q, 32);

	for (unsigned int i = 0; i < n; i++) {
		if (q[i].flags & IORING_CQE_F_BUFFER) {
			uint16_t bid = (uint16_t)(q[i].flags >>
						  IORING_CQE_BUFFER_SHIFT);

			k->bufcqes++;
			tbuf_ring_add(br, CREDIT_BUFS - 1, &k->tail,
				      bufs + CREDIT_BUFSZ * (bid % CREDIT_BUFS),
				      CREDIT_BUFSZ, bid);
		}
		if (q[i].res > 0) {
			k->bytes += (unsigned int)q[i].res;
			k->reaped = k->bytes / CREDIT_BUFSZ;
		}
		if (q[i].res == -ENOBUFS)
			k->enobufs++;
		if (!(q[i].flags & IORING_CQE_F_MORE)) {
			k->ended = true;
			k->last_res = q[i].res;
		}
	}
}

/* waits for a CQE (4 s hang guard) and reaps; false if none came */
static bool credit_wait(struct tring *r, struct io_uring_buf_ring *br,
			char *bufs, struct credit *k)
{
	if (tring_wait(r, 1, 4 * SEC) < 0 && !tring_cq_ready(r))
		return false;
	credit_reap(r, br, bufs, k);
	return true;
}

static long body_mshot_credit(struct dctx *c, void *arg)
{
	struct io_uring_buf_ring *br = map(PS);
	char *bufs = map(CREDIT_BUFS * CREDIT_BUFSZ);
	int kind = (int)(intptr_t)arg;
	unsigned int window = kind == CREDIT_SEQPACKET ? CREDIT_BUFS - 1 :
							 CREDIT_BUFS;
	struct credit k = { 0 };
	char msg[CREDIT_BUFSZ];
	struct tring r;
	int sp[2], round;

	if (!br || !bufs || dring_flags(c, &r, 16, 0))
		return 0;
	drec_int(c, pbuf_reg(&r, br, CREDIT_BUFS, 1), "register a ring");
	for (uint16_t i = 0; i < CREDIT_BUFS; i++)
		tbuf_ring_add(br, CREDIT_BUFS - 1, &k.tail,
			      bufs + CREDIT_BUFSZ * i, CREDIT_BUFSZ, i);
	for (round = 0; round < CREDIT_ROUNDS; round++) {
		unsigned int sent = 0;

		if (credit_pair(kind, sp))
			return 0;
		k.bytes = 0;
		k.reaped = 0;
		k.bufcqes = 0;
		k.ended = false;
		recv_sel(&r, IORING_OP_RECV, sp[1], NULL, 0, 1,
			 IORING_RECV_MULTISHOT, 1);
		dsubmit_sqp(c, &r, "multishot RECV");
		while (!k.ended && k.reaped < CREDIT_MSGS) {
			for (; sent < CREDIT_MSGS && sent - k.reaped < window;
			     sent++) {
				memset(msg, 'a' + (int)(sent % 26), sizeof(msg));
				twrite(sp[0], msg, sizeof(msg));
			}
			if (!credit_wait(&r, br, bufs, &k))
				break;
		}
		/* EOF ends it with a CQE of 0 */
		shutdown(sp[0], SHUT_WR);
		while (!k.ended && credit_wait(&r, br, bufs, &k))
			;
		drec_int(c, (int)k.bytes, "round %d: bytes", round);
		drec_int(c, (int)k.bufcqes, "round %d: buffers named", round);
		drec_int(c, k.ended, "round %d: ended", round);
		drec_int(c, k.last_res, "round %d: the last CQE", round);
		tclose2(sp);
		if (k.enobufs || !k.ended)
			break;
	}
	drec_int(c, (int)k.enobufs, "-ENOBUFS seen");
	/* consumed: the head; provided: our tail */
	drec_int(c, (uint16_t)(tpbuf_head(&r, 1) -
			       (uint16_t)(k.tail - CREDIT_BUFS)),
		 "buffers consumed but not named by a CQE");
	drec_int(c, (uint16_t)(k.tail - tpbuf_head(&r, 1)),
		 "buffers in the ring at the end");
	tring_exit(&r);
	return 0;
}

static void credit_run(struct dctx *c, int kind, const char *name)
{
	long ret = disolated(c, body_mshot_credit, (void *)(intptr_t)kind,
			     LIMIT_MS);
	char b[32];

	if (ret)
		dnote(c, "%s: %s", name, derrname(ret, b, sizeof(b)));
	drec_int(c, ret, "%s: isolated run (0 = finished)", name);
}

static void sc_mshot_credit(struct dctx *c)
{
	credit_run(c, CREDIT_SEQPACKET, "mshot_credit");
}

static void sc_mshot_credit_stream(struct dctx *c)
{
	credit_run(c, CREDIT_STREAM, "mshot_credit_stream");
}

static void sc_mshot_credit_tcp(struct dctx *c)
{
	credit_run(c, CREDIT_TCP, "mshot_credit_tcp");
}

static void sc_probe(struct dctx *c)
{
	static const int ops[] = { IORING_OP_RECV, IORING_OP_RECVMSG };
	static const char *const labels[] = { "RECV", "RECVMSG" };

	dprobe_ops(c, ops, labels, 2);
}

static const struct dscenario scenarios[] = {
	{ "netbuf_legacy", sc_legacy, NULL },
	{ "netbuf_recvmsg", sc_recvmsg, NULL },
	{ "netbuf_ring", sc_ring, NULL },
	{ "netbuf_mshot_prep", sc_mshot_prep, NULL },
	{ "netbuf_mshot", sc_mshot, NULL },
	{ "netbuf_mshot_limits", sc_mshot_limits, NULL },
	{ "netbuf_mshot_together", sc_mshot_together, NULL },
	{ "netbuf_mshot_defer", sc_mshot_defer, NULL },
	{ "netbuf_mshot_overflow", sc_mshot_overflow, NULL },
	{ "netbuf_mshot_msg", sc_mshot_msg, NULL },
	{ "netbuf_mshot_credit", sc_mshot_credit, NULL },
	{ "netbuf_mshot_credit_stream", sc_mshot_credit_stream, NULL },
	{ "netbuf_mshot_credit_tcp", sc_mshot_credit_tcp, NULL },
	{ "netbuf_probe", sc_probe, NULL },
};

DTEST_MAIN(scenarios)
