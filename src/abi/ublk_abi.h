/* SPDX-License-Identifier: MIT */
/*
 * uuring's own statement of the ublk user ABI (ublk_drv of Linux 6.18):
 * the control and I/O command numbers, the feature flags, the structures a
 * ublk server exchanges with the driver.  Kernel spellings so that servers
 * written against <linux/ublk_cmd.h> read the same; layouts pinned by the
 * static assertions at the end.  Do not include <linux/ublk_cmd.h> in the
 * same unit: both define the same struct tags.
 */
#ifndef UURING_ABI_UBLK_H
#define UURING_ABI_UBLK_H

#include <errno.h>
#include <linux/ioctl.h>
#include <linux/types.h>

/* Control command numbers (the legacy form is the bare number). */
#define UBLK_CMD_GET_QUEUE_AFFINITY	0x01
#define UBLK_CMD_GET_DEV_INFO		0x02
#define UBLK_CMD_ADD_DEV		0x04
#define UBLK_CMD_DEL_DEV		0x05
#define UBLK_CMD_START_DEV		0x06
#define UBLK_CMD_STOP_DEV		0x07
#define UBLK_CMD_SET_PARAMS		0x08
#define UBLK_CMD_GET_PARAMS		0x09
#define UBLK_CMD_START_USER_RECOVERY	0x10
#define UBLK_CMD_END_USER_RECOVERY	0x11
#define UBLK_CMD_GET_DEV_INFO2		0x12
/* only ever ioctl-encoded (no legacy number) */
#define UBLK_CMD_GET_FEATURES		0x13
#define UBLK_CMD_DEL_DEV_ASYNC		0x14
#define UBLK_CMD_UPDATE_SIZE		0x15
#define UBLK_CMD_QUIESCE_DEV		0x16

struct ublksrv_ctrl_cmd {
	__u32 dev_id;		/* the device; U32_MAX in ADD_DEV: allocate */
	__u16 queue_id;		/* (__u16)-1 unless the command is per queue */
	__u16 len;		/* bytes at addr */
	__u64 addr;		/* command buffer (in, out or both) */
	__u64 data[1];		/* inline argument */
	__u16 dev_path_len;	/* unprivileged devices, GET_DEV_INFO2 */
	__u16 pad;
	__u32 reserved;
};

#define UBLK_U_CMD_GET_QUEUE_AFFINITY \
	_IOR('u', UBLK_CMD_GET_QUEUE_AFFINITY, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_GET_DEV_INFO \
	_IOR('u', UBLK_CMD_GET_DEV_INFO, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_ADD_DEV \
	_IOWR('u', UBLK_CMD_ADD_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_DEL_DEV \
	_IOWR('u', UBLK_CMD_DEL_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_START_DEV \
	_IOWR('u', UBLK_CMD_START_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_STOP_DEV \
	_IOWR('u', UBLK_CMD_STOP_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_SET_PARAMS \
	_IOWR('u', UBLK_CMD_SET_PARAMS, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_GET_PARAMS \
	_IOR('u', UBLK_CMD_GET_PARAMS, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_START_USER_RECOVERY \
	_IOWR('u', UBLK_CMD_START_USER_RECOVERY, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_END_USER_RECOVERY \
	_IOWR('u', UBLK_CMD_END_USER_RECOVERY, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_GET_DEV_INFO2 \
	_IOR('u', UBLK_CMD_GET_DEV_INFO2, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_GET_FEATURES \
	_IOR('u', UBLK_CMD_GET_FEATURES, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_DEL_DEV_ASYNC \
	_IOR('u', UBLK_CMD_DEL_DEV_ASYNC, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_UPDATE_SIZE \
	_IOWR('u', UBLK_CMD_UPDATE_SIZE, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_QUIESCE_DEV \
	_IOWR('u', UBLK_CMD_QUIESCE_DEV, struct ublksrv_ctrl_cmd)

#define UBLK_FEATURES_LEN 8

/* I/O command numbers, on /dev/ublkcN */
#define UBLK_IO_FETCH_REQ		0x20
#define UBLK_IO_COMMIT_AND_FETCH_REQ	0x21
#define UBLK_IO_NEED_GET_DATA		0x22
#define UBLK_IO_REGISTER_IO_BUF		0x23
#define UBLK_IO_UNREGISTER_IO_BUF	0x24

struct ublksrv_io_cmd {
	__u16 q_id;
	__u16 tag;
	__s32 result;		/* COMMIT: bytes done or -errno */
	union {
		__u64 addr;	/* the server's buffer (default copy mode) */
		__u64 zone_append_lba;
	};
};

#define UBLK_U_IO_FETCH_REQ \
	_IOWR('u', UBLK_IO_FETCH_REQ, struct ublksrv_io_cmd)
#define UBLK_U_IO_COMMIT_AND_FETCH_REQ \
	_IOWR('u', UBLK_IO_COMMIT_AND_FETCH_REQ, struct ublksrv_io_cmd)
#define UBLK_U_IO_NEED_GET_DATA \
	_IOWR('u', UBLK_IO_NEED_GET_DATA, struct ublksrv_io_cmd)
#define UBLK_U_IO_REGISTER_IO_BUF \
	_IOWR('u', UBLK_IO_REGISTER_IO_BUF, struct ublksrv_io_cmd)
#define UBLK_U_IO_UNREGISTER_IO_BUF \
	_IOWR('u', UBLK_IO_UNREGISTER_IO_BUF, struct ublksrv_io_cmd)

/* cqe->res of a FETCH or COMMIT_AND_FETCH */
#define UBLK_IO_RES_OK			0
#define UBLK_IO_RES_NEED_GET_DATA	1
#define UBLK_IO_RES_ABORT		(-ENODEV)

/* mmap offset of the descriptor arrays; pread/pwrite offset (USER_COPY) */
#define UBLKSRV_CMD_BUF_OFFSET	0
#define UBLKSRV_IO_BUF_OFFSET	0x80000000

#define UBLK_MAX_QUEUE_DEPTH	4096
#define UBLK_IO_BUF_OFF		0
#define UBLK_IO_BUF_BITS	25
#define UBLK_IO_BUF_BITS_MASK	((1ULL << UBLK_IO_BUF_BITS) - 1)
#define UBLK_TAG_OFF		UBLK_IO_BUF_BITS
#define UBLK_TAG_BITS		16
#define UBLK_TAG_BITS_MASK	((1ULL << UBLK_TAG_BITS) - 1)
#define UBLK_QID_OFF		(UBLK_TAG_OFF + UBLK_TAG_BITS)
#define UBLK_QID_BITS		12
#define UBLK_QID_BITS_MASK	((1ULL << UBLK_QID_BITS) - 1)
#define UBLK_MAX_NR_QUEUES	(1U << UBLK_QID_BITS)

/* Feature flags: dev_info.flags and GET_FEATURES (bits 0-14 in 6.18) */
#define UBLK_F_SUPPORT_ZERO_COPY	(1ULL << 0)
#define UBLK_F_URING_CMD_COMP_IN_TASK	(1ULL << 1)
#define UBLK_F_NEED_GET_DATA		(1ULL << 2)
#define UBLK_F_USER_RECOVERY		(1ULL << 3)
#define UBLK_F_USER_RECOVERY_REISSUE	(1ULL << 4)
#define UBLK_F_UNPRIVILEGED_DEV		(1ULL << 5)
#define UBLK_F_CMD_IOCTL_ENCODE		(1ULL << 6)
#define UBLK_F_USER_COPY		(1ULL << 7)
#define UBLK_F_ZONED			(1ULL << 8)
#define UBLK_F_USER_RECOVERY_FAIL_IO	(1ULL << 9)
#define UBLK_F_UPDATE_SIZE		(1ULL << 10)
#define UBLK_F_AUTO_BUF_REG		(1ULL << 11)
#define UBLK_F_QUIESCE			(1ULL << 12)
#define UBLK_F_PER_IO_DAEMON		(1ULL << 13)
#define UBLK_F_BUF_REG_OFF_DAEMON	(1ULL << 14)

/* Device states (dev_info.state) */
#define UBLK_S_DEV_DEAD		0
#define UBLK_S_DEV_LIVE		1
#define UBLK_S_DEV_QUIESCED	2
#define UBLK_S_DEV_FAIL_IO	3

struct ublksrv_ctrl_dev_info {
	__u16 nr_hw_queues;
	__u16 queue_depth;
	__u16 state;
	__u16 pad0;
	__u32 max_io_buf_bytes;
	__u32 dev_id;
	__s32 ublksrv_pid;
	__u32 pad1;
	__u64 flags;
	__u64 ublksrv_flags;	/* the server's own; the driver ignores it */
	__u32 owner_uid;	/* set by the driver */
	__u32 owner_gid;
	__u64 reserved1;
	__u64 reserved2;
};

/* Operations and flags in ublksrv_io_desc.op_flags (op: bits 0-7) */
#define UBLK_IO_OP_READ			0
#define UBLK_IO_OP_WRITE		1
#define UBLK_IO_OP_FLUSH		2
#define UBLK_IO_OP_DISCARD		3
#define UBLK_IO_OP_WRITE_SAME		4
#define UBLK_IO_OP_WRITE_ZEROES		5
#define UBLK_IO_F_FAILFAST_DEV		(1U << 8)
#define UBLK_IO_F_FAILFAST_TRANSPORT	(1U << 9)
#define UBLK_IO_F_FAILFAST_DRIVER	(1U << 10)
#define UBLK_IO_F_META			(1U << 11)
#define UBLK_IO_F_FUA			(1U << 13)
#define UBLK_IO_F_NOUNMAP		(1U << 15)
#define UBLK_IO_F_SWAP			(1U << 16)
/* AUTO_BUF_REG's registration failed, FALLBACK asked: register by hand */
#define UBLK_IO_F_NEED_REG_BUF		(1U << 17)

/* UBLK_F_AUTO_BUF_REG: the sqe->addr of FETCH_REQ and COMMIT_AND_FETCH_REQ
 * (struct ublk_auto_buf_reg: index 0-15, flags 16-23, reserved0 24-31,
 * reserved1 32-63) */
#define UBLK_AUTO_BUF_REG_FALLBACK	(1 << 0)
#define UBLK_AUTO_BUF_REG_F_MASK	UBLK_AUTO_BUF_REG_FALLBACK

/* One per tag in a queue's descriptor array (24 bytes). */
struct ublksrv_io_desc {
	__u32 op_flags;
	union {
		__u32 nr_sectors;
		__u32 nr_zones;
	};
	__u64 start_sector;
	__u64 addr;
};

struct ublk_param_basic {
#define UBLK_ATTR_READ_ONLY		(1 << 0)
#define UBLK_ATTR_ROTATIONAL		(1 << 1)
#define UBLK_ATTR_VOLATILE_CACHE	(1 << 2)
#define UBLK_ATTR_FUA			(1 << 3)
	__u32 attrs;
	__u8 logical_bs_shift;
	__u8 physical_bs_shift;
	__u8 io_opt_shift;
	__u8 io_min_shift;
	__u32 max_sectors;
	__u32 chunk_sectors;
	__u64 dev_sectors;
	__u64 virt_boundary_mask;
};

struct ublk_param_discard {
	__u32 discard_alignment;
	__u32 discard_granularity;
	__u32 max_discard_sectors;
	__u32 max_write_zeroes_sectors;
	__u16 max_discard_segments;
	__u16 reserved0;
};

/* read-only: filled by GET_PARAMS, refused by SET_PARAMS */
struct ublk_param_devt {
	__u32 char_major;
	__u32 char_minor;
	__u32 disk_major;
	__u32 disk_minor;
};

struct ublk_param_zoned {
	__u32 max_open_zones;
	__u32 max_active_zones;
	__u32 max_zone_append_sectors;
	__u8 reserved[20];
};

struct ublk_param_dma_align {
	__u32 alignment;
	__u8 pad[4];
};

struct ublk_param_segment {
	__u64 seg_boundary_mask;
	__u32 max_segment_size;
	__u16 max_segments;
	__u8 pad[2];
};

struct ublk_params {
	__u32 len;	/* bytes of this structure the caller knows */
#define UBLK_PARAM_TYPE_BASIC		(1 << 0)
#define UBLK_PARAM_TYPE_DISCARD		(1 << 1)
#define UBLK_PARAM_TYPE_DEVT		(1 << 2)
#define UBLK_PARAM_TYPE_ZONED		(1 << 3)
#define UBLK_PARAM_TYPE_DMA_ALIGN	(1 << 4)
#define UBLK_PARAM_TYPE_SEGMENT		(1 << 5)
	__u32 types;
	struct ublk_param_basic basic;
	struct ublk_param_discard discard;
	struct ublk_param_devt devt;
	struct ublk_param_zoned zoned;
	struct ublk_param_dma_align dma;
	struct ublk_param_segment seg;
};

_Static_assert(sizeof(struct ublksrv_ctrl_cmd) == 32, "ctrl cmd: 32 bytes");
_Static_assert(sizeof(struct ublksrv_io_cmd) == 16, "io cmd: 16 bytes");
_Static_assert(sizeof(struct ublksrv_ctrl_dev_info) == 64, "dev_info");
_Static_assert(sizeof(struct ublksrv_io_desc) == 24, "io desc: 24 bytes");
_Static_assert(sizeof(struct ublk_param_basic) == 32, "param basic");
_Static_assert(sizeof(struct ublk_param_discard) == 20, "param discard");
_Static_assert(sizeof(struct ublk_param_zoned) == 32, "param zoned");
_Static_assert(sizeof(struct ublk_param_segment) == 16, "param segment");
_Static_assert(sizeof(struct ublk_params) == 136, "ublk_params (6.18)");
_Static_assert(UBLK_U_CMD_ADD_DEV == 0xc0207504, "ioctl encoding");
_Static_assert(UBLK_U_IO_FETCH_REQ == 0xc0107520, "ioctl encoding");

#endif
