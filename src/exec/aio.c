// SPDX-License-Identifier: MIT
/*
 * O_DIRECT reads and writes through Linux AIO (io_submit): the kernel's
 * io_uring submits direct I/O asynchronously to the block layer and never
 * sends it to io-wq; a thread per request in flight (io-wq) would cost a
 * wakeup and a context switch per I/O.  One AIO context per process, one
 * reaper thread blocked in io_getevents, which finishes the requests of
 * each io_getevents together (their CQEs in one commit per ring).
 * The O_DIRECT requests of a submission batch go in one io_submit, at the
 * flush of the batch (core/req.c aio_flush), as the kernel plugs them.
 * Where AIO is unavailable (io_setup denied, context full, or turned off
 * with UURING_DIRECT_AIO=0), the request goes to io-wq's unbounded class
 * instead.
 */
#include <errno.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/req.h"
#include "core/tctx.h"
#include "core/types.h"
#include "exec/aio.h"
#include "ops/rw.h"
#include "util/fault.h"
#include "util/fdutil.h"
#include "util/forkhook.h"

#define AIO_NR 1024

/*
 * The hand-off from io_submit to io_getevents is invisible to
 * ThreadSanitizer: tell it the submitter releases the request and the
 * reaper acquires it.
 */
#if defined(__SANITIZE_THREAD__)
#define UU_TSAN_AIO 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UU_TSAN_AIO 1
#endif
#endif
#ifdef UU_TSAN_AIO
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define tsan_acquire(p) __tsan_acquire(p)
#define tsan_release(p) __tsan_release(p)
#else
#define tsan_acquire(p) ((void)(p))
#define tsan_release(p) ((void)(p))
#endif

static aio_context_t aio_ctx;
static bool aio_up;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool started; /* release: pairs with ensure_started's acquire */

static void *reaper_main(void *arg)
{
	struct io_event ev[64];
	struct uu_req *done[64];

	(void)arg;
	uu_tctx.engine_thread = true;
	pthread_setname_np(pthread_self(), "uuring-aio");
	for (;;) {
		long n = uu_fault_errno(UU_FAULT_AIO_EINTR, EINTR) ?
				 -1 :
				 syscall(SYS_io_getevents, aio_ctx, 1, 64, ev,
					 NULL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		for (long i = 0; i < n; i++) {
			struct uu_req *req = (struct uu_req *)(uintptr_t)ev[i].data;
			long res = (long)ev[i].res;

			tsan_acquire(req);
			req->res = (int32_t)res;
			if (res >= 0 && (size_t)res != uu_cmd(req, rw)->total)
				req->flags |= UU_REQ_SHORT;
			done[i] = req;
		}
		uu_req_finish_async_batch(done, (unsigned int)n);
	}
}

static void aio_start(void)
{
	const char *v = getenv("UURING_DIRECT_AIO");
	sigset_t all, old;
	pthread_t th;

	/*
	 * Linux AIO raises no fsnotify events (fanotify FAN_ACCESS and
	 * FAN_MODIFY, inotify IN_ACCESS and IN_MODIFY), where the kernel's
	 * io_uring raises them when a read or write completes.
	 * UURING_DIRECT_AIO=0 sends O_DIRECT I/O to io-wq instead (preadv2
	 * and pwritev2 raise them), for a process watched by a program that
	 * waits for those events (docs/compatibility.md).  A process that
	 * holds an fanotify or inotify group itself (a watcher of its own
	 * files, liburing's fsnotify) gets io-wq the same way.  Both are
	 * looked at once, at the first O_DIRECT request of the process: a
	 * group made after it, or one in another process, is not seen.
	 */
	if ((v && !strcmp(v, "0")) || uu_proc_has_fsnotify_group())
		return;
	if (uu_fault(UU_FAULT_AIO_SETUP) ||
	    syscall(SYS_io_setup, AIO_NR, &aio_ctx))
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* T8 */
	if (!uu_fault(UU_FAULT_THREAD_START) &&
	    !pthread_create(&th, NULL, reaper_main, NULL)) {
		pthread_detach(th);
		aio_up = true;
	} else {
		syscall(SYS_io_destroy, aio_ctx); /* O_DIRECT goes to io-wq */
		aio_ctx = 0;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void ensure_started(void)
{
	/* acquire: pairs with the release below (aio_ctx, aio_up) */
	if (atomic_load_explicit(&started, memory_order_acquire))
		return;
	pthread_mutex_lock(&start_lock);
	if (!atomic_load_explicit(&started, memory_order_relaxed)) {
		aio_start();
		atomic_store_explicit(&started, true, memory_order_release);
	}
	pthread_mutex_unlock(&start_lock);
}

/*
 * fork: AIO contexts are not inherited (the child's io_submit on the
 * parent's would fail) and the reaper thread is the parent's: the child
 * sets up its own at its first O_DIRECT request.
 */
void uu_aio_atfork_prepare(void)
{
	pthread_mutex_lock(&start_lock);
}

void uu_aio_atfork_parent(void)
{
	pthread_mutex_unlock(&start_lock);
}

void uu_aio_atfork_child(void)
{
	/* released, not re-initialised (see uu_poller_atfork_child) */
	pthread_mutex_unlock(&start_lock);
	aio_ctx = 0;
	aio_up = false;
	atomic_store_explicit(&started, false, memory_order_relaxed);
}

UU_FORK_HOOK(aio_fork_hook, UU_FORK_RANK_AIO, uu_aio_atfork_prepare,
	     uu_aio_atfork_parent, uu_aio_atfork_child)

/* req (parked, O_DIRECT) can go to AIO: it is up, and the offset is
 * explicit */
bool uu_aio_usable(struct uu_req *req)
{
	ensure_started();
	return aio_up && uu_cmd(req, rw)->pos >= 0;
}

static void fill_iocb(struct iocb *cb, struct uu_req *req)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);

	/* the park code its issue chose (not reset until it is issued
	 * again, which a parked request is not) */
	bool is_write = req->park == UU_ISSUE_PARK_AIO_WRITE;

	memset(cb, 0, sizeof(*cb));
	cb->aio_data = (uint64_t)(uintptr_t)req;
	cb->aio_fildes = (uint32_t)req->fd;
	cb->aio_offset = rw_st->pos;
	cb->aio_rw_flags = (int)rw_st->rw_flags;
	if (rw_st->nr_iov == 1) {
		cb->aio_lio_opcode = is_write ? IOCB_CMD_PWRITE : IOCB_CMD_PREAD;
		cb->aio_buf = (uint64_t)(uintptr_t)rw_st->iov[0].iov_base;
		cb->aio_nbytes = rw_st->iov[0].iov_len;
	} else {
		cb->aio_lio_opcode = is_write ? IOCB_CMD_PWRITEV :
						IOCB_CMD_PREADV;
		cb->aio_buf = (uint64_t)(uintptr_t)rw_st->iov;
		cb->aio_nbytes = (uint64_t)rw_st->nr_iov;
	}
}

/*
 * One io_submit for the O_DIRECT requests of a submission batch (n at
 * most UU_AIO_BATCH, each uu_aio_usable), as the kernel's io_uring plugs
 * the block I/O of a batch.  Returns how many AIO took: the first ones;
 * the caller sends the others to io-wq.
 */
unsigned int uu_aio_submit_batch(struct uu_req **reqs, unsigned int n)
{
	struct iocb cb[UU_AIO_BATCH], *cbp[UU_AIO_BATCH];
	long ret;

	for (unsigned int i = 0; i < n; i++) {
		fill_iocb(&cb[i], reqs[i]);
		cbp[i] = &cb[i];
		tsan_release(reqs[i]);
	}
	do {
		if (uu_fault_errno(UU_FAULT_AIO_EINTR, EINTR) ||
		    uu_fault_errno(UU_FAULT_AIO_EAGAIN, EAGAIN))
			ret = -1;
		else
			ret = syscall(SYS_io_submit, aio_ctx, (long)n, cbp);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? 0 : (unsigned int)ret;
}
