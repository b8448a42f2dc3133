// SPDX-License-Identifier: MIT
/*
 * Differential tests: IORING_RECVSEND_BUNDLE (the kernel's io_recv with
 * io_recv_buf_select and io_bundle_nbufs, io_send with
 * io_send_select_buffer, kbuf.c's io_buffers_peek and
 * io_buffers_select): one receive or send over several provided
 * buffers, the CQE naming the first; how many are mapped (the length
 * asked for, the bytes still queued, the request's vector), appending
 * when more is queued, the ring's last buffer ending a multishot one,
 * incremental rings, legacy groups, errors; SEND with provided buffers;
 * and the multishot-receive retry cap (MULTISHOT_MAX_RETRY): two
 * flooded sockets take turns.  Every CQE, the bytes received and the
 * ring's head are compared.  Loopback only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"

#define BGID 3
#define RING_PAGE 4096

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
	setsockopt(sp[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(sp[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

/* A buffer ring of n buffers of len bytes (bids 0..n-1, all added). */
struct pring {
	struct io_uring_buf_ring *br;
	char *mem;
	unsigned int n;
	uint32_t len;
	uint16_t tail;
};

static int pring_make(struct dctx *c, struct tring *r, struct pring *p,
		      unsigned int entries, unsigned int n, uint32_t len,
		      uint16_t flags)
{
	memset(p, 0, sizeof(*p));
	p->br = mmap(NULL, RING_PAGE * 4, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p->mem = calloc(n ? n : 1, len);
	p->n = n;
	p->len = len;
	if (p->br == MAP_FAILED || !p->mem)
		return -1;
	drec_int(c, tpbuf_reg(r, p->br, entries, BGID, flags),
		 "register the buffer ring");
	for (unsigned int i = 0; i < n; i++)
		tbuf_ring_add(p->br, entries - 1, &p->tail,
			      p->mem + (size_t)i * len, len, (uint16_t)i);
	return 0;
}

static void pring_free(struct pring *p)
{
	munmap(p->br, RING_PAGE * 4);
	free(p->mem);
}

static struct io_uring_sqe *recv_bundle(struct tring *r, int fd,
					unsigned int len, uint64_t ud,
					bool mshot)
{
	struct io_uring_sqe *sqe = tprep(r, IORING_OP_RECV, fd, NULL, len, 0,
					 ud, IOSQE_BUFFER_SELECT);

	sqe->buf_group = BGID;
	sqe->ioprio = IORING_RECVSEND_BUNDLE |
		      (mshot ? IORING_RECV_MULTISHOT : 0);
	return sqe;
}

/* n bytes of a pattern that depends on where they are in the stream */
static void send_pat(int fd, size_t start, size_t n)
{
	char b[4096];

	for (size_t i = 0; i < n; i++)
		b[i] = (char)('a' + (start + i) % 23);
	twrite(fd, b, n);
}

/* the first n bytes received, in buffer order, match the stream */
static int stream_ok(const char *mem, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (mem[i] != (char)('a' + i % 23))
			return 0;
	return 1;
}

/* the buffer ring's head (REGISTER_PBUF_STATUS) */
static void rec_head(struct dctx *c, struct tring *r, const char *label)
{
	drec_int(c, tpbuf_head(r, BGID), "%s: ring head", label);
}

/*
 * Reaps CQEs until their results add up to bytes (2 s at most per
 * wait) and records them: the same bytes may come in one CQE or
 * several, which is what is compared.
 */
static void reap_bytes(struct dctx *c, struct tring *r, long bytes,
		       const char *label)
{
	struct tcqe q[64];
	unsigned int n = 0;
	long sum = 0;

	while (sum < bytes && n < 64) {
		if (tring_reap_wait(r, &q[n], 1, 2000000000LL) != 1)
			break;
		if (q[n].res > 0)
			sum += q[n].res;
		n++;
	}
	drec_cqes(c, q, n, true, "%s", label);
}

/* waits until fd has n bytes queued (FIONREAD), 2 s at most */
static void wait_queued(int fd, int n)
{
	int q = 0;

	for (int i = 0; i < 2000; i++) {
		if (!ioctl(fd, FIONREAD, &q) && q >= n)
			return;
		usleep(1000);
	}
}

/*
 * One-shot bundles on TCP and AF_UNIX stream sockets: without a length
 * one buffer is mapped, then, the buffer filled and more queued, as many
 * as the rest needs (one cut short is left out); with a length, what it
 * needs; a first buffer longer than the length has its entry shortened.
 */
static void oneshot(struct dctx *c, bool tcp)
{
	struct tring r;
	struct pring p;
	int sp[2];

	if (dring_flags(c, &r, 16, 0) ||
	    (tcp ? tcp_pair(sp) : socketpair(AF_UNIX, SOCK_STREAM, 0, sp)))
		return;
	if (pring_make(c, &r, &p, 16, 16, 16, 0))
		return;
	send_pat(sp[0], 0, 40);
	wait_queued(sp[1], 40);
	recv_bundle(&r, sp[1], 0, 1, false);
	dsubmit(c, &r, "40 queued, no length");
	dreapn(c, &r, 1, true, "16, then 16 more appended");
	rec_head(c, &r, "after 32");
	recv_bundle(&r, sp[1], 0, 2, false);
	dsubmit(c, &r, "8 left");
	dreapn(c, &r, 1, true, "8 into one buffer");
	drec_int(c, stream_ok(p.mem, 40), "40 bytes in order");
	send_pat(sp[0], 40, 120);
	wait_queued(sp[1], 120);
	recv_bundle(&r, sp[1], 10, 3, false);
	dsubmit(c, &r, "length 10");
	dreapn(c, &r, 1, true, "10 bytes, its entry cut to 10");
	drec_int(c, p.br->bufs[3].len, "the entry's length");
	recv_bundle(&r, sp[1], 40, 4, false);
	dsubmit(c, &r, "length 40");
	dreapn(c, &r, 1, true, "two buffers (the third would be cut)");
	recv_bundle(&r, sp[1], 48, 5, false);
	dsubmit(c, &r, "length 48");
	dreapn(c, &r, 1, true, "three buffers, then more appended");
	rec_head(c, &r, "after length 10");
	recv_bundle(&r, sp[1], 0, 6, false);
	dsubmit(c, &r, "the rest");
	dreapn(c, &r, 1, true, "the rest");
	rec_head(c, &r, "at the end");
	/* nothing queued: waits, then a send completes it */
	recv_bundle(&r, sp[1], 0, 7, false);
	dsubmit(c, &r, "armed on an empty socket");
	dnone(c, &r, 20, "nothing yet");
	send_pat(sp[0], 160, 20);
	dreapn(c, &r, 1, true, "20 after the wait");
	shutdown(sp[0], SHUT_WR);
	recv_bundle(&r, sp[1], 0, 8, false);
	dsubmit(c, &r, "EOF");
	dreapn(c, &r, 1, true, "0, no buffer");
	rec_head(c, &r, "after EOF");
	tclose2(sp);
	pring_free(&p);
	tring_exit(&r);
}

static void sc_oneshot_tcp(struct dctx *c)
{
	oneshot(c, true);
}

static void sc_oneshot_unix(struct dctx *c)
{
	oneshot(c, false);
}

/* The ring runs short: its last buffer ends the bundle; none is -ENOBUFS. */
static void sc_short_ring(struct dctx *c)
{
	struct tring r;
	struct pring p;
	int sp[2];

	if (dring_flags(c, &r, 16, 0) || tcp_pair(sp))
		return;
	if (pring_make(c, &r, &p, 8, 2, 16, 0))
		return;
	send_pat(sp[0], 0, 64);
	wait_queued(sp[1], 64);
	recv_bundle(&r, sp[1], 0, 1, false);
	dsubmit(c, &r, "64 queued, 2 buffers");
	dreapn(c, &r, 1, true, "32 in the two");
	recv_bundle(&r, sp[1], 0, 2, false);
	dsubmit(c, &r, "no buffer left");
	dreapn(c, &r, 1, true, "-ENOBUFS");
	recv_bundle(&r, sp[1], 0, 3, false)->buf_group = 9;
	dsubmit(c, &r, "unknown group");
	dreapn(c, &r, 1, true, "unknown group");
	/* a multishot bundle that maps the last buffer ends there */
	tbuf_ring_add(p.br, 7, &p.tail, p.mem, 16, 0);
	tbuf_ring_add(p.br, 7, &p.tail, p.mem + 16, 16, 1);
	recv_bundle(&r, sp[1], 0, 4, true);
	dsubmit(c, &r, "multishot, 2 buffers");
	dreapn(c, &r, 1, true, "32 in the ring's last two buffers");
	rec_head(c, &r, "head");
	send_pat(sp[0], 64, 4);
	dreapn(c, &r, 1, true, "the next bytes find no buffer: the end");
	send_pat(sp[0], 68, 16);
	wait_queued(sp[1], 20);
	/* a legacy group gives one buffer at a time */
	tprep(&r, IORING_OP_PROVIDE_BUFFERS, 4, p.mem, 8, 0, 5, 0)->buf_group =
		BGID + 1;
	dsubmit(c, &r, "provide 4 x 8");
	dreapn(c, &r, 1, true, "provided");
	recv_bundle(&r, sp[1], 0, 6, false)->buf_group = BGID + 1;
	dsubmit(c, &r, "legacy bundle");
	dreapn(c, &r, 1, true, "legacy: 8, then 8 more appended");
	recv_bundle(&r, sp[1], 4, 7, false)->buf_group = BGID + 1;
	dsubmit(c, &r, "legacy bundle, length 4");
	dreapn(c, &r, 1, true, "legacy: 4");
	tclose2(sp);
	pring_free(&p);
	tring_exit(&r);
}

/* Multishot bundles: each wakeup takes what is queued. */
static void sc_mshot(struct dctx *c)
{
	struct tring r;
	struct pring p;
	int sp[2];
	size_t at = 0;

	if (dring_flags(c, &r, 32, 0) || tcp_pair(sp))
		return;
	if (pring_make(c, &r, &p, 32, 32, 16, 0))
		return;
	recv_bundle(&r, sp[1], 0, 1, true);
	dsubmit(c, &r, "armed");
	dnone(c, &r, 20, "nothing yet");
	for (int i = 0; i < 4; i++) {
		size_t n = (size_t)(20 + 17 * i);

		send_pat(sp[0], at, n);
		at += n;
		drec_int(c, (long)n, "sent");
		reap_bytes(c, &r, (long)n, "its shots");
	}
	drec_int(c, stream_ok(p.mem, at), "the bytes in order");
	rec_head(c, &r, "head");
	shutdown(sp[0], SHUT_WR);
	dreapn(c, &r, 1, true, "EOF ends it");
	tclose2(sp);
	pring_free(&p);
	tring_exit(&r);
}

/*
 * Multishot bundles with a length (each shot at most that, and one that
 * reaches it waits its turn: IORING_RECV_MSHOT_CAP) and with a byte
 * limit (optlen: the bundle never maps beyond it, and reaching it ends
 * the request).
 */
static void sc_mshot_len(struct dctx *c)
{
	struct tring r;
	struct pring p;
	int sp[2];

	if (dring_flags(c, &r, 32, 0) || tcp_pair(sp))
		return;
	if (pring_make(c, &r, &p, 32, 32, 16, 0))
		return;
	recv_bundle(&r, sp[1], 24, 1, true);
	dsubmit(c, &r, "armed, length 24");
	send_pat(sp[0], 0, 70);
	reap_bytes(c, &r, 70, "70 bytes in shots of at most 24");
	drec_int(c, stream_ok(p.mem, 70), "the bytes in order");
	recv_bundle(&r, sp[1], 0, 2, true)->optlen = 40;
	tprep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 9, 0)->addr = 1;
	dsubmit(c, &r, "cancel the first, arm one limited to 40");
	dreapn(c, &r, 2, false, "cancelled");
	send_pat(sp[0], 70, 30);
	reap_bytes(c, &r, 30, "30 of the 40");
	send_pat(sp[0], 100, 30);
	reap_bytes(c, &r, 10, "the last 10 end it");
	rec_head(c, &r, "head");
	tclose2(sp);
	pring_free(&p);
	tring_exit(&r);
}

/* IOSQE_ASYNC */
static void sc_async(struct dctx *c)
{
	struct tring r;
	struct pring p;
	int sp[2];

	if (dring_flags(c, &r, 32, 0) || tcp_pair(sp))
		return;
	if (pring_make(c, &r, &p, 32, 32, 16, 0))
		return;
	send_pat(sp[0], 0, 40);
	wait_queued(sp[1], 40);
	recv_bundle(&r, sp[1], 0, 1, false)->flags |= IOSQE_ASYNC;
	dsubmit(c, &r, "IOSQE_ASYNC, 40 queued");
	reap_bytes(c, &r, 16, "async");
	recv_bundle(&r, sp[1], 0, 2, false);
	dsubmit(c, &r, "the rest");
	reap_bytes(c, &r, 8, "the rest");
	/* io-wq selects before it finds nothing: the buffer stays with
	 * the request while it waits */
	recv_bundle(&r, sp[1], 0, 3, false)->flags |= IOSQE_ASYNC;
	dsubmit(c, &r, "IOSQE_ASYNC on an empty socket");
	dnone(c, &r, 20, "nothing yet");
	send_pat(sp[0], 40, 20);
	reap_bytes(c, &r, 20, "after the wait");
	rec_head(c, &r, "head");
	tclose2(sp);
	pring_free(&p);
	tring_exit(&r);
}

/*
 * One-shot bundles with MSG_WAITALL on a stream socket: the buffers
 * mapped for the length (or one, without a length) are filled before the
 * CQE is posted; a receive that gets part of it commits the buffers the
 * part reached and waits for the rest, which goes on in the same buffers;
 * EOF ends it with what came (short: the chain would fail).  When the
 * buffers are full and more is queued, a bundle appends as always.  Each
 * case on a fresh socket and ring; the CQE, the ring's head while it
 * waits and after, and the bytes are compared, except in the two cases
 * where 6.18 leaves a buffer the rest reached in the ring (no commit after
 * the first wait; with the append it then receives into it again, so the
 * data is lost): there the head after and the bytes are only noted
 * (docs/compatibility.md #31).
 */
static void waitall_case(struct dctx *c, bool tcp, int kase)
{
	static const struct {
		unsigned int len, first, more;
		bool eof, kbug;
	} k[] = {
		{ 64, 40, 40, false, true },	/* the rest, then 16 more */
		{ 64, 40, 24, false, true },	/* exactly the rest */
		{ 0, 10, 30, false, false },	/* no length: one buffer */
		{ 48, 24, 8, true, false },	/* EOF before the length */
		{ 32, 32, 0, false, false },	/* all there at once */
		{ 40, 20, 8, false, false },	/* twice short, then full */
	};
	struct tring r;
	struct tcqe q;
	struct pring p;
	char label[64];
	int sp[2];

	if (dring_flags(c, &r, 16, 0) ||
	    (tcp ? tcp_pair(sp) : socketpair(AF_UNIX, SOCK_STREAM, 0, sp)))
		return;
	if (pring_make(c, &r, &p, 16, 16, 16, 0))
		return;
	snprintf(label, sizeof(label), "length %u, %u queued", k[kase].len,
		 k[kase].first);
	send_pat(sp[0], 0, k[kase].first);
	wait_queued(sp[1], (int)k[kase].first);
	recv_bundle(&r, sp[1], k[kase].len, 1, false)->msg_flags =
		MSG_WAITALL;
	dsubmit(c, &r, label);
	if (k[kase].more || k[kase].eof) {
		dnone(c, &r, 20, "waits for the rest");
		rec_head(c, &r, "while it waits");
	}
	if (k[kase].more)
		send_pat(sp[0], k[kase].first, k[kase].more);
	if (kase == 5) {
		dnone(c, &r, 20, "still short");
		send_pat(sp[0], k[kase].first + k[kase].more, 12);
	}
	if (k[kase].eof) {
		dnone(c, &r, 20, "still short");
		shutdown(sp[0], SHUT_WR);
	}
	if (dreapq(c, &r, &q, 1, true, "its CQE") != 1)
		q.res = 0;
	if (k[kase].kbug) {
		dnote(c, "head after %d, bytes in order %d",
		      tpbuf_head(&r, BGID), stream_ok(p.mem, (size_t)q.res));
	} else {
		rec_head(c, &r, "after");
		drec_int(c, q.res > 0 && stream_ok(p.mem, (size_t)q.res),
			 "the bytes in order");
	}
	tclose2(sp);
	pring_free(&p);
	tring_exit(&r);
}

static void sc_waitall_tcp(struct dctx *c)
{
	for (int i = 0; i < 6; i++)
		waitall_case(c, true, i);
}

static void sc_waitall_unix(struct dctx *c)
{
	for (int i = 0; i < 6; i++)
		waitall_case(c, false, i);
}

/* An incremental ring: bundles consume bytes, not whole buffers. */
static void sc_inc(struct dctx *c)
{
	struct tring r;
	struct pring p;
	int sp[2];

	if (dring_flags(c, &r, 16, 0) || tcp_pair(sp))
		return;
	if (pring_make(c, &r, &p, 8, 3, 32, IOU_PBUF_RING_INC))
		return;
	send_pat(sp[0], 0, 10);
	wait_queued(sp[1], 10);
	recv_bundle(&r, sp[1], 0, 1, false);
	dsubmit(c, &r, "10 bytes");
	dreapn(c, &r, 1, true, "part of the first buffer");
	send_pat(sp[0], 10, 30);
	wait_queued(sp[1], 30);
	recv_bundle(&r, sp[1], 0, 2, false);
	dsubmit(c, &r, "30 bytes");
	dreapn(c, &r, 1, true, "the first buffer's rest, then more");
	send_pat(sp[0], 40, 40);
	wait_queued(sp[1], 40);
	recv_bundle(&r, sp[1], 36, 3, false);
	dsubmit(c, &r, "40 bytes, length 36");
	dreapn(c, &r, 1, true, "36");
	rec_head(c, &r, "head");
	drec_int(c, p.br->bufs[1].len, "second entry's length");
	drec_int(c, p.br->bufs[2].len, "third entry's length");
	tclose2(sp);
	pring_free(&p);
	tring_exit(&r);
}

/* SEND with provided buffers, bundles or not. */
static void sc_send(struct dctx *c)
{
	struct io_uring_sqe *sqe;
	struct tring r;
	struct pring p;
	char got[256];
	int sp[2], n;

	if (dring_flags(c, &r, 16, 0) || tcp_pair(sp))
		return;
	if (pring_make(c, &r, &p, 16, 8, 8, 0))
		return;
	for (int i = 0; i < 64; i++)
		p.mem[i] = (char)('a' + i % 23);
	sqe = tprep(&r, IORING_OP_SEND, sp[0], NULL, 0, 0, 1,
		    IOSQE_BUFFER_SELECT);
	sqe->buf_group = BGID;
	dsubmit(c, &r, "one buffer");
	dreapn(c, &r, 1, true, "8 bytes, bid 0");
	sqe = tprep(&r, IORING_OP_SEND, sp[0], NULL, 16, 0, 2,
		    IOSQE_BUFFER_SELECT);
	sqe->buf_group = BGID;
	sqe->ioprio = IORING_RECVSEND_BUNDLE;
	dsubmit(c, &r, "bundle, length 16");
	dreapn(c, &r, 2, true, "16, then the rest in a second bundle");
	wait_queued(sp[1], 64);
	n = (int)recv(sp[1], got, sizeof(got), MSG_DONTWAIT);
	drec_int(c, n, "received");
	drec_int(c, n == 64 && !memcmp(got, p.mem, 64), "the bytes in order");
	rec_head(c, &r, "head");
	sqe = tprep(&r, IORING_OP_SEND, sp[0], NULL, 0, 0, 3,
		    IOSQE_BUFFER_SELECT);
	sqe->buf_group = BGID;
	sqe->ioprio = IORING_RECVSEND_BUNDLE;
	dsubmit(c, &r, "bundle on an empty ring");
	dreapn(c, &r, 1, true, "-ENOBUFS");
	sqe = tprep(&r, IORING_OP_SEND, sp[0], NULL, 0, 0, 4,
		    IOSQE_BUFFER_SELECT);
	sqe->buf_group = 9;
	dsubmit(c, &r, "unknown group");
	dreapn(c, &r, 1, true, "unknown group");
	tclose2(sp);
	pring_free(&p);
	tring_exit(&r);
}

/* What the kernel refuses. */
static void sc_errors(struct dctx *c)
{
	struct io_uring_sqe *sqe;
	struct msghdr mh;
	struct tring r;
	struct pring p;
	char buf[16];
	int sp[2];

	memset(&mh, 0, sizeof(mh));
	if (dring_flags(c, &r, 16, 0) || tcp_pair(sp))
		return;
	if (pring_make(c, &r, &p, 16, 8, 8, 0))
		return;
	sqe = tprep(&r, IORING_OP_RECVMSG, sp[1], &mh, 0, 0, 1,
		    IOSQE_BUFFER_SELECT);
	sqe->buf_group = BGID;
	sqe->ioprio = IORING_RECVSEND_BUNDLE;
	drun1(c, &r, "RECVMSG bundle");
	sqe = tprep(&r, IORING_OP_SENDMSG, sp[0], &mh, 0, 0, 2,
		    IOSQE_BUFFER_SELECT);
	sqe->buf_group = BGID;
	sqe->ioprio = IORING_RECVSEND_BUNDLE;
	drun1(c, &r, "SENDMSG bundle");
	sqe = recv_bundle(&r, sp[1], 0, 4, true);
	sqe->msg_flags = MSG_WAITALL;
	drun1(c, &r, "multishot bundle with MSG_WAITALL");
	sqe = recv_bundle(&r, sp[1], 0, 5, false);
	sqe->addr2 = 1;
	drun1(c, &r, "addr2");
	/* without IOSQE_BUFFER_SELECT: a plain receive and send */
	send_pat(sp[0], 0, 12);
	wait_queued(sp[1], 12);
	sqe = tprep(&r, IORING_OP_RECV, sp[1], buf, sizeof(buf), 0, 6, 0);
	sqe->ioprio = IORING_RECVSEND_BUNDLE;
	drun1(c, &r, "RECV bundle without buffer select");
	sqe = tprep(&r, IORING_OP_SEND, sp[0], "wxyz", 4, 0, 7, 0);
	sqe->ioprio = IORING_RECVSEND_BUNDLE;
	dsubmit(c, &r, "SEND bundle without buffer select");
	dreapn(c, &r, 2, true, "SEND bundle without buffer select");
	tclose2(sp);
	pring_free(&p);
	tring_exit(&r);
}

/*
 * Two datagram sockets, 100 messages queued on each, a multishot RECV
 * on each: the kernel receives 32 times in a row after the first, then
 * puts the request behind the other (MULTISHOT_MAX_RETRY), so the two
 * take turns.  The order of the CQEs' user_data is compared.
 */
#define FLOOD 100
static void fair(struct dctx *c, unsigned int setup_flags)
{
	struct tcqe q[2 * FLOOD + 4];
	struct tring r;
	struct pring p;
	int a[2], b[2], got;
	char order[2 * FLOOD + 1];

	if (dring_flags(c, &r, 512, setup_flags) ||
	    socketpair(AF_UNIX, SOCK_DGRAM, 0, a) ||
	    socketpair(AF_UNIX, SOCK_DGRAM, 0, b))
		return;
	if (pring_make(c, &r, &p, 256, 256, 16, 0))
		return;
	for (int i = 0; i < FLOOD; i++) {
		twrite(a[0], "A", 1);
		twrite(b[0], "B", 1);
	}
	for (int i = 0; i < 2; i++) {
		struct io_uring_sqe *sqe = tprep(&r, IORING_OP_RECV,
						 i ? b[1] : a[1], NULL, 0, 0,
						 (uint64_t)i + 1,
						 IOSQE_BUFFER_SELECT);

		sqe->buf_group = BGID;
		sqe->ioprio = IORING_RECV_MULTISHOT;
	}
	dsubmit(c, &r, "two multishot receives");
	got = (int)dreapq(c, &r, q, 2 * FLOOD, true, "200 shots");
	for (int i = 0; i < got; i++)
		order[i] = q[i].user_data == 1 ? 'A' : 'B';
	order[got] = 0;
	dnote(c, "order %s", order);
	tclose2(a);
	tclose2(b);
	pring_free(&p);
	tring_exit(&r);
}

/* DEFER_TASKRUN: the shots after the first round run when the submitter
 * waits */
static void sc_fair(struct dctx *c)
{
	fair(c, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
}

/* the ring mode's own flags (UURING_TEST_RING_MODE): on a default, COOP
 * or SQPOLL ring the rounds after the submission's run as task_work
 * when the submitting enter returns, the requests taking turns */
static void sc_fair_mode(struct dctx *c)
{
	fair(c, 0);
}

static const struct dscenario scenarios[] = {
	{ "oneshot_tcp", sc_oneshot_tcp, NULL },
	{ "oneshot_unix", sc_oneshot_unix, NULL },
	{ "short_ring", sc_short_ring, NULL },
	{ "mshot", sc_mshot, NULL },
	{ "mshot_len", sc_mshot_len, NULL },
	{ "async", sc_async, NULL },
	{ "waitall_tcp", sc_waitall_tcp, NULL },
	{ "waitall_unix", sc_waitall_unix, NULL },
	{ "inc", sc_inc, NULL },
	{ "send", sc_send, NULL },
	{ "errors", sc_errors, NULL },
	{ "fair", sc_fair, NULL },
	{ "fair_mode", sc_fair_mode, NULL },
};

DTEST_MAIN(scenarios)
