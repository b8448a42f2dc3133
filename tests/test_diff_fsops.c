// SPDX-License-Identifier: MIT
/*
 * Differential tests of the file-family opcodes on plain fds: OPENAT,
 * OPENAT2, CLOSE, PIPE, STATX, MKDIRAT, UNLINKAT, RENAMEAT, SYMLINKAT,
 * LINKAT, FALLOCATE, FADVISE, MADVISE, FTRUNCATE, SYNC_FILE_RANGE,
 * FGETXATTR, GETXATTR, FSETXATTR, SETXATTR, SPLICE, TEE, each with its
 * success paths and its prep and issue errors (SQE fields that must be
 * zero, flags, bad pointers, bad fds, direct descriptors without a file
 * table), which errors fail a link chain, and randomized chains.  Every
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
#include <sys/ioctl.h>
#include <linux/falloc.h>
#include <linux/stat.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"

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

static int ioctl_fionread(int fd, int *n)
{
	return ioctl(fd, FIONREAD, n);
}

static int lowest_free_fd(void)
{
	int fd = dup(0);

	if (fd >= 0)
		close(fd);
	return fd;
}

/* ---- submitting ---- */

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
	int lowest = lowest_free_fd(), res = -99999;
	struct tcqe cqe[2];
	unsigned int n, i;
	int ret;

	ret = dsubmit_nop(c, r, t, NOP_UD, label);
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

/*
 * The prep checks of SQE fields an opcode does not use: for each field
 * in `set` (ended by 0), a copy of *t with that field set to 1 (FIXED_FILE:
 * sqe->flags) is run with user_data ud, ud + 1, ..., labelled "NAME
 * FIELD" ("FIELD" when name is empty).
 */
enum { U_FIXED_FILE = 1, U_ADDR, U_LEN, U_OFF, U_RW_FLAGS, U_BUF_INDEX,
       U_SPLICE_FD_IN, U_ADDR3 };
static void run_unused(struct dctx *c, struct tring *r,
		       const struct io_uring_sqe *t, uint64_t ud,
		       const char *name, const int *set)
{
	static const char *const field[] = {
		[U_FIXED_FILE] = "FIXED_FILE", [U_ADDR] = "addr",
		[U_LEN] = "len", [U_OFF] = "off", [U_RW_FLAGS] = "rw_flags",
		[U_BUF_INDEX] = "buf_index", [U_SPLICE_FD_IN] = "splice_fd_in",
		[U_ADDR3] = "addr3",
	};

	for (; *set; set++, ud++) {
		struct io_uring_sqe u = *t;
		char label[96];

		u.user_data = ud;
		switch (*set) {
		case U_FIXED_FILE:
			u.flags = IOSQE_FIXED_FILE;
			break;
		case U_ADDR:
			u.addr = 1;
			break;
		case U_LEN:
			u.len = 1;
			break;
		case U_OFF:
			u.off = 1;
			break;
		case U_RW_FLAGS:
			u.rw_flags = 1;
			break;
		case U_BUF_INDEX:
			u.buf_index = 1;
			break;
		case U_SPLICE_FD_IN:
			u.splice_fd_in = 1;
			break;
		case U_ADDR3:
			u.addr3 = 1;
			break;
		}
		if (*name)
			snprintf(label, sizeof(label), "%s %s", name,
				 field[*set]);
		else
			snprintf(label, sizeof(label), "%s", field[*set]);
		run1(c, r, &u, false, label);
	}
}
#define UFIELDS(...) ((const int[]){ __VA_ARGS__, 0 })

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

	t = tsqe(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 1);
	t.open_flags = O_RDONLY;
	fd = run1(c, &r, &t, true, "open f rdonly");
	if (fd >= 0) {
		memset(buf, 0, sizeof(buf));
		drec_int(c, read(fd, buf, sizeof(buf)), "read");
		drec_int(c, strcmp(buf, "hello"), "data");
		record_fd_flags(c, fd, "rdonly");
		close(fd);
	}
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 2);
	t.open_flags = O_RDWR | O_CLOEXEC | O_APPEND;
	fd = run1(c, &r, &t, true, "open f rdwr cloexec append");
	if (fd >= 0) {
		record_fd_flags(c, fd, "rdwr cloexec");
		close(fd);
	}
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 3);
	t.open_flags = O_RDONLY | O_NONBLOCK;
	fd = run1(c, &r, &t, true, "open f nonblock");
	if (fd >= 0) {
		record_fd_flags(c, fd, "nonblock");
		close(fd);
	}
	/* create, with a mode (umask 022) */
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("new"), 0640 | 0100000, 0, 4);
	t.open_flags = O_CREAT | O_WRONLY;
	fd = run1(c, &r, &t, true, "create new");
	if (fd >= 0) {
		drec_int(c, write(fd, "abc", 3), "write new");
		close(fd);
	}
	drec_int(c, fstatat(s.dfd, "new", &st, 0), "stat new");
	drec_int(c, st.st_mode & 07777, "mode new");
	drec_int(c, st.st_size, "size new");
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("new"), 0600, 0, 5);
	t.open_flags = O_CREAT | O_EXCL | O_WRONLY;
	run1(c, &r, &t, true, "create excl existing");
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("new"), 0, 0, 6);
	t.open_flags = O_TRUNC | O_WRONLY;
	fd = run1(c, &r, &t, true, "trunc");
	if (fd >= 0)
		close(fd);
	fstatat(s.dfd, "new", &st, 0);
	drec_int(c, st.st_size, "size after trunc");
	/* errors from the open itself */
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("missing"), 0, 0, 7);
	run1(c, &r, &t, true, "missing");
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 8);
	t.open_flags = O_DIRECTORY;
	run1(c, &r, &t, true, "O_DIRECTORY on a file");
	t = tsqe(IORING_OP_OPENAT, 9999, P("f"), 0, 0, 9);
	run1(c, &r, &t, true, "bad dfd, relative path");
	t = tsqe(IORING_OP_OPENAT, 9999, P("/dev/null"), 0, 0, 10);
	fd = run1(c, &r, &t, true, "bad dfd, absolute path");
	if (fd >= 0)
		close(fd);
	t = tsqe(IORING_OP_OPENAT, AT_FDCWD, P(s.path), 0, 0, 11);
	t.open_flags = O_DIRECTORY | O_PATH;
	fd = run1(c, &r, &t, true, "O_PATH dir at AT_FDCWD");
	if (fd >= 0) {
		record_fd_flags(c, fd, "O_PATH");
		close(fd);
	}
	/* unknown flag bits are ignored by openat */
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 12);
	t.open_flags = 0x40000000 | O_RDONLY;
	fd = run1(c, &r, &t, true, "unknown open flags");
	if (fd >= 0)
		close(fd);
	/* O_TMPFILE */
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("."), 0600, 0, 13);
	t.open_flags = O_TMPFILE | O_RDWR;
	fd = run1(c, &r, &t, true, "O_TMPFILE");
	if (fd >= 0)
		close(fd);
	/* IOSQE_ASYNC */
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 14);
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
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 1);
	t.buf_index = 1;
	run1(c, &r, &t, true, "buf_index");
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 2);
	t.flags = IOSQE_FIXED_FILE;
	run1(c, &r, &t, true, "FIXED_FILE");
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 3);
	t.ioprio = 1;
	run1(c, &r, &t, true, "ioprio");
	t = tsqe(IORING_OP_OPENAT, s.dfd, 0, 0, 0, 4);
	run1(c, &r, &t, true, "NULL path");
	t = tsqe(IORING_OP_OPENAT, s.dfd, P(dunmapped_addr()), 0, 0, 5);
	run1(c, &r, &t, true, "unmapped path");
	t = tsqe(IORING_OP_OPENAT, s.dfd, P(dprot_none_page()), 0, 0, 6);
	run1(c, &r, &t, true, "PROT_NONE path");
	t = tsqe(IORING_OP_OPENAT, s.dfd, P(""), 0, 0, 7);
	run1(c, &r, &t, true, "empty path");
	longp = malloc(PATH_MAX + 16);
	memset(longp, 'a', PATH_MAX + 15);
	longp[PATH_MAX + 15] = 0;
	t = tsqe(IORING_OP_OPENAT, s.dfd, P(longp), 0, 0, 8);
	run1(c, &r, &t, true, "path longer than PATH_MAX");
	longp[PATH_MAX - 1] = 0;
	t = tsqe(IORING_OP_OPENAT, s.dfd, P(longp), 0, 0, 9);
	run1(c, &r, &t, true, "path of PATH_MAX-1");
	longp[PATH_MAX] = 0;
	longp[PATH_MAX - 1] = 'a';
	t = tsqe(IORING_OP_OPENAT, s.dfd, P(longp), 0, 0, 10);
	run1(c, &r, &t, true, "path of PATH_MAX");
	free(longp);
	/* a path that ends right before an inaccessible page */
	edge = str_at_page_end(1, 'f');
	t = tsqe(IORING_OP_OPENAT, s.dfd, P(edge), 0, 0, 11);
	fd = run1(c, &r, &t, true, "path at a page end");
	if (fd >= 0)
		close(fd);
	edge[1] = 'f'; /* no NUL before the PROT_NONE page */
	t = tsqe(IORING_OP_OPENAT, s.dfd, P(edge), 0, 0, 12);
	run1(c, &r, &t, true, "unterminated path at a page end");
	/* direct descriptors without a registered file table */
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 13);
	t.file_index = 1;
	t.open_flags = O_CLOEXEC;
	run1(c, &r, &t, true, "file_index + O_CLOEXEC");
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 14);
	t.file_index = 1;
	run1(c, &r, &t, true, "file_index 1, no table");
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 15);
	t.file_index = IORING_FILE_INDEX_ALLOC;
	run1(c, &r, &t, true, "file_index ALLOC, no table");
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("created"), 0600, 0, 16);
	t.file_index = 1;
	t.open_flags = O_CREAT | O_WRONLY;
	run1(c, &r, &t, true, "file_index + O_CREAT");
	drec_int(c, faccessat(s.dfd, "created", F_OK, 0), "created anyway");
	/* order: buf_index before a bad path; a bad path before file_index */
	t = tsqe(IORING_OP_OPENAT, s.dfd, 0, 0, 0, 17);
	t.buf_index = 1;
	run1(c, &r, &t, true, "buf_index + NULL path");
	t = tsqe(IORING_OP_OPENAT, s.dfd, 0, 0, 0, 18);
	t.file_index = 1;
	t.open_flags = O_CLOEXEC;
	run1(c, &r, &t, true, "NULL path + file_index + O_CLOEXEC");
	t = tsqe(IORING_OP_OPENAT, s.dfd, 0, 0, 0, 19);
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
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("fifo"), 0, 0, 1);
	t.open_flags = O_RDONLY;
	fd = run1(c, &r, &t, true, "fifo rdonly, no writer");
	if (fd >= 0) {
		record_fd_flags(c, fd, "fifo rdonly");
		close(fd);
	}
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("fifo"), 0, 0, 2);
	t.open_flags = O_WRONLY;
	fd = run1(c, &r, &t, true, "fifo wronly, no reader");
	if (fd >= 0)
		close(fd);
	t = tsqe(IORING_OP_OPENAT, s.dfd, P("fifo"), 0, 0, 3);
	t.open_flags = O_RDWR;
	fd = run1(c, &r, &t, true, "fifo rdwr");
	if (fd >= 0) {
		record_fd_flags(c, fd, "fifo rdwr");
		close(fd);
	}
	/* O_CREAT: io-wq, where opening for reading waits for a writer */
	{
		struct io_uring_sqe *sqe = tring_get_sqe(&r);
		struct tcqe cqe;
		unsigned int n;
		int w;

		*sqe = tsqe(IORING_OP_OPENAT, s.dfd, P("fifo"), 0600, 0, 4);
		sqe->open_flags = O_RDONLY | O_CREAT | O_CLOEXEC;
		drec_int(c, tring_submit(&r), "submit fifo O_CREAT");
		n = tring_reap_wait(&r, &cqe, 1, 100000000LL);
		drec_int(c, n, "CQEs before a writer");
		/*
		 * A non-blocking writer's open succeeds only while a reader
		 * is opening: wait until the worker sleeps in the FIFO open
		 * (the 100 ms above were only usually enough for it to get
		 * there on a loaded machine); 10 s is a hang guard.
		 */
		for (int i = 0; !n && i < 10000 &&
		     tthreads_in_wchan("iou-wrk-", true, "wait_for_partner") < 1;
		     i++)
			usleep(1000);
		w = openat(s.dfd, "fifo", O_WRONLY | O_NONBLOCK);
		n += tring_reap_wait(&r, &cqe, 1, 2000000000LL);
		drec_int(c, n, "CQEs after a writer");
		drec_int(c, n ? cqe.res >= 0 : -1, "opened");
		if (n && cqe.res >= 0)
			close(cqe.res);
		close(w);
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
	t = tsqe(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(h), P(&h), 1);
	fd = run1(c, &r, &t, true, "openat2 rdonly");
	if (fd >= 0) {
		record_fd_flags(c, fd, "openat2 rdonly");
		close(fd);
	}
	h.flags = O_CREAT | O_RDWR | O_CLOEXEC;
	h.mode = 0604;
	t = tsqe(IORING_OP_OPENAT2, s.dfd, P("g"), sizeof(h), P(&h), 2);
	fd = run1(c, &r, &t, true, "openat2 create");
	if (fd >= 0) {
		struct stat st;

		fstat(fd, &st);
		drec_int(c, st.st_mode & 07777, "mode g");
		record_fd_flags(c, fd, "openat2 create");
		close(fd);
	}
	/* sizes */
	t = tsqe(IORING_OP_OPENAT2, s.dfd, P("f"), 23, P(&h), 3);
	run1(c, &r, &t, true, "how size 23");
	t = tsqe(IORING_OP_OPENAT2, s.dfd, P("f"), 0, P(&h), 4);
	run1(c, &r, &t, true, "how size 0");
	memset(big, 0, sizeof(big));
	memcpy(big, &(struct how){ .flags = O_RDONLY }, sizeof(struct how));
	t = tsqe(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(big), P(big), 5);
	fd = run1(c, &r, &t, true, "how size 64, zero tail");
	if (fd >= 0)
		close(fd);
	big[40] = 1;
	t = tsqe(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(big), P(big), 6);
	run1(c, &r, &t, true, "how size 64, non-zero tail");
	t = tsqe(IORING_OP_OPENAT2, s.dfd, P("f"), 1u << 20, P(big), 7);
	run1(c, &r, &t, true, "how size 1 MiB");
	t = tsqe(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(h), 0, 8);
	run1(c, &r, &t, true, "how NULL");
	t = tsqe(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(h),
		 P(dunmapped_addr()), 9);
	run1(c, &r, &t, true, "how unmapped");
	/* a how whose tail runs into a PROT_NONE page */
	edge = str_at_page_end(31, 0);
	t = tsqe(IORING_OP_OPENAT2, s.dfd, P("f"), 40, P(edge), 10);
	run1(c, &r, &t, true, "how tail unreadable");
	t = tsqe(IORING_OP_OPENAT2, s.dfd, P("f"), 32, P(edge), 11);
	fd = run1(c, &r, &t, true, "how at a page end");
	if (fd >= 0)
		close(fd);
	/* validated at issue by openat2 itself */
	h.flags = 1ULL << 40;
	h.mode = 0;
	t = tsqe(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(h), P(&h), 12);
	run1(c, &r, &t, true, "unknown flags");
	h.flags = O_RDONLY;
	h.mode = 0600;
	t = tsqe(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(h), P(&h), 13);
	run1(c, &r, &t, true, "mode without O_CREAT");
	h.mode = 0;
	h.resolve = RESOLVE_BENEATH;
	t = tsqe(IORING_OP_OPENAT2, s.dfd, P("../"), sizeof(h), P(&h), 14);
	run1(c, &r, &t, true, "RESOLVE_BENEATH ..");
	h.resolve = 1ULL << 50;
	t = tsqe(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(h), P(&h), 15);
	run1(c, &r, &t, true, "unknown resolve");
	h.flags = O_CREAT | O_RDWR;
	h.mode = 0600;
	h.resolve = RESOLVE_CACHED;
	t = tsqe(IORING_OP_OPENAT2, s.dfd, P("h"), sizeof(h), P(&h), 16);
	run1(c, &r, &t, true, "RESOLVE_CACHED + O_CREAT");
	/* prep order: size, then how, then the SQE fields and the path */
	h.flags = O_RDONLY;
	h.mode = 0;
	h.resolve = 0;
	t = tsqe(IORING_OP_OPENAT2, s.dfd, 0, 8, P(&h), 17);
	t.buf_index = 1;
	run1(c, &r, &t, true, "size 8 + buf_index + NULL path");
	t = tsqe(IORING_OP_OPENAT2, s.dfd, 0, sizeof(h), 0, 18);
	t.buf_index = 1;
	run1(c, &r, &t, true, "how NULL + buf_index");
	t = tsqe(IORING_OP_OPENAT2, s.dfd, 0, sizeof(h), P(&h), 19);
	t.buf_index = 1;
	run1(c, &r, &t, true, "buf_index + NULL path");
	t = tsqe(IORING_OP_OPENAT2, s.dfd, 0, sizeof(h), P(&h), 20);
	t.flags = IOSQE_FIXED_FILE;
	run1(c, &r, &t, true, "FIXED_FILE + NULL path");
	t = tsqe(IORING_OP_OPENAT2, s.dfd, 0, sizeof(h), P(&h), 21);
	run1(c, &r, &t, true, "NULL path");
	h.flags = O_CLOEXEC;
	t = tsqe(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(h), P(&h), 22);
	t.file_index = 3;
	run1(c, &r, &t, true, "file_index + O_CLOEXEC");
	h.flags = O_RDONLY;
	t = tsqe(IORING_OP_OPENAT2, s.dfd, P("f"), sizeof(h), P(&h), 23);
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
	t = tsqe(IORING_OP_CLOSE, fd, 0, 0, 0, 1);
	run1(c, &r, &t, false, "close fd");
	drec_int(c, fcntl(fd, F_GETFD) < 0 ? -errno : 0, "fd closed");
	t = tsqe(IORING_OP_CLOSE, fd, 0, 0, 0, 2);
	run1(c, &r, &t, false, "close again");
	t = tsqe(IORING_OP_CLOSE, -1, 0, 0, 0, 3);
	run1(c, &r, &t, false, "close -1");
	t = tsqe(IORING_OP_CLOSE, 99999, 0, 0, 0, 4);
	run1(c, &r, &t, false, "close 99999");
	efd = eventfd(0, 0);
	t = tsqe(IORING_OP_CLOSE, efd, 0, 0, 0, 5);
	run1(c, &r, &t, false, "close eventfd");
	/* io_uring instances are refused */
	t = tsqe(IORING_OP_CLOSE, r.fd, 0, 0, 0, 6);
	run1(c, &r, &t, false, "close own ring fd");
	if (!dring_flags(c, &r2, 4, 0)) {
		t = tsqe(IORING_OP_CLOSE, r2.fd, 0, 0, 0, 7);
		run1(c, &r, &t, false, "close another ring");
		drec_int(c, fcntl(r2.fd, F_GETFD) >= 0, "other ring open");
		tring_exit(&r2);
	}
	/* prep */
	fd = open("/dev/null", O_RDONLY);
	t = tsqe(IORING_OP_CLOSE, fd, 0, 0, 1, 8);
	run1(c, &r, &t, false, "off");
	t = tsqe(IORING_OP_CLOSE, fd, 1, 0, 0, 9);
	run1(c, &r, &t, false, "addr");
	t = tsqe(IORING_OP_CLOSE, fd, 0, 1, 0, 10);
	run1(c, &r, &t, false, "len");
	t = tsqe(IORING_OP_CLOSE, fd, 0, 0, 0, 11);
	t.rw_flags = 1;
	run1(c, &r, &t, false, "close_flags");
	t = tsqe(IORING_OP_CLOSE, fd, 0, 0, 0, 12);
	t.buf_index = 1;
	run1(c, &r, &t, false, "buf_index");
	t = tsqe(IORING_OP_CLOSE, fd, 0, 0, 0, 13);
	t.flags = IOSQE_FIXED_FILE;
	run1(c, &r, &t, false, "FIXED_FILE");
	t = tsqe(IORING_OP_CLOSE, fd, 0, 0, 0, 14);
	t.file_index = 1;
	run1(c, &r, &t, false, "file_index + fd");
	t = tsqe(IORING_OP_CLOSE, 0, 0, 0, 0, 15);
	t.file_index = 1;
	run1(c, &r, &t, false, "file_index, no table");
	t = tsqe(IORING_OP_CLOSE, fd, 0, 0, 1, 16);
	t.flags = IOSQE_FIXED_FILE;
	run1(c, &r, &t, false, "off + FIXED_FILE");
	drec_int(c, fcntl(fd, F_GETFD) >= 0, "fd still open");
	/* ASYNC */
	t = tsqe(IORING_OP_CLOSE, fd, 0, 0, 0, 17);
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
	*sqe = tsqe(IORING_OP_OPENAT, s.dfd, P("f"), 0, 0, 1);
	sqe->flags = IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	*sqe = tsqe(IORING_OP_CLOSE, lowest, 0, 0, 0, 2);
	sqe->flags = IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	*sqe = tsqe(IORING_OP_CLOSE, lowest, 0, 0, 0, 3);
	drec_int(c, tring_submit(&r), "submit");
	n = (int)tring_reap_wait(&r, cqe, 3, 2000000000LL);
	if (n > 0 && cqe[0].res == lowest)
		cqe[0].res = FD_LOWEST;
	drec_cqes(c, cqe, (unsigned int)n, true, "open, close, close");
	/* a failing open cancels the rest of the chain */
	sqe = tring_get_sqe(&r);
	*sqe = tsqe(IORING_OP_OPENAT, s.dfd, P("nope"), 0, 0, 4);
	sqe->flags = IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	*sqe = tsqe(IORING_OP_CLOSE, lowest, 0, 0, 0, 5);
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
	t = tsqe(IORING_OP_PIPE, 0, P(fds), 0, 0, 1);
	run1(c, &r, &t, false, "pipe");
	drec_int(c, fds[0] == lowest && fds[1] == lowest + 1, "fds lowest");
	drec_int(c, write(fds[1], "pq", 2), "write");
	drec_int(c, read(fds[0], b, 2), "read");
	record_fd_flags(c, fds[0], "pipe rd");
	record_fd_flags(c, fds[1], "pipe wr");
	tclose2(fds);
	t = tsqe(IORING_OP_PIPE, 0, P(fds), 0, 0, 2);
	t.pipe_flags = O_CLOEXEC | O_NONBLOCK;
	run1(c, &r, &t, false, "pipe cloexec nonblock");
	record_fd_flags(c, fds[0], "pipe2 rd");
	record_fd_flags(c, fds[1], "pipe2 wr");
	tclose2(fds);
	t = tsqe(IORING_OP_PIPE, 0, P(fds), 0, 0, 3);
	t.pipe_flags = O_DIRECT;
	run1(c, &r, &t, false, "pipe O_DIRECT");
	tclose2(fds);
	/* errors */
	t = tsqe(IORING_OP_PIPE, 0, P(fds), 0, 0, 4);
	t.pipe_flags = O_APPEND;
	run1(c, &r, &t, false, "bad flags");
	t = tsqe(IORING_OP_PIPE, 1, P(fds), 0, 0, 5);
	run1(c, &r, &t, false, "fd set");
	t = tsqe(IORING_OP_PIPE, 0, P(fds), 0, 1, 6);
	run1(c, &r, &t, false, "off set");
	t = tsqe(IORING_OP_PIPE, 0, P(fds), 0, 0, 7);
	t.addr3 = 1;
	run1(c, &r, &t, false, "addr3 set");
	lowest = lowest_free_fd();
	t = tsqe(IORING_OP_PIPE, 0, 0, 0, 0, 8);
	run1(c, &r, &t, false, "NULL fds");
	t = tsqe(IORING_OP_PIPE, 0, P(dprot_none_page()), 0, 0, 9);
	run1(c, &r, &t, false, "PROT_NONE fds");
	drec_int(c, lowest_free_fd() == lowest, "no fd leaked");
	t = tsqe(IORING_OP_PIPE, 0, P(fds), 0, 0, 10);
	t.file_index = 1;
	t.pipe_flags = O_CLOEXEC;
	run1(c, &r, &t, false, "file_index + O_CLOEXEC");
	t = tsqe(IORING_OP_PIPE, 0, P(fds), 0, 0, 11);
	t.file_index = 1;
	run1(c, &r, &t, false, "file_index, no table");
	t = tsqe(IORING_OP_PIPE, 0, P(fds), 0, 0, 12);
	t.file_index = IORING_FILE_INDEX_ALLOC;
	run1(c, &r, &t, false, "file_index ALLOC, no table");
	drec_int(c, lowest_free_fd() == lowest, "no fd leaked");
	t = tsqe(IORING_OP_PIPE, 0, P(fds), 0, 0, 13);
	t.flags = IOSQE_FIXED_FILE;
	run1(c, &r, &t, false, "FIXED_FILE");
	tclose2(fds);
	t = tsqe(IORING_OP_PIPE, 0, P(fds), 5, 0, 14);
	t.flags = IOSQE_ASYNC;
	run1(c, &r, &t, false, "ASYNC, len set");
	tclose2(fds);
	tring_exit(&r);
}

/*
 * PIPE into the registered file table: a given slot takes the read end
 * and the next slot the write end; ALLOC takes two free slots; the fds
 * array receives what the kernel reports; a failure (no room, a slot out
 * of range, an unwritable array) leaves the table as it was.  Data goes
 * through the two direct descriptors.
 */
static void sc_pipe_fixed(struct dctx *c)
{
	struct io_uring_sqe t;
	struct tring r;
	int tab[5] = { -1, -1, -1, -1, -1 }, fds[2], lowest, i;
	char b[8] = { 0 };

	if (dring_flags(c, &r, 16, 0))
		return;
	lowest = lowest_free_fd();
	drec_int(c, r.be->reg((unsigned int)r.fd, IORING_REGISTER_FILES, tab,
			      5), "register 5 empty slots");
	fds[0] = fds[1] = -7;
	t = tsqe(IORING_OP_PIPE, 0, P(fds), 0, 0, 1);
	t.file_index = 2;
	run1(c, &r, &t, false, "pipe at slot 2");
	drec_int(c, fds[0], "slot 2: fds[0]");
	drec_int(c, fds[1], "slot 2: fds[1]");
	t = tsqe(IORING_OP_WRITE, 2, P("xyz"), 3, 0, 2);
	t.flags = IOSQE_FIXED_FILE;
	run1(c, &r, &t, false, "write the fixed write end");
	t = tsqe(IORING_OP_READ, 1, P(b), 3, 0, 3);
	t.flags = IOSQE_FIXED_FILE;
	run1(c, &r, &t, false, "read the fixed read end");
	drec_int(c, !memcmp(b, "xyz", 3), "data through the pipe");
	fds[0] = fds[1] = -7;
	t = tsqe(IORING_OP_PIPE, 0, P(fds), 0, 0, 4);
	t.file_index = IORING_FILE_INDEX_ALLOC;
	run1(c, &r, &t, false, "pipe ALLOC");
	drec_int(c, fds[0], "ALLOC: fds[0]");
	drec_int(c, fds[1], "ALLOC: fds[1]");
	t = tsqe(IORING_OP_PIPE, 0, P(fds), 0, 0, 5);
	t.file_index = IORING_FILE_INDEX_ALLOC;
	run1(c, &r, &t, false, "pipe ALLOC, one slot left");
	t = tsqe(IORING_OP_PIPE, 0, P(fds), 0, 0, 6);
	t.file_index = 5;
	run1(c, &r, &t, false, "pipe at the last slot");
	t = tsqe(IORING_OP_PIPE, 0, P(fds), 0, 0, 7);
	t.file_index = 6;
	run1(c, &r, &t, false, "pipe past the table");
	/* which slots are in use now: a NOP with a fixed file says */
	for (i = 0; i < 5; i++) {
		t = tsqe(IORING_OP_NOP, i, 0, 0, 0, 10 + (uint64_t)i);
		t.flags = IOSQE_FIXED_FILE;
		t.nop_flags = IORING_NOP_FILE | IORING_NOP_FIXED_FILE;
		run1(c, &r, &t, false, "slot in use?");
	}
	t = tsqe(IORING_OP_PIPE, 0, 0, 0, 0, 20);
	t.file_index = 1;
	run1(c, &r, &t, false, "pipe at slot 1, NULL fds");
	for (i = 0; i < 2; i++) {
		t = tsqe(IORING_OP_NOP, i, 0, 0, 0, 21 + (uint64_t)i);
		t.flags = IOSQE_FIXED_FILE;
		t.nop_flags = IORING_NOP_FILE | IORING_NOP_FIXED_FILE;
		run1(c, &r, &t, false, "slot in use after the fault?");
	}
	drec_int(c, lowest_free_fd() == lowest, "no fd leaked");
	tring_exit(&r);
}

/* ---- STATX ---- */

static void record_statx(struct dctx *c, const struct statx *sx, int fd,
			 const char *label)
{
	struct stat st;

	fstat(fd, &st);
	drec_int(c, sx->stx_mask & STATX_BASIC_STATS, "%s: mask", label);
	drec_int(c, (long)sx->stx_size, "%s: size", label);
	drec_int(c, sx->stx_mode, "%s: mode", label);
	drec_int(c, sx->stx_ino == st.st_ino, "%s: ino", label);
}

static void sc_statx(struct dctx *c)
{
	struct scratch s;
	struct io_uring_sqe t;
	struct tring r;
	struct statx sx;
	int fd;

	if (dring_flags(c, &r, 16, 0))
		return;
	if (scratch_init(c, &s))
		goto out;
	mkfile(&s, "f", "hello world");
	fd = openat(s.dfd, "f", O_RDONLY);
	symlinkat("f", s.dfd, "sl");
	memset(&sx, 0, sizeof(sx));
	t = tsqe(IORING_OP_STATX, s.dfd, P("f"), STATX_BASIC_STATS, P(&sx), 1);
	run1(c, &r, &t, false, "statx f");
	record_statx(c, &sx, fd, "f");
	memset(&sx, 0, sizeof(sx));
	t = tsqe(IORING_OP_STATX, fd, P(""), STATX_SIZE, P(&sx), 2);
	t.statx_flags = AT_EMPTY_PATH;
	run1(c, &r, &t, false, "statx AT_EMPTY_PATH");
	drec_int(c, (long)sx.stx_size, "empty path: size");
	memset(&sx, 0, sizeof(sx));
	t = tsqe(IORING_OP_STATX, s.dfd, P("sl"), STATX_BASIC_STATS, P(&sx), 3);
	t.statx_flags = AT_SYMLINK_NOFOLLOW;
	run1(c, &r, &t, false, "statx symlink nofollow");
	drec_int(c, S_ISLNK(sx.stx_mode), "is a symlink");
	memset(&sx, 0, sizeof(sx));
	t = tsqe(IORING_OP_STATX, s.dfd, P("sl"), STATX_BASIC_STATS, P(&sx), 4);
	t.flags = IOSQE_ASYNC;
	run1(c, &r, &t, false, "statx ASYNC (follows)");
	record_statx(c, &sx, fd, "ASYNC");
	t = tsqe(IORING_OP_STATX, AT_FDCWD, P(s.path), STATX_TYPE, P(&sx), 5);
	t.statx_flags = AT_STATX_DONT_SYNC;
	run1(c, &r, &t, false, "statx dir at AT_FDCWD");
	drec_int(c, S_ISDIR(sx.stx_mode), "is a dir");
	/* issue errors */
	t = tsqe(IORING_OP_STATX, s.dfd, P("missing"), STATX_BASIC_STATS,
		 P(&sx), 10);
	run1(c, &r, &t, false, "missing");
	t = tsqe(IORING_OP_STATX, 9999, P("f"), STATX_BASIC_STATS, P(&sx), 11);
	run1(c, &r, &t, false, "bad dfd");
	t = tsqe(IORING_OP_STATX, s.dfd, P("f"), STATX_BASIC_STATS, 0, 12);
	run1(c, &r, &t, false, "NULL statx buffer");
	t = tsqe(IORING_OP_STATX, s.dfd, P("f"), STATX_BASIC_STATS,
		 P(dprot_none_page()), 13);
	run1(c, &r, &t, false, "PROT_NONE statx buffer");
	t = tsqe(IORING_OP_STATX, s.dfd, P("f"), STATX_BASIC_STATS, P(&sx), 14);
	t.statx_flags = 0x80000000;
	run1(c, &r, &t, false, "unknown flags");
	t = tsqe(IORING_OP_STATX, s.dfd, P("f"), STATX_BASIC_STATS, P(&sx), 15);
	t.statx_flags = AT_STATX_FORCE_SYNC | AT_STATX_DONT_SYNC;
	run1(c, &r, &t, false, "both sync types");
	t = tsqe(IORING_OP_STATX, s.dfd, P("f"), 0x80000000U, P(&sx), 16);
	run1(c, &r, &t, false, "STATX__RESERVED mask");
	t = tsqe(IORING_OP_STATX, s.dfd, P("f/x"), STATX_BASIC_STATS, P(&sx),
		 17);
	run1(c, &r, &t, false, "not a directory");
	/* prep errors */
	t = tsqe(IORING_OP_STATX, s.dfd, P(""), STATX_BASIC_STATS, P(&sx), 20);
	run1(c, &r, &t, false, "empty path");
	t = tsqe(IORING_OP_STATX, fd, 0, STATX_BASIC_STATS, P(&sx), 21);
	t.statx_flags = AT_EMPTY_PATH;
	run1(c, &r, &t, false, "NULL path + AT_EMPTY_PATH");
	t = tsqe(IORING_OP_STATX, s.dfd, 0, STATX_BASIC_STATS, P(&sx), 22);
	run1(c, &r, &t, false, "NULL path");
	t = tsqe(IORING_OP_STATX, s.dfd, P("f"), STATX_BASIC_STATS, P(&sx), 23);
	t.buf_index = 1;
	run1(c, &r, &t, false, "buf_index");
	t = tsqe(IORING_OP_STATX, s.dfd, P("f"), STATX_BASIC_STATS, P(&sx), 24);
	t.splice_fd_in = 1;
	run1(c, &r, &t, false, "splice_fd_in");
	t = tsqe(IORING_OP_STATX, s.dfd, P("f"), STATX_BASIC_STATS, P(&sx), 25);
	t.flags = IOSQE_FIXED_FILE;
	run1(c, &r, &t, false, "FIXED_FILE");
	t = tsqe(IORING_OP_STATX, s.dfd, 0, STATX_BASIC_STATS, P(&sx), 26);
	t.flags = IOSQE_FIXED_FILE;
	t.buf_index = 1;
	run1(c, &r, &t, false, "FIXED_FILE + buf_index + NULL path");
	close(fd);
	scratch_fini(&s);
out:
	tring_exit(&r);
}

/* ---- MKDIRAT, UNLINKAT ---- */

static void sc_mkdir_unlink(struct dctx *c)
{
	struct scratch s;
	struct io_uring_sqe t;
	struct tring r;
	struct stat st;

	if (dring_flags(c, &r, 16, 0))
		return;
	if (scratch_init(c, &s))
		goto out;
	umask(022);
	t = tsqe(IORING_OP_MKDIRAT, s.dfd, P("d"), 0777, 0, 1);
	run1(c, &r, &t, false, "mkdir d");
	drec_int(c, fstatat(s.dfd, "d", &st, 0), "stat d");
	drec_int(c, st.st_mode, "mode d");
	t = tsqe(IORING_OP_MKDIRAT, s.dfd, P("e"), 0x10000 | 0710, 0, 2);
	run1(c, &r, &t, false, "mkdir e, mode above 16 bits");
	fstatat(s.dfd, "e", &st, 0);
	drec_int(c, st.st_mode, "mode e");
	t = tsqe(IORING_OP_MKDIRAT, s.dfd, P("d"), 0755, 0, 3);
	run1(c, &r, &t, false, "mkdir existing");
	t = tsqe(IORING_OP_MKDIRAT, s.dfd, P("x/y"), 0755, 0, 4);
	run1(c, &r, &t, false, "mkdir in missing dir");
	t = tsqe(IORING_OP_MKDIRAT, 9999, P("z"), 0755, 0, 5);
	run1(c, &r, &t, false, "mkdir bad dfd");
	t = tsqe(IORING_OP_MKDIRAT, s.dfd, P("z"), 0755, 0, 6);
	t.flags = IOSQE_ASYNC;
	run1(c, &r, &t, false, "mkdir ASYNC");
	/* mkdir prep */
	t = tsqe(IORING_OP_MKDIRAT, s.dfd, P("p"), 0755, 0, 0);
	run_unused(c, &r, &t, 7, "mkdir",
		   UFIELDS(U_OFF, U_RW_FLAGS, U_BUF_INDEX, U_SPLICE_FD_IN,
			   U_FIXED_FILE));
	t = tsqe(IORING_OP_MKDIRAT, s.dfd, P(dunmapped_addr()), 0755, 0, 12);
	run1(c, &r, &t, false, "mkdir unmapped path");
	t = tsqe(IORING_OP_MKDIRAT, s.dfd, P(""), 0755, 0, 13);
	run1(c, &r, &t, false, "mkdir empty path");
	drec_int(c, faccessat(s.dfd, "p", F_OK, 0), "p not created");

	/* UNLINKAT */
	mkfile(&s, "f", "x");
	mkfile(&s, "d/inner", "x");
	t = tsqe(IORING_OP_UNLINKAT, s.dfd, P("d"), 0, 0, 20);
	run1(c, &r, &t, false, "unlink a dir");
	t = tsqe(IORING_OP_UNLINKAT, s.dfd, P("d"), 0, 0, 21);
	t.unlink_flags = AT_REMOVEDIR;
	run1(c, &r, &t, false, "rmdir non-empty");
	t = tsqe(IORING_OP_UNLINKAT, s.dfd, P("f"), 0, 0, 22);
	t.unlink_flags = AT_REMOVEDIR;
	run1(c, &r, &t, false, "rmdir a file");
	t = tsqe(IORING_OP_UNLINKAT, s.dfd, P("d/inner"), 0, 0, 23);
	run1(c, &r, &t, false, "unlink d/inner");
	t = tsqe(IORING_OP_UNLINKAT, s.dfd, P("d"), 0, 0, 24);
	t.unlink_flags = AT_REMOVEDIR;
	run1(c, &r, &t, false, "rmdir d");
	t = tsqe(IORING_OP_UNLINKAT, s.dfd, P("f"), 0, 0, 25);
	t.flags = IOSQE_ASYNC;
	run1(c, &r, &t, false, "unlink f ASYNC");
	t = tsqe(IORING_OP_UNLINKAT, s.dfd, P("f"), 0, 0, 26);
	run1(c, &r, &t, false, "unlink missing");
	t = tsqe(IORING_OP_UNLINKAT, 9999, P("f"), 0, 0, 27);
	run1(c, &r, &t, false, "unlink bad dfd");
	/* unlink prep */
	t = tsqe(IORING_OP_UNLINKAT, s.dfd, P("e"), 0, 0, 30);
	t.unlink_flags = AT_REMOVEDIR | 1;
	run1(c, &r, &t, false, "unlink bad flags");
	t = tsqe(IORING_OP_UNLINKAT, s.dfd, P("e"), 0, 0, 0);
	run_unused(c, &r, &t, 31, "unlink",
		   UFIELDS(U_OFF, U_LEN, U_BUF_INDEX, U_SPLICE_FD_IN,
			   U_FIXED_FILE));
	t = tsqe(IORING_OP_UNLINKAT, s.dfd, 0, 0, 0, 36);
	t.unlink_flags = 2;
	run1(c, &r, &t, false, "unlink bad flags + NULL path");
	t = tsqe(IORING_OP_UNLINKAT, s.dfd, 0, 0, 0, 37);
	run1(c, &r, &t, false, "unlink NULL path");
	drec_int(c, faccessat(s.dfd, "e", F_OK, 0), "e still there");
	scratch_fini(&s);
out:
	tring_exit(&r);
}

/* ---- RENAMEAT ---- */

static void sc_rename(struct dctx *c)
{
	struct scratch s;
	struct io_uring_sqe t;
	struct tring r;
	char buf[16];
	int fd;

	if (dring_flags(c, &r, 16, 0))
		return;
	if (scratch_init(c, &s))
		goto out;
	mkfile(&s, "a", "A");
	mkfile(&s, "b", "B");
	t = tsqe(IORING_OP_RENAMEAT, s.dfd, P("a"), (uint32_t)s.dfd, P("c"), 1);
	run1(c, &r, &t, false, "rename a c");
	drec_int(c, faccessat(s.dfd, "c", F_OK, 0), "c exists");
	t = tsqe(IORING_OP_RENAMEAT, s.dfd, P("c"), (uint32_t)s.dfd, P("b"), 2);
	t.rename_flags = RENAME_NOREPLACE;
	run1(c, &r, &t, false, "rename NOREPLACE onto b");
	t = tsqe(IORING_OP_RENAMEAT, s.dfd, P("c"), (uint32_t)s.dfd, P("b"), 3);
	t.rename_flags = RENAME_EXCHANGE;
	run1(c, &r, &t, false, "rename EXCHANGE c b");
	fd = openat(s.dfd, "b", O_RDONLY);
	memset(buf, 0, sizeof(buf));
	drec_int(c, read(fd, buf, 1), "read b");
	drec_int(c, buf[0], "b holds");
	close(fd);
	t = tsqe(IORING_OP_RENAMEAT, s.dfd, P("c"), (uint32_t)s.dfd, P("b"), 4);
	t.flags = IOSQE_ASYNC;
	run1(c, &r, &t, false, "rename ASYNC c b");
	t = tsqe(IORING_OP_RENAMEAT, s.dfd, P("c"), (uint32_t)s.dfd, P("d"), 5);
	run1(c, &r, &t, false, "rename missing");
	t = tsqe(IORING_OP_RENAMEAT, s.dfd, P("b"), (uint32_t)s.dfd, P("d"), 6);
	t.rename_flags = 0x100;
	run1(c, &r, &t, false, "rename bad flags");
	t = tsqe(IORING_OP_RENAMEAT, s.dfd, P("b"), 9999, P("d"), 7);
	run1(c, &r, &t, false, "rename bad new dfd");
	t = tsqe(IORING_OP_RENAMEAT, 9999, P("b"), (uint32_t)s.dfd, P("d"), 8);
	run1(c, &r, &t, false, "rename bad old dfd");
	t = tsqe(IORING_OP_RENAMEAT, s.dfd, P("b"), (uint32_t)AT_FDCWD,
		 P("/proc/self/nope"), 9);
	run1(c, &r, &t, false, "rename across file systems");
	/* prep */
	t = tsqe(IORING_OP_RENAMEAT, s.dfd, P("b"), (uint32_t)s.dfd, P("d"), 0);
	run_unused(c, &r, &t, 10, "rename",
		   UFIELDS(U_BUF_INDEX, U_SPLICE_FD_IN, U_FIXED_FILE));
	t = tsqe(IORING_OP_RENAMEAT, s.dfd, 0, (uint32_t)s.dfd, P("d"), 13);
	run1(c, &r, &t, false, "rename NULL old");
	t = tsqe(IORING_OP_RENAMEAT, s.dfd, P("b"), (uint32_t)s.dfd, 0, 14);
	run1(c, &r, &t, false, "rename NULL new");
	t = tsqe(IORING_OP_RENAMEAT, s.dfd, P("b"), (uint32_t)s.dfd, P(""), 15);
	run1(c, &r, &t, false, "rename empty new");
	t = tsqe(IORING_OP_RENAMEAT, s.dfd, P(""), (uint32_t)s.dfd, 0, 16);
	run1(c, &r, &t, false, "rename empty old, NULL new");
	drec_int(c, faccessat(s.dfd, "b", F_OK, 0), "b still there");
	scratch_fini(&s);
out:
	tring_exit(&r);
}

/* ---- SYMLINKAT, LINKAT ---- */

static void sc_links(struct dctx *c)
{
	struct scratch s;
	struct io_uring_sqe t;
	struct tring r;
	struct stat st;
	char buf[64];
	ssize_t n;
	int fd;

	if (dring_flags(c, &r, 16, 0))
		return;
	if (scratch_init(c, &s))
		goto out;
	mkfile(&s, "f", "x");
	t = tsqe(IORING_OP_SYMLINKAT, s.dfd, P("f"), 0, P("sl"), 1);
	run1(c, &r, &t, false, "symlink sl -> f");
	n = readlinkat(s.dfd, "sl", buf, sizeof(buf));
	drec_int(c, n == 1 && buf[0] == 'f', "readlink sl");
	t = tsqe(IORING_OP_SYMLINKAT, s.dfd, P("dangling/x"), 0, P("sl2"), 2);
	t.flags = IOSQE_ASYNC;
	run1(c, &r, &t, false, "symlink dangling ASYNC");
	t = tsqe(IORING_OP_SYMLINKAT, s.dfd, P("f"), 0, P("sl"), 3);
	run1(c, &r, &t, false, "symlink existing");
	t = tsqe(IORING_OP_SYMLINKAT, 9999, P("f"), 0, P("sl3"), 4);
	run1(c, &r, &t, false, "symlink bad dfd");
	t = tsqe(IORING_OP_SYMLINKAT, s.dfd, P("f"), 0, P("sl3"), 0);
	run_unused(c, &r, &t, 5, "symlink",
		   UFIELDS(U_LEN, U_RW_FLAGS, U_BUF_INDEX, U_SPLICE_FD_IN,
			   U_FIXED_FILE));
	t = tsqe(IORING_OP_SYMLINKAT, s.dfd, P(""), 0, P("sl3"), 10);
	run1(c, &r, &t, false, "symlink empty target");
	t = tsqe(IORING_OP_SYMLINKAT, s.dfd, P("f"), 0, 0, 11);
	run1(c, &r, &t, false, "symlink NULL new");
	t = tsqe(IORING_OP_SYMLINKAT, s.dfd, P(dunmapped_addr()), 0, P("s"),
		 12);
	run1(c, &r, &t, false, "symlink unmapped target");

	/* LINKAT */
	t = tsqe(IORING_OP_LINKAT, s.dfd, P("f"), (uint32_t)s.dfd, P("hl"), 20);
	run1(c, &r, &t, false, "link hl");
	fstatat(s.dfd, "f", &st, 0);
	drec_int(c, st.st_nlink, "nlink");
	t = tsqe(IORING_OP_LINKAT, s.dfd, P("sl"), (uint32_t)s.dfd, P("hl2"),
		 21);
	t.hardlink_flags = AT_SYMLINK_FOLLOW;
	run1(c, &r, &t, false, "link follow sl");
	fstatat(s.dfd, "hl2", &st, AT_SYMLINK_NOFOLLOW);
	drec_int(c, S_ISREG(st.st_mode), "hl2 is the file");
	t = tsqe(IORING_OP_LINKAT, s.dfd, P("sl"), (uint32_t)s.dfd, P("hl3"),
		 22);
	t.flags = IOSQE_ASYNC;
	run1(c, &r, &t, false, "link sl itself ASYNC");
	fstatat(s.dfd, "hl3", &st, AT_SYMLINK_NOFOLLOW);
	drec_int(c, S_ISLNK(st.st_mode), "hl3 is a symlink");
	fd = openat(s.dfd, "f", O_RDONLY);
	t = tsqe(IORING_OP_LINKAT, fd, P(""), (uint32_t)s.dfd, P("hl4"), 23);
	t.hardlink_flags = AT_EMPTY_PATH;
	run1(c, &r, &t, false, "link AT_EMPTY_PATH");
	t = tsqe(IORING_OP_LINKAT, fd, P(""), (uint32_t)s.dfd, P("hl5"), 24);
	run1(c, &r, &t, false, "link empty path");
	close(fd);
	t = tsqe(IORING_OP_LINKAT, s.dfd, P("f"), (uint32_t)s.dfd, P("hl"), 25);
	run1(c, &r, &t, false, "link existing");
	t = tsqe(IORING_OP_LINKAT, s.dfd, P("f"), (uint32_t)s.dfd, P("hl6"),
		 26);
	t.hardlink_flags = 0x1;
	run1(c, &r, &t, false, "link bad flags");
	t = tsqe(IORING_OP_LINKAT, s.dfd, P("f"), 9999, P("hl6"), 27);
	run1(c, &r, &t, false, "link bad new dfd");
	t = tsqe(IORING_OP_LINKAT, s.dfd, P("f"), (uint32_t)s.dfd, P("hl6"), 0);
	run_unused(c, &r, &t, 28, "link",
		   UFIELDS(U_BUF_INDEX, U_SPLICE_FD_IN, U_FIXED_FILE));
	t = tsqe(IORING_OP_LINKAT, s.dfd, 0, (uint32_t)s.dfd, P("hl6"), 31);
	run1(c, &r, &t, false, "link NULL old");
	t = tsqe(IORING_OP_LINKAT, s.dfd, P("f"), (uint32_t)s.dfd, P(""), 32);
	t.hardlink_flags = AT_EMPTY_PATH;
	run1(c, &r, &t, false, "link empty new (AT_EMPTY_PATH)");
	scratch_fini(&s);
out:
	tring_exit(&r);
}

/* a chain of path operations, and paths imported at submission (T2) */
static void sc_path_chain(struct dctx *c)
{
	struct scratch s;
	struct io_uring_sqe *sqe;
	struct tring r;
	struct statx sx;
	char p1[32], p2[32];

	if (dring_flags(c, &r, 16, 0))
		return;
	if (scratch_init(c, &s))
		goto out;
	strcpy(p1, "dir");
	strcpy(p2, "dir/file");
	sqe = tring_get_sqe(&r);
	*sqe = tsqe(IORING_OP_MKDIRAT, s.dfd, P(p1), 0755, 0, 1);
	sqe->flags = IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	*sqe = tsqe(IORING_OP_OPENAT, s.dfd, P(p2), 0644, 0, 2);
	sqe->open_flags = O_CREAT | O_WRONLY | O_CLOEXEC;
	sqe->flags = IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	*sqe = tsqe(IORING_OP_SYMLINKAT, s.dfd, P("file"), 0, P("dir/sl"), 3);
	sqe->flags = IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	*sqe = tsqe(IORING_OP_RENAMEAT, s.dfd, P("dir/sl"), (uint32_t)s.dfd,
		    P("dir/sl2"), 4);
	sqe->flags = IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	*sqe = tsqe(IORING_OP_STATX, s.dfd, P("dir/sl2"), STATX_TYPE, P(&sx),
		    5);
	sqe->flags = IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	*sqe = tsqe(IORING_OP_UNLINKAT, s.dfd, P("dir/sl"), 0, 0, 6);
	sqe->flags = IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	*sqe = tsqe(IORING_OP_UNLINKAT, s.dfd, P("dir/sl2"), 0, 0, 7);
	drec_int(c, tring_submit(&r), "submit chain");
	/* on an SQPOLL ring, submission is when the SQ thread takes the
	 * SQEs */
	tring_sqpoll_await_sq_taken(&r, 5000);
	/* the paths were imported at submission */
	strcpy(p1, "XXX");
	strcpy(p2, "XXX/YYY");
	{
		struct tcqe cqe[7];
		unsigned int n = tring_reap_wait(&r, cqe, 7, 2000000000LL);

		if (n > 1 && cqe[1].user_data == 2 && cqe[1].res >= 0) {
			close(cqe[1].res);
			cqe[1].res = FD_OTHER;
		}
		drec_cqes(c, cqe, n, true, "chain");
	}
	drec_int(c, S_ISREG(sx.stx_mode), "statx followed the link");
	drec_int(c, faccessat(s.dfd, "dir/file", F_OK, 0), "dir/file");
	drec_int(c, faccessat(s.dfd, "XXX", F_OK, 0), "no XXX");
	scratch_fini(&s);
out:
	tring_exit(&r);
}

/* ---- FALLOCATE, FTRUNCATE, SYNC_FILE_RANGE, FADVISE ---- */

static void sc_fallocate(struct dctx *c)
{
	struct scratch s;
	struct io_uring_sqe t;
	struct tring r;
	struct stat st;
	int fd, ro, p[2];

	if (dring_flags(c, &r, 16, 0))
		return;
	if (scratch_init(c, &s))
		goto out;
	mkfile(&s, "f", "");
	fd = openat(s.dfd, "f", O_RDWR);
	ro = openat(s.dfd, "f", O_RDONLY);
	if (pipe(p))
		abort();
	/* FALLOCATE: len in addr, mode in len */
	t = tsqe(IORING_OP_FALLOCATE, fd, 8192, 0, 0, 1);
	run1(c, &r, &t, false, "fallocate 8192");
	fstat(fd, &st);
	drec_int(c, st.st_size, "size");
	t = tsqe(IORING_OP_FALLOCATE, fd, 4096, FALLOC_FL_KEEP_SIZE, 16384, 2);
	run1(c, &r, &t, false, "fallocate KEEP_SIZE");
	fstat(fd, &st);
	drec_int(c, st.st_size, "size kept");
	t = tsqe(IORING_OP_FALLOCATE, fd, 4096,
		 FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 3);
	run1(c, &r, &t, false, "punch hole");
	t = tsqe(IORING_OP_FALLOCATE, fd, 4096, FALLOC_FL_PUNCH_HOLE, 0, 4);
	run1(c, &r, &t, false, "punch hole without KEEP_SIZE");
	t = tsqe(IORING_OP_FALLOCATE, fd, 0, 0, 0, 5);
	run1(c, &r, &t, false, "len 0");
	t = tsqe(IORING_OP_FALLOCATE, fd, 100, 0, (uint64_t)-1, 6);
	run1(c, &r, &t, false, "offset -1");
	t = tsqe(IORING_OP_FALLOCATE, ro, 100, 0, 0, 7);
	run1(c, &r, &t, false, "read-only fd");
	t = tsqe(IORING_OP_FALLOCATE, p[1], 100, 0, 0, 8);
	run1(c, &r, &t, false, "pipe");
	t = tsqe(IORING_OP_FALLOCATE, 9999, 100, 0, 0, 9);
	run1(c, &r, &t, false, "bad fd");
	t = tsqe(IORING_OP_FALLOCATE, fd, 100, 0x10000, 0, 10);
	run1(c, &r, &t, false, "unknown mode");
	t = tsqe(IORING_OP_FALLOCATE, fd, 100, 0, 0, 0);
	run_unused(c, &r, &t, 11, "",
		   UFIELDS(U_FIXED_FILE, U_BUF_INDEX, U_RW_FLAGS,
			   U_SPLICE_FD_IN, U_ADDR3));
	t = tsqe(IORING_OP_FALLOCATE, 9999, 100, 0, 0, 16);
	t.rw_flags = 1;
	run1(c, &r, &t, false, "bad fd + rw_flags");
	t = tsqe(IORING_OP_FALLOCATE, fd, 20000, 0, 0, 17);
	t.flags = IOSQE_ASYNC;
	run1(c, &r, &t, false, "ASYNC");

	/* FTRUNCATE: length in off */
	t = tsqe(IORING_OP_FTRUNCATE, fd, 0, 0, 100, 20);
	run1(c, &r, &t, false, "ftruncate 100");
	fstat(fd, &st);
	drec_int(c, st.st_size, "size after ftruncate");
	t = tsqe(IORING_OP_FTRUNCATE, fd, 0, 0, 1 << 20, 21);
	t.flags = IOSQE_ASYNC;
	run1(c, &r, &t, false, "ftruncate grow ASYNC");
	fstat(fd, &st);
	drec_int(c, st.st_size, "size after grow");
	t = tsqe(IORING_OP_FTRUNCATE, fd, 0, 0, (uint64_t)-1, 22);
	run1(c, &r, &t, false, "ftruncate -1");
	t = tsqe(IORING_OP_FTRUNCATE, ro, 0, 0, 0, 23);
	run1(c, &r, &t, false, "ftruncate read-only fd");
	t = tsqe(IORING_OP_FTRUNCATE, p[1], 0, 0, 0, 24);
	run1(c, &r, &t, false, "ftruncate pipe");
	t = tsqe(IORING_OP_FTRUNCATE, 9999, 0, 0, 0, 25);
	run1(c, &r, &t, false, "ftruncate bad fd");
	t = tsqe(IORING_OP_FTRUNCATE, s.dfd, 0, 0, 0, 26);
	run1(c, &r, &t, false, "ftruncate directory");
	t = tsqe(IORING_OP_FTRUNCATE, fd, 0, 0, 0, 0);
	run_unused(c, &r, &t, 27, "ftruncate",
		   UFIELDS(U_FIXED_FILE, U_ADDR, U_LEN, U_RW_FLAGS, U_BUF_INDEX,
			   U_SPLICE_FD_IN, U_ADDR3));
	fstat(fd, &st);
	drec_int(c, st.st_size, "size unchanged");

	/* SYNC_FILE_RANGE */
	t = tsqe(IORING_OP_SYNC_FILE_RANGE, fd, 0, 0, 0, 40);
	t.sync_range_flags = SYNC_FILE_RANGE_WRITE;
	run1(c, &r, &t, false, "sfr WRITE");
	t = tsqe(IORING_OP_SYNC_FILE_RANGE, fd, 0, 4096, 4096, 41);
	t.sync_range_flags = SYNC_FILE_RANGE_WAIT_BEFORE |
			     SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
	run1(c, &r, &t, false, "sfr all flags");
	t = tsqe(IORING_OP_SYNC_FILE_RANGE, fd, 0, 0, 0, 42);
	t.sync_range_flags = 0x80;
	run1(c, &r, &t, false, "sfr bad flags");
	t = tsqe(IORING_OP_SYNC_FILE_RANGE, fd, 0, 0, (uint64_t)-5, 43);
	run1(c, &r, &t, false, "sfr negative offset");
	t = tsqe(IORING_OP_SYNC_FILE_RANGE, p[1], 0, 0, 0, 44);
	run1(c, &r, &t, false, "sfr pipe");
	t = tsqe(IORING_OP_SYNC_FILE_RANGE, 9999, 0, 0, 0, 45);
	run1(c, &r, &t, false, "sfr bad fd");
	t = tsqe(IORING_OP_SYNC_FILE_RANGE, fd, 0, 0, 0, 0);
	run_unused(c, &r, &t, 46, "sfr",
		   UFIELDS(U_FIXED_FILE, U_ADDR, U_BUF_INDEX, U_SPLICE_FD_IN));

	/* FADVISE: len is 32 bits */
	t = tsqe(IORING_OP_FADVISE, fd, 0, 4096, 0, 60);
	t.fadvise_advice = POSIX_FADV_SEQUENTIAL;
	run1(c, &r, &t, false, "fadvise SEQUENTIAL");
	t = tsqe(IORING_OP_FADVISE, fd, 0, 0, 0, 61);
	t.fadvise_advice = POSIX_FADV_WILLNEED;
	run1(c, &r, &t, false, "fadvise WILLNEED");
	t = tsqe(IORING_OP_FADVISE, fd, 0, 8192, 4096, 62);
	t.fadvise_advice = POSIX_FADV_DONTNEED;
	run1(c, &r, &t, false, "fadvise DONTNEED");
	t = tsqe(IORING_OP_FADVISE, fd, 0, 0, 0, 63);
	t.fadvise_advice = POSIX_FADV_NOREUSE;
	t.flags = IOSQE_ASYNC;
	run1(c, &r, &t, false, "fadvise NOREUSE ASYNC");
	t = tsqe(IORING_OP_FADVISE, fd, 0, 0, 0, 64);
	t.fadvise_advice = 99;
	run1(c, &r, &t, false, "fadvise bad advice");
	t = tsqe(IORING_OP_FADVISE, fd, 0, 0, (uint64_t)-4096, 65);
	t.fadvise_advice = POSIX_FADV_NORMAL;
	run1(c, &r, &t, false, "fadvise negative offset");
	t = tsqe(IORING_OP_FADVISE, p[0], 0, 0, 0, 66);
	run1(c, &r, &t, false, "fadvise pipe");
	t = tsqe(IORING_OP_FADVISE, 9999, 0, 0, 0, 67);
	run1(c, &r, &t, false, "fadvise bad fd");
	t = tsqe(IORING_OP_FADVISE, fd, 0, 0, 0, 0);
	run_unused(c, &r, &t, 68, "fadvise",
		   UFIELDS(U_FIXED_FILE, U_ADDR, U_BUF_INDEX, U_SPLICE_FD_IN));
	close(fd);
	close(ro);
	tclose2(p);
	scratch_fini(&s);
out:
	tring_exit(&r);
}

/* ---- MADVISE ---- */

static void sc_madvise(struct dctx *c)
{
	struct io_uring_sqe t;
	struct tring r;
	long pg = sysconf(_SC_PAGESIZE);
	char *m;

	if (dring_flags(c, &r, 16, 0))
		return;
	m = mmap(NULL, (size_t)pg * 4, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(m, 'm', (size_t)pg * 4);
	t = tsqe(IORING_OP_MADVISE, 0, P(m), (uint32_t)pg * 2, 0, 1);
	t.fadvise_advice = MADV_DONTNEED;
	run1(c, &r, &t, false, "madvise DONTNEED");
	drec_int(c, m[0] == 0 && m[pg] == 0 && m[2 * pg] == 'm',
		 "pages dropped");
	t = tsqe(IORING_OP_MADVISE, 0, P(m), (uint32_t)pg * 4, 0, 2);
	t.fadvise_advice = MADV_WILLNEED;
	t.flags = IOSQE_ASYNC;
	run1(c, &r, &t, false, "madvise WILLNEED ASYNC");
	t = tsqe(IORING_OP_MADVISE, 0, P(m), (uint32_t)pg, 0, 3);
	t.fadvise_advice = 12345;
	run1(c, &r, &t, false, "madvise bad advice");
	t = tsqe(IORING_OP_MADVISE, 0, P(m + 1), (uint32_t)pg, 0, 4);
	t.fadvise_advice = MADV_NORMAL;
	run1(c, &r, &t, false, "madvise unaligned");
	t = tsqe(IORING_OP_MADVISE, 0, P(dunmapped_addr()), (uint32_t)pg, 0, 5);
	t.fadvise_advice = MADV_NORMAL;
	run1(c, &r, &t, false, "madvise unmapped");
	t = tsqe(IORING_OP_MADVISE, 0, P(m), 0, 0, 6);
	t.fadvise_advice = MADV_NORMAL;
	run1(c, &r, &t, false, "madvise len 0");
	t = tsqe(IORING_OP_MADVISE, 0, P(m), (uint32_t)pg, 0, 7);
	t.flags = IOSQE_FIXED_FILE;
	run1(c, &r, &t, false, "madvise FIXED_FILE (no file)");
	t = tsqe(IORING_OP_MADVISE, 77, P(m), (uint32_t)pg, 0, 8);
	run1(c, &r, &t, false, "madvise fd set");
	t = tsqe(IORING_OP_MADVISE, 0, P(m), (uint32_t)pg, 0, 0);
	run_unused(c, &r, &t, 9, "madvise",
		   UFIELDS(U_OFF, U_BUF_INDEX, U_SPLICE_FD_IN));
	munmap(m, (size_t)pg * 4);
	tring_exit(&r);
}

/*
 * Which errors fail a link chain.  The kernel's statx, path, sync,
 * truncate and madvise opcodes (and the xattr ones) set their result
 * without failing the request, so the chain goes on and CQE_SKIP_SUCCESS
 * still skips the CQE; OPENAT, CLOSE, PIPE, FADVISE fail it.  A bad fd
 * (resolved before issue) and prep errors fail it for every opcode.
 */
static void sc_link_fail(struct dctx *c)
{
	struct scratch s;
	struct tring r;
	struct statx sx;
	int fd, ro, opath, p[2];
	unsigned int i, n, nsqe = 0, fails = 0;
	struct io_uring_sqe cases[32];
	const char *names[32];

	/* SUBMIT_ALL: the prep failures do not stop the batches */
	if (dring_flags(c, &r, 64, IORING_SETUP_SUBMIT_ALL))
		return;
	if (scratch_init(c, &s))
		goto out;
	mkfile(&s, "f", "data");
	fd = openat(s.dfd, "f", O_RDWR);
	ro = openat(s.dfd, "f", O_RDONLY);
	opath = openat(s.dfd, "f", O_PATH);
	if (pipe(p))
		abort();
#define CASE(nm, ...) \
	do { cases[nsqe] = tsqe(__VA_ARGS__); names[nsqe++] = nm; } while (0)
	CASE("statx missing", IORING_OP_STATX, s.dfd, P("nope"), 0x7ff, P(&sx), 1);
	CASE("mkdir existing", IORING_OP_MKDIRAT, s.dfd, P("f"), 0755, 0, 2);
	CASE("unlink missing", IORING_OP_UNLINKAT, s.dfd, P("nope"), 0, 0, 3);
	CASE("rename missing", IORING_OP_RENAMEAT, s.dfd, P("nope"),
	     (uint32_t)s.dfd, P("x"), 4);
	CASE("symlink existing", IORING_OP_SYMLINKAT, s.dfd, P("t"), 0, P("f"), 5);
	CASE("link existing", IORING_OP_LINKAT, s.dfd, P("f"), (uint32_t)s.dfd,
	     P("f"), 6);
	CASE("fallocate read-only fd", IORING_OP_FALLOCATE, ro, 10, 0, 0, 7);
	CASE("fallocate closed fd", IORING_OP_FALLOCATE, 9999, 10, 0, 0, 8);
	CASE("fallocate O_PATH fd", IORING_OP_FALLOCATE, opath, 10, 0, 0, 9);
	CASE("ftruncate -1", IORING_OP_FTRUNCATE, fd, 0, 0, (uint64_t)-1, 10);
	CASE("ftruncate pipe", IORING_OP_FTRUNCATE, p[1], 0, 0, 0, 11);
	CASE("sfr pipe", IORING_OP_SYNC_FILE_RANGE, p[1], 0, 0, 0, 12);
	CASE("sfr O_PATH fd", IORING_OP_SYNC_FILE_RANGE, opath, 0, 0, 0, 13);
	CASE("madvise unaligned", IORING_OP_MADVISE, 0, P(&sx) | 1, 4096, 0, 14);
	CASE("fadvise pipe", IORING_OP_FADVISE, p[0], 0, 0, 0, 15);
	CASE("openat missing", IORING_OP_OPENAT, s.dfd, P("nope"), 0, 0, 16);
	CASE("close closed fd", IORING_OP_CLOSE, 9999, 0, 0, 0, 17);
	CASE("pipe bad address", IORING_OP_PIPE, 0, 8, 0, 0, 18);
	CASE("unlink bad flags (prep)", IORING_OP_UNLINKAT, s.dfd, P("f"), 0, 0, 19);
	cases[nsqe - 1].unlink_flags = 0x4;
	CASE("statx FIXED_FILE (prep)", IORING_OP_STATX, s.dfd, P("f"), 0x7ff,
	     P(&sx), 20);
	cases[nsqe - 1].flags = IOSQE_FIXED_FILE;
	CASE("ftruncate FIXED_FILE", IORING_OP_FTRUNCATE, fd, 0, 0, 0, 21);
	cases[nsqe - 1].flags = IOSQE_FIXED_FILE;
	CASE("statx ok", IORING_OP_STATX, s.dfd, P("f"), 0x7ff, P(&sx), 22);
#undef CASE
	/* each as the head of a two-request chain */
	for (i = 0; i < nsqe; i++) {
		struct io_uring_sqe *sqe = tring_get_sqe(&r);
		struct tcqe cqe[2];

		*sqe = cases[i];
		sqe->flags |= IOSQE_IO_LINK;
		tring_prep_nop(tring_get_sqe(&r), 100 + i);
		drec_int(c, tring_submit(&r), "%s: submit", names[i]);
		n = tring_reap_wait(&r, cqe, 2, 2000000000LL);
		drec_cqes(c, cqe, n, true, "%s, then NOP", names[i]);
		/* a failure (not a no-fail error) cancels the NOP: only
		 * those post under CQE_SKIP_SUCCESS below */
		fails += n == 2 && cqe[1].res == -ECANCELED;
	}
	/* each with CQE_SKIP_SUCCESS, all in one batch, then a NOP */
	for (i = 0; i < nsqe; i++) {
		struct io_uring_sqe *sqe = tring_get_sqe(&r);

		*sqe = cases[i];
		sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
	}
	tring_prep_nop(tring_get_sqe(&r), 999);
	drec_int(c, tring_submit(&r), "skip batch: submit");
	{
		struct tcqe cqe[40];

		/*
		 * The failures (those that broke a chain above) and the NOP
		 * post: wait for those (2 s per CQE), then 50 ms for any
		 * other, which only a wrong engine posts.  (It was one reap
		 * of nsqe + 1 with 300 ms per CQE, which a gap of 300 ms
		 * between two CQEs on a loaded machine cut short.)
		 */
		n = tring_reap_wait(&r, cqe, fails + 1, 2000000000LL);
		n += tring_reap_wait(&r, cqe + n, nsqe + 1 - n, 50000000LL);
		drec_cqes(c, cqe, n, false, "skip batch");
	}
	/* a CQE_SKIP_SUCCESS chain: a no-fail error in the middle */
	{
		struct io_uring_sqe *sqe;
		struct tcqe cqe[4];

		sqe = tring_get_sqe(&r);
		*sqe = tsqe(IORING_OP_MKDIRAT, s.dfd, P("f"), 0755, 0, 200);
		sqe->flags = IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS;
		sqe = tring_get_sqe(&r);
		*sqe = tsqe(IORING_OP_OPENAT, s.dfd, P("nope"), 0, 0, 201);
		sqe->flags = IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS;
		sqe = tring_get_sqe(&r);
		*sqe = tsqe(IORING_OP_STATX, s.dfd, P("f"), 0x7ff, P(&sx), 202);
		sqe->flags = IOSQE_CQE_SKIP_SUCCESS;
		tring_prep_nop(tring_get_sqe(&r), 203);
		drec_int(c, tring_submit(&r), "skip chain: submit");
		/* the NOP and the OPENAT's failure, then any other */
		n = tring_reap_wait(&r, cqe, 2, 2000000000LL);
		n += tring_reap_wait(&r, cqe + n, 4 - n, 50000000LL);
		drec_cqes(c, cqe, n, false, "skip chain");
	}
	close(fd);
	close(ro);
	close(opath);
	tclose2(p);
	scratch_fini(&s);
out:
	tring_exit(&r);
}

/* ---- FGETXATTR, GETXATTR, FSETXATTR, SETXATTR ---- */

static void sc_xattr(struct dctx *c)
{
	struct scratch s;
	struct io_uring_sqe t;
	struct tring r;
	char val[128], fpath[128], *big, name300[300];
	int fd, opath, ret;

	if (dring_flags(c, &r, 16, 0))
		return;
	if (scratch_init(c, &s))
		goto out;
	mkfile(&s, "f", "x");
	snprintf(fpath, sizeof(fpath), "%s/f", s.path);
	fd = openat(s.dfd, "f", O_RDWR);
	opath = openat(s.dfd, "f", O_PATH);
	/* FSETXATTR: name addr, value addr2, size len, path addr3 */
	t = tsqe(IORING_OP_FSETXATTR, fd, P("user.a"), 5, P("hello"), 1);
	ret = run1(c, &r, &t, false, "fsetxattr user.a");
	if (ret == -EOPNOTSUPP) {
		dnote(c, "no user xattrs on /tmp");
		goto done;
	}
	memset(val, 0, sizeof(val));
	drec_int(c, fgetxattr(fd, "user.a", val, sizeof(val)), "fgetxattr");
	drec_int(c, strcmp(val, "hello"), "value");
	t = tsqe(IORING_OP_FSETXATTR, fd, P("user.a"), 3, P("new"), 2);
	t.xattr_flags = XATTR_CREATE;
	run1(c, &r, &t, false, "fsetxattr CREATE existing");
	t = tsqe(IORING_OP_FSETXATTR, fd, P("user.b"), 3, P("new"), 3);
	t.xattr_flags = XATTR_REPLACE;
	run1(c, &r, &t, false, "fsetxattr REPLACE missing");
	t = tsqe(IORING_OP_FSETXATTR, fd, P("user.e"), 0, 0, 4);
	t.flags = IOSQE_ASYNC;
	run1(c, &r, &t, false, "fsetxattr empty value ASYNC");
	t = tsqe(IORING_OP_FSETXATTR, fd, P("bogus.a"), 1, P("v"), 5);
	run1(c, &r, &t, false, "fsetxattr bad namespace");
	t = tsqe(IORING_OP_FSETXATTR, opath, P("user.a"), 1, P("v"), 6);
	run1(c, &r, &t, false, "fsetxattr O_PATH fd");
	t = tsqe(IORING_OP_FSETXATTR, 9999, P("user.a"), 1, P("v"), 7);
	run1(c, &r, &t, false, "fsetxattr bad fd");
	/* prep */
	t = tsqe(IORING_OP_FSETXATTR, fd, P("user.a"), 1, P("v"), 8);
	t.xattr_flags = 4;
	run1(c, &r, &t, false, "fsetxattr bad flags");
	t = tsqe(IORING_OP_FSETXATTR, fd, P(""), 1, P("v"), 9);
	run1(c, &r, &t, false, "fsetxattr empty name");
	memset(name300, 'n', sizeof(name300));
	memcpy(name300, "user.", 5);
	name300[299] = 0;
	t = tsqe(IORING_OP_FSETXATTR, fd, P(name300), 1, P("v"), 10);
	run1(c, &r, &t, false, "fsetxattr 299-byte name");
	name300[255] = 0;
	t = tsqe(IORING_OP_FSETXATTR, fd, P(name300), 1, P("v"), 11);
	run1(c, &r, &t, false, "fsetxattr 255-byte name");
	name300[255] = 'n';
	name300[256] = 0;
	t = tsqe(IORING_OP_FSETXATTR, fd, P(name300), 1, P("v"), 12);
	run1(c, &r, &t, false, "fsetxattr 256-byte name");
	t = tsqe(IORING_OP_FSETXATTR, fd, 0, 1, P("v"), 13);
	run1(c, &r, &t, false, "fsetxattr NULL name");
	t = tsqe(IORING_OP_FSETXATTR, fd, P("user.a"), 65537, P("v"), 14);
	run1(c, &r, &t, false, "fsetxattr size 65537");
	t = tsqe(IORING_OP_FSETXATTR, fd, P("user.a"), 16, 0, 15);
	run1(c, &r, &t, false, "fsetxattr NULL value");
	t = tsqe(IORING_OP_FSETXATTR, fd, P("user.a"), 16, 0, 16);
	t.xattr_flags = 8;
	run1(c, &r, &t, false, "fsetxattr bad flags + NULL value");
	t = tsqe(IORING_OP_FSETXATTR, fd, 0, 65537, 0, 17);
	run1(c, &r, &t, false, "fsetxattr NULL name + size 65537");
	t = tsqe(IORING_OP_FSETXATTR, fd, P("user.a"), 1, P("v"), 18);
	t.flags = IOSQE_FIXED_FILE;
	run1(c, &r, &t, false, "fsetxattr FIXED_FILE");
	big = calloc(1, 65536);
	t = tsqe(IORING_OP_FSETXATTR, fd, P("user.big"), 65536, P(big), 19);
	run1(c, &r, &t, false, "fsetxattr 64 KiB value");
	free(big);

	/* SETXATTR: path in addr3 */
	t = tsqe(IORING_OP_SETXATTR, 0, P("user.p"), 2, P("pv"), 20);
	t.addr3 = P(fpath);
	run1(c, &r, &t, false, "setxattr user.p");
	t = tsqe(IORING_OP_SETXATTR, 0, P("user.p"), 2, P("pv"), 21);
	t.addr3 = P("relative-missing");
	run1(c, &r, &t, false, "setxattr missing path");
	t = tsqe(IORING_OP_SETXATTR, 0, P("user.p"), 2, P("pv"), 22);
	t.addr3 = P("");
	run1(c, &r, &t, false, "setxattr empty path");
	t = tsqe(IORING_OP_SETXATTR, 0, P("user.p"), 2, P("pv"), 23);
	run1(c, &r, &t, false, "setxattr NULL path");
	t = tsqe(IORING_OP_SETXATTR, 0, P("user.p"), 2, 0, 24);
	run1(c, &r, &t, false, "setxattr NULL value + NULL path");
	t = tsqe(IORING_OP_SETXATTR, 0, P("user.p"), 2, P("pv"), 25);
	t.addr3 = P(fpath);
	t.flags = IOSQE_FIXED_FILE;
	run1(c, &r, &t, false, "setxattr FIXED_FILE");
	t = tsqe(IORING_OP_SETXATTR, 77, P("user.q"), 2, P("qv"), 26);
	t.addr3 = P(fpath);
	t.buf_index = 3;
	run1(c, &r, &t, false, "setxattr fd and buf_index set");

	/* FGETXATTR: value buffer addr2, size len */
	memset(val, 0, sizeof(val));
	t = tsqe(IORING_OP_FGETXATTR, fd, P("user.a"), sizeof(val), P(val), 30);
	run1(c, &r, &t, false, "fgetxattr user.a");
	drec_int(c, strcmp(val, "hello"), "value");
	t = tsqe(IORING_OP_FGETXATTR, fd, P("user.a"), 0, 0, 31);
	run1(c, &r, &t, false, "fgetxattr size query");
	t = tsqe(IORING_OP_FGETXATTR, fd, P("user.a"), 2, P(val), 32);
	run1(c, &r, &t, false, "fgetxattr too small");
	t = tsqe(IORING_OP_FGETXATTR, fd, P("user.zz"), sizeof(val), P(val),
		 33);
	t.flags = IOSQE_ASYNC;
	run1(c, &r, &t, false, "fgetxattr missing ASYNC");
	t = tsqe(IORING_OP_FGETXATTR, fd, P("user.a"), sizeof(val), 0, 34);
	run1(c, &r, &t, false, "fgetxattr NULL buffer");
	t = tsqe(IORING_OP_FGETXATTR, fd, P("user.a"), 100000, P(val), 35);
	run1(c, &r, &t, false, "fgetxattr size 100000");
	t = tsqe(IORING_OP_FGETXATTR, opath, P("user.a"), sizeof(val), P(val),
		 36);
	run1(c, &r, &t, false, "fgetxattr O_PATH fd");
	t = tsqe(IORING_OP_FGETXATTR, 9999, P("user.a"), sizeof(val), P(val),
		 37);
	run1(c, &r, &t, false, "fgetxattr bad fd");
	t = tsqe(IORING_OP_FGETXATTR, fd, P("user.a"), sizeof(val), P(val), 38);
	t.xattr_flags = 1;
	run1(c, &r, &t, false, "fgetxattr flags");
	t = tsqe(IORING_OP_FGETXATTR, fd, P(""), sizeof(val), P(val), 39);
	run1(c, &r, &t, false, "fgetxattr empty name");
	t = tsqe(IORING_OP_FGETXATTR, fd, P(dunmapped_addr()), sizeof(val),
		 P(val), 40);
	run1(c, &r, &t, false, "fgetxattr unmapped name");
	t = tsqe(IORING_OP_FGETXATTR, fd, P(name300), sizeof(val), P(val), 41);
	run1(c, &r, &t, false, "fgetxattr 256-byte name");
	t = tsqe(IORING_OP_FGETXATTR, fd, P("user.a"), sizeof(val), P(val), 42);
	t.flags = IOSQE_FIXED_FILE;
	t.xattr_flags = 1;
	run1(c, &r, &t, false, "fgetxattr FIXED_FILE + flags");

	/* GETXATTR */
	memset(val, 0, sizeof(val));
	t = tsqe(IORING_OP_GETXATTR, 0, P("user.p"), sizeof(val), P(val), 50);
	t.addr3 = P(fpath);
	run1(c, &r, &t, false, "getxattr user.p");
	drec_int(c, strcmp(val, "pv"), "value p");
	t = tsqe(IORING_OP_GETXATTR, 0, P("user.p"), sizeof(val), P(val), 51);
	t.addr3 = P("");
	run1(c, &r, &t, false, "getxattr empty path");
	t = tsqe(IORING_OP_GETXATTR, 0, P("user.p"), sizeof(val), P(val), 52);
	run1(c, &r, &t, false, "getxattr NULL path");
	t = tsqe(IORING_OP_GETXATTR, 0, P(""), sizeof(val), P(val), 53);
	run1(c, &r, &t, false, "getxattr empty name, NULL path");
	t = tsqe(IORING_OP_GETXATTR, 0, P("user.p"), sizeof(val), P(val), 54);
	t.addr3 = P("/nonexistent/x");
	run1(c, &r, &t, false, "getxattr missing path");
	t = tsqe(IORING_OP_GETXATTR, 0, P("user.p"), sizeof(val),
		 P(dprot_none_page()), 55);
	t.addr3 = P(fpath);
	run1(c, &r, &t, false, "getxattr PROT_NONE buffer");
	/* a chain: the errors do not break it */
	{
		struct io_uring_sqe *sqe = tring_get_sqe(&r);

		*sqe = tsqe(IORING_OP_FGETXATTR, fd, P("user.nope"),
			    sizeof(val),
			    P(val), 60);
		sqe->flags = IOSQE_IO_LINK;
		sqe = tring_get_sqe(&r);
		*sqe = tsqe(IORING_OP_GETXATTR, 0, P("user.p"), 1, P(val), 61);
		sqe->addr3 = P(fpath);
		sqe->flags = IOSQE_IO_LINK;
		tring_prep_nop(tring_get_sqe(&r), 62);
		drec_int(c, tring_submit(&r), "xattr chain: submit");
		dreap(c, &r, 3, true, "xattr chain");
	}
done:
	close(fd);
	close(opath);
	scratch_fini(&s);
out:
	tring_exit(&r);
}

/* ---- SPLICE, TEE ---- */

static long pipe_bytes(int fd)
{
	int n = 0;

	return ioctl_fionread(fd, &n) ? -1 : n;
}

static void sc_splice(struct dctx *c)
{
	struct scratch s;
	struct io_uring_sqe t;
	struct tring r;
	int fd, ro, wo, p1[2], p2[2];
	char buf[64];

	if (dring_flags(c, &r, 16, 0))
		return;
	if (scratch_init(c, &s))
		goto out;
	mkfile(&s, "f", "0123456789abcdefghij");
	fd = openat(s.dfd, "f", O_RDWR);
	ro = openat(s.dfd, "f", O_RDONLY);
	wo = openat(s.dfd, "f", O_WRONLY);
	if (pipe(p1) || pipe(p2))
		abort();
	/* SPLICE: in = splice_fd_in at splice_off_in, out = fd at off */
	t = tsqe(IORING_OP_SPLICE, p1[1], 0, 5, (uint64_t)-1, 1);
	t.splice_fd_in = fd;
	t.splice_off_in = 3;
	run1(c, &r, &t, false, "file@3 -> pipe");
	drec_int(c, pipe_bytes(p1[0]), "pipe holds");
	drec_int(c, lseek(fd, 0, SEEK_CUR), "file position");
	t = tsqe(IORING_OP_SPLICE, p1[1], 0, 4, (uint64_t)-1, 2);
	t.splice_fd_in = fd;
	t.splice_off_in = (uint64_t)-1;
	run1(c, &r, &t, false, "file@pos -> pipe");
	drec_int(c, lseek(fd, 0, SEEK_CUR), "file position advanced");
	t = tsqe(IORING_OP_SPLICE, fd, 0, 9, 30, 3);
	t.splice_fd_in = p1[0];
	t.splice_off_in = (uint64_t)-1;
	run1(c, &r, &t, false, "pipe -> file@30");
	memset(buf, 0, sizeof(buf));
	drec_int(c, pread(fd, buf, sizeof(buf), 0), "file size");
	drec_int(c, memcmp(buf + 30, "345670123", 9), "spliced data");
	/* pipe -> pipe, short, then TEE */
	if (write(p1[1], "abcdef", 6) != 6)
		abort();
	t = tsqe(IORING_OP_SPLICE, p2[1], 0, 100, (uint64_t)-1, 4);
	t.splice_fd_in = p1[0];
	t.splice_off_in = (uint64_t)-1;
	run1(c, &r, &t, false, "pipe -> pipe, short");
	if (write(p1[1], "XYZ", 3) != 3)
		abort();
	t = tsqe(IORING_OP_TEE, p2[1], 0, 3, 0, 5);
	t.splice_fd_in = p1[0];
	run1(c, &r, &t, false, "tee 3");
	drec_int(c, pipe_bytes(p1[0]), "tee source keeps");
	drec_int(c, pipe_bytes(p2[0]), "tee dest holds");
	t = tsqe(IORING_OP_TEE, p2[1], 0, 100, 0, 6);
	t.splice_fd_in = p1[0];
	t.flags = IOSQE_ASYNC;
	run1(c, &r, &t, false, "tee short ASYNC");
	if (read(p1[0], buf, sizeof(buf)) < 0 || read(p2[0], buf, sizeof(buf)) < 0)
		abort();
	/* len 0 */
	t = tsqe(IORING_OP_SPLICE, p2[1], 0, 0, (uint64_t)-1, 7);
	t.splice_fd_in = p1[0];
	t.splice_off_in = (uint64_t)-1;
	run1(c, &r, &t, false, "splice len 0");
	t = tsqe(IORING_OP_SPLICE, p2[1], 0, 0, (uint64_t)-1, 8);
	t.splice_fd_in = 9999;
	run1(c, &r, &t, false, "splice len 0, bad in");
	t = tsqe(IORING_OP_SPLICE, 9999, 0, 0, (uint64_t)-1, 9);
	t.splice_fd_in = p1[0];
	run1(c, &r, &t, false, "splice len 0, bad out");
	t = tsqe(IORING_OP_SPLICE, p2[1], 0, 0, (uint64_t)-1, 10);
	t.splice_fd_in = p1[1];
	run1(c, &r, &t, false, "splice len 0, in not readable");
	t = tsqe(IORING_OP_TEE, p2[1], 0, 0, 0, 11);
	t.splice_fd_in = fd;
	run1(c, &r, &t, false, "tee len 0, in a file");
	/* errors */
	t = tsqe(IORING_OP_SPLICE, p2[1], 0, 5, (uint64_t)-1, 12);
	t.splice_fd_in = p1[0];
	t.splice_off_in = 0;
	run1(c, &r, &t, false, "offset on a pipe");
	t = tsqe(IORING_OP_SPLICE, p2[1], 0, 5, (uint64_t)-1, 13);
	t.splice_fd_in = p1[1];
	t.splice_off_in = (uint64_t)-1;
	run1(c, &r, &t, false, "in not readable");
	t = tsqe(IORING_OP_SPLICE, wo, 0, 5, 0, 14);
	t.splice_fd_in = ro;
	t.splice_off_in = 0;
	run1(c, &r, &t, false, "file -> file");
	t = tsqe(IORING_OP_SPLICE, p1[1], 0, 5, (uint64_t)-1, 15);
	t.splice_fd_in = fd;
	t.splice_off_in = (uint64_t)-2;
	run1(c, &r, &t, false, "offset -2");
	t = tsqe(IORING_OP_SPLICE, p1[1], 0, 5, (uint64_t)-1, 16);
	t.splice_fd_in = 9999;
	run1(c, &r, &t, false, "bad in");
	t = tsqe(IORING_OP_SPLICE, 9999, 0, 5, (uint64_t)-1, 17);
	t.splice_fd_in = fd;
	run1(c, &r, &t, false, "bad out");
	t = tsqe(IORING_OP_SPLICE, p1[1], 0, 5, (uint64_t)-1, 18);
	t.splice_fd_in = 0;
	t.splice_flags = SPLICE_F_FD_IN_FIXED;
	run1(c, &r, &t, false, "FD_IN_FIXED, no table");
	t = tsqe(IORING_OP_SPLICE, p1[1], 0, 5, (uint64_t)-1, 19);
	t.splice_fd_in = fd;
	t.flags = IOSQE_FIXED_FILE;
	run1(c, &r, &t, false, "FIXED_FILE");
	t = tsqe(IORING_OP_SPLICE, p1[1], 0, 5, (uint64_t)-1, 20);
	t.splice_fd_in = fd;
	t.splice_flags = 0x10;
	run1(c, &r, &t, false, "bad flags");
	t = tsqe(IORING_OP_SPLICE, p1[1], 0, 5, (uint64_t)-1, 21);
	t.splice_fd_in = fd;
	t.buf_index = 1;
	run1(c, &r, &t, false, "buf_index");
	t = tsqe(IORING_OP_TEE, p2[1], 0, 5, 1, 22);
	t.splice_fd_in = p1[0];
	run1(c, &r, &t, false, "tee off");
	t = tsqe(IORING_OP_TEE, p2[1], 0, 5, 0, 23);
	t.splice_fd_in = p1[0];
	t.splice_off_in = 1;
	run1(c, &r, &t, false, "tee splice_off_in");
	t = tsqe(IORING_OP_TEE, p2[1], 0, 5, 0, 24);
	t.splice_fd_in = fd;
	run1(c, &r, &t, false, "tee from a file");
	t = tsqe(IORING_OP_TEE, p2[1], 0, 5, 0, 25);
	t.splice_fd_in = p1[0];
	t.splice_flags = SPLICE_F_NONBLOCK;
	run1(c, &r, &t, false, "tee empty NONBLOCK");
	t = tsqe(IORING_OP_SPLICE, p2[1], 0, 5, (uint64_t)-1, 26);
	t.splice_fd_in = p1[0];
	t.splice_off_in = (uint64_t)-1;
	t.splice_flags = SPLICE_F_NONBLOCK;
	run1(c, &r, &t, false, "splice empty NONBLOCK");
	/* registered files: SPLICE_F_FD_IN_FIXED for the input, and
	 * IOSQE_FIXED_FILE for the output; an empty slot, a slot out of
	 * range, TEE, io-wq */
	{
		int tab[4] = { fd, p1[0], -1, p2[1] };

		drec_int(c, r.be->reg((unsigned int)r.fd,
				      IORING_REGISTER_FILES, tab, 4),
			 "register files");
		t = tsqe(IORING_OP_SPLICE, p1[1], 0, 4, (uint64_t)-1, 40);
		t.splice_fd_in = 0;
		t.splice_off_in = 2;
		t.splice_flags = SPLICE_F_FD_IN_FIXED;
		run1(c, &r, &t, false, "fixed file@2 -> pipe");
		t = tsqe(IORING_OP_SPLICE, 3, 0, 2, (uint64_t)-1, 41);
		t.splice_fd_in = 1;
		t.splice_off_in = (uint64_t)-1;
		t.splice_flags = SPLICE_F_FD_IN_FIXED;
		t.flags = IOSQE_FIXED_FILE;
		run1(c, &r, &t, false, "fixed pipe -> fixed pipe");
		t = tsqe(IORING_OP_TEE, 3, 0, 2, 0, 42);
		t.splice_fd_in = 1;
		t.splice_flags = SPLICE_F_FD_IN_FIXED;
		t.flags = IOSQE_FIXED_FILE;
		run1(c, &r, &t, false, "fixed tee");
		t = tsqe(IORING_OP_SPLICE, p2[1], 0, 2, (uint64_t)-1, 43);
		t.splice_fd_in = 1;
		t.splice_off_in = (uint64_t)-1;
		t.splice_flags = SPLICE_F_FD_IN_FIXED;
		t.flags = IOSQE_ASYNC;
		run1(c, &r, &t, false, "fixed in, ASYNC");
		drec_int(c, pipe_bytes(p1[0]), "pipe 1 holds");
		drec_int(c, pipe_bytes(p2[0]), "pipe 2 holds");
		t = tsqe(IORING_OP_SPLICE, p1[1], 0, 4, (uint64_t)-1, 44);
		t.splice_fd_in = 2;
		t.splice_flags = SPLICE_F_FD_IN_FIXED;
		run1(c, &r, &t, false, "FD_IN_FIXED, empty slot");
		t = tsqe(IORING_OP_SPLICE, p1[1], 0, 4, (uint64_t)-1, 45);
		t.splice_fd_in = 9;
		t.splice_flags = SPLICE_F_FD_IN_FIXED;
		run1(c, &r, &t, false, "FD_IN_FIXED, out of range");
		t = tsqe(IORING_OP_SPLICE, p1[1], 0, 0, (uint64_t)-1, 46);
		t.splice_fd_in = 2;
		t.splice_flags = SPLICE_F_FD_IN_FIXED;
		run1(c, &r, &t, false, "FD_IN_FIXED len 0, empty slot");
		t = tsqe(IORING_OP_SPLICE, p1[1], 0, 0, (uint64_t)-1, 47);
		t.splice_fd_in = 0;
		t.splice_flags = SPLICE_F_FD_IN_FIXED;
		run1(c, &r, &t, false, "FD_IN_FIXED len 0");
		t = tsqe(IORING_OP_SPLICE, 2, 0, 4, (uint64_t)-1, 48);
		t.splice_fd_in = 0;
		t.splice_flags = SPLICE_F_FD_IN_FIXED;
		t.flags = IOSQE_FIXED_FILE;
		run1(c, &r, &t, false, "FIXED_FILE output, empty slot");
		drec_int(c, r.be->reg((unsigned int)r.fd,
				      IORING_UNREGISTER_FILES, NULL, 0),
			 "unregister files");
		/* empty both pipes for what follows */
		if ((pipe_bytes(p1[0]) > 0 && read(p1[0], buf, sizeof(buf)) < 0) ||
		    (pipe_bytes(p2[0]) > 0 && read(p2[0], buf, sizeof(buf)) < 0))
			abort();
	}
	/* short splice fails the chain; a full one does not */
	{
		struct io_uring_sqe *sqe;

		if (write(p1[1], "12", 2) != 2)
			abort();
		sqe = tring_get_sqe(&r);
		*sqe = tsqe(IORING_OP_SPLICE, p2[1], 0, 1, (uint64_t)-1, 30);
		sqe->splice_fd_in = p1[0];
		sqe->splice_off_in = (uint64_t)-1;
		sqe->flags = IOSQE_IO_LINK;
		sqe = tring_get_sqe(&r);
		*sqe = tsqe(IORING_OP_SPLICE, p2[1], 0, 5, (uint64_t)-1, 31);
		sqe->splice_fd_in = p1[0];
		sqe->splice_off_in = (uint64_t)-1;
		sqe->flags = IOSQE_IO_LINK;
		tring_prep_nop(tring_get_sqe(&r), 32);
		drec_int(c, tring_submit(&r), "chain: submit");
		dreap(c, &r, 3, true, "full, short, canceled");
	}
	close(fd);
	close(ro);
	close(wo);
	tclose2(p1);
	tclose2(p2);
	scratch_fini(&s);
out:
	tring_exit(&r);
}

/*
 * SPLICE from a pipe with data into a blocking socket whose send buffer
 * is full: the call blocks on the socket side (SPLICE_F_NONBLOCK would
 * only make the pipe side non-blocking), so it must not run in the
 * submitting thread.  The kernel runs every SPLICE in io-wq: enter
 * returns at once, and the splice completes once this thread drains the
 * socket (a submitter blocked in splice(2) would never get there: the
 * scenario's watchdog ends it).
 */
static void sc_splice_blocking_socket(struct dctx *c)
{
	static char junk[65536];
	struct io_uring_sqe t;
	struct tring r;
	int sv[2], p[2], fl;
	long drained = 0, filled = 0, n;
	struct tcqe cqe;

	if (dring_flags(c, &r, 16, 0))
		return;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || pipe(p)) {
		drec_int(c, -errno, "socketpair/pipe");
		tring_exit(&r);
		return;
	}
	/* fill sv[0]'s send buffer, then make it blocking again */
	fl = fcntl(sv[0], F_GETFL);
	fcntl(sv[0], F_SETFL, fl | O_NONBLOCK);
	while ((n = write(sv[0], junk, sizeof(junk))) > 0)
		filled += n;
	fcntl(sv[0], F_SETFL, fl);
	drec_int(c, write(p[1], junk, 4096), "pipe filled");
	t = tsqe(IORING_OP_SPLICE, sv[0], 0, 4096, (uint64_t)-1, 1);
	t.splice_fd_in = p[0];
	t.splice_off_in = (uint64_t)-1;
	*tring_get_sqe(&r) = t;
	drec_int(c, tring_submit(&r), "submit splice into a full socket");
	drec_int(c, (int)tring_reap_wait(&r, &cqe, 1, 20 * 1000000LL),
		 "CQEs before the socket is drained");
	/* everything: what filled the buffer, then the spliced 4096 */
	while (drained < filled + 4096 &&
	       (n = read(sv[1], junk, sizeof(junk))) > 0)
		drained += n;
	drec_int(c, drained == filled + 4096, "socket drained");
	n = tring_reap_wait(&r, &cqe, 1, 10000 * 1000000LL);
	drec_cqes(c, &cqe, (unsigned int)n, true, "splice done");
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
	tring_exit(&r);
}

/*
 * splice(2) clears FMODE_NOWAIT on the pipes it is given (pipe_clear_nowait,
 * 6.5+), the kernel's io_splice does not: after uuring's SPLICE, a
 * RWF_NOWAIT read of that pipe fails with EOPNOTSUPP instead of EAGAIN.
 */
static void sc_splice_nowait(struct dctx *c)
{
	struct io_uring_sqe t;
	struct tring r;
	struct iovec iov;
	int p1[2], p2[2];
	char buf[8];
	ssize_t n;

	if (dring_flags(c, &r, 16, 0))
		return;
	if (pipe(p1) || pipe(p2) || write(p1[1], "ab", 2) != 2)
		abort();
	t = tsqe(IORING_OP_SPLICE, p2[1], 0, 2, (uint64_t)-1, 1);
	t.splice_fd_in = p1[0];
	t.splice_off_in = (uint64_t)-1;
	run1(c, &r, &t, false, "splice pipe -> pipe");
	iov.iov_base = buf;
	iov.iov_len = 1;
	n = preadv2(p1[0], &iov, 1, -1, RWF_NOWAIT);
	drec_int(c, n < 0 ? -errno : n, "NOWAIT read of the empty source");
	tclose2(p1);
	tclose2(p2);
	tring_exit(&r);
}

/* a splice or tee from an empty pipe waits for data (io-wq in both) */
static void sc_splice_wait(struct dctx *c)
{
	struct io_uring_sqe *sqe;
	struct tring r;
	struct tcqe cqe[2];
	int p1[2], p2[2], op;
	unsigned int n;

	if (dring_flags(c, &r, 16, 0))
		return;
	for (op = 0; op < 2; op++) {
		if (pipe(p1) || pipe(p2))
			abort();
		sqe = tring_get_sqe(&r);
		*sqe = tsqe(op ? IORING_OP_TEE : IORING_OP_SPLICE, p2[1], 0, 64,
			    0, 1);
		sqe->splice_fd_in = p1[0];
		if (!op) {
			sqe->splice_off_in = (uint64_t)-1;
			sqe->off = (uint64_t)-1;
		}
		drec_int(c, tring_submit(&r), "submit");
		n = tring_reap_wait(&r, cqe, 1, 100000000LL);
		drec_int(c, n, "CQEs before data");
		if (write(p1[1], "hello", 5) != 5)
			abort();
		n += tring_reap_wait(&r, cqe + n, 1, 2000000000LL);
		drec_cqes(c, cqe, n, true, "%s after data", op ? "tee" : "splice");
		drec_int(c, pipe_bytes(p2[0]), "data arrived");
		/* and again with the writer gone: end of file */
		sqe = tring_get_sqe(&r);
		*sqe = tsqe(op ? IORING_OP_TEE : IORING_OP_SPLICE, p2[1], 0, 64,
			    0, 2);
		sqe->splice_fd_in = p1[0];
		if (!op) {
			sqe->splice_off_in = (uint64_t)-1;
			sqe->off = (uint64_t)-1;
		}
		if (!op)
			close(p1[1]);
		else if (read(p1[0], cqe, 5) != 5)
			abort();
		if (op)
			close(p1[1]);
		drec_int(c, tring_submit(&r), "submit at EOF");
		n = tring_reap_wait(&r, cqe, 1, 2000000000LL);
		drec_cqes(c, cqe, n, true, "%s at EOF", op ? "tee" : "splice");
		close(p1[0]);
		tclose2(p2);
	}
	tring_exit(&r);
}

/*
 * Randomized chains of path, metadata and fd opcodes (deterministic seed):
 * every SQE of a round is linked (IO_LINK or IO_HARDLINK), so the kernel's
 * order is defined, with occasional junk in fields that must be zero,
 * FIXED_FILE, IOSQE_ASYNC, bad pointers.  Both backends start from the
 * same empty directory, so every result must agree.
 */
static unsigned int fz_state;

static unsigned int fz(unsigned int n)
{
	fz_state = fz_state * 1103515245u + 12345u;
	return (fz_state >> 8) % n;
}

static void sc_fuzz_chains(struct dctx *c)
{
	static const char *const names[] = { "a", "b", "c", "a/b", "b/c",
					     "x", "a/b/c", "", NULL };
	struct scratch s;
	struct tring r;
	struct statx sx;
	char val[32];
	unsigned int round, i, n;
	int fd;

	if (dring_flags(c, &r, 32, IORING_SETUP_SUBMIT_ALL))
		return;
	if (scratch_init(c, &s))
		goto out;
	mkfile(&s, "x", "0123456789");
	fd = openat(s.dfd, "x", O_RDWR);
	fz_state = getenv("UURING_FUZZ_SEED") ?
		(unsigned int)atoi(getenv("UURING_FUZZ_SEED")) : 12345;
	for (round = 0; round < 400; round++) {
		struct tcqe cqe[8];
		unsigned int nsqe = 2 + fz(6);

		for (i = 0; i < nsqe; i++) {
			struct io_uring_sqe *sqe = tring_get_sqe(&r);
			/* "" and NULL one time in 16 */
			const char *n1 = names[fz(16) ? fz(7) : 7 + fz(2)];
			const char *n2 = names[fz(16) ? fz(7) : 7 + fz(2)];
			uint64_t p1 = n1 ? P(n1) : 0, p2 = n2 ? P(n2) : 0;

			if (fz(40) == 0)
				p1 = P(dunmapped_addr());
			switch (fz(14)) {
			case 0:
				*sqe = tsqe(IORING_OP_MKDIRAT, s.dfd, p1, 0755,
					    0, 0);
				break;
			case 1:
				*sqe = tsqe(IORING_OP_UNLINKAT, s.dfd, p1, 0, 0,
					    0);
				sqe->unlink_flags = fz(3) ? 0 : AT_REMOVEDIR;
				break;
			case 2:
				*sqe = tsqe(IORING_OP_RENAMEAT, s.dfd, p1,
					    (uint32_t)s.dfd, p2, 0);
				sqe->rename_flags = fz(4) ? 0 : RENAME_NOREPLACE;
				break;
			case 3:
				*sqe = tsqe(IORING_OP_SYMLINKAT, s.dfd, p1, 0,
					    p2, 0);
				break;
			case 4:
				*sqe = tsqe(IORING_OP_LINKAT, s.dfd, p1,
					    (uint32_t)s.dfd, p2, 0);
				break;
			case 5:
				*sqe = tsqe(IORING_OP_STATX, s.dfd, p1, 0x7ff,
					    P(&sx), 0);
				sqe->statx_flags = fz(3) ? 0 : AT_SYMLINK_NOFOLLOW;
				break;
			case 6:
				*sqe = tsqe(IORING_OP_OPENAT, s.dfd, p1, 0644,
					    0, 0);
				sqe->open_flags = O_CLOEXEC |
					(fz(2) ? O_RDONLY : O_CREAT | O_WRONLY);
				break;
			case 7:
				*sqe = tsqe(IORING_OP_FALLOCATE, fd,
					    4096 + fz(3),
					    0, fz(2) ? 0 : (uint64_t)-1, 0);
				break;
			case 8:
				*sqe = tsqe(IORING_OP_FTRUNCATE, fd, 0, 0,
					    fz(3) ? fz(100) : (uint64_t)-1, 0);
				break;
			case 9:
				*sqe = tsqe(IORING_OP_FSETXATTR, fd,
					    fz(3) ? P("user.k") : P(""), 3,
					    P("val"), 0);
				sqe->xattr_flags = fz(3) ? 0 : XATTR_CREATE;
				break;
			case 10:
				*sqe = tsqe(IORING_OP_FGETXATTR, fd,
					    P("user.k"),
					    fz(2) ? sizeof(val) : 1, P(val), 0);
				break;
			case 11:
				*sqe = tsqe(IORING_OP_CLOSE, 9999, 0, 0, 0, 0);
				break;
			case 12:
				*sqe = tsqe(IORING_OP_SYNC_FILE_RANGE, fd, 0, 0,
					    0, 0);
				break;
			default:
				tring_prep_nop(sqe, 0);
				break;
			}
			sqe->user_data = round * 100 + i;
			switch (fz(40)) {
			case 0:
				sqe->buf_index = 1;
				break;
			case 1:
				sqe->splice_fd_in = 1;
				break;
			case 2:
				sqe->flags |= IOSQE_FIXED_FILE;
				break;
			case 3:
			case 4:
				sqe->flags |= IOSQE_ASYNC;
				break;
			default:
				break;
			}
			if (i + 1 < nsqe)
				sqe->flags |= fz(4) ? IOSQE_IO_LINK :
						      IOSQE_IO_HARDLINK;
		}
		if (tring_submit(&r) != (int)nsqe)
			drec_int(c, round, "round: short submit");
		n = tring_reap_wait(&r, cqe, nsqe, 2000000000LL);
		for (i = 0; i < n; i++)
			if (cqe[i].res >= 0 && cqe[i].res < 100000 &&
			    cqe[i].user_data % 100 < nsqe &&
			    fcntl(cqe[i].res, F_GETFD) >= 0 && cqe[i].res > fd) {
				/* an fd from OPENAT */
				close(cqe[i].res);
				cqe[i].res = FD_OTHER;
			}
		drec_cqes(c, cqe, n, true, "round %u", round);
	}
	close(fd);
	scratch_fini(&s);
out:
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
	{ "pipe_fixed", sc_pipe_fixed, NULL },
	{ "splice_blocking_socket", sc_splice_blocking_socket, NULL },
	{ "statx", sc_statx, NULL },
	{ "mkdir_unlink", sc_mkdir_unlink, NULL },
	{ "rename", sc_rename, NULL },
	{ "links", sc_links, NULL },
	{ "path_chain", sc_path_chain, NULL },
	{ "fallocate_ftruncate_sfr_fadvise", sc_fallocate, NULL },
	{ "madvise", sc_madvise, NULL },
	{ "link_fail", sc_link_fail, NULL },
	{ "xattr", sc_xattr, NULL },
	{ "splice", sc_splice, NULL },
	{ "splice_wait", sc_splice_wait, NULL },
	{ "fuzz_chains", sc_fuzz_chains, NULL },
	{ "splice_nowait", sc_splice_nowait, NULL,
	  "splice(2) clears FMODE_NOWAIT on its pipes (see the scenario)" },
};

DTEST_MAIN(scenarios)
