// SPDX-License-Identifier: MIT
/*
 * uublkd: the ublk driver process (docs/ublk.md, "The driver process").
 *
 * Started by the first client that finds nobody listening on the
 * abstract socket (ublkd_spawn): that client binds the name itself, so
 * a start race between two clients is settled by bind(2), then forks;
 * the grandchild, in a session of its own and holding no fd of the
 * application but the listening socket, runs ublkd_main.  It is a fork
 * of the library, not an exec: nothing to find on disk.  One thread, one
 * epoll loop, no engine ring; it exits when it holds no device and no
 * connection.  The FUSE threads of the block nodes (ublkd_fuse.c) submit
 * requests beside it, under ublkd_mu, which the loop holds except in
 * epoll_wait.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "ublk/front.h"
#include "ublk/ublkd.h"

struct udev *ublkd_devs;
struct uconn *ublkd_conns;
static int ublkd_epfd = -1;
static uint64_t next_token = 1;
/* the loop's state against the FUSE readers' submissions (front.h) */
static pthread_mutex_t ublkd_mu = PTHREAD_MUTEX_INITIALIZER;

void ublkd_lock(void)
{
	pthread_mutex_lock(&ublkd_mu);
}

void ublkd_unlock(void)
{
	pthread_mutex_unlock(&ublkd_mu);
}
/* one message at a time: the loop is single-threaded */
static uint64_t msgbuf[UM_MSG_MAX / 8 + 1];

int ublkd_reply(struct uconn *c, const void *a, size_t alen, const void *b,
		size_t blen)
{
	ssize_t n;

	if (!c || c->dead)
		return -EPIPE;
	n = um_send(c->fd, a, alen, b, blen, NULL, 0);
	return n < 0 ? (int)n : 0;
}

struct udev *ublkd_dev_find(int id)
{
	struct udev *d;

	if (id < 0)
		return NULL;
	for (d = ublkd_devs; d; d = d->next)
		if (d->id == id)
			return d;
	return NULL;
}

bool ublkd_dev_ready(const struct udev *d)
{
	return d->nr_io_ready ==
	       (unsigned int)d->info.nr_hw_queues * d->info.queue_depth;
}

/*
 * The kernel frees a deleted device (and its id, which DEL_DEV waits
 * for) when its char device's last reference goes: here, once it is
 * deleted, not open, and no block request is left.
 */
void ublkd_dev_maybe_free(struct udev *d)
{
	struct udev **pp;

	if (!d->deleted || d->chr || d->inflight)
		return;
	ublkd_front_stop(d);
	for (pp = &ublkd_devs; *pp; pp = &(*pp)->next) {
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	}
	/* DEL_DEV's wait (ublk_idr_freed) ends; others see -ENODEV */
	ublkd_ctrl_rewait(d);
	for (struct uconn *c = ublkd_conns; c; c = c->next)
		if (c->dev == d)
			c->dev = NULL;
	if (d->desc_map)
		munmap(d->desc_map, d->desc_len);
	if (d->data_map)
		munmap(d->data_map, d->data_len);
	close(d->desc_fd);
	close(d->data_fd);
	if (d->q)
		uu_blkq_put(d->q);
	free(d->slots);
	free(d);
}

/* UK_LIST: the ids of the devices not deleted, as the kernel's
 * ublk-char class lists them (ublk_remove takes a device's char device
 * out at DEL_DEV, before its release) */
static void list_devs(struct uconn *c, struct um_hello_rep *rep)
{
	static uint32_t ids[UM_LIST_MAX];
	unsigned int n = 0, i, j;
	struct udev *d;

	for (d = ublkd_devs; d && n < UM_LIST_MAX; d = d->next)
		if (!d->deleted)
			ids[n++] = (uint32_t)d->id;
	for (i = 1; i < n; i++) /* insertion sort: a handful of devices */
		for (j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
			uint32_t t = ids[j];

			ids[j] = ids[j - 1];
			ids[j - 1] = t;
		}
	rep->h.res = (int32_t)n;
	ublkd_reply(c, rep, sizeof(*rep), ids, n * sizeof(ids[0]));
}

static void hello(struct uconn *c, const struct um_hello *m)
{
	struct um_hello_rep rep;
	struct udev *d;
	int fds[2];

	memset(&rep, 0, sizeof(rep));
	rep.h.type = UM_HELLO;
	rep.h.seq = m->h.seq;
	c->tgid = m->tgid;
	switch (m->kind) {
	case UK_CTRL:
		c->kind = UK_CTRL;
		break;
	case UK_CHAR:
		d = ublkd_dev_find((int)m->dev_id);
		if (!d || d->deleted) {
			rep.h.res = -ENODEV;
			break;
		}
		/* ublk_ch_open: one opener at a time */
		if (d->chr) {
			rep.h.res = -EBUSY;
			break;
		}
		c->kind = UK_CHAR;
		c->dev = d;
		d->chr = c;
		d->srv_tgid = m->tgid;
		d->token = next_token++;
		rep.token = d->token;
		rep.info = d->info;
		rep.slot_bytes = d->slot_bytes;
		fds[0] = d->desc_fd;
		fds[1] = d->data_fd;
		um_send(c->fd, &rep, sizeof(rep), NULL, 0, fds, 2);
		return;
	case UK_PROBE:
		d = ublkd_dev_find((int)m->dev_id);
		rep.h.res = d && !d->deleted ? 0 : -ENODEV;
		break;
	case UK_LIST:
		list_devs(c, &rep);
		return;
	case UK_DATA:
		for (d = ublkd_devs; d; d = d->next)
			if (d->chr && d->token == m->token)
				break;
		if (!d) {
			rep.h.res = -ENODEV;
			break;
		}
		c->kind = UK_DATA;
		c->dev = d;
		break;
	default:
		rep.h.res = -EINVAL;
		break;
	}
	ublkd_reply(c, &rep, sizeof(rep), NULL, 0);
}

static void mmap_check(struct uconn *c, const struct um_hdr *m)
{
	struct um_hdr rep = { .type = UM_MMAP, .seq = m->seq };
	struct udev *d = c->dev;

	/* ublk_ch_mmap: the first mapper's mm owns the arrays until the
	 * char device's release */
	if (!d->mm_tgid)
		d->mm_tgid = c->tgid;
	rep.res = d->mm_tgid == c->tgid ? 0 : -EINVAL;
	ublkd_reply(c, &rep, sizeof(rep), NULL, 0);
}

static void conn_message(struct uconn *c, size_t n)
{
	const struct um_hdr *h = (const struct um_hdr *)msgbuf;

	if (n < sizeof(*h))
		return;
	if (!c->kind) {
		if (h->type == UM_HELLO && n >= sizeof(struct um_hello)) {
			hello(c, (const struct um_hello *)msgbuf);
			return;
		}
		if (h->type == UM_CTRL)
			c->kind = UK_CMD;
		else if (h->type == UM_BDEV)
			c->kind = UK_BDEV;
		else
			return;
	}
	switch (c->kind) {
	case UK_CMD:
		if (h->type == UM_CTRL && n >= sizeof(struct um_ctrl))
			ublkd_ctrl(c, (struct um_ctrl *)msgbuf, n);
		break;
	case UK_DATA:
		if (c->dev && (h->type == UM_IO || h->type == UM_IO_ASYNC) &&
		    n >= sizeof(struct um_io))
			ublkd_io(c, (const struct um_io *)msgbuf);
		else if (c->dev && h->type == UM_CANCEL &&
			 n >= sizeof(struct um_io))
			ublkd_cancel(c, (const struct um_io *)msgbuf);
		else if (c->dev && h->type == UM_MMAP)
			mmap_check(c, h);
		else if (c->dev && h->type == UM_UCOPY &&
			 n >= sizeof(struct um_ucopy))
			ublkd_ucopy(c, (const struct um_ucopy *)msgbuf);
		break;
	case UK_BDEV:
		if (h->type == UM_BDEV && n >= sizeof(struct um_bdev))
			ublkd_bdev(c, (const struct um_bdev *)msgbuf, n);
		break;
	default:
		break;
	}
}

/* The connection's last reference is gone (a close, an exit, a crash). */
static void conn_gone(struct uconn *c)
{
	struct udev *d = c->dev;

	c->dead = true;
	epoll_ctl(ublkd_epfd, EPOLL_CTL_DEL, c->fd, NULL);
	switch (c->kind) {
	case UK_CHAR:
		if (d && d->chr == c)
			ublkd_char_release(d);
		break;
	case UK_DATA:
		ublkd_data_gone(c);
		break;
	case UK_BDEV:
		ublkd_bdev_gone(c);
		break;
	case UK_CMD:
		/* an interrupted wait (the worker's cancel): the kernel's
		 * wait_for_completion_interruptible returning -EINTR */
		free(c->waiting);
		c->waiting = NULL;
		break;
	default:
		break;
	}
}

static void conn_event(struct uconn *c, uint32_t ev)
{
	ssize_t n;

	if (ev & EPOLLIN) {
		n = recv(c->fd, msgbuf, sizeof(msgbuf), MSG_DONTWAIT);
		if (n > 0) {
			conn_message(c, (size_t)n);
			return;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		conn_gone(c);
		return;
	}
	if (ev & (EPOLLHUP | EPOLLERR))
		conn_gone(c);
}

static void conn_insert(struct uconn *c)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };

	epoll_ctl(ublkd_epfd, EPOLL_CTL_ADD, c->fd, &ev);
	c->next = ublkd_conns;
	ublkd_conns = c;
}

struct uconn *ublkd_conn_add(int fd, uint32_t kind)
{
	struct uconn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->fd = fd;
	c->kind = kind;
	c->tgid = getpid();
	conn_insert(c);
	return c;
}

void ublkd_log(const char *fmt, ...)
{
	const char *path = getenv("UURING_UBLKD_LOG");
	char line[512];
	va_list ap;
	int n, fd;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	if (!path || !*path) {
		syslog(LOG_DAEMON | LOG_WARNING, "uublkd: %s", line);
		return;
	}
	line[n++] = '\n';
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0)
		n = 0;
	close(fd);
}

static void accept_all(int lfd)
{
	for (;;) {
		struct uconn *c;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0)
			return;
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		conn_insert(c);
	}
}

static void reap_conns(void)
{
	struct uconn **pp = &ublkd_conns;

	while (*pp) {
		struct uconn *c = *pp;

		if (!c->dead || c->refs) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		close(c->fd);
		free(c->waiting);
		free(c);
	}
}

static __attribute__((noreturn)) void ublkd_main(int lfd)
{
	static struct uconn listener;
	struct epoll_event evs[64];
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_NAME, "uublkd", 0, 0, 0);
	ublkd_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ublkd_epfd < 0)
		_exit(1);
	evs[0].events = EPOLLIN;
	evs[0].data.ptr = &listener;
	epoll_ctl(ublkd_epfd, EPOLL_CTL_ADD, lfd, &evs[0]);
	fcntl(lfd, F_SETFL, O_NONBLOCK);
	/* before the first client is answered (ublkd_front.c) */
	ublkd_front_reclaim_all();
	ublkd_lock();
	for (;;) {
		int n;

		if (!ublkd_devs && !ublkd_conns) {
			/* idle: last look at the backlog, then go; a
			 * client connecting after this retries (client.c) */
			accept_all(lfd);
			if (!ublkd_conns)
				_exit(0);
		}
		ublkd_unlock();
		n = epoll_wait(ublkd_epfd, evs, 64, -1);
		ublkd_lock();
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == &listener)
				accept_all(lfd);
			else if (!((struct uconn *)evs[i].data.ptr)->dead)
				conn_event(evs[i].data.ptr, evs[i].events);
		}
		reap_conns();
	}
}

/*
 * Binds the driver's name and forks the driver.  0 when it runs (this
 * call's or another's), -errno if it cannot be started.
 */
int ublkd_spawn(const void *addr, unsigned int addrlen)
{
	int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	pid_t pid;

	if (lfd < 0)
		return -errno;
	if (bind(lfd, addr, addrlen)) {
		int e = errno;

		close(lfd);
		return e == EADDRINUSE ? 0 : -e;
	}
	if (listen(lfd, 128)) {
		close(lfd);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		close(lfd);
		return -errno;
	}
	if (pid == 0) {
		int nullfd;

		setsid();
		if (fork() != 0)
			_exit(0);
		/* hold nothing of the application's: a test runner waiting
		 * for its pipe's end must not wait for the driver */
		nullfd = fcntl(lfd, F_DUPFD_CLOEXEC, 64);
		if (nullfd >= 0)
			lfd = nullfd;
		nullfd = open("/dev/null", O_RDWR);
		if (nullfd >= 0) {
			dup2(nullfd, 0);
			dup2(nullfd, 1);
			dup2(nullfd, 2);
		}
		if (dup3(lfd, 3, O_CLOEXEC) == 3)
			lfd = 3;
		else
			close_range(3, (unsigned int)lfd - 1, 0);
		close_range((unsigned int)lfd + 1, ~0u, 0);
		ublkd_main(lfd);
	}
	close(lfd);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return 0;
}
