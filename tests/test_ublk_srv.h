/* SPDX-License-Identifier: MIT */
/*
 * tests/test_ublk.c's server scenarios (included by it: they use its ring
 * helpers and checks): a memory-backed ublk server with one thread and
 * ring per queue, per-io daemons, and a server process that dies.
 */
#ifndef UURING_TESTS_UBLK_SRV_H
#define UURING_TESTS_UBLK_SRV_H

#define SRV_MAX_TAGS 256
#define SRV_BUF (64 << 10)

struct srv {
	int id, chfd;
	unsigned int nq, depth;
	uint8_t *disk;
	size_t disk_bytes, qlen;
	const struct ublksrv_io_desc *iod[2];
	atomic_int b_served;        /* perio: thread B's count */
};

struct srv_thread {
	struct srv *s;
	pthread_t th;
	unsigned int slots[SRV_MAX_TAGS]; /* q << 16 | tag */
	unsigned int nslots;
	int served, errors;
	bool wait_for_b;            /* perio: thread A holds its first
				     * request until B served one */
	bool is_b;
	int foreign_commit_res;     /* perio: COMMIT of another's tag */
	bool try_foreign;
	bool die_on_request;        /* exit: the server dies */
	bool get_data;              /* getdata: FETCH without a buffer */
	int get_data_seen;          /* UBLK_IO_RES_NEED_GET_DATA CQEs */
	int bad_get_data_res;       /* NEED_GET_DATA on a read's slot */
	int fetched_pipe;
	bool null_target;           /* seed004: no data, result = length */
	double cpu_s;               /* the thread's CPU time at its end */
	bool busy_commit;           /* io: COMMIT of its own idle tag */
	int busy_commit_res;
	uint8_t *bufs[SRV_MAX_TAGS];
};

static int srv_open(struct srv *s)
{
	char path[32];

	snprintf(path, sizeof(path), "/dev/ublkc%d", s->id);
	s->chfd = uuring_ublk_open(path, O_RDWR);
	if (s->chfd < 0)
		return s->chfd;
	s->qlen = ((size_t)s->depth * 24 + 4095) & ~(size_t)4095;
	for (unsigned int q = 0; q < s->nq; q++) {
		void *p = uuring_mmap(NULL, s->qlen, PROT_READ, MAP_SHARED,
				      s->chfd, (off_t)q * (96 << 10));

		if ((intptr_t)p < 0)
			return (int)(intptr_t)p;
		s->iod[q] = p;
	}
	return 0;
}

static void srv_close(struct srv *s)
{
	for (unsigned int q = 0; q < s->nq; q++)
		munmap((void *)s->iod[q], s->qlen);
	uuring_close(s->chfd);
}

static int serve_one(struct srv_thread *t, unsigned int q, unsigned int tag,
		     uint8_t *buf)
{
	const struct ublksrv_io_desc *iod = &t->s->iod[q][tag];
	size_t off = (size_t)iod->start_sector << 9;
	size_t len = (size_t)iod->nr_sectors << 9;

	if (t->null_target)
		return (iod->op_flags & 0xff) <= UBLK_IO_OP_WRITE ? (int)len : 0;
	if (off + len > t->s->disk_bytes || len > SRV_BUF)
		return -EIO;
	switch (iod->op_flags & 0xff) {
	case UBLK_IO_OP_READ:
		memcpy(buf, t->s->disk + off, len);
		return (int)len;
	case UBLK_IO_OP_WRITE:
		memcpy(t->s->disk + off, buf, len);
		return (int)len;
	default:
		return 0;
	}
}

static void *srv_main(void *arg)
{
	struct srv_thread *t = arg;
	unsigned int live = t->nslots;
	struct ublksrv_io_cmd io;
	struct timespec ts;
	unsigned int entries = 64;
	struct tr r;

	while (entries < t->nslots)
		entries *= 2;
	if (tr_init(&r, entries, 0)) {
		t->errors++;
		return NULL;
	}
	for (unsigned int i = 0; i < t->nslots; i++) {
		io = (struct ublksrv_io_cmd){
			.q_id = (uint16_t)(t->slots[i] >> 16),
			.tag = (uint16_t)t->slots[i],
			.addr = t->get_data ? 0 : (uintptr_t)t->bufs[i],
		};
		tr_cmd(&r, t->s->chfd, UBLK_U_IO_FETCH_REQ, &io, sizeof(io), i);
	}
	tr_submit(&r, t->nslots);
	if (t->busy_commit) {
		/* the daemon's own tag, fetched but holding no request: the
		 * engine's COMMIT without a round trip (client_io.c) must
		 * leave this one to the driver's answer */
		io = (struct ublksrv_io_cmd){
			.q_id = (uint16_t)(t->slots[0] >> 16),
			.tag = (uint16_t)t->slots[0],
			.addr = (uintptr_t)t->bufs[0],
		};
		tr_cmd(&r, t->s->chfd, UBLK_U_IO_COMMIT_AND_FETCH_REQ, &io,
		       sizeof(io), 0xb0b0);
		tr_submit(&r, 1);
	}
	if (t->fetched_pipe >= 0 && write(t->fetched_pipe, "f", 1) != 1)
		t->errors++;
	if (t->try_foreign) {
		/* a tag of thread B: not this task's (per-io daemon) */
		io = (struct ublksrv_io_cmd){ .q_id = 0, .tag = 1,
					      .addr = (uintptr_t)t->bufs[0] };
		tr_cmd(&r, t->s->chfd, UBLK_U_IO_COMMIT_AND_FETCH_REQ, &io,
		       sizeof(io), 0xdead);
		tr_submit(&r, 1);
	}
	while (live) {
		struct io_uring_cqe c = tr_wait(&r);
		unsigned int i = (unsigned int)c.user_data, q, tag;

		if (c.user_data == 0xdead) {
			t->foreign_commit_res = c.res;
			continue;
		}
		if (c.user_data == 0xb0b0) {
			t->busy_commit_res = c.res;
			continue;
		}
		if (c.user_data == 0xbeef) {
			t->bad_get_data_res = c.res;
			continue;
		}
		if (c.res == UBLK_IO_RES_ABORT || c.res < 0) {
			if (c.res != UBLK_IO_RES_ABORT)
				t->errors++;
			live--;
			continue;
		}
		if (t->die_on_request)
			_exit(0);
		q = t->slots[i] >> 16;
		tag = t->slots[i] & 0xffff;
		if (c.res == UBLK_IO_RES_NEED_GET_DATA) {
			/* a write without its data yet: give the buffer */
			t->get_data_seen++;
			io = (struct ublksrv_io_cmd){
				.q_id = (uint16_t)q,
				.tag = (uint16_t)tag,
				.addr = (uintptr_t)t->bufs[i],
			};
			tr_cmd(&r, t->s->chfd, UBLK_U_IO_NEED_GET_DATA, &io,
			       sizeof(io), i);
			tr_submit(&r, 1);
			continue;
		}
		if (t->get_data && !t->bad_get_data_res &&
		    (t->s->iod[q][tag].op_flags & 0xff) == UBLK_IO_OP_READ) {
			/* NEED_GET_DATA where the driver did not ask for it;
			 * the only command in flight, so its CQE is next */
			io = (struct ublksrv_io_cmd){
				.q_id = (uint16_t)q,
				.tag = (uint16_t)tag,
				.addr = (uintptr_t)t->bufs[i],
			};
			tr_cmd(&r, t->s->chfd, UBLK_U_IO_NEED_GET_DATA, &io,
			       sizeof(io), 0xbeef);
			tr_submit(&r, 1);
			c = tr_wait(&r);
			t->bad_get_data_res = c.user_data == 0xbeef ? c.res : 1;
		}
		if (t->wait_for_b && !t->served)
			while (!atomic_load(&t->s->b_served))
				sched_yield();
		io = (struct ublksrv_io_cmd){ .q_id = (uint16_t)q,
					      .tag = (uint16_t)tag,
					      .addr = (uintptr_t)t->bufs[i] };
		io.result = serve_one(t, q, tag, t->bufs[i]);
		t->served++;
		if (t->is_b)
			atomic_fetch_add(&t->s->b_served, 1);
		tr_cmd(&r, t->s->chfd, UBLK_U_IO_COMMIT_AND_FETCH_REQ, &io,
		       sizeof(io), i);
		tr_submit(&r, 1);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	t->cpu_s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	tr_exit(&r);
	return NULL;
}

static void srv_thread_start(struct srv_thread *t, struct srv *s)
{
	t->s = s;
	for (unsigned int i = 0; i < t->nslots; i++)
		t->bufs[i] = aligned_alloc(4096, SRV_BUF);
	pthread_create(&t->th, NULL, srv_main, t);
}

static void srv_thread_join(struct srv_thread *t)
{
	pthread_join(t->th, NULL);
	for (unsigned int i = 0; i < t->nslots; i++)
		free(t->bufs[i]);
}

/* one device, added with its parameters: its id, or -errno */
static int dev_setup(struct tr *r, int cfd, struct srv *s, unsigned int nq,
		     unsigned int depth, uint64_t flags)
{
	struct ublksrv_ctrl_dev_info i;
	int ret;

	info_init(&i, (uint16_t)nq, (uint16_t)depth, flags);
	ret = add_dev(r, cfd, &i);
	if (ret)
		return ret;
	memset(s, 0, sizeof(*s));
	s->id = (int)i.dev_id;
	s->nq = i.nr_hw_queues;
	s->depth = depth;
	s->disk_bytes = 8 << 20;
	s->disk = calloc(1, s->disk_bytes);
	return set_basic(r, cfd, s->id, s->disk_bytes >> 9);
}

struct client {
	pthread_t th;
	int cpu, dev, errors, n;
	size_t base;
};

static void *client_main(void *arg)
{
	struct client *c = arg;
	uint8_t *w = malloc(SRV_BUF), *rd = malloc(SRV_BUF);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	for (int k = 0; k < c->n; k++) {
		size_t len = (size_t)4096 << (k % 5), off = c->base + k * 8192;
		int ret;

		for (size_t b = 0; b < len; b++)
			w[b] = (uint8_t)(b * 7 + (size_t)k + c->base);
		ret = uuring_ublk_bdev_io(c->dev, UBLK_IO_OP_WRITE, w, len,
					  off);
		if (ret != (int)len) {
			fprintf(stderr, "write %zu@%zu: %d\n", len, off, ret);
			c->errors++;
			continue;
		}
		memset(rd, 0, len);
		ret = uuring_ublk_bdev_io(c->dev, UBLK_IO_OP_READ, rd, len,
					  off);
		if (ret != (int)len || memcmp(rd, w, len)) {
			fprintf(stderr, "read %zu@%zu: %d\n", len, off, ret);
			c->errors++;
		}
	}
	free(w);
	free(rd);
	return NULL;
}

static void scenario_io(void)
{
	struct srv_thread th[2];
	struct client cl[2];
	struct ublksrv_ctrl_dev_info got;
	struct srv s;
	struct tr r;
	int cfd = uuring_ublk_open("/dev/ublk-control", O_RDWR);
	int ncpu = get_nprocs_conf(), ret;
	uint8_t buf[4096];

	if (cfd < 0 || tr_init(&r, 8, IORING_SETUP_SQE128) ||
	    dev_setup(&r, cfd, &s, 2, 4, 0) || srv_open(&s)) {
		CHECK(0, "setup");
		return;
	}
	memset(th, 0, sizeof(th));
	for (unsigned int q = 0; q < s.nq; q++) {
		th[q].fetched_pipe = -1;
		th[q].busy_commit = q == 0;
		for (unsigned int t = 0; t < s.depth; t++)
			th[q].slots[th[q].nslots++] = q << 16 | t;
		srv_thread_start(&th[q], &s);
	}
	/* ublk_ctrl_start_dev waits until every tag is fetched */
	EQ(ctrl(&r, cfd, UBLK_U_CMD_START_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		(uint64_t)getpid()), 0, "ublk_ctrl_start_dev");
	EQ(ctrl(&r, cfd, UBLK_U_CMD_START_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		(uint64_t)getpid()), -EEXIST, "ublk_ctrl_start_dev: LIVE");
	EQ(ctrl(&r, cfd, UBLK_U_CMD_GET_DEV_INFO, (uint32_t)s.id, 0xffff, &got,
		sizeof(got), 0), 0, "GET_DEV_INFO");
	EQ(got.state, UBLK_S_DEV_LIVE, "started: LIVE");
	EQ(got.ublksrv_pid, getpid(), "started: ublksrv_pid");
	for (int k = 0; k < 2; k++) {
		cl[k] = (struct client){ .cpu = k ? ncpu - 1 : 0, .dev = s.id,
					 .n = 40, .base = (size_t)k << 22 };
		pthread_create(&cl[k].th, NULL, client_main, &cl[k]);
	}
	for (int k = 0; k < 2; k++) {
		pthread_join(cl[k].th, NULL);
		EQ(cl[k].errors, 0, "read back what was written");
	}
	EQ(uuring_ublk_bdev_io(s.id, UBLK_IO_OP_WRITE, buf, 4096,
			       s.disk_bytes), -ENOSPC, "write at the end");
	EQ(uuring_ublk_bdev_io(s.id, UBLK_IO_OP_READ, buf, 4096, s.disk_bytes),
	   0, "read at the end");
	EQ(uuring_ublk_bdev_io(s.id, UBLK_IO_OP_READ, buf, 100, 0), -EINVAL,
	   "misaligned");
	EQ(uuring_ublk_bdev_io(s.id, UBLK_IO_OP_FLUSH, NULL, 0, 0), 0, "flush");
	for (unsigned int q = 0; q < s.nq; q++)
		CHECK(th[q].served > 0, "queue %u served %d requests", q,
		      th[q].served);
	EQ(th[0].busy_commit_res, -EBUSY,
	   "ublk_ch_uring_cmd_local: COMMIT of a tag not owned by the server");
	/* ublk_stop_dev: the waiting commands end with UBLK_IO_RES_ABORT */
	EQ(ctrl(&r, cfd, UBLK_U_CMD_STOP_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "ublk_ctrl_stop_dev");
	for (unsigned int q = 0; q < s.nq; q++) {
		srv_thread_join(&th[q]);
		EQ(th[q].errors, 0, "server thread errors");
	}
	EQ(uuring_ublk_bdev_io(s.id, UBLK_IO_OP_READ, buf, 4096, 0), -ENODEV,
	   "I/O to a stopped device");
	EQ(ctrl(&r, cfd, UBLK_U_CMD_GET_DEV_INFO, (uint32_t)s.id, 0xffff, &got,
		sizeof(got), 0), 0, "GET_DEV_INFO");
	EQ(got.state, UBLK_S_DEV_DEAD, "stopped: DEAD");
	srv_close(&s);
	ret = ctrl(&r, cfd, UBLK_U_CMD_DEL_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		   0);
	EQ(ret, 0, "ublk_ctrl_del_dev");
	free(s.disk);
	tr_exit(&r);
	uuring_close(cfd);
}

/* per-io daemons: tags 0 and 2 to thread A, 1 and 3 to thread B */
static void scenario_perio(void)
{
	struct srv_thread th[2];
	struct client cl[2];
	struct srv s;
	struct tr r;
	int cfd = uuring_ublk_open("/dev/ublk-control", O_RDWR);

	if (cfd < 0 || tr_init(&r, 8, IORING_SETUP_SQE128) ||
	    dev_setup(&r, cfd, &s, 1, 4, 0) || srv_open(&s)) {
		CHECK(0, "setup");
		return;
	}
	memset(th, 0, sizeof(th));
	for (int k = 0; k < 2; k++) {
		th[k].fetched_pipe = -1;
		th[k].slots[th[k].nslots++] = (unsigned int)k;
		th[k].slots[th[k].nslots++] = (unsigned int)k + 2;
	}
	th[0].wait_for_b = true;
	th[0].try_foreign = true;
	th[1].is_b = true;
	srv_thread_start(&th[0], &s);
	srv_thread_start(&th[1], &s);
	EQ(ctrl(&r, cfd, UBLK_U_CMD_START_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		(uint64_t)getpid()), 0, "ublk_ctrl_start_dev");
	/* two requests at once: A holds tag 0 until B served one, so the
	 * second takes tag 1, B's */
	for (int k = 0; k < 2; k++) {
		cl[k] = (struct client){ .cpu = 0, .dev = s.id, .n = 10,
					 .base = (size_t)k << 22 };
		pthread_create(&cl[k].th, NULL, client_main, &cl[k]);
	}
	for (int k = 0; k < 2; k++) {
		pthread_join(cl[k].th, NULL);
		EQ(cl[k].errors, 0, "read back what was written");
	}
	EQ(ctrl(&r, cfd, UBLK_U_CMD_STOP_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "ublk_ctrl_stop_dev");
	srv_thread_join(&th[0]);
	srv_thread_join(&th[1]);
	CHECK(th[0].served > 0 && th[1].served > 0,
	      "both daemons served: %d %d", th[0].served, th[1].served);
	EQ(th[0].foreign_commit_res, -EINVAL,
	   "ublk_ch_uring_cmd_local: another task's tag");
	EQ(th[0].errors + th[1].errors, 0, "server thread errors");
	srv_close(&s);
	EQ(ctrl(&r, cfd, UBLK_U_CMD_DEL_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "ublk_ctrl_del_dev");
	free(s.disk);
	tr_exit(&r);
	uuring_close(cfd);
}

struct bench_client {
	pthread_t th;
	int dev, n, errors;
};

static void *bench_main(void *arg)
{
	struct bench_client *b = arg;
	uint8_t *buf = aligned_alloc(4096, 4096);

	for (int k = 0; k < b->n; k++)
		if (uuring_ublk_bdev_io(b->dev, UBLK_IO_OP_READ, buf, 4096,
					(uint64_t)(k % 2048) * 4096) != 4096)
			b->errors++;
	free(buf);
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A measurement, run only when named ("bench"): 4 KiB reads through the
 * driver from 1 and 4 submitting threads (one request each at a time),
 * served by one thread on one queue of depth 8.
 */
static void scenario_bench(void)
{
	struct bench_client b[4];
	struct srv_thread t;
	struct srv s;
	struct tr r;
	int cfd = uuring_ublk_open("/dev/ublk-control", O_RDWR);

	if (cfd < 0 || tr_init(&r, 8, IORING_SETUP_SQE128) ||
	    dev_setup(&r, cfd, &s, 1, 8, 0) || srv_open(&s)) {
		CHECK(0, "setup");
		return;
	}
	memset(&t, 0, sizeof(t));
	t.fetched_pipe = -1;
	for (unsigned int k = 0; k < 8; k++)
		t.slots[t.nslots++] = k;
	srv_thread_start(&t, &s);
	EQ(ctrl(&r, cfd, UBLK_U_CMD_START_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		(uint64_t)getpid()), 0, "ublk_ctrl_start_dev");
	for (int nthr = 1; nthr <= 4; nthr *= 4) {
		int n = 20000 / nthr;
		double t0 = now_s(), dt;

		for (int k = 0; k < nthr; k++) {
			b[k] = (struct bench_client){ .dev = s.id, .n = n };
			pthread_create(&b[k].th, NULL, bench_main, &b[k]);
		}
		for (int k = 0; k < nthr; k++) {
			pthread_join(b[k].th, NULL);
			EQ(b[k].errors, 0, "bench reads");
		}
		dt = now_s() - t0;
		fprintf(stderr, "bench: %d thread(s), %d reads of 4 KiB: "
				"%.0f IOPS, %.1f us each\n",
			nthr, n * nthr, n * nthr / dt, dt * 1e6 / n);
	}
	EQ(ctrl(&r, cfd, UBLK_U_CMD_STOP_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "ublk_ctrl_stop_dev");
	srv_thread_join(&t);
	srv_close(&s);
	EQ(ctrl(&r, cfd, UBLK_U_CMD_DEL_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "ublk_ctrl_del_dev");
	free(s.disk);
	tr_exit(&r);
	uuring_close(cfd);
}

/* UBLK_F_NEED_GET_DATA: writes arrive without data first */
static void scenario_getdata(void)
{
	struct srv_thread t;
	struct client cl;
	struct srv s;
	struct tr r;
	int cfd = uuring_ublk_open("/dev/ublk-control", O_RDWR);

	if (cfd < 0 || tr_init(&r, 8, IORING_SETUP_SQE128) ||
	    dev_setup(&r, cfd, &s, 1, 2, UBLK_F_NEED_GET_DATA) ||
	    srv_open(&s)) {
		CHECK(0, "setup");
		return;
	}
	memset(&t, 0, sizeof(t));
	t.fetched_pipe = -1;
	t.get_data = true;
	t.slots[t.nslots++] = 0;
	t.slots[t.nslots++] = 1;
	srv_thread_start(&t, &s);
	EQ(ctrl(&r, cfd, UBLK_U_CMD_START_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		(uint64_t)getpid()), 0, "ublk_ctrl_start_dev");
	cl = (struct client){ .cpu = 0, .dev = s.id, .n = 10 };
	client_main(&cl);
	EQ(cl.errors, 0, "read back what was written");
	EQ(ctrl(&r, cfd, UBLK_U_CMD_STOP_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "ublk_ctrl_stop_dev");
	srv_thread_join(&t);
	EQ(t.get_data_seen, 10, "ublk_dispatch_req: one NEED_GET_DATA a write");
	EQ(t.bad_get_data_res, -EINVAL,
	   "ublk_ch_uring_cmd_local: NEED_GET_DATA not asked for");
	EQ(t.errors, 0, "server thread errors");
	srv_close(&s);
	EQ(ctrl(&r, cfd, UBLK_U_CMD_DEL_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "ublk_ctrl_del_dev");
	free(s.disk);
	tr_exit(&r);
	uuring_close(cfd);
}

/* the server process dies with a request: ublk_ch_release_work_fn */
static void exit_case(struct tr *r, int cfd, uint64_t flags, int want_state)
{
	struct ublksrv_ctrl_dev_info got;
	struct srv_thread t;
	struct srv s;
	int pfd[2], status;
	uint8_t buf[4096] = { 0 };
	char c;
	pid_t pid;

	if (dev_setup(r, cfd, &s, 1, 2, flags) || pipe(pfd)) {
		CHECK(0, "setup");
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		if (srv_open(&s))
			_exit(2);
		memset(&t, 0, sizeof(t));
		t.slots[t.nslots++] = 0;
		t.slots[t.nslots++] = 1;
		t.die_on_request = true;
		t.fetched_pipe = pfd[1];
		t.s = &s;
		t.bufs[0] = aligned_alloc(4096, SRV_BUF);
		t.bufs[1] = aligned_alloc(4096, SRV_BUF);
		srv_main(&t);
		_exit(3);
	}
	close(pfd[1]);
	CHECK(read(pfd[0], &c, 1) == 1, "the server fetched");
	close(pfd[0]);
	EQ(ctrl(r, cfd, UBLK_U_CMD_START_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		(uint64_t)pid), 0, "ublk_ctrl_start_dev (server's pid)");
	EQ(uuring_ublk_bdev_io(s.id, UBLK_IO_OP_WRITE, buf, 4096, 0), -EIO,
	   "a request the dead server held fails");
	waitpid(pid, &status, 0);
	EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0, "server exit");
	EQ(ctrl(r, cfd, UBLK_U_CMD_GET_DEV_INFO, (uint32_t)s.id, 0xffff, &got,
		sizeof(got), 0), 0, "GET_DEV_INFO");
	EQ(got.state, want_state, "state after the server's exit");
	if (want_state == UBLK_S_DEV_DEAD)
		EQ(got.ublksrv_pid, -1, "ublk_detach_disk: no server pid");
	if (want_state == UBLK_S_DEV_FAIL_IO)
		EQ(uuring_ublk_bdev_io(s.id, UBLK_IO_OP_READ, buf, 4096, 0),
		   -EREMOTEIO, "FAIL_IO: BLK_STS_TARGET");
	if (flags & UBLK_F_USER_RECOVERY)
		EQ(ctrl(r, cfd, UBLK_U_CMD_START_USER_RECOVERY, (uint32_t)s.id,
			0xffff, NULL, 0, 0), 0, "ublk_ctrl_start_recovery");
	else
		EQ(ctrl(r, cfd, UBLK_U_CMD_START_USER_RECOVERY, (uint32_t)s.id,
			0xffff, NULL, 0, 0), -EINVAL,
		   "ublk_ctrl_start_recovery: no recovery");
	EQ(ctrl(r, cfd, UBLK_U_CMD_DEL_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "ublk_ctrl_del_dev");
	free(s.disk);
}

struct held_write {
	pthread_t th;
	int dev, res;
	uint64_t pos;
	uint8_t buf[4096];
};

static void *held_write_main(void *arg)
{
	struct held_write *h = arg;

	h->res = uuring_ublk_bdev_io(h->dev, UBLK_IO_OP_WRITE, h->buf, 4096,
				     h->pos);
	return NULL;
}

/* a server process serving every tag of queue 0 until the device stops */
static pid_t fork_server(struct srv *s, bool die_on_request)
{
	struct srv_thread t;
	int pfd[2];
	pid_t pid;
	char c;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		if (srv_open(s))
			_exit(2);
		memset(&t, 0, sizeof(t));
		for (unsigned int k = 0; k < s->depth; k++) {
			t.slots[t.nslots] = k;
			t.bufs[t.nslots++] = aligned_alloc(4096, SRV_BUF);
		}
		t.die_on_request = die_on_request;
		t.fetched_pipe = pfd[1];
		t.s = s;
		srv_main(&t);
		_exit(t.errors ? 4 : 0);
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1)
		pid = -1;
	close(pfd[0]);
	return pid;
}

/*
 * USER_RECOVERY: the server dies, the device waits QUIESCED with the
 * requests that arrive meanwhile, a new server process recovers it
 * (START_USER_RECOVERY, fetches, END_USER_RECOVERY) and serves them.
 * With REISSUE the request the dead server held is served again, else
 * it fails (__ublk_fail_req).
 */
static void recover_case(struct tr *r, int cfd, uint64_t flags)
{
	bool reissue = flags & UBLK_F_USER_RECOVERY_REISSUE;
	struct held_write a, b;
	struct ublksrv_ctrl_dev_info got;
	struct srv s;
	pid_t p1, p2;
	int status;

	if (dev_setup(r, cfd, &s, 1, 2, flags)) {
		CHECK(0, "setup");
		return;
	}
	/* shared with the server processes, to look at what they wrote */
	free(s.disk);
	s.disk = mmap(NULL, s.disk_bytes, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	p1 = fork_server(&s, true);
	EQ(ctrl(r, cfd, UBLK_U_CMD_START_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		(uint64_t)p1), 0, "ublk_ctrl_start_dev");
	a = (struct held_write){ .dev = s.id, .pos = 0 };
	memset(a.buf, 0xa1, sizeof(a.buf));
	pthread_create(&a.th, NULL, held_write_main, &a);
	waitpid(p1, &status, 0);
	EQ(ctrl(r, cfd, UBLK_U_CMD_GET_DEV_INFO, (uint32_t)s.id, 0xffff, &got,
		sizeof(got), 0), 0, "GET_DEV_INFO");
	EQ(got.state, UBLK_S_DEV_QUIESCED, "the server died: QUIESCED");
	if (!reissue) {
		pthread_join(a.th, NULL);
		EQ(a.res, -EIO, "__ublk_fail_req: the held request fails");
	}
	b = (struct held_write){ .dev = s.id, .pos = 8192 };
	memset(b.buf, 0xb2, sizeof(b.buf));
	pthread_create(&b.th, NULL, held_write_main, &b);
	EQ(ctrl(r, cfd, UBLK_U_CMD_START_USER_RECOVERY, (uint32_t)s.id, 0xffff,
		NULL, 0, 0), 0, "ublk_ctrl_start_recovery");
	p2 = fork_server(&s, false);
	EQ(ctrl(r, cfd, UBLK_U_CMD_END_USER_RECOVERY, (uint32_t)s.id, 0xffff,
		NULL, 0, (uint64_t)p2), 0, "ublk_ctrl_end_recovery");
	pthread_join(b.th, NULL);
	EQ(b.res, 4096, "a request of the QUIESCED time: the new server's");
	CHECK(s.disk[8192] == 0xb2 && s.disk[8192 + 4095] == 0xb2,
	      "its data reached the new server");
	if (reissue) {
		pthread_join(a.th, NULL);
		EQ(a.res, 4096, "REISSUE: the dead server's request again");
		CHECK(s.disk[0] == 0xa1, "its data reached the new server");
	}
	EQ(ctrl(r, cfd, UBLK_U_CMD_GET_DEV_INFO, (uint32_t)s.id, 0xffff, &got,
		sizeof(got), 0), 0, "GET_DEV_INFO");
	EQ(got.state, UBLK_S_DEV_LIVE, "recovered: LIVE");
	EQ(got.ublksrv_pid, p2, "recovered: the new server's pid");
	EQ(ctrl(r, cfd, UBLK_U_CMD_STOP_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "ublk_ctrl_stop_dev");
	waitpid(p2, &status, 0);
	EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0, "new server");
	EQ(ctrl(r, cfd, UBLK_U_CMD_DEL_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "ublk_ctrl_del_dev");
	munmap(s.disk, s.disk_bytes);
}

static void scenario_exit(void)
{
	struct tr r;
	int cfd = uuring_ublk_open("/dev/ublk-control", O_RDWR);

	if (cfd < 0 || tr_init(&r, 8, IORING_SETUP_SQE128)) {
		CHECK(0, "setup");
		return;
	}
	exit_case(&r, cfd, 0, UBLK_S_DEV_DEAD);
	exit_case(&r, cfd, UBLK_F_USER_RECOVERY, UBLK_S_DEV_QUIESCED);
	exit_case(&r, cfd, UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_FAIL_IO,
		  UBLK_S_DEV_FAIL_IO);
	recover_case(&r, cfd, UBLK_F_USER_RECOVERY);
	recover_case(&r, cfd,
		     UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_REISSUE);
	tr_exit(&r);
	uuring_close(cfd);
}

#endif
