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
#include "core/internal.h"
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

/* the kernel's allocation hint: after the last slot set, at the last
 * slot cleared */
static void slot_set(struct uu_ring *r, unsigned int i, int fd, uint64_t tag)
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
	r->alloc_hint = i + 1;
}

static void slot_clear(struct uu_ring *r, unsigned int i)
{
	if (r->files[i].fd >= 0) {
		uu_sys_close(r->files[i].fd);
		if (r->files[i].tagref)
			uu_file_tag_put(r->files[i].tagref);
		else
			post_tag(r, r->files[i].tag);
		r->alloc_hint = i;
	}
	r->files[i].fd = -1;
	r->files[i].tag = 0;
	r->files[i].tagref = NULL;
}

/* The fd the application names, as a registered file: a dup, or -errno.
 * A ring fd cannot be registered (the kernel refuses io_uring files). */
static int import_fd(int fd)
{
	struct stat st;
	int err;

	struct uu_ring *ring;

	if (fd < 0 || fstat(fd, &st))
		return -EBADF;
	ring = uu_ring_get(fd, &err);
	if (ring) {
		uu_ring_put(ring);
		return -EBADF;
	}
	return uu_fd_dup_reserved(fd);
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
	r->alloc_start = 0;
	r->alloc_end = nr;
	r->alloc_hint = 0;
	return 0;
}

static void table_free(struct uu_ring *r)
{
	for (unsigned int i = 0; i < r->nr_files; i++)
		slot_clear(r, i);
	free(r->files);
	r->files = NULL;
	r->nr_files = 0;
}

/* fds: user array of nr ints (NULL with sparse), tags: user array or 0 */
static int register_files(struct uu_ring *r, const void *fds, uint64_t tags,
			  unsigned int nr)
{
	int ret;

	if (r->files)
		return -EBUSY;
	ret = table_alloc(r, nr);
	if (ret)
		return ret;
	for (unsigned int i = 0; fds && i < nr; i++) {
		int32_t fd;
		uint64_t tag = 0;

		ret = uu_copy_from_user(&fd, (const char *)fds + 4 * (size_t)i, 4);
		if (!ret && tags)
			ret = uu_copy_from_user(&tag, (const void *)(uintptr_t)(tags + 8 * (uint64_t)i), 8);
		if (ret)
			goto fail;
		if (fd == -1) { /* sparse; FILES_SKIP is for updates only */
			if (tag) {
				ret = -EINVAL; /* a tag needs a file */
				goto fail;
			}
			continue;
		}
		ret = import_fd(fd);
		if (ret < 0)
			goto fail;
		slot_set(r, i, ret, tag);
	}
	return 0;
fail:
	for (unsigned int i = 0; i < r->nr_files; i++) {
		if (r->files[i].fd >= 0)
			uu_sys_close(r->files[i].fd);
		r->files[i].fd = -1;
	}
	free(r->files);
	r->files = NULL;
	r->nr_files = 0;
	return ret;
}

static int update_files(struct uu_ring *r, unsigned int off, const void *fds,
			uint64_t tags, unsigned int nr)
{
	unsigned int done;
	int ret = 0;

	if (off + nr < off) /* __io_register_rsrc_update */
		return -EOVERFLOW;
	if (!r->files)
		return -ENXIO;
	if (off > r->nr_files || nr > r->nr_files - off)
		return -EINVAL;
	for (done = 0; done < nr; done++) {
		int32_t fd;
		uint64_t tag = 0;
		unsigned int i = off + done;

		ret = uu_copy_from_user(&fd, (const char *)fds + 4 * (size_t)done, 4);
		if (!ret && tags)
			ret = uu_copy_from_user(&tag, (const void *)(uintptr_t)(tags + 8 * (uint64_t)done), 8);
		if (ret)
			break;
		if (fd == IORING_REGISTER_FILES_SKIP)
			continue;
		if (fd == -1) {
			if (tag) {
				ret = -EINVAL;
				break;
			}
			slot_clear(r, i);
			continue;
		}
		ret = import_fd(fd);
		if (ret < 0)
			break;
		slot_clear(r, i);
		slot_set(r, i, ret, tag);
		ret = 0;
	}
	return done ? (int)done : ret;
}

/* uu_do_register dispatches here (uring_lock held) */
int uu_rsrc_register(struct uu_ring *r, unsigned int opcode, void *arg,
		     unsigned int nr_args)
{
	switch (opcode) {
	case IORING_REGISTER_FILES:
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
		if (rr.resv2 || (rr.flags & ~IORING_RSRC_REGISTER_SPARSE))
			return -EINVAL;
		if (rr.flags & IORING_RSRC_REGISTER_SPARSE) {
			if (rr.data || rr.tags)
				return -EINVAL;
			return register_files(r, NULL, 0, rr.nr);
		}
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
		if (up.resv || up.resv2)
			return -EINVAL;
		return update_files(r, up.offset, (const void *)(uintptr_t)up.data,
				    up.tags, up.nr);
	}
	case IORING_REGISTER_FILE_ALLOC_RANGE: {
		struct io_uring_file_index_range range;
		int ret;

		if (nr_args)
			return -EINVAL;
		ret = uu_copy_from_user(&range, arg, sizeof(range));
		if (ret)
			return ret;
		if (range.resv)
			return -EINVAL;
		if (!r->files)
			return -ENXIO;
		if (range.len > r->nr_files || range.off > r->nr_files - range.len)
			return -EINVAL;
		r->alloc_start = range.off;
		r->alloc_end = range.off + range.len;
		r->alloc_hint = range.off;
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
	if (r->evfd_async && !uu_in_iowq_worker) {
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
	if (write(fd, &one, sizeof(one)) < 0) {
		/* an eventfd at its maximum: the kernel drops it too */
	}
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
	if (r->evfd_async && !uu_in_iowq_worker)
		return;
	if (write(fd, &one, sizeof(one)) < 0) {
		/* an eventfd at its maximum: the kernel drops it too */
	}
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
		/* from the hint to the end of the range, then from its start */
		unsigned int from = r->alloc_hint, i;

		if (from < r->alloc_start || from >= r->alloc_end)
			from = r->alloc_start;
		ret = -ENFILE;
		for (i = 0; r->files && i < r->alloc_end - r->alloc_start; i++) {
			unsigned int j = from + i;

			if (j >= r->alloc_end)
				j -= r->alloc_end - r->alloc_start;
			if (r->files[j].fd < 0) {
				ret = (int)j;
				break;
			}
		}
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
			slot_clear(r, (unsigned int)ret);
			slot_set(r, (unsigned int)ret, moved, 0);
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
	const struct io_uring_sqe *sqe = &req->sqe;

	if (req->flags & UU_REQ_FIXED_FILE)
		return -EINVAL;
	if (sqe->rw_flags || sqe->splice_fd_in)
		return -EINVAL;
	req->upd.offset = (uint32_t)sqe->off;
	req->upd.nr = sqe->len;
	if (!req->upd.nr)
		return -EINVAL;
	req->upd.arg = sqe->addr;
	return 0;
}

static int files_update_alloc(struct uu_req *req)
{
	struct uu_ring *r = req->ring;
	int32_t *fds = (int32_t *)(uintptr_t)req->upd.arg;
	unsigned int done;
	int ret = 0;

	if (!r->files)
		return -ENXIO;
	for (done = 0; done < req->upd.nr; done++) {
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
	struct uu_ring *r = req->ring;
	int ret;

	(void)issue_flags;
	if (req->upd.offset == IORING_FILE_INDEX_ALLOC)
		return files_update_alloc(req);
	pthread_mutex_lock(&r->files_lock);
	ret = update_files(r, req->upd.offset,
			   (const void *)(uintptr_t)req->upd.arg, 0,
			   req->upd.nr);
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
	else
		slot_clear(r, file_slot - 1);
	pthread_mutex_unlock(&r->files_lock);
	return ret;
}

void uu_rsrc_free(struct uu_ring *r)
{
	int fd = atomic_exchange(&r->evfd, -1);

	uu_rsrc_buf_free(r); /* registered and provided buffers */

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
