// SPDX-License-Identifier: MIT
/*
 * Rings shared across fork: the CQEs of a process that ends without its
 * exit handler (docs/architecture.md "fork", compatibility #2).
 *
 * The kernel cancels a task's requests when it exits or execs, however it
 * ends, and posts their CQEs to the ring the other processes still use.
 * uuring's engine lives in the process: one that ends by `_exit`, by a
 * signal, or by an exec through the API (where no hook runs) takes its
 * requests with it.  So the processes of a ring keep two things in shared
 * memory and in the fd table:
 *
 *  - A journal per ring (MAP_SHARED, made at the first fork that inherits
 *    the ring): one slot per request in flight, holding its user_data and
 *    the pid of the process that submitted it.  A slot is claimed at
 *    submission and released under the CQ lock together with the post of
 *    the request's last CQE (core/req.c compl_flush), so a CQE is never
 *    both posted by its process and by a survivor.
 *  - A lifeline per fork: an AF_UNIX socketpair made at fork, one end kept
 *    by the parent and one by the child (CLOEXEC, so an exec closes it as
 *    death does; each side writes its pid into its end).  When a process
 *    is gone, the other end hangs up.
 *
 * A survivor looks at its lifelines when one of its threads waits for
 * CQEs on a shared ring (at the start of the wait, and on the wait's 1 ms
 * recheck while the ring is shared): for each peer that hung up, it posts
 * -ECANCELED for every journal slot of that pid on every ring, under the
 * ring's CQ lock, and frees the slots (TIMEOUTs of a peer that exited
 * rather than exec'd excepted: see post_orphans).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/internal.h"
#include "util/fdutil.h"
#include "util/rawsys.h"

#define XJ_ENTRIES 4096
#define XJ_CLAIMING (-1) /* a slot being filled in */

struct uu_xjent {
	_Atomic int32_t pid; /* 0: free; XJ_CLAIMING; else the submitter */
	_Atomic uint32_t timeout; /* a TIMEOUT, or linked behind one */
	uint64_t user_data;
};

struct uu_xjournal {
	atomic_uint hint; /* where the next claim starts looking */
	struct uu_xjent e[XJ_ENTRIES];
};

#define MAX_LIFELINES 64

struct lifeline {
	int fd;
	pid_t peer;    /* 0 until its pid has been read */
	bool graceful; /* the peer said goodbye from its exit handler */
};

#define BYE_EXIT 'E'

static pthread_mutex_t lines_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lifeline lines[MAX_LIFELINES];
static atomic_int nr_lines;
static int pending[2] = { -1, -1 }; /* the pair of the fork under way */

/* ---- journal ---- */

static size_t journal_size(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (sizeof(struct uu_xjournal) + page - 1) & ~(page - 1);
}

/* At a fork that inherits the ring (atfork prepare): the child sees the
 * mapping at the same address, and so finds it through xs. */
void uu_xj_setup(struct uu_ring *r)
{
	struct uu_xjournal *j;

	if (atomic_load_explicit(&r->xs->journal, memory_order_acquire))
		return;
	j = mmap(NULL, journal_size(), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (j == MAP_FAILED)
		return; /* no journal: the gap of compatibility #2 stays */
	atomic_store_explicit(&r->xs->journal, j, memory_order_release);
	r->journal_mapped = j;
}

void uu_xj_unmap(struct uu_ring *r)
{
	if (r->journal_mapped)
		munmap(r->journal_mapped, journal_size());
	r->journal_mapped = NULL;
}

/*
 * Submission of req on a ring with a journal: claim a slot.  CLAIMING
 * first, then the user_data, then the pid with release: a survivor that
 * reads the pid (acquire) reads the user_data that goes with it.  A full
 * journal leaves the request unrecorded (req->xj = 0; else the slot + 1).
 */
void uu_xj_claim(struct uu_ring *r, struct uu_req *req)
{
	struct uu_xjournal *j = atomic_load_explicit(&r->xs->journal,
						     memory_order_acquire);
	unsigned int start;

	req->xj = 0;
	if (!j)
		return;
	start = atomic_fetch_add_explicit(&j->hint, 1, memory_order_relaxed);
	for (unsigned int i = 0; i < XJ_ENTRIES; i++) {
		unsigned int slot = (start + i) % XJ_ENTRIES;
		int32_t free_pid = 0;

		if (atomic_load_explicit(&j->e[slot].pid, memory_order_relaxed))
			continue;
		if (!atomic_compare_exchange_strong_explicit(
			    &j->e[slot].pid, &free_pid, XJ_CLAIMING,
			    memory_order_acquire, memory_order_relaxed))
			continue;
		j->e[slot].user_data = req->user_data;
		atomic_store_explicit(&j->e[slot].timeout,
				      req->opcode == IORING_OP_TIMEOUT,
				      memory_order_relaxed);
		atomic_store_explicit(&j->e[slot].pid, (int32_t)uu_self_pid(),
				      memory_order_release);
		req->xj = slot + 1;
		return;
	}
}

/* req (slot xj) is linked behind a TIMEOUT: it ends with it */
void uu_xj_mark_timeout(struct uu_ring *r, unsigned int xj)
{
	struct uu_xjournal *j = atomic_load_explicit(&r->xs->journal,
						     memory_order_acquire);

	if (j && xj)
		atomic_store_explicit(&j->e[xj - 1].timeout, 1,
				      memory_order_relaxed);
}

/* The request's last CQE was posted (under the CQ lock), or it ends
 * without one: the slot is free again. */
void uu_xj_release(struct uu_ring *r, unsigned int xj)
{
	struct uu_xjournal *j;

	if (!xj)
		return;
	j = atomic_load_explicit(&r->xs->journal, memory_order_acquire);
	if (j)
		atomic_store_explicit(&j->e[xj - 1].pid, 0, memory_order_release);
}

/*
 * Post -ECANCELED for every slot of pid on r, and free them.  After an
 * exit through the exit handler, the slots left are TIMEOUTs and what is
 * linked behind them, which the kernel leaves armed to expire later:
 * uuring has no timer left for them, so they are freed without a CQE.
 * After any other end (_exit, a signal, an exec through the API) they are
 * cancelled as well: right for an exec, where the kernel cancels them
 * too; after _exit or a signal the kernel's would expire later with
 * -ETIME (compatibility #2).
 */
static void post_orphans(struct uu_ring *r, pid_t pid, bool graceful)
{
	struct uu_xjournal *j = atomic_load_explicit(&r->xs->journal,
						     memory_order_acquire);
	bool any = false;

	if (!j)
		return;
	pthread_mutex_lock(r->completion_lock);
	for (unsigned int i = 0; i < XJ_ENTRIES; i++) {
		if (atomic_load_explicit(&j->e[i].pid, memory_order_acquire) !=
		    (int32_t)pid)
			continue;
		if (!graceful) {
			uu_cq_post_locked(r, j->e[i].user_data, -ECANCELED, 0,
					  NULL);
			any = true;
		}
		atomic_store_explicit(&j->e[i].pid, 0, memory_order_release);
	}
	if (any)
		uu_cq_commit_locked(r);
	pthread_mutex_unlock(r->completion_lock);
}

static __thread pid_t orphan_pid;
static __thread bool orphan_graceful;

static void post_orphans_each(struct uu_ring *r)
{
	if (!uu_ring_foreign(r))
		post_orphans(r, orphan_pid, orphan_graceful);
}

/* ---- lifelines ---- */

/* atfork prepare: the child's copy of the table is a consistent one */
void uu_xlife_atfork_prepare(void)
{
	pthread_mutex_lock(&lines_lock);
}

/* atfork prepare, for each ring the child inherits: a lifeline for this
 * fork (one, whatever the number of rings) */
void uu_xlife_prepare_pair(void)
{
	int sv[2];

	if (pending[0] >= 0)
		return;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
		       sv))
		return;
	pending[0] = uu_fd_to_reserved(sv[0]);
	pending[1] = uu_fd_to_reserved(sv[1]);
}

/* lines_lock held: our pid goes into our end, which joins the table */
static void keep_end(int fd)
{
	pid_t me = uu_self_pid();
	int n = atomic_load_explicit(&nr_lines, memory_order_relaxed);

	if (n == MAX_LIFELINES ||
	    send(fd, &me, sizeof(me), MSG_DONTWAIT | MSG_NOSIGNAL) !=
		    (ssize_t)sizeof(me)) {
		uu_sys_close(fd);
		return;
	}
	lines[n] = (struct lifeline){ .fd = fd };
	atomic_store_explicit(&nr_lines, n + 1, memory_order_relaxed);
}

void uu_xlife_atfork_parent(void)
{
	if (pending[0] >= 0) {
		uu_sys_close(pending[1]);
		keep_end(pending[0]);
		pending[0] = pending[1] = -1;
	}
	pthread_mutex_unlock(&lines_lock);
}

/* the child's copies of its parent's lifelines are not its own */
void uu_xlife_atfork_child(void)
{
	pthread_mutex_init(&lines_lock, NULL);
	for (int i = 0; i < atomic_load(&nr_lines); i++)
		uu_sys_close(lines[i].fd);
	atomic_store(&nr_lines, 0);
	if (pending[0] < 0)
		return;
	uu_sys_close(pending[0]);
	keep_end(pending[1]);
	pending[0] = pending[1] = -1;
}

/*
 * A waiter of a shared ring: has a peer process gone?  One poll(2) of the
 * lifelines; for each that hung up, the orphans of that pid are posted.
 */
void uu_xlife_check(void)
{
	struct pollfd pfd[MAX_LIFELINES];
	pid_t dead[MAX_LIFELINES];
	bool graceful[MAX_LIFELINES];
	int n, nr_dead = 0;

	if (!atomic_load_explicit(&nr_lines, memory_order_relaxed))
		return;
	pthread_mutex_lock(&lines_lock);
	n = atomic_load(&nr_lines);
	for (int i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = lines[i].fd, .events = POLLIN };
	if (poll(pfd, (nfds_t)n, 0) <= 0) {
		pthread_mutex_unlock(&lines_lock);
		return;
	}
	for (int i = n - 1; i >= 0; i--) {
		bool gone = pfd[i].revents & (POLLHUP | POLLERR | POLLNVAL);

		if (!pfd[i].revents)
			continue;
		if (pfd[i].revents & POLLIN) {
			char msg[sizeof(pid_t) + 1];
			ssize_t got, off = 0;

			/* the pid first (written at the fork), then the
			 * goodbye, if the peer left through exit() */
			if (!lines[i].peer) {
				got = recv(lines[i].fd, msg, sizeof(pid_t),
					   MSG_DONTWAIT);
				if (got == (ssize_t)sizeof(pid_t))
					memcpy(&lines[i].peer, msg,
					       sizeof(pid_t));
				off = got;
			}
			if (off >= 0) {
				got = recv(lines[i].fd, msg, 1, MSG_DONTWAIT);
				if (got == 1 && msg[0] == BYE_EXIT)
					lines[i].graceful = true;
				else if (!got)
					gone = true;
			}
		}
		if (!gone)
			continue;
		if (lines[i].peer) {
			dead[nr_dead] = lines[i].peer;
			graceful[nr_dead++] = lines[i].graceful;
		}
		uu_sys_close(lines[i].fd);
		lines[i] = lines[--n];
	}
	atomic_store(&nr_lines, n);
	pthread_mutex_unlock(&lines_lock);
	for (int i = 0; i < nr_dead; i++) {
		orphan_pid = dead[i];
		orphan_graceful = graceful[i];
		uu_registry_for_each(post_orphans_each);
	}
}

/*
 * The exit handler (ring/xproc.c), after this process cancelled its
 * requests and posted their CQEs: what it leaves in the journal are
 * TIMEOUTs the kernel would leave armed; tell the peers.
 */
void uu_xlife_goodbye(void)
{
	char bye = BYE_EXIT;

	pthread_mutex_lock(&lines_lock);
	for (int i = 0; i < atomic_load(&nr_lines); i++)
		if (send(lines[i].fd, &bye, 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
			/* the peer is gone itself: nothing to tell */
		}
	pthread_mutex_unlock(&lines_lock);
}
