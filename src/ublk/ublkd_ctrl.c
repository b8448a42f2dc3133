// SPDX-License-Identifier: MIT
/*
 * uublkd's control commands: ublk_drv's ublk_ctrl_uring_cmd and the
 * ublk_ctrl_* functions it calls, rule for rule and errno for errno,
 * except where docs/ublk.md says otherwise.  The client already did what
 * needs the submitter (the SQE128 and non-blocking checks, reading the
 * command's input, which arrives here, and writing its output, which is
 * sent back); the commands that wait in the kernel (START_DEV and
 * END_USER_RECOVERY for the fetches, DEL_DEV for the char device's
 * release) keep their request on the connection and are answered later
 * by ublkd_ctrl_rewait.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "ublk/ublkd.h"

/* What this driver supports of ublk_drv's UBLK_F_ALL (docs/ublk.md: no
 * zoned devices); ADD_DEV clears the rest as the kernel clears unknown
 * bits. */
#define UBLKD_F_ALL                                                         \
	(UBLK_F_URING_CMD_COMP_IN_TASK | UBLK_F_NEED_GET_DATA |             \
	 UBLK_F_USER_COPY | UBLK_F_SUPPORT_ZERO_COPY | UBLK_F_AUTO_BUF_REG | \
	 UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_REISSUE |              \
	 UBLK_F_UNPRIVILEGED_DEV | UBLK_F_CMD_IOCTL_ENCODE |                \
	 UBLK_F_USER_RECOVERY_FAIL_IO | UBLK_F_UPDATE_SIZE | UBLK_F_QUIESCE | \
	 UBLK_F_PER_IO_DAEMON | UBLK_F_BUF_REG_OFF_DAEMON)
#define F_RECOVERY_ALL                                  \
	(UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_REISSUE | \
	 UBLK_F_USER_RECOVERY_FAIL_IO)
#define PARAM_TYPE_ALL                                                   \
	(UBLK_PARAM_TYPE_BASIC | UBLK_PARAM_TYPE_DISCARD |               \
	 UBLK_PARAM_TYPE_DEVT | UBLK_PARAM_TYPE_ZONED |                  \
	 UBLK_PARAM_TYPE_DMA_ALIGN | UBLK_PARAM_TYPE_SEGMENT)
#define UBLK_MINORS (1u << 20)
#define UNPRIV_MAX 64u
#define PAGE_SHIFT_ 12

/* One command being answered: its input and where its output goes. */
struct ctrl {
	struct uconn *c;
	struct um_ctrl *m;
	struct ublksrv_ctrl_cmd hdr; /* addr/len after the path check */
	const uint8_t *path, *in;
	uint32_t in_flags;           /* UM_CTRL_IN_FAULT of `in` */
	uint32_t out_off;            /* addr shift of the path check */
};

static void answer(struct uconn *c, const struct um_ctrl *m, int res,
		   uint32_t out_off, const void *out, size_t out_len)
{
	struct um_ctrl_rep rep = {
		.h = { .type = UM_CTRL, .res = res, .seq = m->h.seq },
		.out_off = out_off,
		.out_len = res < 0 ? 0 : (uint32_t)out_len,
	};

	ublkd_reply(c, &rep, sizeof(rep), out, res < 0 ? 0 : out_len);
}

static bool nosrv_should_stop(const struct udev *d)
{
	return !(d->info.flags & UBLK_F_USER_RECOVERY);
}

static unsigned int nr_cpu_ids_(void)
{
	int n = get_nprocs_conf();

	return n > 0 ? (unsigned int)n : 1;
}

/* ublk_alloc_dev_number: the asked id or -EEXIST, else the lowest free */
static int alloc_id(int want)
{
	if (want >= 0)
		return ublkd_dev_find(want) ? -EEXIST : want;
	for (int id = 0; id < (int)UBLK_MINORS; id++)
		if (!ublkd_dev_find(id))
			return id;
	return -ENOSPC;
}

static int memfd_sized(const char *name, size_t len, uint8_t **map)
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	void *p;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len)) {
		close(fd);
		return -ENOMEM;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
		 fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return -ENOMEM;
	}
	*map = p;
	return fd;
}

static int dev_create(const struct ublksrv_ctrl_dev_info *info, int id)
{
	struct udev *d = calloc(1, sizeof(*d));
	unsigned int nq = info->nr_hw_queues, depth = info->queue_depth;

	if (!d)
		return -ENOMEM;
	d->info = *info;
	d->id = id;
	d->info.dev_id = (uint32_t)id;
	d->srv_tgid = -1;
	/* one buffer per (queue, tag) for the default copy mode: as large
	 * as a request can be (max_io_buf_bytes, but no block request is
	 * larger than UM_BDEV_MAX), at least a page */
	d->slot_bytes = info->max_io_buf_bytes < UM_BDEV_MAX ?
				info->max_io_buf_bytes : UM_BDEV_MAX;
	if (!d->slot_bytes)
		d->slot_bytes = UBLKD_PAGE;
	d->desc_len = (size_t)nq * UBLKD_DESC_STRIDE;
	d->data_len = (size_t)nq * depth * d->slot_bytes;
	d->slots = calloc((size_t)nq * depth, sizeof(*d->slots));
	d->desc_fd = memfd_sized("ublk-desc", d->desc_len, &d->desc_map);
	d->data_fd = d->desc_fd < 0 ? -1 :
		     memfd_sized("ublk-data", d->data_len, &d->data_map);
	if (!d->slots || d->desc_fd < 0 || d->data_fd < 0) {
		if (d->desc_fd >= 0) {
			munmap(d->desc_map, d->desc_len);
			close(d->desc_fd);
		}
		free(d->slots);
		free(d);
		return -ENOMEM;
	}
	d->next = ublkd_devs;
	ublkd_devs = d;
	return 0;
}

/* ublk_ctrl_add_dev (one function: the kernel's checks, in its order) */
static int add_dev(struct ctrl *x, struct ublksrv_ctrl_dev_info *out)
{
	struct ublksrv_ctrl_dev_info info;
	const struct ublksrv_ctrl_cmd *h = &x->hdr;
	unsigned int unpriv = 0;
	int id, ret;

	if (h->len < sizeof(info) || !h->addr)
		return -EINVAL;
	if (h->queue_id != (uint16_t)-1)
		return -EINVAL;
	if ((x->in_flags & UM_CTRL_IN_FAULT) || x->m->in_len < sizeof(info))
		return -EFAULT;
	memcpy(&info, x->in, sizeof(info));
	if (info.queue_depth > UBLK_MAX_QUEUE_DEPTH || !info.queue_depth ||
	    info.nr_hw_queues > UBLK_MAX_NR_QUEUES || !info.nr_hw_queues)
		return -EINVAL;
	if (x->m->cap_admin)
		info.flags &= ~UBLK_F_UNPRIVILEGED_DEV;
	else if (!(info.flags & UBLK_F_UNPRIVILEGED_DEV))
		return -EPERM;
	switch (info.flags & F_RECOVERY_ALL) {
	case 0:
	case UBLK_F_USER_RECOVERY:
	case UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_REISSUE:
	case UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_FAIL_IO:
		break;
	default:
		return -EINVAL;
	}
	if ((info.flags & UBLK_F_QUIESCE) &&
	    !(info.flags & UBLK_F_USER_RECOVERY))
		return -EINVAL;
	if (info.flags & UBLK_F_UNPRIVILEGED_DEV) {
		info.flags &= ~(UBLK_F_USER_RECOVERY_REISSUE |
				UBLK_F_USER_RECOVERY);
		if (info.flags & (UBLK_F_USER_COPY | UBLK_F_SUPPORT_ZERO_COPY |
				  UBLK_F_AUTO_BUF_REG))
			return -EINVAL;
	}
	info.owner_uid = (uint32_t)x->m->uid;
	info.owner_gid = (uint32_t)x->m->gid;
	if (h->dev_id != info.dev_id)
		return -EINVAL;
	if (h->dev_id != UINT32_MAX && h->dev_id >= UBLK_MINORS)
		return -EINVAL;
	for (struct udev *d = ublkd_devs; d; d = d->next)
		unpriv += !!(d->info.flags & UBLK_F_UNPRIVILEGED_DEV);
	if ((info.flags & UBLK_F_UNPRIVILEGED_DEV) && unpriv >= UNPRIV_MAX)
		return -EACCES;
	id = alloc_id(h->dev_id == UINT32_MAX ? -1 : (int)h->dev_id);
	if (id < 0)
		return id;
	/* the negotiation result the server must read back */
	info.flags |= UBLK_F_CMD_IOCTL_ENCODE | UBLK_F_URING_CMD_COMP_IN_TASK |
		      UBLK_F_PER_IO_DAEMON | UBLK_F_BUF_REG_OFF_DAEMON;
	if (info.flags & (UBLK_F_USER_COPY | UBLK_F_SUPPORT_ZERO_COPY |
			  UBLK_F_AUTO_BUF_REG))
		info.flags &= ~UBLK_F_NEED_GET_DATA;
	/* this kernel has no CONFIG_BLK_DEV_ZONED: a zoned device fails */
	if (info.flags & UBLK_F_ZONED)
		return -EINVAL;
	info.flags &= UBLKD_F_ALL;
	if (info.nr_hw_queues > nr_cpu_ids_())
		info.nr_hw_queues = (uint16_t)nr_cpu_ids_();
	info.max_io_buf_bytes &= ~(UBLKD_PAGE - 1);
	ret = dev_create(&info, id);
	if (ret)
		return ret;
	*out = ublkd_dev_find(id)->info;
	return 0;
}

/* ublk_validate_params */
static int validate_params(const struct udev *d)
{
	const struct ublk_params *p = &d->params;

	if (!(p->types & UBLK_PARAM_TYPE_BASIC))
		return -EINVAL;
	if (p->basic.logical_bs_shift > PAGE_SHIFT_ ||
	    p->basic.logical_bs_shift < 9)
		return -EINVAL;
	if (p->basic.logical_bs_shift > p->basic.physical_bs_shift)
		return -EINVAL;
	if (p->basic.max_sectors > (d->info.max_io_buf_bytes >> 9))
		return -EINVAL;
	if (p->types & UBLK_PARAM_TYPE_DISCARD) {
		if (p->discard.max_discard_sectors &&
		    p->discard.max_discard_segments != 1)
			return -EINVAL;
		if (!p->discard.discard_granularity)
			return -EINVAL;
	}
	if (p->types & UBLK_PARAM_TYPE_DEVT)
		return -EINVAL;
	/* the device cannot be zoned (add_dev); without
	 * CONFIG_BLK_DEV_ZONED the zoned check is -EOPNOTSUPP */
	if (p->types & UBLK_PARAM_TYPE_ZONED)
		return -EOPNOTSUPP;
	if (p->types & UBLK_PARAM_TYPE_DMA_ALIGN) {
		uint32_t a = p->dma.alignment;

		if (a >= UBLKD_PAGE || ((a + 1) & a))
			return -EINVAL;
	}
	if (p->types & UBLK_PARAM_TYPE_SEGMENT) {
		uint64_t m = p->seg.seg_boundary_mask + 1;

		if (!m || (m & (m - 1)) || m < 4096 ||
		    p->seg.max_segment_size < 4096)
			return -EINVAL;
	}
	return 0;
}

/* ublk_ctrl_get_params and ublk_ctrl_set_params */
static int params_cmd(struct ctrl *x, struct udev *d, bool set,
		      struct ublk_params *out, size_t *out_len)
{
	const struct ublksrv_ctrl_cmd *h = &x->hdr;
	uint32_t ph_len, ph_types;
	int ret;

	if (h->len <= 8 || !h->addr)
		return -EINVAL;
	if ((x->in_flags & UM_CTRL_IN_FAULT) || x->m->in_len < 8)
		return -EFAULT;
	memcpy(&ph_len, x->in, 4);
	memcpy(&ph_types, x->in + 4, 4);
	if (ph_len > h->len || !ph_len || (set && !ph_types))
		return -EINVAL;
	if (ph_len > sizeof(struct ublk_params))
		ph_len = sizeof(struct ublk_params);
	if (!set) {
		d->params.devt.char_major = UBLKD_CHAR_MAJOR;
		d->params.devt.char_minor = (uint32_t)d->id;
		d->params.devt.disk_major = d->disk ? UBLKD_DISK_MAJOR : 0;
		d->params.devt.disk_minor = d->disk ? (uint32_t)d->id : 0;
		/* a real /dev/ublkbN: the loop device's numbers */
		if (d->disk)
			ublkd_front_devt(d, &d->params.devt.disk_major,
					 &d->params.devt.disk_minor);
		d->params.types |= UBLK_PARAM_TYPE_DEVT;
		memcpy(out, &d->params, ph_len);
		*out_len = ph_len;
		return 0;
	}
	if (d->used)
		return -EACCES;
	if (x->m->in_len < ph_len)
		return -EFAULT;
	memcpy(&d->params, x->in, ph_len);
	d->params.types &= PARAM_TYPE_ALL;
	ret = validate_params(d);
	if (ret)
		d->params.types = 0;
	return ret;
}

/* ublk_ctrl_get_queue_affinity: blk-mq's default map, as blkq builds it */
static int queue_affinity(struct ctrl *x, struct udev *d, uint8_t **mask)
{
	const struct ublksrv_ctrl_cmd *h = &x->hdr;
	unsigned int ncpu = nr_cpu_ids_(), nq = d->info.nr_hw_queues;
	uint64_t queue = h->data[0];

	if ((uint64_t)h->len * 8 < ncpu)
		return -EINVAL;
	if (h->len & (sizeof(unsigned long) - 1))
		return -EINVAL;
	if (!h->addr)
		return -EINVAL;
	if (queue >= nq)
		return -EINVAL;
	*mask = calloc(1, h->len);
	if (!*mask)
		return -ENOMEM;
	for (unsigned int c = 0; c < ncpu; c++)
		if ((uint64_t)c * nq / ncpu == queue)
			(*mask)[c / 8] |= (uint8_t)(1u << (c % 8));
	return 0;
}

/*
 * ublk_ctrl_uring_cmd_permission.  An unprivileged device's commands
 * (and every GET_DEV_INFO2) name the char device by path: ours are the
 * made-up /dev/ublkcN, checked by name and owner instead of by inode.
 */
static int permission(struct ctrl *x, struct udev *d, uint32_t nr)
{
	const struct um_ctrl *m = x->m;
	bool unpriv = d->info.flags & UBLK_F_UNPRIVILEGED_DEV;
	uint16_t plen = x->hdr.dev_path_len;
	char path[64], want[32];

	if (!unpriv) {
		if (!m->cap_admin)
			return -EPERM;
		if (nr != UBLK_CMD_GET_DEV_INFO2)
			return 0;
	}
	if (!plen || plen > 4096)
		return -EINVAL;
	if (x->hdr.len < plen)
		return -EINVAL;
	if (m->flags & UM_CTRL_PATH_FAULT || m->path_len < plen)
		return -EFAULT;
	switch (nr) {
	case UBLK_CMD_GET_DEV_INFO: case UBLK_CMD_GET_DEV_INFO2:
	case UBLK_CMD_GET_QUEUE_AFFINITY: case UBLK_CMD_GET_PARAMS:
	case UBLK_CMD_GET_FEATURES: case UBLK_CMD_START_DEV:
	case UBLK_CMD_STOP_DEV: case UBLK_CMD_ADD_DEV: case UBLK_CMD_DEL_DEV:
	case UBLK_CMD_SET_PARAMS: case UBLK_CMD_START_USER_RECOVERY:
	case UBLK_CMD_END_USER_RECOVERY: case UBLK_CMD_UPDATE_SIZE:
	case UBLK_CMD_QUIESCE_DEV:
		break;
	default:
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%.*s", plen < 63 ? plen : 63,
		 (const char *)x->path);
	snprintf(want, sizeof(want), "/dev/ublkc%d", d->id);
	if (strncmp(path, "/dev/ublkc", 10))
		return -ENOENT;
	if (strcmp(path, want))
		return -EPERM;
	if (m->cap_admin == 0 && (uint32_t)m->uid != d->info.owner_uid)
		return -EACCES;
	x->hdr.len = (uint16_t)(x->hdr.len - plen);
	x->hdr.addr += plen;
	x->out_off = plen;
	/* the input the client read after the path */
	x->in = x->path + m->path_len + m->in_len;
	x->in_flags = (m->flags >> 2) & UM_CTRL_IN_FAULT;
	return 0;
}

/* START_DEV or END_USER_RECOVERY once every (queue, tag) is fetched */
static int start_ready(struct udev *d, const struct um_ctrl *m)
{
	uint32_t nr = m->cmd_op & 0xff;
	int pid = (int)m->cmd.data[0];

	if (d->srv_tgid != pid)
		return -EINVAL;
	if (nr == UBLK_CMD_END_USER_RECOVERY) {
		if (nosrv_should_stop(d))
			return -EINVAL;
		if (d->info.state != UBLK_S_DEV_QUIESCED &&
		    d->info.state != UBLK_S_DEV_FAIL_IO)
			return -EBUSY;
		d->info.ublksrv_pid = pid;
		d->info.state = UBLK_S_DEV_LIVE;
		d->fail_io = false;
		ublkd_kick_requeue(d); /* blk_mq_kick_requeue_list */
		return 0;
	}
	if (d->info.state == UBLK_S_DEV_LIVE || d->used)
		return -EEXIST;
	if (ublkd_start_blk(d))
		return -ENOMEM;
	d->info.ublksrv_pid = pid;
	d->info.state = UBLK_S_DEV_LIVE;
	d->disk = true;
	d->used = true;
	/* ublk_ctrl_start_dev's add_disk: the kernel block device */
	ublkd_front_start(d);
	return 0;
}

void ublkd_ctrl_rewait(struct udev *d)
{
	bool freed = ublkd_dev_find(d->id) != d;

	for (struct uconn *c = ublkd_conns; c; c = c->next) {
		struct um_ctrl *m = c->waiting;
		uint32_t nr;
		int res;

		if (!m || c->wait_dev != d || c->dead)
			continue;
		nr = m->cmd_op & 0xff;
		if (freed)
			res = nr == UBLK_CMD_DEL_DEV ? 0 : -ENODEV;
		else if (nr != UBLK_CMD_DEL_DEV && ublkd_dev_ready(d))
			res = start_ready(d, m);
		else
			continue;
		c->waiting = NULL;
		answer(c, m, res, 0, NULL, 0);
		free(m);
	}
}

/* The kernel's ublk_stop_dev: the disk goes, waiting commands abort. */
void ublkd_stop_dev(struct udev *d)
{
	/* del_gendisk: the block node goes first (ublkd_front.c) */
	ublkd_front_stop(d);
	if (d->info.state != UBLK_S_DEV_DEAD) {
		d->disk = false;
		d->info.state = UBLK_S_DEV_DEAD;
		d->info.ublksrv_pid = -1;
		d->canceling = true;
	}
	/* ublk_force_abort_dev: what waited for a server fails now */
	ublkd_fail_requeue(d);
	ublkd_abort_active(d);
}

/* keeps the command on the connection until ublkd_ctrl_rewait */
static void wait_on(struct ctrl *x, struct udev *d)
{
	x->c->waiting = x->m;
	x->c->wait_dev = d;
	x->m = NULL;
}

/*
 * The commands that only move the device's state: STOP_DEV
 * (ublk_ctrl_stop_dev), START_USER_RECOVERY (ublk_ctrl_start_recovery),
 * UPDATE_SIZE (ublk_ctrl_set_size), QUIESCE_DEV (ublk_ctrl_quiesce_dev,
 * without its wait for idle tags), and the unknown ones.
 */
static int state_cmd(const struct ctrl *x, struct udev *d, uint32_t nr)
{
	switch (nr) {
	case UBLK_CMD_STOP_DEV:
		ublkd_stop_dev(d);
		return 0;
	case UBLK_CMD_START_USER_RECOVERY:
		if (nosrv_should_stop(d))
			return -EINVAL;
		if (d->chr || (d->info.state != UBLK_S_DEV_QUIESCED &&
			       d->info.state != UBLK_S_DEV_FAIL_IO))
			return -EBUSY;
		return 0;
	case UBLK_CMD_UPDATE_SIZE:
		d->params.basic.dev_sectors = x->hdr.data[0];
		return 0;
	case UBLK_CMD_QUIESCE_DEV:
		if (!(d->info.flags & UBLK_F_QUIESCE))
			return -EOPNOTSUPP;
		if (!d->disk || d->info.state == UBLK_S_DEV_DEAD)
			return -ENODEV;
		if (d->info.state != UBLK_S_DEV_LIVE)
			return 0;
		d->canceling = true;
		ublkd_abort_active(d);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

/*
 * ublk_ctrl_uring_cmd after its SQE128 check: the command's dispatch.
 * 111 lines: the kernel's one switch, kept whole.
 */
void ublkd_ctrl(struct uconn *c, struct um_ctrl *msg, size_t len)
{
	struct ctrl x = { .c = c };
	uint32_t op = msg->cmd_op, nr = op & 0xff, type = (op >> 8) & 0xff;
	union {
		struct ublksrv_ctrl_dev_info info;
		struct ublk_params params;
		uint64_t features;
	} out;
	uint8_t *mask = NULL;
	size_t out_len = 0;
	struct udev *d = NULL;
	int ret;

	if (msg->in_len > UM_CTRL_IN_MAX || msg->path_len > UM_CTRL_IN_MAX ||
	    len < sizeof(*msg) + msg->path_len +
			  (msg->path_len ? 2u : 1u) * msg->in_len)
		return;
	/* keep the message: a waiting command outlives the buffer */
	x.m = malloc(len);
	if (!x.m)
		return;
	memcpy(x.m, msg, len);
	x.hdr = x.m->cmd;
	x.path = (const uint8_t *)(x.m + 1);
	x.in = x.path + x.m->path_len;
	x.in_flags = x.m->flags & UM_CTRL_IN_FAULT;
	/* ublk_check_cmd_op: legacy numbers (type 0) are accepted */
	if (type != 'u' && type != 0) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	if (op == UBLK_U_CMD_GET_FEATURES) {
		if (x.hdr.len != UBLK_FEATURES_LEN || !x.hdr.addr) {
			ret = -EINVAL;
		} else {
			out.features = UBLKD_F_ALL;
			out_len = UBLK_FEATURES_LEN;
			ret = 0;
		}
		goto out;
	}
	if (nr != UBLK_CMD_ADD_DEV) {
		ret = -ENODEV;
		d = ublkd_dev_find((int)x.hdr.dev_id);
		if (!d)
			goto out;
		ret = permission(&x, d, nr);
		if (ret)
			goto out;
	}
	switch (nr) {
	case UBLK_CMD_START_DEV:
	case UBLK_CMD_END_USER_RECOVERY:
		if (nr == UBLK_CMD_START_DEV &&
		    ((int)x.hdr.data[0] <= 0 ||
		     !(d->params.types & UBLK_PARAM_TYPE_BASIC))) {
			ret = -EINVAL;
			break;
		}
		if (!ublkd_dev_ready(d)) {
			wait_on(&x, d);
			return;
		}
		ret = start_ready(d, x.m);
		break;
	case UBLK_CMD_GET_DEV_INFO:
	case UBLK_CMD_GET_DEV_INFO2:
		ret = -EINVAL;
		if (x.hdr.len < sizeof(out.info) || !x.hdr.addr)
			break;
		out.info = d->info;
		out_len = sizeof(out.info);
		ret = 0;
		break;
	case UBLK_CMD_ADD_DEV:
		ret = add_dev(&x, &out.info);
		out_len = sizeof(out.info);
		break;
	case UBLK_CMD_DEL_DEV:
	case UBLK_CMD_DEL_DEV_ASYNC:
		if (!d->deleted) {
			ublkd_stop_dev(d);
			d->deleted = true;
		}
		ret = 0;
		if (nr == UBLK_CMD_DEL_DEV) {
			wait_on(&x, d);
			ublkd_dev_maybe_free(d);
			return;
		}
		ublkd_dev_maybe_free(d);
		break;
	case UBLK_CMD_GET_QUEUE_AFFINITY:
		ret = queue_affinity(&x, d, &mask);
		out_len = x.hdr.len;
		break;
	case UBLK_CMD_GET_PARAMS:
	case UBLK_CMD_SET_PARAMS:
		ret = params_cmd(&x, d, nr == UBLK_CMD_SET_PARAMS, &out.params,
				 &out_len);
		break;
	default:
		ret = state_cmd(&x, d, nr);
		break;
	}
out:
	answer(c, x.m, ret, x.out_off, mask ? (void *)mask : (void *)&out,
	       out_len);
	free(mask);
	free(x.m);
}
