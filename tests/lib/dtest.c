// SPDX-License-Identifier: MIT
/*
 * dtest: run a scenario on the kernel and on the backend under test, each in
 * a forked child, and compare the recordings.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dtest.h"
#include "uuring.h"

#define DREC_MAX_EV 1024
#define DREC_MAX_CQE 16384
#define DREC_LABEL 120
/*
 * A scenario's hang guard.  Under TSan every fork (scenarios isolate
 * risky calls in forked children) costs tens of milliseconds, so the
 * guard is four times longer there: it catches hangs, not slowness.
 */
#if defined(__SANITIZE_THREAD__)
#define DTEST_SLOW_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DTEST_SLOW_BUILD 1
#endif
#endif
#ifdef DTEST_SLOW_BUILD
#define DTEST_CHILD_TIMEOUT_MS 60000
#else
#define DTEST_CHILD_TIMEOUT_MS 15000
#endif

enum { EV_INT = 1, EV_CQES, EV_FAIL };

struct devent {
	int type;
	bool ordered;
	char label[DREC_LABEL];
	long v;
	unsigned int off, n;
};

struct drec {
	unsigned int nev, ncqe;
	bool ev_overflow;
	bool done;
	struct devent ev[DREC_MAX_EV];
	struct tcqe cqes[DREC_MAX_CQE];
};

const char *derrname(long v, char *buf, size_t len)
{
	const char *n = NULL;

	if (v == DHUNG) {
		snprintf(buf, len, "HUNG");
		return buf;
	}
	if (v == DCRASHED) {
		snprintf(buf, len, "CRASHED");
		return buf;
	}

	if (v < 0 && v > -4096)
		n = strerrorname_np((int)-v);
	if (n)
		snprintf(buf, len, "-%s", n);
	else
		snprintf(buf, len, "%ld", v);
	return buf;
}

static struct devent *new_event(struct dctx *c, int type, const char *fmt,
				va_list ap)
{
	struct drec *r = c->rec;
	struct devent *e;

	if (r->nev >= DREC_MAX_EV) {
		r->ev_overflow = true;
		return NULL;
	}
	e = &r->ev[r->nev++];
	memset(e, 0, sizeof(*e));
	e->type = type;
	vsnprintf(e->label, sizeof(e->label), fmt, ap);
	return e;
}

void drec_int(struct dctx *c, long v, const char *fmt, ...)
{
	struct devent *e;
	va_list ap;

	va_start(ap, fmt);
	e = new_event(c, EV_INT, fmt, ap);
	va_end(ap);
	if (e)
		e->v = v;
}

void drec_expect(struct dctx *c, long v, long expected, const char *fmt, ...)
{
	char label[DREC_LABEL], b1[32], b2[32];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(label, sizeof(label), fmt, ap);
	va_end(ap);
	drec_int(c, v, "%s", label);
	if (v != expected)
		dcheck_(c, 0, "value == expected", __FILE__, __LINE__,
			"%s: got %s, expected %s", label,
			derrname(v, b1, sizeof(b1)),
			derrname(expected, b2, sizeof(b2)));
}

void drec_cqes(struct dctx *c, const struct tcqe *cqes, unsigned int n,
	       bool ordered, const char *fmt, ...)
{
	struct drec *r = c->rec;
	struct devent *e;
	va_list ap;

	va_start(ap, fmt);
	e = new_event(c, EV_CQES, fmt, ap);
	va_end(ap);
	if (!e)
		return;
	if (r->ncqe + n > DREC_MAX_CQE) {
		r->ev_overflow = true;
		n = DREC_MAX_CQE - r->ncqe;
	}
	e->off = r->ncqe;
	e->n = n;
	e->ordered = ordered;
	memcpy(&r->cqes[r->ncqe], cqes, n * sizeof(*cqes));
	r->ncqe += n;
}

void dcheck_(struct dctx *c, int ok, const char *expr, const char *file,
	     int line, const char *fmt, ...)
{
	char msg[DREC_LABEL];
	va_list ap;

	if (ok)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	drec_int(c, 0, "CHECK %s:%d (%s): %s", strrchr(file, '/') ?
		 strrchr(file, '/') + 1 : file, line, expr, msg);
	c->rec->ev[c->rec->nev - 1].type = EV_FAIL;
}

void dnote(struct dctx *c, const char *fmt, ...)
{
	va_list ap;

	printf("    [%s] ", c->be->name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

int dring(struct dctx *c, struct tring *r, unsigned int entries,
	  struct io_uring_params *p, const char *label)
{
	int ret = tring_init_params(r, c->be, entries, p);

	drec_int(c, ret < 0 ? ret : 0, "%s", label);
	if (ret == 0)
		dcheck(c, backend_owns_fd(c->be, r->fd),
		       "ring fd %d not served by backend %s", r->fd,
		       c->be->name);
	return ret;
}

int dring_flags(struct dctx *c, struct tring *r, unsigned int entries,
		unsigned int flags)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	return dring(c, r, entries, &p, "ring setup");
}

unsigned int dreap(struct dctx *c, struct tring *r, unsigned int want,
		   bool ordered, const char *label)
{
	struct tcqe *buf = calloc(want ? want : 1, sizeof(*buf));
	unsigned int got;

	if (!buf)
		abort();
	got = tring_reap_wait(r, buf, want, 1000000000LL);
	drec_cqes(c, buf, got, ordered, "%s", label);
	free(buf);
	return got;
}

void dpattern(void *buf, size_t len, unsigned char seed, size_t start)
{
	unsigned char *b = buf;
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (unsigned char)(seed + ((start + i) * 7) + ((start + i) >> 8));
}

int dtmpfile(struct dctx *c, size_t len, unsigned char seed)
{
	return dtmpfile_at(c, "/tmp", len, seed);
}

int dtmpfile_at(struct dctx *c, const char *dir, size_t len,
		unsigned char seed)
{
	char path[256];
	unsigned char *buf;
	int fd;

	snprintf(path, sizeof(path), "%s/uuring-dtest-XXXXXX", dir);
	fd = open(dir, O_TMPFILE | O_RDWR, 0600);
	if (fd < 0) {
		fd = mkstemp(path);
		if (fd >= 0)
			unlink(path);
	}
	dcheck(c, fd >= 0, "temp file: %s", strerror(errno));
	if (fd < 0)
		return -1;
	if (len) {
		buf = malloc(len);
		if (!buf)
			abort();
		dpattern(buf, len, seed, 0);
		dcheck(c, pwrite(fd, buf, len, 0) == (ssize_t)len,
		       "temp file write");
		free(buf);
	}
	return fd;
}

void *dprot_none_page(void)
{
	void *p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		abort();
	return p;
}

struct drec *drec_alloc(void)
{
	struct drec *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return r == MAP_FAILED ? NULL : r;
}

void drec_free(struct drec *r)
{
	munmap(r, sizeof(*r));
}

void *dunmapped_addr(void)
{
	/* below vm.mmap_min_addr: never mapped, yet not NULL */
	return (void *)(uintptr_t)0x2000;
}

long disolated(struct dctx *c, long (*fn)(struct dctx *c, void *arg),
	       void *arg, int timeout_ms)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	volatile long *res;
	int waited = 0, status;
	long ret;
	pid_t pid;

	res = mmap(NULL, sizeof(long), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		abort();
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		*res = fn(c, arg);
		fflush(stdout);
		_exit(0);
	}
	for (;;) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		if (waited >= timeout_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			munmap((void *)res, sizeof(long));
			return DHUNG;
		}
		nanosleep(&ts, NULL);
		waited += 2;
	}
	ret = (WIFEXITED(status) && WEXITSTATUS(status) == 0) ? *res : DCRASHED;
	munmap((void *)res, sizeof(long));
	return ret;
}

/* ---- running and comparing ---- */

static struct drec *run_child(const struct dscenario *sc,
			      const struct backend *be, int *status)
{
	struct drec *rec;
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	pid_t pid;
	int waited = 0;

	rec = mmap(NULL, sizeof(*rec), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rec == MAP_FAILED)
		abort();
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		struct dctx c = {
			.be = be,
			.rec = rec,
			.is_kernel = be->kind == BACKEND_KERNEL,
			.arg = sc->arg,
		};

		sc->fn(&c);
		rec->done = true;
		fflush(stdout);
		_exit(0);
	}
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);

		if (w == pid)
			break;
		if (waited >= DTEST_CHILD_TIMEOUT_MS) {
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			*status = -1;
			break;
		}
		nanosleep(&ts, NULL);
		waited += 5;
	}
	return rec;
}

static int cqe_cmp(const void *a, const void *b)
{
	const struct tcqe *x = a, *y = b;

	if (x->user_data != y->user_data)
		return x->user_data < y->user_data ? -1 : 1;
	if (x->res != y->res)
		return x->res < y->res ? -1 : 1;
	if (x->flags != y->flags)
		return x->flags < y->flags ? -1 : 1;
	return memcmp(x->big, y->big, sizeof(x->big));
}

static bool cqe_eq(const struct tcqe *x, const struct tcqe *y)
{
	return cqe_cmp(x, y) == 0;
}

static void fmt_cqe(char *buf, size_t len, const struct tcqe *q)
{
	char e[32];

	if (q->big[0] || q->big[1])
		snprintf(buf, len, "{ud=%llu res=%s flags=0x%x big=%llx,%llx}",
			 (unsigned long long)q->user_data,
			 derrname(q->res, e, sizeof(e)), q->flags,
			 (unsigned long long)q->big[0],
			 (unsigned long long)q->big[1]);
	else
		snprintf(buf, len, "{ud=%llu res=%s flags=0x%x}",
			 (unsigned long long)q->user_data,
			 derrname(q->res, e, sizeof(e)), q->flags);
}

static int compare_cqes(const char *tname, const struct devent *ka,
			const struct tcqe *kc, const struct devent *ua,
			const struct tcqe *uc)
{
	struct tcqe *ks, *us;
	unsigned int i, n = ka->n > ua->n ? ka->n : ua->n, shown = 0;
	char b1[96], b2[96];
	int diff = 0;

	ks = calloc(n + 1, sizeof(*ks));
	us = calloc(n + 1, sizeof(*us));
	if (!ks || !us)
		abort();
	memcpy(ks, kc, ka->n * sizeof(*ks));
	memcpy(us, uc, ua->n * sizeof(*us));
	if (!ka->ordered) {
		qsort(ks, ka->n, sizeof(*ks), cqe_cmp);
		qsort(us, ua->n, sizeof(*us), cqe_cmp);
	}
	if (ka->n != ua->n) {
		printf("    CQEs \"%s\": kernel %u CQEs, %s %u CQEs\n",
		       ka->label, ka->n, tname, ua->n);
		diff = 1;
	}
	for (i = 0; i < n; i++) {
		bool kin = i < ka->n, uin = i < ua->n;

		if (kin && uin && cqe_eq(&ks[i], &us[i]))
			continue;
		diff = 1;
		if (shown++ >= 24) {
			printf("    ... (more differences)\n");
			break;
		}
		if (kin)
			fmt_cqe(b1, sizeof(b1), &ks[i]);
		else
			snprintf(b1, sizeof(b1), "(none)");
		if (uin)
			fmt_cqe(b2, sizeof(b2), &us[i]);
		else
			snprintf(b2, sizeof(b2), "(none)");
		printf("    CQEs \"%s\" %s[%u]: kernel %s %s %s\n", ka->label,
		       ka->ordered ? "" : "sorted", i, b1, tname, b2);
	}
	free(ks);
	free(us);
	return diff;
}

static unsigned int real_events(const struct drec *r, const char *bname,
				const struct devent **out, int *fails)
{
	unsigned int i, n = 0;

	for (i = 0; i < r->nev; i++) {
		if (r->ev[i].type == EV_FAIL) {
			printf("    %s: %s\n", bname, r->ev[i].label);
			*fails = 1;
			continue;
		}
		out[n++] = &r->ev[i];
	}
	return n;
}

static int compare(const char *tname, const struct drec *k,
		   const struct drec *u)
{
	static const struct devent *kev[DREC_MAX_EV], *uev[DREC_MAX_EV];
	unsigned int i, n, kn, un;
	char b1[32], b2[32];
	int diff = 0;

	if (k->ev_overflow || u->ev_overflow) {
		printf("    recorder overflow\n");
		diff = 1;
	}
	kn = real_events(k, "kernel", kev, &diff);
	un = real_events(u, tname, uev, &diff);
	n = kn > un ? kn : un;
	for (i = 0; i < n; i++) {
		const struct devent *ke = i < kn ? kev[i] : NULL;
		const struct devent *ue = i < un ? uev[i] : NULL;

		if (!ke || !ue) {
			const struct devent *e = ke ? ke : ue;

			printf("    event %u \"%s\" only on %s\n", i, e->label,
			       ke ? "kernel" : tname);
			diff = 1;
			continue;
		}
		if (ke->type != ue->type || strcmp(ke->label, ue->label)) {
			printf("    event %u: kernel \"%s\", %s \"%s\" (diverged, stopping)\n",
			       i, ke->label, tname, ue->label);
			return 1;
		}
		if (ke->type == EV_INT && ke->v != ue->v) {
			printf("    %s: kernel %s %s %s\n", ke->label,
			       derrname(ke->v, b1, sizeof(b1)), tname,
			       derrname(ue->v, b2, sizeof(b2)));
			diff = 1;
		}
		if (ke->type == EV_CQES)
			diff |= compare_cqes(tname, ke, &k->cqes[ke->off], ue,
					     &u->cqes[ue->off]);
	}
	return diff;
}

static void dump(const char *bname, const struct drec *r)
{
	char b[96];
	unsigned int i, j;

	for (i = 0; i < r->nev; i++) {
		const struct devent *e = &r->ev[i];

		if (e->type == EV_INT) {
			printf("    %s: %s = %s\n", bname, e->label,
			       derrname(e->v, b, sizeof(b)));
			continue;
		}
		if (e->type == EV_FAIL)
			continue;
		printf("    %s: %s: %u CQEs%s\n", bname, e->label, e->n,
		       e->ordered ? " (ordered)" : "");
		for (j = 0; j < e->n; j++) {
			fmt_cqe(b, sizeof(b), &r->cqes[e->off + j]);
			printf("        %s\n", b);
		}
	}
}

static int check_child(const char *bname, const struct drec *rec, int status)
{
	if (status == -1) {
		printf("    %s: scenario hung (killed after %d ms)\n", bname,
		       DTEST_CHILD_TIMEOUT_MS);
		return 1;
	}
	if (WIFSIGNALED(status)) {
		printf("    %s: scenario killed by signal %d (%s)\n", bname,
		       WTERMSIG(status), strsignal(WTERMSIG(status)));
		return 1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !rec->done) {
		printf("    %s: scenario exited abnormally (status 0x%x)\n",
		       bname, status);
		return 1;
	}
	return 0;
}

static bool selected(int argc, char **argv, const char *name)
{
	int i;

	if (argc < 2)
		return true;
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return true;
	return false;
}

int dtest_main(int argc, char **argv, const struct dscenario *sc,
	       unsigned int n)
{
	const struct backend *tb = backend_under_test();
	unsigned int i, failed = 0, ran = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!backend_kernel_available()) {
		printf("SKIP: %s: kernel io_uring not available (io_uring_setup failed), no reference to compare against\n",
		       argv[0]);
		return 77;
	}
	printf("# %s: kernel vs %s\n", argv[0], tb->name);
	/* a misspelt scenario name must not pass as "0 scenarios, 0 failed" */
	for (int a = 1; a < argc; a++) {
		for (i = 0; i < n && strcmp(argv[a], sc[i].name); i++)
			;
		if (i == n) {
			printf("FAIL %s: no such scenario\n", argv[a]);
			return 2;
		}
	}
	for (i = 0; i < n; i++) {
		struct drec *k, *u;
		int ks, us, bad;

		if (!selected(argc, argv, sc[i].name))
			continue;
		ran++;
		k = run_child(&sc[i], &backend_kernel, &ks);
		u = run_child(&sc[i], tb, &us);
		bad = check_child("kernel", k, ks);
		bad |= check_child(tb->name, u, us);
		bad |= compare(tb->name, k, u);
		if (getenv("DTEST_VERBOSE")) {
			dump("kernel", k);
			if (atoi(getenv("DTEST_VERBOSE")) > 1)
				dump(tb->name, u);
		}
		if (sc[i].known && tb->kind == BACKEND_UURING) {
			printf("%s %s (%s)\n", bad ? "KNOWN-DIVERGENCE" :
			       "ok   (known divergence did not show)",
			       sc[i].name, sc[i].known);
			bad = 0;
		} else {
			printf("%s %s\n", bad ? "FAIL" : "ok  ", sc[i].name);
		}
		failed += bad ? 1 : 0;
		munmap(k, sizeof(*k));
		munmap(u, sizeof(*u));
	}
	printf("# %u scenarios, %u failed\n", ran, failed);
	return failed ? 1 : 0;
}

void disolated_rec(struct dctx *c, long (*body)(struct dctx *, void *),
		   const char *name, int limit_ms)
{
	long ret = disolated(c, body, NULL, limit_ms);
	char b[32];

	if (ret)
		dnote(c, "%s: %s", name, derrname(ret, b, sizeof(b)));
	drec_int(c, ret, "%s: isolated run (0 = finished)", name);
}

struct uuring_stats dstats(struct dctx *c, struct tring *r)
{
	struct uuring_stats st;

	memset(&st, 0, sizeof(st));
	if (!c->is_kernel)
		uuring_get_stats(r->fd, &st, sizeof(st));
	return st;
}
