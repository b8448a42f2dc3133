// SPDX-License-Identifier: MIT
/*
 * Differential tests: io_uring_setup(2) flag and parameter validation, the
 * returned params, ring mapping, R_DISABLED + ENABLE_RINGS, PROBE,
 * NO_SQARRAY, SQE128/CQE32, NO_MMAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dtest.h"

/* setup + close; returns the fd (already closed) or -errno */
static int try_setup(struct dctx *c, unsigned int entries,
		     struct io_uring_params *p)
{
	int fd = c->be->setup(entries, p);

	if (fd >= 0)
		c->be->close(fd);
	return fd;
}

static void rec_setup(struct dctx *c, unsigned int entries,
		      struct io_uring_params *p, const char *what)
{
	int ret = try_setup(c, entries, p);

	/* the same events either way, so that one difference does not
	 * misalign the rest */
	drec_int(c, ret < 0 ? ret : 0, "%s: setup", what);
	drec_int(c, ret >= 0 ? (long)p->sq_entries : -1, "%s: sq_entries", what);
	drec_int(c, ret >= 0 ? (long)p->cq_entries : -1, "%s: cq_entries", what);
	drec_int(c, ret >= 0 ? (long)p->flags : -1, "%s: flags out", what);
}

/* Every IORING_SETUP_* bit alone (entries 4). */
static void sc_flag_bits(struct dctx *c)
{
	unsigned int b;

	for (b = 0; b < 32; b++) {
		struct io_uring_params p;
		char what[48];

		memset(&p, 0, sizeof(p));
		p.flags = 1U << b;
		if (p.flags & IORING_SETUP_CQSIZE)
			p.cq_entries = 8;
		snprintf(what, sizeof(what), "bit %u", b);
		/* NO_MMAP with user_addr 0: -EFAULT on the kernel */
		rec_setup(c, 4, &p, what);
	}
}

struct combo {
	const char *name;
	unsigned int entries;
	unsigned int flags;
	unsigned int cq_entries;
};

static const struct combo combos[] = {
	{ "SQPOLL|COOP_TASKRUN", 4,
	  IORING_SETUP_SQPOLL | IORING_SETUP_COOP_TASKRUN, 0 },
	{ "SQPOLL|DEFER_TASKRUN|SINGLE_ISSUER", 4, IORING_SETUP_SQPOLL |
	  IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER, 0 },
	{ "TASKRUN_FLAG alone", 4, IORING_SETUP_TASKRUN_FLAG, 0 },
	{ "DEFER_TASKRUN without SINGLE_ISSUER", 4,
	  IORING_SETUP_DEFER_TASKRUN, 0 },
	{ "HYBRID_IOPOLL without IOPOLL", 4, IORING_SETUP_HYBRID_IOPOLL, 0 },
	{ "REGISTERED_FD_ONLY without NO_MMAP", 4,
	  IORING_SETUP_REGISTERED_FD_ONLY, 0 },
	{ "CQE32|CQE_MIXED", 4,
	  IORING_SETUP_CQE32 | IORING_SETUP_CQE_MIXED, 0 },
	{ "SQE128|SQE_MIXED", 4,
	  IORING_SETUP_SQE128 | IORING_SETUP_SQE_MIXED, 0 },
	{ "SQ_AFF without SQPOLL", 4, IORING_SETUP_SQ_AFF, 0 },
	{ "bit 31", 4, 1U << 31, 0 },
	{ "all bits", 4, ~0U, 8 },
	{ "entries 0", 0, 0, 0 },
	{ "entries 1", 1, 0, 0 },
	{ "entries 3", 3, 0, 0 },
	{ "entries 5", 5, 0, 0 },
	{ "entries 32768", 32768, 0, 0 },
	{ "entries 32769", 32769, 0, 0 },
	{ "entries 32769 CLAMP", 32769, IORING_SETUP_CLAMP, 0 },
	{ "entries 0 CLAMP", 0, IORING_SETUP_CLAMP, 0 },
	{ "entries ~0 CLAMP", ~0U, IORING_SETUP_CLAMP, 0 },
	{ "entries ~0", ~0U, 0, 0 },
	{ "CQSIZE 0", 4, IORING_SETUP_CQSIZE, 0 },
	{ "CQSIZE 0 CLAMP", 4, IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP, 0 },
	{ "CQSIZE < sq", 8, IORING_SETUP_CQSIZE, 4 },
	{ "CQSIZE < sq CLAMP", 8, IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP, 4 },
	{ "CQSIZE == sq", 8, IORING_SETUP_CQSIZE, 8 },
	{ "CQSIZE 5 (round up)", 4, IORING_SETUP_CQSIZE, 5 },
	{ "CQSIZE 1", 1, IORING_SETUP_CQSIZE, 1 },
	{ "CQSIZE 65536", 4, IORING_SETUP_CQSIZE, 65536 },
	{ "CQSIZE 65537", 4, IORING_SETUP_CQSIZE, 65537 },
	{ "CQSIZE 65537 CLAMP", 4, IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP,
	  65537 },
	{ "CQSIZE ~0 CLAMP", 4, IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP,
	  ~0U },
	{ "cq_entries ignored without CQSIZE", 4, 0, 2 },
	{ "entries 32769 CLAMP CQSIZE 8", 32769,
	  IORING_SETUP_CLAMP | IORING_SETUP_CQSIZE, 8 },
	{ "SQE128|CQE32|NO_SQARRAY|SUBMIT_ALL|SINGLE_ISSUER", 8,
	  IORING_SETUP_SQE128 | IORING_SETUP_CQE32 | IORING_SETUP_NO_SQARRAY |
	  IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER, 0 },
	{ "R_DISABLED|CLAMP|CQSIZE", 16, IORING_SETUP_R_DISABLED |
	  IORING_SETUP_CLAMP | IORING_SETUP_CQSIZE, 32 },
};

static void sc_combos(struct dctx *c)
{
	unsigned int i;

	for (i = 0; i < sizeof(combos) / sizeof(combos[0]); i++) {
		struct io_uring_params p;

		memset(&p, 0, sizeof(p));
		p.flags = combos[i].flags;
		p.cq_entries = combos[i].cq_entries;
		rec_setup(c, combos[i].entries, &p, combos[i].name);
	}
}

/* Each resv word non-zero; ignored input fields non-zero. */
static void sc_resv(struct dctx *c)
{
	struct io_uring_params p;
	unsigned int i;

	for (i = 0; i < sizeof(p.resv) / sizeof(p.resv[0]); i++) {
		char what[32];

		memset(&p, 0, sizeof(p));
		p.resv[i] = 1;
		snprintf(what, sizeof(what), "resv[%u]=1", i);
		rec_setup(c, 4, &p, what);
	}
	memset(&p, 0, sizeof(p));
	p.sq_thread_cpu = 1;
	p.sq_thread_idle = 100;
	rec_setup(c, 4, &p, "sq_thread_cpu/idle without SQPOLL");
	memset(&p, 0, sizeof(p));
	p.wq_fd = 1000;
	rec_setup(c, 4, &p, "wq_fd without ATTACH_WQ");
	memset(&p, 0, sizeof(p));
	p.features = ~0U;
	rec_setup(c, 4, &p, "features in");
	memset(&p, 0, sizeof(p));
	memset(&p.sq_off, 0xff, sizeof(p.sq_off));
	memset(&p.cq_off, 0xff, sizeof(p.cq_off));
	rec_setup(c, 4, &p, "garbage sq_off/cq_off in");
}

/*
 * A new SQ thread with nothing to do goes to sleep at once, setting
 * IORING_SQ_NEED_WAKEUP, on both backends, but only some time after setup
 * returned: on an SQPOLL ring (UURING_TEST_RING_MODE=sqpoll) wait for
 * that, at most 2 s, so the flags read next are settled.
 */
static void await_sq_thread_asleep(struct tring *r)
{
	const struct timespec step = { 0, 1000000 };
	int i;

	if (!(r->flags & IORING_SETUP_SQPOLL))
		return;
	for (i = 0; i < 2000 && !(tring_sq_flags(r) & IORING_SQ_NEED_WAKEUP);
	     i++)
		nanosleep(&step, NULL);
}

/* Returned params: entries, flags, the features uuring advertises. */
static void sc_params_out(struct dctx *c)
{
	const struct backend *tb = backend_under_test();
	struct io_uring_params p;
	unsigned int mask, i;
	struct tring r;
	static const unsigned int flags[] = {
		0, IORING_SETUP_SQE128 | IORING_SETUP_CQE32,
		IORING_SETUP_NO_SQARRAY, IORING_SETUP_SUBMIT_ALL,
	};
	int fd;

	/* the FEAT bits the backend under test advertises */
	memset(&p, 0, sizeof(p));
	fd = tb->setup(4, &p);
	dcheck(c, fd >= 0, "setup on %s: %d", tb->name, fd);
	if (fd < 0)
		return;
	tb->close(fd);
	mask = p.features;
	if (!c->is_kernel)
		dnote(c, "features 0x%x", mask);

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		memset(&p, 0, sizeof(p));
		p.flags = flags[i];
		if (dring(c, &r, 64, &p, "setup"))
			continue;
		drec_int(c, r.p.sq_entries, "flags 0x%x: sq_entries", flags[i]);
		drec_int(c, r.p.cq_entries, "flags 0x%x: cq_entries", flags[i]);
		drec_int(c, r.p.features & mask, "flags 0x%x: features & 0x%x",
			 flags[i], mask);
		drec_int(c, r.p.flags, "flags 0x%x: flags", flags[i]);
		drec_int(c, r.p.sq_thread_cpu, "flags 0x%x: sq_thread_cpu",
			 flags[i]);
		drec_int(c, r.p.sq_thread_idle, "flags 0x%x: sq_thread_idle",
			 flags[i]);
		drec_int(c, r.p.wq_fd, "flags 0x%x: wq_fd", flags[i]);
		/* offsets need not match; the ring must agree with them */
		drec_int(c, r.sq_entries, "ring sq entries");
		drec_int(c, r.cq_entries, "ring cq entries");
		drec_int(c, r.sq_mask, "ring sq mask");
		drec_int(c, r.cq_mask, "ring cq mask");
		drec_int(c, __atomic_load_n(r.sq_head, __ATOMIC_ACQUIRE), "ring sq head");
		drec_int(c, *r.sq_tail, "ring sq tail");
		drec_int(c, *r.cq_head, "ring cq head");
		drec_int(c, __atomic_load_n(r.cq_tail, __ATOMIC_ACQUIRE), "ring cq tail");
		await_sq_thread_asleep(&r);
		drec_int(c, tring_sq_flags(&r), "ring sq flags");
		drec_int(c, __atomic_load_n(r.sq_dropped, __ATOMIC_ACQUIRE), "ring sq dropped");
		drec_int(c, __atomic_load_n(r.cq_overflow, __ATOMIC_ACQUIRE), "ring cq overflow");
		drec_int(c, r.cq_flags ? *r.cq_flags : 0, "ring cq flags");
		if (flags[i] & IORING_SETUP_NO_SQARRAY)
			drec_int(c, r.p.sq_off.array, "NO_SQARRAY: sq_off.array");
		tring_exit(&r);
	}
	/* the kernel advertises everything uuring does */
	if (c->is_kernel) {
		memset(&p, 0, sizeof(p));
		fd = c->be->setup(4, &p);
		if (fd >= 0) {
			c->be->close(fd);
			dcheck(c, (p.features & mask) == mask,
			       "%s advertises 0x%x the kernel lacks", tb->name,
			       mask & ~p.features);
		}
	}
}

/* Bad params pointers: NULL, unmapped, PROT_NONE, straddling, read-only. */
static int next_fd(void)
{
	int fd = dup(0), ret;

	if (fd < 0)
		fd = open("/dev/null", O_RDONLY);
	ret = fd;
	close(fd);
	return ret;
}

static void sc_bad_params_ptr(struct dctx *c)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct io_uring_params *p;
	char *m;
	int before, ret;

	before = next_fd();
	drec_int(c, c->be->setup(4, NULL), "params NULL");
	drec_int(c, c->be->setup(4, dunmapped_addr()), "params unmapped");
	drec_int(c, c->be->setup(4, dprot_none_page()), "params PROT_NONE");

	/* params straddle a readable page and a PROT_NONE one */
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dcheck(c, m != MAP_FAILED, "mmap");
	if (m == MAP_FAILED)
		return;
	mprotect(m + pg, pg, PROT_NONE);
	p = (struct io_uring_params *)(m + pg - 40);
	memset(p, 0, 40);
	drec_int(c, c->be->setup(4, p), "params straddling PROT_NONE");

	/* read-only params: copy in works, copy out fails -> -EFAULT */
	memset(m, 0, pg);
	mprotect(m, pg, PROT_READ);
	ret = c->be->setup(4, (struct io_uring_params *)m);
	if (ret >= 0)
		c->be->close(ret);
	drec_int(c, ret >= 0 ? 0 : ret, "params read-only");
	drec_int(c, next_fd() == before, "no fd leaked by failed setups");

	/* NO_MMAP with bad user memory */
	mprotect(m, pg, PROT_READ | PROT_WRITE);
	p = (struct io_uring_params *)m;
	memset(p, 0, sizeof(*p));
	p->flags = IORING_SETUP_NO_MMAP;
	ret = c->be->setup(4, p);
	if (ret >= 0)
		c->be->close(ret);
	drec_int(c, ret >= 0 ? 0 : ret, "NO_MMAP user_addr 0");

	{
		void *ring = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		void *sqes = mmap(NULL, pg, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct {
			const char *name;
			uint64_t ring, sqes;
		} cases[] = {
			{ "NO_MMAP ring unmapped",
			  (uint64_t)(uintptr_t)dunmapped_addr(),
			  (uint64_t)(uintptr_t)sqes },
			{ "NO_MMAP sqes unmapped", (uint64_t)(uintptr_t)ring,
			  (uint64_t)(uintptr_t)dunmapped_addr() },
			{ "NO_MMAP ring PROT_NONE",
			  (uint64_t)(uintptr_t)dprot_none_page(),
			  (uint64_t)(uintptr_t)sqes },
			{ "NO_MMAP sqes PROT_NONE", (uint64_t)(uintptr_t)ring,
			  (uint64_t)(uintptr_t)dprot_none_page() },
			{ "NO_MMAP ring misaligned",
			  (uint64_t)(uintptr_t)ring + 64,
			  (uint64_t)(uintptr_t)sqes },
			{ "NO_MMAP sqes misaligned", (uint64_t)(uintptr_t)ring,
			  (uint64_t)(uintptr_t)sqes + 64 },
			{ "NO_MMAP ring read-only",
			  (uint64_t)(uintptr_t)m, (uint64_t)(uintptr_t)sqes },
			{ "NO_MMAP ok", (uint64_t)(uintptr_t)ring,
			  (uint64_t)(uintptr_t)sqes },
		};
		struct io_uring_params q;
		unsigned int i;

		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			memset(&q, 0, sizeof(q));
			q.flags = IORING_SETUP_NO_MMAP;
			q.cq_off.user_addr = cases[i].ring;
			q.sq_off.user_addr = cases[i].sqes;
			if (cases[i].ring == (uint64_t)(uintptr_t)m)
				mprotect(m, pg, PROT_READ);
			ret = c->be->setup(4, &q);
			if (ret >= 0)
				c->be->close(ret);
			drec_int(c, ret >= 0 ? 0 : ret, "%s", cases[i].name);
		}
		/* NO_MMAP ring too small for 4096 entries */
		memset(&q, 0, sizeof(q));
		q.flags = IORING_SETUP_NO_MMAP;
		q.cq_off.user_addr = (uint64_t)(uintptr_t)ring;
		q.sq_off.user_addr = (uint64_t)(uintptr_t)sqes;
		munmap((char *)ring + pg, 3 * pg);
		ret = c->be->setup(4096, &q);
		if (ret >= 0)
			c->be->close(ret);
		drec_int(c, ret >= 0 ? 0 : ret, "NO_MMAP ring memory too small");
	}
}

/* mmap of the ring: bad offsets, sizes, NO_MMAP ring */
static void sc_mmap(struct dctx *c)
{
	const struct backend *be = c->be;
	struct tring r;
	void *m;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	if (dring_flags(c, &r, 8, 0))
		return;
	/* the NOP flushed below stays in the SQ until the enter */
	await_sq_thread_asleep(&r);
	m = be->mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd,
		     0x68000000);
	drec_int(c, BACKEND_MMAP_FAILED(m) ? BACKEND_MMAP_ERR(m) : 0,
		 "mmap bad offset");
	if (!BACKEND_MMAP_FAILED(m))
		be->munmap(m, pg);
	m = be->mmap(NULL, 64 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd,
		     IORING_OFF_SQES);
	drec_int(c, BACKEND_MMAP_FAILED(m) ? BACKEND_MMAP_ERR(m) : 0,
		 "mmap SQEs too large");
	if (!BACKEND_MMAP_FAILED(m))
		be->munmap(m, 64 * pg);
	m = be->mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE, r.fd,
		     IORING_OFF_SQ_RING);
	drec_int(c, BACKEND_MMAP_FAILED(m) ? BACKEND_MMAP_ERR(m) : 0,
		 "mmap MAP_PRIVATE");
	if (!BACKEND_MMAP_FAILED(m))
		be->munmap(m, pg);
	/* a second mapping of the SQ ring aliases the first */
	m = be->mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd,
		     IORING_OFF_SQ_RING);
	drec_int(c, BACKEND_MMAP_FAILED(m) ? BACKEND_MMAP_ERR(m) : 0,
		 "mmap SQ ring again");
	if (!BACKEND_MMAP_FAILED(m)) {
		tring_queue_nops(&r, 1, 1, 0);
		tring_flush(&r);
		drec_int(c, *(unsigned int *)((char *)m + r.p.sq_off.tail),
			 "second mapping sees tail");
		be->munmap(m, pg);
		drec_int(c, tring_submit_and_wait(&r, 1), "submit");
		dreap(c, &r, 1, true, "nop");
	}
	tring_exit(&r);

	/* NO_MMAP: the ring offsets cannot be mapped */
	if (dring_flags(c, &r, 8, IORING_SETUP_NO_MMAP))
		return;
	m = be->mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd,
		     IORING_OFF_SQ_RING);
	drec_int(c, BACKEND_MMAP_FAILED(m) ? BACKEND_MMAP_ERR(m) : 0,
		 "NO_MMAP: mmap SQ ring");
	if (!BACKEND_MMAP_FAILED(m))
		be->munmap(m, pg);
	tring_exit(&r);
}

static void sc_r_disabled(struct dctx *c)
{
	struct tring r;
	int ret;

	if (dring_flags(c, &r, 8, IORING_SETUP_R_DISABLED))
		return;
	await_sq_thread_asleep(&r);
	drec_int(c, tring_sq_flags(&r), "sq flags");
	tring_queue_nops(&r, 2, 10, 0);
	drec_int(c, tring_submit(&r), "submit while disabled");
	drec_int(c, tring_enter(&r, 0, 0, 0, NULL, 0), "enter 0 while disabled");
	drec_int(c, tring_enter(&r, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0) ==
		 -EBADFD, "getevents while disabled is -EBADFD");
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_ENABLE_RINGS, NULL, 1),
		 "ENABLE_RINGS nr_args 1");
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_ENABLE_RINGS, &ret, 0),
		 "ENABLE_RINGS arg non-NULL");
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0),
		 "ENABLE_RINGS");
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0),
		 "ENABLE_RINGS again");
	/*
	 * ENABLE_RINGS wakes a sleeping SQ thread, which takes the two
	 * queued SQEs: wait for that, so the count enter gets (and
	 * returns) below is 0 on both backends, not a race.
	 */
	drec_int(c, tring_sqpoll_await_sq_taken(&r, 5000),
		 "SQEs left after enable (SQPOLL: taken by the thread)");
	drec_int(c, tring_submit_and_wait(&r, 2), "submit after enable");
	dreap(c, &r, 2, true, "nops");
	tring_exit(&r);
}

/*
 * The opcodes uuring implements, each with a differential test of its
 * own (src/core/opdef.c: an opcode is listed by PROBE only when it is
 * implemented and has a differential test):
 * their probe entries must match the kernel's, and uuring must list no
 * other opcode.  A new opcode is added here with its test.
 */
static const uint8_t uu_ops[] = {
	IORING_OP_NOP, IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_FSYNC,
	IORING_OP_READ, IORING_OP_WRITE, IORING_OP_READ_FIXED,
	IORING_OP_WRITE_FIXED, IORING_OP_POLL_ADD, IORING_OP_POLL_REMOVE,
	IORING_OP_SYNC_FILE_RANGE, IORING_OP_SENDMSG, IORING_OP_RECVMSG,
	IORING_OP_TIMEOUT, IORING_OP_TIMEOUT_REMOVE, IORING_OP_ACCEPT,
	IORING_OP_ASYNC_CANCEL, IORING_OP_LINK_TIMEOUT, IORING_OP_CONNECT,
	IORING_OP_FALLOCATE, IORING_OP_OPENAT, IORING_OP_CLOSE,
	IORING_OP_FILES_UPDATE, IORING_OP_STATX, IORING_OP_FADVISE,
	IORING_OP_MADVISE, IORING_OP_SEND, IORING_OP_RECV, IORING_OP_OPENAT2,
	IORING_OP_EPOLL_CTL, IORING_OP_SPLICE, IORING_OP_PROVIDE_BUFFERS,
	IORING_OP_REMOVE_BUFFERS, IORING_OP_TEE, IORING_OP_SHUTDOWN,
	IORING_OP_RENAMEAT, IORING_OP_UNLINKAT, IORING_OP_MKDIRAT,
	IORING_OP_SYMLINKAT, IORING_OP_LINKAT, IORING_OP_MSG_RING,
	IORING_OP_FSETXATTR, IORING_OP_SETXATTR, IORING_OP_FGETXATTR,
	IORING_OP_GETXATTR, IORING_OP_SOCKET, IORING_OP_SEND_ZC,
	IORING_OP_SENDMSG_ZC, IORING_OP_URING_CMD, IORING_OP_WAITID,
	IORING_OP_FUTEX_WAIT,
	IORING_OP_FUTEX_WAKE, IORING_OP_FUTEX_WAITV,
	IORING_OP_READ_MULTISHOT, IORING_OP_FIXED_FD_INSTALL,
	IORING_OP_FTRUNCATE, IORING_OP_BIND,
	IORING_OP_LISTEN, IORING_OP_EPOLL_WAIT, IORING_OP_READV_FIXED,
	IORING_OP_WRITEV_FIXED, IORING_OP_PIPE,
};

static bool uu_op_listed(unsigned int op)
{
	for (size_t i = 0; i < sizeof(uu_ops); i++)
		if (uu_ops[i] == op)
			return true;
	return false;
}

static void sc_probe(struct dctx *c)
{
	size_t sz = sizeof(struct io_uring_probe) +
		    256 * sizeof(struct io_uring_probe_op);
	struct io_uring_probe *pr = calloc(1, sz);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct tring r;
	unsigned int i;
	char *m;
	int ret;

	if (!pr || dring_flags(c, &r, 8, 0))
		return;
	ret = c->be->reg(r.fd, IORING_REGISTER_PROBE, pr, 256);
	drec_int(c, ret, "PROBE 256");
	drec_int(c, pr->ops_len, "ops_len");
	/* uuring implements fewer ops: compare those it implements */
	for (i = 0; i < sizeof(uu_ops); i++) {
		struct io_uring_probe_op *op = &pr->ops[uu_ops[i]];

		drec_int(c, op->op, "ops[%u].op", uu_ops[i]);
		drec_int(c, op->flags, "ops[%u].flags", uu_ops[i]);
	}
	drec_int(c, pr->last_op, "last_op");
	if (!c->is_kernel)
		for (i = 0; i < pr->ops_len && i < 256; i++)
			dcheck(c, !(pr->ops[i].flags & IO_URING_OP_SUPPORTED) ||
			       uu_op_listed(i),
			       "opcode %u in PROBE but not in uu_ops", i);

	memset(pr, 0, sz);
	ret = c->be->reg(r.fd, IORING_REGISTER_PROBE, pr, 4);
	drec_int(c, ret, "PROBE 4");
	drec_int(c, pr->ops_len, "PROBE 4 ops_len");
	drec_int(c, pr->ops[4].flags, "PROBE 4 leaves ops[4]");
	memset(pr, 0, sz);
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_PROBE, pr, 0),
		 "PROBE 0");
	drec_int(c, pr->ops_len, "PROBE 0 ops_len");
	memset(pr, 0, sz);
	pr->ops[2].resv2 = 1;
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_PROBE, pr, 8),
		 "PROBE non-zero input");
	memset(pr, 0, sz);
	pr->resv = 1;
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_PROBE, pr, 8),
		 "PROBE non-zero resv");
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_PROBE, NULL, 8),
		 "PROBE NULL");
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_PROBE,
			       dunmapped_addr(), 8), "PROBE unmapped");
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_PROBE,
			       dprot_none_page(), 8), "PROBE PROT_NONE");
	m = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	drec_int(c, c->be->reg(r.fd, IORING_REGISTER_PROBE, m, 8),
		 "PROBE read-only");
	drec_int(c, c->be->reg(r.fd, 9999, NULL, 0), "register opcode 9999");
	drec_int(c, c->be->reg(-1, IORING_REGISTER_PROBE, pr, 8),
		 "register fd -1");
	drec_int(c, c->be->reg(0x7fff, IORING_REGISTER_PROBE, pr, 8),
		 "register fd not open");
	ret = open("/dev/null", O_RDONLY);
	drec_int(c, c->be->reg(ret, IORING_REGISTER_PROBE, pr, 8),
		 "register on /dev/null");
	close(ret);
	free(pr);
	tring_exit(&r);
}

static void nop_ring(struct dctx *c, unsigned int flags, unsigned int n)
{
	struct tring r;
	unsigned int i;
	int ret;

	if (dring_flags(c, &r, 8, flags))
		return;
	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = tring_get_sqe(&r);

		tring_prep_nop(sqe, 100 + i);
		if (i & 1) {
			sqe->nop_flags = IORING_NOP_INJECT_RESULT;
			sqe->len = 1000 + i;
		}
		if (i % 3 == 2) {
			sqe->nop_flags = IORING_NOP_INJECT_RESULT;
			sqe->len = (unsigned int)-EPERM;
		}
	}
	ret = tring_submit_and_wait(&r, n);
	drec_int(c, ret, "submit %u", n);
	dreap(c, &r, n, true, "nops");
	/* second round: ring indices wrap */
	for (i = 0; i < 3; i++) {
		tring_queue_nops(&r, 8, 200 + 8 * i, 0);
		drec_int(c, tring_submit_and_wait(&r, 8), "round %u", i);
		dreap(c, &r, 8, true, "round");
	}
	drec_int(c, __atomic_load_n(r.sq_dropped, __ATOMIC_ACQUIRE), "sq dropped");
	tring_exit(&r);
}

static void sc_no_sqarray(struct dctx *c)
{
	nop_ring(c, IORING_SETUP_NO_SQARRAY, 8);
}

static void sc_sqe128_cqe32(struct dctx *c)
{
	nop_ring(c, IORING_SETUP_SQE128 | IORING_SETUP_CQE32, 8);
	nop_ring(c, IORING_SETUP_SQE128, 8);
	nop_ring(c, IORING_SETUP_CQE32, 8);
}

static void sc_no_mmap(struct dctx *c)
{
	nop_ring(c, IORING_SETUP_NO_MMAP, 8);
	nop_ring(c, IORING_SETUP_NO_MMAP | IORING_SETUP_NO_SQARRAY |
		    IORING_SETUP_CQE32, 8);
}

/* NO_MMAP with the caller's memory: shared, private, and a file mapping */
static void no_mmap_mem(struct dctx *c, int kind)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t rsz = 8 * pg, ssz = 2 * pg;
	struct io_uring_params p;
	struct tring r;
	char *ring, *sqes;
	int flags = kind == 0 ? MAP_SHARED | MAP_ANONYMOUS :
				MAP_PRIVATE | MAP_ANONYMOUS;
	int fd = -1, ret;

	if (kind == 2) {	/* a MAP_SHARED mapping of a tmpfs file */
		fd = dtmpfile_at(c, "/dev/shm", rsz + ssz, 0);
		ring = mmap(NULL, rsz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		sqes = mmap(NULL, ssz, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			    (off_t)rsz);
	} else {
		ring = mmap(NULL, rsz, PROT_READ | PROT_WRITE, flags, -1, 0);
		sqes = mmap(NULL, ssz, PROT_READ | PROT_WRITE, flags, -1, 0);
	}
	dcheck(c, ring != MAP_FAILED && sqes != MAP_FAILED, "mmap");
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_NO_MMAP;
	p.cq_off.user_addr = (uint64_t)(uintptr_t)ring;
	p.sq_off.user_addr = (uint64_t)(uintptr_t)sqes;
	ret = dring(c, &r, 8, &p, "NO_MMAP setup");
	if (!ret) {
		drec_int(c, (uintptr_t)r.sq_head >= (uintptr_t)ring &&
			 (uintptr_t)r.sq_head < (uintptr_t)ring + rsz,
			 "rings live in the caller's memory");
		tring_queue_nops(&r, 8, 1, 0);
		drec_int(c, tring_submit_and_wait(&r, 8), "submit 8");
		dreap(c, &r, 8, true, "nops in caller memory");
		tring_queue_nops(&r, 8, 11, 0);
		drec_int(c, tring_submit_and_wait(&r, 8), "submit 8 more");
		dreap(c, &r, 8, true, "more nops");
		tring_exit(&r);
	}
	munmap(ring, rsz);
	munmap(sqes, ssz);
	if (fd >= 0)
		close(fd);
}

static void sc_no_mmap_shared(struct dctx *c)
{
	no_mmap_mem(c, 0);
}

static void sc_no_mmap_private(struct dctx *c)
{
	no_mmap_mem(c, 1);
}

static void sc_no_mmap_file(struct dctx *c)
{
	no_mmap_mem(c, 2);
}

/* sq array entries out of range are dropped */
static void sc_sq_dropped(struct dctx *c)
{
	struct tring r;
	unsigned int tail, i;

	if (dring_flags(c, &r, 4, 0))
		return;
	tring_queue_nops(&r, 3, 1, 0);
	/*
	 * tring_flush by hand, the second index made invalid before the
	 * tail store publishes it (an SQPOLL thread may take the entries
	 * as soon as the tail moves).
	 */
	tail = *r.sq_tail;
	for (i = 0; i < 3; i++)
		r.sq_array[(tail + i) & r.sq_mask] =
			i == 1 ? 1000 : (r.sqe_head + i) & r.sq_mask;
	r.sqe_head += 3;
	tail += 3;
	__atomic_store_n(r.sq_tail, tail, __ATOMIC_RELEASE);
	/*
	 * The app submits the first NOP, drops the bad entry and stops
	 * there (enter does not wait then); an SQ thread goes on with the
	 * third in its next loop, so wait for the two CQEs.
	 */
	drec_int(c, tring_enter(&r, 3, 2, IORING_ENTER_GETEVENTS, NULL, 0) >= 0,
		 "submit with a bad index");
	drec_int(c, __atomic_load_n(r.sq_dropped, __ATOMIC_ACQUIRE), "sq dropped");
	drec_int(c, __atomic_load_n(r.sq_head, __ATOMIC_ACQUIRE) - tail, "sq head caught up");
	dreap(c, &r, 1, true, "first nop");
	/* what was left behind the dropped entry */
	drec_int(c, tring_submit(&r), "submit the rest");
	dreap(c, &r, 1, true, "last nop");
	drec_int(c, __atomic_load_n(r.sq_head, __ATOMIC_ACQUIRE) - *r.sq_tail, "sq head after the next enter");
	drec_int(c, tring_cq_ready(&r), "no more CQEs");
	tring_exit(&r);
}

/* the ring fd: dup'd and original closed, still works */
static void sc_dup(struct dctx *c)
{
	struct tring r;
	int fd2;

	if (dring_flags(c, &r, 4, 0))
		return;
	fd2 = c->be->dup(r.fd);
	drec_int(c, fd2 >= 0, "dup");
	if (fd2 < 0)
		return;
	drec_int(c, c->be->close(r.fd), "close original");
	r.fd = r.enter_fd = fd2;
	tring_queue_nops(&r, 2, 7, 0);
	drec_int(c, tring_submit_and_wait(&r, 2), "submit on dup");
	dreap(c, &r, 2, true, "nops");
	drec_int(c, c->be->enter(0x7ffe, 0, 0, 0, NULL, 0), "enter fd not open");
	fd2 = open("/dev/null", O_RDONLY);
	drec_int(c, c->be->enter(fd2, 0, 0, 0, NULL, 0), "enter on /dev/null");
	close(fd2);
	tring_exit(&r);
}

static const struct dscenario scenarios[] = {
	{ "flag_bits", sc_flag_bits, NULL },
	{ "combos", sc_combos, NULL },
	{ "resv", sc_resv, NULL },
	{ "params_out", sc_params_out, NULL },
	{ "bad_params_ptr", sc_bad_params_ptr, NULL },
	{ "mmap", sc_mmap, NULL },
	{ "r_disabled", sc_r_disabled, NULL },
	{ "probe", sc_probe, NULL },
	{ "no_sqarray", sc_no_sqarray, NULL },
	{ "sqe128_cqe32", sc_sqe128_cqe32, NULL },
	{ "no_mmap", sc_no_mmap, NULL },
	{ "no_mmap_shared", sc_no_mmap_shared, NULL },
	{ "no_mmap_private", sc_no_mmap_private, NULL },
	{ "no_mmap_file", sc_no_mmap_file, NULL },
	{ "sq_dropped", sc_sq_dropped, NULL },
	{ "dup", sc_dup, NULL },
};

DTEST_MAIN(scenarios)
