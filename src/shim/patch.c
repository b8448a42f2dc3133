// SPDX-License-Identifier: MIT
/*
 * Trap once, then call: patching io_uring_enter call sites.
 *
 * Under `uuring run` a raw `syscall` instruction for io_uring_enter costs a
 * seccomp trap (SIGSYS, the handler, rt_sigreturn: ~2.5 us).  liburing and
 * fio issue it as the 7-byte sequence
 *
 *	b8 aa 01 00 00		mov $426, %eax
 *	0f 05			syscall
 *
 * When such a site traps, the handler rewrites its first 5 bytes (the
 * `mov`) into `jmp rel32` to a trampoline of its own, allocated within
 * +-2 GiB, which calls uu_site_enter() with the system call's arguments and
 * jumps back behind the `syscall`; the next enter from that site is a
 * function call.  Why this is safe:
 *
 *  - control flow: only the `mov` changes.  Code that jumps straight to the
 *    `syscall` (the old instruction boundary at +5, left intact) still
 *    traps and is served; +1..+4 never were instruction boundaries;
 *  - concurrency: the 5 bytes are replaced by one atomic store, 8-byte
 *    (they lie in one aligned word) or 16-byte (lock cmpxchg16b, in one
 *    aligned 16-byte block), the other bytes rewritten unchanged, so
 *    another thread fetches either the old `mov` or the new `jmp`; when
 *    they straddle a 16-byte boundary, the Linux text_poke_bp sequence with
 *    a jump-to-self instead of int3: the first two bytes become `jmp .` (a
 *    thread arriving there waits), then the tail is written, then the
 *    first two bytes of the `jmp rel32`; after each step
 *    membarrier(PRIVATE_EXPEDITED_SYNC_CORE) serialises every CPU running
 *    a thread of the process (without it, only single-store sites are
 *    patched; a site whose first two bytes straddle too keeps trapping).
 *    Patching is serialised by a lock, runs with all signals blocked (a
 *    handler of this thread must not spin on its own `jmp .`), and the text
 *    page is made writable (RWX, never non-executable) only meanwhile;
 *  - the system call's contract: the trampoline skips the red zone, saves
 *    every register a `syscall` preserves (all general-purpose registers
 *    but rax, rcx and r11, and the flags) and every vector register the C
 *    code could touch, and returns the result in rax, so the compiler's
 *    assumptions around the inline `asm` hold.  The vector state is saved
 *    with plain moves of the registers this CPU has (xmm0-15, ymm0-15, or
 *    zmm0-31 and k0-7), MXCSR and the x87 control word: XSAVE/XRSTOR of
 *    the same state costs ~160 ns here against ~25 ns (an enter's whole
 *    engine path is a few hundred).  The x87 data registers are left as
 *    they are: nothing on the enter path executes an x87 instruction
 *    (tests/check-no-x87.sh checks the preload library; the glibc calls
 *    it makes are string, futex and clock functions).
 *
 * Nothing is patched when the mprotect is refused (W^X policies), when no
 * memory can be found near the site, without SSE2 (never on x86-64), or
 * with UURING_PATCH=0; such sites keep trapping.  The patched site no longer reaches seccomp: that is the
 * point (it is our own io_uring_enter).
 */
#include <cpuid.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim/shim.h"
#include "uuring.h"
#include "util/rawsys.h"
#include "util/usercopy.h"

/* The trampoline template (assembled, copied, never executed in place). */
extern const unsigned char uu_tr_start[], uu_tr_between[], uu_tr_xsize[],
	uu_tr_save[],
	uu_tr_func[], uu_tr_restore[], uu_tr_ret[], uu_tr_end[];

__asm__(".pushsection .rodata.uu_tramp,\"a\",@progbits\n"
	".globl uu_tr_start\n.hidden uu_tr_start\n"
	"uu_tr_start:\n"
	/* the site's own instruction between the mov and the syscall, or a
	 * 2-byte nop: see site_kinds */
	".globl uu_tr_between\n.hidden uu_tr_between\n"
	"uu_tr_between:\n"
	"	.byte 0x66, 0x90\n"
	"	leaq -128(%rsp), %rsp\n" /* the red zone */
	"	pushfq\n"
	"	pushq %rbx\n"
	"	pushq %r12\n"
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	pushq %rdx\n"
	"	pushq %r8\n"
	"	pushq %r9\n"
	"	pushq %r10\n"
	"	movq %rsp, %rbx\n"
	"	andq $-64, %rsp\n"
	".globl uu_tr_xsize\n.hidden uu_tr_xsize\n"
	"uu_tr_xsize:\n"
	"	subq $0x7ffffff0, %rsp\n"
	/* the save and restore routines use only rax and r11 (the area) */
	"	movq %rsp, %r11\n"
	".globl uu_tr_save\n.hidden uu_tr_save\n"
	"uu_tr_save:\n"
	"	movabsq $0x7ffffffffffffff1, %rax\n"
	"	callq *%rax\n"
	"	movq %r10, %rcx\n"
	".globl uu_tr_func\n.hidden uu_tr_func\n"
	"uu_tr_func:\n"
	"	movabsq $0x7ffffffffffffff3, %rax\n"
	"	callq *%rax\n"
	"	movq %rax, %r12\n"
	"	movq %rsp, %r11\n"
	".globl uu_tr_restore\n.hidden uu_tr_restore\n"
	"uu_tr_restore:\n"
	"	movabsq $0x7ffffffffffffff2, %rax\n"
	"	callq *%rax\n"
	"	movq %r12, %rax\n"
	"	movq %rbx, %rsp\n"
	"	popq %r10\n"
	"	popq %r9\n"
	"	popq %r8\n"
	"	popq %rdx\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	popq %r12\n"
	"	popq %rbx\n"
	"	popfq\n"
	"	leaq 128(%rsp), %rsp\n"
	"	jmpq *0(%rip)\n"
	".globl uu_tr_ret\n.hidden uu_tr_ret\n"
	"uu_tr_ret:\n"
	"	.quad 0x7ffffffffffffff4\n"
	".globl uu_tr_end\n.hidden uu_tr_end\n"
	"uu_tr_end:\n"
	".popsection\n");

/*
 * The vector-state save and restore routines the trampolines call, one pair
 * per register file: the area in r11 (64-byte aligned, VEC_AREA bytes); no
 * other register is touched.  Layout: the vector registers from 0, the mask
 * registers at 2048, MXCSR at 2112 and the x87 control word at 2116.
 */
#define VEC_AREA 2176
#define VEC_SAVE_TAIL                                                      \
	"	stmxcsr 2112(%r11)\n"                                        \
	"	fnstcw 2116(%r11)\n"                                         \
	"	ret\n"
#define VEC_RESTORE_TAIL                                                   \
	"	ldmxcsr 2112(%r11)\n"                                        \
	"	fldcw 2116(%r11)\n"                                          \
	"	ret\n"

__asm__(".pushsection .text.uu_vec,\"ax\",@progbits\n"
	".macro uu_vec_save_regs op, reg, width, n\n"
	"	.irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	"	\\op %\\reg\\i, \\i*\\width(%r11)\n"
	"	.endr\n"
	"	.if \\n == 32\n"
	"	.irp i, 16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
	"	\\op %\\reg\\i, \\i*\\width(%r11)\n"
	"	.endr\n"
	"	.endif\n"
	".endm\n"
	".macro uu_vec_load_regs op, reg, width, n\n"
	"	.irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	"	\\op \\i*\\width(%r11), %\\reg\\i\n"
	"	.endr\n"
	"	.if \\n == 32\n"
	"	.irp i, 16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
	"	\\op \\i*\\width(%r11), %\\reg\\i\n"
	"	.endr\n"
	"	.endif\n"
	".endm\n"
	".macro uu_vec_mask op, dir\n"
	"	.irp i, 0,1,2,3,4,5,6,7\n"
	"	.if \\dir\n"
	"	\\op %k\\i, 2048+\\i*8(%r11)\n"
	"	.else\n"
	"	\\op 2048+\\i*8(%r11), %k\\i\n"
	"	.endif\n"
	"	.endr\n"
	".endm\n"
	"uu_vec_save_xmm:\n"
	"	uu_vec_save_regs movdqu, xmm, 16, 16\n" VEC_SAVE_TAIL
	"uu_vec_restore_xmm:\n"
	"	uu_vec_load_regs movdqu, xmm, 16, 16\n" VEC_RESTORE_TAIL
	"uu_vec_save_ymm:\n"
	"	uu_vec_save_regs vmovdqu, ymm, 32, 16\n" VEC_SAVE_TAIL
	"uu_vec_restore_ymm:\n"
	"	uu_vec_load_regs vmovdqu, ymm, 32, 16\n" VEC_RESTORE_TAIL
	/* AVX512F without BW: the mask registers are 16 bits wide */
	"uu_vec_save_zmm_w:\n"
	"	uu_vec_save_regs vmovdqu64, zmm, 64, 32\n"
	"	uu_vec_mask kmovw, 1\n" VEC_SAVE_TAIL
	"uu_vec_restore_zmm_w:\n"
	"	uu_vec_load_regs vmovdqu64, zmm, 64, 32\n"
	"	uu_vec_mask kmovw, 0\n" VEC_RESTORE_TAIL
	"uu_vec_save_zmm_q:\n"
	"	uu_vec_save_regs vmovdqu64, zmm, 64, 32\n"
	"	uu_vec_mask kmovq, 1\n" VEC_SAVE_TAIL
	"uu_vec_restore_zmm_q:\n"
	"	uu_vec_load_regs vmovdqu64, zmm, 64, 32\n"
	"	uu_vec_mask kmovq, 0\n" VEC_RESTORE_TAIL
	".popsection\n");

extern const unsigned char uu_vec_save_xmm[], uu_vec_restore_xmm[],
	uu_vec_save_ymm[], uu_vec_restore_ymm[], uu_vec_save_zmm_w[],
	uu_vec_restore_zmm_w[], uu_vec_save_zmm_q[], uu_vec_restore_zmm_q[];

#define SITE_MAX 9
#define MAX_SITES 64
#define TR_SLOT 512 /* the most a trampoline may take */

/*
 * The call sites we rewrite.  liburing's inline enter often has the
 * compiler's `xor %edx,%edx` (min_complete 0) between the mov and the
 * syscall (371 of 880 sites in liburing 2.3's tests): the trampoline then
 * starts with that instruction and returns behind the syscall.  Flags
 * need not be kept from it, since GCC and clang treat every x86 asm
 * statement as clobbering them.
 */
static const struct site_kind {
	unsigned char len;
	unsigned char bytes[SITE_MAX];
	unsigned char between[2]; /* what the trampoline runs first */
} site_kinds[] = {
	{ 7, { 0xb8, 0xaa, 0x01, 0x00, 0x00, 0x0f, 0x05 }, { 0x66, 0x90 } },
	{ 9, { 0xb8, 0xaa, 0x01, 0x00, 0x00, 0x31, 0xd2, 0x0f, 0x05 },
	  { 0x31, 0xd2 } }, /* mov $426,%eax; xor %edx,%edx; syscall */
};

static struct {
	int state;           /* 0 unknown, 1 usable, -1 not */
	const unsigned char *save, *restore; /* the register file's pair */
} cpu;

static int patch_lock;
static bool sync_core; /* membarrier SYNC_CORE registered */
static uintptr_t sites[MAX_SITES]; /* patched or refused */
static int nsites;
static unsigned long patched;

static int npages;

__attribute__((visibility("default"))) unsigned long uuring_shim_patched(void)
{
	return __atomic_load_n(&patched, __ATOMIC_RELAXED);
}

/*
 * Called by the trampolines: the io_uring_enter of a patched site.  Unlike
 * the SIGSYS handler it does not ask getpid() whether it runs in a vfork
 * child (that would cost a system call per enter, the hot path): a vfork
 * child that enters between vfork and exec drives the parent's ring with
 * the parent's (shared) engine state, as the kernel would let it, and
 * leaves that state consistent when it returns.
 */
static long uu_site_enter(long a1, long a2, long a3, long a4, long a5,
			  long a6)
{
	int saved_errno = errno;
	long ret = uuring_enter((unsigned int)a1, (unsigned int)a2,
				(unsigned int)a3, (unsigned int)a4,
				(const void *)a5, (size_t)a6);

	errno = saved_errno;
	return ret;
}

/* At load (not in the handler): can sites be patched here? */
void uu_patch_init(void)
{
	unsigned int a, b, c, d, xcr0_lo = 0, xcr0_hi;
	const char *v = getenv("UURING_PATCH");

	cpu.state = -1;
	if (v && !strcmp(v, "0"))
		return;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return;
	if (c & (1u << 27)) /* OSXSAVE: XCR0 says which state the OS keeps */
		__asm__ volatile("xgetbv"
				 : "=a"(xcr0_lo), "=d"(xcr0_hi)
				 : "c"(0));
	(void)xcr0_hi;
	/* the widest register file the OS enables: what C code may touch */
	cpu.save = uu_vec_save_xmm;
	cpu.restore = uu_vec_restore_xmm;
	if ((xcr0_lo & 0x6) == 0x6) { /* SSE and AVX state */
		cpu.save = uu_vec_save_ymm;
		cpu.restore = uu_vec_restore_ymm;
	}
	if ((xcr0_lo & 0xe6) == 0xe6) { /* + opmask, ZMM_Hi256, Hi16_ZMM */
		__cpuid_count(7, 0, a, b, c, d);
		if (b & (1u << 30)) { /* AVX512BW: 64-bit mask registers */
			cpu.save = uu_vec_save_zmm_q;
			cpu.restore = uu_vec_restore_zmm_q;
		} else {
			cpu.save = uu_vec_save_zmm_w;
			cpu.restore = uu_vec_restore_zmm_w;
		}
	}
	cpu.state = 1;
	/* MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE */
	sync_core = !uu_rawsys6(__NR_membarrier, 64, 0, 0, 0, 0, 0);
}

static void serialize_cores(void)
{
	if (sync_core) /* MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE */
		uu_rawsys6(__NR_membarrier, 32, 0, 0, 0, 0, 0);
}

static void store8(uintptr_t word, const unsigned char *bytes, int at,
		   int n)
{
	uint64_t v = __atomic_load_n((uint64_t *)word, __ATOMIC_RELAXED);

	memcpy((unsigned char *)&v + at, bytes, (size_t)n);
	__atomic_store_n((uint64_t *)word, v, __ATOMIC_SEQ_CST);
}

static void store16(uintptr_t block, const unsigned char *bytes, int at,
		    int n)
{
	uint64_t lo, hi, nlo, nhi;
	unsigned char b[16];
	bool ok;

	do {
		lo = __atomic_load_n((uint64_t *)block, __ATOMIC_RELAXED);
		hi = __atomic_load_n((uint64_t *)block + 1, __ATOMIC_RELAXED);
		memcpy(b, &lo, 8);
		memcpy(b + 8, &hi, 8);
		memcpy(b + at, bytes, (size_t)n);
		memcpy(&nlo, b, 8);
		memcpy(&nhi, b + 8, 8);
		__asm__ volatile("lock cmpxchg16b %1"
				 : "=@ccz"(ok), "+m"(*(unsigned __int128 *)block),
				   "+a"(lo), "+d"(hi)
				 : "b"(nlo), "c"(nhi)
				 : "memory");
	} while (!ok);
}

/* Writes the 5 bytes of `jmp rel32` at site; false if it cannot. */
static bool write_jmp(uintptr_t site, const unsigned char jmp[5])
{
	static const unsigned char self[2] = { 0xeb, 0xfe }; /* jmp . */
	uintptr_t word = site & ~(uintptr_t)7;
	uintptr_t block = site & ~(uintptr_t)15;
	int o8 = (int)(site - word), o16 = (int)(site - block);

	if (o8 <= 3) {
		store8(word, jmp, o8, 5);
	} else if (o16 <= 11) {
		store16(block, jmp, o16, 5);
	} else if (o16 <= 14 && sync_core) {
		/* n1 (2..4) bytes in this word, the rest in the next */
		int n1 = 8 - o8;

		store8(word, self, o8, 2);
		serialize_cores();
		if (n1 > 2)
			store8(word, jmp + 2, o8 + 2, n1 - 2);
		store8(word + 8, jmp + n1, 0, 5 - n1);
		serialize_cores();
		store8(word, jmp, o8, 2);
	} else {
		return false;
	}
	serialize_cores();
	return true;
}

/* A page for trampolines within +-2 GiB of `near`. */
static unsigned char *near_page(uintptr_t near)
{
	long ps = sysconf(_SC_PAGESIZE);

	for (long k = 1; k < 1024; k++) { /* within 1 GiB */
		for (int dir = -1; dir <= 1; dir += 2) {
			uintptr_t hint = (near & ~(uintptr_t)(ps - 1)) +
					 (uintptr_t)(dir * k * (1L << 20));
			void *p;

			if (hint < 0x10000)
				continue;
			p = mmap((void *)hint, (size_t)ps, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS |
					 MAP_FIXED_NOREPLACE,
				 -1, 0);
			if (p != MAP_FAILED) {
				if (p == (void *)hint)
					return p;
				munmap(p, (size_t)ps); /* old kernel: a hint */
			}
		}
	}
	return NULL;
}

static bool in_reach(uintptr_t from, uintptr_t to)
{
	intptr_t d = (intptr_t)(to - from);

	return d > INT32_MIN / 2 && d < INT32_MAX / 2;
}

/* A fresh page per trampoline: a page that runs trampolines is never
 * made writable again (another thread may be executing one). */
static unsigned char *tramp_slot(uintptr_t site)
{
	unsigned char *p;

	if (npages == MAX_SITES)
		return NULL;
	p = near_page(site);
	if (p && !in_reach(site, (uintptr_t)p)) {
		munmap(p, (size_t)sysconf(_SC_PAGESIZE));
		p = NULL;
	}
	return p;
}

static void put32(unsigned char *t, const unsigned char *label, int off,
		  uint32_t v)
{
	memcpy(t + (label - uu_tr_start) + off, &v, 4);
}

static void put64(unsigned char *t, const unsigned char *label, int off,
		  uint64_t v)
{
	memcpy(t + (label - uu_tr_start) + off, &v, 8);
}

/* Builds the trampoline for a site in its (still writable) slot. */
static bool build_tramp(unsigned char *t, const struct site_kind *k,
			uintptr_t ret)
{
	size_t len = (size_t)(uu_tr_end - uu_tr_start);
	uint32_t x;

	if (len > TR_SLOT)
		return false;
	memcpy(t, uu_tr_start, len);
	/* the placeholders must be where we think: refuse otherwise */
	memcpy(&x, t + (uu_tr_xsize - uu_tr_start) + 3, 4);
	if (x != 0x7ffffff0)
		return false;
	memcpy(&x, t + (uu_tr_save - uu_tr_start) + 2, 4);
	if (x != 0xfffffff1)
		return false;
	memcpy(t + (uu_tr_between - uu_tr_start), k->between, 2);
	put32(t, uu_tr_xsize, 3, VEC_AREA);
	put64(t, uu_tr_save, 2, (uint64_t)(uintptr_t)cpu.save);
	put64(t, uu_tr_restore, 2, (uint64_t)(uintptr_t)cpu.restore);
	put64(t, uu_tr_func, 2, (uint64_t)(uintptr_t)uu_site_enter);
	put64(t, uu_tr_ret, 0, (uint64_t)ret);
	return true;
}

static bool seen(uintptr_t site)
{
	for (int i = 0; i < nsites; i++)
		if (sites[i] == site)
			return true;
	return false;
}

static void do_patch(uintptr_t site, const struct site_kind *k)
{
	long ps = sysconf(_SC_PAGESIZE);
	uintptr_t first, last, page;
	unsigned char *t, bytes[SITE_MAX], jmp[5];
	uint64_t all = ~0ull, old;
	int32_t rel;

	if (nsites == MAX_SITES)
		return;
	sites[nsites++] = site; /* once, whatever happens */
	if ((site & 15) == 15 || ((site & 15) > 11 && !sync_core))
		return; /* no safe way to store the 5 bytes */
	if (uu_copy_from_user(bytes, (const void *)site, k->len) ||
	    memcmp(bytes, k->bytes, k->len))
		return;
	t = tramp_slot(site);
	if (!t || !build_tramp(t, k, site + k->len))
		return;
	npages++;
	page = (uintptr_t)t;
	if (mprotect((void *)page, (size_t)ps, PROT_READ | PROT_EXEC))
		return;
	rel = (int32_t)((intptr_t)t - (intptr_t)(site + 5));
	jmp[0] = 0xe9;
	memcpy(jmp + 1, &rel, 4);
	/* the stores touch [site & ~15, (site & ~15) + 32): one or two pages */
	first = (site & ~(uintptr_t)15) & ~(uintptr_t)(ps - 1);
	last = ((site & ~(uintptr_t)15) + 31) & ~(uintptr_t)(ps - 1);
	if (mprotect((void *)first, (size_t)(last - first) + (size_t)ps,
		     PROT_READ | PROT_WRITE | PROT_EXEC))
		return;
	/* no signal handler of this thread may run into a half-made site */
	uu_rawsys6(__NR_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, 8,
		   0, 0);
	if (write_jmp(site, jmp))
		__atomic_fetch_add(&patched, 1, __ATOMIC_RELAXED);
	uu_rawsys6(__NR_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
	mprotect((void *)first, (size_t)(last - first) + (size_t)ps,
		 PROT_READ | PROT_EXEC);
}

/*
 * From the SIGSYS handler: the trapped io_uring_enter whose syscall
 * instruction ended at call_addr.  Patches its site if it can.
 */
void uu_patch_enter_site(uintptr_t call_addr)
{
	const struct site_kind *k = NULL;
	unsigned char bytes[SITE_MAX];
	uintptr_t site = 0;
	int expected = 0;

	if (cpu.state <= 0)
		return;
	for (size_t i = 0; i < sizeof(site_kinds) / sizeof(site_kinds[0]); i++) {
		uintptr_t at = call_addr - site_kinds[i].len;

		if (!uu_copy_from_user(bytes, (const void *)at,
				       site_kinds[i].len) &&
		    !memcmp(bytes, site_kinds[i].bytes, site_kinds[i].len)) {
			k = &site_kinds[i];
			site = at;
			break;
		}
	}
	if (!k)
		return;
	if (!__atomic_compare_exchange_n(&patch_lock, &expected, 1, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return; /* another thread is patching: next time */
	if (!seen(site))
		do_patch(site, k);
	__atomic_store_n(&patch_lock, 0, __ATOMIC_RELEASE);
}
