/* SPDX-License-Identifier: MIT */
/*
 * The library's side of the ublk driver (docs/ublk.md): the files a
 * server opens (/dev/ublk-control, /dev/ublkcN are SOCK_SEQPACKET
 * connections to uublkd), known to the engine by (st_dev, st_ino).
 */
#ifndef UURING_UBLK_CLIENT_H
#define UURING_UBLK_CLIENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "ublk/proto.h"

struct uu_req;
struct uu_ring;

/* the engine's view of one (queue, tag) of a char file */
struct ucslot {
	struct uu_req *req;   /* the queued command waiting for a request */
	uint64_t addr;        /* its buffer */
	bool marked;          /* marked cancelable: events may end it */
	bool pending;         /* an event came before that: pending_res */
	int pending_res;
	bool owned;           /* the server holds the slot's request */
	bool ngd;             /* ... and owes its NEED_GET_DATA */
	pid_t task;           /* its daemon, as the driver recorded it */
	/* AUTO_BUF_REG: the armed command's sqe->addr and ring; the ring
	 * and index the current request's buffer was registered at */
	uint64_t auto_addr;
	struct uu_ring *ring;
	struct uu_ring *reg_ring;
	uint16_t reg_idx;
	/* zero copy: buffers of the request registered by REGISTER_IO_BUF
	 * and not released; a COMMIT that came meanwhile is held until the
	 * last goes (the request's reference, ublk_io_release) */
	unsigned int nbufs;
	bool commit_held;
	struct um_io held;
	struct ufile *file;
};

struct ucwait {
	struct ucwait *next;
	uint64_t seq;
	struct uu_req *req;   /* an arming command (FETCH, COMMIT) */
	unsigned int idx;     /* its slot */
	uint64_t addr;
	pid_t tid;            /* the submitting task: the slot's daemon */
	uint64_t auto_addr;   /* AUTO_BUF_REG: its sqe->addr */
	struct uu_ring *ring; /* its ring */
	int res;
	bool done;
};

struct ufile {
	dev_t st_dev;
	ino_t st_ino;
	uint32_t kind;        /* UK_CTRL or UK_CHAR */
	struct ufile *next;
	/* UK_CHAR */
	struct ublksrv_ctrl_dev_info info;
	int desc_fd, data_fd, data_conn;
	const uint8_t *desc_map;
	uint8_t *data_map;
	size_t desc_len, data_len, slot_bytes;
	pthread_mutex_t lock;  /* slots, waiters, seq */
	pthread_cond_t cond;
	struct ucslot *slots;
	struct ucwait *waiters;
	uint64_t seq;
	int accmode;           /* the open's O_ACCMODE */
	bool dead;             /* the driver closed the data connection */
	pid_t pid;             /* the process whose engine connection it is */
};

/* client.c */
int um_connect_driver(void);
struct ufile *uu_ublk_file(int fd);
struct ufile *uu_ublk_file_st(const struct stat *st);
extern atomic_uint uu_ublk_nfiles;
int uu_ublk_open(const char *path, int flags);
/* 0 if path is the control file or an existing device's char file,
 * -ENOENT if not, -EINVAL if it names neither; *rdev its made-up number */
int uu_ublk_probe(const char *path, dev_t *rdev);
/* the existing devices' ids, ascending (a listing of ublk-char): the
 * count (at most max) or -errno */
int uu_ublk_list(uint32_t *ids, unsigned int max);
int uu_ublk_ctrl(uint32_t cmd_op, const struct ublksrv_ctrl_cmd *hdr);
void *uu_ublk_mmap(struct ufile *f, void *addr, size_t len, int prot,
		   int flags, off_t off);
int uu_ublk_bdev_io(int dev_id, int op, void *buf, size_t len, uint64_t pos);

/* client_io.c */
int uu_ublk_start_receiver(struct ufile *f);
/* may this process map f's descriptors (ublk_ch_mmap's mm rule)? */
int uu_ublk_mmap_check(struct ufile *f);
/*
 * One I/O command of the char file f from task tid.  UM_QUEUED: req is
 * installed in its slot and ended later by *done (from the receiver
 * thread, or from here if an event was already pending when mark ran);
 * else the CQE result.
 */
typedef void (*uu_ublk_done_fn)(struct uu_req *req, int res);
typedef void (*uu_ublk_mark_fn)(struct uu_req *req, unsigned int arg);
/* how queued commands end and are marked cancelable (ublk_cmd.c sets
 * the URING_CMD calls; a test may set its own) */
void uu_ublk_set_ops(uu_ublk_done_fn done, uu_ublk_mark_fn mark);
int uu_ublk_io(struct ufile *f, uint32_t cmd_op,
	       const struct ublksrv_io_cmd *cmd, pid_t tid, struct uu_req *req,
	       unsigned int mark_arg);
/* the ring of req exits: end it with UBLK_IO_RES_ABORT (true), or it has
 * ended already (false) */
bool uu_ublk_io_cancel(struct ufile *f, struct uu_req *req, unsigned int q,
		       unsigned int tag);
/*
 * UBLK_F_USER_COPY: pread (is_write false) or pwrite of the char file f
 * at pos, ublk_drv's ublk_ch_read_iter / ublk_ch_write_iter: the bytes
 * copied or -errno.  user_backed: iov is the caller's memory (not a
 * registered buffer, which ublk_check_and_get_req refuses).
 */
/* REGISTER_IO_BUF / UNREGISTER_IO_BUF into r's buffer table: the CQE
 * result */
int uu_ublk_buf_cmd(struct ufile *f, uint32_t cmd_op,
		    const struct ublksrv_io_cmd *cmd, pid_t tid,
		    struct uu_ring *r);
struct iovec;
ssize_t uu_ublk_user_copy(struct ufile *f, bool is_write,
			  const struct iovec *iov, int nr, int64_t pos,
			  bool user_backed);

#endif
