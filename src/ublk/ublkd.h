/* SPDX-License-Identifier: MIT */
/*
 * uublkd, the ublk driver process (docs/ublk.md): its devices and
 * connections.  One thread, one epoll loop (ublkd.c); control commands in
 * ublkd_ctrl.c, the data plane and the block side in ublkd_io.c.
 */
#ifndef UURING_UBLK_UBLKD_H
#define UURING_UBLK_UBLKD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "abi/ublk_abi.h"
#include "dev/blkq.h"
#include "ublk/proto.h"

struct udev;
struct ufront;

struct uconn {
	int fd;
	uint32_t kind;          /* UK_*, 0 before the hello */
	struct udev *dev;       /* CHAR, DATA, BDEV */
	pid_t tgid;
	uid_t uid;
	struct uconn *next;
	/* a CMD connection's control command waiting (START_DEV, DEL_DEV,
	 * END_USER_RECOVERY): the request kept until it can be answered */
	struct um_ctrl *waiting;
	struct udev *wait_dev;
	bool dead;              /* hung up; freed at the end of the round */
	unsigned int refs;      /* BDEV: its requests still in the device */
};

/* ublk_io's flags */
#define US_ACTIVE 0x01          /* a command waits for a request */
#define US_OWNED 0x02           /* the server has the request */
#define US_NEED_GET_DATA 0x08
#define US_CANCELED 0x80000000u

struct uslot {
	uint32_t flags;
	pid_t task;             /* the daemon: the task that fetched it */
	uint64_t addr;
	struct uconn *data;     /* where its command came from */
	struct uu_blkq_rq *rq;  /* while US_OWNED or dispatched */
};

/* A block request from a BDEV connection, or from a FUSE reader
 * (front set: answered on its /dev/fuse with unique). */
struct breq {
	struct uconn *conn;
	struct ufront *front;
	uint64_t unique;
	bool replied;           /* front: the READ's data went already */
	uint64_t seq;
	uint32_t op;
	uint64_t pos;
	uint32_t len;
	uint8_t *data;
	struct udev *dev;
};

struct udev {
	struct ublksrv_ctrl_dev_info info;
	struct ublk_params params;
	int id;
	bool deleted;           /* UB_STATE_DELETED: no new opens */
	bool used;              /* UB_STATE_USED: started once */
	bool disk;              /* the block side exists (LIVE..stop) */
	struct uconn *chr;      /* UB_STATE_OPEN: the CHAR connection */
	uint64_t token;
	pid_t srv_tgid;         /* ublksrv_tgid, set by the char open */
	pid_t mm_tgid;          /* the process allowed to map (ub->mm) */
	unsigned int nr_io_ready;
	bool canceling, fail_io, force_abort;
	struct uslot *slots;    /* [queue * depth + tag] */
	int desc_fd, data_fd;
	uint8_t *desc_map, *data_map;
	size_t desc_len, data_len, slot_bytes;
	struct uu_blkq *q;      /* the block side, from START_DEV on */
	/* requests waiting for a server (blk-mq's requeue list: each keeps
	 * its tag), linked by tnext */
	struct uu_blkq_rq *requeue_head, *requeue_tail;
	unsigned int inflight;  /* breqs not answered */
	/* the kernel block device in front of it (ublkd_front.c): a FUSE
	 * file, a loop device on it and /dev/ublkbN; NULL when none */
	struct ufront *front;
	struct udev *next;
};

/* ublkd.c */
extern struct udev *ublkd_devs;
/* a connection of the driver's own (one end of a socketpair), handled
 * like an accepted one of kind `kind`; NULL on -ENOMEM */
struct uconn *ublkd_conn_add(int fd, uint32_t kind);
/* one line to UURING_UBLKD_LOG (appended) or syslog */
void ublkd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern struct uconn *ublkd_conns;
int ublkd_reply(struct uconn *c, const void *a, size_t alen, const void *b,
		size_t blen);
struct udev *ublkd_dev_find(int id);
void ublkd_dev_maybe_free(struct udev *d);
bool ublkd_dev_ready(const struct udev *d);

/* ublkd_ctrl.c */
void ublkd_ctrl(struct uconn *c, struct um_ctrl *m, size_t len);
/* a device's waits may be answerable now (fetches done, char closed) */
void ublkd_ctrl_rewait(struct udev *d);
void ublkd_stop_dev(struct udev *d);

/* ublkd_io.c */
void ublkd_io(struct uconn *c, const struct um_io *m);
void ublkd_cancel(struct uconn *c, const struct um_io *m);
void ublkd_ucopy(struct uconn *c, const struct um_ucopy *m);
void ublkd_bdev(struct uconn *c, const struct um_bdev *m, size_t len);
void ublkd_char_release(struct udev *d);
void ublkd_data_gone(struct uconn *c);
void ublkd_bdev_gone(struct uconn *c);
int ublkd_start_blk(struct udev *d);
void ublkd_abort_active(struct udev *d);
void ublkd_slot_event(struct udev *d, unsigned int q, unsigned int tag,
		      int res);
/* END_USER_RECOVERY: the requests kept meanwhile go to the new server */
void ublkd_kick_requeue(struct udev *d);
/* the device stops: the requests kept fail */
void ublkd_fail_requeue(struct udev *d);

/* ublkd_front.c: the block node of a started device (docs/ublk.md,
 * "The block node") */
void ublkd_front_start(struct udev *d);
void ublkd_front_stop(struct udev *d);
/* the driver's start: the names dead drivers left are cleaned */
void ublkd_front_reclaim_all(void);
/* the node's dev_t for GET_PARAMS: false when there is none */
bool ublkd_front_devt(const struct udev *d, uint32_t *major,
		      uint32_t *minor);

#endif
