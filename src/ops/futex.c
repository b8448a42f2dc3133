// SPDX-License-Identifier: MIT
/*
 * FUTEX_WAKE and FUTEX_WAIT (futex2 flags in sqe->fd, the value or count
 * in addr2, the bitset in addr3).
 *
 * FUTEX_WAKE issues futex_wake(2), which applies FLAGS_STRICT like the
 * kernel's io_futex_wake (waking 0 futexes yields 0).
 *
 * FUTEX_WAIT and FUTEX_WAITV are waited for by threads of their own,
 * queued on the application's futexes before enter returns
 * (ops/futex_waiter.c says how).
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/types.h"
#include "exec/iowq.h"
#include "ops/futex.h"
#include "ops/futex_waiter.h"
#include "ops/ops.h"
#include "util/cpsys.h"
#include "util/fdutil.h"
#include "util/rawsys.h"
#include "util/usercopy.h"

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
	v = ret < 0 ? 2 : 1;
	atomic_store_explicit(&flags_ok[flags], v, memory_order_relaxed);
	return v == 1;
}

int uu_futex_prep(struct uu_req *req)
{
	struct uu_futex_cmd *futex_st = uu_cmd(req, futex);
	const struct io_uring_sqe *sqe = &req->sqe;

	if (sqe->len || sqe->futex_flags || sqe->buf_index || sqe->file_index)
		return -EINVAL;
	futex_st->uaddr = sqe->addr;
	futex_st->val = sqe->addr2;
	futex_st->mask = sqe->addr3;
	futex_st->flags = (uint32_t)sqe->fd;
	if (!futex2_flags_valid(futex_st->flags))
		return -EINVAL;
	/* futex_validate_input: both fit the (32-bit) futex */
	if ((futex_st->val >> 32) || (futex_st->mask >> 32))
		return -EINVAL;
	return 0;
}

int uu_futex_wake_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_futex_cmd *futex_st = uu_cmd(req, futex);
	long ret;

	(void)issue_flags;
	ret = syscall(SYS_futex_wake, (void *)(uintptr_t)futex_st->uaddr,
		      (unsigned long)futex_st->mask,
		      (int)futex_st->val, futex_st->flags);
	return ret < 0 ? -errno : (int)ret;
}

/*
 * Whether the kernel accepts these futex2 flags in a waitv entry: asked
 * once per value, with an entry whose value differs (-EAGAIN: valid).
 * 0 unknown, 1 valid, 2 not.
 */
static _Atomic uint8_t vflags_ok[256];

static bool futexv_flags_valid(uint32_t flags)
{
	static uint32_t word[4] __attribute__((aligned(16))) = {
		1, 0xffffffffu, 0, 0
	};
	struct futex_waitv v = {
		.val = 0, .uaddr = (uint64_t)(uintptr_t)word, .flags = flags,
	};
	uint8_t ok;

	if (flags > 0xff)
		return false;
	ok = atomic_load_explicit(&vflags_ok[flags], memory_order_relaxed);
	if (ok)
		return ok == 1;
	ok = uu_futex_waitv(&v, 1) == -EINVAL ? 2 : 1;
	atomic_store_explicit(&vflags_ok[flags], ok, memory_order_relaxed);
	return ok == 1;
}

static struct vjob *vjob_alloc(unsigned int nr)
{
	struct vjob *j = calloc(1, sizeof(*j) + nr * sizeof(j->v[0]));

	if (!j)
		return NULL;
	atomic_init(&j->refs, 1);
	j->efd = -1;
	j->nr = nr;
	return j;
}

/*
 * FUTEX_WAIT: one futex.  With the match-any bitset and flags futex_waitv
 * takes, a one-entry futex_waitv job; else a direct thread.
 */
int uu_futex_wait_prep(struct uu_req *req)
{
	struct uu_futex_cmd *futex_st = uu_cmd(req, futex);
	struct vjob *j;
	uint32_t flags;
	int ret;

	uu_os_init(req);
	ret = uu_futex_prep(req);
	if (ret)
		return ret;
	j = vjob_alloc(1);
	if (!j)
		return -ENOMEM;
	flags = futex_st->flags;
	j->v[0] = (struct futex_waitv){
		.val = futex_st->val,
		.uaddr = futex_st->uaddr,
		.flags = flags,
	};
	j->mask = (uint32_t)futex_st->mask;
	j->direct = j->mask != FUTEX_BITSET_MATCH_ANY ||
		    (flags & (UU_FUTEX2_NUMA | UU_FUTEX2_MPOL)) ||
		    !futexv_flags_valid(flags);
	uu_os_take(req, j, NULL);
	return 0;
}

/* io_futexv_prep: no flags or mask, 1..128 entries read and checked now */
int uu_futexv_prep(struct uu_req *req)
{
	const struct io_uring_sqe *sqe = &req->sqe;
	unsigned int nr = sqe->len, i;
	struct vjob *j;

	uu_os_init(req);
	if (sqe->fd || sqe->buf_index || sqe->file_index || sqe->addr2 ||
	    sqe->futex_flags || sqe->addr3)
		return -EINVAL;
	if (!nr || nr > FUTEX_WAITV_MAX)
		return -EINVAL;
	j = vjob_alloc(nr);
	if (!j)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		struct futex_waitv *w = &j->v[i];

		/* integer arithmetic: addr may be 0 (the copy then faults) */
		if (uu_copy_from_user(w, (const void *)(uintptr_t)
				      (sqe->addr + i * sizeof(*w)),
				      sizeof(*w))) {
			free(j);
			return -EFAULT;
		}
		/* futex_validate_input: the value fits the 32-bit futex */
		if (w->__reserved || !futexv_flags_valid(w->flags) ||
		    (w->val >> 32)) {
			free(j);
			return -EINVAL;
		}
	}
	uu_os_take(req, j, NULL);
	return 0;
}

/*
 * futex_wait_multiple_setup's checks, by the kernel itself: every key
 * (alignment, a mapped page for a shared futex), then the values in
 * order.  The vector gets one more entry whose value differs, so that the
 * call never sleeps; -EAGAIN then means "all equal, or one differs",
 * which reading the values tells apart.  (A vector of 128 takes two
 * calls: a key error in the second still beats a value in the first, a
 * fault's place in the order is approximate there.)  A wake that finds
 * the check's queued entries completes the request as woken, as the
 * kernel's would: *woken is then its index (else -1).
 */
static int futexv_check(struct vjob *j, int *woken)
{
	static uint32_t never = 1;
	struct futex_waitv v[FUTEX_WAITV_MAX];
	unsigned int base, n;
	int err = 0;
	long ret;

	*woken = -1;
	for (base = 0; base < j->nr; base += VCHUNK) {
		n = j->nr - base < VCHUNK ? j->nr - base : VCHUNK;
		memcpy(v, &j->v[base], n * sizeof(v[0]));
		v[n] = (struct futex_waitv){
			.val = 0, .uaddr = (uint64_t)(uintptr_t)&never,
			.flags = UU_FUTEX2_SIZE_U32 | UU_FUTEX2_PRIVATE,
		};
		ret = uu_futex_waitv(v, n + 1);
		/* woken while queued by the check: the wake was for us */
		if (ret >= 0 && ret < n) {
			*woken = (int)(base + ret);
			return 0;
		}
		/* only the keys give -EINVAL, and they come first */
		if (ret == -EINVAL)
			return -EINVAL;
		if (ret < 0 && ret != -EAGAIN && !err)
			err = (int)ret;
	}
	if (err)
		return err;
	ret = uu_futex_vdiffers(j->v, j->nr);
	return ret == -1 ? 0 : ret == -EFAULT ? -EFAULT : -EAGAIN;
}

/*
 * Issued by the submitting thread (or an io-wq worker for IOSQE_ASYNC):
 * check, start the threads, wait until they are queued, then wait on the
 * readiness engine for the eventfd.  The readiness engine issues it again
 * when the eventfd is readable; if it cannot be polled, an io-wq worker
 * issues it and blocks instead.
 */
static int vjob_issue(struct uu_req *req, struct vjob *j,
		      unsigned int issue_flags)
{
	uint64_t cnt;
	int ret, woken;

	if (j->efd < 0) {
		if (!j->direct) {
			ret = futexv_check(j, &woken);
			if (ret)
				return ret;
			if (woken >= 0)
				return woken;
		}
		ret = uu_engine_eventfd(EFD_CLOEXEC | EFD_NONBLOCK);
		if (ret < 0)
			return -errno;
		j->efd = uu_fd_to_reserved(ret);
		ret = uu_vjob_start(j);
		if (ret)
			return ret;
		uu_vjob_await_queued(j);
	} else if (issue_flags & UU_ISSUE_F_WORKER) {
		/* the eventfd could not be polled: wait here, interruptible
		 * by a cancel (T7) */
		uu_iowq_blocking(true);
		while (atomic_load_explicit(&j->state, memory_order_acquire) ==
		       VJ_WAITING && !uu_req_cancelled(req))
			uu_sys_cp(SYS_futex, (long)&j->state,
				  FUTEX_WAIT_PRIVATE, VJ_WAITING, 0, 0, 0);
		uu_iowq_blocking(false);
		if (atomic_load_explicit(&j->state, memory_order_acquire) !=
		    VJ_DONE)
			return -ECANCELED;
	}
	/* acquire: pairs with vjob_end's release of res */
	if (atomic_load_explicit(&j->state, memory_order_acquire) == VJ_DONE)
		return j->res;
	/* not done: a stale readiness; drain it and wait again */
	while (read(j->efd, &cnt, sizeof(cnt)) > 0)
		;
	if (atomic_load_explicit(&j->state, memory_order_acquire) == VJ_DONE)
		return j->res;
	req->fd = j->efd;
	return uu_park(req, UU_ISSUE_PARK_POLLIN);
}

int uu_futex_wait_issue(struct uu_req *req, unsigned int issue_flags)
{
	/* futex_wait's check, made at issue as before */
	if (!uu_cmd(req, futex)->mask)
		return -EINVAL;
	return vjob_issue(req, uu_os_hdr(req)->mem, issue_flags);
}

int uu_futexv_issue(struct uu_req *req, unsigned int issue_flags)
{
	return vjob_issue(req, uu_os_hdr(req)->mem, issue_flags);
}

/* At completion, whatever it was: the threads still waiting are taken
 * off their futexes (uu_vjob_stop; no spurious wakeups for anyone). */
void uu_futexv_cleanup(struct uu_req *req)
{
	struct vjob *j = uu_os_hdr(req)->mem;

	uu_os_hdr(req)->mem = NULL; /* shared with the threads: not uu_os_drop */
	if (j && uu_os_hdr(req)->tag == uu_os_tag(req)) {
		uu_vjob_stop(j);
		uu_vjob_await_left(j);
		uu_vjob_put(j);
	}
	uu_os_release(req);
}

void uu_futex_wait_cleanup(struct uu_req *req)
{
	uu_futexv_cleanup(req);
}
