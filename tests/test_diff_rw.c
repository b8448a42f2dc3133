// SPDX-License-Identifier: MIT
/*
 * Differential tests: READ, WRITE, READV, WRITEV, FSYNC on regular files
 * (ext4 /tmp and tmpfs /dev/shm) and pipes: offsets, file position (-1),
 * short reads at EOF, bad fds, bad buffers and iovecs, RWF flags.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"

#ifndef RWF_NOAPPEND
#define RWF_NOAPPEND 0x00000020
#endif
#ifndef RWF_ATOMIC
#define RWF_ATOMIC 0x00000040
#endif
#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080
#endif

#define FSZ 10000

static struct io_uring_sqe mk(int op, int fd, const void *addr,
			      unsigned int len, uint64_t off, uint64_t ud)
{
	return tsqe(op, fd, (uint64_t)(uintptr_t)addr, len, off, ud);
}

/* records whether buf holds the file pattern from file offset `start` */
static void check_data(struct dctx *c, const void *buf, size_t len,
		       size_t start, const char *label)
{
	unsigned char *want = malloc(len ? len : 1);

	dpattern(want, len, 7, start);
	drec_int(c, memcmp(buf, want, len) == 0, "%s: data", label);
	free(want);
}

static void file_reads(struct dctx *c, const char *dir)
{
	char *buf = malloc(16384);
	struct io_uring_sqe s;
	struct tring r;
	int fd, res;

	if (dring_flags(c, &r, 16, 0))
		return;
	fd = dtmpfile_at(c, dir, FSZ, 7);
	s = mk(IORING_OP_READ, fd, buf, 4096, 0, 1);
	res = drun1_sqe(c, &r, &s, "read 0+4096");
	check_data(c, buf, res > 0 ? (size_t)res : 0, 0, "read 0+4096");
	s = mk(IORING_OP_READ, fd, buf, 4096, 8192, 2);
	res = drun1_sqe(c, &r, &s, "read 8192+4096 (short at EOF)");
	check_data(c, buf, res > 0 ? (size_t)res : 0, 8192, "short read");
	s = mk(IORING_OP_READ, fd, buf, 4096, FSZ, 3);
	drun1_sqe(c, &r, &s, "read at EOF");
	s = mk(IORING_OP_READ, fd, buf, 4096, 1 << 20, 4);
	drun1_sqe(c, &r, &s, "read past EOF");
	s = mk(IORING_OP_READ, fd, buf, 0, 0, 5);
	drun1_sqe(c, &r, &s, "read len 0");
	s = mk(IORING_OP_READ, fd, buf, 16384, 0, 6);
	res = drun1_sqe(c, &r, &s, "read whole file");
	check_data(c, buf, res > 0 ? (size_t)res : 0, 0, "whole file");
	s = mk(IORING_OP_READ, fd, buf, 100, (uint64_t)-2, 7);
	drun1_sqe(c, &r, &s, "read offset -2");
	s = mk(IORING_OP_READ, fd, buf, 100, (uint64_t)1 << 63, 8);
	drun1_sqe(c, &r, &s, "read offset 2^63");
	s = mk(IORING_OP_READ, fd, buf, 100, 0, 9);
	s.flags = IOSQE_ASYNC;
	res = drun1_sqe(c, &r, &s, "read ASYNC");
	check_data(c, buf, res > 0 ? (size_t)res : 0, 0, "read ASYNC");
	drec_int(c, lseek(fd, 0, SEEK_CUR), "file position untouched");
	close(fd);
	free(buf);
	tring_exit(&r);
}

static void sc_read_ext4(struct dctx *c)
{
	file_reads(c, "/tmp");
}

static void sc_read_tmpfs(struct dctx *c)
{
	file_reads(c, "/dev/shm");
}

/* offset -1: the file position is used and advanced */
static void sc_file_pos(struct dctx *c)
{
	char buf[3][100], wbuf[50];
	struct io_uring_sqe *sqe;
	struct tring r;
	unsigned int i;
	int fd;

	if (dring_flags(c, &r, 16, 0))
		return;
	fd = dtmpfile(c, FSZ, 7);
	lseek(fd, 1000, SEEK_SET);
	for (i = 0; i < 3; i++) {
		sqe = tring_get_sqe(&r);
		tring_prep_rw(sqe, IORING_OP_READ, fd, buf[i], 100,
			      (uint64_t)-1, i);
		sqe->flags = IOSQE_IO_LINK;	/* defined order */
	}
	sqe->flags = 0;
	drec_int(c, tring_submit(&r), "submit 3 reads at -1");
	dreap(c, &r, 3, true, "reads at -1");
	for (i = 0; i < 3; i++)
		check_data(c, buf[i], 100, 1000 + 100 * i, "pos read");
	drec_int(c, lseek(fd, 0, SEEK_CUR), "position after reads");

	/* explicit offsets leave the position alone */
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, fd, buf[0], 100, 0, 10);
	drec_int(c, tring_submit(&r), "submit pread");
	dreap(c, &r, 1, true, "pread");
	drec_int(c, lseek(fd, 0, SEEK_CUR), "position after pread");

	/* WRITE at -1 writes at the position and advances it */
	memset(wbuf, 'w', sizeof(wbuf));
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_WRITE, fd, wbuf, 50, (uint64_t)-1, 11);
	drec_int(c, tring_submit(&r), "submit write at -1");
	dreap(c, &r, 1, true, "write at -1");
	drec_int(c, lseek(fd, 0, SEEK_CUR), "position after write");
	{
		char want[60];

		dpattern(want, 60, 7, 1295);
		memset(want + 5, 'w', 50);
		drec_int(c, pread(fd, buf[0], 60, 1295) == 60 &&
			 !memcmp(buf[0], want, 60), "write landed at 1300");
	}

	/* READV at -1 */
	{
		struct iovec iov[2] = { { buf[1], 30 }, { buf[2], 20 } };

		sqe = tring_get_sqe(&r);
		tring_prep_rw(sqe, IORING_OP_READV, fd, iov, 2, (uint64_t)-1, 12);
		drec_int(c, tring_submit(&r), "submit readv at -1");
		dreap(c, &r, 1, true, "readv at -1");
		check_data(c, buf[1], 30, 1350, "readv iov0");
		check_data(c, buf[2], 20, 1380, "readv iov1");
		drec_int(c, lseek(fd, 0, SEEK_CUR), "position after readv");
	}
	/* reads at -1 at EOF */
	lseek(fd, FSZ - 10, SEEK_SET);
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, fd, buf[0], 100, (uint64_t)-1, 13);
	sqe->flags = IOSQE_IO_LINK;
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_READ, fd, buf[1], 100, (uint64_t)-1, 14);
	drec_int(c, tring_submit(&r), "submit reads at EOF");
	dreap(c, &r, 2, true, "reads at -1 near EOF");
	drec_int(c, lseek(fd, 0, SEEK_CUR), "position at EOF");
	close(fd);
	tring_exit(&r);
}

static void sc_write(struct dctx *c)
{
	unsigned char wb[8192], rb[8192];
	struct io_uring_sqe s;
	struct iovec iov[3];
	struct stat st;
	struct tring r;
	int fd;

	if (dring_flags(c, &r, 16, 0))
		return;
	fd = dtmpfile(c, 0, 0);
	dpattern(wb, sizeof(wb), 7, 0);
	s = mk(IORING_OP_WRITE, fd, wb, 4096, 0, 1);
	drun1_sqe(c, &r, &s, "write 0+4096");
	s = mk(IORING_OP_WRITE, fd, wb + 4096, 4096, 4096, 2);
	drun1_sqe(c, &r, &s, "write 4096+4096");
	s = mk(IORING_OP_WRITE, fd, wb, 10, 100000, 3);
	drun1_sqe(c, &r, &s, "write past EOF (hole)");
	fstat(fd, &st);
	drec_int(c, st.st_size, "size");
	drec_int(c, pread(fd, rb, 8192, 0), "pread back");
	drec_int(c, memcmp(rb, wb, 8192) == 0, "data written");
	s = mk(IORING_OP_WRITE, fd, wb, 0, 0, 4);
	drun1_sqe(c, &r, &s, "write len 0");

	iov[0].iov_base = wb;
	iov[0].iov_len = 100;
	iov[1].iov_base = wb + 100;
	iov[1].iov_len = 0;
	iov[2].iov_base = wb + 100;
	iov[2].iov_len = 900;
	s = mk(IORING_OP_WRITEV, fd, iov, 3, 200000, 5);
	drun1_sqe(c, &r, &s, "writev 3 iovecs");
	drec_int(c, pread(fd, rb, 1000, 200000), "pread writev");
	drec_int(c, memcmp(rb, wb, 1000) == 0, "writev data");
	s = mk(IORING_OP_WRITEV, fd, iov, 0, 0, 6);
	drun1_sqe(c, &r, &s, "writev 0 iovecs");

	/* RWF_APPEND writes at EOF whatever the offset */
	s = mk(IORING_OP_WRITE, fd, wb, 10, 0, 7);
	s.rw_flags = RWF_APPEND;
	drun1_sqe(c, &r, &s, "write RWF_APPEND");
	fstat(fd, &st);
	drec_int(c, st.st_size, "size after append");
	/* O_APPEND file: writes go to EOF */
	fcntl(fd, F_SETFL, O_APPEND);
	s = mk(IORING_OP_WRITE, fd, wb, 10, 0, 8);
	drun1_sqe(c, &r, &s, "write O_APPEND");
	s = mk(IORING_OP_WRITE, fd, wb, 10, 0, 9);
	s.rw_flags = RWF_NOAPPEND;
	drun1_sqe(c, &r, &s, "write O_APPEND + RWF_NOAPPEND");
	fstat(fd, &st);
	drec_int(c, st.st_size, "size after O_APPEND");
	close(fd);
	tring_exit(&r);
}

static void sc_rwf_flags(struct dctx *c)
{
	static const struct {
		const char *name;
		int flags;
	} f[] = {
		{ "none", 0 },
		{ "RWF_HIPRI", RWF_HIPRI },
		{ "RWF_DSYNC", RWF_DSYNC },
		{ "RWF_SYNC", RWF_SYNC },
		{ "RWF_NOWAIT", RWF_NOWAIT },
		{ "RWF_APPEND", RWF_APPEND },
		{ "RWF_NOAPPEND", RWF_NOAPPEND },
		{ "RWF_ATOMIC", RWF_ATOMIC },
		{ "RWF_DONTCACHE", RWF_DONTCACHE },
		{ "bit 30", 1 << 30 },
		{ "all", -1 },
	};
	static const char *const dirs[] = { "/tmp", "/dev/shm" };
	char buf[512], label[96];
	struct io_uring_sqe s;
	unsigned int i, d;
	struct tring r;
	int fd;

	if (dring_flags(c, &r, 16, 0))
		return;
	for (d = 0; d < 2; d++) {
		fd = dtmpfile_at(c, dirs[d], FSZ, 7);
		for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
			s = mk(IORING_OP_READ, fd, buf, 512, 512, i);
			s.rw_flags = f[i].flags;
			snprintf(label, sizeof(label), "%s read %s", dirs[d],
				 f[i].name);
			drun1_sqe(c, &r, &s, label);
			s = mk(IORING_OP_WRITE, fd, buf, 512, 1024, i);
			s.rw_flags = f[i].flags;
			snprintf(label, sizeof(label), "%s write %s", dirs[d],
				 f[i].name);
			drun1_sqe(c, &r, &s, label);
		}
		close(fd);
	}
	tring_exit(&r);
}

static void sc_rw_fields(struct dctx *c)
{
	char buf[512];
	struct io_uring_sqe s;
	struct tring r;
	int fd;

	if (dring_flags(c, &r, 16, 0))
		return;
	fd = dtmpfile(c, FSZ, 7);
	s = mk(IORING_OP_READ, fd, buf, 100, 0, 1);
	s.ioprio = (2 << 13) | 4;	/* IOPRIO_CLASS_BE, level 4 */
	drun1_sqe(c, &r, &s, "read ioprio BE/4");
	s = mk(IORING_OP_READ, fd, buf, 100, 0, 2);
	s.ioprio = 7 << 13;		/* invalid class */
	drun1_sqe(c, &r, &s, "read ioprio class 7");
	s = mk(IORING_OP_READ, fd, buf, 100, 0, 3);
	s.buf_index = 3;
	drun1_sqe(c, &r, &s, "read buf_index 3");
	s = mk(IORING_OP_READ, fd, buf, 100, 0, 4);
	s.splice_fd_in = 5;
	drun1_sqe(c, &r, &s, "read splice_fd_in/attr 5");
	s = mk(IORING_OP_READ, fd, buf, 100, 0, 5);
	s.personality = 9;
	drun1_sqe(c, &r, &s, "read personality 9");
	close(fd);
	tring_exit(&r);
}

static void sc_vec(struct dctx *c)
{
	struct iovec *iov = calloc(1100, sizeof(*iov));
	char *buf = malloc(FSZ);
	struct io_uring_sqe s;
	struct tring r;
	unsigned int i;
	int fd, res;

	if (dring_flags(c, &r, 16, 0))
		return;
	fd = dtmpfile(c, FSZ, 7);
	iov[0].iov_base = buf;
	iov[0].iov_len = 10;
	iov[1].iov_base = buf + 10;
	iov[1].iov_len = 0;
	iov[2].iov_base = buf + 10;
	iov[2].iov_len = 4000;
	s = mk(IORING_OP_READV, fd, iov, 3, 5, 1);
	res = drun1_sqe(c, &r, &s, "readv 3 at 5");
	check_data(c, buf, res > 0 ? (size_t)res : 0, 5, "readv");
	s = mk(IORING_OP_READV, fd, iov, 0, 0, 2);
	drun1_sqe(c, &r, &s, "readv 0 iovecs");
	for (i = 0; i < 1100; i++) {
		iov[i].iov_base = buf + i;
		iov[i].iov_len = 1;
	}
	s = mk(IORING_OP_READV, fd, iov, 1024, 0, 3);
	res = drun1_sqe(c, &r, &s, "readv 1024 iovecs");
	check_data(c, buf, res > 0 ? (size_t)res : 0, 0, "readv 1024");
	s = mk(IORING_OP_READV, fd, iov, 1025, 0, 4);
	drun1_sqe(c, &r, &s, "readv 1025 iovecs");
	s = mk(IORING_OP_READV, fd, iov, ~0U, 0, 5);
	drun1_sqe(c, &r, &s, "readv ~0 iovecs");
	iov[0].iov_len = (size_t)-1 / 2;
	iov[1].iov_len = (size_t)-1 / 2;
	s = mk(IORING_OP_READV, fd, iov, 2, 0, 6);
	drun1_sqe(c, &r, &s, "readv lengths overflow ssize_t");
	iov[0].iov_len = (size_t)-1;
	s = mk(IORING_OP_READV, fd, iov, 1, 0, 7);
	drun1_sqe(c, &r, &s, "readv iov_len ~0");
	iov[0].iov_base = buf;
	iov[0].iov_len = 100;
	iov[1].iov_base = buf + 100;
	iov[1].iov_len = 100;
	s = mk(IORING_OP_READV, fd, iov, 2, FSZ - 150, 8);
	res = drun1_sqe(c, &r, &s, "readv short at EOF");
	check_data(c, buf, res > 0 ? (size_t)res : 0, FSZ - 150, "readv EOF");
	s = mk(IORING_OP_WRITEV, fd, iov, 1025, 0, 9);
	drun1_sqe(c, &r, &s, "writev 1025 iovecs");
	/* READV with rw_flags / ASYNC */
	s = mk(IORING_OP_READV, fd, iov, 2, 0, 10);
	s.flags = IOSQE_ASYNC;
	drun1_sqe(c, &r, &s, "readv ASYNC");
	close(fd);
	free(iov);
	free(buf);
	tring_exit(&r);
}

static void sc_fsync(struct dctx *c)
{
	struct io_uring_sqe s;
	struct tring r;
	int fd, p[2];

	if (dring_flags(c, &r, 16, 0))
		return;
	fd = dtmpfile(c, FSZ, 7);
	s = mk(IORING_OP_FSYNC, fd, NULL, 0, 0, 1);
	drun1_sqe(c, &r, &s, "fsync");
	s = mk(IORING_OP_FSYNC, fd, NULL, 0, 0, 2);
	s.fsync_flags = IORING_FSYNC_DATASYNC;
	drun1_sqe(c, &r, &s, "fdatasync");
	s = mk(IORING_OP_FSYNC, fd, NULL, 100, 4096, 3);
	drun1_sqe(c, &r, &s, "fsync range");
	s = mk(IORING_OP_FSYNC, fd, NULL, 0, 0, 4);
	s.fsync_flags = 2;
	drun1_sqe(c, &r, &s, "fsync bad flags");
	s = mk(IORING_OP_FSYNC, fd, (void *)8, 0, 0, 5);
	drun1_sqe(c, &r, &s, "fsync addr != 0");
	s = mk(IORING_OP_FSYNC, fd, NULL, 0, 0, 6);
	s.buf_index = 1;
	drun1_sqe(c, &r, &s, "fsync buf_index != 0");
	s = mk(IORING_OP_FSYNC, -1, NULL, 0, 0, 7);
	drun1_sqe(c, &r, &s, "fsync fd -1");
	s = mk(IORING_OP_FSYNC, fd, NULL, 0, 0, 8);
	s.flags = IOSQE_ASYNC;
	drun1_sqe(c, &r, &s, "fsync ASYNC");
	close(fd);
	fd = open("/dev/shm", O_RDONLY | O_DIRECTORY);
	s = mk(IORING_OP_FSYNC, fd, NULL, 0, 0, 9);
	drun1_sqe(c, &r, &s, "fsync directory");
	close(fd);
	if (pipe(p) == 0) {
		s = mk(IORING_OP_FSYNC, p[0], NULL, 0, 0, 10);
		drun1_sqe(c, &r, &s, "fsync pipe");
		tclose2(p);
	}
	fd = open("/dev/null", O_WRONLY);
	s = mk(IORING_OP_FSYNC, fd, NULL, 0, 0, 11);
	drun1_sqe(c, &r, &s, "fsync /dev/null");
	close(fd);
	tring_exit(&r);
}

static void sc_bad_fd(struct dctx *c)
{
	/*
	 * Zeroed: the READV reads its iovec from here, and the kernel checks
	 * that iovec before the fd (stack garbage once gave -EFAULT).
	 */
	char buf[64] = { 0 };
	struct io_uring_sqe s;
	struct tring r;
	int fd, wo, ro, dir, opath;

	if (dring_flags(c, &r, 16, 0))
		return;
	fd = dtmpfile(c, FSZ, 7);
	s = mk(IORING_OP_READ, -1, buf, 64, 0, 1);
	drun1_sqe(c, &r, &s, "read fd -1");
	s = mk(IORING_OP_READ, 9999, buf, 64, 0, 2);
	drun1_sqe(c, &r, &s, "read fd 9999");
	s = mk(IORING_OP_WRITE, -5, buf, 64, 0, 3);
	drun1_sqe(c, &r, &s, "write fd -5");
	s = mk(IORING_OP_READV, 9999, buf, 1, 0, 4);
	drun1_sqe(c, &r, &s, "readv fd 9999");
	wo = open("/dev/null", O_WRONLY);
	ro = open("/dev/null", O_RDONLY);
	s = mk(IORING_OP_READ, wo, buf, 64, 0, 5);
	drun1_sqe(c, &r, &s, "read write-only fd");
	s = mk(IORING_OP_WRITE, ro, buf, 64, 0, 6);
	drun1_sqe(c, &r, &s, "write read-only fd");
	dir = open("/tmp", O_RDONLY | O_DIRECTORY);
	s = mk(IORING_OP_READ, dir, buf, 64, 0, 7);
	drun1_sqe(c, &r, &s, "read directory");
	opath = open("/etc/hostname", O_PATH);
	s = mk(IORING_OP_READ, opath, buf, 64, 0, 8);
	drun1_sqe(c, &r, &s, "read O_PATH fd");
	s = mk(IORING_OP_READ, ro, buf, 64, 0, 9);
	drun1_sqe(c, &r, &s, "read /dev/null");
	s = mk(IORING_OP_WRITE, wo, buf, 64, 0, 10);
	drun1_sqe(c, &r, &s, "write /dev/null");
	close(wo);
	close(ro);
	close(dir);
	close(opath);
	close(fd);
	tring_exit(&r);
}

static void sc_bad_buf(struct dctx *c)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	void *none = dprot_none_page(), *bad = dunmapped_addr();
	struct iovec iov[2], *iovp;
	struct io_uring_sqe s;
	struct tring r;
	char *two, *ro;
	int fd, p[2], res;

	if (dring_flags(c, &r, 16, 0))
		return;
	fd = dtmpfile(c, FSZ, 7);
	two = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(two + pg, pg, PROT_NONE);
	ro = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	s = mk(IORING_OP_READ, fd, bad, 64, 0, 1);
	drun1_sqe(c, &r, &s, "read into unmapped");
	s = mk(IORING_OP_READ, fd, none, 64, 0, 2);
	drun1_sqe(c, &r, &s, "read into PROT_NONE");
	s = mk(IORING_OP_READ, fd, ro, 64, 0, 3);
	drun1_sqe(c, &r, &s, "read into read-only");
	s = mk(IORING_OP_READ, fd, NULL, 64, 0, 4);
	drun1_sqe(c, &r, &s, "read into NULL");
	s = mk(IORING_OP_READ, fd, two + pg - 100, 300, 0, 5);
	res = drun1_sqe(c, &r, &s, "read straddling PROT_NONE");
	check_data(c, two + pg - 100, res > 0 ? (size_t)res : 0, 0,
		   "straddling read");
	s = mk(IORING_OP_READ, fd, (void *)(uintptr_t)0xffff800000000000ULL,
	       64, 0, 6);
	drun1_sqe(c, &r, &s, "read into kernel address");
	s = mk(IORING_OP_WRITE, fd, bad, 64, 0, 7);
	drun1_sqe(c, &r, &s, "write from unmapped");
	s = mk(IORING_OP_WRITE, fd, none, 64, 0, 8);
	drun1_sqe(c, &r, &s, "write from PROT_NONE");
	memset(two, 'a', pg);
	s = mk(IORING_OP_WRITE, fd, two + pg - 100, 300, 0, 9);
	drun1_sqe(c, &r, &s, "write straddling PROT_NONE");

	/* iovec arrays that cannot be read */
	s = mk(IORING_OP_READV, fd, bad, 1, 0, 10);
	drun1_sqe(c, &r, &s, "readv iovec array unmapped");
	s = mk(IORING_OP_READV, fd, none, 1, 0, 11);
	drun1_sqe(c, &r, &s, "readv iovec array PROT_NONE");
	s = mk(IORING_OP_WRITEV, fd, none, 2, 0, 12);
	drun1_sqe(c, &r, &s, "writev iovec array PROT_NONE");
	s = mk(IORING_OP_READV, fd, NULL, 1, 0, 13);
	drun1_sqe(c, &r, &s, "readv iovec array NULL");
	/* iovec array straddling into PROT_NONE: 2nd entry unreadable */
	iovp = (struct iovec *)(two + pg - sizeof(struct iovec));
	iovp->iov_base = two;
	iovp->iov_len = 10;
	s = mk(IORING_OP_READV, fd, iovp, 2, 0, 14);
	drun1_sqe(c, &r, &s, "readv iovec array straddling");
	/* valid array, bad bases */
	iov[0].iov_base = two;
	iov[0].iov_len = 10;
	iov[1].iov_base = bad;
	iov[1].iov_len = 10;
	s = mk(IORING_OP_READV, fd, iov, 2, 0, 15);
	drun1_sqe(c, &r, &s, "readv 2nd base unmapped");
	iov[0].iov_base = none;
	s = mk(IORING_OP_READV, fd, iov, 2, 0, 16);
	drun1_sqe(c, &r, &s, "readv 1st base PROT_NONE");
	iov[0].iov_base = ro;
	iov[0].iov_len = 10;
	s = mk(IORING_OP_READV, fd, iov, 1, 0, 17);
	drun1_sqe(c, &r, &s, "readv base read-only");
	iov[0].iov_base = bad;
	s = mk(IORING_OP_WRITEV, fd, iov, 1, 0, 18);
	drun1_sqe(c, &r, &s, "writev base unmapped");
	/* pipes: bad buffer with data waiting */
	if (pipe(p) == 0) {
		res = (int)write(p[1], "0123456789", 10);
		s = mk(IORING_OP_READ, p[0], bad, 10, 0, 19);
		drun1_sqe(c, &r, &s, "pipe read into unmapped");
		s = mk(IORING_OP_WRITE, p[1], bad, 10, 0, 20);
		drun1_sqe(c, &r, &s, "pipe write from unmapped");
		tclose2(p);
	}
	close(fd);
	tring_exit(&r);
}

static void sc_pipe(struct dctx *c)
{
	char buf[256];
	struct io_uring_sqe s;
	struct tring r;
	int p[2], res;

	if (dring_flags(c, &r, 16, 0))
		return;
	if (pipe(p)) {
		dcheck(c, 0, "pipe");
		return;
	}
	dpattern(buf, 200, 3, 0);
	s = mk(IORING_OP_WRITE, p[1], buf, 100, 12345, 1);
	drun1_sqe(c, &r, &s, "pipe write at offset 12345 (ignored)");
	s = mk(IORING_OP_WRITE, p[1], buf + 100, 100, (uint64_t)-1, 2);
	drun1_sqe(c, &r, &s, "pipe write at -1");
	memset(buf, 0, sizeof(buf));
	s = mk(IORING_OP_READ, p[0], buf, 50, 999, 3);
	drun1_sqe(c, &r, &s, "pipe read 50 at offset 999 (ignored)");
	s = mk(IORING_OP_READ, p[0], buf + 50, 256, (uint64_t)-1, 4);
	res = drun1_sqe(c, &r, &s, "pipe read 256 with 150 buffered");
	{
		char want[200];

		dpattern(want, 200, 3, 0);
		drec_int(c, res == 150 && !memcmp(want, buf, 200), "pipe data");
	}
	/* RWF_NOWAIT on an empty pipe: -EAGAIN at once */
	s = mk(IORING_OP_READ, p[0], buf, 10, 0, 5);
	s.rw_flags = RWF_NOWAIT;
	drun1_sqe(c, &r, &s, "empty pipe read RWF_NOWAIT");
	/* readv / writev on the pipe */
	{
		struct iovec iov[2] = { { buf, 5 }, { buf + 5, 5 } };

		s = mk(IORING_OP_WRITEV, p[1], iov, 2, 77, 6);
		drun1_sqe(c, &r, &s, "pipe writev");
		s = mk(IORING_OP_READV, p[0], iov, 2, 77, 7);
		drun1_sqe(c, &r, &s, "pipe readv");
	}
	/* write to a pipe whose read end is closed: -EPIPE (SIGPIPE) */
	signal(SIGPIPE, SIG_IGN);
	close(p[0]);
	s = mk(IORING_OP_WRITE, p[1], buf, 10, 0, 8);
	drun1_sqe(c, &r, &s, "write to widowed pipe");
	close(p[1]);
	/* read end with the write end closed: EOF */
	if (pipe(p) == 0) {
		close(p[1]);
		s = mk(IORING_OP_READ, p[0], buf, 10, 0, 9);
		drun1_sqe(c, &r, &s, "read pipe at EOF");
		close(p[0]);
	}
	tring_exit(&r);
}

struct delayed_write {
	int fd;
	int delay_ms;
	volatile int written;
	volatile int returned;	/* enter has returned: write now */
};

/*
 * Writes once enter has returned, or after delay_ms if it never does:
 * "enter returned only after the data was written" is then 0 whenever
 * enter does not block, however late the submitting thread runs (a fixed
 * 300 ms delay before made it 1 when that thread was kept off the CPU
 * that long), and 1 if enter waits for the data.
 */
static void *writer(void *arg)
{
	struct delayed_write *w = arg;
	struct timespec ts = { 0, 1000000L };

	for (int i = 0; i < w->delay_ms &&
	     !__atomic_load_n(&w->returned, __ATOMIC_SEQ_CST); i++)
		nanosleep(&ts, NULL);
	__atomic_store_n(&w->written, 1, __ATOMIC_SEQ_CST);
	if (write(w->fd, "hello", 5) != 5)
		abort();
	return NULL;
}

/*
 * Submits a READ (user_data ud) of the empty pipe rfd while a writer
 * thread writes to it once enter has returned (after w->delay_ms at the
 * latest); records enter's result (under
 * submit_label), whether the write had happened when enter returned
 * (written_label) and the CQE (cqe_label).
 */
static void read_during_write(struct dctx *c, struct tring *r,
			      struct delayed_write *w, int rfd, uint64_t ud,
			      const char *submit_label,
			      const char *written_label, const char *cqe_label)
{
	/* static: a read still pending after a failed reap lands here */
	static char buf[16];
	pthread_t th;
	int ret, written;

	w->written = 0;
	w->returned = 0;
	pthread_create(&th, NULL, writer, w);
	tring_prep_rw(tring_get_sqe(r), IORING_OP_READ, rfd, buf, sizeof(buf),
		      0, ud);
	ret = tring_submit(r);
	/* look before letting the writer go */
	written = __atomic_load_n(&w->written, __ATOMIC_SEQ_CST);
	__atomic_store_n(&w->returned, 1, __ATOMIC_SEQ_CST);
	drec_int(c, ret, "%s", submit_label);
	drec_int(c, written, "%s", written_label);
	dreap(c, r, 1, true, cqe_label);
	pthread_join(th, NULL);
}

/*
 * A read on an empty pipe must not block enter: the kernel arms poll and
 * completes it when data arrives.
 */
static void sc_pipe_empty_read(struct dctx *c)
{
	struct delayed_write w;
	struct tring r;
	int p[2];

	if (dring_flags(c, &r, 16, 0))
		return;
	if (pipe(p)) {
		dcheck(c, 0, "pipe");
		return;
	}
	w.fd = p[1];
	w.delay_ms = 5000;
	read_during_write(c, &r, &w, p[0], 1, "submit read on empty pipe",
			  "enter returned only after the data was written",
			  "pipe read");

	/* the same with O_NONBLOCK: still waits via poll */
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	read_during_write(c, &r, &w, p[0], 2,
			  "submit read on empty O_NONBLOCK pipe",
			  "O_NONBLOCK: enter returned only after the write",
			  "O_NONBLOCK pipe read");
	tclose2(p);
	tring_exit(&r);
}

static void sc_large(struct dctx *c)
{
	size_t sz = 1 << 20;
	char *buf = malloc(sz);
	struct io_uring_sqe s;
	struct tring r;
	int fd, res;

	if (dring_flags(c, &r, 16, 0))
		return;
	fd = dtmpfile(c, sz, 7);
	s = mk(IORING_OP_READ, fd, buf, (unsigned int)sz, 0, 1);
	res = drun1_sqe(c, &r, &s, "read 1 MiB");
	check_data(c, buf, res > 0 ? (size_t)res : 0, 0, "1 MiB");
	s = mk(IORING_OP_WRITE, fd, buf, (unsigned int)sz, sz, 2);
	drun1_sqe(c, &r, &s, "write 1 MiB");
	close(fd);
	free(buf);
	tring_exit(&r);
}

/*
 * O_DIRECT (uuring: Linux AIO, exec/aio.c): reads and writes in flight
 * when the application closes the fd right after the submit must still
 * use the file submitted (the kernel's request holds it; uuring's iocb
 * does), a short read at EOF, a READV, and the errors an unaligned
 * buffer and a bad fd get.  Completion order is not compared (the device
 * picks it on both).
 */
static void sc_direct(struct dctx *c)
{
	unsigned char *buf, want[4096];
	struct iovec iov[2];
	struct tring r;
	char path[64];
	int fd, dfd;

	if (posix_memalign((void **)&buf, 4096, 6 * 4096))
		return;
	if (dring_flags(c, &r, 16, 0)) {
		free(buf);
		return;
	}
	fd = dtmpfile(c, 3 * 4096 + 1808, 7);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	dfd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (dfd < 0) {
		dnote(c, "no O_DIRECT here");
		close(fd);
		free(buf);
		tring_exit(&r);
		return;
	}
	memset(buf, 0xee, 6 * 4096);
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, dfd, buf, 4096, 0, 1);
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, dfd, buf + 4096,
		      4096, 3 * 4096, 2); /* short: 1808 bytes */
	iov[0].iov_base = buf + 2 * 4096;
	iov[0].iov_len = 4096;
	iov[1].iov_base = buf + 3 * 4096;
	iov[1].iov_len = 4096;
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_READV, dfd, iov, 2, 4096,
		      3);
	memset(buf + 4 * 4096, 'w', 4096);
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_WRITE, dfd, buf + 4 * 4096,
		      4096, 5 * 4096, 4);
	drec_int(c, tring_submit(&r), "submit 4");
	/* the number goes away while the I/O is in flight */
	drec_int(c, close(dfd), "close the O_DIRECT fd");
	dreap(c, &r, 4, false, "direct rw, fd closed after submit");
	dpattern(want, 4096, 7, 0);
	drec_int(c, !memcmp(buf, want, 4096), "read 1 data");
	dpattern(want, 1808, 7, 3 * 4096);
	drec_int(c, !memcmp(buf + 4096, want, 1808), "short read data");
	dpattern(want, 4096, 7, 4096);
	drec_int(c, !memcmp(buf + 2 * 4096, want, 4096), "readv data 1");
	dpattern(want, 4096, 7, 2 * 4096);
	drec_int(c, !memcmp(buf + 3 * 4096, want, 4096), "readv data 2");
	{
		unsigned char got[4096];

		drec_int(c, (int)pread(fd, got, 4096, 5 * 4096), "pread back");
		drec_int(c, got[0] == 'w' && got[4095] == 'w', "write landed");
	}
	dfd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	/* errors: an unaligned buffer, an unaligned length; a closed fd */
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, dfd, buf + 1, 4096, 0,
		      5);
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, dfd, buf, 100, 0, 6);
	dreap(c, &r, tring_submit(&r) == 2 ? 2 : 0, true, "direct errors");
	close(dfd);
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, dfd, buf, 4096, 0, 7);
	tring_submit(&r);
	dreap(c, &r, 1, true, "direct read on a closed fd");
	close(fd);
	free(buf);
	tring_exit(&r);
}

/*
 * fanotify sees io_uring's O_DIRECT I/O as it sees read(2) and write(2):
 * the kernel's io_uring raises FAN_ACCESS for a read and FAN_MODIFY for a
 * write when the request completes (before its CQE).  Linux AIO raises
 * neither, so uuring sends O_DIRECT I/O to io-wq (preadv2/pwritev2) in a
 * process that holds an fanotify or inotify group at its first O_DIRECT
 * request, or that has been told a watcher elsewhere may care
 * (UURING_DIRECT_AIO=0, docs/compatibility.md).  direct_fanotify sets the
 * variable, direct_fanotify_group does not (its group alone must do it;
 * with AIO the events are missing); each runs in a process of its own per
 * backend (the variable and the group are read at the process's first
 * O_DIRECT request), so both backends must show the events.
 */
static void direct_fanotify(struct dctx *c, bool set_env)
{
	unsigned char *buf;
	struct fanotify_event_metadata ev[16];
	struct tring r;
	char path[64];
	int fd, dfd, fan, accesses = 0, modifies = 0;
	ssize_t n;

	/* this scenario's process has not started AIO yet: read at the
	 * first O_DIRECT request (the kernel side ignores it) */
	if (set_env)
		setenv("UURING_DIRECT_AIO", "0", 1);
	fan = fanotify_init(FAN_CLASS_NOTIF | FAN_NONBLOCK, O_RDONLY);
	if (fan < 0) {
		dnote(c, "no fanotify here (%s)", strerror(errno));
		return;
	}
	if (posix_memalign((void **)&buf, 4096, 2 * 4096)) {
		close(fan);
		return;
	}
	if (dring_flags(c, &r, 16, 0)) {
		free(buf);
		close(fan);
		return;
	}
	fd = dtmpfile(c, 4 * 4096, 3);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	dfd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (dfd < 0 || fanotify_mark(fan, FAN_MARK_ADD, FAN_ACCESS | FAN_MODIFY,
				     fd, NULL)) {
		dnote(c, "no O_DIRECT or no fanotify mark here");
		goto out;
	}
	memset(buf + 4096, 'm', 4096);
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, dfd, buf, 4096, 0, 1);
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_WRITE, dfd, buf + 4096,
		      4096, 2 * 4096, 2);
	drec_int(c, tring_submit(&r), "submit a direct read and write");
	dreap(c, &r, 2, false, "direct read and write");
	while ((n = read(fan, ev, sizeof(ev))) > 0) {
		for (struct fanotify_event_metadata *m = ev; FAN_EVENT_OK(m, n);
		     m = FAN_EVENT_NEXT(m, n)) {
			accesses += !!(m->mask & FAN_ACCESS);
			modifies += !!(m->mask & FAN_MODIFY);
			if (m->fd >= 0)
				close(m->fd);
		}
	}
	/* merged events of one file count once: at least one each */
	drec_int(c, accesses > 0, "FAN_ACCESS raised by the direct read");
	drec_int(c, modifies > 0, "FAN_MODIFY raised by the direct write");
out:
	if (dfd >= 0)
		close(dfd);
	close(fd);
	close(fan);
	free(buf);
	tring_exit(&r);
}

static void sc_direct_fanotify(struct dctx *c)
{
	direct_fanotify(c, true);
}

static void sc_direct_fanotify_group(struct dctx *c)
{
	direct_fanotify(c, false);
}

/* many reads in one enter: all inline on both, compared in order */
static void sc_batch(struct dctx *c)
{
	char *buf = malloc(16 * 512);
	struct tring r;
	unsigned int i;
	int fd;

	if (dring_flags(c, &r, 16, 0))
		return;
	fd = dtmpfile(c, FSZ, 7);
	for (i = 0; i < 16; i++)
		tring_prep_rw(tring_get_sqe(&r), i & 1 ? IORING_OP_READ :
			      IORING_OP_WRITE, fd, buf + 512 * i, 512,
			      (uint64_t)i * 600, i);
	drec_int(c, tring_submit_and_wait(&r, 16), "submit 16 rw");
	dreap(c, &r, 16, false, "16 rw");
	close(fd);
	free(buf);
	tring_exit(&r);
}

/*
 * The iovec array is consumed at submission (SUBMIT_STABLE): rewriting it
 * right after enter returns must not change what an in-flight WRITEV (on
 * the kernel, ext4 buffered writes run in io-wq) writes.
 */
static void sc_iovec_stable(struct dctx *c)
{
	char a[64], b[64], rb[64];
	struct iovec iov[2];
	struct tring r;
	int fd, i;

	if (dring_flags(c, &r, 16, 0))
		return;
	fd = dtmpfile(c, 4096, 1);
	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	for (i = 0; i < 8; i++) {
		iov[0].iov_base = a;
		iov[0].iov_len = 32;
		iov[1].iov_base = a + 32;
		iov[1].iov_len = 32;
		tring_prep_rw(tring_get_sqe(&r), IORING_OP_WRITEV, fd, iov, 2,
			      (uint64_t)i * 64, i);
		tring_submit(&r);
		/* point the array elsewhere and shrink it */
		iov[0].iov_base = b;
		iov[0].iov_len = 1;
		iov[1].iov_base = dunmapped_addr();
		iov[1].iov_len = 5;
	}
	dreap(c, &r, 8, false, "writevs");
	for (i = 0; i < 8; i++) {
		drec_int(c, pread(fd, rb, 64, i * 64) == 64 &&
			 !memcmp(rb, a, 64), "write %d wrote the original", i);
	}
	close(fd);
	tring_exit(&r);
}

/*
 * The ring's own fd as the file of I/O: an io_uring file has no
 * read_iter/write_iter (the rw ops fail -EINVAL) and is no socket (the
 * network ops: -ENOTSOCK); uuring's ring fd is a socket underneath, which
 * must not show.  A read first waits for the file to be readable (the
 * ring's CQ not empty, io_file_supports_nowait), then fails.
 */
static void sc_ring_fd_as_file(struct dctx *c)
{
	char buf[64] = { 0 };
	struct iovec iov = { buf, sizeof(buf) };
	struct io_uring_sqe s;
	struct tcqe q[4];
	struct tring r;

	if (dring_flags(c, &r, 16, 0))
		return;
	s = mk(IORING_OP_WRITE, r.fd, buf, 64, 0, 1);
	drun1_sqe(c, &r, &s, "write ring fd");
	s = mk(IORING_OP_WRITEV, r.fd, &iov, 1, 0, 2);
	drun1_sqe(c, &r, &s, "writev ring fd");
	s = mk(IORING_OP_RECV, r.fd, buf, 64, 0, 3);
	drun1_sqe(c, &r, &s, "recv ring fd");
	s = mk(IORING_OP_SEND, r.fd, buf, 64, 0, 4);
	drun1_sqe(c, &r, &s, "send ring fd");
	/* the CQ is empty: the read waits for a CQE, then fails (not on
	 * DEFER_TASKRUN, where the kernel's ring fd wakes its pollers when
	 * its own task_work runs: timing) */
	if (!(r.flags & IORING_SETUP_DEFER_TASKRUN)) {
		s = mk(IORING_OP_READ, r.fd, buf, 64, 0, 5);
		memcpy(tring_get_sqe(&r), &s, sizeof(s));
		drec_int(c, tring_submit(&r), "read ring fd");
		drec_int(c, tring_wait(&r, 1, 50000000LL),
			 "read ring fd: 50 ms");
		tring_prep_nop(tring_get_sqe(&r), 6);
		drec_int(c, tring_submit(&r), "nop");
		dreapn(c, &r, 2, false, "the nop, then the read");
	}
	/* a CQE waiting: the reads fail at once */
	tring_prep_nop(tring_get_sqe(&r), 7);
	drec_int(c, tring_submit(&r), "nop left in the CQ");
	tring_wait(&r, 1, 1000000000LL);
	s = mk(IORING_OP_READ, r.fd, buf, 64, -1ULL, 8);
	memcpy(tring_get_sqe(&r), &s, sizeof(s));
	s = mk(IORING_OP_READV, r.fd, &iov, 1, 0, 9);
	memcpy(tring_get_sqe(&r), &s, sizeof(s));
	drec_int(c, tring_submit(&r), "read and readv, CQ not empty");
	drec_int(c, (long)tring_reap_wait(&r, q, 3, 1000000000LL),
		 "their CQEs and the nop's");
	drec_cqes(c, q, 3, false, "reads on a ring fd with a CQE waiting");
	tring_exit(&r);
}

/*
 * DEFER_TASKRUN: a read on the ring's own fd parked (CQ empty) is woken
 * by a CQE of its own batch; the kernel's retry (and its -EINVAL) is the
 * submitter's task_work, run at its next GETEVENTS, so an ASYNC_CANCEL
 * submitted before that still finds the read: -ECANCELED.  The pause lets
 * a readiness engine that retried at the wakeup show it.
 */
static void sc_ring_fd_read_defer_cancel(struct dctx *c)
{
	char buf[64] = { 0 };
	struct io_uring_sqe s, *sqe;
	struct tring r;

	if (dring_flags(c, &r, 16, IORING_SETUP_DEFER_TASKRUN |
			IORING_SETUP_SINGLE_ISSUER))
		return;
	s = mk(IORING_OP_READ, r.fd, buf, 64, 0, 1);
	memcpy(tring_get_sqe(&r), &s, sizeof(s));
	tring_prep_nop(tring_get_sqe(&r), 2);
	drec_int(c, tring_submit(&r), "read ring fd and a nop");
	usleep(20000);
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 3);
	sqe->addr = 1;
	drec_int(c, tring_submit(&r), "cancel the read");
	dreapn(c, &r, 3, false, "read cancelled before GETEVENTS");
	tring_exit(&r);
}

/*
 * IOSQE_ASYNC read on the ring's own fd, CQ empty: the kernel's io-wq
 * issues it non-blocking (io_wq_submit_work: REQ_F_FORCE_ASYNC on a file
 * that can be polled), which arms a poll on the ring's POLLIN.  Whether a
 * CQE then retries it at once (-EINVAL) or leaves it for the cancel
 * (-ECANCELED) is timing on the kernel (DEFER_TASKRUN: always the
 * latter); it never reads anything.  A cancel that meets the retry
 * in an io-wq worker answers -EALREADY.  uuring punts with a dup of the fd,
 * which must still be known as the ring's: not the socket's readiness
 * byte (res 1).
 */
static void sc_ring_fd_read_async(struct dctx *c)
{
	char buf[64] = { 0 };
	struct io_uring_sqe s, *sqe;
	struct tcqe q[4];
	struct tring r;
	unsigned int n, k;
	int read_res = 1, nop_res = 1, cancel_res = 1;

	if (dring_flags(c, &r, 16, 0))
		return;
	s = mk(IORING_OP_READ, r.fd, buf, 64, 0, 1);
	s.flags = IOSQE_ASYNC;
	memcpy(tring_get_sqe(&r), &s, sizeof(s));
	drec_int(c, tring_submit(&r), "async read ring fd");
	drec_int(c, tring_wait(&r, 1, 50000000LL), "read ring fd: 50 ms");
	tring_prep_nop(tring_get_sqe(&r), 2);
	drec_int(c, tring_submit(&r), "nop");
	n = tring_reap_wait(&r, q, 1, 1000000000LL);
	sqe = tring_get_sqe(&r);
	tring_prep_rw(sqe, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 3);
	sqe->addr = 1;
	drec_int(c, tring_submit(&r), "cancel the read");
	n += tring_reap_wait(&r, q + n, 3 - n, 1000000000LL);
	drec_int(c, n, "CQEs: the read, the nop, the cancel");
	for (k = 0; k < n; k++) {
		if (q[k].user_data == 1)
			read_res = q[k].res;
		else if (q[k].user_data == 2)
			nop_res = q[k].res;
		else
			cancel_res = q[k].res;
	}
	dnote(c, "read %d, cancel %d", read_res, cancel_res);
	drec_int(c, nop_res, "nop");
	drec_int(c, read_res == -EINVAL || read_res == -ECANCELED,
		 "read: -EINVAL or -ECANCELED");
	/* -EALREADY: the cancel met it in an io-wq worker, retried */
	drec_int(c, (read_res == -EINVAL && (cancel_res == -ENOENT ||
					     cancel_res == -EALREADY)) ||
		 (read_res == -ECANCELED && cancel_res == 0),
		 "the cancel agrees with the read");
	tring_exit(&r);
}

static const struct dscenario scenarios[] = {
	{ "iovec_stable", sc_iovec_stable, NULL },
	{ "read_ext4", sc_read_ext4, NULL },
	{ "read_tmpfs", sc_read_tmpfs, NULL },
	{ "file_pos", sc_file_pos, NULL },
	{ "write", sc_write, NULL },
	{ "rwf_flags", sc_rwf_flags, NULL },
	{ "rw_fields", sc_rw_fields, NULL },
	{ "vec", sc_vec, NULL },
	{ "fsync", sc_fsync, NULL },
	{ "bad_fd", sc_bad_fd, NULL },
	{ "bad_buf", sc_bad_buf, NULL },
	{ "pipe", sc_pipe, NULL },
	/* fixed (docs/compatibility.md #1): must match the kernel */
	{ "pipe_empty_read", sc_pipe_empty_read, NULL },
	{ "large", sc_large, NULL },
	{ "batch", sc_batch, NULL },
	{ "direct", sc_direct, NULL },
	{ "direct_fanotify", sc_direct_fanotify, NULL },
	{ "direct_fanotify_group", sc_direct_fanotify_group, NULL },
	{ "ring_fd_as_file", sc_ring_fd_as_file, NULL },
	{ "ring_fd_read_defer_cancel", sc_ring_fd_read_defer_cancel, NULL },
	{ "ring_fd_read_async", sc_ring_fd_read_async, NULL },
};

DTEST_MAIN(scenarios)
