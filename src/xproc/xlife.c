// SPDX-License-Identifier: MIT
/*
 * Rings shared across fork: what one process's engine cannot do alone
 * (docs/architecture.md "fork", compatibility #2).
 * (Past 800 lines: the journal's adopted TIMEOUTs, the lifelines and the
 * service thread share exp_lock and lines_lock, in the order the fork
 * handlers take them, so they stay in one unit.)
 *
 * The kernel cancels a task's requests when it exits or execs, however it
 * ends, and posts their CQEs to the ring the other processes still use;
 * and its cancel walks every task of the ring.  uuring's engine lives in
 * the process: one that ends by `_exit`, by a signal, or by an exec
 * through the API (where no hook runs) takes its requests with it, and a
 * cancel only sees the requests of the process that issues it.  So the
 * processes of a ring keep:
 *
 *  - A journal per ring (MAP_SHARED, made at the first fork that inherits
 *    the ring): one slot per request in flight once a second process uses
 *    the ring, holding its user_data and the pid of the process that
 *    submitted it.  A slot is claimed at
 *    submission and released under the CQ lock together with the post of
 *    the request's last CQE (core/req.c compl_flush), so a CQE is never
 *    both posted by its process and by a survivor.
 *  - A lifeline per fork: an AF_UNIX SOCK_SEQPACKET socketpair made at
 *    fork, one end kept by the parent and one by the child (CLOEXEC, so an
 *    exec closes it as death does).  Messages: each side's pid, a child's
 *    "I use this ring" at its first use of an inherited ring, a goodbye
 *    from the exit handler, forwarded cancels and their answers.  When a
 *    process is gone, the other end hangs up.
 *  - A service thread per process that has a lifeline that matters (the
 *    parent from the fork on, a child from its first use of an inherited
 *    ring), blocked in poll(2) on the lifelines: it answers forwarded
 *    cancels with its own engine's uu_cancel, hands answers to the
 *    threads that asked, and for a peer that hung up posts -ECANCELED for
 *    every journal slot of that pid on every ring, under the ring's CQ
 *    lock, and frees the slots (TIMEOUTs of a peer that said goodbye
 *    excepted: see post_orphans).  Where the thread cannot be started,
 *    waiters of a shared ring look at the lifelines instead (start of a
 *    wait and its 1 ms recheck).
 */
#include <errno.h>
#include <linux/futex.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
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

#include "core/cancel.h"
#include "core/cq.h"
#include "core/cq_post.h"
#include "core/registry.h"
#include "core/tctx.h"
#include "core/types.h"
#include "core/xproc.h"
#include "exec/timer.h"
#include "util/fdutil.h"
#include "util/rawsys.h"

#define XJ_ENTRIES 4096
#define XJ_CLAIMING (-1) /* a slot being filled in */
/* a slot a survivor took over (a TIMEOUT it fires for a process that
 * exited, and what is linked behind it): below XJ_CLAIMING */
#define XJ_ADOPTED_BY(pid) (-(int32_t)(pid)-1)

enum { XJK_OTHER, XJK_TIMEOUT, XJK_LINKED };

/*
 * A slot's fields other than pid are written by the process that claimed
 * it and read by a survivor only after that process is gone (its
 * lifeline's hang-up orders them), or under the CQ lock.
 */
struct uu_xjent {
	_Atomic int32_t pid; /* 0: free; XJ_CLAIMING; XJ_ADOPTED_BY; else
			      * the submitter */
	_Atomic uint32_t timeout; /* XJK_*: a TIMEOUT, or linked behind one */
	uint64_t user_data;
	/* XJK_TIMEOUT: when it expires, once armed (INT64_MAX: not by
	 * itself, or not once: multishot), on clock (UU_CLOCK_*) */
	_Atomic int64_t expires;
	_Atomic int32_t clock;
	_Atomic uint32_t nr_linked; /* members marked behind it so far */
	/* XJK_LINKED: the TIMEOUT's slot + 1, and the place behind it */
	_Atomic uint32_t head, pos;
};

struct uu_xjournal {
	atomic_uint hint; /* where the next claim starts looking */
	struct uu_xjent e[XJ_ENTRIES];
};

#define MAX_LIFELINES 64
#define MAX_ADOPTED 16
#define MAX_REPLIES 16
#define CANCEL_REPLY_NS (200 * 1000 * 1000) /* a peer's answer, at most */
/* a REGISTER_SYNC_CANCEL's wait, in the peer, for what it found to end:
 * less than the asker waits for the answer */
#define SYNC_CANCEL_WAIT_MS 150

/* what goes over a lifeline (SOCK_SEQPACKET: one message per record) */
enum { XM_PID = 1, XM_BYE, XM_ADOPT, XM_CANCEL, XM_REPLY };

struct xmsg {
	uint32_t type;
	int32_t val;  /* XM_PID: the pid; XM_REPLY: uu_cancel's result */
	uint64_t seq; /* XM_CANCEL, XM_REPLY: matches a reply to its ask */
	uint64_t xs;  /* XM_ADOPT, XM_CANCEL: the ring, by the address of
		       * its shared page (the same in every process) */
	struct uu_cancel_match m;
	bool all;
};

struct lifeline {
	int fd;
	pid_t peer;    /* 0 until its XM_PID has been read */
	bool graceful; /* the peer said goodbye from its exit handler */
	bool to_parent; /* the peer created the rings we inherited */
	unsigned int nr_adopted;
	uint64_t adopted[MAX_ADOPTED]; /* rings the peer said it uses */
};

/* a thread waiting for a peer's answer to a forwarded cancel */
struct reply_slot {
	_Atomic uint64_t seq; /* 0: free */
	_Atomic uint32_t done; /* futex word */
	int32_t val;
};

static pthread_mutex_t lines_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lifeline lines[MAX_LIFELINES];
static atomic_int nr_lines;
static int pending[2] = { -1, -1 }; /* the pair of the fork under way */
static struct reply_slot replies[MAX_REPLIES];
static _Atomic uint64_t next_seq = 1;
static atomic_bool svc_running;
static int svc_kick = -1; /* eventfd: the table of lifelines changed */

/* ---- journal ---- */

static size_t journal_size(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (sizeof(struct uu_xjournal) + page - 1) & ~(page - 1);
}

/*
 * At a fork that inherits the ring (atfork prepare): the child sees the
 * mapping at the same address, and so finds it through xs.  Tried at the
 * ring's first fork only: a journal made at a later one would be missing
 * from the processes forked before it, which would then claim slots in
 * memory they do not have.
 */
void uu_xj_setup(struct uu_ring *r)
{
	struct uu_xjournal *j;

	if (atomic_exchange_explicit(&r->xs->journal_tried, true,
				     memory_order_relaxed))
		return;
	j = mmap(NULL, journal_size(), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (j == MAP_FAILED)
		return; /* no journal: the gap of compatibility #2 stays */
	atomic_store_explicit(&r->xs->journal, j, memory_order_release);
}

/* every process of the family has the mapping (made before it forked) */
void uu_xj_unmap(struct uu_ring *r)
{
	struct uu_xjournal *j = atomic_load_explicit(&r->xs->journal,
						     memory_order_acquire);

	if (j)
		munmap(j, journal_size());
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
				      req->opcode == IORING_OP_TIMEOUT ?
					      XJK_TIMEOUT :
					      XJK_OTHER,
				      memory_order_relaxed);
		atomic_store_explicit(&j->e[slot].expires, INT64_MAX,
				      memory_order_relaxed);
		atomic_store_explicit(&j->e[slot].nr_linked, 0,
				      memory_order_relaxed);
		atomic_store_explicit(&j->e[slot].head, 0, memory_order_relaxed);
		atomic_store_explicit(&j->e[slot].pid, (int32_t)uu_self_pid(),
				      memory_order_release);
		req->xj = slot + 1;
		return;
	}
}

/* req (slot xj) is linked behind a TIMEOUT (slot head_xj, 0 if it has
 * none): it ends with it */
void uu_xj_mark_timeout(struct uu_ring *r, unsigned int xj,
			unsigned int head_xj)
{
	struct uu_xjournal *j = atomic_load_explicit(&r->xs->journal,
						     memory_order_acquire);
	uint32_t pos = 0;

	if (!j || !xj)
		return;
	if (head_xj)
		pos = atomic_fetch_add_explicit(&j->e[head_xj - 1].nr_linked, 1,
						memory_order_relaxed) +
		      1;
	atomic_store_explicit(&j->e[xj - 1].head, head_xj, memory_order_relaxed);
	atomic_store_explicit(&j->e[xj - 1].pos, pos, memory_order_relaxed);
	atomic_store_explicit(&j->e[xj - 1].timeout, XJK_LINKED,
			      memory_order_relaxed);
}

/* The TIMEOUT in slot xj was armed (or updated): when it expires, on
 * clock; INT64_MAX when it does not expire once (multishot) */
void uu_xj_set_expiry(struct uu_ring *r, unsigned int xj, int clock,
		      int64_t expires)
{
	struct uu_xjournal *j = atomic_load_explicit(&r->xs->journal,
						     memory_order_acquire);

	if (!j || !xj)
		return;
	atomic_store_explicit(&j->e[xj - 1].clock, clock, memory_order_relaxed);
	atomic_store_explicit(&j->e[xj - 1].expires, expires,
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
 * TIMEOUTs of processes that exited, which this process fires (the
 * kernel keeps an exiting task's TIMEOUTs armed in the ring: they expire
 * later with -ETIME and what is linked behind them is cancelled then).
 * Each holds a reference to its ring.  exp_lock: the service thread and
 * waiters without one (uu_xlife_check) fire them.
 */
#define MAX_ADOPTED_TIMEOUTS 256

static void kick_svc(void);

struct adopted_timeout {
	struct uu_ring *ring;
	unsigned int slot;
	int clock;
	int64_t expires;
};

static pthread_mutex_t exp_lock = PTHREAD_MUTEX_INITIALIZER;
static struct adopted_timeout adopted[MAX_ADOPTED_TIMEOUTS];
static atomic_int nr_adopted_timeouts; /* changed under exp_lock */

/* is slot i's pid that of process pid (its own, or adopted by it)? */
static bool slot_of_pid(struct uu_xjournal *j, unsigned int i, pid_t pid)
{
	int32_t p = atomic_load_explicit(&j->e[i].pid, memory_order_acquire);

	return p == (int32_t)pid || p == XJ_ADOPTED_BY(pid);
}

/* completion_lock held: may slot i, a TIMEOUT of a process that exited,
 * be fired here later?  Then it is taken over and listed. */
static bool adopt_timeout(struct uu_ring *r, struct uu_xjournal *j,
			  unsigned int i)
{
	int64_t expires = atomic_load_explicit(&j->e[i].expires,
					       memory_order_relaxed);
	bool ok = false;

	if (expires == INT64_MAX)
		return false;
	pthread_mutex_lock(&exp_lock);
	if (nr_adopted_timeouts < MAX_ADOPTED_TIMEOUTS) {
		atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
		adopted[nr_adopted_timeouts++] = (struct adopted_timeout){
			.ring = r,
			.slot = i,
			.clock = atomic_load_explicit(&j->e[i].clock,
						      memory_order_relaxed),
			.expires = expires,
		};
		atomic_store_explicit(&j->e[i].pid,
				      XJ_ADOPTED_BY(uu_self_pid()),
				      memory_order_release);
		ok = true;
	}
	pthread_mutex_unlock(&exp_lock);
	/* the hang-up may have been read by a thread that is not the
	 * service thread (a forwarded cancel's, uu_xlife_cancel): the
	 * service thread must learn of the new expiry */
	if (ok)
		kick_svc();
	return ok;
}

/* A ring's last fd closed (core/registry.c, live_lock held, so not
 * exp_lock: the fork handlers take exp_lock before live_lock): the
 * service thread drops the TIMEOUTs it took over there, and their
 * references */
void uu_xlife_ring_dead(struct uu_ring *r)
{
	(void)r;
	if (atomic_load_explicit(&nr_adopted_timeouts, memory_order_relaxed))
		kick_svc();
}

/*
 * Post -ECANCELED for every slot of pid on r, and free them.  After an
 * exit through the exit handler, the slots left are mostly TIMEOUTs and
 * what is linked behind them, which the kernel leaves armed to expire
 * later: this process takes them over and fires them (fire_adopted);
 * multishot ones, and more than it can list, are freed without a CQE
 * (the other slots, requests whose cancel did not finish within the exit
 * handler's second, are posted).
 * After any other end (_exit, a signal, an exec through the API) they are
 * cancelled as well: right for an exec, where the kernel cancels them
 * too; after _exit or a signal the kernel's would expire later with
 * -ETIME (compatibility #2): the hang-up does not tell an exec from a
 * death.
 */
static void post_orphans(struct uu_ring *r, pid_t pid, bool graceful)
{
	struct uu_xjournal *j = atomic_load_explicit(&r->xs->journal,
						     memory_order_acquire);
	int32_t mine = XJ_ADOPTED_BY(uu_self_pid());
	bool any = false;

	if (!j)
		return;
	uu_cq_lock(r);
	/* the TIMEOUTs first: their members go with them */
	for (unsigned int i = 0; graceful && i < XJ_ENTRIES; i++)
		if (slot_of_pid(j, i, pid) &&
		    atomic_load_explicit(&j->e[i].timeout,
					 memory_order_relaxed) == XJK_TIMEOUT &&
		    !adopt_timeout(r, j, i))
			atomic_store_explicit(&j->e[i].pid, 0,
					      memory_order_release);
	for (unsigned int i = 0; i < XJ_ENTRIES; i++) {
		uint32_t kind, h;

		if (!slot_of_pid(j, i, pid))
			continue;
		kind = atomic_load_explicit(&j->e[i].timeout,
					    memory_order_relaxed);
		if (graceful && kind == XJK_LINKED) {
			h = atomic_load_explicit(&j->e[i].head,
						 memory_order_relaxed);
			/* it ends with its TIMEOUT, if that is ours now */
			atomic_store_explicit(
				&j->e[i].pid,
				h && atomic_load_explicit(&j->e[h - 1].pid,
							  memory_order_relaxed) ==
						mine ?
					mine :
					0,
				memory_order_release);
			continue;
		}
		uu_cq_post_locked(r, j->e[i].user_data, -ECANCELED, 0, NULL);
		any = true;
		atomic_store_explicit(&j->e[i].pid, 0, memory_order_release);
	}
	if (any)
		uu_cq_unlock_post(r);
	else
		uu_cq_unlock(r);
}

/*
 * An adopted TIMEOUT expired: -ETIME for it, then -ECANCELED for what is
 * linked behind it, in chain order, as the kernel's expiry fails the
 * chain (with IORING_TIMEOUT_ETIME_SUCCESS the kernel would go on with
 * the chain, whose requests died with their process: cancelled here too).
 */
static void fire_adopted(const struct adopted_timeout *t)
{
	struct uu_ring *r = t->ring;
	struct uu_xjournal *j = atomic_load_explicit(&r->xs->journal,
						     memory_order_acquire);
	int32_t mine = XJ_ADOPTED_BY(uu_self_pid());
	unsigned int slot = t->slot;
	bool post = !atomic_load(&r->dead);

	uu_cq_lock(r);
	if (atomic_load_explicit(&j->e[slot].pid, memory_order_acquire) !=
	    mine) {
		uu_cq_unlock(r);
		return;
	}
	if (post) {
		atomic_fetch_add_explicit(&r->cq_timeouts, 1,
					  memory_order_relaxed);
		uu_cq_post_locked(r, j->e[slot].user_data, -ETIME, 0, NULL);
	}
	atomic_store_explicit(&j->e[slot].pid, 0, memory_order_release);
	for (uint32_t pos = 1;; pos++) {
		unsigned int k;

		for (k = 0; k < XJ_ENTRIES; k++)
			if (atomic_load_explicit(&j->e[k].pid,
						 memory_order_relaxed) == mine &&
			    atomic_load_explicit(&j->e[k].head,
						 memory_order_relaxed) ==
				    slot + 1 &&
			    atomic_load_explicit(&j->e[k].pos,
						 memory_order_relaxed) == pos)
				break;
		if (k == XJ_ENTRIES)
			break;
		if (post)
			uu_cq_post_locked(r, j->e[k].user_data, -ECANCELED, 0,
					  NULL);
		atomic_store_explicit(&j->e[k].pid, 0, memory_order_release);
	}
	if (post)
		uu_cq_unlock_post(r);
	else
		uu_cq_unlock(r);
}

/*
 * Fires the adopted TIMEOUTs that are due, in expiry order as the
 * kernel's timer would; returns the time until the next one (ns), or -1
 * if none is left.
 */
static int64_t fire_due(void)
{
	struct adopted_timeout due[MAX_ADOPTED_TIMEOUTS];
	int nr_due = 0;
	int64_t next = -1;

	pthread_mutex_lock(&exp_lock);
	for (int i = 0; i < nr_adopted_timeouts;) {
		int64_t left = adopted[i].expires -
			       uu_clock_now(adopted[i].clock);

		/* a ring closed meanwhile: dropped now (fire_adopted
		 * posts nothing there), not when it would expire */
		if (left <= 0 || atomic_load(&adopted[i].ring->dead)) {
			due[nr_due++] = adopted[i];
			adopted[i] = adopted[--nr_adopted_timeouts];
			continue;
		}
		if (next < 0 || left < next)
			next = left;
		i++;
	}
	pthread_mutex_unlock(&exp_lock);
	for (int a = 1; a < nr_due; a++)
		for (int b = a; b > 0 && due[b].expires < due[b - 1].expires;
		     b--) {
			struct adopted_timeout t = due[b];

			due[b] = due[b - 1];
			due[b - 1] = t;
		}
	for (int i = 0; i < nr_due; i++) {
		fire_adopted(&due[i]);
		uu_ring_put(due[i].ring);
	}
	return next;
}

struct orphans_of {
	pid_t pid;
	bool graceful;
};

static void post_orphans_each(struct uu_ring *r, void *arg)
{
	struct orphans_of *o = arg;

	if (!uu_ring_foreign(r))
		post_orphans(r, o->pid, o->graceful);
}

/* ---- lifelines ---- */

static bool send_msg(int fd, const struct xmsg *m)
{
	return send(fd, m, sizeof(*m), MSG_DONTWAIT | MSG_NOSIGNAL) ==
	       (ssize_t)sizeof(*m);
}

/* atfork prepare: the child's copy of the table is a consistent one
 * (lock order: lines_lock, then exp_lock; nothing holding exp_lock takes
 * another lock) */
void uu_xlife_atfork_prepare(void)
{
	pthread_mutex_lock(&lines_lock);
	pthread_mutex_lock(&exp_lock);
}

/* atfork prepare, for each ring the child inherits: a lifeline for this
 * fork (one, whatever the number of rings) */
void uu_xlife_prepare_pair(void)
{
	int sv[2];

	if (pending[0] >= 0)
		return;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK,
		       0, sv))
		return;
	pending[0] = uu_fd_to_reserved(sv[0]);
	pending[1] = uu_fd_to_reserved(sv[1]);
}

/* lines_lock held: our pid goes into our end, which joins the table */
static void keep_end(int fd, bool to_parent)
{
	struct xmsg m = { .type = XM_PID, .val = uu_self_pid() };
	int n = atomic_load_explicit(&nr_lines, memory_order_relaxed);

	if (n == MAX_LIFELINES) {
		uu_sys_close(fd);
		return;
	}
	/*
	 * Kept even if the pid cannot be sent: on a busy machine a child
	 * can run its whole life (submit, exit) before its parent's fork
	 * returns, and then the send fails on the closed end while what
	 * the child said (its pid, its goodbye) waits in ours to be read;
	 * a peer already gone reads as hung up after that.
	 */
	(void)send_msg(fd, &m);
	lines[n] = (struct lifeline){ .fd = fd, .to_parent = to_parent };
	atomic_store_explicit(&nr_lines, n + 1, memory_order_relaxed);
}

static void svc_start(void);

static void kick_svc(void)
{
	uint64_t one = 1;

	if (svc_kick >= 0 && write(svc_kick, &one, sizeof(one)) < 0) {
		/* non-blocking, never near full */
	}
}

void uu_xlife_atfork_parent(void)
{
	bool added = false;

	if (pending[0] >= 0) {
		uu_sys_close(pending[1]);
		keep_end(pending[0], false);
		pending[0] = pending[1] = -1;
		added = true;
	}
	pthread_mutex_unlock(&exp_lock);
	pthread_mutex_unlock(&lines_lock);
	if (added) {
		/* the child may ask us to cancel: someone must listen */
		svc_start();
		kick_svc();
	}
}

/* the child's copies of its parent's lifelines are not its own */
void uu_xlife_atfork_child(void)
{
	/* lines_lock: still held from prepare by the forking thread, the
	 * child's only one; released at the end, not re-initialised */
	for (int i = 0; i < atomic_load(&nr_lines); i++)
		uu_sys_close(lines[i].fd);
	atomic_store(&nr_lines, 0);
	memset(replies, 0, sizeof(replies));
	atomic_store(&svc_running, false);
	if (svc_kick >= 0)
		uu_sys_close(svc_kick);
	svc_kick = -1;
	if (pending[0] >= 0) {
		uu_sys_close(pending[0]);
		keep_end(pending[1], true);
		pending[0] = pending[1] = -1;
	}
	/* the parent fires the TIMEOUTs it took over (their ring references
	 * are the parent's too) */
	nr_adopted_timeouts = 0;
	pthread_mutex_unlock(&exp_lock);
	pthread_mutex_unlock(&lines_lock);
}

/*
 * The child's first use of a ring it inherited (xproc/xproc.c): from now
 * on its parent forwards cancels of that ring here, and it listens.
 */
void uu_xlife_adopted(struct uu_ring *r)
{
	struct xmsg m = { .type = XM_ADOPT,
			  .xs = (uint64_t)(uintptr_t)r->xs };

	pthread_mutex_lock(&lines_lock);
	for (int i = 0; i < atomic_load(&nr_lines); i++)
		if (lines[i].to_parent && !send_msg(lines[i].fd, &m)) {
			/* the parent is gone: its hang-up says so */
		}
	pthread_mutex_unlock(&lines_lock);
	svc_start();
}

/* ---- forwarded cancels ---- */

static int build_pollset(struct pollfd *pfd);
static void service_pass(struct pollfd *pfd, int n);

struct cancel_walk {
	const struct xmsg *ask;
	int res;
	bool found_ring;
};

static void cancel_on_ring(struct uu_ring *r, void *arg)
{
	struct cancel_walk *c = arg;

	if (uu_ring_foreign(r) || c->found_ring ||
	    (uint64_t)(uintptr_t)r->xs != c->ask->xs)
		return;
	c->found_ring = true;
	c->res = uu_cancel(r, &c->ask->m);
	/* a REGISTER_SYNC_CANCEL returns once what it found has completed
	 * (register.c sync_cancel): here too, before the answer, so that
	 * the asker finds the CQEs posted when its call returns */
	if (c->ask->m.from_app &&
	    (c->ask->all ? c->res > 0 : c->res != -ENOENT)) {
		for (int ms = 0; ms < SYNC_CANCEL_WAIT_MS &&
				 uu_cancel_still_parked(r, &c->ask->m);
		     ms++)
			usleep(1000);
	}
}

/* the service thread: a peer asks us to cancel on a ring we share */
static void answer_cancel(int fd, const struct xmsg *ask)
{
	struct xmsg rep = { .type = XM_REPLY, .seq = ask->seq };

	struct cancel_walk c = { .ask = ask, .res = ask->all ? 0 : -ENOENT };

	uu_registry_for_each_arg(cancel_on_ring, &c);
	rep.val = c.res;
	if (!send_msg(fd, &rep)) {
		/* the asker is gone */
	}
}

static void deliver_reply(const struct xmsg *rep)
{
	for (int i = 0; i < MAX_REPLIES; i++) {
		if (atomic_load_explicit(&replies[i].seq,
					 memory_order_acquire) != rep->seq)
			continue;
		replies[i].val = rep->val;
		/* release: the asker reads val after it sees done */
		atomic_store_explicit(&replies[i].done, 1,
				      memory_order_release);
		syscall(SYS_futex, &replies[i].done, FUTEX_WAKE_PRIVATE, 1,
			NULL, NULL, 0);
		return;
	}
}

/*
 * An ASYNC_CANCEL or a REGISTER_SYNC_CANCEL (m->from_app) found nothing
 * (or, with ALL/ANY, counted local) in this process on a ring shared
 * across fork: ask the peers that use the ring (the parent, which
 * created it; children that said they adopted it) to cancel in theirs,
 * as the kernel's cancel walks every task of the ring.  Only with the
 * service thread running (the answers come through it).  Waits for the
 * answers, CANCEL_REPLY_NS at most, in the submitting call: the kernel's
 * cancel has completed when io_uring_enter returns, and a child that
 * cancels its parent's request and _exits at once relies on that
 * (liburing's io-cancel), so it is not handed to io-wq.
 */
int uu_xlife_cancel(struct uu_ring *r, const struct uu_cancel_match *m,
		    int local)
{
	bool all = m->flags & (IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_ANY);
	struct xmsg ask = { .type = XM_CANCEL,
			    .xs = (uint64_t)(uintptr_t)r->xs,
			    .m = *m, .all = all };
	int slot_of[MAX_LIFELINES], nr_ask = 0, res = local;
	struct timespec until, now;

	struct pollfd pfd[MAX_LIFELINES];
	int n;

	if (!atomic_load_explicit(&svc_running, memory_order_acquire) ||
	    !atomic_load_explicit(&nr_lines, memory_order_relaxed))
		return local;
	/* what the peers said so far, the service thread may not have read
	 * yet: a child's adoption announced just before it submitted the
	 * request we are to cancel */
	n = build_pollset(pfd);
	if (n && poll(pfd, (nfds_t)n, 0) > 0)
		service_pass(pfd, n);
	pthread_mutex_lock(&lines_lock);
	for (int i = 0; i < atomic_load(&nr_lines); i++) {
		bool uses = lines[i].to_parent;
		int slot = -1;

		for (unsigned int k = 0; k < lines[i].nr_adopted && !uses; k++)
			uses = lines[i].adopted[k] == ask.xs;
		if (!uses)
			continue;
		ask.seq = atomic_fetch_add(&next_seq, 1);
		for (int k = 0; k < MAX_REPLIES && slot < 0; k++) {
			uint64_t free_seq = 0;

			if (atomic_compare_exchange_strong(&replies[k].seq,
							   &free_seq, ask.seq))
				slot = k;
		}
		if (slot < 0)
			break; /* more asks at once than any program makes */
		atomic_store(&replies[slot].done, 0);
		if (!send_msg(lines[i].fd, &ask)) {
			atomic_store(&replies[slot].seq, 0);
			continue;
		}
		slot_of[nr_ask++] = slot;
	}
	pthread_mutex_unlock(&lines_lock);

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += CANCEL_REPLY_NS;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	for (int i = 0; i < nr_ask; i++) {
		struct reply_slot *rs = &replies[slot_of[i]];

		while (!atomic_load_explicit(&rs->done, memory_order_acquire)) {
			struct timespec rel;

			clock_gettime(CLOCK_MONOTONIC, &now);
			rel.tv_sec = until.tv_sec - now.tv_sec;
			rel.tv_nsec = until.tv_nsec - now.tv_nsec;
			if (rel.tv_nsec < 0) {
				rel.tv_sec--;
				rel.tv_nsec += 1000000000L;
			}
			if (rel.tv_sec < 0)
				break; /* no answer: as if not found there */
			syscall(SYS_futex, &rs->done, FUTEX_WAIT_PRIVATE, 0,
				&rel, NULL, 0);
		}
		if (atomic_load_explicit(&rs->done, memory_order_acquire)) {
			if (all)
				res += rs->val > 0 ? rs->val : 0;
			else if (res == -ENOENT)
				res = rs->val;
		}
		atomic_store_explicit(&rs->seq, 0, memory_order_release);
	}
	return res;
}

/* ---- the service thread ---- */

/*
 * Read what a lifeline holds; lines_lock held.  Returns false when the
 * peer is gone (then *dead and *graceful say who and how).
 */
static bool drain_line(struct lifeline *l, int *asks_fd, struct xmsg *asks,
		       int *nr_asks)
{
	for (;;) {
		struct xmsg m;
		ssize_t got = recv(l->fd, &m, sizeof(m), MSG_DONTWAIT);

		if (got == 0)
			return false;
		/* a peer that closed with our messages unread in its end
		 * (a child that exited before its service thread read our
		 * pid) makes the first recv fail ECONNRESET once; what it
		 * sent before it closed (its goodbye) is still queued */
		if (got < 0 && errno == ECONNRESET)
			continue;
		if (got < 0)
			return errno == EAGAIN || errno == EINTR;
		if (got != (ssize_t)sizeof(m))
			continue;
		switch (m.type) {
		case XM_PID:
			l->peer = m.val;
			break;
		case XM_BYE:
			l->graceful = true;
			break;
		case XM_ADOPT:
			if (l->nr_adopted < MAX_ADOPTED)
				l->adopted[l->nr_adopted++] = m.xs;
			break;
		case XM_CANCEL:
			/* answered after lines_lock is dropped */
			if (*nr_asks < MAX_LIFELINES) {
				asks_fd[*nr_asks] = l->fd;
				asks[(*nr_asks)++] = m;
			}
			break;
		case XM_REPLY:
			deliver_reply(&m);
			break;
		}
	}
}

/*
 * One pass over the lifelines that poll(2) reported: messages are taken,
 * cancels answered, and for each peer that hung up its orphans posted.
 */
static void service_pass(struct pollfd *pfd, int n)
{
	pid_t dead[MAX_LIFELINES];
	bool graceful[MAX_LIFELINES];
	int asks_fd[MAX_LIFELINES], nr_asks = 0, nr_dead = 0;
	struct xmsg asks[MAX_LIFELINES];

	pthread_mutex_lock(&lines_lock);
	for (int i = 0; i < n; i++) {
		int k, nl = atomic_load(&nr_lines);

		if (!pfd[i].revents)
			continue;
		for (k = 0; k < nl && lines[k].fd != pfd[i].fd; k++)
			;
		if (k == nl)
			continue; /* removed meanwhile */
		if (drain_line(&lines[k], asks_fd, asks, &nr_asks) &&
		    !(pfd[i].revents & (POLLERR | POLLNVAL)))
			continue;
		if (lines[k].peer) {
			dead[nr_dead] = lines[k].peer;
			graceful[nr_dead++] = lines[k].graceful;
		}
		uu_sys_close(lines[k].fd);
		lines[k] = lines[nl - 1];
		atomic_store(&nr_lines, nl - 1);
	}
	pthread_mutex_unlock(&lines_lock);
	for (int i = 0; i < nr_asks; i++)
		answer_cancel(asks_fd[i], &asks[i]);
	for (int i = 0; i < nr_dead; i++) {
		struct orphans_of o = { dead[i], graceful[i] };

		uu_registry_for_each_arg(post_orphans_each, &o);
	}
}

static int build_pollset(struct pollfd *pfd)
{
	int n;

	pthread_mutex_lock(&lines_lock);
	n = atomic_load(&nr_lines);
	for (int i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = lines[i].fd, .events = POLLIN };
	pthread_mutex_unlock(&lines_lock);
	return n;
}

static void *svc_main(void *arg)
{
	struct pollfd pfd[MAX_LIFELINES + 1];

	(void)arg;
	uu_tctx.engine_thread = true;
	pthread_setname_np(pthread_self(), "uuring-xproc");
	uu_thread_ready();
	for (;;) {
		int n = build_pollset(pfd);
		int64_t next = fire_due();
		struct timespec ts = { next / 1000000000, next % 1000000000 };

		pfd[n] = (struct pollfd){ .fd = svc_kick, .events = POLLIN };
		if (ppoll(pfd, (nfds_t)n + 1, next < 0 ? NULL : &ts, NULL) < 0)
			continue;
		if (pfd[n].revents & POLLIN) {
			uint64_t v;

			if (read(svc_kick, &v, sizeof(v)) < 0) {
			}
		}
		service_pass(pfd, n);
	}
	return NULL;
}

/* Once per process, when it has a lifeline that matters (a parent at
 * fork, a child at its first use of an inherited ring). */
static void svc_start(void)
{
	static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;

	if (atomic_load_explicit(&svc_running, memory_order_acquire))
		return;
	pthread_mutex_lock(&start_lock);
	if (atomic_load(&svc_running))
		goto out;
	if (svc_kick < 0) {
		int fd = uu_engine_eventfd(EFD_CLOEXEC | EFD_NONBLOCK);

		if (fd < 0)
			goto out;
		svc_kick = uu_fd_to_reserved(fd);
	}
	if (!uu_thread_start(svc_main, NULL))
		atomic_store_explicit(&svc_running, true, memory_order_release);
out:
	pthread_mutex_unlock(&start_lock);
}

/*
 * A waiter of a shared ring, where no service thread could be started:
 * has a peer process gone?  One poll(2) of the lifelines, handled as the
 * service thread would.
 */
void uu_xlife_check(void)
{
	struct pollfd pfd[MAX_LIFELINES];
	int n;

	if (atomic_load_explicit(&svc_running, memory_order_acquire))
		return;
	fire_due();
	if (!atomic_load_explicit(&nr_lines, memory_order_relaxed))
		return;
	n = build_pollset(pfd);
	if (poll(pfd, (nfds_t)n, 0) > 0)
		service_pass(pfd, n);
}

/*
 * The exit handler (xproc/xproc.c), after this process cancelled its
 * requests and posted their CQEs: what it leaves in the journal are
 * TIMEOUTs the kernel would leave armed; tell the peers.
 */
void uu_xlife_goodbye(void)
{
	struct xmsg bye = { .type = XM_BYE };

	pthread_mutex_lock(&lines_lock);
	for (int i = 0; i < atomic_load(&nr_lines); i++)
		if (!send_msg(lines[i].fd, &bye)) {
			/* the peer is gone itself: nothing to tell */
		}
	pthread_mutex_unlock(&lines_lock);
}
