// SPDX-License-Identifier: MIT
/*
 * Differential tests: IOSQE_ASYNC (io-wq) on NOP, READ, WRITE, READV,
 * WRITEV and FSYNC; link chains whose members go async (order compared:
 * the kernel defines it for chains); drain after async requests; many
 * async writes to one file; the iovec array of an async WRITEV is
 * consumed at submission (T2);
 * io-wq threads are named iou-wrk-<submitter tid> (T8).  Unlinked async
 * completions are compared as multisets.
 *
 * Every scenario body runs isolated (disolated) with a time limit, so an
 * engine hang shows as HUNG instead of stalling the suite.  On the uuring
 * side only, the statistics must show the requests ran in io-wq.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"
#include "uuring.h"

#define FSZ 10000
#define LIMIT_MS 5000
#define SEC 1000000000LL

static void nop(struct tring *r, uint64_t ud, bool fail, uint8_t flags)
{
	struct io_uring_sqe *s = tprep(r, IORING_OP_NOP, -1, NULL, 0, 0, ud,
				       flags);

	if (fail) {
		s->nop_flags = IORING_NOP_INJECT_RESULT;
		s->len = (unsigned int)-EIO;
	}
}

static void check_data(struct dctx *c, const void *buf, int res,
		       size_t start, unsigned char seed, const char *label)
{
	size_t len = res > 0 ? (size_t)res : 0;
	unsigned char *want = malloc(len ? len : 1);

	dpattern(want, len, seed, start);
	drec_int(c, memcmp(buf, want, len) == 0, "%s: data", label);
	free(want);
}

static int pos_of(const struct tcqe *q, unsigned int n, uint64_t ud)
{
	for (unsigned int i = 0; i < n; i++)
		if (q[i].user_data == ud)
			return (int)i;
	return -1;
}

/* Runs body isolated with a time limit and records how it ended. */
#define ISOLATED(sc, body) DISOLATED_SCENARIO(sc, body, LIMIT_MS)

/* ---- single ASYNC requests ---- */

static void file_ops(struct dctx *c, struct tring *r, const char *dir)
{
	char *buf = malloc(FSZ), *w = malloc(4096), label[96];
	struct iovec iov[3];
	int fd, ro, res;

	fd = dtmpfile_at(c, dir, FSZ, 7);
	ro = open("/etc/hostname", O_RDONLY);

#define L(s) (snprintf(label, sizeof(label), "%s: %s", dir, s), label)
	tprep(r, IORING_OP_READ, fd, buf, 100, 0, 1, IOSQE_ASYNC);
	res = drun1(c, r, L("read 100 at 0"));
	check_data(c, buf, res, 0, 7, label);
	tprep(r, IORING_OP_READ, fd, buf, 100, FSZ - 50, 2, IOSQE_ASYNC);
	res = drun1(c, r, L("read short at EOF"));
	check_data(c, buf, res, FSZ - 50, 7, label);
	tprep(r, IORING_OP_READ, fd, buf, 100, FSZ + 4096, 3, IOSQE_ASYNC);
	drun1(c, r, L("read past EOF"));
	tprep(r, IORING_OP_READ, fd, buf, 0, 0, 4, IOSQE_ASYNC);
	drun1(c, r, L("read len 0"));
	lseek(fd, 300, SEEK_SET);
	tprep(r, IORING_OP_READ, fd, buf, 100, (uint64_t)-1, 5, IOSQE_ASYNC);
	res = drun1(c, r, L("read at file position"));
	check_data(c, buf, res, 300, 7, label);
	tprep(r, IORING_OP_READ, fd, buf, 100, (uint64_t)-1, 6, IOSQE_ASYNC);
	res = drun1(c, r, L("read at advanced position"));
	check_data(c, buf, res, 400, 7, label);
	drec_int(c, lseek(fd, 0, SEEK_CUR), "%s", L("position after reads"));
	tprep(r, IORING_OP_READ, fd, dunmapped_addr(), 100, 0, 7, IOSQE_ASYNC);
	drun1(c, r, L("read into unmapped"));
	tprep(r, IORING_OP_READ, fd, buf, 100, (uint64_t)-2, 8, IOSQE_ASYNC);
	drun1(c, r, L("read offset -2"));
	tprep(r, IORING_OP_READ, fd, buf, 100, 0, 9, IOSQE_ASYNC)->rw_flags =
		RWF_NOWAIT;
	drun1(c, r, L("read RWF_NOWAIT (cached)"));
	tprep(r, IORING_OP_READ, fd, buf, 100, 0, 10, IOSQE_ASYNC)->rw_flags =
		0x10000;
	drun1(c, r, L("read unknown RWF bit"));

	memset(w, 'w', 4096);
	tprep(r, IORING_OP_WRITE, fd, w, 200, 5000, 11, IOSQE_ASYNC);
	drun1(c, r, L("write 200 at 5000"));
	drec_int(c, pread(fd, buf, 200, 5000) == 200 && !memcmp(buf, w, 200),
		 "%s", L("written data"));
	tprep(r, IORING_OP_WRITE, fd, w, 4096, FSZ + 1000, 12, IOSQE_ASYNC);
	drun1(c, r, L("write extending the file"));
	{
		struct stat st;

		fstat(fd, &st);
		drec_int(c, st.st_size, "%s", L("size after extension"));
	}
	tprep(r, IORING_OP_WRITE, ro, w, 10, 0, 13, IOSQE_ASYNC);
	drun1(c, r, L("write to O_RDONLY fd"));
	tprep(r, IORING_OP_WRITE, fd, dunmapped_addr(), 10, 0, 14, IOSQE_ASYNC);
	drun1(c, r, L("write from unmapped"));

	iov[0].iov_base = buf;
	iov[0].iov_len = 10;
	iov[1].iov_base = buf + 10;
	iov[1].iov_len = 0;
	iov[2].iov_base = buf + 10;
	iov[2].iov_len = 990;
	tprep(r, IORING_OP_READV, fd, iov, 3, 20, 15, IOSQE_ASYNC);
	res = drun1(c, r, L("readv 3 iovecs at 20"));
	check_data(c, buf, res, 20, 7, label);
	tprep(r, IORING_OP_READV, fd, dunmapped_addr(), 1, 0, 16, IOSQE_ASYNC);
	drun1(c, r, L("readv unmapped iovec array"));
	tprep(r, IORING_OP_READV, fd, iov, 1025, 0, 17, IOSQE_ASYNC);
	drun1(c, r, L("readv 1025 iovecs"));
	iov[0].iov_base = w;
	iov[0].iov_len = 7;
	iov[1].iov_base = w;
	iov[1].iov_len = 9;
	tprep(r, IORING_OP_WRITEV, fd, iov, 2, 100, 18, IOSQE_ASYNC);
	drun1(c, r, L("writev 2 iovecs"));

	tprep(r, IORING_OP_FSYNC, fd, NULL, 0, 0, 19, IOSQE_ASYNC);
	drun1(c, r, L("fsync"));
	tprep(r, IORING_OP_FSYNC, fd, NULL, 0, 0, 20,
	      IOSQE_ASYNC)->fsync_flags = IORING_FSYNC_DATASYNC;
	drun1(c, r, L("fdatasync"));
	tprep(r, IORING_OP_FSYNC, fd, NULL, 0, 0, 21,
	      IOSQE_ASYNC)->fsync_flags = 4;
	drun1(c, r, L("fsync bad flags"));
#undef L
	close(fd);
	close(ro);
	free(buf);
	free(w);
}

static long body_ops(struct dctx *c, void *arg)
{
	struct uuring_stats s0, s1;
	char buf[4096];
	struct tring r;
	int p[2], fd;

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return 0;
	s0 = dstats(c, &r);
	nop(&r, 1, false, IOSQE_ASYNC);
	drun1(c, &r, "nop");
	nop(&r, 2, true, IOSQE_ASYNC);
	drun1(c, &r, "nop injecting -EIO");
	tprep(&r, IORING_OP_NOP, -1, NULL, 0, 0, 3, IOSQE_ASYNC)->nop_flags =
		0x80000000u;
	drun1(c, &r, "nop unknown flag");
	file_ops(c, &r, "/tmp");
	file_ops(c, &r, "/dev/shm");

	tprep(&r, IORING_OP_READ, -1, buf, 10, 0, 30, IOSQE_ASYNC);
	drun1(c, &r, "read fd -1");
	tprep(&r, IORING_OP_READ, 9999, buf, 10, 0, 31, IOSQE_ASYNC);
	drun1(c, &r, "read fd 9999");
	tprep(&r, IORING_OP_FSYNC, 9999, NULL, 0, 0, 32, IOSQE_ASYNC);
	drun1(c, &r, "fsync fd 9999");

	fd = open("/dev/zero", O_RDONLY);
	tprep(&r, IORING_OP_READ, fd, buf, sizeof(buf), 0, 33, IOSQE_ASYNC);
	drun1(c, &r, "read /dev/zero");
	close(fd);
	fd = open("/dev/null", O_WRONLY);
	tprep(&r, IORING_OP_WRITE, fd, buf, sizeof(buf), 0, 34, IOSQE_ASYNC);
	drun1(c, &r, "write /dev/null");
	tprep(&r, IORING_OP_FSYNC, fd, NULL, 0, 0, 35, IOSQE_ASYNC);
	drun1(c, &r, "fsync /dev/null");
	close(fd);
	fd = open("/tmp", O_RDONLY | O_DIRECTORY);
	tprep(&r, IORING_OP_READ, fd, buf, 10, 0, 36, IOSQE_ASYNC);
	drun1(c, &r, "read directory");
	tprep(&r, IORING_OP_FSYNC, fd, NULL, 0, 0, 37, IOSQE_ASYNC);
	drun1(c, &r, "fsync directory");
	close(fd);

	if (!pipe(p)) {
		dpattern(buf, 64, 3, 0);
		tprep(&r, IORING_OP_WRITE, p[1], buf, 64, 0, 40, IOSQE_ASYNC);
		drun1(c, &r, "pipe write");
		memset(buf, 0, 64);
		tprep(&r, IORING_OP_READ, p[0], buf, 100, 0, 41, IOSQE_ASYNC);
		check_data(c, buf, drun1(c, &r, "pipe read with data"), 0, 3,
			   "pipe read");
		tprep(&r, IORING_OP_READ, p[0], buf, 100, 0, 42,
		      IOSQE_ASYNC)->rw_flags = RWF_NOWAIT;
		drun1(c, &r, "empty pipe read RWF_NOWAIT");
		tprep(&r, IORING_OP_FSYNC, p[0], NULL, 0, 0, 43, IOSQE_ASYNC);
		drun1(c, &r, "fsync pipe");
		tclose2(p);
	}
	s1 = dstats(c, &r);
	if (!c->is_kernel) {
		dnote(c, "route_iowq +%llu, route_inline +%llu",
		      (unsigned long long)(s1.route_iowq - s0.route_iowq),
		      (unsigned long long)(s1.route_inline - s0.route_inline));
		/* every request above was ASYNC: none may run inline */
		dcheck(c, s1.route_inline == s0.route_inline,
		       "ASYNC requests ran inline: route_inline +%llu",
		       (unsigned long long)(s1.route_inline - s0.route_inline));
		/* 57 ASYNC SQEs: 7 fail at prep, 2 have no file to hold
		 * (fd 9999); the other 48 must have run in io-wq */
		dcheck(c, s1.route_iowq - s0.route_iowq >= 48,
		       "route_iowq +%llu, expected >= 48",
		       (unsigned long long)(s1.route_iowq - s0.route_iowq));
	}
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_ops, body_ops)

/* ---- many ASYNC requests in one enter: a multiset ---- */

static long body_batch(struct dctx *c, void *arg)
{
	char *buf = malloc(64 * 512);
	struct iovec iov[64];
	struct uuring_stats s0, s1;
	struct tring r;
	unsigned int i;
	int fd, bad = 0;

	(void)arg;
	if (dring_flags(c, &r, 128, 0))
		return 0;
	fd = dtmpfile(c, 64 * 600, 7);
	s0 = dstats(c, &r);
	for (i = 0; i < 64; i++) {
		uint8_t f = IOSQE_ASYNC;

		iov[i].iov_base = buf + 512 * i;
		iov[i].iov_len = 512;
		switch (i % 8) {
		case 0:
			nop(&r, i, false, f);
			break;
		case 1:
			nop(&r, i, true, f);
			break;
		case 2:
		case 3:
			tprep(&r, IORING_OP_READ, fd, buf + 512 * i, 512,
			      (uint64_t)i * 600, i, f);
			break;
		case 4:
			tprep(&r, IORING_OP_READV, fd, &iov[i], 1,
			      (uint64_t)i * 600, i, f);
			break;
		case 5:
			tprep(&r, IORING_OP_FSYNC, fd, NULL, 0, 0, i, f);
			break;
		case 6:
			/* not async: mixed with the async ones */
			tprep(&r, IORING_OP_READ, fd, buf + 512 * i, 512,
			      (uint64_t)i * 600, i, 0);
			break;
		default:
			tprep(&r, IORING_OP_READ, -1, buf, 1, 0, i, f);
			break;
		}
	}
	drec_int(c, tring_submit(&r), "submit 64");
	dreap(c, &r, 64, false, "64 mixed async");
	for (i = 0; i < 64; i++) {
		unsigned char want[512];

		if (i % 8 < 2 || i % 8 == 5 || i % 8 == 7)
			continue;
		dpattern(want, 512, 7, (size_t)i * 600);
		bad += memcmp(buf + 512 * i, want, 512) != 0;
	}
	drec_int(c, bad, "reads with wrong data");
	s1 = dstats(c, &r);
	if (!c->is_kernel)
		dcheck(c, s1.route_iowq - s0.route_iowq >= 56,
		       "route_iowq +%llu, expected >= 56",
		       (unsigned long long)(s1.route_iowq - s0.route_iowq));

	/* 120 ASYNC NOPs at once (more than the bounded worker limit) */
	tring_queue_nops(&r, 120, 1000, IOSQE_ASYNC);
	drec_int(c, tring_submit(&r), "submit 120 async nops");
	dreap(c, &r, 120, false, "120 async nops");
	/* and with CQE_SKIP_SUCCESS: only the failing one posts */
	for (i = 0; i < 8; i++)
		nop(&r, 2000 + i, i == 5, IOSQE_ASYNC | IOSQE_CQE_SKIP_SUCCESS);
	nop(&r, 2099, false, IOSQE_ASYNC);
	drec_int(c, tring_submit(&r), "submit async skips");
	dreap(c, &r, 2, false, "async skips");
	drec_int(c, tring_wait(&r, 1, 50 * 1000000LL), "no more CQEs");
	close(fd);
	free(buf);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_batch, body_batch)

/* ---- link chains with ASYNC members (ordered) ---- */

static long body_link_mix(struct dctx *c, void *arg)
{
	struct tring r;
	unsigned int mask, hard, i;
	int fail;

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return 0;
	for (hard = 0; hard < 2; hard++) {
		for (mask = 1; mask < 16; mask++) {
			for (fail = -1; fail < 4; fail++) {
				char label[64];

				for (i = 0; i < 4; i++) {
					uint8_t f = (mask >> i) & 1 ?
						    IOSQE_ASYNC : 0;

					if (i < 3)
						f |= hard ? IOSQE_IO_HARDLINK :
							    IOSQE_IO_LINK;
					nop(&r, i, (int)i == fail, f);
				}
				snprintf(label, sizeof(label),
					 "%s async mask %u fail at %d",
					 hard ? "hard" : "soft", mask, fail);
				drec_int(c, tring_submit(&r), "%s: submit",
					 label);
				dreap(c, &r, 4, true, label);
			}
		}
	}
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_link_mix, body_link_mix)

static long body_link_ops(struct dctx *c, void *arg)
{
	char buf[256], w[64];
	struct tring r;
	int fd, i;

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return 0;
	fd = dtmpfile(c, 100, 1);
	memset(w, 'x', sizeof(w));

	/* write -> fsync -> read, every member async */
	tprep(&r, IORING_OP_WRITE, fd, "abcdefgh", 8, 100, 1,
	      IOSQE_IO_LINK | IOSQE_ASYNC);
	tprep(&r, IORING_OP_FSYNC, fd, NULL, 0, 0, 2,
	      IOSQE_IO_LINK | IOSQE_ASYNC);
	tprep(&r, IORING_OP_READ, fd, buf, 8, 100, 3,
	      IOSQE_IO_LINK | IOSQE_ASYNC);
	nop(&r, 4, false, IOSQE_ASYNC);
	drec_int(c, tring_submit(&r), "async write-fsync-read: submit");
	dreap(c, &r, 4, true, "async write-fsync-read");
	drec_int(c, !memcmp(buf, "abcdefgh", 8), "chain read data");

	/* only the middle member async */
	tprep(&r, IORING_OP_WRITE, fd, "ijklmnop", 8, 108, 5, IOSQE_IO_LINK);
	tprep(&r, IORING_OP_FSYNC, fd, NULL, 0, 0, 6,
	      IOSQE_IO_LINK | IOSQE_ASYNC);
	tprep(&r, IORING_OP_READ, fd, buf, 16, 100, 7, 0);
	drec_int(c, tring_submit(&r), "middle async: submit");
	dreap(c, &r, 3, true, "middle async");
	drec_int(c, !memcmp(buf, "abcdefghijklmnop", 16), "middle async data");

	/* a failing async member (bad fd) cancels the rest */
	nop(&r, 10, false, IOSQE_IO_LINK);
	tprep(&r, IORING_OP_READ, -1, buf, 8, 0, 11,
	      IOSQE_IO_LINK | IOSQE_ASYNC);
	nop(&r, 12, false, IOSQE_IO_LINK | IOSQE_ASYNC);
	tprep(&r, IORING_OP_WRITE, fd, w, 8, 0, 13, IOSQE_IO_LINK);
	nop(&r, 14, false, 0);
	drec_int(c, tring_submit(&r), "failing async member: submit");
	dreap(c, &r, 5, true, "failing async member");
	drec_int(c, pread(fd, buf, 8, 0) == 8 && buf[0] != 'x',
		 "cancelled write did not run");

	/* an async short read breaks a soft link ... */
	tprep(&r, IORING_OP_READ, fd, buf, 200, 0, 20,
	      IOSQE_IO_LINK | IOSQE_ASYNC);
	nop(&r, 21, false, IOSQE_IO_LINK);
	nop(&r, 22, false, 0);
	drec_int(c, tring_submit(&r), "async short read link: submit");
	dreap(c, &r, 3, true, "async short read link");
	/* ... but not a hard link */
	tprep(&r, IORING_OP_READ, fd, buf, 200, 0, 23,
	      IOSQE_IO_HARDLINK | IOSQE_ASYNC);
	nop(&r, 24, false, IOSQE_ASYNC);
	drec_int(c, tring_submit(&r), "async short read hardlink: submit");
	dreap(c, &r, 2, true, "async short read hardlink");

	/* a failing async member of a hardlink chain: the rest runs */
	tprep(&r, IORING_OP_FSYNC, 9999, NULL, 0, 0, 30,
	      IOSQE_IO_HARDLINK | IOSQE_ASYNC);
	tprep(&r, IORING_OP_WRITE, fd, "HARD", 4, 0, 31,
	      IOSQE_IO_HARDLINK | IOSQE_ASYNC);
	nop(&r, 32, true, IOSQE_IO_HARDLINK);
	nop(&r, 33, false, 0);
	drec_int(c, tring_submit(&r), "async hardlink failures: submit");
	dreap(c, &r, 4, true, "async hardlink failures");
	drec_int(c, pread(fd, buf, 4, 0) == 4 && !memcmp(buf, "HARD", 4),
		 "hardlinked write ran");

	/* a bad SQE in a chain with async members: the head is cancelled */
	nop(&r, 40, false, IOSQE_IO_LINK | IOSQE_ASYNC);
	tprep(&r, IORING_OP_READ, fd, buf, 8, 0, 41,
	      IOSQE_IO_LINK | IOSQE_ASYNC)->ioprio = 7 << 13;
	nop(&r, 42, false, 0);
	drec_int(c, tring_submit(&r), "bad SQE in async chain: submit");
	dreap(c, &r, 2, true, "bad SQE in async chain");
	drec_int(c, tring_submit(&r), "resubmit rest");
	dreap(c, &r, 1, true, "rest of the SQ");

	/* async writes at the file position, linked: in order */
	lseek(fd, 0, SEEK_SET);
	for (i = 0; i < 8; i++) {
		w[i] = (char)('A' + i);
		tprep(&r, IORING_OP_WRITE, fd, &w[i], 1, (uint64_t)-1, 50 + i,
		      (i < 7 ? IOSQE_IO_LINK : 0) | IOSQE_ASYNC);
	}
	drec_int(c, tring_submit(&r), "linked async appends: submit");
	dreap(c, &r, 8, true, "linked async appends");
	drec_int(c, pread(fd, buf, 8, 0) == 8 && !memcmp(buf, "ABCDEFGH", 8),
		 "linked appends in order");
	drec_int(c, lseek(fd, 0, SEEK_CUR), "position after appends");

	/* a long chain, every other member async, failing at 37 */
	tring_exit(&r);
	if (dring_flags(c, &r, 64, 0) == 0) {
		for (i = 0; i < 60; i++)
			nop(&r, 100 + i, i == 37,
			    (i < 59 ? IOSQE_IO_LINK : 0) |
			    (i & 1 ? IOSQE_ASYNC : 0));
		drec_int(c, tring_submit(&r), "60-chain: submit");
		dreap(c, &r, 60, true, "60-chain");
	}
	close(fd);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_link_ops, body_link_ops)

/* ---- drain after async requests ---- */

static void drain_order(struct dctx *c, const struct tcqe *out, unsigned int n,
			uint64_t drain_ud, uint64_t first, uint64_t last,
			const char *label)
{
	int dp = pos_of(out, n, drain_ud), ok = dp >= 0;

	for (uint64_t u = first; u <= last; u++)
		if (pos_of(out, n, u) < 0 || pos_of(out, n, u) > dp)
			ok = 0;
	drec_int(c, ok, "%s: drained request after all earlier ones", label);
}

static long body_drain(struct dctx *c, void *arg)
{
	struct tcqe out[32];
	char buf[16][64];
	struct tring r;
	unsigned int n, i;
	int fd;

	(void)arg;
	if (dring_flags(c, &r, 32, 0))
		return 0;
	fd = dtmpfile(c, 4096, 7);
	/* 8 async NOPs, async reads and fsyncs, then DRAIN, then a NOP */
	for (i = 0; i < 12; i++) {
		if (i < 6)
			nop(&r, i, i == 3, IOSQE_ASYNC);
		else if (i < 10)
			tprep(&r, IORING_OP_READ, fd, buf[i], 64, i * 64, i,
			      IOSQE_ASYNC);
		else
			tprep(&r, IORING_OP_FSYNC, fd, NULL, 0, 0, i,
			      IOSQE_ASYNC);
	}
	nop(&r, 100, false, IOSQE_IO_DRAIN);
	nop(&r, 101, false, 0);
	drec_int(c, tring_submit(&r), "drain after async: submit");
	n = tring_reap_wait(&r, out, 14, 2 * SEC);
	drec_cqes(c, out, n, false, "drain after async");
	drain_order(c, out, n, 100, 0, 11, "drain after async");
	drec_int(c, pos_of(out, n, 101) > pos_of(out, n, 100),
		 "request after the drain follows it");

	/* the drained request is itself async */
	tring_queue_nops(&r, 6, 200, IOSQE_ASYNC);
	nop(&r, 210, false, IOSQE_IO_DRAIN | IOSQE_ASYNC);
	nop(&r, 211, false, IOSQE_ASYNC);
	drec_int(c, tring_submit(&r), "async drain: submit");
	n = tring_reap_wait(&r, out, 8, 2 * SEC);
	drec_cqes(c, out, n, false, "async drain");
	drain_order(c, out, n, 210, 200, 205, "async drain");
	drec_int(c, pos_of(out, n, 211) > pos_of(out, n, 210),
		 "async request after the async drain follows it");

	/* async fsyncs in one enter, the drain in the next */
	for (i = 0; i < 4; i++)
		tprep(&r, IORING_OP_FSYNC, fd, NULL, 0, 0, 300 + i,
		      IOSQE_ASYNC);
	drec_int(c, tring_submit(&r), "fsyncs: submit");
	nop(&r, 310, false, IOSQE_IO_DRAIN);
	drec_int(c, tring_submit(&r), "drain next enter: submit");
	n = tring_reap_wait(&r, out, 5, 2 * SEC);
	drec_cqes(c, out, n, false, "drain across enters");
	drain_order(c, out, n, 310, 300, 303, "drain across enters");

	/* a drained chain with async members */
	nop(&r, 400, false, IOSQE_ASYNC);
	nop(&r, 401, false, IOSQE_ASYNC);
	nop(&r, 402, false, IOSQE_IO_DRAIN | IOSQE_IO_LINK | IOSQE_ASYNC);
	nop(&r, 403, false, IOSQE_IO_LINK);
	nop(&r, 404, false, IOSQE_ASYNC);
	drec_int(c, tring_submit(&r), "drained async chain: submit");
	n = tring_reap_wait(&r, out, 5, 2 * SEC);
	drec_cqes(c, out, n, false, "drained async chain");
	drain_order(c, out, n, 402, 400, 401, "drained async chain");
	drec_int(c, pos_of(out, n, 403) > pos_of(out, n, 402) &&
		 pos_of(out, n, 404) > pos_of(out, n, 403),
		 "chain in order");
	close(fd);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_drain, body_drain)

/*
 * Many async writes to one regular file at distinct offsets.  (Unlinked
 * IOSQE_ASYNC writes at the file position have no defined order on the
 * kernel: the file is not assigned yet when an IOSQE_ASYNC request is
 * queued, so it is not hashed, and f_pos updates race.  Their order is
 * compared only when linked, in async_link_ops.)
 */
static long one_file(struct dctx *c, const char *dir)
{
	enum { N = 48, BS = 4096 };
	char *buf = malloc((size_t)N * BS), *rb = malloc(BS), label[80];
	struct tring r;
	int fd, good = 0, i;

	if (dring_flags(c, &r, 64, 0))
		return 0;
	fd = dtmpfile_at(c, dir, 0, 0);
	for (i = 0; i < N; i++) {
		memset(buf + (size_t)i * BS, 'a' + i % 26, BS);
		buf[(size_t)i * BS] = (char)i;
		tprep(&r, i % 3 ? IORING_OP_WRITE : IORING_OP_FSYNC, fd,
		      i % 3 ? buf + (size_t)i * BS : NULL, i % 3 ? BS : 0,
		      i % 3 ? (uint64_t)i * BS : 0, i, IOSQE_ASYNC);
	}
	snprintf(label, sizeof(label), "%s: %d async writes+fsyncs", dir, N);
	dsubmit(c, &r, label);
	dreap(c, &r, N, false, label);
	for (i = 0; i < N; i++) {
		if (!(i % 3))
			continue;
		if (pread(fd, rb, BS, (off_t)i * BS) == BS &&
		    !memcmp(rb, buf + (size_t)i * BS, BS))
			good++;
	}
	drec_int(c, good, "%s: blocks written correctly", label);
	drec_int(c, lseek(fd, 0, SEEK_CUR), "%s: file position", label);
	close(fd);
	free(buf);
	free(rb);
	tring_exit(&r);
	return 0;
}

static long body_one_file(struct dctx *c, void *arg)
{
	(void)arg;
	one_file(c, "/tmp");
	one_file(c, "/dev/shm");
	return 0;
}
ISOLATED(sc_one_file, body_one_file)

/* T2: the iovec array of an async WRITEV is read at submission */
static long body_stable(struct dctx *c, void *arg)
{
	char a[64], b[64], rb[64];
	struct iovec iov[2];
	struct tring r;
	int fd, i;

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return 0;
	fd = dtmpfile(c, 4096, 1);
	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	for (i = 0; i < 8; i++) {
		iov[0].iov_base = a;
		iov[0].iov_len = 32;
		iov[1].iov_base = a + 32;
		iov[1].iov_len = 32;
		tprep(&r, IORING_OP_WRITEV, fd, iov, 2, (uint64_t)i * 64, i,
		      IOSQE_ASYNC);
		tring_submit(&r);
		/* on an SQPOLL ring, submission is when the SQ thread
		 * takes the SQE */
		tring_sqpoll_await_sq_taken(&r, 5000);
		iov[0].iov_base = b;
		iov[0].iov_len = 1;
		iov[1].iov_base = dunmapped_addr();
		iov[1].iov_len = 5;
	}
	dreap(c, &r, 8, false, "async writevs");
	for (i = 0; i < 8; i++)
		drec_int(c, pread(fd, rb, 64, i * 64) == 64 &&
			 !memcmp(rb, a, 64), "write %d wrote the original", i);
	close(fd);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_stable, body_stable)

/* ---- io-wq threads: iou-wrk-<tid of the submitting thread> (T8) ---- */

static int has_thread(const char *name)
{
	int n = tthreads_named(name, false, NULL, NULL);

	return n < 0 ? -1 : n > 0;
}

struct sub_arg {
	struct tring *r;
	int tid;
	struct tcqe cqe;
	unsigned int n;
	pthread_barrier_t checked;
};

static void *submitter(void *p)
{
	struct sub_arg *a = p;

	a->tid = gettid();
	nop(a->r, 77, false, IOSQE_ASYNC);
	tring_submit(a->r);
	a->n = tring_reap_wait(a->r, &a->cqe, 1, 2 * SEC);
	pthread_barrier_wait(&a->checked); /* the main thread looks */
	pthread_barrier_wait(&a->checked); /* ... and is done */
	return NULL;
}

/*
 * io-wq is per submitting thread: its workers are named after that
 * thread, and they go away with it (the kernel's io_uring_files_cancel
 * at task exit tears the task's io-wq down before the thread is gone).
 */
static long body_workers(struct dctx *c, void *arg)
{
	struct sub_arg a;
	char name[32];
	struct tring r;
	pthread_t th;

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return 0;
	snprintf(name, sizeof(name), "iou-wrk-%d", gettid());
	drec_int(c, has_thread(name), "worker thread before any ASYNC");
	nop(&r, 1, false, IOSQE_ASYNC);
	drun1(c, &r, "async nop");
	drec_int(c, has_thread(name), "iou-wrk-<own tid> after ASYNC");

	memset(&a, 0, sizeof(a));
	a.r = &r;
	pthread_barrier_init(&a.checked, NULL, 2);
	pthread_create(&th, NULL, submitter, &a);
	pthread_barrier_wait(&a.checked);
	drec_cqes(c, &a.cqe, a.n, true, "async nop from a second thread");
	snprintf(name, sizeof(name), "iou-wrk-%d", a.tid);
	drec_int(c, has_thread(name),
		 "iou-wrk-<second thread's tid> while it lives");
	pthread_barrier_wait(&a.checked);
	pthread_join(th, NULL);
	drec_int(c, has_thread(name),
		 "iou-wrk-<second thread's tid> after it exited");
	usleep(200 * 1000);
	drec_int(c, has_thread(name),
		 "iou-wrk-<second thread's tid> 200 ms after it exited");
	pthread_barrier_destroy(&a.checked);
	/* the ring still works from the first thread */
	nop(&r, 2, false, IOSQE_ASYNC);
	drun1(c, &r, "async nop after the second thread exited");
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_workers, body_workers)

/* ---- IORING_REGISTER_IOWQ_AFF ---- */

struct cpus_arg {
	char *out;
	size_t len;
};

static void add_cpus(const char *tid, void *arg)
{
	struct cpus_arg *a = arg;
	char path[300], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *v;

		if (strncmp(line, "Cpus_allowed_list:", 18))
			continue;
		v = line + 18;
		v += strspn(v, " \t");
		v[strcspn(v, "\n")] = 0;
		if (a->out[0])
			strncat(a->out, ",", a->len - strlen(a->out) - 1);
		strncat(a->out, v, a->len - strlen(a->out) - 1);
	}
	fclose(f);
}

/* Cpus_allowed_list of the threads named name, joined ("1", "1,1", ...) */
static void thread_cpus(const char *name, char *out, size_t len)
{
	struct cpus_arg a = { out, len };

	out[0] = 0;
	tthreads_named(name, false, add_cpus, &a);
}

struct aff_arg {
	struct dctx *c;
	int fd;
	long aff, maxw;
	uint32_t vals[2];
};

static void *aff_thread(void *p)
{
	struct aff_arg *a = p;
	unsigned long m = 1;

	a->aff = a->c->be->reg(a->fd, IORING_REGISTER_IOWQ_AFF, &m, sizeof(m));
	a->maxw = a->c->be->reg(a->fd, IORING_REGISTER_IOWQ_MAX_WORKERS,
				a->vals, 2);
	return NULL;
}

static long body_iowq_aff(struct dctx *c, void *arg)
{
	unsigned long m, big[2] = { 2, ~0ul };
	struct aff_arg a = { .c = c, .vals = { 0, 0 } };
	char name[32], cpus[256];
	struct tring r;
	pthread_t th;
	int fd;

	(void)arg;
	if (sysconf(_SC_NPROCESSORS_CONF) < 2 || dring_flags(c, &r, 8, 0))
		return 0;
	fd = r.fd;
	drec_int(c, c->be->reg(fd, IORING_REGISTER_IOWQ_AFF, NULL, 8),
		 "IOWQ_AFF NULL mask");
	drec_int(c, c->be->reg(fd, IORING_REGISTER_IOWQ_AFF, &m, 0),
		 "IOWQ_AFF length 0");
	drec_int(c, c->be->reg(fd, IORING_REGISTER_IOWQ_AFF, dunmapped_addr(),
			       8), "IOWQ_AFF unmapped mask");
	drec_int(c, c->be->reg(fd, IORING_UNREGISTER_IOWQ_AFF, &m, 0),
		 "UNREGISTER_IOWQ_AFF with a mask");
	drec_int(c, c->be->reg(fd, IORING_UNREGISTER_IOWQ_AFF, NULL, 1),
		 "UNREGISTER_IOWQ_AFF with nr_args 1");
	m = 0;
	drec_int(c, c->be->reg(fd, IORING_REGISTER_IOWQ_AFF, &m, sizeof(m)),
		 "IOWQ_AFF empty mask");
	drec_int(c, c->be->reg(fd, IORING_UNREGISTER_IOWQ_AFF, NULL, 0),
		 "UNREGISTER_IOWQ_AFF");
	/* a thread that never set up or submitted has no io-wq yet */
	a.fd = fd;
	pthread_create(&th, NULL, aff_thread, &a);
	pthread_join(th, NULL);
	drec_int(c, a.aff, "IOWQ_AFF from a thread without a ring");
	drec_int(c, a.maxw, "IOWQ_MAX_WORKERS from that thread");
	drec_int(c, a.vals[0], "  its bounded limit");
	drec_int(c, a.vals[1], "  its unbounded limit");
	/* the mask is cut to the possible CPUs: CPU 1 plus bits beyond */
	drec_int(c, c->be->reg(fd, IORING_REGISTER_IOWQ_AFF, big, sizeof(big)),
		 "IOWQ_AFF CPU 1 and bits beyond the possible CPUs");
	nop(&r, 1, false, IOSQE_ASYNC);
	drun1(c, &r, "ASYNC NOP");
	snprintf(name, sizeof(name), "iou-wrk-%d", gettid());
	thread_cpus(name, cpus, sizeof(cpus));
	drec_int(c, !strcmp(cpus, "1"), "the worker runs on CPU 1 only");
	/* a running worker keeps its CPUs: the mask is for new workers */
	m = 1;
	drec_int(c, c->be->reg(fd, IORING_REGISTER_IOWQ_AFF, &m, sizeof(m)),
		 "IOWQ_AFF CPU 0");
	nop(&r, 2, false, IOSQE_ASYNC);
	drun1(c, &r, "ASYNC NOP on the idle worker");
	thread_cpus(name, cpus, sizeof(cpus));
	drec_int(c, !strcmp(cpus, "1"), "the idle worker still on CPU 1");
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_iowq_aff, body_iowq_aff)

static const struct dscenario scenarios[] = {
	{ "async_ops", sc_ops, NULL },
	{ "async_batch", sc_batch, NULL },
	{ "async_link_mix", sc_link_mix, NULL },
	{ "async_link_ops", sc_link_ops, NULL },
	{ "async_drain", sc_drain, NULL },
	{ "async_writes_one_file", sc_one_file, NULL },
	{ "async_iovec_stable", sc_stable, NULL },
	{ "async_worker_threads", sc_workers, NULL },
	{ "iowq_affinity", sc_iowq_aff, NULL },
};

DTEST_MAIN(scenarios)
