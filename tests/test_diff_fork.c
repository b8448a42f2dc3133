// SPDX-License-Identifier: MIT
/*
 * Differential tests: one ring used by a parent and its forked child
 * (xproc/xproc.c), the way liburing's across-fork and single-issuer tests
 * use it.  The child sees the parent's CQEs and submits with its own
 * files; the parent reaps the child's CQEs; a waiter of one process is
 * woken by the other's post; the parent's SQPOLL thread serves the
 * child's SQEs; a SINGLE_ISSUER ring enabled by the child is the
 * child's; a child that exits with a request in flight has it cancelled.
 *
 * The child reports what it saw in its exit status (a bit per check, 0 =
 * all as expected), recorded by the parent and compared as any value.
 * The test ring's private SQ bookkeeping (struct tring) is a per-process
 * copy, so the parent re-reads the SQ tail after the child submitted.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"

#define SEC 1000000000LL
#define MS 1000000LL

/* the parent's view of the SQ after the child published SQEs */
static void sq_resync(struct tring *r)
{
	r->sqe_head = r->sqe_tail = __atomic_load_n(r->sq_tail,
						    __ATOMIC_ACQUIRE);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * MS };

	nanosleep(&ts, NULL);
}

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * SEC + t.tv_nsec;
}

static int child_status(pid_t pid)
{
	int st = -1;

	if (pid <= 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

/* Takes one CQE if there is one within ms: 1 if it is (ud, res). */
static int take(struct tring *r, uint64_t ud, int32_t res, int64_t ms)
{
	struct io_uring_cqe *cqe;
	int ok;

	/* on an SQPOLL ring enter answers the SQEs still in the SQ (not
	 * taken by the thread yet): only an error says no wait happened */
	if (tring_wait(r, 1, ms * MS) < 0)
		return 0;
	cqe = tring_peek_cqe(r);
	if (!cqe)
		return 0;
	ok = cqe->user_data == ud && cqe->res == res;
	tring_cq_advance(r, 1);
	return ok;
}

/* A NOP submitted with submit() and reaped: 0, or bit 1 (submit) and
 * bit 2 (reap) for what went wrong. */
static int nop_and_take(struct tring *r, uint64_t ud,
			int (*submit)(struct tring *r))
{
	int bad = 0;

	tring_prep_nop(tring_get_sqe(r), ud);
	if (submit(r) != 1)
		bad |= 1;
	if (!take(r, ud, 0, 2000))
		bad |= 2;
	return bad;
}

/*
 * liburing's across-fork: a CQE posted before the fork is reaped by the
 * child; the child writes through an fd the parent does not have and
 * through one both have; the parent reaps the child's CQEs after it
 * exited.
 */
static void sc_shared_submit(struct dctx *c)
{
	struct tring r;
	char buf[16] = { 0 };
	int p[2], q[2], st;
	pid_t pid;

	if (dring_flags(c, &r, 16, 0))
		return;
	/* non-blocking: where the child cannot submit (a DEFER_TASKRUN
	 * ring, whose owner is the parent) the reads find nothing */
	if (pipe2(p, O_NONBLOCK) || pipe(q))
		return;
	tring_prep_nop(tring_get_sqe(&r), 1);
	drec_int(c, tring_submit(&r), "parent: nop before the fork");
	tring_sqpoll_await_cqes(&r, 1, 2000);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int bad = 0, cp[2];

		/* an fd number the parent has no file behind */
		if (pipe2(cp, O_NONBLOCK))
			_exit(64);
		close(q[1]);
		if (!take(&r, 1, 0, 2000))
			bad |= 1;
		tprep(&r, IORING_OP_WRITE, cp[1], "child", 5, 0, 2, 0);
		tprep(&r, IORING_OP_WRITE, p[1], "shared", 6, 0, 3, 0);
		if (tring_submit(&r) != 2)
			bad |= 2;
		for (int i = 0; i < 2; i++) {
			struct io_uring_cqe *cqe;

			if (tring_wait(&r, 1, 2 * SEC) < 0 ||
			    !(cqe = tring_peek_cqe(&r))) {
				bad |= 4;
				break;
			}
			if (!((cqe->user_data == 2 && cqe->res == 5) ||
			      (cqe->user_data == 3 && cqe->res == 6)))
				bad |= 8;
			tring_cq_advance(&r, 1);
		}
		if (read(cp[0], buf, sizeof(buf)) != 5 ||
		    memcmp(buf, "child", 5))
			bad |= 16;
		/* left for the parent to reap */
		tring_prep_nop(tring_get_sqe(&r), 4);
		tprep(&r, IORING_OP_WRITE, p[1], "late", 4, 0, 5, 0);
		if (tring_submit(&r) != 2)
			bad |= 32;
		_exit(bad);
	}
	st = child_status(pid);
	drec_int(c, st, "child: reaped, wrote, submitted (0 = as expected)");
	sq_resync(&r);
	dreap(c, &r, 2, false, "parent: the child's last CQEs");
	drec_int(c, (int)read(p[0], buf, sizeof(buf)),
		 "parent: bytes the child wrote to the shared pipe");
	drec_int(c, memcmp(buf, "sharedlate", 10) == 0, "in order");
	/* and the parent goes on */
	tring_prep_nop(tring_get_sqe(&r), 6);
	drec_int(c, tring_submit(&r), "parent: nop after the child");
	dreap(c, &r, 1, true, "parent: its nop");
	tclose2(p);
	tclose2(q);
	tring_exit(&r);
}

/* A parent asleep in enter(GETEVENTS) is woken by the child's CQE. */
static void sc_wake_parent(struct dctx *c)
{
	struct tring r;
	int64_t t0, dt;
	pid_t pid;

	if (dring_flags(c, &r, 16, 0))
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		sleep_ms(50);
		tring_prep_nop(tring_get_sqe(&r), 7);
		_exit(tring_submit(&r) == 1 ? 0 : 1);
	}
	t0 = now_ns();
	drec_int(c, tring_wait(&r, 1, 3 * SEC), "parent: wait for the child's CQE");
	dt = now_ns() - t0;
	drec_int(c, dt < 2 * SEC, "parent woken well before its timeout");
	dreap(c, &r, 1, true, "parent: the child's nop");
	drec_int(c, child_status(pid), "child: submitted");
	tring_exit(&r);
}

struct early_waiter {
	struct tring *r;
	int ret;
	int64_t ns;
};

static void *early_wait(void *arg)
{
	struct early_waiter *e = arg;
	int64_t t0 = now_ns();

	e->ret = tring_wait(e->r, 1, 3 * SEC);
	e->ns = now_ns() - t0;
	return NULL;
}

/*
 * A ring for a scenario in which another thread or process submits or
 * waits: not a DEFER_TASKRUN one, where SINGLE_ISSUER refuses them
 * (-EEXIST at once, on both backends).  0 if the scenario goes on.
 */
static int ring_not_defer(struct dctx *c, struct tring *r)
{
	if (dring_flags(c, r, 16, 0))
		return -1;
	if (r->p.flags & IORING_SETUP_DEFER_TASKRUN) {
		dnote(c, "DEFER_TASKRUN ring: not this scenario");
		tring_exit(r);
		return -1;
	}
	return 0;
}

/*
 * A parent thread asleep in enter(GETEVENTS) since before the fork is
 * woken by the CQE of the child (which the fork and the child's first use
 * of the ring happen under).
 */
static void sc_wake_early_waiter(struct dctx *c)
{
	struct early_waiter e = { 0 };
	struct tring r;
	pthread_t th;
	pid_t pid;

	if (ring_not_defer(c, &r))
		return;
	e.r = &r;
	pthread_create(&th, NULL, early_wait, &e);
	sleep_ms(50); /* it sleeps */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		sleep_ms(30);
		tring_prep_nop(tring_get_sqe(&r), 18);
		_exit(tring_submit(&r) == 1 ? 0 : 1);
	}
	pthread_join(th, NULL);
	drec_int(c, e.ret, "parent thread: wait for the child's CQE");
	drec_int(c, e.ns < 2 * SEC, "woken well before its timeout");
	dreap(c, &r, 1, true, "parent: the child's nop");
	drec_int(c, child_status(pid), "child: submitted");
	tring_exit(&r);
}

/*
 * A child asleep in enter(GETEVENTS) is woken by the parent's CQE; the
 * child's wait began before the parent's post (the parent waits for the
 * child to be in the kernel's wait first, then 50 ms more).
 */
static void sc_wake_child(struct dctx *c)
{
	struct tring r;
	int st;
	pid_t pid;

	if (dring_flags(c, &r, 16, 0))
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (!take(&r, 8, 0, 3000))
			_exit(1);
		_exit(0);
	}
	sleep_ms(100);
	tring_prep_nop(tring_get_sqe(&r), 8);
	drec_int(c, tring_submit(&r), "parent: nop for the waiting child");
	st = child_status(pid);
	drec_int(c, st, "child: woken by the parent's CQE (0)");
	tring_exit(&r);
}

/*
 * A child that exits (exit(3)) with a read pending on an empty pipe and a
 * 10 s TIMEOUT linked to a NOP: its read is cancelled at its exit and the
 * parent reaps it, -ECANCELED, as the kernel cancels an exiting task's
 * requests; the TIMEOUT is not (the kernel cancels those at exec only).
 */
static void sc_exit_cancels(struct dctx *c)
{
	struct __kernel_timespec ts = { 10, 0 };
	struct tring r;
	char buf[8];
	int p[2];
	pid_t pid;

	if (dring_flags(c, &r, 16, 0))
		return;
	if (pipe(p))
		return;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		int cp[2];

		if (pipe(cp))
			_exit(64);
		tprep(&r, IORING_OP_READ, cp[0], buf, sizeof(buf), 0, 9, 0);
		/* liburing's timeout, test_timeout_link_cancel (which execs) */
		tprep(&r, IORING_OP_TIMEOUT, -1, &ts, 1, 0, 16, IOSQE_IO_LINK);
		tring_prep_nop(tring_get_sqe(&r), 17);
		if (tring_submit(&r) != 3)
			_exit(1);
		sleep_ms(20);
		exit(0);
	}
	drec_int(c, child_status(pid), "child: submitted a read, exited");
	sq_resync(&r);
	/* the kernel cancels the read (not the TIMEOUT: that only at exec,
	 * which liburing's timeout test does) */
	dreap(c, &r, 1, false, "parent: the child's read, cancelled at its exit");
	tclose2(p);
	tring_exit(&r);
}

/*
 * A child that exits (exit(3)) with TIMEOUTs armed: the kernel keeps them
 * in the ring, they expire later with -ETIME (see below for the order),
 * and what is linked behind one is cancelled then.  uuring's parent takes them over
 * from the journal when the child has said goodbye (xproc/xlife.c).
 */
static void sc_exit_timeouts_fire(struct dctx *c)
{
	/* beyond the second uuring's exit handler waits for requests,
	 * with a margin for a slow exit */
	struct __kernel_timespec late = { 2, 400000000 };
	struct __kernel_timespec early = { 2, 200000000 };
	unsigned int n, at31 = 3, at32 = 3;
	struct tcqe q[3];
	struct tring r;
	pid_t pid;

	if (ring_not_defer(c, &r))
		return;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		tprep(&r, IORING_OP_TIMEOUT, -1, &late, 1, 0, 31, IOSQE_IO_LINK);
		tring_prep_nop(tring_get_sqe(&r), 32);
		tprep(&r, IORING_OP_TIMEOUT, -1, &early, 1, 0, 33, 0);
		if (tring_submit(&r) != 3)
			_exit(1);
		exit(0);
	}
	drec_int(c, child_status(pid), "child: armed two TIMEOUTs, exited");
	sq_resync(&r);
	drec_int(c, (int)tring_cq_ready(&r), "parent: no CQE at the exit");
	/*
	 * The CQEs come 2.2 and 2.4 s after the child armed the TIMEOUTs:
	 * waited for as such, not for a second each as dreap would.  Not
	 * compared in order: their submitter has exited, so the kernel
	 * completes them through the ring's fallback work, which runs what
	 * it gathered last first; when that work is late by more than the
	 * 200 ms between the expiries (a loaded machine), 31 comes before
	 * 33.  What holds is that the NOP's cancel follows its TIMEOUT.
	 */
	n = tring_reap_wait(&r, q, 3, 5 * SEC);
	drec_cqes(c, q, n, false,
		  "parent: the TIMEOUTs expire, the NOP is cancelled");
	for (unsigned int i = 0; i < n; i++) {
		if (q[i].user_data == 31)
			at31 = i;
		if (q[i].user_data == 32)
			at32 = i;
	}
	drec_int(c, at31 < at32, "the NOP's CQE after its TIMEOUT's");
	tring_exit(&r);
}

/*
 * The child ends without its exit handler: by _exit, by SIGKILL, or by an
 * exec through the API.  The kernel cancels its requests however it ends
 * (the TIMEOUT and what is linked behind it only at exec); uuring's
 * survivor posts them from the shared journal when the child's lifeline
 * hangs up (xproc/xlife.c).
 */
enum abrupt_end { END_UNDERSCORE_EXIT, END_SIGKILL, END_EXEC };

static void abrupt_child(struct tring *r, enum abrupt_end how)
{
	struct __kernel_timespec ts = { 10, 0 };
	char buf[8];
	int cp[2];

	if (pipe(cp))
		_exit(64);
	tprep(r, IORING_OP_READ, cp[0], buf, sizeof(buf), 0, 9, 0);
	/* a TIMEOUT only where the kernel cancels it: at exec (at exit it
	 * stays armed; uuring then cancels it, compatibility #2) */
	if (how == END_EXEC) {
		tprep(r, IORING_OP_TIMEOUT, -1, &ts, 1, 0, 16, IOSQE_IO_LINK);
		tring_prep_nop(tring_get_sqe(r), 17);
	}
	if (tring_submit(r) != (how == END_EXEC ? 3 : 1))
		_exit(1);
	sleep_ms(20);
	switch (how) {
	case END_UNDERSCORE_EXIT:
		_exit(0);
	case END_SIGKILL:
		raise(SIGKILL);
		_exit(2);
	case END_EXEC:
		execl("/bin/true", "true", (char *)NULL);
		_exit(3);
	}
}

static void abrupt_end(struct dctx *c, enum abrupt_end how, const char *what,
		       unsigned int cqes, const char *reap_what)
{
	struct tring r;
	pid_t pid;

	if (dring_flags(c, &r, 16, 0))
		return;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0)
		abrupt_child(&r, how);
	drec_int(c, child_status(pid), "%s", what);
	sq_resync(&r);
	dreap(c, &r, cqes, false, reap_what);
	tring_exit(&r);
}

static void sc_underscore_exit_cancels(struct dctx *c)
{
	abrupt_end(c, END_UNDERSCORE_EXIT, "child: submitted a read, _exit",
		   1, "parent: the child's read, cancelled at its _exit");
}

static void sc_kill_cancels(struct dctx *c)
{
	abrupt_end(c, END_SIGKILL, "child: submitted a read, SIGKILL",
		   1, "parent: the child's read, cancelled at its death");
}

/* liburing's timeout, test_timeout_link_cancel */
static void sc_exec_cancels(struct dctx *c)
{
	abrupt_end(c, END_EXEC, "child: submitted a read, a TIMEOUT, exec",
		   3, "parent: all three, cancelled at the child's exec");
}

/*
 * A child killed (SIGKILL) at a random moment while it submits and reaps
 * in a loop, twenty times: the ring must stay usable by the parent each
 * time.  The kernel's has no lock a process could take with it; uuring's
 * SQ and CQ locks are shared by the processes, and a child killed while it
 * holds one used to leave it locked for good (now robust mutexes: the
 * next locker takes it over, core/types.h uu_shared_lock).  Only the
 * parent's own NOP is compared: what else is in the CQ (the child's
 * unreaped CQEs, its cancelled requests) depends on the moment.
 */
#define KILL_ROUNDS 20

static long body_kill_in_lock(struct dctx *c, void *arg)
{
	struct tring r;
	long ok = 0;

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return -1;
	if (r.p.flags & IORING_SETUP_DEFER_TASKRUN) {
		tring_exit(&r);
		return KILL_ROUNDS; /* the child cannot submit there */
	}
	for (int i = 0; i < KILL_ROUNDS; i++) {
		int64_t deadline;
		bool found = false;
		pid_t pid;

		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (pid == 0) {
			/* never outlive a parent that hung (and was killed) */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;) {
				struct io_uring_sqe *sqe;
				unsigned int n = 0;

				while (n < 8 && (sqe = tring_get_sqe(&r))) {
					tring_prep_nop(sqe, 1000 + n);
					n++;
				}
				tring_submit(&r);
				tring_cq_advance(&r, tring_cq_ready(&r));
			}
		}
		/* 1 to 6 ms in: somewhere in the loop */
		sleep_ms(1 + (i * 7) % 6);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		sq_resync(&r);
		tring_cq_advance(&r, tring_cq_ready(&r));
		tring_prep_nop(tring_get_sqe(&r), 7);
		tring_submit(&r);
		deadline = now_ns() + 2000 * MS;
		while (!found && now_ns() < deadline) {
			struct tcqe q[32];
			unsigned int n = tring_reap_wait(&r, q, 32, 100 * MS);

			for (unsigned int k = 0; k < n; k++)
				found |= q[k].user_data == 7;
		}
		ok += found;
	}
	tring_exit(&r);
	return ok;
}

static void sc_kill_in_lock(struct dctx *c)
{
	drec_int(c, (int)disolated(c, body_kill_in_lock, NULL, 8000),
		 "rounds in which the parent's NOP completed after the kill");
}

/*
 * A cancel in one process finds the other's request (the kernel's cancel
 * walks every task of the ring; uuring forwards it over the lifeline to
 * the other process's engine, xproc/xlife.c).  liburing's io-cancel,
 * test_cancel_req_across_fork, is the first case.
 */
static void sc_cancel_parents_req(struct dctx *c)
{
	struct tring r;
	char buf[8];
	int p[2];
	pid_t pid;

	if (ring_not_defer(c, &r))
		return;
	if (pipe(p))
		return;
	tprep(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 1, 0);
	drec_int(c, tring_submit(&r), "parent: read on an empty pipe");
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		tprep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 2, 0)->addr = 1;
		_exit(tring_submit(&r) == 1 ? 0 : 1);
	}
	drec_int(c, child_status(pid), "child: cancelled the parent's read");
	sq_resync(&r);
	dreap(c, &r, 2, false, "the cancel and the parent's read");
	tclose2(p);
	tring_exit(&r);
}

/*
 * A child that submits a READ (user_data ud) on an empty pipe of its own
 * and stays alive until release_child: the parent's cancels find it in
 * the other process.  0 once the child has submitted, else -1 (recorded).
 */
struct held_child {
	pid_t pid;
	int sync[2], go[2];
};

static int child_with_read(struct dctx *c, struct tring *r, uint64_t ud,
			   struct held_child *h)
{
	char b = 0;

	if (pipe(h->sync))
		return -1;
	if (pipe(h->go)) {
		tclose2(h->sync);
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	h->pid = fork();
	if (h->pid == 0) {
		char buf[8];
		int cp[2];

		if (pipe(cp))
			_exit(64);
		tprep(r, IORING_OP_READ, cp[0], buf, sizeof(buf), 0, ud, 0);
		if (tring_submit(r) != 1 || write(h->sync[1], &b, 1) != 1)
			_exit(1);
		/* alive until the parent has cancelled and reaped */
		if (read(h->go[0], &b, 1) != 1)
			_exit(2);
		_exit(0);
	}
	close(h->sync[1]); /* a child that fails ends the read below */
	h->sync[1] = -1;
	if (read(h->sync[0], &b, 1) != 1) {
		drec_int(c, child_status(h->pid), "child: failed");
		return -1;
	}
	sq_resync(r);
	return 0;
}

static void release_child(struct dctx *c, struct held_child *h)
{
	char b = 0;

	if (write(h->go[1], &b, 1) == 1)
		drec_int(c, child_status(h->pid), "child: exited");
	tclose2(h->sync);
	tclose2(h->go);
}

static void sc_cancel_childs_req(struct dctx *c)
{
	struct held_child h;
	struct tring r;

	if (ring_not_defer(c, &r))
		return;
	if (child_with_read(c, &r, 5, &h))
		return;
	tprep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 6, 0)->addr = 5;
	drec_int(c, tring_submit(&r), "parent: cancel of the child's read");
	dreap(c, &r, 2, false, "the cancel and the child's read");
	release_child(c, &h);
	tring_exit(&r);
}

/* REGISTER_SYNC_CANCEL of user_data ud on r: its result */
static int sync_cancel_ud(struct tring *r, uint64_t ud)
{
	struct io_uring_sync_cancel_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.addr = ud;
	reg.timeout.tv_sec = -1;
	reg.timeout.tv_nsec = -1;
	return r->be->reg((unsigned int)r->fd, IORING_REGISTER_SYNC_CANCEL,
			  &reg, 1);
}

/*
 * REGISTER_SYNC_CANCEL across fork, both ways: it finds the other
 * process's request (uuring: forwarded like ASYNC_CANCEL, and the peer
 * waits for what it cancelled before it answers); once that request's
 * CQE is reaped, a second call finds nothing.  (Not asked in the child
 * right after its first: the kernel's cancelled poll stays findable
 * until the parent's task_work runs, so the answer there is a race.)
 */
static void sc_sync_cancel_parents_req(struct dctx *c)
{
	struct tring r;
	char buf[8];
	int p[2], res[2];
	pid_t pid;

	if (ring_not_defer(c, &r))
		return;
	if (pipe(p))
		return;
	if (pipe(res)) {
		tclose2(p);
		return;
	}
	tprep(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 21, 0);
	drec_int(c, tring_submit(&r), "parent: read on an empty pipe");
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		int v = sync_cancel_ud(&r, 21);

		_exit(write(res[1], &v, sizeof(v)) == sizeof(v) ? 0 : 1);
	}
	drec_int(c, child_status(pid), "child: sync cancel");
	{
		int v = 999;

		if (read(res[0], &v, sizeof(v)) != sizeof(v))
			v = 999;
		drec_int(c, v, "child: sync cancel of the parent's read");
	}
	sq_resync(&r);
	dreap(c, &r, 1, true, "the parent's read, cancelled");
	tclose2(p);
	tclose2(res);
	tring_exit(&r);
}

static void sc_sync_cancel_childs_req(struct dctx *c)
{
	struct held_child h;
	struct tring r;

	if (ring_not_defer(c, &r))
		return;
	if (child_with_read(c, &r, 25, &h))
		return;
	drec_int(c, sync_cancel_ud(&r, 25), "parent: sync cancel of the child's read");
	dreap(c, &r, 1, true, "the child's read, cancelled");
	drec_int(c, sync_cancel_ud(&r, 25), "parent: sync cancel again");
	release_child(c, &h);
	tring_exit(&r);
}

/*
 * liburing's single-issuer: a SINGLE_ISSUER ring set up disabled is
 * enabled by the child, which becomes its owner: the child submits, the
 * parent then gets -EEXIST.
 */
static void sc_single_issuer_enable(struct dctx *c)
{
	struct io_uring_params p;
	struct tring r;
	pid_t pid;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_R_DISABLED;
	if (dring(c, &r, 8, &p, "setup"))
		return;
	if (r.p.flags & (IORING_SETUP_SQPOLL | IORING_SETUP_DEFER_TASKRUN)) {
		dnote(c, "ring mode adds SQPOLL or DEFER_TASKRUN: not this scenario");
		tring_exit(&r);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int bad = 0;

		if (c->be->reg((unsigned int)r.fd, IORING_REGISTER_ENABLE_RINGS,
			       NULL, 0))
			bad |= 1;
		bad |= nop_and_take(&r, 10, tring_submit) << 1;
		_exit(bad);
	}
	drec_int(c, child_status(pid), "child: enabled, submitted, reaped (0)");
	sq_resync(&r);
	tring_prep_nop(tring_get_sqe(&r), 11);
	drec_int(c, tring_submit(&r), "parent: submit on the child's ring");
	sq_resync(&r);
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_PROBE, NULL,
			       0),
		 "parent: register on the child's ring");
	tring_exit(&r);
}

/* Publishes the SQEs and enters as liburing does on an SQPOLL ring:
 * with IORING_ENTER_SQ_WAKEUP when the thread sleeps. */
static int sq_submit(struct tring *r)
{
	unsigned int tail0 = *r->sq_tail, n;

	tring_flush(r);
	n = *r->sq_tail - tail0;
	return r->be->enter((unsigned int)r->enter_fd, n, 0,
			    tring_sqpoll_wakeup_flag(r, n) | r->enter_flags,
			    NULL, 0);
}

/* The parent's SQPOLL thread takes the child's SQEs (liburing's
 * single-issuer, SQPOLL part). */
static void sc_sqpoll(struct dctx *c)
{
	struct io_uring_params p;
	struct tring r;
	pid_t pid;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SINGLE_ISSUER;
	p.sq_thread_idle = 20;
	if (dring(c, &r, 8, &p, "setup"))
		return;
	tring_prep_nop(tring_get_sqe(&r), 12);
	drec_int(c, sq_submit(&r), "parent: nop");
	dreap(c, &r, 1, true, "parent: its nop");
	sleep_ms(100); /* the SQ thread is asleep now */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int bad = nop_and_take(&r, 13, sq_submit);

		/* and while the thread spins */
		bad |= nop_and_take(&r, 14, sq_submit) << 2;
		_exit(bad);
	}
	drec_int(c, child_status(pid), "child: two nops through the SQ thread (0)");
	sq_resync(&r);
	tring_prep_nop(tring_get_sqe(&r), 15);
	drec_int(c, sq_submit(&r), "parent: nop after the child");
	dreap(c, &r, 1, true, "parent: its nop");
	tring_exit(&r);
}

static const struct dscenario scenarios[] = {
	{ "fork_shared_submit", sc_shared_submit, NULL, NULL },
	{ "fork_wake_parent", sc_wake_parent, NULL, NULL },
	{ "fork_wake_child", sc_wake_child, NULL, NULL },
	{ "fork_wake_early_waiter", sc_wake_early_waiter, NULL, NULL },
	{ "fork_exit_cancels", sc_exit_cancels, NULL, NULL },
	{ "fork_exit_timeouts_fire", sc_exit_timeouts_fire, NULL, NULL },
	{ "fork_underscore_exit_cancels", sc_underscore_exit_cancels, NULL, NULL },
	{ "fork_kill_cancels", sc_kill_cancels, NULL, NULL },
	{ "fork_exec_cancels", sc_exec_cancels, NULL, NULL },
	{ "fork_kill_in_lock", sc_kill_in_lock, NULL, NULL },
	{ "fork_cancel_parents_req", sc_cancel_parents_req, NULL, NULL },
	{ "fork_cancel_childs_req", sc_cancel_childs_req, NULL, NULL },
	{ "fork_sync_cancel_parents_req", sc_sync_cancel_parents_req, NULL, NULL },
	{ "fork_sync_cancel_childs_req", sc_sync_cancel_childs_req, NULL, NULL },
	{ "fork_single_issuer_enable", sc_single_issuer_enable, NULL, NULL },
	{ "fork_sqpoll", sc_sqpoll, NULL, NULL },
};

DTEST_MAIN(scenarios)
