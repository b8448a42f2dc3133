// SPDX-License-Identifier: MIT
/*
 * Provided buffers: PROVIDE_BUFFERS and REMOVE_BUFFERS (legacy groups, a
 * list of buffers in engine memory), REGISTER_PBUF_RING /
 * UNREGISTER_PBUF_RING (an application-allocated ring of struct
 * io_uring_buf, its tail written by the application, the head ours),
 * IOU_PBUF_RING_INC, REGISTER_PBUF_STATUS, and the selection of a buffer
 * for IOSQE_BUFFER_SELECT reads (several at once: ops/kbuf_multi.c).
 *
 * Selection follows the kernel's rules (kbuf.c, 6.18):
 *  - at issue, in the thread that issues; an empty or unknown group is
 *    -ENOBUFS;
 *  - a legacy buffer is taken off its list; if the request then waits for
 *    readiness it goes back to the head of the list, and is selected again
 *    when the read is retried;
 *  - a ring buffer is "committed" (the head moves) when the read
 *    completes, except in io-wq and for files that cannot be polled, where
 *    it is committed at selection and then stays with the request while it
 *    waits.  The kernel keeps uncommitted selections consistent with the
 *    ring's uring_lock; here the group lock is held from selection until
 *    the read attempt returns (a non-blocking attempt: only pollable files
 *    take this path);
 *  - the CQE carries IORING_CQE_F_BUFFER | bid << 16 whenever a buffer was
 *    selected, failures included; a failed read leaves an uncommitted ring
 *    buffer at the head (the kernel's io_kbuf_commit with len < 0).
 *
 * IOU_PBUF_RING_MMAP: the engine allocates the ring (shared anonymous
 * memory) and uuring_mmap at IORING_OFF_PBUF_RING | bgid << 16 gives the
 * application a second mapping of the same pages, as the ring mappings
 * are made (docs/architecture.md, "Mapping"); the application's mapping
 * stays valid after UNREGISTER_PBUF_RING, as in the kernel.
 *
 * An application-allocated ring lives in application memory.  The kernel
 * pins it; here every access goes through the fault-safe copy (T1), so a
 * ring the application unmapped gives -EFAULT instead of a signal.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/buffers.h"
#include "core/types.h"
#include "ops/kbuf.h"
#include "ops/kbuf_int.h"
#include "util/mapalias.h"
#include "util/usercopy.h"

#define MAX_BIDS_PER_BGID (1U << 16)
#define UU_PAGE 4096ULL
#define UU_TASK_SIZE_MAX ((1ULL << 47) - UU_PAGE)

struct uu_kbuf_ctx *uu_kb_ctx_get(struct uu_ring *r, bool create)
{
	struct uu_kbuf_ctx *c = atomic_load_explicit(&r->kbuf,
						     memory_order_acquire);
	struct uu_kbuf_ctx *expected = NULL;

	if (c || !create)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	if (!atomic_compare_exchange_strong(&r->kbuf, &expected, c)) {
		pthread_mutex_destroy(&c->lock);
		free(c);
		c = expected;
	}
	return c;
}

void uu_kbuf_adopt(struct uu_ring *r)
{
	struct uu_kbuf_ctx *c = uu_kb_ctx_get(r, false);

	/* a thread of the parent may have held it at the fork */
	if (c)
		pthread_mutex_init(&c->lock, NULL);
}

struct kb_group *uu_kb_group_find(struct uu_kbuf_ctx *c, uint16_t bgid)
{
	struct kb_group *g;

	for (g = c->hash[bgid % NR_HASH]; g; g = g->next)
		if (g->bgid == bgid)
			return g;
	return NULL;
}

static void group_add(struct uu_kbuf_ctx *c, struct kb_group *g)
{
	g->next = c->hash[g->bgid % NR_HASH];
	c->hash[g->bgid % NR_HASH] = g;
}

static void group_destroy(struct uu_kbuf_ctx *c, struct kb_group *g)
{
	struct kb_group **pp = &c->hash[g->bgid % NR_HASH];
	struct kb_buf *b, *next;

	while (*pp != g)
		pp = &(*pp)->next;
	*pp = g->next;
	for (b = g->head; b; b = next) {
		next = b->next;
		free(b);
	}
	if (g->region)
		munmap(g->region, g->region_size);
	free(g);
}

void uu_kbuf_free(struct uu_ring *r)
{
	struct uu_kbuf_ctx *c = atomic_exchange(&r->kbuf, NULL);

	if (!c)
		return;
	for (unsigned int i = 0; i < NR_HASH; i++)
		while (c->hash[i])
			group_destroy(c, c->hash[i]);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* ---- ring memory (the application's) ---- */

/*
 * A ring of our own (IOU_PBUF_RING_MMAP) cannot be unmapped under us: it
 * is read directly, with the acquire the tail needs.  An application's
 * ring goes through the fault-safe copy.
 */
int uu_kb_ring_tail(const struct kb_group *g, uint16_t *tail)
{
	if (g->region) {
		*tail = __atomic_load_n(&((struct io_uring_buf_ring *)
					  g->region)->tail, __ATOMIC_ACQUIRE);
		return 0;
	}
	return uu_copy_from_user(tail, (const void *)(uintptr_t)
				 (g->ring_addr + 14), sizeof(*tail));
}

int uu_kb_ring_entry(const struct kb_group *g, uint16_t idx,
		      struct io_uring_buf *b)
{
	const void *e = (const void *)(uintptr_t)
			(g->ring_addr + 16ULL * (idx & g->mask));

	if (g->region) {
		const struct io_uring_buf *rb = e;

		b->addr = __atomic_load_n(&rb->addr, __ATOMIC_RELAXED);
		b->len = __atomic_load_n(&rb->len, __ATOMIC_RELAXED);
		b->bid = __atomic_load_n(&rb->bid, __ATOMIC_RELAXED);
		b->resv = 0;
		return 0;
	}
	return uu_copy_from_user(b, e, sizeof(*b));
}

/* addr and len of entry idx (not bid/resv: resv of entry 0 is the tail) */
static void ring_entry_set(const struct kb_group *g, uint16_t idx,
			   uint64_t addr, uint32_t len)
{
	char *e = (char *)(uintptr_t)(g->ring_addr + 16ULL * (idx & g->mask));

	if (g->region) {
		struct io_uring_buf *rb = (struct io_uring_buf *)e;

		__atomic_store_n(&rb->addr, addr, __ATOMIC_RELAXED);
		__atomic_store_n(&rb->len, len, __ATOMIC_RELAXED);
		return;
	}
	/* a failure means the application unmapped its ring: nothing to do */
	(void)uu_copy_to_user(e, &addr, sizeof(addr));
	(void)uu_copy_to_user(e + 8, &len, sizeof(len));
}

/* io_kbuf_inc_commit: true when the buffer at the head was used up */
static bool ring_inc_commit(struct kb_group *g, int len)
{
	if (!len)
		return false;
	while (len) {
		struct io_uring_buf b;
		uint32_t this_len, left;

		if (uu_kb_ring_entry(g, g->rhead, &b))
			return true;
		this_len = (uint32_t)len < b.len ? (uint32_t)len : b.len;
		left = b.len - this_len;
		if (left || !this_len) {
			ring_entry_set(g, g->rhead, b.addr + this_len, left);
			return false;
		}
		ring_entry_set(g, g->rhead, b.addr, 0);
		g->rhead++;
		len -= (int)this_len;
	}
	return true;
}

/* io_kbuf_commit of nr buffers: true when they were used up */
bool uu_kb_ring_commit_n(struct kb_group *g, int len, unsigned int nr)
{
	if (len < 0)
		return true;
	if (g->inc)
		return ring_inc_commit(g, len);
	g->rhead = (uint16_t)(g->rhead + nr);
	return true;
}

static bool ring_commit(struct kb_group *g, int len)
{
	return uu_kb_ring_commit_n(g, len, 1);
}

/* ---- selection (IOSQE_BUFFER_SELECT) ---- */

void uu_kbuf_prep(struct uu_req *req, uint32_t want)
{
	memset(&req->kb, 0, sizeof(req->kb));
	req->kb.bgid = req->sqe.buf_group;
	req->kb.want = want;
}

int uu_kbuf_select(struct uu_req *req, unsigned int issue_flags, bool can_poll)
{
	struct uu_kbuf_ctx *c = uu_kb_ctx_get(req->ring, false);
	uint32_t want = req->kb.want;
	struct kb_group *g;

	if (!c)
		return -ENOBUFS;
	pthread_mutex_lock(&c->lock);
	g = uu_kb_group_find(c, req->kb.bgid);
	if (!g)
		goto nobufs;
	if (!g->ring) {
		struct kb_buf *b = g->head;

		if (!b)
			goto nobufs;
		g->head = b->next;
		if (!g->head)
			g->tail = NULL;
		g->nbufs--;
		req->kb.state = UU_KB_LEGACY;
		req->kb.lbuf = b;
		req->kb.addr = b->addr;
		req->kb.len = (!want || want > b->len) ? b->len : want;
		req->kb.bid = b->bid;
		pthread_mutex_unlock(&c->lock);
		return 0;
	} else {
		struct io_uring_buf b;
		uint16_t tail;
		int ret = uu_kb_ring_tail(g, &tail);

		if (!ret && tail == g->rhead)
			goto nobufs;
		if (!ret)
			ret = uu_kb_ring_entry(g, g->rhead, &b);
		if (ret) {
			pthread_mutex_unlock(&c->lock);
			return ret;
		}
		req->kb.state = UU_KB_RING;
		req->kb.addr = b.addr;
		req->kb.len = (!want || want > b.len) ? b.len : want;
		req->kb.bid = b.bid;
		req->kb.committed = false;
		req->kb.more = false;
		if ((issue_flags & UU_ISSUE_F_WORKER) || !can_poll) {
			/* nothing would hold the buffer for us until the read
			 * completes: consume it now */
			req->kb.more = !ring_commit(g, (int)req->kb.len);
			req->kb.committed = true;
			pthread_mutex_unlock(&c->lock);
		} else {
			req->kb.locked = true;
		}
		return 0;
	}
nobufs:
	pthread_mutex_unlock(&c->lock);
	return -ENOBUFS;
}

/* The CQE flags of the selected buffer, which is consumed.  An uncommitted
 * ring buffer needs the group lock (held by the caller). */
uint32_t uu_kb_put(struct uu_req *req, int res)
{
	uint32_t cflags = IORING_CQE_F_BUFFER |
			  ((uint32_t)req->kb.bid << IORING_CQE_BUFFER_SHIFT);

	if (req->kb.state == UU_KB_LEGACY) {
		free(req->kb.lbuf);
		req->kb.lbuf = NULL;
	} else if (req->kb.state == UU_KB_RING) {
		if (!req->kb.committed) {
			struct uu_kbuf_ctx *c = uu_kb_ctx_get(req->ring, false);
			struct kb_group *g = c ? uu_kb_group_find(c, req->kb.bgid) : NULL;

			if (g && g->ring && !ring_commit(g, res))
				req->kb.more = true;
			req->kb.committed = true;
		}
		if (req->kb.more)
			cflags |= IORING_CQE_F_BUF_MORE;
	}
	req->kb.state = UU_KB_NONE;
	return cflags;
}

void uu_kbuf_after_issue(struct uu_req *req, int res)
{
	struct uu_kbuf_ctx *c = uu_kb_ctx_get(req->ring, false);
	bool locked = req->kb.locked;

	if (req->kb.state == UU_KB_RING && !req->kb.committed) {
		/* io_read: a failed or waiting read recycles an uncommitted
		 * ring buffer (the head never moved); no CQE flag */
		if (res < 0 || req->park)
			req->kb.state = UU_KB_NONE;
		else
			req->cflags |= uu_kb_put(req, res);
	} else if (req->kb.state != UU_KB_NONE && !req->park) {
		req->cflags |= uu_kb_put(req, res);
	}
	/* a legacy or committed ring buffer stays with a waiting request */
	if (locked) {
		req->kb.locked = false;
		pthread_mutex_unlock(&c->lock);
	}
}

/*
 * The kernel's io_kbuf_recycle, as the socket receives use it (net.c):
 * a receive that must wait, or that ends with nothing received, gives
 * its buffer back so that it is not consumed.  A legacy buffer goes back
 * to the head of its group (io_kbuf_recycle_legacy); an uncommitted ring
 * buffer is simply not committed; a committed ring buffer (io-wq, T5)
 * stays with the request.  Returns true if the buffer was given back.
 */
bool uu_kbuf_recycle(struct uu_req *req)
{
	struct uu_kbuf_ctx *c = uu_kb_ctx_get(req->ring, false);
	bool back = false;

	if (req->kb.state == UU_KB_LEGACY) {
		struct kb_buf *b = req->kb.lbuf;
		struct kb_group *g;

		pthread_mutex_lock(&c->lock);
		g = uu_kb_group_find(c, req->kb.bgid);
		if (g && !g->ring && g->nbufs < 0xffff) {
			b->next = g->head;
			g->head = b;
			if (!g->tail)
				g->tail = b;
			g->nbufs++;
		} else {
			/* the group became a ring meanwhile: nowhere to go */
			free(b);
		}
		pthread_mutex_unlock(&c->lock);
		req->kb.lbuf = NULL;
		req->kb.state = UU_KB_NONE;
		back = true;
	} else if (req->kb.state == UU_KB_RING && !req->kb.committed) {
		req->kb.state = UU_KB_NONE;
		back = true;
	}
	if (req->kb.locked) {
		req->kb.locked = false;
		pthread_mutex_unlock(&c->lock);
	}
	return back;
}

/* Consumes the selected buffer now; returns its CQE flags (0 if none). */
uint32_t uu_kbuf_consume(struct uu_req *req, int res)
{
	struct uu_kbuf_ctx *c = uu_kb_ctx_get(req->ring, false);
	uint32_t cflags = 0;

	if (req->kb.state != UU_KB_NONE)
		cflags = uu_kb_put(req, res);
	if (req->kb.locked) {
		req->kb.locked = false;
		pthread_mutex_unlock(&c->lock);
	}
	return cflags;
}

/*
 * A receive that moved part of its data (MSG_WAITALL) waits for the rest
 * with its buffer (REQ_F_BL_NO_RECYCLE): an uncommitted ring buffer is
 * committed now, since the group lock cannot be held while it waits.
 */
void uu_kbuf_hold(struct uu_req *req)
{
	struct uu_kbuf_ctx *c = uu_kb_ctx_get(req->ring, false);

	if (req->kb.state == UU_KB_RING && !req->kb.committed) {
		struct kb_group *g = uu_kb_group_find(c, req->kb.bgid);

		if (g && g->ring)
			req->kb.more = !ring_commit(g, (int)req->kb.len);
		req->kb.committed = true;
	}
	if (req->kb.locked) {
		req->kb.locked = false;
		pthread_mutex_unlock(&c->lock);
	}
}

void uu_kbuf_cleanup(struct uu_req *req)
{
	struct uu_kbuf_ctx *c;

	if (!(req->flags & UU_REQ_BUFFER_SELECT) || req->kb.state == UU_KB_NONE)
		return;
	c = uu_kb_ctx_get(req->ring, false);
	if (c && req->kb.state == UU_KB_RING && !req->kb.committed) {
		pthread_mutex_lock(&c->lock);
		req->cflags |= uu_kb_put(req, req->res);
		pthread_mutex_unlock(&c->lock);
		return;
	}
	req->cflags |= uu_kb_put(req, req->res);
}

/* ---- PROVIDE_BUFFERS, REMOVE_BUFFERS ---- */

int uu_provide_buffers_prep(struct uu_req *req)
{
	const struct io_uring_sqe *sqe = &req->sqe;
	uint64_t nbufs = (uint64_t)(int64_t)sqe->fd, size, end;

	if (sqe->rw_flags || sqe->splice_fd_in)
		return -EINVAL;
	if (!nbufs || nbufs > MAX_BIDS_PER_BGID)
		return -E2BIG;
	if (!sqe->len)
		return -EINVAL;
	size = (uint64_t)sqe->len * nbufs;
	if (__builtin_add_overflow(sqe->addr, size, &end))
		return -EOVERFLOW;
	if (size > UU_TASK_SIZE_MAX || sqe->addr > UU_TASK_SIZE_MAX - size)
		return -EFAULT; /* access_ok */
	if (sqe->off > 0xffff)
		return -E2BIG;
	if (sqe->off + nbufs > MAX_BIDS_PER_BGID)
		return -EINVAL;
	return 0;
}

int uu_remove_buffers_prep(struct uu_req *req)
{
	const struct io_uring_sqe *sqe = &req->sqe;
	uint64_t nbufs = (uint64_t)(int64_t)sqe->fd;

	if (sqe->rw_flags || sqe->addr || sqe->len || sqe->off ||
	    sqe->splice_fd_in)
		return -EINVAL;
	if (!nbufs || nbufs > MAX_BIDS_PER_BGID)
		return -EINVAL;
	return 0;
}

static int add_buffers(struct kb_group *g, const struct io_uring_sqe *sqe)
{
	unsigned int nbufs = (unsigned int)sqe->fd, i;
	uint64_t addr = sqe->addr;
	uint16_t bid = (uint16_t)sqe->off;
	int ret = -ENOMEM;

	for (i = 0; i < nbufs; i++) {
		struct kb_buf *b;

		/* more buffers than bids could tell apart */
		if (g->nbufs == 0xffff) {
			ret = -EOVERFLOW;
			break;
		}
		b = malloc(sizeof(*b));
		if (!b)
			break;
		b->next = NULL;
		b->addr = addr;
		b->len = sqe->len > UU_MAX_RW_COUNT ? UU_MAX_RW_COUNT : sqe->len;
		b->bid = bid++;
		if (g->tail)
			g->tail->next = b;
		else
			g->head = b;
		g->tail = b;
		g->nbufs++;
		addr += sqe->len;
	}
	return i ? 0 : ret;
}

int uu_manage_buffers_issue(struct uu_req *req, unsigned int issue_flags)
{
	bool provide = req->opcode == IORING_OP_PROVIDE_BUFFERS;
	struct uu_kbuf_ctx *c = uu_kb_ctx_get(req->ring, provide);
	uint16_t bgid = req->sqe.buf_group;
	struct kb_group *g;
	int ret;

	(void)issue_flags;
	if (!c)
		return provide ? -ENOMEM : -ENOENT;
	pthread_mutex_lock(&c->lock);
	g = uu_kb_group_find(c, bgid);
	if (!g) {
		ret = -ENOENT;
		if (!provide)
			goto out;
		ret = -ENOMEM;
		g = calloc(1, sizeof(*g));
		if (!g)
			goto out;
		g->bgid = bgid;
		group_add(c, g);
	}
	ret = -EINVAL; /* not on a buffer ring */
	if (g->ring)
		goto out;
	if (provide) {
		ret = add_buffers(g, &req->sqe);
	} else {
		unsigned int n = (unsigned int)req->sqe.fd, i;

		for (i = 0; i < n && g->head; i++) {
			struct kb_buf *b = g->head;

			g->head = b->next;
			if (!g->head)
				g->tail = NULL;
			g->nbufs--;
			free(b);
		}
		ret = (int)i;
	}
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/* ---- REGISTER_PBUF_RING, UNREGISTER_PBUF_RING, PBUF_STATUS ---- */

static int register_pbuf_ring(struct uu_ring *r, struct uu_kbuf_ctx *c,
			      const struct io_uring_buf_reg *reg)
{
	struct kb_group *g;
	struct uu_vmas *vs;
	uint64_t size;
	int ret;

	if (reg->resv[0] || reg->resv[1] || reg->resv[2])
		return -EINVAL;
	if (reg->flags & ~(IOU_PBUF_RING_MMAP | IOU_PBUF_RING_INC))
		return -EINVAL;
	if (!reg->ring_entries || (reg->ring_entries & (reg->ring_entries - 1)))
		return -EINVAL;
	if (reg->ring_entries >= 65536)
		return -EINVAL;
	g = uu_kb_group_find(c, reg->bgid);
	if (g) {
		if (g->ring || g->head)
			return -EEXIST;
		group_destroy(c, g);
	}
	size = (16ULL * reg->ring_entries + UU_PAGE - 1) & ~(UU_PAGE - 1);
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	if (reg->flags & IOU_PBUF_RING_MMAP) {
		/* ours, zeroed; ring_addr is not looked at */
		g->region = mmap(NULL, size, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (g->region == MAP_FAILED) {
			free(g);
			return -ENOMEM;
		}
		g->region_size = size;
		g->ring_addr = (uintptr_t)g->region;
	} else {
		/* io_create_region on the application's memory */
		ret = -EINVAL;
		if (reg->ring_addr & (UU_PAGE - 1))
			goto fail;
		ret = -EOVERFLOW;
		if (reg->ring_addr + size < reg->ring_addr)
			goto fail;
		vs = uu_vmas_read();
		ret = uu_vmas_check(vs, reg->ring_addr, size);
		uu_vmas_free(vs);
		if (ret)
			goto fail;
		g->ring_addr = reg->ring_addr;
	}
	(void)r;
	g->bgid = reg->bgid;
	g->ring = true;
	g->mask = reg->ring_entries - 1;
	g->inc = reg->flags & IOU_PBUF_RING_INC;
	group_add(c, g);
	return 0;
fail:
	free(g);
	return ret;
}

/*
 * uuring_mmap at IORING_OFF_PBUF_RING: a second mapping of the group's
 * engine-allocated ring.  The kernel's lookup failures (no such group, a
 * ring the application allocated) end in get_unmapped_area: -ENOMEM.
 */
int uu_kbuf_mmap(struct uu_ring *r, uint64_t offset, void *addr, size_t len,
		 int prot, int flags, void **out)
{
	struct uu_kbuf_ctx *c = uu_kb_ctx_get(r, false);
	uint64_t bgid = (offset & ~IORING_OFF_MMAP_MASK) >> IORING_OFF_PBUF_SHIFT;
	struct kb_group *g;
	int ret = -ENOMEM;

	if (!c)
		return ret;
	if (!len)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	g = bgid <= 0xffff ? uu_kb_group_find(c, (uint16_t)bgid) : NULL;
	if (!g || !g->region)
		goto out;
	ret = uu_map_alias(g->region, addr, len, prot, flags, out);
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int uu_kbuf_register(struct uu_ring *r, unsigned int opcode, void *arg,
		     unsigned int nr_args)
{
	struct uu_kbuf_ctx *c;
	struct kb_group *g;
	int ret;

	(void)nr_args;
	if (opcode == IORING_REGISTER_PBUF_STATUS) {
		struct io_uring_buf_status st;

		ret = uu_copy_from_user(&st, arg, sizeof(st));
		if (ret)
			return ret;
		for (unsigned int i = 0; i < 8; i++)
			if (st.resv[i])
				return -EINVAL;
		c = uu_kb_ctx_get(r, false);
		if (!c)
			return -ENOENT;
		pthread_mutex_lock(&c->lock);
		g = uu_kb_group_find(c, (uint16_t)st.buf_group);
		if (st.buf_group > 0xffff)
			g = NULL;
		ret = !g ? -ENOENT : !g->ring ? -EINVAL : 0;
		if (!ret)
			st.head = g->rhead;
		pthread_mutex_unlock(&c->lock);
		if (ret)
			return ret;
		return uu_copy_to_user(arg, &st, sizeof(st));
	} else {
		struct io_uring_buf_reg reg;

		ret = uu_copy_from_user(&reg, arg, sizeof(reg));
		if (ret)
			return ret;
		if (opcode == IORING_UNREGISTER_PBUF_RING) {
			if (reg.flags) /* 6.18 does not look at resv here */
				return -EINVAL;
			c = uu_kb_ctx_get(r, false);
			if (!c)
				return -ENOENT;
			pthread_mutex_lock(&c->lock);
			g = uu_kb_group_find(c, reg.bgid);
			ret = !g ? -ENOENT : !g->ring ? -EINVAL : 0;
			if (!ret)
				group_destroy(c, g);
			pthread_mutex_unlock(&c->lock);
			return ret;
		}
		c = uu_kb_ctx_get(r, true);
		if (!c)
			return -ENOMEM;
		pthread_mutex_lock(&c->lock);
		ret = register_pbuf_ring(r, c, &reg);
		pthread_mutex_unlock(&c->lock);
		return ret;
	}
}
