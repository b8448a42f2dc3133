// SPDX-License-Identifier: MIT
/*
 * The ring object: its creation and freeing, the memory it uses (laid out
 * by ring/mem.c), and the readiness of its fd (docs/architecture.md,
 * "The ring fd").
 */
#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/cq.h"
#include "core/pers.h"
#include "core/registry.h"
#include "core/ring.h"
#include "core/rsrc.h"
#include "core/setup.h"
#include "core/tctx.h"
#include "core/types.h"
#include "core/xproc.h"
#include "exec/iowq.h"
#include "ring/mem.h"
#include "util/fdutil.h"
#include "util/mpscq.h"
#include "util/rawsys.h"

/* r uses m from now on (its previous memory is the caller's) */
void uu_ring_mem_install(struct uu_ring *r, const struct uu_ring_mem *m)
{
	struct uu_ring_words w;

	r->mem = *m;
	r->mem.next = NULL;
	r->sq_mask = m->sq_entries - 1;
	r->cq_mask = m->cq_entries - 1;
	uu_ring_mem_words(m, r->setup_flags, &w);
	r->sq_head = w.sq_head;
	r->sq_tail = w.sq_tail;
	r->cq_head = w.cq_head;
	r->cq_tail = w.cq_tail;
	r->sq_dropped = w.sq_dropped;
	r->sq_flags = w.sq_flags;
	r->cq_flags = w.cq_flags;
	r->cq_overflow = w.cq_overflow;
	r->cqes = w.cqes;
	r->sq_array = w.sq_array;
}

/*
 * The locks of this process's engine state of the ring (the shared ones
 * are in ring->xs): at creation, and again when a forked child adopts
 * the ring (xproc/xproc.c), since a parent thread may have held one at the
 * fork.
 */
void uu_ring_init_private_locks(struct uu_ring *r)
{
	pthread_mutex_init(&r->wait_lock, NULL);
	pthread_mutex_init(&r->drain_lock, NULL);
	pthread_mutex_init(&r->park_lock, NULL);
	pthread_mutex_init(&r->files_lock, NULL);
	pthread_mutex_init(&r->pers_lock, NULL);
	pthread_mutex_init(&r->iopoll_lock, NULL);
	pthread_mutex_init(&r->tw_lock, NULL);
}

/*
 * Creates the ring's memory and its fd pair.  On success *out holds the
 * ring (refs = 1, the registry's) and p's output fields are filled; the
 * caller registers the fd and copies p back.
 */
int uu_ring_create(struct uu_ring **out, unsigned int entries,
		   struct io_uring_params *p)
{
	struct uu_ring_mem mem;
	struct uu_ring *r;
	int sv[2], ret;
	struct stat st;

	r = uu_ring_alloc();
	if (!r)
		return -ENOMEM;
	ret = uu_xshared_init(r);
	if (ret) {
		uu_ring_recycle(r);
		return ret;
	}
	r->setup_flags = p->flags;
	r->sqe_shift = (p->flags & IORING_SETUP_SQE128) ? 7 : 6;
	r->cqe_shift = (p->flags & IORING_SETUP_CQE32) ? 5 : 4;
	/* entries already rounded by setup */
	ret = uu_ring_mem_create(&mem, p->flags, entries, p->cq_entries, p);
	if (ret)
		goto err;
	uu_ring_mem_install(r, &mem);
	r->user_mem = p->flags & IORING_SETUP_NO_MMAP;

	/* The ring fd: one end of a socketpair; the engine keeps the peer. */
	/* non-blocking: a read(2) of the ring fd must not hang (the kernel
	 * fails it at once; here it gets EAGAIN or a readiness byte) */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
		       sv)) {
		ret = -errno;
		goto err;
	}
	r->peer_fd = uu_fd_to_reserved(sv[1]);
	fstat(r->peer_fd, &st);
	r->peer_ino = st.st_ino;
	fstat(sv[0], &st);
	r->ring_ino = st.st_ino;
	r->ring_dev = st.st_dev;
	r->app_fd_hint = sv[0];
	r->owned_app_fd = -1;
	atomic_store_explicit(&r->edge_watch, uu_config.ring_fd_edges,
			      memory_order_relaxed);
	r->owner_pid = getpid();
	atomic_store(&r->fork_gen, atomic_load(&uu_fork_generation));

	uu_ring_init_private_locks(r);
	r->syscall_iopoll = (p->flags & IORING_SETUP_IOPOLL) &&
			    !(p->flags & IORING_SETUP_SQPOLL);
	atomic_store(&r->evfd, -1);
	r->clockid = CLOCK_MONOTONIC;
	uu_mpscq_init(&r->defer_tw);
	uu_mpscq_init(&r->prio_tw);
	atomic_store(&r->tw_waiter_efd, -1);
	atomic_store(&r->tw_wakers, 0);
	atomic_store_explicit(&r->refs, 1, memory_order_release);
	atomic_init(r->disabled, !!(p->flags & IORING_SETUP_R_DISABLED));
	if ((p->flags & IORING_SETUP_SINGLE_ISSUER) &&
	    !(p->flags & IORING_SETUP_R_DISABLED))
		atomic_init(r->submitter_tid, uu_gettid());

	p->sq_entries = r->mem.sq_entries;
	p->features = UU_FEATURES;
	*out = r;
	return sv[0];
err:
	uu_ring_free(r);
	return ret;
}

void uu_ring_free(struct uu_ring *r)
{
	struct uu_ocqe *o, *next;

	if (!r)
		return;
	uu_ring_mem_free(&r->mem); /* unmapped and off the engine maps */
	uu_resize_free_retired(r);
	if (r->peer_fd > 0 && uu_fd_ino(r->peer_fd) == r->peer_ino)
		uu_sys_close(r->peer_fd);
	if (r->wq_default)
		uu_iowq_put(r->wq_default);
	uu_rsrc_free(r);
	uu_personalities_free(r);
	for (o = r->ovf_head; o; o = next) {
		next = o->next;
		free(o);
	}
	uu_xshared_free(r);
	pthread_mutex_destroy(&r->wait_lock);
	pthread_mutex_destroy(&r->drain_lock);
	pthread_mutex_destroy(&r->park_lock);
	pthread_mutex_destroy(&r->files_lock);
	pthread_mutex_destroy(&r->iopoll_lock);
	pthread_mutex_destroy(&r->tw_lock);
	uu_ring_recycle(r);
}

/*
 * Readiness (architecture.md, "Readiness approximation"): the ring fd is
 * readable while a byte sits in it.  *r->signalled says where the byte
 * is: READY_CLEAR (none), READY_SENDING (a poster owns the signal and is
 * in send()), READY_SENT (sent).  Only the poster whose CAS took it from
 * CLEAR sends, so there is one byte per signal without a lock; a drain
 * waits out SENDING, so it never clears the flag of a byte that arrives
 * after its recv (flag clear, byte in the fd: stale readiness).
 *
 * Called after a CQ commit, which has stored the new cq tail and then
 * fenced (seq_cst) before this load of the flag: the Dekker pair of the
 * fence in uu_ring_drain_readiness.  The CAS is acq_rel: a drain that
 * reads the flag it set (acquire) sees the CQEs committed before it.
 */
/*
 * A ring fd watched edge-triggered (an async runtime's epoll with
 * EPOLLET that reaps the CQ in memory): the kernel wakes the ring's poll
 * waiters on every CQ commit, so each commit is a new edge, also while
 * the fd stays readable.  A byte sent to a socket that already holds one
 * wakes its waiters again; the extra bytes are drained with the first at
 * the next enter, and trimmed here every 64 so they never fill the
 * socket (a send that fails would be an edge lost).
 */
static void edge_again(struct uu_ring *r)
{
	char b = 1, buf[64];
	int fd;

	if (uu_fd_ino(r->peer_fd) != r->peer_ino)
		return;
	if (atomic_fetch_add_explicit(&r->edge_extra, 1,
				      memory_order_relaxed) >= 64) {
		fd = r->app_fd_hint;
		if (uu_fd_ino(fd) == r->ring_ino &&
		    recv(fd, buf, sizeof(buf), MSG_DONTWAIT) < 0) {
			/* empty: a drain took them */
		}
		atomic_store_explicit(&r->edge_extra, 0, memory_order_relaxed);
	}
	if (send(r->peer_fd, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1)
		uu_stat_inc(r, readiness_signals);
}

void uu_ring_signal_readiness(struct uu_ring *r)
{
	uint32_t clear = READY_CLEAR, sending = READY_SENDING, st;
	char b = 1;

	st = atomic_load_explicit(r->signalled, memory_order_relaxed);
	if (st) {
		if (unlikely(atomic_load_explicit(&r->edge_watch,
						  memory_order_relaxed)) &&
		    st == READY_SENT)
			edge_again(r);
		return;
	}
	if (!atomic_compare_exchange_strong_explicit(r->signalled, &clear,
						     READY_SENDING,
						     memory_order_acq_rel,
						     memory_order_relaxed))
		return;
	/* the peer number could have been closed and reused by the app:
	 * then the ring stays "signalled" (readiness degrades, I/O works) */
	if (uu_fd_ino(r->peer_fd) == r->peer_ino &&
	    send(r->peer_fd, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1) {
		uu_stat_inc(r, readiness_signals);
		uu_tctx.readiness_sent = true;
	}
	/*
	 * release: pairs with the drain's acquire wait for READY_SENT.  Only
	 * SENDING -> SENT: a drain that gave up waiting for us (a ring
	 * shared with a process that may have died here) may have cleared
	 * the flag and another poster taken it since; an unconditional
	 * store would then leave SENT over a socket that a drain emptied,
	 * and every later commit would skip its byte (a lost readiness).
	 */
	atomic_compare_exchange_strong_explicit(r->signalled, &sending,
						READY_SENT,
						memory_order_release,
						memory_order_relaxed);
}

/*
 * Makes the fd unreadable when the CQ is found empty: at the end of enter,
 * and before a wait on it (uu_registry_sync_readiness).  fd is the ring fd
 * the application used, or -1 for the last number known to name the ring
 * (checked by inode).
 */
void uu_ring_drain_readiness(struct uu_ring *r, int fd)
{
	uint32_t expect = READY_SENT;
	char buf[16];

	if (!atomic_load_explicit(r->signalled, memory_order_acquire))
		return;
	if (fd < 0) {
		fd = r->app_fd_hint;
		if (uu_fd_ino(fd) != r->ring_ino)
			return;
	}
	/*
	 * A poster is between its CAS and the end of its send() (a few
	 * hundred ns, or a time slice if it was preempted there): wait for
	 * the byte, so the recv below takes it.  A poster of another process
	 * (a ring shared across fork) that died right there leaves SENDING
	 * for good: on such a ring the drain goes on after a bounded wait
	 * (the byte, if it comes, is then a stale readiness, never a lost
	 * one).  A poster of this process is alive and finishes: waiting
	 * only 1000 yields for it let a second poster signal while the
	 * first was still in send(), and the first one's late store of SENT
	 * then stood over a drained socket (tests/test_run_node hung beside
	 * two CPU hogs with the flag SENT, the socket empty and a CQE in the
	 * CQ).  It gets a second; the poster's CAS to SENT (above) makes a
	 * drain that gives up cost at worst a stale byte, not a lost one.
	 */
	for (int i = 0; atomic_load_explicit(r->signalled, memory_order_acquire) ==
			READY_SENDING;
	     i++) {
		if ((i >= 1000 && uu_ring_xshared(r)) || i >= 11000) {
			/* shared ring: the poster may be dead; our own:
			 * a second (a signal handler of the poster's own
			 * thread must not wait for it forever) */
			expect = READY_SENDING;
			break;
		}
		if (i < 1000) {
			sched_yield();
		} else {
			struct timespec ts = { 0, 100000 }; /* 0.1 ms */

			nanosleep(&ts, NULL);
		}
	}
	/* a stream socket: one recv takes every queued byte up to the
	 * buffer's size, so a short read means the socket is empty */
	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) == (ssize_t)sizeof(buf))
		;
	/* only SENT -> CLEAR (or the abandoned SENDING above): a flag that
	 * another drain cleared and a poster has taken again since stays
	 * with that poster's byte */
	atomic_compare_exchange_strong_explicit(r->signalled, &expect,
						READY_CLEAR,
						memory_order_relaxed,
						memory_order_relaxed);
	/*
	 * Dekker pair with uu_cq_commit_locked (store cq tail, seq_cst fence,
	 * load the flag): we store the flag, fence, load the cq tail.  Either
	 * the poster sees the flag clear and signals, or we see its CQE here
	 * and signal ourselves: never a CQE behind an unreadable fd.
	 */
	atomic_thread_fence(memory_order_seq_cst);
	uu_stat_inc(r, readiness_drains);
	if (uu_cq_ready(r))
		uu_ring_signal_readiness(r);
}

/*
 * I/O aimed at a ring fd (ops/rw.c, ops/net.c): -1 if fd is no ring whose
 * number the registry knows; 1 if the ring's CQ holds a CQE (the kernel's
 * ring file polls readable); 0 if it is empty, a stale readiness drained
 * first, so that a wait on the fd's readiness lasts until a CQE comes.
 */
int uu_ring_fd_readable(int fd)
{
	struct uu_ring *r;
	int ret;

	if (!uu_registry_fd_cached(fd))
		return -1;
	r = uu_ring_get_cached(fd);
	if (!r)
		return -1;
	ret = uu_cq_ready(r) != 0;
	if (!ret)
		uu_ring_drain_readiness(r, fd);
	uu_ring_put(r);
	return ret;
}
