// SPDX-License-Identifier: MIT
/*
 * (Past 800 lines: every change of the table and of its nodes' lifetimes
 * stays in one file, as in the kernel's io_uring/rsrc.c.)
 *
 * Registered buffers: REGISTER_BUFFERS, BUFFERS2 (sparse, tags),
 * BUFFERS_UPDATE, UNREGISTER_BUFFERS, CLONE_BUFFERS, and a driver's
 * buffers (uu_rbuf_register_kbuf, the kernel's io_buffer_register_bvec:
 * the ublk driver's zero copy).  The opcodes that use them are in
 * ops/rwfixed.c.
 *
 * The kernel pins the pages of a registered buffer; user space cannot
 * (T3).  A registered buffer here is the address range the application
 * gave, checked at registration against what pin_user_pages(FOLL_WRITE |
 * FOLL_LONGTERM) accepts — read from /proc/self/maps: no holes, write
 * permission, no shared mapping of a file that needs dirty tracking
 * (ext4 and the like; tmpfs, hugetlbfs and ramfs are fine) — so that
 * registration fails exactly where the kernel's does.  I/O on it later is
 * plain I/O on that address range: after munmap or MADV_DONTNEED it faults
 * (-EFAULT) or reaches whatever is mapped there now, where the kernel
 * keeps using the pinned pages (docs/compatibility.md).
 *
 * Lifetimes follow the kernel's io_rsrc_node: each table slot holds a node
 * with one reference for the table and one per request using it; the
 * tag CQE is posted when the last reference goes, so a buffer replaced or
 * unregistered while a READ_FIXED is parked tags after that read's CQE.
 * Clones share the buffer (struct uu_rbuf), not the node, so tags stay
 * with the ring that set them.
 *
 * Table changes run under the ring's uring_lock and files_lock (the
 * caller, core/register.c); lookups take files_lock only.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/buffers.h"
#include "core/cq_post.h"
#include "core/register.h"
#include "core/registry.h"
#include "core/req.h"
#include "core/types.h"
#include "core/xproc.h"
#include "ops/kbuf.h"
#include "util/usercopy.h"

#define UU_MAX_REG_BUFFERS (1U << 14)
#define UU_REG_BUF_MAX_LEN (1ULL << 30)
#define UU_PAGE 4096ULL

#define TMPFS_MAGIC_ 0x01021994
#define HUGETLBFS_MAGIC_ 0x958458f6
#define RAMFS_MAGIC_ 0x858458f6

/* ---- what pinning would accept (/proc/self/maps) ---- */

struct uu_vma {
	uint64_t start, end;
	bool write, shared;
	unsigned int dev_major;
	unsigned long inode;
	const char *path;  /* "" for anonymous memory */
	int8_t file_ok;    /* shared file mapping: -1 unknown, 0 no, 1 yes */
};

struct uu_vmas {
	char *text;
	struct uu_vma *v;
	size_t nr;
};

void uu_vmas_free(struct uu_vmas *v)
{
	if (!v)
		return;
	free(v->text);
	free(v->v);
	free(v);
}

static char *read_maps(void)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				close(fd);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

struct uu_vmas *uu_vmas_read(void)
{
	struct uu_vmas *vs = calloc(1, sizeof(*vs));
	size_t cap = 0;
	char *line;

	if (!vs)
		return NULL;
	vs->text = read_maps();
	if (!vs->text) {
		free(vs);
		return NULL;
	}
	for (line = vs->text; *line;) {
		char *nl = strchr(line, '\n'), *p = line, perms[5] = "";
		unsigned long long s, e, off;
		unsigned int maj, min;
		unsigned long ino;
		int n = 0;

		if (nl)
			*nl = '\0';
		if (sscanf(p, "%llx-%llx %4s %llx %x:%x %lu %n", &s, &e, perms,
			   &off, &maj, &min, &ino, &n) >= 7) {
			struct uu_vma *v;

			if (vs->nr == cap) {
				size_t nc = cap ? cap * 2 : 256;
				struct uu_vma *nv = realloc(vs->v, nc * sizeof(*nv));

				if (!nv) {
					uu_vmas_free(vs);
					return NULL;
				}
				vs->v = nv;
				cap = nc;
			}
			v = &vs->v[vs->nr++];
			v->start = s;
			v->end = e;
			v->write = perms[1] == 'w';
			v->shared = perms[3] == 's';
			v->dev_major = maj;
			v->inode = ino;
			v->path = n ? p + n : "";
			v->file_ok = -1;
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	return vs;
}

static bool shmem_like_fs(long type)
{
	return type == TMPFS_MAGIC_ || type == (long)HUGETLBFS_MAGIC_ ||
	       type == (long)RAMFS_MAGIC_;
}

/*
 * A shared mapping of a file: the kernel refuses FOLL_LONGTERM write pins
 * where the file needs dirty tracking (vma_needs_dirty_tracking): ordinary
 * filesystems.  shmem (tmpfs, memfd, MAP_SHARED|MAP_ANONYMOUS, /dev/zero,
 * SysV shm), hugetlbfs and ramfs have no writeback and are accepted.
 */
static bool shared_file_ok(const struct uu_vma *v)
{
	char p[80];
	struct statfs sf;
	struct stat st;
	size_t l;
	int fd;

	if (!strncmp(v->path, "/secretmem", 10))
		return false;
	if (!strncmp(v->path, "/memfd:", 7) || !strncmp(v->path, "/SYSV", 5) ||
	    !strncmp(v->path, "/dev/zero", 9))
		return true;
	snprintf(p, sizeof(p), "/proc/self/map_files/%llx-%llx",
		 (unsigned long long)v->start, (unsigned long long)v->end);
	fd = open(p, O_PATH | O_CLOEXEC);
	if (fd >= 0) {
		bool ok = !fstat(fd, &st) && S_ISREG(st.st_mode) &&
			  !fstatfs(fd, &sf) && shmem_like_fs((long)sf.f_type);

		close(fd);
		return ok;
	}
	/* map_files needs CAP_SYS_ADMIN: look the path up instead */
	l = strlen(v->path);
	if (l > 10 && !strcmp(v->path + l - 10, " (deleted)"))
		return v->dev_major == 0; /* tmpfs and other anonymous devices */
	if (!stat(v->path, &st) && S_ISREG(st.st_mode) &&
	    (unsigned long)st.st_ino == v->inode && !statfs(v->path, &sf))
		return shmem_like_fs((long)sf.f_type);
	return v->dev_major == 0;
}

int uu_vmas_check(struct uu_vmas *vs, uint64_t addr, uint64_t len)
{
	uint64_t end, cur;
	size_t i;

	if (__builtin_add_overflow(addr, len, &end) ||
	    __builtin_add_overflow(end, UU_PAGE - 1, &end))
		return -EOVERFLOW;
	end &= ~(UU_PAGE - 1);
	cur = addr & ~(UU_PAGE - 1);
	if (cur == end)
		return -EINVAL;
	if (!vs) {
		/* no /proc: at least holes and PROT_NONE, a byte per page */
		for (; cur < end; cur += UU_PAGE) {
			char b;
			uint64_t at = cur < addr ? addr : cur;

			if (uu_copy_from_user(&b, (const void *)(uintptr_t)at, 1))
				return -EFAULT;
		}
		return 0;
	}
	for (i = 0; i < vs->nr && vs->v[i].end <= cur; i++)
		;
	for (; cur < end; i++) {
		struct uu_vma *v;

		if (i == vs->nr || vs->v[i].start > cur)
			return -EFAULT; /* a hole */
		v = &vs->v[i];
		if (!v->write)
			return -EFAULT;
		if (v->shared && v->inode) {
			if (v->file_ok < 0)
				v->file_ok = shared_file_ok(v);
			if (!v->file_ok)
				return -EFAULT;
		}
		cur = v->end;
	}
	return 0;
}

/* ---- RLIMIT_MEMLOCK (the kernel charges rings without CAP_IPC_LOCK) ---- */

/* Charged pages of this process (the kernel's counter is per user). */
static atomic_ulong memlock_pages;

static bool has_ipc_lock(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d))
		return true; /* cannot tell: do not refuse */
	return d[CAP_IPC_LOCK / 32].effective & (1u << (CAP_IPC_LOCK % 32));
}

int uu_memlock_charge(uint64_t addr, uint64_t len, unsigned long *pages)
{
	unsigned long nr, cur, limit;
	struct rlimit rl;

	*pages = 0;
	if (has_ipc_lock())
		return 0;
	nr = (unsigned long)(((addr + len + UU_PAGE - 1) / UU_PAGE) -
			     addr / UU_PAGE);
	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		limit = ULONG_MAX;
	else
		limit = (unsigned long)(rl.rlim_cur / UU_PAGE);
	cur = atomic_load(&memlock_pages);
	do {
		if (cur + nr > limit || cur + nr < cur)
			return -ENOMEM;
	} while (!atomic_compare_exchange_weak(&memlock_pages, &cur, cur + nr));
	*pages = nr;
	return 0;
}

void uu_memlock_uncharge(unsigned long pages)
{
	if (pages)
		atomic_fetch_sub(&memlock_pages, pages);
}

/* ---- nodes ---- */

static void rbuf_put(struct uu_rbuf *b)
{
	if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
		return;
	uu_memlock_uncharge(b->acct_pages);
	if (b->release)
		b->release(b->priv);
	free(b);
}

/*
 * A tag CQE.  It goes through the completion path as a finished request,
 * after the batch being completed by this thread: so a request that held
 * the last reference to the node posts its own CQE first, as in the
 * kernel (io_free_batch_list puts the nodes after the CQEs are posted).
 * Outside a batch (a register call) it is posted at once.
 */
void uu_rsrc_post_tag(struct uu_ring *r, uint64_t tag)
{
	struct uu_req *req = calloc(1, sizeof(*req));

	if (!req) {
		uu_post_aux_cqe(r, tag, 0, 0);
		return;
	}
	req->ring = r;
	req->opcode = IORING_OP_NOP;
	req->user_data = tag;
	req->fd = -1;
	req->flags = UU_REQ_NOT_PARKED;
	uu_exec_finish_late(req);
}

void uu_rbuf_put(struct uu_rbuf_node *node)
{
	struct uu_ring *r = node->ring;
	uint64_t tag = node->tag;

	if (atomic_fetch_sub_explicit(&node->refs, 1, memory_order_acq_rel) != 1)
		return;
	rbuf_put(node->buf);
	free(node);
	if (tag)
		uu_rsrc_post_tag(r, tag);
}

struct uu_rbuf_node *uu_rbuf_get(struct uu_ring *r, unsigned int idx)
{
	struct uu_rbuf_node *node = NULL;

	pthread_mutex_lock(&r->files_lock);
	if (idx < r->nr_bufs && (node = r->bufs[idx]))
		atomic_fetch_add_explicit(&node->refs, 1, memory_order_relaxed);
	pthread_mutex_unlock(&r->files_lock);
	return node;
}

static struct uu_rbuf_node *node_new(struct uu_ring *r, struct uu_rbuf *b)
{
	struct uu_rbuf_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	atomic_init(&n->refs, 1);
	n->ring = r;
	n->buf = b;
	atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
	return n;
}

/* io_buffer_validate */
static int validate_iov(const struct iovec *iov)
{
	uint64_t base = (uintptr_t)iov->iov_base, tmp;

	if (!base)
		return iov->iov_len ? -EFAULT : 0;
	if (!iov->iov_len || iov->iov_len > UU_REG_BUF_MAX_LEN)
		return -EFAULT;
	if (__builtin_add_overflow(base, (uint64_t)iov->iov_len + UU_PAGE - 1,
				   &tmp))
		return -EOVERFLOW;
	return 0;
}

/* The node for one application iovec (NULL for an empty slot), in *out. */
static int import_buffer(struct uu_ring *r, struct uu_vmas **vs,
			 const struct iovec *iov, struct uu_rbuf_node **out)
{
	uint64_t base = (uintptr_t)iov->iov_base;
	struct uu_rbuf *b;
	int ret;

	*out = NULL;
	if (!base)
		return 0;
	if (!*vs)
		*vs = uu_vmas_read();
	ret = uu_vmas_check(*vs, base, iov->iov_len);
	if (ret)
		return ret;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	ret = uu_memlock_charge(base, iov->iov_len, &b->acct_pages);
	if (ret) {
		free(b);
		return ret;
	}
	b->addr = base;
	b->len = iov->iov_len;
	*out = node_new(r, b);
	if (!*out) {
		uu_memlock_uncharge(b->acct_pages);
		free(b);
		return -ENOMEM;
	}
	return 0;
}

/* One iovec of an application array (iovec_from_user for one segment). */
static int copy_iov(uint64_t uaddr, struct iovec *iov)
{
	int ret = uu_copy_from_user(iov, (const void *)(uintptr_t)uaddr,
				    sizeof(*iov));

	if (ret)
		return ret;
	if ((ssize_t)iov->iov_len < 0)
		return -EINVAL;
	return 0;
}

/* The kernel's io_rsrc_data_free: slots put from the last one down. */
static void table_free(struct uu_rbuf_node **t, unsigned int nr, bool tags)
{
	while (nr--) {
		if (!t[nr])
			continue;
		if (!tags)
			t[nr]->tag = 0;
		uu_rbuf_put(t[nr]);
	}
	free(t);
}

/* uvec: user array of nr iovecs (0: all slots empty); utags or 0 */
static int register_buffers(struct uu_ring *r, uint64_t uvec, unsigned int nr,
			    uint64_t utags)
{
	struct uu_rbuf_node **t;
	struct uu_vmas *vs = NULL;
	unsigned int i;
	int ret = 0;

	if (r->nr_bufs)
		return -EBUSY;
	if (!nr || nr > UU_MAX_REG_BUFFERS)
		return -EINVAL;
	t = calloc(nr, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		struct iovec iov = { 0 };
		uint64_t tag = 0;

		if (uvec) {
			ret = copy_iov(uvec + (uint64_t)i * sizeof(iov), &iov);
			if (ret)
				break;
			ret = validate_iov(&iov);
			if (ret)
				break;
		}
		if (utags) {
			ret = uu_copy_from_user(&tag, (const void *)(uintptr_t)
						(utags + 8ULL * i), 8);
			if (ret)
				break;
		}
		ret = import_buffer(r, &vs, &iov, &t[i]);
		if (ret)
			break;
		if (tag) {
			if (!t[i]) {
				ret = -EINVAL;
				break;
			}
			t[i]->tag = tag;
		}
	}
	uu_vmas_free(vs);
	if (ret) {
		table_free(t, nr, false);
		return ret;
	}
	r->bufs = t;
	r->nr_bufs = nr;
	return 0;
}

static int unregister_buffers(struct uu_ring *r)
{
	struct uu_rbuf_node **t = r->bufs;
	unsigned int nr = r->nr_bufs;

	if (!nr)
		return -ENXIO;
	r->bufs = NULL;
	r->nr_bufs = 0;
	table_free(t, nr, true);
	return 0;
}

static int update_buffers(struct uu_ring *r, uint32_t off, uint64_t uvec,
			  uint64_t utags, unsigned int nr)
{
	struct uu_vmas *vs = NULL;
	unsigned int done;
	uint32_t tmp;
	int ret = 0;

	if (__builtin_add_overflow(off, nr, &tmp))
		return -EOVERFLOW;
	if (!r->nr_bufs)
		return -ENXIO;
	if (tmp > r->nr_bufs)
		return -EINVAL;
	for (done = 0; done < nr; done++) {
		struct uu_rbuf_node *node, *old;
		struct iovec iov;
		uint64_t tag = 0;

		ret = copy_iov(uvec + (uint64_t)done * sizeof(iov), &iov);
		if (ret)
			break;
		if (utags) {
			ret = uu_copy_from_user(&tag, (const void *)(uintptr_t)
						(utags + 8ULL * done), 8);
			if (ret)
				break;
		}
		ret = validate_iov(&iov);
		if (ret)
			break;
		ret = import_buffer(r, &vs, &iov, &node);
		if (ret)
			break;
		if (tag) {
			if (!node) {
				ret = -EINVAL;
				break;
			}
			node->tag = tag;
		}
		old = r->bufs[off + done];
		r->bufs[off + done] = node;
		if (old)
			uu_rbuf_put(old);
	}
	uu_vmas_free(vs);
	return done ? (int)done : ret;
}

/* ---- CLONE_BUFFERS ---- */

static void lock_pair(struct uu_ring *a, struct uu_ring *b, bool lock)
{
	struct uu_ring *lo = a < b ? a : b, *hi = a < b ? b : a;

	if (lock) {
		uu_shared_lock(lo->uring_lock);
		if (hi != lo)
			uu_shared_lock(hi->uring_lock);
		pthread_mutex_lock(&lo->files_lock);
		if (hi != lo)
			pthread_mutex_lock(&hi->files_lock);
	} else {
		if (hi != lo)
			pthread_mutex_unlock(&hi->files_lock);
		pthread_mutex_unlock(&lo->files_lock);
		if (hi != lo)
			pthread_mutex_unlock(hi->uring_lock);
		pthread_mutex_unlock(lo->uring_lock);
	}
}

/* io_clone_buffers: both rings locked */
static int clone_locked(struct uu_ring *dst, struct uu_ring *src,
			struct io_uring_clone_buffers *cb)
{
	struct uu_rbuf_node **t;
	unsigned int nbufs, nt, i, off, nr;
	uint32_t tmp;

	if (!cb->nr && (cb->dst_off || cb->src_off))
		return -EINVAL;
	if (dst->nr_bufs && !(cb->flags & IORING_REGISTER_DST_REPLACE))
		return -EBUSY;
	nbufs = src->nr_bufs;
	if (!cb->nr)
		cb->nr = nbufs;
	else if (cb->nr > nbufs || cb->nr > UU_MAX_REG_BUFFERS)
		return -EINVAL;
	if (__builtin_add_overflow(cb->nr, cb->dst_off, &tmp))
		return -EOVERFLOW;
	if (tmp > UU_MAX_REG_BUFFERS)
		return -EINVAL;
	nt = tmp > dst->nr_bufs ? tmp : dst->nr_bufs;
	t = calloc(nt ? nt : 1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	/* the destination's slots outside the cloned range stay (the same
	 * nodes, tags included) */
	for (i = 0; i < dst->nr_bufs; i++) {
		if (i >= cb->dst_off && i - cb->dst_off < cb->nr)
			continue;
		t[i] = dst->bufs[i];
		if (t[i])
			atomic_fetch_add(&t[i]->refs, 1);
	}
	if (!nbufs) {
		table_free(t, nt, true);
		return -ENXIO;
	}
	if (__builtin_add_overflow(cb->nr, cb->src_off, &tmp) || tmp > nbufs) {
		table_free(t, nt, true);
		return -EOVERFLOW;
	}
	for (off = cb->dst_off, i = cb->src_off, nr = cb->nr; nr--; i++, off++) {
		struct uu_rbuf_node *s = src->bufs[i];

		if (!s)
			continue;
		t[off] = node_new(dst, s->buf);
		if (!t[off]) {
			table_free(t, nt, true);
			return -ENOMEM;
		}
	}
	if (dst->nr_bufs)
		unregister_buffers(dst);
	dst->bufs = t;
	dst->nr_bufs = nt;
	return 0;
}

int uu_rsrc_buf_clone(struct uu_ring *r, void *arg, unsigned int nr_args)
{
	struct io_uring_clone_buffers cb;
	struct uu_ring *src;
	int ret, err;

	if (!arg || nr_args != 1)
		return -EINVAL;
	uu_shared_lock(r->uring_lock);
	ret = uu_copy_from_user(&cb, arg, sizeof(cb));
	if (!ret && (cb.flags & ~(IORING_REGISTER_SRC_REGISTERED |
				  IORING_REGISTER_DST_REPLACE)))
		ret = -EINVAL;
	if (!ret && !(cb.flags & IORING_REGISTER_DST_REPLACE) && r->nr_bufs)
		ret = -EBUSY;
	if (!ret && (cb.pad[0] || cb.pad[1] || cb.pad[2]))
		ret = -EINVAL;
	pthread_mutex_unlock(r->uring_lock);
	if (ret)
		return ret;
	if (cb.flags & IORING_REGISTER_SRC_REGISTERED)
		src = uu_regring_get(cb.src_fd, &err);
	else
		src = (int)cb.src_fd < 0 ? NULL : uu_ring_get((int)cb.src_fd, &err);
	if (!src)
		return (int)cb.src_fd < 0 &&
		       !(cb.flags & IORING_REGISTER_SRC_REGISTERED) ? -EBADF : err;
	if (uu_ring_use(src)) {
		uu_ring_put(src);
		return -EOPNOTSUPP;
	}
	lock_pair(r, src, true);
	ret = clone_locked(r, src, &cb);
	lock_pair(r, src, false);
	uu_ring_put(src);
	return ret;
}

/* ---- register dispatch ---- */

int uu_rsrc_buf_register(struct uu_ring *r, unsigned int opcode, void *arg,
			 unsigned int nr_args)
{
	switch (opcode) {
	case IORING_REGISTER_BUFFERS:
		if (!arg)
			return -EFAULT;
		return register_buffers(r, (uintptr_t)arg, nr_args, 0);
	case IORING_UNREGISTER_BUFFERS:
		if (arg || nr_args)
			return -EINVAL;
		return unregister_buffers(r);
	case IORING_REGISTER_BUFFERS2: {
		struct io_uring_rsrc_register rr;
		int ret;

		if (nr_args != sizeof(rr))
			return -EINVAL;
		ret = uu_copy_from_user(&rr, arg, sizeof(rr));
		if (ret)
			return ret;
		if (!rr.nr || rr.resv2 || (rr.flags & ~IORING_RSRC_REGISTER_SPARSE))
			return -EINVAL;
		if ((rr.flags & IORING_RSRC_REGISTER_SPARSE) && rr.data)
			return -EINVAL;
		return register_buffers(r, rr.data, rr.nr, rr.tags);
	}
	case IORING_REGISTER_BUFFERS_UPDATE: {
		struct io_uring_rsrc_update2 up;
		int ret;

		if (nr_args != sizeof(up))
			return -EINVAL;
		ret = uu_copy_from_user(&up, arg, sizeof(up));
		if (ret)
			return ret;
		if (!up.nr || up.resv || up.resv2)
			return -EINVAL;
		return update_buffers(r, up.offset, up.data, up.tags, up.nr);
	}
	case IORING_REGISTER_PBUF_RING:
	case IORING_UNREGISTER_PBUF_RING:
	case IORING_REGISTER_PBUF_STATUS:
		if (!arg || nr_args != 1)
			return -EINVAL;
		return uu_kbuf_register(r, opcode, arg, nr_args);
	default:
		return -EINVAL;
	}
}

int uu_rbuf_register_kbuf(struct uu_ring *r, unsigned int idx, uint8_t *kbase,
			  uint64_t len, uint8_t kdir,
			  void (*release)(void *priv), void *priv)
{
	struct uu_rbuf_node *node;
	struct uu_rbuf *b;
	int ret = 0;

	pthread_mutex_lock(&r->files_lock);
	if (idx >= r->nr_bufs) {
		ret = -EINVAL;
		goto out;
	}
	if (r->bufs[idx]) {
		ret = -EBUSY;
		goto out;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		ret = -ENOMEM;
		goto out;
	}
	b->len = len;
	b->kbase = kbase;
	b->kdir = kdir;
	b->release = release;
	b->priv = priv;
	node = node_new(r, b);
	if (!node) {
		free(b);
		ret = -ENOMEM;
		goto out;
	}
	r->bufs[idx] = node;
out:
	pthread_mutex_unlock(&r->files_lock);
	return ret;
}

int uu_rbuf_unregister_kbuf(struct uu_ring *r, unsigned int idx)
{
	struct uu_rbuf_node *node = NULL;
	int ret = 0;

	pthread_mutex_lock(&r->files_lock);
	if (idx >= r->nr_bufs || !(node = r->bufs[idx]))
		ret = -EINVAL;
	else if (!node->buf->kbase)
		ret = -EBUSY;
	else
		r->bufs[idx] = NULL;
	pthread_mutex_unlock(&r->files_lock);
	if (!ret)
		uu_rbuf_put(node);
	return ret;
}

void uu_rsrc_buf_free(struct uu_ring *r)
{
	if (r->bufs)
		table_free(r->bufs, r->nr_bufs, false);
	r->bufs = NULL;
	r->nr_bufs = 0;
	uu_kbuf_free(r);
}
