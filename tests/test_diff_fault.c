// SPDX-License-Identifier: MIT
/*
 * Differential tests: bad user pointers (NULL, unmapped, PROT_NONE,
 * straddling into PROT_NONE, read-only where the call writes back) at every
 * user-memory site of setup, enter and register, expecting the kernel's
 * errno.  Each call runs isolated (disolated) so that an engine that sleeps
 * instead of failing, or crashes, is reported as such.  SQE-referenced
 * buffers and iovecs are covered by test_diff_rw (bad_buf); NO_MMAP ring
 * memory and setup params also by test_diff_setup.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dtest.h"

/*
 * The limit of each isolated call: every call fails or returns at once on
 * both backends (none is expected to hang), so this is a hang guard only;
 * it was 2 s, which a forked child under a sanitizer on a loaded machine
 * can need just to set up its ring.
 */
#define LIMIT_MS 10000

enum where {
	W_NULL,
	W_UNMAPPED,
	W_PROT_NONE,
	W_STRADDLE,	/* the object starts 8 bytes before a PROT_NONE page */
	W_READ_ONLY,	/* valid, zeroed content, read-only page */
	W_NR
};

static const char *const where_name[] = {
	"NULL", "unmapped", "PROT_NONE", "straddling", "read-only",
};

/* a pointer of the given kind to an object of size sz (zeroed if valid) */
static void *bad_ptr(enum where w, size_t sz)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char *m;

	switch (w) {
	case W_NULL:
		return NULL;
	case W_UNMAPPED:
		return dunmapped_addr();
	case W_PROT_NONE:
		return dprot_none_page();
	case W_STRADDLE:
		m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			abort();
		mprotect(m + pg, pg, PROT_NONE);
		(void)sz;
		return m + pg - 8;
	case W_READ_ONLY:
		m = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			 0);
		if (m == MAP_FAILED)
			abort();
		return m;
	case W_NR:
		break;
	}
	return NULL;
}

struct fcase {
	enum where w;
	int variant;
};

/* --- setup params --- */
static long f_setup(struct dctx *c, void *arg)
{
	struct fcase *fc = arg;
	struct io_uring_params *p = bad_ptr(fc->w, sizeof(*p));
	int fd = c->be->setup(4, p);

	if (fd >= 0) {
		c->be->close(fd);
		return 0;
	}
	return fd;
}

/* --- enter: plain sigset (argsz 8), wait that would sleep --- */
static long f_enter_sigset(struct dctx *c, void *arg)
{
	struct fcase *fc = arg;
	struct tring r;
	long ret = tring_init(&r, c->be, 4, 0);

	if (ret)
		return ret;
	ret = tring_enter(&r, 0, 1, IORING_ENTER_GETEVENTS,
			  bad_ptr(fc->w, 8), _NSIG / 8);
	tring_exit(&r);
	return ret;
}

/* --- enter: the EXT_ARG struct itself --- */
static long f_enter_ext_arg(struct dctx *c, void *arg)
{
	struct fcase *fc = arg;
	struct io_uring_getevents_arg *ea;
	struct tring r;
	long ret = tring_init(&r, c->be, 4, 0);

	if (ret)
		return ret;
	ea = bad_ptr(fc->w, sizeof(*ea));
	/* a read-only zeroed EXT_ARG has no timeout: variant 1 posts a
	 * CQE first so that the wait ends */
	if (fc->variant) {
		tring_prep_nop(tring_get_sqe(&r), 1);
		tring_submit(&r);
	}
	ret = tring_enter(&r, 0, 1, IORING_ENTER_GETEVENTS |
			  IORING_ENTER_EXT_ARG, ea, sizeof(*ea));
	tring_exit(&r);
	return ret;
}

/* --- enter: EXT_ARG ts pointer (variant 0) or sigmask (variant 1) --- */
static long f_enter_ext_ptrs(struct dctx *c, void *arg)
{
	struct fcase *fc = arg;
	struct io_uring_getevents_arg ea;
	struct __kernel_timespec ts = { 0, 50 * 1000 * 1000 };
	struct tring r;
	long ret = tring_init(&r, c->be, 4, 0);

	if (ret)
		return ret;
	memset(&ea, 0, sizeof(ea));
	if (fc->variant == 0) {
		ea.ts = (uint64_t)(uintptr_t)bad_ptr(fc->w, sizeof(ts));
	} else {
		ea.ts = (uint64_t)(uintptr_t)&ts;
		ea.sigmask = (uint64_t)(uintptr_t)bad_ptr(fc->w, 8);
		ea.sigmask_sz = _NSIG / 8;
	}
	ret = tring_enter(&r, 0, 1, IORING_ENTER_GETEVENTS |
			  IORING_ENTER_EXT_ARG, &ea, sizeof(ea));
	tring_exit(&r);
	return ret;
}

/* --- register RING_FDS / UNREGISTER_RING_FDS arrays --- */
static long f_ring_fds(struct dctx *c, void *arg)
{
	struct fcase *fc = arg;
	struct tring r;
	long ret = tring_init(&r, c->be, 4, 0);

	if (ret)
		return ret;
	ret = c->be->reg(r.fd, fc->variant ? IORING_UNREGISTER_RING_FDS :
			 IORING_REGISTER_RING_FDS,
			 bad_ptr(fc->w, sizeof(struct io_uring_rsrc_update)), 1);
	tring_exit(&r);
	return ret;
}

/* RING_FDS with a valid first entry and a bad second one */
static long f_ring_fds_second(struct dctx *c, void *arg)
{
	struct fcase *fc = arg;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct io_uring_rsrc_update *up;
	struct tring r;
	char *m;
	long ret = tring_init(&r, c->be, 4, 0);

	if (ret)
		return ret;
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	up = (struct io_uring_rsrc_update *)(m + pg - sizeof(*up));
	memset(up, 0, sizeof(*up));
	up->offset = -1U;
	up->data = (uint64_t)r.fd;
	mprotect(m + pg, pg, PROT_NONE);
	ret = c->be->reg(r.fd, IORING_REGISTER_RING_FDS, up, 2);
	(void)fc;
	/* the first slot was registered: it works */
	if (ret == 1)
		ret = 100 + c->be->enter(up->offset, 0, 0,
					 IORING_ENTER_REGISTERED_RING, NULL, 0);
	tring_exit(&r);
	return ret;
}

/* RING_FDS with a valid entry in read-only memory: the write-back faults */
static long f_ring_fds_ro(struct dctx *c, void *arg)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct io_uring_rsrc_update *up;
	struct tring r;
	long ret = tring_init(&r, c->be, 4, 0);

	(void)arg;
	if (ret)
		return ret;
	up = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	up->offset = -1U;
	up->data = (uint64_t)r.fd;
	mprotect(up, pg, PROT_READ);
	ret = c->be->reg(r.fd, IORING_REGISTER_RING_FDS, up, 1);
	/* was anything left registered in slot 0? */
	ret = ret * 1000 + c->be->enter(0, 0, 0, IORING_ENTER_REGISTERED_RING,
					NULL, 0);
	tring_exit(&r);
	return ret;
}

/* --- register PROBE array --- */
static long f_probe(struct dctx *c, void *arg)
{
	struct fcase *fc = arg;
	struct tring r;
	long ret = tring_init(&r, c->be, 4, 0);

	if (ret)
		return ret;
	ret = c->be->reg(r.fd, IORING_REGISTER_PROBE,
			 bad_ptr(fc->w, sizeof(struct io_uring_probe)), 4);
	tring_exit(&r);
	return ret;
}

/* --- NO_MMAP ring memory (cq_off.user_addr) and SQE memory --- */
static long f_no_mmap(struct dctx *c, void *arg)
{
	struct fcase *fc = arg;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct io_uring_params p;
	void *good = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *bad = bad_ptr(fc->w, pg);
	int fd;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_NO_MMAP;
	if (fc->w == W_STRADDLE)	/* page-aligned: start of PROT_NONE */
		bad = (char *)bad + 8;
	p.cq_off.user_addr = (uint64_t)(uintptr_t)(fc->variant ? good : bad);
	p.sq_off.user_addr = (uint64_t)(uintptr_t)(fc->variant ? bad : good);
	fd = c->be->setup(4, &p);
	if (fd >= 0) {
		c->be->close(fd);
		return 0;
	}
	return fd;
}

static void run_sites(struct dctx *c, const char *site,
		      long (*fn)(struct dctx *, void *), int variant,
		      unsigned int skip_mask)
{
	struct fcase fc;
	unsigned int w;

	for (w = 0; w < W_NR; w++) {
		if (skip_mask & (1U << w))
			continue;
		fc.w = (enum where)w;
		fc.variant = variant;
		drec_int(c, disolated(c, fn, &fc, LIMIT_MS), "%s %s", site,
			 where_name[w]);
	}
}

static void sc_setup_params(struct dctx *c)
{
	run_sites(c, "setup params", f_setup, 0, 0);
}

static void sc_enter_sigset(struct dctx *c)
{
	/* NULL sigset means "no mask": the wait would sleep for ever */
	run_sites(c, "enter sigset", f_enter_sigset, 0,
		  1U << W_NULL | 1U << W_READ_ONLY | 1U << W_STRADDLE);
}

static void sc_enter_ext_arg(struct dctx *c)
{
	run_sites(c, "EXT_ARG struct", f_enter_ext_arg, 0, 1U << W_READ_ONLY);
	run_sites(c, "EXT_ARG struct, CQE ready", f_enter_ext_arg, 1, 0);
	run_sites(c, "EXT_ARG ts", f_enter_ext_ptrs, 0, 1U << W_NULL);
	run_sites(c, "EXT_ARG sigmask", f_enter_ext_ptrs, 1, 0);
}

static void sc_register_arrays(struct dctx *c)
{
	struct fcase fc = { W_STRADDLE, 0 };

	run_sites(c, "RING_FDS", f_ring_fds, 0, 0);
	run_sites(c, "UNREGISTER_RING_FDS", f_ring_fds, 1, 0);
	drec_int(c, disolated(c, f_ring_fds_second, &fc, LIMIT_MS),
		 "RING_FDS 2nd entry PROT_NONE");
	drec_int(c, disolated(c, f_ring_fds_ro, &fc, LIMIT_MS),
		 "RING_FDS valid entry, read-only (1000 * ret + enter slot 0)");
	run_sites(c, "PROBE", f_probe, 0, 0);
}

static void sc_no_mmap_mem(struct dctx *c)
{
	run_sites(c, "NO_MMAP ring memory", f_no_mmap, 0, 0);
	run_sites(c, "NO_MMAP SQE memory", f_no_mmap, 1, 0);
}

static const struct dscenario scenarios[] = {
	{ "setup_params", sc_setup_params, NULL },
	{ "enter_sigset", sc_enter_sigset, NULL },
	{ "enter_ext_arg", sc_enter_ext_arg, NULL },
	{ "register_arrays", sc_register_arrays, NULL },
	{ "no_mmap_mem", sc_no_mmap_mem, NULL },
};

DTEST_MAIN(scenarios)
