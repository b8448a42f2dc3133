// SPDX-License-Identifier: MIT
/*
 * FGETXATTR, GETXATTR, FSETXATTR, SETXATTR.
 *
 * The name (and the path, and a set's value) are imported at prep as the
 * kernel does (T2); the value buffer of a get is written by the system
 * call at issue, as the kernel writes it at completion.  The calls are
 * short metadata operations and run inline (the kernel uses io-wq).  Their
 * errors do not fail a link chain (uu_os_release_nofail).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/types.h"
#include "ops/ops.h"
#include "ops/opstate.h"
#include "ops/xattr.h"
#include "util/usercopy.h"

#define UU_XATTR_SIZE_MAX 65536
#define UU_XATTR_CREATE 0x1
#define UU_XATTR_REPLACE 0x2

/* strncpy_from_user into the name buffer: "" and no NUL are -ERANGE */
static int get_name(char *dst, uint64_t uname)
{
	ssize_t n = uu_strncpy_user(dst, uname, UU_XATTR_NAME_LEN);

	if (n == 0 || n == -ENAMETOOLONG)
		return -ERANGE;
	return n < 0 ? (int)n : 0;
}

/* The name (and for the path variants, the path after it) in hdr.mem. */
static int prep_name_path(struct uu_req *req, bool with_path)
{
	const struct io_uring_sqe *sqe = &req->sqe;
	char *blk;
	int ret;

	blk = malloc(UU_XATTR_NAME_LEN);
	if (!blk)
		return -ENOMEM;
	ret = get_name(blk, sqe->addr);
	if (ret) {
		free(blk);
		return ret;
	}
	uu_os_take(req, blk, NULL);
	uu_cmd(req, xattr)->has_path = with_path;
	if (with_path) {
		char *both;

		/* getname_flags(LOOKUP_FOLLOW): "" is -ENOENT */
		ret = uu_getname(sqe->addr3, false, UU_XATTR_NAME_LEN, &both);
		if (ret) {
			uu_os_drop(req);
			return ret;
		}
		memcpy(both, blk, UU_XATTR_NAME_LEN);
		free(blk);
		uu_os_hdr(req)->mem = both;
	}
	return 0;
}

static int getxattr_prep(struct uu_req *req, bool with_path)
{
	struct uu_xattr_cmd *xattr_st = uu_cmd(req, xattr);
	const struct io_uring_sqe *sqe = &req->sqe;

	uu_os_init(req);
	/* the path variant refuses a fixed file; the fd one finds out when
	 * it resolves the file, at issue */
	if (with_path && (req->flags & UU_REQ_FIXED_FILE))
		return -EBADF;
	xattr_st->uvalue = sqe->addr2;
	xattr_st->size = sqe->len;
	xattr_st->flags = (int)sqe->xattr_flags;
	if (xattr_st->flags)
		return -EINVAL;
	return prep_name_path(req, with_path);
}

int uu_fgetxattr_prep(struct uu_req *req)
{
	return getxattr_prep(req, false);
}

int uu_getxattr_prep(struct uu_req *req)
{
	return getxattr_prep(req, true);
}

static inline int xattr_done(struct uu_req *req, long ret)
{
	uu_os_hdr(req)->issued = true;
	return ret < 0 ? -errno : (int)ret;
}

static inline const char *xname(struct uu_req *req)
{
	return uu_os_hdr(req)->mem;
}

static inline const char *xpath(struct uu_req *req)
{
	return (const char *)uu_os_hdr(req)->mem + UU_XATTR_NAME_LEN;
}

int uu_fgetxattr_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_xattr_cmd *xattr_st = uu_cmd(req, xattr);
	int ret = uu_file_check(req);

	(void)issue_flags;
	if (ret)
		return ret;
	return xattr_done(req, syscall(SYS_fgetxattr, req->fd, xname(req),
				       (void *)(uintptr_t)xattr_st->uvalue,
				       (size_t)xattr_st->size));
}

int uu_getxattr_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_xattr_cmd *xattr_st = uu_cmd(req, xattr);

	(void)issue_flags;
	return xattr_done(req, syscall(SYS_getxattr, xpath(req), xname(req),
				       (void *)(uintptr_t)xattr_st->uvalue,
				       (size_t)xattr_st->size));
}

/* setxattr_copy(): flags, name, then the value (copied here) */
static int setxattr_prep(struct uu_req *req, bool with_path)
{
	struct uu_xattr_cmd *xattr_st = uu_cmd(req, xattr);
	const struct io_uring_sqe *sqe = &req->sqe;
	uint32_t size = sqe->len;
	void *val = NULL;
	int ret;

	uu_os_init(req);
	if (with_path && (req->flags & UU_REQ_FIXED_FILE))
		return -EBADF;
	xattr_st->size = size;
	xattr_st->flags = (int)sqe->xattr_flags;
	if (xattr_st->flags & ~(UU_XATTR_CREATE | UU_XATTR_REPLACE))
		return -EINVAL;
	ret = prep_name_path(req, false);
	if (ret)
		return ret;
	if (size) {
		ret = -E2BIG;
		if (size > UU_XATTR_SIZE_MAX)
			goto fail;
		ret = -ENOMEM;
		val = malloc(size);
		if (!val)
			goto fail;
		uu_os_hdr(req)->mem2 = val;
		ret = uu_copy_from_user(val, (const void *)(uintptr_t)sqe->addr2,
					size);
		if (ret)
			goto fail;
	}
	if (!with_path)
		return 0;
	/* the path comes last, after the value */
	{
		char *both;

		xattr_st->has_path = true;
		ret = uu_getname(sqe->addr3, false, UU_XATTR_NAME_LEN, &both);
		if (ret)
			goto fail;
		memcpy(both, uu_os_hdr(req)->mem, UU_XATTR_NAME_LEN);
		free(uu_os_hdr(req)->mem);
		uu_os_hdr(req)->mem = both;
	}
	return 0;
fail:
	uu_os_drop(req);
	return ret;
}

int uu_fsetxattr_prep(struct uu_req *req)
{
	return setxattr_prep(req, false);
}

int uu_setxattr_prep(struct uu_req *req)
{
	return setxattr_prep(req, true);
}

int uu_fsetxattr_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_xattr_cmd *xattr_st = uu_cmd(req, xattr);
	int ret = uu_file_check(req);

	(void)issue_flags;
	if (ret)
		return ret;
	return xattr_done(req, syscall(SYS_fsetxattr, req->fd, xname(req),
				       uu_os_hdr(req)->mem2,
				       (size_t)xattr_st->size,
				       xattr_st->flags));
}

int uu_setxattr_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_xattr_cmd *xattr_st = uu_cmd(req, xattr);

	(void)issue_flags;
	return xattr_done(req, syscall(SYS_setxattr, xpath(req), xname(req),
				       uu_os_hdr(req)->mem2,
				       (size_t)xattr_st->size,
				       xattr_st->flags));
}
