// SPDX-License-Identifier: MIT
/*
 * Differential tests: IORING_REGISTER_QUERY (with a ring and with fd -1),
 * IORING_REGISTER_MEM_REGION (the application's memory and a region to
 * map through the ring fd), the registered wait arguments a region
 * carries (IORING_ENTER_EXT_ARG_REG), and IORING_REGISTER_RESIZE_RINGS.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"

#define MAP_OFF_PARAM_REGION 0x20000000ULL

struct qhdr {
	uint64_t next, data;
	uint32_t op, size;
	int32_t result;
	uint32_t resv[3];
};

struct qopcodes {
	uint32_t nr_request_opcodes, nr_register_opcodes;
	uint64_t feature_flags, ring_setup_flags, enter_flags, sqe_flags;
	uint32_t nr_query_opcodes, pad;
};

static int query(struct dctx *c, int fd, struct qhdr *h, unsigned int nr)
{
	return c->be->reg((unsigned int)fd, IORING_REGISTER_QUERY, h, nr);
}

static void qhdr_init(struct qhdr *h, void *buf, uint32_t op, uint32_t size)
{
	memset(h, 0, sizeof(*h));
	h->data = (uintptr_t)buf;
	h->op = op;
	h->size = size;
}

/* the answers to IO_URING_QUERY_OPCODES, and whether they describe the
 * same backend's rings (FEAT bits as setup reports them) */
static void query_opcodes(struct dctx *c, int fd, const char *how)
{
	struct io_uring_params p;
	struct tring r;
	unsigned char buf[200];
	struct qopcodes *q = (struct qopcodes *)buf;
	struct qhdr h;

	memset(buf, 0xaa, sizeof(buf));
	qhdr_init(&h, buf, 0, sizeof(buf));
	drec_int(c, query(c, fd, &h, 0), "%s: query", how);
	drec_int(c, h.result, "%s: result", how);
	drec_int(c, h.size, "%s: size", how);
	drec_int(c, q->nr_request_opcodes, "%s: request opcodes", how);
	drec_int(c, q->nr_register_opcodes, "%s: register opcodes", how);
	drec_int(c, q->nr_query_opcodes, "%s: query opcodes", how);
	drec_int(c, (long)q->ring_setup_flags, "%s: setup flags", how);
	drec_int(c, (long)q->enter_flags, "%s: enter flags", how);
	drec_int(c, (long)q->sqe_flags, "%s: sqe flags", how);
	drec_int(c, q->pad, "%s: pad", how);
	drec_int(c, buf[sizeof(*q)] == 0 && buf[sizeof(buf) - 1] == 0,
		 "%s: the rest of the buffer zeroed", how);
	memset(&p, 0, sizeof(p));
	if (dring(c, &r, 4, &p, "ring for features"))
		return;
	dcheck(c, q->feature_flags == p.features,
	       "%s: feature flags %#llx, setup reports %#x", how,
	       (unsigned long long)q->feature_flags, p.features);
	tring_exit(&r);
}

static void sc_query(struct dctx *c)
{
	unsigned char buf[64], buf2[64];
	struct qhdr h, h2;
	struct tring r;

	query_opcodes(c, -1, "fd -1");
	if (dring_flags(c, &r, 4, 0))
		return;
	query_opcodes(c, r.fd, "ring");

	qhdr_init(&h, buf, 0, 8);
	drec_int(c, query(c, -1, &h, 1), "nr_args 1");
	drec_int(c, query(c, -1, NULL, 0), "no header");
	/* a short buffer gets what fits, nothing beyond */
	memset(buf, 0xaa, sizeof(buf));
	drec_int(c, query(c, r.fd, &h, 0), "size 8");
	drec_int(c, h.size, "size 8: size");
	drec_int(c, buf[8], "size 8: byte 8 untouched");
	/* each header's own errors are in its result */
	qhdr_init(&h, buf, 0, 8);
	h.result = 5;
	drec_int(c, query(c, -1, &h, 0), "result set");
	drec_int(c, h.result, "result set: result");
	drec_int(c, h.size, "result set: size");
	qhdr_init(&h, buf, 0, 0);
	query(c, -1, &h, 0);
	drec_int(c, h.result, "size 0: result");
	qhdr_init(&h, buf, 0, 8);
	h.resv[2] = 1;
	query(c, -1, &h, 0);
	drec_int(c, h.result, "reserved word: result");
	memset(buf, 0xaa, sizeof(buf));
	qhdr_init(&h, buf, 7, 16);
	drec_int(c, query(c, -1, &h, 0), "unknown query");
	drec_int(c, h.result, "unknown query: result");
	drec_int(c, h.size, "unknown query: size");
	drec_int(c, buf[0] == 0 && buf[15] == 0 && buf[16] == 0xaa,
		 "unknown query: its buffer zeroed, no more");
	/* a chain */
	qhdr_init(&h, buf, 0, sizeof(buf));
	qhdr_init(&h2, buf2, 0, 4);
	h.next = (uintptr_t)&h2;
	drec_int(c, query(c, r.fd, &h, 0), "chain of two");
	drec_int(c, h.result == 0 && h2.result == 0 && h2.size == 4,
		 "chain of two: both answered");
	/* faults: the call fails */
	qhdr_init(&h, dunmapped_addr(), 0, 8);
	drec_int(c, query(c, -1, &h, 0), "unmapped answer buffer");
	drec_int(c, query(c, -1, dunmapped_addr(), 0), "unmapped header");
	qhdr_init(&h, buf, 0, 8);
	h.next = (uintptr_t)dunmapped_addr();
	drec_int(c, query(c, -1, &h, 0), "unmapped next header");
	drec_int(c, h.result, "unmapped next header: first answered");
	/* a cycle ends at the bound */
	qhdr_init(&h, buf, 0, 8);
	h.next = (uintptr_t)&h;
	drec_int(c, query(c, -1, &h, 0), "cycle");
	tring_exit(&r);
}

struct rdesc {
	uint64_t user_addr, size;
	uint32_t flags, id;
	uint64_t mmap_offset;
	uint64_t resv[4];
};

struct mreg {
	uint64_t region_uptr, flags, resv[2];
};

static int mem_region(struct dctx *c, int fd, struct rdesc *d, uint64_t flags)
{
	struct mreg m = { .region_uptr = (uintptr_t)d, .flags = flags };

	return c->be->reg((unsigned int)fd, IORING_REGISTER_MEM_REGION, &m, 1);
}

static void *map_anon(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void sc_mem_region_errors(struct dctx *c)
{
	struct rdesc d, *ro;
	struct mreg m;
	struct tring r;
	void *mem = map_anon(8192, PROT_READ | PROT_WRITE);
	void *rom = map_anon(8192, PROT_READ);

	if (!mem || !rom || dring_flags(c, &r, 4, IORING_SETUP_R_DISABLED))
		return;
	memset(&d, 0, sizeof(d));
	memset(&m, 0, sizeof(m));
	m.region_uptr = (uintptr_t)&d;
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_MEM_REGION, &m, 0),
		 "nr_args 0");
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_MEM_REGION, &m, 2),
		 "nr_args 2");
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_MEM_REGION, NULL, 1),
		 "no argument");
	drec_int(c, mem_region(c, r.fd, &d, 0), "all zero");
	d.user_addr = (uintptr_t)mem;
	d.size = 8192;
	d.flags = IORING_MEM_REGION_TYPE_USER;
	drec_int(c, mem_region(c, r.fd, &d, 2), "unknown flag");
	m.flags = 0;
	m.resv[1] = 1;
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_MEM_REGION, &m, 1),
		 "reserved word");
#define TRY(field, bad, label)                                       \
	do {                                                         \
		__typeof__(d.field) keep = d.field;                  \
		d.field = bad;                                       \
		drec_int(c, mem_region(c, r.fd, &d, 0), label);      \
		d.field = keep;                                      \
	} while (0)
	TRY(resv[3], 1, "region reserved word");
	TRY(flags, 3, "region flag 2");
	TRY(size, 100, "size 100");
	TRY(size, 0, "size 0");
	TRY(user_addr, (uintptr_t)mem + 8, "address not page aligned");
	TRY(id, 1, "id");
	TRY(mmap_offset, 4096, "mmap offset");
	TRY(user_addr, 0, "user memory without an address");
	TRY(flags, 0, "engine memory with an address");
	TRY(user_addr, 0xfffffffffffff000ull, "address + size overflows");
	TRY(size, (1ull << 31) * 4096, "size beyond INT_MAX pages");
	TRY(user_addr, (uintptr_t)dunmapped_addr() & ~4095ul,
	    "unmapped memory");
	TRY(user_addr, (uintptr_t)rom, "read-only memory");
#undef TRY
	drec_int(c, mem_region(c, r.fd, dunmapped_addr(), 0),
		 "unmapped descriptor");
	/* a descriptor that cannot be written back: nothing stays */
	ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro != MAP_FAILED) {
		*ro = d;
		mprotect(ro, 4096, PROT_READ);
		drec_int(c, mem_region(c, r.fd, ro, 0),
			 "read-only descriptor");
		munmap(ro, 4096);
	}
	drec_int(c, mem_region(c, r.fd, &d, 0), "user memory");
	drec_int(c, (long)d.mmap_offset, "user memory: mmap offset");
	drec_int(c, mem_region(c, r.fd, &d, 0), "a second region");
	tring_exit(&r);
	/* wait arguments only before the ring is enabled */
	if (dring_flags(c, &r, 4, 0))
		return;
	drec_int(c, mem_region(c, r.fd, &d, IORING_MEM_REGION_REG_WAIT_ARG),
		 "wait arguments on an enabled ring");
	tring_exit(&r);
	munmap(mem, 8192);
	munmap(rom, 8192);
}

static int wait_reg(struct dctx *c, struct tring *r, unsigned int to_submit,
		    unsigned int min, uint64_t offset, size_t argsz)
{
	return c->be->enter((unsigned int)r->fd, to_submit, min,
			    IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG |
				    IORING_ENTER_EXT_ARG_REG,
			    (void *)(uintptr_t)offset, argsz);
}

/* the waits of one ring whose wait arguments are w (8 entries) */
static void waits(struct dctx *c, struct tring *r, struct io_uring_reg_wait *w,
		  size_t region, const char *how)
{
	size_t sz = sizeof(*w);

	memset(w, 0, 8 * sz);
	w[1].ts.tv_nsec = 1000000;
	w[1].flags = IORING_REG_WAIT_TS;
	drec_int(c, wait_reg(c, r, 0, 1, sz, sz), "%s: 1 ms, nothing", how);
	drec_int(c, wait_reg(c, r, 0, 1, sz, 8), "%s: argsz 8", how);
	drec_int(c, wait_reg(c, r, 0, 1, 4, sz), "%s: offset 4", how);
	drec_int(c, wait_reg(c, r, 0, 1, region - 32, sz),
		 "%s: entry past the end", how);
	drec_int(c, wait_reg(c, r, 0, 1, region, sz), "%s: just past the end",
		 how);
	drec_int(c, wait_reg(c, r, 0, 1, -8ull, sz), "%s: offset wraps", how);
	w[2].flags = 4;
	drec_int(c, wait_reg(c, r, 0, 1, 2 * sz, sz), "%s: unknown flag", how);
	w[3] = w[1];
	w[3].sigmask = (uintptr_t)&w[7];
	w[3].sigmask_sz = 7;
	drec_int(c, wait_reg(c, r, 0, 1, 3 * sz, sz), "%s: sigmask size 7",
		 how);
	/* a wait that a completion satisfies */
	tring_prep_nop(tring_get_sqe(r), 0x11);
	tring_flush(r);
	drec_int(c, wait_reg(c, r, 1, 1, sz, sz), "%s: NOP and wait", how);
	dreap(c, r, 1, true, how);
}

static void sc_mem_region_wait(struct dctx *c)
{
	struct io_uring_reg_wait *w = map_anon(8192, PROT_READ | PROT_WRITE);
	struct rdesc d;
	struct tring r;

	if (!w || dring_flags(c, &r, 4, IORING_SETUP_R_DISABLED))
		return;
	memset(&d, 0, sizeof(d));
	d.user_addr = (uintptr_t)w;
	d.size = 8 * sizeof(*w); /* 512: not a page */
	d.flags = IORING_MEM_REGION_TYPE_USER;
	drec_int(c, mem_region(c, r.fd, &d, IORING_MEM_REGION_REG_WAIT_ARG),
		 "512 bytes");
	d.size = 4096;
	drec_int(c, mem_region(c, r.fd, &d, IORING_MEM_REGION_REG_WAIT_ARG),
		 "user memory with wait arguments");
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0),
		 "enable");
	waits(c, &r, w, 4096, "user memory");
	tring_exit(&r);
	/* no region: every offset is past its end */
	if (dring_flags(c, &r, 4, 0))
		return;
	drec_int(c, wait_reg(c, &r, 0, 1, 64, 64), "no region");
	tring_exit(&r);
	munmap(w, 8192);
}

static void sc_mem_region_mmap(struct dctx *c)
{
	struct io_uring_reg_wait *w;
	struct rdesc d;
	struct tring r;
	void *p, *mem = map_anon(4096, PROT_READ | PROT_WRITE);

	if (!mem || dring_flags(c, &r, 4, IORING_SETUP_R_DISABLED))
		return;
	p = c->be->mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd,
			MAP_OFF_PARAM_REGION);
	drec_int(c, BACKEND_MMAP_FAILED(p) ? BACKEND_MMAP_ERR(p) : 0,
		 "mmap before a region");
	memset(&d, 0, sizeof(d));
	d.size = 8192;
	drec_int(c, mem_region(c, r.fd, &d, IORING_MEM_REGION_REG_WAIT_ARG),
		 "a region to map, with wait arguments");
	drec_int(c, (long)d.mmap_offset, "its mmap offset");
	w = c->be->mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd,
			d.mmap_offset);
	drec_int(c, BACKEND_MMAP_FAILED(w) ? BACKEND_MMAP_ERR(w) : 0, "mmap");
	if (BACKEND_MMAP_FAILED(w)) {
		tring_exit(&r);
		return;
	}
	drec_int(c, ((unsigned char *)w)[100] == 0, "zeroed");
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0),
		 "enable");
	waits(c, &r, w, 8192, "mapped region");
	c->be->munmap(w, 8192);
	tring_exit(&r);
	/* a region of the application's memory is not mapped again */
	if (dring_flags(c, &r, 4, 0))
		return;
	d.flags = IORING_MEM_REGION_TYPE_USER;
	d.user_addr = (uintptr_t)mem;
	d.size = 4096;
	d.mmap_offset = 0;
	drec_int(c, mem_region(c, r.fd, &d, 0), "user memory");
	p = c->be->mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd,
			MAP_OFF_PARAM_REGION);
	drec_int(c, BACKEND_MMAP_FAILED(p) ? BACKEND_MMAP_ERR(p) : 0,
		 "mmap of user memory");
	tring_exit(&r);
	munmap(mem, 4096);
}

/* ---- REGISTER_RESIZE_RINGS ---- */

#define DEFER (IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER)

static void rec_params(struct dctx *c, const struct io_uring_params *p,
		       const char *how)
{
	drec_int(c, p->sq_entries, "%s: sq_entries", how);
	drec_int(c, p->cq_entries, "%s: cq_entries", how);
	drec_int(c, p->flags, "%s: flags", how);
	drec_int(c, p->features, "%s: features (as passed)", how);
	drec_int(c, p->sq_thread_idle, "%s: sq_thread_idle", how);
	drec_int(c, p->sq_off.head == 0 && p->sq_off.tail == 4 &&
			    p->cq_off.head == 8 && p->cq_off.tail == 12,
		 "%s: head and tail offsets", how);
	drec_int(c, p->sq_off.array, "%s: sq array offset", how);
	drec_int(c, p->cq_off.cqes, "%s: cqes offset", how);
	drec_int(c, p->cq_off.flags, "%s: cq flags offset", how);
	drec_int(c, (long)p->cq_off.user_addr, "%s: cq user_addr", how);
}

static int resize(struct dctx *c, int fd, unsigned int sq, unsigned int cq,
		  unsigned int flags, struct io_uring_params *out)
{
	struct io_uring_params p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.sq_entries = sq;
	p.cq_entries = cq;
	p.flags = flags;
	p.features = 0x5a5a; /* echoed back, as the kernel does */
	ret = c->be->reg((unsigned int)fd, IORING_REGISTER_RESIZE_RINGS, &p,
			 1);
	if (out)
		*out = p;
	return ret;
}

static void sc_resize_errors(struct dctx *c)
{
	struct io_uring_params p;
	struct tring r;

	if (dring_flags(c, &r, 8, IORING_SETUP_SINGLE_ISSUER))
		return;
	drec_int(c, resize(c, r.fd, 16, 0, 0, NULL), "not DEFER_TASKRUN");
	tring_exit(&r);
	if (dring_flags(c, &r, 8, DEFER))
		return;
	memset(&p, 0, sizeof(p));
	p.sq_entries = 16;
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_RESIZE_RINGS, NULL, 1),
		 "no argument");
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_RESIZE_RINGS, &p, 0),
		 "nr_args 0");
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_RESIZE_RINGS, &p, 2),
		 "nr_args 2");
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_RESIZE_RINGS,
			       dunmapped_addr(), 1),
		 "unmapped argument");
	drec_int(c, resize(c, r.fd, 16, 0, IORING_SETUP_SQPOLL, NULL),
		 "flag SQPOLL");
	drec_int(c, resize(c, r.fd, 16, 0, IORING_SETUP_NO_SQARRAY, NULL),
		 "flag NO_SQARRAY");
	drec_int(c, resize(c, r.fd, 0, 0, 0, NULL), "0 entries");
	drec_int(c, resize(c, r.fd, 1u << 20, 0, 0, NULL), "2^20 entries");
	drec_int(c, resize(c, r.fd, 16, 0, IORING_SETUP_CQSIZE, NULL),
		 "CQSIZE 0");
	drec_int(c, resize(c, r.fd, 16, 4, IORING_SETUP_CQSIZE, NULL),
		 "CQSIZE below the SQ");
	drec_int(c, resize(c, r.fd, 16, 1u << 24, IORING_SETUP_CQSIZE, NULL),
		 "CQSIZE 2^24");
	drec_int(c, resize(c, r.fd, 5, 0, 0, &p), "5 entries");
	rec_params(c, &p, "5 entries");
	drec_int(c, resize(c, r.fd, 1u << 20, 1u << 24,
			   IORING_SETUP_CLAMP | IORING_SETUP_CQSIZE, &p),
		 "clamped");
	rec_params(c, &p, "clamped");
	drec_int(c, resize(c, r.fd, 4, 100, IORING_SETUP_CQSIZE, &p),
		 "CQSIZE 100");
	rec_params(c, &p, "CQSIZE 100");
	tring_exit(&r);
	/* inherited layout flags */
	if (dring_flags(c, &r, 8, DEFER | IORING_SETUP_NO_SQARRAY |
					 IORING_SETUP_CQE32))
		return;
	drec_int(c, resize(c, r.fd, 16, 0, 0, &p), "NO_SQARRAY|CQE32 ring");
	rec_params(c, &p, "NO_SQARRAY|CQE32 ring");
	tring_exit(&r);
}

static void nops(struct tring *r, unsigned int n, uint64_t ud)
{
	for (unsigned int i = 0; i < n; i++)
		tring_prep_nop(tring_get_sqe(r), ud + i);
}

static void sc_resize_contents(struct dctx *c)
{
	struct io_uring_params p;
	struct tring r;

	/* without an SQ array, as liburing sets up rings it may resize (the
	 * kernel reports no array offset after a resize) */
	if (dring_flags(c, &r, 8, DEFER | IORING_SETUP_NO_SQARRAY))
		return;
	/* 6 CQEs waiting and 2 SQEs published, not yet submitted */
	nops(&r, 6, 100);
	drec_int(c, tring_submit(&r), "6 NOPs");
	nops(&r, 2, 200);
	tring_flush(&r);
	memset(&p, 0, sizeof(p));
	p.sq_entries = 32;
	p.cq_entries = 64;
	p.flags = IORING_SETUP_CQSIZE;
	drec_int(c, tring_resize(&r, &p), "resize to 32/64");
	drec_int(c, r.sq_entries, "new sq entries");
	drec_int(c, r.cq_entries, "new cq entries");
	drec_int(c, *r.sq_tail - *r.sq_head, "SQEs still published");
	drec_int(c, *r.cq_tail - *r.cq_head, "CQEs still waiting");
	drec_int(c, tring_enter(&r, 2, 0, 0, NULL, 0), "submit the two");
	dreap(c, &r, 8, true, "the 8 CQEs");
	/* 40 more fit without overflow now */
	nops(&r, 30, 300);
	drec_int(c, tring_submit(&r), "30 NOPs");
	nops(&r, 10, 400);
	drec_int(c, tring_submit(&r), "10 NOPs");
	drec_int(c, *r.cq_overflow, "no overflow");
	dreap(c, &r, 40, true, "the 40 CQEs");
	/* too many CQEs for the size asked: nothing changes */
	nops(&r, 20, 500);
	drec_int(c, tring_submit(&r), "20 NOPs");
	drec_int(c, resize(c, r.fd, 8, 16, IORING_SETUP_CQSIZE, NULL),
		 "resize below the waiting CQEs");
	dreap(c, &r, 20, true, "the 20 CQEs, old rings");
	/* too many published SQEs */
	nops(&r, 12, 600);
	tring_flush(&r);
	drec_int(c, resize(c, r.fd, 8, 0, 0, NULL),
		 "resize below the published SQEs");
	drec_int(c, tring_enter(&r, 12, 12, IORING_ENTER_GETEVENTS, NULL, 0),
		 "submit the 12");
	dreap(c, &r, 12, true, "the 12 CQEs");
	/* shrink, then grow again */
	memset(&p, 0, sizeof(p));
	p.sq_entries = 2;
	drec_int(c, tring_resize(&r, &p), "resize to 2");
	nops(&r, 2, 700);
	drec_int(c, tring_submit(&r), "2 NOPs");
	drec_int(c, tring_get_sqe(&r) != NULL, "a third SQE");
	memset(&p, 0, sizeof(p));
	p.sq_entries = 16;
	drec_int(c, tring_resize(&r, &p), "resize to 16");
	dreap(c, &r, 2, true, "the 2 CQEs");
	tring_exit(&r);
}

/* the process's mappings (lines of /proc/self/maps), or -1 */
static long count_maps(void)
{
	char buf[4096];
	long n = 0;
	ssize_t got;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((got = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < got; i++)
			n += buf[i] == '\n';
	close(fd);
	return n;
}

/*
 * Resizing back and forth between two sizes, unmapping every old mapping
 * as a program should, leaves the process's mappings where they were:
 * the kernel frees old rings, and the engine keeps at most one retired
 * memory per size (it kept every one, and a loop of resizes reached
 * vm.max_map_count within a second).
 */
static void sc_resize_loop_maps(struct dctx *c)
{
	struct io_uring_params p;
	struct tring r;
	long before, after;
	int fails = 0;

	if (dring_flags(c, &r, 8, DEFER | IORING_SETUP_NO_SQARRAY))
		return;
	for (int i = 0; i < 4; i++) { /* both sizes seen once */
		memset(&p, 0, sizeof(p));
		p.sq_entries = i & 1 ? 128 : 32;
		fails += tring_resize(&r, &p) != 0;
	}
	before = count_maps();
	for (int i = 0; i < 2000; i++) {
		memset(&p, 0, sizeof(p));
		p.sq_entries = i & 1 ? 128 : 32;
		fails += tring_resize(&r, &p) != 0;
	}
	after = count_maps();
	drec_int(c, fails, "failed resizes");
	drec_int(c, before > 0 && after - before <= 4,
		 "mappings after 2000 resizes within 4 of before");
	if (after - before > 4)
		printf("# %s: %ld mappings before, %ld after\n", c->be->name,
		       before, after);
	tring_exit(&r);
}

static const struct dscenario scenarios[] = {
	{ "query", sc_query, NULL },
	{ "mem_region_errors", sc_mem_region_errors, NULL },
	{ "mem_region_wait", sc_mem_region_wait, NULL },
	{ "mem_region_mmap", sc_mem_region_mmap, NULL },
	{ "resize_errors", sc_resize_errors, NULL },
	{ "resize_contents", sc_resize_contents, NULL },
	{ "resize_loop_maps", sc_resize_loop_maps, NULL },
};

DTEST_MAIN(scenarios)
