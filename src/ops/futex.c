// SPDX-License-Identifier: MIT
/*
 * FUTEX_WAKE (futex2 flags in sqe->fd, the count in addr2, the bitset in
 * addr3).  It issues futex_wake(2), which applies FLAGS_STRICT like the
 * kernel's io_futex_wake (waking 0 futexes yields 0).
 *
 * FUTEX_WAIT and FUTEX_WAITV are not implemented: the kernel queues the
 * waiter before enter returns, and a user-space waiter (a thread that
 * sleeps in futex_wait later) would miss the wakes that come in between.
 */
#include <errno.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/internal.h"
#include "ops/ops.h"

#ifndef SYS_futex_wake
#define SYS_futex_wake 454
#endif

#define UU_FUTEX2_SIZE_MASK 0x03
#define UU_FUTEX2_SIZE_U32 0x02
#define UU_FUTEX2_PRIVATE 0x80

/*
 * The kernel's flag check (FUTEX2_VALID_MASK, futex_flags_valid) is the
 * one futex_wake(2) makes: asking the kernel once per flags value, with
 * nothing to wake, gives exactly its answer.  0 unknown, 1 valid, 2 not.
 */
static _Atomic uint8_t flags_ok[256];

static bool futex2_flags_valid(uint32_t flags)
{
	uint32_t word[4] __attribute__((aligned(16))) = { 0 };
	uint8_t v;
	long ret;

	if (flags > 0xff)
		return false;
	v = atomic_load_explicit(&flags_ok[flags], memory_order_relaxed);
	if (v)
		return v == 1;
	ret = syscall(SYS_futex_wake, word, 1UL, 0, flags);
	if (ret < 0 && errno == ENOSYS) /* pre-6.7: 32-bit futexes only */
		ret = (flags & ~(uint32_t)(UU_FUTEX2_SIZE_MASK | UU_FUTEX2_PRIVATE)) ||
		      (flags & UU_FUTEX2_SIZE_MASK) != UU_FUTEX2_SIZE_U32 ? -1 : 0;
	v = ret < 0 ? 2 : 1;
	atomic_store_explicit(&flags_ok[flags], v, memory_order_relaxed);
	return v == 1;
}

int uu_futex_prep(struct uu_req *req)
{
	const struct io_uring_sqe *sqe = &req->sqe;

	if (sqe->len || sqe->futex_flags || sqe->buf_index || sqe->file_index)
		return -EINVAL;
	req->os.futex.uaddr = sqe->addr;
	req->os.futex.val = sqe->addr2;
	req->os.futex.mask = sqe->addr3;
	req->os.futex.flags = (uint32_t)sqe->fd;
	if (!futex2_flags_valid(req->os.futex.flags))
		return -EINVAL;
	/* futex_validate_input: both fit the (32-bit) futex */
	if ((req->os.futex.val >> 32) || (req->os.futex.mask >> 32))
		return -EINVAL;
	return 0;
}

int uu_futex_wake_issue(struct uu_req *req, unsigned int issue_flags)
{
	long ret;

	(void)issue_flags;
	ret = syscall(SYS_futex_wake, (void *)(uintptr_t)req->os.futex.uaddr,
		      (unsigned long)req->os.futex.mask,
		      (int)req->os.futex.val, req->os.futex.flags);
	return ret < 0 ? -errno : (int)ret;
}
