// SPDX-License-Identifier: MIT
/*
 * (Past 800 lines: the four opcodes share one issue path, do_rw, whose
 * file classes and retries are kept together.)
 *
 * READ, WRITE, READV, WRITEV on any file, inline in the submitting thread.
 *
 * File semantics (T5): offset -1 means "the file position" (preadv2 with
 * -1 uses and advances f_pos, FEAT_RW_CUR_POS); on stream files (pipes,
 * FIFOs, sockets) io_uring ignores the offset, where pread would fail with
 * ESPIPE, so an ESPIPE is retried as a plain read at the current position.
 * RWF flags go to preadv2/pwritev2, which validate them like the kernel's
 * kiocb_set_rw_flags (EOPNOTSUPP).  A result other than the full length
 * fails a link chain, as in the kernel.
 */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/buffers.h"
#include "core/cq_post.h"
#include "core/registry.h"
#include "core/task_work.h"
#include "core/tctx.h"
#include "core/types.h"
#include "dev/nullb.h"
#include "ops/kbuf.h"
#include "ops/rw.h"
#include "util/cpsys.h"
#include "util/usercopy.h"

#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_CLASS_RT 1
#define IOPRIO_CLASS_BE 2
#define IOPRIO_CLASS_IDLE 3
#define IOPRIO_NR_LEVELS 8

static int check_ioprio(uint16_t ioprio)
{
	unsigned int cls = ioprio >> IOPRIO_CLASS_SHIFT;
	unsigned int level = ioprio & 0x7;

	switch (cls) {
	case 0:
		return 0;
	case IOPRIO_CLASS_RT:
	case IOPRIO_CLASS_BE:
		return level >= IOPRIO_NR_LEVELS ? -EINVAL : 0;
	case IOPRIO_CLASS_IDLE:
		return 0;
	default:
		return -EINVAL;
	}
}

/* RWF_* known to 6.18: HIPRI DSYNC SYNC NOWAIT APPEND NOAPPEND ATOMIC
 * DONTCACHE */
#define UU_RWF_SUPPORTED 0xffu

/* the highest user address plus one (x86-64's TASK_SIZE_MAX) */
#define UU_USER_END 0x7ffffffff000ull

/*
 * Read/write attributes (IORING_FEAT_RW_ATTR; the kernel's __io_prep_rw
 * and io_prep_rw_pi): attr_type_mask names the attributes attr_ptr
 * points to, and the only one is protection information.  Its struct is
 * read and checked here; the file is asked at issue (rw_meta_check).
 * With a mask of 0, attr_ptr is not read.
 */
static int prep_attr(struct uu_req *req)
{
	const struct io_uring_sqe *sqe = &req->sqe;
	struct io_uring_attr_pi pi;
	uint64_t len, end;
	int ret;

	if (sqe->attr_type_mask != IORING_RW_ATTR_FLAG_PI)
		return -EINVAL;
	ret = uu_copy_from_user(&pi, (const void *)(uintptr_t)sqe->attr_ptr,
				sizeof(pi));
	if (ret)
		return ret;
	if (pi.rsvd)
		return -EINVAL;
	/* import_ubuf of the metadata buffer: capped, then access_ok */
	len = pi.len > UU_MAX_RW_COUNT ? UU_MAX_RW_COUNT : pi.len;
	if (__builtin_add_overflow(pi.addr, len, &end) || end > UU_USER_END)
		return -EFAULT;
	uu_cmd(req, rw)->meta = true;
	return 0;
}

static int prep_common(struct uu_req *req)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);
	const struct io_uring_sqe *sqe = &req->sqe;
	int ret = check_ioprio(sqe->ioprio);

	if (ret)
		return ret;
	rw_st->pos = (int64_t)sqe->off;
	rw_st->rw_flags = sqe->rw_flags;
	rw_st->iov = rw_st->inline_iov;
	rw_st->ring_file = false;
	rw_st->meta = false;
	if (unlikely(sqe->attr_type_mask))
		return prep_attr(req);
	return 0;
}

/*
 * A read or write with protection information meets the kernel's
 * io_rw_init_file: the file must be open for the direction (-EBADF),
 * the RWF flags valid (-EOPNOTSUPP), on an IOPOLL ring O_DIRECT
 * (-EOPNOTSUPP), and the file must carry integrity metadata
 * (FMODE_HAS_METADATA, -EINVAL).  Only block devices with an integrity
 * profile do, and user space has no call that passes the metadata to
 * them: every such request ends here (docs/compatibility.md #31).
 */
static int rw_meta_check(struct uu_req *req, bool is_write)
{
	int fl = req->fd >= 0 ? fcntl(req->fd, F_GETFL) : -1;

	if (fl < 0 || (fl & O_PATH) ||
	    (is_write ? (fl & O_ACCMODE) == O_RDONLY :
			(fl & O_ACCMODE) == O_WRONLY))
		return -EBADF;
	if (uu_cmd(req, rw)->rw_flags & ~UU_RWF_SUPPORTED)
		return -EOPNOTSUPP;
	if ((req->ring->setup_flags & IORING_SETUP_IOPOLL) &&
	    !(fl & O_DIRECT))
		return -EOPNOTSUPP;
	return -EINVAL;
}

int uu_rw_prep(struct uu_req *req)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);
	const struct io_uring_sqe *sqe = &req->sqe;
	int ret = prep_common(req);

	if (ret)
		return ret;
	rw_st->nr_iov = 1;
	rw_st->inline_iov[0].iov_base = (void *)(uintptr_t)sqe->addr;
	rw_st->inline_iov[0].iov_len = sqe->len;
	rw_st->total = sqe->len > UU_MAX_RW_COUNT ? UU_MAX_RW_COUNT : sqe->len;
	if (req->flags & UU_REQ_BUFFER_SELECT)
		uu_kbuf_prep(req, sqe->len); /* addr is ignored */
	return 0;
}

/* The iovec array is copied here, at submission (T2: SUBMIT_STABLE). */
int uu_rwv_prep(struct uu_req *req)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);
	const struct io_uring_sqe *sqe = &req->sqe;
	unsigned int nr = sqe->len;
	size_t total = 0;
	int ret = prep_common(req);

	if (ret)
		return ret;
	if (req->flags & UU_REQ_BUFFER_SELECT) {
		/* one iovec, whose length is the most to read (ops/kbuf.c) */
		struct iovec one;

		rw_st->nr_iov = 0;
		if (nr != 1)
			return -EINVAL;
		ret = uu_copy_from_user(&one, (const void *)(uintptr_t)sqe->addr,
					sizeof(one));
		if (ret)
			return ret;
		uu_kbuf_prep(req, (uint32_t)one.iov_len);
		return 0;
	}
	if (nr > UU_UIO_MAXIOV)
		return -EINVAL;
	if (nr > UU_INLINE_IOVS) {
		rw_st->iov = malloc(nr * sizeof(struct iovec));
		if (!rw_st->iov)
			return -ENOMEM;
	}
	rw_st->nr_iov = (int)nr;
	ret = uu_copy_from_user(rw_st->iov, (const void *)(uintptr_t)sqe->addr,
				nr * sizeof(struct iovec));
	if (ret)
		goto fail;
	for (unsigned int i = 0; i < nr; i++) {
		ssize_t len = (ssize_t)rw_st->iov[i].iov_len;

		if (len < 0) {
			ret = -EINVAL;
			goto fail;
		}
		if ((size_t)len > UU_MAX_RW_COUNT - total)
			len = (ssize_t)(UU_MAX_RW_COUNT - total);
		total += (size_t)len;
	}
	rw_st->total = total;
	return 0;
fail:
	uu_rw_cleanup(req);
	return ret;
}

void uu_rw_cleanup(struct uu_req *req)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);

	if (req->flags & UU_REQ_BUFFER_SELECT)
		uu_kbuf_cleanup(req); /* a buffer still held: consumed */
	if (rw_st->iov && rw_st->iov != rw_st->inline_iov) {
		free(rw_st->iov);
		rw_st->iov = rw_st->inline_iov;
	}
}


/*
 * A NOWAIT write failed with EOPNOTSUPP.  The kernel's io_uring turns the
 * filesystem's "cannot do this without blocking" (buffered ext4) into
 * -EAGAIN, but keeps -EOPNOTSUPP when the file refuses NOWAIT altogether
 * (no FMODE_NOWAIT: tmpfs, procfs).  A one-byte NOWAIT read tells which;
 * this runs only on that error path.
 */
static bool fs_blocked_nowait_write(int fd)
{
	struct stat st;
	char b;
	struct iovec iov = { &b, 1 };

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return false;
	if (preadv2(fd, &iov, 1, 0, RWF_NOWAIT) >= 0)
		return true;
	return errno != EOPNOTSUPP;
}

static ssize_t rw_once(struct uu_req *req, bool is_write, off_t pos,
		       int flags)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);
	int fd = req->fd;

	if (uu_cp_self) {
		/* an io-wq worker: through the stub a cancel interrupts
		 * (T7); errno as the libc calls below set it */
		bool one = rw_st->nr_iov == 1 && !flags;
		long r;

		if (one && pos == -1)
			r = uu_sys_cp(is_write ? SYS_write : SYS_read, fd,
				      (long)rw_st->iov[0].iov_base,
				      (long)rw_st->iov[0].iov_len, 0, 0, 0);
		else
			r = uu_sys_cp(is_write ? SYS_pwritev2 : SYS_preadv2, fd,
				      (long)rw_st->iov, rw_st->nr_iov,
				      (long)pos, 0, flags);
		if (r < 0) {
			errno = (int)-r;
			return -1;
		}
		return r;
	}
	/* the single-buffer, no-flag case skips the kernel's iovec import
	 * (measurably cheaper than preadv2 with one iovec) */
	if (rw_st->nr_iov == 1 && !flags) {
		void *b = rw_st->iov[0].iov_base;
		size_t l = rw_st->iov[0].iov_len;

		if (pos == -1)
			return is_write ? write(fd, b, l) : read(fd, b, l);
		return is_write ? pwrite(fd, b, l, pos) : pread(fd, b, l, pos);
	}
	return is_write ?
		pwritev2(fd, rw_st->iov, rw_st->nr_iov, pos, flags) :
		preadv2(fd, rw_st->iov, rw_st->nr_iov, pos, flags);
}

/*
 * A NOWAIT read of a regular file stopped part way (pages not cached):
 * the kernel completes such reads (need_complete_io), so read the rest
 * blocking; a short total then means EOF.  Returns the total or -errno.
 */
static ssize_t finish_short_read(struct uu_req *req, off_t pos, ssize_t done)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);
	struct iovec iov[UU_INLINE_IOVS];
	struct iovec *v = rw_st->iov;
	int nr = rw_st->nr_iov, i = 0;
	size_t skip = (size_t)done;

	while (i < nr && skip >= v[i].iov_len)
		skip -= v[i++].iov_len;
	while (i < nr) {
		int cnt = 0;
		ssize_t n;

		for (; i < nr && cnt < UU_INLINE_IOVS; i++, cnt++) {
			iov[cnt].iov_base = (char *)v[i].iov_base + skip;
			iov[cnt].iov_len = v[i].iov_len - skip;
			skip = 0;
		}
		do {
			n = pos == -1 ? readv(req->fd, iov, cnt) :
					preadv(req->fd, iov, cnt, pos + done);
		} while (n < 0 && errno == EINTR && !uu_cp_cancelled());
		if (n < 0)
			return done; /* report what was read, like a short read */
		done += n;
		if (n == 0)
			break; /* EOF */
		/* re-walk from the start for the next chunk */
		skip = (size_t)done;
		i = 0;
		while (i < nr && skip >= v[i].iov_len)
			skip -= v[i++].iov_len;
	}
	return done;
}

/*
 * A write to a widowed pipe or socket fails with EPIPE and sends SIGPIPE
 * to the writer.  The kernel's writer is the submitting task (a parked
 * write is retried in its context); here the retry ran in an engine
 * thread, whose signals are blocked, so the signal is sent on to the
 * submitting thread.
 */
static void raise_sigpipe(struct uu_req *req)
{
	int saved = errno;

	syscall(SYS_tgkill, getpid(), req->submit_tid, SIGPIPE);
	errno = saved;
}

/*
 * O_DIRECT I/O goes to Linux AIO (exec/aio.c), asynchronous in the block
 * layer like the kernel's io_uring does it; where AIO cannot take it, to
 * io-wq's unbounded class, not capped by the bounded limit.
 */
static bool is_direct(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_DIRECT);
}

/*
 * Reads ask is_direct() before trying inline; that fcntl costs about a
 * tenth of a page-cache read, so an fd number once seen buffered is not
 * asked again.  If the number is later reused for an O_DIRECT file (or
 * F_SETFL adds O_DIRECT) without uuring_close seeing it, such a read is
 * done blocking in the submitting thread: slower, never wrong.
 */
#define DIRECT_CACHE 4096
static _Atomic uint8_t fd_seen_buffered[DIRECT_CACHE];

static bool is_direct_cached(int fd)
{
	bool d;

	if (fd >= 0 && fd < DIRECT_CACHE &&
	    atomic_load_explicit(&fd_seen_buffered[fd], memory_order_relaxed))
		return false;
	d = is_direct(fd);
	if (!d && fd >= 0 && fd < DIRECT_CACHE)
		atomic_store_explicit(&fd_seen_buffered[fd], 1,
				      memory_order_relaxed);
	return d;
}

void uu_rw_forget_fd(int fd)
{
	if (fd >= 0 && fd < DIRECT_CACHE)
		atomic_store_explicit(&fd_seen_buffered[fd], 0,
				      memory_order_relaxed);
}

/* uu_rw_set_file_hook's: set once, before the first file it serves
 * exists; the release store pairs with do_rw's acquire load, so a
 * request that sees the hook sees what its setter prepared */
static _Atomic(uu_rw_file_fn) rw_file_hook;

void uu_rw_set_file_hook(uu_rw_file_fn fn)
{
	atomic_store_explicit(&rw_file_hook, fn, memory_order_release);
}

static inline bool driver_file_rw(struct uu_req *req, bool is_write, int *res)
{
	uu_rw_file_fn hook = atomic_load_explicit(&rw_file_hook,
						  memory_order_acquire);

	return hook && hook(req, is_write, res);
}

/* How a file that cannot do this I/O without blocking is waited for. */
enum rw_class { RW_BLOCK_INLINE, RW_POLL, RW_WORKER, RW_BAD };

static enum rw_class classify(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return RW_BAD;
	if (S_ISREG(st.st_mode))
		return RW_BLOCK_INLINE; /* page cache / fs: brief, never "ready" */
	/* anonymous-inode files (eventfd, timerfd, signalfd, inotify...)
	 * have no file type bits; like pipes, they have a poll method */
	if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
	    S_ISCHR(st.st_mode) || (st.st_mode & S_IFMT) == 0)
		return RW_POLL;
	return RW_WORKER; /* block devices and the rest */
}

/*
 * I/O on an io_uring fd (the ring fds the registry knows by number): the
 * kernel's file has no read_iter/write_iter, so the I/O fails -EINVAL,
 * but a read first waits, like any read on a pollable file that is not
 * ready (io_file_supports_nowait polls it), until the ring's CQ holds a
 * CQE.  uuring's ring fd is a socket whose readiness byte must not be
 * read.  1: not a ring fd after all.
 */
static int ring_file_rw(struct uu_req *req, bool is_write,
			unsigned int issue_flags)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);
	int readable;

	/* woken by the ring fd's readiness: a CQE is there.  On a
	 * DEFER_TASKRUN ring the kernel's retry is the submitter's task_work
	 * (a cancel before its GETEVENTS still finds the read): so is ours */
#ifndef UU_MUTATE_RINGFD_READ_EARLY
	if (rw_st->ring_file && (issue_flags & UU_ISSUE_F_POLLER) &&
	    (req->ring->setup_flags & IORING_SETUP_DEFER_TASKRUN))
		return uu_tw_reissue(req);
#else
	/* mutation build (tests/fuzz/mutants.sh): failed at the wakeup */
	(void)issue_flags;
#endif
	if (rw_st->ring_file)
		return -EINVAL;
	readable = uu_ring_fd_readable(req->sqe_fd);
	if (readable < 0)
		return 1;
	if (is_write || readable)
		return -EINVAL;
	/* parked with a dup of its own: the flag, not the number, says it */
	rw_st->ring_file = true;
	return uu_park(req, UU_ISSUE_PARK_POLLIN);
}

/*
 * Non-blocking first (T5): outside io-wq a read is tried with RWF_NOWAIT.
 * Would block: pollable files (pipes, sockets, ttys) park on the
 * readiness engine, never occupying a thread; regular files are read
 * blocking inline (page cache); everything else goes to io-wq.  Files
 * that refuse RWF_NOWAIT (tmpfs, procfs, ttys) are classified the same
 * way.  Writes classify first (buffered ext4 refuses NOWAIT writes, so
 * trying would cost a failed syscall per write).
 */
/* (130 lines: one decision tree over the file's class, whose branches
 * share the try's state; __io_read/__io_write keep it in one place too) */
static int do_rw(struct uu_req *req, bool is_write, unsigned int issue_flags)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);
	int user_flags = (int)rw_st->rw_flags;
	bool user_nowait = user_flags & RWF_NOWAIT;
	bool worker = issue_flags & UU_ISSUE_F_WORKER;
	off_t pos = rw_st->pos;
	ssize_t n;
	int hres;

	if (req->flags & UU_REQ_FIXED_FILE)
		return -EBADF; /* no registered files yet */
	if (unlikely(rw_st->meta))
		return rw_meta_check(req, is_write);
#ifdef UU_MUTATE_RINGFD_AS_SOCKET
	/* the ring fd read and written as the socket it is underneath */
	if (unlikely(rw_st->ring_file)) {
#else
	if (unlikely(rw_st->ring_file || uu_registry_fd_cached(req->sqe_fd))) {
#endif
		int ret = ring_file_rw(req, is_write, issue_flags);

		if (ret != 1)
			return ret;
	}
	/* a null device's file (dev/nullb.c): served by the model */
	if (unlikely(atomic_load_explicit(&uu_nullb_active,
					  memory_order_relaxed))) {
		int ret;

		if (!(rw_st->rw_flags & ~UU_RWF_SUPPORTED) &&
		    uu_nullb_rw(req, is_write, &ret))
			return ret;
	}
	if (unlikely(req->ring->setup_flags & IORING_SETUP_IOPOLL))
		return uu_rw_iopoll_issue(req, is_write, issue_flags);
	if (rw_st->rw_flags & ~UU_RWF_SUPPORTED)
		return -EOPNOTSUPP; /* kiocb_set_rw_flags */
	if (rw_st->rw_flags & RWF_HIPRI)
		return -EINVAL; /* polled I/O needs an IOPOLL ring */
	if (unlikely(driver_file_rw(req, is_write, &hres)))
		return hres;
	/* the kernel resolves the file before it looks at the offset, while
	 * pread(2) rejects a negative offset before the fd */
	if (unlikely(pos < -1) && (req->fd < 0 || fcntl(req->fd, F_GETFD) < 0))
		return -EBADF;

	if (!user_nowait) {
		enum rw_class c = RW_BLOCK_INLINE;

		if (is_write || worker) {
			c = classify(req->fd);
			if (c == RW_BAD)
				return -EBADF;
		}
		/* a synchronous O_DIRECT read waits for the device even with
		 * RWF_NOWAIT: never try it inline */
		if (!is_write && !worker && is_direct_cached(req->fd))
			return uu_park(req, UU_ISSUE_PARK_AIO_READ);
		if (c == RW_POLL || (!is_write && !worker)) {
			for (;;) {
				n = rw_once(req, is_write, pos,
					    user_flags | RWF_NOWAIT);
				if (n >= 0)
					goto done;
				if (errno == ESPIPE && pos != -1) {
					pos = -1; /* stream: offset ignored */
					continue;
				}
				if (errno != EINTR)
					break;
				if (uu_cp_cancelled())
					return -EINTR; /* T7: not retried */
			}
			int err = errno;

			if (err != EAGAIN && err != EOPNOTSUPP)
				return -err;
			if (c != RW_POLL)
				c = classify(req->fd);
			if (c == RW_BAD)
				return -EBADF;
			if (err == EAGAIN && c == RW_POLL)
				return uu_park(req, is_write ? UU_ISSUE_PARK_POLLOUT :
							 UU_ISSUE_PARK_POLLIN);
			if (err == EAGAIN && c == RW_BLOCK_INLINE && !worker)
				/* a regular file that must wait for the device
				 * (page cache miss, O_DIRECT): io-wq, as the
				 * kernel punts it */
				return uu_park(req, is_direct(req->fd) ?
						UU_ISSUE_PUNT_UNBOUND : UU_ISSUE_PUNT);
			if (c == RW_POLL || c == RW_WORKER) {
				/* no NOWAIT support (ttys): a worker blocks */
				if (!worker)
					return uu_park(req, UU_ISSUE_PUNT_UNBOUND);
			}
		} else if (c == RW_WORKER && !worker) {
			return uu_park(req, UU_ISSUE_PUNT);
		} else if (is_write && c == RW_BLOCK_INLINE && !worker &&
			   is_direct(req->fd)) {
			/* an O_DIRECT write waits for the device */
			return uu_park(req, UU_ISSUE_PARK_AIO_WRITE);
		}
	}
	for (;;) {
		n = rw_once(req, is_write, pos, user_flags);
		if (n >= 0)
			break;
		if (errno == ESPIPE && pos != -1) {
			pos = -1; /* stream file: the offset is ignored */
			continue;
		}
		/* a cancel's interrupt ends it: the kernel's rw turns the
		 * wait's -ERESTARTSYS into -EINTR (T7) */
		if (errno == EINTR && !uu_cp_cancelled())
			continue;
		/* io_uring reports a NOWAIT write the fs cannot do without
		 * blocking (buffered ext4) as -EAGAIN, not -EOPNOTSUPP */
		if (errno == EOPNOTSUPP && is_write && user_nowait &&
		    fs_blocked_nowait_write(req->fd))
			return -EAGAIN;
		return -errno;
	}
done:
	if (n > 0 && (size_t)n < rw_st->total && !user_nowait && !is_write &&
	    classify(req->fd) == RW_BLOCK_INLINE)
		n = finish_short_read(req, pos, n);
	if (n < 0)
		return (int)n;
	if ((size_t)n != rw_st->total)
		req->flags |= UU_REQ_SHORT;
	return (int)n;
}

/*
 * IOSQE_BUFFER_SELECT: a provided buffer is selected at issue (each time
 * a parked read is retried, since a waiting read gives its buffer back),
 * after the file is known to exist and before its other checks, like the
 * kernel's __io_read; ops/kbuf.c has the rules.
 */
static int read_select(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);
	int ret;

	if (req->kb.state == UU_KB_NONE) {
		enum rw_class c = classify(req->fd);

		if (c == RW_BAD)
			return -EBADF;
		ret = uu_kbuf_select(req, issue_flags, c == RW_POLL);
		if (ret)
			return ret;
	}
	rw_st->iov = rw_st->inline_iov;
	rw_st->inline_iov[0].iov_base = (void *)(uintptr_t)req->kb.addr;
	rw_st->inline_iov[0].iov_len = req->kb.len;
	rw_st->nr_iov = 1;
	rw_st->total = req->kb.len > UU_MAX_RW_COUNT ? UU_MAX_RW_COUNT :
							 req->kb.len;
	ret = do_rw(req, false, issue_flags);
	uu_kbuf_after_issue(req, ret);
	return ret;
}

int uu_read_issue(struct uu_req *req, unsigned int issue_flags)
{
	if (unlikely(req->flags & UU_REQ_BUFFER_SELECT))
		return read_select(req, issue_flags);
	return do_rw(req, false, issue_flags);
}

int uu_write_issue(struct uu_req *req, unsigned int issue_flags)
{
	int ret = do_rw(req, true, issue_flags);

	if (ret == -EPIPE && uu_gettid() != req->submit_tid)
		raise_sigpipe(req);
	return ret;
}

/*
 * READ_MULTISHOT (the kernel's io_read_mshot_prep and io_read_mshot): a
 * read of a pollable file into provided buffers that stays armed.  Each
 * read that returns data consumes its buffer and posts a CQE with
 * IORING_CQE_F_MORE, and the request reads again at once (the kernel's
 * io_poll_multishot_retry); a read that would block gives its buffer back
 * and waits for readiness.  It ends, with a CQE without F_MORE, at EOF
 * (0, the buffer given back), on an error (-ENOBUFS when no buffer is
 * left), when the CQ has no room for a shot (that CQE carries the data,
 * T14), or when cancelled.
 */
int uu_read_mshot_prep(struct uu_req *req)
{
	const struct io_uring_sqe *sqe = &req->sqe;
	int ret;

	/* must be used with provided buffers */
	if (!(req->flags & UU_REQ_BUFFER_SELECT))
		return -EINVAL;
	ret = prep_common(req);
	if (ret)
		return ret;
	if (sqe->addr || sqe->len)
		return -EINVAL;
	uu_cmd(req, rw)->nr_iov = 1;
	uu_kbuf_prep(req, 0); /* whole buffers */
	return 0;
}

/*
 * io_file_can_poll: pipes, sockets, anonymous-inode files and character
 * devices other than the memory devices (/dev/null, /dev/zero: no poll
 * method).  0, -EBADFD, or -EBADF for no file.
 */
static int mshot_file_check(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return -EBADF;
	if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
	    (st.st_mode & S_IFMT) == 0 ||
	    (S_ISCHR(st.st_mode) && major(st.st_rdev) != 1))
		return 0;
	return -EBADFD;
}

/* One read into the selected buffer without blocking: bytes, or -errno
 * (-EAGAIN: nothing to read now) */
static ssize_t mshot_read_once(struct uu_req *req)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);
	ssize_t n;

	rw_st->iov = rw_st->inline_iov;
	rw_st->inline_iov[0].iov_base = (void *)(uintptr_t)req->kb.addr;
	rw_st->inline_iov[0].iov_len = req->kb.len > UU_MAX_RW_COUNT ?
						UU_MAX_RW_COUNT :
						req->kb.len;
	rw_st->total = rw_st->inline_iov[0].iov_len;
	for (;;) {
		n = rw_once(req, false, -1, RWF_NOWAIT);
		if (n >= 0)
			return n;
		if (errno == EOPNOTSUPP) {
			/* no NOWAIT reads (a tty): read only what poll says
			 * is there */
			struct pollfd p = { .fd = req->fd, .events = POLLIN };

			if (poll(&p, 1, 0) == 0)
				return -EAGAIN;
			n = rw_once(req, false, -1, 0);
			if (n >= 0)
				return n;
		}
		if (errno != EINTR)
			return -errno;
		if (uu_cp_cancelled())
			return -EINTR; /* T7: not retried */
	}
}

/*
 * In io-wq the kernel's multishot read waits for readiness at once where
 * the file reads without blocking (O_NONBLOCK, or pipes, sockets and
 * anonymous-inode files, which have FMODE_NOWAIT), selecting no buffer
 * there; on another file (a tty) it becomes a one-shot read.
 */
static int mshot_in_worker(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);
	int fl = fcntl(req->fd, F_GETFL);
	struct stat st;
	ssize_t n;
	int ret;

	if ((fl >= 0 && (fl & O_NONBLOCK)) ||
	    (!fstat(req->fd, &st) &&
	     (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
	      (st.st_mode & S_IFMT) == 0))) {
		/* its retries after a wakeup run where the wakeup is taken
		 * (a DEFER_TASKRUN retry in the submitter's task_work), not
		 * in io-wq again, as the kernel's poll retry issues it
		 * directly */
		req->flags &= ~UU_REQ_ASYNC;
		return uu_park(req, UU_ISSUE_PARK_POLLIN);
	}
	ret = uu_kbuf_select(req, issue_flags, false);
	if (ret)
		return ret;
	rw_st->iov = rw_st->inline_iov;
	rw_st->inline_iov[0].iov_base = (void *)(uintptr_t)req->kb.addr;
	rw_st->inline_iov[0].iov_len = req->kb.len;
	do {
		n = rw_once(req, false, -1, 0);
	} while (n < 0 && errno == EINTR && !uu_cp_cancelled());
	if (n <= 0) {
		uu_kbuf_recycle(req);
		return n < 0 ? -errno : 0;
	}
	req->cflags = uu_kbuf_consume(req, (int)n);
	return (int)n;
}

int uu_read_mshot_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);
	int ret;

	/* DEFER_TASKRUN: the shots are the submitter's to post, when it
	 * waits, like the rest of the ring's completions */
	if ((issue_flags & UU_ISSUE_F_POLLER) &&
	    (req->ring->setup_flags & IORING_SETUP_DEFER_TASKRUN))
		return uu_tw_reissue(req);
	ret = mshot_file_check(req->fd);
	if (ret)
		return ret;
	/* io_wq_submit_work: multishot does not run in io-wq (IOSQE_ASYNC) */
	if (issue_flags & UU_ISSUE_F_WORKER)
		return mshot_in_worker(req, issue_flags);
	for (;;) {
		uint32_t cflags;
		ssize_t n;

		if (req->kb.state == UU_KB_NONE) {
			ret = uu_kbuf_select(req, issue_flags, true);
			if (ret)
				return ret;
		}
		/* io_rw_init_file, after the buffer is selected */
		if (rw_st->rw_flags & ~UU_RWF_SUPPORTED) {
			uu_kbuf_recycle(req);
			return -EOPNOTSUPP;
		}
		if (unlikely(rw_st->meta)) {
			uu_kbuf_recycle(req);
			return rw_meta_check(req, false);
		}
		n = mshot_read_once(req);
		if (n == -EAGAIN) {
			uu_kbuf_recycle(req);
			return uu_park(req, UU_ISSUE_PARK_POLLIN);
		}
		if (n <= 0) {
			uu_kbuf_recycle(req);
			return (int)n;
		}
		cflags = uu_kbuf_consume(req, (int)n);
		if (!uu_req_post_cqe(req, (int)n, cflags, issue_flags)) {
			/* no room for the shot: it is the final CQE */
			req->cflags = cflags;
			return (int)n;
		}
	}
}
