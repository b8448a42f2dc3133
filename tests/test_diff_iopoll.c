// SPDX-License-Identifier: MIT
/*
 * Differential tests: IORING_SETUP_IOPOLL rings, kernel io_uring vs uuring.
 * Setup flag combinations, the opcodes such a ring accepts, polled
 * O_DIRECT writes and reads on /tmp (ext4 here) whose CQEs appear only
 * when enter(GETEVENTS) reaps them, min_complete, the files and errors
 * that get -EOPNOTSUPP/-EINVAL/-EBADF, links, CQ overflow, EXT_ARG, fixed
 * files and buffers, IOSQE_ASYNC, SQPOLL and DEFER_TASKRUN variants, and
 * closing a ring with polled I/O in flight.
 *
 * What the kernel answers for reads depends on the disk: a queue without
 * poll queues (virtio-blk here) refuses polled bios, so reads of written
 * data fail with -EOPNOTSUPP while writes and reads of holes succeed.
 * Both backends are compared on the same files, whatever the disk does.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"

#define BS 4096
#define NBUF 16
#define FSZ (64 * 1024) /* [0, 64k) written data; the rest a hole */

static char *buf; /* NBUF aligned blocks */

static void bufs_init(void)
{
	if (!buf && posix_memalign((void **)&buf, BS, NBUF * BS))
		abort();
	memset(buf, 0, NBUF * BS);
}

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/*
 * Reaps `want` CQEs the way an IOPOLL application must: enter with
 * GETEVENTS (which polls and never sleeps for anything else), again and
 * again, for up to 2 s.  Returns the count.
 */
static unsigned int getev(struct tring *r, struct tcqe *out, unsigned int want)
{
	int64_t end = now_ms() + 2000;
	unsigned int got = 0;

	while (got < want && now_ms() < end) {
		int ret = tring_enter(r, 0, want - got, IORING_ENTER_GETEVENTS,
				      NULL, 0);

		got += tring_reap(r, out + got, want - got);
		if (got < want && ret >= 0)
			usleep(1000);
	}
	return got;
}

static unsigned int rec_getev(struct dctx *c, struct tring *r,
			      unsigned int want, bool ordered,
			      const char *label)
{
	struct tcqe cq[32];
	unsigned int n = getev(r, cq, want);

	drec_cqes(c, cq, n, ordered, "%s", label);
	return n;
}

/* An O_DIRECT fd on an unlinked /tmp file holding FSZ bytes of pattern,
 * FSZ more of hole; *bfd gets the buffered fd (closed by the caller). */
static int direct_file(struct dctx *c, int *bfd)
{
	char path[32];
	int fd = dtmpfile(c, FSZ, 7), dfd;

	if (fd < 0)
		return -1;
	if (ftruncate(fd, 2 * FSZ) || fsync(fd)) {
		close(fd);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	dfd = open(path, O_RDWR | O_DIRECT);
	dcheck(c, dfd >= 0, "O_DIRECT reopen of a /tmp file");
	if (bfd)
		*bfd = fd;
	else
		close(fd);
	return dfd;
}

static struct io_uring_sqe *prep(struct tring *r, int op, int fd, void *addr,
				 unsigned int len, uint64_t off, uint64_t ud)
{
	return tprep(r, op, fd, addr, len, off, ud, 0);
}

/* ---- setup ---- */

static void sc_setup_flags(struct dctx *c)
{
	static const struct {
		const char *name;
		unsigned int flags;
	} t[] = {
		{ "IOPOLL", IORING_SETUP_IOPOLL },
		{ "HYBRID_IOPOLL alone", IORING_SETUP_HYBRID_IOPOLL },
		{ "IOPOLL|HYBRID_IOPOLL",
		  IORING_SETUP_IOPOLL | IORING_SETUP_HYBRID_IOPOLL },
		{ "IOPOLL|SQPOLL", IORING_SETUP_IOPOLL | IORING_SETUP_SQPOLL },
		{ "IOPOLL|SQPOLL|HYBRID", IORING_SETUP_IOPOLL |
		  IORING_SETUP_SQPOLL | IORING_SETUP_HYBRID_IOPOLL },
		{ "IOPOLL|DEFER_TASKRUN|SINGLE_ISSUER", IORING_SETUP_IOPOLL |
		  IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER },
		{ "IOPOLL|DEFER_TASKRUN", IORING_SETUP_IOPOLL |
		  IORING_SETUP_DEFER_TASKRUN },
		{ "IOPOLL|COOP|TASKRUN_FLAG", IORING_SETUP_IOPOLL |
		  IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG },
		{ "IOPOLL|SQPOLL|COOP", IORING_SETUP_IOPOLL |
		  IORING_SETUP_SQPOLL | IORING_SETUP_COOP_TASKRUN },
		{ "IOPOLL|SQE128|CQE32", IORING_SETUP_IOPOLL |
		  IORING_SETUP_SQE128 | IORING_SETUP_CQE32 },
		{ "IOPOLL|NO_SQARRAY|SUBMIT_ALL", IORING_SETUP_IOPOLL |
		  IORING_SETUP_NO_SQARRAY | IORING_SETUP_SUBMIT_ALL },
	};

	for (unsigned int i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct io_uring_params p;
		struct tring r;

		memset(&p, 0, sizeof(p));
		p.flags = t[i].flags;
		if (!dring(c, &r, 4, &p, t[i].name)) {
			drec_int(c, (long)p.flags, "%s: flags out", t[i].name);
			tring_exit(&r);
		}
	}
}

/* ---- opcodes: the non-iopoll ones get -EINVAL at submission ---- */

static void sc_opcodes(struct dctx *c)
{
	struct tring r;

	if (dring_flags(c, &r, 4, IORING_SETUP_IOPOLL))
		return;
	for (int op = 0; op <= IORING_OP_WRITEV_FIXED; op++) {
		struct tcqe cq[2];
		unsigned int n;

		if (op == IORING_OP_URING_CMD)
			continue; /* not implemented by uuring (-EINVAL) */
		prep(&r, op, -1, NULL, 0, 0, (uint64_t)op);
		drec_int(c, tring_submit(&r), "op %d: submit", op);
		/* completed at submission (errors, NOP): GETEVENTS returns
		 * at once with them in the CQ */
		drec_int(c, tring_enter(&r, 0, 1, IORING_ENTER_GETEVENTS, NULL,
					0), "op %d: getevents", op);
		n = tring_reap(&r, cq, 2);
		drec_cqes(c, cq, n, true, "op %d", op);
	}
	/* IOSQE flags on an allowed opcode: NOP linked to a NOP */
	prep(&r, IORING_OP_NOP, -1, NULL, 0, 0, 100)->flags = IOSQE_IO_LINK;
	prep(&r, IORING_OP_NOP, -1, NULL, 0, 0, 101);
	drec_int(c, tring_submit(&r), "nop chain");
	rec_getev(c, &r, 2, true, "nop chain");
	tring_exit(&r);
}

/* ---- success path: polled writes, reaped by GETEVENTS ---- */

static void sc_write_reaped(struct dctx *c)
{
	struct tring r;
	struct iovec iov[2];
	char *chk;
	int dfd, bfd;

	bufs_init();
	if (dring_flags(c, &r, 8, IORING_SETUP_IOPOLL))
		return;
	dfd = direct_file(c, &bfd);
	if (dfd < 0)
		goto out;
	for (int i = 0; i < 4; i++)
		memset(buf + i * BS, 'a' + i, BS);
	prep(&r, IORING_OP_WRITE, dfd, buf, BS, 0, 1);
	drec_int(c, tring_submit(&r), "write: submit");
	usleep(30000);
	/* done on the device long ago, but not posted until reaped */
	drec_int(c, tring_cq_ready(&r), "write: CQEs before GETEVENTS");
	rec_getev(c, &r, 1, true, "write");

	iov[0].iov_base = buf + BS;
	iov[0].iov_len = BS;
	iov[1].iov_base = buf + 2 * BS;
	iov[1].iov_len = BS;
	prep(&r, IORING_OP_WRITEV, dfd, iov, 2, BS, 2);
	prep(&r, IORING_OP_WRITE, dfd, buf + 3 * BS, BS, 3 * BS, 3);
	/* a write into the hole and one that extends the file */
	prep(&r, IORING_OP_WRITE, dfd, buf, BS, FSZ + BS, 4);
	prep(&r, IORING_OP_WRITE, dfd, buf, BS, 4 * FSZ, 5);
	drec_int(c, tring_submit(&r), "writes: submit");
	usleep(30000);
	drec_int(c, tring_cq_ready(&r), "writes: CQEs before GETEVENTS");
	rec_getev(c, &r, 4, false, "writes");
	/* nothing in flight: GETEVENTS returns at once, whatever min */
	drec_int(c, tring_enter(&r, 0, 4, IORING_ENTER_GETEVENTS, NULL, 0),
		 "getevents with nothing in flight");
	drec_int(c, tring_cq_ready(&r), "still empty");

	/* the data reached the file */
	chk = malloc(4 * BS);
	if (chk && pread(bfd, chk, 4 * BS, 0) == 4 * BS)
		drec_int(c, !memcmp(chk, buf, 4 * BS), "data written");
	free(chk);
	/* file offset -1: the position at issue, not advanced after */
	lseek(dfd, 2 * BS, SEEK_SET);
	prep(&r, IORING_OP_WRITE, dfd, buf, BS, (uint64_t)-1, 6);
	drec_int(c, tring_submit(&r), "write at -1: submit");
	rec_getev(c, &r, 1, true, "write at -1");
	drec_int(c, (long)lseek(dfd, 0, SEEK_CUR), "file offset after");
	close(dfd);
	close(bfd);
out:
	tring_exit(&r);
}

/* ---- reads: holes and EOF succeed; written data depends on the disk ---- */

static void sc_reads(struct dctx *c)
{
	struct tring r;
	struct iovec iov = { NULL, BS };
	int dfd;

	bufs_init();
	iov.iov_base = buf;
	if (dring_flags(c, &r, 8, IORING_SETUP_IOPOLL))
		return;
	dfd = direct_file(c, NULL);
	if (dfd < 0)
		goto out;
	memset(buf, 0x55, 3 * BS);
	prep(&r, IORING_OP_READ, dfd, buf, BS, FSZ + 2 * BS, 1); /* hole */
	prep(&r, IORING_OP_READ, dfd, buf + BS, BS, 2 * FSZ, 2); /* EOF */
	prep(&r, IORING_OP_READ, dfd, buf + 2 * BS, 2 * BS, 2 * FSZ - BS, 3);
	drec_int(c, tring_submit(&r), "hole/EOF reads: submit");
	usleep(30000);
	drec_int(c, tring_cq_ready(&r), "hole/EOF reads: CQEs before GETEVENTS");
	rec_getev(c, &r, 3, false, "hole/EOF reads");
	drec_int(c, buf[0] == 0 && buf[BS - 1] == 0, "hole read as zeros");
	/* written data: -EOPNOTSUPP on a queue without poll queues */
	prep(&r, IORING_OP_READ, dfd, buf, BS, 0, 4);
	rec_getev(c, &r, 0, true, "(none)");
	drec_int(c, tring_submit(&r), "data read: submit");
	rec_getev(c, &r, 1, true, "data read");
	prep(&r, IORING_OP_READV, dfd, &iov, 1, BS, 5);
	drec_int(c, tring_submit(&r), "data readv: submit");
	rec_getev(c, &r, 1, true, "data readv");
	/* a read starting in the hole and running into written data */
	prep(&r, IORING_OP_READ, dfd, buf, 2 * BS, FSZ - BS, 6);
	drec_int(c, tring_submit(&r), "data+hole read: submit");
	rec_getev(c, &r, 1, true, "data+hole read");
	/* a length that is not in logical blocks */
	prep(&r, IORING_OP_READ, dfd, buf, 100, 0, 7);
	drec_int(c, tring_submit(&r), "unaligned read: submit");
	rec_getev(c, &r, 1, true, "unaligned read");
	close(dfd);
out:
	tring_exit(&r);
}

/* ---- errors: files without polled I/O, modes, offsets, alignment ---- */

static void sc_errors(struct dctx *c)
{
	struct tring r;
	int dfd, bfd, sfd, p[2] = { -1, -1 }, ro;

	bufs_init();
	if (dring_flags(c, &r, 8, IORING_SETUP_IOPOLL))
		return;
	dfd = direct_file(c, &bfd);
	if (dfd < 0)
		goto out;
	sfd = dtmpfile_at(c, "/dev/shm", BS, 1);
	if (pipe(p))
		p[0] = p[1] = -1;
	ro = open("/proc/self/exe", O_RDONLY | O_DIRECT);
	/* errors found at issue are posted at once (no GETEVENTS needed) */
	prep(&r, IORING_OP_WRITE, bfd, buf, BS, 0, 1);     /* page cache */
	prep(&r, IORING_OP_READ, bfd, buf, BS, 0, 2);
	prep(&r, IORING_OP_READ, sfd, buf, BS, 0, 3);      /* tmpfs */
	prep(&r, IORING_OP_WRITE, p[1], buf, 10, 0, 4);    /* pipe */
	prep(&r, IORING_OP_WRITE, ro, buf, BS, 0, 5);      /* read-only */
	prep(&r, IORING_OP_WRITE, dfd, buf, BS, (uint64_t)-2, 6);
	prep(&r, IORING_OP_WRITE, 999, buf, BS, 0, 7);     /* bad fd */
	prep(&r, IORING_OP_WRITE, dfd, buf, BS, 0, 8)->rw_flags = 1u << 30;
	drec_int(c, tring_submit(&r), "bad files: submit");
	usleep(30000);
	drec_int(c, tring_cq_ready(&r), "bad files: CQEs before GETEVENTS");
	rec_getev(c, &r, 8, true, "bad files");
	/* I/O errors found by the write itself go through the poll list */
	prep(&r, IORING_OP_WRITE, dfd, buf + 1, BS, 0, 9);  /* buffer */
	prep(&r, IORING_OP_WRITE, dfd, buf, BS, 1, 10);     /* offset */
	drec_int(c, tring_submit(&r), "unaligned writes: submit");
	usleep(30000);
	drec_int(c, tring_cq_ready(&r), "unaligned writes: CQEs before GETEVENTS");
	rec_getev(c, &r, 2, false, "unaligned writes");
	/* EXT_ARG is validated, its timeout not used; no sigmask check */
	drec_int(c, tring_enter(&r, 0, 1, IORING_ENTER_GETEVENTS |
				IORING_ENTER_EXT_ARG, buf, 8), "ext_arg size 8");
	drec_int(c, tring_enter(&r, 0, 1, IORING_ENTER_GETEVENTS |
				IORING_ENTER_EXT_ARG, dunmapped_addr(),
				sizeof(struct io_uring_getevents_arg)),
		 "ext_arg unmapped");
	drec_int(c, tring_enter(&r, 0, 1, IORING_ENTER_GETEVENTS, buf, 3),
		 "sigmask size 3");
	drec_int(c, tring_wait(&r, 1, 1000000), "wait 1 ms, nothing in flight");
	if (ro >= 0)
		close(ro);
	tclose2(p);
	if (sfd >= 0)
		close(sfd);
	close(dfd);
	close(bfd);
out:
	tring_exit(&r);
}

/* ---- links: an error reported by the poll path does not break them ---- */

static void sc_links(struct dctx *c)
{
	struct tring r;
	int dfd, bfd;

	bufs_init();
	if (dring_flags(c, &r, 8, IORING_SETUP_IOPOLL))
		return;
	dfd = direct_file(c, &bfd);
	if (dfd < 0)
		goto out;
	prep(&r, IORING_OP_WRITE, dfd, buf, BS, 0, 1)->flags = IOSQE_IO_LINK;
	prep(&r, IORING_OP_NOP, -1, NULL, 0, 0, 2);
	prep(&r, IORING_OP_WRITE, dfd, buf, BS, BS, 3);
	drec_int(c, tring_submit(&r), "write->nop, write: submit");
	usleep(30000);
	/* both writes, and the NOP the first one releases after it; the
	 * two writes come in the order their polls find them done, which
	 * on a loaded machine is either (kernel 3,1 seen once, uuring 1,3) */
	{
		struct tcqe cq[8];
		unsigned int n = getev(&r, cq, 3), w1 = 9, nop = 9;

		drec_cqes(c, cq, n, false, "write->nop, write");
		for (unsigned int i = 0; i < n; i++) {
			if (cq[i].user_data == 1)
				w1 = i;
			else if (cq[i].user_data == 2)
				nop = i;
		}
		drec_int(c, w1 < nop, "the NOP after its write");
	}
	prep(&r, IORING_OP_WRITE, dfd, buf + 1, BS, 0, 4)->flags = IOSQE_IO_LINK;
	prep(&r, IORING_OP_NOP, -1, NULL, 0, 0, 5);
	drec_int(c, tring_submit(&r), "unaligned->nop: submit");
	rec_getev(c, &r, 2, true, "unaligned->nop");
	prep(&r, IORING_OP_WRITE, bfd, buf, BS, 0, 6)->flags = IOSQE_IO_LINK;
	prep(&r, IORING_OP_NOP, -1, NULL, 0, 0, 7);
	drec_int(c, tring_submit(&r), "buffered->nop: submit");
	rec_getev(c, &r, 2, true, "buffered->nop");
	prep(&r, IORING_OP_NOP, -1, NULL, 0, 0, 8)->flags = IOSQE_IO_LINK;
	prep(&r, IORING_OP_WRITE, dfd, buf, BS, 2 * BS, 9);
	drec_int(c, tring_submit(&r), "nop->write: submit");
	rec_getev(c, &r, 2, true, "nop->write");
	/* IOSQE_ASYNC: through io-wq, still reaped by GETEVENTS */
	prep(&r, IORING_OP_WRITE, dfd, buf, BS, 0, 10)->flags = IOSQE_ASYNC;
	drec_int(c, tring_submit(&r), "async write: submit");
	usleep(30000);
	drec_int(c, tring_cq_ready(&r), "async write: CQEs before GETEVENTS");
	rec_getev(c, &r, 1, true, "async write");
	close(dfd);
	close(bfd);
out:
	tring_exit(&r);
}

/* ---- min_complete and CQ overflow ---- */

static void sc_overflow(struct dctx *c)
{
	struct tcqe cq[32];
	struct tring r;
	unsigned int n1, n2;
	int dfd;

	bufs_init();
	if (dring_flags(c, &r, 4, IORING_SETUP_IOPOLL)) /* CQ: 8 */
		return;
	dfd = direct_file(c, NULL);
	if (dfd < 0)
		goto out;
	for (int i = 0; i < 12; i++) {
		if (!tring_sq_space_left(&r))
			drec_int(c, tring_submit(&r), "submit batch");
		prep(&r, IORING_OP_WRITE, dfd, buf, BS, (uint64_t)i * BS,
		     20 + i);
	}
	drec_int(c, tring_submit(&r), "submit last batch");
	usleep(50000);
	drec_int(c, tring_cq_ready(&r), "CQEs before GETEVENTS");
	/* reaps all 12: 8 fit, 4 go to the overflow backlog */
	drec_int(c, tring_enter(&r, 0, 12, IORING_ENTER_GETEVENTS, NULL, 0),
		 "getevents 12");
	drec_int(c, tring_cq_ready(&r), "CQEs after");
	drec_int(c, !!(tring_sq_flags(&r) & IORING_SQ_CQ_OVERFLOW),
		 "overflow flag");
	n1 = tring_reap(&r, cq, 16);
	drec_int(c, n1, "first reap");
	drec_int(c, tring_enter(&r, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0),
		 "getevents flushes");
	drec_int(c, !!(tring_sq_flags(&r) & IORING_SQ_CQ_OVERFLOW),
		 "overflow flag after flush");
	n2 = tring_reap(&r, cq + n1, 16);
	drec_int(c, n2, "second reap");
	/*
	 * The device completes the 12 writes in no fixed order, so which 8
	 * land in the CQ and which 4 in the backlog varies from run to run on
	 * the kernel: compare the counts above and all 12 CQEs as a set.
	 */
	drec_cqes(c, cq, n1 + n2, false, "all 12");
	drec_int(c, (long)*r.cq_overflow, "cq overflow count");
	close(dfd);
out:
	tring_exit(&r);
}

/* ---- registered files and buffers ---- */

static void sc_fixed(struct dctx *c)
{
	struct tring r;
	struct iovec rb = { NULL, 4 * BS };
	int dfd, bfd, fds[2];

	bufs_init();
	rb.iov_base = buf;
	if (dring_flags(c, &r, 8, IORING_SETUP_IOPOLL))
		return;
	dfd = direct_file(c, &bfd);
	if (dfd < 0)
		goto out;
	fds[0] = dfd;
	fds[1] = bfd;
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_FILES, fds, 2),
		 "register files");
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_BUFFERS, &rb, 1),
		 "register buffers");
	prep(&r, IORING_OP_WRITE, 0, buf, BS, 0, 1)->flags = IOSQE_FIXED_FILE;
	prep(&r, IORING_OP_WRITE, 1, buf, BS, 0, 2)->flags = IOSQE_FIXED_FILE;
	prep(&r, IORING_OP_WRITE_FIXED, dfd, buf + BS, BS, BS, 3);
	prep(&r, IORING_OP_READ_FIXED, dfd, buf, BS, FSZ + BS, 4);
	drec_int(c, tring_submit(&r), "fixed: submit");
	rec_getev(c, &r, 4, false, "fixed");
	close(dfd);
	close(bfd);
out:
	tring_exit(&r);
}

/* ---- SQPOLL polls for the application; DEFER_TASKRUN owner rule ---- */

static void sc_sqpoll(struct dctx *c)
{
	struct io_uring_params p;
	struct tring r;
	int dfd;

	bufs_init();
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_IOPOLL | IORING_SETUP_SQPOLL;
	p.sq_thread_idle = 100;
	if (dring(c, &r, 8, &p, "IOPOLL|SQPOLL"))
		return;
	dfd = direct_file(c, NULL);
	if (dfd < 0)
		goto out;
	prep(&r, IORING_OP_WRITE, dfd, buf, BS, 0, 1);
	prep(&r, IORING_OP_WRITE, dfd, buf, BS, BS, 2);
	prep(&r, IORING_OP_READ, dfd, buf, BS, FSZ + BS, 3);
	tring_flush(&r);
	tring_enter(&r, 3, 0, IORING_ENTER_SQ_WAKEUP, NULL, 0);
	/* the SQPOLL thread reaps: the CQEs come without GETEVENTS */
	{
		struct tcqe cq[4];
		unsigned int n = tring_reap_wait(&r, cq, 3, 1000000000LL);

		drec_cqes(c, cq, n, false, "sqpoll writes");
	}
	close(dfd);
out:
	tring_exit(&r);
}

struct other_arg {
	struct tring *r;
	int ret;
};

static void *other_thread(void *a)
{
	struct other_arg *o = a;

	o->ret = tring_enter(o->r, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0);
	return NULL;
}

static void sc_defer(struct dctx *c)
{
	struct io_uring_params p;
	struct other_arg o;
	pthread_t th;
	struct tring r;
	int dfd;

	bufs_init();
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_IOPOLL | IORING_SETUP_DEFER_TASKRUN |
		  IORING_SETUP_SINGLE_ISSUER;
	if (dring(c, &r, 8, &p, "IOPOLL|DEFER_TASKRUN"))
		return;
	dfd = direct_file(c, NULL);
	if (dfd < 0)
		goto out;
	prep(&r, IORING_OP_WRITE, dfd, buf, BS, 0, 1);
	drec_int(c, tring_submit(&r), "submit");
	o.r = &r;
	o.ret = 12345;
	if (!pthread_create(&th, NULL, other_thread, &o)) {
		pthread_join(th, NULL);
		drec_int(c, o.ret, "getevents from another thread");
	}
	rec_getev(c, &r, 1, true, "owner reaps");
	close(dfd);
out:
	tring_exit(&r);
}

/* ---- closing the ring with polled writes in flight ---- */

static long close_inflight_body(struct dctx *c, void *arg)
{
	struct tring r;
	struct tcqe cqe;
	char *chk;
	int dfd, bfd;
	long ok = 0;

	(void)arg;
	bufs_init();
	if (tring_init(&r, c->be, 8, IORING_SETUP_IOPOLL))
		return -1;
	dfd = direct_file(c, &bfd);
	if (dfd < 0)
		return -2;
	memset(buf, 'z', 4 * BS);
	for (int i = 0; i < 4; i++)
		prep(&r, IORING_OP_WRITE, dfd, buf + i * BS, BS,
		     (uint64_t)i * BS, (uint64_t)i);
	if (tring_submit(&r) != 4)
		return -3;
	tring_exit(&r); /* never reaped */
	usleep(50000);
	/* whether they were written is not defined: the kernel cancels
	 * those still queued in io-wq at ring exit */
	chk = malloc(4 * BS);
	if (chk && pread(bfd, chk, 4 * BS, 0) == 4 * BS)
		dnote(c, "in-flight writes landed: %d", !memcmp(chk, buf, 4 * BS));
	free(chk);
	/* the process goes on: a new ring works */
	if (tring_init(&r, c->be, 4, IORING_SETUP_IOPOLL))
		return -5;
	prep(&r, IORING_OP_WRITE, dfd, buf, BS, 0, 9);
	if (tring_submit(&r) != 1 || getev(&r, &cqe, 1) != 1 || cqe.res != BS)
		ok = -6;
	tring_exit(&r);
	close(dfd);
	close(bfd);
	return ok;
}
DISOLATED_SCENARIO(sc_close_inflight, close_inflight_body, 10000)

static const struct dscenario scenarios[] = {
	{ "setup_flags", sc_setup_flags, NULL },
	{ "opcodes", sc_opcodes, NULL },
	{ "write_reaped", sc_write_reaped, NULL },
	{ "reads", sc_reads, NULL },
	{ "errors", sc_errors, NULL },
	{ "links", sc_links, NULL },
	{ "overflow", sc_overflow, NULL },
	{ "fixed", sc_fixed, NULL },
	{ "sqpoll", sc_sqpoll, NULL },
	{ "defer", sc_defer, NULL },
	{ "close_inflight", sc_close_inflight, NULL },
};

DTEST_MAIN(scenarios)
