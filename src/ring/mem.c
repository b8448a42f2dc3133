// SPDX-License-Identifier: MIT
/*
 * Ring memory and its layout (docs/architecture.md, "The ring fd").
 *
 * The rings are laid out like the kernel's struct io_rings: SQ head/tail,
 * CQ head/tail, masks, entry counts, sq_dropped, sq_flags, cq_flags,
 * cq_overflow, then the CQE array on a 64-byte boundary, then the SQ index
 * array.  Programs compute pointers from the offsets setup reports, so only
 * the offsets are ABI, but matching the kernel keeps strace output and
 * fdinfo-minded tests familiar.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring/mem.h"
#include "util/fault.h"
#include "util/usercopy.h"

#define OFF_SQ_HEAD 0
#define OFF_SQ_TAIL 4
#define OFF_CQ_HEAD 8
#define OFF_CQ_TAIL 12
#define OFF_SQ_MASK 16
#define OFF_CQ_MASK 20
#define OFF_SQ_ENTRIES 24
#define OFF_CQ_ENTRIES 28
#define OFF_SQ_DROPPED 32
#define OFF_SQ_FLAGS 36
#define OFF_CQ_FLAGS 40
#define OFF_CQ_OVERFLOW 44
#define OFF_CQES 64

static size_t page_size(void)
{
	static atomic_size_t ps;
	size_t v = atomic_load_explicit(&ps, memory_order_relaxed);

	if (!v) {
		v = (size_t)sysconf(_SC_PAGESIZE);
		atomic_store_explicit(&ps, v, memory_order_relaxed);
	}
	return v;
}

static size_t page_round(size_t n)
{
	return (n + page_size() - 1) & ~(page_size() - 1);
}

static size_t rings_bytes(unsigned int setup_flags, unsigned int sq_entries,
			  unsigned int cq_entries, unsigned int cqe_shift,
			  size_t *array_off)
{
	size_t off = OFF_CQES + ((size_t)cq_entries << cqe_shift);

	off = (off + 63) & ~(size_t)63;
	*array_off = off;
	if (!(setup_flags & IORING_SETUP_NO_SQARRAY))
		off += (size_t)sq_entries * sizeof(uint32_t);
	return off;
}

static void fill_offsets(struct io_uring_params *p, size_t array_off)
{
	memset(&p->sq_off, 0,
	       offsetof(struct io_sqring_offsets, user_addr));
	p->sq_off.head = OFF_SQ_HEAD;
	p->sq_off.tail = OFF_SQ_TAIL;
	p->sq_off.ring_mask = OFF_SQ_MASK;
	p->sq_off.ring_entries = OFF_SQ_ENTRIES;
	p->sq_off.flags = OFF_SQ_FLAGS;
	p->sq_off.dropped = OFF_SQ_DROPPED;
	p->sq_off.array = (p->flags & IORING_SETUP_NO_SQARRAY) ?
		0 : (uint32_t)array_off;
	p->sq_off.resv1 = 0;
	memset(&p->cq_off, 0,
	       offsetof(struct io_cqring_offsets, user_addr));
	p->cq_off.head = OFF_CQ_HEAD;
	p->cq_off.tail = OFF_CQ_TAIL;
	p->cq_off.ring_mask = OFF_CQ_MASK;
	p->cq_off.ring_entries = OFF_CQ_ENTRIES;
	p->cq_off.overflow = OFF_CQ_OVERFLOW;
	p->cq_off.cqes = OFF_CQES;
	p->cq_off.flags = OFF_CQ_FLAGS;
	p->cq_off.resv1 = 0;
	if (!(p->flags & IORING_SETUP_NO_MMAP)) {
		p->sq_off.user_addr = 0;
		p->cq_off.user_addr = 0;
	}
}

/*
 * The addresses of the engine's ring mappings, live or retired by a
 * resize (lock-free: a fork may come at any time).  Under ThreadSanitizer
 * the application is handed these mappings themselves, not aliases
 * (api.c map_region), so its munmap must leave them alone, retired ones
 * too: a resize to an earlier size takes a retired memory back.
 */
#define ENGINE_MAPS 1024
static _Atomic(void *) engine_maps[ENGINE_MAPS];

/* the first slot holding from now holds to: note (NULL, addr), forget
 * (addr, NULL); a full table notes nothing (munmap then goes through) */
static void engine_map_swap(void *from, void *to)
{
	for (unsigned int i = 0; i < ENGINE_MAPS; i++) {
		void *want = from;

		if (atomic_compare_exchange_strong_explicit(
			    &engine_maps[i], &want, to, memory_order_relaxed,
			    memory_order_relaxed))
			return;
	}
}

bool uu_ring_mem_is_engine_map(const void *addr)
{
	for (unsigned int i = 0; i < ENGINE_MAPS; i++)
		if (atomic_load_explicit(&engine_maps[i],
					 memory_order_relaxed) == addr)
			return true;
	return false;
}

static void *map_shared(size_t len)
{
	void *p;

	if (uu_fault(UU_FAULT_RING_MMAP))
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	engine_map_swap(NULL, p);
	return p;
}

/*
 * NO_MMAP: the application provides the memory.  Check it is there and
 * writable (fault-safe), then, if it is a shared mapping, take our own
 * second mapping of the same pages so that an munmap by the application
 * cannot pull the rings from under the engine (the kernel pins them).
 */
static int adopt_user_mem(uint64_t uaddr, size_t len, void **out, bool *owned)
{
	void *u = (void *)(uintptr_t)uaddr;
	void *dup;
	int ret;

	if (!uaddr)
		return -EFAULT;
	if (uaddr & (page_size() - 1))
		return -EINVAL;
	ret = uu_check_user(u, len, 1);
	if (ret)
		return ret;
	dup = mremap(u, 0, len, MREMAP_MAYMOVE);
	if (dup != MAP_FAILED) {
		*out = dup;
		*owned = true;
	} else {
		*out = u; /* private memory: used in place (documented) */
		*owned = false;
	}
	return 0;
}
/* the shared words of m for a ring set up with setup_flags */
void uu_ring_mem_words(const struct uu_ring_mem *m, unsigned int setup_flags,
		       struct uu_ring_words *w)
{
	unsigned char *b = m->rings;

	w->sq_head = (_Atomic uint32_t *)(b + OFF_SQ_HEAD);
	w->sq_tail = (_Atomic uint32_t *)(b + OFF_SQ_TAIL);
	w->cq_head = (_Atomic uint32_t *)(b + OFF_CQ_HEAD);
	w->cq_tail = (_Atomic uint32_t *)(b + OFF_CQ_TAIL);
	w->sq_dropped = (_Atomic uint32_t *)(b + OFF_SQ_DROPPED);
	w->sq_flags = (_Atomic uint32_t *)(b + OFF_SQ_FLAGS);
	w->cq_flags = (_Atomic uint32_t *)(b + OFF_CQ_FLAGS);
	w->cq_overflow = (_Atomic uint32_t *)(b + OFF_CQ_OVERFLOW);
	w->cqes = b + OFF_CQES;
	w->sq_array = (setup_flags & IORING_SETUP_NO_SQARRAY) ?
		NULL : (uint32_t *)(b + m->array_off);
}

/*
 * Ring memory for sq_entries/cq_entries (powers of two, checked) with the
 * layout setup_flags gives: the engine's shared mappings, or with NO_MMAP
 * the application's memory at p's user_addr fields.  The masks and entry
 * counts are written, the rest is zero; p's offsets are filled.  Used by
 * setup and by REGISTER_RESIZE_RINGS (core/resize.c).
 */
/* the masks and entry counts in the shared words, and p's offsets */
static void write_header(struct uu_ring_mem *m, struct io_uring_params *p)
{
	unsigned char *b = m->rings;

	*(uint32_t *)(b + OFF_SQ_MASK) = m->sq_entries - 1;
	*(uint32_t *)(b + OFF_CQ_MASK) = m->cq_entries - 1;
	*(uint32_t *)(b + OFF_SQ_ENTRIES) = m->sq_entries;
	*(uint32_t *)(b + OFF_CQ_ENTRIES) = m->cq_entries;
	fill_offsets(p, m->array_off);
}

int uu_ring_mem_create(struct uu_ring_mem *m, unsigned int setup_flags,
		       unsigned int sq_entries, unsigned int cq_entries,
		       struct io_uring_params *p)
{
	unsigned int cqe_shift = (setup_flags & IORING_SETUP_CQE32) ? 5 : 4;
	unsigned int sqe_shift = (setup_flags & IORING_SETUP_SQE128) ? 7 : 6;
	int ret;

	memset(m, 0, sizeof(*m));
	m->sq_entries = sq_entries;
	m->cq_entries = cq_entries;
	m->rings_size = page_round(rings_bytes(setup_flags, sq_entries,
					       cq_entries, cqe_shift,
					       &m->array_off));
	m->sqes_size = page_round((size_t)sq_entries << sqe_shift);
	if (setup_flags & IORING_SETUP_NO_MMAP) {
		ret = adopt_user_mem(p->cq_off.user_addr, m->rings_size,
				     &m->rings, &m->rings_owned);
		if (!ret)
			ret = adopt_user_mem(p->sq_off.user_addr, m->sqes_size,
					     &m->sqes, &m->sqes_owned);
		if (ret) {
			uu_ring_mem_free(m);
			return ret;
		}
		memset(m->rings, 0, OFF_CQES);
	} else {
		m->rings = map_shared(m->rings_size);
		m->sqes = m->rings ? map_shared(m->sqes_size) : NULL;
		m->rings_owned = m->sqes_owned = true;
		if (!m->sqes) {
			uu_ring_mem_free(m);
			return -ENOMEM;
		}
	}
	write_header(m, p);
	return 0;
}

void uu_ring_mem_reset(struct uu_ring_mem *m, unsigned int setup_flags,
		       struct io_uring_params *p)
{
	unsigned int cqe_shift = (setup_flags & IORING_SETUP_CQE32) ? 5 : 4;

	/* the layout of create's, for the same flags and entries */
	rings_bytes(setup_flags, m->sq_entries, m->cq_entries, cqe_shift,
		    &m->array_off);
	memset(m->rings, 0, m->rings_size);
	memset(m->sqes, 0, m->sqes_size);
	write_header(m, p);
}

void uu_ring_mem_free(struct uu_ring_mem *m)
{
	if (m->rings && m->rings_owned) {
		engine_map_swap(m->rings, NULL);
		munmap(m->rings, m->rings_size);
	}
	if (m->sqes && m->sqes_owned) {
		engine_map_swap(m->sqes, NULL);
		munmap(m->sqes, m->sqes_size);
	}
	m->rings = m->sqes = NULL;
}
