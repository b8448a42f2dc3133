// SPDX-License-Identifier: MIT
/*
 * An ordinary liburing 2.3 program (Debian's, unmodified: it issues raw
 * `syscall` instructions for setup, enter, register, mmap and close) under
 * `uuring run --block-kernel-uring`: the kernel's io_uring answers EPERM,
 * the trap filter and uuring do the work.  Built twice, against liburing's
 * shared library (test_run_liburing_dyn) and its static archive
 * (test_run_liburing_static).
 *
 * The payload: queue_init (the ring fd must be uuring's: a socket in the
 * ring range), NOP, WRITE + FSYNC + READ of a temporary file with data
 * checked, a timed wait that must time out after ~50 ms, probe, a second
 * ring after the first was closed, and each mode: auto and force.
 * Negative control: the same payload with only the EPERM filter (no
 * uuring) must fail at queue_init with -EPERM.
 */
#include <liburing.h>
#include <sys/socket.h>

#include "run_util.h"

static int payload(void)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 50000000 };
	struct io_uring_probe *probe;
	char path[] = "/tmp/uuring-run-XXXXXX", wbuf[4096], rbuf[4096];
	struct stat st;
	double t0, dt;
	int ret, fd;

	ret = io_uring_queue_init(8, &ring, 0);
	if (ret) {
		fprintf(stderr, "queue_init: %s\n", strerror(-ret));
		return 2;
	}
	RU_CHECK(!fstat(ring.ring_fd, &st) && S_ISSOCK(st.st_mode),
		 "ring fd %d is not uuring's", ring.ring_fd);
	RU_CHECK(ring.ring_fd >= 64, "ring fd %d not moved to the ring range",
		 ring.ring_fd);

	/* NOP */
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->user_data = 0x1234;
	ret = io_uring_submit_and_wait(&ring, 1);
	RU_CHECK(ret == 1, "submit nop: %d", ret);
	ret = io_uring_peek_cqe(&ring, &cqe);
	RU_CHECK(!ret && cqe->user_data == 0x1234 && cqe->res == 0,
		 "nop cqe: ret %d", ret);
	if (!ret)
		io_uring_cqe_seen(&ring, cqe);

	/* WRITE, FSYNC, READ (linked) */
	fd = mkstemp(path);
	if (fd < 0)
		return 2;
	unlink(path);
	for (size_t i = 0; i < sizeof(wbuf); i++)
		wbuf[i] = (char)(i * 7 + 3);
	memset(rbuf, 0, sizeof(rbuf));
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write(sqe, fd, wbuf, sizeof(wbuf), 0);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 1;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_fsync(sqe, fd, 0);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 2;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, fd, rbuf, sizeof(rbuf), 0);
	sqe->user_data = 3;
	ret = io_uring_submit_and_wait(&ring, 3);
	RU_CHECK(ret == 3, "submit rw: %d", ret);
	for (int i = 0; i < 3; i++) {
		ret = io_uring_wait_cqe(&ring, &cqe);
		if (ret) {
			RU_CHECK(0, "wait rw: %d", ret);
			break;
		}
		RU_CHECK(cqe->res == (cqe->user_data == 2 ? 0 : 4096),
			 "op %llu res %d", (unsigned long long)cqe->user_data,
			 cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	RU_CHECK(!memcmp(wbuf, rbuf, sizeof(rbuf)), "data read back differs");
	close(fd);

	/* a timed wait with nothing in flight */
	t0 = ru_now();
	ret = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
	dt = ru_now() - t0;
	RU_CHECK(ret == -ETIME, "timed wait: %d", ret);
	/* at least the 50 ms (a timer never fires early); the upper bound
	 * only catches a wait that never times out, so it is far from
	 * anything a loaded machine can add (it was 2 s) */
	RU_CHECK(dt >= 0.045 && dt < 10.0, "timed wait took %.3f s", dt);

	probe = io_uring_get_probe_ring(&ring);
	RU_CHECK(probe && io_uring_opcode_supported(probe, IORING_OP_READ),
		 "probe");
	if (probe)
		io_uring_free_probe(probe);
	io_uring_queue_exit(&ring);

	/* a second ring, after the first one's fd was closed */
	ret = io_uring_queue_init(4, &ring, 0);
	RU_CHECK(!ret, "second queue_init: %d", ret);
	if (!ret) {
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_nop(sqe);
		ret = io_uring_submit_and_wait(&ring, 1);
		RU_CHECK(ret == 1, "second ring nop: %d", ret);
		io_uring_queue_exit(&ring);
	}
	return ru_failures ? 1 : 0;
}

/* The payload with the kernel's io_uring blocked and no uuring. */
static int blocked_only(void)
{
	struct io_uring ring;
	int ret = io_uring_queue_init(8, &ring, 0);

	if (!ret) {
		io_uring_queue_exit(&ring);
		return 1;
	}
	return ret == -EPERM ? 0 : 3;
}

int main(int argc, char **argv)
{
	int st;

	if (argc > 1 && !strcmp(argv[1], "payload"))
		return payload();
	if (argc > 1 && !strcmp(argv[1], "blocked"))
		return blocked_only();
	if (!ru_tool()) {
		fprintf(stderr, "skip: no usable uuring tool (not built, or a sanitizer build)\n");
		return RU_SKIP;
	}
	/* control: the EPERM filter alone, no uuring */
	{
		const char *args[] = { ru_self_exe(), "blocked", NULL };

		st = ru_run_ex((char *const *)args, 30, true);
	}
	RU_CHECK(st == 0, "control: io_uring was not blocked (status %d)", st);

	st = ru_payload("payload", "--mode=auto", 30);
	if (st)
		ru_describe("auto", st);
	RU_CHECK(st == 0, "payload under --mode=auto");
	st = ru_payload("payload", "--mode=force", 30);
	if (st)
		ru_describe("force", st);
	RU_CHECK(st == 0, "payload under --mode=force");
	return ru_failures ? 1 : 0;
}
