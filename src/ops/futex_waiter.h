/* SPDX-License-Identifier: MIT */
/*
 * FUTEX_WAIT and FUTEX_WAITV: the jobs and the threads that wait on the
 * application's futexes for them (ops/futex_waiter.c; the opcodes are in
 * ops/futex.c).
 */
#ifndef UURING_FUTEX_WAITER_H
#define UURING_FUTEX_WAITER_H

#include <linux/futex.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "util/cpsys.h"

#ifndef SYS_futex_wake
#define SYS_futex_wake 454
#endif
#ifndef SYS_futex_wait
#define SYS_futex_wait 455
#endif

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

#define UU_FUTEX2_SIZE_U32 0x02
#define UU_FUTEX2_NUMA 0x04
#define UU_FUTEX2_MPOL 0x08
#define UU_FUTEX2_PRIVATE 0x80

#define VCHUNK (FUTEX_WAITV_MAX - 1)

enum { VJ_WAITING, VJ_DONE, VJ_ENDED };

struct vjob {
	_Atomic uint32_t state;   /* VJ_*; a futex word in every vector */
	_Atomic uint32_t started; /* threads about to wait (a futex word) */
	_Atomic uint32_t left;    /* threads off their futexes (a futex word) */
	unsigned int nthreads;    /* threads created */
	atomic_int refs;          /* the request's and each thread's */
	int efd;                  /* "done" eventfd, -1 before issue */
	int res;                  /* the CQE res when VJ_DONE */
	bool direct;              /* one futex_wait(2) thread (see above) */
	/* direct only: the thread, its cancel word, the kick's handshake */
	struct uu_cp cp;
	_Atomic pid_t tid;
	_Atomic uint32_t kicked;
	uint32_t mask;
	unsigned int nr;
	struct futex_waitv v[];   /* the application's vector, copied at prep */
};

/* the request's reference, or a thread's, dropped */
void uu_vjob_put(struct vjob *j);
/* starts the job's threads; -ENOMEM if one could not start */
int uu_vjob_start(struct vjob *j);
/* returns once the job's threads are queued on their futexes, or it ended */
void uu_vjob_await_queued(struct vjob *j);
/* ends the job: its threads are taken off their futexes */
void uu_vjob_stop(struct vjob *j);
/* returns once every thread of an ended job has left its futexes */
void uu_vjob_await_left(struct vjob *j);
/* futex_waitv(2) without a timeout: the index woken, or -errno */
long uu_futex_waitv(struct futex_waitv *v, unsigned int nr);
/* the index of the first entry whose value differs, -1 if none; -EFAULT */
int uu_futex_vdiffers(const struct futex_waitv *v, unsigned int nr);

#endif
