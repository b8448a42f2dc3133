// SPDX-License-Identifier: MIT
/*
 * Differential tests: IORING_OP_EPOLL_CTL and IORING_OP_EPOLL_WAIT.
 *
 * EPOLL_CTL: ADD, MOD, DEL and their errors (-EEXIST, -ENOENT, -EBADF,
 * -EPERM for a regular file, -EINVAL for the epoll fd itself, a bad op,
 * EPOLLEXCLUSIVE with MOD, -ELOOP), an unreadable event pointer (-EFAULT at
 * prep; not read for DEL), the prep checks, a libuv-style batch of many
 * EPOLL_CTLs in one enter (T17: enter must return exactly n, and every
 * CQE is checked), and the registration being the one epoll_wait(2) sees.
 *
 * EPOLL_WAIT: events already ready (the user's array is written at
 * completion), waiting for readiness on the epoll fd, maxevents smaller
 * than the ready set, edge-triggered interest with two waiters and one
 * event, the errors (-EINVAL for maxevents and a non-epoll fd, -EBADF,
 * -EFAULT), the prep checks, cancellation, IOSQE_ASYNC, links, and a
 * nested epoll instance.
 *
 * Every scenario body runs isolated (disolated) with a time limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dtest.h"
#include "tprep.h"
#include "uuring.h"

#define LIMIT_MS 5000
#define SEC 1000000000LL
#define MS 1000000LL

static struct io_uring_sqe *ctl(struct tring *r, int epfd, int op, int fd,
				const struct epoll_event *ev, uint64_t ud,
				uint8_t flags)
{
	return tprep(r, IORING_OP_EPOLL_CTL, epfd, ev, (unsigned int)op,
		     (uint64_t)(unsigned int)fd, ud, flags);
}

static struct io_uring_sqe *ewait(struct tring *r, int epfd,
				  struct epoll_event *evs, int max,
				  uint64_t ud, uint8_t flags)
{
	return tprep(r, IORING_OP_EPOLL_WAIT, epfd, evs, (unsigned int)max, 0,
		     ud, flags);
}

/* Records the events an EPOLL_WAIT wrote (count n). */
static void rec_events(struct dctx *c, const struct epoll_event *evs, int n,
		       const char *label)
{
	for (int i = 0; i < n && i < 64; i++)
		drec_int(c, (long)evs[i].events, "%s: event %d mask", label, i);
	/* data order is epoll's ready-list order: compare as a set */
	uint64_t sum = 0, x = 0;

	for (int i = 0; i < n && i < 64; i++) {
		sum += evs[i].data.u64;
		x ^= evs[i].data.u64 * 0x9e3779b97f4a7c15ULL;
	}
	drec_int(c, (long)sum, "%s: data sum", label);
	drec_int(c, (long)x, "%s: data hash", label);
}

#define ISOLATED(sc, body) DISOLATED_SCENARIO(sc, body, LIMIT_MS)

static struct epoll_event evt(uint32_t events, uint64_t data)
{
	struct epoll_event e;

	memset(&e, 0, sizeof(e));
	e.events = events;
	e.data.u64 = data;
	return e;
}

/* ---- EPOLL_CTL ---- */

static long body_ctl_basic(struct dctx *c, void *arg)
{
	struct epoll_event e, got[4];
	struct tring r;
	int ep, p[2], file, ep2;

	(void)arg;
	if (dring_flags(c, &r, 32, 0) || pipe(p))
		return 0;
	ep = epoll_create1(EPOLL_CLOEXEC);
	ep2 = epoll_create1(EPOLL_CLOEXEC);
	file = dtmpfile(c, 16, 1);

	e = evt(EPOLLIN, 0x1122334455667788ULL);
	ctl(&r, ep, EPOLL_CTL_ADD, p[0], &e, 1, 0);
	drec_int(c, dnow_sqp(c, &r, "ADD pipe"), "ADD pipe res");
	/* the registration is the one epoll_wait(2) sees */
	twrite(p[1], "x", 1);
	memset(got, 0, sizeof(got));
	drec_int(c, epoll_wait(ep, got, 4, 100), "epoll_wait after ADD");
	rec_events(c, got, 1, "epoll_wait after ADD");
	tdrain_fd(p[0]);

	e = evt(EPOLLIN, 2);
	ctl(&r, ep, EPOLL_CTL_ADD, p[0], &e, 2, 0);
	dnow_sqp(c, &r, "ADD again: -EEXIST");
	e = evt(EPOLLIN | EPOLLET, 3);
	ctl(&r, ep, EPOLL_CTL_MOD, p[0], &e, 3, 0);
	dnow_sqp(c, &r, "MOD");
	ctl(&r, ep, EPOLL_CTL_MOD, p[1], &e, 4, 0);
	dnow_sqp(c, &r, "MOD unregistered: -ENOENT");
	ctl(&r, ep, EPOLL_CTL_DEL, p[0], NULL, 5, 0);
	dnow_sqp(c, &r, "DEL (event pointer not read)");
	ctl(&r, ep, EPOLL_CTL_DEL, p[0], NULL, 6, 0);
	dnow_sqp(c, &r, "DEL again: -ENOENT");
	e = evt(EPOLLIN, 7);
	ctl(&r, 9999, EPOLL_CTL_ADD, p[0], &e, 7, 0);
	dnow_sqp(c, &r, "bad epfd: -EBADF");
	ctl(&r, ep, EPOLL_CTL_ADD, 9999, &e, 8, 0);
	dnow_sqp(c, &r, "bad fd: -EBADF");
	ctl(&r, ep, EPOLL_CTL_ADD, file, &e, 9, 0);
	dnow_sqp(c, &r, "regular file: -EPERM");
	ctl(&r, ep, EPOLL_CTL_ADD, ep, &e, 10, 0);
	dnow_sqp(c, &r, "epfd into itself: -EINVAL");
	ctl(&r, ep, 77, p[0], &e, 11, 0);
	dnow_sqp(c, &r, "bad op: -EINVAL");
	ctl(&r, p[0], EPOLL_CTL_ADD, p[1], &e, 12, 0);
	dnow_sqp(c, &r, "epfd is a pipe: -EINVAL");
	e = evt(EPOLLIN | EPOLLEXCLUSIVE, 13);
	ctl(&r, ep, EPOLL_CTL_ADD, p[1], &e, 13, 0);
	dnow_sqp(c, &r, "ADD exclusive");
	ctl(&r, ep, EPOLL_CTL_MOD, p[1], &e, 14, 0);
	dnow_sqp(c, &r, "MOD exclusive: -EINVAL");
	/* loops: ep2 in ep, then ep in ep2 */
	e = evt(EPOLLIN, 15);
	ctl(&r, ep, EPOLL_CTL_ADD, ep2, &e, 15, 0);
	dnow_sqp(c, &r, "ep2 into ep");
	ctl(&r, ep2, EPOLL_CTL_ADD, ep, &e, 16, 0);
	dnow_sqp(c, &r, "ep into ep2: -ELOOP");

	/* prep checks */
	ctl(&r, ep, EPOLL_CTL_ADD, p[0], &e, 20, 0)->buf_index = 1;
	dnow_sqp(c, &r, "buf_index set: -EINVAL");
	ctl(&r, ep, EPOLL_CTL_ADD, p[0], &e, 21, 0)->splice_fd_in = 1;
	dnow_sqp(c, &r, "splice_fd_in set: -EINVAL");
	ctl(&r, ep, EPOLL_CTL_ADD, p[0], dunmapped_addr(), 22, 0);
	dnow_sqp(c, &r, "unmapped event: -EFAULT");
	ctl(&r, ep, EPOLL_CTL_ADD, p[0], dprot_none_page(), 23, 0);
	dnow_sqp(c, &r, "PROT_NONE event: -EFAULT");
	ctl(&r, ep, EPOLL_CTL_DEL, p[1], dunmapped_addr(), 24, 0);
	dnow_sqp(c, &r, "DEL with an unmapped event pointer");
	/* a prep failure in the middle of a batch stops the submission */
	ctl(&r, ep, EPOLL_CTL_ADD, p[0], &e, 25, 0);
	ctl(&r, ep, EPOLL_CTL_ADD, p[0], dunmapped_addr(), 26, 0);
	ctl(&r, ep, EPOLL_CTL_DEL, p[0], NULL, 27, 0);
	dsubmit_sqp(c, &r, "batch with a bad event");
	dreapn(c, &r, 2, true, "batch with a bad event");
	dsubmit_sqp(c, &r, "rest of the batch");
	dreapn(c, &r, 1, true, "rest of the batch");

	/* links: an error breaks the chain */
	e = evt(EPOLLIN, 30);
	ctl(&r, ep, EPOLL_CTL_ADD, p[0], &e, 30, IOSQE_IO_LINK);
	ctl(&r, ep, EPOLL_CTL_ADD, p[0], &e, 31, IOSQE_IO_LINK);
	ctl(&r, ep, EPOLL_CTL_DEL, p[0], NULL, 32, 0);
	dsubmit_sqp(c, &r, "chain ADD, ADD(-EEXIST), DEL");
	dreapn(c, &r, 3, true, "chain ADD, ADD(-EEXIST), DEL");
	ctl(&r, ep, EPOLL_CTL_DEL, p[0], NULL, 33, IOSQE_ASYNC);
	dnow_sqp(c, &r, "ASYNC DEL");
	/* fixed-file flag: EPOLL_CTL takes no file, the flag is ignored */
	ctl(&r, ep, EPOLL_CTL_ADD, p[0], &e, 34, IOSQE_FIXED_FILE);
	dnow_sqp(c, &r, "ADD with IOSQE_FIXED_FILE");
	ctl(&r, ep, EPOLL_CTL_DEL, p[0], NULL, 35, IOSQE_CQE_SKIP_SUCCESS);
	ctl(&r, ep, EPOLL_CTL_ADD, p[0], &e, 36, IOSQE_CQE_SKIP_SUCCESS);
	ctl(&r, ep, EPOLL_CTL_ADD, p[0], &e, 37, IOSQE_CQE_SKIP_SUCCESS);
	dsubmit_sqp(c, &r, "skip-success: only the failure posts");
	dreapn(c, &r, 1, true, "skip-success: only the failure posts");
	dnone_sqp(c, &r, 20, "skip-success");
	close(ep);
	close(ep2);
	tclose2(p);
	close(file);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_ctl_basic, body_ctl_basic)

/*
 * libuv's pattern (T17): one batch of EPOLL_CTL SQEs per loop iteration,
 * enter(n, 0) must return exactly n, ADD may fail only with -EEXIST (then
 * it retries with MOD).
 */
static long body_ctl_batch(struct dctx *c, void *arg)
{
	enum { N = 48 };
	struct epoll_event e[N], got[N];
	struct tcqe q[N];
	struct tring r;
	int ep, fds[N], ret, n_ok = 0, n_exist = 0, other = 0;

	(void)arg;
	if (dring_flags(c, &r, 64, 0))
		return 0;
	ep = epoll_create1(EPOLL_CLOEXEC);
	for (int i = 0; i < N; i++) {
		fds[i] = eventfd(i & 1, EFD_CLOEXEC | EFD_NONBLOCK);
		e[i] = evt(EPOLLIN, 1000 + (uint64_t)i);
		ctl(&r, ep, EPOLL_CTL_ADD, fds[i], &e[i], (uint64_t)i, 0);
	}
	ret = tring_submit(&r);
	drec_int(c, ret, "enter(%d) returns", N);
	dcheck(c, ret == N, "enter returned %d", ret);
	ret = (int)tring_reap_wait(&r, q, N, 2 * SEC);
	drec_cqes(c, q, (unsigned int)ret, false, "first batch");
	/* the second batch: half already registered */
	for (int i = 0; i < N; i++) {
		e[i] = evt(EPOLLIN | EPOLLOUT, 2000 + (uint64_t)i);
		ctl(&r, ep, (i & 1) ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fds[i],
		    &e[i], 100 + (uint64_t)i, 0);
	}
	drec_int(c, tring_submit(&r), "second batch: enter");
	ret = (int)tring_reap_wait(&r, q, N, 2 * SEC);
	for (int i = 0; i < ret; i++) {
		if (!q[i].res)
			n_ok++;
		else if (q[i].res == -EEXIST)
			n_exist++;
		else
			other++;
	}
	drec_int(c, n_ok, "second batch: 0");
	drec_int(c, n_exist, "second batch: -EEXIST");
	drec_int(c, other, "second batch: other errors");
	ret = epoll_wait(ep, got, N, 0);
	drec_int(c, ret, "epoll_wait sees");
	rec_events(c, got, ret, "epoll_wait sees");
	for (int i = 0; i < N; i++)
		close(fds[i]);
	close(ep);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_ctl_batch, body_ctl_batch)

/* ---- EPOLL_WAIT ---- */

static long body_wait_basic(struct dctx *c, void *arg)
{
	struct epoll_event e, evs[8];
	struct tring r;
	int ep, p[2], q[2], res;

	(void)arg;
	if (dring_flags(c, &r, 32, 0) || pipe(p) || pipe(q))
		return 0;
	ep = epoll_create1(EPOLL_CLOEXEC);
	e = evt(EPOLLIN, 0xa);
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e);
	e = evt(EPOLLIN, 0xb);
	epoll_ctl(ep, EPOLL_CTL_ADD, q[0], &e);

	/* nothing ready: waits for readiness of the epoll fd */
	memset(evs, 0xee, sizeof(evs));
	ewait(&r, ep, evs, 8, 1, 0);
	dsubmit_sqp(c, &r, "nothing ready");
	dnone_sqp(c, &r, 50, "nothing ready");
	twrite(p[1], "x", 1);
	res = dreap1(c, &r, "after a write");
	rec_events(c, evs, res, "after a write");
	drec_int(c, evs[1].events == 0xeeeeeeeeu, "second slot untouched");

	/* ready at once: both */
	twrite(q[1], "y", 1);
	memset(evs, 0, sizeof(evs));
	ewait(&r, ep, evs, 8, 2, 0);
	res = dnow_sqp(c, &r, "two ready");
	rec_events(c, evs, res, "two ready");
	/* maxevents 1 of 2 ready */
	memset(evs, 0, sizeof(evs));
	ewait(&r, ep, evs, 1, 3, 0);
	res = dnow_sqp(c, &r, "maxevents 1");
	drec_int(c, res == 1 && (evs[0].data.u64 == 0xa ||
				 evs[0].data.u64 == 0xb), "one of the two");
	tdrain_fd(p[0]);
	tdrain_fd(q[0]);

	/* errors */
	ewait(&r, ep, evs, 0, 10, 0);
	dnow_sqp(c, &r, "maxevents 0: -EINVAL");
	ewait(&r, ep, evs, -1, 11, 0);
	dnow_sqp(c, &r, "maxevents -1: -EINVAL");
	ewait(&r, ep, evs, 0x7fffffff, 12, 0);
	dnow_sqp(c, &r, "maxevents huge: -EINVAL");
	ewait(&r, p[0], evs, 8, 13, 0);
	dnow_sqp(c, &r, "not an epoll fd: -EINVAL");
	ewait(&r, 9999, evs, 8, 14, 0);
	dnow_sqp(c, &r, "bad fd: -EBADF");
	ewait(&r, ep, (void *)(uintptr_t)0xffff800000000000ULL, 8, 15, 0);
	dnow_sqp(c, &r, "kernel address: -EFAULT");
	twrite(p[1], "x", 1);
	ewait(&r, ep, dunmapped_addr(), 8, 16, 0);
	dnow_sqp(c, &r, "unmapped array, event ready: -EFAULT");
	ewait(&r, ep, dprot_none_page(), 8, 17, 0);
	dnow_sqp(c, &r, "PROT_NONE array, event ready: -EFAULT");
	tdrain_fd(p[0]);

	/* prep checks */
	ewait(&r, ep, evs, 8, 20, 0)->off = 1;
	dnow_sqp(c, &r, "off set: -EINVAL");
	ewait(&r, ep, evs, 8, 21, 0)->rw_flags = 1;
	dnow_sqp(c, &r, "rw_flags set: -EINVAL");
	ewait(&r, ep, evs, 8, 22, 0)->buf_index = 1;
	dnow_sqp(c, &r, "buf_index set: -EINVAL");
	ewait(&r, ep, evs, 8, 23, 0)->splice_fd_in = 1;
	dnow_sqp(c, &r, "splice_fd_in set: -EINVAL");
	ewait(&r, ep, evs, 8, 24, 0)->ioprio = 1;
	dnow_sqp(c, &r, "ioprio set: -EINVAL");
	ewait(&r, ep, NULL, 8, 25, IOSQE_BUFFER_SELECT);
	dnow_sqp(c, &r, "BUFFER_SELECT");

	close(ep);
	tclose2(p);
	tclose2(q);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_wait_basic, body_wait_basic)

static long body_wait_cancel(struct dctx *c, void *arg)
{
	struct epoll_event e, evs[4];
	struct io_uring_sqe *s;
	struct tring r;
	int ep, efd, res;

	(void)arg;
	if (dring_flags(c, &r, 32, 0))
		return 0;
	ep = epoll_create1(EPOLL_CLOEXEC);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	e = evt(EPOLLIN, 0x42);
	epoll_ctl(ep, EPOLL_CTL_ADD, efd, &e);

	ewait(&r, ep, evs, 4, 1, 0);
	dsubmit_sqp(c, &r, "waiting");
	dnone_sqp(c, &r, 30, "waiting");
	s = tprep(&r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 2, 0);
	s->addr = 1;
	dsubmit_sqp(c, &r, "cancel it");
	dreapn(c, &r, 2, false, "cancel it");

	/* IOSQE_ASYNC: waits on readiness too, never holds a worker */
	ewait(&r, ep, evs, 4, 3, IOSQE_ASYNC);
	dsubmit_sqp(c, &r, "ASYNC waiting");
	dnone_sqp(c, &r, 30, "ASYNC waiting");
	eventfd_write(efd, 1);
	res = dreap1(c, &r, "ASYNC after a signal");
	rec_events(c, evs, res, "ASYNC after a signal");
	eventfd_t v;
	eventfd_read(efd, &v);

	/* edge-triggered interest, two waiters, one event: one completes */
	e = evt(EPOLLIN | EPOLLET, 0x43);
	epoll_ctl(ep, EPOLL_CTL_MOD, efd, &e);
	struct epoll_event evs2[4];

	ewait(&r, ep, evs, 4, 4, 0);
	ewait(&r, ep, evs2, 4, 5, 0);
	dsubmit_sqp(c, &r, "two waiters");
	dnone_sqp(c, &r, 30, "two waiters");
	eventfd_write(efd, 1);
	/* which waiter gets it is not defined (the kernel wakes the last
	 * armed first): record results, not user_data */
	struct tcqe one[2];

	res = (int)tring_reap_wait(&r, &one[0], 1, 2 * SEC);
	drec_int(c, res ? one[0].res : -99999, "one event: res");
	dnone_sqp(c, &r, 50, "the other still waits");
	eventfd_write(efd, 1);
	res = (int)tring_reap_wait(&r, &one[1], 1, 2 * SEC);
	drec_int(c, res ? one[1].res : -99999, "second event: res");
	drec_int(c, (long)(one[0].user_data + one[1].user_data),
		 "both waiters completed");

	/* links: a wait in a chain, then a NOP */
	ewait(&r, ep, evs, 4, 6, IOSQE_IO_LINK);
	tprep(&r, IORING_OP_NOP, -1, NULL, 0, 0, 7, 0);
	dsubmit_sqp(c, &r, "linked wait");
	dnone_sqp(c, &r, 30, "linked wait");
	eventfd_write(efd, 1);
	dreapn(c, &r, 2, true, "linked wait completes, then the NOP");
	/* a failing wait breaks its chain */
	ewait(&r, ep, evs, 0, 8, IOSQE_IO_LINK);
	tprep(&r, IORING_OP_NOP, -1, NULL, 0, 0, 9, 0);
	dsubmit_sqp(c, &r, "failing linked wait");
	dreapn(c, &r, 2, true, "failing linked wait");

	/* a wait on a nested epoll instance */
	int outer = epoll_create1(EPOLL_CLOEXEC);

	eventfd_read(efd, &v);
	e = evt(EPOLLIN, 0x99);
	epoll_ctl(outer, EPOLL_CTL_ADD, ep, &e);
	ewait(&r, outer, evs, 4, 10, 0);
	dsubmit_sqp(c, &r, "nested");
	dnone_sqp(c, &r, 30, "nested");
	eventfd_write(efd, 1);
	res = dreap1(c, &r, "nested after a signal");
	rec_events(c, evs, res, "nested after a signal");

	/* the application closes its epoll fd while a wait is parked: the
	 * request holds its file (T4); the wait completes later */
	int ep3 = epoll_create1(EPOLL_CLOEXEC), sp[2];

	if (tsockpair(sp))
		return 0;
	e = evt(EPOLLIN, 0x77);
	epoll_ctl(ep3, EPOLL_CTL_ADD, sp[0], &e);
	ewait(&r, ep3, evs, 4, 11, 0);
	dsubmit_sqp(c, &r, "parked, then its epoll fd closed");
	dnone_sqp(c, &r, 30, "parked");
	close(ep3);
	twrite(sp[1], "z", 1);
	res = dreap1(c, &r, "closed epoll fd, data arrives");
	rec_events(c, evs, res, "closed epoll fd, data arrives");

	tclose2(sp);
	close(outer);
	close(ep);
	close(efd);
	tring_exit(&r);
	return 0;
}
ISOLATED(sc_wait_cancel, body_wait_cancel)

/* PROBE lists both opcodes */
static void sc_probe(struct dctx *c)
{
	static const int ops[] = { IORING_OP_EPOLL_CTL, IORING_OP_EPOLL_WAIT };
	static const char *const labels[] = { "EPOLL_CTL supported",
					      "EPOLL_WAIT supported" };

	dprobe_ops(c, ops, labels, 2);
}

static const struct dscenario scenarios[] = {
	{ "epoll_ctl_basic", sc_ctl_basic, NULL },
	{ "epoll_ctl_batch", sc_ctl_batch, NULL },
	{ "epoll_wait_basic", sc_wait_basic, NULL },
	{ "epoll_wait_cancel_async_links", sc_wait_cancel, NULL },
	{ "epoll_probe", sc_probe, NULL },
};

DTEST_MAIN(scenarios)
