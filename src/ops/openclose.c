// SPDX-License-Identifier: MIT
/*
 * OPENAT, OPENAT2, CLOSE and PIPE on plain file descriptors.
 *
 * The path and open_how are imported at prep (T2).  OPENAT issues
 * openat(2) and OPENAT2 openat2(2), so a seccomp policy that denies one of
 * them denies the SQE too.  As in the kernel, an open with O_CREAT, O_TRUNC
 * or O_TMPFILE goes to io-wq at once, and any other open is first tried in
 * the submitting thread with O_NONBLOCK, which is then cleared from the new
 * file: opening a FIFO does not wait for its other end there, a lease
 * break (EAGAIN) sends the open to io-wq, where it blocks.
 *
 * file_index != 0 puts the new files into the registered file table
 * (direct descriptors, uu_fixed_install) instead of the fd table.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/registry.h"
#include "core/rsrc.h"
#include "core/types.h"
#include "exec/iowq.h"
#include "ops/openclose.h"
#include "ops/ops.h"
#include "util/cpsys.h"
#include "util/rawsys.h"
#include "util/usercopy.h"

#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif
#ifndef __O_SYNC
#define __O_SYNC 04000000
#endif
#ifndef O_NOTIFICATION_PIPE
#define O_NOTIFICATION_PIPE O_EXCL
#endif
#ifndef RESOLVE_CACHED
#define RESOLVE_CACHED 0x20
#endif

#define OPEN_HOW_SIZE_VER0 24

/* struct open_how (linux/openat2.h) */
struct uu_open_how {
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
};

/* the flags open(2) knows (VALID_OPEN_FLAGS) and those O_PATH keeps */
#define UU_VALID_OPEN_FLAGS                                                 \
	(O_RDONLY | O_WRONLY | O_RDWR | O_CREAT | O_EXCL | O_NOCTTY |        \
	 O_TRUNC | O_APPEND | O_NDELAY | O_NONBLOCK | __O_SYNC | O_DSYNC |   \
	 FASYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW |        \
	 O_NOATIME | O_CLOEXEC | O_PATH | __O_TMPFILE)
#define UU_O_PATH_FLAGS (O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC)

/* The tail of __io_openat_prep, shared by OPENAT and OPENAT2. */
static int open_prep_common(struct uu_req *req)
{
	struct uu_open_cmd *open_st = uu_cmd(req, open);
	const struct io_uring_sqe *sqe = &req->sqe;
	uint64_t f = open_st->flags;
	char *path;
	int ret;

	if (sqe->buf_index)
		return -EINVAL;
	if (req->flags & UU_REQ_FIXED_FILE)
		return -EBADF;
	open_st->dfd = sqe->fd;
	ret = uu_getname(sqe->addr, false, 0, &path);
	if (ret)
		return ret;
	open_st->file_slot = sqe->file_index;
	if (open_st->file_slot && (f & O_CLOEXEC)) {
		free(path);
		return -EINVAL;
	}
	/* the kernel's io_openat_force_async */
	open_st->force_async = f & (O_TRUNC | O_CREAT | __O_TMPFILE);
	uu_os_take(req, path, NULL);
	return 0;
}

int uu_openat_prep(struct uu_req *req)
{
	struct uu_open_cmd *open_st = uu_cmd(req, open);
	const struct io_uring_sqe *sqe = &req->sqe;
	uint64_t f = sqe->open_flags & UU_VALID_OPEN_FLAGS;

	uu_os_init(req);
	/* build_open_how(): what open(2) makes of flags and mode */
	if (f & O_PATH)
		f &= UU_O_PATH_FLAGS;
	open_st->flags = f;
	open_st->mode = sqe->len; /* passed to openat(2) as given */
	open_st->resolve = 0;
	open_st->openat2 = false;
	return open_prep_common(req);
}

/*
 * copy_struct_from_user(): a larger struct is accepted if the bytes the
 * engine does not know are zero (else -E2BIG).
 */
static int copy_open_how(struct uu_open_how *how, uint64_t uptr, uint64_t len)
{
	unsigned char buf[512];
	uint64_t off = sizeof(*how);

	while (off < len) {
		size_t chunk = len - off > sizeof(buf) ? sizeof(buf) :
							 (size_t)(len - off);

		if (uptr + off < uptr ||
		    uu_copy_from_user(buf, (const void *)(uintptr_t)(uptr + off),
				      chunk))
			return -EFAULT;
		for (size_t i = 0; i < chunk; i++)
			if (buf[i])
				return -E2BIG;
		off += chunk;
	}
	return uu_copy_from_user(how, (const void *)(uintptr_t)uptr,
				 sizeof(*how));
}

int uu_openat2_prep(struct uu_req *req)
{
	struct uu_open_cmd *open_st = uu_cmd(req, open);
	const struct io_uring_sqe *sqe = &req->sqe;
	struct uu_open_how how;
	int ret;

	uu_os_init(req);
	if (sqe->len < OPEN_HOW_SIZE_VER0)
		return -EINVAL;
	ret = copy_open_how(&how, sqe->addr2, sqe->len);
	if (ret)
		return ret;
	open_st->flags = how.flags;
	open_st->mode = how.mode;
	open_st->resolve = how.resolve;
	open_st->openat2 = true;
	return open_prep_common(req);
}

/* The fd or -errno.  Interruptible by a cancel in a worker (T7). */
static int do_open(struct uu_req *req, uint64_t extra)
{
	struct uu_open_cmd *open_st = uu_cmd(req, open);
	const char *path = uu_os_hdr(req)->mem;

	if (open_st->openat2) {
		struct uu_open_how how = {
			.flags = open_st->flags | extra,
			.mode = open_st->mode,
			.resolve = open_st->resolve,
		};

		return (int)uu_sys_cp(SYS_openat2, open_st->dfd,
				      (long)path, (long)&how, sizeof(how), 0, 0);
	}
	return (int)uu_sys_cp(SYS_openat, open_st->dfd, (long)path,
			      (int)(open_st->flags | extra),
			      (unsigned int)open_st->mode, 0, 0);
}

int uu_openat_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_open_cmd *open_st = uu_cmd(req, open);
	bool worker = issue_flags & UU_ISSUE_F_WORKER;
	bool nonblock = !worker && !(open_st->flags & O_PATH);
	uint64_t extra = 0;
	int fd, fl;

	/* a FIFO open may wait for the other end for ever: unbounded */
	if (open_st->force_async && !worker)
		return uu_park(req, UU_ISSUE_PUNT_UNBOUND);
	if (nonblock)
		extra |= O_NONBLOCK;
	if (open_st->file_slot)
		extra |= O_CLOEXEC; /* only ours, for a moment */
	if (worker)
		uu_iowq_blocking(true); /* a FIFO may wait for its other end */
	fd = do_open(req, extra);
	if (worker)
		uu_iowq_blocking(false);
	if (fd < 0) {
		if (fd == -EAGAIN && nonblock &&
		    !(open_st->resolve & RESOLVE_CACHED))
			return uu_park(req, UU_ISSUE_PUNT_UNBOUND);
		/* interrupted by a cancel: the kernel's open leaves the
		 * wait's -ERESTARTSYS in the CQE (T7) */
		if (fd == -EINTR && uu_cp_cancelled())
			return -UU_ERESTARTSYS;
		return fd;
	}
	if (nonblock && !(open_st->flags & O_NONBLOCK)) {
		fl = fcntl(fd, F_GETFL);
		if (fl >= 0)
			fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	}
	if (open_st->file_slot)
		return uu_fixed_install(req->ring, fd, open_st->file_slot);
	return fd;
}

/* ---- CLOSE ---- */

int uu_close_prep(struct uu_req *req)
{
	struct uu_close_cmd *close_st = uu_cmd(req, close);
	const struct io_uring_sqe *sqe = &req->sqe;

	if (sqe->off || sqe->addr || sqe->len || sqe->rw_flags ||
	    sqe->buf_index)
		return -EINVAL;
	if (req->flags & UU_REQ_FIXED_FILE)
		return -EBADF;
	close_st->fd = sqe->fd;
	close_st->file_slot = sqe->file_index;
	if (close_st->file_slot && close_st->fd)
		return -EINVAL;
	return 0;
}

/*
 * FIXED_FD_INSTALL: a direct descriptor (sqe->fd is a slot; IOSQE_FIXED_FILE
 * is required) gets a normal fd, O_CLOEXEC unless IORING_FIXED_FD_NO_CLOEXEC.
 * The checks in the kernel's order (io_install_fixed_fd_prep); a request
 * with a personality is refused, as the kernel insists that the
 * submitter's own credentials receive the fd.
 */
int uu_fixed_fd_install_prep(struct uu_req *req)
{
	const struct io_uring_sqe *sqe = &req->sqe;
	uint32_t flags;

	if (sqe->off || sqe->addr || sqe->len || sqe->buf_index ||
	    sqe->splice_fd_in || sqe->addr3)
		return -EINVAL;
	if (!(req->flags & UU_REQ_FIXED_FILE))
		return -EBADF;
	flags = sqe->install_fd_flags;
	if (flags & ~IORING_FIXED_FD_NO_CLOEXEC)
		return -EINVAL;
	if (req->cred)
		return -EPERM;
	uu_cmd(req, fd_install)->dup_cmd = flags & IORING_FIXED_FD_NO_CLOEXEC ?
					     F_DUPFD : F_DUPFD_CLOEXEC;
	return 0;
}

/* the slot was resolved to the engine's fd at issue: a dup of it is the
 * same open file description, at the lowest free number (receive_fd) */
int uu_fixed_fd_install_issue(struct uu_req *req, unsigned int issue_flags)
{
	int fd;

	(void)issue_flags;
	fd = fcntl(req->fd, uu_cmd(req, fd_install)->dup_cmd, 0);
	return fd < 0 ? -errno : fd;
}

/* An io_uring instance, the kernel's or ours: CLOSE refuses those, and
 * the file table does not take them (rsrc.c). */
bool uu_is_ring_fd(int fd, const struct stat *st)
{
	if (S_ISSOCK(st->st_mode)) {
		int err;
		struct uu_ring *r = uu_ring_get(fd, &err);

		if (r)
			uu_ring_put(r);
		return r != NULL;
	}
	if ((st->st_mode & S_IFMT) == 0) {
		/* anonymous inode: eventfd, epoll ... or a kernel ring */
		static const char want[] = "anon_inode:[io_uring]";
		char p[64], l[sizeof(want) + 1];
		ssize_t n;

		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		n = readlink(p, l, sizeof(l));
		return n == (ssize_t)sizeof(want) - 1 &&
		       !memcmp(l, want, sizeof(want) - 1);
	}
	return false;
}

int uu_close_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_close_cmd *close_st = uu_cmd(req, close);
	int fd = close_st->fd;
	struct stat st;

	(void)issue_flags;
	if (close_st->file_slot)
		return uu_fixed_remove(req->ring, close_st->file_slot);
	if (fd < 0 || fstat(fd, &st) || uu_is_ring_fd(fd, &st))
		return -EBADF;
	return uu_sys_close(fd);
}

/* ---- PIPE ---- */

int uu_pipe_prep(struct uu_req *req)
{
	struct uu_pipe_cmd *pipe_st = uu_cmd(req, pipe);
	const struct io_uring_sqe *sqe = &req->sqe;

	if (sqe->fd || sqe->off || sqe->addr3)
		return -EINVAL;
	pipe_st->ufds = sqe->addr;
	pipe_st->flags = (int)sqe->pipe_flags;
	if (pipe_st->flags &
	    ~(O_CLOEXEC | O_NONBLOCK | O_DIRECT | O_NOTIFICATION_PIPE))
		return -EINVAL;
	pipe_st->file_slot = sqe->file_index;
	return 0;
}

/*
 * The kernel's io_pipe_fixed: the read end goes to the given slot (or a
 * free one), the write end to the next slot (or another free one); the
 * fds array receives the two 0-based slots.  A failure, the array's copy
 * included, leaves neither end in the table (a slot the read end replaced
 * stays empty, as on the kernel).
 */
static int pipe_fixed(struct uu_req *req, int fds[2])
{
	struct uu_pipe_cmd *pipe_st = uu_cmd(req, pipe);
	uint32_t slot = pipe_st->file_slot;
	bool alloc = slot == IORING_FILE_INDEX_ALLOC;
	int idx[2] = { -1, -1 }, ret;

	/* the table owns (or has closed) each fd once it is offered */
	ret = uu_fixed_install(req->ring, fds[0], slot);
	if (ret < 0) {
		uu_sys_close(fds[1]);
		return ret;
	}
	idx[0] = alloc ? ret : (int)slot - 1;
	if (!alloc)
		slot++;
	ret = uu_fixed_install(req->ring, fds[1], slot);
	if (ret < 0)
		goto err;
	idx[1] = alloc ? ret : (int)slot - 1;
	if (!uu_copy_to_user((void *)(uintptr_t)pipe_st->ufds, idx,
			     sizeof(idx)))
		return 0;
	ret = -EFAULT;
err:
	for (int i = 0; i < 2; i++)
		if (idx[i] >= 0)
			uu_fixed_remove(req->ring, (uint32_t)idx[i] + 1);
	return ret;
}

int uu_pipe_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_pipe_cmd *pipe_st = uu_cmd(req, pipe);
	int fds[2];

	(void)issue_flags;
	if (pipe_st->file_slot) {
		if (pipe_st->flags & O_CLOEXEC)
			return -EINVAL;
		if (pipe2(fds, pipe_st->flags | O_CLOEXEC))
			return -errno;
		return pipe_fixed(req, fds);
	}
	/* pipe2 writes the two fds itself: a bad address gives EFAULT and
	 * leaves no fd behind, as the kernel's io_pipe does */
	if (syscall(SYS_pipe2, (int *)(uintptr_t)pipe_st->ufds,
		    pipe_st->flags))
		return -errno;
	return 0;
}
