// SPDX-License-Identifier: MIT
/*
 * Differential tests: read/write attributes (IORING_FEAT_RW_ATTR, the
 * kernel's __io_prep_rw, io_prep_rw_pi and io_rw_init_file): the SQE's
 * attr_type_mask and attr_ptr on READ, WRITE, READV, WRITEV and their
 * fixed forms.  An unknown attribute bit, an unreadable or reserved-field
 * PI attribute fail at prep; a well-formed PI attribute reaches the
 * file, which must take protection information (buffered files, pipes,
 * O_DIRECT files without integrity metadata do not).  A mask of 0 leaves
 * attr_ptr unread.  The FEAT bit is compared too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"

#define FSZ 16384

static struct io_uring_sqe attr_sqe(int op, int fd, const void *addr,
				    unsigned int len, uint64_t ud,
				    uint64_t mask, const void *attr)
{
	struct io_uring_sqe s = tsqe(op, fd, (uint64_t)(uintptr_t)addr, len,
				     0, ud);

	s.attr_type_mask = mask;
	s.attr_ptr = (uint64_t)(uintptr_t)attr;
	return s;
}

static void sc_feat(struct dctx *c)
{
	struct io_uring_params p;
	struct tring r;

	memset(&p, 0, sizeof(p));
	if (dring(c, &r, 4, &p, "ring setup"))
		return;
	drec_int(c, !!(p.features & IORING_FEAT_RW_ATTR), "FEAT_RW_ATTR");
	tring_exit(&r);
}

/* every PI case on one file and one opcode */
static void pi_cases(struct dctx *c, struct tring *r, int op, int fd,
		     void *buf, const char *what)
{
	struct io_uring_attr_pi pi, bad;
	struct iovec iov = { buf, 4096 };
	bool vec = op == IORING_OP_READV || op == IORING_OP_WRITEV;
	const void *addr = vec ? (const void *)&iov : buf;
	unsigned int len = vec ? 1 : 4096;
	char label[128], meta[64];
	struct io_uring_sqe s;

	memset(&pi, 0, sizeof(pi));
	pi.addr = (uint64_t)(uintptr_t)meta;
	pi.len = sizeof(meta);
	bad = pi;
	bad.rsvd = 1;

	s = attr_sqe(op, fd, addr, len, 1, 0, dunmapped_addr());
	snprintf(label, sizeof(label), "%s: mask 0, attr_ptr unmapped", what);
	drun1_sqe(c, r, &s, label);
	s = attr_sqe(op, fd, addr, len, 2, 1u << 1, &pi);
	snprintf(label, sizeof(label), "%s: unknown attribute bit", what);
	drun1_sqe(c, r, &s, label);
	s = attr_sqe(op, fd, addr, len, 3, IORING_RW_ATTR_FLAG_PI | 1u << 5,
		     &pi);
	snprintf(label, sizeof(label), "%s: PI and an unknown bit", what);
	drun1_sqe(c, r, &s, label);
	s = attr_sqe(op, fd, addr, len, 4, IORING_RW_ATTR_FLAG_PI,
		     dunmapped_addr());
	snprintf(label, sizeof(label), "%s: PI unmapped", what);
	drun1_sqe(c, r, &s, label);
	s = attr_sqe(op, fd, addr, len, 5, IORING_RW_ATTR_FLAG_PI,
		     dprot_none_page());
	snprintf(label, sizeof(label), "%s: PI unreadable", what);
	drun1_sqe(c, r, &s, label);
	s = attr_sqe(op, fd, addr, len, 6, IORING_RW_ATTR_FLAG_PI, &bad);
	snprintf(label, sizeof(label), "%s: PI rsvd set", what);
	drun1_sqe(c, r, &s, label);
	s = attr_sqe(op, fd, addr, len, 7, IORING_RW_ATTR_FLAG_PI, &pi);
	snprintf(label, sizeof(label), "%s: PI well formed", what);
	drun1_sqe(c, r, &s, label);
	/* the file's checks come first: its direction, the RWF flags */
	s = attr_sqe(op, fd, addr, len, 10, IORING_RW_ATTR_FLAG_PI, &pi);
	s.rw_flags = 1u << 30;
	snprintf(label, sizeof(label), "%s: PI, unknown RWF flag", what);
	drun1_sqe(c, r, &s, label);
	s = attr_sqe(op, -1, addr, len, 11, IORING_RW_ATTR_FLAG_PI, &pi);
	snprintf(label, sizeof(label), "%s: PI, fd -1", what);
	drun1_sqe(c, r, &s, label);
	/* a prep error in a chain cancels the rest, an issue error too */
	s = attr_sqe(op, fd, addr, len, 8, IORING_RW_ATTR_FLAG_PI, &pi);
	s.flags = IOSQE_IO_LINK;
	*tring_get_sqe(r) = s;
	tprep_nop(r, 9, 0);
	snprintf(label, sizeof(label), "%s: PI linked to a NOP", what);
	dsubmit_sqp(c, r, label);
	dreapn(c, r, 2, true, label);
}

static void sc_pi(struct dctx *c)
{
	static const int ops[] = { IORING_OP_READ, IORING_OP_WRITE,
				   IORING_OP_READV, IORING_OP_WRITEV };
	static const char *const names[] = { "READ", "WRITE", "READV",
					     "WRITEV" };
	char label[64], path[64];
	struct tring r;
	void *buf;
	int fd, dfd, p[2];

	if (posix_memalign(&buf, 4096, 4096))
		return;
	memset(buf, 'x', 4096);
	if (dring_flags(c, &r, 16, 0) || pipe(p)) {
		free(buf);
		return;
	}
	/* the reads without attributes find data in the pipe */
	for (int i = 0; i < 2; i++)
		drec_int(c, write(p[1], buf, 4096), "fill the pipe");
	fd = dtmpfile(c, FSZ, 7);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	dfd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	for (unsigned int i = 0; i < 4; i++) {
		bool wr = ops[i] == IORING_OP_WRITE ||
			  ops[i] == IORING_OP_WRITEV;

		snprintf(label, sizeof(label), "%s buffered", names[i]);
		pi_cases(c, &r, ops[i], fd, buf, label);
		snprintf(label, sizeof(label), "%s pipe", names[i]);
		pi_cases(c, &r, ops[i], wr ? p[1] : p[0], buf, label);
		snprintf(label, sizeof(label), "%s pipe, other end", names[i]);
		pi_cases(c, &r, ops[i], wr ? p[0] : p[1], buf, label);
		if (dfd >= 0) {
			snprintf(label, sizeof(label), "%s O_DIRECT",
				 names[i]);
			pi_cases(c, &r, ops[i], dfd, buf, label);
		}
	}
	drec_int(c, dfd >= 0, "O_DIRECT opened");
	if (dfd >= 0)
		close(dfd);
	close(fd);
	tclose2(p);
	tring_exit(&r);
	free(buf);
}

/* READ_FIXED and WRITE_FIXED from a registered buffer */
static void sc_pi_fixed(struct dctx *c)
{
	struct io_uring_attr_pi pi;
	struct io_uring_sqe s;
	struct iovec iov;
	struct tring r;
	char meta[64];
	void *buf;
	int fd;

	if (posix_memalign(&buf, 4096, 4096))
		return;
	if (dring_flags(c, &r, 16, 0)) {
		free(buf);
		return;
	}
	iov.iov_base = buf;
	iov.iov_len = 4096;
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_BUFFERS,
				    &iov, 1),
		 "register a buffer");
	fd = dtmpfile(c, FSZ, 7);
	memset(&pi, 0, sizeof(pi));
	pi.addr = (uint64_t)(uintptr_t)meta;
	pi.len = sizeof(meta);
	s = attr_sqe(IORING_OP_READ_FIXED, fd, buf, 4096, 1,
		     IORING_RW_ATTR_FLAG_PI, &pi);
	drun1_sqe(c, &r, &s, "READ_FIXED PI buffered");
	s = attr_sqe(IORING_OP_WRITE_FIXED, fd, buf, 4096, 2, 1u << 3, &pi);
	drun1_sqe(c, &r, &s, "WRITE_FIXED unknown bit");
	s = attr_sqe(IORING_OP_READ_FIXED, fd, buf, 4096, 3, 0, NULL);
	drun1_sqe(c, &r, &s, "READ_FIXED no attribute");
	close(fd);
	tring_exit(&r);
	free(buf);
}

static const struct dscenario scenarios[] = {
	{ "feat", sc_feat, NULL },
	{ "pi", sc_pi, NULL },
	{ "pi_fixed", sc_pi_fixed, NULL },
};

DTEST_MAIN(scenarios)
