// SPDX-License-Identifier: MIT
/*
 * Registered resources: the fixed-file table (REGISTER_FILES, FILES2,
 * FILES_UPDATE(2), FILE_ALLOC_RANGE) and the CQ eventfd (REGISTER_EVENTFD,
 * EVENTFD_ASYNC).
 *
 * A registered file is an engine dup of the application's fd in the
 * reserved range (the kernel holds a struct file reference; T4): closing
 * the application's fd does not affect it.  Table changes happen under
 * the ring's uring_lock, like the kernel's, so an inline issue (also under
 * uring_lock) never sees a slot change under it; a request that parks
 * takes its own dup of the file (core/req.c), so replacing or
 * unregistering a slot cannot redirect it either.
 *
 * RSRC tags: the tag CQE of a replaced or unregistered file is posted
 * after the last request that resolved the file from its slot, as the
 * kernel's node put does (FEAT_RSRC_TAGS): a tagged slot carries a
 * reference count (struct uu_file_tag) that such requests hold until they
 * end.  The file itself is closed at once: parked users hold their own
 * dup, inline users run under uring_lock, which table changes take too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "core/buffers.h"
#include "core/memregion.h"
#include "core/rsrc.h"
#include "core/tctx.h"
#include "core/types.h"
#include "util/fdutil.h"
#include "util/rawsys.h"
#include "util/usercopy.h"

#define MAX_FIXED_FILES (1U << 20)

struct uu_file_tag {
	atomic_int refs;       /* the slot's + one per request using it */
	uint64_t tag;
	struct uu_ring *ring;
};

static void post_tag(struct uu_ring *r, uint64_t tag)
{
	if (tag)
		uu_rsrc_post_tag(r, tag);
}

void uu_file_tag_put(struct uu_file_tag *t)
{
	/* acq_rel: the last put sees every user's completion */
	if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1)
		return;
	post_tag(t->ring, t->tag);
	free(t);
}

/*
 * Slot changes.  The allocation hint follows the kernel's file bitmap: a
 * slot that becomes used moves it past that slot, a slot that becomes
 * empty moves it there; replacing a used slot through a direct install
 * leaves it alone, while an update empties the slot first (so it moves
 * twice).  Registration and FILE_ALLOC_RANGE set it to the range start.
 */
static void slot_fill(struct uu_ring *r, unsigned int i, int fd, uint64_t tag)
{
	struct uu_file_tag *t = NULL;

	if (tag && (t = malloc(sizeof(*t)))) {
		atomic_init(&t->refs, 1);
		t->tag = tag;
		t->ring = r;
	}
	/* without memory for the count the tag is posted at replacement */
	r->files[i].fd = fd;
	r->files[i].tag = tag;
	r->files[i].tagref = t;
}

/* empties slot i; true if it held a file (closed, its tag put) */
static bool slot_put(struct uu_ring *r, unsigned int i)
{
	if (r->files[i].fd < 0)
		return false;
	uu_sys_close(r->files[i].fd);
	if (r->files[i].tagref)
		uu_file_tag_put(r->files[i].tagref);
	else
		post_tag(r, r->files[i].tag);
	r->files[i].fd = -1;
	r->files[i].tag = 0;
	r->files[i].tagref = NULL;
	return true;
}

/* The fd the application names, as a registered file: a dup, or -errno.
 * A ring fd, uuring's or the kernel's, cannot be registered (the kernel
 * refuses io_uring files with -EBADF). */
static int import_fd(int fd)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st) || uu_is_ring_fd(fd, &st))
		return -EBADF;
	return uu_fd_dup_reserved(fd);
}

static void set_alloc_range(struct uu_ring *r, unsigned int off,
			    unsigned int len)
{
	r->alloc_start = off;
	r->alloc_end = off + len;
	r->alloc_hint = off;
}

/*
 * A free slot for IORING_FILE_INDEX_ALLOC, searched as the kernel's
 * bitmap search does: a hint outside the range is first moved to the
 * range start (the 6.18 stable fix: an update or close outside the range
 * must not lead the search there), then from the hint up to the range
 * end, then, unless the hint was the range start, from the range start
 * up to the old hint (which becomes the start).  -ENFILE without a table
 * or a free slot.
 */
static int slot_alloc(struct uu_ring *r)
{
	unsigned int end = r->alloc_end;

	if (!r->files)
		return -ENFILE;
	if (r->alloc_hint < r->alloc_start || r->alloc_hint >= r->alloc_end)
		r->alloc_hint = r->alloc_start;
	for (;;) {
		for (unsigned int i = r->alloc_hint; i < end; i++)
			if (r->files[i].fd < 0)
				return (int)i;
		if (r->alloc_hint == r->alloc_start)
			return -ENFILE;
		end = r->alloc_hint;
		r->alloc_hint = r->alloc_start;
	}
}

static int table_alloc(struct uu_ring *r, unsigned int nr)
{
	struct rlimit rl;

	if (!nr)
		return -EINVAL;
	if (nr > MAX_FIXED_FILES)
		return -EMFILE;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    nr > rl.rlim_cur)
		return -EMFILE;
	r->files = calloc(nr, sizeof(*r->files));
	if (!r->files)
		return -ENOMEM;
	for (unsigned int i = 0; i < nr; i++)
		r->files[i].fd = -1;
	r->nr_files = nr;
	return 0;
}

static void table_free(struct uu_ring *r)
{
	for (unsigned int i = 0; i < r->nr_files; i++)
		slot_put(r, i);
	free(r->files);
	r->files = NULL;
	r->nr_files = 0;
	set_alloc_range(r, 0, 0);
}

/*
 * fds: user array of nr ints, or NULL for an empty table; tags: user
 * array or 0.  Any failure drops what was taken without posting tags
 * and leaves no table.  The tag is read before the fd, as the kernel
 * does, and -1 (a hole) cannot carry a tag.
 */
static int register_files(struct uu_ring *r, const void *fds, uint64_t tags,
			  unsigned int nr)
{
	int ret;

	if (r->files)
		return -EBUSY;
	ret = table_alloc(r, nr);
	if (ret)
		return ret;
	for (unsigned int i = 0; i < nr; i++) {
		int32_t fd = -1;
		uint64_t tag = 0;

		if (tags) {
			ret = uu_copy_from_user(&tag, (const void *)(uintptr_t)(tags + 8 * (uint64_t)i), 8);
			if (ret)
				goto fail;
		}
		if (fds) {
			ret = uu_copy_from_user(&fd, (const char *)fds + 4 * (size_t)i, 4);
			if (ret)
				goto fail;
		}
		if (fd == -1) { /* a hole; FILES_SKIP is for updates only */
			if (tag) {
				ret = -EINVAL;
				goto fail;
			}
			continue;
		}
		ret = import_fd(fd);
		if (ret < 0)
			goto fail;
		slot_fill(r, i, ret, tag);
	}
	/* the whole table, hint at its start */
	set_alloc_range(r, 0, nr);
	return 0;
fail:
	for (unsigned int i = 0; i < r->nr_files; i++) {
		if (r->files[i].fd >= 0)
			uu_sys_close(r->files[i].fd);
		free(r->files[i].tagref);
	}
	free(r->files);
	r->files = NULL;
	r->nr_files = 0;
	set_alloc_range(r, 0, 0);
	return ret;
}

/*
 * FILES_UPDATE(2) and OP_FILES_UPDATE: entries are applied in order and
 * the count done is returned, or the error of the first entry.  As in the
 * kernel, an entry's slot is emptied before its fd is looked at: a bad fd
 * or a ring fd ends the update with that slot empty.  SKIP and -1 carrying
 * a tag fail before the slot is touched.
 */
static int update_files(struct uu_ring *r, unsigned int off, const void *fds,
			uint64_t tags, unsigned int nr)
{
	unsigned int done;
	int ret = 0;

	if (off + nr < off) /* __io_register_rsrc_update */
		return -EOVERFLOW;
	if (!r->files)
		return -ENXIO;
	if (off + nr > r->nr_files)
		return -EINVAL;
	for (done = 0; done < nr; done++) {
		int32_t fd;
		uint64_t tag = 0;
		unsigned int i = off + done;

		ret = 0;
		/* integer arithmetic: fds may be NULL (the copy then faults) */
		if (tags)
			ret = uu_copy_from_user(&tag, (const void *)(uintptr_t)
						(tags + 8 * (uint64_t)done), 8);
		if (!ret)
			ret = uu_copy_from_user(&fd, (const void *)
						((uintptr_t)fds + 4 * done), 4);
		if (ret)
			break;
		if ((fd == IORING_REGISTER_FILES_SKIP || fd == -1) && tag) {
			ret = -EINVAL;
			break;
		}
		if (fd == IORING_REGISTER_FILES_SKIP)
			continue;
		if (slot_put(r, i))
			r->alloc_hint = i;
		if (fd == -1)
			continue;
		ret = import_fd(fd);
		if (ret < 0)
			break;
		slot_fill(r, i, ret, tag);
		r->alloc_hint = i + 1;
		ret = 0;
	}
	return done ? (int)done : ret;
}

/* uu_do_register dispatches here (uring_lock held) */
/* (128 lines: one case per resource opcode of __io_uring_register's
 * switch, kept whole) */
int uu_rsrc_register(struct uu_ring *r, unsigned int opcode, void *arg,
		     unsigned int nr_args)
{
	switch (opcode) {
	case IORING_REGISTER_FILES:
		if (!arg)
			return -EFAULT;
		return register_files(r, arg, 0, nr_args);
	case IORING_UNREGISTER_FILES:
		if (arg || nr_args)
			return -EINVAL;
		if (!r->files)
			return -ENXIO;
		table_free(r);
		return 0;
	case IORING_REGISTER_FILES_UPDATE: {
		struct io_uring_files_update up;
		int ret;

		if (!nr_args)
			return -EINVAL;
		ret = uu_copy_from_user(&up, arg, sizeof(up));
		if (ret)
			return ret;
		if (up.resv)
			return -EINVAL;
		return update_files(r, up.offset, (const void *)(uintptr_t)up.fds,
				    0, nr_args);
	}
	case IORING_REGISTER_FILES2: {
		struct io_uring_rsrc_register rr;
		int ret;

		if (nr_args != sizeof(rr))
			return -EINVAL;
		ret = uu_copy_from_user(&rr, arg, sizeof(rr));
		if (ret)
			return ret;
		if (!rr.nr || rr.resv2 ||
		    (rr.flags & ~IORING_RSRC_REGISTER_SPARSE))
			return -EINVAL;
		/* SPARSE only forbids data; no data is an empty table with
		 * or without the flag, and its tags are still read */
		if ((rr.flags & IORING_RSRC_REGISTER_SPARSE) && rr.data)
			return -EINVAL;
		return register_files(r, (const void *)(uintptr_t)rr.data,
				      rr.tags, rr.nr);
	}
	case IORING_REGISTER_FILES_UPDATE2: {
		struct io_uring_rsrc_update2 up;
		int ret;

		if (nr_args != sizeof(up))
			return -EINVAL;
		ret = uu_copy_from_user(&up, arg, sizeof(up));
		if (ret)
			return ret;
		if (!up.nr || up.resv || up.resv2)
			return -EINVAL;
		return update_files(r, up.offset, (const void *)(uintptr_t)up.data,
				    up.tags, up.nr);
	}
	case IORING_REGISTER_FILE_ALLOC_RANGE: {
		struct io_uring_file_index_range range;
		uint32_t end;
		int ret;

		if (!arg || nr_args)
			return -EINVAL;
		ret = uu_copy_from_user(&range, arg, sizeof(range));
		if (ret)
			return ret;
		if (__builtin_add_overflow(range.off, range.len, &end))
			return -EOVERFLOW;
		/* no table needed: an empty range at 0 fits an empty one */
		if (range.resv || end > r->nr_files)
			return -EINVAL;
		set_alloc_range(r, range.off, range.len);
		return 0;
	}
	case IORING_REGISTER_EVENTFD:
	case IORING_REGISTER_EVENTFD_ASYNC: {
		int32_t fd;
		int ret, dup;

		if (nr_args != 1)
			return -EINVAL;
		if (atomic_load(&r->evfd) >= 0)
			return -EBUSY;
		ret = uu_copy_from_user(&fd, arg, sizeof(fd));
		if (ret)
			return ret;
		if (fd < 0 || fcntl(fd, F_GETFD) < 0)
			return -EBADF;
		{
			/* eventfd_ctx_fdget: anything but an eventfd is -EINVAL */
			char path[64], link[64] = "";
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			n = readlink(path, link, sizeof(link) - 1);
			if (n < 0 || strncmp(link, "anon_inode:[eventfd]", 20))
				return -EINVAL;
		}
		dup = uu_fd_dup_reserved(fd);
		if (dup < 0)
			return dup;
		r->evfd_async = opcode == IORING_REGISTER_EVENTFD_ASYNC;
		r->evfd_last_tail = atomic_load(r->cq_tail);
		atomic_store(&r->evfd_async_due, 0);
		atomic_store(&r->evfd, dup);
		return 0;
	}
	case IORING_UNREGISTER_EVENTFD: {
		int fd;

		if (arg || nr_args)
			return -EINVAL;
		fd = atomic_exchange(&r->evfd, -1);
		if (fd < 0)
			return -ENXIO;
		uu_sys_close(fd);
		return 0;
	}
	default:
		return -EINVAL;
	}
}

/*
 * The kernel signals the CQ eventfd with EPOLL_URING_WAKE, which turns a
 * multishot poll it wakes into a one-shot one (io_poll_wake), so a poll
 * on the ring's own eventfd cannot keep signalling itself.  The count,
 * bumped before the write, lets the readiness engine see that the ring
 * signalled (uu_poll_uring_wake).
 */
static void eventfd_write_ring(struct uu_ring *r, int fd, uint64_t n)
{
	/* release: pairs with the acquire in uu_poll_uring_wake, which
	 * runs after the write's readiness */
	atomic_fetch_add_explicit(&r->evfd_signals, 1, memory_order_release);
	if (write(fd, &n, sizeof(n)) < 0) {
		/* an eventfd at its maximum: the kernel drops it too */
	}
}

/*
 * The CQ eventfd (T17): signalled once per CQ commit that moved the tail,
 * unless the application set IORING_CQ_EVENTFD_DISABLED; with
 * EVENTFD_ASYNC only for completions posted by io-wq workers.  Called by
 * uu_cq_commit_locked with the completion lock held.
 */
void uu_eventfd_signal_locked(struct uu_ring *r, uint32_t tail)
{
	int fd = atomic_load_explicit(&r->evfd, memory_order_acquire);
	uint64_t one = 1;

	if (fd < 0 || tail == r->evfd_last_tail)
		return;
	r->evfd_last_tail = tail;
	if (r->evfd_async && !uu_tctx.iowq_worker) {
		/*
		 * On an SQPOLL ring the kernel's io-wq worker posts its
		 * completion itself (one commit each, which EVENTFD_ASYNC
		 * signals); here the SQ thread posts them: one count per
		 * such completion.  Acquire: pairs with the release in
		 * uu_req_finish_async.
		 */
		one = atomic_exchange_explicit(&r->evfd_async_due, 0,
					       memory_order_acquire);
		if (!one)
			return;
	}
	if (atomic_load_explicit(r->cq_flags, memory_order_relaxed) &
	    IORING_CQ_EVENTFD_DISABLED)
		return;
	eventfd_write_ring(r, fd, one);
}

/*
 * DEFER_TASKRUN: the ring's task_work queue became non-empty.  The kernel
 * signals the eventfd then (io_req_local_work_add), without the CQ-tail
 * check of a commit (the completions are posted only later, by the
 * submitter, whose own commit does not count for EVENTFD_ASYNC).
 */
void uu_eventfd_signal_tw(struct uu_ring *r)
{
	int fd = atomic_load_explicit(&r->evfd, memory_order_acquire);
	uint64_t one = 1;

	if (fd < 0 || (atomic_load_explicit(r->cq_flags, memory_order_relaxed) &
		       IORING_CQ_EVENTFD_DISABLED))
		return;
	if (r->evfd_async && !uu_tctx.iowq_worker)
		return;
	eventfd_write_ring(r, fd, one);
}

/* A fixed file of the ring as an fd for this request, or -EBADF.  The
 * caller holds uring_lock or dups the result before dropping it. */
/* The file in slot idx as the caller's own dup (in the reserved range),
 * which no later table change affects; -EBADF for an empty slot. */
/* slot idx's fd, -1 if none; with files_lock held */
static int slot_fd_locked(const struct uu_ring *r, unsigned int idx)
{
	return (r->files && idx < r->nr_files) ? r->files[idx].fd : -1;
}

int uu_fixed_file_dup(struct uu_ring *r, unsigned int idx)
{
	int fd;

	pthread_mutex_lock(&r->files_lock);
	fd = slot_fd_locked(r, idx);
	if (fd >= 0)
		fd = uu_fd_dup_reserved(fd);
	else
		fd = -EBADF;
	pthread_mutex_unlock(&r->files_lock);
	return fd;
}

int uu_fixed_file_ref(struct uu_ring *r, unsigned int idx,
		      struct uu_file_tag **tag)
{
	int fd;

	*tag = NULL;
	pthread_mutex_lock(&r->files_lock);
	fd = slot_fd_locked(r, idx);
	if (fd >= 0 && (*tag = r->files[idx].tagref))
		atomic_fetch_add_explicit(&(*tag)->refs, 1,
					  memory_order_relaxed);
	pthread_mutex_unlock(&r->files_lock);
	return fd >= 0 ? fd : -EBADF;
}

int uu_fixed_file(struct uu_ring *r, unsigned int idx)
{
	int fd;

	pthread_mutex_lock(&r->files_lock);
	fd = slot_fd_locked(r, idx);
	pthread_mutex_unlock(&r->files_lock);
	return fd >= 0 ? fd : -EBADF;
}

/*
 * A file opened for a direct descriptor (OPENAT/ACCEPT/SOCKET with
 * file_index): fd now belongs to the table.  file_slot is 1-based, or
 * IORING_FILE_INDEX_ALLOC.  Returns 0 (given slot), the allocated index,
 * or -errno with fd closed: -ENFILE (ALLOC with no table or no free slot
 * in the allocation range), -ENXIO (no table), -EINVAL (out of range).
 * A slot in use is replaced, as in the kernel.
 */
int uu_fixed_install(struct uu_ring *r, int fd, uint32_t file_slot)
{
	int ret;

	pthread_mutex_lock(&r->files_lock);
	if (file_slot == IORING_FILE_INDEX_ALLOC) {
		ret = slot_alloc(r);
	} else if (!r->files) {
		ret = -ENXIO;
	} else if (file_slot - 1 >= r->nr_files) {
		ret = -EINVAL;
	} else {
		ret = (int)(file_slot - 1);
	}
	if (ret >= 0) {
		int moved = uu_fd_dup_reserved(fd);

		if (moved < 0) {
			ret = moved;
		} else {
			/* replacing a used slot leaves the hint */
			if (!slot_put(r, (unsigned int)ret))
				r->alloc_hint = (unsigned int)ret + 1;
			slot_fill(r, (unsigned int)ret, moved, 0);
			if (file_slot != IORING_FILE_INDEX_ALLOC)
				ret = 0;
		}
	}
	pthread_mutex_unlock(&r->files_lock);
	uu_sys_close(fd);
	return ret;
}

/*
 * IORING_OP_FILES_UPDATE: REGISTER_FILES_UPDATE as an SQE (addr: the
 * array of fds, len: how many, off: the first slot), under files_lock
 * (an inline issue also holds uring_lock).  With off
 * IORING_FILE_INDEX_ALLOC each fd goes into a free slot of the
 * allocation range, whose index is written back into the array.  The
 * result is the count done, or the error that stopped the first one.
 */
int uu_files_update_prep(struct uu_req *req)
{
	struct uu_upd_cmd *upd_st = uu_cmd(req, upd);
	const struct io_uring_sqe *sqe = &req->sqe;

	if (req->flags & UU_REQ_FIXED_FILE)
		return -EINVAL;
	if (sqe->rw_flags || sqe->splice_fd_in)
		return -EINVAL;
	upd_st->offset = (uint32_t)sqe->off;
	upd_st->nr = sqe->len;
	if (!upd_st->nr)
		return -EINVAL;
	upd_st->arg = sqe->addr;
	return 0;
}

static int files_update_alloc(struct uu_req *req)
{
	struct uu_upd_cmd *upd_st = uu_cmd(req, upd);
	struct uu_ring *r = req->ring;
	int32_t *fds = (int32_t *)(uintptr_t)upd_st->arg;
	unsigned int done;
	int ret = 0;

	if (!r->files)
		return -ENXIO;
	for (done = 0; done < upd_st->nr; done++) {
		int32_t fd, slot;

		ret = uu_copy_from_user(&fd, &fds[done], sizeof(fd));
		if (ret)
			break;
		ret = import_fd(fd);
		if (ret < 0)
			break;
		/* takes the dup (closed on failure) */
		ret = uu_fixed_install(r, ret, IORING_FILE_INDEX_ALLOC);
		if (ret < 0)
			break;
		slot = ret;
		ret = uu_copy_to_user(&fds[done], &slot, sizeof(slot));
		if (ret) {
			uu_fixed_remove(r, (uint32_t)slot + 1);
			break;
		}
	}
	return done ? (int)done : ret;
}

int uu_files_update_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_upd_cmd *upd_st = uu_cmd(req, upd);
	struct uu_ring *r = req->ring;
	int ret;

	(void)issue_flags;
	if (upd_st->offset == IORING_FILE_INDEX_ALLOC)
		return files_update_alloc(req);
	pthread_mutex_lock(&r->files_lock);
	ret = update_files(r, upd_st->offset,
			   (const void *)(uintptr_t)upd_st->arg, 0,
			   upd_st->nr);
	pthread_mutex_unlock(&r->files_lock);
	return ret;
}

/* CLOSE of a direct descriptor (file_index, 1-based). */
int uu_fixed_remove(struct uu_ring *r, uint32_t file_slot)
{
	int ret = 0;

	pthread_mutex_lock(&r->files_lock);
	if (!r->files)
		ret = -ENXIO;
	else if (file_slot - 1 >= r->nr_files)
		ret = -EINVAL;
	else if (r->files[file_slot - 1].fd < 0)
		ret = -EBADF;
	else if (slot_put(r, file_slot - 1))
		r->alloc_hint = file_slot - 1;
	pthread_mutex_unlock(&r->files_lock);
	return ret;
}

void uu_rsrc_free(struct uu_ring *r)
{
	int fd = atomic_exchange(&r->evfd, -1);

	uu_rsrc_buf_free(r); /* registered and provided buffers */
	uu_mem_region_free(r); /* REGISTER_MEM_REGION */

	if (fd >= 0)
		uu_sys_close(fd);
	if (r->files) {
		/* no request is left (each held a ring reference): the
		 * slots' tag counts are theirs alone, and no CQE is posted
		 * to a ring being freed */
		for (unsigned int i = 0; i < r->nr_files; i++) {
			if (r->files[i].fd >= 0)
				uu_sys_close(r->files[i].fd);
			free(r->files[i].tagref);
		}
		free(r->files);
		r->files = NULL;
	}
}
