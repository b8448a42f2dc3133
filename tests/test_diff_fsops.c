// SPDX-License-Identifier: MIT
/*
 * Differential tests of the file-family opcodes on plain fds: OPENAT,
 * OPENAT2, CLOSE, PIPE (this part), each with its success paths and its
 * prep and issue errors (SQE fields that must be zero, flags, bad
 * pointers, bad fds, direct descriptors without a file table).  Every
 * scenario works in its own directory under /tmp, which it removes.
 * Results that are fd numbers are recorded relative to the lowest free fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dtest.h"

#ifndef RESOLVE_BENEATH
#define RESOLVE_BENEATH 0x08
#endif
#ifndef RESOLVE_CACHED
#define RESOLVE_CACHED 0x20
#endif

struct how {
	uint64_t flags, mode, resolve;
};

/* fd results: FD_LOWEST when res is the lowest free fd, FD_OTHER for
 * another fd, else the error */
#define FD_LOWEST 100000
#define FD_OTHER 100001

/* ---- scratch directory ---- */

struct scratch {
	char path[64];
	int dfd;
};

static int rm_one(const char *p, const struct stat *st, int type,
		  struct FTW *f)
{
	(void)st;
	(void)type;
	(void)f;
	return remove(p);
}

static int scratch_init(struct dctx *c, struct scratch *s)
{
	strcpy(s->path, "/tmp/uuring-fsops-XXXXXX");
	if (!mkdtemp(s->path)) {
		dcheck(c, 0, "mkdtemp: %s", strerror(errno));
		return -1;
	}
	s->dfd = open(s->path, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	dcheck(c, s->dfd >= 0, "open scratch dir");
	return s->dfd < 0 ? -1 : 0;
}

static void scratch_fini(struct scratch *s)
{
	close(s->dfd);
	nftw(s->path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* creates dir/name holding `data` */
static void mkfile(struct scratch *s, const char *name, const char *data)
{
	int fd = openat(s->dfd, name, O_CREAT | O_TRUNC | O_WRONLY, 0644);

	if (fd >= 0) {
		if (data && write(fd, data, strlen(data)) < 0)
			perror("write");
		close(fd);
	}
}

static int lowest_free_fd(void)
{
	int fd = dup(0);

	if (fd >= 0)
		close(fd);
	return fd;
}

/* ---- submitting ---- */

static struct io_uring_sqe mk(int op, int fd, uint64_t addr, uint32_t len,
			      uint64_t off, uint64_t ud)
{
	struct io_uring_sqe s;

	memset(&s, 0, sizeof(s));
	s.opcode = (uint8_t)op;
	s.fd = fd;
	s.addr = addr;
	s.len = len;
	s.off = off;
	s.user_data = ud;
	return s;
}

#define P(x) ((uint64_t)(uintptr_t)(x))

/*
 * Submits a copy of *t followed by a NOP, waits for the CQEs and records
 * them as a multiset, with the number of SQEs submitted: an error found at
 * prep stops the submission there (2 SQEs submitted), one found at issue
 * does not.  With fdres, a non-negative result is recorded as
 * FD_LOWEST/FD_OTHER.  Returns the request's res.
 */
#define NOP_UD 0xfeedULL
static int run1(struct dctx *c, struct tring *r, const struct io_uring_sqe *t,
		bool fdres, const char *label)
{
	struct io_uring_sqe *sqe = tring_get_sqe(r);
	int lowest = lowest_free_fd(), res = -99999;
	struct tcqe cqe[2];
	unsigned int n, i;
	int ret;

	memcpy(sqe, t, sizeof(*sqe));
	tring_prep_nop(tring_get_sqe(r), NOP_UD);
	ret = tring_submit(r);
	drec_int(c, ret, "%s: submitted", label);
	/* the NOP left in the SQ by a prep failure goes in a second enter */
	if (ret == 1)
		ret = 1 + tring_enter(r, 1, 0, 0, NULL, 0);
	if (ret != 2)
		drec_int(c, ret, "%s: submit error", label);
	n = tring_reap_wait(r, cqe, 2, 2000000000LL);
	for (i = 0; i < n; i++) {
		if (cqe[i].user_data == NOP_UD)
			continue;
		res = cqe[i].res;
		if (fdres && cqe[i].res >= 0)
			cqe[i].res = cqe[i].res == lowest ? FD_LOWEST : FD_OTHER;
	}
	drec_cqes(c, cqe, n, false, "%s", label);
	return res;
}

/* A string `len` bytes long (plus NUL) ending right before a PROT_NONE
 * page; returns its address. */
static char *str_at_page_end(size_t len, char fill)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, (size_t)pg * 3, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *end;

	if (m == MAP_FAILED)
		abort();
	mprotect(m + 2 * pg, (size_t)pg, PROT_NONE);
	end = m + 2 * pg;
	memset(end - len - 1, fill, len);
	end[-1] = 0;
	return end - len - 1;
}

/* ---- OPENAT ---- */

static void record_fd_flags(struct dctx *c, int fd, const char *label)
{
	int fl = fcntl(fd, F_GETFL), fdf = fcntl(fd, F_GETFD);

	drec_int(c, fl < 0 ? -errno : fl, "%s: F_GETFL", label);
	drec_int(c, fdf, "%s: F_GETFD", label);
}

static void sc_openat(struct dctx *c)
{
	struct scratch s;
	struct io_uring_sqe t;
	struct tring r;
	struct stat st;
	char buf[64];
	int fd;

	if (dring_flags(c, &r, 16, 0))
		return;
	if (scratch_init(c, &s))
		goto out;
	umask(022);
	mkfile(&s, "f", "hello");

	t = mk(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 1);
	t.open_flags = O_RDONLY;
	fd = run1(c, &r, &t, true, "open f rdonly");
	if (fd >= 0) {
		memset(buf, 0, sizeof(buf));
		drec_int(c, read(fd, buf, sizeof(buf)), "read");
		drec_int(c, strcmp(buf, "hello"), "data");
		record_fd_flags(c, fd, "rdonly");
		close(fd);
	}
	t = mk(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 2);
	t.open_flags = O_RDWR | O_CLOEXEC | O_APPEND;
	fd = run1(c, &r, &t, true, "open f rdwr cloexec append");
	if (fd >= 0) {
		record_fd_flags(c, fd, "rdwr cloexec");
		close(fd);
	}
	t = mk(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 3);
	t.open_flags = O_RDONLY | O_NONBLOCK;
	fd = run1(c, &r, &t, true, "open f nonblock");
	if (fd >= 0) {
		record_fd_flags(c, fd, "nonblock");
		close(fd);
	}
	/* create, with a mode (umask 022) */
	t = mk(IORING_OP_OPENAT, s.dfd, P("new"), 0640 | 0100000, 0, 4);
	t.open_flags = O_CREAT | O_WRONLY;
	fd = run1(c, &r, &t, true, "create new");
	if (fd >= 0) {
		drec_int(c, write(fd, "abc", 3), "write new");
		close(fd);
	}
	drec_int(c, fstatat(s.dfd, "new", &st, 0), "stat new");
	drec_int(c, st.st_mode & 07777, "mode new");
	drec_int(c, st.st_size, "size new");
	t = mk(IORING_OP_OPENAT, s.dfd, P("new"), 0600, 0, 5);
	t.open_flags = O_CREAT | O_EXCL | O_WRONLY;
	run1(c, &r, &t, true, "create excl existing");
	t = mk(IORING_OP_OPENAT, s.dfd, P("new"), 0, 0, 6);
	t.open_flags = O_TRUNC | O_WRONLY;
	fd = run1(c, &r, &t, true, "trunc");
	if (fd >= 0)
		close(fd);
	fstatat(s.dfd, "new", &st, 0);
	drec_int(c, st.st_size, "size after trunc");
	/* errors from the open itself */
	t = mk(IORING_OP_OPENAT, s.dfd, P("missing"), 0, 0, 7);
	run1(c, &r, &t, true, "missing");
	t = mk(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 8);
	t.open_flags = O_DIRECTORY;
	run1(c, &r, &t, true, "O_DIRECTORY on a file");
	t = mk(IORING_OP_OPENAT, 9999, P("f"), 0, 0, 9);
	run1(c, &r, &t, true, "bad dfd, relative path");
	t = mk(IORING_OP_OPENAT, 9999, P("/dev/null"), 0, 0, 10);
	fd = run1(c, &r, &t, true, "bad dfd, absolute path");
	if (fd >= 0)
		close(fd);
	t = mk(IORING_OP_OPENAT, AT_FDCWD, P(s.path), 0, 0, 11);
	t.open_flags = O_DIRECTORY | O_PATH;
	fd = run1(c, &r, &t, true, "O_PATH dir at AT_FDCWD");
	if (fd >= 0) {
		record_fd_flags(c, fd, "O_PATH");
		close(fd);
	}
	/* unknown flag bits are ignored by openat */
	t = mk(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 12);
	t.open_flags = 0x40000000 | O_RDONLY;
	fd = run1(c, &r, &t, true, "unknown open flags");
	if (fd >= 0)
		close(fd);
	/* O_TMPFILE */
	t = mk(IORING_OP_OPENAT, s.dfd, P("."), 0600, 0, 13);
	t.open_flags = O_TMPFILE | O_RDWR;
	fd = run1(c, &r, &t, true, "O_TMPFILE");
	if (fd >= 0)
		close(fd);
	/* IOSQE_ASYNC */
	t = mk(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 14);
	t.flags = IOSQE_ASYNC;
	fd = run1(c, &r, &t, true, "ASYNC open");
	if (fd >= 0) {
		record_fd_flags(c, fd, "ASYNC");
		close(fd);
	}
	scratch_fini(&s);
out:
	tring_exit(&r);
}

/* prep errors of OPENAT, in the kernel's order */
static void sc_openat_prep(struct dctx *c)
{
	struct scratch s;
	struct io_uring_sqe t;
	struct tring r;
	char *longp, *edge;
	int fd;

	if (dring_flags(c, &r, 16, 0))
		return;
	if (scratch_init(c, &s))
		goto out;
	mkfile(&s, "f", "x");
	t = mk(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 1);
	t.buf_index = 1;
	run1(c, &r, &t, true, "buf_index");
	t = mk(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 2);
	t.flags = IOSQE_FIXED_FILE;
	run1(c, &r, &t, true, "FIXED_FILE");
	t = mk(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 3);
	t.ioprio = 1;
	run1(c, &r, &t, true, "ioprio");
	t = mk(IORING_OP_OPENAT, s.dfd, 0, 0, 0, 4);
	run1(c, &r, &t, true, "NULL path");
	t = mk(IORING_OP_OPENAT, s.dfd, P(dunmapped_addr()), 0, 0, 5);
	run1(c, &r, &t, true, "unmapped path");
	t = mk(IORING_OP_OPENAT, s.dfd, P(dprot_none_page()), 0, 0, 6);
	run1(c, &r, &t, true, "PROT_NONE path");
	t = mk(IORING_OP_OPENAT, s.dfd, P(""), 0, 0, 7);
	run1(c, &r, &t, true, "empty path");
	longp = malloc(PATH_MAX + 16);
	memset(longp, 'a', PATH_MAX + 15);
	longp[PATH_MAX + 15] = 0;
	t = mk(IORING_OP_OPENAT, s.dfd, P(longp), 0, 0, 8);
	run1(c, &r, &t, true, "path longer than PATH_MAX");
	longp[PATH_MAX - 1] = 0;
	t = mk(IORING_OP_OPENAT, s.dfd, P(longp), 0, 0, 9);
	run1(c, &r, &t, true, "path of PATH_MAX-1");
	longp[PATH_MAX] = 0;
	longp[PATH_MAX - 1] = 'a';
	t = mk(IORING_OP_OPENAT, s.dfd, P(longp), 0, 0, 10);
	run1(c, &r, &t, true, "path of PATH_MAX");
	free(longp);
	/* a path that ends right before an inaccessible page */
	edge = str_at_page_end(1, 'f');
	t = mk(IORING_OP_OPENAT, s.dfd, P(edge), 0, 0, 11);
	fd = run1(c, &r, &t, true, "path at a page end");
	if (fd >= 0)
		close(fd);
	edge[1] = 'f'; /* no NUL before the PROT_NONE page */
	t = mk(IORING_OP_OPENAT, s.dfd, P(edge), 0, 0, 12);
	run1(c, &r, &t, true, "unterminated path at a page end");
	/* direct descriptors without a registered file table */
	t = mk(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 13);
	t.file_index = 1;
	t.open_flags = O_CLOEXEC;
	run1(c, &r, &t, true, "file_index + O_CLOEXEC");
	t = mk(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 14);
	t.file_index = 1;
	run1(c, &r, &t, true, "file_index 1, no table");
	t = mk(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 15);
	t.file_index = IORING_FILE_INDEX_ALLOC;
	run1(c, &r, &t, true, "file_index ALLOC, no table");
	t = mk(IORING_OP_OPENAT, s.dfd, P("created"), 0600, 0, 16);
	t.file_index = 1;
	t.open_flags = O_CREAT | O_WRONLY;
	run1(c, &r, &t, true, "file_index + O_CREAT");
	drec_int(c, faccessat(s.dfd, "created", F_OK, 0), "created anyway");
	/* order: buf_index before a bad path; a bad path before file_index */
	t = mk(IORING_OP_OPENAT, s.dfd, 0, 0, 0, 17);
	t.buf_index = 1;
	run1(c, &r, &t, true, "buf_index + NULL path");
	t = mk(IORING_OP_OPENAT, s.dfd, 0, 0, 0, 18);
	t.file_index = 1;
	t.open_flags = O_CLOEXEC;
	run1(c, &r, &t, true, "NULL path + file_index + O_CLOEXEC");
	t = mk(IORING_OP_OPENAT, s.dfd, 0, 0, 0, 19);
	t.flags = IOSQE_FIXED_FILE;
	t.buf_index = 1;
	run1(c, &r, &t, true, "FIXED_FILE + buf_index");
	scratch_fini(&s);
out:
	tring_exit(&r);
}

/* FIFOs: the open is tried non-blocking first */
static void sc_openat_fifo(struct dctx *c)
{
	struct scratch s;
	struct io_uring_sqe t;
	struct tring r;
	int fd;

	if (dring_flags(c, &r, 16, 0))
		return;
	if (scratch_init(c, &s))
		goto out;
	mkfifoat(s.dfd, "fifo", 0600);
	/* warm the dentry cache (the kernel's first try is cached-only) */
	{
		struct stat st;

		fstatat(s.dfd, "fifo", &st, 0);
	}
	t = mk(IORING_OP_OPENAT, s.dfd, P("fifo"), 0, 0, 1);
	t.open_flags = O_RDONLY;
	fd = run1(c, &r, &t, true, "fifo rdonly, no writer");
	if (fd >= 0) {
		record_fd_flags(c, fd, "fifo rdonly");
		close(fd);
	}
	t = mk(IORING_OP_OPENAT, s.dfd, P("fifo"), 0, 0, 2);
	t.open_flags = O_WRONLY;
	fd = run1(c, &r, &t, true, "fifo wronly, no reader");
	if (fd >= 0)
		close(fd);
	t = mk(IORING_OP_OPENAT, s.dfd, P("fifo"), 0, 0, 3);
	t.open_flags = O_RDWR;
	fd = run1(c, &r, &t, true, "fifo rdwr");
	if (fd >= 0) {
		record_fd_flags(c, fd, "fifo rdwr");
		close(fd);
	}
	scratch_fini(&s);
out:
	tring_exit(&r);
}

/* ---- OPENAT2 ---- */

static void sc_openat2(struct dctx *c)
{
	struct scratch s;
	struct io_uring_sqe t;
	struct tring r;
	struct how h;
	unsigned char big[64];
	char *edge;
	int fd;

	if (dring_flags(c, &r, 16, 0))
		return;
	if (scratch_init(c, &s))
		goto out;
	umask(022);
	mkfile(&s, "f", "hello");
	memset(&h, 0, sizeof(h));
	h.flags = O_RDONLY;
	t = mk(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(h), P(&h), 1);
	fd = run1(c, &r, &t, true, "openat2 rdonly");
	if (fd >= 0) {
		record_fd_flags(c, fd, "openat2 rdonly");
		close(fd);
	}
	h.flags = O_CREAT | O_RDWR | O_CLOEXEC;
	h.mode = 0604;
	t = mk(IORING_OP_OPENAT2, s.dfd, P("g"), sizeof(h), P(&h), 2);
	fd = run1(c, &r, &t, true, "openat2 create");
	if (fd >= 0) {
		struct stat st;

		fstat(fd, &st);
		drec_int(c, st.st_mode & 07777, "mode g");
		record_fd_flags(c, fd, "openat2 create");
		close(fd);
	}
	/* sizes */
	t = mk(IORING_OP_OPENAT2, s.dfd, P("f"), 23, P(&h), 3);
	run1(c, &r, &t, true, "how size 23");
	t = mk(IORING_OP_OPENAT2, s.dfd, P("f"), 0, P(&h), 4);
	run1(c, &r, &t, true, "how size 0");
	memset(big, 0, sizeof(big));
	memcpy(big, &(struct how){ .flags = O_RDONLY }, sizeof(struct how));
	t = mk(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(big), P(big), 5);
	fd = run1(c, &r, &t, true, "how size 64, zero tail");
	if (fd >= 0)
		close(fd);
	big[40] = 1;
	t = mk(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(big), P(big), 6);
	run1(c, &r, &t, true, "how size 64, non-zero tail");
	t = mk(IORING_OP_OPENAT2, s.dfd, P("f"), 1u << 20, P(big), 7);
	run1(c, &r, &t, true, "how size 1 MiB");
	t = mk(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(h), 0, 8);
	run1(c, &r, &t, true, "how NULL");
	t = mk(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(h),
	       P(dunmapped_addr()), 9);
	run1(c, &r, &t, true, "how unmapped");
	/* a how whose tail runs into a PROT_NONE page */
	edge = str_at_page_end(31, 0);
	t = mk(IORING_OP_OPENAT2, s.dfd, P("f"), 40, P(edge), 10);
	run1(c, &r, &t, true, "how tail unreadable");
	t = mk(IORING_OP_OPENAT2, s.dfd, P("f"), 32, P(edge), 11);
	fd = run1(c, &r, &t, true, "how at a page end");
	if (fd >= 0)
		close(fd);
	/* validated at issue by openat2 itself */
	h.flags = 1ULL << 40;
	h.mode = 0;
	t = mk(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(h), P(&h), 12);
	run1(c, &r, &t, true, "unknown flags");
	h.flags = O_RDONLY;
	h.mode = 0600;
	t = mk(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(h), P(&h), 13);
	run1(c, &r, &t, true, "mode without O_CREAT");
	h.mode = 0;
	h.resolve = RESOLVE_BENEATH;
	t = mk(IORING_OP_OPENAT2, s.dfd, P("../"), sizeof(h), P(&h), 14);
	run1(c, &r, &t, true, "RESOLVE_BENEATH ..");
	h.resolve = 1ULL << 50;
	t = mk(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(h), P(&h), 15);
	run1(c, &r, &t, true, "unknown resolve");
	h.flags = O_CREAT | O_RDWR;
	h.mode = 0600;
	h.resolve = RESOLVE_CACHED;
	t = mk(IORING_OP_OPENAT2, s.dfd, P("h"), sizeof(h), P(&h), 16);
	run1(c, &r, &t, true, "RESOLVE_CACHED + O_CREAT");
	/* prep order: size, then how, then the SQE fields and the path */
	h.flags = O_RDONLY;
	h.mode = 0;
	h.resolve = 0;
	t = mk(IORING_OP_OPENAT2, s.dfd, 0, 8, P(&h), 17);
	t.buf_index = 1;
	run1(c, &r, &t, true, "size 8 + buf_index + NULL path");
	t = mk(IORING_OP_OPENAT2, s.dfd, 0, sizeof(h), 0, 18);
	t.buf_index = 1;
	run1(c, &r, &t, true, "how NULL + buf_index");
	t = mk(IORING_OP_OPENAT2, s.dfd, 0, sizeof(h), P(&h), 19);
	t.buf_index = 1;
	run1(c, &r, &t, true, "buf_index + NULL path");
	t = mk(IORING_OP_OPENAT2, s.dfd, 0, sizeof(h), P(&h), 20);
	t.flags = IOSQE_FIXED_FILE;
	run1(c, &r, &t, true, "FIXED_FILE + NULL path");
	t = mk(IORING_OP_OPENAT2, s.dfd, 0, sizeof(h), P(&h), 21);
	run1(c, &r, &t, true, "NULL path");
	h.flags = O_CLOEXEC;
	t = mk(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(h), P(&h), 22);
	t.file_index = 3;
	run1(c, &r, &t, true, "file_index + O_CLOEXEC");
	h.flags = O_RDONLY;
	t = mk(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(h), P(&h), 23);
	t.file_index = 3;
	run1(c, &r, &t, true, "file_index, no table");
	scratch_fini(&s);
out:
	tring_exit(&r);
}

/* ---- CLOSE ---- */

static void sc_close(struct dctx *c)
{
	struct io_uring_sqe t;
	struct tring r, r2;
	int fd, efd;

	if (dring_flags(c, &r, 16, 0))
		return;
	fd = open("/dev/null", O_RDONLY);
	t = mk(IORING_OP_CLOSE, fd, 0, 0, 0, 1);
	run1(c, &r, &t, false, "close fd");
	drec_int(c, fcntl(fd, F_GETFD) < 0 ? -errno : 0, "fd closed");
	t = mk(IORING_OP_CLOSE, fd, 0, 0, 0, 2);
	run1(c, &r, &t, false, "close again");
	t = mk(IORING_OP_CLOSE, -1, 0, 0, 0, 3);
	run1(c, &r, &t, false, "close -1");
	t = mk(IORING_OP_CLOSE, 99999, 0, 0, 0, 4);
	run1(c, &r, &t, false, "close 99999");
	efd = eventfd(0, 0);
	t = mk(IORING_OP_CLOSE, efd, 0, 0, 0, 5);
	run1(c, &r, &t, false, "close eventfd");
	/* io_uring instances are refused */
	t = mk(IORING_OP_CLOSE, r.fd, 0, 0, 0, 6);
	run1(c, &r, &t, false, "close own ring fd");
	if (!dring_flags(c, &r2, 4, 0)) {
		t = mk(IORING_OP_CLOSE, r2.fd, 0, 0, 0, 7);
		run1(c, &r, &t, false, "close another ring");
		drec_int(c, fcntl(r2.fd, F_GETFD) >= 0, "other ring open");
		tring_exit(&r2);
	}
	/* prep */
	fd = open("/dev/null", O_RDONLY);
	t = mk(IORING_OP_CLOSE, fd, 0, 0, 1, 8);
	run1(c, &r, &t, false, "off");
	t = mk(IORING_OP_CLOSE, fd, 1, 0, 0, 9);
	run1(c, &r, &t, false, "addr");
	t = mk(IORING_OP_CLOSE, fd, 0, 1, 0, 10);
	run1(c, &r, &t, false, "len");
	t = mk(IORING_OP_CLOSE, fd, 0, 0, 0, 11);
	t.rw_flags = 1;
	run1(c, &r, &t, false, "close_flags");
	t = mk(IORING_OP_CLOSE, fd, 0, 0, 0, 12);
	t.buf_index = 1;
	run1(c, &r, &t, false, "buf_index");
	t = mk(IORING_OP_CLOSE, fd, 0, 0, 0, 13);
	t.flags = IOSQE_FIXED_FILE;
	run1(c, &r, &t, false, "FIXED_FILE");
	t = mk(IORING_OP_CLOSE, fd, 0, 0, 0, 14);
	t.file_index = 1;
	run1(c, &r, &t, false, "file_index + fd");
	t = mk(IORING_OP_CLOSE, 0, 0, 0, 0, 15);
	t.file_index = 1;
	run1(c, &r, &t, false, "file_index, no table");
	t = mk(IORING_OP_CLOSE, fd, 0, 0, 1, 16);
	t.flags = IOSQE_FIXED_FILE;
	run1(c, &r, &t, false, "off + FIXED_FILE");
	drec_int(c, fcntl(fd, F_GETFD) >= 0, "fd still open");
	/* ASYNC */
	t = mk(IORING_OP_CLOSE, fd, 0, 0, 0, 17);
	t.flags = IOSQE_ASYNC;
	run1(c, &r, &t, false, "ASYNC close");
	drec_int(c, fcntl(fd, F_GETFD) < 0 ? -errno : 0, "closed by ASYNC");
	tring_exit(&r);
}

/* OPENAT -> link -> CLOSE of the fd the open will return (the lowest) */
static void sc_open_close_link(struct dctx *c)
{
	struct scratch s;
	struct io_uring_sqe *sqe;
	struct tring r;
	struct tcqe cqe[3];
	int lowest, n;

	if (dring_flags(c, &r, 16, 0))
		return;
	if (scratch_init(c, &s))
		goto out;
	mkfile(&s, "f", "x");
	lowest = lowest_free_fd();
	sqe = tring_get_sqe(&r);
	*sqe = mk(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 1);
	sqe->flags = IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	*sqe = mk(IORING_OP_CLOSE, lowest, 0, 0, 0, 2);
	sqe->flags = IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	*sqe = mk(IORING_OP_CLOSE, lowest, 0, 0, 0, 3);
	drec_int(c, tring_submit(&r), "submit");
	n = (int)tring_reap_wait(&r, cqe, 3, 2000000000LL);
	if (n > 0 && cqe[0].res == lowest)
		cqe[0].res = FD_LOWEST;
	drec_cqes(c, cqe, (unsigned int)n, true, "open, close, close");
	/* a failing open cancels the rest of the chain */
	sqe = tring_get_sqe(&r);
	*sqe = mk(IORING_OP_OPENAT, s.dfd, P("nope"), 0, 0, 4);
	sqe->flags = IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	*sqe = mk(IORING_OP_CLOSE, lowest, 0, 0, 0, 5);
	drec_int(c, tring_submit(&r), "submit 2");
	dreap(c, &r, 2, true, "failed open, canceled close");
	scratch_fini(&s);
out:
	tring_exit(&r);
}

/* ---- PIPE ---- */

static void sc_pipe(struct dctx *c)
{
	struct io_uring_sqe t;
	struct tring r;
	int fds[2] = { -1, -1 }, lowest;
	char b[8];

	if (dring_flags(c, &r, 16, 0))
		return;
	lowest = lowest_free_fd();
	t = mk(IORING_OP_PIPE, 0, P(fds), 0, 0, 1);
	run1(c, &r, &t, false, "pipe");
	drec_int(c, fds[0] == lowest && fds[1] == lowest + 1, "fds lowest");
	drec_int(c, write(fds[1], "pq", 2), "write");
	drec_int(c, read(fds[0], b, 2), "read");
	record_fd_flags(c, fds[0], "pipe rd");
	record_fd_flags(c, fds[1], "pipe wr");
	close(fds[0]);
	close(fds[1]);
	t = mk(IORING_OP_PIPE, 0, P(fds), 0, 0, 2);
	t.pipe_flags = O_CLOEXEC | O_NONBLOCK;
	run1(c, &r, &t, false, "pipe cloexec nonblock");
	record_fd_flags(c, fds[0], "pipe2 rd");
	record_fd_flags(c, fds[1], "pipe2 wr");
	close(fds[0]);
	close(fds[1]);
	t = mk(IORING_OP_PIPE, 0, P(fds), 0, 0, 3);
	t.pipe_flags = O_DIRECT;
	run1(c, &r, &t, false, "pipe O_DIRECT");
	close(fds[0]);
	close(fds[1]);
	/* errors */
	t = mk(IORING_OP_PIPE, 0, P(fds), 0, 0, 4);
	t.pipe_flags = O_APPEND;
	run1(c, &r, &t, false, "bad flags");
	t = mk(IORING_OP_PIPE, 1, P(fds), 0, 0, 5);
	run1(c, &r, &t, false, "fd set");
	t = mk(IORING_OP_PIPE, 0, P(fds), 0, 1, 6);
	run1(c, &r, &t, false, "off set");
	t = mk(IORING_OP_PIPE, 0, P(fds), 0, 0, 7);
	t.addr3 = 1;
	run1(c, &r, &t, false, "addr3 set");
	lowest = lowest_free_fd();
	t = mk(IORING_OP_PIPE, 0, 0, 0, 0, 8);
	run1(c, &r, &t, false, "NULL fds");
	t = mk(IORING_OP_PIPE, 0, P(dprot_none_page()), 0, 0, 9);
	run1(c, &r, &t, false, "PROT_NONE fds");
	drec_int(c, lowest_free_fd() == lowest, "no fd leaked");
	t = mk(IORING_OP_PIPE, 0, P(fds), 0, 0, 10);
	t.file_index = 1;
	t.pipe_flags = O_CLOEXEC;
	run1(c, &r, &t, false, "file_index + O_CLOEXEC");
	t = mk(IORING_OP_PIPE, 0, P(fds), 0, 0, 11);
	t.file_index = 1;
	run1(c, &r, &t, false, "file_index, no table");
	t = mk(IORING_OP_PIPE, 0, P(fds), 0, 0, 12);
	t.file_index = IORING_FILE_INDEX_ALLOC;
	run1(c, &r, &t, false, "file_index ALLOC, no table");
	drec_int(c, lowest_free_fd() == lowest, "no fd leaked");
	t = mk(IORING_OP_PIPE, 0, P(fds), 0, 0, 13);
	t.flags = IOSQE_FIXED_FILE;
	run1(c, &r, &t, false, "FIXED_FILE");
	close(fds[0]);
	close(fds[1]);
	t = mk(IORING_OP_PIPE, 0, P(fds), 5, 0, 14);
	t.flags = IOSQE_ASYNC;
	run1(c, &r, &t, false, "ASYNC, len set");
	close(fds[0]);
	close(fds[1]);
	tring_exit(&r);
}

static const struct dscenario scenarios[] = {
	{ "openat", sc_openat, NULL },
	{ "openat_prep", sc_openat_prep, NULL },
	{ "openat_fifo", sc_openat_fifo, NULL },
	{ "openat2", sc_openat2, NULL },
	{ "close", sc_close, NULL },
	{ "open_close_link", sc_open_close_link, NULL },
	{ "pipe", sc_pipe, NULL },
};

DTEST_MAIN(scenarios)
