/* SPDX-License-Identifier: MIT */
/*
 * The messages between the library (src/ublk/client*.c) and the driver
 * process uublkd (src/ublk/ublkd*.c), one per SOCK_SEQPACKET record
 * (docs/ublk.md, "The files a server holds").  Both ends are the same
 * build of the library, so the layouts are not versioned.
 *
 * Connections, by their first message (UM_HELLO, kind):
 *  - CTRL: an application's /dev/ublk-control fd; nothing after the hello.
 *  - CHAR: an application's /dev/ublkcN fd; its hang-up is the kernel's
 *    ublk_ch_release.  The reply carries the descriptor and data memfds.
 *  - DATA: the engine's own connection for a CHAR open (named by the
 *    token of the CHAR reply): FETCH/COMMIT/NEED_GET_DATA, the USER_COPY
 *    checks the engine cannot answer itself, and the driver's slot
 *    events.
 *  - CMD: one control command (io-wq worker), closed after the reply;
 *    its first message is the UM_CTRL itself.
 *  - BDEV: block I/O submitted to a device (uuring_ublk_bdev_rw); its
 *    first message is a UM_BDEV.
 */
#ifndef UURING_UBLK_PROTO_H
#define UURING_UBLK_PROTO_H

#include <stdint.h>
#include <sys/types.h>

#include "abi/ublk_abi.h"

enum {
	UM_HELLO = 1,
	UM_CTRL,     /* CMD: a control command */
	UM_IO,       /* DATA: FETCH / COMMIT_AND_FETCH / NEED_GET_DATA */
	UM_IO_RES,   /* DATA, driver -> engine: UM_IO's answer */
	UM_SLOT,     /* DATA, driver -> engine: a slot's command completes */
	UM_CANCEL,   /* DATA: a queued command's ring exits (no answer) */
	UM_MMAP,     /* DATA: may this process map the descriptors? */
	UM_BDEV,     /* BDEV: one block request */
	/* DATA: a COMMIT_AND_FETCH the engine checked and queued itself
	 * (client_io.c): no UM_IO_RES; should the driver still refuse it,
	 * a UM_SLOT event ends the command with the error */
	UM_IO_ASYNC,
	/* DATA: may this process copy at this USER_COPY offset (struct
	 * um_ucopy)?  The answer's res: the request's bytes from the
	 * offset on, or -errno (ublk_drv's ublk_check_and_get_req) */
	UM_UCOPY,
};

/* UK_PROBE: does device dev_id exist (a stat of /dev/ublkcN)?
 * UK_LIST: which devices exist (a listing of /sys/class/ublk-char); the
 * reply's h.res is the count n, then n uint32_t ids, ascending, at most
 * UM_LIST_MAX */
enum { UK_CTRL = 1, UK_CHAR, UK_DATA, UK_CMD, UK_BDEV, UK_PROBE, UK_LIST };
#define UM_LIST_MAX 4096u

/* UM_IO_RES.res: the command is queued (the kernel's -EIOCBQUEUED) */
#define UM_QUEUED (-529)

struct um_hdr {
	uint32_t type;
	int32_t res;     /* answers: result or -errno */
	uint64_t seq;    /* the asker's number, echoed */
};

struct um_hello {
	struct um_hdr h;
	uint32_t kind;   /* UK_* */
	uint32_t dev_id; /* CHAR, BDEV */
	uint64_t token;  /* DATA: the CHAR reply's */
	int32_t tgid;    /* the opener's process */
	uint32_t pad;
};

/* CHAR reply (with the descriptor and data memfds, SCM_RIGHTS) */
struct um_hello_rep {
	struct um_hdr h;
	uint64_t token;
	struct ublksrv_ctrl_dev_info info;
	uint64_t slot_bytes;   /* data memfd: bytes per (queue, tag) */
};

/* Control command: the header, then path_len path bytes (dev_path_len),
 * then in_len bytes read from addr (+ path_len when the path was sent) */
#define UM_CTRL_IN_FAULT 1u   /* reading the input from addr faulted */
#define UM_CTRL_PATH_FAULT 2u
#define UM_CTRL_IN_MAX 4096u
struct um_ctrl {
	struct um_hdr h;
	uint32_t cmd_op;
	uint32_t flags;
	uint32_t path_len;
	uint32_t in_len;
	int32_t uid, gid; /* SO_PEERCRED is the worker's: the same ids */
	int32_t cap_admin;
	uint32_t pad;
	struct ublksrv_ctrl_cmd cmd;
};

/* Its answer: h.res, then out_len bytes for addr + out_off */
struct um_ctrl_rep {
	struct um_hdr h;
	uint32_t out_off;
	uint32_t out_len;
};

struct um_io {
	struct um_hdr h;
	uint32_t cmd_op;
	int32_t tid;     /* the submitting task (uu_cmd_task) */
	struct ublksrv_io_cmd cmd;
};

struct um_slot {
	struct um_hdr h; /* res: UBLK_IO_RES_* */
	uint16_t q_id, tag;
	uint32_t pad;
};

struct um_ucopy {
	struct um_hdr h;
	int64_t pos;       /* the file offset of pread/pwrite */
	uint32_t is_write; /* pwrite: into a READ request's data */
	uint32_t pad;
};

/* UM_BDEV: then len bytes for a write; the answer (h.res = bytes or
 * -errno) carries the read data */
#define UM_BDEV_MAX (128u << 10)
struct um_bdev {
	struct um_hdr h;
	uint32_t op;     /* UBLK_IO_OP_* */
	int32_t cpu;     /* the submitter's, for the hardware queue */
	uint64_t pos;    /* bytes */
	uint32_t len;
	uint32_t dev_id;
};

#define UM_MSG_MAX (sizeof(struct um_bdev) + UM_BDEV_MAX)

/* made-up device numbers (docs/ublk.md, "What servers look for"): the
 * char devices' major (GET_PARAMS's devt), the block side's, and the
 * control file's misc minor */
#define UBLKD_CHAR_MAJOR 511u
#define UBLKD_DISK_MAJOR 259u
#define UBLKD_CTRL_MINOR 120u

/* The descriptor memfd holds each queue at this stride (ublk_drv's
 * ublk_max_cmd_buf_size: the largest depth's array, page-rounded). */
#define UBLKD_PAGE 4096u
#define UBLKD_DESC_STRIDE                                                   \
	((UBLK_MAX_QUEUE_DEPTH * sizeof(struct ublksrv_io_desc) + UBLKD_PAGE - \
	  1) / UBLKD_PAGE * UBLKD_PAGE)

static inline size_t ublkd_queue_desc_bytes(unsigned int depth)
{
	return (depth * sizeof(struct ublksrv_io_desc) + UBLKD_PAGE - 1) /
	       UBLKD_PAGE * UBLKD_PAGE;
}

/* binds the driver's name and forks uublkd (ublkd.c): 0 when a driver
 * runs, -errno */
int ublkd_spawn(const void *addr, unsigned int addrlen);

/* socket helpers shared by both ends (client.c) */
ssize_t um_send(int fd, const void *a, size_t alen, const void *b,
		size_t blen, const int *fds, int nfds);
ssize_t um_recv(int fd, void *buf, size_t len, int *fds, int maxfds,
		int *nfds);

#endif
