// SPDX-License-Identifier: MIT
/*
 * Path and file-metadata opcodes: STATX, RENAMEAT, UNLINKAT, MKDIRAT,
 * SYMLINKAT, LINKAT, and the fd-range opcodes FALLOCATE, FADVISE, MADVISE,
 * FTRUNCATE, SYNC_FILE_RANGE; plus the helpers every file-family opcode
 * shares (fault-safe path import, ownership of prep's heap blocks).
 *
 * Each opcode issues the system call of the same name, so the kernel does
 * the work, the permission checks and the late validation (flags the
 * io_uring prep does not look at) exactly as for the io_uring request.
 * Paths are imported at prep, like the kernel's getname() (T2).
 *
 * Where they run: the kernel forces all of these to io-wq.  Path lookups
 * and xattr/stat calls are short on a local file system and run inline in
 * the submitting thread, like the page-cache reads of ops/rw.c; the calls
 * that may block on the device or for long (fallocate, sync_file_range,
 * ftruncate, madvise, and fadvise other than NORMAL/RANDOM/SEQUENTIAL,
 * which the kernel runs inline too) go to io-wq.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/types.h"
#include "ops/fs.h"
#include "ops/ops.h"
#include "ops/opstate.h"
#include "util/usercopy.h"

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif
#ifndef AT_REMOVEDIR
#define AT_REMOVEDIR 0x200
#endif

/* ---- helpers ---- */

ssize_t uu_strncpy_user(char *dst, uint64_t uptr, size_t max)
{
	size_t done = 0;

	/* chunks never cross a 4 KiB boundary, so a chunk is either wholly
	 * readable or not: a fault after the NUL is not reported */
	while (done < max) {
		uint64_t a = uptr + done;
		size_t chunk = 4096 - (size_t)(a & 4095);
		char *z;

		if (chunk > max - done)
			chunk = max - done;
		if (a < uptr || uu_copy_from_user(dst + done,
						  (const void *)(uintptr_t)a,
						  chunk))
			return -EFAULT;
		z = memchr(dst + done, 0, chunk);
		if (z)
			return z - dst;
		done += chunk;
	}
	return -ENAMETOOLONG;
}

int uu_getname(uint64_t uptr, bool allow_empty, size_t prefix, char **out)
{
	char *buf = malloc(prefix + PATH_MAX), *shrunk;
	ssize_t len;

	*out = NULL;
	if (!buf)
		return -ENOMEM;
	len = uu_strncpy_user(buf + prefix, uptr, PATH_MAX);
	if (len < 0 || (len == 0 && !allow_empty)) {
		free(buf);
		return len < 0 ? (int)len : -ENOENT;
	}
	shrunk = realloc(buf, prefix + (size_t)len + 1);
	*out = shrunk ? shrunk : buf;
	return 0;
}

uint64_t uu_os_tag(const struct uu_req *req)
{
	uint64_t w[sizeof(req->sqe) / 8], h = 0x9e3779b97f4a7c15ULL;

	memcpy(w, &req->sqe, sizeof(w));
	for (size_t i = 0; i < sizeof(w) / 8; i++) {
		h ^= w[i];
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	return h | 1; /* never 0 */
}

void uu_os_init(struct uu_req *req)
{
	uu_os_hdr(req)->mem = uu_os_hdr(req)->mem2 = NULL;
	uu_os_hdr(req)->issued = false;
	uu_os_hdr(req)->tag = uu_os_tag(req);
}

void uu_os_take(struct uu_req *req, void *mem, void *mem2)
{
	uu_os_hdr(req)->mem = mem;
	uu_os_hdr(req)->mem2 = mem2;
}

/*
 * The tag guards against running cleanup on a state prep did not fill (a
 * request whose prep never ran, its union holding an older request's
 * state, stack garbage, or blocks another request owns): it must match
 * this request's SQE.  A prep that fails frees what it allocated itself
 * (uu_os_drop).
 */
static bool os_mine(struct uu_req *req)
{
	return uu_os_hdr(req)->tag == uu_os_tag(req);
}

void uu_os_drop(struct uu_req *req)
{
	free(uu_os_hdr(req)->mem);
	free(uu_os_hdr(req)->mem2);
	uu_os_hdr(req)->mem = uu_os_hdr(req)->mem2 = NULL;
}

void uu_os_release(struct uu_req *req)
{
	struct uu_os_hdr *h = uu_os_hdr(req);

	if ((h->mem || h->mem2) && os_mine(req))
		uu_os_drop(req);
	h->mem = h->mem2 = NULL;
	h->issued = false;
	h->tag = 0;
}

/*
 * The kernel's statx, path, sync, truncate, madvise and xattr opcodes set
 * the CQE result without marking the request failed (no req_set_fail), so
 * their errors neither break a link chain nor defeat CQE_SKIP_SUCCESS.
 * The core marks every negative result failed; cleanup runs before the
 * CQE is posted and before the chain continues, so it undoes that here
 * for a result the opcode produced itself (not a prep error or a
 * cancellation).
 */
void uu_os_release_nofail(struct uu_req *req)
{
	if (uu_os_hdr(req)->issued && req->res < 0 &&
	    (req->flags & UU_REQ_FAIL) && os_mine(req)) {
		req->flags &= ~UU_REQ_FAIL;
		if (req->flags & UU_REQ_SKIP_LINK_CQES) {
			req->flags &= ~UU_REQ_SKIP_LINK_CQES;
			req->flags |= UU_REQ_CQE_SKIP;
		}
	}
	uu_os_release(req);
}

static inline int sys_ret(long ret)
{
	return ret < 0 ? -errno : (int)ret;
}

/* a final result produced by the opcode (see uu_os_release_nofail) */
static inline int done(struct uu_req *req, int res)
{
	uu_os_hdr(req)->issued = true;
	return res;
}

static inline int sys_done(struct uu_req *req, long ret)
{
	return done(req, sys_ret(ret));
}

/* Imports one or two paths into uu_os_hdr(req)-> */
static int get_paths(struct uu_req *req, uint64_t p1, bool empty1,
		     uint64_t p2, bool two)
{
	char *a, *b = NULL;
	int ret;

	ret = uu_getname(p1, empty1, 0, &a);
	if (ret)
		return ret;
	if (two) {
		ret = uu_getname(p2, false, 0, &b);
		if (ret) {
			free(a);
			return ret;
		}
	}
	uu_os_take(req, a, b);
	return 0;
}

/* ---- STATX ---- */

int uu_statx_prep(struct uu_req *req)
{
	struct uu_statx_cmd *statx_st = uu_cmd(req, statx);
	const struct io_uring_sqe *sqe = &req->sqe;

	uu_os_init(req);
	if (sqe->buf_index || sqe->splice_fd_in)
		return -EINVAL;
	if (req->flags & UU_REQ_FIXED_FILE)
		return -EBADF;
	statx_st->dfd = sqe->fd;
	statx_st->mask = sqe->len;
	statx_st->ubuf = sqe->addr2;
	statx_st->flags = (int)sqe->statx_flags;
	return get_paths(req, sqe->addr,
			 statx_st->flags & AT_EMPTY_PATH, 0, false);
}

int uu_statx_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_statx_cmd *statx_st = uu_cmd(req, statx);

	(void)issue_flags;
	return sys_done(req, syscall(SYS_statx, statx_st->dfd,
			       (const char *)uu_os_hdr(req)->mem,
			       statx_st->flags, statx_st->mask,
			       (void *)(uintptr_t)statx_st->ubuf));
}

/* ---- RENAMEAT, UNLINKAT, MKDIRAT, SYMLINKAT, LINKAT ---- */

int uu_renameat_prep(struct uu_req *req)
{
	struct uu_path_cmd *path_st = uu_cmd(req, path);
	const struct io_uring_sqe *sqe = &req->sqe;

	uu_os_init(req);
	if (sqe->buf_index || sqe->splice_fd_in)
		return -EINVAL;
	if (req->flags & UU_REQ_FIXED_FILE)
		return -EBADF;
	path_st->old_dfd = sqe->fd;
	path_st->new_dfd = (int)sqe->len;
	path_st->flags = (int)sqe->rename_flags;
	return get_paths(req, sqe->addr, false, sqe->addr2, true);
}

int uu_renameat_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_path_cmd *path_st = uu_cmd(req, path);

	(void)issue_flags;
	return sys_done(req, syscall(SYS_renameat2, path_st->old_dfd,
			       (const char *)uu_os_hdr(req)->mem,
			       path_st->new_dfd,
			       (const char *)uu_os_hdr(req)->mem2,
			       (unsigned int)path_st->flags));
}

int uu_unlinkat_prep(struct uu_req *req)
{
	struct uu_path_cmd *path_st = uu_cmd(req, path);
	const struct io_uring_sqe *sqe = &req->sqe;

	uu_os_init(req);
	if (sqe->off || sqe->len || sqe->buf_index || sqe->splice_fd_in)
		return -EINVAL;
	if (req->flags & UU_REQ_FIXED_FILE)
		return -EBADF;
	path_st->old_dfd = sqe->fd;
	path_st->flags = (int)sqe->unlink_flags;
	if (path_st->flags & ~AT_REMOVEDIR)
		return -EINVAL;
	return get_paths(req, sqe->addr, false, 0, false);
}

int uu_unlinkat_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_path_cmd *path_st = uu_cmd(req, path);

	(void)issue_flags;
	return sys_done(req, syscall(SYS_unlinkat, path_st->old_dfd,
			       (const char *)uu_os_hdr(req)->mem,
			       path_st->flags));
}

int uu_mkdirat_prep(struct uu_req *req)
{
	struct uu_path_cmd *path_st = uu_cmd(req, path);
	const struct io_uring_sqe *sqe = &req->sqe;

	uu_os_init(req);
	if (sqe->off || sqe->rw_flags || sqe->buf_index || sqe->splice_fd_in)
		return -EINVAL;
	if (req->flags & UU_REQ_FIXED_FILE)
		return -EBADF;
	path_st->old_dfd = sqe->fd;
	path_st->flags = (int)(uint16_t)sqe->len; /* umode_t */
	return get_paths(req, sqe->addr, false, 0, false);
}

int uu_mkdirat_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_path_cmd *path_st = uu_cmd(req, path);

	(void)issue_flags;
	return sys_done(req, syscall(SYS_mkdirat, path_st->old_dfd,
			       (const char *)uu_os_hdr(req)->mem,
			       (unsigned int)path_st->flags));
}

int uu_symlinkat_prep(struct uu_req *req)
{
	const struct io_uring_sqe *sqe = &req->sqe;

	uu_os_init(req);
	if (sqe->len || sqe->rw_flags || sqe->buf_index || sqe->splice_fd_in)
		return -EINVAL;
	if (req->flags & UU_REQ_FIXED_FILE)
		return -EBADF;
	uu_cmd(req, path)->new_dfd = sqe->fd;
	return get_paths(req, sqe->addr, false, sqe->addr2, true);
}

int uu_symlinkat_issue(struct uu_req *req, unsigned int issue_flags)
{
	(void)issue_flags;
	return sys_done(req, syscall(SYS_symlinkat, (const char *)uu_os_hdr(req)->mem,
			       uu_cmd(req, path)->new_dfd,
			       (const char *)uu_os_hdr(req)->mem2));
}

int uu_linkat_prep(struct uu_req *req)
{
	struct uu_path_cmd *path_st = uu_cmd(req, path);
	const struct io_uring_sqe *sqe = &req->sqe;

	uu_os_init(req);
	if (sqe->buf_index || sqe->splice_fd_in)
		return -EINVAL;
	if (req->flags & UU_REQ_FIXED_FILE)
		return -EBADF;
	path_st->old_dfd = sqe->fd;
	path_st->new_dfd = (int)sqe->len;
	path_st->flags = (int)sqe->hardlink_flags;
	return get_paths(req, sqe->addr, path_st->flags & AT_EMPTY_PATH,
			 sqe->addr2, true);
}

int uu_linkat_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_path_cmd *path_st = uu_cmd(req, path);

	(void)issue_flags;
	return sys_done(req, syscall(SYS_linkat, path_st->old_dfd,
			       (const char *)uu_os_hdr(req)->mem,
			       path_st->new_dfd,
			       (const char *)uu_os_hdr(req)->mem2,
			       path_st->flags));
}

/* ---- FALLOCATE, FADVISE, MADVISE, FTRUNCATE, SYNC_FILE_RANGE ---- */

/*
 * The kernel resolves req->fd before issue: a closed fd, or an O_PATH one
 * (fget refuses those), fails the request like any issue error, which the
 * opcode's own EBADF (fallocate on a read-only fd) does not.  A request
 * that went to io-wq holds a dup already (a closed fd failed there).
 */
int uu_file_check(struct uu_req *req)
{
	int fl;

	if (req->flags & UU_REQ_FIXED_FILE)
		return -EBADF; /* no registered files */
	fl = fcntl(req->fd, F_GETFL);
	if (fl < 0 || (fl & O_PATH))
		return -EBADF;
	return 0;
}

/*
 * fallocate, ftruncate and sync_file_range block: they run only in an
 * io-wq worker.  True when req may run now (in a worker, its file
 * checked); false with *ret set to what the issue returns (the punt, or
 * the file's error).
 */
static bool run_here_in_worker(struct uu_req *req, unsigned int issue_flags,
			       int *ret)
{
	if (!(issue_flags & UU_ISSUE_F_WORKER)) {
		if (req->flags & UU_REQ_FIXED_FILE)
			*ret = -EBADF;
		else
			*ret = uu_park(req, UU_ISSUE_PUNT);
		return false;
	}
	*ret = uu_file_check(req);
	return *ret == 0;
}

int uu_fallocate_prep(struct uu_req *req)
{
	struct uu_fsync_cmd *fsync_st = uu_cmd(req, fsync);
	const struct io_uring_sqe *sqe = &req->sqe;

	uu_os_init(req);
	if (sqe->buf_index || sqe->rw_flags || sqe->splice_fd_in)
		return -EINVAL;
	fsync_st->off = sqe->off;
	fsync_st->len = sqe->addr;
	fsync_st->mode = (int)sqe->len;
	return 0;
}

int uu_fallocate_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_fsync_cmd *fsync_st = uu_cmd(req, fsync);
	int ret;

	if (!run_here_in_worker(req, issue_flags, &ret))
		return ret;
	return sys_done(req, syscall(SYS_fallocate, req->fd,
				     fsync_st->mode,
				     (off_t)fsync_st->off,
				     (off_t)fsync_st->len));
}

/* 6.12+: a 64-bit length in addr, else the 32-bit one in len */
int uu_fadvise_prep(struct uu_req *req)
{
	struct uu_fsync_cmd *fsync_st = uu_cmd(req, fsync);
	const struct io_uring_sqe *sqe = &req->sqe;

	if (sqe->buf_index || sqe->splice_fd_in)
		return -EINVAL;
	fsync_st->off = sqe->off;
	fsync_st->len = sqe->addr ? sqe->addr : sqe->len;
	fsync_st->mode = (int)sqe->fadvise_advice;
	return 0;
}

int uu_fadvise_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_fsync_cmd *fsync_st = uu_cmd(req, fsync);
	int advice = fsync_st->mode;

	if (req->flags & UU_REQ_FIXED_FILE)
		return -EBADF;
	/* WILLNEED, DONTNEED, NOREUSE start or wait for I/O */
	if (advice != POSIX_FADV_NORMAL && advice != POSIX_FADV_RANDOM &&
	    advice != POSIX_FADV_SEQUENTIAL && !(issue_flags & UU_ISSUE_F_WORKER))
		return uu_park(req, UU_ISSUE_PUNT);
	/* every error fails the request here: no fd check needed */
	return sys_ret(syscall(SYS_fadvise64, req->fd, (off_t)fsync_st->off,
			       (off_t)fsync_st->len, advice));
}

/* 6.12+: a 64-bit length in off, else the 32-bit one in len */
int uu_madvise_prep(struct uu_req *req)
{
	struct uu_fsync_cmd *fsync_st = uu_cmd(req, fsync);
	const struct io_uring_sqe *sqe = &req->sqe;

	uu_os_init(req);
	if (sqe->buf_index || sqe->splice_fd_in)
		return -EINVAL;
	fsync_st->off = sqe->addr;
	fsync_st->len = sqe->off ? sqe->off : sqe->len;
	fsync_st->mode = (int)sqe->fadvise_advice;
	return 0;
}

int uu_madvise_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_fsync_cmd *fsync_st = uu_cmd(req, fsync);

	if (!(issue_flags & UU_ISSUE_F_WORKER))
		return uu_park(req, UU_ISSUE_PUNT);
	return sys_done(req, syscall(SYS_madvise, (uintptr_t)fsync_st->off,
				     (size_t)fsync_st->len,
				     fsync_st->mode));
}

int uu_ftruncate_prep(struct uu_req *req)
{
	const struct io_uring_sqe *sqe = &req->sqe;

	uu_os_init(req);
	if (sqe->rw_flags || sqe->addr || sqe->len || sqe->buf_index ||
	    sqe->splice_fd_in || sqe->addr3)
		return -EINVAL;
	uu_cmd(req, fsync)->off = sqe->off;
	return 0;
}

int uu_ftruncate_issue(struct uu_req *req, unsigned int issue_flags)
{
	int ret;

	if (!run_here_in_worker(req, issue_flags, &ret))
		return ret;
	return sys_done(req, syscall(SYS_ftruncate, req->fd,
				     (off_t)uu_cmd(req, fsync)->off));
}

int uu_sfr_prep(struct uu_req *req)
{
	struct uu_fsync_cmd *fsync_st = uu_cmd(req, fsync);
	const struct io_uring_sqe *sqe = &req->sqe;

	uu_os_init(req);
	if (sqe->addr || sqe->buf_index || sqe->splice_fd_in)
		return -EINVAL;
	fsync_st->off = sqe->off;
	fsync_st->len = sqe->len;
	fsync_st->mode = (int)sqe->sync_range_flags;
	return 0;
}

/* sync_file_range waits for the device: always a worker */
int uu_sfr_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_fsync_cmd *fsync_st = uu_cmd(req, fsync);
	int ret;

	if (!run_here_in_worker(req, issue_flags, &ret))
		return ret;
	return sys_done(req, syscall(SYS_sync_file_range, req->fd,
				     (off_t)fsync_st->off,
				     (off_t)fsync_st->len,
				     (unsigned int)fsync_st->mode));
}
