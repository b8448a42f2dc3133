// SPDX-License-Identifier: MIT
/*
 * Differential tests: IORING_REGISTER_PERSONALITY / UNREGISTER_PERSONALITY
 * and the SQE personality field (T9).
 *
 * Identities are changed per thread with raw system calls (glibc's
 * wrappers would change every thread of the process): a helper thread
 * drops to uid 65534 and registers its identity, or drops and submits
 * with the identity main registered as root.  OPENATs of a file only root
 * can read and of one only 65534 can read, inline and IOSQE_ASYNC, in a
 * link chain, O_CREAT (owner of the new file), an unknown id (-EINVAL),
 * unregister twice, the cyclic id allocation up to 65535 (-EBUSY), an
 * unregister while a request that holds the identity is in flight, and
 * the submitting thread's ids afterwards.  Needs root; without it every
 * scenario only notes that it skipped (on both backends alike).  Not run
 * on DEFER_TASKRUN rings: other threads submit (SINGLE_ISSUER).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dtest.h"

#define NOBODY 65534
#define LIMIT_MS 20000

/* per-thread (raw) identity changes */
static long set_resuid(long r, long e, long s)
{
	return syscall(SYS_setresuid, r, e, s);
}

static long set_resgid(long r, long e, long s)
{
	return syscall(SYS_setresgid, r, e, s);
}

static long set_groups(int n, const gid_t *g)
{
	return syscall(SYS_setgroups, n, g);
}

/* this thread's ids as one comparable record (raw reads) */
static void rec_ids(struct dctx *c, const char *who)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	syscall(SYS_getresuid, &ru, &eu, &su);
	syscall(SYS_getresgid, &rg, &eg, &sg);
	drec_int(c, ru, "%s ruid", who);
	drec_int(c, eu, "%s euid", who);
	drec_int(c, su, "%s suid", who);
	drec_int(c, (long)syscall(SYS_setfsuid, -1), "%s fsuid", who);
	drec_int(c, eg, "%s egid", who);
	drec_int(c, (long)syscall(SYS_setfsgid, -1), "%s fsgid", who);
	drec_int(c, (long)syscall(SYS_getgroups, 0, NULL), "%s ngroups", who);
}

struct files {
	char dir[64], root_only[96], nobody_only[96], wdir[96];
};

static int make_files(struct files *f)
{
	int fd;

	snprintf(f->dir, sizeof(f->dir), "/tmp/uu-pers-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	/* 65534 may search the directory, and create in wdir */
	chmod(f->dir, 0755);
	snprintf(f->root_only, sizeof(f->root_only), "%s/root", f->dir);
	snprintf(f->nobody_only, sizeof(f->nobody_only), "%s/nobody", f->dir);
	snprintf(f->wdir, sizeof(f->wdir), "%s/w", f->dir);
	fd = open(f->root_only, O_CREAT | O_RDWR, 0600);
	if (fd < 0)
		return -1;
	close(fd);
	fd = open(f->nobody_only, O_CREAT | O_RDWR, 0600);
	if (fd < 0 || fchown(fd, NOBODY, NOBODY))
		return -1;
	close(fd);
	if (mkdir(f->wdir, 0777) || chmod(f->wdir, 0777))
		return -1;
	return 0;
}

static void remove_files(struct files *f)
{
	char p[160];

	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/c%d", f->wdir, i);
		unlink(p);
	}
	rmdir(f->wdir);
	unlink(f->root_only);
	unlink(f->nobody_only);
	rmdir(f->dir);
}

/*
 * OPENAT path with personality pers (0: none) and sqe flags; records
 * "opened" (1, plus the new file's owner with O_CREAT) or the error.
 */
static void open_as(struct dctx *c, struct tring *r, const char *path,
		    int oflags, unsigned int pers, uint8_t flags,
		    const char *label)
{
	struct io_uring_sqe *s = tring_get_sqe(r);
	struct tcqe cqe;
	struct stat st;

	tring_prep_rw(s, IORING_OP_OPENAT, AT_FDCWD, path, 0600, 0, 7);
	s->open_flags = (uint32_t)oflags;
	s->personality = (uint16_t)pers;
	s->flags = flags;
	drec_int(c, tring_submit(r), "%s submit", label);
	if (tring_reap_wait(r, &cqe, 1, 2000000000LL) != 1) {
		drec_int(c, -1, "%s: no CQE", label);
		return;
	}
	if (cqe.res < 0) {
		drec_int(c, cqe.res, "%s", label);
		return;
	}
	drec_int(c, 1, "%s opened", label);
	if (oflags & O_CREAT) {
		fstat(cqe.res, &st);
		drec_int(c, st.st_uid, "%s owner uid", label);
		drec_int(c, st.st_gid, "%s owner gid", label);
	}
	close(cqe.res);
}

static bool need_root(struct dctx *c)
{
	if (geteuid() == 0)
		return true;
	dnote(c, "not root: skipped");
	return false;
}

/* root only: the test files and an 8-entry ring; false to skip */
static bool root_files_ring(struct dctx *c, struct files *f, struct tring *r)
{
	return need_root(c) && !make_files(f) && !dring_flags(c, r, 8, 0);
}

static int reg_pers(struct dctx *c, struct tring *r)
{
	return c->be->reg((unsigned int)r->fd, IORING_REGISTER_PERSONALITY,
			  NULL, 0);
}

static int unreg_pers(struct dctx *c, struct tring *r, unsigned int id)
{
	return c->be->reg((unsigned int)r->fd, IORING_UNREGISTER_PERSONALITY,
			  NULL, id);
}

static void nop_pers(struct tring *r, uint64_t ud, unsigned int pers,
		     uint8_t flags)
{
	struct io_uring_sqe *s = tring_get_sqe(r);

	tring_prep_nop(s, ud);
	s->personality = (uint16_t)pers;
	s->flags = flags;
}

/* ids, errors and the cyclic allocation */
static long ids_body(struct dctx *c, void *arg)
{
	struct tring r;
	int last = 0, n = 0, ret;

	(void)arg;
	if (dring_flags(c, &r, 8, 0))
		return 0;
	drec_int(c, reg_pers(c, &r), "register 1");
	drec_int(c, reg_pers(c, &r), "register 2");
	drec_int(c, unreg_pers(c, &r, 2), "unregister 2");
	drec_int(c, unreg_pers(c, &r, 2), "unregister 2 again");
	drec_int(c, unreg_pers(c, &r, 70000), "unregister 70000");
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_PERSONALITY,
			       &r, 0), "register with arg");
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_REGISTER_PERSONALITY,
			       NULL, 1), "register with nr_args");
	drec_int(c, c->be->reg((unsigned int)r.fd, IORING_UNREGISTER_PERSONALITY,
			       &r, 1), "unregister with arg");
	drec_int(c, reg_pers(c, &r), "register again (cyclic)");
	/* unknown ids fail the request at submission, known ones run */
	nop_pers(&r, 1, 2, 0);
	nop_pers(&r, 2, 3, 0);
	nop_pers(&r, 3, 65535, 0);
	nop_pers(&r, 4, 3, IOSQE_ASYNC);
	drec_int(c, tring_submit(&r), "nops");
	dreap(c, &r, 4, false, "nops");
	/* an unknown id in a chain fails the chain */
	nop_pers(&r, 5, 0, IOSQE_IO_LINK);
	nop_pers(&r, 6, 9, IOSQE_IO_LINK);
	nop_pers(&r, 7, 0, 0);
	drec_int(c, tring_submit(&r), "chain");
	dreap(c, &r, 3, true, "chain");
	/* up to 65535 ids, then -EBUSY; freed ids are found by wrapping */
	for (;;) {
		ret = reg_pers(c, &r);
		if (ret < 0)
			break;
		if (ret != last + 1 && n)
			drec_int(c, ret, "allocation jumped after %d", last);
		last = ret;
		n++;
	}
	drec_int(c, ret, "full");
	drec_int(c, n, "allocated until full");
	drec_int(c, last, "last id");
	drec_int(c, unreg_pers(c, &r, 100), "free 100");
	drec_int(c, unreg_pers(c, &r, 5), "free 5");
	drec_int(c, reg_pers(c, &r), "wrapped 1");
	drec_int(c, reg_pers(c, &r), "wrapped 2");
	drec_int(c, reg_pers(c, &r), "full again");
	/* (id 0 is never allocated: zero_quirk) */
	drec_int(c, unreg_pers(c, &r, 0), "unregister 0");
	tring_exit(&r);
	return 0;
}

/*
 * 6.18 quirk: UNREGISTER of id 0 fails (-EINVAL) but frees index 0 of the
 * kernel's id allocator, so a later wrapped allocation returns id 0 (an
 * id no SQE can name).  uuring never allocates 0 (compatibility.md #25).
 */
static long zero_quirk_body(struct dctx *c, void *arg)
{
	struct tring r;
	int last = 0, ret;

	(void)arg;
	if (dring_flags(c, &r, 8, 0))
		return 0;
	drec_int(c, reg_pers(c, &r), "register");
	drec_int(c, unreg_pers(c, &r, 0), "unregister 0");
	while ((ret = reg_pers(c, &r)) >= 0)
		last = ret;
	drec_int(c, ret, "full");
	drec_int(c, last, "last id allocated");
	drec_int(c, unreg_pers(c, &r, 0), "unregister 0 when full");
	tring_exit(&r);
	return 0;
}

struct helper {
	struct dctx *c;
	struct tring *r;
	struct files *f;
	int id;
	bool full_drop; /* real and saved uid too: no way back to root */
};

static void drop_to_nobody(bool full)
{
	long keep = full ? NOBODY : -1;

	set_groups(0, NULL);
	set_resgid(keep, NOBODY, keep);
	set_resuid(keep, NOBODY, keep);
}

static void *register_as_nobody(void *arg)
{
	struct helper *h = arg;

	drop_to_nobody(true);
	h->id = reg_pers(h->c, h->r);
	return NULL;
}

static void run_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, arg) == 0)
		pthread_join(t, NULL);
}

/* root submits with the identity a thread registered as 65534 */
static long nobody_pers_body(struct dctx *c, void *arg)
{
	struct files f;
	struct helper h;
	struct tring r;
	char p[160];
	int id;

	(void)arg;
	if (!root_files_ring(c, &f, &r))
		return 0;
	memset(&h, 0, sizeof(h));
	h.c = c;
	h.r = &r;
	run_thread(register_as_nobody, &h);
	id = h.id;
	drec_int(c, id, "registered by nobody");
	for (int async = 0; async < 2; async++) {
		uint8_t fl = async ? IOSQE_ASYNC : 0;
		const char *a = async ? " async" : "";
		char l[64];

		snprintf(l, sizeof(l), "root file%s", a);
		open_as(c, &r, f.root_only, O_RDONLY, 0, fl, l);
		snprintf(l, sizeof(l), "root file as nobody%s", a);
		open_as(c, &r, f.root_only, O_RDONLY, (unsigned int)id, fl, l);
		snprintf(l, sizeof(l), "nobody file as nobody%s", a);
		open_as(c, &r, f.nobody_only, O_RDONLY, (unsigned int)id, fl, l);
		snprintf(l, sizeof(l), "nobody file%s", a);
		open_as(c, &r, f.nobody_only, O_RDONLY, 0, fl, l);
		/* the identity was given back: root again */
		snprintf(l, sizeof(l), "root file after%s", a);
		open_as(c, &r, f.root_only, O_RDONLY, 0, fl, l);
		snprintf(p, sizeof(p), "%s/c%d", f.wdir, async);
		snprintf(l, sizeof(l), "create as nobody%s", a);
		open_as(c, &r, p, O_CREAT | O_RDWR, (unsigned int)id, fl, l);
		snprintf(p, sizeof(p), "%s/c%d", f.wdir, 2 + async);
		snprintf(l, sizeof(l), "create%s", a);
		open_as(c, &r, p, O_CREAT | O_RDWR, 0, fl, l);
	}
	/* a chain continuation with the personality */
	nop_pers(&r, 1, 0, IOSQE_IO_LINK);
	{
		struct io_uring_sqe *s = tring_get_sqe(&r);

		tring_prep_rw(s, IORING_OP_OPENAT, AT_FDCWD, f.root_only, 0, 0, 2);
		s->personality = (uint16_t)id;
	}
	drec_int(c, tring_submit(&r), "chain submit");
	dreap(c, &r, 2, true, "chain: nop, root file as nobody");
	/* unregistered while a request holding it waits in io-wq: the
	 * request keeps the identity it was submitted with */
	{
		struct io_uring_sqe *s = tring_get_sqe(&r);
		struct tcqe cqe;

		tring_prep_rw(s, IORING_OP_OPENAT, AT_FDCWD, f.root_only, 0, 0, 3);
		s->personality = (uint16_t)id;
		s->flags = IOSQE_ASYNC;
		drec_int(c, tring_submit(&r), "in flight submit");
		/* SQPOLL: the SQE must have been taken (head moved, after
		 * the id lookup) before the id goes */
		for (int i = 0; i < 2000 && tring_flush(&r); i++)
			usleep(1000);
		drec_int(c, unreg_pers(c, &r, (unsigned int)id),
			 "unregister in flight");
		if (tring_reap_wait(&r, &cqe, 1, 2000000000LL) != 1)
			cqe.res = -ETIME;
		drec_int(c, cqe.res >= 0 ? 1 : cqe.res, "in flight result");
		if (cqe.res >= 0)
			close(cqe.res);
	}
	drec_int(c, unreg_pers(c, &r, (unsigned int)id), "unregister twice");
	open_as(c, &r, f.root_only, O_RDONLY, (unsigned int)id, 0,
		"unregistered id");
	rec_ids(c, "main after");
	tring_exit(&r);
	remove_files(&f);
	return 0;
}

/* a thread that dropped its ids submits with the id main registered */
static void *dropped_submitter(void *arg)
{
	struct helper *h = arg;
	struct dctx *c = h->c;
	struct files *f = h->f;
	unsigned int id = (unsigned int)h->id;
	char p[160];
	int own;

	drop_to_nobody(h->full_drop);
	for (int async = 0; async < 2; async++) {
		uint8_t fl = async ? IOSQE_ASYNC : 0;
		const char *a = async ? " async" : "";
		char l[64];

		snprintf(l, sizeof(l), "root file%s", a);
		open_as(c, h->r, f->root_only, O_RDONLY, 0, fl, l);
		snprintf(l, sizeof(l), "root file as root%s", a);
		open_as(c, h->r, f->root_only, O_RDONLY, id, fl, l);
		snprintf(l, sizeof(l), "nobody file as root%s", a);
		open_as(c, h->r, f->nobody_only, O_RDONLY, id, fl, l);
		snprintf(l, sizeof(l), "root file after%s", a);
		open_as(c, h->r, f->root_only, O_RDONLY, 0, fl, l);
		snprintf(p, sizeof(p), "%s/c%d", f->wdir, async);
		snprintf(l, sizeof(l), "create as root%s", a);
		open_as(c, h->r, p, O_CREAT | O_RDWR, id, fl, l);
	}
	/* its own identity as a personality needs no privilege */
	own = reg_pers(c, h->r);
	drec_int(c, own, "own identity registered");
	open_as(c, h->r, f->nobody_only, O_RDONLY, (unsigned int)own, 0,
		"nobody file as itself");
	open_as(c, h->r, f->root_only, O_RDONLY, (unsigned int)own, 0,
		"root file as itself");
	rec_ids(c, "submitter after");
	return NULL;
}

static long dropped_body(struct dctx *c, bool full)
{
	struct files f;
	struct helper h;
	struct tring r;

	if (!root_files_ring(c, &f, &r))
		return 0;
	memset(&h, 0, sizeof(h));
	h.c = c;
	h.r = &r;
	h.f = &f;
	h.full_drop = full;
	h.id = reg_pers(c, &r);
	drec_int(c, h.id, "registered by root");
	run_thread(dropped_submitter, &h);
	rec_ids(c, "main after");
	tring_exit(&r);
	remove_files(&f);
	return 0;
}

/* euid dropped, real and saved uid still 0 */
static long euid_dropped_body(struct dctx *c, void *arg)
{
	(void)arg;
	return dropped_body(c, false);
}

/* every uid dropped: the thread cannot switch (compatibility.md #25) */
static long fully_dropped_body(struct dctx *c, void *arg)
{
	(void)arg;
	return dropped_body(c, true);
}

/*
 * IORING_FEAT_CUR_PERSONALITY: a request runs with the credentials its
 * submitter has at submission, not those of the ring's creator: root
 * creates the ring and starts io-wq work, then the whole process takes
 * euid/egid 65534 with glibc's seteuid/setegid (every thread: workers,
 * poller and timer threads included on uuring), and opens inline and
 * with IOSQE_ASYNC follow, then the same after going back to root.  On
 * SQPOLL rings the kernel's SQ thread keeps the creator's credentials
 * (sq_creds) and uuring's does not (glibc changes every thread): noted
 * there, not compared (compatibility.md #25).
 */
static long cur_personality_body(struct dctx *c, void *arg)
{
	struct files f;
	struct tring r;

	(void)arg;
	if (!root_files_ring(c, &f, &r))
		return 0;
	drec_int(c, !!(r.p.features & IORING_FEAT_CUR_PERSONALITY),
		 "FEAT_CUR_PERSONALITY");
	open_as(c, &r, f.root_only, O_RDONLY, 0, IOSQE_ASYNC, "root, before");
	if (r.p.flags & IORING_SETUP_SQPOLL) {
		dnote(c, "SQPOLL: the kernel's SQ thread keeps the creator's "
			 "credentials; not compared");
		goto out;
	}
	drec_int(c, setegid(NOBODY), "setegid 65534");
	drec_int(c, seteuid(NOBODY), "seteuid 65534");
	for (int async = 0; async < 2; async++) {
		uint8_t fl = async ? IOSQE_ASYNC : 0;
		const char *a = async ? " async" : "";
		char l[64];

		snprintf(l, sizeof(l), "root file as 65534%s", a);
		open_as(c, &r, f.root_only, O_RDONLY, 0, fl, l);
		snprintf(l, sizeof(l), "nobody file as 65534%s", a);
		open_as(c, &r, f.nobody_only, O_RDONLY, 0, fl, l);
	}
	/* a chain's next member is issued after the change too */
	nop_pers(&r, 1, 0, IOSQE_IO_LINK | IOSQE_ASYNC);
	tring_prep_rw(tring_get_sqe(&r), IORING_OP_OPENAT, AT_FDCWD,
		      f.root_only, 0, 0, 2);
	drec_int(c, tring_submit(&r), "chain submit");
	dreap(c, &r, 2, true, "chain: async nop, root file as 65534");
	drec_int(c, seteuid(0), "seteuid 0");
	drec_int(c, setegid(0), "setegid 0");
	open_as(c, &r, f.root_only, O_RDONLY, 0, 0, "root file, root again");
	open_as(c, &r, f.root_only, O_RDONLY, 0, IOSQE_ASYNC,
		"root file, root again async");
out:
	tring_exit(&r);
	remove_files(&f);
	return 0;
}

/*
 * The divergence of compatibility.md #25: a thread that changes its own
 * euid with a raw system call after its io-wq workers were created keeps
 * workers with the old one (uuring opens the root-only file where the
 * kernel, using the submitter's credentials at submission, fails).
 */
static long raw_change_body(struct dctx *c, void *arg)
{
	struct files f;
	struct tring r;

	(void)arg;
	if (!root_files_ring(c, &f, &r))
		return 0;
	open_as(c, &r, f.root_only, O_RDONLY, 0, IOSQE_ASYNC, "root, before");
	drec_int(c, (int)set_resuid(-1, NOBODY, -1), "raw euid 65534");
	open_as(c, &r, f.root_only, O_RDONLY, 0, 0, "root file as 65534");
	open_as(c, &r, f.root_only, O_RDONLY, 0, IOSQE_ASYNC,
		"root file as 65534 async");
	drec_int(c, (int)set_resuid(-1, 0, -1), "raw euid 0");
	tring_exit(&r);
	remove_files(&f);
	return 0;
}

DISOLATED_SCENARIO(sc_ids, ids_body, LIMIT_MS)
DISOLATED_SCENARIO(sc_zero_quirk, zero_quirk_body, LIMIT_MS)
DISOLATED_SCENARIO(sc_nobody_pers, nobody_pers_body, LIMIT_MS)
DISOLATED_SCENARIO(sc_euid_dropped, euid_dropped_body, LIMIT_MS)
DISOLATED_SCENARIO(sc_fully_dropped, fully_dropped_body, LIMIT_MS)
DISOLATED_SCENARIO(sc_cur_personality, cur_personality_body, LIMIT_MS)
DISOLATED_SCENARIO(sc_raw_change, raw_change_body, LIMIT_MS)

static const struct dscenario scenarios[] = {
	{ "ids", sc_ids, NULL, NULL },
	{ "zero_quirk", sc_zero_quirk, NULL, "docs/compatibility.md #25" },
	{ "nobody_pers", sc_nobody_pers, NULL, NULL },
	{ "euid_dropped_submitter", sc_euid_dropped, NULL, NULL },
	{ "fully_dropped_submitter", sc_fully_dropped, NULL,
	  "docs/compatibility.md #25" },
	{ "cur_personality", sc_cur_personality, NULL, NULL },
	{ "raw_change_after_workers", sc_raw_change, NULL,
	  "docs/compatibility.md #25" },
};

DTEST_MAIN(scenarios)
