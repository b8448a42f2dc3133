// SPDX-License-Identifier: MIT
/*
 * The per-thread context's storage and its exit (core/tctx.h).
 */
#include <pthread.h>
#include <time.h>

#include "core/tctx.h"

__thread struct uu_tctx uu_tctx
	__attribute__((tls_model("initial-exec"))) = {
	.wait_efd = -1,
	.wait_clock = CLOCK_MONOTONIC,
};

static pthread_key_t tctx_key;
static pthread_once_t tctx_once = PTHREAD_ONCE_INIT;

/*
 * A thread's exit (the kernel's io_uring_cancel_generic, then the
 * task context's release): its cancelable URING_CMDs first, while the
 * rings its registered ring fds hold are still there; then those fds;
 * then its io-wq pool, which cancels its queued work and waits for its
 * workers; its wake eventfd last.  Work noted while this runs (a ring
 * released here whose teardown waits) runs in the same call.  TLS is
 * still valid while key destructors run.
 */
static void tctx_exit(void *unused)
{
	unsigned int w;

	(void)unused;
	while ((w = uu_tctx.exit_work)) {
		uu_tctx.exit_work = 0;
		if (w & UU_TCTX_EXIT_CMD)
			uu_uring_cmd_task_exit();
		if (w & UU_TCTX_EXIT_RINGFDS)
			uu_ringfds_thread_exit();
		if (w & UU_TCTX_EXIT_IOWQ)
			uu_iowq_thread_exit();
		if (w & UU_TCTX_EXIT_WAIT)
			uu_wait_thread_exit();
	}
}

static void tctx_key_init(void)
{
	pthread_key_create(&tctx_key, tctx_exit);
}

void uu_tctx_note_exit(unsigned int work)
{
	uu_tctx.exit_work |= work;
	pthread_once(&tctx_once, tctx_key_init);
	/* the key's value only marks a thread with exit work */
	if (!pthread_getspecific(tctx_key))
		pthread_setspecific(tctx_key, &uu_tctx);
}
