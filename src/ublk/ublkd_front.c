// SPDX-License-Identifier: MIT
/*
 * A started device's kernel block device (front.h, docs/ublk.md "The
 * block side"): what ublk_ctrl_start_dev's add_disk and ublk_stop_dev's
 * del_gendisk do, on a kernel without ublk_drv.
 *
 * Start: /run/uuring/ublk/N.lock is flocked for the device's lifetime
 * (so one driver owns the name ublkbN, and a dead driver's leftovers are
 * recognised as stale and reclaimed: a crashed driver's node stays until
 * then, docs/compatibility.md); a FUSE filesystem is mounted on
 * /run/uuring/ublk/N with our own connection to /dev/fuse; its file
 * "disk" goes to a free loop device (LOOP_CONFIGURE, direct I/O, the
 * device's logical block size, autoclear); /dev/ublkbN is made a block
 * node with the loop device's numbers.
 *
 * Stop: the node goes first, so it never outlives the loop binding and
 * cannot reach whatever the loop minor serves next; the FUSE connection
 * is aborted (/sys/fs/fuse/connections/C/abort: whatever I/O is in
 * flight or comes later fails with EIO instead of waiting for a server);
 * the loop device is detached (at its last close if a filesystem still
 * holds it), the threads end, the mount goes.
 *
 * Where this cannot be done (no root, no /dev/fuse, no free loop device,
 * the name held by another driver) the device still works in-process
 * and one line says why (ublkd_log).  UURING_UBLK_BLOCKDEV=0 turns it
 * off.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ublk/front.h"
#include "ublk/ublkd.h"

#ifndef PR_SET_IO_FLUSHER
#define PR_SET_IO_FLUSHER 57
#endif

#define FRONT_DIR "/run/uuring/ublk"
#define FUSECTL "/sys/fs/fuse/connections"
#define LOOP_MAJOR_ 7u

static bool front_wanted(void)
{
	const char *e = getenv("UURING_UBLK_BLOCKDEV");

	return !e || strcmp(e, "0");
}

static int mkdir_p(const char *path)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * What a dead driver may have left for this name (we hold its lock, so
 * no live driver owns them): the node, unless it is not a loop node
 * (a real ublk_drv disk, someone's file: then we do not take the name),
 * and its mounts.
 */
static int reclaim(struct ufront *f)
{
	struct stat st;

	if (!lstat(f->node_path, &st)) {
		if (!S_ISBLK(st.st_mode) || major(st.st_rdev) != LOOP_MAJOR_)
			return -EEXIST;
		if (unlink(f->node_path))
			return -errno;
	}
	for (int k = 0; k < 8 && !umount2(f->dir, MNT_DETACH); k++)
		;
	return 0;
}

/* the connection's number under /sys/fs/fuse/connections (fusectl
 * mounted there if it is not) */
static int fuse_conn_id(struct ufront *f)
{
	char path[96];
	struct stat st;

	if (stat(f->dir, &st))
		return -errno;
	/* the kernel's dev_t of the superblock, as fusectl names it */
	f->conn_id = major(st.st_dev) << 20 | minor(st.st_dev);
	snprintf(path, sizeof(path), FUSECTL "/%u/abort", f->conn_id);
	if (!access(path, W_OK))
		return 0;
	if (mount("fusectl", FUSECTL, "fusectl", 0, NULL) && errno != EBUSY)
		return -errno;
	return access(path, W_OK) ? -errno : 0;
}

static int fuse_mount(struct ufront *f)
{
	char opts[160];

	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other,"
		 "default_permissions,max_read=%u",
		 f->fuse_fd, f->max_io);
	if (mount("uublkd", f->dir, "fuse.uublkd",
		  MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME, opts))
		return -errno;
	f->mounted = true;
	return 0;
}

/* socketpairs between the FUSE threads and uublkd's loop */
static int pair(int *mine, int *main_end)
{
	int sv[2], big = 4 << 20;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	for (int k = 0; k < 2; k++)
		if (setsockopt(sv[k], SOL_SOCKET, SO_SNDBUFFORCE, &big,
			       sizeof(big)))
			setsockopt(sv[k], SOL_SOCKET, SO_SNDBUF, &big,
				   sizeof(big));
	/* uublkd's end stays blocking: an answer is never dropped, and the
	 * replier always drains it (it waits on nothing of uublkd's) */
	if (!ublkd_conn_add(sv[0], UK_BDEV)) {
		close(sv[0]);
		close(sv[1]);
		return -ENOMEM;
	}
	*main_end = sv[0];
	*mine = sv[1];
	return 0;
}

/* LOOP_CONFIGURE on a free loop device (another may take it first) */
static int loop_attach(struct ufront *f, int file_fd, const char **step)
{
	struct loop_config lc;
	struct stat st;
	char path[32];
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC), ret = -EBUSY;

	*step = "/dev/loop-control";
	if (ctl < 0)
		return -errno;
	memset(&lc, 0, sizeof(lc));
	lc.fd = (uint32_t)file_fd;
	lc.block_size = f->lbs;
	lc.info.lo_flags = LO_FLAGS_DIRECT_IO | LO_FLAGS_AUTOCLEAR;
	snprintf((char *)lc.info.lo_file_name, LO_NAME_SIZE, "uublkd:ublkb%d",
		 f->id);
	*step = "LOOP_CONFIGURE";
	for (int k = 0; k < 8 && ret == -EBUSY; k++) {
		int n = ioctl(ctl, LOOP_CTL_GET_FREE);

		if (n < 0) {
			ret = -errno;
			*step = "LOOP_CTL_GET_FREE";
			break;
		}
		snprintf(path, sizeof(path), "/dev/loop%d", n);
		f->loop_fd = open(path, O_RDWR | O_CLOEXEC);
		if (f->loop_fd < 0) {
			ret = -errno;
			break;
		}
		ret = ioctl(f->loop_fd, LOOP_CONFIGURE, &lc) ? -errno : 0;
		if (ret) {
			close(f->loop_fd);
			f->loop_fd = -1;
		}
	}
	close(ctl);
	if (ret)
		return ret;
	if (fstat(f->loop_fd, &st))
		return -errno;
	f->loop_major = major(st.st_rdev);
	f->loop_minor = minor(st.st_rdev);
	return 0;
}

static bool loop_dio_on(const struct ufront *f)
{
	struct loop_info64 li;

	return !ioctl(f->loop_fd, LOOP_GET_STATUS64, &li) &&
	       (li.lo_flags & LO_FLAGS_DIRECT_IO);
}

/*
 * The name's lock, flocked for the device's lifetime and unlinked at its
 * end: a lock taken on a file that was unlinked meanwhile is not the
 * name's (its owner ended), so it is taken again on the new file.
 */
static int lock_name(struct ufront *f)
{
	struct stat a, b;

	for (int k = 0; k < 8; k++) {
		f->lock_fd = open(f->lock_path, O_RDWR | O_CREAT | O_CLOEXEC,
				  0600);
		if (f->lock_fd < 0)
			return -errno;
		if (flock(f->lock_fd, LOCK_EX | LOCK_NB)) {
			int e = errno;

			/* not ours: never unlinked by our teardown */
			close(f->lock_fd);
			f->lock_fd = -1;
			return -e;
		}
		if (!fstat(f->lock_fd, &a) && !stat(f->lock_path, &b) &&
		    a.st_ino == b.st_ino && a.st_dev == b.st_dev)
			return 0;
		close(f->lock_fd);
		f->lock_fd = -1;
	}
	return -EAGAIN;
}

static int front_setup(struct ufront *f, const char **step)
{
	char path[96];

	int ret, file_fd;

	*step = "root";
	if (geteuid())
		return -EPERM;
	*step = FRONT_DIR;
	ret = mkdir_p(FRONT_DIR);
	if (ret)
		return ret;
	ret = lock_name(f);
	if (ret) {
		*step = ret == -EWOULDBLOCK ? "the name, held by another uublkd"
					    : f->lock_path;
		return ret;
	}
	*step = f->node_path;
	ret = reclaim(f);
	if (ret)
		return ret;
	*step = f->dir;
	if (mkdir(f->dir, 0700) && errno != EEXIST)
		return -errno;
	*step = "/dev/fuse";
	f->fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (f->fuse_fd < 0)
		return -errno;
	*step = "socketpair";
	ret = pair(&f->req_fd, &f->main_req_fd);
	if (!ret)
		ret = pair(&f->sync_fd, &f->main_sync_fd);
	if (ret)
		return ret;
	*step = "mount fuse";
	ret = fuse_mount(f);
	if (ret)
		return ret;
	*step = "FUSE threads";
	ret = ublkd_fuse_start(f);
	if (ret)
		return ret;
	*step = "fusectl";
	ret = fuse_conn_id(f);
	if (ret)
		return ret;
	*step = "open disk";
	snprintf(path, sizeof(path), "%s/disk", f->dir);
	file_fd = open(path, O_RDWR | O_CLOEXEC);
	if (file_fd < 0)
		return -errno;
	atomic_store_explicit(&f->configuring, true, memory_order_release);
	ret = loop_attach(f, file_fd, step);
	/* pairs with the reader's acquire load (ublkd_fuse.c) */
	atomic_store_explicit(&f->configuring, false, memory_order_release);
	close(file_fd);
	if (ret)
		return ret;
	if (!loop_dio_on(f))
		ublkd_log("ublkb%d: loop%u without direct I/O (buffered)",
			  f->id, f->loop_minor);
	*step = "mknod";
	if (mknod(f->node_path, S_IFBLK | 0660,
		  makedev(f->loop_major, f->loop_minor)))
		return -errno;
	f->node = true;
	return 0;
}

static void abort_conn(const struct ufront *f)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), FUSECTL "/%u/abort", f->conn_id);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, "1", 1) != 1)
		ublkd_log("ublkb%d: %s: %s", f->id, path, strerror(errno));
	close(fd);
}

static void front_teardown(struct ufront *f)
{
	bool joined;

	/* del_gendisk: first the name, then what it named */
	if (f->node && unlink(f->node_path))
		ublkd_log("ublkb%d: unlink %s: %s", f->id, f->node_path,
			  strerror(errno));
	if (f->mounted && f->conn_id)
		abort_conn(f);
	if (f->loop_fd >= 0) {
		/* busy (a mounted filesystem): autoclear at its last close */
		ioctl(f->loop_fd, LOOP_CLR_FD);
		close(f->loop_fd);
	}
	if (f->mounted && umount2(f->dir, MNT_DETACH))
		ublkd_log("ublkb%d: umount %s: %s", f->id, f->dir,
			  strerror(errno));
	/* the threads' sockets: the reader's send and the replier's
	 * receive end; uublkd's loop sees the hang-up and frees its ends */
	if (f->main_req_fd >= 0)
		shutdown(f->main_req_fd, SHUT_RDWR);
	if (f->main_sync_fd >= 0)
		shutdown(f->main_sync_fd, SHUT_RDWR);
	/* a reader waiting for uublkd's lock must get it to end: it finds
	 * the device without this front (ublkd_front_io) and answers -EIO */
	ublkd_unlock();
	joined = ublkd_fuse_join(f);
	ublkd_lock();
	if (!joined)
		ublkd_log("ublkb%d: a FUSE thread did not end", f->id);
	if (joined) {
		if (f->req_fd >= 0)
			close(f->req_fd);
		if (f->sync_fd >= 0)
			close(f->sync_fd);
		/* a request still in the device (the server owns it) replies
		 * on fuse_fd when it ends: the number must not name another
		 * file by then */
		if (f->fuse_fd >= 0 && !f->refs)
			close(f->fuse_fd);
	}
	rmdir(f->dir);
	/* last: another driver may take the name now */
	if (f->lock_fd >= 0) {
		unlink(f->lock_path);
		close(f->lock_fd);
	}
	if (joined && !f->refs) {
		free(f);
	} else if (joined) {
		ublkd_log("ublkb%d: %u request(s) still in the server; the "
			  "FUSE fd stays open until they end", f->id, f->refs);
		f->gone = true;
	}
}

void ublkd_front_put(struct ufront *f)
{
	if (--f->refs || !f->gone)
		return;
	if (f->fuse_fd >= 0)
		close(f->fuse_fd);
	free(f);
}

void ublkd_front_start(struct udev *d)
{
	uint64_t max = d->info.max_io_buf_bytes;
	const char *step = "";
	struct ufront *f;
	int ret;

	if (d->front || !front_wanted())
		return;
	f = calloc(1, sizeof(*f));
	if (!f) {
		ublkd_log("ublkb%d: no block node: %s", d->id, strerror(ENOMEM));
		return;
	}
	f->id = d->id;
	f->fuse_fd = f->req_fd = f->sync_fd = -1;
	f->main_req_fd = f->main_sync_fd = f->loop_fd = f->lock_fd = -1;
	snprintf(f->dir, sizeof(f->dir), FRONT_DIR "/%d", d->id);
	snprintf(f->node_path, sizeof(f->node_path), "/dev/ublkb%d", d->id);
	snprintf(f->lock_path, sizeof(f->lock_path), FRONT_DIR "/%d.lock",
		 d->id);
	f->size = d->params.basic.dev_sectors << 9;
	f->lbs = 1u << d->params.basic.logical_bs_shift;
	if (max > UM_BDEV_MAX)
		max = UM_BDEV_MAX;
	if (d->params.basic.max_sectors &&
	    max > (uint64_t)d->params.basic.max_sectors << 9)
		max = (uint64_t)d->params.basic.max_sectors << 9;
	f->max_io = (uint32_t)max & ~4095u;
	if (d->params.types & UBLK_PARAM_TYPE_DISCARD) {
		uint64_t dm = (uint64_t)d->params.discard.max_discard_sectors << 9;
		uint64_t zm = (uint64_t)
				      d->params.discard.max_write_zeroes_sectors
			      << 9;

		f->max_discard = dm > (1u << 30) ? 1u << 30 : (uint32_t)dm;
		f->max_zeroes = zm > (1u << 30) ? 1u << 30 : (uint32_t)zm;
	}
	ret = f->max_io ? 0 : -EINVAL;
	if (ret)
		step = "max_io_buf_bytes below 4 KiB";
	else
		ret = front_setup(f, &step);
	if (ret) {
		ublkd_log("ublkb%d: no block node (%s: %s); the device is "
			  "served in-process only",
			  d->id, step, strerror(-ret));
		front_teardown(f);
		return;
	}
	/* uublkd's loop serves this device's I/O too (ublkd.c) */
	prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0);
	d->front = f;
}

void ublkd_front_stop(struct udev *d)
{
	struct ufront *f = d->front;

	if (!f)
		return;
	d->front = NULL;
	front_teardown(f);
}

/*
 * At the driver's start: every name whose lock nobody holds was left by
 * a driver that died (uublkd killed, the machine's own crash excepted:
 * /run is a tmpfs); its node and mount go now, not only when a device of
 * that number starts again, so a stale node does not linger to name a
 * loop device someone else binds later.
 */
void ublkd_front_reclaim_all(void)
{
	struct dirent *de;
	DIR *dir;

	if (geteuid() || !front_wanted())
		return;
	dir = opendir(FRONT_DIR);
	while (dir && (de = readdir(dir))) {
		struct ufront f = { .fuse_fd = -1, .lock_fd = -1 };
		char *end;
		long id = strtol(de->d_name, &end, 10);

		if (end == de->d_name || strcmp(end, ".lock") || id < 0 ||
		    id > INT32_MAX)
			continue;
		f.id = (int)id;
		snprintf(f.dir, sizeof(f.dir), FRONT_DIR "/%d", f.id);
		snprintf(f.node_path, sizeof(f.node_path), "/dev/ublkb%d",
			 f.id);
		snprintf(f.lock_path, sizeof(f.lock_path), FRONT_DIR "/%d.lock",
			 f.id);
		if (lock_name(&f))
			continue; /* a live driver's */
		if (!reclaim(&f))
			ublkd_log("ublkb%d: reclaimed a dead driver's node and "
				  "mount", f.id);
		rmdir(f.dir);
		unlink(f.lock_path);
		close(f.lock_fd);
	}
	if (dir)
		closedir(dir);
}

bool ublkd_front_devt(const struct udev *d, uint32_t *major_,
		      uint32_t *minor_)
{
	if (!d->front)
		return false;
	*major_ = d->front->loop_major;
	*minor_ = d->front->loop_minor;
	return true;
}
