/* SPDX-License-Identifier: MIT */
/*
 * tests/test_ublkb.c's helpers (included by it: they use its checks and
 * ublk_tr.h's ring): the ublk server process serving a shared memory
 * disk with every op /dev/ublkbN can send, a device's setup and end,
 * shell commands, the node's and the driver's whereabouts, a plain
 * reader process.
 */
#ifndef UURING_TESTS_UBLKB_UTIL_H
#define UURING_TESTS_UBLKB_UTIL_H

#define DEPTH 32u
#define IOBUF (128u << 10)
#define DISK_BYTES (128u << 20)

static char logpath[128], tmpdir[64];

/* ---- the ublk server: one queue, one thread, a memory disk ---- */
struct srvstat {
	atomic_uint ops[8];         /* requests seen, by UBLK_IO_OP_* */
	atomic_uint nounmap;        /* WRITE_ZEROES with NOUNMAP */
	atomic_uint hold;           /* reads wait while set ... */
	atomic_uint held;           /* ... counted here */
};

struct srv {
	int id;
	unsigned int daemons;       /* server threads (per-io daemons) */
	uint8_t *disk;              /* shared with the test, for looks */
	struct srvstat *st;         /* shared */
};

static int serve(struct srv *s, const struct ublksrv_io_desc *iod,
		 uint8_t *buf)
{
	uint64_t off = iod->start_sector << 9;
	uint64_t len = (uint64_t)iod->nr_sectors << 9;
	unsigned int op = iod->op_flags & 0xff;

	if (op < 8)
		atomic_fetch_add(&s->st->ops[op], 1);
	if (op == UBLK_IO_OP_READ && atomic_load(&s->st->hold)) {
		atomic_fetch_add(&s->st->held, 1);
		while (atomic_load(&s->st->hold))
			usleep(1000);
	}
	if (off + len > DISK_BYTES)
		return -EIO;
	switch (op) {
	case UBLK_IO_OP_READ:
		if (len > IOBUF)
			return -EIO;
		memcpy(buf, s->disk + off, len);
		return (int)len;
	case UBLK_IO_OP_WRITE:
		if (len > IOBUF)
			return -EIO;
		memcpy(s->disk + off, buf, len);
		return (int)len;
	case UBLK_IO_OP_DISCARD:
	case UBLK_IO_OP_WRITE_ZEROES:
		if (iod->op_flags & UBLK_IO_F_NOUNMAP)
			atomic_fetch_add(&s->st->nounmap, 1);
		memset(s->disk + off, 0, len);
		return 0;
	case UBLK_IO_OP_FLUSH:
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

/* one daemon of the server: tags t with t % step == first (per-io
 * daemons, UBLK_F_PER_IO_DAEMON: a tag is its fetching task's) */
struct daemon {
	struct srv *s;
	int chfd;
	const struct ublksrv_io_desc *iod;
	unsigned int first, step;
	atomic_uint *fetched;
	pthread_t th;
	int err;
};

static void *daemon_main(void *arg)
{
	struct daemon *dm = arg;
	uint8_t *bufs[DEPTH];
	struct ublksrv_io_cmd io;
	unsigned int live = 0;
	struct tr r;

	if (tr_init(&r, 2 * DEPTH, 0)) {
		dm->err = 4;
		atomic_fetch_add(dm->fetched, 1);
		return NULL;
	}
	for (unsigned int t = dm->first; t < DEPTH; t += dm->step) {
		bufs[t] = aligned_alloc(4096, IOBUF);
		io = (struct ublksrv_io_cmd){ .q_id = 0, .tag = (uint16_t)t,
					      .addr = (uintptr_t)bufs[t] };
		tr_cmd(&r, dm->chfd, UBLK_U_IO_FETCH_REQ, &io, sizeof(io), t);
		live++;
	}
	tr_submit(&r, live);
	atomic_fetch_add(dm->fetched, 1);
	while (live) {
		struct io_uring_cqe c = tr_wait(&r);
		unsigned int t = (unsigned int)c.user_data;

		if (c.res < 0 || c.res == UBLK_IO_RES_ABORT) {
			live--;
			continue;
		}
		io = (struct ublksrv_io_cmd){ .q_id = 0, .tag = (uint16_t)t,
					      .addr = (uintptr_t)bufs[t] };
		io.result = serve(dm->s, &dm->iod[t], bufs[t]);
		tr_cmd(&r, dm->chfd, UBLK_U_IO_COMMIT_AND_FETCH_REQ, &io,
		       sizeof(io), t);
		tr_submit(&r, 1);
	}
	return NULL;
}

/* the server process: s->daemons threads (at least one) fetch every
 * tag, then serve until ABORT */
static void server_main(struct srv *s, int ready_fd)
{
	unsigned int n = s->daemons ? s->daemons : 1;
	struct daemon dm[DEPTH];
	atomic_uint fetched = 0;
	char path[32];
	int chfd, err = 0;
	const struct ublksrv_io_desc *iod;

	snprintf(path, sizeof(path), "/dev/ublkc%d", s->id);
	chfd = uuring_ublk_open(path, O_RDWR);
	if (chfd < 0)
		_exit(2);
	iod = uuring_mmap(NULL, 4096, PROT_READ, MAP_SHARED, chfd, 0);
	if ((intptr_t)iod < 0 && (intptr_t)iod > -4096)
		_exit(3);
	if (n > DEPTH)
		n = DEPTH;
	for (unsigned int k = 0; k < n; k++) {
		dm[k] = (struct daemon){ .s = s, .chfd = chfd, .iod = iod,
					 .first = k, .step = n,
					 .fetched = &fetched };
		pthread_create(&dm[k].th, NULL, daemon_main, &dm[k]);
	}
	while (atomic_load(&fetched) < n)
		usleep(1000);
	if (write(ready_fd, "f", 1) != 1)
		_exit(5);
	close(ready_fd);
	for (unsigned int k = 0; k < n; k++) {
		pthread_join(dm[k].th, NULL);
		err |= dm[k].err;
	}
	_exit(err);
}

static pid_t server_fork(struct srv *s)
{
	int pfd[2];
	pid_t pid;
	char c;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		server_main(s, pfd[1]);
	}
	close(pfd[1]);
	if (pid > 0 && read(pfd[0], &c, 1) != 1)
		pid = -1;
	close(pfd[0]);
	return pid;
}

/* ADD_DEV (a chosen id, away from other drivers' 0, 1, ...) and params */
static int dev_add(struct tr *r, int cfd, int id, uint64_t flags)
{
	struct ublksrv_ctrl_dev_info i;
	struct ublk_params p = { .len = sizeof(p),
				 .types = UBLK_PARAM_TYPE_BASIC |
					  UBLK_PARAM_TYPE_DISCARD };
	int ret;

	memset(&i, 0, sizeof(i));
	i.nr_hw_queues = 1;
	i.queue_depth = DEPTH;
	i.max_io_buf_bytes = IOBUF;
	i.dev_id = (uint32_t)id;
	i.flags = flags;
	ret = ctrl(r, cfd, UBLK_U_CMD_ADD_DEV, i.dev_id, 0xffff, &i,
		   sizeof(i), 0);
	if (ret)
		return ret;
	p.basic.logical_bs_shift = 9;
	p.basic.physical_bs_shift = 12;
	p.basic.max_sectors = IOBUF >> 9;
	p.basic.dev_sectors = DISK_BYTES >> 9;
	p.discard.discard_granularity = 4096;
	p.discard.max_discard_sectors = 8192;
	p.discard.max_write_zeroes_sectors = 8192;
	p.discard.max_discard_segments = 1;
	return ctrl(r, cfd, UBLK_U_CMD_SET_PARAMS, (uint32_t)id, 0xffff, &p,
		    sizeof(p), 0);
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	fprintf(stderr, "+ %s\n", cmd);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void print_log(void)
{
	char line[512];
	FILE *f = fopen(logpath, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "uublkd log: %s", line);
	fclose(f);
}

static bool node_of(int id, struct stat *st)
{
	char node[32];

	snprintf(node, sizeof(node), "/dev/ublkb%d", id);
	return !stat(node, st);
}

/* the name's lock file (ublkd_front.c): a driver holds it flocked while
 * the device lives; only a reclaim removes it */
static bool lock_file_exists(int id)
{
	char path[64];

	snprintf(path, sizeof(path), "/run/uuring/ublk/%d.lock", id);
	return !access(path, F_OK);
}

/* the kernel's io_uring, for fio's engine (not everywhere allowed) */
static bool kernel_uring(void)
{
	struct io_uring_params p;
	long fd;

	memset(&p, 0, sizeof(p));
	fd = syscall(__NR_io_uring_setup, 1, &p);
	if (fd < 0)
		return false;
	close((int)fd);
	return true;
}

/* after the device's end: no node, loop device detached, no mount
 * (waited for up to 5 s: loop's autoclear runs at its last close) */
static void check_gone(int id, const struct stat *was)
{
	char loopf[96], disk[96];
	bool node = true, loop = true, mnt = true;
	struct stat st;

	snprintf(loopf, sizeof(loopf),
		 "/sys/dev/block/%u:%u/loop/backing_file",
		 major(was->st_rdev), minor(was->st_rdev));
	snprintf(disk, sizeof(disk), "/run/uuring/ublk/%d/disk", id);
	for (int k = 0; k < 500 && (node || loop || mnt); k++) {
		if (k)
			usleep(10000);
		node = node_of(id, &st);
		loop = !access(loopf, F_OK);
		mnt = !access(disk, F_OK);
	}
	CHECK(!node, "/dev/ublkb%d still there", id);
	CHECK(!loop, "loop %u:%u still bound", major(was->st_rdev),
	      minor(was->st_rdev));
	CHECK(!mnt, "%s still there", disk);
}

/* a plain process reading the node until an error: its errno and when */
static pid_t reader_fork(const char *node, int *res_fd)
{
	int pfd[2];
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		void *buf = aligned_alloc(4096, 4096);
		int fd = open(node, O_RDONLY | O_DIRECT), e = 0;

		close(pfd[0]);
		if (fd < 0)
			_exit(2);
		for (uint64_t k = 0;; k++) {
			if (pread(fd, buf, 4096, (off_t)(k % 4096) * 4096) !=
			    4096) {
				e = errno ? errno : -1;
				break;
			}
			if (k == 100 && write(pfd[1], "r", 1) != 1)
				_exit(3);
		}
		if (write(pfd[1], &e, sizeof(e)) != sizeof(e))
			_exit(3);
		_exit(0);
	}
	close(pfd[1]);
	*res_fd = pfd[0];
	return pid;
}

/* a shared memory disk, a device with it, its server and START_DEV:
 * the server's pid (0 on failure, checked); *st the node */
static pid_t dev_begin(struct tr *r, int cfd, int id, uint64_t flags,
		       struct srv *s, struct stat *st)
{
	pid_t pid;

	s->id = id;
	s->disk = mmap(NULL, DISK_BYTES, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	s->st = mmap(NULL, sizeof(*s->st), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s->disk == MAP_FAILED || s->st == MAP_FAILED ||
	    dev_add(r, cfd, id, flags)) {
		CHECK(0, "setup of device %d", id);
		return 0;
	}
	pid = server_fork(s);
	EQ(ctrl(r, cfd, UBLK_U_CMD_START_DEV, (uint32_t)id, 0xffff, NULL, 0,
		(uint64_t)pid), 0, "START_DEV");
	if (!node_of(id, st)) {
		print_log();
		CHECK(0, "no /dev/ublkb%d", id);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		ctrl(r, cfd, UBLK_U_CMD_DEL_DEV, (uint32_t)id, 0xffff, NULL, 0,
		     0);
		return 0;
	}
	return pid;
}

static void dev_end(struct srv *s)
{
	munmap(s->disk, DISK_BYTES);
	munmap(s->st, sizeof(*s->st));
}

/* this test's uublkd: the process holding the listening socket of our
 * driver name (the control socket's SO_PEERCRED names the client that
 * created that socket, and a fork's /proc/PID/environ is its exec's) */
static pid_t driver_pid_once(pid_t exclude)
{
	const char *name = getenv("UURING_UBLKD_NAME");
	char line[512], want[128], path[64], link[64];
	unsigned long ino[8];
	int nino = 0;
	struct dirent *de;
	pid_t found = -1;
	FILE *f = fopen("/proc/net/unix", "r");
	DIR *d;

	/* a killed driver's socket may still be listed beside the new one */
	snprintf(want, sizeof(want), "@%s", name ? name : "");
	while (f && nino < 8 && fgets(line, sizeof(line), f)) {
		char p[128] = "";
		unsigned long i;

		if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu %127s", &i, p) ==
			    2 &&
		    !strcmp(p, want))
			ino[nino++] = i;
	}
	if (f)
		fclose(f);
	d = nino ? opendir("/proc") : NULL;
	while (d && found < 0 && (de = readdir(d))) {
		int pid = atoi(de->d_name);

		if (pid <= 1 || pid == getpid() || pid == exclude)
			continue;
		for (int fd = 0; fd < 128 && found < 0; fd++) {
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
			n = readlink(path, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = 0;
			for (int k = 0; k < nino && found < 0; k++) {
				snprintf(want, sizeof(want), "socket:[%lu]",
					 ino[k]);
				if (!strcmp(link, want))
					found = pid;
			}
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* /proc/net/unix is read in pieces while other sockets come and go: a
 * line can be missed, so the look is repeated; exclude: not this one
 * (a killed driver still exiting) */
static pid_t driver_pid(pid_t exclude)
{
	pid_t pid = -1;

	for (int k = 0; k < 100 && pid < 0; k++) {
		if (k)
			usleep(20000);
		pid = driver_pid_once(exclude);
	}
	return pid;
}

static int dev_state(struct tr *r, int cfd, int id)
{
	struct ublksrv_ctrl_dev_info got;

	if (ctrl(r, cfd, UBLK_U_CMD_GET_DEV_INFO, (uint32_t)id, 0xffff, &got,
		 sizeof(got), 0))
		return -1;
	return got.state;
}

#endif
