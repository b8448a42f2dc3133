// SPDX-License-Identifier: MIT
/*
 * The non-fio loads of the soak (tests/soak/soak.py, `make soak`), an
 * unmodified liburing program meant to run under `uuring run --mode=force
 * --block-kernel-uring`:
 *
 *   soak_load echo SECONDS      a TCP echo server (one ring) and four
 *                               clients (plain, SQPOLL, DEFER_TASKRUN and
 *                               COOP_TASKRUN rings) over loopback; every
 *                               echoed byte is compared, every connection
 *                               is closed after 100 messages and opened
 *                               again
 *   soak_load timers SECONDS    TIMEOUT, TIMEOUT_REMOVE, LINK_TIMEOUT,
 *                               POLL_ADD and ASYNC_CANCEL rounds on a
 *                               plain and an SQPOLL ring, every CQE's
 *                               result checked against what the kernel
 *                               returns, no CQE missing or duplicated
 *   soak_load forkexec SECONDS  fork children that submit on the
 *                               parent's ring (a NOP and a WRITE to a
 *                               pipe), then exec this program as
 *                               `exec-child`, which sets up a ring of its
 *                               own; the parent then uses the ring itself
 *
 * Each ends with one line "soak_load MODE: ... errors=N" and exits 0 only
 * when N is 0.  The first errors are printed as they happen.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ECHO_CLIENTS 4
#define MSGS_PER_CONN 100
#define MSG_MAX 8192

/* Counted from several threads; read once at the end after the joins. */
static atomic_ulong error_count;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void report_error(const char *what, long got, long want)
{
	unsigned long n = atomic_fetch_add_explicit(&error_count, 1,
						    memory_order_relaxed);

	if (n < 20)
		fprintf(stderr, "soak_load error: %s: got %ld, want %ld\n",
			what, got, want);
}

/* Waits for one CQE; returns its result and user_data, or -1 on failure. */
static int wait_one(struct io_uring *ring, uint64_t *user_data, int *res)
{
	struct io_uring_cqe *cqe;
	int ret;

	do
		ret = io_uring_wait_cqe(ring, &cqe);
	while (ret == -EINTR);
	if (ret < 0) {
		report_error("io_uring_wait_cqe", ret, 0);
		return -1;
	}
	*user_data = cqe->user_data;
	*res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return 0;
}

/* ---- echo ---- */

struct echo_conn {
	int fd;
	int len;
	int off;
	char buf[MSG_MAX];
};

enum { ECHO_ACCEPT = 1, ECHO_RECV = 2, ECHO_SEND = 3 };

static atomic_bool echo_stop;

static void server_arm(struct io_uring *ring, struct echo_conn *c, int op)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe) {
		io_uring_submit(ring);
		sqe = io_uring_get_sqe(ring);
	}
	if (op == ECHO_RECV)
		io_uring_prep_recv(sqe, c->fd, c->buf, sizeof(c->buf), 0);
	else
		io_uring_prep_send(sqe, c->fd, c->buf + c->off,
				   c->len - c->off, MSG_NOSIGNAL);
	/* struct pointers are 8-aligned: the low bits carry the op */
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)c | op);
}

static void server_arm_accept(struct io_uring *ring, int lfd)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	io_uring_prep_accept(sqe, lfd, NULL, NULL, 0);
	io_uring_sqe_set_data64(sqe, ECHO_ACCEPT);
}

/* One completion of the server: accept, recv or send. */
static void server_complete(struct io_uring *ring, int lfd, uint64_t ud,
			    int res)
{
	struct echo_conn *c = (struct echo_conn *)(uintptr_t)(ud & ~7ULL);
	int op = (int)(ud & 7);

	if (op == ECHO_ACCEPT) {
		if (res < 0) {
			report_error("server accept", res, 0);
		} else {
			c = calloc(1, sizeof(*c));
			c->fd = res;
			server_arm(ring, c, ECHO_RECV);
		}
		server_arm_accept(ring, lfd);
		return;
	}
	if (res <= 0) {
		/* 0: the client closed after its last echo */
		if (res < 0)
			report_error("server recv/send", res, 0);
		close(c->fd);
		free(c);
		return;
	}
	if (op == ECHO_RECV) {
		c->len = res;
		c->off = 0;
		server_arm(ring, c, ECHO_SEND);
		return;
	}
	c->off += res;
	server_arm(ring, c, c->off < c->len ? ECHO_SEND : ECHO_RECV);
}

static void *server_main(void *arg)
{
	int lfd = *(int *)arg;
	struct io_uring ring;
	struct __kernel_timespec tick = { .tv_nsec = 100 * 1000 * 1000 };
	int ret = io_uring_queue_init(64, &ring, 0);

	if (ret < 0) {
		report_error("server queue_init", ret, 0);
		return NULL;
	}
	server_arm_accept(&ring, lfd);
	while (!atomic_load_explicit(&echo_stop, memory_order_relaxed)) {
		struct io_uring_cqe *cqe;
		uint64_t ud;
		int res;

		io_uring_submit(&ring);
		ret = io_uring_wait_cqe_timeout(&ring, &cqe, &tick);
		if (ret == -ETIME || ret == -EINTR)
			continue;
		if (ret < 0) {
			report_error("server wait", ret, 0);
			break;
		}
		ud = cqe->user_data;
		res = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
		server_complete(&ring, lfd, ud, res);
	}
	/* connections still open are the clients' last ones, all closed */
	io_uring_queue_exit(&ring);
	return NULL;
}

struct echo_client {
	unsigned int ring_flags;
	struct sockaddr_in addr;
	double deadline;
	unsigned long msgs, bytes, conns;
	char out[MSG_MAX], in[MSG_MAX];
};

/* Sends or receives exactly len bytes through the ring; 0 or -1. */
static int client_xfer(struct io_uring *ring, int fd, char *buf, int len,
		       bool is_send)
{
	int done = 0;

	while (done < len) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
		uint64_t ud;
		int res;

		if (is_send)
			io_uring_prep_send(sqe, fd, buf + done, len - done,
					   MSG_NOSIGNAL);
		else
			io_uring_prep_recv(sqe, fd, buf + done, len - done, 0);
		io_uring_sqe_set_data64(sqe, 42);
		io_uring_submit(ring);
		if (wait_one(ring, &ud, &res))
			return -1;
		if (res <= 0 || ud != 42) {
			report_error(is_send ? "client send" : "client recv",
				     res, len - done);
			return -1;
		}
		done += res;
	}
	return 0;
}

/* One connection: connect through the ring, MSGS_PER_CONN echoes. */
static int client_conn(struct echo_client *cl, struct io_uring *ring,
		       unsigned int *seed)
{
	struct io_uring_sqe *sqe;
	uint64_t ud;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), res, rc = 0;

	if (fd < 0) {
		report_error("client socket", -errno, 0);
		return -1;
	}
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_connect(sqe, fd, (struct sockaddr *)&cl->addr,
			      sizeof(cl->addr));
	io_uring_submit(ring);
	if (wait_one(ring, &ud, &res) || res != 0) {
		report_error("client connect", res, 0);
		close(fd);
		return -1;
	}
	cl->conns++;
	for (int m = 0; m < MSGS_PER_CONN && rc == 0; m++) {
		int len = 1 + (int)(rand_r(seed) % MSG_MAX);
		unsigned char salt = (unsigned char)rand_r(seed);

		for (int i = 0; i < len; i++)
			cl->out[i] = (char)(salt + i * 7);
		rc = client_xfer(ring, fd, cl->out, len, true);
		if (!rc)
			rc = client_xfer(ring, fd, cl->in, len, false);
		if (!rc && memcmp(cl->in, cl->out, len)) {
			report_error("echoed bytes differ", len, len);
			rc = -1;
		}
		if (!rc) {
			cl->msgs++;
			cl->bytes += len;
		}
	}
	close(fd);
	return rc;
}

static void *client_main(void *arg)
{
	struct echo_client *cl = arg;
	struct io_uring ring;
	unsigned int seed = (unsigned int)(uintptr_t)cl;
	int ret = io_uring_queue_init(16, &ring, cl->ring_flags);

	if (ret < 0) {
		report_error("client queue_init", ret, 0);
		return NULL;
	}
	while (now_s() < cl->deadline)
		if (client_conn(cl, &ring, &seed))
			break;
	io_uring_queue_exit(&ring);
	return NULL;
}

static int run_echo(double seconds)
{
	static const unsigned int flags[ECHO_CLIENTS] = {
		0, IORING_SETUP_SQPOLL,
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_COOP_TASKRUN,
	};
	static struct echo_client clients[ECHO_CLIENTS];
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t alen = sizeof(addr);
	pthread_t srv, thr[ECHO_CLIENTS];
	unsigned long msgs = 0, bytes = 0, conns = 0;
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(lfd, 64) ||
	    getsockname(lfd, (struct sockaddr *)&addr, &alen)) {
		perror("soak_load echo: listen");
		return 1;
	}
	pthread_create(&srv, NULL, server_main, &lfd);
	for (int i = 0; i < ECHO_CLIENTS; i++) {
		clients[i].ring_flags = flags[i];
		clients[i].addr = addr;
		clients[i].deadline = now_s() + seconds;
		pthread_create(&thr[i], NULL, client_main, &clients[i]);
	}
	for (int i = 0; i < ECHO_CLIENTS; i++) {
		pthread_join(thr[i], NULL);
		msgs += clients[i].msgs;
		bytes += clients[i].bytes;
		conns += clients[i].conns;
	}
	atomic_store_explicit(&echo_stop, true, memory_order_relaxed);
	pthread_join(srv, NULL);
	close(lfd);
	printf("soak_load echo: msgs=%lu bytes_verified=%lu connections=%lu errors=%lu\n",
	       msgs, bytes, conns, atomic_load(&error_count));
	return atomic_load(&error_count) ? 1 : 0;
}

/* ---- timers and cancels ---- */

enum {
	T_FIRES = 1,	/* TIMEOUT 1 ms: -ETIME */
	T_REMOVED,	/* TIMEOUT 10 s, removed: -ECANCELED */
	T_REMOVE,	/* its TIMEOUT_REMOVE: 0 */
	T_LINKED_READ,	/* READ of an empty pipe, linked: -ECANCELED */
	T_LINK_FIRES,	/* its LINK_TIMEOUT 1 ms: -ETIME */
	T_POLL,		/* POLL_ADD on the empty pipe, cancelled: -ECANCELED */
	T_CANCEL,	/* its ASYNC_CANCEL: 0 */
	T_LINKED_NOP,	/* NOP, linked: 0 */
	T_LINK_UNUSED,	/* its LINK_TIMEOUT 10 s: -ECANCELED */
	T_COUNT
};

static const int timer_want[T_COUNT] = {
	[T_FIRES] = -ETIME,	    [T_REMOVED] = -ECANCELED,
	[T_REMOVE] = 0,		    [T_LINKED_READ] = -ECANCELED,
	[T_LINK_FIRES] = -ETIME,    [T_POLL] = -ECANCELED,
	[T_CANCEL] = 0,		    [T_LINKED_NOP] = 0,
	[T_LINK_UNUSED] = -ECANCELED,
};

static const char *const timer_name[T_COUNT] = {
	[T_FIRES] = "TIMEOUT fires",	    [T_REMOVED] = "TIMEOUT removed",
	[T_REMOVE] = "TIMEOUT_REMOVE",	    [T_LINKED_READ] = "linked READ",
	[T_LINK_FIRES] = "LINK_TIMEOUT fires", [T_POLL] = "POLL_ADD cancelled",
	[T_CANCEL] = "ASYNC_CANCEL",	    [T_LINKED_NOP] = "linked NOP",
	[T_LINK_UNUSED] = "LINK_TIMEOUT unused",
};

static struct io_uring_sqe *timer_sqe(struct io_uring *ring, int tag)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	io_uring_sqe_set_data64(sqe, (uint64_t)tag);
	return sqe;
}

/* One round: the nine requests, their CQEs checked; 0 or -1. */
static int timer_round(struct io_uring *ring, int pipe_rd, char *buf)
{
	static struct __kernel_timespec short_ts = { .tv_nsec = 1000000 };
	static struct __kernel_timespec long_ts = { .tv_sec = 10 };
	struct io_uring_sqe *sqe;
	unsigned int seen = 0;

	io_uring_prep_timeout(timer_sqe(ring, T_FIRES), &short_ts, 0, 0);
	io_uring_prep_timeout(timer_sqe(ring, T_REMOVED), &long_ts, 0, 0);
	io_uring_prep_timeout_remove(timer_sqe(ring, T_REMOVE), T_REMOVED, 0);
	sqe = timer_sqe(ring, T_LINKED_READ);
	io_uring_prep_read(sqe, pipe_rd, buf, 16, 0);
	sqe->flags |= IOSQE_IO_LINK;
	io_uring_prep_link_timeout(timer_sqe(ring, T_LINK_FIRES), &short_ts, 0);
	io_uring_prep_poll_add(timer_sqe(ring, T_POLL), pipe_rd, POLLIN);
	io_uring_prep_cancel64(timer_sqe(ring, T_CANCEL), T_POLL, 0);
	sqe = timer_sqe(ring, T_LINKED_NOP);
	io_uring_prep_nop(sqe);
	sqe->flags |= IOSQE_IO_LINK;
	io_uring_prep_link_timeout(timer_sqe(ring, T_LINK_UNUSED), &long_ts, 0);
	if (io_uring_submit(ring) != T_COUNT - 1) {
		report_error("timers submit", 0, T_COUNT - 1);
		return -1;
	}
	for (int n = 1; n < T_COUNT; n++) {
		uint64_t ud;
		int res;

		if (wait_one(ring, &ud, &res))
			return -1;
		if (ud == 0 || ud >= T_COUNT || (seen & (1u << ud))) {
			report_error("timers: unknown or duplicate user_data",
				     (long)ud, 0);
			return -1;
		}
		seen |= 1u << ud;
		if (res != timer_want[ud])
			report_error(timer_name[ud], res, timer_want[ud]);
	}
	return 0;
}

static int run_timers(double seconds)
{
	struct io_uring rings[2];
	unsigned long rounds = 0;
	double deadline = now_s() + seconds;
	char buf[16];
	int pfd[2], ret;

	if (pipe2(pfd, O_CLOEXEC)) {
		perror("soak_load timers: pipe");
		return 1;
	}
	ret = io_uring_queue_init(32, &rings[0], 0);
	if (!ret)
		ret = io_uring_queue_init(32, &rings[1], IORING_SETUP_SQPOLL);
	if (ret < 0) {
		report_error("timers queue_init", ret, 0);
		return 1;
	}
	while (now_s() < deadline)
		if (timer_round(&rings[rounds++ & 1], pfd[0], buf))
			break;
	io_uring_queue_exit(&rings[0]);
	io_uring_queue_exit(&rings[1]);
	close(pfd[0]);
	close(pfd[1]);
	printf("soak_load timers: rounds=%lu cqes_checked=%lu errors=%lu\n",
	       rounds, rounds * (T_COUNT - 1), atomic_load(&error_count));
	return atomic_load(&error_count) ? 1 : 0;
}

/* ---- fork/exec churn ---- */

/* In the forked child: the parent's ring, then exec. Never returns. */
static void fork_child(struct io_uring *ring, int pipe_wr, const char *self)
{
	struct io_uring_sqe *sqe;
	char msg[8];
	uint64_t ud;
	int res, bad = 0;
	pid_t me = getpid();

	memcpy(msg, &me, sizeof(me));
	memset(msg + sizeof(me), 'x', sizeof(msg) - sizeof(me));
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, 1);
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_write(sqe, pipe_wr, msg, sizeof(msg), 0);
	io_uring_sqe_set_data64(sqe, 2);
	if (io_uring_submit(ring) != 2)
		_exit(10);
	for (int i = 0; i < 2; i++) {
		if (wait_one(ring, &ud, &res))
			_exit(11);
		if ((ud == 1 && res != 0) || (ud == 2 && res != sizeof(msg)) ||
		    (ud != 1 && ud != 2))
			bad = 1;
	}
	if (bad)
		_exit(12);
	execl(self, self, "exec-child", (char *)NULL);
	_exit(13);
}

/* After exec: a ring of the new program's own; 0 when it works. */
static int run_exec_child(void)
{
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	uint64_t ud;
	int res;

	if (io_uring_queue_init(4, &ring, 0) < 0)
		return 20;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, 7);
	if (io_uring_submit(&ring) != 1 || wait_one(&ring, &ud, &res) ||
	    ud != 7 || res != 0)
		return 21;
	io_uring_queue_exit(&ring);
	return 0;
}

static int fork_round(struct io_uring *ring, int pfd[2], const char *self)
{
	struct io_uring_sqe *sqe;
	char msg[8];
	uint64_t ud;
	int status, res;
	pid_t pid = fork();

	if (pid < 0) {
		report_error("fork", -errno, 0);
		return -1;
	}
	if (pid == 0)
		fork_child(ring, pfd[1], self);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		report_error("child exit status", status, 0);
		return -1;
	}
	if (read(pfd[0], msg, sizeof(msg)) != sizeof(msg) ||
	    memcmp(msg, &pid, sizeof(pid))) {
		report_error("child's WRITE through the shared ring", 0, 8);
		return -1;
	}
	/*
	 * The parent's own use of the ring after the child exec'd.  liburing
	 * keeps its SQ tail in process memory, which the fork copied: take
	 * the shared tail the child's submissions moved.
	 */
	ring->sq.sqe_head = ring->sq.sqe_tail = io_uring_smp_load_acquire(
		ring->sq.ktail);
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, 3);
	io_uring_submit(ring);
	if (wait_one(ring, &ud, &res) || ud != 3 || res != 0) {
		report_error("parent NOP after the child", res, 0);
		return -1;
	}
	return 0;
}

static int run_forkexec(double seconds, const char *self)
{
	struct io_uring ring;
	unsigned long rounds = 0;
	double deadline = now_s() + seconds;
	int pfd[2], ret;

	if (pipe2(pfd, O_CLOEXEC)) {
		perror("soak_load forkexec: pipe");
		return 1;
	}
	ret = io_uring_queue_init(8, &ring, 0);
	if (ret < 0) {
		report_error("forkexec queue_init", ret, 0);
		return 1;
	}
	while (now_s() < deadline && !fork_round(&ring, pfd, self))
		rounds++;
	io_uring_queue_exit(&ring);
	printf("soak_load forkexec: children=%lu errors=%lu\n", rounds,
	       atomic_load(&error_count));
	return atomic_load(&error_count) ? 1 : 0;
}

int main(int argc, char **argv)
{
	double seconds = argc > 2 ? atof(argv[2]) : 10;

	if (argc > 1 && !strcmp(argv[1], "exec-child"))
		return run_exec_child();
	if (argc > 1 && !strcmp(argv[1], "echo"))
		return run_echo(seconds);
	if (argc > 1 && !strcmp(argv[1], "timers"))
		return run_timers(seconds);
	if (argc > 1 && !strcmp(argv[1], "forkexec"))
		return run_forkexec(seconds, "/proc/self/exe");
	fprintf(stderr, "usage: soak_load echo|timers|forkexec SECONDS\n");
	return 2;
}
