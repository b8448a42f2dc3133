// SPDX-License-Identifier: MIT
/*
 * The URING_CMD file-type interface (src/ops/uring_cmd.h), uuring only:
 * no file on this machine gives the kernel a command that stays queued,
 * so there is nothing to compare with (tests/test_diff_uring_cmd compares
 * the socket and /dev/null commands with the kernel).
 *
 * A file type of the test's own, registered on a memfd, on plain, coop,
 * defer and sqpoll rings with CQE32: an inline result, -EAGAIN then an
 * io-wq worker, a done inside the stable call (res2 in big[0]), what a
 * handler reads (payload, fixed file, buf_index, task, user_data, pdu);
 * queued commands ended from a thread without an engine context;
 * ASYNC_CANCEL and a firing LINK_TIMEOUT answering -ENOENT for a queued
 * command (the kernel's io_try_cancel has no uring_cmd case); a chain
 * broken by a negative done; the cancel call at the exit of the thread
 * that submitted a cancelable command (not on SQPOLL, where the SQ
 * thread submits); and at ring exit the cancel call for exactly the
 * cancelable commands, one ending in the call, one whose done from
 * another thread is held until the call returns.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tcheck.h"
#include "tprep.h"
#include "tring.h"
#include "ops/uring_cmd.h"

#define MS 1000000LL

static struct io_uring_sqe *cmdp(struct tring *r, int fd, uint32_t op,
				 uint64_t ud, uint8_t flags)
{
	struct io_uring_sqe *s = tprep(r, IORING_OP_URING_CMD, fd, NULL, 0, 0,
				       ud, flags);

	s->cmd_op = op;
	return s;
}

enum {
	TT_SYNC = 1,       /* ends at once: 1000 + payload[0] */
	TT_WORKER,         /* -EAGAIN, then 2000 in an io-wq worker */
	TT_QUEUE,          /* parks; kept in slot payload[0]; payload[1]:
			    * cancelable; payload[2]: how the cancel call
			    * ends it (1 in the call, 2 from a thread) */
	TT_DONE_INLINE,    /* parks, ends inside its stable call: 4000 */
	TT_LOOK,           /* ends with what it saw (see tt_look) */
};

#define TT_SLOTS 8
static dev_t tt_dev;
static ino_t tt_ino;
static struct uu_req *_Atomic tt_slot[TT_SLOTS];
static atomic_int tt_cancel_calls, tt_cancel_mask, tt_worker_calls;
static atomic_int tt_stable_calls;

static bool tt_match(int fd, const struct stat *st)
{
	(void)fd;
	return S_ISREG(st->st_mode) && st->st_dev == tt_dev &&
	       st->st_ino == tt_ino;
}

static const unsigned char *tt_bytes(const struct uu_req *req, size_t *len)
{
	return uu_cmd_payload(req, len);
}

static void *tt_done_thread(void *arg)
{
	uu_uring_cmd_done(arg, -ECANCELED, 0xdd, 0);
	return NULL;
}

static int tt_cancel(struct uu_req *req, unsigned int flags)
{
	size_t len;
	const unsigned char *b = tt_bytes(req, &len);
	pthread_t t;

	atomic_fetch_add(&tt_cancel_calls, 1);
	atomic_fetch_or(&tt_cancel_mask, 1 << b[0]);
	atomic_store(&tt_slot[b[0]], NULL);
	if (b[2] == 1) {
		uu_uring_cmd_done(req, -ECANCELED, 0xcc, flags);
	} else if (b[2] == 2) {
		/* a done from another thread during the cancel call: held
		 * until this call returns, so req is still ours here */
		pthread_create(&t, NULL, tt_done_thread, req);
		pthread_join(t, NULL);
		if (uu_cmd_op(req) != TT_QUEUE)
			abort();
	}
	return 0;
}

/* what a handler reads: op, payload size, flags, fd, task */
static int tt_look(struct uu_req *req, unsigned int flags)
{
	size_t len;
	const unsigned char *b = tt_bytes(req, &len);
	struct stat st;
	int ok = 0;

	ok |= (len == ((flags & UU_CMD_F_SQE128) ? 80u : 16u)) << 0;
	ok |= (b[len - 1] == 0x5a) << 1;
	ok |= (!fstat(uu_cmd_fd(req), &st) && tt_match(-1, &st)) << 2;
	ok |= (uu_cmd_task(req) > 0) << 3;
	ok |= (uu_cmd_user_data(req) == 0x1100) << 4;
	ok |= !!(flags & UU_CMD_F_CQE32) << 5;
	ok |= (uu_cmd_flags(req) == IORING_URING_CMD_FIXED &&
	       uu_cmd_buf_index(req) == 3) << 6;
	ok |= (uu_cmd_sqe(req)->cmd_op == TT_LOOK) << 7;
	return ok;
}

static int tt_issue(struct uu_req *req, unsigned int flags)
{
	size_t len;
	const unsigned char *b = tt_bytes(req, &len);

	if (flags & UU_CMD_F_CANCEL)
		return tt_cancel(req, flags);
	switch (uu_cmd_op(req)) {
	case TT_SYNC:
		return 1000 + b[0];
	case TT_WORKER:
		if (!(flags & 1u)) /* UU_ISSUE_F_WORKER */
			return -EAGAIN;
		atomic_fetch_add(&tt_worker_calls, 1);
		return 2000;
	case TT_QUEUE:
		if (!(flags & UU_CMD_F_STABLE))
			return UU_CMD_PARK;
		atomic_fetch_add(&tt_stable_calls, 1);
		memcpy(uu_cmd_pdu(req), "pdu", 4);
		if (b[1])
			uu_uring_cmd_mark_cancelable(req, flags);
		atomic_store(&tt_slot[b[0] % TT_SLOTS], req);
		return UU_CMD_QUEUED;
	case TT_DONE_INLINE:
		if (!(flags & UU_CMD_F_STABLE))
			return UU_CMD_PARK;
		uu_uring_cmd_done(req, 4000, 0x44, flags);
		return UU_CMD_QUEUED;
	case TT_LOOK:
		return tt_look(req, flags);
	default:
		return -EOPNOTSUPP;
	}
}

static const struct uu_cmd_file_type tt_type = {
	.name = "test",
	.match = tt_match,
	.issue = tt_issue,
};

static struct io_uring_sqe *ttp(struct tring *r, int fd, uint32_t op,
				uint8_t b0, uint8_t b1, uint8_t b2,
				uint64_t ud, uint8_t flags)
{
	struct io_uring_sqe *s = cmdp(r, fd, op, ud, flags);

	s->cmd[0] = b0;
	s->cmd[1] = b1;
	s->cmd[2] = b2;
	return s;
}

static struct uu_req *tt_take(int slot)
{
	struct uu_req *req = NULL;

	for (int i = 0; i < 2000 && !req; i++) {
		req = atomic_exchange(&tt_slot[slot], NULL);
		if (!req)
			usleep(1000); /* the SQ thread issues it (SQPOLL) */
	}
	return req;
}

struct tt_end {
	struct uu_req *req;
	int32_t res;
	uint64_t res2;
};

static void *tt_end_thread(void *arg)
{
	struct tt_end *e = arg;

	uu_uring_cmd_done(e->req, e->res, e->res2, 0);
	return NULL;
}

/* ends req from a thread of its own: no engine context there */
static void tt_end(struct uu_req *req, int32_t res, uint64_t res2)
{
	struct tt_end e = { req, res, res2 };
	pthread_t t;

	if (!req)
		return;
	pthread_create(&t, NULL, tt_end_thread, &e);
	pthread_join(t, NULL);
}

/* submits what is queued; on an SQPOLL ring wakes the SQ thread as
 * liburing does and waits until it has taken the SQEs */
static void tt_submit(struct tring *r)
{
	unsigned int n = tring_flush(r);

	r->be->enter((unsigned int)r->fd, n, 0,
		     tring_sqpoll_wakeup_flag(r, n), NULL, 0);
	tring_sqpoll_await_sq_taken(r, 2000);
}

static int tt_reap(struct tring *r, struct tcqe *q, unsigned int n)
{
	return (int)tring_reap_wait(r, q, n, 2000 * MS);
}

struct tt_thread_sub {
	struct tring *r;
	int fd;
};

/* another thread submits a cancelable command, then exits */
static void *tt_thread_submit(void *arg)
{
	struct tt_thread_sub *ts = arg;

	ttp(ts->r, ts->fd, TT_QUEUE, 7, 1, 1, 27, 0);
	tt_submit(ts->r);
	if (!(ts->r->flags & IORING_SETUP_SQPOLL))
		atomic_store(&tt_slot[7], NULL); /* ended by the exit */
	return NULL;
}

/* inline results, io-wq, a done inside the stable call, what it reads */
static void tt_inline(struct tring *r, const char *mode, int fd)
{
	struct io_uring_sqe *s;
	struct tcqe q[1];
	int table[1] = { fd };

	ttp(r, fd, TT_SYNC, 7, 0, 0, 1, 0);
	tt_submit(r);
	CHECK(tt_reap(r, q, 1) == 1 && q[0].res == 1007 && !q[0].big[0],
	      "%s: SYNC: %d", mode, q[0].res);
	ttp(r, fd, TT_WORKER, 0, 0, 0, 2, 0);
	tt_submit(r);
	CHECK(tt_reap(r, q, 1) == 1 && q[0].res == 2000 &&
		      atomic_load(&tt_worker_calls) > 0,
	      "%s: -EAGAIN then a worker: %d", mode, q[0].res);
	ttp(r, fd, TT_DONE_INLINE, 0, 0, 0, 3, 0);
	tt_submit(r);
	CHECK(tt_reap(r, q, 1) == 1 && q[0].res == 4000 &&
		      q[0].big[0] == 0x44 && q[0].big[1] == 0,
	      "%s: done in the stable call: %d big %llx", mode, q[0].res,
	      (unsigned long long)q[0].big[0]);
	r->be->reg((unsigned int)r->fd, IORING_REGISTER_FILES, table, 1);
	s = ttp(r, 0, TT_LOOK, 0, 0, 0, 0x1100, IOSQE_FIXED_FILE);
	s->uring_cmd_flags = IORING_URING_CMD_FIXED;
	s->buf_index = 3;
	s->cmd[15] = 0x5a;
	tt_submit(r);
	CHECK(tt_reap(r, q, 1) == 1 && q[0].res == 0xff,
	      "%s: what the handler saw (fixed file): %#x", mode, q[0].res);

}

/* queued commands: ended from a thread; cancels that do not reach them */
static void tt_queued(struct tring *r, const char *mode, int fd)
{
	struct uu_req *a, *b;
	struct tcqe q[2];
	int n;

	/* queued: ended from another thread; ASYNC_CANCEL does not reach
	 * it, cancelable or not (-ENOENT) */
	ttp(r, fd, TT_QUEUE, 0, 0, 0, 10, 0);
	ttp(r, fd, TT_QUEUE, 1, 1, 1, 11, 0);
	tt_submit(r);
	a = tt_take(0);
	b = tt_take(1);
	CHECK(a && b, "%s: both queued", mode);
	CHECK(a && !memcmp(uu_cmd_pdu(a), "pdu", 4), "%s: pdu", mode);
	CHECK(tring_wait(r, 1, 30 * MS) == -ETIME, "%s: no CQE while queued",
	      mode);
	tprep(r, IORING_OP_ASYNC_CANCEL, -1, (void *)(uintptr_t)11, 0, 0, 12,
	      0);
	tt_submit(r);
	CHECK(tt_reap(r, q, 1) == 1 && q[0].user_data == 12 &&
		      q[0].res == -ENOENT,
	      "%s: ASYNC_CANCEL of a queued command: %d", mode, q[0].res);
	tt_end(a, 42, 0xabc);
	tt_end(b, -EIO, 0);
	n = tt_reap(r, q, 2);
	CHECK(n == 2 && q[0].user_data == 10 && q[0].res == 42 &&
		      q[0].big[0] == 0xabc && q[1].user_data == 11 &&
		      q[1].res == -EIO,
	      "%s: ended from a thread: %d CQEs, %d %d", mode, n, q[0].res,
	      q[1].res);

	/* a negative result breaks its chain */
	ttp(r, fd, TT_QUEUE, 2, 0, 0, 20, IOSQE_IO_LINK);
	tprep_nop(r, 21, 0);
	tt_submit(r);
	tt_end(tt_take(2), -5, 0);
	n = tt_reap(r, q, 2);
	CHECK(n == 2 && q[0].res == -5 && q[1].user_data == 21 &&
		      q[1].res == -ECANCELED,
	      "%s: chain after -5: %d CQEs, %d %d", mode, n, q[0].res,
	      q[1].res);

	/* a LINK_TIMEOUT does not cancel it either: -ENOENT, and the
	 * command ends when its handler says (io_req_task_link_timeout;
	 * uuring posts the timeout's CQE with the command's, where the
	 * kernel posts it when it fires: docs/compatibility.md #34) */
	{
		struct __kernel_timespec ts = { 0, 10 * MS };
		struct uu_req *lt_cmd;

		struct __kernel_timespec later = { 0, 20 * MS };

		ttp(r, fd, TT_QUEUE, 6, 1, 1, 25, IOSQE_IO_LINK);
		tprep(r, IORING_OP_LINK_TIMEOUT, -1, &ts, 1, 0, 26, 0);
		tt_submit(r);
		lt_cmd = tt_take(6);
		/* a TIMEOUT due after it: the one timer thread fires them in
		 * deadline order, so once this one's CQE is there the link
		 * timeout has fired (no guess at a scheduling delay) */
		tprep(r, IORING_OP_TIMEOUT, -1, &later, 1, 0, 28, 0);
		tt_submit(r);
		n = tt_reap(r, q, 1);
		CHECK(n == 1 && q[0].user_data == 28 && q[0].res == -ETIME,
		      "%s: the later TIMEOUT: %d CQEs, %d", mode, n, q[0].res);
		tt_end(lt_cmd, 6, 0);
		n = tt_reap(r, q, 2);
		CHECK(n == 2 && q[0].user_data + q[1].user_data == 51 &&
			      (q[0].user_data == 26 ? q[0].res : q[1].res) ==
				      -ENOENT &&
			      (q[0].user_data == 25 ? q[0].res : q[1].res) == 6,
		      "%s: LINK_TIMEOUT on a queued command: %d CQEs, %d %d",
		      mode, n, q[0].res, q[1].res);
	}

}

/* a submitting thread's exit */
static void tt_thread_exit(struct tring *r, const char *mode,
			   unsigned int flags, int fd)
{
	struct tcqe q[1];
	int n;

	/* a task's exit: the cancelable commands it submitted (on an
	 * SQPOLL ring the SQ thread submits them: not cancelled) */
	{
		struct tt_thread_sub ts = { r, fd };
		bool sq = flags & IORING_SETUP_SQPOLL;
		pthread_t t;

		atomic_store(&tt_cancel_calls, 0);
		if (!(flags & IORING_SETUP_SINGLE_ISSUER)) {
			pthread_create(&t, NULL, tt_thread_submit, &ts);
			pthread_join(t, NULL);
			CHECK(atomic_load(&tt_cancel_calls) == !sq,
			      "%s: cancel calls at a thread's exit: %d", mode,
			      atomic_load(&tt_cancel_calls));
			if (sq)
				tt_end(tt_take(7), -ECANCELED, 0xcc);
			n = tt_reap(r, q, 1);
			CHECK(n == 1 && q[0].user_data == 27 &&
				      q[0].res == -ECANCELED &&
				      q[0].big[0] == 0xcc,
			      "%s: the exited thread's command: %d CQEs, %d",
			      mode, n, q[0].res);
		}
	}

}

/*
 * A multishot socket command that succeeds: no CQE, as on the kernel,
 * where IOU_ISSUE_SKIP_COMPLETE leaves it to the socket, which posts
 * nothing (checked there once by hand: it cannot be in a differential
 * test, the kernel's SQPOLL thread never exits after it).  The request
 * stays parked and holds its ring: a ring of its own, left behind.
 */
static void tt_multishot_socket(const char *mode, unsigned int flags)
{
	struct io_uring_sqe *s;
	struct tring r;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || tring_init(&r, &backend_uuring, 8, flags)) {
		CHECK(0, "%s: multishot socket command: setup", mode);
		return;
	}
	s = cmdp(&r, fd, 0 /* SIOCINQ */, 1, IOSQE_BUFFER_SELECT);
	s->uring_cmd_flags = IORING_URING_CMD_MULTISHOT;
	tt_submit(&r);
	CHECK(tring_wait(&r, 1, 30 * MS) == -ETIME && !tring_cq_ready(&r),
	      "%s: multishot socket command: no CQE", mode);
	/* not tring_exit: the request keeps the ring (its fd closes) */
	r.be->close(r.fd);
	close(fd);
}

/* in a child process, which takes the ring it leaves behind with it
 * (LeakSanitizer would report it at a normal exit) */
static void tt_multishot_child(const char *mode, unsigned int flags)
{
	pid_t pid;
	int st = 0;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int before = tcheck_failures;

		tt_multishot_socket(mode, flags);
		fflush(stdout);
		_exit(tcheck_failures != before);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		      !WEXITSTATUS(st),
	      "%s: multishot socket command (child): status %#x", mode, st);
}

/* the ring's exit: the cancel call for the cancelable ones only */
static void tt_ring_exit(struct tring *r, const char *mode, int fd)
{
	struct uu_req *keep;

	atomic_store(&tt_cancel_calls, 0);
	atomic_store(&tt_cancel_mask, 0);
	ttp(r, fd, TT_QUEUE, 3, 1, 1, 30, 0);
	ttp(r, fd, TT_QUEUE, 4, 1, 2, 31, 0);
	ttp(r, fd, TT_QUEUE, 5, 0, 0, 32, 0);
	tt_submit(r);
	keep = tt_take(5);
	CHECK(tt_take(3) && tt_take(4) && keep, "%s: three queued", mode);
	/* the slots are read back by the cancel call itself */
	atomic_store(&tt_slot[3], NULL);
	tring_exit(r);
	CHECK(atomic_load(&tt_cancel_calls) == 2 &&
		      atomic_load(&tt_cancel_mask) == ((1 << 3) | (1 << 4)),
	      "%s: cancel calls at exit: %d (mask %#x)", mode,
	      atomic_load(&tt_cancel_calls), atomic_load(&tt_cancel_mask));
	/* the one that was not cancelable is still the handler's */
	tt_end(keep, 0, 0);
}

static void tt_mode(const char *mode, unsigned int flags, int fd)
{
	struct tring r;

	printf("# %s ring\n", mode);
	if (tring_init(&r, &backend_uuring, 16, flags | IORING_SETUP_CQE32)) {
		CHECK(0, "%s: ring setup", mode);
		return;
	}
	tt_inline(&r, mode, fd);
	tt_queued(&r, mode, fd);
	tt_thread_exit(&r, mode, flags, fd);
	tt_ring_exit(&r, mode, fd);
	tt_multishot_child(mode, flags);
}

/* argv[1], if given: the one ring mode to run (plain, coop, defer, sqpoll) */
int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;
	static const struct {
		const char *name;
		unsigned int flags;
	} modes[] = {
		{ "plain", 0 },
		{ "coop", IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG },
		{ "defer", IORING_SETUP_DEFER_TASKRUN |
				   IORING_SETUP_SINGLE_ISSUER },
		{ "sqpoll", IORING_SETUP_SQPOLL },
	};
	struct stat st;
	int fd;

	/* each mode is run here: no flags added by a ring-mode rerun */
	unsetenv("UURING_TEST_RING_MODE");
	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = memfd_create("uu-test-cmd", MFD_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		return 1;
	tt_dev = st.st_dev;
	tt_ino = st.st_ino;
	CHECK(uu_cmd_register_file_type(&tt_type) == 0, "register");
	CHECK(uu_cmd_register_file_type(&tt_type) == -EEXIST, "twice");
	for (unsigned int i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!only || !strcmp(only, modes[i].name))
			tt_mode(modes[i].name, modes[i].flags, fd);
	close(fd);
	printf("%s: %d failed checks\n", argv[0], tcheck_failures);
	return tcheck_failures ? 1 : 0;
}

