/* SPDX-License-Identifier: MIT */
/*
 * uuring's ublk driver in user space (docs/ublk.md): the calls a ublk
 * server linked to libuuring makes instead of open(2) on the driver's
 * files, and block I/O submitted to a device (the block side; the
 * kernel would give a /dev/ublkbN).  Control and I/O commands are
 * IORING_OP_URING_CMD on the returned fds, as with ublk_drv; the
 * descriptor arrays are mapped with uuring_mmap().  The structures and
 * numbers are those of <linux/ublk_cmd.h>.
 */
#ifndef UURING_UBLK_H
#define UURING_UBLK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * open(2) of "/dev/ublk-control" or "/dev/ublkcN" (flags: O_CLOEXEC is
 * honoured): an fd, or -errno (-ENOENT: no such device, -EBUSY: the char
 * device is open already, as ublk_ch_open).  Starts the per-user driver
 * process uublkd if it is not running.
 */
int uuring_ublk_open(const char *path, int flags);

/*
 * One block request to device dev_id, served by its ublk server:
 * op is UBLK_IO_OP_READ, UBLK_IO_OP_WRITE or UBLK_IO_OP_FLUSH, pos and len
 * in bytes (512-byte aligned, len at most 128 KiB and max_io_buf_bytes).
 * Blocks until the server commits it; bytes done or -errno (-ENODEV: no
 * started device, -EIO: the server failed it or went away).
 */
int uuring_ublk_bdev_io(int dev_id, int op, void *buf, size_t len,
			uint64_t pos);

#ifdef __cplusplus
}
#endif

#endif
