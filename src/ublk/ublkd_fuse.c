// SPDX-License-Identifier: MIT
/*
 * uublkd's FUSE server for a device's block node (front.h): the raw
 * /dev/fuse protocol, one file "disk" in the root, opened with
 * FOPEN_DIRECT_IO.  The raw protocol rather than libfuse: no dependency
 * (bookworm's libfuse 3.14 has no io_uring transport anyway), two threads
 * of our own whose buffers are allocated once and locked, and system
 * calls that never pass through uuring's interposers (uublkd is a fork
 * of a library process that may run under `uuring run`): every call of
 * these threads is a raw system call (util/rawsys.h).
 *
 *  - the reader reads requests, answers the metadata ones itself and
 *    submits READ, WRITE and FSYNC to the device itself, under uublkd's
 *    lock (ublkd_front_io; they are answered by whoever completes them);
 *    while the loop device is configured it sends them instead as block
 *    requests (UM_BDEV) on the request socketpair, whose other end is a
 *    BDEV connection of uublkd's loop; FALLOCATE it runs itself, one
 *    block request at a time on the sync socketpair (punch-hole as
 *    WRITE_ZEROES, zero-range as WRITE_ZEROES with NOUNMAP: loop's
 *    discard and write-zeroes);
 *  - the replier receives the socketpair's answers and writes their
 *    FUSE replies.
 * The block request's seq carries the FUSE unique (shifted) and what
 * kind of reply it needs.  Besides raw system calls, the reader takes
 * uublkd's lock and runs the driver's submission (libc's sendmsg to the
 * server's data connection, as uublkd's loop does).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fuse.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "ublk/front.h"
#include "ublk/proto.h"
#include "util/rawsys.h"

#ifndef PR_SET_IO_FLUSHER
#define PR_SET_IO_FLUSHER 57
#endif

#define NODE_DISK 2u
#define RK_READ 1u
#define RK_WRITE 2u
#define RK_NONE 3u
#define RBUF_EXTRA 4096u /* headers in front of a WRITE's data */

static long sys_read(int fd, void *buf, size_t len)
{
	return uu_rawsys6(0 /* __NR_read */, fd, (long)buf, (long)len, 0, 0,
			  0);
}

static long sys_writev(int fd, const struct iovec *iov, int n)
{
	return uu_rawsys6(20 /* __NR_writev */, fd, (long)iov, n, 0, 0, 0);
}

static long sys_sendmsg(int fd, const struct msghdr *m)
{
	return uu_rawsys6(46 /* __NR_sendmsg */, fd, (long)m, MSG_NOSIGNAL,
			  0, 0, 0);
}

static long sys_recvmsg(int fd, struct msghdr *m)
{
	return uu_rawsys6(47 /* __NR_recvmsg */, fd, (long)m, 0, 0, 0, 0);
}

void ublkd_fuse_reply(struct ufront *f, uint64_t unique, int err,
		      const void *data, size_t len)
{
	struct fuse_out_header oh = {
		.len = (uint32_t)(sizeof(oh) + (err ? 0 : len)),
		.error = err,
		.unique = unique,
	};
	struct iovec iov[2] = {
		{ .iov_base = &oh, .iov_len = sizeof(oh) },
		{ .iov_base = (void *)data, .iov_len = len },
	};

	/* -ENOENT: the request was interrupted or the connection aborted */
	sys_writev(f->fuse_fd, iov, err || !len ? 1 : 2);
}

static void reply(struct ufront *f, uint64_t unique, int err,
		  const void *data, size_t len)
{
	ublkd_fuse_reply(f, unique, err, data, len);
}

static void attr_of(const struct ufront *f, uint64_t nodeid,
		    struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = nodeid;
	a->blksize = 4096;
	if (nodeid == NODE_DISK) {
		a->mode = S_IFREG | 0600;
		a->nlink = 1;
		a->size = f->size;
		a->blocks = f->size >> 9;
	} else {
		a->mode = S_IFDIR | 0700;
		a->nlink = 2;
	}
}

static void do_init(struct ufront *f, uint64_t unique,
		    const struct fuse_init_in *in)
{
	struct fuse_init_out out;

	if (in->major != FUSE_KERNEL_VERSION) {
		reply(f, unique, -EPROTO, NULL, 0);
		return;
	}
	memset(&out, 0, sizeof(out));
	out.major = FUSE_KERNEL_VERSION;
	out.minor = FUSE_KERNEL_MINOR_VERSION;
	out.max_readahead = in->max_readahead;
	/* ASYNC_DIO: loop's direct I/O is asynchronous (its kiocb has a
	 * completion), so requests of one file run in parallel */
	out.flags = in->flags & (FUSE_ASYNC_DIO | FUSE_MAX_PAGES |
				 FUSE_BIG_WRITES);
	/* async direct I/O is background work: room for loop's depth */
	out.max_background = 256;
	out.congestion_threshold = 192;
	out.max_write = f->max_io;
	out.time_gran = 1;
	out.max_pages = (uint16_t)(f->max_io / 4096);
	reply(f, unique, 0, &out, sizeof(out));
}

static void do_readdir(struct ufront *f, uint64_t unique,
		       const struct fuse_read_in *in)
{
	static const char *const names[] = { ".", "..", "disk" };
	uint8_t buf[256];
	size_t used = 0;

	for (uint64_t i = in->offset; i < 3; i++) {
		size_t nl = strlen(names[i]);
		size_t rec = (sizeof(struct fuse_dirent) + nl + 7) & ~(size_t)7;
		struct fuse_dirent *de = (struct fuse_dirent *)(buf + used);

		if (used + rec > in->size || used + rec > sizeof(buf))
			break;
		memset(de, 0, rec);
		de->ino = i == 2 ? NODE_DISK : FUSE_ROOT_ID;
		de->off = i + 1;
		de->namelen = (uint32_t)nl;
		de->type = i == 2 ? DT_REG : DT_DIR;
		memcpy(de->name, names[i], nl);
		used += rec;
	}
	reply(f, unique, 0, buf, used);
}

/* a block request on fd; data: a write's bytes */
static int send_bdev(struct ufront *f, int fd, uint64_t seq, uint32_t op,
		     uint64_t pos, uint32_t len, const void *data)
{
	struct um_bdev m = {
		.h = { .type = UM_BDEV, .seq = seq },
		.op = op,
		.cpu = sched_getcpu(),
		.pos = pos,
		.len = len,
		.dev_id = (uint32_t)f->id,
	};
	struct iovec iov[2] = {
		{ .iov_base = &m, .iov_len = sizeof(m) },
		{ .iov_base = (void *)data, .iov_len = data ? len : 0 },
	};
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = data ? 2 : 1 };
	long n;

	do
		n = sys_sendmsg(fd, &mh);
	while (n == -EINTR);
	return n < 0 ? (int)n : 0;
}

/*
 * FALLOCATE on the disk: loop's discard (punch-hole) and write-zeroes
 * (zero-range when NOUNMAP, punch-hole otherwise), cut to the device's
 * limits; a punched range reads back as zeroes, so punch-hole is
 * WRITE_ZEROES where the device has it (DISCARD otherwise).
 */
static int do_fallocate(struct ufront *f, const struct fuse_fallocate_in *in)
{
	uint64_t pos = in->offset, end = in->offset + in->length;
	uint32_t op, max;

	if (in->mode & ~(uint32_t)(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE |
				   FALLOC_FL_ZERO_RANGE))
		return -EOPNOTSUPP;
	if (end < pos)
		return -EINVAL;
	if (!(in->mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)))
		/* preallocation: a disk is all allocated, but never grows */
		return end > f->size && !(in->mode & FALLOC_FL_KEEP_SIZE) ?
			       -EOPNOTSUPP : 0;
	if (in->mode & FALLOC_FL_ZERO_RANGE) {
		op = UBLK_IO_OP_WRITE_ZEROES | UBLK_IO_F_NOUNMAP;
		max = f->max_zeroes;
	} else if (f->max_zeroes) {
		op = UBLK_IO_OP_WRITE_ZEROES;
		max = f->max_zeroes;
	} else {
		op = UBLK_IO_OP_DISCARD;
		max = f->max_discard;
	}
	if (!max)
		return -EOPNOTSUPP;
	if ((pos | end) & 511)
		return -EINVAL;
	if (end > f->size)
		end = f->size;
	while (pos < end) {
		uint32_t len = end - pos > max ? max : (uint32_t)(end - pos);
		struct um_hdr h;
		struct iovec iov = { .iov_base = &h, .iov_len = sizeof(h) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		long n;
		int ret = send_bdev(f, f->sync_fd, 0, op, pos, len, NULL);

		if (ret)
			return -EIO;
		do
			n = sys_recvmsg(f->sync_fd, &mh);
		while (n == -EINTR);
		if (n < (long)sizeof(h))
			return -EIO;
		if (h.res < 0)
			return h.res;
		pos += len;
	}
	return 0;
}

static void do_io(struct ufront *f, const struct fuse_in_header *ih,
		  const void *arg, size_t alen)
{
	const struct fuse_read_in *rd = arg;
	const struct fuse_write_in *wr = arg;
	uint64_t seq;
	int ret;

	/* outside LOOP_CONFIGURE: straight into the device (front.h).
	 * Pairs with the release store after LOOP_CONFIGURE. */
	bool direct = !atomic_load_explicit(&f->configuring,
					    memory_order_acquire);

	switch (ih->opcode) {
	case FUSE_READ:
		if (alen < sizeof(*rd) || rd->size > f->max_io) {
			ret = -EINVAL;
			break;
		}
		if (direct) {
			ublkd_front_io(f, ih->unique, UBLK_IO_OP_READ,
				       rd->offset, rd->size, NULL,
				       sched_getcpu());
			return;
		}
		seq = ih->unique << 2 | RK_READ;
		ret = send_bdev(f, f->req_fd, seq, UBLK_IO_OP_READ, rd->offset,
				rd->size, NULL);
		break;
	case FUSE_WRITE:
		if (alen < sizeof(*wr) || wr->size > f->max_io ||
		    alen - sizeof(*wr) < wr->size) {
			ret = -EINVAL;
			break;
		}
		if (direct) {
			ublkd_front_io(f, ih->unique, UBLK_IO_OP_WRITE,
				       wr->offset, wr->size, wr + 1,
				       sched_getcpu());
			return;
		}
		seq = ih->unique << 2 | RK_WRITE;
		ret = send_bdev(f, f->req_fd, seq, UBLK_IO_OP_WRITE,
				wr->offset, wr->size, wr + 1);
		break;
	default: /* FUSE_FSYNC: a flush of the device's cache */
		if (direct) {
			ublkd_front_io(f, ih->unique, UBLK_IO_OP_FLUSH, 0, 0,
				       NULL, sched_getcpu());
			return;
		}
		seq = ih->unique << 2 | RK_NONE;
		ret = send_bdev(f, f->req_fd, seq, UBLK_IO_OP_FLUSH, 0, 0,
				NULL);
		break;
	}
	if (ret)
		reply(f, ih->unique, ret == -EINVAL ? ret : -EIO, NULL, 0);
}

/* (112 lines: one case per FUSE opcode, kept whole) */
static void handle(struct ufront *f, uint8_t *buf, size_t n)
{
	const struct fuse_in_header *ih = (const struct fuse_in_header *)buf;
	const void *arg = buf + sizeof(*ih);
	size_t alen = n - sizeof(*ih);
	union {
		struct fuse_entry_out entry;
		struct fuse_attr_out attr;
		struct fuse_open_out open;
		struct fuse_statfs_out statfs;
	} o;
	uint64_t id = ih->nodeid;

	memset(&o, 0, sizeof(o));
	switch (ih->opcode) {
	case FUSE_INIT:
		/* major, minor, max_readahead and flags: 7.6's layout */
		if (alen < 16)
			reply(f, ih->unique, -EINVAL, NULL, 0);
		else
			do_init(f, ih->unique, arg);
		return;
	case FUSE_LOOKUP:
		if (id != FUSE_ROOT_ID || alen < 5 || memcmp(arg, "disk", 5)) {
			reply(f, ih->unique, -ENOENT, NULL, 0);
			return;
		}
		o.entry.nodeid = NODE_DISK;
		o.entry.generation = 1;
		o.entry.entry_valid = o.entry.attr_valid = 3600;
		attr_of(f, NODE_DISK, &o.entry.attr);
		reply(f, ih->unique, 0, &o.entry, sizeof(o.entry));
		return;
	case FUSE_GETATTR:
	case FUSE_SETATTR:
		/* nothing of the disk changes: no size, mode or owner */
		if (ih->opcode == FUSE_SETATTR) {
			const struct fuse_setattr_in *sa = arg;

			if (alen < sizeof(*sa) ||
			    (sa->valid & (FATTR_SIZE | FATTR_MODE | FATTR_UID |
					  FATTR_GID))) {
				reply(f, ih->unique, -EPERM, NULL, 0);
				return;
			}
		}
		o.attr.attr_valid = 3600;
		attr_of(f, id == NODE_DISK ? NODE_DISK : FUSE_ROOT_ID,
			&o.attr.attr);
		reply(f, ih->unique, 0, &o.attr, sizeof(o.attr));
		return;
	case FUSE_OPEN:
		if (id != NODE_DISK) {
			reply(f, ih->unique, -EISDIR, NULL, 0);
			return;
		}
		o.open.open_flags = FOPEN_DIRECT_IO |
				    FOPEN_PARALLEL_DIRECT_WRITES;
		reply(f, ih->unique, 0, &o.open, sizeof(o.open));
		return;
	case FUSE_OPENDIR:
		reply(f, ih->unique, id == FUSE_ROOT_ID ? 0 : -ENOTDIR,
		      &o.open, sizeof(o.open));
		return;
	case FUSE_READDIR:
		if (alen < sizeof(struct fuse_read_in))
			reply(f, ih->unique, -EINVAL, NULL, 0);
		else
			do_readdir(f, ih->unique, arg);
		return;
	case FUSE_STATFS:
		o.statfs.st.bsize = o.statfs.st.frsize = 4096;
		o.statfs.st.blocks = f->size / 4096;
		o.statfs.st.files = 2;
		o.statfs.st.namelen = 255;
		reply(f, ih->unique, 0, &o.statfs, sizeof(o.statfs));
		return;
	case FUSE_RELEASE: case FUSE_RELEASEDIR: case FUSE_FLUSH:
	case FUSE_FSYNCDIR: case FUSE_DESTROY:
		reply(f, ih->unique, 0, NULL, 0);
		return;
	case FUSE_FORGET: case FUSE_BATCH_FORGET: case FUSE_INTERRUPT:
		return; /* no reply; requests end on their own */
	case FUSE_READ: case FUSE_WRITE: case FUSE_FSYNC:
		if (id != NODE_DISK) {
			reply(f, ih->unique, -EBADF, NULL, 0);
			return;
		}
		/* loop_configure's vfs_fsync while uublkd's loop waits in
		 * LOOP_CONFIGURE: nothing was written through the file yet
		 * (its page cache is empty, the file is direct_io), so there
		 * is nothing to flush; sending it to the loop would deadlock.
		 * Pairs with the release store after LOOP_CONFIGURE. */
		if (ih->opcode == FUSE_FSYNC &&
		    atomic_load_explicit(&f->configuring,
					 memory_order_acquire)) {
			reply(f, ih->unique, 0, NULL, 0);
			return;
		}
		do_io(f, ih, arg, alen);
		return;
	case FUSE_FALLOCATE:
		if (id != NODE_DISK || alen < sizeof(struct fuse_fallocate_in))
			reply(f, ih->unique, -EINVAL, NULL, 0);
		else
			reply(f, ih->unique, do_fallocate(f, arg), NULL, 0);
		return;
	default:
		reply(f, ih->unique, -ENOSYS, NULL, 0);
		return;
	}
}

/*
 * Each thread that serves I/O of a loop device on a FUSE file must not
 * recurse into it through reclaim: PR_SET_IO_FLUSHER (PF_MEMALLOC_NOIO
 * and PF_LOCAL_THROTTLE), and no signal (T8).
 */
static void thread_prepare(void)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0);
}

static size_t rbuf_len(const struct ufront *f)
{
	size_t n = (size_t)f->max_io + RBUF_EXTRA;

	return n < FUSE_MIN_READ_BUFFER ? FUSE_MIN_READ_BUFFER : n;
}

static void *reader_main(void *arg)
{
	struct ufront *f = arg;
	size_t len = rbuf_len(f);
	uint8_t *buf = f->rbuf;

	thread_prepare();
	prctl(PR_SET_NAME, "uublkd-fuse", 0, 0, 0);
	for (;;) {
		long n = sys_read(f->fuse_fd, buf, len);

		if (n == -EINTR || n == -EAGAIN || n == -ENOENT)
			continue;
		if (n < 0)
			break; /* -ENODEV: unmounted or aborted */
		if ((size_t)n >= sizeof(struct fuse_in_header))
			handle(f, buf, (size_t)n);
	}
	return NULL;
}

static void *replier_main(void *arg)
{
	struct ufront *f = arg;
	uint8_t *buf = f->wbuf;

	thread_prepare();
	prctl(PR_SET_NAME, "uublkd-reply", 0, 0, 0);
	for (;;) {
		struct um_hdr h;
		struct iovec iov[2] = {
			{ .iov_base = &h, .iov_len = sizeof(h) },
			{ .iov_base = buf, .iov_len = f->max_io },
		};
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
		struct fuse_write_out wo = { 0 };
		long n = sys_recvmsg(f->req_fd, &mh);
		uint64_t unique = h.seq >> 2;

		if (n == -EINTR)
			continue;
		if (n < (long)sizeof(h))
			break; /* the loop's end shut down */
		if (h.res < 0) {
			reply(f, unique, h.res, NULL, 0);
			continue;
		}
		switch (h.seq & 3) {
		case RK_READ:
			reply(f, unique, 0, buf, (size_t)n - sizeof(h));
			break;
		case RK_WRITE:
			wo.size = (uint32_t)h.res;
			reply(f, unique, 0, &wo, sizeof(wo));
			break;
		default:
			reply(f, unique, 0, NULL, 0);
			break;
		}
	}
	return NULL;
}

int ublkd_fuse_start(struct ufront *f)
{
	size_t len = rbuf_len(f);
	int ret;

	/* the I/O path allocates nothing: both buffers now, locked */
	f->rbuf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f->wbuf = mmap(NULL, f->max_io, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f->rbuf == MAP_FAILED || f->wbuf == MAP_FAILED) {
		if (f->rbuf != MAP_FAILED)
			munmap(f->rbuf, len);
		if (f->wbuf != MAP_FAILED)
			munmap(f->wbuf, f->max_io);
		f->rbuf = f->wbuf = NULL;
		return -ENOMEM;
	}
	mlock(f->rbuf, len);
	mlock(f->wbuf, f->max_io);
	ret = pthread_create(&f->reader, NULL, reader_main, f);
	if (ret)
		return -ret;
	f->reader_on = true;
	ret = pthread_create(&f->replier, NULL, replier_main, f);
	if (ret)
		return -ret;
	f->replier_on = true;
	return 0;
}

/* a thread that does not end within 2 s is left behind (logged) */
static bool join_bounded(pthread_t t)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 2;
	if (pthread_timedjoin_np(t, NULL, &ts) == 0)
		return true;
	pthread_detach(t);
	return false;
}

bool ublkd_fuse_join(struct ufront *f)
{
	bool ok = true;

	if (f->reader_on)
		ok &= join_bounded(f->reader);
	if (f->replier_on)
		ok &= join_bounded(f->replier);
	f->reader_on = f->replier_on = false;
	if (!ok)
		return false; /* a thread may still use the buffers */
	if (f->rbuf)
		munmap(f->rbuf, rbuf_len(f));
	if (f->wbuf)
		munmap(f->wbuf, f->max_io);
	f->rbuf = f->wbuf = NULL;
	return true;
}
