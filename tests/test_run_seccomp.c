// SPDX-License-Identifier: MIT
/*
 * The security point, shown (issue 5, item 6).  With uuring every io_uring
 * operation is an ordinary system call made by a thread of the process:
 *
 *   deny    a seccomp policy (installed with TSYNC, so for every thread)
 *           that denies pread64/preadv/preadv2 and openat with EPERM also
 *           denies IORING_OP_READ and IORING_OP_OPENAT under
 *           `uuring run --block-kernel-uring`: their CQEs carry -EPERM.
 *           Control, when the kernel's io_uring is usable here: the same
 *           program on the kernel's io_uring reads and opens anyway
 *           (io_uring bypasses seccomp).
 *   strace  `strace -f` of the program under uuring shows the system calls
 *           that serve its READ and OPENAT SQEs: pread64 (or the engine's
 *           non-blocking first try, preadv2 with RWF_NOWAIT) with the
 *           SQE's length and offset, and openat of the SQE's path.
 *           Skipped if strace is not installed.
 *
 *   caveat  the per-thread caveat (T9, docs/compatibility.md): a filter
 *           installed without TSYNC binds only the installing thread and
 *           its later children; an operation that uuring runs on an
 *           engine thread created before it (an io-wq worker) is checked
 *           against that thread's filter, not the submitter's.  Printed,
 *           not asserted (it depends on the engine's thread model).
 */
#include <liburing.h>

#include "run_util.h"

#define MARK_LEN 77
#define MARK_OFF 12345
#define MARK_PATH "/tmp/uuring-strace-marker"

static int deny_filter(bool tsync)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pread64, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_preadv, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_preadv2, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = { .len = 7, .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
			    tsync ? SECCOMP_FILTER_FLAG_TSYNC : 0, &prog);
}

/* One READ of fd, IOSQE_ASYNC or not: the CQE's res. */
static int read_once(struct io_uring *ring, int fd, bool async)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	char buf[64];
	int ret;

	io_uring_prep_read(sqe, fd, buf, sizeof(buf), 0);
	if (async)
		sqe->flags |= IOSQE_ASYNC;
	ret = io_uring_submit_and_wait(ring, 1);
	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	ret = io_uring_wait_cqe(ring, &cqe);
	if (ret)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

/* READ of fd and OPENAT of path through io_uring; results in res[2]. */
static int read_and_open(struct io_uring *ring, int fd, const char *path,
			 char *buf, size_t len, off_t off, int res[2])
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret;

	sqe = io_uring_get_sqe(ring);
	io_uring_prep_read(sqe, fd, buf, (unsigned int)len, (uint64_t)off);
	sqe->user_data = 0;
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_openat(sqe, AT_FDCWD, path, O_RDONLY, 0);
	sqe->user_data = 1;
	ret = io_uring_submit_and_wait(ring, 2);
	if (ret != 2)
		return ret < 0 ? ret : -EIO;
	for (int i = 0; i < 2; i++) {
		ret = io_uring_wait_cqe(ring, &cqe);
		if (ret)
			return ret;
		res[cqe->user_data & 1] = cqe->res;
		io_uring_cqe_seen(ring, cqe);
	}
	return 0;
}

static int make_file(const char *path, size_t size)
{
	char buf[4096];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return -1;
	memset(buf, 'x', sizeof(buf));
	for (size_t done = 0; done < size; done += sizeof(buf))
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return -1;
	return fd;
}

/* payload "deny" (argv[2]: "uuring" or "kernel", what is expected) */
static int payload_deny(bool on_uuring)
{
	struct io_uring ring;
	char buf[512];
	int fd, res[2] = { 1, 1 }, ret;

	fd = make_file(MARK_PATH ".deny", 64 * 1024);
	if (fd < 0)
		return 2;
	ret = io_uring_queue_init(8, &ring, 0);
	if (ret) {
		fprintf(stderr, "queue_init: %s\n", strerror(-ret));
		return 2;
	}
	/* an IOSQE_ASYNC read first, so that an engine worker exists */
	RU_CHECK(read_once(&ring, fd, true) == 64, "async read before");
	if (deny_filter(true)) {
		fprintf(stderr, "seccomp: %s\n", strerror(errno));
		return 2;
	}
	RU_CHECK(pread(fd, buf, 16, 0) < 0 && errno == EPERM,
		 "the filter does not deny pread64");
	ret = read_and_open(&ring, fd, MARK_PATH ".deny", buf, sizeof(buf), 0,
			    res);
	RU_CHECK(ret == 0, "io_uring: %d", ret);
	ret = read_once(&ring, fd, true);
	if (on_uuring) {
		RU_CHECK(ret == -EPERM, "uuring async READ: %d, want -EPERM",
			 ret);
		RU_CHECK(res[0] == -EPERM, "uuring READ: %d, want -EPERM",
			 res[0]);
		RU_CHECK(res[1] == -EPERM, "uuring OPENAT: %d, want -EPERM",
			 res[1]);
	} else {
		RU_CHECK(ret == 64,
			 "kernel async READ: %d (expected to bypass seccomp)",
			 ret);
		RU_CHECK(res[0] == (int)sizeof(buf),
			 "kernel READ: %d (expected to bypass seccomp)", res[0]);
		RU_CHECK(res[1] >= 0,
			 "kernel OPENAT: %d (expected to bypass seccomp)",
			 res[1]);
	}
	fprintf(stderr, "%s: READ under a pread64/preadv2-denying filter: "
		"%d (%s); OPENAT under an openat-denying filter: %d (%s)\n",
		on_uuring ? "uuring" : "kernel", res[0],
		res[0] < 0 ? strerror(-res[0]) : "bytes", res[1],
		res[1] < 0 ? strerror(-res[1]) : "an fd");
	unlink(MARK_PATH ".deny");
	return ru_failures ? 1 : 0;
}

/* payload "mark": one READ of MARK_LEN at MARK_OFF, one OPENAT */
/*
 * payload "caveat": the filter installed without TSYNC, after an engine
 * worker exists.  Informational: prints what escapes (T9), fails only if
 * the inline READ is not denied.
 */
static int payload_caveat(void)
{
	struct io_uring ring;
	int fd, inl, async;

	fd = make_file(MARK_PATH ".caveat", 4096);
	if (fd < 0 || io_uring_queue_init(8, &ring, 0))
		return 2;
	unlink(MARK_PATH ".caveat");
	if (read_once(&ring, fd, true) != 64)
		return 2;
	if (deny_filter(false))
		return 2;
	inl = read_once(&ring, fd, false);
	async = read_once(&ring, fd, true);
	fprintf(stderr, "per-thread caveat (T9): filter without TSYNC, "
		"installed after the engine started a worker: inline READ %d, "
		"IOSQE_ASYNC READ %d%s\n", inl, async,
		async >= 0 ? " (escapes: it ran on the older worker thread)" :
			     " (denied too)");
	RU_CHECK(inl == -EPERM, "inline READ: %d", inl);
	return ru_failures ? 1 : 0;
}

static int payload_mark(void)
{
	struct io_uring ring;
	char buf[MARK_LEN];
	int fd, res[2], ret;

	fd = make_file(MARK_PATH, 64 * 1024);
	if (fd < 0 || io_uring_queue_init(8, &ring, 0))
		return 2;
	ret = read_and_open(&ring, fd, MARK_PATH, buf, sizeof(buf), MARK_OFF,
			    res);
	if (ret || res[0] != MARK_LEN || res[1] < 0)
		return 1;
	unlink(MARK_PATH);
	return 0;
}

static bool kernel_uring_usable(void)
{
	struct io_uring ring;

	if (io_uring_queue_init(2, &ring, 0))
		return false;
	io_uring_queue_exit(&ring);
	return true;
}

static const char *find_strace(void)
{
	static const char *const paths[] = { "/usr/bin/strace",
					     "/bin/strace" };

	for (size_t i = 0; i < 2; i++)
		if (!access(paths[i], X_OK))
			return paths[i];
	return NULL;
}

int main(int argc, char **argv)
{
	char log[] = "/tmp/uuring-strace-XXXXXX", line[1024], want[64];
	char want_v[64];
	const char *strace;
	bool seen_pread = false, seen_open = false;
	int st, fd;
	FILE *f;

	if (argc > 2 && !strcmp(argv[1], "deny"))
		return payload_deny(!strcmp(argv[2], "uuring"));
	if (argc > 1 && !strcmp(argv[1], "mark"))
		return payload_mark();
	if (argc > 1 && !strcmp(argv[1], "caveat"))
		return payload_caveat();
	if (!ru_tool()) {
		fprintf(stderr, "skip: no usable uuring tool (not built, or a sanitizer build)\n");
		return RU_SKIP;
	}

	/* deny, under uuring */
	{
		const char *opts[] = { "--block-kernel-uring", NULL };
		const char *args[] = { ru_self_exe(), "deny", "uuring", NULL };

		st = ru_uuring_run(opts, args, 30);
		RU_CHECK(st == 0, "deny under uuring: status %d", st);
	}
	st = ru_payload("caveat", NULL, 30);
	RU_CHECK(st == 0, "caveat: status %d", st);
	/* the control: the kernel's io_uring bypasses the same filter */
	if (kernel_uring_usable()) {
		const char *args[] = { ru_self_exe(), "deny", "kernel", NULL };

		st = ru_run((char *const *)args, 30);
		RU_CHECK(st == 0, "deny on the kernel: status %d", st);
	} else {
		fprintf(stderr, "control not run: the kernel's io_uring is "
			"not usable here\n");
	}

	strace = find_strace();
	if (!strace) {
		fprintf(stderr, "strace part skipped: strace not installed\n");
		return ru_failures ? 1 : 0;
	}
	fd = mkstemp(log);
	if (fd < 0)
		return 2;
	close(fd);
	{
		const char *v[] = { strace, "-f", "-qq", "-e",
				    "trace=pread64,preadv,preadv2,openat",
				    "-o", log, ru_tool(), "run",
				    "--block-kernel-uring", "--",
				    ru_self_exe(), "mark", NULL };

		st = ru_run((char *const *)v, 60);
	}
	RU_CHECK(st == 0, "strace run: status %d", st);
	snprintf(want, sizeof(want), ", %d, %d)", MARK_LEN, MARK_OFF);
	snprintf(want_v, sizeof(want_v), "iov_len=%d}], 1, %d", MARK_LEN,
		 MARK_OFF);
	f = fopen(log, "r");
	while (f && fgets(line, sizeof(line), f)) {
		/* pread64(fd, buf, 77, 12345), or the engine's non-blocking
		 * first try preadv2(fd, [{..., iov_len=77}], 1, 12345, ...) */
		if ((strstr(line, "pread64(") && strstr(line, want)) ||
		    (strstr(line, "preadv") && strstr(line, want_v))) {
			seen_pread = true;
			fprintf(stderr, "strace: %s", line);
		}
		if (strstr(line, "openat(") && strstr(line, MARK_PATH "\"") &&
		    strstr(line, "O_RDONLY")) {
			seen_open = true;
			fprintf(stderr, "strace: %s", line);
		}
	}
	if (f)
		fclose(f);
	RU_CHECK(seen_pread, "strace -f shows no pread64/preadv2 of %d bytes "
		 "at %d", MARK_LEN, MARK_OFF);
	RU_CHECK(seen_open, "strace -f shows no openat of the OPENAT SQE");
	unlink(log);
	return ru_failures ? 1 : 0;
}
