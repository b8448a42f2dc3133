// SPDX-License-Identifier: MIT
/*
 * READ/WRITE (and the vectored and fixed forms) on an IORING_SETUP_IOPOLL
 * ring.  The kernel issues them as polled I/O (IOCB_HIPRI) and refuses,
 * with -EOPNOTSUPP, a file that is not O_DIRECT or whose file operations
 * have no ->iopoll (page cache, tmpfs, pipes, sockets, /dev/null).
 *
 * What the block layer then does is observable too: a polled bio sent to
 * a queue without poll queues (virtio-blk, nvme without poll_queues, loop;
 * sysfs queue/io_poll = 0) fails with -EOPNOTSUPP.  Which I/O sends a
 * polled bio is decided by the filesystem's direct-I/O code: on iomap
 * filesystems (ext4, xfs, btrfs) only the first bio of an I/O is polled,
 * and only when no completion work follows it, so
 *   - reads that start on written data fail with -EOPNOTSUPP there;
 *   - reads that start in a hole, an unwritten extent or at/after EOF
 *     succeed (no bio is sent for the first mapping);
 *   - writes to regular files succeed (their completion updates the
 *     inode, so they are never polled);
 *   - block devices poll every direct read and write.
 * uuring cannot poll a device from user space: it reproduces the kernel's
 * answer from the same facts (queue/io_poll, FIEMAP, the file type) and
 * runs the I/O through Linux AIO (exec/aio.c).  The completion is not
 * posted when AIO reports it: core/iopoll.c keeps it until the
 * application enters with GETEVENTS, which reaps it, as the kernel's
 * io_do_iopoll does.  Checked differentially in tests/test_diff_iopoll.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/types.h"
#include "ops/rw.h"

#ifndef XFS_SUPER_MAGIC
#define XFS_SUPER_MAGIC 0x58465342
#endif
#ifndef BTRFS_SUPER_MAGIC
#define BTRFS_SUPER_MAGIC 0x9123683E
#endif

#define UU_RWF_KNOWN 0xffu /* as rw.c: RWF_* known to 6.18 */

/* Regular files whose filesystem sets ->iopoll in 6.18 (block devices
 * have it too). */
static bool fs_has_iopoll(int fd)
{
	struct statfs sfs;

	if (fstatfs(fd, &sfs))
		return false;
	switch ((unsigned long)sfs.f_type) {
	case EXT4_SUPER_MAGIC: /* also ext2/ext3 mounted by the ext4 driver */
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
		return true;
	default:
		return false;
	}
}

/*
 * Does the request queue behind dev take polled bios?  sysfs
 * queue/io_poll of the disk (for a partition, of its parent), and its
 * logical block size.  A device sysfs does not describe (btrfs' anonymous
 * st_dev, no /sys) is taken as one without poll queues, the common case.
 * Cached per device.
 */
#define POLLQ_CACHE 16
struct pollq {
	dev_t dev;
	bool valid, poll;
	unsigned int lbs;      /* logical block size */
};
static struct pollq pollq_cache[POLLQ_CACHE];
static unsigned int pollq_next;
static pthread_mutex_t pollq_lock = PTHREAD_MUTEX_INITIALIZER;

/* the first number in a sysfs attribute of dev's queue */
static bool queue_attr(dev_t dev, const char *attr, unsigned long *v)
{
	static const char *const fmt[] = {
		"/sys/dev/block/%u:%u/queue/%s",
		"/sys/dev/block/%u:%u/../queue/%s", /* a partition */
	};
	char path[128], b[24] = { 0 };

	for (unsigned int i = 0; i < 2; i++) {
		int fd;
		ssize_t n;

		snprintf(path, sizeof(path), fmt[i], major(dev), minor(dev), attr);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, b, sizeof(b) - 1);
		close(fd);
		if (n <= 0)
			continue;
		*v = strtoul(b, NULL, 10);
		return true;
	}
	return false;
}

static struct pollq queue_of(dev_t dev)
{
	struct pollq q = { .dev = dev, .valid = true, .lbs = 512 };
	unsigned long v;
	unsigned int i;

	pthread_mutex_lock(&pollq_lock);
	for (i = 0; i < POLLQ_CACHE; i++) {
		if (pollq_cache[i].valid && pollq_cache[i].dev == dev) {
			q = pollq_cache[i];
			pthread_mutex_unlock(&pollq_lock);
			return q;
		}
	}
	pthread_mutex_unlock(&pollq_lock);
	if (queue_attr(dev, "io_poll", &v))
		q.poll = v != 0;
	if (queue_attr(dev, "logical_block_size", &v) && v && !(v & (v - 1)))
		q.lbs = (unsigned int)v;
	pthread_mutex_lock(&pollq_lock);
	pollq_cache[pollq_next++ % POLLQ_CACHE] = q;
	pthread_mutex_unlock(&pollq_lock);
	return q;
}

/* iomap's check before it builds a bio: offset and lengths in logical
 * blocks of the device (-EINVAL) */
static bool blocks_aligned(const struct uu_req *req, int64_t pos,
			   unsigned int lbs)
{
	const struct uu_rw_cmd *rw_st = uu_cmd(req, rw);

	if ((uint64_t)pos & (lbs - 1))
		return false;
	for (int i = 0; i < rw_st->nr_iov; i++)
		if (rw_st->iov[i].iov_len & (lbs - 1))
			return false;
	return true;
}

/*
 * Would a direct read at pos send its first bio to the device?  Not at or
 * after EOF, not in a hole or an unwritten extent (zero-filled without
 * I/O).  FIEMAP, unlike SEEK_DATA, leaves the application's file offset
 * alone.  Dirty page cache over a hole shows as a delalloc extent: the
 * kernel writes it back first, then reads it from the device.
 */
static bool read_hits_device(int fd, const struct stat *st, int64_t pos)
{
	union { /* a fiemap with room for one extent */
		struct fiemap fm;
		char room[sizeof(struct fiemap) + sizeof(struct fiemap_extent)];
	} q;
	const struct fiemap_extent *e = &q.fm.fm_extents[0];

	if (pos >= st->st_size)
		return false;
	memset(&q, 0, sizeof(q));
	q.fm.fm_start = (uint64_t)pos;
	q.fm.fm_length = 1;
	q.fm.fm_extent_count = 1;
	if (ioctl(fd, FS_IOC_FIEMAP, &q.fm))
		return true; /* cannot tell: assume data */
	if (!q.fm.fm_mapped_extents || e->fe_logical > (uint64_t)pos ||
	    e->fe_logical + e->fe_length <= (uint64_t)pos)
		return false; /* a hole */
	return !(e->fe_flags & FIEMAP_EXTENT_UNWRITTEN);
}

static int blocking_rw(struct uu_req *req, bool is_write, int64_t pos)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);
	ssize_t n;
	int flags = (int)rw_st->rw_flags & ~RWF_HIPRI;

	do {
		n = is_write ? pwritev2(req->fd, rw_st->iov, rw_st->nr_iov,
					pos, flags) :
			       preadv2(req->fd, rw_st->iov, rw_st->nr_iov,
				       pos, flags);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (int)n;
}

int uu_rw_iopoll_issue(struct uu_req *req, bool is_write,
		       unsigned int issue_flags)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);
	int fl = fcntl(req->fd, F_GETFL);
	int64_t pos = rw_st->pos;
	struct pollq q;
	struct stat st;

	/* io_rw_init_file's order: the file's mode, the RWF flags, then the
	 * IOPOLL requirements */
	if (fl < 0)
		return -EBADF;
	if ((fl & O_ACCMODE) == (is_write ? O_RDONLY : O_WRONLY))
		return -EBADF;
	if (rw_st->rw_flags & ~UU_RWF_KNOWN)
		return -EOPNOTSUPP;
	if (!(fl & O_DIRECT) || fstat(req->fd, &st))
		return -EOPNOTSUPP;
	if (!S_ISBLK(st.st_mode) && !(S_ISREG(st.st_mode) && fs_has_iopoll(req->fd)))
		return -EOPNOTSUPP;
	if (pos == -1) {
		/* the file position at issue; like the kernel's polled
		 * completion, it is not advanced afterwards */
		off_t cur = lseek(req->fd, 0, SEEK_CUR);

		pos = cur < 0 ? 0 : cur;
	}
	if (pos < 0)
		return -EINVAL; /* rw_verify_area */
	q = queue_of(S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev);
	if (!q.poll && (S_ISBLK(st.st_mode) ||
			(!is_write && read_hits_device(req->fd, &st, pos)))) {
		/* a polled bio would be built, then refused by the queue */
		if (!blocks_aligned(req, pos, q.lbs))
			return -EINVAL;
		return -EOPNOTSUPP;
	}
	rw_st->pos = pos;
	if (issue_flags & UU_ISSUE_F_WORKER)
		return blocking_rw(req, is_write, pos); /* IOSQE_ASYNC */
	return uu_park(req, is_write ? UU_ISSUE_PARK_AIO_WRITE :
				       UU_ISSUE_PARK_AIO_READ);
}
