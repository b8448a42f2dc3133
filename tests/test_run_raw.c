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
 *
 * patch: the trap-once-then-call patching of io_uring_enter sites
 * (src/shim/patch.c).  Three copies of liburing's `mov $426, %eax;
 * syscall`, placed so that each of the three ways of storing the jump is
 * used (within an 8-byte word, within a 16-byte block, across a 16-byte
 * boundary).  Each is called repeatedly with every general-purpose
 * register but rax/rcx/r11, the flags and ymm0-15 loaded with patterns:
 * the result must be right and every one of them intact after each call,
 * patched or not, and each site must trap once and then not at all.
 * With UURING_PATCH=0 nothing is patched and every call traps.
 *
 * readiness: libuv's use of its SQPOLL ring, through libc (the preload's
 * interposers): the ring fd sits in an epoll set; a NOP makes it readable;
 * the CQ is reaped in shared memory without an enter, and then epoll and
 * poll must say "not readable", as the kernel's do (else libuv's loop
 * spins); a second NOP makes it readable again.  Run on the kernel's
 * io_uring (no uuring) and under uuring run: the same checks pass on both.
 *
 * edge, splice: an async runtime's patterns (see payload_edge and
 * payload_splice), on the kernel's io_uring and under uuring run.
 *
 * scm: a ring fd in SCM_RIGHTS is refused with EINVAL (6.18's
 * scm_fp_copy), through sendmsg and as the second message of a sendmmsg
 * (the first is sent: the call returns 1); an ordinary fd passes.  Run on
 * the kernel's io_uring and under uuring run (the preload's sendmsg and
 * sendmmsg): the same checks pass on both.
 */
#include <dlfcn.h>
#include <poll.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "run_ring.h"

/*
 * struct regs: in[0..11] = rdi rbx rbp r12 r13 r14 r15 rsi rdx r10 r8 r9;
 * out[] the same after the call, out[12] = rax, out[13] = rflags;
 * yin/yout: ymm0-15.
 */
struct regs {
	uint64_t in[16];
	uint64_t out[16];
	unsigned char yin[16][32];
	unsigned char yout[16][32];
};

#define Y(op, i) #op " " #i "*32+256(%rdi), %ymm" #i "\n"
#define YS(i) "vmovdqu %ymm" #i ", " #i "*32+768(%rdi)\n"
#define SITE_FN(name, skip, mid)                                             \
	__asm__(".text\n.p2align 4\n" #name ":\n"                           \
		"push %rbx\npush %rbp\npush %r12\npush %r13\npush %r14\n"     \
		"push %r15\npush %rdi\n"                                     \
		Y(vmovdqu, 0) Y(vmovdqu, 1) Y(vmovdqu, 2) Y(vmovdqu, 3)        \
		Y(vmovdqu, 4) Y(vmovdqu, 5) Y(vmovdqu, 6) Y(vmovdqu, 7)        \
		Y(vmovdqu, 8) Y(vmovdqu, 9) Y(vmovdqu, 10) Y(vmovdqu, 11)      \
		Y(vmovdqu, 12) Y(vmovdqu, 13) Y(vmovdqu, 14) Y(vmovdqu, 15)    \
		"mov 8(%rdi), %rbx\nmov 16(%rdi), %rbp\nmov 24(%rdi), %r12\n" \
		"mov 32(%rdi), %r13\nmov 40(%rdi), %r14\n"                    \
		"mov 48(%rdi), %r15\nmov 56(%rdi), %rsi\n"                    \
		"mov 64(%rdi), %rdx\nmov 72(%rdi), %r10\n"                    \
		"mov 80(%rdi), %r8\nmov 88(%rdi), %r9\nmov 0(%rdi), %rdi\n"   \
		"xor %eax, %eax\n" /* ZF=1, CF=0 */                           \
		"jmp 1f\n.p2align 4\n.skip " #skip ", 0x90\n1:\n"             \
		"mov $0x1aa, %eax\n" mid "syscall\n"                          \
		"pushfq\npush %rdi\nmov 16(%rsp), %rdi\n"                     \
		"mov %rbx, 136(%rdi)\nmov %rbp, 144(%rdi)\n"                  \
		"mov %r12, 152(%rdi)\nmov %r13, 160(%rdi)\n"                  \
		"mov %r14, 168(%rdi)\nmov %r15, 176(%rdi)\n"                  \
		"mov %rsi, 184(%rdi)\nmov %rdx, 192(%rdi)\n"                  \
		"mov %r10, 200(%rdi)\nmov %r8, 208(%rdi)\n"                   \
		"mov %r9, 216(%rdi)\nmov %rax, 224(%rdi)\n"                   \
		"pop %rax\nmov %rax, 128(%rdi)\npop %rax\nmov %rax, 232(%rdi)\n" \
		YS(0) YS(1) YS(2) YS(3) YS(4) YS(5) YS(6) YS(7) YS(8) YS(9)    \
		YS(10) YS(11) YS(12) YS(13) YS(14) YS(15)                      \
		"vzeroupper\npop %rax\nmov 224(%rdi), %rax\n"                 \
		"pop %r15\npop %r14\npop %r13\npop %r12\npop %rbp\npop %rbx\n" \
		"ret\n");                                                     \
	long name(struct regs *r)

/* mov at offset 0 (one 8-byte store), 6 (a 16-byte store), 13 (across) */
SITE_FN(site_w8, 0, "");
SITE_FN(site_w16, 6, "");
SITE_FN(site_x16, 13, "");
/* the compiler's `xor %edx,%edx` between mov and syscall (liburing) */
SITE_FN(site_xor, 0, "xor %edx, %edx\n");

static int check_site(long (*fn)(struct regs *), const char *name, int fd)
{
	struct regs r;
	long ret;

	memset(&r, 0, sizeof(r));
	r.in[0] = (uint64_t)fd; /* rdi: io_uring_enter(fd, 0, 0, 0, 0, 0) */
	for (int i = 1; i < 7; i++) /* callee-saved: patterns */
		r.in[i] = 0x1111111111111111ull * (uint64_t)i;
	/* rsi rdx r10 r8 r9: zero arguments, but their upper halves? no:
	 * a syscall argument is the full register, keep them zero */
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 32; j++)
			r.yin[i][j] = (unsigned char)(i * 32 + j + 1);
	ret = fn(&r);
	if (ret != 0) {
		RU_CHECK(0, "%s: enter returned %ld", name, ret);
		return 1;
	}
	for (int i = 0; i < 12; i++)
		RU_CHECK(r.out[i] == r.in[i], "%s: register %d: %#llx, want %#llx",
			 name, i, (unsigned long long)r.out[i],
			 (unsigned long long)r.in[i]);
	RU_CHECK(r.out[13] & 0x40, "%s: ZF lost (rflags %#llx)", name,
		 (unsigned long long)r.out[13]);
	RU_CHECK(!memcmp(r.yin, r.yout, sizeof(r.yin)), "%s: ymm changed",
		 name);
	return 0;
}

/*
 * The AVX-512 register file and MXCSR across a patched site: zmm0-31 and
 * k1-k7 loaded with patterns and MXCSR set to round-toward-zero, then an
 * enter that submits and reaps a NOP (SQE copies, completion: the engine's
 * string functions use zmm16-31 on such CPUs).  Layout of struct zregs is
 * fixed by the asm below.
 */
struct zregs {
	uint64_t fd;		/* 0 */
	uint32_t mxcsr_in;	/* 8 */
	uint32_t mxcsr_out;	/* 12 */
	uint64_t pad[6];
	uint64_t kin[8];	/* 64 */
	uint64_t kout[8];	/* 128 */
	uint64_t pad2[8];
	unsigned char zin[32][64];	/* 256 */
	unsigned char zout[32][64];	/* 2304 */
} __attribute__((aligned(64)));

#define ZL(i) "vmovdqu64 " #i "*64+256(%rdi), %zmm" #i "\n"
#define ZS(i) "vmovdqu64 %zmm" #i ", " #i "*64+2304(%rdi)\n"
#define KL(i) "kmovq " #i "*8+64(%rdi), %k" #i "\n"
#define KS(i) "kmovq %k" #i ", " #i "*8+128(%rdi)\n"
__asm__(".text\n.p2align 4\nsite_zmm:\n"
	"push %rdi\n"
	ZL(0) ZL(1) ZL(2) ZL(3) ZL(4) ZL(5) ZL(6) ZL(7) ZL(8) ZL(9) ZL(10)
	ZL(11) ZL(12) ZL(13) ZL(14) ZL(15) ZL(16) ZL(17) ZL(18) ZL(19) ZL(20)
	ZL(21) ZL(22) ZL(23) ZL(24) ZL(25) ZL(26) ZL(27) ZL(28) ZL(29) ZL(30)
	ZL(31) KL(1) KL(2) KL(3) KL(4) KL(5) KL(6) KL(7)
	"ldmxcsr 8(%rdi)\n"
	/* io_uring_enter(fd, 1, 1, GETEVENTS, NULL, 0) */
	"mov 0(%rdi), %rdi\nmov $1, %esi\nmov $1, %edx\nmov $1, %r10d\n"
	"xor %r8d, %r8d\nxor %r9d, %r9d\n"
	"mov $0x1aa, %eax\nsyscall\n"
	"mov (%rsp), %rdi\n"
	"stmxcsr 12(%rdi)\n"
	ZS(0) ZS(1) ZS(2) ZS(3) ZS(4) ZS(5) ZS(6) ZS(7) ZS(8) ZS(9) ZS(10)
	ZS(11) ZS(12) ZS(13) ZS(14) ZS(15) ZS(16) ZS(17) ZS(18) ZS(19) ZS(20)
	ZS(21) ZS(22) ZS(23) ZS(24) ZS(25) ZS(26) ZS(27) ZS(28) ZS(29) ZS(30)
	ZS(31) KS(1) KS(2) KS(3) KS(4) KS(5) KS(6) KS(7)
	"movl $0x1f80, -4(%rsp)\nldmxcsr -4(%rsp)\n"
	"vzeroupper\npop %rdi\nret\n");
long site_zmm(struct zregs *z);

static void check_zmm_site(struct ring *r)
{
	static struct zregs z;
	struct io_uring_cqe cqe;
	long ret;

	memset(&z, 0, sizeof(z));
	z.fd = (uint64_t)r->fd;
	z.mxcsr_in = 0x1f80 | 0x6000; /* all masked, round toward zero */
	for (int i = 1; i < 8; i++)
		z.kin[i] = 0x0101010101010101ull * (uint64_t)(i + 1);
	for (int i = 0; i < 32; i++)
		for (int j = 0; j < 64; j++)
			z.zin[i][j] = (unsigned char)(i * 64 + j + 3);
	get_sqe(r)->opcode = IORING_OP_NOP;
	ret = site_zmm(&z);
	RU_CHECK(ret == 1, "zmm site: enter returned %ld", ret);
	RU_CHECK(!pop(r, &cqe) && cqe.res == 0, "zmm site: no NOP CQE");
	RU_CHECK(z.mxcsr_out == z.mxcsr_in, "zmm site: MXCSR %#x, want %#x",
		 z.mxcsr_out, z.mxcsr_in);
	for (int i = 1; i < 8; i++)
		RU_CHECK(z.kout[i] == z.kin[i], "zmm site: k%d changed", i);
	for (int i = 0; i < 32; i++)
		RU_CHECK(!memcmp(z.zin[i], z.zout[i], 64),
			 "zmm site: zmm%d changed", i);
}

static int payload_patch(bool expect_patching)
{
	unsigned long (*traps)(void) =
		(unsigned long (*)(void))dlsym(RTLD_DEFAULT,
					       "uuring_shim_traps");
	unsigned long (*patched)(void) =
		(unsigned long (*)(void))dlsym(RTLD_DEFAULT,
					       "uuring_shim_patched");
	static const struct {
		long (*fn)(struct regs *);
		const char *name;
	} sites[] = {
		{ site_w8, "word" }, { site_w16, "block" },
		{ site_x16, "across" }, { site_xor, "xor between" },
	};
	const unsigned long nsites = sizeof(sites) / sizeof(sites[0]);
	unsigned long t0, p0, dt, dp;
	struct ring r;

	if (!traps || !patched) {
		fprintf(stderr, "not under uuring run\n");
		return 2;
	}
	if (!__builtin_cpu_supports("avx")) {
		fprintf(stderr, "skip: no AVX for the register check\n");
		return 0;
	}
	if (ring_init(&r, 4))
		return 2;
	t0 = traps();
	p0 = patched();
	for (int k = 0; k < 5; k++)
		for (size_t i = 0; i < nsites; i++)
			check_site(sites[i].fn, sites[i].name, r.fd);
	dt = traps() - t0;
	dp = patched() - p0;
	fprintf(stderr, "patch: %lu calls from %lu sites: %lu traps, %lu "
		"sites patched\n", 5 * nsites, nsites, dt, dp);
	if (expect_patching) {
		/* all but "across" may need SYNC_CORE membarrier */
		RU_CHECK(dp >= nsites - 1, "only %lu of %lu sites patched", dp,
			 nsites);
		RU_CHECK(dt == nsites + (nsites - dp) * 4, "%lu traps", dt);
	} else {
		RU_CHECK(dp == 0 && dt == 5 * nsites, "UURING_PATCH=0: %lu "
			 "patched, %lu traps", dp, dt);
	}
	if (__builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw")) {
		/* the first call traps (and patches), the others call */
		p0 = patched();
		for (int k = 0; k < 5; k++)
			check_zmm_site(&r);
		fprintf(stderr, "patch: zmm site %s\n",
			patched() > p0 ? "patched" : "trapping");
		if (expect_patching)
			RU_CHECK(patched() - p0 == 1, "zmm site not patched");
	} else {
		fprintf(stderr, "patch: no AVX-512BW, zmm site not checked\n");
	}
	return ru_failures ? 1 : 0;
}

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
	/* at least the 50 ms (a timer never fires early); the upper bound
	 * only catches a wait that never times out, so it is far from
	 * anything a loaded machine can add (it was 2 s) */
	RU_CHECK(dt >= 0.045 && dt < 10.0, "timed wait took %.3f s", dt);

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

/* One NOP through the SQPOLL thread (woken if it sleeps), no wait. */
static int sqpoll_nop(struct ring *r, uint64_t ud)
{
	struct io_uring_sqe *sqe = get_sqe(r);
	uint32_t fl;

	sqe->opcode = IORING_OP_NOP;
	sqe->user_data = ud;
	/* the tail store above, then the flags load: full fence (liburing's
	 * io_uring_smp_mb in sq_ring_needs_enter) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	fl = __atomic_load_n((uint32_t *)(r->sq + r->p.sq_off.flags),
			     __ATOMIC_RELAXED);
	if (fl & IORING_SQ_NEED_WAKEUP)
		return enter(r->fd, 0, 0, IORING_ENTER_SQ_WAKEUP, NULL, 0);
	return 0;
}

static int ring_readable(int epfd, int ringfd, int timeout_ms)
{
	struct epoll_event ev[4];
	struct pollfd pfd = { .fd = ringfd, .events = POLLIN };
	int n = epoll_wait(epfd, ev, 4, timeout_ms);
	int p = poll(&pfd, 1, 0);

	if (n < 0 || p < 0)
		return -1;
	/* epoll and poll must agree */
	if ((n == 1 && ev[0].data.fd == ringfd) != (p == 1 &&
						     (pfd.revents & POLLIN)))
		return -2;
	return n == 1;
}

static int payload_readiness(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct io_uring_cqe cqe;
	struct ring r;
	int epfd, ret;

	use_raw = false;
	ret = ring_init_flags(&r, 8, IORING_SETUP_SQPOLL);
	if (ret) {
		fprintf(stderr, "ring_init: %s\n", strerror(-ret));
		return 2;
	}
	epfd = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = r.fd;
	RU_CHECK(!epoll_ctl(epfd, EPOLL_CTL_ADD, r.fd, &ev), "epoll_ctl: %s",
		 strerror(errno));
	RU_CHECK(ring_readable(epfd, r.fd, 0) == 0, "readable before any CQE");
	for (int round = 0; round < 3; round++) {
		RU_CHECK(sqpoll_nop(&r, 100 + round) >= 0, "submit");
		ret = ring_readable(epfd, r.fd, 5000);
		RU_CHECK(ret == 1, "round %d: not readable with a CQE (%d)",
			 round, ret);
		RU_CHECK(!pop(&r, &cqe) && cqe.user_data == 100u + round,
			 "round %d: cqe", round);
		/* reaped in memory, no enter: the fd must not stay readable */
		ret = ring_readable(epfd, r.fd, 0);
		RU_CHECK(ret == 0, "round %d: readable with an empty CQ (%d)",
			 round, ret);
		ret = ring_readable(epfd, r.fd, 20);
		RU_CHECK(ret == 0, "round %d: readable again (%d)", round,
			 ret);
	}
	close(epfd);
	close(r.fd);
	return ru_failures ? 1 : 0;
}

/*
 * edge: an async runtime's use of its ring (tokio, Node's libuv): the
 * ring fd in an epoll set with EPOLLIN|EPOLLET, each NOP submitted with
 * an enter that does not wait, the runtime waits in epoll_wait and reaps
 * the CQ in memory.  The kernel wakes the ring's poll waiters on every
 * CQ post, so every round is a new edge although the fd never became
 * unreadable in between (no enter ran with an empty CQ).  uuring used to
 * give one edge and then none: the runtime hung.
 */
static int payload_edge(void)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET }, out[4];
	struct io_uring_cqe cqe;
	struct ring r;
	int epfd, ret;

	use_raw = false;
	ret = ring_init_flags(&r, 8, 0);
	if (ret) {
		fprintf(stderr, "ring_init: %s\n", strerror(-ret));
		return 2;
	}
	epfd = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = r.fd;
	RU_CHECK(!epoll_ctl(epfd, EPOLL_CTL_ADD, r.fd, &ev), "epoll_ctl: %s",
		 strerror(errno));
	for (int round = 0; round < 5; round++) {
		struct io_uring_sqe *sqe = get_sqe(&r);

		sqe->opcode = IORING_OP_NOP;
		sqe->user_data = 200 + (uint64_t)round;
		RU_CHECK(enter(r.fd, 1, 0, 0, NULL, 0) == 1, "round %d: submit",
			 round);
		/* 10 s: a hang guard; the edge is there at once */
		ret = epoll_wait(epfd, out, 4, 10000);
		RU_CHECK(ret == 1, "round %d: no edge for a new CQE (%d)",
			 round, ret);
		RU_CHECK(!pop(&r, &cqe) && cqe.user_data == 200u + round,
			 "round %d: cqe", round);
	}
	close(epfd);
	close(r.fd);
	return ru_failures ? 1 : 0;
}

/*
 * splice: a runtime's writer task on the submitting thread.  A SPLICE
 * from a pipe with data into a blocking socket whose send buffer is full:
 * enter must return without blocking (the kernel runs every SPLICE in
 * io-wq), so that the same thread can then drain the socket, after which
 * the splice completes.  A submitter blocked in splice(2) would never
 * drain it: the payload's time limit ends that.
 */
static int payload_splice(void)
{
	static char junk[65536];
	struct io_uring_sqe *sqe;
	struct io_uring_cqe cqe;
	long filled = 0, drained = 0, n;
	struct ring r;
	int sv[2], p[2], fl, ret;

	use_raw = false;
	ret = ring_init_flags(&r, 8, 0);
	if (ret) {
		fprintf(stderr, "ring_init: %s\n", strerror(-ret));
		return 2;
	}
	RU_CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv) && !pipe(p),
		 "socketpair/pipe: %s", strerror(errno));
	fl = fcntl(sv[0], F_GETFL);
	fcntl(sv[0], F_SETFL, fl | O_NONBLOCK);
	while ((n = write(sv[0], junk, sizeof(junk))) > 0)
		filled += n;
	fcntl(sv[0], F_SETFL, fl);
	RU_CHECK(write(p[1], junk, 4096) == 4096, "fill the pipe");
	sqe = get_sqe(&r);
	sqe->opcode = IORING_OP_SPLICE;
	sqe->fd = sv[0];
	sqe->len = 4096;
	sqe->off = (uint64_t)-1;
	sqe->splice_fd_in = p[0];
	sqe->splice_off_in = (uint64_t)-1;
	sqe->user_data = 1;
	RU_CHECK(enter(r.fd, 1, 0, 0, NULL, 0) == 1, "submit the splice");
	while (drained < filled + 4096 &&
	       (n = read(sv[1], junk, sizeof(junk))) > 0)
		drained += n;
	RU_CHECK(drained == filled + 4096, "drained %ld of %ld", drained,
		 filled + 4096);
	RU_CHECK(enter(r.fd, 0, 1, 0, NULL, 0) >= 0, "wait for the CQE");
	RU_CHECK(!pop(&r, &cqe) && cqe.user_data == 1 && cqe.res == 4096,
		 "splice CQE (res %d)", cqe.res);
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
	close(r.fd);
	return ru_failures ? 1 : 0;
}

/* a one-byte message carrying fd in SCM_RIGHTS */
static void scm_msg(struct msghdr *m, struct iovec *iov, char *cbuf,
		    size_t clen, int fd)
{
	struct cmsghdr *c;

	memset(m, 0, sizeof(*m));
	memset(cbuf, 0, clen);
	iov->iov_base = (void *)"x";
	iov->iov_len = 1;
	m->msg_iov = iov;
	m->msg_iovlen = 1;
	m->msg_control = cbuf;
	m->msg_controllen = CMSG_SPACE(sizeof(int));
	c = CMSG_FIRSTHDR(m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
}

static int payload_scm(void)
{
	char cb[2][CMSG_SPACE(sizeof(int))];
	struct mmsghdr mm[2];
	struct iovec iov[2];
	struct msghdr m;
	struct ring r;
	int sp[2], ret;
	ssize_t n;

	use_raw = false;
	ret = ring_init_flags(&r, 8, 0);
	if (ret) {
		fprintf(stderr, "ring_init: %s\n", strerror(-ret));
		return 2;
	}
	RU_CHECK(!socketpair(AF_UNIX, SOCK_DGRAM, 0, sp), "socketpair");
	scm_msg(&m, &iov[0], cb[0], sizeof(cb[0]), r.fd);
	errno = 0;
	n = sendmsg(sp[0], &m, 0);
	RU_CHECK(n == -1 && errno == EINVAL, "sendmsg of the ring fd: %zd %s",
		 n, strerror(errno));
	scm_msg(&m, &iov[0], cb[0], sizeof(cb[0]), sp[1]);
	n = sendmsg(sp[0], &m, 0);
	RU_CHECK(n == 1, "sendmsg of a socket fd: %zd %s", n, strerror(errno));
	memset(mm, 0, sizeof(mm));
	scm_msg(&mm[0].msg_hdr, &iov[0], cb[0], sizeof(cb[0]), sp[1]);
	scm_msg(&mm[1].msg_hdr, &iov[1], cb[1], sizeof(cb[1]), r.fd);
	ret = sendmmsg(sp[0], mm, 2, 0);
	RU_CHECK(ret == 1, "sendmmsg [socket, ring]: %d %s", ret,
		 strerror(errno));
	errno = 0;
	ret = sendmmsg(sp[0], &mm[1], 1, 0);
	RU_CHECK(ret == -1 && errno == EINVAL, "sendmmsg [ring]: %d %s", ret,
		 strerror(errno));
	close(sp[0]);
	close(sp[1]);
	close(r.fd);
	return ru_failures ? 1 : 0;
}

/*
 * transient: readiness that exists only for a moment.  A POLL_ADD is
 * armed on a file; the program makes the file ready and takes the data
 * straight back (or hangs up its other end), then looks at the CQ in
 * memory without entering.  The kernel runs the poll's wakeup inside the
 * waker's system call and, on a ring without COOP_TASKRUN or
 * DEFER_TASKRUN, posts the CQE before that call returns to user space,
 * with the mask of the wakeup latched: the CQE is there although the data
 * is gone.  Under uuring run the waker's call (write, eventfd_write,
 * send, close) passes through the preload library, which waits for the
 * readiness engine to have seen it (exec/poller.h).  Each kind 20 times:
 * an eventfd, a pipe, a UNIX socketpair, and the hang-up of a loopback
 * TCP connection's other end.
 */
static int transient_poll(struct ring *r, int fd, unsigned int mask,
			  uint64_t ud)
{
	struct io_uring_sqe *sqe = get_sqe(r);

	sqe->opcode = IORING_OP_POLL_ADD;
	sqe->fd = fd;
	sqe->poll32_events = mask;
	sqe->user_data = ud;
	return enter(r->fd, 1, 0, 0, NULL, 0);
}

static int tcp_pair(int sv[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, 1) || getsockname(l, (struct sockaddr *)&a, &len))
		return -1;
	sv[1] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sv[1] < 0 || connect(sv[1], (struct sockaddr *)&a, sizeof(a)))
		return -1;
	sv[0] = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	close(l);
	return sv[0] < 0 ? -1 : 0;
}

static int payload_transient(void)
{
	static const char *const kinds[] = { "eventfd", "pipe", "socketpair",
					     "tcp hang-up" };
	struct io_uring_cqe cqe;
	struct ring r;
	int ret;

	use_raw = false;
	ret = ring_init(&r, 8);
	if (ret) {
		fprintf(stderr, "ring_init: %s\n", strerror(-ret));
		return 2;
	}
	for (int k = 0; k < 4; k++) {
		int missing = 0, wrong = 0;

		for (int round = 0; round < 20; round++) {
			uint64_t ud = 1000 * (k + 1) + (uint64_t)round;
			unsigned int want = POLLIN;
			int fds[2] = { -1, -1 };
			char b[8] = "x";
			eventfd_t v;

			if (k == 0) {
				fds[0] = fds[1] = eventfd(0, EFD_CLOEXEC);
			} else if (k == 1) {
				ret = pipe2(fds, O_CLOEXEC);
			} else if (k == 2) {
				ret = socketpair(AF_UNIX, SOCK_STREAM |
						 SOCK_CLOEXEC, 0, fds);
			} else {
				ret = tcp_pair(fds);
				want = POLLIN | POLLRDHUP;
			}
			if (fds[0] < 0 || ret) {
				fprintf(stderr, "%s: %s\n", kinds[k],
					strerror(errno));
				return 2;
			}
			RU_CHECK(transient_poll(&r, fds[0], want, ud) == 1,
				 "%s: submit", kinds[k]);
			RU_CHECK(pop(&r, &cqe) == -EAGAIN,
				 "%s: a CQE before the wakeup", kinds[k]);
			if (k == 0) {
				eventfd_write(fds[1], 1);
				eventfd_read(fds[0], &v);
			} else if (k == 1) {
				RU_CHECK(write(fds[1], b, 1) == 1 &&
					 read(fds[0], b, 1) == 1,
					 "pipe write and read back");
			} else if (k == 2) {
				RU_CHECK(send(fds[1], b, 1, 0) == 1 &&
					 recv(fds[0], b, 1, 0) == 1,
					 "socketpair send and recv back");
			} else {
				close(fds[1]);
				fds[1] = -1;
			}
			if (pop(&r, &cqe)) {
				/* missed (the readiness is gone for good
				 * when the data was read back): remove the
				 * poll and take both CQEs, so the next round
				 * starts clean */
				struct io_uring_sqe *sqe = get_sqe(&r);

				missing++;
				sqe->opcode = IORING_OP_POLL_REMOVE;
				sqe->addr = ud;
				sqe->user_data = 1;
				enter(r.fd, 1, 2, 0, NULL, 0);
				while (!pop(&r, &cqe))
					;
			} else if (cqe.user_data != ud ||
				   !(cqe.res & POLLIN)) {
				wrong++;
			}
			if (fds[1] >= 0 && fds[1] != fds[0])
				close(fds[1]);
			close(fds[0]);
		}
		RU_CHECK(!missing && !wrong, "%s: %d of 20 poll CQEs not there "
			 "when the waking call returned, %d wrong", kinds[k],
			 missing, wrong);
	}
	close(r.fd);
	return ru_failures ? 1 : 0;
}

/* a payload on the kernel's io_uring (the reference), then under uuring */
static void on_both(const char *name)
{
	char *const v[] = { (char *)ru_self_exe(), (char *)name, NULL };
	int st = ru_run(v, 30);

	if (st)
		ru_describe(name, st);
	RU_CHECK(st == 0 || st == 2, "%s payload on the kernel's io_uring",
		 name);
	st = ru_payload(name, "--mode=auto", 30);
	if (st)
		ru_describe(name, st);
	RU_CHECK(st == 0, "%s payload under uuring run", name);
}

int main(int argc, char **argv)
{
	int st;

	if (argc > 1 && !strcmp(argv[1], "scm"))
		return payload_scm();

	if (argc > 1 && !strcmp(argv[1], "readiness"))
		return payload_readiness();
	if (argc > 1 && !strcmp(argv[1], "edge"))
		return payload_edge();
	if (argc > 1 && !strcmp(argv[1], "splice"))
		return payload_splice();
	if (argc > 1 && !strcmp(argv[1], "transient"))
		return payload_transient();

	if (argc > 1 && !strcmp(argv[1], "patch"))
		return payload_patch(!getenv("UURING_PATCH"));
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
	st = ru_payload("patch", "--mode=auto", 30);
	if (st)
		ru_describe("patch", st);
	RU_CHECK(st == 0, "patch payload");
	setenv("UURING_PATCH", "0", 1);
	st = ru_payload("patch", "--mode=auto", 30);
	unsetenv("UURING_PATCH");
	if (st)
		ru_describe("patch, UURING_PATCH=0", st);
	RU_CHECK(st == 0, "patch payload with UURING_PATCH=0");
	on_both("readiness");
	on_both("edge");
	on_both("splice");
	on_both("scm");
	on_both("transient");
	return ru_failures ? 1 : 0;
}
