// SPDX-License-Identifier: MIT
/*
 * tring: a minimal io_uring ring helper over a test backend.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tring.h"

#define KERN_MAX_SQ 32768u
#define KERN_MAX_CQ (2 * KERN_MAX_SQ)

static unsigned int roundup_pow2(unsigned int v)
{
	unsigned int r = 1;

	while (r < v && r < (1u << 31))
		r <<= 1;
	return r;
}

static size_t page_round(size_t v)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (v + pg - 1) & ~(pg - 1);
}

static size_t max_sz(size_t a, size_t b)
{
	return a > b ? a : b;
}

/* NO_MMAP: allocate ring + SQE memory generously for the clamped sizes. */
static int alloc_user_mem(struct tring *r, unsigned int entries,
			  struct io_uring_params *p)
{
	unsigned int sq = roundup_pow2(entries ? entries : 1), cq;
	size_t cqe_sz = (p->flags & IORING_SETUP_CQE32) ? 32 : 16;
	size_t sqe_sz = (p->flags & IORING_SETUP_SQE128) ? 128 : 64;
	void *m;

	/* the caller brought its own memory: use it, never free it */
	if (p->cq_off.user_addr && p->sq_off.user_addr) {
		r->cq_ring = r->sq_ring =
			(void *)(uintptr_t)p->cq_off.user_addr;
		r->sqes = (void *)(uintptr_t)p->sq_off.user_addr;
		r->ext_mem = true;
		return 0;
	}
	if (sq > KERN_MAX_SQ)
		sq = KERN_MAX_SQ;
	if (p->flags & IORING_SETUP_CQSIZE)
		cq = roundup_pow2(p->cq_entries ? p->cq_entries : 1);
	else
		cq = 2 * sq;
	if (cq > KERN_MAX_CQ)
		cq = KERN_MAX_CQ;
	if (cq < sq)
		cq = sq;

	r->cq_ring_sz = page_round(1024 + cq * cqe_sz + 64 + sq * 4);
	r->sqes_sz = page_round(sq * sqe_sz);
	m = mmap(NULL, r->cq_ring_sz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	r->cq_ring = m;
	r->sq_ring = m;
	r->sq_ring_sz = r->cq_ring_sz;
	m = mmap(NULL, r->sqes_sz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		munmap(r->cq_ring, r->cq_ring_sz);
		r->cq_ring = r->sq_ring = NULL;
		return -errno;
	}
	r->sqes = m;
	r->user_mem = true;
	if (!p->cq_off.user_addr)
		p->cq_off.user_addr = (uint64_t)(uintptr_t)r->cq_ring;
	if (!p->sq_off.user_addr)
		p->sq_off.user_addr = (uint64_t)(uintptr_t)r->sqes;
	return 0;
}

static void free_user_mem(struct tring *r)
{
	if (r->cq_ring)
		munmap(r->cq_ring, r->cq_ring_sz);
	if (r->sqes)
		munmap(r->sqes, r->sqes_sz);
	r->cq_ring = r->sq_ring = NULL;
	r->sqes = NULL;
	r->user_mem = false;
}

static int map_rings(struct tring *r)
{
	const struct backend *be = r->be;
	struct io_uring_params *p = &r->p;
	size_t cqe_sz = (p->flags & IORING_SETUP_CQE32) ? 32 : 16;
	size_t sqe_sz = (p->flags & IORING_SETUP_SQE128) ? 128 : 64;
	size_t sq_sz, cq_sz;
	void *m;

	sq_sz = max_sz(p->sq_off.head, p->sq_off.tail);
	sq_sz = max_sz(sq_sz, p->sq_off.ring_mask);
	sq_sz = max_sz(sq_sz, p->sq_off.ring_entries);
	sq_sz = max_sz(sq_sz, p->sq_off.flags);
	sq_sz = max_sz(sq_sz, p->sq_off.dropped) + sizeof(unsigned int);
	if (!(p->flags & IORING_SETUP_NO_SQARRAY))
		sq_sz = max_sz(sq_sz, p->sq_off.array +
				      p->sq_entries * sizeof(unsigned int));
	cq_sz = p->cq_off.cqes + p->cq_entries * cqe_sz;

	if (p->features & IORING_FEAT_SINGLE_MMAP) {
		sq_sz = max_sz(sq_sz, cq_sz);
		cq_sz = sq_sz;
	}
	r->sq_ring_sz = sq_sz;
	r->cq_ring_sz = cq_sz;

	m = be->mmap(NULL, sq_sz, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	if (BACKEND_MMAP_FAILED(m))
		return BACKEND_MMAP_ERR(m);
	r->sq_ring = m;

	if (p->features & IORING_FEAT_SINGLE_MMAP) {
		r->cq_ring = r->sq_ring;
	} else {
		m = be->mmap(NULL, cq_sz, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_POPULATE, r->fd,
			     IORING_OFF_CQ_RING);
		if (BACKEND_MMAP_FAILED(m))
			return BACKEND_MMAP_ERR(m);
		r->cq_ring = m;
	}

	r->sqes_sz = p->sq_entries * sqe_sz;
	m = be->mmap(NULL, r->sqes_sz, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (BACKEND_MMAP_FAILED(m))
		return BACKEND_MMAP_ERR(m);
	r->sqes = m;
	return 0;
}

static void setup_pointers(struct tring *r)
{
	struct io_uring_params *p = &r->p;
	char *sq = r->sq_ring, *cq = r->cq_ring;

	r->sq_head = (unsigned int *)(sq + p->sq_off.head);
	r->sq_tail = (unsigned int *)(sq + p->sq_off.tail);
	r->sq_flags = (unsigned int *)(sq + p->sq_off.flags);
	r->sq_dropped = (unsigned int *)(sq + p->sq_off.dropped);
	r->sq_array = (p->flags & IORING_SETUP_NO_SQARRAY) ? NULL :
		      (unsigned int *)(sq + p->sq_off.array);
	r->sq_mask = *(unsigned int *)(sq + p->sq_off.ring_mask);
	r->sq_entries = *(unsigned int *)(sq + p->sq_off.ring_entries);
	r->sqe_shift = (p->flags & IORING_SETUP_SQE128) ? 1 : 0;
	r->sqe_head = r->sqe_tail = *r->sq_tail;

	r->cq_head = (unsigned int *)(cq + p->cq_off.head);
	r->cq_tail = (unsigned int *)(cq + p->cq_off.tail);
	r->cq_overflow = (unsigned int *)(cq + p->cq_off.overflow);
	r->cq_flags = p->cq_off.flags ?
		      (unsigned int *)(cq + p->cq_off.flags) : NULL;
	r->cqes = (struct io_uring_cqe *)(cq + p->cq_off.cqes);
	r->cq_mask = *(unsigned int *)(cq + p->cq_off.ring_mask);
	r->cq_entries = *(unsigned int *)(cq + p->cq_off.ring_entries);
	r->cqe_shift = (p->flags & IORING_SETUP_CQE32) ? 1 : 0;
}

/*
 * UURING_TEST_RING_MODE=sqpoll|defer|coop reruns the differential suite on
 * rings of that kind: the mode's setup flags are added to every ring whose
 * scenario did not choose an execution mode itself (both backends alike).
 * Returns the flags to add, 0 for none.
 */
static unsigned int test_ring_mode_flags(unsigned int flags)
{
	const unsigned int chosen = IORING_SETUP_SQPOLL | IORING_SETUP_IOPOLL |
				    IORING_SETUP_DEFER_TASKRUN |
				    IORING_SETUP_COOP_TASKRUN |
				    IORING_SETUP_TASKRUN_FLAG |
				    IORING_SETUP_SINGLE_ISSUER |
				    IORING_SETUP_ATTACH_WQ;
	const char *mode = getenv("UURING_TEST_RING_MODE");

	if (!mode || !*mode || (flags & chosen))
		return 0;
	if (!strcmp(mode, "sqpoll"))
		return IORING_SETUP_SQPOLL;
	if (!strcmp(mode, "defer"))
		return IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER;
	if (!strcmp(mode, "coop"))
		return IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
	return 0;
}

int tring_init_params(struct tring *r, const struct backend *be,
		      unsigned int entries, struct io_uring_params *p)
{
	unsigned int mode_flags;
	struct io_uring_params local;
	int ret;

	memset(r, 0, sizeof(*r));
	r->be = be;
	r->fd = -1;
	if (!p) {
		memset(&local, 0, sizeof(local));
		p = &local;
	}
	mode_flags = test_ring_mode_flags(p->flags);
	if (mode_flags) {
		p->flags |= mode_flags;
		r->mode_added = true;
	}
	if (p->flags & IORING_SETUP_NO_MMAP) {
		ret = alloc_user_mem(r, entries, p);
		if (ret)
			return ret;
	}
	ret = be->setup(entries, p);
	if (ret < 0) {
		if (r->user_mem)
			free_user_mem(r);
		r->cq_ring = r->sq_ring = NULL;
		r->sqes = NULL;
		return ret;
	}
	r->fd = ret;
	r->enter_fd = ret;
	r->p = *p;
	r->flags = p->flags;
	if (!(p->flags & IORING_SETUP_NO_MMAP)) {
		ret = map_rings(r);
		if (ret) {
			tring_exit(r);
			return ret;
		}
	}
	setup_pointers(r);
	return 0;
}

int tring_init(struct tring *r, const struct backend *be,
	       unsigned int entries, unsigned int flags)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	return tring_init_params(r, be, entries, &p);
}

void tring_exit(struct tring *r)
{
	if (!r->be)
		return;
	if (r->enter_flags & IORING_ENTER_REGISTERED_RING)
		tring_unregister_ring_fd(r);
	if (r->user_mem || r->ext_mem) {
		if (r->fd >= 0)
			r->be->close(r->fd);
		if (r->user_mem)
			free_user_mem(r);
	} else {
		if (r->sqes)
			r->be->munmap(r->sqes, r->sqes_sz);
		if (r->cq_ring && r->cq_ring != r->sq_ring)
			r->be->munmap(r->cq_ring, r->cq_ring_sz);
		if (r->sq_ring)
			r->be->munmap(r->sq_ring, r->sq_ring_sz);
		if (r->fd >= 0)
			r->be->close(r->fd);
	}
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

int tring_resize(struct tring *r, struct io_uring_params *p)
{
	struct tring old = *r;
	int ret;

	if (r->user_mem || r->ext_mem)
		return -EOPNOTSUPP;
	tring_flush(r);
	ret = r->be->reg((unsigned int)r->fd, IORING_REGISTER_RESIZE_RINGS, p,
			 1);
	if (ret)
		return ret;
	/* the new rings at the usual offsets; the old mappings go */
	r->p.sq_entries = p->sq_entries;
	r->p.cq_entries = p->cq_entries;
	r->p.sq_off = p->sq_off;
	r->p.cq_off = p->cq_off;
	ret = map_rings(r);
	if (old.sqes)
		r->be->munmap(old.sqes, old.sqes_sz);
	if (old.cq_ring && old.cq_ring != old.sq_ring)
		r->be->munmap(old.cq_ring, old.cq_ring_sz);
	if (old.sq_ring)
		r->be->munmap(old.sq_ring, old.sq_ring_sz);
	if (ret) {
		r->sqes = NULL;
		r->sq_ring = r->cq_ring = NULL;
		return ret;
	}
	setup_pointers(r);
	return 0;
}

struct io_uring_sqe *tring_get_sqe(struct tring *r)
{
	unsigned int head = __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE);
	struct io_uring_sqe *sqe;

	if (r->sqe_tail - head >= r->sq_entries)
		return NULL;
	sqe = &r->sqes[(r->sqe_tail & r->sq_mask) << r->sqe_shift];
	memset(sqe, 0, sizeof(*sqe) << r->sqe_shift);
	r->sqe_tail++;
	return sqe;
}

unsigned int tring_flush(struct tring *r)
{
	unsigned int tail = *r->sq_tail;

	if (r->sqe_tail != r->sqe_head) {
		while (r->sqe_head != r->sqe_tail) {
			if (r->sq_array)
				r->sq_array[tail & r->sq_mask] =
					r->sqe_head & r->sq_mask;
			tail++;
			r->sqe_head++;
		}
		__atomic_store_n(r->sq_tail, tail, __ATOMIC_RELEASE);
	}
	return tail - __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE);
}

bool tring_sqpoll_settle(struct tring *r)
{
	if (!r->mode_added || !(r->flags & IORING_SETUP_SQPOLL))
		return true;
	return tring_sqpoll_await_sq_taken(r, 2000) == 0;
}

unsigned int tring_sqpoll_wakeup_flag(struct tring *r, unsigned int to_submit)
{
	if (!(r->flags & IORING_SETUP_SQPOLL) || !to_submit)
		return 0;
	/* pairs with the SQ thread's full fence between setting
	 * NEED_WAKEUP and rechecking the SQ tail (Dekker) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(r->sq_flags, __ATOMIC_RELAXED) &
	    IORING_SQ_NEED_WAKEUP)
		return IORING_ENTER_SQ_WAKEUP;
	return 0;
}

int tring_enter(struct tring *r, unsigned int to_submit,
		unsigned int min_complete, unsigned int flags,
		const void *arg, size_t argsz)
{
	int ret;

	/*
	 * A ring made SQPOLL by UURING_TEST_RING_MODE: wake a sleeping
	 * poller as liburing does, when SQEs wait in the SQ (which need not
	 * be to_submit: see flush_count).
	 */
	if (r->mode_added)
		/* relaxed: another thread of the scenario may be publishing
		 * SQEs (test_diff_wait cross_thread) */
		flags |= tring_sqpoll_wakeup_flag(r,
			__atomic_load_n(r->sq_tail, __ATOMIC_RELAXED) -
			__atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE));
	ret = r->be->enter((unsigned int)r->enter_fd, to_submit, min_complete,
			   flags | r->enter_flags, arg, argsz);
	if (to_submit && ret >= 0)
		tring_sqpoll_settle(r);
	return ret;
}

/*
 * flush, and the count to pass to enter: the SQEs not taken yet, or, on a
 * ring made SQPOLL by UURING_TEST_RING_MODE, the SQEs this flush published
 * (an SQ thread takes SQEs at any time, so the former races it on both
 * backends, and enter returns the count it was given).
 */
static unsigned int flush_count(struct tring *r)
{
	unsigned int tail0 = *r->sq_tail, n = tring_flush(r);

	if (r->mode_added && (r->flags & IORING_SETUP_SQPOLL))
		return *r->sq_tail - tail0;
	return n;
}

int tring_submit(struct tring *r)
{
	unsigned int tail0 = *r->sq_tail, n = tring_flush(r);
	unsigned int published = *r->sq_tail - tail0;
	int ret = tring_enter(r, n, 0, 0, NULL, 0);

	/*
	 * A ring made SQPOLL by UURING_TEST_RING_MODE: the SQ thread may
	 * consume the new SQEs between the tail store and the head load in
	 * tring_flush (liburing's flush has the same window), or not yet
	 * have taken SQEs published before, so the count passed to enter,
	 * and returned, can be short or long on either backend.  Report
	 * what this call published, as the scenario expects.
	 */
	if (r->mode_added && (r->flags & IORING_SETUP_SQPOLL) && ret >= 0)
		ret = (int)published;
	return ret;
}

int tring_submit_and_wait(struct tring *r, unsigned int wait_nr)
{
	unsigned int n = flush_count(r);

	return tring_enter(r, n, wait_nr, wait_nr ? IORING_ENTER_GETEVENTS : 0,
			   NULL, 0);
}

int tring_wait_ext(struct tring *r, unsigned int to_submit,
		   unsigned int wait_nr, unsigned int flags,
		   const struct timespec *ts, const void *sigmask,
		   unsigned int min_wait_usec)
{
	struct io_uring_getevents_arg arg;
	struct __kernel_timespec kts;

	memset(&arg, 0, sizeof(arg));
	if (ts) {
		kts.tv_sec = ts->tv_sec;
		kts.tv_nsec = ts->tv_nsec;
		arg.ts = (uint64_t)(uintptr_t)&kts;
	}
	arg.sigmask = (uint64_t)(uintptr_t)sigmask;
	arg.sigmask_sz = _NSIG / 8;
	arg.min_wait_usec = min_wait_usec;
	return tring_enter(r, to_submit, wait_nr,
			   flags | IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
			   &arg, sizeof(arg));
}

int tring_wait(struct tring *r, unsigned int wait_nr, int64_t timeout_ns)
{
	struct timespec ts;
	unsigned int n = flush_count(r);

	if (timeout_ns < 0)
		return tring_wait_ext(r, n, wait_nr, 0, NULL, NULL, 0);
	ts.tv_sec = timeout_ns / 1000000000;
	ts.tv_nsec = timeout_ns % 1000000000;
	return tring_wait_ext(r, n, wait_nr, 0, &ts, NULL, 0);
}

unsigned int tring_cq_ready(struct tring *r)
{
	return __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE) - *r->cq_head;
}

struct io_uring_cqe *tring_peek_cqe(struct tring *r)
{
	unsigned int head = *r->cq_head;

	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return NULL;
	return &r->cqes[(head & r->cq_mask) << r->cqe_shift];
}

void tring_cq_advance(struct tring *r, unsigned int n)
{
	if (n)
		__atomic_store_n(r->cq_head, *r->cq_head + n, __ATOMIC_RELEASE);
}

unsigned int tring_reap(struct tring *r, struct tcqe *out, unsigned int max)
{
	unsigned int head, n = 0;
	struct io_uring_cqe *cqe;

	tring_for_each_cqe(r, head, cqe) {
		if (n == max)
			break;
		out[n].user_data = cqe->user_data;
		out[n].res = cqe->res;
		out[n].flags = cqe->flags;
		if (r->cqe_shift) {
			memcpy(out[n].big, cqe + 1, sizeof(out[n].big));
		} else {
			out[n].big[0] = 0;
			out[n].big[1] = 0;
		}
		n++;
	}
	tring_cq_advance(r, n);
	return n;
}

unsigned int tring_reap_wait(struct tring *r, struct tcqe *out,
			     unsigned int want, int64_t timeout_ns)
{
	unsigned int got = 0;
	int ret;

	while (got < want) {
		got += tring_reap(r, out + got, want - got);
		if (got >= want)
			break;
		if (timeout_ns < 0) {
			ret = tring_wait_ext(r, 0, want - got, 0, NULL, NULL, 0);
		} else {
			struct timespec ts = {
				.tv_sec = timeout_ns / 1000000000,
				.tv_nsec = timeout_ns % 1000000000,
			};

			ret = tring_wait_ext(r, 0, want - got, 0, &ts, NULL, 0);
		}
		if (ret < 0 && ret != -EINTR && !tring_cq_ready(r))
			break;
	}
	return got;
}

unsigned int tring_sqpoll_await_cqes(struct tring *r, unsigned int n,
				     int timeout_ms)
{
	const struct timespec step = { 0, 1000000 };
	int waited = 0;

	if (!(r->flags & IORING_SETUP_SQPOLL))
		return tring_cq_ready(r);
	while (tring_cq_ready(r) < n && waited < timeout_ms) {
		nanosleep(&step, NULL);
		waited++;
	}
	return tring_cq_ready(r);
}

unsigned int tring_sqpoll_await_sq_taken(struct tring *r, int timeout_ms)
{
	const struct timespec step = { 0, 100000 };
	unsigned int left, i;

	if (!(r->flags & IORING_SETUP_SQPOLL))
		return 0;
	/* the SQ thread usually takes them within microseconds: yield
	 * 1000 times first, then sleep 100 us per round */
	for (i = 0;; i++) {
		/* acquire: pairs with the SQ thread's release of the head,
		 * which it stores after posting the batch's inline CQEs */
		left = __atomic_load_n(r->sq_tail, __ATOMIC_RELAXED) -
		       __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE);
		if (!left ||
		    (i >= 1000 && (i - 1000) / 10 >= (unsigned int)timeout_ms))
			return left;
		if (i < 1000)
			sched_yield();
		else
			nanosleep(&step, NULL);
	}
}

int tring_queue_nops(struct tring *r, unsigned int n, uint64_t base,
		     uint8_t sqe_flags)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = tring_get_sqe(r);

		if (!sqe)
			return (int)i;
		tring_prep_nop(sqe, base + i);
		sqe->flags = sqe_flags;
	}
	return (int)n;
}

int tring_register_ring_fd(struct tring *r)
{
	struct io_uring_rsrc_update up;
	int ret;

	memset(&up, 0, sizeof(up));
	up.offset = -1U;
	up.data = (uint64_t)r->fd;
	ret = r->be->reg((unsigned int)r->fd, IORING_REGISTER_RING_FDS, &up, 1);
	if (ret < 0)
		return ret;
	if (ret != 1)
		return -EIO;
	r->enter_fd = (int)up.offset;
	r->enter_flags = IORING_ENTER_REGISTERED_RING;
	return (int)up.offset;
}

int tring_unregister_ring_fd(struct tring *r)
{
	struct io_uring_rsrc_update up;
	int ret;

	if (!r->enter_flags)
		return -EINVAL;
	memset(&up, 0, sizeof(up));
	up.offset = (unsigned int)r->enter_fd;
	ret = r->be->reg((unsigned int)r->fd, IORING_UNREGISTER_RING_FDS,
			 &up, 1);
	if (ret < 0)
		return ret;
	r->enter_fd = r->fd;
	r->enter_flags = 0;
	return 0;
}
