// SPDX-License-Identifier: MIT
/*
 * Differential tests: IORING_OP_READ_MULTISHOT (the kernel's
 * io_read_mshot): a read of a pollable file into provided buffers that
 * stays armed, one CQE with IORING_CQE_F_MORE per read, ended by EOF, an
 * error (-ENOBUFS), a full CQ or a cancel; its prep checks and the files
 * it refuses.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"

#define BGID 1

static struct io_uring_sqe *read_mshot(struct tring *r, int fd, uint16_t bgid,
				       uint64_t ud)
{
	struct io_uring_sqe *sqe = tprep(r, IORING_OP_READ_MULTISHOT, fd, NULL,
					 0, 0, ud, IOSQE_BUFFER_SELECT);

	sqe->buf_group = bgid;
	return sqe;
}

/* a buffer ring of n buffers of len bytes each in group BGID, all added */
static void *pbuf_ring(struct dctx *c, struct tring *r, unsigned int n,
		       uint32_t len, char **bufs)
{
	struct io_uring_buf_ring *br =
		mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint16_t tail = 0;

	*bufs = malloc((size_t)n * len);
	if (br == MAP_FAILED || !*bufs)
		return NULL;
	drec_int(c, tpbuf_reg(r, br, n, BGID, 0), "register the buffer ring");
	for (unsigned int i = 0; i < n; i++)
		tbuf_ring_add(br, n - 1, &tail, *bufs + (size_t)i * len, len,
			      (uint16_t)i);
	return br;
}

static void sc_pipe(struct dctx *c)
{
	struct tring r;
	char *bufs;
	void *br;
	int p[2];

	if (dring_flags(c, &r, 8, 0) || pipe(p))
		return;
	br = pbuf_ring(c, &r, 4, 8, &bufs);
	if (!br)
		return;
	read_mshot(&r, p[0], BGID, 1);
	dsubmit(c, &r, "armed");
	dnone(c, &r, 20, "nothing to read yet");
	drec_int(c, write(p[1], "0123456789abcdefghij", 20), "write 20");
	dreapn(c, &r, 3, true, "20 bytes in 8, 8, 4");
	drec_int(c, memcmp(bufs, "0123456789abcdefghij", 20) == 0,
		 "the buffers hold the bytes");
	drec_int(c, write(p[1], "XY", 2), "write 2");
	dreapn(c, &r, 1, true, "2 bytes in the last buffer");
	/* no buffer left: the next read ends it */
	drec_int(c, write(p[1], "more", 4), "write 4");
	dreapn(c, &r, 1, true, "no buffer left");
	tclose2(p);
	munmap(br, 4096);
	free(bufs);
	tring_exit(&r);
}

static void sc_eof(struct dctx *c)
{
	struct tring r;
	char *bufs;
	void *br;
	int p[2];

	if (dring_flags(c, &r, 8, 0) || pipe(p))
		return;
	br = pbuf_ring(c, &r, 4, 16, &bufs);
	if (!br)
		return;
	/* data already there at submission: read inline */
	drec_int(c, write(p[1], "abc", 3), "write 3");
	read_mshot(&r, p[0], BGID, 1);
	dsubmit(c, &r, "armed");
	dreapn(c, &r, 1, true, "3 bytes");
	close(p[1]);
	dreapn(c, &r, 1, true, "EOF ends it");
	close(p[0]);
	munmap(br, 4096);
	free(bufs);
	tring_exit(&r);
}

static void sc_other_files(struct dctx *c)
{
	struct tring r;
	char *bufs;
	void *br;
	int sv[2], efd;
	uint64_t one = 5;

	if (dring_flags(c, &r, 8, 0) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return;
	br = pbuf_ring(c, &r, 8, 8, &bufs);
	if (!br)
		return;
	/* a stream socket */
	read_mshot(&r, sv[0], BGID, 1);
	dsubmit(c, &r, "socket armed");
	drec_int(c, write(sv[1], "hello world", 11), "send 11");
	dreapn(c, &r, 2, true, "socket: 8 and 3");
	shutdown(sv[1], SHUT_WR);
	dreapn(c, &r, 1, true, "socket: EOF");
	/* an eventfd: each read takes the counter */
	efd = eventfd(0, 0);
	read_mshot(&r, efd, BGID, 2);
	dsubmit(c, &r, "eventfd armed");
	drec_int(c, write(efd, &one, 8), "eventfd_write 5");
	dreapn(c, &r, 1, true, "eventfd: its counter");
	drec_int(c, *(uint64_t *)(bufs + 16), "counter read");
	tprep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 3, 0)->addr = 2;
	dsubmit(c, &r, "cancel");
	dreapn(c, &r, 2, false, "cancelled");
	close(efd);
	tclose2(sv);
	munmap(br, 4096);
	free(bufs);
	tring_exit(&r);
}

static void sc_legacy(struct dctx *c)
{
	char bufs[12];
	struct tring r;
	int p[2];

	if (dring_flags(c, &r, 8, 0) || pipe(p))
		return;
	tprep(&r, IORING_OP_PROVIDE_BUFFERS, 3, bufs, 4, 0, 1, 0)->buf_group =
		BGID;
	dsubmit(c, &r, "provide 3 x 4");
	dreapn(c, &r, 1, true, "provided");
	read_mshot(&r, p[0], BGID, 2);
	dsubmit(c, &r, "armed");
	drec_int(c, write(p[1], "0123456789", 10), "write 10");
	dreapn(c, &r, 3, true, "10 bytes in 4, 4, 2");
	drec_int(c, write(p[1], "z", 1), "write 1");
	dreapn(c, &r, 1, true, "no buffer left");
	tclose2(p);
	tring_exit(&r);
}

/* Until fewer than n bytes wait in the pipe (2 s at most): what is left. */
static int pipe_wait_below(int fd, int n)
{
	int left = n;

	for (int i = 0; i < 2000; i++) {
		if (ioctl(fd, FIONREAD, &left) || left < n)
			break;
		usleep(1000);
	}
	return left;
}

/* The CQ has no room for a shot: that read's CQE ends the request. */
static void sc_cq_full(struct dctx *c)
{
	struct io_uring_params prm;
	struct tring r;
	char *bufs;
	void *br;
	int p[2];

	memset(&prm, 0, sizeof(prm));
	if (dring(c, &r, 4, &prm, "4-entry ring") || pipe(p))
		return;
	br = pbuf_ring(c, &r, 4, 8, &bufs);
	if (!br)
		return;
	for (int i = 0; i < 2; i++) {
		for (int j = 0; j < 4; j++)
			tprep_nop(&r, 100 + (uint64_t)(i * 4 + j), 0);
		dsubmit(c, &r, "4 NOPs");
	}
	read_mshot(&r, p[0], BGID, 1);
	dsubmit(c, &r, "armed on a full CQ");
	drec_int(c, write(p[1], "0123456789abcdefghij", 20), "write 20");
	/* the kernel reads at once, within the write; uuring's readiness
	 * engine a moment later: reap nothing before the read is done */
	drec_int(c, pipe_wait_below(p[0], 20), "8 bytes read, 12 left");
	dreapn(c, &r, 9, true, "the NOPs, then the read's last CQE");
	tclose2(p);
	munmap(br, 4096);
	free(bufs);
	tring_exit(&r);
}

static void sc_errors(struct dctx *c)
{
	struct io_uring_sqe *sqe;
	struct tring r;
	char *bufs;
	void *br;
	int p[2], f, dn;

	if (dring_flags(c, &r, 8, 0) || pipe(p))
		return;
	br = pbuf_ring(c, &r, 4, 8, &bufs);
	f = dtmpfile(c, 64, 1);
	dn = open("/dev/null", O_RDONLY);
	if (!br || f < 0 || dn < 0)
		return;
	read_mshot(&r, f, BGID, 1);
	drun1(c, &r, "regular file");
	read_mshot(&r, dn, BGID, 1);
	drun1(c, &r, "/dev/null");
	read_mshot(&r, 999, BGID, 1);
	drun1(c, &r, "bad fd");
	sqe = read_mshot(&r, p[0], BGID, 1);
	sqe->flags &= (uint8_t)~IOSQE_BUFFER_SELECT;
	drun1(c, &r, "no BUFFER_SELECT");
	read_mshot(&r, p[0], BGID, 1)->len = 16;
	drun1(c, &r, "len 16");
	read_mshot(&r, p[0], BGID, 1)->addr = 4096;
	drun1(c, &r, "addr");
	read_mshot(&r, p[0], BGID, 1)->ioprio = 1;
	drun1(c, &r, "ioprio");
	read_mshot(&r, p[0], BGID, 1)->rw_flags = 0x80000;
	drun1(c, &r, "unknown rw flag");
	read_mshot(&r, p[0], 9, 1);
	drun1(c, &r, "unknown group");
	read_mshot(&r, p[0], BGID, 1)->off = 5;
	dsubmit(c, &r, "offset 5");
	drec_int(c, write(p[1], "x", 1), "write 1");
	dreapn(c, &r, 1, true, "offset 5: read");
	tprep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 2, 0)->addr = 1;
	dsubmit(c, &r, "cancel");
	dreapn(c, &r, 2, false, "cancelled");
	/* linked behind a NOP, then a NOP behind it */
	tprep_nop(&r, 10, IOSQE_IO_LINK);
	read_mshot(&r, p[0], BGID, 11)->flags |= IOSQE_IO_LINK;
	tprep_nop(&r, 12, 0);
	dsubmit(c, &r, "in a link");
	dreapn(c, &r, 1, true, "the first NOP");
	drec_int(c, write(p[1], "yy", 2), "write 2");
	dreapn(c, &r, 1, true, "a shot");
	close(p[1]);
	dreapn(c, &r, 2, true, "EOF, then the linked NOP");
	close(p[0]);
	close(f);
	close(dn);
	munmap(br, 4096);
	free(bufs);
	tring_exit(&r);
}

/*
 * IOSQE_ASYNC: the kernel's io-wq does not run a multishot read but waits
 * for readiness at once; an incremental buffer ring then gives each read
 * the rest of the same buffer (IORING_CQE_F_BUF_MORE while some is left).
 */
static void sc_async_inc(struct dctx *c)
{
	struct io_uring_buf_ring *br;
	struct tring r;
	char *buf = calloc(1, 64);
	uint16_t tail = 0;
	int p[2];

	if (!buf || dring_flags(c, &r, 8, 0) || pipe(p))
		return;
	br = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (br == MAP_FAILED)
		return;
	drec_int(c, tpbuf_reg(&r, br, 4, BGID, IOU_PBUF_RING_INC),
		 "incremental buffer ring");
	tbuf_ring_add(br, 3, &tail, buf, 40, 7);
	read_mshot(&r, p[0], BGID, 1)->flags |= IOSQE_ASYNC;
	dsubmit(c, &r, "armed, IOSQE_ASYNC");
	dnone(c, &r, 20, "nothing to read yet");
	for (int i = 0; i < 3; i++) {
		drec_int(c, write(p[1], "0123456789abcdef", 16), "write 16");
		dreapn(c, &r, 1, true, "a read into the rest of the buffer");
	}
	drec_int(c, memcmp(buf, "0123456789abcdef0123456789abcdef01234567",
			   40) == 0,
		 "the buffer filled in order");
	tclose2(p);
	munmap(br, 4096);
	free(buf);
	tring_exit(&r);
}

static const struct dscenario scenarios[] = {
	{ "pipe", sc_pipe, NULL },
	{ "eof", sc_eof, NULL },
	{ "other_files", sc_other_files, NULL },
	{ "legacy", sc_legacy, NULL },
	{ "cq_full", sc_cq_full, NULL },
	{ "errors", sc_errors, NULL },
	{ "async_inc", sc_async_inc, NULL },
};

DTEST_MAIN(scenarios)
