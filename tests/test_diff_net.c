// SPDX-License-Identifier: MIT
/*
 * Differential tests: the socket opcodes SEND, RECV, SENDMSG, RECVMSG,
 * ACCEPT (one-shot, multishot), CONNECT, SOCKET, SHUTDOWN, BIND, LISTEN,
 * on loopback only (AF_UNIX socketpairs and paths, 127.0.0.1).
 *
 * Covered: transfers that complete at once and ones that wait for
 * readiness (never blocking enter), MSG_DONTWAIT (-EAGAIN final),
 * IORING_RECVSEND_POLL_FIRST, MSG_WAITALL (partial transfers accumulated
 * across retries on stream sockets, short results failing the chain,
 * MSG_TRUNC, cancellation reporting the bytes moved), SOCK_NONEMPTY,
 * sendto through addr2, the msghdr round trip (names, SCM_RIGHTS, MSG_CTRUNC,
 * the fields written back), SUBMIT_STABLE (the msghdr and iovecs rewritten
 * after submission do not matter, T2), every prep check and the errors of
 * the system calls (-ENOTSOCK, -EBADF, -EFAULT, -EPIPE without SIGPIPE,
 * -ECONNREFUSED, -EISCONN, -EADDRINUSE, ...), multishot ACCEPT (one CQE
 * per connection with IORING_CQE_F_MORE, SOCK_NONEMPTY, the end on
 * cancellation and on a full CQ), blocking and non-blocking listeners and
 * sockets, SHUTDOWN errors that do not break a chain, IOSQE_ASYNC,
 * cancellation, links, and PROBE.
 *
 * Every scenario body runs isolated (disolated) with a time limit.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"
#include "uuring.h"

#define LIMIT_MS 8000
#define SEC 1000000000LL
#define MS 1000000LL

static struct io_uring_sqe *sendp(struct tring *r, int fd, const void *buf,
				  unsigned int len, uint32_t msg_flags,
				  uint64_t ud, uint8_t flags)
{
	struct io_uring_sqe *s = tprep(r, IORING_OP_SEND, fd, buf, len, 0, ud,
				       flags);

	s->msg_flags = msg_flags;
	return s;
}

static struct io_uring_sqe *recvp(struct tring *r, int fd, void *buf,
				  unsigned int len, uint32_t msg_flags,
				  uint64_t ud, uint8_t flags)
{
	struct io_uring_sqe *s = tprep(r, IORING_OP_RECV, fd, buf, len, 0, ud,
				       flags);

	s->msg_flags = msg_flags;
	return s;
}

static struct io_uring_sqe *msgp(struct tring *r, int op, int fd,
				 const struct msghdr *m, uint32_t msg_flags,
				 uint64_t ud, uint8_t flags)
{
	struct io_uring_sqe *s = tprep(r, op, fd, m, 1, 0, ud, flags);

	s->msg_flags = msg_flags;
	return s;
}

static struct io_uring_sqe *acceptp(struct tring *r, int fd, void *addr,
				    socklen_t *alen, uint32_t aflags,
				    uint16_t ioprio, uint64_t ud, uint8_t flags)
{
	struct io_uring_sqe *s = tprep(r, IORING_OP_ACCEPT, fd, addr, 0,
				       (uint64_t)(uintptr_t)alen, ud, flags);

	s->accept_flags = aflags;
	s->ioprio = ioprio;
	return s;
}

static struct io_uring_sqe *addrp(struct tring *r, int op, int fd,
				  const void *sa, uint64_t salen, uint64_t ud,
				  uint8_t flags)
{
	return tprep(r, op, fd, sa, 0, salen, ud, flags);
}

/*
 * uuring creates a thread's wake eventfd at its first wait, and moves it
 * up to its reserved fd range: for a moment it holds a low number.  A wait
 * at the start keeps that moment away from the fd numbers the scenarios
 * compare (accepted sockets).
 */
static void warm(struct tring *r)
{
	tring_wait(r, 1, 1 * MS);
}

/* fills a socket's buffers with non-blocking sends; returns the bytes */
static long fill_sock(int fd)
{
	static char b[65536];
	long total = 0;
	ssize_t n;

	while ((n = send(fd, b, sizeof(b), MSG_DONTWAIT)) > 0)
		total += n;
	while ((n = send(fd, b, 1, MSG_DONTWAIT)) > 0)
		total += n;
	return total;
}

static long drain_sock(int fd)
{
	static char b[65536];
	long total = 0;
	ssize_t n;

	while ((n = recv(fd, b, sizeof(b), MSG_DONTWAIT)) > 0)
		total += n;
	return total;
}

/* reads exactly n bytes (what a fill_sock queued); returns the count */
static long read_exact(int fd, long n)
{
	static char b[65536];
	long total = 0;
	ssize_t k;

	while (total < n) {
		size_t want = (size_t)(n - total) < sizeof(b) ?
			      (size_t)(n - total) : sizeof(b);

		k = recv(fd, b, want, 0);
		if (k <= 0)
			break;
		total += k;
	}
	return total;
}

#define ISOLATED(sc, body) DISOLATED_SCENARIO(sc, body, LIMIT_MS)

/* A TCP listener on 127.0.0.1 (port chosen by the kernel). */
static int tcp_listener(struct sockaddr_in *sa, int backlog, bool nonblock)
{
	socklen_t l = sizeof(*sa);
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC |
				 (nonblock ? SOCK_NONBLOCK : 0), 0);

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)sa, sizeof(*sa)) ||
	    listen(fd, backlog) || getsockname(fd, (struct sockaddr *)sa, &l))
		abort();
	return fd;
}

static int tcp_client(const struct sockaddr_in *sa)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (const struct sockaddr *)sa, sizeof(*sa)))
		abort();
	return fd;
}

/*
 * Loopback TCP runs the receiving side in softirq context, normally
 * before connect(2), write(2) or shutdown(2) returns, but a loaded machine
 * can leave softirqs to ksoftirqd for a while.  The steps that need a
 * connection queued, data or a FIN arrived wait for that state instead of
 * a fixed 10 ms; LIMIT_MS (the body's own limit) bounds them.
 */

/* connections queued on listener ln (for a listener TCP_INFO's unacked
 * is its accept queue length), or -1 */
static int backlog(int ln)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(ln, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return -1;
	return (int)ti.tcpi_unacked;
}

static void await_backlog(int ln, int n)
{
	for (int i = 0; i < LIMIT_MS && backlog(ln) >= 0 && backlog(ln) < n;
	     i++)
		usleep(1000);
}

/* a client of sa whose connection is queued on ln when it returns */
static int tcp_client_queued(const struct sockaddr_in *sa, int ln)
{
	int n = backlog(ln), fd = tcp_client(sa);

	await_backlog(ln, n + 1);
	return fd;
}

/* waits until n bytes can be read from fd */
static void await_inq(int fd, int n)
{
	int inq = 0;

	for (int i = 0; i < LIMIT_MS && !ioctl(fd, FIONREAD, &inq) && inq < n;
	     i++)
		usleep(1000);
}

/* waits until the peer's FIN has arrived on fd */
static void await_rdhup(int fd)
{
	for (int i = 0; i < LIMIT_MS; i++) {
		struct pollfd pf = { .fd = fd, .events = POLLRDHUP };

		if (poll(&pf, 1, 0) == 1 && (pf.revents & POLLRDHUP))
			break;
		usleep(1000);
	}
}

/* the lowest free fd number (what the next socket/accept gets) */
static int lowest_free(void)
{
	int fd = fcntl(0, F_DUPFD, 0);

	close(fd);
	return fd;
}

/* ---- SEND and RECV on a stream socketpair ---- */

static long body_send_recv(struct dctx *c, void *arg)
{
	char buf[256], big[4096];
	struct uuring_stats s0, s1;
	struct tring r;
	int sp[2], p[2], file, res;

	(void)arg;
	if (dring_flags(c, &r, 32, 0) || pipe(p) || tsockpair(sp))
		return 0;
	file = dtmpfile(c, 64, 3);
	s0 = dstats(c, &r);

	/* a RECV on an empty socket waits for the SEND */
	memset(buf, 0, sizeof(buf));
	recvp(&r, sp[1], buf, sizeof(buf), 0, 1, 0);
	dsubmit_sqp(c, &r, "RECV, nothing queued");
	dnone_sqp(c, &r, 30, "RECV, nothing queued");
	sendp(&r, sp[0], "hello", 5, 0, 2, 0);
	dsubmit_sqp(c, &r, "SEND 5");
	{
		struct tcqe q[2];

		dreapq(c, &r, q, 2, false, "SEND and RECV complete");
	}
	drec_int(c, !memcmp(buf, "hello", 5), "RECV got the data");
	s1 = dstats(c, &r);
	if (!c->is_kernel)
		dcheck(c, s1.route_poll > s0.route_poll,
		       "the RECV waited on the readiness engine");

	/* data ready: RECV completes at once; SOCK_NONEMPTY while more is
	 * queued */
	twrite(sp[0], "0123456789", 10);
	recvp(&r, sp[1], buf, 4, 0, 3, 0);
	dnow_sqp(c, &r, "RECV 4 of 10 (SOCK_NONEMPTY)");
	recvp(&r, sp[1], buf, sizeof(buf), 0, 4, 0);
	dnow_sqp(c, &r, "RECV the other 6");
	recvp(&r, sp[1], buf, sizeof(buf), MSG_DONTWAIT, 5, 0);
	dnow_sqp(c, &r, "RECV MSG_DONTWAIT, empty: -EAGAIN");
	twrite(sp[0], "abc", 3);
	recvp(&r, sp[1], buf, 2, MSG_PEEK, 6, 0);
	dnow_sqp(c, &r, "RECV MSG_PEEK");
	recvp(&r, sp[1], buf, 0, 0, 7, 0);
	dnow_sqp(c, &r, "RECV of 0 bytes");
	drain_sock(sp[1]);

	/* a full socket: SEND waits for room */
	long filled = fill_sock(sp[0]);

	drec_int(c, filled > 0, "socket filled");
	sendp(&r, sp[0], "x", 1, MSG_DONTWAIT, 8, 0);
	dnow_sqp(c, &r, "SEND MSG_DONTWAIT, full: -EAGAIN");
	sendp(&r, sp[0], "wait", 4, 0, 9, 0);
	dsubmit_sqp(c, &r, "SEND, full");
	dnone_sqp(c, &r, 30, "SEND, full");
	drec_int(c, read_exact(sp[1], filled) == filled, "read what was filled");
	dreap1(c, &r, "SEND after the reader drained");
	memset(buf, 0, sizeof(buf));
	drec_int(c, recv(sp[1], buf, sizeof(buf), 0), "then the SEND's data");
	drec_int(c, !memcmp(buf, "wait", 4), "the SEND's data");

	/* IOSQE_ASYNC: waits for readiness too */
	recvp(&r, sp[1], buf, sizeof(buf), 0, 10, IOSQE_ASYNC);
	dsubmit_sqp(c, &r, "ASYNC RECV");
	dnone_sqp(c, &r, 30, "ASYNC RECV");
	twrite(sp[0], "async", 5);
	dreap1(c, &r, "ASYNC RECV after a write");
	sendp(&r, sp[0], "as", 2, 0, 11, IOSQE_ASYNC);
	dnow_sqp(c, &r, "ASYNC SEND");
	drain_sock(sp[1]);

	/* errors */
	recvp(&r, p[0], buf, sizeof(buf), 0, 20, 0);
	dnow_sqp(c, &r, "RECV on a pipe: -ENOTSOCK");
	sendp(&r, p[1], "x", 1, 0, 21, 0);
	dnow_sqp(c, &r, "SEND on a pipe: -ENOTSOCK");
	recvp(&r, file, buf, sizeof(buf), 0, 22, 0);
	dnow_sqp(c, &r, "RECV on a file: -ENOTSOCK");
	recvp(&r, 9999, buf, sizeof(buf), 0, 23, 0);
	dnow_sqp(c, &r, "RECV bad fd: -EBADF");
	sendp(&r, -1, "x", 1, 0, 24, 0);
	dnow_sqp(c, &r, "SEND fd -1: -EBADF");
	sendp(&r, sp[0], dunmapped_addr(), 16, 0, 25, 0);
	dnow_sqp(c, &r, "SEND from unmapped memory: -EFAULT");
	twrite(sp[0], "fault", 5);
	recvp(&r, sp[1], dunmapped_addr(), 16, 0, 26, 0);
	dnow_sqp(c, &r, "RECV into unmapped memory: -EFAULT");
	recvp(&r, sp[1], dprot_none_page(), 16, 0, 27, 0);
	dnow_sqp(c, &r, "RECV into PROT_NONE: -EFAULT");
	drain_sock(sp[1]);
	recvp(&r, sp[1], (void *)(uintptr_t)0xffff800000000000ULL, 16, 0, 28,
	      0);
	dnow_sqp(c, &r, "RECV into a kernel address: -EFAULT");
	sendp(&r, sp[0], (void *)(uintptr_t)0xffff800000000000ULL, 16, 0, 29,
	      0);
	dnow_sqp(c, &r, "SEND from a kernel address: -EFAULT");

	/* EOF and a widowed peer (no SIGPIPE: MSG_NOSIGNAL) */
	shutdown(sp[0], SHUT_WR);
	recvp(&r, sp[1], buf, sizeof(buf), 0, 30, 0);
	dnow_sqp(c, &r, "RECV at EOF: 0");
	close(sp[1]);
	sendp(&r, sp[0], "x", 1, 0, 31, 0);
	dnow_sqp(c, &r, "SEND to a closed peer: -EPIPE, no signal");
	close(sp[0]);

	/* a SEND larger than the socket buffer, non-blocking: partial */
	if (tsockpair(sp))
		return 0;
	static char huge[1 << 20];

	sendp(&r, sp[0], huge, sizeof(huge), 0, 40, 0);
	res = dnow_sqp(c, &r, "SEND 1 MiB: what fits");
	drec_int(c, res > 0 && res < (int)sizeof(huge), "partial");
	drain_sock(sp[1]);

	/* links: SEND then RECV */
	sendp(&r, sp[0], "link", 4, 0, 41, IOSQE_IO_LINK);
	recvp(&r, sp[1], big, sizeof(big), 0, 42, IOSQE_IO_LINK);
	tprep_nop(&r, 43, 0);
	dsubmit_sqp(c, &r, "SEND -> RECV -> NOP");
	{
		struct tcqe q[3];

		dreapq(c, &r, q, 3, true, "SEND -> RECV -> NOP");
	}
	/* a failing RECV breaks its chain */
	recvp(&r, p[0], big, sizeof(big), 0, 44, IOSQE_IO_LINK);
	tprep_nop(&r, 45, 0);
	dsubmit_sqp(c, &r, "RECV(-ENOTSOCK) -> NOP");
	{
		struct tcqe q[2];

		dreapq(c, &r, q, 2, true, "RECV(-ENOTSOCK) -> NOP");
	}

	/* cancellation of a waiting RECV, by user_data and by fd */
	recvp(&r, sp[1], big, sizeof(big), 0, 50, 0);
	dsubmit_sqp(c, &r, "RECV to cancel");
	tprep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 51, 0)->addr = 50;
	dsubmit_sqp(c, &r, "cancel by user_data");
	{
		struct tcqe q[2];

		dreapq(c, &r, q, 2, false, "cancel by user_data");
	}
	recvp(&r, sp[1], big, sizeof(big), 0, 52, 0);
	dsubmit_sqp(c, &r, "RECV to cancel by fd");
	{
		struct io_uring_sqe *s = tprep(&r, IORING_OP_ASYNC_CANCEL,
					       sp[1], NULL, 0, 0, 53, 0);
		struct tcqe q[2];

		s->cancel_flags = IORING_ASYNC_CANCEL_FD;
		dsubmit_sqp(c, &r, "cancel by fd");
		dreapq(c, &r, q, 2, false, "cancel by fd");
	}
	/* CQE_SKIP_SUCCESS */
	sendp(&r, sp[0], "s", 1, 0, 54, IOSQE_CQE_SKIP_SUCCESS);
	recvp(&r, sp[1], big, 1, 0, 55, 0);
	dsubmit_sqp(c, &r, "skip-success SEND");
	dreap1(c, &r, "only the RECV posts");
	dnone_sqp(c, &r, 20, "skip-success SEND");

	tclose2(sp);
	tclose2(p);
	close(file);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_send_recv, body_send_recv)

/* ---- POLL_FIRST ---- */

static long body_poll_first(struct dctx *c, void *arg)
{
	char buf[64];
	struct tring r;
	int sp[2], p[2], file;

	(void)arg;
	if (dring_flags(c, &r, 32, 0) || pipe(p) || tsockpair(sp))
		return 0;
	file = dtmpfile(c, 64, 3);
	twrite(sp[0], "ready", 5);
	recvp(&r, sp[1], buf, sizeof(buf), 0, 1, 0)->ioprio =
		IORING_RECVSEND_POLL_FIRST;
	dnow_sqp(c, &r, "RECV POLL_FIRST, data ready");
	recvp(&r, sp[1], buf, sizeof(buf), 0, 2, 0)->ioprio =
		IORING_RECVSEND_POLL_FIRST;
	dsubmit_sqp(c, &r, "RECV POLL_FIRST, empty");
	dnone_sqp(c, &r, 30, "RECV POLL_FIRST, empty");
	twrite(sp[0], "later", 5);
	dreap1(c, &r, "RECV POLL_FIRST after a write");
	sendp(&r, sp[0], "pf", 2, 0, 3, 0)->ioprio =
		IORING_RECVSEND_POLL_FIRST;
	dnow_sqp(c, &r, "SEND POLL_FIRST");
	drain_sock(sp[1]);
	recvp(&r, sp[1], buf, sizeof(buf), MSG_DONTWAIT, 4, 0)->ioprio =
		IORING_RECVSEND_POLL_FIRST;
	dsubmit_sqp(c, &r, "RECV POLL_FIRST + MSG_DONTWAIT, empty");
	dnone_sqp(c, &r, 30, "RECV POLL_FIRST + MSG_DONTWAIT, empty");
	twrite(sp[0], "z", 1);
	dreap1(c, &r, "RECV POLL_FIRST + MSG_DONTWAIT after a write");
	/* not sockets */
	sendp(&r, p[1], "x", 1, 0, 5, 0)->ioprio = IORING_RECVSEND_POLL_FIRST;
	dnow_sqp(c, &r, "SEND POLL_FIRST on a pipe: -ENOTSOCK");
	sendp(&r, file, "x", 1, 0, 6, 0)->ioprio = IORING_RECVSEND_POLL_FIRST;
	dnow_sqp(c, &r, "SEND POLL_FIRST on a file: -ENOTSOCK");
	twrite(p[1], "x", 1);
	recvp(&r, p[0], buf, sizeof(buf), 0, 7, 0)->ioprio =
		IORING_RECVSEND_POLL_FIRST;
	dnow_sqp(c, &r, "RECV POLL_FIRST on a readable pipe: -ENOTSOCK");
	tclose2(sp);
	tclose2(p);
	close(file);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_poll_first, body_poll_first)

/*
 * POLL_FIRST arms poll before anything is tried (io_send/io_recv answer
 * -EAGAIN until REQ_F_POLLED, before they look for a socket): a file
 * ready at arm is tried at once (IO_APOLL_READY), before a cancel
 * submitted next; one not ready waits, a pipe or the ring fd too.
 */
static long body_poll_first_cancel(struct dctx *c, void *arg)
{
	struct io_uring_sqe *s;
	char buf[64];
	struct tring r;
	int sp[2], p[2];

	(void)arg;
	if (dring_flags(c, &r, 32, 0) || tsockpair(sp))
		return 0;
	twrite(sp[1], "ready", 5);
	sendp(&r, sp[0], "pf", 2, 0, 1, 0)->ioprio =
		IORING_RECVSEND_POLL_FIRST;
	dsubmit_sqp(c, &r, "SEND POLL_FIRST, writable");
	s = tprep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 2, 0);
	s->cancel_flags = IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL;
	dsubmit_sqp(c, &r, "cancel any");
	dreapn(c, &r, 2, false, "SEND POLL_FIRST, then cancel any");
	recvp(&r, sp[0], buf, sizeof(buf), 0, 3, 0)->ioprio =
		IORING_RECVSEND_POLL_FIRST;
	dsubmit_sqp(c, &r, "RECV POLL_FIRST, readable");
	s = tprep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 4, 0);
	s->cancel_flags = IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL;
	dsubmit_sqp(c, &r, "cancel any");
	dreapn(c, &r, 2, false, "RECV POLL_FIRST, then cancel any");
	/* not ready: it waits, whatever the file (a socket is looked for
	 * only when it is tried) */
	if (pipe(p))
		return 0;
	recvp(&r, p[0], buf, sizeof(buf), 0, 5, 0)->ioprio =
		IORING_RECVSEND_POLL_FIRST;
	/* (not on DEFER_TASKRUN, where what the kernel's ring fd reports
	 * depends on when its task_work ran) */
	if (!(r.flags & IORING_SETUP_DEFER_TASKRUN))
		recvp(&r, r.fd, buf, sizeof(buf), 0, 6, 0)->ioprio =
			IORING_RECVSEND_POLL_FIRST;
	dsubmit_sqp(c, &r, "RECV POLL_FIRST on an empty pipe and the ring fd");
	dnone_sqp(c, &r, 30, "they wait");
	s = tprep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 7, 0);
	s->cancel_flags = IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL;
	dsubmit_sqp(c, &r, "cancel any");
	dreapn(c, &r, (r.flags & IORING_SETUP_DEFER_TASKRUN) ? 2 : 3, false,
	       "cancelled");
	/* ready: tried, and not a socket */
	twrite(p[1], "x", 1);
	recvp(&r, p[0], buf, sizeof(buf), 0, 8, 0)->ioprio =
		IORING_RECVSEND_POLL_FIRST;
	dnow_sqp(c, &r, "RECV POLL_FIRST on a readable pipe");
	tclose2(p);
	tclose2(sp);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_poll_first_cancel, body_poll_first_cancel)

/*
 * IOSQE_ASYNC RECV and SEND on the ring's own fd: io-wq issues them, and
 * the kernel's ring file is no socket (-ENOTSOCK at once).  uuring's
 * ring fd is a socket underneath, punted with a dup of its own that must
 * still be known as the ring's: not read or written as a socket.
 */
static long body_ring_fd_async(struct dctx *c, void *arg)
{
	char buf[64] = { 0 };
	struct tring r;

	(void)arg;
	if (dring_flags(c, &r, 8, 0))
		return 0;
	recvp(&r, r.fd, buf, sizeof(buf), 0, 1, IOSQE_ASYNC);
	dsubmit_sqp(c, &r, "async RECV on the ring fd");
	dreapn(c, &r, 1, false, "async RECV on the ring fd");
	sendp(&r, r.fd, "ring", 4, 0, 2, IOSQE_ASYNC);
	dsubmit_sqp(c, &r, "async SEND on the ring fd");
	dreapn(c, &r, 1, false, "async SEND on the ring fd");
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_ring_fd_async, body_ring_fd_async)

/* ---- MSG_WAITALL ---- */

struct feeder {
	int fd;
	int chunks, size, delay_ms;
	bool close_after;
};

static void *feed(void *arg)
{
	struct feeder *f = arg;
	char b[65536];

	memset(b, 'w', sizeof(b));
	for (int i = 0; i < f->chunks; i++) {
		usleep((useconds_t)f->delay_ms * 1000);
		if (write(f->fd, b, (size_t)f->size) < 0)
			break;
	}
	if (f->close_after)
		shutdown(f->fd, SHUT_WR);
	return NULL;
}

static void *drainer(void *arg)
{
	int fd = *(int *)arg;
	char b[65536];

	usleep(20000);
	while (recv(fd, b, sizeof(b), 0) > 0)
		;
	return NULL;
}

static long body_waitall(struct dctx *c, void *arg)
{
	static char buf[1 << 20];
	struct tring r;
	pthread_t th;
	struct feeder f;
	int sp[2], dg[2], res;

	(void)arg;
	if (dring_flags(c, &r, 32, 0) ||
	    tsockpair(sp) ||
	    socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, dg))
		return 0;

	/* 100 bytes asked, 4 x 25 arrive: one CQE with 100 */
	recvp(&r, sp[1], buf, 100, MSG_WAITALL, 1, 0);
	dsubmit_sqp(c, &r, "RECV WAITALL 100");
	f = (struct feeder){ sp[0], 4, 25, 10, false };
	pthread_create(&th, NULL, feed, &f);
	dreap1(c, &r, "RECV WAITALL 100 from 4 x 25");
	pthread_join(th, NULL);

	/* EOF after 30: 30, and the chain fails */
	recvp(&r, sp[1], buf, 100, MSG_WAITALL, 2, IOSQE_IO_LINK);
	tprep_nop(&r, 3, 0);
	dsubmit_sqp(c, &r, "RECV WAITALL 100 -> NOP");
	f = (struct feeder){ sp[0], 1, 30, 10, true };
	pthread_create(&th, NULL, feed, &f);
	{
		struct tcqe q[2];

		dreapq(c, &r, q, 2, true, "30 then EOF: short, chain broken");
	}
	pthread_join(th, NULL);
	tclose2(sp);

	/* cancelled after 40 of 100: the CQE reports the 40 */
	if (tsockpair(sp))
		return 0;
	recvp(&r, sp[1], buf, 100, MSG_WAITALL, 4, 0);
	dsubmit_sqp(c, &r, "RECV WAITALL to cancel");
	twrite(sp[0], "0123456789012345678901234567890123456789", 40);
	dnone_sqp(c, &r, 50, "40 of 100 received");
	tprep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 5, 0)->addr = 4;
	dsubmit_sqp(c, &r, "cancel the partial RECV");
	{
		struct tcqe q[2];

		dreapq(c, &r, q, 2, false, "cancelled RECV WAITALL");
	}

	/* SEND WAITALL of 1 MiB with a slow reader: one CQE, all of it */
	static char src[1 << 20];

	pthread_create(&th, NULL, drainer, &sp[1]);
	sendp(&r, sp[0], src, sizeof(src), MSG_WAITALL, 6, 0);
	res = dnow_sqp(c, &r, "SEND WAITALL 1 MiB");
	drec_int(c, res, "SEND WAITALL 1 MiB res");
	shutdown(sp[0], SHUT_WR);
	pthread_join(th, NULL);
	tclose2(sp);

	/* datagrams: no retry; a short datagram is a short result */
	twrite(dg[0], "0123456789", 10);
	recvp(&r, dg[1], buf, 100, MSG_WAITALL, 7, IOSQE_IO_LINK);
	tprep_nop(&r, 8, 0);
	dsubmit_sqp(c, &r, "dgram RECV WAITALL 100 of a 10-byte datagram");
	{
		struct tcqe q[2];

		dreapq(c, &r, q, 2, true, "dgram short");
	}
	/* MSG_TRUNC: a datagram bigger than the buffer */
	twrite(dg[0], "0123456789", 10);
	recvp(&r, dg[1], buf, 4, MSG_WAITALL, 9, IOSQE_IO_LINK);
	tprep_nop(&r, 10, 0);
	dsubmit_sqp(c, &r, "dgram RECV WAITALL 4 of 10");
	{
		struct tcqe q[2];

		dreapq(c, &r, q, 2, true, "dgram truncated");
	}
	twrite(dg[0], "0123456789", 10);
	recvp(&r, dg[1], buf, 4, 0, 11, IOSQE_IO_LINK);
	tprep_nop(&r, 12, 0);
	dsubmit_sqp(c, &r, "dgram RECV 4 of 10 without WAITALL");
	{
		struct tcqe q[2];

		dreapq(c, &r, q, 2, true, "dgram truncated, no WAITALL");
	}

	/* RECVMSG WAITALL with two iovecs across three writes */
	if (tsockpair(sp))
		return 0;
	char a[7], b[9];
	struct iovec iov[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };

	msgp(&r, IORING_OP_RECVMSG, sp[1], &m, MSG_WAITALL, 13, 0);
	dsubmit_sqp(c, &r, "RECVMSG WAITALL 16");
	f = (struct feeder){ sp[0], 3, 6, 10, false };
	pthread_create(&th, NULL, feed, &f);
	dnone_sqp(c, &r, 5, "RECVMSG WAITALL waits");
	pthread_join(th, NULL);
	twrite(sp[0], "ABCDEFGH", 8);
	dreap1(c, &r, "RECVMSG WAITALL 16 from 6+6+6");
	drec_int(c, !memcmp(a, "wwwwwww", 7) && !memcmp(b, "wwwwwwwww", 9),
		 "both iovecs filled");
	drec_int(c, (long)m.msg_flags, "msg_flags written back");
	drain_sock(sp[1]);

	tclose2(sp);
	tclose2(dg);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_waitall, body_waitall)

/* ---- SENDMSG / RECVMSG ---- */

static long body_msg(struct dctx *c, void *arg)
{
	char buf[64], buf2[64], ctlbuf[CMSG_SPACE(sizeof(int) * 2)];
	struct sockaddr_un a0, a1, from;
	struct iovec iov[3];
	struct msghdr m, rm;
	struct cmsghdr *cm;
	struct tring r;
	int d0, d1, sp[2], p[2], res;
	char dir[] = "/tmp/uuring-net-XXXXXX";

	(void)arg;
	if (dring_flags(c, &r, 32, 0) || pipe(p) || !mkdtemp(dir) ||
	    tsockpair(sp))
		return 0;
	/* two bound datagram sockets */
	memset(&a0, 0, sizeof(a0));
	memset(&a1, 0, sizeof(a1));
	a0.sun_family = a1.sun_family = AF_UNIX;
	snprintf(a0.sun_path, sizeof(a0.sun_path), "%s/a0", dir);
	snprintf(a1.sun_path, sizeof(a1.sun_path), "%s/a1", dir);
	d0 = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	d1 = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (bind(d0, (struct sockaddr *)&a0, sizeof(a0)) ||
	    bind(d1, (struct sockaddr *)&a1, sizeof(a1)))
		return 0;

	/* SENDMSG to a name, two iovecs, an SCM_RIGHTS fd */
	iov[0] = (struct iovec){ "hello ", 6 };
	iov[1] = (struct iovec){ "world", 5 };
	memset(&m, 0, sizeof(m));
	m.msg_name = &a1;
	m.msg_namelen = sizeof(a1);
	m.msg_iov = iov;
	m.msg_iovlen = 2;
	memset(ctlbuf, 0, sizeof(ctlbuf));
	m.msg_control = ctlbuf;
	m.msg_controllen = CMSG_SPACE(sizeof(int));
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &p[1], sizeof(int));
	msgp(&r, IORING_OP_SENDMSG, d0, &m, 0, 1, 0);
	dnow_sqp(c, &r, "SENDMSG with a name and SCM_RIGHTS");

	/* RECVMSG: name, data, the fd; fields written back */
	char rctl[CMSG_SPACE(sizeof(int) * 2)];

	memset(&rm, 0, sizeof(rm));
	memset(&from, 0, sizeof(from));
	memset(rctl, 0, sizeof(rctl));
	memset(buf, 0, sizeof(buf));
	iov[2] = (struct iovec){ buf, sizeof(buf) };
	rm.msg_name = &from;
	rm.msg_namelen = sizeof(from);
	rm.msg_iov = &iov[2];
	rm.msg_iovlen = 1;
	rm.msg_control = rctl;
	rm.msg_controllen = sizeof(rctl);
	rm.msg_flags = 0x5a5a;
	msgp(&r, IORING_OP_RECVMSG, d1, &rm, MSG_CMSG_CLOEXEC, 2, 0);
	res = dnow_sqp(c, &r, "RECVMSG with name and control");
	drec_int(c, res == 11 && !memcmp(buf, "hello world", 11), "data");
	drec_int(c, (long)rm.msg_namelen, "msg_namelen written back");
	drec_int(c, !strcmp(from.sun_path, a0.sun_path), "sender's name");
	drec_int(c, (long)rm.msg_controllen, "msg_controllen written back");
	drec_int(c, (long)rm.msg_flags, "msg_flags written back");
	cm = CMSG_FIRSTHDR(&rm);
	if (cm && cm->cmsg_type == SCM_RIGHTS) {
		int got;

		memcpy(&got, CMSG_DATA(cm), sizeof(int));
		drec_int(c, fcntl(got, F_GETFD) == FD_CLOEXEC,
			 "received fd, close-on-exec");
		drec_int(c, write(got, "p", 1), "received fd is the pipe");
		close(got);
	} else {
		drec_int(c, -1, "no SCM_RIGHTS");
	}
	drec_int(c, read(p[0], buf2, 1), "pipe read");

	/* MSG_CTRUNC: a control buffer too small for the fd */
	msgp(&r, IORING_OP_SENDMSG, d0, &m, 0, 3, 0);
	dnow_sqp(c, &r, "SENDMSG again");
	rm.msg_controllen = sizeof(struct cmsghdr) - 1;
	rm.msg_namelen = 4; /* truncated name */
	rm.msg_flags = 0;
	msgp(&r, IORING_OP_RECVMSG, d1, &rm, 0, 4, 0);
	res = dnow_sqp(c, &r, "RECVMSG, control too small");
	drec_int(c, (long)rm.msg_flags, "msg_flags (MSG_CTRUNC)");
	drec_int(c, (long)rm.msg_controllen, "msg_controllen");
	drec_int(c, (long)rm.msg_namelen, "msg_namelen: untruncated length");

	/* RECVMSG without a name, MSG_TRUNC on a short buffer */
	sendto(d0, "0123456789", 10, 0, (struct sockaddr *)&a1, sizeof(a1));
	memset(&rm, 0, sizeof(rm));
	iov[2] = (struct iovec){ buf, 4 };
	rm.msg_iov = &iov[2];
	rm.msg_iovlen = 1;
	rm.msg_namelen = 77; /* ignored: no name */
	msgp(&r, IORING_OP_RECVMSG, d1, &rm, 0, 5, 0);
	dnow_sqp(c, &r, "RECVMSG 4 of 10, no name");
	drec_int(c, (long)rm.msg_flags, "msg_flags (MSG_TRUNC)");
	drec_int(c, (long)rm.msg_namelen, "msg_namelen untouched");

	/* SEND with addr2 (sendto) */
	{
		struct io_uring_sqe *s = sendp(&r, d0, "to", 2, 0, 6, 0);

		s->addr2 = (uint64_t)(uintptr_t)&a1;
		s->addr_len = sizeof(a1);
		dnow_sqp(c, &r, "SEND with addr2");
		drec_int(c, recv(d1, buf, sizeof(buf), MSG_DONTWAIT),
			 "datagram arrived");
		s = sendp(&r, d0, "to", 2, 0, 7, 0);
		s->addr2 = (uint64_t)(uintptr_t)&a1;
		s->addr_len = sizeof(struct sockaddr_storage) + 1;
		dnow_sqp(c, &r, "SEND addr_len too big: -EINVAL");
		s = sendp(&r, d0, "to", 2, 0, 8, 0);
		s->addr2 = (uint64_t)(uintptr_t)dunmapped_addr();
		s->addr_len = sizeof(a1);
		dnow_sqp(c, &r, "SEND addr2 unmapped: -EFAULT");
		s = sendp(&r, d0, "to", 2, 0, 9, 0);
		s->addr2 = (uint64_t)(uintptr_t)&a1;
		s->addr_len = 0;
		dnow_sqp(c, &r, "SEND addr2 with length 0");
		s = sendp(&r, d0, "to", 2, 0, 10, 0);
		s->__pad3[0] = 1;
		dnow_sqp(c, &r, "SEND __pad3 set: -EINVAL");
	}

	/* SEND_VECTORIZED: iovecs in addr/len */
	{
		struct iovec v[2] = { { "vec", 3 }, { "tor", 3 } };
		struct io_uring_sqe *s = sendp(&r, sp[0], v, 2, 0, 11, 0);

		s->ioprio = IORING_SEND_VECTORIZED;
		dnow_sqp(c, &r, "SEND vectorized");
		memset(buf, 0, sizeof(buf));
		drec_int(c, recv(sp[1], buf, sizeof(buf), MSG_DONTWAIT), "recv");
		drec_int(c, !strcmp(buf, "vector"), "vectorized data");
		s = sendp(&r, sp[0], dunmapped_addr(), 2, 0, 12, 0);
		s->ioprio = IORING_SEND_VECTORIZED;
		dnow_sqp(c, &r, "SEND vectorized, unmapped iovecs: -EFAULT");
		s = sendp(&r, sp[0], v, 1025, 0, 13, 0);
		s->ioprio = IORING_SEND_VECTORIZED;
		dnow_sqp(c, &r, "SEND vectorized, 1025 iovecs: -EINVAL");
		s = sendp(&r, sp[0], v, 0, 0, 14, 0);
		s->ioprio = IORING_SEND_VECTORIZED;
		dnow_sqp(c, &r, "SEND vectorized, 0 iovecs");
	}

	/* T2: a parked RECVMSG keeps the msghdr and iovecs it was given */
	{
		char dst[16], other[16];
		struct iovec v = { dst, sizeof(dst) };
		struct msghdr hm = { .msg_iov = &v, .msg_iovlen = 1 };

		memset(dst, 0, sizeof(dst));
		memset(other, 0, sizeof(other));
		msgp(&r, IORING_OP_RECVMSG, sp[1], &hm, 0, 15, 0);
		dsubmit_sqp(c, &r, "RECVMSG parked");
		dnone_sqp(c, &r, 20, "RECVMSG parked");
		v.iov_base = other;
		hm.msg_iovlen = 0;
		twrite(sp[0], "stable", 6);
		dreap1(c, &r, "RECVMSG after the app rewrote its msghdr");
		drec_int(c, !memcmp(dst, "stable", 6), "data in the original buffer");
		drec_int(c, other[0] == 0, "rewritten iovec unused");
	}
	/* ... and a parked SENDMSG */
	{
		char src[] = "sendmsg-stable";
		struct iovec v = { src, 14 };
		struct msghdr hm = { .msg_iov = &v, .msg_iovlen = 1 };
		long filled = fill_sock(sp[0]);

		msgp(&r, IORING_OP_SENDMSG, sp[0], &hm, 0, 16, 0);
		dsubmit_sqp(c, &r, "SENDMSG parked");
		dnone_sqp(c, &r, 20, "SENDMSG parked");
		v.iov_base = dunmapped_addr();
		hm.msg_iov = dunmapped_addr();
		drec_int(c, read_exact(sp[1], filled) == filled, "drained");
		dreap1(c, &r, "SENDMSG after the app rewrote its msghdr");
		memset(buf, 0, sizeof(buf));
		drec_int(c, recv(sp[1], buf, sizeof(buf), 0), "received");
		drec_int(c, !memcmp(buf, "sendmsg-stable", 14), "original data");
	}

	/* errors and prep checks */
	msgp(&r, IORING_OP_SENDMSG, d0, dunmapped_addr(), 0, 20, 0);
	dnow_sqp(c, &r, "SENDMSG unmapped msghdr: -EFAULT");
	msgp(&r, IORING_OP_RECVMSG, d1, dprot_none_page(), 0, 21, 0);
	dnow_sqp(c, &r, "RECVMSG PROT_NONE msghdr: -EFAULT");
	memset(&m, 0, sizeof(m));
	m.msg_iov = iov;
	m.msg_iovlen = 1025;
	msgp(&r, IORING_OP_SENDMSG, d0, &m, 0, 22, 0);
	dnow_sqp(c, &r, "SENDMSG 1025 iovecs: -EMSGSIZE");
	msgp(&r, IORING_OP_RECVMSG, d1, &m, 0, 23, 0);
	dnow_sqp(c, &r, "RECVMSG 1025 iovecs: -EMSGSIZE");
	m.msg_iovlen = 1;
	m.msg_iov = dunmapped_addr();
	msgp(&r, IORING_OP_SENDMSG, d0, &m, 0, 24, 0);
	dnow_sqp(c, &r, "SENDMSG unmapped iovecs: -EFAULT");
	iov[0] = (struct iovec){ buf, (size_t)-1 };
	m.msg_iov = iov;
	msgp(&r, IORING_OP_RECVMSG, d1, &m, 0, 25, 0);
	dnow_sqp(c, &r, "RECVMSG negative iov_len: -EINVAL");
	iov[0] = (struct iovec){ buf, 4 };
	m.msg_name = &a1;
	m.msg_namelen = (socklen_t)-1;
	msgp(&r, IORING_OP_SENDMSG, d0, &m, 0, 26, 0);
	dnow_sqp(c, &r, "SENDMSG negative namelen: -EINVAL");
	m.msg_namelen = 300; /* clamped to sockaddr_storage */
	msgp(&r, IORING_OP_SENDMSG, d0, &m, 0, 27, 0);
	dnow_sqp(c, &r, "SENDMSG namelen 300");
	drain_sock(d1);
	m.msg_name = dunmapped_addr();
	m.msg_namelen = sizeof(a1);
	msgp(&r, IORING_OP_SENDMSG, d0, &m, 0, 28, 0);
	dnow_sqp(c, &r, "SENDMSG unmapped name: -EFAULT");
	m.msg_name = NULL;
	m.msg_namelen = (socklen_t)-1;
	msgp(&r, IORING_OP_SENDMSG, sp[0], &m, 0, 29, 0);
	dnow_sqp(c, &r, "SENDMSG no name, namelen -1");
	drain_sock(sp[1]);
	m.msg_control = dunmapped_addr();
	m.msg_controllen = 32;
	msgp(&r, IORING_OP_SENDMSG, sp[0], &m, 0, 30, 0);
	dnow_sqp(c, &r, "SENDMSG unmapped control: -EFAULT at issue");
	msgp(&r, IORING_OP_SENDMSG, p[1], &m, 0, 31, 0);
	dnow_sqp(c, &r, "SENDMSG on a pipe, unmapped control: -ENOTSOCK");
	m.msg_control = NULL;
	m.msg_controllen = 0;
	msgp(&r, IORING_OP_RECVMSG, p[0], &m, 0, 32, 0);
	dnow_sqp(c, &r, "RECVMSG on a pipe: -ENOTSOCK");
	msgp(&r, IORING_OP_SENDMSG, d0, &m, 0, 33, 0)->addr2 = 1;
	dnow_sqp(c, &r, "SENDMSG addr2: -EINVAL");
	msgp(&r, IORING_OP_SENDMSG, d0, &m, 0, 34, 0)->file_index = 1;
	dnow_sqp(c, &r, "SENDMSG file_index: -EINVAL");
	msgp(&r, IORING_OP_RECVMSG, d1, &m, 0, 35, 0)->addr2 = 1;
	dnow_sqp(c, &r, "RECVMSG addr2: -EINVAL");
	msgp(&r, IORING_OP_RECVMSG, d1, &m, 0, 36, 0)->file_index = 1;
	dnow_sqp(c, &r, "RECVMSG file_index: -EINVAL");
	msgp(&r, IORING_OP_RECVMSG, d1, &m, 0, 37, 0)->ioprio = 0x80;
	dnow_sqp(c, &r, "RECVMSG unknown flag: -EINVAL");
	msgp(&r, IORING_OP_SENDMSG, d0, &m, 0, 38, 0)->ioprio = 0x80;
	dnow_sqp(c, &r, "SENDMSG unknown flag: -EINVAL");
	msgp(&r, IORING_OP_RECVMSG, d1, &m, 0, 39, 0)->ioprio =
		IORING_RECV_MULTISHOT;
	dnow_sqp(c, &r, "RECVMSG multishot without buffers: -EINVAL");
	/* a name into unmapped memory: the datagram is consumed, -EFAULT */
	sendto(d0, "nm", 2, 0, (struct sockaddr *)&a1, sizeof(a1));
	memset(&rm, 0, sizeof(rm));
	iov[2] = (struct iovec){ buf, sizeof(buf) };
	rm.msg_iov = &iov[2];
	rm.msg_iovlen = 1;
	rm.msg_name = dunmapped_addr();
	rm.msg_namelen = sizeof(a1);
	msgp(&r, IORING_OP_RECVMSG, d1, &rm, 0, 40, 0);
	dnow_sqp(c, &r, "RECVMSG name unmapped: -EFAULT");
	drec_int(c, (int)recv(d1, buf, sizeof(buf), MSG_DONTWAIT),
		 "the datagram was consumed");

	/* an empty dgram RECVMSG with MSG_DONTWAIT */
	memset(&rm, 0, sizeof(rm));
	rm.msg_iov = &iov[2];
	rm.msg_iovlen = 1;
	msgp(&r, IORING_OP_RECVMSG, d1, &rm, MSG_DONTWAIT, 41, 0);
	dnow_sqp(c, &r, "RECVMSG MSG_DONTWAIT, empty: -EAGAIN");

	close(d0);
	close(d1);
	unlink(a0.sun_path);
	unlink(a1.sun_path);
	rmdir(dir);
	tclose2(sp);
	tclose2(p);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_msg, body_msg)

/* ---- prep checks of SEND/RECV, SOCKET, ACCEPT, CONNECT, BIND, LISTEN,
 * SHUTDOWN ---- */

static long body_prep(struct dctx *c, void *arg)
{
	struct sockaddr_in sa;
	char buf[16];
	struct tring r;
	struct io_uring_sqe *s;
	int sp[2], l;

	(void)arg;
	if (dring_flags(c, &r, 32, 0) || tsockpair(sp))
		return 0;
	l = tcp_listener(&sa, 4, true);

	sendp(&r, sp[0], "x", 1, 0, 1, 0)->ioprio = 0x40;
	dnow_sqp(c, &r, "SEND unknown flag: -EINVAL");
	recvp(&r, sp[1], buf, 1, 0, 2, 0)->ioprio = 0x40;
	dnow_sqp(c, &r, "RECV unknown flag: -EINVAL");
	recvp(&r, sp[1], buf, 1, 0, 3, 0)->addr2 = 1;
	dnow_sqp(c, &r, "RECV addr2: -EINVAL");
	recvp(&r, sp[1], buf, 1, 0, 4, 0)->file_index = 1;
	dnow_sqp(c, &r, "RECV file_index: -EINVAL");
	recvp(&r, sp[1], buf, 0, 0, 5, 0)->ioprio = IORING_RECV_MULTISHOT;
	dnow_sqp(c, &r, "RECV multishot without buffers: -EINVAL");
	recvp(&r, sp[1], buf, 1, 0, 6, 0)->buf_index = 1;
	dnow_sqp(c, &r, "RECV buf_index");
	drain_sock(sp[1]);

	/* SOCKET */
	s = tprep(&r, IORING_OP_SOCKET, AF_INET, NULL, 0, SOCK_STREAM, 10, 0);
	s->addr = 1;
	dnow_sqp(c, &r, "SOCKET addr: -EINVAL");
	s = tprep(&r, IORING_OP_SOCKET, AF_INET, NULL, 0, SOCK_STREAM, 11, 0);
	s->rw_flags = 1;
	dnow_sqp(c, &r, "SOCKET rw_flags: -EINVAL");
	s = tprep(&r, IORING_OP_SOCKET, AF_INET, NULL, 0, SOCK_STREAM, 12, 0);
	s->buf_index = 1;
	dnow_sqp(c, &r, "SOCKET buf_index: -EINVAL");
	tprep(&r, IORING_OP_SOCKET, AF_INET, NULL, 0, SOCK_STREAM | 0x100, 13,
	      0);
	dnow_sqp(c, &r, "SOCKET bad type flag: -EINVAL");
	s = tprep(&r, IORING_OP_SOCKET, AF_INET, NULL, 0,
		  SOCK_STREAM | SOCK_CLOEXEC, 14, 0);
	s->file_index = 1;
	dnow_sqp(c, &r, "SOCKET direct with CLOEXEC: -EINVAL");
	tprep(&r, IORING_OP_SOCKET, AF_INET, NULL, 0, SOCK_STREAM, 15, 0)->ioprio = 1;
	dnow_sqp(c, &r, "SOCKET ioprio: -EINVAL");

	/* ACCEPT */
	acceptp(&r, l, NULL, NULL, 0, 0, 20, 0)->len = 1;
	dnow_sqp(c, &r, "ACCEPT len: -EINVAL");
	acceptp(&r, l, NULL, NULL, 0, 0, 21, 0)->buf_index = 1;
	dnow_sqp(c, &r, "ACCEPT buf_index: -EINVAL");
	acceptp(&r, l, NULL, NULL, 0, 0x10, 22, 0);
	dnow_sqp(c, &r, "ACCEPT unknown flag: -EINVAL");
	acceptp(&r, l, NULL, NULL, 0x1000, 0, 23, 0);
	dnow_sqp(c, &r, "ACCEPT bad accept flags: -EINVAL");
	acceptp(&r, l, NULL, NULL, SOCK_CLOEXEC, 0, 24, 0)->file_index = 1;
	dnow_sqp(c, &r, "ACCEPT direct with CLOEXEC: -EINVAL");
	acceptp(&r, l, NULL, NULL, 0, IORING_ACCEPT_MULTISHOT, 25, 0)
		->file_index = 1;
	dnow_sqp(c, &r, "ACCEPT multishot direct not ALLOC: -EINVAL");

	/* CONNECT, BIND */
	addrp(&r, IORING_OP_CONNECT, sp[0], &sa, sizeof(sa), 30, 0)->len = 1;
	dnow_sqp(c, &r, "CONNECT len: -EINVAL");
	addrp(&r, IORING_OP_CONNECT, sp[0], &sa, sizeof(sa), 31, 0)->rw_flags = 1;
	dnow_sqp(c, &r, "CONNECT rw_flags: -EINVAL");
	addrp(&r, IORING_OP_CONNECT, sp[0], &sa, sizeof(sa), 32, 0)->buf_index = 1;
	dnow_sqp(c, &r, "CONNECT buf_index: -EINVAL");
	addrp(&r, IORING_OP_CONNECT, sp[0], &sa, sizeof(sa), 33, 0)->splice_fd_in = 1;
	dnow_sqp(c, &r, "CONNECT splice_fd_in: -EINVAL");
	addrp(&r, IORING_OP_CONNECT, sp[0], &sa, 129, 34, 0);
	dnow_sqp(c, &r, "CONNECT addrlen 129: -EINVAL");
	addrp(&r, IORING_OP_CONNECT, sp[0], &sa, 0xffffffffULL, 35, 0);
	dnow_sqp(c, &r, "CONNECT addrlen -1: -EINVAL");
	addrp(&r, IORING_OP_CONNECT, sp[0], dunmapped_addr(), sizeof(sa), 36, 0);
	dnow_sqp(c, &r, "CONNECT unmapped address: -EFAULT");
	addrp(&r, IORING_OP_CONNECT, sp[0], &sa, sizeof(sa), 37, 0)->ioprio = 1;
	dnow_sqp(c, &r, "CONNECT ioprio: -EINVAL");
	addrp(&r, IORING_OP_BIND, sp[0], &sa, sizeof(sa), 40, 0)->len = 1;
	dnow_sqp(c, &r, "BIND len: -EINVAL");
	addrp(&r, IORING_OP_BIND, sp[0], &sa, 129, 41, 0);
	dnow_sqp(c, &r, "BIND addrlen 129: -EINVAL");
	addrp(&r, IORING_OP_BIND, sp[0], dprot_none_page(), sizeof(sa), 42, 0);
	dnow_sqp(c, &r, "BIND PROT_NONE address: -EFAULT");

	/* LISTEN, SHUTDOWN */
	tprep(&r, IORING_OP_LISTEN, sp[0], NULL, 5, 0, 50, 0)->addr = 1;
	dnow_sqp(c, &r, "LISTEN addr: -EINVAL");
	tprep(&r, IORING_OP_LISTEN, sp[0], NULL, 5, 0, 51, 0)->addr2 = 1;
	dnow_sqp(c, &r, "LISTEN addr2: -EINVAL");
	tprep(&r, IORING_OP_LISTEN, sp[0], NULL, 5, 0, 52, 0)->rw_flags = 1;
	dnow_sqp(c, &r, "LISTEN rw_flags: -EINVAL");
	tprep(&r, IORING_OP_SHUTDOWN, sp[0], NULL, SHUT_WR, 1, 53, 0);
	dnow_sqp(c, &r, "SHUTDOWN off: -EINVAL");
	tprep(&r, IORING_OP_SHUTDOWN, sp[0], NULL, SHUT_WR, 0, 54, 0)->addr = 1;
	dnow_sqp(c, &r, "SHUTDOWN addr: -EINVAL");
	tprep(&r, IORING_OP_SHUTDOWN, sp[0], NULL, SHUT_WR, 0, 55, 0)->rw_flags = 1;
	dnow_sqp(c, &r, "SHUTDOWN rw_flags: -EINVAL");
	tprep(&r, IORING_OP_SHUTDOWN, sp[0], NULL, SHUT_WR, 0, 56, 0)->buf_index = 1;
	dnow_sqp(c, &r, "SHUTDOWN buf_index: -EINVAL");

	/* IOSQE_BUFFER_SELECT on SENDMSG (never allowed) */
	{
		struct msghdr m;

		memset(&m, 0, sizeof(m));
		msgp(&r, IORING_OP_SENDMSG, sp[0], &m, 0, 60,
		     IOSQE_BUFFER_SELECT);
		dnow_sqp(c, &r, "SENDMSG BUFFER_SELECT: -EOPNOTSUPP");
	}

	close(l);
	tclose2(sp);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_prep, body_prep)

/* ---- TCP: SOCKET, BIND, LISTEN, CONNECT, ACCEPT, SHUTDOWN ---- */

static long body_tcp(struct dctx *c, void *arg)
{
	struct sockaddr_in sa, peer, sa2;
	socklen_t plen;
	char buf[64];
	struct tring r;
	struct tcqe q[4];
	int ls, cl, sv, expect, p[2], blk;

	(void)arg;
	signal(SIGPIPE, SIG_DFL);
	if (dring_flags(c, &r, 32, 0) || pipe(p))
		return 0;
	warm(&r);

	/* SOCKET gets the lowest free number, like socket(2) */
	expect = lowest_free();
	tprep(&r, IORING_OP_SOCKET, AF_INET, NULL, 0,
	      SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 1, 0);
	dsubmit_sqp(c, &r, "SOCKET");
	dreapq(c, &r, q, 1, true, "SOCKET");
	ls = q[0].res;
	drec_int(c, ls == expect, "SOCKET fd is the lowest free");
	drec_int(c, fcntl(ls, F_GETFD), "close-on-exec");
	drec_int(c, fcntl(ls, F_GETFL) & O_NONBLOCK, "non-blocking");
	tprep(&r, IORING_OP_SOCKET, 12345, NULL, 0, SOCK_STREAM, 2, 0);
	dnow_sqp(c, &r, "SOCKET bad domain: -EAFNOSUPPORT");
	tprep(&r, IORING_OP_SOCKET, AF_INET, NULL, 0, 99, 3, 0);
	dnow_sqp(c, &r, "SOCKET bad type: -EINVAL");
	tprep(&r, IORING_OP_SOCKET, AF_INET, NULL, 0, SOCK_STREAM, 4, 0)
		->file_index = 1;
	dnow_sqp(c, &r, "SOCKET direct, no file table");
	tprep(&r, IORING_OP_SOCKET, AF_INET, NULL, 0, SOCK_STREAM, 5, 0)
		->file_index = IORING_FILE_INDEX_ALLOC;
	dnow_sqp(c, &r, "SOCKET direct alloc, no file table");
	drec_int(c, lowest_free() == expect + 1, "no fd leaked");

	/* BIND + LISTEN through the ring */
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addrp(&r, IORING_OP_BIND, ls, &sa, sizeof(sa), 10, 0);
	dnow_sqp(c, &r, "BIND 127.0.0.1:0");
	plen = sizeof(sa);
	getsockname(ls, (struct sockaddr *)&sa, &plen);
	drec_int(c, sa.sin_port != 0, "bound to a port");
	addrp(&r, IORING_OP_BIND, ls, &sa, sizeof(sa), 11, 0);
	dnow_sqp(c, &r, "BIND again: -EINVAL");
	tprep(&r, IORING_OP_LISTEN, ls, NULL, 16, 0, 12, 0);
	dnow_sqp(c, &r, "LISTEN");
	{
		int other = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		addrp(&r, IORING_OP_BIND, other, &sa, sizeof(sa), 13, 0);
		dnow_sqp(c, &r, "BIND a used port: -EADDRINUSE");
		addrp(&r, IORING_OP_BIND, other, &sa, 4, 14, 0);
		dnow_sqp(c, &r, "BIND short address: -EINVAL");
		close(other);
	}
	addrp(&r, IORING_OP_BIND, p[0], &sa, sizeof(sa), 15, 0);
	dnow_sqp(c, &r, "BIND a pipe: -ENOTSOCK");
	tprep(&r, IORING_OP_LISTEN, p[0], NULL, 16, 0, 16, 0);
	dnow_sqp(c, &r, "LISTEN a pipe: -ENOTSOCK");
	{
		int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		tprep(&r, IORING_OP_LISTEN, u, NULL, 16, 0, 17, 0);
		dnow_sqp(c, &r, "LISTEN a UDP socket: -EOPNOTSUPP");
		close(u);
	}

	/* CONNECT: a non-blocking socket (EINPROGRESS, then the result) */
	cl = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	addrp(&r, IORING_OP_CONNECT, cl, &sa, sizeof(sa), 20, 0);
	dnow_sqp(c, &r, "CONNECT non-blocking socket");
	addrp(&r, IORING_OP_CONNECT, cl, &sa, sizeof(sa), 21, 0);
	dnow_sqp(c, &r, "CONNECT again: -EISCONN");
	/* ACCEPT with the peer's address */
	plen = sizeof(peer);
	memset(&peer, 0, sizeof(peer));
	expect = lowest_free();
	acceptp(&r, ls, &peer, &plen, SOCK_CLOEXEC, 0, 22, 0);
	dsubmit_sqp(c, &r, "ACCEPT");
	dreapq(c, &r, q, 1, true, "ACCEPT");
	sv = q[0].res;
	drec_int(c, sv == expect, "accepted fd is the lowest free");
	drec_int(c, (long)plen, "addrlen written");
	drec_int(c, peer.sin_family, "peer family");
	drec_int(c, fcntl(sv, F_GETFD), "accepted fd close-on-exec");
	drec_int(c, fcntl(sv, F_GETFL) & O_NONBLOCK, "accepted fd blocking");

	/* TCP SEND/RECV: SOCK_NONEMPTY, and at EOF (the kernel's inq hint
	 * counts the FIN) */
	twrite(cl, "0123456789", 10);
	await_inq(sv, 10);
	recvp(&r, sv, buf, 4, 0, 23, 0);
	dnow_sqp(c, &r, "TCP RECV 4 of 10: SOCK_NONEMPTY");
	recvp(&r, sv, buf, sizeof(buf), 0, 24, 0);
	dnow_sqp(c, &r, "TCP RECV the rest");
	recvp(&r, sv, buf, sizeof(buf), 0, 25, 0);
	dsubmit_sqp(c, &r, "TCP RECV waits");
	dnone_sqp(c, &r, 20, "TCP RECV waits");
	sendp(&r, cl, "tcp!", 4, 0, 26, 0);
	dsubmit_sqp(c, &r, "TCP SEND");
	dreapq(c, &r, q, 2, false, "TCP SEND and RECV");
	/* SHUTDOWN through the ring, then EOF on the other side */
	tprep(&r, IORING_OP_SHUTDOWN, cl, NULL, SHUT_WR, 0, 27, 0);
	dnow_sqp(c, &r, "SHUTDOWN SHUT_WR");
	await_rdhup(sv);
	recvp(&r, sv, buf, sizeof(buf), 0, 28, 0);
	dnow_sqp(c, &r, "TCP RECV at EOF");
	/* SHUTDOWN errors do not break a chain, -ENOTSOCK does */
	tprep(&r, IORING_OP_SHUTDOWN, cl, NULL, 99, 0, 29, IOSQE_IO_LINK);
	tprep_nop(&r, 30, 0);
	dsubmit_sqp(c, &r, "SHUTDOWN bad how -> NOP");
	dreapq(c, &r, q, 2, true, "SHUTDOWN bad how -> NOP");
	{
		int u = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		tprep(&r, IORING_OP_SHUTDOWN, u, NULL, SHUT_RDWR, 0, 31,
		      IOSQE_IO_LINK);
		tprep_nop(&r, 32, 0);
		dsubmit_sqp(c, &r, "SHUTDOWN unconnected -> NOP");
		dreapq(c, &r, q, 2, true, "SHUTDOWN unconnected -> NOP");
		close(u);
	}
	tprep(&r, IORING_OP_SHUTDOWN, p[0], NULL, SHUT_RDWR, 0, 33,
	      IOSQE_IO_LINK);
	tprep_nop(&r, 34, 0);
	dsubmit_sqp(c, &r, "SHUTDOWN a pipe -> NOP");
	dreapq(c, &r, q, 2, true, "SHUTDOWN a pipe -> NOP");
	tprep(&r, IORING_OP_SHUTDOWN, 9999, NULL, SHUT_RDWR, 0, 35,
	      IOSQE_IO_LINK);
	tprep_nop(&r, 36, 0);
	dsubmit_sqp(c, &r, "SHUTDOWN bad fd -> NOP");
	dreapq(c, &r, q, 2, true, "SHUTDOWN bad fd -> NOP");
	close(cl);
	close(sv);

	/* CONNECT a blocking socket */
	blk = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	addrp(&r, IORING_OP_CONNECT, blk, &sa, sizeof(sa), 40, 0);
	dnow_sqp(c, &r, "CONNECT blocking socket");
	acceptp(&r, ls, NULL, NULL, 0, 0, 41, 0);
	dsubmit_sqp(c, &r, "ACCEPT it");
	dreapq(c, &r, q, 1, true, "ACCEPT it");
	close(q[0].res);
	close(blk);
	/* refused: a port with no listener */
	{
		int tmp = tcp_listener(&sa2, 1, false);

		close(tmp);
		cl = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    0);
		addrp(&r, IORING_OP_CONNECT, cl, &sa2, sizeof(sa2), 42, 0);
		dnow_sqp(c, &r, "CONNECT refused (non-blocking)");
		close(cl);
		cl = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		addrp(&r, IORING_OP_CONNECT, cl, &sa2, sizeof(sa2), 43, 0);
		dnow_sqp(c, &r, "CONNECT refused (blocking)");
		close(cl);
	}
	addrp(&r, IORING_OP_CONNECT, p[0], &sa, sizeof(sa), 44, 0);
	dnow_sqp(c, &r, "CONNECT a pipe: -ENOTSOCK");
	addrp(&r, IORING_OP_CONNECT, 9999, &sa, sizeof(sa), 45, 0);
	dnow_sqp(c, &r, "CONNECT bad fd: -EBADF");
	cl = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	addrp(&r, IORING_OP_CONNECT, cl, &sa, 4, 46, 0);
	dnow_sqp(c, &r, "CONNECT short address: -EINVAL");
	close(cl);

	/* ACCEPT errors */
	acceptp(&r, p[0], NULL, NULL, 0, 0, 50, 0);
	dnow_sqp(c, &r, "ACCEPT a pipe: -ENOTSOCK");
	cl = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	acceptp(&r, cl, NULL, NULL, 0, 0, 51, 0);
	dnow_sqp(c, &r, "ACCEPT a non-listening socket: -EINVAL");
	close(cl);
	acceptp(&r, ls, NULL, NULL, 0, IORING_ACCEPT_DONTWAIT, 52, 0);
	dnow_sqp(c, &r, "ACCEPT DONTWAIT, none queued: -EAGAIN");
	cl = tcp_client_queued(&sa, ls);
	acceptp(&r, ls, dunmapped_addr(), &plen, 0, 0, 53, 0);
	plen = sizeof(peer);
	dnow_sqp(c, &r, "ACCEPT into an unmapped address: -EFAULT");
	close(cl);
	cl = tcp_client_queued(&sa, ls);
	acceptp(&r, ls, NULL, NULL, 0, 0, 54, 0)->file_index = 1;
	dnow_sqp(c, &r, "ACCEPT direct, no file table");
	close(cl);
	drain_sock(ls);

	close(ls);
	tclose2(p);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_tcp, body_tcp)

/* ---- CONNECT that waits: a full backlog, link timeouts, cancel ---- */

static long body_connect_wait(struct dctx *c, void *arg)
{
	struct sockaddr_in sa;
	/* 10 ms, not the 100 us of liburing's connect test: core/req.c arms
	 * a LINK_TIMEOUT before the readiness engine has the request, and a
	 * timeout firing in between is not handled yet */
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 10000000 };
	struct tring r;
	struct tcqe q[4];
	int ls, c0, c1, c2;

	(void)arg;
	if (dring_flags(c, &r, 32, 0))
		return 0;
	warm(&r);
	ls = tcp_listener(&sa, 0, false); /* room for one connection */
	c0 = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	addrp(&r, IORING_OP_CONNECT, c0, &sa, sizeof(sa), 1, 0);
	dnow_sqp(c, &r, "CONNECT fills the backlog");
	/* the next one waits (its SYN is dropped): a blocking socket, and
	 * a link timeout cancels it (liburing's connect test) */
	c1 = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	addrp(&r, IORING_OP_CONNECT, c1, &sa, sizeof(sa), 2, IOSQE_IO_LINK);
	tprep(&r, IORING_OP_LINK_TIMEOUT, -1, &ts, 1, 0, 3, 0);
	dsubmit_sqp(c, &r, "CONNECT + LINK_TIMEOUT, backlog full");
	dreapq(c, &r, q, 2, false, "CONNECT timed out");
	/* a non-blocking socket, cancelled by user_data */
	c2 = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	addrp(&r, IORING_OP_CONNECT, c2, &sa, sizeof(sa), 4, 0);
	dsubmit_sqp(c, &r, "CONNECT non-blocking, backlog full");
	dnone_sqp(c, &r, 30, "CONNECT waits");
	tprep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 5, 0)->addr = 4;
	dsubmit_sqp(c, &r, "cancel it");
	dreapq(c, &r, q, 2, false, "CONNECT cancelled");
	close(c1);
	close(c2);
	/* a blocking socket waits until the listener accepts */
	c1 = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	addrp(&r, IORING_OP_CONNECT, c1, &sa, sizeof(sa), 6, 0);
	dsubmit_sqp(c, &r, "CONNECT blocking, backlog full");
	dnone_sqp(c, &r, 30, "CONNECT waits");
	close(accept4(ls, NULL, NULL, SOCK_CLOEXEC));
	{
		/* the SYN is retransmitted after 1 s: up to 3 s */
		unsigned int got = tring_reap_wait(&r, q, 1, 3 * SEC);

		drec_cqes(c, q, got, true, "CONNECT after an accept");
	}
	close(c0);
	close(c1);
	close(ls);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_connect_wait, body_connect_wait)

/* ---- ACCEPT: waiting, blocking listeners, multishot ---- */

static long body_accept(struct dctx *c, void *arg)
{
	struct sockaddr_in sa;
	struct tring r;
	struct tcqe q[8];
	int cl[8], got, lb, ln;
	bool nb = arg != NULL;

	if (dring_flags(c, &r, 32, 0))
		return 0;
	warm(&r);
	ln = tcp_listener(&sa, 16, nb);

	/* one-shot: waits for a connection */
	acceptp(&r, ln, NULL, NULL, 0, 0, 1, 0);
	dsubmit_sqp(c, &r, "ACCEPT, none queued");
	dnone_sqp(c, &r, 30, "ACCEPT, none queued");
	cl[0] = tcp_client(&sa);
	got = (int)dreapq(c, &r, q, 1, true, "ACCEPT after a connect");
	if (got)
		close(q[0].res);
	close(cl[0]);
	/* cancellation */
	acceptp(&r, ln, NULL, NULL, 0, 0, 2, 0);
	dsubmit_sqp(c, &r, "ACCEPT to cancel");
	dnone_sqp(c, &r, 20, "ACCEPT to cancel");
	tprep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 3, 0)->addr = 2;
	dsubmit_sqp(c, &r, "cancel ACCEPT");
	dreapq(c, &r, q, 2, false, "cancel ACCEPT");
	/* ASYNC, POLL_FIRST, DONTWAIT with a connection queued */
	cl[0] = tcp_client_queued(&sa, ln);
	cl[1] = tcp_client_queued(&sa, ln);
	cl[2] = tcp_client_queued(&sa, ln);
	acceptp(&r, ln, NULL, NULL, 0, IORING_ACCEPT_POLL_FIRST, 4, 0);
	got = dnow_sqp(c, &r, "ACCEPT POLL_FIRST, queued");
	close(got);
	acceptp(&r, ln, NULL, NULL, 0, IORING_ACCEPT_DONTWAIT, 5, 0);
	got = dnow_sqp(c, &r, "ACCEPT DONTWAIT, queued");
	close(got);
	acceptp(&r, ln, NULL, NULL, 0, 0, 6, IOSQE_ASYNC);
	got = dnow_sqp(c, &r, "ACCEPT ASYNC, queued (last: no SOCK_NONEMPTY)");
	close(got);
	for (int i = 0; i < 3; i++)
		close(cl[i]);

	/* multishot: one CQE per connection, F_MORE, SOCK_NONEMPTY while
	 * more are queued */
	for (int i = 0; i < 3; i++)
		cl[i] = tcp_client_queued(&sa, ln);
	acceptp(&r, ln, NULL, NULL, SOCK_CLOEXEC, IORING_ACCEPT_MULTISHOT, 10,
		0);
	dsubmit_sqp(c, &r, "multishot ACCEPT, 3 queued");
	got = (int)dreapq(c, &r, q, 3, true, "multishot: 3 queued");
	for (int i = 0; i < got; i++)
		close(q[i].res);
	dnone_sqp(c, &r, 20, "multishot still armed");
	cl[3] = tcp_client(&sa);
	got = (int)dreapq(c, &r, q, 1, true, "multishot: a 4th connection");
	for (int i = 0; i < got; i++)
		close(q[i].res);
	cl[4] = tcp_client(&sa);
	got = (int)dreapq(c, &r, q, 1, true, "multishot: a 5th");
	for (int i = 0; i < got; i++)
		close(q[i].res);
	cl[5] = tcp_client(&sa);
	got = (int)dreapq(c, &r, q, 1, true, "multishot: a 6th");
	for (int i = 0; i < got; i++)
		close(q[i].res);
	tprep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 11, 0)->addr = 10;
	dsubmit_sqp(c, &r, "cancel the multishot");
	dreapq(c, &r, q, 2, false, "multishot cancelled");
	for (int i = 0; i < 6; i++)
		close(cl[i]);

	/* multishot ended by a full CQ: the last accept's CQE goes to the
	 * overflow list without F_MORE */
	{
		struct io_uring_params p;
		struct tring r2;

		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_CQSIZE;
		p.cq_entries = 2;
		if (dring(c, &r2, 2, &p, "small CQ ring"))
			return 0;
		for (int i = 0; i < 4; i++)
			cl[i] = tcp_client_queued(&sa, ln);
		acceptp(&r2, ln, NULL, NULL, 0, IORING_ACCEPT_MULTISHOT, 20, 0);
		dsubmit_sqp(c, &r2, "multishot, 4 queued, CQ of 2");
		usleep(20000);
		got = (int)dreapq(c, &r2, q, 3, true, "multishot ended by a full CQ");
		for (int i = 0; i < got; i++)
			close(q[i].res);
		dnone_sqp(c, &r2, 20, "ended");
		lb = accept4(ln, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		drec_int(c, lb >= 0, "the 4th connection is still queued");
		close(lb);
		for (int i = 0; i < 4; i++)
			close(cl[i]);
		tring_exit(&r2);
	}

	/* multishot with DONTWAIT: ends at the first -EAGAIN */
	cl[0] = tcp_client_queued(&sa, ln);
	acceptp(&r, ln, NULL, NULL, 0,
		IORING_ACCEPT_MULTISHOT | IORING_ACCEPT_DONTWAIT, 30, 0);
	dsubmit_sqp(c, &r, "multishot DONTWAIT");
	got = (int)dreapq(c, &r, q, 2, true, "multishot DONTWAIT");
	if (got)
		close(q[0].res);
	close(cl[0]);

	close(ln);
	tring_exit(&r);
	return 0;
}

static void sc_accept_blocking(struct dctx *c)
{
	disolated_rec(c, body_accept, "accept on a blocking listener", LIMIT_MS);
}

static long body_accept_nb(struct dctx *c, void *arg)
{
	(void)arg;
	return body_accept(c, (void *)1);
}
ISOLATED(sc_accept_nonblocking, body_accept_nb)

/* multishot ACCEPT on an AF_UNIX listener: no SOCK_NONEMPTY (the kernel
 * reports emptiness for TCP only) */
static long body_accept_unix(struct dctx *c, void *arg)
{
	struct sockaddr_un a;
	struct tring r;
	struct tcqe q[8];
	int ls, cl[3], got;
	char dir[] = "/tmp/uuring-acc-XXXXXX";

	(void)arg;
	if (dring_flags(c, &r, 32, 0) || !mkdtemp(dir))
		return 0;
	warm(&r);
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/l", dir);
	ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 8))
		return 0;
	for (int i = 0; i < 3; i++) {
		cl[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		connect(cl[i], (struct sockaddr *)&a, sizeof(a));
	}
	acceptp(&r, ls, NULL, NULL, 0, IORING_ACCEPT_MULTISHOT, 1, 0);
	dsubmit_sqp(c, &r, "unix multishot, 3 queued");
	got = (int)dreapq(c, &r, q, 3, true, "unix multishot");
	for (int i = 0; i < got; i++)
		close(q[i].res);
	tprep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 2, 0)->addr = 1;
	dsubmit_sqp(c, &r, "cancel");
	dreapq(c, &r, q, 2, false, "cancel");
	/* one-shot on the unix listener, and a CONNECT through the ring */
	acceptp(&r, ls, NULL, NULL, 0, 0, 3, 0);
	dsubmit_sqp(c, &r, "unix ACCEPT waits");
	dnone_sqp(c, &r, 20, "unix ACCEPT waits");
	{
		int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		addrp(&r, IORING_OP_CONNECT, s, &a, sizeof(a), 4, 0);
		dsubmit_sqp(c, &r, "unix CONNECT");
		got = (int)dreapq(c, &r, q, 2, false, "unix CONNECT + ACCEPT");
		for (int i = 0; i < got; i++)
			if (q[i].user_data == 3 && q[i].res >= 0)
				close(q[i].res);
		close(s);
	}
	for (int i = 0; i < 3; i++)
		close(cl[i]);
	close(ls);
	unlink(a.sun_path);
	rmdir(dir);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_accept_unix, body_accept_unix)

/* ---- direct descriptors: SOCKET and ACCEPT into the file table ---- */

static long body_direct(struct dctx *c, void *arg)
{
	struct sockaddr_un a;
	struct tring r;
	struct tcqe q[8];
	int table[4] = { -1, -1, -1, -1 }, cl[5], got;
	char dir[] = "/tmp/uuring-dd-XXXXXX", buf[16];
	struct io_uring_sqe *s;

	(void)arg;
	if (dring_flags(c, &r, 32, 0) || !mkdtemp(dir))
		return 0;
	warm(&r);
	drec_int(c, r.be->reg((unsigned int)r.fd, IORING_REGISTER_FILES, table,
			      4), "register 4 empty slots");
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/l", dir);

	s = tprep(&r, IORING_OP_SOCKET, AF_UNIX, NULL, 0,
		  SOCK_STREAM | SOCK_NONBLOCK, 1, 0);
	s->file_index = IORING_FILE_INDEX_ALLOC;
	dnow_sqp(c, &r, "SOCKET into an allocated slot");
	addrp(&r, IORING_OP_BIND, 0, &a, sizeof(a), 2, IOSQE_FIXED_FILE);
	dnow_sqp(c, &r, "BIND the direct socket");
	tprep(&r, IORING_OP_LISTEN, 0, NULL, 8, 0, 3, IOSQE_FIXED_FILE);
	dnow_sqp(c, &r, "LISTEN on it");
	s = tprep(&r, IORING_OP_SOCKET, AF_UNIX, NULL, 0, SOCK_STREAM, 4, 0);
	s->file_index = 10;
	dnow_sqp(c, &r, "SOCKET slot out of range: -EINVAL");

	/* ACCEPT into slot 2 (file_index 3), then RECV through it */
	cl[0] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	connect(cl[0], (struct sockaddr *)&a, sizeof(a));
	acceptp(&r, 0, NULL, NULL, 0, 0, 5, IOSQE_FIXED_FILE)->file_index = 3;
	dnow_sqp(c, &r, "ACCEPT into slot 2");
	twrite(cl[0], "direct", 6);
	memset(buf, 0, sizeof(buf));
	recvp(&r, 2, buf, sizeof(buf), 0, 6, IOSQE_FIXED_FILE);
	dnow_sqp(c, &r, "RECV on the direct socket");
	drec_int(c, !strcmp(buf, "direct"), "data");
	sendp(&r, 2, "back", 4, 0, 7, IOSQE_FIXED_FILE);
	dnow_sqp(c, &r, "SEND on the direct socket");
	drec_int(c, (int)recv(cl[0], buf, sizeof(buf), 0), "client got it");

	/* multishot with ALLOC: slots 1 and 3, then the table is full */
	acceptp(&r, 0, NULL, NULL, 0, IORING_ACCEPT_MULTISHOT, 8,
		IOSQE_FIXED_FILE)->file_index = IORING_FILE_INDEX_ALLOC;
	dsubmit_sqp(c, &r, "multishot ACCEPT, ALLOC");
	for (int i = 1; i < 4; i++) {
		cl[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		connect(cl[i], (struct sockaddr *)&a, sizeof(a));
		got = (int)dreapq(c, &r, q, 1, true, "multishot ALLOC");
	}
	dnone_sqp(c, &r, 20, "ended");
	/* a slot in use is replaced */
	cl[4] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	connect(cl[4], (struct sockaddr *)&a, sizeof(a));
	acceptp(&r, 0, NULL, NULL, 0, 0, 9, IOSQE_FIXED_FILE)->file_index = 2;
	dnow_sqp(c, &r, "ACCEPT over a used slot");
	twrite(cl[4], "new", 3);
	recvp(&r, 1, buf, sizeof(buf), 0, 10, IOSQE_FIXED_FILE);
	dnow_sqp(c, &r, "RECV on the replaced slot");
	(void)got;
	for (int i = 0; i < 5; i++)
		close(cl[i]);
	unlink(a.sun_path);
	rmdir(dir);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_direct, body_direct)

/* ---- SEND_ZC, SENDMSG_ZC: the send's CQE (F_MORE), then F_NOTIF ---- */

static struct io_uring_sqe *zcp(struct tring *r, int op, int fd,
				const void *buf, unsigned int len,
				uint16_t zflags, uint64_t ud, uint8_t flags)
{
	struct io_uring_sqe *s = tprep(r, op, fd, buf, len, 0, ud, flags);

	s->ioprio = zflags;
	return s;
}

static long body_zc(struct dctx *c, void *arg)
{
	static char big[1 << 20];
	struct sockaddr_in sa, ua;
	socklen_t ul = sizeof(ua);
	char buf[256], rbuf[256];
	struct tring r;
	struct tcqe q[8];
	pthread_t th;
	int ls, cl, sv, sp[2], p[2], u0, u1;

	(void)arg;
	if (dring_flags(c, &r, 32, 0) || pipe(p) || tsockpair(sp))
		return 0;
	warm(&r);
	ls = tcp_listener(&sa, 4, false);
	cl = tcp_client(&sa);
	sv = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	memset(buf, 'z', sizeof(buf));

	zcp(&r, IORING_OP_SEND_ZC, cl, buf, 100, 0, 1, 0);
	dsubmit_sqp(c, &r, "SEND_ZC 100 on TCP");
	dreapq(c, &r, q, 2, true, "SEND_ZC: the send, then the notification");
	drec_int(c, (int)recv(sv, rbuf, sizeof(rbuf), 0), "received");
	zcp(&r, IORING_OP_SEND_ZC, cl, buf, 10, IORING_SEND_ZC_REPORT_USAGE, 2,
	    0);
	dsubmit_sqp(c, &r, "SEND_ZC REPORT_USAGE");
	dreapq(c, &r, q, 2, true, "SEND_ZC REPORT_USAGE");
	drec_int(c, (int)recv(sv, rbuf, sizeof(rbuf), 0), "received");
	zcp(&r, IORING_OP_SEND_ZC, cl, buf, 10, IORING_RECVSEND_POLL_FIRST, 3,
	    0);
	dsubmit_sqp(c, &r, "SEND_ZC POLL_FIRST");
	dreapq(c, &r, q, 2, true, "SEND_ZC POLL_FIRST");
	drec_int(c, (int)recv(sv, rbuf, sizeof(rbuf), 0), "received");
	{
		struct iovec v[2] = { { buf, 3 }, { buf + 3, 4 } };

		zcp(&r, IORING_OP_SEND_ZC, cl, v, 2, IORING_SEND_VECTORIZED, 4,
		    0);
		dsubmit_sqp(c, &r, "SEND_ZC vectorized");
		dreapq(c, &r, q, 2, true, "SEND_ZC vectorized");
		drec_int(c, (int)recv(sv, rbuf, sizeof(rbuf), 0), "received");
	}

	/* errors at issue: the send's CQE still has F_MORE, and the
	 * notification follows */
	zcp(&r, IORING_OP_SEND_ZC, sp[0], buf, 10, 0, 10, 0);
	dsubmit_sqp(c, &r, "SEND_ZC on AF_UNIX: -EOPNOTSUPP");
	dreapq(c, &r, q, 2, true, "SEND_ZC on AF_UNIX: -EOPNOTSUPP");
	zcp(&r, IORING_OP_SEND_ZC, p[1], buf, 10, 0, 11, 0);
	dsubmit_sqp(c, &r, "SEND_ZC on a pipe: -ENOTSOCK");
	dreapq(c, &r, q, 2, true, "SEND_ZC on a pipe: -ENOTSOCK");
	zcp(&r, IORING_OP_SEND_ZC, 9999, buf, 10, 0, 12, 0);
	dsubmit_sqp(c, &r, "SEND_ZC bad fd: -EBADF");
	dreapq(c, &r, q, 2, true, "SEND_ZC bad fd: -EBADF");
	zcp(&r, IORING_OP_SEND_ZC, cl, dunmapped_addr(), 10, 0, 13, 0);
	dsubmit_sqp(c, &r, "SEND_ZC unmapped buffer: -EFAULT");
	dreapq(c, &r, q, 2, true, "SEND_ZC unmapped buffer: -EFAULT");
	/* prep errors before the notification exists: one CQE */
	zcp(&r, IORING_OP_SEND_ZC, cl, buf, 10, 0, 14, 0)->addr3 = 1;
	dsubmit_sqp(c, &r, "SEND_ZC addr3: -EINVAL");
	dreapq(c, &r, q, 1, true, "SEND_ZC addr3: -EINVAL");
	zcp(&r, IORING_OP_SEND_ZC, cl, buf, 10, 0, 15, IOSQE_CQE_SKIP_SUCCESS);
	dsubmit_sqp(c, &r, "SEND_ZC CQE_SKIP_SUCCESS: -EINVAL");
	dreapq(c, &r, q, 1, true, "SEND_ZC CQE_SKIP_SUCCESS: -EINVAL");
	dnone_sqp(c, &r, 10, "no notifications");

	/* links: the next request runs after the send */
	zcp(&r, IORING_OP_SEND_ZC, cl, buf, 5, 0, 20, IOSQE_IO_LINK);
	recvp(&r, sv, rbuf, sizeof(rbuf), 0, 21, 0);
	dsubmit_sqp(c, &r, "SEND_ZC -> RECV");
	dreapq(c, &r, q, 3, false, "SEND_ZC -> RECV");
	zcp(&r, IORING_OP_SEND_ZC, p[1], buf, 5, 0, 22, IOSQE_IO_LINK);
	tprep(&r, IORING_OP_NOP, -1, NULL, 0, 0, 23, 0);
	dsubmit_sqp(c, &r, "failing SEND_ZC -> NOP");
	dreapq(c, &r, q, 3, false, "failing SEND_ZC -> NOP");

	/* a send that waits (a full socket), then is cancelled */
	{
		long filled = fill_sock(cl);

		zcp(&r, IORING_OP_SEND_ZC, cl, buf, 10, 0, 30, 0);
		dsubmit_sqp(c, &r, "SEND_ZC, full socket");
		dnone_sqp(c, &r, 30, "SEND_ZC waits");
		tprep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 31, 0)->addr = 30;
		dsubmit_sqp(c, &r, "cancel it");
		dreapq(c, &r, q, 3, false, "cancelled SEND_ZC");
		drec_int(c, read_exact(sv, filled) == filled, "drained");
	}
	/* MSG_WAITALL, 1 MiB with a slow reader */
	pthread_create(&th, NULL, drainer, &sv);
	zcp(&r, IORING_OP_SEND_ZC, cl, big, sizeof(big), 0, 32, 0)->msg_flags =
		MSG_WAITALL;
	dsubmit_sqp(c, &r, "SEND_ZC WAITALL 1 MiB");
	dreapq(c, &r, q, 2, true, "SEND_ZC WAITALL 1 MiB");
	shutdown(cl, SHUT_WR);
	pthread_join(th, NULL);

	/* UDP: SEND_ZC to an address, SENDMSG_ZC */
	u0 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	u1 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&ua, 0, sizeof(ua));
	ua.sin_family = AF_INET;
	ua.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(u1, (struct sockaddr *)&ua, sizeof(ua));
	getsockname(u1, (struct sockaddr *)&ua, &ul);
	{
		struct io_uring_sqe *sq = zcp(&r, IORING_OP_SEND_ZC, u0, buf, 20,
					      0, 40, 0);

		sq->addr2 = (uint64_t)(uintptr_t)&ua;
		sq->addr_len = sizeof(ua);
		dsubmit_sqp(c, &r, "UDP SEND_ZC to an address");
		dreapq(c, &r, q, 2, true, "UDP SEND_ZC to an address");
		drec_int(c, (int)recv(u1, rbuf, sizeof(rbuf), MSG_DONTWAIT),
			 "datagram");
	}
	{
		struct iovec v[2] = { { buf, 7 }, { buf, 8 } };
		struct msghdr m = { .msg_name = &ua, .msg_namelen = sizeof(ua),
				    .msg_iov = v, .msg_iovlen = 2 };

		zcp(&r, IORING_OP_SENDMSG_ZC, u0, &m, 1, 0, 41, 0);
		dsubmit_sqp(c, &r, "UDP SENDMSG_ZC");
		dreapq(c, &r, q, 2, true, "UDP SENDMSG_ZC");
		drec_int(c, (int)recv(u1, rbuf, sizeof(rbuf), MSG_DONTWAIT),
			 "datagram");
	}

	/* registered buffers */
	{
		struct iovec reg = { big, 4096 };
		struct iovec v[2] = { { big + 10, 5 }, { big + 100, 6 } };
		struct msghdr m = { .msg_name = &ua, .msg_namelen = sizeof(ua),
				    .msg_iov = v, .msg_iovlen = 2 };
		struct io_uring_sqe *sq;

		drec_int(c, r.be->reg((unsigned int)r.fd,
				      IORING_REGISTER_BUFFERS, &reg, 1),
			 "register a buffer");
		sq = zcp(&r, IORING_OP_SEND_ZC, u0, big + 16, 64,
			 IORING_RECVSEND_FIXED_BUF, 50, 0);
		sq->addr2 = (uint64_t)(uintptr_t)&ua;
		sq->addr_len = sizeof(ua);
		dsubmit_sqp(c, &r, "SEND_ZC FIXED_BUF");
		dreapq(c, &r, q, 2, true, "SEND_ZC FIXED_BUF");
		drec_int(c, (int)recv(u1, rbuf, sizeof(rbuf), MSG_DONTWAIT),
			 "datagram");
		sq = zcp(&r, IORING_OP_SEND_ZC, u0, big + 4090, 64,
			 IORING_RECVSEND_FIXED_BUF, 51, 0);
		sq->addr2 = (uint64_t)(uintptr_t)&ua;
		sq->addr_len = sizeof(ua);
		dsubmit_sqp(c, &r, "SEND_ZC FIXED_BUF beyond the buffer: -EFAULT");
		dreapq(c, &r, q, 2, true,
		       "SEND_ZC FIXED_BUF beyond the buffer: -EFAULT");
		sq = zcp(&r, IORING_OP_SEND_ZC, u0, big, 64,
			 IORING_RECVSEND_FIXED_BUF, 52, 0);
		sq->buf_index = 3;
		dsubmit_sqp(c, &r, "SEND_ZC FIXED_BUF bad index: -EFAULT");
		dreapq(c, &r, q, 2, true, "SEND_ZC FIXED_BUF bad index: -EFAULT");
		zcp(&r, IORING_OP_SENDMSG_ZC, u0, &m, 1,
		    IORING_RECVSEND_FIXED_BUF, 54, 0);
		dsubmit_sqp(c, &r, "SENDMSG_ZC FIXED_BUF");
		dreapq(c, &r, q, 2, true, "SENDMSG_ZC FIXED_BUF");
		drec_int(c, (int)recv(u1, rbuf, sizeof(rbuf), MSG_DONTWAIT),
			 "datagram");
		v[1].iov_base = buf;
		zcp(&r, IORING_OP_SENDMSG_ZC, p[1], &m, 1,
		    IORING_RECVSEND_FIXED_BUF, 55, 0);
		dsubmit_sqp(c, &r, "SENDMSG_ZC FIXED_BUF outside, on a pipe: -EFAULT");
		dreapq(c, &r, q, 2, true,
		       "SENDMSG_ZC FIXED_BUF outside, on a pipe: -EFAULT");
	}

	close(u0);
	close(u1);
	close(cl);
	close(sv);
	close(ls);
	tclose2(sp);
	tclose2(p);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_zc, body_zc)

/*
 * Prep errors of the zero-copy sends.  Those io_send_zc_prep finds after
 * it allocated the notification (an unknown ioprio flag, an unreadable
 * destination address, addr2 on SENDMSG_ZC, FIXED_BUF with VECTORIZED,
 * an unreadable msghdr) complete with IORING_CQE_F_MORE and then a
 * notification (io_sendrecv_fail, io_send_zc_cleanup), which reports
 * IORING_NOTIF_USAGE_ZC_COPIED when usage was asked for; those found
 * before it (addr3, CQE_SKIP_SUCCESS) complete alone.
 */
static void zc_prep_case(struct dctx *c, struct tring *r, unsigned int want,
			 const char *label)
{
	struct tcqe q[4];

	dsubmit_sqp(c, r, label);
	dreapq(c, r, q, want, true, label);
	dnone_sqp(c, r, 10, label);
}

static long body_zc_prep(struct dctx *c, void *arg)
{
	struct tring r;
	char buf[16];
	struct iovec v[2] = { { buf, 3 }, { buf, 4 } };
	struct msghdr m = { .msg_iov = v, .msg_iovlen = 2 };
	struct io_uring_sqe *sq;
	int u;

	(void)arg;
	if (dring_flags(c, &r, 8, 0))
		return 0;
	u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	zcp(&r, IORING_OP_SEND_ZC, u, buf, 10, 0x80, 1, 0);
	zc_prep_case(c, &r, 2, "SEND_ZC unknown flag: -EINVAL, notification");
	zcp(&r, IORING_OP_SEND_ZC, u, buf, 10,
	    0x80 | IORING_SEND_ZC_REPORT_USAGE, 2, 0);
	zc_prep_case(c, &r, 2, "SEND_ZC unknown flag with REPORT_USAGE");
	sq = zcp(&r, IORING_OP_SEND_ZC, u, buf, 10, 0, 3, 0);
	sq->addr2 = (uint64_t)(uintptr_t)dunmapped_addr();
	sq->addr_len = 16;
	zc_prep_case(c, &r, 2, "SEND_ZC unmapped address: -EFAULT");
	sq = zcp(&r, IORING_OP_SEND_ZC, u, buf, 10,
		 IORING_SEND_ZC_REPORT_USAGE, 4, 0);
	sq->addr2 = (uint64_t)(uintptr_t)dunmapped_addr();
	sq->addr_len = 16;
	zc_prep_case(c, &r, 2, "SEND_ZC unmapped address, REPORT_USAGE");
	zcp(&r, IORING_OP_SENDMSG_ZC, u, &m, 1, 0, 5, 0)->addr2 = 1;
	zc_prep_case(c, &r, 2, "SENDMSG_ZC addr2: -EINVAL");
	zcp(&r, IORING_OP_SENDMSG_ZC, u, dunmapped_addr(), 1, 0, 6, 0);
	zc_prep_case(c, &r, 2, "SENDMSG_ZC unmapped msghdr: -EFAULT");
	zcp(&r, IORING_OP_SEND_ZC, u, v, 2,
	    IORING_RECVSEND_FIXED_BUF | IORING_SEND_VECTORIZED, 7, 0);
	zc_prep_case(c, &r, 2, "SEND_ZC FIXED_BUF + VECTORIZED: -EINVAL");
	zcp(&r, IORING_OP_SEND_ZC, u, buf, 10, 0, 8, 0)->addr3 = 1;
	zc_prep_case(c, &r, 1, "SEND_ZC addr3: -EINVAL alone");
	zcp(&r, IORING_OP_SEND_ZC, u, buf, 10, 0, 9, IOSQE_CQE_SKIP_SUCCESS);
	zc_prep_case(c, &r, 1, "SEND_ZC CQE_SKIP_SUCCESS: -EINVAL alone");
	/* in a chain: the head is cancelled, the error and notification
	 * follow */
	tprep(&r, IORING_OP_NOP, -1, NULL, 0, 0, 10, IOSQE_IO_LINK);
	zcp(&r, IORING_OP_SEND_ZC, u, buf, 10, 0x80, 11, 0);
	zc_prep_case(c, &r, 3, "SEND_ZC unknown flag linked behind a NOP");
	/* a head that fails at init cancels a SEND_ZC behind it: its CQE
	 * without F_MORE, its notification (u is not connected: it would
	 * have failed anyway, so nothing is sent on either) */
	tprep(&r, 250, -1, NULL, 0, 0, 12, IOSQE_IO_LINK);
	zcp(&r, IORING_OP_SEND_ZC, u, buf, 10, 0, 13, 0);
	zc_prep_case(c, &r, 3, "SEND_ZC behind a head that fails");
	close(u);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_zc_prep, body_zc_prep)

/* bundles: refused, like an older kernel (README feature table) */
static long body_refused(struct dctx *c, void *arg)
{
	struct tring r;
	int sp[2];

	(void)arg;
	if (dring_flags(c, &r, 8, 0) || tsockpair(sp))
		return 0;
	sendp(&r, sp[0], "b", 1, 0, 3, 0)->ioprio = IORING_RECVSEND_BUNDLE;
	dnow_sqp(c, &r, "SEND bundle without buffers");
	drain_sock(sp[1]);
	tclose2(sp);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_refused, body_refused)

static void sc_probe(struct dctx *c)
{
	static const int ops[] = {
		IORING_OP_SENDMSG, IORING_OP_RECVMSG, IORING_OP_ACCEPT,
		IORING_OP_CONNECT, IORING_OP_SEND, IORING_OP_RECV,
		IORING_OP_SHUTDOWN, IORING_OP_SOCKET, IORING_OP_BIND,
		IORING_OP_LISTEN, IORING_OP_SEND_ZC, IORING_OP_SENDMSG_ZC,
	};

	dprobe_ops(c, ops, NULL, sizeof(ops) / sizeof(ops[0]));
}

static const struct dscenario scenarios[] = {
	{ "net_send_recv", sc_send_recv, NULL },
	{ "net_poll_first", sc_poll_first, NULL },
	{ "net_poll_first_cancel", sc_poll_first_cancel, NULL },
	{ "net_ring_fd_async", sc_ring_fd_async, NULL },
	{ "net_waitall", sc_waitall, NULL },
	{ "net_msg", sc_msg, NULL },
	{ "net_prep", sc_prep, NULL },
	{ "net_tcp", sc_tcp, NULL },
	{ "net_connect_wait", sc_connect_wait, NULL },
	{ "net_accept_blocking_listener", sc_accept_blocking, NULL },
	{ "net_accept_nonblocking_listener", sc_accept_nonblocking, NULL },
	{ "net_accept_unix", sc_accept_unix, NULL },
	{ "net_direct_descriptors", sc_direct, NULL },
	{ "net_send_zc", sc_zc, NULL },
	{ "net_send_zc_prep_errors", sc_zc_prep, NULL },
	{ "net_refused_bundle", sc_refused, NULL,
	  "README feature table: bundles not done, refused like an older kernel" },
	{ "net_probe", sc_probe, NULL },
};

DTEST_MAIN(scenarios)
