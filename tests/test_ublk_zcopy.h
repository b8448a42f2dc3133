/* SPDX-License-Identifier: MIT */
/*
 * tests/test_ublk.c's zero-copy scenarios (included by it, after
 * test_ublk_ucopy.h, whose helpers they use): REGISTER_IO_BUF puts each
 * request into the server ring's sparse buffer table and
 * WRITE_FIXED/READ_FIXED move it to and from a memfd, with the errnos of
 * io_buffer_register_bvec, io_buffer_unregister_bvec and io_import_fixed
 * and the request's completion at its last buffer (ublk_io_release);
 * AUTO_BUF_REG registers and unregisters them itself
 * (__ublk_do_auto_buf_reg, ublk_handle_auto_buf_reg).  Default, SQPOLL
 * and DEFER_TASKRUN server rings.
 */
#ifndef UURING_TESTS_UBLK_ZCOPY_H
#define UURING_TESTS_UBLK_ZCOPY_H

#define ZC_NBUF 8

/* CQEs that came while another was waited for, served first */
struct ab_stash {
	struct io_uring_cqe c[UC_DEPTH + 4];
	unsigned int n;
};

static struct io_uring_cqe ab_next(struct tr *r, struct ab_stash *st)
{
	struct io_uring_cqe c;

	if (!st->n)
		return tr_wait(r);
	c = st->c[0];
	memmove(st->c, st->c + 1, --st->n * sizeof(c));
	return c;
}

static int ab_wait(struct tr *r, struct ab_stash *st)
{
	for (;;) {
		struct io_uring_cqe c = tr_wait(r);

		if (c.user_data == UC_UD_RW)
			return c.res;
		if (st->n < sizeof(st->c) / sizeof(st->c[0]))
			st->c[st->n++] = c;
	}
}


/* zero copy: the errnos, on the first write (its buffer at idx tag is
 * registered on return) */
static void zc_check_write(struct uc_srv *u, struct tr *r, unsigned int tag,
			   uint32_t len)
{
	int fd = u->s->chfd;
	uint8_t b[512];

	EQ_T(u, uc_buf(r, fd, UBLK_U_IO_REGISTER_IO_BUF, tag, tag), 0);
	/* io_buffer_register_bvec: the slot is taken; beyond the table */
	u->z_busy = uc_buf(r, fd, UBLK_U_IO_REGISTER_IO_BUF, tag, tag);
	/* a second buffer of the same request, and its removal */
	EQ_T(u, uc_buf(r, fd, UBLK_U_IO_REGISTER_IO_BUF, tag, ZC_NBUF - 1), 0);
	EQ_T(u, uc_buf(r, fd, UBLK_U_IO_UNREGISTER_IO_BUF, tag, ZC_NBUF - 1),
	     0);
	u->z_range_idx = uc_buf(r, fd, UBLK_U_IO_REGISTER_IO_BUF, tag,
				ZC_NBUF);
	/* ublk_ch_uring_cmd_local: the daemon's tag holding no request */
	u->z_idle_tag = uc_buf(r, fd, UBLK_U_IO_REGISTER_IO_BUF,
			       (tag + 1) % UC_DEPTH, ZC_NBUF - 1);
	/* io_import_fixed: a write's buffer is only written from */
	u->z_dir = uc_fixed(r, IORING_OP_READ_FIXED, u->bfd, 0, 512, 0, tag);
	/* io_import_fixed: the range leaves the request's bytes */
	u->z_beyond = uc_fixed(r, IORING_OP_WRITE_FIXED, u->bfd, 512, len, 0,
			       tag);
	/* ublk_check_and_get_req: no USER_COPY on this device */
	u->z_ucopy = uc_rw(r, IORING_OP_READ, fd, b, sizeof(b),
			   uc_pos(0, tag, 0), 0, 0);
	u->checked_write = true;
}

/*
 * The first read: its buffer is filled from a zero area of the backing
 * file, COMMITted while still registered, then filled with the data and
 * unregistered.  The request completes only with the last buffer
 * (ublk_io_release), so the reader sees the data, not the zeros.
 */
static void zc_late_read(struct uc_srv *u, struct tr *r, struct ab_stash *st,
			 unsigned int tag, uint32_t len, size_t off)
{
	struct ublksrv_io_cmd io = { .tag = (uint16_t)tag, .addr = tag };
	int chfd = u->s->chfd;

	tr_cmd(r, chfd, UBLK_U_IO_REGISTER_IO_BUF, &io, sizeof(io), UC_UD_RW);
	tr_submit(r, 1);
	UC_WANT(u, ab_wait(r, st), 0);
	uc_fixed_nowait(r, IORING_OP_READ_FIXED, u->bfd, 0, len,
			u->s->disk_bytes - len, tag);
	UC_WANT(u, ab_wait(r, st), (int)len);
	u->served++;
	io = (struct ublksrv_io_cmd){ .tag = (uint16_t)tag,
				      .result = (int)len };
	tr_cmd(r, chfd, UBLK_U_IO_COMMIT_AND_FETCH_REQ, &io, sizeof(io), tag);
	tr_submit(r, 1);
	uc_fixed_nowait(r, IORING_OP_READ_FIXED, u->bfd, 0, len, off, tag);
	UC_WANT(u, ab_wait(r, st), (int)len);
	io = (struct ublksrv_io_cmd){ .tag = (uint16_t)tag, .addr = tag };
	tr_cmd(r, chfd, UBLK_U_IO_UNREGISTER_IO_BUF, &io, sizeof(io),
	       UC_UD_RW);
	tr_submit(r, 1);
	UC_WANT(u, ab_wait(r, st), 0);
	u->late_checked = true;
}

static void *zc_main(void *arg)
{
	struct uc_srv *u = arg;
	struct srv *s = u->s;
	struct io_uring_rsrc_register rr = { .nr = ZC_NBUF,
					     .flags =
						     IORING_RSRC_REGISTER_SPARSE };
	unsigned int live = UC_DEPTH;
	struct ublksrv_io_cmd io = { 0 };
	struct ab_stash st = { .n = 0 };
	struct tr r;
	int chfd = s->chfd;

	if (tr_init(&r, 16, u->ring_flags) ||
	    uuring_register((unsigned int)r.fd, IORING_REGISTER_BUFFERS2, &rr,
			    sizeof(rr))) {
		u->errors++;
		return NULL;
	}
	for (unsigned int t = 0; t < UC_DEPTH; t++) {
		io = (struct ublksrv_io_cmd){ .tag = (uint16_t)t };
		tr_cmd(&r, chfd, UBLK_U_IO_FETCH_REQ, &io, sizeof(io), t);
	}
	tr_submit(&r, UC_DEPTH);
	while (live) {
		struct io_uring_cqe c = ab_next(&r, &st);
		unsigned int tag = (unsigned int)c.user_data;
		const struct ublksrv_io_desc *iod;
		uint32_t len, op;
		size_t off;
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
		op = iod->op_flags & 0xff;
		res = (int)len;
		if (op == UBLK_IO_OP_READ && !u->late_checked) {
			zc_late_read(u, &r, &st, tag, len, off);
			continue;
		}
		if (op == UBLK_IO_OP_WRITE || op == UBLK_IO_OP_READ) {
			if (op == UBLK_IO_OP_WRITE && !u->checked_write)
				zc_check_write(u, &r, tag, len);
			else
				EQ_T(u, uc_buf(&r, chfd,
					       UBLK_U_IO_REGISTER_IO_BUF, tag,
					       tag), 0);
			EQ_T(u, uc_fixed(&r, op == UBLK_IO_OP_WRITE ?
						     IORING_OP_WRITE_FIXED :
						     IORING_OP_READ_FIXED,
					 u->bfd, 0, len, off, tag), (int)len);
			EQ_T(u, uc_buf(&r, chfd, UBLK_U_IO_UNREGISTER_IO_BUF,
				       tag, tag), 0);
			if (!u->checked_read) {
				/* io_buffer_unregister_bvec: empty slot */
				u->z_unreg_again = uc_buf(
					&r, chfd, UBLK_U_IO_UNREGISTER_IO_BUF,
					tag, tag);
				u->checked_read = true;
			}
		} else {
			res = 0;
		}
		u->served++;
		io = (struct ublksrv_io_cmd){ .tag = (uint16_t)tag,
					      .result = res };
		tr_cmd(&r, chfd, UBLK_U_IO_COMMIT_AND_FETCH_REQ, &io,
		       sizeof(io), tag);
		tr_submit(&r, 1);
	}
	tr_exit(&r);
	return NULL;
}

static void zcopy_mode(unsigned int ring_flags, const char *mode)
{
	struct ublksrv_ctrl_dev_info i;
	struct uc_srv u = { .ring_flags = ring_flags };
	static uint8_t app_buf[4096];
	/* the probe ring's table: empty slots, and an application's buffer
	 * at the last */
	struct iovec tbl[ZC_NBUF] = { [ZC_NBUF - 1] = { app_buf,
							sizeof(app_buf) } };
	struct io_uring_rsrc_register rr = { .nr = ZC_NBUF,
					     .data = (uintptr_t)tbl };
	struct client cl;
	struct srv s;
	struct tr r, pr;
	pthread_t th;
	int cfd = uuring_ublk_open("/dev/ublk-control", O_RDWR);

	fprintf(stderr, "  server ring: %s\n", mode);
	u.bfd = memfd_create("zc-backing", 0);
	if (cfd < 0 || u.bfd < 0 || ftruncate(u.bfd, 8 << 20) ||
	    tr_init(&r, 8, IORING_SETUP_SQE128) || tr_init(&pr, 8, 0) ||
	    uuring_register((unsigned int)pr.fd, IORING_REGISTER_BUFFERS2, &rr,
			    sizeof(rr))) {
		CHECK(0, "setup: control fd %d", cfd);
		return;
	}
	info_init(&i, 1, UC_DEPTH,
		  UBLK_F_SUPPORT_ZERO_COPY | UBLK_F_NEED_GET_DATA);
	EQ(add_dev(&r, cfd, &i), 0, "ublk_ctrl_add_dev with SUPPORT_ZERO_COPY");
	CHECK(i.flags & UBLK_F_SUPPORT_ZERO_COPY, "SUPPORT_ZERO_COPY kept");
	CHECK(!(i.flags & UBLK_F_NEED_GET_DATA),
	      "ublk_ctrl_add_dev: NEED_GET_DATA cleared with zero copy");
	memset(&s, 0, sizeof(s));
	s.id = (int)i.dev_id;
	s.nq = 1;
	s.depth = UC_DEPTH;
	s.disk_bytes = 8 << 20;
	if (set_basic(&r, cfd, s.id, s.disk_bytes >> 9) || srv_open(&s)) {
		CHECK(0, "device setup");
		return;
	}
	u.s = &s;
	pthread_create(&th, NULL, zc_main, &u);
	EQ(ctrl(&r, cfd, UBLK_U_CMD_START_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		(uint64_t)getpid()), 0, "ublk_ctrl_start_dev");
	/* ublk_register_io_buf from another task: no request held at the
	 * tag (no reference) */
	EQ(uc_buf(&pr, s.chfd, UBLK_U_IO_REGISTER_IO_BUF, 0, 0), -EINVAL,
	   "__ublk_check_and_get_req: REGISTER_IO_BUF of an idle tag");
	/* io_buffer_unregister_bvec: an empty slot, an application's
	 * buffer */
	EQ(uc_buf(&pr, s.chfd, UBLK_U_IO_UNREGISTER_IO_BUF, 0, 3), -EINVAL,
	   "io_buffer_unregister_bvec: empty slot");
	EQ(uc_buf(&pr, s.chfd, UBLK_U_IO_UNREGISTER_IO_BUF, 0, ZC_NBUF - 1),
	   -EBUSY, "io_buffer_unregister_bvec: not a driver's buffer");
	cl = (struct client){ .cpu = 0, .dev = s.id, .n = 20, .base = 0 };
	pthread_create(&cl.th, NULL, client_main, &cl);
	pthread_join(cl.th, NULL);
	EQ(cl.errors, 0, "zero copy: read back what was written");
	EQ(ctrl(&r, cfd, UBLK_U_CMD_STOP_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "ublk_ctrl_stop_dev");
	pthread_join(th, NULL);
	EQ(u.errors, 0, "zero-copy server errors");
	CHECK(u.served >= 40, "served %d", u.served);
	CHECK(u.checked_write && u.checked_read && u.late_checked,
	      "checks ran");
	EQ(u.z_busy, -EBUSY, "io_buffer_register_bvec: slot taken");
	EQ(u.z_range_idx, -EINVAL, "io_buffer_register_bvec: index >= nr");
	EQ(u.z_idle_tag, -EBUSY,
	   "ublk_ch_uring_cmd_local: daemon's tag not owned");
	EQ(u.z_dir, -EFAULT, "io_import_fixed: a write's buffer read into");
	EQ(u.z_beyond, -EFAULT, "io_import_fixed: range beyond the request");
	EQ(u.z_ucopy, -EACCES, "ublk_check_and_get_req: no USER_COPY");
	EQ(u.z_unreg_again, -EINVAL, "io_buffer_unregister_bvec: unregistered");
	srv_close(&s);
	EQ(ctrl(&r, cfd, UBLK_U_CMD_DEL_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "ublk_ctrl_del_dev");
	close(u.bfd);
	tr_exit(&pr);
	tr_exit(&r);
	uuring_close(cfd);
}

static void scenario_zcopy(void)
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
	CHECK(features & UBLK_F_SUPPORT_ZERO_COPY,
	      "SUPPORT_ZERO_COPY advertised: %llx",
	      (unsigned long long)features);
	tr_exit(&r);
	uuring_close(cfd);
	zcopy_mode(0, "default");
	zcopy_mode(IORING_SETUP_SQPOLL, "SQPOLL");
	zcopy_mode(IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER,
		   "DEFER_TASKRUN");
}

/* ---- AUTO_BUF_REG ---- */

/* a FETCH or COMMIT whose sqe->addr is a struct ublk_auto_buf_reg: the
 * whole SQE is written before the tail's release store publishes it (an
 * SQ thread may take it at once) */
static void ab_cmd(struct tr *r, int chfd, uint32_t op,
		   const struct ublksrv_io_cmd *io, uint64_t ud, uint64_t reg)
{
	unsigned int t = atomic_load_explicit(r->sq_tail, memory_order_relaxed);
	struct io_uring_sqe *sqe =
		(struct io_uring_sqe *)(r->sqes +
					(t & r->sq_mask) * r->sqe_size);

	memset(sqe, 0, r->sqe_size);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = chfd;
	sqe->cmd_op = op;
	sqe->addr = reg;
	sqe->user_data = ud;
	memcpy(sqe->cmd, io, sizeof(*io));
	atomic_store_explicit(r->sq_tail, t + 1, memory_order_release);
}

static uint64_t ab_reg(unsigned int idx, unsigned int flags)
{
	return (uint64_t)idx | (uint64_t)flags << 16;
}

struct ab_srv {
	struct srv *s;
	unsigned int ring_flags;
	int bfd, errors, served;
	int bad_reserved, fallback_seen, released, released_bad, dir;
	bool dir_checked;
};

#define AB_WANT(a, got, want)                                            \
	do {                                                             \
		int g_ = (got);                                          \
		if (g_ != (want)) {                                      \
			fprintf(stderr, "autobuf %s: got %d want %d\n", #got, \
				g_, (int)(want));                        \
			(a)->errors++;                                   \
		}                                                        \
	} while (0)

static void *ab_main(void *arg)
{
	struct ab_srv *a = arg;
	struct srv *s = a->s;
	struct io_uring_rsrc_register rr = { .nr = ZC_NBUF,
					     .flags =
						     IORING_RSRC_REGISTER_SPARSE };
	unsigned int cur[UC_DEPTH], live = UC_DEPTH;
	struct ublksrv_io_cmd io = { 0 };
	struct ab_stash st = { .n = 0 };
	struct tr r;
	int chfd = s->chfd;

	if (tr_init(&r, 16, a->ring_flags) ||
	    uuring_register((unsigned int)r.fd, IORING_REGISTER_BUFFERS2, &rr,
			    sizeof(rr))) {
		a->errors++;
		return NULL;
	}
	/* ublk_set_auto_buf_reg: reserved bits */
	ab_cmd(&r, chfd, UBLK_U_IO_FETCH_REQ, &io, UC_UD_RW, 1ULL << 32);
	tr_submit(&r, 1);
	a->bad_reserved = ab_wait(&r, &st);
	for (unsigned int t = 0; t < UC_DEPTH; t++) {
		io = (struct ublksrv_io_cmd){ .tag = (uint16_t)t };
		/* tag 0 names an index beyond the table, with FALLBACK */
		cur[t] = t ? t : ZC_NBUF;
		ab_cmd(&r, chfd, UBLK_U_IO_FETCH_REQ, &io, t,
		       ab_reg(cur[t], t ? 0 : UBLK_AUTO_BUF_REG_FALLBACK));
	}
	tr_submit(&r, UC_DEPTH);
	while (live) {
		struct io_uring_cqe c = ab_next(&r, &st);
		unsigned int tag = (unsigned int)c.user_data, idx, next;
		const struct ublksrv_io_desc *iod;
		uint32_t len, op;
		bool manual;
		size_t off;
		int res;

		if (c.res == UBLK_IO_RES_ABORT || c.res < 0 ||
		    tag >= UC_DEPTH) {
			if (c.res != UBLK_IO_RES_ABORT)
				a->errors++;
			live--;
			continue;
		}
		iod = &s->iod[0][tag];
		off = (size_t)iod->start_sector << 9;
		len = iod->nr_sectors << 9;
		op = iod->op_flags & 0xff;
		res = (int)len;
		idx = cur[tag];
		manual = iod->op_flags & UBLK_IO_F_NEED_REG_BUF;
		if (manual) {
			/* ublk_auto_buf_reg_fallback: registered by hand */
			a->fallback_seen++;
			idx = tag;
			tr_cmd(&r, chfd, UBLK_U_IO_REGISTER_IO_BUF,
			       &(struct ublksrv_io_cmd){ .tag = (uint16_t)tag,
							 .addr = idx },
			       sizeof(io), UC_UD_RW);
			tr_submit(&r, 1);
			AB_WANT(a, ab_wait(&r, &st), 0);
		}
		if (op == UBLK_IO_OP_WRITE && !a->dir_checked && !manual) {
			/* io_import_fixed: a write's buffer is not read into */
			uc_fixed_nowait(&r, IORING_OP_READ_FIXED, a->bfd, 0,
					512, 0, idx);
			a->dir = ab_wait(&r, &st);
			a->dir_checked = true;
		}
		if (op == UBLK_IO_OP_WRITE || op == UBLK_IO_OP_READ) {
			uc_fixed_nowait(&r, op == UBLK_IO_OP_WRITE ?
						    IORING_OP_WRITE_FIXED :
						    IORING_OP_READ_FIXED,
					a->bfd, 0, len, off, idx);
			AB_WANT(a, ab_wait(&r, &st), (int)len);
		} else {
			res = 0;
		}
		if (manual) {
			tr_cmd(&r, chfd, UBLK_U_IO_UNREGISTER_IO_BUF,
			       &(struct ublksrv_io_cmd){ .tag = (uint16_t)tag,
							 .addr = idx },
			       sizeof(io), UC_UD_RW);
			tr_submit(&r, 1);
			AB_WANT(a, ab_wait(&r, &st), 0);
		}
		a->served++;
		/* the next request of this tag at the other index of two */
		next = idx == tag ? tag + UC_DEPTH : tag;
		cur[tag] = next;
		io = (struct ublksrv_io_cmd){ .tag = (uint16_t)tag,
					      .result = res };
		ab_cmd(&r, chfd, UBLK_U_IO_COMMIT_AND_FETCH_REQ, &io, tag,
		       ab_reg(next, 0));
		tr_submit(&r, 1);
		if (manual || (op != UBLK_IO_OP_WRITE && op != UBLK_IO_OP_READ))
			continue;
		/* ublk_handle_auto_buf_reg: the COMMIT unregistered it */
		tr_cmd(&r, chfd, UBLK_U_IO_UNREGISTER_IO_BUF,
		       &(struct ublksrv_io_cmd){ .tag = (uint16_t)tag,
						 .addr = idx },
		       sizeof(io), UC_UD_RW);
		tr_submit(&r, 1);
		if (ab_wait(&r, &st) == -EINVAL)
			a->released++;
		else
			a->released_bad++;
	}
	tr_exit(&r);
	return NULL;
}

static void autobuf_mode(unsigned int ring_flags, const char *mode)
{
	struct ublksrv_ctrl_dev_info i;
	struct ab_srv a = { .ring_flags = ring_flags };
	struct client cl;
	struct srv s;
	struct tr r;
	pthread_t th;
	int cfd = uuring_ublk_open("/dev/ublk-control", O_RDWR);

	fprintf(stderr, "  server ring: %s\n", mode);
	a.bfd = memfd_create("ab-backing", 0);
	if (cfd < 0 || a.bfd < 0 || ftruncate(a.bfd, 8 << 20) ||
	    tr_init(&r, 8, IORING_SETUP_SQE128)) {
		CHECK(0, "setup: control fd %d", cfd);
		return;
	}
	info_init(&i, 1, UC_DEPTH, UBLK_F_AUTO_BUF_REG |
				   UBLK_F_SUPPORT_ZERO_COPY |
				   UBLK_F_NEED_GET_DATA);
	EQ(add_dev(&r, cfd, &i), 0, "ublk_ctrl_add_dev with AUTO_BUF_REG");
	CHECK(i.flags & UBLK_F_AUTO_BUF_REG, "AUTO_BUF_REG kept");
	CHECK(!(i.flags & UBLK_F_NEED_GET_DATA),
	      "ublk_ctrl_add_dev: NEED_GET_DATA cleared with AUTO_BUF_REG");
	memset(&s, 0, sizeof(s));
	s.id = (int)i.dev_id;
	s.nq = 1;
	s.depth = UC_DEPTH;
	s.disk_bytes = 8 << 20;
	if (set_basic(&r, cfd, s.id, s.disk_bytes >> 9) || srv_open(&s)) {
		CHECK(0, "device setup");
		return;
	}
	a.s = &s;
	pthread_create(&th, NULL, ab_main, &a);
	EQ(ctrl(&r, cfd, UBLK_U_CMD_START_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		(uint64_t)getpid()), 0, "ublk_ctrl_start_dev");
	cl = (struct client){ .cpu = 0, .dev = s.id, .n = 20, .base = 0 };
	pthread_create(&cl.th, NULL, client_main, &cl);
	pthread_join(cl.th, NULL);
	EQ(cl.errors, 0, "AUTO_BUF_REG: read back what was written");
	EQ(ctrl(&r, cfd, UBLK_U_CMD_STOP_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "ublk_ctrl_stop_dev");
	pthread_join(th, NULL);
	EQ(a.errors, 0, "AUTO_BUF_REG server errors");
	CHECK(a.served >= 40, "served %d", a.served);
	EQ(a.bad_reserved, -EINVAL, "ublk_set_auto_buf_reg: reserved bits");
	EQ(a.fallback_seen, 1,
	   "ublk_auto_buf_reg_fallback: NEED_REG_BUF once (tag 0's index)");
	CHECK(a.dir_checked, "direction checked");
	EQ(a.dir, -EFAULT, "io_import_fixed: a write's buffer read into");
	CHECK(a.released >= 30, "buffers released at COMMIT: %d", a.released);
	EQ(a.released_bad, 0, "a buffer still registered after its COMMIT");
	srv_close(&s);
	EQ(ctrl(&r, cfd, UBLK_U_CMD_DEL_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "ublk_ctrl_del_dev");
	close(a.bfd);
	tr_exit(&r);
	uuring_close(cfd);
}

/* a server of one tag whose FETCH names an index beyond its table,
 * without FALLBACK: the CQE it got, if any (it must get only the
 * ABORT of STOP_DEV) */
struct ab_fail {
	struct srv *s;
	int first_res;
};

static void *ab_fail_main(void *arg)
{
	struct ab_fail *a = arg;
	struct io_uring_rsrc_register rr = { .nr = ZC_NBUF,
					     .flags =
						     IORING_RSRC_REGISTER_SPARSE };
	struct ublksrv_io_cmd io = { 0 };
	struct tr r;

	a->first_res = 1;
	if (tr_init(&r, 8, 0) ||
	    uuring_register((unsigned int)r.fd, IORING_REGISTER_BUFFERS2, &rr,
			    sizeof(rr)))
		return NULL;
	ab_cmd(&r, a->s->chfd, UBLK_U_IO_FETCH_REQ, &io, 0,
	       ab_reg(ZC_NBUF, 0));
	tr_submit(&r, 1);
	a->first_res = tr_wait(&r).res;
	tr_exit(&r);
	return NULL;
}

/* __ublk_do_auto_buf_reg without FALLBACK: the request fails, the
 * command stays armed for the next (which fails alike) */
static void autobuf_fail(void)
{
	struct ublksrv_ctrl_dev_info i;
	struct ab_fail a;
	struct srv s;
	struct tr r;
	pthread_t th;
	uint8_t b[4096] = { 1 };
	int cfd = uuring_ublk_open("/dev/ublk-control", O_RDWR);

	if (cfd < 0 || tr_init(&r, 8, IORING_SETUP_SQE128)) {
		CHECK(0, "setup: control fd %d", cfd);
		return;
	}
	info_init(&i, 1, 1, UBLK_F_AUTO_BUF_REG);
	EQ(add_dev(&r, cfd, &i), 0, "ublk_ctrl_add_dev with AUTO_BUF_REG");
	memset(&s, 0, sizeof(s));
	s.id = (int)i.dev_id;
	s.nq = 1;
	s.depth = 1;
	if (set_basic(&r, cfd, s.id, 8192) || srv_open(&s)) {
		CHECK(0, "device setup");
		return;
	}
	a.s = &s;
	pthread_create(&th, NULL, ab_fail_main, &a);
	EQ(ctrl(&r, cfd, UBLK_U_CMD_START_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		(uint64_t)getpid()), 0, "ublk_ctrl_start_dev");
	EQ(uuring_ublk_bdev_io(s.id, UBLK_IO_OP_WRITE, b, sizeof(b), 0), -EIO,
	   "__ublk_do_auto_buf_reg: registration failed, no FALLBACK");
	EQ(uuring_ublk_bdev_io(s.id, UBLK_IO_OP_READ, b, sizeof(b), 0), -EIO,
	   "__ublk_do_auto_buf_reg: the command stayed armed, fails again");
	EQ(ctrl(&r, cfd, UBLK_U_CMD_STOP_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "ublk_ctrl_stop_dev");
	pthread_join(th, NULL);
	EQ(a.first_res, UBLK_IO_RES_ABORT,
	   "the server saw no request, only STOP_DEV's abort");
	srv_close(&s);
	EQ(ctrl(&r, cfd, UBLK_U_CMD_DEL_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "ublk_ctrl_del_dev");
	tr_exit(&r);
	uuring_close(cfd);
}

static void scenario_autobuf(void)
{
	autobuf_fail();
	autobuf_mode(0, "default");
	autobuf_mode(IORING_SETUP_SQPOLL, "SQPOLL");
	autobuf_mode(IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER,
		     "DEFER_TASKRUN");
}

#endif
