/* SPDX-License-Identifier: MIT */
/*
 * The kernel block device in front of a started uublkd device
 * (docs/ublk.md, "The block side"): a one-file FUSE filesystem served by
 * uublkd's own threads over /dev/fuse (ublkd_fuse.c), a loop device with
 * direct I/O on its file and /dev/ublkbN, a block node with the loop
 * device's numbers (ublkd_front.c).
 *
 * A FUSE READ, WRITE or FSYNC is submitted by the FUSE reader itself,
 * under uublkd's lock, through the block-queue model into the ublk
 * server's slots (ublkd_front_io), and answered on /dev/fuse by whoever
 * completes it (uublkd's loop, at the server's COMMIT): no hop through
 * uublkd's loop on the way in, none through the replier on the way out.
 * While the loop device is being configured (uublkd's loop holds the
 * lock inside LOOP_CONFIGURE), and for FALLOCATE, requests go as
 * UM_BDEV messages on socketpairs whose other ends are BDEV connections
 * of uublkd's loop (ublkd_conn_add), answered through the replier.
 */
#ifndef UURING_UBLK_FRONT_H
#define UURING_UBLK_FRONT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct ufront {
	int id;                 /* the device's id: /dev/ublkbN */
	int fuse_fd;            /* /dev/fuse, this mount's connection */
	int req_fd, sync_fd;    /* the threads' ends of the socketpairs */
	int main_req_fd, main_sync_fd; /* uublkd's ends (BDEV connections) */
	int loop_fd, lock_fd;
	uint32_t loop_major, loop_minor;
	uint32_t conn_id;       /* /sys/fs/fuse/connections/<conn_id> */
	uint64_t size;          /* bytes */
	uint32_t max_io;        /* the largest READ/WRITE, bytes */
	uint32_t lbs;           /* logical block size */
	uint32_t max_discard, max_zeroes; /* bytes; 0: not supported */
	bool mounted, node, reader_on, replier_on;
	/* requests submitted by the reader and not ended (uublkd's lock):
	 * their replies need fuse_fd, so a torn-down front (gone) keeps it
	 * open and f allocated until the last one ends (ublkd_front_put) */
	unsigned int refs;
	bool gone;
	/* uublkd's loop is inside the setup (LOOP_CONFIGURE fsyncs the
	 * file): the reader answers FSYNC itself meanwhile */
	atomic_bool configuring;
	pthread_t reader, replier;
	uint8_t *rbuf, *wbuf;   /* the reader's and the replier's */
	char dir[64], node_path[64], lock_path[64];
};

/*
 * uublkd's lock (ublkd.c): its loop holds it except while it waits in
 * epoll_wait; the FUSE reader takes it around ublkd_front_io.  Device
 * and slot state are touched only under it.
 */
void ublkd_lock(void);
void ublkd_unlock(void);

/*
 * A FUSE READ (data NULL), WRITE (len bytes at data) or FLUSH of unique
 * on f's device, submitted from the calling thread (with uublkd's lock
 * held, ublkd_io.c); its answer is written on /dev/fuse when it ends.
 * cpu: the submitter's, for the hardware queue.
 */
void ublkd_front_io(struct ufront *f, uint64_t unique, uint32_t op,
		    uint64_t pos, uint32_t len, const void *data, int cpu);

/* a request of f ended (uublkd's lock held): the last one of a front
 * torn down meanwhile closes its connection's fd and frees it */
void ublkd_front_put(struct ufront *f);

/* one FUSE reply on f's connection: the header, then len bytes
 * (ublkd_fuse.c; a raw system call, safe from any uublkd thread) */
void ublkd_fuse_reply(struct ufront *f, uint64_t unique, int err,
		      const void *data, size_t len);

/* the FUSE side's threads (ublkd_fuse.c): 0 or -errno */
int ublkd_fuse_start(struct ufront *f);
/* after the connection's abort and the socketpairs' shutdown; false if
 * a thread did not end (its memory is then left alone) */
bool ublkd_fuse_join(struct ufront *f);

#endif
