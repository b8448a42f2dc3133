// SPDX-License-Identifier: MIT
/*
 * Differential tests: registered buffers (REGISTER_BUFFERS, BUFFERS2
 * sparse and tagged, BUFFERS_UPDATE, UNREGISTER_BUFFERS, CLONE_BUFFERS;
 * where registration fails: holes, PROT_READ, shared file mappings,
 * RLIMIT_MEMLOCK), the opcodes READ_FIXED, WRITE_FIXED, READV_FIXED,
 * WRITEV_FIXED, and provided buffers (PROVIDE_BUFFERS, REMOVE_BUFFERS,
 * REGISTER_PBUF_RING with and without IOU_PBUF_RING_INC and
 * IOU_PBUF_RING_MMAP, PBUF_STATUS,
 * IOSQE_BUFFER_SELECT for READ and READV on files and pipes, inline and
 * in io-wq).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"
#include "uuring.h"

#define PS 4096

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

static int reg(struct dctx *c, struct tring *r, unsigned int op, void *arg,
	       unsigned int nr)
{
	return c->be->reg((unsigned int)r->fd, op, arg, nr);
}

static struct io_uring_sqe *prep(struct tring *r, int op, int fd,
				 const void *addr, unsigned int len,
				 uint64_t off, uint64_t ud)
{
	return tprep(r, op, fd, addr, len, off, ud, 0);
}

/* Submits what is queued and records the n CQEs it produces, in order. */
static void run(struct dctx *c, struct tring *r, unsigned int n,
		const char *label)
{
	dsubmit(c, r, label);
	dreap(c, r, n, true, label);
}

/* The same, compared as a multiset (inline and io-wq completions mixed). */
static void run_any(struct dctx *c, struct tring *r, unsigned int n,
		    const char *label)
{
	dsubmit(c, r, label);
	dreap(c, r, n, false, label);
}

static void *map(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* REGISTER_BUFFERS with one iovec on a fresh ring */
static int reg_one(struct dctx *c, void *base, size_t len)
{
	struct iovec iov = { base, len };
	struct tring r;
	int ret;

	if (dring_flags(c, &r, 8, 0))
		return -99999;
	ret = reg(c, &r, IORING_REGISTER_BUFFERS, &iov, 1);
	tring_exit(&r);
	return ret;
}

static void sc_reg_errors(struct dctx *c)
{
	char *a = map(4 * PS, PROT_READ | PROT_WRITE), *b, *p;
	char path[] = "/tmp/uubufXXXXXX", spath[] = "/dev/shm/uubufXXXXXX";
	char stackbuf[100];
	int f, sf, mf, z;

	if (!a)
		return;
	drec_int(c, reg_one(c, a, 4 * PS), "anon");
	drec_int(c, reg_one(c, a + 1, 100), "anon unaligned");
	drec_int(c, reg_one(c, a, 0), "len 0");
	drec_int(c, reg_one(c, NULL, 0), "NULL len 0 (empty slot)");
	drec_int(c, reg_one(c, NULL, 10), "NULL len 10");
	drec_int(c, reg_one(c, a, (1UL << 30) + 1), "len 1G+1");
	drec_int(c, reg_one(c, a, 1UL << 30), "len 1G (mostly unmapped)");
	drec_int(c, reg_one(c, (void *)-4096L, 4096), "overflow");
	drec_int(c, reg_one(c, (void *)-8192L, 4096), "top of the address space");
	drec_int(c, reg_one(c, dunmapped_addr(), 100), "unmapped");
	drec_int(c, reg_one(c, dprot_none_page(), 100), "PROT_NONE");
	drec_int(c, reg_one(c, stackbuf, sizeof(stackbuf)), "stack");
	p = map(PS, PROT_READ);
	drec_int(c, reg_one(c, p, PS), "PROT_READ");
	p = map(PS, PROT_WRITE);
	drec_int(c, reg_one(c, p, PS), "PROT_WRITE only");
	b = map(2 * PS, PROT_READ | PROT_WRITE);
	mprotect(b + PS, PS, PROT_READ);
	drec_int(c, reg_one(c, b, 2 * PS), "rw then ro");
	drec_int(c, reg_one(c, b + 100, PS - 100), "rw part only");
	munmap(a + PS, PS);
	drec_int(c, reg_one(c, a, 4 * PS), "hole");
	drec_int(c, reg_one(c, a + 2 * PS, 2 * PS), "after the hole");
	/* file mappings: a shared one of an ext4 file needs dirty tracking */
	f = mkstemp(path);
	sf = mkstemp(spath);
	if (f >= 0 && sf >= 0 && !ftruncate(f, 4 * PS) && !ftruncate(sf, 4 * PS)) {
		p = mmap(NULL, PS, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
		drec_int(c, reg_one(c, p, PS), "ext4 MAP_SHARED");
		p = mmap(NULL, PS, PROT_READ | PROT_WRITE, MAP_PRIVATE, f, 0);
		drec_int(c, reg_one(c, p, PS), "ext4 MAP_PRIVATE");
		p = mmap(NULL, PS, PROT_READ, MAP_SHARED, f, 0);
		drec_int(c, reg_one(c, p, PS), "ext4 MAP_SHARED read-only");
		p = mmap(NULL, PS, PROT_READ | PROT_WRITE, MAP_SHARED, sf, 0);
		drec_int(c, reg_one(c, p, PS), "tmpfs MAP_SHARED");
		unlink(path);
		unlink(spath);
		/* the same mapping, its file unlinked */
		p = mmap(NULL, PS, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
		drec_int(c, reg_one(c, p, PS), "deleted ext4 MAP_SHARED");
		p = mmap(NULL, PS, PROT_READ | PROT_WRITE, MAP_SHARED, sf, 0);
		drec_int(c, reg_one(c, p, PS), "deleted tmpfs MAP_SHARED");
	}
	mf = memfd_create("uubuf", MFD_CLOEXEC);
	if (mf >= 0 && !ftruncate(mf, PS)) {
		p = mmap(NULL, PS, PROT_READ | PROT_WRITE, MAP_SHARED, mf, 0);
		drec_int(c, reg_one(c, p, PS), "memfd MAP_SHARED");
	}
	p = mmap(NULL, PS, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		 -1, 0);
	drec_int(c, reg_one(c, p, PS), "anonymous MAP_SHARED");
	z = open("/dev/zero", O_RDWR | O_CLOEXEC);
	if (z >= 0) {
		p = mmap(NULL, PS, PROT_READ | PROT_WRITE, MAP_SHARED, z, 0);
		drec_int(c, reg_one(c, p, PS), "/dev/zero MAP_SHARED");
		p = mmap(NULL, PS, PROT_READ | PROT_WRITE, MAP_PRIVATE, z, 0);
		drec_int(c, reg_one(c, p, PS), "/dev/zero MAP_PRIVATE");
	}
}

static void sc_reg_table(struct dctx *c)
{
	static struct iovec v[16385];
	char *a = map(PS, PROT_READ | PROT_WRITE);
	struct tring r;

	if (!a || dring_flags(c, &r, 8, 0))
		return;
	for (int i = 0; i < 16385; i++) {
		v[i].iov_base = a;
		v[i].iov_len = PS;
	}
	drec_int(c, reg(c, &r, IORING_UNREGISTER_BUFFERS, NULL, 0), "unregister none");
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS, v, 0), "nr 0");
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS, v, 16385), "nr 16385");
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS, dunmapped_addr(), 1), "bad array");
	v[3].iov_len = (size_t)-1;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS, v, 4), "negative length");
	v[3].iov_len = PS;
	v[2].iov_base = dunmapped_addr();
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS, v, 4), "third unmapped");
	v[2].iov_base = a;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS, v, 16384), "nr 16384");
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS, v, 1), "again");
	drec_int(c, reg(c, &r, IORING_UNREGISTER_BUFFERS, v, 0), "unregister with arg");
	drec_int(c, reg(c, &r, IORING_UNREGISTER_BUFFERS, NULL, 1), "unregister with nr");
	drec_int(c, reg(c, &r, IORING_UNREGISTER_BUFFERS, NULL, 0), "unregister");
	drec_int(c, reg(c, &r, IORING_UNREGISTER_BUFFERS, NULL, 0), "unregister twice");
	/* a NULL array registers empty slots */
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS, NULL, 4), "NULL array");
	prep(&r, IORING_OP_READ_FIXED, 0, a, 10, 0, 1);
	run(c, &r, 1, "read_fixed on an empty slot");
	tring_exit(&r);
}

/* READ_FIXED / WRITE_FIXED: data, the range checks, the order of checks */
static void sc_fixed_rw(struct dctx *c)
{
	char *a = map(2 * PS, PROT_READ | PROT_WRITE), *b = a + PS;
	int fd = dtmpfile(c, 8192, 5), wo;
	struct iovec v[3];
	struct io_uring_sqe *sqe;
	struct tring r;
	char path[64];

	/* SUBMIT_ALL: a failed prep does not stop the batch */
	if (!a || fd < 0 || dring_flags(c, &r, 16, IORING_SETUP_SUBMIT_ALL))
		return;
	v[0].iov_base = a;
	v[0].iov_len = PS;
	v[1].iov_base = NULL;
	v[1].iov_len = 0;
	v[2].iov_base = b + 100;
	v[2].iov_len = 1000;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS, v, 3), "register");
	prep(&r, IORING_OP_READ_FIXED, fd, a, 100, 0, 1);
	run(c, &r, 1, "read_fixed");
	{
		unsigned char want[100];

		dpattern(want, 100, 5, 0);
		drec_int(c, !memcmp(a, want, 100), "read_fixed data");
	}
	memset(b + 100, 'x', 1000);
	/* (separate submissions: the kernel punts buffered ext4 writes) */
	prep(&r, IORING_OP_WRITE_FIXED, fd, b + 100, 1000, 50, 2)->buf_index = 2;
	run(c, &r, 1, "write_fixed");
	prep(&r, IORING_OP_READ_FIXED, fd, a + 1000, 1100, 0, 3);
	run(c, &r, 1, "read_fixed after it");
	drec_int(c, a[1049] == 5 + 49 && a[1050] == 'x' && a[2049] == 'x' &&
		 (unsigned char)a[2050] == (unsigned char)(5 + 1050),
		 "write_fixed data");
	/* ranges */
	prep(&r, IORING_OP_READ_FIXED, fd, a + PS - 10, 10, 0, 10);
	prep(&r, IORING_OP_READ_FIXED, fd, a + PS - 10, 11, 0, 11);
	prep(&r, IORING_OP_READ_FIXED, fd, a - 1, 10, 0, 12);
	prep(&r, IORING_OP_READ_FIXED, fd, a + PS, 0, 0, 13);
	prep(&r, IORING_OP_READ_FIXED, fd, b + 100, 1000, 0, 14); /* slot 0 */
	prep(&r, IORING_OP_READ_FIXED, fd, b + 100, 1000, 0, 15)->buf_index = 1;
	prep(&r, IORING_OP_READ_FIXED, fd, b + 100, 1000, 0, 16)->buf_index = 3;
	prep(&r, IORING_OP_READ_FIXED, fd, b + 99, 10, 0, 17)->buf_index = 2;
	prep(&r, IORING_OP_READ_FIXED, fd, b + 1090, 10, 0, 18)->buf_index = 2;
	prep(&r, IORING_OP_READ_FIXED, fd, b + 1091, 10, 0, 19)->buf_index = 2;
	prep(&r, IORING_OP_READ_FIXED, fd, a, 0x7ffff001, 0, 20);
	prep(&r, IORING_OP_READ_FIXED, fd, (void *)-16L, 32, 0, 21);
	run(c, &r, 12, "ranges");
	/* which check comes first: the file, then the buffer */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	wo = open(path, O_WRONLY | O_CLOEXEC);
	prep(&r, IORING_OP_READ_FIXED, 9999, a, 10, 0, 30)->buf_index = 7;
	prep(&r, IORING_OP_READ_FIXED, wo, a, 10, 0, 31)->buf_index = 7;
	prep(&r, IORING_OP_READ_FIXED, wo, a, 10, 0, 32);
	prep(&r, IORING_OP_READ_FIXED, fd, a, 10, 0, 33)->rw_flags = 0x40000000;
	prep(&r, IORING_OP_READ_FIXED, fd, a, 10, 0, 34)->ioprio = 0xffff;
	sqe = prep(&r, IORING_OP_READ_FIXED, fd, a, 10, 0, 35);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	prep(&r, IORING_OP_READ_FIXED, fd, a + 100, 10, 0, 36)->buf_index = 7;
	run(c, &r, 7, "order of checks");
	/* a fixed file with a fixed buffer */
	drec_int(c, reg(c, &r, IORING_REGISTER_FILES, &fd, 1), "register the file");
	prep(&r, IORING_OP_READ_FIXED, 0, a, 32, 8, 37)->flags |= IOSQE_FIXED_FILE;
	sqe = prep(&r, IORING_OP_READ_FIXED, 1, a, 32, 8, 38);
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe->buf_index = 7;
	run(c, &r, 2, "fixed file");
	/* async (io-wq) and linked */
	sqe = prep(&r, IORING_OP_READ_FIXED, fd, a, 64, 64, 40);
	sqe->flags |= IOSQE_ASYNC | IOSQE_IO_LINK;
	sqe = prep(&r, IORING_OP_WRITE_FIXED, fd, a, 64, 4096, 41);
	sqe->flags |= IOSQE_IO_LINK;
	prep(&r, IORING_OP_READ_FIXED, fd, a, 64, 1 << 20, 42)->buf_index = 1;
	prep(&r, IORING_OP_NOP, -1, NULL, 0, 0, 43);
	run_any(c, &r, 4, "async and linked");
	close(wo);
	close(fd);
	tring_exit(&r);
}

static void sc_fixed_vec(struct dctx *c)
{
	char *a = map(2 * PS, PROT_READ | PROT_WRITE);
	int fd = dtmpfile(c, 8192, 9);
	struct iovec bv = { a, 2 * PS }, iov[4], *big;
	struct io_uring_sqe *sqe;
	struct tring r;

	if (!a || fd < 0 || dring_flags(c, &r, 16, IORING_SETUP_SUBMIT_ALL))
		return;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS, &bv, 1), "register");
	iov[0].iov_base = a + 10;
	iov[0].iov_len = 20;
	iov[1].iov_base = a + PS;
	iov[1].iov_len = PS;
	prep(&r, IORING_OP_READV_FIXED, fd, iov, 2, 100, 1);
	run(c, &r, 1, "readv_fixed");
	{
		unsigned char want[PS + 20];

		dpattern(want, sizeof(want), 9, 100);
		drec_int(c, !memcmp(a + 10, want, 20) &&
			 !memcmp(a + PS, want + 20, PS), "readv_fixed data");
	}
	memset(a, 'w', 64);
	iov[0].iov_base = a;
	iov[0].iov_len = 32;
	iov[1].iov_base = a + 32;
	iov[1].iov_len = 32;
	prep(&r, IORING_OP_WRITEV_FIXED, fd, iov, 2, 0, 2);
	run(c, &r, 1, "writev_fixed");
	{
		char back[64];

		drec_int(c, (int)pread(fd, back, 64, 0), "pread");
		drec_int(c, !memcmp(back, a, 64), "writev_fixed data");
	}
	/* a segment outside, a zero-length one, none, too many, bad array */
	iov[1].iov_base = a + 2 * PS - 10;
	iov[1].iov_len = 11;
	prep(&r, IORING_OP_READV_FIXED, fd, iov, 2, 0, 10);
	iov[2].iov_base = a;
	iov[2].iov_len = 0;
	prep(&r, IORING_OP_READV_FIXED, fd, iov + 2, 1, 0, 11);
	prep(&r, IORING_OP_READV_FIXED, fd, iov, 0, 0, 12);
	prep(&r, IORING_OP_READV_FIXED, fd, dunmapped_addr(), 2, 0, 13);
	prep(&r, IORING_OP_READV_FIXED, fd, iov, 1025, 0, 14);
	prep(&r, IORING_OP_READV_FIXED, fd, iov, 1, 0, 15)->buf_index = 1;
	iov[3].iov_base = a;
	iov[3].iov_len = (size_t)-1;
	prep(&r, IORING_OP_READV_FIXED, fd, iov + 3, 1, 0, 16);
	run(c, &r, 7, "errors");
	/* WRITEV_FIXED's own: a segment outside, no such buffer, a bad
	 * array, a read-only file */
	{
		char path[64];
		int ro;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		ro = open(path, O_RDONLY);
		iov[0].iov_base = a;
		iov[0].iov_len = 8;
		iov[1].iov_base = a + 2 * PS - 4;
		iov[1].iov_len = 8;
		prep(&r, IORING_OP_WRITEV_FIXED, fd, iov, 2, 0, 30);
		prep(&r, IORING_OP_WRITEV_FIXED, fd, iov, 1, 0, 31)->buf_index = 1;
		prep(&r, IORING_OP_WRITEV_FIXED, fd, dunmapped_addr(), 1, 0, 32);
		prep(&r, IORING_OP_WRITEV_FIXED, ro, iov, 1, 0, 33);
		run(c, &r, 4, "writev_fixed errors");
		close(ro);
	}
	/* many segments (more than the inline iovecs) */
	big = calloc(20, sizeof(*big));
	for (int i = 0; i < 20; i++) {
		big[i].iov_base = a + 100 * i;
		big[i].iov_len = 50;
	}
	prep(&r, IORING_OP_READV_FIXED, fd, big, 20, 0, 20);
	sqe = prep(&r, IORING_OP_READV_FIXED, fd, big, 20, 0, 21);
	sqe->flags |= IOSQE_ASYNC;
	run_any(c, &r, 2, "20 segments");
	free(big);
	close(fd);
	tring_exit(&r);
}

/* BUFFERS2, BUFFERS_UPDATE, tags */
static void sc_tags(struct dctx *c)
{
	char *a = map(4 * PS, PROT_READ | PROT_WRITE);
	struct io_uring_rsrc_register rr;
	struct io_uring_rsrc_update2 up;
	struct iovec v[4];
	uint64_t tags[4] = { 0x100, 0, 0x300, 0x400 }, utags[2] = { 0x100, 0x200 };
	int fd = dtmpfile(c, 8192, 1);
	struct tring r;

	if (!a || fd < 0 || dring_flags(c, &r, 16, 0))
		return;
	memset(&rr, 0, sizeof(rr));
	memset(&up, 0, sizeof(up));
	up.nr = 1;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS_UPDATE, &up, sizeof(up)), "update, no table");
	rr.nr = 4;
	rr.flags = IORING_RSRC_REGISTER_SPARSE;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr) + 8), "bad size");
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS2, dunmapped_addr(), sizeof(rr)), "bad pointer");
	rr.resv2 = 1;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr)), "resv2");
	rr.resv2 = 0;
	rr.flags = 2;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr)), "flags");
	rr.flags = IORING_RSRC_REGISTER_SPARSE;
	rr.data = (uint64_t)(uintptr_t)v;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr)), "sparse with data");
	rr.data = 0;
	rr.tags = (uint64_t)(uintptr_t)tags;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr)), "sparse with tags");
	rr.tags = 0;
	rr.nr = 0;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr)), "nr 0");
	rr.nr = 4;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr)), "sparse 4");
	drec_int(c, tring_cq_ready(&r), "no CQE");
	/* update slot 1 and 2 with tags */
	for (int i = 0; i < 4; i++) {
		v[i].iov_base = a + i * PS;
		v[i].iov_len = PS;
	}
	up.offset = 1;
	up.data = (uint64_t)(uintptr_t)v;
	up.tags = (uint64_t)(uintptr_t)utags;
	up.nr = 2;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS_UPDATE, &up, sizeof(up) - 1), "update bad size");
	up.resv = 1;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS_UPDATE, &up, sizeof(up)), "update resv");
	up.resv = 0;
	up.offset = 3;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS_UPDATE, &up, sizeof(up)), "update past the end");
	up.offset = 0xffffffff;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS_UPDATE, &up, sizeof(up)), "update offset overflow");
	up.offset = 1;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS_UPDATE, &up, sizeof(up)), "update 1..2");
	prep(&r, IORING_OP_READ_FIXED, fd, a, 8, 0, 1)->buf_index = 1;
	prep(&r, IORING_OP_READ_FIXED, fd, a + PS, 8, 0, 2)->buf_index = 2;
	prep(&r, IORING_OP_READ_FIXED, fd, a, 8, 0, 3);
	run(c, &r, 3, "reads after update");
	/* replace slot 1 (tag 0x100): its tag CQE comes now */
	up.data = (uint64_t)(uintptr_t)&v[3];
	up.tags = 0;
	up.nr = 1;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS_UPDATE, &up, sizeof(up)), "replace slot 1");
	dreap(c, &r, 1, true, "tag of the replaced buffer");
	/* a tag for an empty slot; a bad iovec part way */
	v[0].iov_base = NULL;
	v[0].iov_len = 0;
	up.data = (uint64_t)(uintptr_t)v;
	up.tags = (uint64_t)(uintptr_t)utags;
	up.offset = 0;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS_UPDATE, &up, sizeof(up)), "tag on an empty slot");
	v[0].iov_base = a;
	v[0].iov_len = PS;
	v[1].iov_base = dunmapped_addr();
	up.nr = 2;
	up.tags = 0;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS_UPDATE, &up, sizeof(up)), "second bad");
	v[1].iov_base = a + PS;
	/* clear slot 2 with an empty iovec (its tag 0x300 posted) */
	v[0].iov_base = NULL;
	v[0].iov_len = 0;
	up.offset = 2;
	up.nr = 1;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS_UPDATE, &up, sizeof(up)), "clear slot 2");
	dreap(c, &r, 1, true, "tag of the cleared buffer");
	prep(&r, IORING_OP_READ_FIXED, fd, a + PS, 8, 0, 4)->buf_index = 2;
	run(c, &r, 1, "read from the cleared slot");
	drec_int(c, reg(c, &r, IORING_UNREGISTER_BUFFERS, NULL, 0), "unregister");
	drec_int(c, tring_cq_ready(&r), "no tags left");
	/* tagged registration: tags posted from the last slot down */
	for (int i = 0; i < 4; i++) {
		v[i].iov_base = a + i * PS;
		v[i].iov_len = PS;
	}
	v[1].iov_base = NULL;
	v[1].iov_len = 0;
	memset(&rr, 0, sizeof(rr));
	rr.nr = 4;
	rr.data = (uint64_t)(uintptr_t)v;
	rr.tags = (uint64_t)(uintptr_t)tags;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr)), "tagged 4");
	drec_int(c, reg(c, &r, IORING_UNREGISTER_BUFFERS, NULL, 0), "unregister tagged");
	dreap(c, &r, 3, true, "tags at unregister");
	/* a failed registration posts no tags */
	v[3].iov_base = dunmapped_addr();
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr)), "tagged, last bad");
	tags[1] = 7;
	v[3].iov_base = a + 3 * PS;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr)), "tag on an empty slot");
	drec_int(c, tring_cq_ready(&r), "no tags");
	close(fd);
	tring_exit(&r);
}

/* The tag of a buffer in use comes after the CQE of the request using it. */
static void sc_tag_inflight(struct dctx *c)
{
	char *a = map(PS, PROT_READ | PROT_WRITE);
	struct io_uring_rsrc_register rr;
	struct iovec v = { a, PS };
	uint64_t tag = 0xabc;
	struct tring r;
	int p[2];

	if (!a || pipe(p) || dring_flags(c, &r, 16, 0))
		return;
	memset(&rr, 0, sizeof(rr));
	rr.nr = 1;
	rr.data = (uint64_t)(uintptr_t)&v;
	rr.tags = (uint64_t)(uintptr_t)&tag;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr)), "register");
	prep(&r, IORING_OP_READ_FIXED, p[0], a, 100, 0, 1);
	drec_int(c, tring_submit(&r), "parked read_fixed");
	usleep(20000);
	drec_int(c, reg(c, &r, IORING_UNREGISTER_BUFFERS, NULL, 0), "unregister");
	usleep(20000);
	drec_int(c, tring_cq_ready(&r), "no tag while in use");
	prep(&r, IORING_OP_READ_FIXED, p[0], a, 100, 0, 2);
	run(c, &r, 1, "a new read_fixed");
	drec_int(c, (int)write(p[1], "hello", 5), "write");
	dreap(c, &r, 2, true, "read, then the tag");
	tclose2(p);
	tring_exit(&r);
}

static void sc_clone(struct dctx *c)
{
	char *a = map(4 * PS, PROT_READ | PROT_WRITE);
	struct io_uring_clone_buffers cb;
	struct iovec v[3] = { { a, PS }, { NULL, 0 }, { a + 2 * PS, PS } };
	struct tring s, d, e;
	int fd = dtmpfile(c, 8192, 2), other = open("/dev/null", O_RDONLY);

	if (!a || fd < 0 || dring_flags(c, &s, 8, 0))
		return;
	if (dring_flags(c, &d, 8, 0) || dring_flags(c, &e, 8, 0))
		return;
	memset(&cb, 0, sizeof(cb));
	cb.src_fd = (uint32_t)s.fd;
	drec_int(c, reg(c, &d, IORING_REGISTER_CLONE_BUFFERS, &cb, 0), "nr_args 0");
	drec_int(c, reg(c, &d, IORING_REGISTER_CLONE_BUFFERS, NULL, 1), "NULL");
	drec_int(c, reg(c, &d, IORING_REGISTER_CLONE_BUFFERS, dunmapped_addr(), 1), "bad pointer");
	drec_int(c, reg(c, &d, IORING_REGISTER_CLONE_BUFFERS, &cb, 1), "source has none");
	cb.flags = 4;
	drec_int(c, reg(c, &d, IORING_REGISTER_CLONE_BUFFERS, &cb, 1), "bad flags");
	cb.flags = 0;
	cb.pad[1] = 1;
	drec_int(c, reg(c, &d, IORING_REGISTER_CLONE_BUFFERS, &cb, 1), "pad");
	cb.pad[1] = 0;
	cb.src_fd = 9999;
	drec_int(c, reg(c, &d, IORING_REGISTER_CLONE_BUFFERS, &cb, 1), "bad fd");
	cb.src_fd = (uint32_t)other;
	drec_int(c, reg(c, &d, IORING_REGISTER_CLONE_BUFFERS, &cb, 1), "not a ring");
	cb.src_fd = (uint32_t)s.fd;
	drec_int(c, reg(c, &s, IORING_REGISTER_BUFFERS, v, 3), "source registers 3");
	cb.dst_off = 1;
	drec_int(c, reg(c, &d, IORING_REGISTER_CLONE_BUFFERS, &cb, 1), "offset without nr");
	cb.dst_off = 0;
	cb.nr = 4;
	drec_int(c, reg(c, &d, IORING_REGISTER_CLONE_BUFFERS, &cb, 1), "nr too big");
	cb.nr = 2;
	cb.src_off = 2;
	drec_int(c, reg(c, &d, IORING_REGISTER_CLONE_BUFFERS, &cb, 1), "src range");
	cb.nr = 0;
	cb.src_off = 0;
	drec_int(c, reg(c, &d, IORING_REGISTER_CLONE_BUFFERS, &cb, 1), "clone all");
	drec_int(c, reg(c, &d, IORING_REGISTER_CLONE_BUFFERS, &cb, 1), "again");
	drec_int(c, reg(c, &s, IORING_UNREGISTER_BUFFERS, NULL, 0), "source unregisters");
	for (int i = 0; i < 4; i++)
		prep(&d, IORING_OP_READ_FIXED, fd, a + i * PS, 16, 0, 10 + i)->buf_index = (uint16_t)i;
	run(c, &d, 4, "reads on the clone");
	/* replace: slot 0 of e's table kept, slots from 1 cloned from d */
	v[0].iov_base = a + 3 * PS;
	drec_int(c, reg(c, &e, IORING_REGISTER_BUFFERS, v, 3), "e registers 3");
	memset(&cb, 0, sizeof(cb));
	cb.src_fd = (uint32_t)d.fd;
	cb.flags = IORING_REGISTER_DST_REPLACE;
	cb.dst_off = 1;
	cb.src_off = 0;
	cb.nr = 1;
	drec_int(c, reg(c, &e, IORING_REGISTER_CLONE_BUFFERS, &cb, 1), "replace");
	for (int i = 0; i < 4; i++)
		prep(&e, IORING_OP_READ_FIXED, fd, a + (i ? (i - 1) : 3) * PS, 16, 0, 20 + i)->buf_index = (uint16_t)i;
	prep(&e, IORING_OP_READ_FIXED, fd, a + 2 * PS, 16, 0, 24)->buf_index = 2;
	run(c, &e, 5, "reads after replace");
	/* a registered source ring */
	{
		int idx = tring_register_ring_fd(&d);

		memset(&cb, 0, sizeof(cb));
		cb.src_fd = (uint32_t)idx;
		cb.flags = IORING_REGISTER_SRC_REGISTERED | IORING_REGISTER_DST_REPLACE;
		drec_int(c, reg(c, &e, IORING_REGISTER_CLONE_BUFFERS, &cb, 1), "registered source");
		cb.src_fd = 15;
		drec_int(c, reg(c, &e, IORING_REGISTER_CLONE_BUFFERS, &cb, 1), "empty registered slot");
		cb.src_fd = 16;
		drec_int(c, reg(c, &e, IORING_REGISTER_CLONE_BUFFERS, &cb, 1), "registered index too big");
	}
	/* from itself */
	memset(&cb, 0, sizeof(cb));
	cb.src_fd = (uint32_t)e.fd;
	cb.flags = IORING_REGISTER_DST_REPLACE;
	cb.nr = 1;
	cb.src_off = 2;
	cb.dst_off = 3;
	drec_int(c, reg(c, &e, IORING_REGISTER_CLONE_BUFFERS, &cb, 1), "from itself");
	prep(&e, IORING_OP_READ_FIXED, fd, a + 2 * PS, 16, 0, 30)->buf_index = 3;
	run(c, &e, 1, "read after self-clone");
	close(other);
	close(fd);
	tring_exit(&s);
	tring_exit(&d);
	tring_exit(&e);
}

/*
 * T3: the kernel pins a registered buffer, so a READ_FIXED into it after
 * munmap still succeeds (into pages nobody can see any more); uuring reads
 * into the address range, which faults.  docs/compatibility.md.
 */
static void sc_pinning(struct dctx *c)
{
	char *a = map(PS, PROT_READ | PROT_WRITE);
	struct iovec v = { a, PS };
	int fd = dtmpfile(c, 4096, 3);
	struct tring r;

	if (!a || fd < 0 || dring_flags(c, &r, 8, 0))
		return;
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS, &v, 1), "register");
	munmap(a, PS);
	prep(&r, IORING_OP_READ_FIXED, fd, a, 100, 0, 1);
	prep(&r, IORING_OP_WRITE_FIXED, fd, a, 100, 0, 2);
	run(c, &r, 2, "read_fixed, write_fixed after munmap");
	close(fd);
	tring_exit(&r);
}

/* RLIMIT_MEMLOCK: charged when the ring's owner lacks CAP_IPC_LOCK */
static long memlock_body(struct dctx *c, void *arg)
{
	struct rlimit rl = { 16 * PS, 16 * PS };
	char *a = map(64 * PS, PROT_READ | PROT_WRITE);
	struct iovec v[2] = { { a, 40 * PS }, { a, 4 * PS } };
	struct tring r;
	/* an unprivileged user of its own (by pid), so no other process
	 * shares the kernel's per-user count */
	uid_t uid = 100000 + (uid_t)(getpid() % 50000);
	long res = 0;
	int ret;

	(void)arg;
	if (!a || setrlimit(RLIMIT_MEMLOCK, &rl) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -1;
	if (tring_init(&r, c->be, 8, 0))
		return -2;
	ret = reg(c, &r, IORING_REGISTER_BUFFERS, &v[0], 1);
	res = res * 100 + (ret == -ENOMEM ? 1 : ret == 0 ? 2 : 3);
	ret = reg(c, &r, IORING_REGISTER_BUFFERS, &v[1], 1);
	res = res * 100 + (ret == -ENOMEM ? 1 : ret == 0 ? 2 : 3);
	tring_exit(&r);
	return res;
}

static void sc_memlock(struct dctx *c)
{
	if (geteuid()) {
		dnote(c, "not root: cannot switch to a fresh user");
		return;
	}
	drec_int(c, disolated(c, memlock_body, NULL, 5000),
		 "40 pages, then 4 pages, under a 16-page RLIMIT_MEMLOCK");
}

/* ---- provided buffers ---- */

static struct io_uring_sqe *provide(struct tring *r, void *addr, unsigned int len,
				    int nbufs, uint16_t bgid, uint64_t bid,
				    uint64_t ud)
{
	struct io_uring_sqe *sqe = prep(r, IORING_OP_PROVIDE_BUFFERS, nbufs,
					addr, len, bid, ud);

	sqe->buf_group = bgid;
	return sqe;
}

static struct io_uring_sqe *remove_bufs(struct tring *r, int nbufs,
					uint16_t bgid, uint64_t ud)
{
	struct io_uring_sqe *sqe = prep(r, IORING_OP_REMOVE_BUFFERS, nbufs,
					NULL, 0, 0, ud);

	sqe->buf_group = bgid;
	return sqe;
}

/* a READ (or READV with iov) with IOSQE_BUFFER_SELECT from group bgid */
static struct io_uring_sqe *read_sel(struct tring *r, int fd, unsigned int len,
				     uint64_t off, uint16_t bgid, uint64_t ud)
{
	struct io_uring_sqe *sqe = prep(r, IORING_OP_READ, fd, NULL, len, off,
					ud);

	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = bgid;
	return sqe;
}

static void sc_provide(struct dctx *c)
{
	char *a = map(PS, PROT_READ | PROT_WRITE);
	int fd = dtmpfile(c, 8192, 4), wo;
	struct io_uring_sqe *sqe;
	struct iovec iov;
	struct tring r;
	char path[64];

	/* SUBMIT_ALL: a failed prep does not stop the batch */
	if (!a || fd < 0 || dring_flags(c, &r, 32, IORING_SETUP_SUBMIT_ALL))
		return;
	/* prep errors */
	provide(&r, a, 64, 0, 1, 0, 1);
	provide(&r, a, 64, -1, 1, 0, 2);
	provide(&r, a, 64, 65537, 1, 0, 3);
	provide(&r, a, 0, 1, 1, 0, 4);
	provide(&r, a, 64, 1, 1, 65536, 5);
	provide(&r, a, 64, 2, 1, 65535, 6);
	provide(&r, (void *)0x7ffffffff000UL, 64, 1, 1, 0, 7);
	provide(&r, (void *)-64L, 64, 2, 1, 0, 8);
	provide(&r, a, 64, 1, 1, 0, 9)->rw_flags = 1;
	provide(&r, a, 64, 1, 1, 0, 10)->ioprio = 1;
	remove_bufs(&r, 0, 1, 11);
	remove_bufs(&r, 65537, 1, 12);
	remove_bufs(&r, 1, 1, 13)->addr = 1;
	remove_bufs(&r, 1, 1, 14)->off = 1;
	remove_bufs(&r, 1, 1, 15);
	run(c, &r, 15, "prep errors");
	/* 4 buffers of 64 bytes, bids 10..13, in group 1; 2 more in group 2 */
	provide(&r, a, 64, 4, 1, 10, 20);
	provide(&r, a + 256, 100, 2, 2, 65534, 21);
	provide(&r, dunmapped_addr(), 16, 1, 3, 0, 22);
	run(c, &r, 3, "provide");
	read_sel(&r, fd, 0, 0, 1, 30);           /* the whole buffer */
	read_sel(&r, fd, 10, 100, 1, 31);        /* 10 bytes of it */
	read_sel(&r, fd, 1000, 0, 1, 32);        /* capped at 64 */
	sqe = prep(&r, IORING_OP_READV, fd, &iov, 1, 0, 33);
	iov.iov_base = NULL;
	iov.iov_len = 5;
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = 1;
	read_sel(&r, fd, 0, 0, 1, 34);           /* empty: -ENOBUFS */
	read_sel(&r, fd, 0, 0, 7, 35);           /* no such group */
	read_sel(&r, fd, 0, 8180, 2, 36);        /* short at EOF */
	read_sel(&r, fd, 0, 0, 3, 37);           /* into unmapped memory */
	run(c, &r, 8, "selected reads");
	{
		unsigned char want[64];

		dpattern(want, 64, 4, 0);
		drec_int(c, !memcmp(a, want, 64), "data of bid 10");
		dpattern(want, 10, 4, 100);
		drec_int(c, !memcmp(a + 64, want, 10), "data of bid 11");
	}
	/* READV prep: one iovec only, readable */
	sqe = prep(&r, IORING_OP_READV, fd, &iov, 2, 0, 40);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe = prep(&r, IORING_OP_READV, fd, dunmapped_addr(), 1, 0, 41);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	/* not for writes; the fd is checked first, then the group, then the
	 * mode of the file */
	sqe = prep(&r, IORING_OP_WRITE, fd, NULL, 10, 0, 42);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe = prep(&r, IORING_OP_WRITE_FIXED, fd, a, 10, 0, 43);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	read_sel(&r, 9999, 0, 0, 2, 44);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	wo = open(path, O_WRONLY | O_CLOEXEC);
	read_sel(&r, wo, 0, 0, 1, 45);
	read_sel(&r, wo, 0, 0, 2, 46);
	run(c, &r, 7, "errors");
	/* provide more, remove */
	provide(&r, a, 32, 3, 1, 0, 50);
	remove_bufs(&r, 2, 1, 51);
	remove_bufs(&r, 5, 1, 52);
	remove_bufs(&r, 5, 1, 53);
	remove_bufs(&r, 1, 9, 54);
	read_sel(&r, fd, 0, 0, 1, 55);
	run(c, &r, 6, "remove");
	/* a group holds at most 65535 buffers */
	provide(&r, a, 1, 65535, 4, 0, 60);
	provide(&r, a, 1, 1, 4, 0, 61);
	remove_bufs(&r, 65536, 4, 62);
	run(c, &r, 3, "full group");
	/* async and linked: a failed selection fails the chain */
	provide(&r, a, 16, 1, 5, 7, 70)->flags |= IOSQE_IO_LINK;
	read_sel(&r, fd, 0, 0, 5, 71)->flags |= IOSQE_ASYNC | IOSQE_IO_LINK;
	read_sel(&r, fd, 0, 0, 5, 72)->flags |= IOSQE_IO_LINK;
	prep(&r, IORING_OP_NOP, -1, NULL, 0, 0, 73);
	run(c, &r, 4, "async and linked");
	close(wo);
	close(fd);
	tring_exit(&r);
}

/*
 * Every io-wq worker (iou-wrk-*) sleeps in its idle wait: the kernel's in
 * io_wq_worker, uuring's on a futex.  A worker that has committed a ring
 * buffer for an async pipe read still runs the request until the read
 * waits in a poll; a cancel in between finds it running (-EALREADY, the
 * read -EINTR) where later it finds the poll (0, -ECANCELED).
 */
static bool workers_idle(void)
{
	int all = tthreads_named("iou-wrk-", true, NULL, NULL);

	return all >= 0 &&
	       tthreads_in_wchan("iou-wrk-", true, "io_wq_worker") +
	       tthreads_in_wchan("iou-wrk-", true, "futex_do_wait") >= all;
}

static void add_nvcsw(const char *tid, void *arg)
{
	char path[300], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "voluntary_ctxt_switches:", 24))
			*(unsigned long long *)arg += strtoull(line + 24, NULL,
							       10);
	fclose(f);
}

/* how often the io-wq workers alive now have gone to sleep */
static unsigned long long workers_slept(void)
{
	unsigned long long n = 0;

	tthreads_named("iou-wrk-", true, add_nvcsw, &n);
	return n;
}

static unsigned long long parked_count(struct tring *r)
{
	struct uuring_stats st;

	if (uuring_get_stats(r->fd, &st, sizeof(st)) <= 0)
		return 0;
	return st.route_poll;
}

/*
 * Waits (10 s at most) until an IOSQE_ASYNC read of an empty pipe has
 * been tried by an io-wq worker, which selects a legacy buffer and
 * leaves the read waiting in a poll with it: on uuring until the read is
 * parked on the readiness engine (route_poll grows), on the kernel until
 * a worker has gone to sleep since (slept0 = workers_slept() before the
 * submit) and every worker is idle.  A fixed 50 ms was only usually
 * long enough for a worker to get there on a loaded machine.
 */
static void await_async_parked(struct dctx *c, struct tring *r,
			       unsigned long long slept0,
			       unsigned long long parked0)
{
	for (int i = 0; i < 10000; i++) {
		if (c->is_kernel ? workers_slept() > slept0 && workers_idle() :
				   parked_count(r) > parked0)
			return;
		usleep(1000);
	}
}

/* A read that waits for a pipe keeps its legacy buffer (6.18); a failure
 * after selection consumes it, with the CQE flag.  (One waiting read at a
 * time: the kernel wakes the waiters of one file last-armed first.) */
static void sc_provide_pipe(struct dctx *c)
{
	char *a = map(PS, PROT_READ | PROT_WRITE);
	struct tring r;
	unsigned long long slept0, parked0;
	int p[2];

	if (!a || pipe(p) || dring_flags(c, &r, 16, 0))
		return;
	provide(&r, a, 64, 2, 1, 0, 1);
	run(c, &r, 1, "provide 2");
	read_sel(&r, p[0], 0, 0, 1, 2);
	drec_int(c, tring_submit(&r), "parked read");
	usleep(20000);
	remove_bufs(&r, 2, 1, 3);
	run(c, &r, 1, "remove two while parked");
	drec_int(c, (int)write(p[1], "abc", 3), "write");
	dreap(c, &r, 1, true, "read");
	drec_int(c, !memcmp(a, "abc", 3), "data");
	read_sel(&r, p[0], 0, 0, 1, 4)->flags |= IOSQE_ASYNC;
	drec_int(c, tring_submit(&r), "parked async read, group empty");
	dreap(c, &r, 1, true, "async read");
	/* a wrong-mode pipe end after selection */
	provide(&r, a, 64, 1, 1, 9, 5);
	read_sel(&r, p[1], 0, 0, 1, 6);
	read_sel(&r, p[0], 0, 0, 1, 7);
	run(c, &r, 3, "read on the write end");
	/* io-wq: selected, then waiting with it */
	provide(&r, a, 64, 1, 1, 11, 8);
	run(c, &r, 1, "provide 1");
	slept0 = workers_slept();
	parked0 = parked_count(&r);
	read_sel(&r, p[0], 0, 0, 1, 9)->flags |= IOSQE_ASYNC;
	drec_int(c, tring_submit(&r), "parked async read");
	await_async_parked(c, &r, slept0, parked0);
	remove_bufs(&r, 1, 1, 10);
	run(c, &r, 1, "remove while the async read waits");
	drec_int(c, (int)write(p[1], "defg", 4), "write");
	dreap(c, &r, 1, true, "async read");
	/* a cancelled waiting read: its buffer is consumed, with the flag */
	provide(&r, a, 64, 2, 1, 20, 11);
	run(c, &r, 1, "provide 2");
	read_sel(&r, p[0], 0, 0, 1, 12);
	drec_int(c, tring_submit(&r), "parked read");
	usleep(20000);
	prep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 13)->addr = 12;
	run_any(c, &r, 2, "cancel it");
	remove_bufs(&r, 5, 1, 14);
	run(c, &r, 1, "left in the group");
	tclose2(p);
	tring_exit(&r);
}

/* a buffer ring of n entries in fresh pages; the tail left at 0 */
static struct io_uring_buf_ring *mk_ring(unsigned int n)
{
	size_t sz = ((size_t)n * 16 + PS - 1) & ~(size_t)(PS - 1);

	return map(sz, PROT_READ | PROT_WRITE);
}

static int pbuf_unreg(struct dctx *c, struct tring *r, uint16_t bgid)
{
	struct io_uring_buf_reg rg;

	memset(&rg, 0, sizeof(rg));
	rg.bgid = bgid;
	return reg(c, r, IORING_UNREGISTER_PBUF_RING, &rg, 1);
}

static void sc_pbuf_reg(struct dctx *c)
{
	struct io_uring_buf_ring *br = mk_ring(8), *big = mk_ring(4096);
	char *ro = map(PS, PROT_READ), *a = map(PS, PROT_READ | PROT_WRITE);
	struct io_uring_buf_reg rg;
	struct io_uring_buf_status st;
	struct tring r;

	if (!br || !big || !ro || !a || dring_flags(c, &r, 16, 0))
		return;
	memset(&rg, 0, sizeof(rg));
	rg.ring_addr = (uint64_t)(uintptr_t)br;
	rg.ring_entries = 8;
	drec_int(c, reg(c, &r, IORING_REGISTER_PBUF_RING, &rg, 2), "nr_args 2");
	drec_int(c, reg(c, &r, IORING_REGISTER_PBUF_RING, NULL, 1), "NULL");
	drec_int(c, reg(c, &r, IORING_REGISTER_PBUF_RING, dunmapped_addr(), 1), "bad pointer");
	rg.resv[1] = 1;
	drec_int(c, reg(c, &r, IORING_REGISTER_PBUF_RING, &rg, 1), "resv");
	drec_int(c, tpbuf_reg(&r, br, 8, 0, 4), "unknown flag");
	drec_int(c, tpbuf_reg(&r, br, 0, 0, 0), "0 entries");
	drec_int(c, tpbuf_reg(&r, br, 6, 0, 0), "6 entries");
	drec_int(c, tpbuf_reg(&r, big, 65536, 0, 0), "65536 entries");
	drec_int(c, tpbuf_reg(&r, (char *)br + 16, 8, 0, 0), "unaligned");
	drec_int(c, tpbuf_reg(&r, NULL, 8, 0, 0), "NULL ring");
	drec_int(c, tpbuf_reg(&r, dunmapped_addr(), 8, 0, 0), "unmapped ring");
	drec_int(c, tpbuf_reg(&r, ro, 8, 0, 0), "read-only ring");
	drec_int(c, tpbuf_reg(&r, big, 1024, 0, 0), "1024 entries in 16 pages");
	drec_int(c, tpbuf_reg(&r, big, 32768, 1, 0), "32768 entries, past the mapping");
	drec_int(c, tpbuf_reg(&r, br, 8, 0, 0), "group 0 again");
	drec_int(c, tpbuf_reg(&r, br, 8, 65535, IOU_PBUF_RING_INC), "group 65535, INC");
	drec_int(c, tpbuf_head(&r, 65535), "status");
	drec_int(c, tpbuf_head(&r, 3), "status, no group");
	drec_int(c, tpbuf_head(&r, 65536), "status, group 65536");
	memset(&st, 0, sizeof(st));
	st.resv[3] = 1;
	drec_int(c, reg(c, &r, IORING_REGISTER_PBUF_STATUS, &st, 1), "status resv");
	drec_int(c, reg(c, &r, IORING_REGISTER_PBUF_STATUS, &st, 0), "status nr_args 0");
	drec_int(c, reg(c, &r, IORING_REGISTER_PBUF_STATUS, dunmapped_addr(), 1), "status bad pointer");
	/* legacy groups: a non-empty one blocks a ring, an empty one not */
	provide(&r, a, 64, 1, 5, 0, 1);
	provide(&r, a, 64, 1, 6, 0, 2);
	remove_bufs(&r, 1, 6, 3);
	provide(&r, a, 64, 1, 0, 0, 4);
	remove_bufs(&r, 1, 0, 5);
	run(c, &r, 5, "legacy groups");
	drec_int(c, tpbuf_reg(&r, br, 8, 5, 0), "over a legacy group");
	drec_int(c, tpbuf_reg(&r, br, 8, 6, 0), "over an emptied legacy group");
	drec_int(c, tpbuf_head(&r, 5), "status of a legacy group");
	drec_int(c, pbuf_unreg(c, &r, 5), "unregister a legacy group");
	drec_int(c, pbuf_unreg(c, &r, 7), "unregister no group");
	memset(&rg, 0, sizeof(rg));
	rg.bgid = 6;
	rg.flags = IOU_PBUF_RING_INC;
	drec_int(c, reg(c, &r, IORING_UNREGISTER_PBUF_RING, &rg, 1), "unregister with flags");
	rg.flags = 0;
	rg.resv[0] = 1;
	drec_int(c, reg(c, &r, IORING_UNREGISTER_PBUF_RING, &rg, 1), "unregister with resv");
	drec_int(c, pbuf_unreg(c, &r, 6), "unregister");
	drec_int(c, pbuf_unreg(c, &r, 6), "unregister again");
	drec_int(c, pbuf_unreg(c, &r, 65535), "unregister 65535");
	drec_int(c, pbuf_unreg(c, &r, 0), "unregister 0");
	tring_exit(&r);
}

/* Selection from a buffer ring: files commit at selection, the CQE names
 * the bid, PBUF_STATUS follows the head. */
static void sc_pbuf_file(struct dctx *c)
{
	struct io_uring_buf_ring *br = mk_ring(4);
	char *a = map(PS, PROT_READ | PROT_WRITE);
	int fd = dtmpfile(c, 8192, 6), wo;
	struct io_uring_sqe *sqe;
	struct iovec iov = { NULL, 20 };
	uint16_t tail = 0;
	struct tring r;
	char path[64];

	if (!br || !a || fd < 0 || dring_flags(c, &r, 16, 0))
		return;
	drec_int(c, tpbuf_reg(&r, br, 4, 3, 0), "register");
	read_sel(&r, fd, 0, 0, 3, 1);
	run(c, &r, 1, "empty ring");
	tbuf_ring_add(br, 3, &tail, a, 100, 7);
	tbuf_ring_add(br, 3, &tail, a + 100, 100, 8);
	tbuf_ring_add(br, 3, &tail, a + 200, 0, 9);
	read_sel(&r, fd, 0, 0, 3, 2);
	sqe = prep(&r, IORING_OP_READV, fd, &iov, 1, 500, 3);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = 3;
	read_sel(&r, fd, 0, 0, 3, 4); /* a zero-length buffer */
	read_sel(&r, fd, 0, 0, 3, 5);
	run(c, &r, 4, "reads");
	drec_int(c, tpbuf_head(&r, 3), "head");
	{
		unsigned char want[100];

		dpattern(want, 100, 6, 0);
		drec_int(c, !memcmp(a, want, 100), "data");
	}
	/* the ring wraps; a write-only file still consumes the buffer */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	wo = open(path, O_WRONLY | O_CLOEXEC);
	for (int i = 0; i < 3; i++)
		tbuf_ring_add(br, 3, &tail, a + 300 + 10 * i, 10,
			      (uint16_t)(20 + i));
	read_sel(&r, wo, 0, 0, 3, 6);
	read_sel(&r, fd, 0, 8190, 3, 8);
	run(c, &r, 2, "wrapped");
	read_sel(&r, fd, 0, 0, 3, 9)->flags |= IOSQE_ASYNC;
	run(c, &r, 1, "in io-wq");
	read_sel(&r, fd, 0, 0, 3, 7)->flags |= IOSQE_ASYNC;
	run(c, &r, 1, "in io-wq, empty");
	drec_int(c, tpbuf_head(&r, 3), "head");
	/* legacy ops on a ring group */
	provide(&r, a, 10, 1, 3, 0, 10);
	remove_bufs(&r, 1, 3, 11);
	run(c, &r, 2, "legacy ops on a ring");
	drec_int(c, pbuf_unreg(c, &r, 3), "unregister");
	read_sel(&r, fd, 0, 0, 3, 12);
	run(c, &r, 1, "after unregister");
	close(wo);
	close(fd);
	tring_exit(&r);
}

/* On a pipe the ring buffer is committed only when the read completes;
 * in io-wq at selection. */
static void sc_pbuf_pipe(struct dctx *c)
{
	struct io_uring_buf_ring *br = mk_ring(8);
	char *a = map(PS, PROT_READ | PROT_WRITE);
	uint16_t tail = 0;
	struct tring r;
	int p[2], head;

	if (!br || !a || pipe(p) || dring_flags(c, &r, 16, 0))
		return;
	drec_int(c, tpbuf_reg(&r, br, 8, 1, 0), "register");
	for (int i = 0; i < 4; i++)
		tbuf_ring_add(br, 7, &tail, a + 64 * i, 64, (uint16_t)i);
	read_sel(&r, p[0], 0, 0, 1, 1);
	drec_int(c, tring_submit(&r), "parked read");
	usleep(20000);
	drec_int(c, tpbuf_head(&r, 1), "head while parked");
	drec_int(c, (int)write(p[1], "xyz", 3), "write");
	dreap(c, &r, 1, true, "read");
	drec_int(c, tpbuf_head(&r, 1), "head after");
	/* the write end: failure after selection, head unchanged */
	read_sel(&r, p[1], 0, 0, 1, 2);
	run(c, &r, 1, "read on the write end");
	drec_int(c, tpbuf_head(&r, 1), "head after the failure");
	/* io-wq selects and commits, then waits holding the buffer */
	read_sel(&r, p[0], 0, 0, 1, 3)->flags |= IOSQE_ASYNC;
	drec_int(c, tring_submit(&r), "parked async read");
	/* the worker may start late on a loaded machine (seen on the
	 * kernel's SQPOLL io-wq): wait for it to select (a 10 s guard) */
	for (int i = 0; i < 10000 && tpbuf_head(&r, 1) == 1; i++)
		usleep(1000);
	drec_int(c, tpbuf_head(&r, 1), "head while the async read waits");
	drec_int(c, (int)write(p[1], "12345", 5), "write");
	dreap(c, &r, 1, true, "async read");
	/* (one waiting read at a time: the kernel wakes the waiters of one
	 * file last-armed first) */
	read_sel(&r, p[0], 0, 0, 1, 4);
	drec_int(c, tring_submit(&r), "another parked read");
	usleep(20000);
	drec_int(c, (int)write(p[1], "678", 3), "write");
	dreap(c, &r, 1, true, "the other");
	drec_int(c, tpbuf_head(&r, 1), "head at the end");
	/* cancelled while waiting: a committed buffer is reported, an
	 * uncommitted one was never taken */
	head = tpbuf_head(&r, 1);
	read_sel(&r, p[0], 0, 0, 1, 5)->flags |= IOSQE_ASYNC;
	drec_int(c, tring_submit(&r), "parked async read");
	/* cancel once the worker has committed a buffer and gone back to
	 * waiting for work (a fixed 50 ms before; a 10 s guard now) */
	for (int i = 0; i < 10000 && (tpbuf_head(&r, 1) == head ||
				      !workers_idle()); i++)
		usleep(1000);
	prep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 6)->addr = 5;
	run_any(c, &r, 2, "cancel the async read");
	tbuf_ring_add(br, 7, &tail, a + 256, 64, 4);
	read_sel(&r, p[0], 0, 0, 1, 7);
	drec_int(c, tring_submit(&r), "parked read");
	usleep(20000);
	prep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 8)->addr = 7;
	run_any(c, &r, 2, "cancel the read");
	drec_int(c, tpbuf_head(&r, 1), "head after the cancels");
	tclose2(p);
	tring_exit(&r);
}

/* IOU_PBUF_RING_INC: buffers consumed a part at a time */
static void sc_pbuf_inc(struct dctx *c)
{
	struct io_uring_buf_ring *br = mk_ring(4);
	char *a = map(PS, PROT_READ | PROT_WRITE);
	int fd = dtmpfile(c, 8192, 8);
	uint16_t tail = 0;
	struct tring r;
	int p[2];

	if (!br || !a || fd < 0 || pipe(p) || dring_flags(c, &r, 16, 0))
		return;
	drec_int(c, tpbuf_reg(&r, br, 4, 2, IOU_PBUF_RING_INC), "register");
	tbuf_ring_add(br, 3, &tail, a, 100, 1);
	tbuf_ring_add(br, 3, &tail, a + 100, 100, 2);
	read_sel(&r, fd, 30, 0, 2, 1);
	read_sel(&r, fd, 30, 0, 2, 2);
	read_sel(&r, fd, 0, 0, 2, 3);
	run(c, &r, 3, "file reads");
	drec_int(c, tpbuf_head(&r, 2), "head");
	drec_int(c, (int)(br->bufs[1].addr - (uintptr_t)a), "entry 1 addr");
	drec_int(c, (int)br->bufs[1].len, "entry 1 len");
	drec_int(c, (int)br->bufs[0].len, "entry 0 len");
	/* pipes: committed with what was read */
	drec_int(c, (int)write(p[1], "abcdefgh", 8), "write");
	read_sel(&r, p[0], 0, 0, 2, 4);
	run(c, &r, 1, "pipe read");
	drec_int(c, tpbuf_head(&r, 2), "head");
	drec_int(c, (int)br->bufs[1].len, "entry 1 len");
	close(p[1]);
	read_sel(&r, p[0], 0, 0, 2, 5);
	run(c, &r, 1, "pipe EOF");
	read_sel(&r, p[0], 62, 0, 2, 6);
	run(c, &r, 1, "EOF, 62 asked");
	drec_int(c, tpbuf_head(&r, 2), "head");
	drec_int(c, (int)br->bufs[1].len, "entry 1 len");
	close(p[0]);
	close(fd);
	tring_exit(&r);
}

/*
 * A ring registered over memory whose tail word (resv of entry 0) already
 * holds a value, as memory from malloc may: registration neither reads
 * nor resets the tail, the head starts at 0, and what is available is
 * tail - head modulo 2^16.  liburing 2.3's ringbuf-read never initializes
 * its tail; with 0xffc0..0xffff left there its 64 buffers look like fewer
 * and the last reads fail -ENOBUFS, on the kernel as here.
 */
static void sc_pbuf_stale_tail(struct dctx *c)
{
	struct io_uring_buf_ring *br = mk_ring(4), *br2 = mk_ring(4);
	char *a = map(PS, PROT_READ | PROT_WRITE);
	int fd = dtmpfile(c, 8192, 9);
	uint16_t tail = 0xfffe;
	struct tring r;

	if (!br || !br2 || !a || fd < 0 || dring_flags(c, &r, 16, 0))
		return;
	br->tail = tail;
	drec_int(c, tpbuf_reg(&r, br, 4, 4, 0), "register over tail 0xfffe");
	drec_int(c, tpbuf_head(&r, 4), "head");
	drec_int(c, br->tail, "tail after register");
	/* entries 2, 3, 0, 1; the tail wraps to 2: two are available */
	for (int i = 0; i < 4; i++)
		tbuf_ring_add(br, 3, &tail, a + 100 * i, 100, (uint16_t)(1 + i));
	read_sel(&r, fd, 0, 0, 4, 1);
	read_sel(&r, fd, 0, 100, 4, 2);
	read_sel(&r, fd, 0, 200, 4, 3)->flags |= IOSQE_ASYNC;
	run_any(c, &r, 3, "wrapped tail: two buffers, then ENOBUFS");
	drec_int(c, tpbuf_head(&r, 4), "head");
	/* tail 1000 (entry 0): after four adds 1004 look available, and the
	 * fifth read takes entry 0 again */
	tail = 1000;
	br2->tail = tail;
	drec_int(c, tpbuf_reg(&r, br2, 4, 5, 0), "register over tail 1000");
	for (int i = 0; i < 4; i++)
		tbuf_ring_add(br2, 3, &tail, a + 100 * i, 100,
			      (uint16_t)(11 + i));
	for (int i = 0; i < 5; i++)
		read_sel(&r, fd, 0, 100 * (uint64_t)i, 5, 10 + (uint64_t)i);
	run(c, &r, 5, "tail 1000: entries reused");
	drec_int(c, tpbuf_head(&r, 5), "head");
	close(fd);
	tring_exit(&r);
}

/* IOU_PBUF_RING_MMAP: the ring is allocated by the ring and mapped at
 * IORING_OFF_PBUF_RING | bgid << IORING_OFF_PBUF_SHIFT. */
static void *pbuf_mmap(struct dctx *c, struct tring *r, uint16_t bgid,
		       size_t len)
{
	void *p = c->be->mmap(NULL, len, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_POPULATE, r->fd,
			      (off_t)(IORING_OFF_PBUF_RING |
				      (uint64_t)bgid << IORING_OFF_PBUF_SHIFT));

	return p;
}

static void sc_pbuf_mmap(struct dctx *c)
{
	struct io_uring_buf_ring *br, *br2, *ub = mk_ring(8);
	char *a = map(PS, PROT_READ | PROT_WRITE);
	int fd = dtmpfile(c, 8192, 3);
	uint16_t tail = 0;
	struct tring r;
	void *p;

	if (!ub || !a || fd < 0 || dring_flags(c, &r, 8, 0))
		return;
	p = pbuf_mmap(c, &r, 1, PS);
	drec_int(c, BACKEND_MMAP_FAILED(p) ? BACKEND_MMAP_ERR(p) : 0, "map before registering");
	drec_int(c, tpbuf_reg(&r, NULL, 8, 1, IOU_PBUF_RING_MMAP), "register, MMAP");
	drec_int(c, tpbuf_reg(&r, ub, 8, 2, IOU_PBUF_RING_MMAP | IOU_PBUF_RING_INC), "register, MMAP with an address, INC");
	drec_int(c, tpbuf_reg(&r, ub, 8, 3, 0), "register, application memory");
	p = pbuf_mmap(c, &r, 3, PS);
	drec_int(c, BACKEND_MMAP_FAILED(p) ? BACKEND_MMAP_ERR(p) : 0, "map an application ring");
	p = pbuf_mmap(c, &r, 4, PS);
	drec_int(c, BACKEND_MMAP_FAILED(p) ? BACKEND_MMAP_ERR(p) : 0, "map no group");
	br = pbuf_mmap(c, &r, 1, PS);
	drec_int(c, BACKEND_MMAP_FAILED(br) ? BACKEND_MMAP_ERR(br) : 0, "map group 1");
	if (BACKEND_MMAP_FAILED(br))
		goto out;
	br2 = pbuf_mmap(c, &r, 1, PS);
	drec_int(c, BACKEND_MMAP_FAILED(br2) ? BACKEND_MMAP_ERR(br2) : 0, "map group 1 again");
	drec_int(c, br->tail, "tail of a fresh ring");
	tbuf_ring_add(br, 7, &tail, a, 50, 4);
	tbuf_ring_add(br, 7, &tail, a + 50, 50, 5);
	drec_int(c, !BACKEND_MMAP_FAILED(br2) && br2->bufs[1].bid == 5, "second mapping sees the entries");
	read_sel(&r, fd, 0, 0, 1, 1);
	read_sel(&r, fd, 0, 50, 1, 2);
	read_sel(&r, fd, 0, 0, 1, 3);
	run(c, &r, 3, "reads");
	drec_int(c, tpbuf_head(&r, 1), "head");
	/* INC on a ring of ours: the entry is updated in place */
	br2 = pbuf_mmap(c, &r, 2, PS);
	if (!BACKEND_MMAP_FAILED(br2)) {
		uint16_t t2 = 0;

		tbuf_ring_add(br2, 7, &t2, a + 200, 100, 6);
		read_sel(&r, fd, 30, 0, 2, 4);
		run(c, &r, 1, "INC read");
		drec_int(c, (int)br2->bufs[0].len, "entry 0 len");
		drec_int(c, (int)(br2->bufs[0].addr - (uintptr_t)a), "entry 0 addr");
		c->be->munmap(br2, PS);
	}
	drec_int(c, pbuf_unreg(c, &r, 1), "unregister");
	/* the application's mapping outlives the group */
	br->bufs[0].len = 7;
	drec_int(c, br->bufs[0].len, "mapping still usable");
	if (!BACKEND_MMAP_FAILED(br2))
		c->be->munmap(br2, PS);
	c->be->munmap(br, PS);
out:
	close(fd);
	tring_exit(&r);
}

/* O_DIRECT (asynchronous in the block layer) with registered and
 * provided buffers */
static void sc_direct(struct dctx *c)
{
	char *a = map(4 * PS, PROT_READ | PROT_WRITE);
	struct iovec v = { a, 2 * PS };
	struct io_uring_buf_ring *br = mk_ring(4);
	int fd = dtmpfile(c, 4 * PS, 11), dfd;
	uint16_t tail = 0;
	struct tring r;
	char path[64];

#ifdef UNDER_TSAN
	/* exec/aio.c hands requests to its reaper through the kernel
	 * (io_submit, io_getevents), an ordering TSan cannot see */
	dnote(c, "O_DIRECT (Linux AIO) not run under TSan");
	return;
#endif
	if (!a || !br || fd < 0 || dring_flags(c, &r, 16, 0))
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	dfd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (dfd < 0) {
		dnote(c, "no O_DIRECT here");
		return;
	}
	drec_int(c, reg(c, &r, IORING_REGISTER_BUFFERS, &v, 1), "register");
	prep(&r, IORING_OP_READ_FIXED, dfd, a, PS, PS, 1);
	run(c, &r, 1, "read_fixed");
	{
		unsigned char want[PS];

		dpattern(want, PS, 11, PS);
		drec_int(c, !memcmp(a, want, PS), "data");
	}
	prep(&r, IORING_OP_WRITE_FIXED, dfd, a + PS, PS, 2 * PS, 2);
	run(c, &r, 1, "write_fixed");
	provide(&r, a + 2 * PS, PS, 1, 1, 5, 3);
	run(c, &r, 1, "provide");
	read_sel(&r, dfd, 0, 0, 1, 4);
	read_sel(&r, dfd, 0, 0, 1, 5);
	run_any(c, &r, 2, "selected reads");
	drec_int(c, tpbuf_reg(&r, br, 4, 2, 0), "buffer ring");
	tbuf_ring_add(br, 3, &tail, a + 3 * PS, PS, 9);
	read_sel(&r, dfd, 0, PS, 2, 6);
	run(c, &r, 1, "ring read");
	drec_int(c, tpbuf_head(&r, 2), "head");
	close(dfd);
	close(fd);
	tring_exit(&r);
}

static const struct dscenario scenarios[] = {
	{ "reg_errors", sc_reg_errors, NULL, NULL },
	{ "reg_table", sc_reg_table, NULL, NULL },
	{ "fixed_rw", sc_fixed_rw, NULL, NULL },
	{ "fixed_vec", sc_fixed_vec, NULL, NULL },
	{ "tags", sc_tags, NULL, NULL },
	{ "tag_inflight", sc_tag_inflight, NULL, NULL },
	{ "clone", sc_clone, NULL, NULL },
	{ "pinning", sc_pinning, NULL, "docs/compatibility.md #19" },
	{ "memlock", sc_memlock, NULL, NULL },
	{ "provide", sc_provide, NULL, NULL },
	{ "provide_pipe", sc_provide_pipe, NULL, NULL },
	{ "pbuf_reg", sc_pbuf_reg, NULL, NULL },
	{ "pbuf_file", sc_pbuf_file, NULL, NULL },
	{ "pbuf_pipe", sc_pbuf_pipe, NULL, NULL },
	{ "pbuf_inc", sc_pbuf_inc, NULL, NULL },
	{ "pbuf_stale_tail", sc_pbuf_stale_tail, NULL, NULL },
	{ "pbuf_mmap", sc_pbuf_mmap, NULL, NULL },
	{ "direct", sc_direct, NULL, NULL },
};

DTEST_MAIN(scenarios)
