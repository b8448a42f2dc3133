// SPDX-License-Identifier: MIT
/*
 * The null target of the block-queue model (src/dev/),
 * through the API and under `uuring run`; behaviour only, never timings:
 *
 *   - memory_backed=0: a read returns its full length and leaves the
 *     buffer untouched (the real file holds other bytes: serving it
 *     would show); memory_backed=1: reads return what was written, zeros
 *     where nothing was;
 *   - many requests (user_data each) beyond hw_queue_depth: every CQE
 *     exactly once, in-flight never above the depth (the device's
 *     inflight_max), every request dispatched and completed once;
 *   - FSYNC, fixed files, READV/WRITEV, READ_FIXED/WRITE_FIXED;
 *   - irqmode 0, 1, 2 on default, SQPOLL, DEFER_TASKRUN and COOP rings;
 *   - a block device's O_DIRECT rules: misaligned offset or length
 *     -EINVAL, a read at the end 0, one across it short, a write at the
 *     end -ENOSPC; route_nullb counted;
 *   - a bad UURING_NULLB: setup -EINVAL and one line on stderr naming the
 *     option; a bad uuring_nullb_config spec: -EINVAL and its line;
 *   - fio (randwrite + crc32c verify, memory_backed=1) under uuring run
 *     --block-kernel-uring with UURING_NULLB, its data read back from the
 *     model; without fio, a payload of this binary on raw io_uring calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_util.h"
#include "tcheck.h"
#include "tring.h"
#include "uuring.h"

#define BS 4096
#define DEV_SIZE (1u << 20)

static char path[64];
static char path2[64];

static const struct {
	const char *name;
	unsigned int flags;
} modes[] = {
	{ "default", 0 },
	{ "sqpoll", IORING_SETUP_SQPOLL },
	{ "defer", IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER },
	{ "coop", IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG },
};

/* a regular file holding 'R' bytes: what serving the real file would
 * return */
static int make_file(char *p, size_t len)
{
	char buf[4096];
	int fd;

	strcpy(p, "/var/tmp/uuring-nullb-XXXXXX");
	fd = mkstemp(p);
	if (fd < 0)
		return -1;
	memset(buf, 'R', sizeof(buf));
	for (size_t off = 0; off < len; off += sizeof(buf))
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return -1;
	close(fd);
	return 0;
}

static int config(const char *opts)
{
	char spec[256];

	snprintf(spec, sizeof(spec), "%s:size=%u,%s", path, DEV_SIZE, opts);
	return uuring_nullb_config(spec);
}

static int ring_init(struct tring *r, unsigned int flags)
{
	struct io_uring_params p;

	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	ret = tring_init_params(r, &backend_uuring, 64, &p);
	/* SQPOLL: enter wakes a sleeping SQ thread, as liburing does */
	if (!ret && (flags & IORING_SETUP_SQPOLL))
		r->mode_added = true;
	return ret;
}

/* submits what is queued and reaps want CQEs (5 s per wait) */
static unsigned int run(struct tring *r, struct tcqe *c, unsigned int want)
{
	int ret = tring_submit(r);

	if (ret < 0) {
		CHECK(0, "submit %d", ret);
		return 0;
	}
	return tring_reap_wait(r, c, want, 5000000000LL);
}

static int one(struct tring *r, int op, int fd, void *buf, unsigned int len,
	       uint64_t off, uint8_t sqe_flags)
{
	struct io_uring_sqe *sqe = tring_get_sqe(r);
	struct tcqe c;

	tring_prep_rw(sqe, op, fd, buf, len, off, 0x1234);
	sqe->flags = sqe_flags;
	if (run(r, &c, 1) != 1) {
		CHECK(0, "no CQE for op %d", op);
		return -9999;
	}
	CHECK(c.user_data == 0x1234, "user_data %llx",
	      (unsigned long long)c.user_data);
	return c.res;
}

static void get_stats(struct uuring_nullb_stats *st)
{
	int ret = uuring_nullb_stats(path, st, sizeof(*st));

	CHECK(ret == (int)sizeof(*st), "nullb_stats %d", ret);
}

/* memory_backed=0: full length, buffer untouched; FSYNC; fixed file */
static void no_data(const char *mode, unsigned int flags, int irq)
{
	unsigned char *buf = aligned_alloc(BS, BS);
	struct uuring_nullb_stats a, b;
	struct tring r;
	char opts[64];
	int fd, ret;

	snprintf(opts, sizeof(opts), "irqmode=%d", irq);
	CHECK(config(opts) == 0, "config %s", opts);
	fd = open(path, O_RDWR);
	ret = ring_init(&r, flags);
	CHECK(ret == 0, "%s setup %d", mode, ret);
	if (ret || fd < 0)
		goto out;
	get_stats(&a);
	memset(buf, 0xab, BS);
	ret = one(&r, IORING_OP_READ, fd, buf, BS, 8192, 0);
	CHECK(ret == BS, "%s irq%d read %d", mode, irq, ret);
	for (int i = 0; i < BS; i++)
		if (buf[i] != 0xab) {
			CHECK(0, "%s irq%d byte %d changed to %#x", mode, irq,
			      i, buf[i]);
			break;
		}
	ret = one(&r, IORING_OP_WRITE, fd, buf, BS, 0, 0);
	CHECK(ret == BS, "%s irq%d write %d", mode, irq, ret);
	ret = one(&r, IORING_OP_FSYNC, fd, NULL, 0, 0, 0);
	CHECK(ret == 0, "%s irq%d fsync %d", mode, irq, ret);
	ret = r.be->reg(r.fd, IORING_REGISTER_FILES, &fd, 1);
	CHECK(ret == 0, "register files %d", ret);
	ret = one(&r, IORING_OP_READ, 0, buf, BS, 4096, IOSQE_FIXED_FILE);
	CHECK(ret == BS, "%s irq%d fixed read %d", mode, irq, ret);
	CHECK(buf[0] == 0xab, "%s irq%d fixed read touched the buffer", mode,
	      irq);
	ret = one(&r, IORING_OP_FSYNC, 0, NULL, 0, 0, IOSQE_FIXED_FILE);
	CHECK(ret == 0, "%s irq%d fixed fsync %d", mode, irq, ret);
	get_stats(&b);
	CHECK(b.flushes - a.flushes == 2, "%s irq%d flushes %llu", mode, irq,
	      (unsigned long long)(b.flushes - a.flushes));
	CHECK(b.completed - a.completed == 5, "%s irq%d completed %llu", mode,
	      irq, (unsigned long long)(b.completed - a.completed));
	{
		struct uuring_stats st;

		ret = uuring_get_stats(r.fd, &st, sizeof(st));
		CHECK(ret == (int)sizeof(st) && st.route_nullb == 5,
		      "%s irq%d route_nullb %llu", mode, irq,
		      (unsigned long long)st.route_nullb);
	}
out:
	tring_exit(&r);
	if (fd >= 0)
		close(fd);
	free(buf);
}

/* memory_backed=1: what was written is read back, zeros elsewhere;
 * vectored and registered-buffer forms */
static void with_data(const char *mode, unsigned int flags, int irq)
{
	unsigned char *w = aligned_alloc(BS, 2 * BS), *rd = aligned_alloc(BS, 2 * BS);
	struct iovec iov[2];
	struct tring r;
	char opts[64];
	int fd, ret;

	snprintf(opts, sizeof(opts), "irqmode=%d,memory_backed=1,bs=512", irq);
	CHECK(config(opts) == 0, "config %s", opts);
	fd = open(path, O_RDWR);
	ret = ring_init(&r, flags);
	CHECK(ret == 0, "%s setup %d", mode, ret);
	if (ret || fd < 0)
		goto out;
	for (int i = 0; i < 2 * BS; i++)
		w[i] = (unsigned char)(i * 7 + irq);
	/* 512-byte aligned, across a page boundary */
	ret = one(&r, IORING_OP_WRITE, fd, w, 2 * BS, 3584, 0);
	CHECK(ret == 2 * BS, "%s irq%d write %d", mode, irq, ret);
	memset(rd, 0xee, 2 * BS);
	ret = one(&r, IORING_OP_READ, fd, rd, 2 * BS, 3584, 0);
	CHECK(ret == 2 * BS && !memcmp(rd, w, 2 * BS),
	      "%s irq%d read back %d", mode, irq, ret);
	/* never written: zeros */
	memset(rd, 0xee, BS);
	ret = one(&r, IORING_OP_READ, fd, rd, BS, 65536, 0);
	CHECK(ret == BS && rd[0] == 0 && rd[BS - 1] == 0,
	      "%s irq%d hole %d %#x", mode, irq, ret, rd[0]);
	/* READV of two halves */
	memset(rd, 0xee, 2 * BS);
	iov[0].iov_base = rd;
	iov[0].iov_len = 1024;
	iov[1].iov_base = rd + 1024;
	iov[1].iov_len = 2 * BS - 1024;
	ret = one(&r, IORING_OP_READV, fd, iov, 2, 3584, 0);
	CHECK(ret == 2 * BS && !memcmp(rd, w, 2 * BS), "%s irq%d readv %d",
	      mode, irq, ret);
	/* WRITEV then READ_FIXED from a registered buffer */
	iov[0].iov_base = w + BS;
	iov[0].iov_len = BS;
	ret = one(&r, IORING_OP_WRITEV, fd, iov, 1, 1 << 19, 0);
	CHECK(ret == BS, "%s irq%d writev %d", mode, irq, ret);
	{
		struct iovec reg = { rd, 2 * BS };

		ret = r.be->reg(r.fd, IORING_REGISTER_BUFFERS, &reg, 1);
		CHECK(ret == 0, "register buffers %d", ret);
		memset(rd, 0xee, 2 * BS);
		{
			struct io_uring_sqe *sqe = tring_get_sqe(&r);
			struct tcqe c;

			tring_prep_rw(sqe, IORING_OP_READ_FIXED, fd, rd, BS,
				      1 << 19, 7);
			sqe->buf_index = 0;
			ret = run(&r, &c, 1) == 1 ? c.res : -9999;
		}
		CHECK(ret == BS && !memcmp(rd, w + BS, BS),
		      "%s irq%d read_fixed %d", mode, irq, ret);
	}
	/* the real file was never written */
	{
		char b[16];

		CHECK(pread(fd, b, sizeof(b), 3584) == (ssize_t)sizeof(b) &&
		      b[0] == 'R', "%s irq%d the real file changed", mode, irq);
	}
out:
	tring_exit(&r);
	if (fd >= 0)
		close(fd);
	free(w);
	free(rd);
}

/* n reads at depth > hw_queue_depth: every CQE once, in-flight bounded */
static void many(const char *mode, unsigned int flags, int irq)
{
	enum { N = 300, DEPTH = 4 };
	static unsigned char seen[N];
	unsigned char *buf = aligned_alloc(512, 512);
	struct uuring_nullb_stats a, b;
	struct tcqe c[64];
	struct tring r;
	char opts[96];
	unsigned int sent = 0, got = 0;
	int fd, ret;

	snprintf(opts, sizeof(opts),
		 "irqmode=%d,hw_queue_depth=%d,completion_nsec=20000,"
		 "submit_queues=2", irq, DEPTH);
	CHECK(config(opts) == 0, "config %s", opts);
	fd = open(path, O_RDWR);
	ret = ring_init(&r, flags);
	CHECK(ret == 0, "%s setup %d", mode, ret);
	if (ret || fd < 0)
		goto out;
	get_stats(&a);
	memset(seen, 0, sizeof(seen));
	while (got < N) {
		unsigned int n;

		while (sent < N && sent - got < 48) {
			struct io_uring_sqe *sqe = tring_get_sqe(&r);

			if (!sqe)
				break;
			tring_prep_rw(sqe, IORING_OP_READ, fd, buf, 512,
				      (uint64_t)(sent % 2048) * 512, sent);
			sent++;
		}
		n = run(&r, c, 1);
		if (!n) {
			CHECK(0, "%s irq%d stalled at %u/%u", mode, irq, got,
			      N);
			break;
		}
		n += tring_reap(&r, c + n, 64 - n);
		for (unsigned int i = 0; i < n; i++) {
			uint64_t ud = c[i].user_data;

			CHECK(ud < N && !seen[ud], "%s irq%d user_data %llu "
			      "twice or unknown", mode, irq,
			      (unsigned long long)ud);
			CHECK(c[i].res == 512, "%s irq%d res %d", mode, irq,
			      c[i].res);
			if (ud < N)
				seen[ud] = 1;
		}
		got += n;
	}
	CHECK(tring_cq_ready(&r) == 0, "%s irq%d extra CQEs", mode, irq);
	get_stats(&b);
	CHECK(b.inflight_max <= DEPTH, "%s irq%d inflight_max %llu > %d", mode,
	      irq, (unsigned long long)b.inflight_max, DEPTH);
	CHECK(b.dispatched - a.dispatched == N && b.completed - a.completed == N,
	      "%s irq%d dispatched %llu completed %llu", mode, irq,
	      (unsigned long long)(b.dispatched - a.dispatched),
	      (unsigned long long)(b.completed - a.completed));
	CHECK(b.hw_queues == 2 || b.hw_queues == 1, "hw_queues %llu",
	      (unsigned long long)b.hw_queues);
out:
	tring_exit(&r);
	if (fd >= 0)
		close(fd);
	free(buf);
}

/* O_DIRECT rules of a block device */
static void bounds(void)
{
	unsigned char *buf = aligned_alloc(BS, 2 * BS);
	struct tring r;
	int fd, ret;

	CHECK(config("irqmode=1,bs=4096") == 0, "config");
	fd = open(path, O_RDWR);
	ret = ring_init(&r, 0);
	CHECK(ret == 0 && fd >= 0, "setup %d", ret);
	if (ret || fd < 0)
		goto out;
	ret = one(&r, IORING_OP_READ, fd, buf, BS, 512, 0);
	CHECK(ret == -EINVAL, "misaligned offset: %d", ret);
	ret = one(&r, IORING_OP_WRITE, fd, buf, 100, 0, 0);
	CHECK(ret == -EINVAL, "misaligned length: %d", ret);
	ret = one(&r, IORING_OP_READ, fd, buf, BS, DEV_SIZE, 0);
	CHECK(ret == 0, "read at the end: %d", ret);
	ret = one(&r, IORING_OP_READ, fd, buf, 2 * BS, DEV_SIZE - BS, 0);
	CHECK(ret == BS, "read across the end: %d", ret);
	ret = one(&r, IORING_OP_WRITE, fd, buf, BS, DEV_SIZE, 0);
	CHECK(ret == -ENOSPC, "write at the end: %d", ret);
	ret = one(&r, IORING_OP_WRITE, fd, buf, 2 * BS, DEV_SIZE - BS, 0);
	CHECK(ret == BS, "write across the end: %d", ret);
	/* another file is not served */
	{
		int fd2 = open(path2, O_RDONLY);

		buf[0] = 0;
		ret = one(&r, IORING_OP_READ, fd2, buf, 16, 0, 0);
		CHECK(ret == 16 && buf[0] == 'R', "other file: %d", ret);
		close(fd2);
	}
out:
	tring_exit(&r);
	if (fd >= 0)
		close(fd);
	free(buf);
}

/* reads a pipe to its end into buf */
static size_t slurp(int fd, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t k;

	while (n < size - 1 && (k = read(fd, buf + n, size - 1 - n)) > 0)
		n += (size_t)k;
	buf[n] = 0;
	return n;
}

static unsigned int lines(const char *s)
{
	unsigned int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* payload: a fresh process with UURING_NULLB set, so its first setup
 * reads it */
static int payload_badspec(void)
{
	struct io_uring_params p;
	int ret;

	memset(&p, 0, sizeof(p));
	ret = uuring_setup(8, &p);
	if (ret >= 0)
		return 1;
	return ret == -EINVAL ? 0 : 2;
}

static void bad_specs(void)
{
	static const char *const bad[] = { "bogus=1", "irqmode=3", "bs=1000",
					   "size=12345" };
	char out[1024], env[160];

	for (unsigned int i = 0; i < 4; i++) {
		int pfd[2], st;
		pid_t pid;

		snprintf(env, sizeof(env), "%s:%s", path, bad[i]);
		if (pipe(pfd))
			return;
		pid = fork();
		if (pid == 0) {
			dup2(pfd[1], 2);
			close(pfd[0]);
			setenv("UURING_NULLB", env, 1);
			execl(ru_self_exe(), ru_self_exe(), "badspec", NULL);
			_exit(127);
		}
		close(pfd[1]);
		slurp(pfd[0], out, sizeof(out));
		close(pfd[0]);
		waitpid(pid, &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "UURING_NULLB=%s: setup not refused (status %d)", env, st);
		CHECK(lines(out) == 1, "UURING_NULLB=%s: %u lines: %s", env,
		      lines(out), out);
		{
			char opt[32];

			snprintf(opt, sizeof(opt), "%.*s",
				 (int)(strchr(bad[i], '=') - bad[i]), bad[i]);
			CHECK(strstr(out, opt) != NULL,
			      "UURING_NULLB=%s: line does not name '%s': %s",
			      env, opt, out);
		}
	}
	/* a missing file; through the API, the old configuration stays */
	{
		int pfd[2], saved = dup(2), ret;
		struct uuring_nullb_stats st;

		CHECK(config("irqmode=1") == 0, "config");
		if (pipe(pfd))
			return;
		dup2(pfd[1], 2);
		ret = uuring_nullb_config("/var/tmp/uuring-nullb-none:irqmode=1");
		CHECK(ret == -EINVAL, "missing file: %d", ret);
		ret = uuring_nullb_config(path);
		CHECK(ret == 0, "plain path: %d", ret);
		ret = uuring_nullb_config("");
		CHECK(ret == 0, "empty spec: %d", ret);
		ret = uuring_nullb_stats(path, &st, sizeof(st));
		CHECK(ret == -ENOENT, "no device after an empty spec: %d", ret);
		ret = config("memory_backed=2");
		CHECK(ret == -EINVAL, "memory_backed=2: %d", ret);
		dup2(saved, 2);
		close(saved);
		close(pfd[1]);
		slurp(pfd[0], out, sizeof(out));
		close(pfd[0]);
		CHECK(lines(out) == 2 && strstr(out, "uuring-nullb-none") &&
		      strstr(out, "memory_backed"), "API lines: %s", out);
	}
}

/* payload under uuring run (no fio): raw io_uring calls on PATH */
static int payload_raw(const char *p)
{
	unsigned char buf[512];
	struct tring r;
	int fd = open(p, O_RDONLY), ret;

	if (fd < 0 || tring_init(&r, &backend_kernel, 8, 0))
		return 3;
	memset(buf, 0xab, sizeof(buf));
	ret = one(&r, IORING_OP_READ, fd, buf, sizeof(buf), 0, 0);
	tring_exit(&r);
	return ret == (int)sizeof(buf) && buf[0] == 0xab && !tcheck_failures ?
		       0 : 4;
}

static void under_run(void)
{
	char env[160], stats[96], line[4096];
	const char *tool = ru_tool();
	bool fio = !access("/usr/bin/fio", X_OK);
	FILE *f;
	long routed = -1;
	int st;

	if (!tool) {
		printf("skip under_run: no uuring tool (sanitizer build?)\n");
		return;
	}
	snprintf(stats, sizeof(stats), "%s.stats", path);
	unlink(stats);
	snprintf(env, sizeof(env), "%s:irqmode=2,memory_backed=1,size=%u",
		 path, DEV_SIZE);
	setenv("UURING_NULLB", env, 1);
	setenv("UURING_STATS", stats, 1);
	if (fio) {
		char fn[96];
		const char *opts[] = { "--block-kernel-uring", NULL };
		const char *args[] = { "/usr/bin/fio", "--name=nullb",
			"--ioengine=io_uring", "--rw=randwrite", "--bs=4k",
			"--size=1m", "--iodepth=16", "--direct=1",
			"--verify=crc32c", "--do_verify=1", "--verify_fatal=1",
			"--verify_state_save=0", fn, NULL };

		snprintf(fn, sizeof(fn), "--filename=%s", path);
		st = ru_uuring_run(opts, args, 120);
		CHECK(st == 0, "fio under uuring run: status %d", st);
	} else {
		const char *opts[] = { "--block-kernel-uring", NULL };
		const char *args[] = { ru_self_exe(), "raw", path, NULL };

		st = ru_uuring_run(opts, args, 60);
		CHECK(st == 0, "payload under uuring run: status %d", st);
	}
	unsetenv("UURING_NULLB");
	unsetenv("UURING_STATS");
	f = fopen(stats, "r");
	CHECK(f != NULL, "no UURING_STATS file");
	while (f && fgets(line, sizeof(line), f)) {
		char *s = strstr(line, "route_nullb=");

		if (s && atol(s + 12) > routed)
			routed = atol(s + 12);
	}
	if (f)
		fclose(f);
	CHECK(routed > 0, "route_nullb under uuring run: %ld", routed);
	unlink(stats);
	/* the real file was never written */
	{
		char b = 0;
		int fd = open(path, O_RDONLY);

		CHECK(fd >= 0 && pread(fd, &b, 1, 0) == 1 && b == 'R',
		      "fio wrote the real file");
		if (fd >= 0)
			close(fd);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "badspec"))
		return payload_badspec();
	if (argc > 2 && !strcmp(argv[1], "raw"))
		return payload_raw(argv[2]);
	if (make_file(path, DEV_SIZE) || make_file(path2, 4096)) {
		printf("cannot create files in /var/tmp\n");
		return 1;
	}
	for (unsigned int m = 0; m < sizeof(modes) / sizeof(modes[0]); m++)
		for (int irq = 0; irq <= 2; irq++) {
			no_data(modes[m].name, modes[m].flags, irq);
			with_data(modes[m].name, modes[m].flags, irq);
			many(modes[m].name, modes[m].flags, irq);
		}
	bounds();
	bad_specs();
	uuring_nullb_config(NULL);
	under_run();
	unlink(path);
	unlink(path2);
	if (tcheck_failures || ru_failures) {
		printf("%d failures\n", tcheck_failures + ru_failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
