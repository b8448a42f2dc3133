// SPDX-License-Identifier: MIT
/*
 * The ublk driver's kernel block device (src/ublk/ublkd_front.c,
 * ublkd_fuse.c): a started device is /dev/ublkbN, a block node on a loop
 * device over a FUSE file that uublkd serves, and ordinary programs (not
 * under `uuring run`: fio, dd, blkdiscard, mkfs.ext4, mount) use it; the
 * requests reach the ublk server, a process of this test serving a
 * memory disk through the API.
 *
 * Scenarios (arguments select some):
 *  - fs:   the node (a block node, GET_PARAMS's devt), fio crc32c verify
 *          with psync, the kernel's io_uring engine and libaio, dd, a
 *          discard reading back zeroes (as WRITE_ZEROES at the server),
 *          mkfs.ext4 + mount + files checksummed across umount/mount;
 *          DEL_DEV removes the node, detaches the loop device, unmounts.
 *  - kill, del, crash: a reader of /dev/ublkbN (a forked process doing
 *          plain O_DIRECT preads) gets EIO within a bound (5 s) after a
 *          SIGKILL of the server (no recovery), a DEL_DEV, or a SIGKILL
 *          of uublkd itself; the node goes (crash: it stays until the
 *          next driver starts, which reclaims it; a device of that
 *          number then serves dd through a new node).
 *  - delmnt: DEL_DEV under a mounted ext4: a synced write then fails
 *          (EIO, no hang), umount works, the loop device detaches.
 *  - stopheld: STOP_DEV while the server holds a read: the reader gets
 *          EIO, the read's late COMMIT is answered on the FUSE fd kept
 *          for it, the driver lives on.
 *  - recover: USER_RECOVERY + REISSUE under a mounted ext4: the server
 *          is killed while dd writes with fsync, a new server recovers
 *          the device, dd ends well, every file's sha256 holds after a
 *          remount, fsck is clean.
 *  - squeeze: mkfs.ext4 + buffered fio verify inside a 48 MiB memory
 *          cgroup (v2 memory.max or v1's limit): no reclaim deadlock.
 * Skipped (77) without root, /dev/fuse or /dev/loop-control, or where
 * the driver could not make the node (its log line is printed).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "abi/io_uring_abi.h"
#include "abi/ublk_abi.h"
#include "uuring.h"
#include "uuring_ublk.h"

static int failures;

#define CHECK(cond, ...)                                               \
	do {                                                           \
		if (!(cond)) {                                         \
			failures++;                                    \
			fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                  \
			fputc('\n', stderr);                           \
		}                                                      \
	} while (0)
#define EQ(got, want, rule)                                              \
	CHECK((long long)(got) == (long long)(want), "%s: got %lld want %lld", \
	      rule, (long long)(got), (long long)(want))

#include "ublk_tr.h"
#include "ublkb_util.h"

static int scenario_fs(struct tr *r, int *cfdp, int id)
{
	int cfd = *cfdp;
	/* four per-io daemons: tags t % 4 each */
	struct srv s = { .id = id, .daemons = 4 };
	struct ublk_params p = { .len = sizeof(p) };
	char node[32], mnt[96];
	struct stat st;
	int status;
	pid_t pid;

	s.disk = mmap(NULL, DISK_BYTES, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	s.st = mmap(NULL, sizeof(*s.st), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s.disk == MAP_FAILED || s.st == MAP_FAILED ||
	    dev_add(r, cfd, id, 0)) {
		CHECK(0, "setup");
		return 0;
	}
	pid = server_fork(&s);
	EQ(ctrl(r, cfd, UBLK_U_CMD_START_DEV, (uint32_t)id, 0xffff, NULL, 0,
		(uint64_t)pid), 0, "START_DEV");
	snprintf(node, sizeof(node), "/dev/ublkb%d", id);
	if (!node_of(id, &st)) {
		print_log();
		fprintf(stderr, "SKIP: the driver made no %s\n", node);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		ctrl(r, cfd, UBLK_U_CMD_DEL_DEV, (uint32_t)id, 0xffff, NULL, 0,
		     0);
		return 77;
	}
	CHECK(S_ISBLK(st.st_mode) && major(st.st_rdev) == 7,
	      "%s: a loop block node (mode %o, %u:%u)", node, st.st_mode,
	      major(st.st_rdev), minor(st.st_rdev));
	EQ(ctrl(r, cfd, UBLK_U_CMD_GET_PARAMS, (uint32_t)id, 0xffff, &p,
		sizeof(p), 0), 0, "GET_PARAMS");
	CHECK(p.devt.disk_major == major(st.st_rdev) &&
		      p.devt.disk_minor == minor(st.st_rdev),
	      "GET_PARAMS devt %u:%u, the node's", p.devt.disk_major,
	      p.devt.disk_minor);

	/* fio from ordinary processes: psync, then the kernel's io_uring */
	EQ(sh("fio --name=psync --filename=%s --ioengine=psync --direct=1 "
	      "--rw=randwrite --bs=4k --size=16m --verify=crc32c "
	      "--verify_fatal=1 --verify_state_save=0 --output=%s/fio1.log; rc=$?; grep -E 'IOPS|err' %s/fio1.log; exit $rc",
	      node, tmpdir, tmpdir), 0, "fio psync crc32c verify");
	if (kernel_uring())
		EQ(sh("fio --name=uring --filename=%s --ioengine=io_uring "
		      "--iodepth=32 --direct=1 --rw=randwrite "
		      "--bssplit=4k/50:16k/30:128k/20 --size=32m "
		      "--offset=32m --verify=crc32c --verify_fatal=1 --verify_state_save=0 "
		      "--output=%s/fio2.log; rc=$?; grep -E 'IOPS|err' %s/fio2.log; exit $rc",
		      node, tmpdir, tmpdir), 0,
		   "fio io_uring crc32c verify");
	else
		fprintf(stderr, "fio io_uring: the kernel's io_uring is "
				"refused here; that run is skipped\n");

	EQ(sh("fio --name=libaio --filename=%s --ioengine=libaio "
	      "--iodepth=16 --direct=1 --rw=randrw --bs=8k --size=16m "
	      "--offset=80m --verify=crc32c --verify_fatal=1 "
	      "--verify_state_save=0 --output=%s/fio4.log; rc=$?; "
	      "grep -E 'IOPS|err' %s/fio4.log; exit $rc",
	      node, tmpdir, tmpdir), 0, "fio libaio crc32c verify");

	/* dd in and out with O_DIRECT; the bytes are the server's */
	EQ(sh("head -c 4194304 /dev/urandom > %s/in && "
	      "dd if=%s/in of=%s bs=64k seek=1024 oflag=direct status=none && "
	      "dd if=%s of=%s/out bs=64k skip=1024 count=64 iflag=direct "
	      "status=none && cmp %s/in %s/out",
	      tmpdir, tmpdir, node, node, tmpdir, tmpdir, tmpdir), 0, "dd");
	{
		FILE *f;
		uint8_t *in = malloc(4 << 20);
		char path[96];

		snprintf(path, sizeof(path), "%s/in", tmpdir);
		f = fopen(path, "r");
		CHECK(f && in && fread(in, 1, 4 << 20, f) == 4 << 20 &&
			      !memcmp(in, s.disk + (64 << 20), 4 << 20),
		      "dd's bytes are in the server's disk at 64 MiB");
		if (f)
			fclose(f);
		free(in);
	}

	/* discard: loop's punch-hole, served as WRITE_ZEROES */
	memset(s.disk + (96 << 20), 0xee, 1 << 20);
	EQ(sh("blkdiscard -o %u -l %u %s", 96u << 20, 1u << 20, node), 0,
	   "blkdiscard");
	CHECK(s.disk[96 << 20] == 0 && s.disk[(97 << 20) - 1] == 0,
	      "the discarded range reads zeroes at the server");
	CHECK(atomic_load(&s.st->ops[UBLK_IO_OP_WRITE_ZEROES]) > 0,
	      "punch-hole arrived as WRITE_ZEROES (%u)",
	      atomic_load(&s.st->ops[UBLK_IO_OP_WRITE_ZEROES]));
	EQ(sh("fallocate -z -o %u -l %u %s", 100u << 20, 1u << 20, node), 0,
	   "fallocate --zero-range on the node");
	CHECK(atomic_load(&s.st->nounmap) > 0,
	      "zero-range arrived as WRITE_ZEROES with NOUNMAP (%u)",
	      atomic_load(&s.st->nounmap));

	/* a filesystem, its files checksummed across umount and mount */
	snprintf(mnt, sizeof(mnt), "%s/mnt", tmpdir);
	mkdir(mnt, 0700);
	EQ(sh("mkfs.ext4 -q -F %s", node), 0, "mkfs.ext4");
	EQ(sh("mount -t ext4 %s %s && "
	      "head -c 3000000 /dev/urandom > %s/a && "
	      "head -c 100000 /dev/urandom > %s/b && "
	      "mkdir %s/d && head -c 1048576 /dev/urandom > %s/d/c && "
	      "(cd %s && sha256sum a b d/c) > %s/sums && sync && umount %s",
	      node, mnt, mnt, mnt, mnt, mnt, mnt, tmpdir, mnt), 0,
	   "mount, write, umount");
	EQ(sh("mount -t ext4 -o ro %s %s && (cd %s && sha256sum -c --quiet "
	      "%s/sums); rc=$?; umount %s; exit $rc",
	      node, mnt, mnt, tmpdir, mnt), 0,
	   "the files' checksums after a remount");
	EQ(sh("fsck.ext4 -n -f %s >/dev/null 2>&1", node), 0, "fsck clean");
	CHECK(atomic_load(&s.st->ops[UBLK_IO_OP_FLUSH]) > 0,
	      "ext4's flushes reached the server (%u)",
	      atomic_load(&s.st->ops[UBLK_IO_OP_FLUSH]));

	fprintf(stderr, "the server saw %u reads, %u writes, %u flushes, "
			"%u discards, %u write-zeroes (%u NOUNMAP)\n",
		atomic_load(&s.st->ops[UBLK_IO_OP_READ]),
		atomic_load(&s.st->ops[UBLK_IO_OP_WRITE]),
		atomic_load(&s.st->ops[UBLK_IO_OP_FLUSH]),
		atomic_load(&s.st->ops[UBLK_IO_OP_DISCARD]),
		atomic_load(&s.st->ops[UBLK_IO_OP_WRITE_ZEROES]),
		atomic_load(&s.st->nounmap));
	/* DEL_DEV on the live device: stopped, the node goes */
	EQ(ctrl(r, cfd, UBLK_U_CMD_DEL_DEV, (uint32_t)id, 0xffff, NULL, 0, 0),
	   0, "DEL_DEV");
	waitpid(pid, &status, 0);
	EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0, "server exit");
	check_gone(id, &st);
	munmap(s.disk, DISK_BYTES);
	munmap(s.st, sizeof(*s.st));
	return 0;
}

enum { BY_KILL, BY_DEL, BY_CRASH };

/*
 * A reader of the node while the device ends under it: the server is
 * killed (no recovery), DEL_DEV is called, or uublkd itself is killed.
 * The reader's I/O fails with EIO within a bound (no hang, no D state).
 */
static void interrupted(struct tr *r, int *cfdp, int id, int how)
{
	static const char *const what[] = { "kill -9 of the server",
					     "DEL_DEV", "kill -9 of uublkd" };
	struct srv s = { 0 };
	struct pollfd pf;
	struct stat st;
	char node[32], c;
	int res_fd = -1, e = 0, status;
	double t0, dt;
	pid_t pid, rd, drv = how == BY_CRASH ? driver_pid(0) : 0;

	if (how == BY_CRASH && drv <= 1) {
		CHECK(0, "this test's uublkd not found");
		return;
	}
	pid = dev_begin(r, *cfdp, id, 0, &s, &st);
	if (!pid)
		return;
	snprintf(node, sizeof(node), "/dev/ublkb%d", id);
	rd = reader_fork(node, &res_fd);
	CHECK(read(res_fd, &c, 1) == 1, "the reader read 100 blocks");
	t0 = now_s();
	if (how == BY_KILL)
		kill(pid, SIGKILL);
	else if (how == BY_CRASH)
		kill(drv, SIGKILL);
	else
		EQ(ctrl(r, *cfdp, UBLK_U_CMD_DEL_DEV, (uint32_t)id, 0xffff,
			NULL, 0, 0), 0, "DEL_DEV during I/O");
	pf = (struct pollfd){ .fd = res_fd, .events = POLLIN };
	CHECK(poll(&pf, 1, 10000) == 1 &&
		      read(res_fd, &e, sizeof(e)) == sizeof(e),
	      "the reader ended within 10 s of the %s", what[how]);
	dt = now_s() - t0;
	EQ(e, EIO, "the reader's error: EIO");
	CHECK(dt < 5.0, "EIO %.3f s after the %s (bound 5 s)", dt, what[how]);
	fprintf(stderr, "%s: the reader's EIO after %.1f ms\n", what[how],
		dt * 1e3);
	kill(rd, SIGKILL); /* in case it hangs: then it is in D state */
	waitpid(rd, &status, 0);
	close(res_fd);
	if (how == BY_KILL) {
		waitpid(pid, NULL, 0);
		/* ublk_ch_release -> ublk_stop_dev: the node goes */
		check_gone(id, &st);
		EQ(ctrl(r, *cfdp, UBLK_U_CMD_DEL_DEV, (uint32_t)id, 0xffff,
			NULL, 0, 0), 0, "DEL_DEV");
	} else if (how == BY_DEL) {
		waitpid(pid, &status, 0);
		EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
		   "server exit");
		check_gone(id, &st);
	} else {
		struct stat st2;
		pid_t pid2;

		/* the dead driver's node stays (nobody to remove it) ...
		 * unless a driver of another name (another test, another
		 * user's server) started on this machine since the kill: any
		 * driver reclaims every name whose lock nobody holds at its
		 * start (ublkd_front_reclaim_all), and the check below then
		 * has nothing left to reclaim.  The reclaim itself is what
		 * the next lines test; the node may only be gone if it was
		 * reclaimed, i.e. its lock file went with it. */
		if (!node_of(id, &st2))
			CHECK(!lock_file_exists(id),
			      "a crashed driver's node stays (or was "
			      "reclaimed with its lock by another driver)");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		/* ... until the next driver starts: it reclaims the names
		 * whose lock nobody holds; then a device of that number */
		uuring_close(*cfdp);
		*cfdp = uuring_ublk_open("/dev/ublk-control", O_RDWR);
		CHECK(*cfdp >= 0 && driver_pid(drv) > 1,
		      "a new driver (was %d)", (int)drv);
		/* which reclaimed the dead one's names as it started */
		CHECK(!node_of(id, &st2), "the stale node is gone");
		dev_end(&s);
		pid2 = dev_begin(r, *cfdp, id, 0, &s, &st2);
		if (!pid2)
			return;
		EQ(sh("head -c 1048576 /dev/urandom > %s/in && "
		      "dd if=%s/in of=%s bs=64k oflag=direct status=none && "
		      "dd if=%s of=%s/out bs=64k count=16 iflag=direct "
		      "status=none && cmp %s/in %s/out",
		      tmpdir, tmpdir, node, node, tmpdir, tmpdir, tmpdir), 0,
		   "dd on the reclaimed name");
		EQ(ctrl(r, *cfdp, UBLK_U_CMD_DEL_DEV, (uint32_t)id, 0xffff,
			NULL, 0, 0), 0, "DEL_DEV");
		waitpid(pid2, NULL, 0);
		check_gone(id, &st2);
	}
	dev_end(&s);
}

static int scenario_kill(struct tr *r, int *cfdp, int id)
{
	interrupted(r, cfdp, id, BY_KILL);
	return 0;
}

static int scenario_del(struct tr *r, int *cfdp, int id)
{
	interrupted(r, cfdp, id, BY_DEL);
	return 0;
}

static int scenario_crash(struct tr *r, int *cfdp, int id)
{
	interrupted(r, cfdp, id, BY_CRASH);
	return 0;
}

/*
 * STOP_DEV while the server holds a read: the node goes and the reader
 * gets EIO at once; the read's COMMIT comes after the block node is torn
 * down, and uublkd must then answer it on the FUSE fd it kept open for
 * it (its log says so), not on a freed front (under ASan: no report)
 * nor on an fd number closed and reused; the driver still answers
 * DEL_DEV after.
 */
static int scenario_stopheld(struct tr *r, int *cfdp, int id)
{
	struct srv s = { 0 };
	struct pollfd pf;
	struct stat st;
	char node[32], line[512];
	int res_fd = -1, e = 0, status;
	bool logged = false;
	FILE *f;
	pid_t pid, rd;

	pid = dev_begin(r, *cfdp, id, 0, &s, &st);
	if (!pid)
		return 0;
	snprintf(node, sizeof(node), "/dev/ublkb%d", id);
	atomic_store(&s.st->hold, 1);
	rd = reader_fork(node, &res_fd);
	for (int k = 0; k < 500 && !atomic_load(&s.st->held); k++)
		usleep(10000);
	CHECK(atomic_load(&s.st->held) > 0, "the server holds a read");
	EQ(ctrl(r, *cfdp, UBLK_U_CMD_STOP_DEV, (uint32_t)id, 0xffff, NULL, 0,
		0), 0, "STOP_DEV with a read held by the server");
	pf = (struct pollfd){ .fd = res_fd, .events = POLLIN };
	CHECK(poll(&pf, 1, 10000) == 1 &&
		      read(res_fd, &e, sizeof(e)) == sizeof(e),
	      "the reader ended within 10 s of STOP_DEV");
	EQ(e, EIO, "the reader's error: EIO");
	kill(rd, SIGKILL);
	waitpid(rd, &status, 0);
	close(res_fd);
	atomic_store(&s.st->hold, 0); /* now the read's COMMIT */
	waitpid(pid, &status, 0);
	EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
	   "the server ended (ABORT) after its COMMIT");
	EQ(ctrl(r, *cfdp, UBLK_U_CMD_DEL_DEV, (uint32_t)id, 0xffff, NULL, 0,
		0), 0, "DEL_DEV after the held read's COMMIT");
	f = fopen(logpath, "r");
	while (f && fgets(line, sizeof(line), f))
		logged |= strstr(line, "still in the server") != NULL;
	if (f)
		fclose(f);
	CHECK(logged, "uublkd kept the torn-down front for the held read");
	check_gone(id, &st);
	dev_end(&s);
	return 0;
}

/*
 * DEL_DEV under a mounted ext4: it returns, the filesystem's next
 * synced write fails (EIO, not a hang), umount works, and then the loop
 * device (held by the mount until now) detaches.
 */
static int scenario_delmnt(struct tr *r, int *cfdp, int id)
{
	struct srv s = { 0 };
	char node[32], mnt[96];
	struct stat st;
	int status;
	double t0;
	pid_t pid;

	pid = dev_begin(r, *cfdp, id, 0, &s, &st);
	if (!pid)
		return 0;
	snprintf(node, sizeof(node), "/dev/ublkb%d", id);
	snprintf(mnt, sizeof(mnt), "%s/dmnt", tmpdir);
	mkdir(mnt, 0700);
	EQ(sh("mkfs.ext4 -q -F %s && mount -t ext4 %s %s && "
	      "head -c 100000 /dev/urandom > %s/a && sync",
	      node, node, mnt, mnt), 0, "mkfs, mount, a file");
	t0 = now_s();
	EQ(ctrl(r, *cfdp, UBLK_U_CMD_DEL_DEV, (uint32_t)id, 0xffff, NULL, 0,
		0), 0, "DEL_DEV with a mounted filesystem");
	waitpid(pid, &status, 0);
	CHECK(sh("timeout 20 dd if=/dev/zero of=%s/b bs=64k count=16 "
		 "conv=fsync status=none", mnt) == 1,
	      "a synced write after DEL_DEV fails (not a hang: 124)");
	EQ(sh("timeout 20 umount %s", mnt), 0, "umount after DEL_DEV");
	fprintf(stderr, "delmnt: DEL_DEV, failed write and umount in %.0f "
			"ms\n", (now_s() - t0) * 1e3);
	check_gone(id, &st);
	dev_end(&s);
	return 0;
}

/*
 * USER_RECOVERY with REISSUE under a mounted filesystem: the server is
 * killed while a file is written with fsync; the writer waits (the
 * device QUIESCED), a new server recovers the device, the writer ends,
 * and every file reads back after a remount.
 */
static int scenario_recover(struct tr *r, int *cfdp, int id)
{
	int cfd = *cfdp, status = -1, state = -1;
	struct srv s = { 0 };
	char node[32], mnt[96];
	unsigned int w1;
	double t0;
	struct stat st;
	pid_t p1, p2, wr;

	p1 = dev_begin(r, cfd, id,
		       UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_REISSUE, &s,
		       &st);
	if (!p1)
		return 0;
	snprintf(node, sizeof(node), "/dev/ublkb%d", id);
	snprintf(mnt, sizeof(mnt), "%s/rmnt", tmpdir);
	mkdir(mnt, 0700);
	EQ(sh("mkfs.ext4 -q -F %s && mount -t ext4 %s %s && "
	      "head -c 2000000 /dev/urandom > %s/a && sync && "
	      "(cd %s && sha256sum a) > %s/rsums",
	      node, node, mnt, mnt, mnt, tmpdir), 0, "mkfs, mount, a file");
	wr = fork();
	if (wr == 0)
		_exit(sh("dd if=/dev/urandom of=%s/c bs=64k count=256 "
			 "conv=fsync status=none", mnt));
	usleep(50000);
	kill(p1, SIGKILL);
	t0 = now_s();
	w1 = atomic_load(&s.st->ops[UBLK_IO_OP_WRITE]);
	waitpid(p1, NULL, 0);
	for (int k = 0; k < 500 && state != UBLK_S_DEV_QUIESCED; k++) {
		if (k)
			usleep(10000);
		state = dev_state(r, cfd, id);
	}
	EQ(state, UBLK_S_DEV_QUIESCED, "the server died: QUIESCED");
	CHECK(node_of(id, &(struct stat){ 0 }), "the node stays meanwhile");
	EQ(ctrl(r, cfd, UBLK_U_CMD_START_USER_RECOVERY, (uint32_t)id, 0xffff,
		NULL, 0, 0), 0, "START_USER_RECOVERY");
	p2 = server_fork(&s);
	EQ(ctrl(r, cfd, UBLK_U_CMD_END_USER_RECOVERY, (uint32_t)id, 0xffff,
		NULL, 0, (uint64_t)p2), 0, "END_USER_RECOVERY");
	waitpid(wr, &status, 0);
	EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
	   "the writer across the recovery");
	fprintf(stderr, "recover: the writer ended %.0f ms after the kill; "
			"writes served before the kill %u, after %u\n",
		(now_s() - t0) * 1e3, w1,
		atomic_load(&s.st->ops[UBLK_IO_OP_WRITE]) - w1);
	EQ(sh("(cd %s && sha256sum c) >> %s/rsums && umount %s && "
	      "mount -t ext4 -o ro %s %s && (cd %s && sha256sum -c --quiet "
	      "%s/rsums); rc=$?; umount %s; exit $rc",
	      mnt, tmpdir, mnt, node, mnt, mnt, tmpdir, mnt), 0,
	   "the files after the recovery and a remount");
	EQ(sh("fsck.ext4 -n -f %s >/dev/null 2>&1", node), 0, "fsck clean");
	EQ(ctrl(r, cfd, UBLK_U_CMD_DEL_DEV, (uint32_t)id, 0xffff, NULL, 0, 0),
	   0, "DEL_DEV");
	waitpid(p2, &status, 0);
	check_gone(id, &st);
	dev_end(&s);
	return 0;
}

/*
 * mkfs and fio's buffered writes from inside a memory cgroup of 48 MiB:
 * writeback through loop, FUSE and uublkd (outside the cgroup) under
 * reclaim must not hang.  cgroup v2's memory.max, or v1's limit.
 */
static int scenario_squeeze(struct tr *r, int *cfdp, int id)
{
	char cg[96], lim[128], ev[128], node[32], mnt[96], buf[256];
	struct srv s = { 0 };
	struct stat st;
	bool v2 = !access("/sys/fs/cgroup/cgroup.controllers", F_OK);
	int status;
	pid_t pid;
	FILE *f;

	snprintf(cg, sizeof(cg), "%s/uuring-ublkb-%d",
		 v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory",
		 (int)getpid());
	snprintf(lim, sizeof(lim), "%s/%s", cg,
		 v2 ? "memory.max" : "memory.limit_in_bytes");
	snprintf(ev, sizeof(ev), "%s/%s", cg,
		 v2 ? "memory.events" : "memory.failcnt");
	if (mkdir(cg, 0755) || sh("echo %u > %s", 48u << 20, lim)) {
		fprintf(stderr, "squeeze: no memory cgroup (%s): not run\n",
			cg);
		rmdir(cg);
		return 0;
	}
	pid = dev_begin(r, *cfdp, id, 0, &s, &st);
	if (!pid) {
		rmdir(cg);
		return 0;
	}
	snprintf(node, sizeof(node), "/dev/ublkb%d", id);
	snprintf(mnt, sizeof(mnt), "%s/smnt", tmpdir);
	mkdir(mnt, 0700);
	EQ(sh("timeout -k 5 90 sh -c 'echo $$ > %s/cgroup.procs && "
	      "mkfs.ext4 -q -F %s && mount -t ext4 %s %s && "
	      "fio --name=sq --directory=%s --size=96m --rw=write --bs=64k "
	      "--ioengine=psync --end_fsync=1 --verify=crc32c "
	      "--verify_fatal=1 --verify_state_save=0 --output=%s/fio3.log; "
	      "rc=$?; umount %s; exit $rc'",
	      cg, node, node, mnt, mnt, tmpdir, mnt), 0,
	   "mkfs + buffered fio in a 48 MiB memory cgroup, no hang");
	f = fopen(ev, "r");
	while (f && fgets(buf, sizeof(buf), f))
		if (!v2 || !strncmp(buf, "max ", 4))
			fprintf(stderr, "squeeze: %s %s", ev, buf);
	if (f)
		fclose(f);
	EQ(ctrl(r, *cfdp, UBLK_U_CMD_DEL_DEV, (uint32_t)id, 0xffff, NULL, 0,
		0), 0, "DEL_DEV");
	waitpid(pid, &status, 0);
	check_gone(id, &st);
	dev_end(&s);
	for (int k = 0; k < 100 && rmdir(cg) && errno == EBUSY; k++)
		usleep(10000);
	return 0;
}

static double fio_iops(const char *file, int qd)
{
	char cmd[512], out[4096];
	size_t n;
	FILE *f;
	char *p = out;

	snprintf(cmd, sizeof(cmd),
		 "fio --name=b --filename=%s --rw=randread --bs=4k --direct=1 "
		 "--size=64m --runtime=3 --time_based --ioengine=%s "
		 "--iodepth=%d --output-format=terse --terse-version=3",
		 file, qd > 1 ? "io_uring" : "psync", qd);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(out, 1, sizeof(out) - 1, f);
	pclose(f);
	out[n] = 0;
	/* terse v3: field 8 is the read IOPS */
	for (int k = 1; k < 8 && p; k++) {
		p = strchr(p, ';');
		if (p)
			p++;
	}
	return p ? atof(p) : -1;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * A measurement, run only when named ("bench"): 4 KiB random reads, QD1
 * (psync) and QD32 (the kernel's io_uring), on two /dev/ublkbN (the
 * memory target of this test's server, served by one thread, or by four
 * per-io daemons) and, as the ceiling, the kernel's direct I/O on a
 * 64 MiB file of the local filesystem (what a loop target's backing file
 * is); the six runs interleaved, UBLKB_BENCH_REPS rounds (default 5),
 * medians printed.
 */
static int scenario_bench(struct tr *r, int *cfdp, int id)
{
	static const char *const names[3] = { "ublkb, 1 daemon",
					       "ublkb, 4 per-io daemons",
					       "file, kernel dio" };
	const char *e = getenv("UBLKB_BENCH_REPS");
	int reps = e ? atoi(e) : 5;
	static const int qds[2] = { 1, 32 };
	double v[6][64];
	char path[3][96];
	struct srv s[2] = { { .daemons = 1 }, { .daemons = 4 } };
	struct stat st;
	pid_t pid[2];

	if (reps < 1 || reps > 64)
		reps = 5;
	for (int k = 0; k < 2; k++) {
		pid[k] = dev_begin(r, *cfdp, id + 50 * k, 0, &s[k], &st);
		if (!pid[k])
			return 0;
		snprintf(path[k], sizeof(path[k]), "/dev/ublkb%d", id + 50 * k);
	}
	snprintf(path[2], sizeof(path[2]), "%s/backing", tmpdir);
	sh("head -c 67108864 /dev/urandom > %s && sync", path[2]);
	for (int k = 0; k < reps; k++)
		for (int c = 0; c < 6; c++) {
			v[c][k] = fio_iops(path[c % 3], qds[c / 3]);
			fprintf(stderr, "bench round %d: %s QD%d %.0f IOPS\n", k,
				names[c % 3], qds[c / 3], v[c][k]);
		}
	for (int c = 0; c < 6; c++) {
		qsort(v[c], (size_t)reps, sizeof(double), cmp_d);
		fprintf(stderr, "bench: 4k randread QD%d, %s: median %.0f "
				"IOPS (min %.0f, max %.0f, %d runs)\n",
			qds[c / 3], names[c % 3], v[c][reps / 2], v[c][0],
			v[c][reps - 1], reps);
	}
	for (int k = 0; k < 2; k++) {
		EQ(ctrl(r, *cfdp, UBLK_U_CMD_DEL_DEV, (uint32_t)(id + 50 * k),
			0xffff, NULL, 0, 0), 0, "DEL_DEV");
		waitpid(pid[k], NULL, 0);
		dev_end(&s[k]);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(struct tr *r, int *cfdp, int id);
	} sc[] = {
		{ "fs", scenario_fs },
		{ "kill", scenario_kill },
		{ "del", scenario_del },
		{ "delmnt", scenario_delmnt },
		{ "stopheld", scenario_stopheld },
		{ "recover", scenario_recover },
		{ "crash", scenario_crash },
		{ "squeeze", scenario_squeeze },
		{ "bench", scenario_bench }, /* named only */
	};
	char name[64];
	struct tr r;
	int cfd, id = 100 + (int)(getpid() % 800);

	if (geteuid()) {
		fprintf(stderr, "SKIP: not root (mount, mknod, loop)\n");
		return 77;
	}
	if (access("/dev/fuse", R_OK | W_OK) ||
	    access("/dev/loop-control", R_OK | W_OK)) {
		fprintf(stderr, "SKIP: no /dev/fuse or /dev/loop-control\n");
		return 77;
	}
	snprintf(name, sizeof(name), "uuring-ublkd-test-%d", (int)getpid());
	setenv("UURING_UBLKD_NAME", name, 0);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/uuring-ublkb-%d",
		 (int)getpid());
	mkdir(tmpdir, 0700);
	snprintf(logpath, sizeof(logpath), "%s/uublkd.log", tmpdir);
	setenv("UURING_UBLKD_LOG", logpath, 1);
	setenv("UURING_UBLK_BLOCKDEV", "1", 1);
	cfd = uuring_ublk_open("/dev/ublk-control", O_RDWR);
	if (cfd < 0 || tr_init(&r, 8, IORING_SETUP_SQE128)) {
		fprintf(stderr, "FAIL: control ring\n");
		return 1;
	}
	for (size_t k = 0; k < sizeof(sc) / sizeof(sc[0]); k++) {
		bool run = argc < 2 && strcmp(sc[k].name, "bench");

		for (int a = 1; a < argc; a++)
			run |= !strcmp(argv[a], sc[k].name);
		if (!run)
			continue;
		fprintf(stderr, "scenario %s (device %d)\n", sc[k].name,
			id + (int)k);
		if (sc[k].fn(&r, &cfd, id + (int)k) == 77) {
			sh("rm -rf %s", tmpdir);
			return 77;
		}
	}
	tr_exit(&r);
	uuring_close(cfd);
	print_log();
	sh("rm -rf %s", tmpdir);
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	fprintf(stderr, "all passed\n");
	return 0;
}
