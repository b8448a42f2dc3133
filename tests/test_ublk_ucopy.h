/* SPDX-License-Identifier: MIT */
/*
 * tests/test_ublk.c's USER_COPY scenario (included by it, after
 * test_ublk_srv.h): a server that moves every request's data itself with
 * READ/WRITE SQEs on /dev/ublkcN at UBLKSRV_IO_BUF_OFFSET-encoded
 * offsets (plain, vectored, fixed file), on a default, an SQPOLL and a
 * DEFER_TASKRUN ring, and the errnos of ublk_drv's
 * ublk_check_and_get_req, ublk_check_fetch_buf and
 * ublk_check_commit_and_fetch.  Zero copy is test_ublk_zcopy.h's.
 */
#ifndef UURING_TESTS_UBLK_UCOPY_H
#define UURING_TESTS_UBLK_UCOPY_H

#include <sys/uio.h>

#define UC_DEPTH 4
#define UC_UD_RW 0x5157u

/* the USER_COPY offset of (q, tag, off) */
static uint64_t uc_pos(unsigned int q, unsigned int tag, uint64_t off)
{
	return UBLKSRV_IO_BUF_OFFSET + ((uint64_t)q << UBLK_QID_OFF) +
	       ((uint64_t)tag << UBLK_TAG_OFF) + off;
}

/* one READ/WRITE-family SQE on r, waited for: its result */
static int uc_rw(struct tr *r, uint8_t op, int fd, void *addr, uint32_t len,
		 uint64_t off, uint8_t sqe_flags, uint32_t rw_flags)
{
	unsigned int t = atomic_load_explicit(r->sq_tail, memory_order_relaxed);
	struct io_uring_sqe *sqe =
		(struct io_uring_sqe *)(r->sqes +
					(t & r->sq_mask) * r->sqe_size);
	struct io_uring_cqe c;

	memset(sqe, 0, r->sqe_size);
	sqe->opcode = op;
	sqe->fd = fd;
	sqe->flags = sqe_flags;
	sqe->addr = (uintptr_t)addr;
	sqe->len = len;
	sqe->off = off;
	sqe->rw_flags = (int)rw_flags;
	sqe->user_data = UC_UD_RW;
	atomic_store_explicit(r->sq_tail, t + 1, memory_order_release);
	tr_submit(r, 1);
	c = tr_wait(r);
	if (c.user_data != UC_UD_RW)
		return -10000; /* another CQE first: nothing else is pending */
	return c.res;
}

/* REGISTER_IO_BUF / UNREGISTER_IO_BUF of (queue 0, tag) at buffer idx,
 * waited for */
static int uc_buf(struct tr *r, int chfd, uint32_t op, unsigned int tag,
		  unsigned int idx)
{
	struct ublksrv_io_cmd io = { .tag = (uint16_t)tag, .addr = idx };
	struct io_uring_cqe c;

	tr_cmd(r, chfd, op, &io, sizeof(io), UC_UD_RW);
	tr_submit(r, 1);
	c = tr_wait(r);
	return c.user_data == UC_UD_RW ? c.res : -10000;
}

/* a READ_FIXED/WRITE_FIXED on the registered buffer idx, submitted */
static void uc_fixed_nowait(struct tr *r, uint8_t op, int fd, uint64_t addr,
			    uint32_t len, uint64_t off, unsigned int idx)
{
	unsigned int t = atomic_load_explicit(r->sq_tail, memory_order_relaxed);
	struct io_uring_sqe *sqe =
		(struct io_uring_sqe *)(r->sqes +
					(t & r->sq_mask) * r->sqe_size);

	memset(sqe, 0, r->sqe_size);
	sqe->opcode = op;
	sqe->fd = fd;
	sqe->addr = addr;
	sqe->len = len;
	sqe->off = off;
	sqe->buf_index = (uint16_t)idx;
	sqe->user_data = UC_UD_RW;
	atomic_store_explicit(r->sq_tail, t + 1, memory_order_release);
	tr_submit(r, 1);
}

/* ... and waited for */
static int uc_fixed(struct tr *r, uint8_t op, int fd, uint64_t addr,
		    uint32_t len, uint64_t off, unsigned int idx)
{
	unsigned int t = atomic_load_explicit(r->sq_tail, memory_order_relaxed);
	struct io_uring_sqe *sqe =
		(struct io_uring_sqe *)(r->sqes +
					(t & r->sq_mask) * r->sqe_size);
	struct io_uring_cqe c;

	memset(sqe, 0, r->sqe_size);
	sqe->opcode = op;
	sqe->fd = fd;
	sqe->addr = addr;
	sqe->len = len;
	sqe->off = off;
	sqe->buf_index = (uint16_t)idx;
	sqe->user_data = UC_UD_RW;
	atomic_store_explicit(r->sq_tail, t + 1, memory_order_release);
	tr_submit(r, 1);
	c = tr_wait(r);
	return c.user_data == UC_UD_RW ? c.res : -10000;
}

struct uc_srv {
	struct srv *s;
	unsigned int ring_flags;
	int errors, served;
	bool checked_write, checked_read;
	/* the errnos seen, for the checks after the join */
	int fetch_addr_res, commit_addr_res;
	int w_dir, w_off_end, w_off_beyond, w_qid, w_idle_tag, w_tag_range;
	int w_nowait, w_fixed_buf, r_dir, w_register;
	/* zero copy (zc_main) */
	int bfd;
	int z_busy, z_range_idx, z_idle_tag, z_dir, z_beyond, z_ucopy;
	int z_unreg_empty, z_unreg_again;
	bool late_checked;
};

#define EQ_T(t, got, want) UC_WANT(t, got, want)
#define UC_WANT(t, got, want)                                            \
	do {                                                             \
		if ((got) != (want)) {                                   \
			fprintf(stderr, "ucopy %s: got %d want %d\n", #got, \
				(int)(got), (int)(want));                \
			(t)->errors++;                                   \
		}                                                        \
	} while (0)

/* a WRITE request: its data read out of the request (pread), a quarter
 * plain, a quarter vectored, half through the fixed file 0 */
static void uc_serve_write(struct uc_srv *u, struct tr *r, unsigned int tag,
			   uint8_t *dst, uint32_t len)
{
	int fd = u->s->chfd;
	struct iovec iov[2] = { { dst + len / 4, len / 8 },
				{ dst + len / 4 + len / 8, len / 8 } };

	UC_WANT(u, uc_rw(r, IORING_OP_READ, fd, dst, len / 4, uc_pos(0, tag, 0),
			 0, 0), (int)(len / 4));
	UC_WANT(u, uc_rw(r, IORING_OP_READV, fd, iov, 2,
			 uc_pos(0, tag, len / 4), 0, 0), (int)(len / 4));
	UC_WANT(u, uc_rw(r, IORING_OP_READ, 0, dst + len / 2, len / 2,
			 uc_pos(0, tag, len / 2), IOSQE_FIXED_FILE, 0),
		(int)(len / 2));
}

/* the errnos, on the first write: the request is held by this server */
static void uc_check_write(struct uc_srv *u, struct tr *r, unsigned int tag,
			   uint32_t len, uint8_t *fixed_buf)
{
	int fd = u->s->chfd;
	uint8_t b[512];

	/* ublk_check_ubuf_dir: a write's data is read, not written */
	u->w_dir = uc_rw(r, IORING_OP_WRITE, fd, b, sizeof(b),
			 uc_pos(0, tag, 0), 0, 0);
	/* __ublk_check_and_get_req: offset > blk_rq_bytes; at the end,
	 * nothing is left to copy */
	u->w_off_end = uc_rw(r, IORING_OP_READ, fd, b, sizeof(b),
			     uc_pos(0, tag, len), 0, 0);
	u->w_off_beyond = uc_rw(r, IORING_OP_READ, fd, b, sizeof(b),
				uc_pos(0, tag, len + 512), 0, 0);
	/* ublk_check_and_get_req: q_id >= nr_hw_queues, tag >= depth */
	u->w_qid = uc_rw(r, IORING_OP_READ, fd, b, sizeof(b),
			 uc_pos(1, tag, 0), 0, 0);
	u->w_tag_range = uc_rw(r, IORING_OP_READ, fd, b, sizeof(b),
			       uc_pos(0, UC_DEPTH, 0), 0, 0);
	/* __ublk_check_and_get_req: a tag whose command waits (no request
	 * started, no reference) */
	u->w_idle_tag = uc_rw(r, IORING_OP_READ, fd, b, sizeof(b),
			      uc_pos(0, (tag + 1) % UC_DEPTH, 0), 0, 0);
	/* kiocb_set_rw_flags: the char device has no FMODE_NOWAIT */
	u->w_nowait = uc_rw(r, IORING_OP_READ, fd, b, sizeof(b),
			    uc_pos(0, tag, 0), 0, RWF_NOWAIT);
	/* ublk_check_and_get_req: a registered buffer is not user-backed */
	u->w_fixed_buf = uc_rw(r, IORING_OP_READ_FIXED, fd, fixed_buf, 512,
			       uc_pos(0, tag, 0), 0, 0);
	/* ublk_daemon_register_io_buf: no zero copy on this device */
	u->w_register = uc_buf(r, fd, UBLK_U_IO_REGISTER_IO_BUF, tag, 1);
	u->checked_write = true;
}

static void *uc_main(void *arg)
{
	struct uc_srv *u = arg;
	struct srv *s = u->s;
	static __thread uint8_t fixed_buf[4096];
	struct iovec fiov = { fixed_buf, sizeof(fixed_buf) };
	unsigned int live = UC_DEPTH;
	struct ublksrv_io_cmd io = { 0 };
	struct tr r;
	int chfd = s->chfd;

	if (tr_init(&r, 16, u->ring_flags) ||
	    uuring_register((unsigned int)r.fd, IORING_REGISTER_FILES, &chfd,
			    1) ||
	    uuring_register((unsigned int)r.fd, IORING_REGISTER_BUFFERS, &fiov,
			    1)) {
		u->errors++;
		return NULL;
	}
	/* ublk_check_fetch_buf: with USER_COPY no buffer may be given */
	io = (struct ublksrv_io_cmd){ .tag = 0, .addr = (uintptr_t)fixed_buf };
	tr_cmd(&r, chfd, UBLK_U_IO_FETCH_REQ, &io, sizeof(io), 0xfe7c);
	tr_submit(&r, 1);
	u->fetch_addr_res = tr_wait(&r).res;
	for (unsigned int t = 0; t < UC_DEPTH; t++) {
		io = (struct ublksrv_io_cmd){ .tag = (uint16_t)t };
		tr_cmd(&r, chfd, UBLK_U_IO_FETCH_REQ, &io, sizeof(io), t);
	}
	tr_submit(&r, UC_DEPTH);
	while (live) {
		struct io_uring_cqe c = tr_wait(&r);
		unsigned int tag = (unsigned int)c.user_data;
		const struct ublksrv_io_desc *iod;
		size_t off;
		uint32_t len;
		int res;

		if (c.res == UBLK_IO_RES_ABORT || c.res < 0 ||
		    tag >= UC_DEPTH) {
			if (c.res != UBLK_IO_RES_ABORT)
				u->errors++;
			live--;
			continue;
		}
		iod = &s->iod[0][tag];
		off = (size_t)iod->start_sector << 9;
		len = iod->nr_sectors << 9;
		res = (int)len;
		if (off + len > s->disk_bytes) {
			res = -EIO;
		} else if ((iod->op_flags & 0xff) == UBLK_IO_OP_WRITE) {
			if (!u->checked_write)
				uc_check_write(u, &r, tag, len, fixed_buf);
			uc_serve_write(u, &r, tag, s->disk + off, len);
		} else if ((iod->op_flags & 0xff) == UBLK_IO_OP_READ) {
			/* ublk_check_ubuf_dir: a read's data is written */
			if (!u->checked_read) {
				uint8_t b[512];

				u->r_dir = uc_rw(&r, IORING_OP_READ, chfd, b,
						 sizeof(b), uc_pos(0, tag, 0), 0,
						 0);
				u->checked_read = true;
			}
			UC_WANT(u, uc_rw(&r, IORING_OP_WRITE, chfd,
					 s->disk + off, len, uc_pos(0, tag, 0),
					 0, 0), (int)len);
		} else {
			res = 0;
		}
		u->served++;
		io = (struct ublksrv_io_cmd){ .tag = (uint16_t)tag,
					      .result = res };
		if (u->served == 1) {
			/* ublk_check_commit_and_fetch: no buffer either; the
			 * refused COMMIT leaves the request with the server */
			io.addr = (uintptr_t)fixed_buf;
			tr_cmd(&r, chfd, UBLK_U_IO_COMMIT_AND_FETCH_REQ, &io,
			       sizeof(io), 0xc0c0);
			tr_submit(&r, 1);
			u->commit_addr_res = tr_wait(&r).res;
			io.addr = 0;
		}
		tr_cmd(&r, chfd, UBLK_U_IO_COMMIT_AND_FETCH_REQ, &io,
		       sizeof(io), tag);
		tr_submit(&r, 1);
	}
	tr_exit(&r);
	return NULL;
}

static void ucopy_mode(unsigned int ring_flags, const char *mode)
{
	struct ublksrv_ctrl_dev_info i;
	struct uc_srv u = { .ring_flags = ring_flags };
	struct client cl;
	struct srv s;
	struct tr r, pr;
	pthread_t th;
	uint8_t b[512];
	int cfd = uuring_ublk_open("/dev/ublk-control", O_RDWR);

	fprintf(stderr, "  server ring: %s\n", mode);
	if (cfd < 0 || tr_init(&r, 8, IORING_SETUP_SQE128) ||
	    tr_init(&pr, 8, 0)) {
		CHECK(0, "setup: control fd %d", cfd);
		return;
	}
	info_init(&i, 1, UC_DEPTH, UBLK_F_USER_COPY | UBLK_F_NEED_GET_DATA);
	EQ(add_dev(&r, cfd, &i), 0, "ublk_ctrl_add_dev with USER_COPY");
	CHECK(i.flags & UBLK_F_USER_COPY, "USER_COPY kept: %llx",
	      (unsigned long long)i.flags);
	CHECK(!(i.flags & UBLK_F_NEED_GET_DATA),
	      "ublk_ctrl_add_dev: NEED_GET_DATA cleared with USER_COPY");
	memset(&s, 0, sizeof(s));
	s.id = (int)i.dev_id;
	s.nq = 1;
	s.depth = UC_DEPTH;
	s.disk_bytes = 8 << 20;
	s.disk = calloc(1, s.disk_bytes);
	if (set_basic(&r, cfd, s.id, s.disk_bytes >> 9) || srv_open(&s)) {
		CHECK(0, "device setup");
		return;
	}
	/* ublk_check_and_get_req: a device not started is DEAD */
	EQ(uc_rw(&pr, IORING_OP_READ, s.chfd, b, sizeof(b), uc_pos(0, 0, 0), 0,
		 0), -EACCES, "ublk_check_and_get_req: DEAD before START_DEV");
	u.s = &s;
	pthread_create(&th, NULL, uc_main, &u);
	EQ(ctrl(&r, cfd, UBLK_U_CMD_START_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		(uint64_t)getpid()), 0, "ublk_ctrl_start_dev");
	/* the probe ring's fd offset -1: the file position, 0, decodes to
	 * queue 4095 */
	EQ(uc_rw(&pr, IORING_OP_READ, s.chfd, b, sizeof(b), (uint64_t)-1, 0,
		 0), -EINVAL, "ublk_check_and_get_req: q_id of offset 0");
	cl = (struct client){ .cpu = 0, .dev = s.id, .n = 20, .base = 0 };
	pthread_create(&cl.th, NULL, client_main, &cl);
	pthread_join(cl.th, NULL);
	EQ(cl.errors, 0, "USER_COPY: read back what was written");
	EQ(ctrl(&r, cfd, UBLK_U_CMD_STOP_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "ublk_ctrl_stop_dev");
	pthread_join(th, NULL);
	EQ(u.errors, 0, "USER_COPY server errors");
	CHECK(u.served >= 40, "served %d", u.served);
	EQ(u.fetch_addr_res, -EINVAL, "ublk_check_fetch_buf: addr with USER_COPY");
	EQ(u.commit_addr_res, -EINVAL,
	   "ublk_check_commit_and_fetch: addr with USER_COPY");
	CHECK(u.checked_write && u.checked_read, "both directions checked");
	EQ(u.w_dir, -EACCES, "ublk_check_ubuf_dir: pwrite of a write");
	EQ(u.r_dir, -EACCES, "ublk_check_ubuf_dir: pread of a read");
	EQ(u.w_off_end, 0, "ublk_copy_user_pages: at the request's end");
	EQ(u.w_off_beyond, -EINVAL,
	   "__ublk_check_and_get_req: offset beyond the request");
	EQ(u.w_qid, -EINVAL, "ublk_check_and_get_req: q_id out of range");
	EQ(u.w_tag_range, -EINVAL, "ublk_check_and_get_req: tag >= depth");
	EQ(u.w_idle_tag, -EINVAL,
	   "__ublk_check_and_get_req: a tag holding no request");
	EQ(u.w_nowait, -EOPNOTSUPP, "kiocb_set_rw_flags: RWF_NOWAIT");
	EQ(u.w_fixed_buf, -EACCES,
	   "ublk_check_and_get_req: a registered buffer");
	EQ(u.w_register, -EINVAL,
	   "ublk_daemon_register_io_buf: no SUPPORT_ZERO_COPY");
	/* ublk_check_and_get_req: stopped, DEAD */
	EQ(uc_rw(&pr, IORING_OP_READ, s.chfd, b, sizeof(b), uc_pos(0, 0, 0), 0,
		 0), -EACCES, "ublk_check_and_get_req: DEAD after STOP_DEV");
	srv_close(&s);
	EQ(ctrl(&r, cfd, UBLK_U_CMD_DEL_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "ublk_ctrl_del_dev");
	free(s.disk);
	tr_exit(&pr);
	tr_exit(&r);
	uuring_close(cfd);
}

static void scenario_ucopy(void)
{
	struct tr r;
	uint64_t features = 0;
	int cfd = uuring_ublk_open("/dev/ublk-control", O_RDWR);

	if (cfd < 0 || tr_init(&r, 8, IORING_SETUP_SQE128)) {
		CHECK(0, "setup: control fd %d", cfd);
		return;
	}
	EQ(ctrl(&r, cfd, UBLK_U_CMD_GET_FEATURES, 0, 0xffff, &features,
		sizeof(features), 0), 0, "GET_FEATURES");
	CHECK(features & UBLK_F_USER_COPY, "USER_COPY advertised: %llx",
	      (unsigned long long)features);
	tr_exit(&r);
	uuring_close(cfd);
	ucopy_mode(0, "default");
	ucopy_mode(IORING_SETUP_SQPOLL, "SQPOLL");
	ucopy_mode(IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER,
		   "DEFER_TASKRUN");
}

#endif
