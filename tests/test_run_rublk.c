// SPDX-License-Identifier: MIT
/*
 * The Rust ublk server rublk (crates.io, on libublk), unmodified, under
 * `uuring run --mode=force --block-kernel-uring` against our ublk driver
 * (src/ublk/, docs/ublk.md): `features`, `add loop -r` and `add null`
 * (rublk daemonizes its server), `list` (which reads
 * /sys/class/ublk-char), the data, a SIGKILL of the loop server and
 * `recover`, `del -n` and `del -a`; and the loop target's data again with
 * AUTO_BUF_REG (`-z`), the null target with USER_COPY (`-u`).
 *
 * The data: where the driver made /dev/ublkbN (docs/ublk.md, the block
 * node) fio writes with crc32c verify through it and reads it back;
 * otherwise a payload of this binary under uuring run writes a pattern
 * through the preload's uuring_ublk_bdev_io and reads it back.  Either
 * way the loop target's backing file must then hold what was written
 * (read here with pread), and after the kill and recover the device must
 * read it back again.
 *
 * rublk is $RUBLK, or rublk on PATH, or ~/.cargo/bin/rublk; skipped
 * without one.  Get it with
 *   cargo install rublk --locked --no-default-features --root DIR
 * (Rust 1.80 or newer, libublk's rust-version) and set RUBLK=DIR/bin/rublk.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <sys/sysmacros.h>

#include "abi/ublk_abi.h"
#include "run_util.h"

/* device ids of this run: rublk keeps /run/ublksrvd/<id>.json, which
 * another driver's devices (another run of this test) would share */
static int loop_id, null_id, zc_id, uc_id;
static char loop_s[16], null_s[16], zc_s[16], uc_s[16];
#define FILE_BYTES (32u << 20)
#define DATA_BYTES (4u << 20) /* the part written and verified */
#define PIECE (64u << 10)

static char rublk[PATH_MAX];
static const char *const force_opts[] = { "--mode=force",
					  "--block-kernel-uring", NULL };

static bool find_rublk(void)
{
	const char *v = getenv("RUBLK"), *home = getenv("HOME");
	FILE *f;

	if (v && *v) {
		snprintf(rublk, sizeof(rublk), "%s", v);
		return !access(rublk, X_OK);
	}
	f = popen("command -v rublk 2>/dev/null", "r");
	if (f) {
		if (fgets(rublk, sizeof(rublk), f))
			rublk[strcspn(rublk, "\n")] = 0;
		pclose(f);
		if (rublk[0] == '/' && !access(rublk, X_OK))
			return true;
	}
	if (home) {
		snprintf(rublk, sizeof(rublk), "%s/.cargo/bin/rublk", home);
		if (!access(rublk, X_OK))
			return true;
	}
	return false;
}

/* rublk ARGS... under uuring run; its exit status (ru_run's form) */
static int rublk_argv(const char *const *a)
{
	const char *args[16] = { rublk };
	int n = 1;

	for (; *a && n < 15; a++)
		args[n++] = *a;
	args[n] = NULL;
	return ru_uuring_run(force_opts, args, 60);
}
#define rublk_run(...) rublk_argv((const char *const[]){ __VA_ARGS__, NULL })

/* rublk ARGS under uuring run with its output in out: the exit status */
static int rublk_out(const char *args, char *out, size_t len)
{
	char cmd[3 * PATH_MAX];
	size_t n = 0;
	FILE *f;
	int st;

	snprintf(cmd, sizeof(cmd),
		 "timeout -k 5 60 '%s' run --mode=force --block-kernel-uring "
		 "-- '%s' %s 2>&1",
		 ru_tool(), rublk, args);
	out[0] = 0;
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (n + 1 < len) {
		size_t r = fread(out + n, 1, len - 1 - n, f);

		if (!r)
			break;
		n += r;
	}
	out[n] = 0;
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* "daemon pid N ... state S" of `rublk list -n id`: the pid, or -1 */
static pid_t dev_state(int id, char *state, size_t len)
{
	char out[8192], args[32];
	const char *p;
	int pid;

	snprintf(args, sizeof(args), "list -n %d", id);
	state[0] = 0;
	if (rublk_out(args, out, sizeof(out)) || !(p = strstr(out, "daemon pid ")))
		return -1;
	pid = atoi(p + 11);
	p = strstr(p, "state ");
	if (p)
		snprintf(state, len, "%.*s", (int)strcspn(p + 6, " \n\t"), p + 6);
	return pid;
}

/* the pattern: a 64-bit word per 8 bytes, from its byte offset */
static uint64_t pat(uint64_t off, uint64_t seed)
{
	uint64_t x = (off + seed) * 0x9e3779b97f4a7c15ull;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 29);
}

static void fill(uint8_t *b, uint64_t off, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = pat(off + i, seed);

		memcpy(b + i, &v, 8);
	}
}

static bool same(const uint8_t *b, uint64_t off, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = pat(off + i, seed);

		if (memcmp(b + i, &v, 8))
			return false;
	}
	return true;
}

/*
 * Payload "io ID SEED WRITE": under uuring run, the device's first
 * DATA_BYTES through uuring_ublk_bdev_io (the in-process block side):
 * written with the pattern if WRITE, then read back and compared.
 */
static int payload_io(int id, uint64_t seed, bool write)
{
	int (*bdev_io)(int, int, void *, size_t, uint64_t) =
		(int (*)(int, int, void *, size_t, uint64_t))dlsym(
			RTLD_DEFAULT, "uuring_ublk_bdev_io");
	static uint8_t b[PIECE];
	int ret;

	RU_CHECK(bdev_io, "uuring_ublk_bdev_io in the preload");
	if (!bdev_io)
		return 1;
	for (uint64_t off = 0; write && off < DATA_BYTES; off += PIECE) {
		fill(b, off, PIECE, seed);
		ret = bdev_io(id, UBLK_IO_OP_WRITE, b, PIECE, off);
		RU_CHECK(ret == (int)PIECE, "write at %llu: %d",
			 (unsigned long long)off, ret);
		if (ret != (int)PIECE)
			return 1;
	}
	if (write)
		RU_CHECK(bdev_io(id, UBLK_IO_OP_FLUSH, NULL, 0, 0) == 0,
			 "flush");
	for (uint64_t off = 0; off < DATA_BYTES; off += PIECE) {
		memset(b, 0, PIECE);
		ret = bdev_io(id, UBLK_IO_OP_READ, b, PIECE, off);
		RU_CHECK(ret == (int)PIECE && same(b, off, PIECE, seed),
			 "read back at %llu: %d", (unsigned long long)off, ret);
		if (ret != (int)PIECE)
			return 1;
	}
	return ru_failures ? 1 : 0;
}

/* payload "null ID": the null target answers reads and writes */
static int payload_null(int id)
{
	int (*bdev_io)(int, int, void *, size_t, uint64_t) =
		(int (*)(int, int, void *, size_t, uint64_t))dlsym(
			RTLD_DEFAULT, "uuring_ublk_bdev_io");
	static uint8_t b[PIECE];

	if (!bdev_io)
		return 1;
	for (int k = 0; k < 16; k++) {
		RU_CHECK(bdev_io(id, UBLK_IO_OP_WRITE, b, PIECE,
				 (uint64_t)k * PIECE) == (int)PIECE,
			 "null write %d", k);
		RU_CHECK(bdev_io(id, UBLK_IO_OP_READ, b, PIECE,
				 (uint64_t)k * PIECE) == (int)PIECE,
			 "null read %d", k);
	}
	return ru_failures ? 1 : 0;
}

/* /dev/ublkbN, if it is this driver's node for the device (the
 * numbers `rublk list` prints from GET_PARAMS's devt) */
static bool have_node(int id, char *node, size_t len)
{
	char out[8192], args[32];
	unsigned int ma, mi;
	const char *p;
	struct stat st;

	snprintf(node, len, "/dev/ublkb%d", id);
	snprintf(args, sizeof(args), "list -n %d", id);
	if (stat(node, &st) || !S_ISBLK(st.st_mode) ||
	    rublk_out(args, out, sizeof(out)) ||
	    !(p = strstr(out, "ublkb: ")) ||
	    sscanf(p + 7, "%u:%u", &ma, &mi) != 2)
		return false;
	return ma == major(st.st_rdev) && mi == minor(st.st_rdev);
}

/* fio on the block node, outside uuring run (any program may use it):
 * the crc32c-headed random writes read back, or (verify_only, the same
 * offsets and seed) only read back; no local-*-verify.state file is left
 * in the working directory */
static int fio_node(const char *node, bool write)
{
	char size[32], fn[PATH_MAX];
	char *const wargs[] = { "/usr/bin/env", "fio", "--name=rublk",
		fn, "--rw=randwrite", "--bs=4k", "--direct=1",
		"--ioengine=psync", size, "--verify=crc32c",
		"--do_verify=1", "--verify_state_save=0", NULL };
	char *const rargs[] = { "/usr/bin/env", "fio", "--name=rublk",
		fn, "--rw=randwrite", "--bs=4k", "--direct=1",
		"--ioengine=psync", size, "--verify=crc32c",
		"--verify_only", "--verify_state_save=0", NULL };

	snprintf(fn, sizeof(fn), "--filename=%s", node);
	snprintf(size, sizeof(size), "--size=%u", DATA_BYTES);
	return ru_run(write ? wargs : rargs, 120);
}

/* the backing file holds the pattern (the in-process path's data) */
static bool file_holds(const char *path, uint64_t seed)
{
	static uint8_t b[PIECE];
	int fd = open(path, O_RDONLY);
	bool ok = fd >= 0;

	for (uint64_t off = 0; ok && off < DATA_BYTES; off += PIECE)
		ok = pread(fd, b, PIECE, (off_t)off) == (ssize_t)PIECE &&
		     same(b, off, PIECE, seed);
	if (fd >= 0)
		close(fd);
	return ok;
}

/* the data path: 0 on success */
static int check_data(const char *file, bool write, uint64_t seed)
{
	char node[32], ids[16], sd[32];
	const char *args[] = { ru_self_exe(), "io", ids, sd,
			       write ? "1" : "0", NULL };
	int st;

	if (have_node(loop_id, node, sizeof(node)) &&
	    !system("command -v fio >/dev/null 2>&1")) {
		st = fio_node(node, write);
		RU_CHECK(st == 0, "fio crc32c %s on %s: status %d",
			 write ? "write+verify" : "verify", node, st);
		return st;
	}
	if (write)
		fprintf(stderr, "no /dev/ublkb%d of this driver (or no fio): "
				"the in-process block side\n", loop_id);
	snprintf(ids, sizeof(ids), "%d", loop_id);
	snprintf(sd, sizeof(sd), "%llu", (unsigned long long)seed);
	st = ru_uuring_run(force_opts, args, 60);
	RU_CHECK(st == 0, "in-process %s through rublk's loop target: %d",
		 write ? "write+read" : "read", st);
	if (!st)
		RU_CHECK(file_holds(file, seed),
			 "the backing file holds what was written");
	return st;
}

static bool gone(pid_t pid)
{
	char path[64], line[512] = "";
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	ru_read_line(path, line, sizeof(line));
	p = strrchr(line, ')');
	return !line[0] || (p && (p[2] == 'Z' || p[2] == 'X'));
}

static bool wait_state(int id, const char *want)
{
	char state[32];

	for (int i = 0; i < 100; i++) {
		dev_state(id, state, sizeof(state));
		if (!strcmp(state, want))
			return true;
		usleep(50 * 1000);
	}
	return false;
}

static void scenario(const char *file)
{
	char out[16384], state[32], ids[16], want[32], want2[32];
	pid_t loop_pid, null_pid, new_pid;
	const char *nargs[] = { ru_self_exe(), "null", ids, NULL };
	uint64_t seed = (uint64_t)getpid();
	int st;

	st = rublk_out("features", out, sizeof(out));
	RU_CHECK(st == 0 && strstr(out, "USER_RECOVERY") &&
			 strstr(out, "CMD_IOCTL_ENCODE"),
		 "rublk features: %d\n%s", st, out);
	st = rublk_run("add", "loop", "-f", file, "-n", loop_s);
	RU_CHECK(st == 0, "rublk add loop: %d", st);
	st = rublk_run("add", "null", "-n", null_s, "-q", "2");
	RU_CHECK(st == 0, "rublk add null -q 2: %d", st);
	st = rublk_out("list", out, sizeof(out));
	snprintf(want, sizeof(want), "dev id %d:", loop_id);
	snprintf(want2, sizeof(want2), "dev id %d:", null_id);
	RU_CHECK(st == 0 && strstr(out, want) && strstr(out, want2),
		 "rublk list shows both devices: %d\n%s", st, out);
	loop_pid = dev_state(loop_id, state, sizeof(state));
	RU_CHECK(loop_pid > 0 && !strcmp(state, "LIVE"),
		 "loop device LIVE (%s), its server %d", state, (int)loop_pid);
	null_pid = dev_state(null_id, state, sizeof(state));
	RU_CHECK(null_pid > 0 && !strcmp(state, "LIVE"),
		 "null device LIVE (%s), its server %d", state, (int)null_pid);
	if (ru_failures)
		return;

	check_data(file, true, seed);
	snprintf(ids, sizeof(ids), "%d", null_id);
	RU_CHECK(ru_uuring_run(force_opts, nargs, 60) == 0,
		 "null target: reads and writes answered");
	if (ru_failures)
		return;

	/* the loop server dies; user recovery was not asked for, so the
	 * device is DEAD and recover must refuse ... */
	kill(loop_pid, SIGKILL);
	RU_CHECK(wait_state(loop_id, "DEAD"),
		 "the killed server's device is DEAD");
	st = rublk_run("del", "-n", loop_s);
	RU_CHECK(st == 0, "rublk del -n %d of the dead device: %d", loop_id, st);

	/* ... while a device added with -r is QUIESCED and recovered */
	st = rublk_run("add", "loop", "-f", file, "-n", loop_s, "-r");
	RU_CHECK(st == 0, "rublk add loop -r: %d", st);
	check_data(file, false, seed);
	loop_pid = dev_state(loop_id, state, sizeof(state));
	if (loop_pid > 0)
		kill(loop_pid, SIGKILL);
	RU_CHECK(loop_pid > 0 && wait_state(loop_id, "QUIESCED"),
		 "the killed -r server's device is QUIESCED");
	st = rublk_run("recover", "-n", loop_s);
	RU_CHECK(st == 0, "rublk recover -n %d: %d", loop_id, st);
	new_pid = dev_state(loop_id, state, sizeof(state));
	RU_CHECK(new_pid > 0 && new_pid != loop_pid && !strcmp(state, "LIVE"),
		 "recovered: LIVE (%s) with a new server %d", state,
		 (int)new_pid);
	if (!ru_failures)
		check_data(file, false, seed);

	st = rublk_run("del", "-n", loop_s);
	RU_CHECK(st == 0, "rublk del -n %d: %d", loop_id, st);

	/* the other copy modes: the loop target with -z (AUTO_BUF_REG: its
	 * buffer registered at dispatch, READ_FIXED/WRITE_FIXED on it), the
	 * null target with -u (USER_COPY; rublk's loop target refuses -u:
	 * "loop doesn't support user copy", as on ublk_drv) */
	if (!ru_failures) {
		st = rublk_run("add", "loop", "-f", file, "-n", zc_s, "-z");
		RU_CHECK(st == 0, "rublk add loop -z: %d", st);
		if (!st) {
			int keep = loop_id;

			loop_id = zc_id; /* check_data's device */
			check_data(file, true, seed + 1);
			loop_id = keep;
		}
		st = rublk_run("del", "-n", zc_s);
		RU_CHECK(st == 0, "rublk del -n %d (-z): %d", zc_id, st);
	}
	if (!ru_failures) {
		st = rublk_run("add", "null", "-n", uc_s, "-u");
		RU_CHECK(st == 0, "rublk add null -u: %d", st);
		snprintf(ids, sizeof(ids), "%d", uc_id);
		RU_CHECK(!st && ru_uuring_run(force_opts, nargs, 60) == 0,
			 "null target -u: reads and writes answered");
		st = rublk_run("del", "-n", uc_s);
		RU_CHECK(st == 0, "rublk del -n %d (-u): %d", uc_id, st);
	}
	st = rublk_run("del", "-a");
	RU_CHECK(st == 0, "rublk del -a: %d", st);
	st = rublk_out("list", out, sizeof(out));
	RU_CHECK(st == 0 && !strstr(out, "dev id"),
		 "rublk list is empty after del: %d\n%s", st, out);
	for (int i = 0; i < 100 && !(gone(new_pid) && gone(null_pid)); i++)
		usleep(50 * 1000);
	RU_CHECK(gone(new_pid) && gone(null_pid),
		 "the servers exit after del");
}

int main(int argc, char **argv)
{
	char name[64], file[] = "/tmp/uuring-rublk-XXXXXX";
	int fd;

	if (argc > 4 && !strcmp(argv[1], "io"))
		return payload_io(atoi(argv[2]), strtoull(argv[3], NULL, 10),
				  atoi(argv[4]));
	if (argc > 2 && !strcmp(argv[1], "null"))
		return payload_null(atoi(argv[2]));
	if (!ru_tool()) {
		fprintf(stderr, "skip: no usable uuring tool (not built, "
				"or a sanitizer build)\n");
		return RU_SKIP;
	}
	if (!find_rublk()) {
		fprintf(stderr,
			"skip: no rublk (set RUBLK, or put it on PATH; "
			"cargo install rublk --locked --no-default-features "
			"--root DIR, Rust >= 1.80)\n");
		return RU_SKIP;
	}
	fprintf(stderr, "rublk: %s\n", rublk);
	/* our driver even where the kernel has ublk_drv, and our own */
	setenv("UURING_UBLK", "force", 1);
	snprintf(name, sizeof(name), "uuring-ublkd-rublktest-%d", (int)getpid());
	setenv("UURING_UBLKD_NAME", name, 1);
	loop_id = 1000 + 2 * (int)(getpid() % 100000);
	null_id = loop_id + 1;
	/* the copy-mode devices take ids of their own, not a deleted one's
	 * (its block node may still be going) */
	zc_id = loop_id + 400000;
	uc_id = zc_id + 1;
	snprintf(loop_s, sizeof(loop_s), "%d", loop_id);
	snprintf(null_s, sizeof(null_s), "%d", null_id);
	snprintf(zc_s, sizeof(zc_s), "%d", zc_id);
	snprintf(uc_s, sizeof(uc_s), "%d", uc_id);
	fd = mkstemp(file);
	if (fd < 0 || ftruncate(fd, FILE_BYTES)) {
		fprintf(stderr, "backing file: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	scenario(file);
	if (ru_failures)
		rublk_run("del", "-a");
	unlink(file);
	if (ru_failures)
		return 1;
	fprintf(stderr, "all passed\n");
	return 0;
}
