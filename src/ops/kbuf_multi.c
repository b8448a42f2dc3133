// SPDX-License-Identifier: MIT
/*
 * Several provided buffers for one transfer: the bundles of ops/net_bundle.c
 * and SEND's provided buffers (the kernel's io_buffers_peek and
 * io_buffers_select, kbuf.c), on the groups of ops/kbuf.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "core/buffers.h"
#include "core/types.h"
#include "ops/kbuf.h"
#include "ops/kbuf_int.h"

/*
 * The kernel's io_ring_buffers_peek: up to a->nr_iovs buffers from the
 * head (more, up to what max_len needs, when a limit is given and the
 * request's vector may grow), the last one cut to what is left of
 * max_len (on a ring that is not incremental, only if it is the first;
 * otherwise it is left out).  The entries are not written (6.18 leaves
 * a cut buffer's length as it was: tests/test_diff_bundle oneshot_*).
 */
static int ring_peek(struct uu_req *req, struct kb_group *g,
		     struct uu_kbuf_multi *a)
{
	unsigned int nr_avail, nr = a->nr_iovs, i = 0;
	size_t max = a->max_len;
	bool grow = false;
	struct io_uring_buf b;
	uint16_t tail, head = g->rhead;
	int ret = uu_kb_ring_tail(g, &tail);

	if (ret)
		return ret;
	nr_avail = (uint16_t)(tail - head);
	if (nr_avail > UU_UIO_MAXIOV)
		nr_avail = UU_UIO_MAXIOV;
	if (!nr_avail)
		return -ENOBUFS;
	ret = uu_kb_ring_entry(g, head, &b);
	if (ret)
		return ret;
	if (max) {
		size_t needed;

		if (!b.len)
			return -ENOBUFS;
		needed = (max + b.len - 1) / b.len;
		if (needed > UU_KBUF_PEEK_MAX)
			needed = UU_KBUF_PEEK_MAX;
		if (nr_avail > needed)
			nr_avail = (unsigned int)needed;
	}
	if (a->grow && max && nr_avail > nr) {
		nr = nr_avail;
		grow = true;
	} else if (nr_avail < nr) {
		nr = nr_avail;
	}
	if (!max)
		max = INT32_MAX;
	req->kb.bid = b.bid;
	for (;;) {
		uint32_t len = b.len;

		if (len > max) {
			len = (uint32_t)max;
			if (!g->inc) {
				a->partial = true;
				if (i)
					break;
			}
		}
		a->iovs[i].iov_base = (void *)(uintptr_t)b.addr;
		a->iovs[i].iov_len = len;
		i++;
		a->out_len += len;
		max -= len;
		if (!max)
			break;
		head++;
		if (!--nr)
			break;
		ret = uu_kb_ring_entry(g, head, &b);
		if (ret)
			return ret;
	}
	a->empty = head == tail;
	if (grow)
		a->nr_iovs = i;
	return (int)i;
}

int uu_kbuf_select_multi(struct uu_req *req, struct uu_kbuf_multi *a,
			 unsigned int issue_flags, bool commit)
{
	struct uu_kbuf_ctx *c = uu_kb_ctx_get(req->ring, false);
	struct kb_group *g;
	int ret;

	(void)issue_flags;
	a->out_len = 0;
	a->empty = a->partial = false;
	if (!c)
		return -ENOENT;
	pthread_mutex_lock(&c->lock);
	g = uu_kb_group_find(c, req->kb.bgid);
	if (!g) {
		ret = -ENOENT;
	} else if (!g->ring) {
		/* one buffer of a legacy group (io_provided_buffers_select):
		 * a send takes it whole, a receive up to max_len */
		struct kb_buf *b = g->head;
		size_t max = a->send ? 0 : a->max_len;

		ret = -ENOBUFS;
		if (b) {
			g->head = b->next;
			if (!g->head)
				g->tail = NULL;
			g->nbufs--;
			req->kb.state = UU_KB_LEGACY;
			req->kb.lbuf = b;
			req->kb.bid = b->bid;
			a->iovs[0].iov_base = (void *)(uintptr_t)b->addr;
			a->iovs[0].iov_len = (!max || max > b->len) ? b->len : max;
			a->out_len = a->iovs[0].iov_len;
			a->empty = !g->head;
			ret = 1;
		}
	} else {
		ret = ring_peek(req, g, a);
		if (ret > 0) {
			req->kb.state = UU_KB_RING;
			req->kb.committed = false;
			req->kb.more = false;
			if (commit) {
				/* io_buffers_select: committed at once */
				req->kb.more = !uu_kb_ring_commit_n(g, (int)a->out_len,
							      (unsigned int)ret);
				req->kb.committed = true;
			} else {
				/* committed when the receive returns */
				req->kb.locked = true;
				return ret;
			}
		}
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

uint32_t uu_kbuf_consume_multi(struct uu_req *req, int len, unsigned int nr)
{
	struct uu_kbuf_ctx *c = uu_kb_ctx_get(req->ring, false);
	uint32_t cflags;

	if (req->kb.state == UU_KB_NONE) {
		cflags = 0;
	} else if (req->kb.state == UU_KB_RING && !req->kb.committed) {
		struct kb_group *g = uu_kb_group_find(c, req->kb.bgid);

		if (g && g->ring && !uu_kb_ring_commit_n(g, len, nr))
			req->kb.more = true;
		req->kb.committed = true;
		cflags = uu_kb_put(req, len);
	} else {
		cflags = uu_kb_put(req, len);
	}
	if (req->kb.locked) {
		req->kb.locked = false;
		pthread_mutex_unlock(&c->lock);
	}
	return cflags;
}

void uu_kbuf_commit_part(struct uu_req *req, int len, unsigned int nr)
{
	struct uu_kbuf_ctx *c = uu_kb_ctx_get(req->ring, false);

	if (req->kb.state == UU_KB_RING && !req->kb.committed) {
		struct kb_group *g = uu_kb_group_find(c, req->kb.bgid);

		if (g && g->ring && !uu_kb_ring_commit_n(g, len, nr))
			req->kb.more = true;
		req->kb.committed = true;
	}
	if (req->kb.locked) {
		req->kb.locked = false;
		pthread_mutex_unlock(&c->lock);
	}
}

void uu_kbuf_commit_more(struct uu_req *req, int len, unsigned int nr)
{
	struct uu_kbuf_ctx *c = uu_kb_ctx_get(req->ring, false);
	struct kb_group *g;

	if (!c || req->kb.state != UU_KB_RING || len <= 0)
		return;
	pthread_mutex_lock(&c->lock);
	g = uu_kb_group_find(c, req->kb.bgid);
	/* an incremental ring counts the bytes, another the buffers */
	if (g && g->ring && (g->inc || nr) &&
	    !uu_kb_ring_commit_n(g, len, nr))
		req->kb.more = true;
	pthread_mutex_unlock(&c->lock);
}
