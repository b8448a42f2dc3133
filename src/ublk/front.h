/* SPDX-License-Identifier: MIT */
/*
 * The kernel block device in front of a started uublkd device
 * (docs/ublk.md, "The block side"): a one-file FUSE filesystem served by
 * uublkd's own threads over /dev/fuse (ublkd_fuse.c), a loop device with
 * direct I/O on its file and /dev/ublkbN, a block node with the loop
 * device's numbers (ublkd_front.c).
 *
 * FUSE requests become block requests on a socketpair whose other end is
 * a BDEV connection of uublkd's loop (ublkd_conn_add), so they are served
 * exactly like uuring_ublk_bdev_io's: through the block-queue model into
 * the ublk server's slots.
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
	/* uublkd's loop is inside the setup (LOOP_CONFIGURE fsyncs the
	 * file): the reader answers FSYNC itself meanwhile */
	atomic_bool configuring;
	pthread_t reader, replier;
	uint8_t *rbuf, *wbuf;   /* the reader's and the replier's */
	char dir[64], node_path[64], lock_path[64];
};

/* the FUSE side's threads (ublkd_fuse.c): 0 or -errno */
int ublkd_fuse_start(struct ufront *f);
/* after the connection's abort and the socketpairs' shutdown; false if
 * a thread did not end (its memory is then left alone) */
bool ublkd_fuse_join(struct ufront *f);

#endif
