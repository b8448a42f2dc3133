// SPDX-License-Identifier: MIT
/*
 * Differential tests: IORING_OP_POLL_ADD and IORING_OP_POLL_REMOVE.
 * One-shot polls on pipes, sockets and eventfds; files without a poll
 * method (regular files, directories, /dev/null) which complete at once
 * with the default mask where epoll would refuse them (T16); multishot
 * polls (one CQE per wakeup with IORING_CQE_F_MORE, ended by a CQE
 * without it, also when the CQ overflows: T14); POLL_REMOVE (cancel, not
 * found, update of events and user_data); the prep error paths; polls in
 * links and under drain; both ends of one pipe polled at once.
 *
 * Every scenario body runs isolated (disolated) with a time limit.  The
 * CQE order of one multishot request is compared (the kernel defines it);
 * otherwise unrelated completions are compared as multisets.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"
#include "uuring.h"

#define LIMIT_MS 4000
#define SEC 1000000000LL
#define MS 1000000LL

static struct io_uring_sqe *poll_add(struct tring *r, int fd,
				     uint32_t events, uint32_t flags,
				     uint64_t ud, uint8_t sqe_flags)
{
	struct io_uring_sqe *s = tprep(r, IORING_OP_POLL_ADD, fd, NULL, flags,
				       0, ud, sqe_flags);

	s->poll32_events = events;
	return s;
}

static struct io_uring_sqe *poll_remove(struct tring *r, uint64_t target,
					uint32_t flags, uint64_t new_ud,
					uint32_t events, uint64_t ud)
{
	struct io_uring_sqe *s = tprep(r, IORING_OP_POLL_REMOVE, -1, NULL,
				       flags, new_ud, ud, 0);

	s->addr = target;
	s->poll32_events = events;
	return s;
}

/*
 * enter(GETEVENTS, min_complete 0): on a DEFER_TASKRUN ring the submitter
 * runs its task_work here (a wakeup's CQE is posted only then); on other
 * rings it does nothing.
 */
static int run_tw(struct tring *r)
{
	return tring_enter(r, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0);
}

/*
 * On a DEFER_TASKRUN ring with TASKRUN_FLAG: waits until a wakeup has
 * been queued as task_work (IORING_SQ_TASKRUN set).  The kernel queues it
 * inside the write(2) that wakes the poll; uuring's poller thread does it
 * when it gets to run, which a loaded machine can delay past any fixed
 * sleep, and a wakeup it takes only after the data was drained is no
 * wakeup at all.  Bounded by the body's own limit (LIMIT_MS).
 */
static void await_taskrun(struct tring *r)
{
	for (int i = 0; i < LIMIT_MS &&
	     !(tring_sq_flags(r) & IORING_SQ_TASKRUN); i++)
		usleep(1000);
}

#define ISOLATED(sc, body) DISOLATED_SCENARIO(sc, body, LIMIT_MS)

/* ---- one-shot polls ---- */

/*
 * POLL_ADD on another ring's fd whose CQ already holds a CQE: ready when
 * it is armed, so it completes before enter returns (dnow), as any file
 * that is ready at arm time; then one armed on that ring's empty CQ
 * completes when a CQE is posted there.
 */
static long body_ring_fd(struct dctx *c, void *arg)
{
	struct tring r, other;
	struct tcqe cqe;

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return 0;
	if (dring_flags(c, &other, 16, 0)) {
		tring_exit(&r);
		return 0;
	}
	tring_prep_nop(tring_get_sqe(&other), 50);
	drec_int(c, tring_submit(&other), "a NOP on the other ring");
	poll_add(&r, other.fd, POLLIN, 0, 1, 0);
	dnow(c, &r, "POLLIN on a ring with a CQE");
	drec_int(c, (int)tring_reap_wait(&other, &cqe, 1, 10000 * MS),
		 "the other ring's CQE");
	/* an empty CQ, seen by an enter: not readable any more */
	drec_int(c, tring_enter(&other, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0),
		 "enter on the other ring");
	poll_add(&r, other.fd, POLLIN, 0, 2, 0);
	dsubmit(c, &r, "POLLIN on a ring with an empty CQ");
	dnone(c, &r, 30, "POLLIN on a ring with an empty CQ");
	tring_prep_nop(tring_get_sqe(&other), 51);
	drec_int(c, tring_submit(&other), "another NOP there");
	dreap1(c, &r, "POLLIN after the other ring's CQE");
	tring_exit(&other);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_ring_fd, body_ring_fd)



static long body_oneshot_pipe(struct dctx *c, void *arg)
{
	struct uuring_stats s0, s1;
	struct tring r;
	char buf[4096];
	int p[2];

	(void)arg;
	signal(SIGPIPE, SIG_IGN);
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	s0 = dstats(c, &r);
	poll_add(&r, p[0], POLLIN, 0, 1, 0);
	dsubmit(c, &r, "POLLIN, empty pipe");
	dnone(c, &r, 30, "POLLIN, empty pipe");
	twrite(p[1], "x", 1);
	dreap1(c, &r, "POLLIN after a write");
	s1 = dstats(c, &r);
	if (!c->is_kernel)
		dcheck(c, s1.route_poll - s0.route_poll >= 1,
		       "a waiting POLL_ADD: route_poll +%llu",
		       (unsigned long long)(s1.route_poll - s0.route_poll));
	poll_add(&r, p[0], POLLIN | POLLRDNORM | POLLOUT, 0, 2, 0);
	dnow(c, &r, "POLLIN|RDNORM|OUT, data waiting");
	poll_add(&r, p[1], POLLOUT | POLLWRNORM, 0, 3, 0);
	dnow(c, &r, "POLLOUT|WRNORM on the write end");
	poll_add(&r, p[1], POLLIN, 0, 4, 0);
	dsubmit(c, &r, "POLLIN on the write end");
	dnone(c, &r, 30, "POLLIN on the write end");
	poll_remove(&r, 4, 0, 0, 0, 5);
	dsubmit(c, &r, "remove it");
	dreapn(c, &r, 2, false, "remove it");
	tdrain_fd(p[0]);

	/* full pipe: POLLOUT waits for a page to be read */
	tfill_pipe(p[1]);
	poll_add(&r, p[1], POLLOUT, 0, 6, 0);
	dsubmit(c, &r, "POLLOUT, full pipe");
	dnone(c, &r, 30, "POLLOUT, full pipe");
	drec_int(c, read(p[0], buf, sizeof(buf)), "read a page");
	dreap1(c, &r, "POLLOUT after a read");
	tdrain_fd(p[0]);

	/* ASYNC poll */
	poll_add(&r, p[0], POLLIN, 0, 7, IOSQE_ASYNC);
	dsubmit(c, &r, "ASYNC POLLIN");
	dnone(c, &r, 30, "ASYNC POLLIN");
	twrite(p[1], "y", 1);
	dreap1(c, &r, "ASYNC POLLIN");
	tdrain_fd(p[0]);

	/* CQE_SKIP_SUCCESS on a one-shot poll: no CQE */
	poll_add(&r, p[0], POLLIN, 0, 8, IOSQE_CQE_SKIP_SUCCESS);
	dsubmit(c, &r, "skip-success POLLIN");
	twrite(p[1], "z", 1);
	dnone(c, &r, 50, "skip-success POLLIN");
	tdrain_fd(p[0]);

	/* the writer closes: POLLHUP, even when not asked for */
	poll_add(&r, p[0], POLLIN, 0, 9, 0);
	poll_add(&r, p[0], 0, 0, 10, 0);
	poll_add(&r, p[0], POLLPRI, 0, 11, 0);
	dsubmit(c, &r, "POLLIN, 0, POLLPRI on the read end");
	dnone(c, &r, 30, "POLLIN, 0, POLLPRI on the read end");
	close(p[1]);
	dreapn(c, &r, 3, false, "writer closed");
	poll_add(&r, p[0], POLLIN | POLLRDHUP, 0, 12, 0);
	dnow(c, &r, "POLLIN|RDHUP on a widowed read end");
	close(p[0]);

	/* the reader closes: POLLERR on the write end */
	if (pipe(p))
		return 0;
	tfill_pipe(p[1]);
	poll_add(&r, p[1], POLLOUT, 0, 13, 0);
	dsubmit(c, &r, "POLLOUT, full pipe");
	dnone(c, &r, 30, "POLLOUT, full pipe");
	close(p[0]);
	dreap1(c, &r, "reader closed");
	poll_add(&r, p[1], POLLIN, 0, 14, 0);
	dnow(c, &r, "POLLIN on a widowed write end");
	close(p[1]);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_oneshot_pipe, body_oneshot_pipe)

static long body_oneshot_other(struct dctx *c, void *arg)
{
	uint64_t one = 1;
	struct tring r;
	int sv[2], efd;

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 0;
	poll_add(&r, sv[0], POLLIN, 0, 1, 0);
	dsubmit(c, &r, "socket POLLIN");
	dnone(c, &r, 30, "socket POLLIN");
	twrite(sv[1], "hi", 2);
	dreap1(c, &r, "socket POLLIN after send");
	poll_add(&r, sv[0], POLLOUT | POLLIN | POLLRDNORM | POLLWRNORM, 0, 2, 0);
	dnow(c, &r, "socket IN|OUT|RDNORM|WRNORM");
	poll_add(&r, sv[1], POLLRDHUP, 0, 3, 0);
	dsubmit(c, &r, "socket POLLRDHUP");
	dnone(c, &r, 30, "socket POLLRDHUP");
	shutdown(sv[0], SHUT_WR);
	dreap1(c, &r, "POLLRDHUP after the peer's SHUT_WR");
	poll_add(&r, sv[1], POLLIN, 0, 4, 0);
	dnow(c, &r, "POLLIN after the peer's SHUT_WR");
	poll_add(&r, sv[0], POLLIN, 0, 5, 0);
	dsubmit(c, &r, "POLLIN, peer closes");
	dnone(c, &r, 30, "POLLIN, peer closes");
	close(sv[1]);
	dreap1(c, &r, "POLLIN, peer closed");
	close(sv[0]);

	efd = eventfd(0, EFD_CLOEXEC);
	poll_add(&r, efd, POLLIN, 0, 6, 0);
	dsubmit(c, &r, "eventfd POLLIN");
	dnone(c, &r, 30, "eventfd POLLIN");
	twrite(efd, &one, 8);
	dreap1(c, &r, "eventfd POLLIN after a write");
	poll_add(&r, efd, POLLOUT | POLLIN, 0, 7, 0);
	dnow(c, &r, "eventfd IN|OUT");
	close(efd);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_oneshot_other, body_oneshot_other)

/*
 * Files without a poll method (regular files, directories, /dev/null,
 * /dev/zero, procfs): always ready with DEFAULT_POLLMASK
 * (IN|OUT|RDNORM|WRNORM), where epoll_ctl says EPERM (T16).
 */
static long body_nopoll_files(struct dctx *c, void *arg)
{
	static const struct { const char *path; int flags; } files[] = {
		{ "/tmp", O_RDONLY | O_DIRECTORY },
		{ "/dev/null", O_RDWR },
		{ "/dev/zero", O_RDONLY },
		{ "/proc/self/status", O_RDONLY },
	};
	static const struct { uint32_t ev, flags; const char *name; } m[] = {
		{ POLLIN, 0, "POLLIN" },
		{ POLLOUT, 0, "POLLOUT" },
		{ POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM | POLLPRI, 0,
		  "IN|OUT|RDNORM|WRNORM|PRI" },
		{ POLLPRI, 0, "POLLPRI only" },
		{ 0, 0, "no events" },
		{ POLLRDHUP | POLLERR, 0, "RDHUP|ERR" },
		{ POLLIN, IORING_POLL_ADD_MULTI, "multishot POLLIN" },
		{ POLLPRI, IORING_POLL_ADD_MULTI, "multishot POLLPRI" },
	};
	char label[96];
	struct tring r;
	unsigned int i, j;
	int fd;

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return 0;
	for (i = 0; i < sizeof(files) / sizeof(files[0]) + 2; i++) {
		const char *name;

		if (i == 0) {
			fd = dtmpfile(c, 100, 1);
			name = "ext4 file";
		} else if (i == 1) {
			fd = dtmpfile_at(c, "/dev/shm", 100, 1);
			name = "tmpfs file";
		} else {
			fd = open(files[i - 2].path, files[i - 2].flags);
			name = files[i - 2].path;
		}
		for (j = 0; j < sizeof(m) / sizeof(m[0]); j++) {
			snprintf(label, sizeof(label), "%s: %s", name,
				 m[j].name);
			poll_add(&r, fd, m[j].ev, m[j].flags, j, 0);
			dsubmit(c, &r, label);
			if (dreap1_within(c, &r, 200 * MS, label) == -99999) {
				/* still armed: take it away */
				poll_remove(&r, j, 0, 0, 0, 99);
				dsubmit(c, &r, label);
				dreapn(c, &r, 2, false, label);
			}
		}
		close(fd);
	}
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_nopoll_files, body_nopoll_files)

/* ---- multishot ---- */

static long body_multishot(struct dctx *c, void *arg)
{
	uint64_t one = 1;
	struct tring r;
	int p[2], efd, i;

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	poll_add(&r, p[0], POLLIN, IORING_POLL_ADD_MULTI, 1, 0);
	dsubmit(c, &r, "multishot POLLIN");
	dnone(c, &r, 30, "multishot POLLIN");
	for (i = 0; i < 3; i++) {
		char label[64];

		snprintf(label, sizeof(label), "write %d (pipe not drained)",
			 i);
		twrite(p[1], "m", 1);
		dreap1(c, &r, label);
	}
	tdrain_fd(p[0]);
	dnone(c, &r, 30, "no wakeup, no CQE");
	twrite(p[1], "n", 1);
	dreap1(c, &r, "write after a drain");
	poll_remove(&r, 1, 0, 0, 0, 2);
	dsubmit(c, &r, "remove multishot");
	dreapn(c, &r, 2, false, "remove multishot");
	tdrain_fd(p[0]);

	/* ready when armed: the first CQE comes at once */
	twrite(p[1], "d", 1);
	poll_add(&r, p[0], POLLIN, IORING_POLL_ADD_MULTI, 3, 0);
	dsubmit(c, &r, "multishot, data waiting");
	dreap1(c, &r, "multishot, data waiting");
	dnone(c, &r, 30, "multishot, data waiting, no new edge");
	twrite(p[1], "e", 1);
	dreap1(c, &r, "multishot, one more write");
	/* the writer closes: POLLHUP, and then? */
	close(p[1]);
	dreap1(c, &r, "multishot, writer closed");
	dnone(c, &r, 30, "multishot, after writer closed");
	poll_remove(&r, 3, 0, 0, 0, 4);
	dsubmit(c, &r, "remove after HUP");
	dreapn(c, &r, tring_wait(&r, 2, 50 * MS) == 0 ? 2 : 1, false,
	       "remove after HUP");
	close(p[0]);

	/* POLLOUT multishot on a pipe: one CQE, no further edges */
	if (pipe(p))
		return 0;
	poll_add(&r, p[1], POLLOUT, IORING_POLL_ADD_MULTI, 5, 0);
	dsubmit(c, &r, "multishot POLLOUT");
	dreap1(c, &r, "multishot POLLOUT");
	twrite(p[1], "q", 1);
	dnone(c, &r, 30, "multishot POLLOUT after a write");
	poll_remove(&r, 5, 0, 0, 0, 6);
	dsubmit(c, &r, "remove POLLOUT multishot");
	dreapn(c, &r, 2, false, "remove POLLOUT multishot");
	tclose2(p);

	/* eventfd: one CQE per write */
	efd = eventfd(0, EFD_CLOEXEC);
	poll_add(&r, efd, POLLIN, IORING_POLL_ADD_MULTI, 7, 0);
	dsubmit(c, &r, "eventfd multishot");
	for (i = 0; i < 4; i++) {
		twrite(efd, &one, 8);
		dreap1(c, &r, "eventfd write");
	}
	dnone(c, &r, 30, "eventfd, no write");
	poll_remove(&r, 7, 0, 0, 0, 8);
	dsubmit(c, &r, "remove eventfd multishot");
	dreapn(c, &r, 2, false, "remove eventfd multishot");
	close(efd);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_multishot, body_multishot)

/*
 * T14: a multishot poll that cannot post because the CQ is full is
 * terminated: its last CQE (without F_MORE) goes to the overflow list.
 */
static long body_multishot_overflow(struct dctx *c, void *arg)
{
	struct io_uring_params p;
	struct tring r;
	int pp[2], i;

	(void)arg;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 2;
	if (dring(c, &r, 2, &p, "ring setup, CQ of 2") || pipe(pp))
		return 0;
	poll_add(&r, pp[0], POLLIN, IORING_POLL_ADD_MULTI, 1, 0);
	dsubmit(c, &r, "multishot POLLIN");
	/* an SQ thread arms the poll before the first write: a write
	 * during the arming can give two CQEs (the arm's check and the
	 * wakeup) */
	tring_sqpoll_await_sq_taken(&r, 5000);
	for (i = 0; i < 4; i++) {
		unsigned int seen = tring_cq_ready(&r) +
				    !!(tring_sq_flags(&r) & IORING_SQ_CQ_OVERFLOW);

		twrite(pp[1], "o", 1);
		/*
		 * On the kernel's SQPOLL ring the wakeup is task_work of the
		 * SQ thread, run when it gets the CPU: wait for writes 0-2
		 * to show (a CQE, then the overflow flag) instead of trusting
		 * a fixed sleep.  Write 3 finds the poll ended: nothing may
		 * show, the sleep is only a window for a wrong CQE.
		 */
		if ((r.flags & IORING_SETUP_SQPOLL) && i < 3) {
			for (int t = 0; t < LIMIT_MS &&
			     tring_cq_ready(&r) + !!(tring_sq_flags(&r) &
						     IORING_SQ_CQ_OVERFLOW) == seen;
			     t++)
				usleep(1000);
		}
		usleep(40 * 1000);
		/* each wakeup is handled before the next write, on every
		 * kind of ring: without this a DEFER_TASKRUN ring would post
		 * nothing until the reap below, one CQE for all four writes,
		 * and that reap (of 2) would wait forever on both backends
		 * (poll_multishot_defer covers that case) */
		drec_int(c, run_tw(&r), "after write %d: run task_work", i);
		drec_int(c, tring_cq_ready(&r), "after write %d: CQEs ready", i);
		drec_int(c, !!(tring_sq_flags(&r) & IORING_SQ_CQ_OVERFLOW),
			 "after write %d: CQ_OVERFLOW", i);
	}
	dreapn(c, &r, 2, true, "the CQ");
	drec_int(c, tring_wait(&r, 1, 100 * MS), "wait flushes the overflow");
	dreapn(c, &r, 1, true, "the overflowed CQE");
	dnone(c, &r, 30, "terminated");
	poll_remove(&r, 1, 0, 0, 0, 2);
	dnow(c, &r, "remove the terminated poll");

	/* the same on a CQ that the application keeps reaping */
	tdrain_fd(pp[0]);
	poll_add(&r, pp[0], POLLIN, IORING_POLL_ADD_MULTI, 3, 0);
	dsubmit(c, &r, "multishot, reaped");
	tring_sqpoll_await_sq_taken(&r, 5000);
	for (i = 0; i < 5; i++) {
		twrite(pp[1], "p", 1);
		dreap1(c, &r, "reaped wakeup");
	}
	poll_remove(&r, 3, 0, 0, 0, 4);
	dsubmit(c, &r, "remove");
	dreapn(c, &r, 2, false, "remove");
	tclose2(pp);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_multishot_overflow, body_multishot_overflow)

/* ---- POLL_REMOVE ---- */

static long body_remove(struct dctx *c, void *arg)
{
	char buf[8];
	struct tring r;
	int p[2];

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	poll_add(&r, p[0], POLLIN, 0, 1, 0);
	dsubmit(c, &r, "poll");
	poll_remove(&r, 1, 0, 0, 0, 2);
	dsubmit(c, &r, "remove found");
	dreapn(c, &r, 2, false, "remove found");
	poll_remove(&r, 1, 0, 0, 0, 3);
	dnow(c, &r, "remove again");
	poll_remove(&r, 12345, 0, 0, 0, 4);
	dnow(c, &r, "remove unknown user_data");
	/* one SQE batch: add and remove */
	poll_add(&r, p[0], POLLIN, 0, 5, 0);
	poll_remove(&r, 5, 0, 0, 0, 6);
	dsubmit(c, &r, "add+remove in one enter");
	dreapn(c, &r, 2, false, "add+remove in one enter");
	/* a completed poll is not found */
	twrite(p[1], "x", 1);
	poll_add(&r, p[0], POLLIN, 0, 7, 0);
	dnow(c, &r, "ready poll");
	poll_remove(&r, 7, 0, 0, 0, 8);
	dnow(c, &r, "remove completed");
	tdrain_fd(p[0]);
	/* a parked READ is not a poll */
	tprep(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 9, 0);
	dsubmit(c, &r, "parked read");
	poll_remove(&r, 9, 0, 0, 0, 10);
	dnow(c, &r, "remove a parked read's user_data");
	twrite(p[1], "y", 1);
	dreap1(c, &r, "the read");
	/* user_data 0 */
	poll_add(&r, p[0], POLLIN, 0, 0, 0);
	dsubmit(c, &r, "poll ud 0");
	poll_remove(&r, 0, 0, 0, 0, 11);
	dsubmit(c, &r, "remove ud 0");
	dreapn(c, &r, 2, false, "remove ud 0");
	/* removal with CQE_SKIP_SUCCESS on the remove */
	poll_add(&r, p[0], POLLIN, 0, 12, 0);
	dsubmit(c, &r, "poll 12");
	poll_remove(&r, 12, 0, 0, 0, 13)->flags = IOSQE_CQE_SKIP_SUCCESS;
	dsubmit(c, &r, "skip-success remove");
	dreap1(c, &r, "skip-success remove");
	dnone(c, &r, 30, "skip-success remove");
	tclose2(p);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_remove, body_remove)

/* a fresh ring and pipe for each case, so one case cannot leak into the
 * next */
static int fresh(struct dctx *c, struct tring *r, int p[2], bool first)
{
	if (!first) {
		tring_exit(r);
		tclose2(p);
	}
	if (dring_flags(c, r, 16, 0))
		return -1;
	return pipe(p);
}

static long body_update(struct dctx *c, void *arg)
{
	const uint32_t UE = IORING_POLL_UPDATE_EVENTS;
	const uint32_t UU = IORING_POLL_UPDATE_USER_DATA;
	const uint32_t MU = IORING_POLL_ADD_MULTI;
	struct tring r;
	int p[2];

	(void)arg;
	if (fresh(c, &r, p, true))
		return 0;
	/* new user_data */
	poll_add(&r, p[0], POLLIN, 0, 1, 0);
	dsubmit(c, &r, "poll 1");
	poll_remove(&r, 1, UU, 11, 0, 2);
	dnow(c, &r, "update user_data 1 -> 11");
	poll_remove(&r, 1, 0, 0, 0, 3);
	dnow(c, &r, "remove the old user_data");
	twrite(p[1], "a", 1);
	dreap1(c, &r, "fires with the new user_data");

	/* new events: POLLPRI (never) -> POLLIN */
	if (fresh(c, &r, p, false))
		return 0;
	poll_add(&r, p[0], POLLPRI, 0, 4, 0);
	dsubmit(c, &r, "POLLPRI poll");
	poll_remove(&r, 4, UE, 0, POLLIN, 5);
	dnow(c, &r, "update events to POLLIN");
	dnone(c, &r, 30, "updated, not ready");
	twrite(p[1], "b", 1);
	dreap1(c, &r, "updated poll fires");

	/* updated to events that are ready now (data waiting) */
	if (fresh(c, &r, p, false))
		return 0;
	twrite(p[1], "b", 1);
	poll_add(&r, p[0], POLLPRI, 0, 6, 0);
	dsubmit(c, &r, "POLLPRI poll, data waiting");
	dnone(c, &r, 30, "POLLPRI poll, data waiting");
	poll_remove(&r, 6, UE, 0, POLLIN, 7);
	dsubmit(c, &r, "update to a ready POLLIN");
	dreapn(c, &r, 2, false, "update to a ready POLLIN");

	/* both at once */
	if (fresh(c, &r, p, false))
		return 0;
	poll_add(&r, p[0], POLLPRI, 0, 8, 0);
	dsubmit(c, &r, "poll 8");
	poll_remove(&r, 8, UE | UU, 18, POLLIN, 9);
	dnow(c, &r, "update events and user_data");
	twrite(p[1], "c", 1);
	dreap1(c, &r, "fires as 18");

	/* not found */
	poll_remove(&r, 4242, UE, 0, POLLIN, 10);
	dnow(c, &r, "update unknown user_data");

	/* multishot updated without IORING_POLL_ADD_MULTI: the kernel keeps
	 * the behaviour flags and updates only the event mask */
	if (fresh(c, &r, p, false))
		return 0;
	poll_add(&r, p[0], POLLPRI, MU, 20, 0);
	dsubmit(c, &r, "multishot POLLPRI");
	poll_remove(&r, 20, UE, 0, POLLIN, 21);
	dnow(c, &r, "update multishot, no MULTI flag");
	twrite(p[1], "d", 1);
	dreap1_within(c, &r, 200 * MS, "first wakeup");
	twrite(p[1], "e", 1);
	dreap1_within(c, &r, 200 * MS, "second wakeup");

	/* one-shot updated with IORING_POLL_ADD_MULTI: stays one-shot */
	if (fresh(c, &r, p, false))
		return 0;
	poll_add(&r, p[0], POLLPRI, 0, 30, 0);
	dsubmit(c, &r, "one-shot POLLPRI");
	poll_remove(&r, 30, UE | MU, 0, POLLIN, 31);
	dnow(c, &r, "update one-shot with MULTI");
	twrite(p[1], "f", 1);
	dreap1_within(c, &r, 200 * MS, "first wakeup");
	twrite(p[1], "g", 1);
	dnone(c, &r, 30, "second wakeup");

	/* update of the user_data only, multishot keeps going */
	if (fresh(c, &r, p, false))
		return 0;
	poll_add(&r, p[0], POLLIN, MU, 40, 0);
	dsubmit(c, &r, "multishot 40");
	poll_remove(&r, 40, UU, 41, 0, 42);
	dnow(c, &r, "update multishot user_data");
	twrite(p[1], "h", 1);
	dreap1(c, &r, "multishot as 41");
	poll_remove(&r, 41, 0, 0, 0, 43);
	dsubmit(c, &r, "remove 41");
	dreapn(c, &r, 2, false, "remove 41");
	tclose2(p);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_update, body_update)

/* ---- prep errors ---- */

static long body_errors(struct dctx *c, void *arg)
{
	struct io_uring_sqe *s;
	struct tring r;
	int p[2];

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	poll_add(&r, -1, POLLIN, 0, 1, 0);
	dnow(c, &r, "POLL_ADD fd -1");
	poll_add(&r, 9999, POLLIN, 0, 2, 0);
	dnow(c, &r, "POLL_ADD fd 9999");
	poll_add(&r, p[0], POLLIN, 0, 3, IOSQE_FIXED_FILE);
	dnow(c, &r, "POLL_ADD fixed file, none registered");
	poll_add(&r, p[0], POLLIN, IORING_POLL_UPDATE_EVENTS, 4, 0);
	dnow(c, &r, "POLL_ADD len UPDATE_EVENTS");
	poll_add(&r, p[0], POLLIN, IORING_POLL_ADD_LEVEL, 5, 0);
	dnow(c, &r, "POLL_ADD len ADD_LEVEL");
	poll_add(&r, p[0], POLLIN, 1u << 31, 6, 0);
	dnow(c, &r, "POLL_ADD len bit 31");
	poll_add(&r, p[0], POLLIN, IORING_POLL_ADD_MULTI, 7,
		 IOSQE_CQE_SKIP_SUCCESS);
	dnow(c, &r, "multishot + CQE_SKIP_SUCCESS");
	poll_add(&r, p[0], POLLIN, 0, 8, 0)->off = 1;
	dnow(c, &r, "POLL_ADD off 1");
	poll_add(&r, p[0], POLLIN, 0, 9, 0)->addr = 0x1000;
	dnow(c, &r, "POLL_ADD addr");
	poll_add(&r, p[0], POLLIN, 0, 10, 0)->buf_index = 1;
	dnow(c, &r, "POLL_ADD buf_index");
	poll_add(&r, p[0], POLLIN, 0, 11, 0)->ioprio = 1;
	dnow(c, &r, "POLL_ADD ioprio");
	poll_add(&r, p[0], POLLIN, 0, 12, IOSQE_BUFFER_SELECT);
	dnow(c, &r, "POLL_ADD BUFFER_SELECT");
	poll_add(&r, p[0], POLLIN, 0, 13, 0)->personality = 3;
	dnow(c, &r, "POLL_ADD personality");
	s = poll_add(&r, p[0], POLLIN, 0, 14, 0);
	s->splice_fd_in = 5;
	dsubmit(c, &r, "POLL_ADD splice_fd_in (ignored?)");
	if (dreap1_within(c, &r, 200 * MS, "POLL_ADD splice_fd_in") ==
	    -99999) {
		poll_remove(&r, 14, 0, 0, 0, 15);
		dsubmit(c, &r, "remove it");
		dreapn(c, &r, 2, false, "remove it");
	}
	poll_add(&r, p[0], 0xffffffffu, 0, 16, 0);
	dsubmit(c, &r, "POLL_ADD all event bits");
	if (dreap1_within(c, &r, 200 * MS, "POLL_ADD all event bits") ==
	    -99999) {
		poll_remove(&r, 16, 0, 0, 0, 17);
		dsubmit(c, &r, "remove it");
		dreapn(c, &r, 2, false, "remove it");
	}

	poll_remove(&r, 1, 0, 0, 0, 20)->buf_index = 1;
	dnow(c, &r, "POLL_REMOVE buf_index");
	poll_remove(&r, 1, 0, 0, 0, 21)->splice_fd_in = 1;
	dnow(c, &r, "POLL_REMOVE splice_fd_in");
	poll_remove(&r, 1, IORING_POLL_ADD_MULTI, 0, 0, 22);
	dnow(c, &r, "POLL_REMOVE len MULTI only");
	poll_remove(&r, 1, 1u << 3, 0, 0, 23);
	dnow(c, &r, "POLL_REMOVE len bit 3");
	poll_remove(&r, 1, 0, 7, 0, 24);
	dnow(c, &r, "POLL_REMOVE off without UPDATE_USER_DATA");
	poll_remove(&r, 1, 0, 0, POLLIN, 25);
	dnow(c, &r, "POLL_REMOVE events without UPDATE_EVENTS");
	poll_remove(&r, 1, 0, 0, 0, 26)->ioprio = 1;
	dnow(c, &r, "POLL_REMOVE ioprio");
	poll_remove(&r, 1, 0, 0, 0, 27)->fd = 12345;
	dnow(c, &r, "POLL_REMOVE fd ignored");
	poll_remove(&r, 1, IORING_POLL_UPDATE_USER_DATA, 0, 0, 28);
	dnow(c, &r, "POLL_REMOVE update user_data to 0, not found");
	poll_remove(&r, 1, 0, 0, 0, 29)->flags = IOSQE_FIXED_FILE;
	dnow(c, &r, "POLL_REMOVE FIXED_FILE");

	/* a failing poll in a link chain cancels the rest */
	poll_add(&r, 9999, POLLIN, 0, 30, IOSQE_IO_LINK);
	tprep_nop(&r, 31, 0);
	dsubmit(c, &r, "bad poll in a chain");
	dreapn(c, &r, 2, true, "bad poll in a chain");
	tclose2(p);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_errors, body_errors)

/* ---- links and drain ---- */

static long body_links(struct dctx *c, void *arg)
{
	struct tring r;
	int p[2];

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	poll_add(&r, p[0], POLLIN, 0, 1, IOSQE_IO_LINK);
	tprep_nop(&r, 2, IOSQE_IO_LINK);
	poll_add(&r, p[1], POLLOUT, 0, 3, 0);
	dsubmit(c, &r, "poll -> nop -> poll");
	dnone(c, &r, 30, "poll -> nop -> poll");
	twrite(p[1], "x", 1);
	dreapn(c, &r, 3, true, "poll -> nop -> poll");
	tdrain_fd(p[0]);
	/* a removed poll breaks its chain */
	poll_add(&r, p[0], POLLIN, 0, 4, IOSQE_IO_LINK);
	tprep_nop(&r, 5, 0);
	dsubmit(c, &r, "poll -> nop");
	poll_remove(&r, 4, 0, 0, 0, 6);
	dsubmit(c, &r, "remove the head");
	dreapn(c, &r, 3, false, "removed head");
	/* drain waits for a pending poll */
	poll_add(&r, p[0], POLLIN, 0, 7, 0);
	tprep_nop(&r, 8, IOSQE_IO_DRAIN);
	tprep_nop(&r, 9, 0);
	dsubmit(c, &r, "poll, drain, nop");
	dnone(c, &r, 30, "poll, drain, nop");
	twrite(p[1], "y", 1);
	dreapn(c, &r, 3, true, "poll, drain, nop");
	tdrain_fd(p[0]);
	tclose2(p);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_links, body_links)

/* ---- many polls, two rings, both ends of one pipe ---- */

static long body_many(struct dctx *c, void *arg)
{
	enum { N = 32 };
	struct tring r, r2;
	int p[N][2], i, q[2];

	(void)arg;
	if (dring_flags(c, &r, 64, 0))
		return 0;
	for (i = 0; i < N; i++) {
		if (pipe(p[i]))
			return 0;
		poll_add(&r, p[i][0], POLLIN, 0, i, 0);
	}
	dsubmit(c, &r, "32 polls");
	dnone(c, &r, 30, "32 polls");
	for (i = N - 1; i >= 0; i--)
		twrite(p[i][1], "z", 1);
	dreapn(c, &r, N, false, "32 polls");
	for (i = 0; i < N; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}

	/* two polls on one fd, and a second ring polling it too */
	if (pipe(q) || dring_flags(c, &r2, 16, 0))
		return 0;
	poll_add(&r, q[0], POLLIN, 0, 100, 0);
	poll_add(&r, q[0], POLLIN | POLLRDNORM, 0, 101, 0);
	dsubmit(c, &r, "two polls, one fd");
	poll_add(&r2, q[0], POLLIN, IORING_POLL_ADD_MULTI, 200, 0);
	dsubmit(c, &r2, "a second ring");
	dnone(c, &r, 30, "two polls, one fd");
	twrite(q[1], "w", 1);
	dreapn(c, &r, 2, false, "two polls, one fd");
	dreapn(c, &r2, 1, true, "second ring");
	tring_exit(&r2);
	tclose2(q);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_many, body_many)

/*
 * The two ends of a pipe are two open files sharing one inode: a request
 * waiting on one end must not make a poll of the other end look at the
 * wrong file.
 */
static long body_both_ends(struct dctx *c, void *arg)
{
	char buf[8];
	struct tring r;
	int p[2];

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	/* a read waits on the read end; the (empty) pipe is writable */
	tprep(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 1, 0);
	dsubmit(c, &r, "read on the read end");
	dnone(c, &r, 30, "read on the read end");
	poll_add(&r, p[1], POLLOUT, 0, 2, 0);
	dsubmit(c, &r, "POLLOUT on the write end");
	dreap1_within(c, &r, 300 * MS, "POLLOUT on the write end, read parked");
	twrite(p[1], "1", 1);
	dreap1_within(c, &r, 300 * MS, "the read");
	tclose2(p);

	/* a multishot POLLOUT keeps the write end armed; then a read */
	if (pipe(p))
		return 0;
	poll_add(&r, p[1], POLLOUT, IORING_POLL_ADD_MULTI, 3, 0);
	dsubmit(c, &r, "multishot POLLOUT on the write end");
	dreap1(c, &r, "multishot POLLOUT");
	tprep(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 4, 0);
	dsubmit(c, &r, "read on the read end");
	dnone(c, &r, 30, "read on the read end");
	twrite(p[1], "2", 1);
	dreap1_within(c, &r, 300 * MS, "the read, write end armed");
	poll_remove(&r, 3, 0, 0, 0, 5);
	dsubmit(c, &r, "remove");
	dreapn(c, &r, 2, false, "remove");
	tclose2(p);

	/* POLLIN on the read end and POLLOUT on a full pipe's write end */
	if (pipe(p))
		return 0;
	poll_add(&r, p[0], POLLIN, 0, 6, 0);
	dsubmit(c, &r, "POLLIN on the read end");
	dnone(c, &r, 30, "POLLIN on the read end");
	tfill_pipe(p[1]);
	dreap1(c, &r, "POLLIN after filling");
	poll_add(&r, p[1], POLLOUT, 0, 7, 0);
	poll_add(&r, p[0], POLLIN, IORING_POLL_ADD_MULTI, 8, 0);
	dsubmit(c, &r, "POLLOUT on the full write end, POLLIN multishot");
	dreap1(c, &r, "multishot POLLIN, data waiting");
	dnone(c, &r, 30, "POLLOUT, full");
	tdrain_fd(p[0]);
	dreap1_within(c, &r, 300 * MS, "POLLOUT after draining");
	poll_remove(&r, 8, 0, 0, 0, 9);
	dsubmit(c, &r, "remove");
	dreapn(c, &r, 2, false, "remove");
	tclose2(p);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_both_ends, body_both_ends)

/*
 * A multishot poll armed on a file that is ready posts one CQE for that
 * readiness, then one per wakeup: arming right after other poll activity
 * (a read and a poll completed on another pipe) must not report the
 * same readiness twice.
 */
static long body_armed_ready(struct dctx *c, void *arg)
{
	struct tcqe q[8];
	struct tring r;
	int i, p[2], bad = 0;
	char b[8];

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return 0;
	for (i = 0; i < 50; i++) {
		unsigned int n;

		if (pipe(p))
			return 0;
		tprep(&r, IORING_OP_READ, p[0], b, sizeof(b), 0, 1, 0);
		tring_submit(&r);
		usleep(2 * 1000);
		poll_add(&r, p[1], POLLOUT, 0, 4, 0);
		tring_submit(&r);
		tring_reap_wait(&r, q, 1, SEC);
		twrite(p[1], "1", 1);
		tring_reap_wait(&r, q, 1, SEC);
		tclose2(p);
		if (pipe(p))
			return 0;
		poll_add(&r, p[1], POLLOUT, IORING_POLL_ADD_MULTI, 2, 0);
		tring_submit(&r);
		tring_reap_wait(&r, q, 1, SEC);
		usleep(10 * 1000);
		n = tring_reap(&r, q, 8);
		if (n) {
			bad++;
			if (bad == 1)
				dnote(c, "iteration %d: %u more CQEs, first ud=%llu res=%d flags=0x%x",
				      i, n, (unsigned long long)q[0].user_data,
				      q[0].res, q[0].flags);
		}
		poll_remove(&r, 2, 0, 0, 0, 3);
		tring_submit(&r);
		tring_reap_wait(&r, q, 2, SEC);
		tclose2(p);
	}
	drec_int(c, bad, "iterations with a second CQE and no new wakeup");
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_armed_ready, body_armed_ready)

/* T4: a poll keeps its file when the application closes the fd */
static long body_close(struct dctx *c, void *arg)
{
	struct tring r;
	int p[2], fd, base;

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	base = open("/dev/null", O_RDONLY);
	close(base);
	poll_add(&r, p[0], POLLIN, 0, 1, 0);
	dsubmit(c, &r, "poll");
	dnone(c, &r, 30, "poll");
	fd = open("/dev/null", O_RDONLY);
	drec_int(c, fd - base, "next fd number while a poll waits (+0 = lowest free)");
	close(fd);
	close(p[0]);
	twrite(p[1], "x", 1);
	dreap1(c, &r, "poll after its fd was closed");
	close(p[1]);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_close, body_close)

/*
 * POLL_REMOVE by user_data when two armed polls share it: the kernel's
 * cancel hash finds the newest.  Which one stays armed shows in its mask
 * (res = revents & interest), so the two watch different masks.  Also an
 * update of user_data moves the poll to its new key.
 */
static long body_remove_dup_ud(struct dctx *c, void *arg)
{
	struct tring r;
	int a[2], b[2];

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || pipe(a) || pipe(b))
		return 0;
	poll_add(&r, a[0], POLLIN, 0, 7, 0);
	poll_add(&r, b[0], POLLIN | POLLRDNORM, 0, 7, 0);
	dsubmit(c, &r, "two polls with user_data 7");
	poll_remove(&r, 7, 0, 0, 0, 100);
	dnow(c, &r, "remove 7 (one of them)");
	dreap1(c, &r, "the removed poll");
	twrite(a[1], "x", 1);
	twrite(b[1], "x", 1);
	dreap1(c, &r, "the poll left armed (its mask tells which)");

	poll_add(&r, a[0], POLLOUT, 0, 10, 0);
	dsubmit(c, &r, "poll 10");
	poll_remove(&r, 10, IORING_POLL_UPDATE_USER_DATA, 11, 0, 101);
	dnow(c, &r, "update user_data 10 -> 11");
	poll_remove(&r, 10, 0, 0, 0, 102);
	dnow(c, &r, "remove 10 after the update");
	poll_remove(&r, 11, 0, 0, 0, 103);
	dsubmit(c, &r, "remove 11");
	dreapn(c, &r, 2, false, "remove 11: the poll and the remove");
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_remove_dup_ud, body_remove_dup_ud)

/*
 * T4: a POLL_ADD holds its file, not its fd number.  After the number is
 * closed and reused for another pipe, a cancel by that fd does not find
 * the poll, and the original file still wakes it.
 */
static long body_cancel_fd_reused(struct dctx *c, void *arg)
{
	struct io_uring_sqe *s;
	struct tring r;
	int a[2], b[2];

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || pipe(a) || pipe(b))
		return 0;
	poll_add(&r, a[0], POLLIN, 0, 1, 0);
	dsubmit(c, &r, "poll on pipe A");
	/* an SQ thread must have armed the poll (taken A's file) before
	 * the number goes: else A's reader is gone and the write below
	 * raises SIGPIPE, on both backends */
	tring_sqpoll_await_sq_taken(&r, 5000);
	/* the number of A's read end now names B's read end */
	if (dup2(b[0], a[0]) != a[0])
		return 0;
	s = tprep(&r, IORING_OP_ASYNC_CANCEL, a[0], NULL, 0, 0, 2, 0);
	s->cancel_flags = IORING_ASYNC_CANCEL_FD;
	dnow(c, &r, "cancel by the reused fd number");
	dnone(c, &r, 20, "poll still armed");
	twrite(a[1], "x", 1);
	dreap1(c, &r, "A's writer wakes the poll");
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_cancel_fd_reused, body_cancel_fd_reused)

/*
 * The kernel's polls need no file descriptors: armed on every pipe of a
 * process whose fd table is full, they all complete.  (uuring registers
 * the application's own numbers once no fd is left for its dups.)
 */
#define FD_LIMIT_PIPES 40
static long body_fd_limit(struct dctx *c, void *arg)
{
	struct rlimit rl;
	struct tring r;
	struct tcqe q[64];
	int p[FD_LIMIT_PIPES][2], n = 0, extra[2], got, pollin = 0;

	(void)arg;
	if (dring_flags(c, &r, 64, 0))
		return 0;
	/* the first wait sets up per-thread state before fds run out */
	tprep_nop(&r, 99, 0);
	dsubmit(c, &r, "nop");
	dreapn(c, &r, 1, true, "nop");
	/* all pipes below the limit; then not a single fd is left */
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 0;
	for (n = 0; n < FD_LIMIT_PIPES; n++)
		if (pipe(p[n]))
			return 0;
	rl.rlim_cur = (rlim_t)p[FD_LIMIT_PIPES - 1][1] + 1;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return 0;
	while (!pipe(extra)) {
	}
	drec_int(c, errno == EMFILE, "fd table full");
	for (n = 0; n < FD_LIMIT_PIPES; n++)
		poll_add(&r, p[n][0], POLLIN, 0, (uint64_t)n, 0);
	drec_int(c, tring_submit(&r), "%d polls submitted", FD_LIMIT_PIPES);
	for (n = 0; n < FD_LIMIT_PIPES; n++)
		twrite(p[n][1], "x", 1);
	got = (int)tring_reap_wait(&r, q, FD_LIMIT_PIPES, 2 * SEC);
	for (n = 0; n < got; n++)
		pollin += q[n].res == POLLIN;
	drec_int(c, got, "polls completed");
	drec_int(c, pollin, "of them with POLLIN");
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_fd_limit, body_fd_limit)

/*
 * DEFER_TASKRUN (a ring of that mode in every run): a multishot poll's
 * wakeups are task_work of the submitter.  Nothing is posted until it
 * enters with GETEVENTS; the wakeups before that give one CQE, with what
 * is ready when the task_work runs (nothing, if the data was taken
 * meanwhile: no CQE and the poll stays armed); a poll removed while a
 * wakeup is queued completes -ECANCELED when that runs, after the
 * removal's own CQE; a full CQ ends the poll with its last CQE in the
 * overflow list.
 */
static long body_multishot_defer(struct dctx *c, void *arg)
{
	struct io_uring_params p;
	struct tring r;
	int pp[2], i;

	(void)arg;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER |
		  IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_CQSIZE;
	p.cq_entries = 4;
	if (dring(c, &r, 4, &p, "DEFER_TASKRUN ring, CQ of 4") || pipe(pp))
		return 0;
	poll_add(&r, pp[0], POLLIN, IORING_POLL_ADD_MULTI, 1, 0);
	dsubmit(c, &r, "multishot POLLIN");
	for (i = 0; i < 3; i++) {
		twrite(pp[1], "a", 1);
		await_taskrun(&r);
		/* one wakeup per write, as on the kernel */
		usleep(20 * 1000);
	}
	drec_int(c, tring_cq_ready(&r), "three writes, no enter: CQEs ready");
	drec_int(c, !!(tring_sq_flags(&r) & IORING_SQ_TASKRUN),
		 "three writes: SQ_TASKRUN");
	drec_int(c, run_tw(&r), "run task_work");
	drec_int(c, !!(tring_sq_flags(&r) & IORING_SQ_TASKRUN),
		 "after the run: SQ_TASKRUN");
	dreapn(c, &r, 1, true, "one CQE for three wakeups");
	drec_int(c, tring_cq_ready(&r), "nothing more");
	/* the data is taken before the task_work runs */
	twrite(pp[1], "b", 1);
	await_taskrun(&r);
	tdrain_fd(pp[0]);
	drec_int(c, run_tw(&r), "run task_work, data gone");
	drec_int(c, tring_cq_ready(&r), "data gone: CQEs ready");
	/* still armed */
	twrite(pp[1], "c", 1);
	dreap1(c, &r, "still armed");
	tdrain_fd(pp[0]);
	/* POLL_REMOVE while a wakeup is queued: the poll cannot be
	 * disarmed (-EALREADY) and posts that wakeup */
	twrite(pp[1], "d", 1);
	await_taskrun(&r);
	poll_remove(&r, 1, 0, 0, 0, 2);
	dsubmit(c, &r, "remove with a wakeup queued");
	drec_int(c, tring_cq_ready(&r), "remove: CQEs ready at once");
	dreapn(c, &r, 2, true, "remove, then the wakeup");
	tdrain_fd(pp[0]);
	/* removed: its -ECANCELED is task_work too, posted after the
	 * removal's CQE, at the next GETEVENTS */
	poll_remove(&r, 1, 0, 0, 0, 4);
	dsubmit(c, &r, "remove");
	drec_int(c, tring_cq_ready(&r), "remove: CQEs ready at once");
	dreapn(c, &r, 2, true, "remove, then the cancelled poll");
	/* ASYNC_CANCEL while a wakeup is queued: it succeeds, the wakeup
	 * completes the poll -ECANCELED */
	poll_add(&r, pp[0], POLLIN, IORING_POLL_ADD_MULTI, 5, 0);
	dsubmit(c, &r, "multishot for the cancel");
	twrite(pp[1], "d", 1);
	await_taskrun(&r);
	tprep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 6, 0)->addr = 5;
	dsubmit(c, &r, "cancel with a wakeup queued");
	drec_int(c, tring_cq_ready(&r), "cancel: CQEs ready at once");
	dreapn(c, &r, 2, true, "cancel, then the cancelled poll");
	tdrain_fd(pp[0]);
	/* a full CQ ends it */
	poll_add(&r, pp[0], POLLIN, IORING_POLL_ADD_MULTI, 3, 0);
	dsubmit(c, &r, "multishot again");
	for (i = 0; i < 6; i++) {
		twrite(pp[1], "e", 1);
		/* writes 0-4 wake the poll (4 fills the CQ and ends it);
		 * after 5 nothing may come: only a window for a wrong one */
		if (i < 5)
			await_taskrun(&r);
		else
			usleep(20 * 1000);
		drec_int(c, run_tw(&r), "write %d: run task_work", i);
		drec_int(c, tring_cq_ready(&r), "write %d: CQEs ready", i);
		drec_int(c, !!(tring_sq_flags(&r) & IORING_SQ_CQ_OVERFLOW),
			 "write %d: CQ_OVERFLOW", i);
	}
	dreapn(c, &r, 4, true, "the full CQ");
	drec_int(c, tring_wait(&r, 1, 100 * MS), "wait flushes the overflow");
	dreapn(c, &r, 1, true, "the overflowed last CQE");
	dnone(c, &r, 30, "ended");
	tclose2(pp);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_multishot_defer, body_multishot_defer)

/*
 * 32-bit masks (IORING_FEAT_POLL_32BITS): poll32_events is read whole, and
 * the epoll flags in its high bits (EPOLLEXCLUSIVE, EPOLLONESHOT, EPOLLET,
 * EPOLLWAKEUP) are accepted beside the events and never reported.
 */
static long body_poll32(struct dctx *c, void *arg)
{
	struct io_uring_params p;
	struct tring r;
	int fds[2];

	(void)arg;
	memset(&p, 0, sizeof(p));
	if (dring(c, &r, 16, &p, "ring") || pipe(fds))
		return 0;
	drec_int(c, !!(r.p.features & IORING_FEAT_POLL_32BITS),
		 "FEAT_POLL_32BITS");
	twrite(fds[1], "x", 1);
	poll_add(&r, fds[0], POLLIN | EPOLLEXCLUSIVE, 0, 1, 0);
	dnow(c, &r, "POLLIN|EPOLLEXCLUSIVE, data waiting");
	poll_add(&r, fds[0], POLLIN | POLLRDHUP | EPOLLONESHOT | EPOLLET, 0, 2,
		 0);
	dnow(c, &r, "POLLIN|RDHUP|ONESHOT|ET, data waiting");
	poll_add(&r, fds[1], POLLOUT | EPOLLWAKEUP, 0, 3, 0);
	dnow(c, &r, "POLLOUT|EPOLLWAKEUP");
	tdrain_fd(fds[0]);
	poll_add(&r, fds[0], POLLIN | EPOLLEXCLUSIVE, 0, 4, 0);
	dsubmit(c, &r, "POLLIN|EPOLLEXCLUSIVE, empty pipe");
	dnone(c, &r, 30, "POLLIN|EPOLLEXCLUSIVE, empty pipe");
	twrite(fds[1], "y", 1);
	dreap1(c, &r, "POLLIN|EPOLLEXCLUSIVE after a write");
	tdrain_fd(fds[0]);
	poll_add(&r, fds[0], POLLIN | EPOLLEXCLUSIVE, IORING_POLL_ADD_MULTI, 5,
		 0);
	dsubmit(c, &r, "multishot POLLIN|EPOLLEXCLUSIVE");
	twrite(fds[1], "z", 1);
	dreap1(c, &r, "multishot POLLIN|EPOLLEXCLUSIVE after a write");
	poll_remove(&r, 5, 0, 0, 0, 6);
	dsubmit(c, &r, "remove");
	dreapn(c, &r, 2, false, "remove");
	tclose2(fds);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_poll32, body_poll32)

static struct io_uring_sqe *cancel_sqe(struct tring *r, uint64_t target,
				       uint32_t flags, uint64_t ud)
{
	struct io_uring_sqe *s = tprep(r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0,
				       0, ud, 0);

	s->addr = target;
	s->cancel_flags = flags;
	return s;
}

/* Reaps what comes within 100 ms (want at least `min`) and records it. */
static void reap_all(struct dctx *c, struct tring *r, unsigned int min,
		     const char *label)
{
	struct tcqe q[16];
	unsigned int n = tring_reap_wait(r, q, min, 2 * SEC);

	tring_wait(r, 1, 100 * MS);
	n += tring_reap(r, q + n, 16 - n);
	drec_cqes(c, q, n, false, "%s", label);
}

/*
 * A one-shot POLL_ADD on a file that is ready when it is armed completes
 * at once (__io_arm_poll_handler's vfs_poll), in every ring mode: an
 * ASYNC_CANCEL ANY submitted after it finds nothing; on a DEFER_TASKRUN
 * or COOP_TASKRUN ring too, where a wakeup of a parked poll would wait
 * for the submitter's task_work.  A multishot one is armed with its
 * first wakeup pending as task_work (__io_poll_execute), and a wakeup
 * during the submission is task_work too: a cancel later in the same
 * batch ends the poll without a shot, a POLL_REMOVE fails -EALREADY.
 */
static long body_ready_at_arm(struct dctx *c, void *arg)
{
	static const uint32_t any = IORING_ASYNC_CANCEL_ANY |
				    IORING_ASYNC_CANCEL_ALL;
	struct tring r;
	int p[2];

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	poll_add(&r, p[1], POLLOUT, 0, 1, 0);
	dsubmit(c, &r, "POLLOUT on a writable pipe");
	cancel_sqe(&r, 0, any, 2);
	dsubmit(c, &r, "cancel any");
	reap_all(c, &r, 2, "POLLOUT ready at arm, then cancel any");
	twrite(p[1], "x", 1);
	poll_add(&r, p[0], POLLIN, 0, 3, 0);
	dsubmit(c, &r, "POLLIN on a pipe holding data");
	cancel_sqe(&r, 0, any, 4);
	dsubmit(c, &r, "cancel any");
	reap_all(c, &r, 2, "POLLIN ready at arm, then cancel any");
	/* the same in one batch, named by user_data */
	poll_add(&r, p[1], POLLOUT, 0, 5, 0);
	cancel_sqe(&r, 5, 0, 6);
	dsubmit(c, &r, "POLLOUT and its cancel in one batch");
	reap_all(c, &r, 2, "one batch: POLLOUT, cancel by user_data");
	poll_add(&r, p[0], POLLIN, 0, 7, 0);
	cancel_sqe(&r, 0, any, 8);
	dsubmit(c, &r, "POLLIN and cancel any in one batch");
	reap_all(c, &r, 2, "one batch: POLLIN, cancel any");
	/* multishot: armed although ready; its first shot is task_work */
	poll_add(&r, p[1], POLLOUT, IORING_POLL_ADD_MULTI, 9, 0);
	cancel_sqe(&r, 9, 0, 10);
	dsubmit(c, &r, "multishot POLLOUT and its cancel in one batch");
	reap_all(c, &r, 2, "one batch: multishot POLLOUT, cancel");
	poll_add(&r, p[0], POLLIN, IORING_POLL_ADD_MULTI, 11, 0);
	cancel_sqe(&r, 0, any, 12);
	dsubmit(c, &r, "multishot POLLIN and cancel any in one batch");
	reap_all(c, &r, 2, "one batch: multishot POLLIN, cancel any");
	/* POLL_REMOVE cannot take a poll whose wakeup is pending
	 * (io_poll_disarm: -EALREADY); a cancel then ends it */
	poll_add(&r, p[0], POLLIN, IORING_POLL_ADD_MULTI, 15, 0);
	poll_remove(&r, 15, 0, 0, 0, 16);
	cancel_sqe(&r, 15, IORING_ASYNC_CANCEL_ALL, 17);
	dsubmit(c, &r, "multishot POLLIN, its removal and its cancel");
	reap_all(c, &r, 3, "one batch: multishot POLLIN, remove, cancel");
	/* cancelled with its wakeup pending, it stays in the cancel hash
	 * until that runs: a POLL_REMOVE then finds it busy */
	poll_add(&r, p[0], POLLIN, IORING_POLL_ADD_MULTI, 21, 0);
	cancel_sqe(&r, 21, 0, 22);
	poll_remove(&r, 21, 0, 0, 0, 23);
	dsubmit(c, &r, "multishot POLLIN, its cancel and its removal");
	reap_all(c, &r, 3, "one batch: multishot POLLIN, cancel, remove");
	/* a one-shot poll woken by a write of the same batch: the wakeup
	 * is task_work after the batch, the cancel before it wins */
	tdrain_fd(p[0]);
	poll_add(&r, p[0], POLLIN, 0, 18, 0);
	tprep(&r, IORING_OP_WRITE, p[1], "y", 1, 0, 19, 0);
	cancel_sqe(&r, 18, 0, 20);
	dsubmit(c, &r, "POLLIN, a write, the poll's cancel");
	reap_all(c, &r, 3, "one batch: POLLIN woken by a write, cancel");
	poll_add(&r, p[0], POLLIN, IORING_POLL_ADD_MULTI, 13, 0);
	dsubmit(c, &r, "multishot POLLIN");
	cancel_sqe(&r, 13, 0, 14);
	dsubmit(c, &r, "its cancel");
	reap_all(c, &r, 2, "multishot POLLIN, then its cancel");
	tclose2(p);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_ready_at_arm, body_ready_at_arm)

/*
 * A multishot poll ready at arm, alone in its enter, then its cancel in
 * the next enter: the kernel's arm-time wakeup (__io_poll_execute) is
 * task_work that runs before the first enter returns (at the next
 * GETEVENTS on DEFER_TASKRUN), so the shot comes before the cancel
 * wherever the file sits, the readiness engine's timing aside.  Twenty
 * times on a pipe, a socket and an eventfd, each a file the readiness
 * engine already watches (a second poll on it waits meanwhile), so that
 * no new registration reports it first.
 */
/* Reaps until the poll ud has ended and its cancel ud + 1 answered. */
static void reap_pair(struct dctx *c, struct tring *r, uint64_t ud,
		      const char *label)
{
	struct tcqe q[16];
	unsigned int n = 0, seen = 0;

	while (seen != 3 && n < 16 &&
	       tring_reap_wait(r, q + n, 1, 2 * SEC) == 1) {
		if (q[n].user_data == ud + 1)
			seen |= 2;
		else if (q[n].user_data == ud &&
			 !(q[n].flags & IORING_CQE_F_MORE))
			seen |= 1;
		n++;
	}
	drec_cqes(c, q, n, false, "%s", label);
}

/*
 * An update of a one-shot poll's events to a mask the file has: the
 * kernel arms the poll again (io_poll_remove -> io_poll_add), which
 * completes it with that mask at once (its CQE through task_work, on
 * DEFER_TASKRUN at the next GETEVENTS), so a cancel submitted next finds
 * nothing.  The pause lets a readiness engine that found it later show.
 */
static long body_update_ready(struct dctx *c, void *arg)
{
	struct tring r;
	int p[2];

	(void)arg;
	if (dring_flags(c, &r, 16, 0) || pipe(p))
		return 0;
	twrite(p[1], "x", 1);
	poll_add(&r, p[0], POLLPRI, 0, 1, 0);
	dsubmit(c, &r, "POLLPRI on a pipe holding data");
	poll_remove(&r, 1, IORING_POLL_UPDATE_EVENTS, 0, POLLIN, 2);
	dsubmit(c, &r, "update to POLLIN");
	usleep(20000);
	cancel_sqe(&r, 1, 0, 3);
	dsubmit(c, &r, "cancel the poll");
	reap_all(c, &r, 3, "updated poll ready at its re-arm, then cancel");
	tclose2(p);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_update_ready, body_update_ready)

static long body_ready_at_arm_cancel_next(struct dctx *c, void *arg)
{
	struct tring r;
	int p[2], sv[2], efd, fds[3], k, i;

	(void)arg;
	if (dring_flags(c, &r, 64, 0) || pipe(p))
		return 0;
	tsockpair(sv);
	efd = eventfd(0, EFD_CLOEXEC);
	fds[0] = p[1];
	fds[1] = sv[1];
	fds[2] = efd;
	for (k = 0; k < 3; k++) {
		/* the engine watches the file already: a one-shot POLLPRI
		 * that never fires keeps it watched */
		poll_add(&r, fds[k], POLLPRI, 0, 900 + k, 0);
		dsubmit(c, &r, "POLLPRI keeps the file watched");
	}
	for (i = 0; i < 20; i++) {
		for (k = 0; k < 3; k++) {
			uint64_t ud = 1000 + 10 * i + 2 * k;

			poll_add(&r, fds[k], POLLOUT, IORING_POLL_ADD_MULTI,
				 ud, 0);
			dsubmit(c, &r, "multishot POLLOUT, ready");
			cancel_sqe(&r, ud, 0, ud + 1);
			dsubmit(c, &r, "its cancel in the next enter");
			reap_pair(c, &r, ud, "ready at arm, cancel next enter");
		}
	}
	cancel_sqe(&r, 0, IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL,
		   1);
	dsubmit(c, &r, "cancel the POLLPRI polls");
	reap_all(c, &r, 4, "POLLPRI polls cancelled");
	tclose2(p);
	tclose2(sv);
	close(efd);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_ready_at_arm_cancel_next, body_ready_at_arm_cancel_next)

/*
 * Multishot polls on the ring's own fd: what the arm finds is reported
 * (POLLOUT: the SQ has room), and after that only the CQ wakes the poll
 * (io_cqring_wake: EPOLLIN with EPOLL_URING_WAKE, which ends a multishot
 * poll with that shot).  uuring's ring fd is a socket whose every edge
 * also says POLLOUT.
 */
static long body_own_ring_fd_mshot(struct dctx *c, void *arg)
{
	struct tring r;

	(void)arg;
	if (dring_flags(c, &r, 16, 0))
		return 0;
	poll_add(&r, r.fd, POLLOUT, IORING_POLL_ADD_MULTI, 1, 0);
	dsubmit(c, &r, "multishot POLLOUT on the own ring fd");
	reap_all(c, &r, 1, "what the arm found");
	tring_prep_nop(tring_get_sqe(&r), 2);
	dsubmit(c, &r, "a NOP");
	reap_all(c, &r, 1, "the NOP, no shot");
	cancel_sqe(&r, 1, 0, 3);
	dsubmit(c, &r, "cancel it");
	reap_all(c, &r, 2, "cancelled");
	poll_add(&r, r.fd, POLLIN, IORING_POLL_ADD_MULTI, 4, 0);
	dsubmit(c, &r, "multishot POLLIN on the own ring fd, CQ empty");
	dnone(c, &r, 30, "nothing to read");
	tring_prep_nop(tring_get_sqe(&r), 5);
	dsubmit(c, &r, "a NOP");
	reap_all(c, &r, 2, "the NOP, and the poll's last shot");
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_own_ring_fd_mshot, body_own_ring_fd_mshot)

static const struct dscenario scenarios[] = {
	{ "poll_oneshot_pipe", sc_oneshot_pipe, NULL },
	{ "poll_oneshot_socket_eventfd", sc_oneshot_other, NULL },
	{ "poll_nopoll_files", sc_nopoll_files, NULL },
	{ "poll_multishot", sc_multishot, NULL },
	{ "poll_multishot_overflow", sc_multishot_overflow, NULL },
	{ "poll_multishot_defer", sc_multishot_defer, NULL },
	{ "poll_remove", sc_remove, NULL },
	{ "poll_update", sc_update, NULL },
	{ "poll_errors", sc_errors, NULL },
	{ "poll_links_drain", sc_links, NULL },
	{ "poll_many", sc_many, NULL },
	{ "poll_both_pipe_ends", sc_both_ends, NULL },
	{ "poll_multishot_armed_ready", sc_armed_ready, NULL },
	{ "poll_close_fd", sc_close, NULL },
	{ "poll_remove_duplicate_user_data", sc_remove_dup_ud, NULL },
	{ "poll_cancel_fd_reused_number", sc_cancel_fd_reused, NULL },
	{ "poll_fd_table_full", sc_fd_limit, NULL },
	{ "poll_32bit_masks", sc_poll32, NULL },
	{ "poll_ring_fd", sc_ring_fd, NULL },
	{ "poll_ready_at_arm", sc_ready_at_arm, NULL },
	{ "poll_ready_at_arm_cancel_next", sc_ready_at_arm_cancel_next,
	  NULL },
	{ "poll_update_ready", sc_update_ready, NULL },
	{ "poll_own_ring_fd_multishot", sc_own_ring_fd_mshot, NULL },
};

DTEST_MAIN(scenarios)
