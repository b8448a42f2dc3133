// SPDX-License-Identifier: MIT
/*
 * The ublk driver under `uuring run` (src/shim/ublkfiles.c): a program
 * that knows nothing of uuring opens /dev/ublk-control and /dev/ublkc0
 * with open(2), maps the descriptors with mmap(2) and drives them with
 * raw io_uring system calls, as a ublk server on ublk_drv does.  Block
 * I/O reaches the device through the preload's uuring_ublk_bdev_io
 * (looked up with dlsym) and, as root, through /dev/ublkbN (the driver,
 * forked from this process, serves its FUSE file), and stat/statx/access
 * see the driver's files.  Not linked to
 * libuuring: the preload's engine is the only one in the process.
 *
 * The payload "ucopy" serves the same device with UBLK_F_USER_COPY: the
 * data moves by pread(2), pwrite(2) and preadv(2) of /dev/ublkcN at
 * UBLKSRV_IO_BUF_OFFSET-encoded offsets (src/shim/ublkrw.c), with
 * ublk_drv's errnos (ublk_check_and_get_req).
 *
 * Driver (no argument): runs the payloads "server" and "ucopy" under
 * uuring run --block-kernel-uring, with a driver name of its own.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sys/uio.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "abi/io_uring_abi.h"
#include "abi/ublk_abi.h"
#include "run_util.h"

/* the raw system calls, as a program that knows nothing of uuring makes */
static int raw_setup(unsigned int entries, struct io_uring_params *p)
{
	int fd = (int)syscall(__NR_io_uring_setup, entries, p);

	return fd < 0 ? -errno : fd;
}

static int raw_enter(unsigned int fd, unsigned int to_submit,
		     unsigned int min_complete, unsigned int flags,
		     const void *arg, size_t argsz)
{
	return (int)syscall(__NR_io_uring_enter, fd, to_submit, min_complete,
			    flags, arg, argsz);
}

#define TR_SETUP raw_setup
#define TR_MMAP mmap
#define TR_ENTER raw_enter
#define TR_CLOSE close
#include "ublk_tr.h"

/*
 * /sys/class/ublk-char as libublk lists it (src/shim/ublksys.c): how
 * many entries, and whether ublkc<id> is one of them with a dev file
 * naming the number a stat of /dev/ublkc<id> gives; -1 if opendir fails.
 */
static int class_list(uint32_t id, bool *found)
{
	char want[32], path[64], txt[32] = "", exp[32];
	struct dirent *e;
	struct stat st;
	int n = 0, fd;
	DIR *d = opendir("/sys/class/ublk-char");

	*found = false;
	if (!d)
		return -1;
	snprintf(want, sizeof(want), "ublkc%u", id);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		n++;
		if (strcmp(e->d_name, want))
			continue;
		/* the entry's file, through the DIR's own fd */
		snprintf(path, sizeof(path), "%s/dev", want);
		fd = openat(dirfd(d), path, O_RDONLY);
		if (fd < 0)
			continue;
		if (read(fd, txt, sizeof(txt) - 1) <= 0)
			txt[0] = 0;
		close(fd);
		snprintf(path, sizeof(path), "/dev/%s", want);
		if (stat(path, &st))
			continue;
		snprintf(exp, sizeof(exp), "%u:%u\n", major(st.st_rdev),
			 minor(st.st_rdev));
		*found = !strcmp(txt, exp);
	}
	closedir(d);
	return n;
}

#define DEPTH 2
#define DISK (1 << 20)
static uint8_t disk[DISK];
static int chfd;
static const struct ublksrv_io_desc *iods;
static int served;
static bool ucopy;      /* the "ucopy" payload: UBLK_F_USER_COPY */
static int ucopy_dir = 1, ucopy_beyond = 1, ucopy_nowait = 1;

static uint64_t ucopy_pos(unsigned int tag, size_t off)
{
	return UBLKSRV_IO_BUF_OFFSET + ((uint64_t)tag << UBLK_TAG_OFF) + off;
}

/* USER_COPY: a request's data moved by pread/pwrite of the char device;
 * the first write also gets the errnos of ublk_check_and_get_req */
static void ucopy_serve(unsigned int t, uint8_t *dst, size_t len, bool write)
{
	uint64_t pos = ucopy_pos(t, 0);
	struct iovec iov[2] = { { dst, len / 2 }, { dst + len / 2, len / 2 } };
	uint8_t b[512];

	if (!write) {
		RU_CHECK(pwrite(chfd, dst, len, (off_t)pos) == (ssize_t)len,
			 "pwrite of a read's data: %s", strerror(errno));
		return;
	}
	if (ucopy_dir == 1) {
		/* ublk_check_ubuf_dir: a write's data is not written */
		ucopy_dir = pwrite(chfd, b, sizeof(b), (off_t)pos) < 0 ? errno : 0;
		/* __ublk_check_and_get_req: past the request's bytes */
		ucopy_beyond = pread(chfd, b, sizeof(b), (off_t)(pos + len + 512))
				       < 0 ? errno : 0;
		/* kiocb_set_rw_flags: no FMODE_NOWAIT */
		ucopy_nowait = preadv2(chfd, iov, 1, (off_t)pos, RWF_NOWAIT) < 0 ?
				       errno : 0;
	}
	RU_CHECK(preadv(chfd, iov, 2, (off_t)pos) == (ssize_t)len,
		 "preadv of a write's data: %s", strerror(errno));
}

/* one queue, both tags, until the device stops */
static void *server(void *arg)
{
	static uint8_t bufs[DEPTH][64 << 10];
	struct ublksrv_io_cmd io = { 0 };
	unsigned int live = DEPTH;
	struct tr r;

	(void)arg;
	if (tr_init(&r, 16, 0))
		return NULL;
	for (unsigned int t = 0; t < DEPTH; t++) {
		io = (struct ublksrv_io_cmd){
			.tag = (uint16_t)t,
			.addr = ucopy ? 0 : (uintptr_t)bufs[t] };
		tr_cmd(&r, chfd, UBLK_U_IO_FETCH_REQ, &io, sizeof(io), t);
		tr_submit(&r, 1);
	}
	while (live) {
		struct io_uring_cqe c = tr_wait(&r);
		unsigned int t = (unsigned int)c.user_data;
		const struct ublksrv_io_desc *d = &iods[t];
		size_t off = d->start_sector << 9, len = d->nr_sectors << 9;

		if (c.res < 0) {
			live--;
			continue;
		}
		if (ucopy && ((d->op_flags & 0xff) == UBLK_IO_OP_WRITE ||
			      (d->op_flags & 0xff) == UBLK_IO_OP_READ))
			ucopy_serve(t, disk + off, len,
				    (d->op_flags & 0xff) == UBLK_IO_OP_WRITE);
		else if ((d->op_flags & 0xff) == UBLK_IO_OP_WRITE)
			memcpy(disk + off, bufs[t], len);
		else if ((d->op_flags & 0xff) == UBLK_IO_OP_READ)
			memcpy(bufs[t], disk + off, len);
		io = (struct ublksrv_io_cmd){
			.tag = (uint16_t)t,
			.result = (int32_t)len,
			.addr = ucopy ? 0 : (uintptr_t)bufs[t] };
		served++;
		tr_cmd(&r, chfd, UBLK_U_IO_COMMIT_AND_FETCH_REQ, &io,
		       sizeof(io), t);
		tr_submit(&r, 1);
	}
	tr_exit(&r);
	return NULL;
}

/*
 * The block node, where the driver could make one (root, /dev/fuse, a
 * free loop device): uublkd was forked from this process under uuring
 * run, and its FUSE threads serve plain O_DIRECT preads of /dev/ublkbN
 * (what the 20 rounds wrote).  The number of reads, each one request.
 */
static int node_reads(struct tr *r, int cfd, uint32_t id)
{
	struct ublk_params p = { .len = sizeof(p) };
	uint8_t *b = aligned_alloc(4096, 8192);
	struct stat st;
	char node[32];
	int fd, n = 0;

	snprintf(node, sizeof(node), "/dev/ublkb%u", id);
	/* the node is ours only if GET_PARAMS names its numbers */
	if (stat(node, &st) || !S_ISBLK(st.st_mode) ||
	    ctrl(r, cfd, UBLK_U_CMD_GET_PARAMS, id, 0xffff, &p, sizeof(p),
		 0) ||
	    p.devt.disk_major != major(st.st_rdev) ||
	    p.devt.disk_minor != minor(st.st_rdev)) {
		fprintf(stderr, "no %s of this driver: the in-process block "
				"side only\n", node);
		free(b);
		return 0;
	}
	fd = open(node, O_RDONLY | O_DIRECT);
	RU_CHECK(fd >= 0, "open %s: %s", node, strerror(errno));
	for (int k = 0; fd >= 0 && k < 4; k++) {
		bool same = pread(fd, b, 8192, (off_t)k * 8192) == 8192;

		for (size_t i = 0; same && i < 8192; i++)
			same = b[i] == (uint8_t)(i + (size_t)k * 13);
		RU_CHECK(same, "%s: block %d reads what round %d wrote", node,
			 k, k);
		n++;
	}
	if (fd >= 0)
		close(fd);
	free(b);
	return n;
}

static int payload(void)
{
	int (*bdev_io)(int, int, void *, size_t, uint64_t) =
		(int (*)(int, int, void *, size_t, uint64_t))dlsym(
			RTLD_DEFAULT, "uuring_ublk_bdev_io");
	struct ublksrv_ctrl_dev_info info = {
		.nr_hw_queues = 1, .queue_depth = DEPTH,
		.max_io_buf_bytes = 64 << 10, .dev_id = UINT32_MAX,
		.flags = ucopy ? UBLK_F_USER_COPY : 0 };
	struct ublk_params p = { .len = sizeof(p),
				 .types = UBLK_PARAM_TYPE_BASIC };
	static uint8_t w[8192], rd[8192];
	struct statx sx;
	struct stat st;
	char path[32];
	pthread_t th;
	struct tr r;
	bool listed;
	int cfd, extra;

	RU_CHECK(bdev_io, "uuring_ublk_bdev_io in the preload");
	RU_CHECK(!stat("/dev/ublk-control", &st) && S_ISCHR(st.st_mode),
		 "stat /dev/ublk-control: a character device");
	RU_CHECK(!access("/dev/ublk-control", R_OK | W_OK),
		 "access /dev/ublk-control");
	cfd = open("/dev/ublk-control", O_RDWR);
	RU_CHECK(cfd >= 0, "open /dev/ublk-control: %s", strerror(errno));
	if (!bdev_io || cfd < 0 || tr_init(&r, 16, IORING_SETUP_SQE128))
		return 1;
	RU_CHECK(ctrl(&r, cfd, UBLK_U_CMD_ADD_DEV, UINT32_MAX, 0xffff,
		      &info, sizeof(info), 0) == 0, "ADD_DEV");
	p.basic.logical_bs_shift = 9;
	p.basic.physical_bs_shift = 12;
	p.basic.max_sectors = 128;
	p.basic.dev_sectors = DISK >> 9;
	RU_CHECK(ctrl(&r, cfd, UBLK_U_CMD_SET_PARAMS, info.dev_id, 0xffff,
		      &p, sizeof(p), 0) == 0, "SET_PARAMS");
	snprintf(path, sizeof(path), "/dev/ublkc%u", info.dev_id);
	RU_CHECK(!statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &sx) &&
			 S_ISCHR(sx.stx_mode),
		 "statx %s: a character device", path);
	RU_CHECK(class_list(info.dev_id, &listed) == 1 && listed,
		 "/sys/class/ublk-char lists ublkc%u (with its dev file) "
		 "and nothing else", info.dev_id);
	chfd = open(path, O_RDWR);
	RU_CHECK(chfd >= 0, "open %s: %s", path, strerror(errno));
	RU_CHECK(open(path, O_RDWR) < 0 && errno == EBUSY,
		 "a second open: EBUSY (ublk_ch_open)");
	iods = mmap(NULL, 4096, PROT_READ, MAP_SHARED, chfd, 0);
	RU_CHECK(iods != MAP_FAILED, "mmap descriptors: %s", strerror(errno));
	RU_CHECK(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, chfd,
		      0) == MAP_FAILED && errno == EPERM,
		 "a writable mapping: EPERM (ublk_ch_mmap)");
	if (chfd < 0 || iods == MAP_FAILED)
		return 1;
	if (ucopy) {
		uint8_t b[512];

		RU_CHECK(info.flags & UBLK_F_USER_COPY, "ADD_DEV kept USER_COPY");
		/* ublk_check_and_get_req: not started, so DEAD */
		RU_CHECK(pread(chfd, b, sizeof(b), (off_t)ucopy_pos(0, 0)) < 0 &&
				 errno == EACCES,
			 "pread before START_DEV: EACCES (%s)", strerror(errno));
		/* the control file has no read_iter */
		RU_CHECK(pread(cfd, b, sizeof(b), 0) < 0 && errno == EINVAL,
			 "pread of /dev/ublk-control: EINVAL (%s)",
			 strerror(errno));
	}
	pthread_create(&th, NULL, server, NULL);
	RU_CHECK(ctrl(&r, cfd, UBLK_U_CMD_START_DEV, info.dev_id, 0xffff,
		      NULL, 0, (uint64_t)getpid()) == 0, "START_DEV");
	for (int k = 0; k < 20; k++) {
		for (size_t b = 0; b < sizeof(w); b++)
			w[b] = (uint8_t)(b + (size_t)k * 13);
		RU_CHECK(bdev_io((int)info.dev_id, UBLK_IO_OP_WRITE, w,
				 sizeof(w), (uint64_t)k * 8192) == 8192,
			 "write %d", k);
		RU_CHECK(bdev_io((int)info.dev_id, UBLK_IO_OP_READ, rd,
				 sizeof(rd), (uint64_t)k * 8192) == 8192 &&
				 !memcmp(w, rd, sizeof(w)),
			 "read back %d", k);
	}
	extra = node_reads(&r, cfd, info.dev_id);
	RU_CHECK(ctrl(&r, cfd, UBLK_U_CMD_STOP_DEV, info.dev_id, 0xffff,
		      NULL, 0, 0) ==
			 0, "STOP_DEV");
	pthread_join(th, NULL);
	RU_CHECK(served == 40 + extra, "served %d of %d", served, 40 + extra);
	if (ucopy) {
		RU_CHECK(ucopy_dir == EACCES, "pwrite of a write: EACCES, %d",
			 ucopy_dir);
		RU_CHECK(ucopy_beyond == EINVAL,
			 "pread past the request: EINVAL, %d", ucopy_beyond);
		RU_CHECK(ucopy_nowait == EOPNOTSUPP,
			 "preadv2 RWF_NOWAIT: EOPNOTSUPP, %d", ucopy_nowait);
	}
	munmap((void *)iods, 4096);
	close(chfd);
	RU_CHECK(ctrl(&r, cfd, UBLK_U_CMD_DEL_DEV, info.dev_id, 0xffff,
		      NULL, 0, 0) ==
			 0, "DEL_DEV after the char device's release");
	RU_CHECK(stat(path, &st) < 0 && errno == ENOENT,
		 "stat %s after DEL_DEV: ENOENT", path);
	RU_CHECK(class_list(info.dev_id, &listed) == 0,
		 "/sys/class/ublk-char is empty after DEL_DEV");
	tr_exit(&r);
	close(cfd);
	return ru_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	char name[64];
	int st;

	if (argc > 1 && !strcmp(argv[1], "server"))
		return payload();
	if (argc > 1 && !strcmp(argv[1], "ucopy")) {
		ucopy = true;
		return payload();
	}
	if (!ru_tool()) {
		fprintf(stderr, "skip: no usable uuring tool (not built, "
				"or a sanitizer build)\n");
		return RU_SKIP;
	}
	if (!access("/dev/ublk-control", F_OK)) {
		fprintf(stderr, "skip: the kernel has ublk "
				"(UURING_UBLK=force not tried)\n");
		return RU_SKIP;
	}
	snprintf(name, sizeof(name), "uuring-ublkd-runtest-%d", (int)getpid());
	setenv("UURING_UBLKD_NAME", name, 1);
	st = ru_payload("server", "--mode=auto", 30);
	if (st)
		ru_describe("server", st);
	RU_CHECK(st == 0, "server payload");
	st = ru_payload("ucopy", "--mode=auto", 30);
	if (st)
		ru_describe("ucopy", st);
	RU_CHECK(st == 0, "USER_COPY server payload");
	if (ru_failures)
		return 1;
	fprintf(stderr, "all passed\n");
	return 0;
}
