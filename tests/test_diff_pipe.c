// SPDX-License-Identifier: MIT
/*
 * Differential tests: reads and writes that would block on pipes,
 * sockets, eventfds and ttys.  The kernel arms poll and completes them
 * when the file becomes ready; enter never blocks.  Covered: a read on an
 * empty pipe completed by a later write, O_NONBLOCK files (still wait),
 * a write to a full pipe, several readers queued on one pipe, EOF when the
 * writer closes, a write to a pipe whose reader goes away (-EPIPE and
 * SIGPIPE), socketpairs (stream, datagram), eventfd, a pty, links and
 * drain around parked requests, the application closing its fd while a
 * read is parked (T4: the request keeps its file), the application's fd
 * numbers, and ring teardown with parked requests.
 *
 * Every scenario body runs isolated (disolated) with a time limit.  On the
 * uuring side only, the statistics must show the requests parked on the
 * readiness engine (route_poll).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"
#include "uuring.h"

#define LIMIT_MS 5000
#define SEC 1000000000LL
#define MS 1000000LL

#define ISOLATED(sc, body) DISOLATED_SCENARIO(sc, body, LIMIT_MS)

/* ---- a read on an empty pipe completes when data is written ---- */

static long body_read_later(struct dctx *c, void *arg)
{
	static const struct { int op; uint8_t flags; const char *name; } v[] = {
		{ IORING_OP_READ, 0, "READ" },
		{ IORING_OP_READV, 0, "READV" },
		{ IORING_OP_READ, IOSQE_ASYNC, "READ ASYNC" },
		{ IORING_OP_READV, IOSQE_ASYNC, "READV ASYNC" },
	};
	struct uuring_stats s0, s1;
	char buf[64], msg[16];
	struct iovec iov[2];
	struct tring r;
	unsigned int i;
	int p[2];

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	s0 = dstats(c, &r);
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		memset(buf, 0, sizeof(buf));
		iov[0].iov_base = buf;
		iov[0].iov_len = 3;
		iov[1].iov_base = buf + 3;
		iov[1].iov_len = sizeof(buf) - 3;
		if (v[i].op == IORING_OP_READ)
			tprep(&r, IORING_OP_READ, p[0], buf, sizeof(buf),
			      12345, i, v[i].flags);
		else
			tprep(&r, IORING_OP_READV, p[0], iov, 2, 12345, i,
			      v[i].flags);
		dsubmit(c, &r, v[i].name);
		dnone(c, &r, 30, v[i].name);
		snprintf(msg, sizeof(msg), "hello %u", i);
		twrite(p[1], msg, strlen(msg));
		dreap1(c, &r, v[i].name);
		drec_int(c, !strcmp(buf, msg), "%s: data", v[i].name);
	}
	s1 = dstats(c, &r);
	if (!c->is_kernel)
		dcheck(c, s1.route_poll - s0.route_poll >= 4,
		       "4 parked pipe reads: route_poll +%llu",
		       (unsigned long long)(s1.route_poll - s0.route_poll));
	/* a zero-length read on an empty pipe completes at once */
	tprep(&r, IORING_OP_READ, p[0], buf, 0, 0, 10, 0);
	dsubmit(c, &r, "zero-length read");
	dreap1(c, &r, "zero-length read");
	tclose2(p);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_read_later, body_read_later)

/*
 * enter returns while the read waits; a thread writes later: once enter
 * has returned (returned), or after delay_ms if it does not.  "enter
 * returned only after the write" is then 0 whenever enter does not block,
 * however late the submitting thread runs (a fixed 150 ms before made it
 * 1 when that thread was kept off the CPU that long).
 */
struct later {
	int fd;
	int delay_ms;
	int written;
	int returned;
};

static void *writer(void *arg)
{
	struct later *w = arg;

	for (int i = 0; i < w->delay_ms &&
	     !__atomic_load_n(&w->returned, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	__atomic_store_n(&w->written, 1, __ATOMIC_SEQ_CST);
	twrite(w->fd, "hello", 5);
	return NULL;
}

static long body_not_blocking(struct dctx *c, void *arg)
{
	struct later w;
	struct tring r;
	pthread_t th;
	char buf[16];
	int p[2], k, ret, written;

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	for (k = 0; k < 3; k++) {
		const char *lbl = k == 0 ? "blocking pipe" :
				  k == 1 ? "O_NONBLOCK pipe" : "ASYNC";

		if (k == 1)
			fcntl(p[0], F_SETFL, O_NONBLOCK);
		w.fd = p[1];
		w.delay_ms = LIMIT_MS / 2;
		w.written = 0;
		w.returned = 0;
		pthread_create(&th, NULL, writer, &w);
		tprep(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, k,
		      k == 2 ? IOSQE_ASYNC : 0);
		ret = tring_submit(&r);
		/* look before letting the writer go */
		written = __atomic_load_n(&w.written, __ATOMIC_SEQ_CST);
		__atomic_store_n(&w.returned, 1, __ATOMIC_SEQ_CST);
		drec_int(c, ret, "%s: submit", lbl);
		drec_int(c, written, "%s: enter returned only after the write",
			 lbl);
		dreap1(c, &r, lbl);
		pthread_join(th, NULL);
	}
	/* submit and wait in one enter: returns with the CQE (the writer
	 * writes after 150 ms, while the enter waits, or before it) */
	w.delay_ms = 150;
	w.written = 0;
	w.returned = 0;
	pthread_create(&th, NULL, writer, &w);
	tprep(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 9, 0);
	tring_flush(&r);
	{
		struct io_uring_getevents_arg a;
		struct __kernel_timespec ts = { LIMIT_MS / 1000, 0 };

		memset(&a, 0, sizeof(a));
		a.ts = (uint64_t)(uintptr_t)&ts;
		drec_int(c, tring_enter(&r, 1, 1, IORING_ENTER_GETEVENTS |
					IORING_ENTER_EXT_ARG, &a, sizeof(a)),
			 "submit+wait");
	}
	drec_int(c, tring_cq_ready(&r), "CQE ready when submit+wait returns");
	dreap1(c, &r, "submit+wait read");
	pthread_join(th, NULL);
	tclose2(p);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_not_blocking, body_not_blocking)

/* O_NONBLOCK pipes still wait (FMODE_NOWAIT); RWF_NOWAIT does not */
static long body_nonblock(struct dctx *c, void *arg)
{
	char buf[4096];
	struct tring r;
	int p[2], fl0, fl1;

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || pipe2(p, O_NONBLOCK))
		return 0;
	fl0 = fcntl(p[0], F_GETFL);
	fl1 = fcntl(p[1], F_GETFL);
	tprep(&r, IORING_OP_READ, p[0], buf, 100, 0, 1, 0);
	dsubmit(c, &r, "O_NONBLOCK read");
	dnone(c, &r, 30, "O_NONBLOCK read");
	drec_int(c, fcntl(p[0], F_GETFL) == fl0,
		 "file status flags untouched while parked");
	twrite(p[1], "abc", 3);
	dreap1(c, &r, "O_NONBLOCK read");
	tprep(&r, IORING_OP_READ, p[0], buf, 100, 0, 2, 0)->rw_flags =
		RWF_NOWAIT;
	dsubmit(c, &r, "RWF_NOWAIT read");
	dreap1(c, &r, "RWF_NOWAIT read");
	tprep(&r, IORING_OP_READ, p[0], buf, 100, 0, 3, IOSQE_ASYNC)->rw_flags =
		RWF_NOWAIT;
	dsubmit(c, &r, "ASYNC RWF_NOWAIT read");
	dreap1(c, &r, "ASYNC RWF_NOWAIT read");

	drec_int(c, tfill_pipe(p[1]), "pipe capacity");
	memset(buf, 'w', sizeof(buf));
	tprep(&r, IORING_OP_WRITE, p[1], buf, 100, 0, 4, 0);
	dsubmit(c, &r, "O_NONBLOCK write to full pipe");
	dnone(c, &r, 30, "O_NONBLOCK write to full pipe");
	tprep(&r, IORING_OP_WRITE, p[1], buf, 100, 0, 5, 0)->rw_flags =
		RWF_NOWAIT;
	dsubmit(c, &r, "RWF_NOWAIT write to full pipe");
	dreap1(c, &r, "RWF_NOWAIT write to full pipe");
	drec_int(c, read(p[0], buf, 4096), "read one page");
	dreap1(c, &r, "O_NONBLOCK write completes");
	drec_int(c, fcntl(p[1], F_GETFL) == fl1, "write end flags untouched");
	tclose2(p);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_nonblock, body_nonblock)

/* ---- writes to a full pipe ---- */

static long body_full(struct dctx *c, void *arg)
{
	char *big = malloc(200000), buf[4096];
	struct iovec iov[2];
	struct tring r;
	int p[2], cap;

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	memset(big, 'b', 200000);
	cap = tfill_pipe(p[1]);
	drec_int(c, cap, "pipe capacity");
	tprep(&r, IORING_OP_WRITE, p[1], big, 100, 0, 1, 0);
	dsubmit(c, &r, "write to full pipe");
	dnone(c, &r, 30, "write to full pipe");
	drec_int(c, read(p[0], buf, 4096), "read one page");
	dreap1(c, &r, "write to full pipe");

	/* writev, ASYNC */
	tfill_pipe(p[1]);
	iov[0].iov_base = big;
	iov[0].iov_len = 10;
	iov[1].iov_base = big;
	iov[1].iov_len = 20;
	tprep(&r, IORING_OP_WRITEV, p[1], iov, 2, 0, 2, IOSQE_ASYNC);
	dsubmit(c, &r, "async writev to full pipe");
	dnone(c, &r, 30, "async writev to full pipe");
	drec_int(c, read(p[0], buf, 4096), "read one page");
	dreap1(c, &r, "async writev to full pipe");
	tdrain_fd(p[0]);

	/* larger than the pipe: a short write, not a wait */
	tprep(&r, IORING_OP_WRITE, p[1], big, 200000, 0, 3, 0);
	dsubmit(c, &r, "200000-byte write on an empty pipe");
	dreap1(c, &r, "200000-byte write on an empty pipe");
	drec_int(c, tdrain_fd(p[0]), "bytes in the pipe");
	/* half full, write more than the rest */
	twrite(p[1], big, 8192);
	tprep(&r, IORING_OP_WRITE, p[1], big, 100000, 0, 4, 0);
	dsubmit(c, &r, "100000-byte write on a partly full pipe");
	dreap1(c, &r, "100000-byte write on a partly full pipe");
	drec_int(c, tdrain_fd(p[0]), "bytes in the pipe");
	/* several writers queued on one full pipe, completed by one drain */
	tfill_pipe(p[1]);
	tprep(&r, IORING_OP_WRITE, p[1], big, 50, 0, 5, 0);
	tprep(&r, IORING_OP_WRITE, p[1], big, 60, 0, 6, 0);
	tprep(&r, IORING_OP_WRITE, p[1], big, 70, 0, 7, IOSQE_ASYNC);
	dsubmit(c, &r, "three queued writers");
	dnone(c, &r, 30, "three queued writers");
	drec_int(c, tdrain_fd(p[0]) >= cap, "drained");
	{
		struct tcqe q[3];

		dreapq(c, &r, q, 3, false, "three queued writers");
	}
	tclose2(p);
	free(big);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_full, body_full)

/* ---- several readers queued on one pipe ---- */

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int cmp_chunk(const void *a, const void *b)
{
	return memcmp(a, b, 10);
}

static long body_multi(struct dctx *c, void *arg)
{
	char bufs[4][10], want[40];
	struct tcqe q[4];
	struct tring r;
	unsigned int i, n;
	int p[2], res[4];

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	for (i = 0; i < 4; i++)
		tprep(&r, IORING_OP_READ, p[0], bufs[i], 10, 0, i,
		      i == 3 ? IOSQE_ASYNC : 0);
	dsubmit(c, &r, "4 readers");
	dnone(c, &r, 30, "4 readers");
	for (i = 0; i < 40; i++)
		want[i] = (char)('A' + i);
	twrite(p[1], want, 40);
	n = dreapq(c, &r, q, 4, false, "4 readers, one 40-byte write");
	/* which reader got which 10 bytes is not defined: compare the set */
	qsort(bufs, 4, 10, cmp_chunk);
	drec_int(c, n == 4 && !memcmp(bufs, want, 40),
		 "the 4 reads hold the 40 bytes, in 10-byte chunks");

	/* 3 readers, 15 bytes: 10 + 5, the third keeps waiting */
	for (i = 0; i < 3; i++)
		tprep(&r, IORING_OP_READ, p[0], bufs[i], 10, 0, 10 + i, 0);
	dsubmit(c, &r, "3 readers");
	dnone(c, &r, 30, "3 readers");
	twrite(p[1], want, 15);
	n = tring_reap_wait(&r, q, 2, 2 * SEC);
	for (i = 0; i < n; i++)
		res[i] = q[i].res;
	qsort(res, n, sizeof(int), cmp_int);
	drec_int(c, n, "3 readers, 15 bytes: CQEs");
	for (i = 0; i < n; i++)
		drec_int(c, res[i], "3 readers, 15 bytes: sorted res %u", i);
	dnone(c, &r, 30, "third reader");
	twrite(p[1], want, 5);
	n = tring_reap_wait(&r, q, 1, 2 * SEC);
	drec_int(c, n ? q[0].res : -99999, "third reader res");
	tclose2(p);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_multi, body_multi)

/* ---- the writer closes: EOF ---- */

static long body_eof(struct dctx *c, void *arg)
{
	char buf[3][16];
	struct iovec iov = { buf[2], 16 };
	struct tcqe q[3];
	struct tring r;
	int p[2];

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	tprep(&r, IORING_OP_READ, p[0], buf[0], 16, 0, 1, 0);
	dsubmit(c, &r, "read");
	dnone(c, &r, 30, "read");
	close(p[1]);
	dreap1(c, &r, "read after the writer closed");
	close(p[0]);

	if (pipe(p))
		return 0;
	tprep(&r, IORING_OP_READ, p[0], buf[0], 16, 0, 2, 0);
	tprep(&r, IORING_OP_READ, p[0], buf[1], 16, 0, 3, IOSQE_ASYNC);
	tprep(&r, IORING_OP_READV, p[0], &iov, 1, 0, 4, 0);
	dsubmit(c, &r, "three readers");
	dnone(c, &r, 30, "three readers");
	close(p[1]);
	dreapq(c, &r, q, 3, false, "three readers at EOF");
	/* and a new read after EOF completes at once */
	tprep(&r, IORING_OP_READ, p[0], buf[0], 16, 0, 5, 0);
	dsubmit(c, &r, "read at EOF");
	dreap1(c, &r, "read at EOF");
	close(p[0]);

	/* data then EOF: the data first, then 0 */
	if (pipe(p))
		return 0;
	tprep(&r, IORING_OP_READ, p[0], buf[0], 16, 0, 6, 0);
	dsubmit(c, &r, "read before data+close");
	twrite(p[1], "xyz", 3);
	close(p[1]);
	dreap1(c, &r, "read gets the data");
	tprep(&r, IORING_OP_READ, p[0], buf[0], 16, 0, 7, 0);
	dsubmit(c, &r, "then EOF");
	dreap1(c, &r, "then EOF");
	close(p[0]);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_eof, body_eof)

/* ---- the reader goes away: -EPIPE, and SIGPIPE to the submitter ---- */

static volatile sig_atomic_t sigpipes;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

static long body_widowed(struct dctx *c, void *arg)
{
	struct sigaction sa;
	char buf[128];
	struct tring r;
	int p[2];

	(void)arg;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigpipe;
	sigaction(SIGPIPE, &sa, NULL);
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	/* inline: the pipe has no reader when the write is issued */
	close(p[0]);
	sigpipes = 0;
	tprep(&r, IORING_OP_WRITE, p[1], buf, 10, 0, 1, 0);
	dsubmit(c, &r, "write, no reader");
	dreap1(c, &r, "write, no reader");
	drec_int(c, sigpipes, "SIGPIPEs (inline write)");
	close(p[1]);

	/* parked on a full pipe, then the reader closes */
	if (pipe(p))
		return 0;
	tfill_pipe(p[1]);
	sigpipes = 0;
	tprep(&r, IORING_OP_WRITE, p[1], buf, 100, 0, 2, 0);
	dsubmit(c, &r, "write to full pipe");
	dnone(c, &r, 30, "write to full pipe");
	close(p[0]);
	dreap1(c, &r, "parked write, reader closed");
	usleep(20 * 1000);
	drec_int(c, sigpipes, "SIGPIPEs (parked write)");
	close(p[1]);

	/* the same, ASYNC */
	if (pipe(p))
		return 0;
	tfill_pipe(p[1]);
	sigpipes = 0;
	tprep(&r, IORING_OP_WRITE, p[1], buf, 100, 0, 3, IOSQE_ASYNC);
	dsubmit(c, &r, "async write to full pipe");
	dnone(c, &r, 30, "async write to full pipe");
	close(p[0]);
	dreap1(c, &r, "parked async write, reader closed");
	close(p[1]);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_widowed, body_widowed)

/* ---- sockets ---- */

static long body_sockets(struct dctx *c, void *arg)
{
	char buf[4096], big[4096];
	struct tcqe q[2];
	struct tring r;
	int sv[2];

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return 0;
	memset(big, 's', sizeof(big));
	/* stream */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 0;
	tprep(&r, IORING_OP_READ, sv[0], buf, sizeof(buf), 0, 1, 0);
	dsubmit(c, &r, "stream read");
	dnone(c, &r, 30, "stream read");
	twrite(sv[1], "ping", 4);
	dreap1(c, &r, "stream read");
	drec_int(c, !memcmp(buf, "ping", 4), "stream data");
	/* both directions parked at once */
	tprep(&r, IORING_OP_READ, sv[0], buf, sizeof(buf), 0, 2, 0);
	tprep(&r, IORING_OP_READ, sv[1], buf + 100, 100, 0, 3, IOSQE_ASYNC);
	dsubmit(c, &r, "reads on both ends");
	dnone(c, &r, 30, "reads on both ends");
	twrite(sv[1], "to0", 3);
	twrite(sv[0], "to1!", 4);
	dreapq(c, &r, q, 2, false, "reads on both ends");
	/* a write that waits for buffer space */
	{
		int fl = fcntl(sv[0], F_GETFL);
		ssize_t n;

		fcntl(sv[0], F_SETFL, fl | O_NONBLOCK);
		do
			n = write(sv[0], big, sizeof(big));
		while (n > 0);
		fcntl(sv[0], F_SETFL, fl);
	}
	tprep(&r, IORING_OP_WRITE, sv[0], big, 100, 0, 4, 0);
	dsubmit(c, &r, "write to full socket");
	dnone(c, &r, 30, "write to full socket");
	tdrain_fd(sv[1]);
	dreap1(c, &r, "write to full socket");
	tdrain_fd(sv[1]);
	/* peer shutdown / close: EOF */
	tprep(&r, IORING_OP_READ, sv[0], buf, sizeof(buf), 0, 5, 0);
	dsubmit(c, &r, "read, then peer SHUT_WR");
	dnone(c, &r, 30, "read, then peer SHUT_WR");
	shutdown(sv[1], SHUT_WR);
	dreap1(c, &r, "read, then peer SHUT_WR");
	tprep(&r, IORING_OP_READ, sv[1], buf, sizeof(buf), 0, 6, 0);
	dsubmit(c, &r, "read, then peer close");
	dnone(c, &r, 30, "read, then peer close");
	close(sv[0]);
	dreap1(c, &r, "read, then peer close");
	close(sv[1]);

	/*
	 * datagrams: one read per datagram.  Which of two queued reads gets
	 * the first datagram is not defined (the kernel wakes the last one
	 * queued first), so the buffers are equal and the results a set.
	 */
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv))
		return 0;
	tprep(&r, IORING_OP_READ, sv[0], buf, 100, 0, 7, 0);
	tprep(&r, IORING_OP_READ, sv[0], buf + 100, 100, 0, 8, 0);
	dsubmit(c, &r, "datagram reads");
	dnone(c, &r, 30, "datagram reads");
	twrite(sv[1], "0123456789", 10);
	twrite(sv[1], "abc", 3);
	{
		unsigned int n = tring_reap_wait(&r, q, 2, 2 * SEC);
		int res[2] = { n > 0 ? q[0].res : -1, n > 1 ? q[1].res : -1 };

		drec_int(c, n, "datagram reads: CQEs");
		qsort(res, 2, sizeof(int), cmp_int);
		drec_int(c, res[0], "datagram reads: smaller res");
		drec_int(c, res[1], "datagram reads: larger res");
	}
	/* a datagram larger than the buffer is truncated */
	tprep(&r, IORING_OP_READ, sv[0], buf, 4, 0, 9, 0);
	dsubmit(c, &r, "short datagram read");
	dnone(c, &r, 30, "short datagram read");
	twrite(sv[1], "0123456789", 10);
	dreap1(c, &r, "short datagram read");
	tclose2(sv);

	/* seqpacket, ASYNC */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv))
		return 0;
	tprep(&r, IORING_OP_READ, sv[0], buf, sizeof(buf), 0, 10, IOSQE_ASYNC);
	dsubmit(c, &r, "seqpacket read");
	dnone(c, &r, 30, "seqpacket read");
	twrite(sv[1], "packet", 6);
	dreap1(c, &r, "seqpacket read");
	tclose2(sv);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_sockets, body_sockets)

/* ---- eventfd and pty ---- */

static long body_eventfd_pty(struct dctx *c, void *arg)
{
	uint64_t v = 0, one = 7;
	char buf[64];
	struct tring r;
	int efd, m, s;

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return 0;
	efd = eventfd(0, EFD_CLOEXEC);
	tprep(&r, IORING_OP_READ, efd, &v, 8, 0, 1, 0);
	dsubmit(c, &r, "eventfd read");
	dnone(c, &r, 30, "eventfd read");
	twrite(efd, &one, 8);
	dreap1(c, &r, "eventfd read");
	drec_int(c, (long)v, "eventfd value");
	tprep(&r, IORING_OP_READ, efd, &v, 4, 0, 2, 0);
	dsubmit(c, &r, "eventfd read of 4 bytes");
	dreap1(c, &r, "eventfd read of 4 bytes");
	close(efd);

	m = posix_openpt(O_RDWR | O_NOCTTY);
	drec_int(c, m >= 0, "posix_openpt");
	if (m < 0 || grantpt(m) || unlockpt(m))
		goto out;
	s = open(ptsname(m), O_RDWR | O_NOCTTY);
	if (s < 0)
		goto out;
	tprep(&r, IORING_OP_READ, m, buf, sizeof(buf), 0, 3, 0);
	dsubmit(c, &r, "pty master read");
	dnone(c, &r, 30, "pty master read");
	twrite(s, "hi\n", 3);
	dreap1(c, &r, "pty master read");
	tprep(&r, IORING_OP_READ, s, buf, sizeof(buf), 0, 4, 0);
	dsubmit(c, &r, "pty slave read");
	dnone(c, &r, 30, "pty slave read");
	twrite(m, "line\n", 5);
	dreap1(c, &r, "pty slave read");
	close(s);
	close(m);
out:
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_eventfd_pty, body_eventfd_pty)

/* ---- links and drain around parked requests ---- */

static long body_links(struct dctx *c, void *arg)
{
	char buf[16], out[16];
	struct tcqe q[4];
	struct tring r;
	int p[2], fd;

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	fd = dtmpfile(c, 0, 0);
	/* read (parks) -> write to a file -> nop, all in order */
	tprep(&r, IORING_OP_READ, p[0], buf, 5, 0, 1, IOSQE_IO_LINK);
	tprep(&r, IORING_OP_WRITE, fd, buf, 5, 0, 2, IOSQE_IO_LINK);
	tprep_nop(&r, 3, 0);
	dsubmit(c, &r, "read->write->nop");
	dnone(c, &r, 30, "read->write->nop");
	twrite(p[1], "chain", 5);
	dreapq(c, &r, q, 3, true, "read->write->nop");
	drec_int(c, pread(fd, out, 5, 0) == 5 && !memcmp(out, "chain", 5),
		 "the linked write saw the read's data");
	/* a short read (EOF-free, 2 of 5 bytes) breaks the chain */
	tprep(&r, IORING_OP_READ, p[0], buf, 5, 0, 4, IOSQE_IO_LINK);
	tprep_nop(&r, 5, 0);
	dsubmit(c, &r, "short pipe read link");
	dnone(c, &r, 30, "short pipe read link");
	twrite(p[1], "ab", 2);
	dreapq(c, &r, q, 2, true, "short pipe read link");
	/* nop -> async read (parks) -> nop */
	tprep_nop(&r, 6, IOSQE_IO_LINK);
	tprep(&r, IORING_OP_READ, p[0], buf, 3, 0, 7,
	      IOSQE_IO_LINK | IOSQE_ASYNC);
	tprep_nop(&r, 8, 0);
	dsubmit(c, &r, "nop->async read->nop");
	dnone(c, &r, 30, "nop->async read->nop");
	twrite(p[1], "xyz", 3);
	dreapq(c, &r, q, 3, true, "nop->async read->nop");
	/* hardlink: EOF (0 bytes, short) does not break it */
	tprep(&r, IORING_OP_READ, p[0], buf, 3, 0, 9, IOSQE_IO_HARDLINK);
	tprep_nop(&r, 10, 0);
	dsubmit(c, &r, "read at EOF hardlink");
	dnone(c, &r, 30, "read at EOF hardlink");
	close(p[1]);
	dreapq(c, &r, q, 2, true, "read at EOF hardlink");
	close(p[0]);

	/* drain waits for a parked read; what follows waits for the drain */
	if (pipe(p))
		return 0;
	tprep(&r, IORING_OP_READ, p[0], buf, 5, 0, 20, 0);
	tprep_nop(&r, 21, IOSQE_IO_DRAIN);
	tprep_nop(&r, 22, 0);
	dsubmit(c, &r, "parked read, drain, nop");
	dnone(c, &r, 30, "parked read, drain, nop");
	twrite(p[1], "drain", 5);
	dreapq(c, &r, q, 3, true, "parked read, drain, nop");
	/* drain after a parked write on a full pipe, async */
	tfill_pipe(p[1]);
	tprep(&r, IORING_OP_WRITE, p[1], buf, 5, 0, 23, IOSQE_ASYNC);
	tprep_nop(&r, 24, IOSQE_IO_DRAIN | IOSQE_ASYNC);
	dsubmit(c, &r, "parked async write, drain");
	dnone(c, &r, 30, "parked async write, drain");
	tdrain_fd(p[0]);
	dreapq(c, &r, q, 2, true, "parked async write, drain");
	tclose2(p);
	close(fd);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_links, body_links)

/* ---- T4: the application closes its fd while a read is parked ---- */

/*
 * An IOSQE_ASYNC request looks its fd up when an io-wq worker first runs
 * it (the kernel's io_wq_submit_work assigns the file), not at submit: a
 * dup2 over the number before that would give it the new file.  The
 * worker is created for the queued work, so once every iou-wrk thread is
 * idle (the kernel's io_wq_worker; uuring's workers sleep on a futex) or
 * blocked in the pipe read, the work has been taken and its file is the
 * pipe.  A fixed 30 ms was not always enough beside heavy load: the
 * kernel's read then read /dev/zero and the pipe lost its last reader
 * (the write aborted the scenario: "kernel-side CRASHED").
 */
static void await_async_taken(void)
{
	for (int i = 0; i < LIMIT_MS; i++) {
		int all = tthreads_named("iou-wrk-", true, NULL, NULL);
		int idle = tthreads_in_wchan("iou-wrk-", true, "io_wq_worker") +
			   tthreads_in_wchan("iou-wrk-", true,
					     "futex_do_wait") +
			   tthreads_in_wchan("iou-wrk-", true, "pipe_read");

		if (all > 0 && idle == all)
			return;
		usleep(1000);
	}
}

static long body_close_parked(struct dctx *c, void *arg)
{
	char buf[16], b2[16];
	struct tring r;
	int p[2], q[2], p0, ret;

	(void)arg;
	signal(SIGPIPE, SIG_IGN);
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	memset(buf, 0, sizeof(buf));
	tprep(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 1, 0);
	dsubmit(c, &r, "read");
	dnone(c, &r, 30, "read");
	p0 = p[0];
	close(p[0]);
	/* the number is reused by a new pipe */
	if (pipe(q))
		return 0;
	drec_int(c, q[0] == p0, "new pipe reuses the closed number");
	twrite(q[1], "other", 5);
	twrite(p[1], "first", 5);
	dreap1(c, &r, "parked read after its fd was closed");
	drec_int(c, !memcmp(buf, "first", 5), "data from the original pipe");
	ret = (int)read(q[0], b2, sizeof(b2));
	drec_int(c, ret == 5 && !memcmp(b2, "other", 5),
		 "the new pipe's data untouched");
	/*
	 * The request was the last reader: the pipe is widowed once it has
	 * dropped its file reference, which may come a moment after its CQE
	 * (after the kernel's task_work, or uuring's completion).  Wait for
	 * that (the write end polls POLLERR when no reader is left) instead
	 * of a fixed 20 ms; LIMIT_MS bounds it.
	 */
	for (int i = 0; i < LIMIT_MS; i++) {
		struct pollfd pf = { .fd = p[1], .events = POLLOUT };

		if (poll(&pf, 1, 0) == 1 && (pf.revents & POLLERR))
			break;
		usleep(1000);
	}
	ret = (int)write(p[1], "x", 1);
	drec_int(c, ret < 0 ? -errno : ret, "write with no reader left");
	close(p[1]);
	tclose2(q);

	/* close and dup2 another file over the number, ASYNC read */
	if (pipe(p))
		return 0;
	tprep(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 2, IOSQE_ASYNC);
	dsubmit(c, &r, "async read");
	dnone(c, &r, 30, "async read");
	await_async_taken();
	{
		int z = open("/dev/zero", O_RDONLY);

		dup2(z, p[0]);
		close(z);
	}
	twrite(p[1], "second", 6);
	dreap1(c, &r, "async read after dup2 over its fd");
	drec_int(c, !memcmp(buf, "second", 6), "async read data");
	close(p[0]);

	close(p[1]);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_close_parked, body_close_parked)

/*
 * The kernel's requests hold file references, not file descriptors: a
 * parked request leaves the application's fd table as it was, so the
 * next open() gets the same number it would get without io_uring.
 */
static long body_fd_numbers(struct dctx *c, void *arg)
{
	char buf[16];
	struct tring r;
	int p[2], fd, base;

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	fd = open("/dev/null", O_RDONLY);
	base = fd;
	close(fd);
	tprep(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 1, 0);
	dsubmit(c, &r, "parked read");
	dnone(c, &r, 30, "parked read");
	fd = open("/dev/null", O_RDONLY);
	drec_int(c, fd - base, "next fd number while a read is parked (+0 = lowest free)");
	close(fd);
	tprep(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 2, IOSQE_ASYNC);
	dsubmit(c, &r, "second parked read");
	dnone(c, &r, 30, "second parked read");
	fd = open("/dev/null", O_RDONLY);
	drec_int(c, fd - base, "next fd number, two reads parked");
	close(fd);
	twrite(p[1], "0123456789abcdefghijklmnopqrstuv", 32);
	{
		struct tcqe q[2];

		dreapq(c, &r, q, 2, false, "both reads");
	}
	usleep(20 * 1000);
	fd = open("/dev/null", O_RDONLY);
	drec_int(c, fd - base, "next fd number after they completed");
	close(fd);
	tclose2(p);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_fd_numbers, body_fd_numbers)

/* ---- many parked reads on many pipes ---- */

static long body_many(struct dctx *c, void *arg)
{
	enum { N = 48 };
	struct uuring_stats s0, s1;
	int p[N][2], i;
	char buf[N][8];
	struct tcqe q[N];
	struct tring r;

	(void)arg;
	if (dring_flags(c, &r, 64, 0))
		return 0;
	s0 = dstats(c, &r);
	for (i = 0; i < N; i++) {
		if (pipe(p[i]))
			return 0;
		tprep(&r, IORING_OP_READ, p[i][0], buf[i], 8, 0, i,
		      i & 1 ? IOSQE_ASYNC : 0);
	}
	dsubmit(c, &r, "48 reads on 48 pipes");
	dnone(c, &r, 30, "48 reads");
	/* the ASYNC half parks only once an io-wq worker has tried it: wait
	 * for that (10 s at most), not for a time; a read that runs after
	 * the writes would complete without parking (seen under TSan) */
	for (int ms = 0; !c->is_kernel && ms < 10000; ms++) {
		s1 = dstats(c, &r);
		if (s1.route_poll - s0.route_poll >= N)
			break;
		usleep(1000);
	}
	for (i = N - 1; i >= 0; i--)
		twrite(p[i][1], &i, sizeof(i));
	dreapq(c, &r, q, N, false, "48 reads");
	s1 = dstats(c, &r);
	if (!c->is_kernel)
		dcheck(c, s1.route_poll - s0.route_poll >= N,
		       "48 parked reads: route_poll +%llu",
		       (unsigned long long)(s1.route_poll - s0.route_poll));
	for (i = 0; i < N; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_many, body_many)

/* ---- ring teardown with parked requests ---- */

static long body_teardown(struct dctx *c, void *arg)
{
	char buf[16];
	struct tring r;
	int p[2], ret;

	(void)arg;
	signal(SIGPIPE, SIG_IGN);
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	tprep(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 1, 0);
	tprep(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 2, IOSQE_ASYNC);
	dsubmit(c, &r, "two parked reads");
	dnone(c, &r, 30, "two parked reads");
	tring_exit(&r);
	/*
	 * The kernel cancels the parked reads from its ring exit work, some
	 * time after close(2).  Wait for that, not for a fixed 100 ms (after
	 * which a read still armed could have taken the data written below):
	 * with the application's read end closed, the write end polls
	 * POLLERR once the reads' references to the pipe are gone too.
	 */
	close(p[0]);
	for (int i = 0; i < LIMIT_MS; i++) {
		struct pollfd pf = { .fd = p[1], .events = POLLOUT };

		if (poll(&pf, 1, 0) == 1 && (pf.revents & POLLERR))
			break;
		usleep(1000);
	}
	/* the cancelled reads hold no reference to the pipe any more */
	ret = (int)write(p[1], "x", 1);
	drec_int(c, ret < 0 ? -errno : ret, "write after the last reader closed");
	/* and took nothing: a new read end gets all that is written now */
	{
		char path[64];
		int rfd;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", p[1]);
		rfd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		drec_int(c, rfd >= 0, "the pipe reopened for reading");
		if (rfd >= 0) {
			twrite(p[1], "after", 5);
			ret = (int)tdrain_fd(rfd);
			drec_int(c, ret,
				 "bytes left for the application after teardown");
			close(rfd);
		}
	}
	close(p[1]);
	return 0;
}
ISOLATED(sc_teardown, body_teardown)

static const struct dscenario scenarios[] = {
	{ "pipe_read_later", sc_read_later, NULL },
	{ "pipe_enter_not_blocking", sc_not_blocking, NULL },
	{ "pipe_nonblock", sc_nonblock, NULL },
	{ "pipe_full_write", sc_full, NULL },
	{ "pipe_multi_readers", sc_multi, NULL },
	{ "pipe_eof", sc_eof, NULL },
	{ "pipe_widowed_write", sc_widowed, NULL },
	{ "sockets", sc_sockets, NULL },
	{ "eventfd_pty", sc_eventfd_pty, NULL },
	{ "parked_links_drain", sc_links, NULL },
	{ "close_while_parked", sc_close_parked, NULL },
	{ "fd_numbers", sc_fd_numbers, NULL },
	{ "many_pipes", sc_many, NULL },
	{ "teardown_parked", sc_teardown, NULL },
};

DTEST_MAIN(scenarios)
