// SPDX-License-Identifier: MIT
/*
 * The library's side of the ublk driver: finding (or starting) uublkd,
 * opening /dev/ublk-control and /dev/ublkcN as connections to it, control
 * commands (run by an io-wq worker: one connection per command), the
 * descriptor mapping, and block I/O submitted to a device.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "ublk/client.h"
#include "util/fdutil.h"
#include "util/usercopy.h"

static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ufile *files;
atomic_uint uu_ublk_nfiles;

ssize_t um_send(int fd, const void *a, size_t alen, const void *b,
		size_t blen, const int *fds, int nfds)
{
	struct iovec iov[2] = {
		{ .iov_base = (void *)a, .iov_len = alen },
		{ .iov_base = (void *)b, .iov_len = blen },
	};
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = blen ? 2 : 1 };
	ssize_t n;

	if (nfds) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
	}
	do
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR && !nfds);
	return n < 0 ? -errno : n;
}

ssize_t um_recv(int fd, void *buf, size_t len, int *fds, int maxfds,
		int *nfds)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (maxfds) {
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
	}
	n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	if (nfds) {
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

		*nfds = 0;
		if (cm && cm->cmsg_type == SCM_RIGHTS) {
			int k = (int)((cm->cmsg_len - CMSG_LEN(0)) /
				      sizeof(int));

			if (k > maxfds)
				k = maxfds;
			memcpy(fds, CMSG_DATA(cm), sizeof(int) * (size_t)k);
			*nfds = k;
		}
	}
	return n;
}

/* @uuring-ublkd-<uid>, or UURING_UBLKD_NAME's name (tests keep theirs
 * apart) */
static socklen_t driver_addr(struct sockaddr_un *a)
{
	const char *name = getenv("UURING_UBLKD_NAME");
	int n;

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (name && *name)
		n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "%s",
			     name);
	else
		n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1,
			     "uuring-ublkd-%u", (unsigned int)getuid());
	if (n > (int)sizeof(a->sun_path) - 2)
		n = (int)sizeof(a->sun_path) - 2;
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			   (size_t)n);
}

/* A new connection to uublkd, started if nobody listens. */
int um_connect_driver(void)
{
	struct sockaddr_un a;
	socklen_t alen = driver_addr(&a);

	for (int tries = 0; tries < 100; tries++) {
		int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		int ret;

		if (fd < 0)
			return -errno;
		if (!connect(fd, (struct sockaddr *)&a, alen))
			return fd;
		ret = -errno;
		close(fd);
		if (ret != -ECONNREFUSED && ret != -ENOENT && ret != -EAGAIN)
			return ret;
		/* nobody, or a driver leaving: start one (bind decides) */
		ret = ublkd_spawn(&a, alen);
		if (ret)
			return ret;
	}
	return -ECONNREFUSED;
}

/* One question, one answer, on a new or given connection. */
static ssize_t ask(int fd, const void *q, size_t qlen, const void *qb,
		   size_t qblen, void *a, size_t alen, int *fds, int *nfds)
{
	ssize_t n = um_send(fd, q, qlen, qb, qblen, NULL, 0);

	/* the driver left (idle) after accepting: as a hang-up below */
	if (n == -ECONNRESET)
		return -EPIPE;
	if (n < 0)
		return n;
	n = um_recv(fd, a, alen, fds, fds ? 4 : 0, nfds);
	if (n == 0 || n == -ECONNRESET)
		return -EPIPE; /* the driver left before answering */
	return n;
}

struct ufile *uu_ublk_file_st(const struct stat *st)
{
	struct ufile *f;

	if (!atomic_load_explicit(&uu_ublk_nfiles, memory_order_relaxed))
		return NULL;
	pthread_mutex_lock(&files_lock);
	for (f = files; f; f = f->next)
		if (f->st_ino == st->st_ino && f->st_dev == st->st_dev)
			break;
	pthread_mutex_unlock(&files_lock);
	return f;
}

struct ufile *uu_ublk_file(int fd)
{
	struct stat st;

	if (!atomic_load_explicit(&uu_ublk_nfiles, memory_order_relaxed) ||
	    fstat(fd, &st))
		return NULL;
	return uu_ublk_file_st(&st);
}

static void file_add(struct ufile *f)
{
	pthread_mutex_lock(&files_lock);
	f->next = files;
	files = f;
	atomic_fetch_add_explicit(&uu_ublk_nfiles, 1, memory_order_relaxed);
	pthread_mutex_unlock(&files_lock);
}

/* The char file's memfds mapped for the engine's copies. */
static int char_setup(struct ufile *f, const struct um_hello_rep *rep,
		      const int *fds)
{
	struct um_hello h = { .h = { .type = UM_HELLO }, .kind = UK_DATA };
	struct um_hdr ans;
	void *p;
	ssize_t n;

	f->info = rep->info;
	f->slot_bytes = rep->slot_bytes;
	f->pid = getpid();
	f->desc_fd = uu_fd_to_reserved(fds[0]);
	f->data_fd = uu_fd_to_reserved(fds[1]);
	f->desc_len = (size_t)f->info.nr_hw_queues * UBLKD_DESC_STRIDE;
	f->data_len = (size_t)f->info.nr_hw_queues * f->info.queue_depth *
		      f->slot_bytes;
	p = mmap(NULL, f->desc_len, PROT_READ, MAP_SHARED, f->desc_fd, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	f->desc_map = p;
	p = mmap(NULL, f->data_len, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_NORESERVE, f->data_fd, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	f->data_map = p;
	f->slots = calloc((size_t)f->info.nr_hw_queues * f->info.queue_depth,
			  sizeof(*f->slots));
	if (!f->slots)
		return -ENOMEM;
	for (size_t i = 0;
	     i < (size_t)f->info.nr_hw_queues * f->info.queue_depth; i++)
		f->slots[i].file = f;
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	/* the engine's own connection for the data plane: not the
	 * application's fd, whose last close must stay the application's */
	f->data_conn = um_connect_driver();
	if (f->data_conn < 0)
		return f->data_conn;
	f->data_conn = uu_fd_to_reserved(f->data_conn);
	h.token = rep->token;
	h.tgid = getpid();
	n = ask(f->data_conn, &h, sizeof(h), NULL, 0, &ans, sizeof(ans), NULL,
		NULL);
	if (n < 0)
		return (int)n;
	if (ans.res)
		return ans.res;
	return uu_ublk_start_receiver(f);
}

static void file_free(struct ufile *f)
{
	if (f->desc_map)
		munmap((void *)f->desc_map, f->desc_len);
	if (f->data_map)
		munmap(f->data_map, f->data_len);
	if (f->desc_fd >= 0)
		close(f->desc_fd);
	if (f->data_fd >= 0)
		close(f->data_fd);
	if (f->data_conn >= 0)
		close(f->data_conn);
	free(f->slots);
	free(f);
}

/* One attempt: -EPIPE when the driver left under it (idle exit). */
static int open_once(uint32_t kind, uint32_t dev_id, int flags)
{
	struct um_hello h = { .h = { .type = UM_HELLO }, .kind = kind,
			      .dev_id = dev_id, .tgid = getpid() };
	struct um_hello_rep rep;
	struct ufile *f;
	struct stat st;
	int fds[4], nfds = 0, ret;
	int fd = um_connect_driver();
	ssize_t n;

	if (fd < 0)
		return fd;
	n = ask(fd, &h, sizeof(h), NULL, 0, &rep, sizeof(rep), fds, &nfds);
	ret = n < 0 ? (int)n : n < (ssize_t)sizeof(rep.h) ? -EPIPE : rep.h.res;
	f = calloc(1, sizeof(*f));
	if (!ret && !f)
		ret = -ENOMEM;
	if (!ret && kind == UK_CHAR && (nfds != 2 || n < (ssize_t)sizeof(rep)))
		ret = -EPIPE;
	if (f) {
		f->kind = kind;
		f->accmode = flags & O_ACCMODE;
		f->desc_fd = f->data_fd = f->data_conn = -1;
	}
	if (!ret && fstat(fd, &st))
		ret = -errno;
	if (!ret && kind == UK_CHAR)
		ret = char_setup(f, &rep, fds);
	else
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
	if (ret) {
		if (f)
			file_free(f);
		close(fd);
		return ret;
	}
	f->st_dev = st.st_dev;
	f->st_ino = st.st_ino;
	file_add(f);
	if (!(flags & O_CLOEXEC))
		fcntl(fd, F_SETFD, 0);
	return fd;
}

int uu_ublk_probe(const char *path, dev_t *rdev)
{
	struct um_hello h = { .h = { .type = UM_HELLO }, .kind = UK_PROBE };
	struct um_hello_rep rep;
	uint32_t id;
	char tail;
	ssize_t n = -EPIPE;
	int fd;

	if (!strcmp(path, "/dev/ublk-control")) {
		*rdev = makedev(10, UBLKD_CTRL_MINOR);
		return 0;
	}
	if (sscanf(path, "/dev/ublkc%u%c", &id, &tail) != 1)
		return -EINVAL;
	*rdev = makedev(UBLKD_CHAR_MAJOR, id);
	h.dev_id = id;
	for (int tries = 0; tries < 20 && n == -EPIPE; tries++) {
		fd = um_connect_driver();
		if (fd < 0)
			return fd;
		n = ask(fd, &h, sizeof(h), NULL, 0, &rep, sizeof(rep), NULL,
			NULL);
		close(fd);
	}
	if (n < (ssize_t)sizeof(rep.h))
		return n < 0 ? (int)n : -EIO;
	return rep.h.res ? -ENOENT : 0;
}

/* The ids of the driver's devices (at most max, ascending): how many,
 * or -errno.  Starts the driver if none runs, as a stat of a char file
 * does (an idle driver has no devices: the answer is 0). */
int uu_ublk_list(uint32_t *ids, unsigned int max)
{
	struct um_hello h = { .h = { .type = UM_HELLO }, .kind = UK_LIST };
	size_t len = sizeof(struct um_hello_rep) + UM_LIST_MAX * sizeof(*ids);
	struct um_hello_rep *rep = malloc(len);
	ssize_t n = -EPIPE;
	unsigned int cnt;
	int fd;

	if (!rep)
		return -ENOMEM;
	for (int tries = 0; tries < 20 && n == -EPIPE; tries++) {
		fd = um_connect_driver();
		if (fd < 0) {
			free(rep);
			return fd;
		}
		n = ask(fd, &h, sizeof(h), NULL, 0, rep, len, NULL, NULL);
		close(fd);
	}
	if (n < (ssize_t)sizeof(*rep) || rep->h.res < 0) {
		cnt = n < (ssize_t)sizeof(*rep) ? 0 : (unsigned int)-rep->h.res;
		free(rep);
		return n < 0 ? (int)n : cnt ? -(int)cnt : -EIO;
	}
	cnt = (unsigned int)rep->h.res;
	if (cnt > (n - sizeof(*rep)) / sizeof(*ids))
		cnt = (n - sizeof(*rep)) / sizeof(*ids);
	if (cnt > max)
		cnt = max;
	memcpy(ids, rep + 1, cnt * sizeof(*ids));
	free(rep);
	return (int)cnt;
}

/* open(2) of /dev/ublk-control or /dev/ublkcN: the fd or -errno. */
int uu_ublk_open(const char *path, int flags)
{
	uint32_t kind, id = 0;
	char tail;
	int ret = -EPIPE;

	if (!strcmp(path, "/dev/ublk-control"))
		kind = UK_CTRL;
	else if (sscanf(path, "/dev/ublkc%u%c", &id, &tail) == 1)
		kind = UK_CHAR;
	else
		return -ENOENT;
	for (int tries = 0; tries < 20 && ret == -EPIPE; tries++)
		ret = open_once(kind, id, flags);
	/* a device that does not exist has no node: the kernel's open
	 * fails in the path walk */
	return ret == -ENODEV ? -ENOENT : ret;
}

static bool cap_sys_admin(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return geteuid() == 0;
	return d[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32));
}

/* the bytes of addr a command reads (ublk_ctrl_* copy_from_user) */
static uint32_t ctrl_in_len(uint32_t nr, uint32_t len)
{
	switch (nr) {
	case UBLK_CMD_ADD_DEV:
		return sizeof(struct ublksrv_ctrl_dev_info);
	case UBLK_CMD_SET_PARAMS:
		return len < sizeof(struct ublk_params) ?
			       len : sizeof(struct ublk_params);
	case UBLK_CMD_GET_PARAMS:
		return 8;
	default:
		return 0;
	}
}

/*
 * A control command, blocking (an io-wq worker's).  The command's input
 * is read here, its output written here; the rules are the driver's.
 */
int uu_ublk_ctrl(uint32_t cmd_op, const struct ublksrv_ctrl_cmd *hdr)
{
	uint32_t nr = cmd_op & 0xff, in_len = ctrl_in_len(nr, hdr->len);
	uint32_t path_len = hdr->dev_path_len > UM_CTRL_IN_MAX ?
				    UM_CTRL_IN_MAX : hdr->dev_path_len;
	size_t blen = path_len + (path_len ? 2u : 1u) * in_len;
	struct um_ctrl *m = calloc(1, sizeof(*m) + blen);
	uint8_t *path = (uint8_t *)(m + 1), *in = path + path_len;
	size_t out_max = sizeof(struct um_ctrl_rep) + 65536;
	struct um_ctrl_rep *rep = malloc(out_max);
	const uint8_t *uaddr = (const uint8_t *)(uintptr_t)hdr->addr;
	int fd = -1, ret;
	ssize_t n;

	if (!m || !rep) {
		ret = -ENOMEM;
		goto out;
	}
	m->h.type = UM_CTRL;
	m->cmd_op = cmd_op;
	m->cmd = *hdr;
	m->path_len = path_len;
	m->in_len = in_len;
	m->uid = (int32_t)geteuid();
	m->gid = (int32_t)getegid();
	m->cap_admin = cap_sys_admin();
	if (in_len && (!uaddr || uu_copy_from_user(in, uaddr, in_len)))
		m->flags |= UM_CTRL_IN_FAULT;
	if (path_len) {
		if (!uaddr || uu_copy_from_user(path, uaddr, path_len))
			m->flags |= UM_CTRL_PATH_FAULT;
		if (in_len && (hdr->len <= path_len ||
			       uu_copy_from_user(in + in_len, uaddr + path_len,
						 in_len)))
			m->flags |= UM_CTRL_IN_FAULT << 2;
	}
	for (int tries = 0; tries < 20; tries++) {
		fd = um_connect_driver();
		if (fd < 0) {
			ret = fd;
			goto out;
		}
		n = ask(fd, m, sizeof(*m), path, blen, rep, out_max, NULL,
			NULL);
		if (n != -EPIPE)
			break;
		close(fd);
		fd = -1;
	}
	if (n < (ssize_t)sizeof(*rep)) {
		/* the worker's cancel interrupted the wait: the kernel's
		 * interruptible waits answer -EINTR */
		ret = n == -EINTR ? -EINTR : n < 0 ? (int)n : -EPIPE;
		goto out;
	}
	ret = rep->h.res;
	if (!ret && rep->out_len &&
	    uu_copy_to_user((void *)(uintptr_t)(hdr->addr + rep->out_off),
			    rep + 1, rep->out_len))
		ret = -EFAULT;
out:
	if (fd >= 0)
		close(fd);
	free(m);
	free(rep);
	return ret;
}

/* ublk_ch_mmap: a queue's descriptor array, read-only, by one process */
void *uu_ublk_mmap(struct ufile *f, void *addr, size_t len, int prot,
		   int flags, off_t off)
{
	uint64_t uoff = (uint64_t)off;
	int ret = uu_ublk_mmap_check(f);

	if (ret)
		return (void *)(intptr_t)ret;
	if (prot & PROT_WRITE)
		return (void *)(intptr_t)-EPERM;
	if (uoff >= (uint64_t)f->info.nr_hw_queues * UBLKD_DESC_STRIDE)
		return (void *)(intptr_t)-EINVAL;
	if (len != ublkd_queue_desc_bytes(f->info.queue_depth))
		return (void *)(intptr_t)-EINVAL;
	addr = mmap(addr, len, prot, flags, f->desc_fd,
		    (off_t)(uoff / UBLKD_DESC_STRIDE * UBLKD_DESC_STRIDE));
	return addr == MAP_FAILED ? (void *)(intptr_t)-errno : addr;
}

/*
 * Each thread keeps its BDEV connection (closed by the key's destructor
 * at the thread's exit; a forked child, which shares its parent's,
 * starts its own).
 */
static pthread_key_t bdev_key;
static pthread_once_t bdev_once = PTHREAD_ONCE_INIT;
static __thread int bdev_fd = -1;
static __thread pid_t bdev_pid;

static void bdev_close(void *p)
{
	close((int)(intptr_t)p - 1);
}

static void bdev_key_init(void)
{
	pthread_key_create(&bdev_key, bdev_close);
}

static int bdev_conn(bool fresh)
{
	pid_t pid = getpid();

	pthread_once(&bdev_once, bdev_key_init);
	if (bdev_fd >= 0 && (fresh || bdev_pid != pid)) {
		if (bdev_pid == pid)
			close(bdev_fd);
		bdev_fd = -1;
	}
	if (bdev_fd < 0) {
		int fd = um_connect_driver();

		if (fd < 0)
			return fd;
		bdev_fd = uu_fd_to_reserved(fd);
		bdev_pid = pid;
		pthread_setspecific(bdev_key, (void *)(intptr_t)(bdev_fd + 1));
	}
	return bdev_fd;
}

/* Block I/O on device dev_id: bytes or -errno (blocking). */
int uu_ublk_bdev_io(int dev_id, int op, void *buf, size_t len, uint64_t pos)
{
	struct um_bdev m = { .h = { .type = UM_BDEV }, .op = (uint32_t)op,
			     .cpu = sched_getcpu(), .pos = pos,
			     .len = (uint32_t)len, .dev_id = (uint32_t)dev_id };
	size_t alen = sizeof(struct um_hdr) + len;
	struct um_hdr *a;
	int fd, ret;
	ssize_t n = -EPIPE;

	if (len > UM_BDEV_MAX || dev_id < 0)
		return -EINVAL;
	a = malloc(alen);
	if (!a)
		return -ENOMEM;
	/* a driver that left since the last request: once more, fresh */
	for (int tries = 0; tries < 2 && n == -EPIPE; tries++) {
		fd = bdev_conn(tries > 0);
		if (fd < 0) {
			free(a);
			return fd;
		}
		n = ask(fd, &m, sizeof(m), op == UBLK_IO_OP_WRITE ? buf : NULL,
			op == UBLK_IO_OP_WRITE ? len : 0, a, alen, NULL, NULL);
	}
	if (n < (ssize_t)sizeof(*a)) {
		free(a);
		return n < 0 ? (int)n : -EIO;
	}
	ret = a->res;
	if (op == UBLK_IO_OP_READ && ret > 0) {
		if ((size_t)ret > (size_t)n - sizeof(*a))
			ret = (int)((size_t)n - sizeof(*a));
		memcpy(buf, a + 1, (size_t)ret);
	}
	free(a);
	return ret;
}
