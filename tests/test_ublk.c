// SPDX-License-Identifier: MIT
/*
 * The ublk driver in user space (src/ublk/, docs/ublk.md), through the
 * API: control commands on /dev/ublk-control (IORING_OP_URING_CMD on an
 * SQE128 ring) with ublk_drv's errnos, each check naming the ublk_drv.c
 * function whose rule it mirrors; a small server (one thread and ring
 * per queue, memory-backed) serving block I/O submitted to the device
 * (uuring_ublk_bdev_io, through the block-queue model into the slots);
 * per-io daemons (two threads fetching tags of one queue); and the state
 * a device takes when its server process dies.
 *
 * Scenarios (arguments select some): ctrl unpriv io perio getdata exit
 * ucopy (USER_COPY, test_ublk_ucopy.h), zcopy autobuf (zero copy and
 * AUTO_BUF_REG, test_ublk_zcopy.h),
 * and bench and seed004 (test_ublk_seed004.h), measurements run only
 * when named.  The driver runs under a
 * name of this test's own (UURING_UBLKD_NAME), so another test's devices
 * are not seen; it exits by itself once idle.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include "abi/io_uring_abi.h"
#include "abi/ublk_abi.h"
#include "uuring.h"
#include "uuring_ublk.h"

static int failures;

#define CHECK(cond, ...)                                               \
	do {                                                           \
		if (!(cond)) {                                         \
			failures++;                                    \
			fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                  \
			fputc('\n', stderr);                           \
		}                                                      \
	} while (0)
#define EQ(got, want, rule)                                              \
	CHECK((long long)(got) == (long long)(want), "%s: got %lld want %lld", \
	      rule, (long long)(got), (long long)(want))

#include "ublk_tr.h"

static int add_dev(struct tr *r, int cfd, struct ublksrv_ctrl_dev_info *info)
{
	return ctrl(r, cfd, UBLK_U_CMD_ADD_DEV, info->dev_id, 0xffff, info,
		    sizeof(*info), 0);
}

static void info_init(struct ublksrv_ctrl_dev_info *i, uint16_t nq,
		      uint16_t depth, uint64_t flags)
{
	memset(i, 0, sizeof(*i));
	i->nr_hw_queues = nq;
	i->queue_depth = depth;
	i->max_io_buf_bytes = 64 << 10;
	i->dev_id = UINT32_MAX;
	i->flags = flags;
}

static int set_basic(struct tr *r, int cfd, int id, uint64_t sectors)
{
	struct ublk_params p = { .len = sizeof(p),
				 .types = UBLK_PARAM_TYPE_BASIC };

	p.basic.logical_bs_shift = 9;
	p.basic.physical_bs_shift = 12;
	p.basic.max_sectors = 128;
	p.basic.dev_sectors = sectors;
	return ctrl(r, cfd, UBLK_U_CMD_SET_PARAMS, (uint32_t)id, 0xffff, &p,
		    sizeof(p), 0);
}

static void ctrl_add_dev_rules(struct tr *r, int cfd)
{
	struct ublksrv_ctrl_dev_info i;

	info_init(&i, 1, 4, 0);
	EQ(ctrl(r, cfd, UBLK_U_CMD_ADD_DEV, i.dev_id, 0xffff, &i, 63, 0),
	   -EINVAL, "ublk_ctrl_add_dev: len < sizeof(info)");
	EQ(ctrl(r, cfd, UBLK_U_CMD_ADD_DEV, i.dev_id, 0, &i, sizeof(i), 0),
	   -EINVAL, "ublk_ctrl_add_dev: queue_id != -1");
	EQ(ctrl(r, cfd, UBLK_U_CMD_ADD_DEV, i.dev_id, 0xffff, (void *)8,
		sizeof(i), 0), -EFAULT, "ublk_ctrl_add_dev: copy_from_user");
	info_init(&i, 1, 0, 0);
	EQ(add_dev(r, cfd, &i), -EINVAL, "ublk_ctrl_add_dev: depth 0");
	info_init(&i, 1, UBLK_MAX_QUEUE_DEPTH + 1, 0);
	EQ(add_dev(r, cfd, &i), -EINVAL, "ublk_ctrl_add_dev: depth > 4096");
	info_init(&i, 0, 4, 0);
	EQ(add_dev(r, cfd, &i), -EINVAL, "ublk_ctrl_add_dev: no queue");
	info_init(&i, 1, 4, UBLK_F_USER_RECOVERY_REISSUE);
	EQ(add_dev(r, cfd, &i), -EINVAL,
	   "ublk_ctrl_add_dev: recovery flags combination");
	info_init(&i, 1, 4, UBLK_F_QUIESCE);
	EQ(add_dev(r, cfd, &i), -EINVAL,
	   "ublk_ctrl_add_dev: QUIESCE needs USER_RECOVERY");
	info_init(&i, 1, 4, 0);
	i.dev_id = 3;
	EQ(ctrl(r, cfd, UBLK_U_CMD_ADD_DEV, 4, 0xffff, &i, sizeof(i), 0),
	   -EINVAL, "ublk_ctrl_add_dev: header dev_id != info dev_id");
	i.dev_id = 1u << 20;
	EQ(add_dev(r, cfd, &i), -EINVAL,
	   "ublk_ctrl_add_dev: dev_id >= UBLK_MINORS");
	info_init(&i, 1, 4, UBLK_F_ZONED);
	EQ(add_dev(r, cfd, &i), -EINVAL,
	   "ublk_ctrl_add_dev: zoned without CONFIG_BLK_DEV_ZONED");
}

/* GET_DEV_INFO2 names the char device by path, even on a privileged
 * device (ublk_ctrl_uring_cmd_permission) */
static int dev_info2(struct tr *r, int cfd, int id, const char *path,
		     uint16_t path_len, struct ublksrv_ctrl_dev_info *out)
{
	struct {
		char path[32];
		struct ublksrv_ctrl_dev_info info;
	} __attribute__((packed)) b;
	struct ublksrv_ctrl_cmd c = { .dev_id = (uint32_t)id,
				      .queue_id = 0xffff,
				      .len = (uint16_t)(path_len +
						 sizeof(*out)),
				      .addr = (uintptr_t)b.path + 32 - path_len,
				      .dev_path_len = path_len };
	int ret;

	memset(&b, 0, sizeof(b));
	memcpy(b.path + 32 - path_len, path, path_len);
	tr_cmd(r, cfd, UBLK_U_CMD_GET_DEV_INFO2, &c, sizeof(c), 2);
	tr_submit(r, 1);
	ret = tr_wait(r).res;
	memcpy(out, &b.info, sizeof(*out));
	return ret;
}

static void dev_info2_rules(struct tr *r, int cfd, int id)
{
	struct ublksrv_ctrl_dev_info got;
	char path[32], other[32];
	uint16_t n;

	snprintf(path, sizeof(path), "/dev/ublkc%d", id);
	snprintf(other, sizeof(other), "/dev/ublkc%d", id + 1);
	n = (uint16_t)(strlen(path) + 1);
	EQ(dev_info2(r, cfd, id, path, 0, &got), -EINVAL,
	   "ublk_ctrl_uring_cmd_permission: no dev_path_len");
	EQ(dev_info2(r, cfd, id, other, (uint16_t)(strlen(other) + 1), &got),
	   -EPERM, "ublk_char_dev_permission: another device's node");
	memset(&got, 0xff, sizeof(got));
	EQ(dev_info2(r, cfd, id, path, n, &got), 0, "GET_DEV_INFO2");
	EQ(got.dev_id, (unsigned)id, "GET_DEV_INFO2: info after the path");
}

static void ctrl_params_rules(struct tr *r, int cfd, int id)
{
	struct ublk_params p;

	memset(&p, 0, sizeof(p));
	p.len = sizeof(p);
	EQ(ctrl(r, cfd, UBLK_U_CMD_GET_PARAMS, (uint32_t)id, 0xffff, &p, 8, 0),
	   -EINVAL, "ublk_ctrl_get_params: len <= header");
	p.len = 0;
	EQ(ctrl(r, cfd, UBLK_U_CMD_GET_PARAMS, (uint32_t)id, 0xffff, &p,
		sizeof(p), 0), -EINVAL, "ublk_ctrl_get_params: ph.len 0");
	p.len = sizeof(p) + 8;
	EQ(ctrl(r, cfd, UBLK_U_CMD_GET_PARAMS, (uint32_t)id, 0xffff, &p,
		sizeof(p), 0), -EINVAL, "ublk_ctrl_get_params: ph.len > len");
	p.len = sizeof(p);
	p.types = 0;
	EQ(ctrl(r, cfd, UBLK_U_CMD_SET_PARAMS, (uint32_t)id, 0xffff, &p,
		sizeof(p), 0), -EINVAL, "ublk_ctrl_set_params: no types");
	p.types = UBLK_PARAM_TYPE_BASIC;
	p.basic.logical_bs_shift = 8;
	p.basic.physical_bs_shift = 12;
	EQ(ctrl(r, cfd, UBLK_U_CMD_SET_PARAMS, (uint32_t)id, 0xffff, &p,
		sizeof(p), 0), -EINVAL, "ublk_validate_params: lbs < 512");
	p.basic.logical_bs_shift = 9;
	p.basic.max_sectors = 129; /* max_io_buf_bytes 64 KiB */
	EQ(ctrl(r, cfd, UBLK_U_CMD_SET_PARAMS, (uint32_t)id, 0xffff, &p,
		sizeof(p), 0), -EINVAL,
	   "ublk_validate_params: max_sectors > max_io_buf_bytes");
	p.basic.max_sectors = 128;
	p.types |= UBLK_PARAM_TYPE_DEVT;
	EQ(ctrl(r, cfd, UBLK_U_CMD_SET_PARAMS, (uint32_t)id, 0xffff, &p,
		sizeof(p), 0), -EINVAL, "ublk_validate_params: devt read-only");
	EQ(set_basic(r, cfd, id, 2048), 0, "ublk_ctrl_set_params");
	memset(&p, 0, sizeof(p));
	p.len = sizeof(p);
	EQ(ctrl(r, cfd, UBLK_U_CMD_GET_PARAMS, (uint32_t)id, 0xffff, &p,
		sizeof(p), 0), 0, "ublk_ctrl_get_params");
	CHECK(p.types == (UBLK_PARAM_TYPE_BASIC | UBLK_PARAM_TYPE_DEVT) &&
	      p.basic.dev_sectors == 2048 && p.devt.char_minor == (unsigned)id,
	      "GET_PARAMS: types %#x sectors %llu minor %u", p.types,
	      (unsigned long long)p.basic.dev_sectors, p.devt.char_minor);
}

static void ctrl_queue_rules(struct tr *r, int cfd, int id, int nq)
{
	uint64_t mask[2] = { 0, 0 };

	EQ(ctrl(r, cfd, UBLK_U_CMD_GET_QUEUE_AFFINITY, (uint32_t)id, 0xffff,
		mask, 7, 0), -EINVAL,
	   "ublk_ctrl_get_queue_affinity: len not of longs");
	EQ(ctrl(r, cfd, UBLK_U_CMD_GET_QUEUE_AFFINITY, (uint32_t)id, 0xffff,
		mask, 8, (uint64_t)nq), -EINVAL,
	   "ublk_ctrl_get_queue_affinity: queue >= nr_hw_queues");
	EQ(ctrl(r, cfd, UBLK_U_CMD_GET_QUEUE_AFFINITY, (uint32_t)id, 0xffff,
		mask, 16, 0), 0, "ublk_ctrl_get_queue_affinity");
	CHECK(mask[0] & 1, "queue 0's CPUs %#llx lack CPU 0",
	      (unsigned long long)mask[0]);
	EQ(ctrl(r, cfd, UBLK_U_CMD_START_DEV, (uint32_t)id, 0xffff, NULL, 0, 0),
	   -EINVAL, "ublk_ctrl_start_dev: pid <= 0");
	EQ(ctrl(r, cfd, _IOWR('u', 0x30, struct ublksrv_ctrl_cmd), (uint32_t)id,
		0xffff, NULL, 0, 0), -EOPNOTSUPP,
	   "ublk_ctrl_uring_cmd: unknown command");
}

/* ublkcN: open, mmap and I/O command rules on a device nobody serves */
static void char_rules(struct tr *r, int id, int depth, int nq)
{
	char path[32];
	size_t qlen = ((size_t)depth * 24 + 4095) & ~(size_t)4095;
	struct ublksrv_io_cmd io = { 0 };
	struct io_uring_cqe c;
	int fd, fd2, status;
	pid_t pid;
	void *p;

	snprintf(path, sizeof(path), "/dev/ublkc%d", id);
	fd = uuring_ublk_open(path, O_RDWR);
	CHECK(fd >= 0, "open %s: %d", path, fd);
	fd2 = uuring_ublk_open(path, O_RDWR);
	EQ(fd2, -EBUSY, "ublk_ch_open: one opener");
	p = uuring_mmap(NULL, qlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	EQ((intptr_t)p, -EPERM, "ublk_ch_mmap: VM_WRITE");
	p = uuring_mmap(NULL, qlen * 2, PROT_READ, MAP_SHARED, fd, 0);
	EQ((intptr_t)p, -EINVAL, "ublk_ch_mmap: size != queue's");
	p = uuring_mmap(NULL, qlen, PROT_READ, MAP_SHARED, fd,
			(off_t)nq * (96 << 10));
	EQ((intptr_t)p, -EINVAL, "ublk_ch_mmap: queue beyond nr_hw_queues");
	p = uuring_mmap(NULL, qlen, PROT_READ, MAP_SHARED, fd, 0);
	CHECK((intptr_t)p > 0, "ublk_ch_mmap: %ld", (long)(intptr_t)p);
	io.q_id = (uint16_t)nq;
	io.addr = 4096;
	tr_cmd(r, fd, UBLK_U_IO_FETCH_REQ, &io, sizeof(io), 1);
	tr_submit(r, 1);
	EQ(tr_wait(r).res, -EINVAL, "ublk_ch_uring_cmd_local: q_id range");
	io.q_id = 0;
	io.tag = (uint16_t)depth;
	tr_cmd(r, fd, UBLK_U_IO_FETCH_REQ, &io, sizeof(io), 1);
	tr_submit(r, 1);
	EQ(tr_wait(r).res, -EINVAL, "ublk_ch_uring_cmd_local: tag range");
	io.tag = 0;
	io.addr = 0;
	tr_cmd(r, fd, UBLK_U_IO_FETCH_REQ, &io, sizeof(io), 1);
	tr_submit(r, 1);
	EQ(tr_wait(r).res, -EINVAL, "ublk_check_fetch_buf: no buffer");
	io.addr = 4096;
	tr_cmd(r, fd, UBLK_U_IO_COMMIT_AND_FETCH_REQ, &io, sizeof(io), 1);
	tr_submit(r, 1);
	EQ(tr_wait(r).res, -EINVAL,
	   "ublk_ch_uring_cmd_local: io->task != current");
	/* a FETCH is queued; a second one on its tag is refused; the
	 * ring's exit cancels the first (ublk_uring_cmd_cancel_fn) */
	tr_cmd(r, fd, UBLK_U_IO_FETCH_REQ, &io, sizeof(io), 2);
	tr_submit(r, 1);
	tr_cmd(r, fd, UBLK_U_IO_FETCH_REQ, &io, sizeof(io), 3);
	tr_submit(r, 1);
	c = tr_wait(r);
	EQ(c.user_data, 3, "the refused FETCH completes first");
	EQ(c.res, -EINVAL, "ublk_fetch: FETCH of an active tag");
	/* a forked child's commands on the inherited fd (docs/ublk.md,
	 * "Fork") */
	pid = fork();
	if (pid == 0) {
		struct tr cr;

		io.tag = 1;
		if (tr_init(&cr, 8, 0))
			_exit(2);
		tr_cmd(&cr, fd, UBLK_U_IO_FETCH_REQ, &io, sizeof(io), 1);
		tr_submit(&cr, 1);
		_exit(tr_wait(&cr).res == -EINVAL ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
	   "a forked child's FETCH: -EINVAL");
	munmap(p, qlen);
	uuring_close(fd);
}

static void scenario_ctrl(void)
{
	struct tr r, small;
	struct ublksrv_ctrl_dev_info i, got;
	uint64_t feat = 0;
	int cfd, id, ncpu = get_nprocs_conf();

	cfd = uuring_ublk_open("/dev/ublk-control", O_RDWR);
	CHECK(cfd >= 0, "open ublk-control: %d", cfd);
	if (cfd < 0 || tr_init(&r, 8, IORING_SETUP_SQE128) ||
	    tr_init(&small, 8, 0))
		return;
	EQ(ctrl(&small, cfd, UBLK_U_CMD_GET_FEATURES, 0, 0xffff, &feat, 8, 0),
	   -EINVAL, "ublk_ctrl_uring_cmd: not SQE128");
	EQ(ctrl(&r, cfd, UBLK_U_CMD_GET_FEATURES, 0, 0xffff, &feat, 4, 0),
	   -EINVAL, "ublk_ctrl_get_features: len != 8");
	EQ(ctrl(&r, cfd, UBLK_U_CMD_GET_FEATURES, 0, 0xffff, &feat, 8, 0), 0,
	   "ublk_ctrl_get_features");
	CHECK((feat & (UBLK_F_PER_IO_DAEMON | UBLK_F_CMD_IOCTL_ENCODE)) ==
		      (UBLK_F_PER_IO_DAEMON | UBLK_F_CMD_IOCTL_ENCODE),
	      "features %#llx", (unsigned long long)feat);
	EQ(ctrl(&r, cfd, _IOR('x', UBLK_CMD_GET_DEV_INFO,
			      struct ublksrv_ctrl_cmd), 0, 0xffff, &got,
		sizeof(got), 0), -EOPNOTSUPP, "ublk_check_cmd_op: type");
	EQ(ctrl(&r, cfd, UBLK_U_CMD_GET_DEV_INFO, 9999, 0xffff, &got,
		sizeof(got), 0), -ENODEV, "ublk_get_device_from_id");
	ctrl_add_dev_rules(&r, cfd);
	info_init(&i, 64, 4, UBLK_F_USER_RECOVERY | (1ULL << 40));
	i.max_io_buf_bytes = (64 << 10) + 1;
	EQ(add_dev(&r, cfd, &i), 0, "ublk_ctrl_add_dev");
	id = (int)i.dev_id;
	CHECK(i.nr_hw_queues == ncpu, "queues capped at nr_cpu_ids: %u",
	      i.nr_hw_queues);
	EQ(i.max_io_buf_bytes, 64 << 10, "ublk_align_max_io_size");
	EQ(i.flags, UBLK_F_USER_RECOVERY | UBLK_F_CMD_IOCTL_ENCODE |
			    UBLK_F_URING_CMD_COMP_IN_TASK |
			    UBLK_F_PER_IO_DAEMON | UBLK_F_BUF_REG_OFF_DAEMON,
	   "ublk_ctrl_add_dev: flags negotiated");
	i.dev_id = (uint32_t)id;
	EQ(add_dev(&r, cfd, &i), -EEXIST, "ublk_alloc_dev_number: taken");
	/* the legacy number (CONFIG_BLKDEV_UBLK_LEGACY_OPCODES) */
	EQ(ctrl(&r, cfd, UBLK_CMD_GET_DEV_INFO, (uint32_t)id, 0xffff, &got,
		sizeof(got), 0), 0, "ublk_ctrl_get_dev_info (legacy op)");
	EQ(got.dev_id, (unsigned)id, "GET_DEV_INFO dev_id");
	EQ(ctrl(&r, cfd, UBLK_U_CMD_GET_DEV_INFO, (uint32_t)id, 0xffff, &got,
		sizeof(got) - 1, 0), -EINVAL, "ublk_ctrl_get_dev_info: len");
	dev_info2_rules(&r, cfd, id);
	ctrl_params_rules(&r, cfd, id);
	ctrl_queue_rules(&r, cfd, id, i.nr_hw_queues);
	char_rules(&small, id, i.queue_depth, i.nr_hw_queues);
	tr_exit(&small);
	/* DEL_DEV waits for the char device's release: closed above */
	EQ(ctrl(&r, cfd, UBLK_U_CMD_DEL_DEV, (uint32_t)id, 0xffff, NULL, 0, 0),
	   0, "ublk_ctrl_del_dev");
	EQ(ctrl(&r, cfd, UBLK_U_CMD_GET_DEV_INFO, (uint32_t)id, 0xffff, &got,
		sizeof(got), 0), -ENODEV, "deleted device");
	tr_exit(&r);
	uuring_close(cfd);
}

/* a control command naming the device by path (unprivileged devices) */
static int ctrl_path(struct tr *r, int cfd, uint32_t op, int id)
{
	char path[32];
	struct ublksrv_ctrl_cmd c = { .dev_id = (uint32_t)id,
				      .queue_id = 0xffff,
				      .addr = (uintptr_t)path };

	snprintf(path, sizeof(path), "/dev/ublkc%d", id);
	c.dev_path_len = (uint16_t)(strlen(path) + 1);
	c.len = c.dev_path_len;
	tr_cmd(r, cfd, op, &c, sizeof(c), 3);
	tr_submit(r, 1);
	return tr_wait(r).res;
}

/* the unprivileged rules, in a child that gave up root */
static int unpriv_child(int cfd, int root_id)
{
	struct ublksrv_ctrl_dev_info i, got;
	struct tr r;

	if (tr_init(&r, 8, IORING_SETUP_SQE128) || setgid(65534) ||
	    setuid(65534))
		return 2;
	info_init(&i, 1, 4, 0);
	EQ(add_dev(&r, cfd, &i), -EPERM,
	   "ublk_ctrl_add_dev: not CAP_SYS_ADMIN, not UNPRIVILEGED_DEV");
	info_init(&i, 1, 4, UBLK_F_UNPRIVILEGED_DEV | UBLK_F_USER_COPY);
	EQ(add_dev(&r, cfd, &i), -EINVAL,
	   "ublk_ctrl_add_dev: unprivileged USER_COPY");
	EQ(ctrl(&r, cfd, UBLK_U_CMD_GET_DEV_INFO, (uint32_t)root_id, 0xffff,
		&got, sizeof(got), 0), -EPERM,
	   "ublk_ctrl_uring_cmd_permission: a privileged device");
	info_init(&i, 1, 4, UBLK_F_UNPRIVILEGED_DEV | UBLK_F_USER_RECOVERY);
	EQ(add_dev(&r, cfd, &i), 0, "ublk_ctrl_add_dev: unprivileged");
	EQ(i.flags & (UBLK_F_USER_RECOVERY | UBLK_F_UNPRIVILEGED_DEV),
	   UBLK_F_UNPRIVILEGED_DEV,
	   "ublk_ctrl_add_dev: no recovery for unprivileged devices");
	EQ(i.owner_uid, 65534, "ublk_store_owner_uid_gid");
	EQ(ctrl(&r, cfd, UBLK_U_CMD_GET_DEV_INFO, i.dev_id, 0xffff, &got,
		sizeof(got), 0), -EINVAL,
	   "ublk_ctrl_uring_cmd_permission: no dev_path_len");
	EQ(ctrl_path(&r, cfd, UBLK_U_CMD_DEL_DEV, (int)i.dev_id), 0,
	   "DEL_DEV of its own device, by path");
	return failures ? 1 : 0;
}

static void scenario_unpriv(void)
{
	struct ublksrv_ctrl_dev_info i;
	struct tr r;
	int cfd = uuring_ublk_open("/dev/ublk-control", O_RDWR), status;
	pid_t pid;

	if (geteuid() != 0) {
		fprintf(stderr, "unpriv: not root, skipped\n");
		return;
	}
	if (cfd < 0 || tr_init(&r, 8, IORING_SETUP_SQE128)) {
		CHECK(0, "setup");
		return;
	}
	info_init(&i, 1, 4, 0);
	EQ(add_dev(&r, cfd, &i), 0, "ublk_ctrl_add_dev (root)");
	pid = fork();
	if (pid == 0)
		_exit(unpriv_child(cfd, (int)i.dev_id));
	waitpid(pid, &status, 0);
	EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
	   "the unprivileged child's checks");
	EQ(ctrl(&r, cfd, UBLK_U_CMD_DEL_DEV, i.dev_id, 0xffff, NULL, 0, 0), 0,
	   "ublk_ctrl_del_dev");
	tr_exit(&r);
	uuring_close(cfd);
}

#include "test_ublk_srv.h"
#include "test_ublk_seed004.h"
#include "test_ublk_ucopy.h"
#include "test_ublk_zcopy.h"

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} sc[] = {
		{ "ctrl", scenario_ctrl },
		{ "unpriv", scenario_unpriv },
		{ "io", scenario_io },
		{ "perio", scenario_perio },
		{ "getdata", scenario_getdata },
		{ "exit", scenario_exit },
		{ "ucopy", scenario_ucopy },
		{ "zcopy", scenario_zcopy },
		{ "autobuf", scenario_autobuf },
		{ "bench", scenario_bench }, /* named only */
		{ "seed004", scenario_seed004 }, /* named only */
	};
	char name[64];

	snprintf(name, sizeof(name), "uuring-ublkd-test-%d", (int)getpid());
	setenv("UURING_UBLKD_NAME", name, 0);
	for (size_t k = 0; k < sizeof(sc) / sizeof(sc[0]); k++) {
		bool run = argc < 2 && strcmp(sc[k].name, "bench") &&
			   strcmp(sc[k].name, "seed004");

		for (int a = 1; a < argc; a++)
			run |= !strcmp(argv[a], sc[k].name);
		if (!run)
			continue;
		fprintf(stderr, "scenario %s\n", sc[k].name);
		sc[k].fn();
	}
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	fprintf(stderr, "all passed\n");
	return 0;
}
