// SPDX-License-Identifier: MIT
/*
 * tprep: SQE and recording helpers shared by the differential tests.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcheck.h"
#include "tprep.h"

#define TPREP_WAIT_NS 2000000000LL
#define TPREP_MS 1000000LL

struct io_uring_sqe *tprep(struct tring *r, int op, int fd, const void *addr,
			   unsigned int len, uint64_t off, uint64_t ud,
			   uint8_t flags)
{
	struct io_uring_sqe *s = tring_get_sqe(r);

	tring_prep_rw(s, op, fd, addr, len, off, ud);
	s->flags = flags;
	return s;
}

void tprep_nop(struct tring *r, uint64_t ud, uint8_t flags)
{
	tprep(r, IORING_OP_NOP, -1, NULL, 0, 0, ud, flags);
}

struct io_uring_sqe tsqe(int op, int fd, uint64_t addr, uint32_t len,
			 uint64_t off, uint64_t ud)
{
	struct io_uring_sqe s;

	memset(&s, 0, sizeof(s));
	s.opcode = (uint8_t)op;
	s.fd = fd;
	s.addr = addr;
	s.len = len;
	s.off = off;
	s.user_data = ud;
	return s;
}

void dsubmit(struct dctx *c, struct tring *r, const char *label)
{
	drec_int(c, tring_submit(r), "%s: submit", label);
}

void dsubmit_sqp(struct dctx *c, struct tring *r, const char *label)
{
	int ret = tring_submit(r);

	if ((r->flags & IORING_SETUP_SQPOLL) && ret >= 0)
		ret = 1;
	drec_int(c, ret, "%s: submit", label);
}

void dnone(struct dctx *c, struct tring *r, int ms, const char *label)
{
	int ret = tring_wait(r, 1, ms * TPREP_MS);

	drec_int(c, ret == -ETIME ? 0 : 1, "%s: a CQE within %d ms", label, ms);
	drec_int(c, tring_cq_ready(r), "%s: CQEs ready", label);
}

void dnone_sqp(struct dctx *c, struct tring *r, int ms, const char *label)
{
	int ret = tring_wait(r, 1, ms * TPREP_MS);

	if (ret > 0 && !tring_cq_ready(r))
		tring_wait(r, 1, ms * TPREP_MS);
	drec_int(c, tring_cq_ready(r) ? 1 : 0, "%s: a CQE within %d ms", label,
		 ms);
	drec_int(c, tring_cq_ready(r), "%s: CQEs ready", label);
}

unsigned int dreapq(struct dctx *c, struct tring *r, struct tcqe *q,
		    unsigned int n, bool ordered, const char *label)
{
	unsigned int got = tring_reap_wait(r, q, n, TPREP_WAIT_NS);

	drec_cqes(c, q, got, ordered, "%s", label);
	return got;
}

unsigned int dreapn(struct dctx *c, struct tring *r, unsigned int n,
		    bool ordered, const char *label)
{
	struct tcqe *q = calloc(n ? n : 1, sizeof(*q));
	unsigned int got;

	if (!q)
		abort();
	got = dreapq(c, r, q, n, ordered, label);
	free(q);
	return got;
}

int dreap1_within(struct dctx *c, struct tring *r, int64_t ns,
		  const char *label)
{
	struct tcqe q;
	unsigned int got = tring_reap_wait(r, &q, 1, ns);

	drec_cqes(c, &q, got, true, "%s", label);
	return got ? q.res : -99999;
}

int dreap1(struct dctx *c, struct tring *r, const char *label)
{
	return dreap1_within(c, r, TPREP_WAIT_NS, label);
}

int dnow(struct dctx *c, struct tring *r, const char *label)
{
	dsubmit(c, r, label);
	return dreap1(c, r, label);
}

int dnow_sqp(struct dctx *c, struct tring *r, const char *label)
{
	dsubmit_sqp(c, r, label);
	return dreap1(c, r, label);
}

int drun1(struct dctx *c, struct tring *r, const char *label)
{
	int ret = tring_submit(r);

	if (ret != 1)
		drec_int(c, ret, "%s: submit", label);
	return dreap1(c, r, label);
}

int drun1_sqe(struct dctx *c, struct tring *r, const struct io_uring_sqe *t,
	      const char *label)
{
	memcpy(tring_get_sqe(r), t, sizeof(*t));
	return drun1(c, r, label);
}

int dsubmit_nop(struct dctx *c, struct tring *r, const struct io_uring_sqe *t,
		uint64_t nop_ud, const char *label)
{
	int ret;

	memcpy(tring_get_sqe(r), t, sizeof(*t));
	tring_prep_nop(tring_get_sqe(r), nop_ud);
	ret = tring_submit(r);
	drec_int(c, ret, "%s: submitted", label);
	/* the NOP left in the SQ by a prep failure goes in a second enter */
	if (ret == 1)
		ret = 1 + tring_enter(r, 1, 0, 0, NULL, 0);
	return ret;
}

void twrite(int fd, const void *b, size_t n)
{
	if (write(fd, b, n) != (ssize_t)n)
		abort();
}

int tfill_pipe(int fd)
{
	char b[4096];
	int fl = fcntl(fd, F_GETFL), total = 0;
	ssize_t n;

	memset(b, 'f', sizeof(b));
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	while ((n = write(fd, b, sizeof(b))) > 0)
		total += (int)n;
	fcntl(fd, F_SETFL, fl);
	return total;
}

int tdrain_fd(int fd)
{
	char b[4096];
	int fl = fcntl(fd, F_GETFL), total = 0;
	ssize_t n;

	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	while ((n = read(fd, b, sizeof(b))) > 0)
		total += (int)n;
	fcntl(fd, F_SETFL, fl);
	return total;
}

int tsockpair(int sp[2])
{
	return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp);
}

void tclose2(const int fds[2])
{
	close(fds[0]);
	close(fds[1]);
}

void dprobe_ops(struct dctx *c, const int *ops, const char *const *labels,
		unsigned int n)
{
	size_t sz = sizeof(struct io_uring_probe) +
		    256 * sizeof(struct io_uring_probe_op);
	struct io_uring_probe *p = calloc(1, sz);
	struct tring r;

	if (!p || dring_flags(c, &r, 8, 0))
		return;
	drec_int(c, r.be->reg((unsigned int)r.fd, IORING_REGISTER_PROBE, p, 256),
		 "probe");
	for (unsigned int i = 0; i < n; i++) {
		int ok = !!(p->ops[ops[i]].flags & IO_URING_OP_SUPPORTED);

		if (labels)
			drec_int(c, ok, "%s", labels[i]);
		else
			drec_int(c, ok, "opcode %d supported", ops[i]);
	}
	free(p);
	tring_exit(&r);
}

int tpbuf_reg(struct tring *r, void *ring, unsigned int entries,
	      uint16_t bgid, uint16_t flags)
{
	struct io_uring_buf_reg rg;

	memset(&rg, 0, sizeof(rg));
	rg.ring_addr = (uint64_t)(uintptr_t)ring;
	rg.ring_entries = entries;
	rg.bgid = bgid;
	rg.flags = flags;
	return r->be->reg((unsigned int)r->fd, IORING_REGISTER_PBUF_RING, &rg,
			  1);
}

int tpbuf_head(struct tring *r, uint32_t bgid)
{
	struct io_uring_buf_status st;
	int ret;

	memset(&st, 0, sizeof(st));
	st.buf_group = bgid;
	ret = r->be->reg((unsigned int)r->fd, IORING_REGISTER_PBUF_STATUS, &st,
			 1);
	return ret ? ret : (int)st.head;
}

void tbuf_ring_add(struct io_uring_buf_ring *br, unsigned int mask,
		   uint16_t *tail, void *addr, uint32_t len, uint16_t bid)
{
	struct io_uring_buf *b = &br->bufs[*tail & mask];

	b->addr = (uint64_t)(uintptr_t)addr;
	b->len = len;
	b->bid = bid;
	(*tail)++;
	/* the ring reads the tail with an acquire load before the entry */
	__atomic_store_n(&br->tail, *tail, __ATOMIC_RELEASE);
}

int tthreads_named(const char *name, bool prefix,
		   void (*fn)(const char *tid, void *arg), void *arg)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], comm[32] = "";
		bool read_ok;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		read_ok = fgets(comm, sizeof(comm), f) != NULL;
		fclose(f);
		comm[strcspn(comm, "\n")] = 0;
		if (!read_ok || (prefix ? strncmp(comm, name, strlen(name)) :
					  strcmp(comm, name)))
			continue;
		n++;
		if (fn)
			fn(e->d_name, arg);
	}
	closedir(d);
	return n;
}

struct in_syscall {
	long nr;
	int n;
};

static void count_in_syscall(const char *tid, void *arg)
{
	struct in_syscall *a = arg;
	char p[300], line[256];
	FILE *f;

	snprintf(p, sizeof(p), "/proc/self/task/%s/syscall", tid);
	f = fopen(p, "r");
	if (!f)
		return;
	/* "running" (not in a syscall) starts with 'r' */
	if (fgets(line, sizeof(line), f) && line[0] != 'r' &&
	    strtol(line, NULL, 10) == a->nr)
		a->n++;
	fclose(f);
}

int tthreads_in_syscall(const char *name, bool prefix, long nr, int *all)
{
	struct in_syscall a = { nr, 0 };
	int n = tthreads_named(name, prefix, count_in_syscall, &a);

	if (all)
		*all = n;
	return a.n;
}

struct in_wchan {
	const char *wchan;
	int n;
};

static void count_in_wchan(const char *tid, void *arg)
{
	struct in_wchan *a = arg;
	char p[300], w[128];
	FILE *f;

	snprintf(p, sizeof(p), "/proc/self/task/%s/wchan", tid);
	f = fopen(p, "r");
	if (!f)
		return;
	if (fgets(w, sizeof(w), f) && !strcmp(w, a->wchan))
		a->n++;
	fclose(f);
}

int tthreads_in_wchan(const char *name, bool prefix, const char *wchan)
{
	struct in_wchan a = { wchan, 0 };

	if (tthreads_named(name, prefix, count_in_wchan, &a) < 0)
		return -1;
	return a.n;
}

static void watchdog_fired(int sig)
{
	static const char msg[] = "FAIL: watchdog (hung)\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(2);
}

void twatchdog(unsigned int secs)
{
	signal(SIGALRM, watchdog_fired);
	alarm(secs);
}

int tcheck_failures;
