// SPDX-License-Identifier: MIT
/* The engine's exempt syscall stub (see rawsys.h).  x86-64 only. */
#include "util/rawsys.h"

#if !defined(__x86_64__)
#error "uuring's raw syscall stub is written for x86-64"
#endif

__asm__(".pushsection uu_exempt_text,\"ax\",@progbits\n"
	".globl uu_rawsys6\n"
	".hidden uu_rawsys6\n"
	".type uu_rawsys6,@function\n"
	"uu_rawsys6:\n"
	"	movq %rdi, %rax\n"
	"	movq %rsi, %rdi\n"
	"	movq %rdx, %rsi\n"
	"	movq %rcx, %rdx\n"
	"	movq %r8, %r10\n"
	"	movq %r9, %r8\n"
	"	movq 8(%rsp), %r9\n"
	"	syscall\n"
	"	ret\n"
	".size uu_rawsys6, .-uu_rawsys6\n"
	".popsection\n");
