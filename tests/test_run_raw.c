// SPDX-License-Identifier: MIT
/*
 * A program without liburing under `uuring run --block-kernel-uring`, in
 * two flavours of the same payload:
 *   raw   every io_uring_setup/enter/register, mmap, dup and close of the
 *         ring is a raw `syscall` instruction (like liburing, Go, Zig):
 *         served through the seccomp trap;
 *   libc  the same through libc's syscall(), mmap, dup and close (like
 *         fio, the Rust io-uring crate, libuv): served by the preload's
 *         interposers, and it must not trap at all.
 * The payload maps the SQ ring, the CQ ring and the SQEs separately (as
 * fio does; the CQ mapping must alias the SQ one, as in the kernel), runs
 * NOP, WRITE and READ with the data checked, a 50 ms EXT_ARG timed wait
 * that must time out, REGISTER_PROBE, and enters through a dup of the
 * ring fd after closing the original.
 */
#include <dlfcn.h>

#include "run_ring.h"

static int payload(void)
{
	unsigned long (*traps)(void) =
		(unsigned long (*)(void))dlsym(RTLD_DEFAULT,
					       "uuring_shim_traps");
	unsigned long traps0 = traps ? traps() : 0;
	char path[] = "/tmp/uuring-raw-XXXXXX", wbuf[512], rbuf[512];
	struct io_uring_getevents_arg ea;
	struct __kernel_timespec ts = { .tv_nsec = 50000000 };
	struct io_uring_probe *probe;
	struct io_uring_cqe cqe;
	struct io_uring_sqe *sqe;
	struct ring r;
	double t0, dt;
	int ret, fd, fd2;

	RU_CHECK(traps, "uuring_shim_traps not found: not under uuring run");
	ret = ring_init(&r, 8);
	if (ret) {
		fprintf(stderr, "ring_init: %s\n", strerror(-ret));
		return 2;
	}
	/* the CQ ring mapping aliases the SQ ring mapping (SINGLE_MMAP) */
	RU_CHECK(r.p.features & IORING_FEAT_SINGLE_MMAP, "no SINGLE_MMAP");

	sqe = get_sqe(&r);
	sqe->opcode = IORING_OP_NOP;
	sqe->user_data = 77;
	ret = enter(r.fd, 1, 1, 0, NULL, 0);
	RU_CHECK(ret == 1, "enter nop: %d", ret);
	RU_CHECK(!pop(&r, &cqe) && cqe.user_data == 77 && cqe.res == 0,
		 "nop cqe");
	RU_CHECK(*U32(r.sq, r.p.cq_off.tail) == 1,
		 "CQ tail not visible through the SQ ring mapping");

	fd = mkstemp(path);
	if (fd < 0)
		return 2;
	unlink(path);
	memset(wbuf, 'u', sizeof(wbuf));
	sqe = get_sqe(&r);
	sqe->opcode = IORING_OP_WRITE;
	sqe->fd = fd;
	sqe->addr = (uintptr_t)wbuf;
	sqe->len = sizeof(wbuf);
	sqe->flags = IOSQE_IO_LINK;
	sqe->user_data = 1;
	sqe = get_sqe(&r);
	sqe->opcode = IORING_OP_READ;
	sqe->fd = fd;
	sqe->addr = (uintptr_t)rbuf;
	sqe->len = sizeof(rbuf);
	sqe->user_data = 2;
	ret = enter(r.fd, 2, 2, 0, NULL, 0);
	RU_CHECK(ret == 2, "enter rw: %d", ret);
	for (int i = 1; i <= 2; i++)
		RU_CHECK(!pop(&r, &cqe) && (int)cqe.user_data == i &&
			 cqe.res == (int)sizeof(wbuf), "rw cqe %d: res %d", i,
			 cqe.res);
	RU_CHECK(!memcmp(wbuf, rbuf, sizeof(rbuf)), "data");
	close(fd);

	memset(&ea, 0, sizeof(ea));
	ea.ts = (uintptr_t)&ts;
	t0 = ru_now();
	ret = enter(r.fd, 0, 1, IORING_ENTER_EXT_ARG, &ea, sizeof(ea));
	dt = ru_now() - t0;
	RU_CHECK(ret == -ETIME, "timed wait: %d", ret);
	RU_CHECK(dt >= 0.045 && dt < 2.0, "timed wait took %.3f s", dt);

	probe = calloc(1, sizeof(*probe) + 256 * sizeof(probe->ops[0]));
	ret = (int)sys6(__NR_io_uring_register, r.fd, IORING_REGISTER_PROBE,
			(long)probe, 256, 0, 0);
	RU_CHECK(ret == 0 && probe->last_op >= IORING_OP_READ,
		 "probe: %d", ret);
	free(probe);

	/* enter through a dup after closing the original fd */
	fd2 = do_dup(r.fd);
	RU_CHECK(fd2 >= 0, "dup: %d", fd2);
	RU_CHECK(do_close(r.fd) == 0, "close");
	sqe = get_sqe(&r);
	sqe->opcode = IORING_OP_NOP;
	sqe->user_data = 78;
	ret = enter(fd2, 1, 1, 0, NULL, 0);
	RU_CHECK(ret == 1, "enter through the dup: %d", ret);
	RU_CHECK(!pop(&r, &cqe) && cqe.user_data == 78, "dup nop cqe");
	RU_CHECK(do_close(fd2) == 0, "close dup");
	ret = enter(fd2, 0, 0, 0, NULL, 0);
	RU_CHECK(ret == -EBADF, "enter after the last close: %d", ret);

	if (traps) {
		unsigned long n = traps() - traps0;

		if (use_raw)
			RU_CHECK(n >= 10, "raw payload trapped %lu times", n);
		else
			RU_CHECK(n == 0, "libc payload trapped %lu times", n);
	}
	return ru_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	int st;

	if (argc > 1 && (!strcmp(argv[1], "raw") || !strcmp(argv[1], "libc"))) {
		use_raw = !strcmp(argv[1], "raw");
		return payload();
	}
	if (!ru_tool()) {
		fprintf(stderr, "skip: no usable uuring tool (not built, or a sanitizer build)\n");
		return RU_SKIP;
	}
	st = ru_payload("raw", "--mode=auto", 30);
	if (st)
		ru_describe("raw", st);
	RU_CHECK(st == 0, "raw payload");
	st = ru_payload("libc", "--mode=auto", 30);
	if (st)
		ru_describe("libc", st);
	RU_CHECK(st == 0, "libc payload");
	return ru_failures ? 1 : 0;
}
