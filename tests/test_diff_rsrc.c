// SPDX-License-Identifier: MIT
/*
 * Differential tests: registered files (REGISTER_FILES, FILES2 sparse,
 * FILES_UPDATE, FILES_UPDATE2, FILE_ALLOC_RANGE, UNREGISTER, fixed-file
 * I/O, errors), IORING_OP_FILES_UPDATE (offsets, index allocation,
 * errors) and the CQ eventfd (REGISTER_EVENTFD, EVENTFD_ASYNC,
 * IORING_CQ_EVENTFD_DISABLED, signalled once per commit).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"

static int reg(struct dctx *c, struct tring *r, unsigned int op, void *arg,
	       unsigned int nr)
{
	return c->be->reg((unsigned int)r->fd, op, arg, nr);
}

static void sc_files(struct dctx *c)
{
	struct tring r;
	int fd = dtmpfile(c, 8192, 3), fds[4], bad[2] = { 9999, -1 };
	char buf[32];
	struct io_uring_sqe *sqe;

	if (fd < 0 || dring_flags(c, &r, 16, 0))
		return;
	fds[0] = fd;
	fds[1] = -1;
	fds[2] = -1;
	fds[3] = fd;
	drec_int(c, reg(c, &r, IORING_UNREGISTER_FILES, NULL, 0), "unregister none");
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES, fds, 0), "register 0");
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES, bad, 2), "register bad fd");
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES, dunmapped_addr(), 2), "register fault");
	{
		int ringfd = r.fd;

		drec_int(c, reg(c, &r, IORING_REGISTER_FILES, &ringfd, 1), "register the ring fd");
	}
	fds[2] = IORING_REGISTER_FILES_SKIP;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES, fds, 4), "register with SKIP");
	fds[2] = -1;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES, fds, 4), "register 4");
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES, fds, 4), "register again");
	/* fixed-file reads: slot 0 and 3 ok, 1 and 2 empty, 7 out of range */
	for (int i = 0; i < 4; i++) {
		sqe = tring_get_sqe(&r);
		tring_prep_rw(sqe, IORING_OP_READ, i, buf, sizeof(buf), 100, 10 + i);
		sqe->flags |= IOSQE_FIXED_FILE;
	}
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, 7, buf, sizeof(buf), 100, 17);
	sqe->flags |= IOSQE_FIXED_FILE;
	drec_int(c, tring_submit(&r), "fixed reads");
	dreap(c, &r, 5, true, "fixed reads");
	/* the registered file outlives the application's fd */
	close(fd);
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, 0, buf, sizeof(buf), 0, 20);
	sqe->flags |= IOSQE_FIXED_FILE;
	drec_int(c, tring_submit(&r), "read after close");
	dreap(c, &r, 1, true, "read after close");
	/* update: slot 1 := slot-0 file (dup), slot 0 cleared */
	{
		int nfd = dtmpfile(c, 4096, 9);
		int set[2] = { -1, nfd };
		struct io_uring_files_update up = { .offset = 0,
			.fds = (uint64_t)(uintptr_t)set };

		drec_int(c, reg(c, &r, IORING_REGISTER_FILES_UPDATE, &up, 2), "update 2");
		up.offset = 3;
		drec_int(c, reg(c, &r, IORING_REGISTER_FILES_UPDATE, &up, 2), "update out of range");
		up.offset = 0;
		up.resv = 1;
		drec_int(c, reg(c, &r, IORING_REGISTER_FILES_UPDATE, &up, 1), "update resv");
		for (int i = 0; i < 2; i++) {
			sqe = tring_get_sqe(&r);
			tring_prep_rw(sqe, IORING_OP_READ, i, buf, 8, 0, 30 + i);
			sqe->flags |= IOSQE_FIXED_FILE;
		}
		drec_int(c, tring_submit(&r), "reads after update");
		dreap(c, &r, 2, true, "reads after update");
		close(nfd);
	}
	drec_int(c, reg(c, &r, IORING_UNREGISTER_FILES, NULL, 0), "unregister");
	drec_int(c, reg(c, &r, IORING_UNREGISTER_FILES, NULL, 0), "unregister twice");
	tring_exit(&r);
}

static void sc_files2(struct dctx *c)
{
	struct io_uring_rsrc_register rr;
	struct io_uring_rsrc_update2 up;
	struct io_uring_file_index_range range;
	struct tring r;
	int fd = dtmpfile(c, 4096, 5);
	char buf[16];
	struct io_uring_sqe *sqe;

	if (fd < 0 || dring_flags(c, &r, 16, 0))
		return;
	memset(&rr, 0, sizeof(rr));
	rr.nr = 8;
	rr.flags = IORING_RSRC_REGISTER_SPARSE;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES2, &rr, sizeof(rr) - 1), "files2 bad size");
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES2, &rr, sizeof(rr)), "files2 sparse 8");
	memset(&up, 0, sizeof(up));
	up.offset = 5;
	up.data = (uint64_t)(uintptr_t)&fd;
	up.nr = 1;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES_UPDATE2, &up, sizeof(up)), "update2 slot 5");
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, 5, buf, sizeof(buf), 0, 1);
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, 4, buf, sizeof(buf), 0, 2);
	sqe->flags |= IOSQE_FIXED_FILE;
	drec_int(c, tring_submit(&r), "sparse reads");
	dreap(c, &r, 2, true, "sparse reads");
	memset(&range, 0, sizeof(range));
	range.off = 2;
	range.len = 4;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILE_ALLOC_RANGE, &range, 0), "alloc range");
	range.len = 9;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILE_ALLOC_RANGE, &range, 0), "alloc range too big");
	range.len = 1;
	range.resv = 1;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILE_ALLOC_RANGE, &range, 0), "alloc range resv");
	close(fd);
	tring_exit(&r);
}

static void sc_eventfd(struct dctx *c)
{
	struct tring r;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), bad = 9999, nfd;
	uint64_t v;

	if (efd < 0 || dring_flags(c, &r, 16, 0))
		return;
	nfd = open("/dev/null", O_RDONLY);
	drec_int(c, reg(c, &r, IORING_UNREGISTER_EVENTFD, NULL, 0), "unregister none");
	drec_int(c, reg(c, &r, IORING_REGISTER_EVENTFD, &efd, 2), "nr 2");
	drec_int(c, reg(c, &r, IORING_REGISTER_EVENTFD, &bad, 1), "bad fd");
	drec_int(c, reg(c, &r, IORING_REGISTER_EVENTFD, &nfd, 1), "not an eventfd");
	drec_int(c, reg(c, &r, IORING_REGISTER_EVENTFD, &efd, 1), "register");
	drec_int(c, reg(c, &r, IORING_REGISTER_EVENTFD, &efd, 1), "register twice");
	/* one signal per commit: 4 NOPs in one enter */
	tring_queue_nops(&r, 4, 1, 0);
	drec_int(c, tring_submit(&r), "4 nops");
	v = 0;
	drec_int(c, (int)read(efd, &v, 8), "read eventfd");
	drec_int(c, (long)v, "eventfd count after one enter");
	dreap(c, &r, 4, true, "nops");
	/* disabled */
	__atomic_store_n(r.cq_flags, IORING_CQ_EVENTFD_DISABLED, __ATOMIC_RELEASE);
	tring_queue_nops(&r, 1, 5, 0);
	drec_int(c, tring_submit(&r), "nop while disabled");
	v = 0;
	drec_int(c, (int)read(efd, &v, 8) < 0 ? -errno : (int)v, "read while disabled");
	__atomic_store_n(r.cq_flags, 0, __ATOMIC_RELEASE);
	dreap(c, &r, 1, true, "nop");
	drec_int(c, reg(c, &r, IORING_UNREGISTER_EVENTFD, NULL, 0), "unregister");
	/* EVENTFD_ASYNC: inline NOPs do not signal, an async one does */
	drec_int(c, reg(c, &r, IORING_REGISTER_EVENTFD_ASYNC, &efd, 1), "register async");
	tring_queue_nops(&r, 1, 6, 0);
	drec_int(c, tring_submit(&r), "inline nop");
	dreap(c, &r, 1, true, "inline");
	v = 0;
	drec_int(c, (int)read(efd, &v, 8) < 0 ? -errno : (int)v, "async eventfd after inline");
	tring_queue_nops(&r, 1, 7, IOSQE_ASYNC);
	drec_int(c, tring_submit(&r), "async nop");
	dreap(c, &r, 1, true, "async");
	{
		struct pollfd pfd = { .fd = efd, .events = POLLIN };

		/* the signal may follow the CQE by a moment: wait for it
		 * (it comes at once; 10 s is a hang guard, 1 s before) */
		drec_int(c, poll(&pfd, 1, 10000), "async eventfd signalled");
	}
	close(nfd);
	close(efd);
	tring_exit(&r);
}

/*
 * A multishot POLL_ADD on the ring's own registered eventfd: the kernel
 * signals that eventfd with EPOLL_URING_WAKE, which turns a multishot
 * poll it wakes into a one-shot one (its CQE without F_MORE; the poll
 * ends), so that the poll's own CQE cannot signal the eventfd again for
 * ever.  A write by the application keeps it multishot.
 */
static void sc_eventfd_poll_mshot(struct dctx *c)
{
	struct tring r;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct io_uring_sqe *sqe;
	struct tcqe cqe[8];
	uint64_t v = 1;
	unsigned int n;

	if (efd < 0 || dring_flags(c, &r, 16, 0))
		return;
	drec_int(c, reg(c, &r, IORING_REGISTER_EVENTFD, &efd, 1), "register");
	/* the application's write: multishot goes on */
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_POLL_ADD, efd, NULL, IORING_POLL_ADD_MULTI,
		      0, 1);
	sqe->poll32_events = POLLIN;
	drec_int(c, tring_submit(&r), "multishot poll on the ring's eventfd");
	drec_int(c, (int)write(efd, &v, 8), "application write");
	n = tring_reap_wait(&r, cqe, 1, 10000 * 1000000LL);
	drec_cqes(c, cqe, n, true, "woken by the application");
	drec_int(c, (int)read(efd, &v, 8), "drain");
	/* again: the ring's signal of the poll's own CQE did not count */
	drec_int(c, (int)write(efd, &v, 8), "application write 2");
	n = tring_reap_wait(&r, cqe, 1, 10000 * 1000000LL);
	drec_cqes(c, cqe, n, true, "woken by the application again");
	drec_int(c, (int)read(efd, &v, 8), "drain 2");
	/* the ring's own signal (a NOP's CQE): one-shot from then on */
	tring_prep_nop(tring_get_sqe(&r), 2);
	drec_int(c, tring_submit(&r), "nop");
	n = tring_reap_wait(&r, cqe, 2, 10000 * 1000000LL);
	drec_cqes(c, cqe, n, false, "woken by the ring's signal");
	n = tring_reap_wait(&r, cqe, 1, 50 * 1000000LL);
	drec_cqes(c, cqe, n, true, "nothing more");
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_POLL_REMOVE, -1, NULL, 0, 0, 3);
	sqe->addr = 1;
	drec_int(c, tring_submit(&r), "remove");
	n = tring_reap_wait(&r, cqe, 1, 10000 * 1000000LL);
	drec_cqes(c, cqe, n, true, "poll already gone");
	close(efd);
	tring_exit(&r);
}

/* direct descriptors: OPENAT/CLOSE with file_index into a sparse table */
static void sc_direct(struct dctx *c)
{
	struct io_uring_rsrc_register rr;
	struct io_uring_sqe *sqe;
	struct tring r;
	char path[64], buf[16];
	int fd = dtmpfile(c, 4096, 2);

	if (fd < 0 || dring_flags(c, &r, 16, 0))
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(&rr, 0, sizeof(rr));
	rr.nr = 4;
	rr.flags = IORING_RSRC_REGISTER_SPARSE;
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_FILES2, &rr,
			       sizeof(rr)), "sparse 4");
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_OPENAT, AT_FDCWD, path, 0, 0, 1);
	sqe->open_flags = O_RDONLY;
	sqe->file_index = 2;			/* slot 1 */
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_OPENAT, AT_FDCWD, path, 0, 0, 2);
	sqe->open_flags = O_RDONLY;
	sqe->file_index = IORING_FILE_INDEX_ALLOC;
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_OPENAT, AT_FDCWD, path, 0, 0, 3);
	sqe->open_flags = O_RDONLY;
	sqe->file_index = 9;			/* out of range */
	drec_int(c, tring_submit(&r), "direct opens");
	dreap(c, &r, 3, true, "direct opens");
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, 1, buf, sizeof(buf), 0, 4);
	sqe->flags |= IOSQE_FIXED_FILE;
	drec_int(c, tring_submit(&r), "read slot 1");
	dreap(c, &r, 1, true, "read slot 1");
	for (int i = 0; i < 3; i++) {
		sqe = tring_get_sqe(&r);
		tring_prep_rw(sqe, IORING_OP_CLOSE, 0, NULL, 0, 0, 10 + i);
		sqe->file_index = i == 2 ? 9 : 2;	/* slot 1 twice, then 9 */
	}
	drec_int(c, tring_submit(&r), "direct closes");
	dreap(c, &r, 3, true, "direct closes");
	close(fd);
	tring_exit(&r);
}

/* IORING_OP_FILES_UPDATE, at a given offset and with index allocation */
static struct io_uring_sqe *upd(struct tring *r, int *fds, unsigned int nr,
				uint64_t off, uint64_t ud)
{
	struct io_uring_sqe *sqe = tring_get_sqe(r);

	tring_prep_rw(sqe, IORING_OP_FILES_UPDATE, -1, fds, nr, off, ud);
	return sqe;
}

static void sc_files_update_op(struct dctx *c)
{
	struct tring r;
	int fd = dtmpfile(c, 8192, 3), fd2 = dtmpfile(c, 4096, 7);
	int none[2] = { -1, -1 }, set[3], alloc[3], sparse[4] = { -1, -1, -1, -1 };
	struct io_uring_file_index_range range = { .off = 1, .len = 2 };
	struct io_uring_sqe *sqe;
	char buf[8];

	/* SUBMIT_ALL: a failed prep does not stop the batch */
	if (fd < 0 || fd2 < 0 ||
	    dring_flags(c, &r, 16, IORING_SETUP_SUBMIT_ALL))
		return;
	/* no table: -ENXIO; prep errors */
	upd(&r, none, 2, 0, 1);
	upd(&r, none, 0, 0, 2);
	upd(&r, none, 1, 0, 3)->rw_flags = 1;
	upd(&r, none, 1, 0, 4)->splice_fd_in = 1;
	upd(&r, none, 1, 0, 5)->ioprio = 1;
	upd(&r, none, 1, 0, 6)->flags |= IOSQE_FIXED_FILE;
	upd(&r, none, 1, 0, 7)->flags |= IOSQE_BUFFER_SELECT;
	upd(&r, none, 1, IORING_FILE_INDEX_ALLOC, 8);
	drec_int(c, tring_submit(&r), "errors without a table");
	dreap(c, &r, 8, true, "errors without a table");

	drec_int(c, reg(c, &r, IORING_REGISTER_FILES, sparse, 4), "register 4 empty");
	/* set slots 0 and 2, skip 1 */
	set[0] = fd;
	set[1] = IORING_REGISTER_FILES_SKIP;
	set[2] = fd2;
	upd(&r, set, 3, 0, 10);
	drec_int(c, tring_submit(&r), "update 3");
	dreap(c, &r, 1, true, "update 3");
	for (int i = 0; i < 3; i++) {
		sqe = tring_get_sqe(&r);
		tring_prep_rw(sqe, IORING_OP_READ, i, buf, sizeof(buf), 0, 20 + i);
		sqe->flags |= IOSQE_FIXED_FILE;
	}
	drec_int(c, tring_submit(&r), "fixed reads");
	dreap(c, &r, 3, true, "fixed reads");
	/* out of range, overflow, bad fd (after one done), a ring fd,
	 * unreadable array */
	upd(&r, set, 3, 2, 30);
	upd(&r, set, 2, 0xffffffffULL - 1, 31);
	set[1] = 9999;
	upd(&r, set, 3, 0, 32);
	set[0] = r.fd;
	upd(&r, set, 1, 0, 33);
	upd(&r, dunmapped_addr(), 1, 0, 34);
	upd(&r, none, 2, 2, 35); /* clear 2 and 3 */
	drec_int(c, tring_submit(&r), "update errors");
	dreap(c, &r, 6, true, "update errors");
	/* allocation in the range [1, 3): indexes written back */
	drec_int(c, reg(c, &r, IORING_REGISTER_FILE_ALLOC_RANGE, &range, 0),
		 "alloc range");
	alloc[0] = fd;
	alloc[1] = fd2;
	alloc[2] = fd;
	upd(&r, alloc, 3, IORING_FILE_INDEX_ALLOC, 40);
	drec_int(c, tring_submit(&r), "alloc 3 into 2 free");
	dreap(c, &r, 1, true, "alloc 3 into 2 free");
	drec_int(c, alloc[0], "index 0");
	drec_int(c, alloc[1], "index 1");
	drec_int(c, alloc[2], "not written");
	alloc[0] = fd;
	upd(&r, alloc, 1, IORING_FILE_INDEX_ALLOC, 41);
	alloc[1] = 9999;
	upd(&r, alloc + 1, 1, IORING_FILE_INDEX_ALLOC, 42);
	drec_int(c, tring_submit(&r), "alloc with no room, bad fd");
	dreap(c, &r, 2, true, "alloc with no room, bad fd");
	/* async */
	upd(&r, none, 2, 1, 50)->flags |= IOSQE_ASYNC;
	drec_int(c, tring_submit(&r), "async clear");
	dreap(c, &r, 1, true, "async clear");
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, 1, buf, sizeof(buf), 0, 51);
	sqe->flags |= IOSQE_FIXED_FILE;
	drec_int(c, tring_submit(&r), "read a cleared slot");
	dreap(c, &r, 1, true, "read a cleared slot");
	close(fd);
	close(fd2);
	tring_exit(&r);
}

static void sc_probe(struct dctx *c)
{
	static const int ops[] = { IORING_OP_FILES_UPDATE };
	static const char *const labels[] = { "FILES_UPDATE" };

	dprobe_ops(c, ops, labels, 1);
}

/*
 * RSRC tags on files (FEAT_RSRC_TAGS): a replaced or unregistered slot's
 * tag CQE (user_data = tag, res 0) comes after the last request that used
 * the file from that slot, not at the replacement.  A read of an empty
 * pipe through the slot waits; the slot is replaced meanwhile.
 */
static void sc_file_tags(struct dctx *c)
{
	struct io_uring_rsrc_register rr;
	struct io_uring_rsrc_update2 up;
	struct io_uring_params p;
	struct io_uring_sqe *sqe;
	struct tring r;
	uint64_t tags[3] = { 0x7a9, 0x7b0, 0 };
	int pp[2], fds[3], nfd;
	char buf[8];

	memset(&p, 0, sizeof(p));
	if (pipe(pp) || tring_init_params(&r, c->be, 16, &p)) {
		dcheck(c, 0, "setup");
		return;
	}
	drec_int(c, !!(p.features & IORING_FEAT_RSRC_TAGS), "FEAT_RSRC_TAGS");
	fds[0] = pp[0];
	fds[1] = pp[1];
	fds[2] = -1;
	memset(&rr, 0, sizeof(rr));
	rr.nr = 3;
	rr.data = (uint64_t)(uintptr_t)fds;
	rr.tags = (uint64_t)(uintptr_t)tags;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES2, &rr, sizeof(rr)),
		 "files2 with tags");
	/* a read of the empty pipe through slot 0 waits */
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, 0, buf, sizeof(buf), 0, 1);
	sqe->flags |= IOSQE_FIXED_FILE;
	drec_int(c, tring_submit(&r), "read via slot 0");
	/* replace both slots: slot 1 (unused) posts its tag now, slot 0's
	 * waits for the read */
	nfd = open("/dev/null", O_RDONLY);
	fds[0] = nfd;
	fds[1] = nfd;
	memset(&up, 0, sizeof(up));
	up.offset = 0;
	up.data = (uint64_t)(uintptr_t)fds;
	up.nr = 2;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES_UPDATE2, &up, sizeof(up)),
		 "replace slots 0 and 1");
	dreap(c, &r, 1, true, "after the replacement");
	drec_int(c, write(pp[1], "abc", 3), "write the pipe");
	dreap(c, &r, 2, true, "the read, then slot 0's tag");
	/* unregister: the new (untagged) files post nothing */
	drec_int(c, reg(c, &r, IORING_UNREGISTER_FILES, NULL, 0), "unregister");
	dreap(c, &r, 0, true, "after unregister");
	close(nfd);
	tclose2(pp);
	tring_exit(&r);
}

/*
 * The state of slots [0, n): each is read (1 byte at offset 0) through the
 * table; a file made by dtmpfile(c, len, seed) answers with its seed, an
 * empty slot with the read's error (-EBADF).
 */
static void slots(struct dctx *c, struct tring *r, unsigned int n,
		  const char *label)
{
	unsigned char b[16];
	struct tcqe cq[16];
	unsigned int got;

	if (n > 16)
		n = 16;
	memset(b, 0, sizeof(b));
	for (unsigned int i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = tring_get_sqe(r);

		tring_prep_rw(sqe, IORING_OP_READ, (int)i, &b[i], 1, 0,
			      0x5100 + i);
		sqe->flags |= IOSQE_FIXED_FILE;
	}
	drec_int(c, tring_submit(r), "%s: slot reads", label);
	got = tring_reap_wait(r, cq, n, 1000 * 1000 * 1000LL);
	drec_int(c, got, "%s: slot reads done", label);
	for (unsigned int k = 0; k < got; k++) {
		unsigned int i = (unsigned int)(cq[k].user_data - 0x5100);

		if (i >= n) {
			drec_int(c, (long)cq[k].user_data, "%s: stray CQE", label);
			continue;
		}
		drec_int(c, cq[k].res == 1 ? b[i] : cq[k].res, "%s: slot %u",
			 label, i);
	}
}

static int upd2(struct dctx *c, struct tring *r, unsigned int off,
		const int *fds, const uint64_t *tags, unsigned int nr)
{
	struct io_uring_rsrc_update2 up;

	memset(&up, 0, sizeof(up));
	up.offset = off;
	up.data = (uint64_t)(uintptr_t)fds;
	up.tags = (uint64_t)(uintptr_t)tags;
	up.nr = nr;
	return reg(c, r, IORING_REGISTER_FILES_UPDATE2, &up, sizeof(up));
}

static int files2(struct dctx *c, struct tring *r, const int *fds,
		  const uint64_t *tags, unsigned int nr, unsigned int flags)
{
	struct io_uring_rsrc_register rr;

	memset(&rr, 0, sizeof(rr));
	rr.nr = nr;
	rr.flags = flags;
	rr.data = (uint64_t)(uintptr_t)fds;
	rr.tags = (uint64_t)(uintptr_t)tags;
	return reg(c, r, IORING_REGISTER_FILES2, &rr, sizeof(rr));
}

/*
 * A partly failing update: the entries before the failing one are done
 * (the count is returned), and the failing entry's slot is emptied before
 * its fd is looked at (a bad fd or a ring fd leaves the slot empty); SKIP
 * and -1 with a tag fail before touching the slot.
 */
static void sc_update_partial(struct dctx *c)
{
	struct tring r;
	int f[8], fds[6], ret;
	uint64_t tags[4] = { 0, 0, 0, 0 };
	struct io_uring_files_update old;

	for (int i = 0; i < 8; i++)
		f[i] = dtmpfile(c, 16, (unsigned char)(0x10 * (i + 1)));
	if (f[7] < 0 || dring_flags(c, &r, 32, 0))
		return;
	for (int i = 0; i < 6; i++)
		fds[i] = f[i];
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES, fds, 6), "register 6");
	slots(c, &r, 6, "registered");
	/* slot 0 := f6, 1 skipped, 2 a bad fd (stops), 3 not reached */
	fds[0] = f[6];
	fds[1] = IORING_REGISTER_FILES_SKIP;
	fds[2] = 9999;
	fds[3] = f[7];
	drec_int(c, upd2(c, &r, 0, fds, NULL, 4), "bad fd third");
	slots(c, &r, 6, "after bad fd third");
	/* the first entry bad: the error, and that slot emptied */
	fds[0] = 9999;
	drec_int(c, upd2(c, &r, 3, fds, NULL, 2), "bad fd first");
	slots(c, &r, 6, "after bad fd first");
	/* the kernel's io_uring fd, on either backend: -EBADF */
	{
		struct io_uring_params kp;
		int kfd;

		memset(&kp, 0, sizeof(kp));
		kfd = (int)syscall(__NR_io_uring_setup, 4, &kp);
		if (kfd >= 0) {
			fds[0] = kfd;
			drec_int(c, upd2(c, &r, 5, fds, NULL, 1),
				 "a kernel ring fd");
			close(kfd);
		} else {
			dnote(c, "no kernel io_uring here: %d", errno);
		}
	}
	/* a ring fd: -EBADF, its slot emptied too */
	fds[0] = f[7];
	fds[1] = r.fd;
	drec_int(c, upd2(c, &r, 4, fds, NULL, 2), "ring fd second");
	slots(c, &r, 6, "after ring fd");
	/* SKIP or -1 with a tag: -EINVAL, nothing touched */
	fds[0] = f[6];
	fds[1] = IORING_REGISTER_FILES_SKIP;
	tags[1] = 7;
	drec_int(c, upd2(c, &r, 0, fds, tags, 2), "SKIP with a tag");
	fds[1] = -1;
	drec_int(c, upd2(c, &r, 2, fds, tags, 2), "-1 with a tag");
	slots(c, &r, 6, "after tagged SKIP / -1");
	dreap(c, &r, 0, true, "no tag CQEs");
	/* a tag on an update of a table registered without tags */
	fds[0] = f[1];
	tags[0] = 0x77;
	drec_int(c, upd2(c, &r, 5, fds, tags, 1), "tagged update");
	fds[0] = -1;
	drec_int(c, upd2(c, &r, 5, fds, NULL, 1), "clear the tagged slot");
	dreap(c, &r, 1, true, "its tag");
	/* count and bounds */
	drec_int(c, upd2(c, &r, 0, fds, NULL, 0), "update2 nr 0");
	drec_int(c, upd2(c, &r, 6, fds, NULL, 1), "update2 at the end");
	drec_int(c, upd2(c, &r, 5, fds, NULL, 2), "update2 across the end");
	drec_int(c, upd2(c, &r, 0xffffffffu, fds, NULL, 2), "update2 overflow");
	drec_int(c, upd2(c, &r, 0, NULL, NULL, 1), "update2 NULL array");
	memset(&old, 0, sizeof(old));
	old.offset = 1;
	old.fds = (uint64_t)(uintptr_t)fds;
	fds[0] = -1;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES_UPDATE, &old, 0),
		 "update nr 0");
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES_UPDATE, NULL, 1),
		 "update NULL arg");
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES_UPDATE, &old, 1),
		 "update clears slot 1");
	{
		struct io_uring_rsrc_update2 up;

		memset(&up, 0, sizeof(up));
		up.nr = 1;
		up.data = (uint64_t)(uintptr_t)fds;
		up.resv2 = 1;
		drec_int(c, reg(c, &r, IORING_REGISTER_FILES_UPDATE2, &up,
				sizeof(up)), "update2 resv2");
		up.resv2 = 0;
		drec_int(c, reg(c, &r, IORING_REGISTER_FILES_UPDATE2, &up,
				sizeof(up) + 8), "update2 bad size");
	}
	/* the array ends at an unmapped page: the readable entries are done */
	{
		long pg = sysconf(_SC_PAGESIZE);
		char *m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		int *tail;

		if (m == MAP_FAILED) {
			dcheck(c, 0, "mmap");
		} else {
			munmap(m + pg, (size_t)pg);
			tail = (int *)(m + pg) - 2;
			tail[0] = f[2];
			tail[1] = f[3];
			ret = upd2(c, &r, 2, tail, NULL, 4);
			drec_int(c, ret, "array into an unmapped page");
			ret = upd2(c, &r, 2, (int *)(m + pg), NULL, 1);
			drec_int(c, ret, "array unmapped");
			munmap(m, (size_t)pg);
		}
	}
	slots(c, &r, 6, "after the unmapped array");
	/* the same through IORING_OP_FILES_UPDATE: slot 3 set, slot 4
	 * emptied by its bad fd, slot 5 not reached; slot 2 emptied by a
	 * ring fd */
	fds[0] = f[5];
	fds[1] = 9999;
	fds[2] = f[6];
	upd(&r, fds, 3, 3, 0x90);
	fds[3] = r.fd;
	upd(&r, &fds[3], 1, 2, 0x91);
	drec_int(c, tring_submit(&r), "op updates");
	dreap(c, &r, 2, true, "op updates");
	slots(c, &r, 6, "final");
	drec_int(c, reg(c, &r, IORING_UNREGISTER_FILES, NULL, 0), "unregister");
	drec_int(c, reg(c, &r, IORING_UNREGISTER_FILES, fds, 0),
		 "unregister with arg");
	drec_int(c, upd2(c, &r, 0, fds, NULL, 1), "update2 without a table");
	drec_int(c, upd2(c, &r, 0xffffffffu, fds, NULL, 2),
		 "overflow without a table");
	for (int i = 0; i < 8; i++)
		close(f[i]);
	tring_exit(&r);
}

/*
 * Registration rules: argument checks and their order, a failing
 * registration that leaves no table, no file referenced and no tag
 * posted, sparse tables through FILES2, limits.
 */
static void sc_register_rules(struct dctx *c)
{
	struct tring r;
	int f[3], fds[5], pp[2];
	uint64_t tags[5] = { 0x71, 0x72, 0, 0x74, 0 };
	char b;

	for (int i = 0; i < 3; i++)
		f[i] = dtmpfile(c, 16, (unsigned char)(0x20 * (i + 1)));
	if (f[2] < 0 || pipe(pp) || dring_flags(c, &r, 32, 0))
		return;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES, NULL, 4), "files NULL");
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES, f, (1U << 20) + 1),
		 "files over the maximum");
	drec_int(c, files2(c, &r, NULL, NULL, 0, 0), "files2 nr 0");
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES2, NULL, 32),
		 "files2 NULL");
	drec_int(c, files2(c, &r, f, NULL, 3, 2), "files2 unknown flag");
	drec_int(c, files2(c, &r, f, NULL, 3, IORING_RSRC_REGISTER_SPARSE),
		 "files2 sparse with data");
	drec_int(c, files2(c, &r, NULL, tags, 3, IORING_RSRC_REGISTER_SPARSE),
		 "files2 sparse with nonzero tags");
	drec_int(c, reg(c, &r, IORING_UNREGISTER_FILES, NULL, 0),
		 "nothing left");
	{
		struct io_uring_params kp;
		int kfd;

		memset(&kp, 0, sizeof(kp));
		kfd = (int)syscall(__NR_io_uring_setup, 4, &kp);
		if (kfd >= 0) {
			drec_int(c, reg(c, &r, IORING_REGISTER_FILES, &kfd, 1),
				 "register a kernel ring fd");
			close(kfd);
		} else {
			dnote(c, "no kernel io_uring here: %d", errno);
		}
	}
	/* a failure after files were taken: pipe ends, a hole, a ring fd */
	fds[0] = pp[0];
	fds[1] = pp[1];
	fds[2] = -1;
	fds[3] = r.fd;
	fds[4] = -1;
	drec_int(c, files2(c, &r, fds, tags, 5, 0), "files2 with a ring fd");
	dreap(c, &r, 0, true, "no tags from a failed registration");
	drec_int(c, reg(c, &r, IORING_UNREGISTER_FILES, NULL, 0),
		 "no table left");
	close(pp[1]);
	drec_int(c, (int)read(pp[0], &b, 1), "the write end is closed");
	/* -1 with a tag */
	fds[0] = f[0];
	fds[1] = -1;
	drec_int(c, files2(c, &r, fds, tags, 2, 0), "files2 -1 with a tag");
	/* a tag array that cannot be read */
	drec_int(c, files2(c, &r, fds, dunmapped_addr(), 2, 0),
		 "files2 unreadable tags");
	/* sparse: the flag with zero tags, or no data without the flag */
	tags[0] = tags[1] = tags[2] = 0;
	drec_int(c, files2(c, &r, NULL, tags, 3, IORING_RSRC_REGISTER_SPARSE),
		 "files2 sparse with zero tags");
	slots(c, &r, 3, "sparse");
	drec_int(c, files2(c, &r, f, NULL, 3, 0), "files2 while registered");
	drec_int(c, files2(c, &r, f, NULL, 0, 0), "files2 nr 0 while registered");
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES, f, 0),
		 "files nr 0 while registered");
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES, NULL, 1),
		 "files NULL while registered");
	drec_int(c, reg(c, &r, IORING_UNREGISTER_FILES, NULL, 0), "unregister");
	drec_int(c, files2(c, &r, NULL, NULL, 3, 0), "files2 data NULL");
	slots(c, &r, 3, "data NULL");
	drec_int(c, reg(c, &r, IORING_UNREGISTER_FILES, NULL, 0), "unregister");
	drec_int(c, files2(c, &r, NULL, dunmapped_addr(), 3, 0),
		 "files2 data NULL, tags unreadable");
	/* tags registered with files post at unregister */
	tags[0] = 0x81;
	tags[2] = 0x83;
	drec_int(c, files2(c, &r, f, tags, 3, 0), "files2 tagged");
	slots(c, &r, 3, "tagged");
	drec_int(c, reg(c, &r, IORING_UNREGISTER_FILES, NULL, 0), "unregister");
	dreap(c, &r, 2, false, "tags at unregister");
	close(pp[0]);
	for (int i = 0; i < 3; i++)
		close(f[i]);
	tring_exit(&r);
}

/* RLIMIT_NOFILE bounds the table size (scenarios run in their own child) */
static void sc_register_rlimit(struct dctx *c)
{
	struct rlimit old, rl;
	struct tring r;

	if (dring_flags(c, &r, 8, 0) || getrlimit(RLIMIT_NOFILE, &old)) {
		dcheck(c, 0, "setup");
		return;
	}
	rl = old;
	rl.rlim_cur = 200;
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		dcheck(c, 0, "setrlimit");
		return;
	}
	drec_int(c, files2(c, &r, NULL, NULL, 201, IORING_RSRC_REGISTER_SPARSE),
		 "sparse 201 over the limit 200");
	drec_int(c, files2(c, &r, NULL, NULL, 200, IORING_RSRC_REGISTER_SPARSE),
		 "sparse 200 at the limit");
	setrlimit(RLIMIT_NOFILE, &old);
	drec_int(c, reg(c, &r, IORING_UNREGISTER_FILES, NULL, 0), "unregister");
	tring_exit(&r);
}

/* IORING_OP_FILES_UPDATE with index allocation: one slot, its index */
static int alloc_one(struct dctx *c, struct tring *r, int fd, const char *label)
{
	struct tcqe cq;
	int a = fd;

	upd(r, &a, 1, IORING_FILE_INDEX_ALLOC, 0x600);
	tring_submit(r);
	if (tring_reap_wait(r, &cq, 1, 1000 * 1000 * 1000LL) != 1) {
		dcheck(c, 0, "%s: no CQE", label);
		return -1;
	}
	drec_int(c, cq.res, "%s: res", label);
	drec_int(c, cq.res == 1 ? a : -1, "%s: index", label);
	return cq.res == 1 ? a : cq.res;
}

/*
 * FILE_ALLOC_RANGE: argument checks (overflow before the table bound,
 * no table needed), and where allocation looks: from a hint that
 * registration, updates and the range set, around to the range start.
 */
static void sc_alloc_range(struct dctx *c)
{
	struct io_uring_file_index_range range;
	struct tring r;
	int f = dtmpfile(c, 16, 0x40), fds[4];

	if (f < 0 || dring_flags(c, &r, 32, 0))
		return;
	memset(&range, 0, sizeof(range));
	drec_int(c, reg(c, &r, IORING_REGISTER_FILE_ALLOC_RANGE, &range, 0),
		 "empty range without a table");
	range.len = 1;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILE_ALLOC_RANGE, &range, 0),
		 "range without a table");
	range.off = 7;
	range.len = ~1U;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILE_ALLOC_RANGE, &range, 0),
		 "overflow without a table");
	range.resv = 1;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILE_ALLOC_RANGE, &range, 0),
		 "overflow and resv");
	drec_int(c, reg(c, &r, IORING_REGISTER_FILE_ALLOC_RANGE, NULL, 0),
		 "NULL range");
	range.resv = 0;
	range.off = 0;
	range.len = 0;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILE_ALLOC_RANGE, &range, 1),
		 "range nr 1");
	drec_int(c, reg(c, &r, IORING_REGISTER_FILE_ALLOC_RANGE,
			dunmapped_addr(), 0), "range unreadable");
	/* registration leaves the hint at 0, whatever it filled */
	fds[0] = -1;
	fds[1] = f;
	fds[2] = -1;
	fds[3] = -1;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES, fds, 4), "register 4");
	alloc_one(c, &r, f, "first alloc");
	alloc_one(c, &r, f, "second alloc");
	drec_int(c, reg(c, &r, IORING_UNREGISTER_FILES, NULL, 0), "unregister");
	alloc_one(c, &r, f, "alloc without a table");

	drec_int(c, files2(c, &r, NULL, NULL, 10, IORING_RSRC_REGISTER_SPARSE),
		 "sparse 10");
	range.off = 8;
	range.len = 3;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILE_ALLOC_RANGE, &range, 0),
		 "range past the end");
	range.off = 10;
	range.len = 0;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILE_ALLOC_RANGE, &range, 0),
		 "empty range at the end");
	alloc_one(c, &r, f, "alloc in an empty range");
	range.off = 2;
	range.len = 3;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILE_ALLOC_RANGE, &range, 0),
		 "range [2, 5)");
	alloc_one(c, &r, f, "range alloc 1");
	alloc_one(c, &r, f, "range alloc 2");
	/* an update inside the range moves the hint past it */
	fds[0] = f;
	drec_int(c, upd2(c, &r, 4, fds, NULL, 1), "set slot 4");
	alloc_one(c, &r, f, "range full");
	/* clearing slot 3 points the hint there */
	fds[0] = -1;
	drec_int(c, upd2(c, &r, 3, fds, NULL, 1), "clear slot 3");
	alloc_one(c, &r, f, "refill slot 3");
	/* a hint outside the range: an update at slot 8 */
	fds[0] = f;
	drec_int(c, upd2(c, &r, 8, fds, NULL, 1), "set slot 8");
	alloc_one(c, &r, f, "alloc with the hint at 9");
	fds[0] = -1;
	drec_int(c, upd2(c, &r, 0, fds, NULL, 1), "clear empty slot 0");
	alloc_one(c, &r, f, "alloc after clearing an empty slot");
	drec_int(c, upd2(c, &r, 1, fds, NULL, 1), "clear empty slot 1");
	fds[0] = 9999;
	drec_int(c, upd2(c, &r, 6, fds, NULL, 1), "bad fd at slot 6");
	alloc_one(c, &r, f, "alloc after a bad fd at slot 6");
	slots(c, &r, 10, "final");
	drec_int(c, reg(c, &r, IORING_UNREGISTER_FILES, NULL, 0), "unregister");
	/* unregistering resets the range: the next table's covers it all */
	drec_int(c, files2(c, &r, NULL, NULL, 2, IORING_RSRC_REGISTER_SPARSE),
		 "sparse 2");
	alloc_one(c, &r, f, "alloc in the new table");
	close(f);
	tring_exit(&r);
}

/* CLOSE of a direct descriptor (slot i) */
static void close_slot(struct dctx *c, struct tring *r, unsigned int i,
		       const char *label)
{
	struct io_uring_sqe *sqe = tring_get_sqe(r);

	tring_prep_rw(sqe, IORING_OP_CLOSE, 0, NULL, 0, 0, 0x700 + i);
	sqe->file_index = i + 1;
	dsubmit(c, r, label);
	dreap(c, r, 1, true, label);
}

/* where the allocation hint goes: updates, direct closes, the range */
static void sc_alloc_hint(struct dctx *c)
{
	struct io_uring_file_index_range range;
	struct tring r;
	int f = dtmpfile(c, 16, 0x50), fds[1];

	if (f < 0 || dring_flags(c, &r, 32, 0))
		return;
	drec_int(c, files2(c, &r, NULL, NULL, 10, IORING_RSRC_REGISTER_SPARSE),
		 "sparse 10");
	fds[0] = f;
	drec_int(c, upd2(c, &r, 5, fds, NULL, 1), "set slot 5");
	alloc_one(c, &r, f, "alloc after setting slot 5");
	fds[0] = -1;
	drec_int(c, upd2(c, &r, 5, fds, NULL, 1), "clear slot 5");
	alloc_one(c, &r, f, "alloc after clearing slot 5");
	close_slot(c, &r, 0, "close empty slot 0");
	alloc_one(c, &r, f, "alloc after closing an empty slot");
	fds[0] = f;
	drec_int(c, upd2(c, &r, 0, fds, NULL, 1), "set slot 0");
	drec_int(c, upd2(c, &r, 1, fds, NULL, 1), "set slot 1");
	close_slot(c, &r, 0, "close slot 0");
	alloc_one(c, &r, f, "alloc after closing slot 0");
	memset(&range, 0, sizeof(range));
	range.off = 2;
	range.len = 3;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILE_ALLOC_RANGE, &range, 0),
		 "range [2, 5)");
	alloc_one(c, &r, f, "range alloc 1");
	alloc_one(c, &r, f, "range alloc 2");
	alloc_one(c, &r, f, "range alloc 3");
	alloc_one(c, &r, f, "range full");
	fds[0] = f;
	drec_int(c, upd2(c, &r, 8, fds, NULL, 1), "set slot 8");
	close_slot(c, &r, 8, "close slot 8");
	alloc_one(c, &r, f, "alloc with the hint at 8");
	/* below the range: slot 1 is free but outside it */
	close_slot(c, &r, 1, "close slot 1");
	alloc_one(c, &r, f, "alloc with the hint at 1");
	slots(c, &r, 10, "final");
	close(f);
	tring_exit(&r);
}

/*
 * IORING_OP_FIXED_FD_INSTALL: a slot's file gets a normal fd.  The fd
 * number itself is not compared (the engine holds fds of its own); what is:
 * the result's sign, FD_CLOEXEC, that it is the slot's open file (same
 * inode, shared offset) and every error.
 */
static void fd_install(struct dctx *c, struct tring *r, int slot,
		       uint8_t sqe_flags, uint32_t flags, uint64_t off,
		       uint16_t pers, int file, const char *label)
{
	struct io_uring_sqe *sqe = tring_get_sqe(r);
	struct tcqe cqe;
	struct stat a, b;
	int fd;

	tring_prep_nop(sqe, 1);
	sqe->opcode = IORING_OP_FIXED_FD_INSTALL;
	sqe->fd = slot;
	sqe->flags = sqe_flags;
	sqe->install_fd_flags = flags;
	sqe->off = off;
	sqe->personality = pers;
	tring_submit(r);
	if (tring_reap_wait(r, &cqe, 1, 2000000000LL) != 1) {
		drec_int(c, -1, "%s: no CQE", label);
		return;
	}
	fd = cqe.res;
	drec_int(c, fd < 0 ? fd : 0, "%s", label);
	if (fd < 0)
		return;
	drec_int(c, fcntl(fd, F_GETFD), "%s: F_GETFD", label);
	drec_int(c, !fstat(fd, &a) && !fstat(file, &b) && a.st_ino == b.st_ino &&
			    a.st_dev == b.st_dev,
		 "%s: the slot's file", label);
	if (S_ISREG(a.st_mode)) {
		/* one open file description: the offset is shared */
		lseek(fd, 5, SEEK_SET);
		drec_int(c, (long)lseek(file, 0, SEEK_CUR), "%s: offset", label);
		lseek(file, 0, SEEK_SET);
	}
	close(fd);
}

static void sc_fixed_fd_install(struct dctx *c)
{
	struct tring r;
	int fd = dtmpfile(c, 4096, 5), p[2], fds[4];
	int pers;

	if (fd < 0 || pipe(p) || dring_flags(c, &r, 8, 0))
		return;
	fds[0] = fd;
	fds[1] = -1;
	fds[2] = p[0];
	fds[3] = -1;
	fd_install(c, &r, 0, IOSQE_FIXED_FILE, 0, 0, 0, fd, "no table");
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES, fds, 4), "register");
	fd_install(c, &r, 0, IOSQE_FIXED_FILE, 0, 0, 0, fd, "slot 0");
	fd_install(c, &r, 0, IOSQE_FIXED_FILE, IORING_FIXED_FD_NO_CLOEXEC, 0,
		   0, fd, "slot 0 NO_CLOEXEC");
	fd_install(c, &r, 0, IOSQE_FIXED_FILE | IOSQE_ASYNC, 0, 0, 0, fd,
		   "slot 0 ASYNC");
	fd_install(c, &r, 2, IOSQE_FIXED_FILE, 0, 0, 0, p[0], "pipe slot");
	fd_install(c, &r, 1, IOSQE_FIXED_FILE, 0, 0, 0, fd, "empty slot");
	fd_install(c, &r, 9, IOSQE_FIXED_FILE, 0, 0, 0, fd, "slot 9");
	fd_install(c, &r, fd, 0, 0, 0, 0, fd, "plain fd");
	fd_install(c, &r, 0, IOSQE_FIXED_FILE, 2, 0, 0, fd, "bad flags");
	fd_install(c, &r, 0, IOSQE_FIXED_FILE, 0, 1, 0, fd, "off set");
	fd_install(c, &r, 0, 0, 2, 1, 0, fd, "plain fd, off and bad flags");
	pers = reg(c, &r, IORING_REGISTER_PERSONALITY, NULL, 0);
	drec_int(c, pers > 0, "personality registered");
	if (pers > 0)
		fd_install(c, &r, 0, IOSQE_FIXED_FILE, 0, 0, (uint16_t)pers,
			   fd, "with a personality");
	/* the slot's file outlives the application's fd */
	close(p[1]);
	close(p[0]);
	fd_install(c, &r, 2, IOSQE_FIXED_FILE, 0, 0, 0, fd,
		   "pipe slot after close (not the same inode check)");
	tring_exit(&r);
	close(fd);
}

/*
 * IORING_FEAT_LINKED_FILE: a linked request's file is looked up when it
 * is issued, after the link's earlier members ran, so a chain can open a
 * file (into a direct slot or at the lowest free fd) and use it.  Failing
 * paths: the open fails (the read is cancelled), the read names another
 * (empty) slot (-EBADF).
 */
static struct io_uring_sqe *lf_open(struct tring *r, const char *path,
				    uint32_t file_index, uint8_t flags,
				    uint64_t ud)
{
	struct io_uring_sqe *sqe = tring_get_sqe(r);

	tring_prep_rw(sqe, IORING_OP_OPENAT, AT_FDCWD, path, 0, 0, ud);
	sqe->open_flags = O_RDONLY;
	sqe->file_index = file_index;
	sqe->flags = flags | IOSQE_IO_LINK;
	return sqe;
}

static struct io_uring_sqe *lf_read(struct tring *r, int fd, bool fixed,
				    char *buf, uint64_t ud)
{
	struct io_uring_sqe *sqe = tring_get_sqe(r);

	tring_prep_rw(sqe, IORING_OP_READ, fd, buf, 4, 0, ud);
	if (fixed)
		sqe->flags |= IOSQE_FIXED_FILE;
	return sqe;
}

static void sc_linked_file(struct dctx *c)
{
	struct io_uring_rsrc_register rr;
	struct tring r;
	struct tcqe cq[2];
	char path[64], buf[4][4];
	unsigned int n;
	int fd = dtmpfile(c, 4096, 0x41), next;

	if (fd < 0 || dring_flags(c, &r, 16, 0))
		return;
	drec_int(c, !!(r.p.features & IORING_FEAT_LINKED_FILE),
		 "FEAT_LINKED_FILE");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(&rr, 0, sizeof(rr));
	rr.nr = 4;
	rr.flags = IORING_RSRC_REGISTER_SPARSE;
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES2, &rr, sizeof(rr)),
		 "sparse 4");
	memset(buf, 0, sizeof(buf));
	/* into slot 2, then read slot 2; the same with the open in io-wq */
	lf_open(&r, path, 3, 0, 1);
	lf_read(&r, 2, true, buf[0], 2);
	lf_open(&r, path, 4, IOSQE_ASYNC, 3);
	lf_read(&r, 3, true, buf[1], 4);
	drec_int(c, tring_submit(&r), "open direct -> read fixed");
	dreap(c, &r, 4, false, "open direct -> read fixed");
	drec_int(c, buf[0][0], "slot 2 data");
	drec_int(c, buf[1][0], "slot 3 data");
	/* a plain open gets the lowest free fd, which the read names */
	next = dup(0);
	close(next);
	lf_open(&r, path, 0, 0, 5);
	lf_read(&r, next, false, buf[2], 6);
	drec_int(c, tring_submit(&r), "open -> read fd");
	n = tring_reap_wait(&r, cq, 2, 2000000000LL);
	for (unsigned int i = 0; i < n; i++)
		if (cq[i].user_data == 5 && cq[i].res == next)
			cq[i].res = 1000;	/* "the predicted fd" */
	drec_cqes(c, cq, n, true, "open -> read fd");
	drec_int(c, buf[2][0], "fd data");
	close(next);
	/* the open fails: the read is cancelled */
	lf_open(&r, "/nonexistent/uuring", 2, 0, 7);
	lf_read(&r, 1, true, buf[3], 8);
	/* the open succeeds into slot 0, the read names empty slot 1 */
	lf_open(&r, path, 1, 0, 9);
	lf_read(&r, 1, true, buf[3], 10);
	drec_int(c, tring_submit(&r), "failing chains");
	dreap(c, &r, 4, false, "failing chains");
	tring_exit(&r);
	close(fd);
}

static const struct dscenario scenarios[] = {
	{ "files_update_op", sc_files_update_op, NULL, NULL },
	{ "probe", sc_probe, NULL, NULL },
	{ "file_tags", sc_file_tags, NULL, NULL },
	{ "direct", sc_direct, NULL, NULL },
	{ "files", sc_files, NULL, NULL },
	{ "files2", sc_files2, NULL, NULL },
	{ "eventfd", sc_eventfd, NULL, NULL },
	{ "eventfd_poll_mshot", sc_eventfd_poll_mshot, NULL, NULL },
	{ "update_partial", sc_update_partial, NULL, NULL },
	{ "register_rules", sc_register_rules, NULL, NULL },
	{ "register_rlimit", sc_register_rlimit, NULL, NULL },
	{ "alloc_range", sc_alloc_range, NULL, NULL },
	{ "alloc_hint", sc_alloc_hint, NULL, NULL },
	{ "linked_file", sc_linked_file, NULL },
	{ "fixed_fd_install", sc_fixed_fd_install, NULL, NULL },
};

DTEST_MAIN(scenarios)
