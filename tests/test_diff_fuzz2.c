// SPDX-License-Identifier: MIT
/*
 * Differential fuzzing of much of the ABI (the generator's rules are in
 * tests/fuzz2_gen.c, the hostile register/enter calls in tests/fuzz2_sys.c):
 * links, hardlinks, drains and CQE_SKIP_SUCCESS over READ/WRITE/RECV/SEND
 * on a pipe and a socketpair holding data, POLL_ADD (one-shot, multishot)
 * and POLL_REMOVE, TIMEOUT (far, zero, ABS), TIMEOUT_REMOVE/UPDATE,
 * LINK_TIMEOUT, ASYNC_CANCEL (user_data, FD, ANY), provided buffers (classic
 * and a PBUF ring, -ENOBUFS), fixed files with holes, registered buffers,
 * OPENAT/CLOSE/STATX/FALLOCATE/FTRUNCATE/UNLINKAT/RENAMEAT/MKDIRAT inside a
 * scratch directory made per run, hostile pointers and fds.
 *
 * A round ends the same way whatever the timing: after the batch the
 * driver waits for the requests that end by themselves through a timer,
 * then (event rounds) cancels everything still parked with ASYNC_CANCEL
 * ANY|ALL until nothing is left, and last waits for the CQE of each
 * chain's last SQE and of each LINK_TIMEOUT (a chain whose last SQE may
 * skip its CQE gets a hard-linked NOP behind it).  A file round can park
 * a request too (a READ of the ring's own fd), and a hard-linked follower
 * can park after the cancel pass: one that has not ended when the wait
 * budget is spent is cancelled the same way, and that it had to be is
 * recorded; only one that a cancel cannot end is a hang.  No drained barrier:
 * the kernel refuses IOSQE_IO_DRAIN with -EOPNOTSUPP on a ring that has
 * seen CQE_SKIP_SUCCESS (io_init_req, ctx->drain_disabled).  CQEs are compared as a multiset,
 * except that each link chain's CQEs (LINK_TIMEOUTs left out: the kernel
 * posts a fired link timeout's CQE and its target's in either order) are
 * also compared in their order.  Buffers, the files and the scratch
 * directory are compared at the end.
 *
 * UURING_FUZZ_ROUNDS (default 40) rounds per scenario; UURING_FUZZ_SEED
 * shifts the scenarios' seeds; UURING_FUZZ_DUMP=<round> prints the SQEs;
 * UURING_FUZZ_INPUT=<file> replays an input of fuzz_uuring (scenario
 * "input") on both backends.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz2.h"
#include "tprep.h"

#define MAX_CQES 256

/* a program that hangs on one backend: under libFuzzer, a crash */
#ifdef F2_LIBFUZZER
#define FINDING(...) do { fprintf(stderr, "fuzz_uuring: " __VA_ARGS__); \
			  fputc('\n', stderr); abort(); } while (0)
#else
#define FINDING(...) do { } while (0)
#endif

static uint64_t hash(const void *p, size_t len, uint64_t h)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

static void drain_fd(int fd)
{
	char b[4096];
	int avail = 0;

	while (ioctl(fd, FIONREAD, &avail) == 0 && avail > 0)
		if (read(fd, b, avail < 4096 ? (size_t)avail : 4096) <= 0)
			break;
}

/* pipe and socket: exactly F2_PIPE_FILL bytes of this round's pattern */
static void refill(struct f2_env *e, unsigned int round)
{
	char b[F2_PIPE_FILL];

	drain_fd(e->pr);
	drain_fd(e->s0);
	drain_fd(e->s1);
	dpattern(b, sizeof(b), (unsigned char)round, 0);
	twrite(e->pw, b, sizeof(b));
	twrite(e->s1, b, sizeof(b));
}

/* PBUF ring group 2: 0 to 4 buffers at the start of a round */
static void refill_ring(struct f2_env *e, unsigned int round)
{
	uint16_t tail = e->br->tail;
	unsigned int k, n = f2_pick(5);
	int head = tpbuf_head(e->r, 2);

	for (k = 0; k < n && head >= 0 &&
		    (uint16_t)(tail - (uint16_t)head) < F2_RING_N; k++)
		tbuf_ring_add(e->br, F2_RING_N - 1, &tail,
			      e->rbuf + ((round + k) % F2_RING_N) * F2_PBUF_SZ,
			      F2_PBUF_SZ, (uint16_t)((round + k) % F2_RING_N));
}

/*
 * SQE i's chain is over: its last CQE (no IORING_CQE_F_MORE) is in q, or
 * an SQE of its chain that asked for CQE_SKIP_SUCCESS failed: the kernel
 * then posts no CQE for the requests it cancels behind it (req_set_fail
 * turns REQ_F_CQE_SKIP into REQ_F_SKIP_LINK_CQES, io_fail_links).
 */
static bool silenced;	/* a chain of this round ended that way */

static bool ended(struct f2_env *e, const struct tcqe *q, unsigned int n,
		  uint64_t ud)
{
	unsigned int k, j, i = (unsigned int)(ud - e->ud_base);

	for (k = 0; k < n; k++) {
		if (q[k].user_data == ud && !(q[k].flags & IORING_CQE_F_MORE))
			return true;
		j = (unsigned int)(q[k].user_data - e->ud_base);
		if (i < e->n && j < e->n && e->meta[j].skip &&
		    e->meta[i].chain >= 0 && e->meta[j].chain == e->meta[i].chain &&
		    j < i && q[k].res < 0)
			return silenced = true;
	}
	return false;
}

/*
 * Reaps into q until ud has ended; false when the round's budget of five
 * one-second waits without a CQE is spent (the hang guard of dtest kills
 * a scenario after 15 s, and the rest of the round tells more).
 */
static int waits_left;

static bool reap_until(struct f2_env *e, struct tcqe *q, unsigned int *n,
		       uint64_t ud)
{
	while (!ended(e, q, *n, ud)) {
		if (*n >= MAX_CQES || waits_left <= 0)
			return false;
		if (tring_wait(e->r, 1, 1000000000LL) == -ETIME)
			waits_left--;
		*n += tring_reap(e->r, q + *n, MAX_CQES - *n);
	}
	return true;
}

/* rec false: the driver's own SQEs, whose passes are timing */
static void submit_all(struct f2_env *e, unsigned int round, bool rec)
{
	int ret, guard = 0;

	/* an init failure stops an enter unless SUBMIT_ALL: go on */
	while (tring_flush(e->r) && guard++ < 16) {
		ret = tring_submit(e->r);
		if (rec)
			drec_int(e->c, ret, "round %u: submit", round);
		if (ret < 0)
			break;
	}
}

static void prep_ctl(struct f2_env *e, int op, uint64_t ud, uint8_t flags)
{
	struct io_uring_sqe *sqe = tring_get_sqe(e->r);

	tring_prep_rw(sqe, op, -1, NULL, 0, 0, ud);
	sqe->flags = flags;
	if (op == IORING_OP_ASYNC_CANCEL)
		sqe->cancel_flags = IORING_ASYNC_CANCEL_ANY |
				    IORING_ASYNC_CANCEL_ALL;
}

/* the round's CQEs: a multiset, each chain's in order, fd numbers hidden */
static void record(struct f2_env *e, unsigned int round, struct tcqe *q,
		   unsigned int n)
{
	struct tcqe chain[MAX_CQES];
	unsigned int k, m, i;
	int id;

	for (k = 0; k < n; k++) {
		i = (unsigned int)(q[k].user_data - e->ud_base);
		if (i < e->n && e->meta[i].fd_result && q[k].res >= 0) {
			close(q[k].res);
			q[k].res = 1000;	/* the number differs */
		}
	}
	drec_cqes(e->c, q, n, false, "round %u", round);
	for (id = 0; id < F2_MAXN; id++) {
		for (k = 0, m = 0; k < n; k++) {
			i = (unsigned int)(q[k].user_data - e->ud_base);
			if (i < e->n && e->meta[i].chain == id &&
			    !e->meta[i].ltimeout)
				chain[m++] = q[k];
		}
		if (m > 1)
			drec_cqes(e->c, chain, m, true, "round %u chain %d",
				  round, id);
	}
}

/*
 * Parked requests: cancel until nothing is left (a hard-linked follower of
 * a cancelled one may park in its turn).  False when a cancel was lost.
 */
static bool cancel_parked(struct f2_env *e, unsigned int round,
			  struct tcqe *q, unsigned int *n)
{
	unsigned int k;
	int guard, res;

	for (guard = 0; guard < 2 * F2_MAXN; guard++) {
		prep_ctl(e, IORING_OP_ASYNC_CANCEL, F2_UD_CANCEL_ALL, 0);
		submit_all(e, round, false);
		if (!reap_until(e, q, n, F2_UD_CANCEL_ALL)) {
			drec_int(e->c, -1, "round %u: cancel lost", round);
			FINDING("round %u: cancel lost", round);
			return false;
		}
		for (k = 0; q[k].user_data != F2_UD_CANCEL_ALL; k++)
			;
		/* how many each pass finds is timing (when task_work ran) */
		res = q[k].res;
		if (getenv("UURING_FUZZ_TRACE"))
			dnote(e->c, "cancel-all %d", res);
		memmove(&q[k], &q[k + 1], (*n - k - 1) * sizeof(q[0]));
		(*n)--;
		if (res <= 0)	/* ALL: the count, 0 when nothing was left */
			break;
	}
	return true;
}

static void dump(struct f2_env *e)
{
	unsigned int i, head = e->r->sqe_head;

	for (i = 0; i < e->n; i++) {
		struct io_uring_sqe *s = &e->r->sqes[((head + i) &
			e->r->sq_mask) << e->r->sqe_shift];

		dnote(e->c, "ud=%llu op=%u flags=%#x fd=%d addr=%#llx len=%u off=%#llx op_flags=%#x ioprio=%#x buf=%u fi=%u chain=%d%s",
		      (unsigned long long)s->user_data, s->opcode, s->flags,
		      s->fd, (unsigned long long)s->addr, s->len,
		      (unsigned long long)s->off, s->rw_flags, s->ioprio,
		      s->buf_index, s->file_index, e->meta[i].chain,
		      e->meta[i].must_fire ? " must-fire" : "");
	}
}

/* long: the round's phases in their order (submit, timers, cancel, ends) */
static void sqe_round(struct f2_env *e, unsigned int round, bool dump_it)
{
	struct tcqe q[MAX_CQES];
	unsigned int n = 0, i, k;

	e->ud_base = (uint64_t)round * 100;
	waits_left = 5;
	silenced = false;
	e->n = f2_pick(3) ? 1 + f2_pick(F2_MAXN) : 1;
	if (e->kind == F2_EVENT) {
		refill(e, round);
		refill_ring(e, round);
	}
	f2_gen_round(e);
	if (dump_it) {
		dnote(e->c, "fds: pipe %d/%d, sockets %d/%d, ring %d, closed %d, dir %d",
		      e->pr, e->pw, e->s0, e->s1, e->r->fd, e->closed_fd,
		      e->dirfd);
		dnote(e->c, "memory: buf %p pbuf %p rbuf %p edge %p (none, ro, pedge follow)",
		      (void *)e->buf, (void *)e->pbuf, (void *)e->rbuf,
		      (void *)e->edge);
		dump(e);
	}
	submit_all(e, round, true);
	if (getenv("UURING_FUZZ_TRACE")) {
		struct pollfd pf[2] = { { e->s0, POLLOUT, 0 },
					{ e->s1, POLLOUT, 0 } };
		int q0 = 0, q1 = 0;

		poll(pf, 2, 0);
		ioctl(e->s0, TIOCOUTQ, &q0);
		ioctl(e->s1, TIOCOUTQ, &q1);
		dnote(e->c, "round %u kind %d n %u, s0 %#x (outq %d) s1 %#x (outq %d)",
		      round, e->kind, e->n, pf[0].revents, q0, pf[1].revents,
		      q1);
	}
	/* the timers that fire by themselves, before anything is cancelled */
	for (i = 0; i < e->n; i++)
		if (e->meta[i].must_fire &&
		    !reap_until(e, q, &n, e->ud_base + i)) {
			drec_int(e->c, 0, "round %u: timer %u fired", round, i);
			FINDING("round %u: timer %u never fired", round, i);
		} else if (e->meta[i].must_fire) {
			drec_int(e->c, 1, "round %u: timer %u fired", round, i);
		}
	if (e->kind == F2_EVENT)
		cancel_parked(e, round, q, &n);
	/* every chain's last SQE and every LINK_TIMEOUT posts a CQE: when
	 * they are in, so is everything of the round */
	for (i = 0; i < e->n; i++) {
		if (!(e->meta[i].tail ||
		      (e->meta[i].ltimeout && !e->meta[i].skip)) ||
		    reap_until(e, q, &n, e->ud_base + i))
			continue;
		drec_int(e->c, 0, "round %u: %u ended", round, i);
		for (k = 0; getenv("UURING_FUZZ_TRACE") && k < n; k++)
			dnote(e->c, "have ud %llu res %d",
			      (unsigned long long)q[k].user_data, q[k].res);
		/*
		 * A file round may park a request too: a READ of the ring's
		 * own fd, which has no FMODE_NOWAIT and can be polled, is
		 * armed by io_arm_poll_handler on the ring's POLLIN, which
		 * only a posted CQE raises.  In an event round a hard-linked
		 * follower may park after the cancel pass (DEFER_TASKRUN
		 * issues it from the task_work of the wait that reaped its
		 * leader).  The kernel leaves both there; the records above
		 * say whether uuring did the same.  Only a request that a
		 * cancel cannot end either is a hang.
		 */
		waits_left = 5;
		if (cancel_parked(e, round, q, &n) &&
		    reap_until(e, q, &n, e->ud_base + i)) {
			drec_int(e->c, 1, "round %u: %u ended once cancelled",
				 round, i);
			continue;
		}
		drec_int(e->c, 0, "round %u: %u ended once cancelled", round,
			 i);
		FINDING("round %u: SQE %u never ended", round, i);
	}
	/*
	 * A chain taken as over because a skipping SQE failed: at submission
	 * that failed the whole chain and muted it, but a failure when it ran
	 * lets its hard-linked follower run, which the kernel queues by
	 * task_work (run by the enter that reaped the failure) and uuring
	 * may post from another thread a little later.  Timing only: one
	 * 50 ms wait for such a straggler.
	 */
	if (tring_wait(e->r, 1, silenced ? 50000000LL : 0) == -ETIME)
		tring_wait(e->r, 0, 0);
	n += tring_reap(e->r, q + n, MAX_CQES - n);
	record(e, round, q, n);
	/* the edge page: what a read wrote before it faulted */
	drec_int(e->c, (long)(hash(e->edge, F2_PAGE, 1) & 0x7fffffff),
		 "round %u: edge page", round);
	/* per round, so that a divergence shows where it began */
	drec_int(e->c, (long)(hash(e->buf, F2_BUF_SZ, hash(e->pbuf, F2_PAGE,
			hash(e->rbuf, F2_PAGE, 1469598103934665603ULL))) &
			0x7fffffff), "round %u: buffers", round);
}

static void *map_pages(size_t n)
{
	void *p = mmap(NULL, n * F2_PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		abort();
	return p;
}

static void env_init(struct f2_env *e, struct dctx *c, struct tring *r,
		     uint64_t seed)
{
	int p[2], sp[2], i;
	char name[16];
	char *pages;

	memset(e, 0, sizeof(*e));
	e->c = c;
	e->r = r;
	e->file = dtmpfile(c, F2_FILE_SZ, (unsigned char)seed);
	snprintf(e->dir, sizeof(e->dir), "/tmp/uuring-fuzz2-XXXXXX");
	if (!mkdtemp(e->dir))
		abort();
	e->dirfd = open(e->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (i = 0; i < F2_MAXN; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		e->tfd[i] = openat(e->dirfd, name, O_RDWR | O_CREAT | O_CLOEXEC,
				   0644);
		snprintf(e->names[i][0], 16, "n%d_a", i);
		snprintf(e->names[i][1], 16, "n%d_b", i);
		snprintf(e->names[i][2], 16, "t%d", i);
	}
	if (pipe2(p, O_CLOEXEC) || tsockpair(sp))
		abort();
	e->s0 = sp[0];
	e->s1 = sp[1];
	e->pr = p[0];
	e->pw = p[1];
	/* a number far above what the lowest-free rule hands out */
	e->closed_fd = dup2(e->file, 900);
	close(e->closed_fd);
	e->buf = map_pages(F2_BUF_SZ / F2_PAGE);
	e->pbuf = map_pages(1);
	e->rbuf = map_pages(1);
	e->br = map_pages(1);
	e->scratch = map_pages(1);
	pages = map_pages(5);
	e->edge = pages;
	e->none = pages + F2_PAGE;
	e->ro = pages + 2 * F2_PAGE;
	e->pedge = pages + 3 * F2_PAGE;
	memset(e->pedge, 'p', F2_PAGE);
	dpattern(e->ro, F2_PAGE, 3, 0);
	mprotect(e->none, F2_PAGE, PROT_NONE);
	mprotect(e->ro, F2_PAGE, PROT_READ);
	mprotect(pages + 4 * F2_PAGE, F2_PAGE, PROT_NONE);
}

/* the scratch directory, sorted: name, type and size of each entry */
static void record_dir(struct f2_env *e, uint64_t seed)
{
	struct dirent **list;
	struct stat st;
	int n, k;

	n = scandir(e->dir, &list, NULL, alphasort);
	for (k = 0; k < n; k++) {
		const char *nm = list[k]->d_name;

		if (strcmp(nm, ".") && strcmp(nm, "..")) {
			fstatat(e->dirfd, nm, &st, AT_SYMLINK_NOFOLLOW);
			drec_int(e->c, S_ISDIR(st.st_mode) ? -1 : st.st_size,
				 "seed %llu: %s", (unsigned long long)seed, nm);
			unlinkat(e->dirfd, nm, S_ISDIR(st.st_mode) ?
				 AT_REMOVEDIR : 0);
		}
		free(list[k]);
	}
	if (n >= 0)
		free(list);
	rmdir(e->dir);
}

static void env_fini(struct f2_env *e, uint64_t seed)
{
	struct stat st;
	char *fbuf;
	uint64_t h;

	h = hash(e->buf, F2_BUF_SZ, 1469598103934665603ULL);
	h = hash(e->pbuf, F2_PAGE, h);
	h = hash(e->rbuf, F2_PAGE, h);
	drec_int(e->c, (long)(h & 0x7fffffff), "seed %llu: buffer hash",
		 (unsigned long long)seed);
	fstat(e->file, &st);
	drec_int(e->c, st.st_size, "seed %llu: file size",
		 (unsigned long long)seed);
	fbuf = malloc((size_t)st.st_size + 1);
	drec_int(e->c, pread(e->file, fbuf, (size_t)st.st_size, 0) ==
		 st.st_size, "seed %llu: file read back",
		 (unsigned long long)seed);
	drec_int(e->c, (long)(hash(fbuf, (size_t)st.st_size,
				   1469598103934665603ULL) & 0x7fffffff),
		 "seed %llu: file hash", (unsigned long long)seed);
	for (size_t k = 0; getenv("UURING_FUZZ_TRACE") &&
			   k < (size_t)st.st_size; k += 256)
		dnote(e->c, "file %#zx: %llx", k, (unsigned long long)hash(
			fbuf + k, (size_t)st.st_size - k < 256 ?
			(size_t)st.st_size - k : 256, 1));
	free(fbuf);
	record_dir(e, seed);
}

/* everything env_init made: a libFuzzer process runs many programs */
static void env_close(struct f2_env *e)
{
	int i;

	close(e->file);
	for (i = 0; i < F2_MAXN; i++)
		close(e->tfd[i]);
	close(e->dirfd);
	close(e->pr);
	close(e->pw);
	close(e->s0);
	close(e->s1);
	munmap(e->buf, F2_BUF_SZ);
	munmap(e->pbuf, F2_PAGE);
	munmap(e->rbuf, F2_PAGE);
	munmap(e->br, F2_PAGE);
	munmap(e->scratch, F2_PAGE);
	munmap(e->edge, 5 * F2_PAGE);
}

static unsigned int env_uint(const char *name, unsigned int dflt)
{
	const char *v = getenv(name);

	return v && *v ? (unsigned int)strtoul(v, NULL, 0) : dflt;
}

/*
 * UURING_FUZZ_CORPUS=dir (uuring side): the run's choices are written to
 * dir/seed<N> as an input of fuzz_uuring (LLVMFuzzerTestOneInput below:
 * the seed, 8 bytes little-endian, the round count less one, then every
 * choice, 4 bytes each), which replays the run.
 */
static FILE *corpus_open(struct dctx *c, uint64_t seed, unsigned int rounds)
{
	const char *dir = getenv("UURING_FUZZ_CORPUS");
	unsigned char hdr[9];
	char path[512];
	FILE *f;
	int k;

	if (!dir || !*dir || c->is_kernel)
		return NULL;
	snprintf(path, sizeof(path), "%s/seed%llu", dir,
		 (unsigned long long)seed);
	f = fopen(path, "w");
	if (!f)
		return NULL;
	for (k = 0; k < 8; k++)
		hdr[k] = (unsigned char)(seed >> (8 * k));
	hdr[8] = (unsigned char)(rounds - 1);
	fwrite(hdr, 1, sizeof(hdr), f);
	return f;
}

static void fuzz_rounds(struct dctx *c, uint64_t seed, unsigned int rounds)
{
	unsigned int round;
	int dump_round = (int)env_uint("UURING_FUZZ_DUMP", (unsigned int)-1);
	struct f2_env e;
	struct tring r;
	FILE *corpus = corpus_open(c, seed, rounds);

	f2_seed(seed);
	f2_record(corpus);
	if (dring_flags(c, &r, 64, seed % 3 == 2 ? IORING_SETUP_SUBMIT_ALL :
			0)) {
		f2_record(NULL);
		if (corpus)
			fclose(corpus);
		return;
	}
	env_init(&e, c, &r, seed);
	f2_register_resources(&e, "setup");
	for (round = 0; round < rounds; round++) {
		unsigned int k = f2_pick(10);

		if (k == 9) {
			if (getenv("UURING_FUZZ_TRACE"))
				dnote(c, "round %u sys", round);
			f2_sys_round(&e, round);
			continue;
		}
		e.kind = k < 5 ? F2_EVENT : F2_FILE;
		sqe_round(&e, round, dump_round == (int)round);
	}
	drec_int(c, tring_cq_ready(&r), "seed %llu: no stray CQEs",
		 (unsigned long long)seed);
	env_fini(&e, seed);
	tring_exit(&r);
	env_close(&e);
	f2_record(NULL);
	if (corpus)
		fclose(corpus);
}

#ifdef F2_LIBFUZZER
#include <dirent.h>

/*
 * The fds in the engine's reserved range (>= 1024 here, util/fdutil.h)
 * less its own event fds (its poller's and timer's epoll, eventfd and
 * per-clock timerfd, made once per process when first needed): the dups
 * it takes of the program's files (T4), none of which may outlive the
 * program's ring.  The range below is the program's: a successful OPENAT
 * with CQE_SKIP_SUCCESS leaves an fd nobody knows, on the kernel too, and
 * libFuzzer's symbolizer has its pipes there.  show: print each.
 */
static bool not_counted(const char *name, const char *target)
{
	return atoi(name) < 1024 ||
	       !strcmp(target, "anon_inode:[eventpoll]") ||
	       !strcmp(target, "anon_inode:[eventfd]") ||
	       !strcmp(target, "anon_inode:[timerfd]");
}

static int count_fds(bool show)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	char path[300], target[256];
	ssize_t len;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		target[len > 0 ? len : 0] = 0;
		if (not_counted(de->d_name, target))
			continue;
		n++;
		if (show)
			fprintf(stderr, "  fd %s: %s\n", de->d_name, target);
	}
	closedir(d);
	return n;
}

/*
 * The process's threads by name (/proc/self/task/N/comm).  A program's
 * SQPOLL threads (iou-sqp-*) and futex waiters (iou-futex) end with its
 * ring; io-wq workers (iou-wrk-*) belong to the submitting thread's pool
 * as the kernel's belong to its task, which keeps its last worker of each
 * class (bounded, unbounded: 2) and lets the others leave after
 * UURING_IOWQ_IDLE_MS; the engine's process-wide threads (uuring-*:
 * poller, timer, AIO reaper, fork journal) are started once; anything
 * else is the fuzzer's own or a thread nobody accounts for.
 */
struct thread_count {
	int sqp, futex, wrk, engine, other;
};

static void count_threads(struct thread_count *t, bool show)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	char path[300], comm[32];

	memset(t, 0, sizeof(*t));
	if (!d)
		return;
	while ((de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;	/* it has just exited */
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		fclose(f);
		comm[strcspn(comm, "\n")] = 0;
		if (!strncmp(comm, "iou-sqp-", 8))
			t->sqp++;
		else if (!strcmp(comm, "iou-futex"))
			t->futex++;
		else if (!strncmp(comm, "iou-wrk-", 8))
			t->wrk++;
		else if (!strncmp(comm, "uuring-", 7))
			t->engine++;
		else
			t->other++;
		if (show)
			fprintf(stderr, "  thread %s: %s\n", de->d_name, comm);
	}
	closedir(d);
}

/* the engine's process-wide threads: uuring-poll, -timer, -aio, -xproc */
#define ENGINE_THREADS_MAX 4

static bool threads_back(const struct thread_count *t, int base_other)
{
	return !t->sqp && !t->futex && t->wrk <= 2 &&
	       t->engine <= ENGINE_THREADS_MAX && t->other <= base_other;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* extra io-wq workers leave soon, for the thread check below */
	setenv("UURING_IOWQ_IDLE_MS", "50", 0);
	return 0;
}

/*
 * fuzz_uuring (this file built with F2_LIBFUZZER, tests/meson.build):
 * libFuzzer drives the same programs on uuring only (the input is the
 * generator's choices, see corpus_open), under ASan/UBSan; a crash, a
 * sanitizer report, a program that hangs (a timer that never fires, a
 * lost cancel, a chain that never ends) or a dup of the engine's left
 * open after the program's ring was torn down is a finding.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int base_fds = -1, base_other = -1;
	struct dctx c = { .be = &backend_uuring };
	struct thread_count tc;
	uint64_t seed = 0;
	int k, fds;

	if (size < 9)
		return -1;	/* not added to the corpus */
	if (base_fds < 0)
		base_fds = count_fds(false);
	if (base_other < 0) {
		count_threads(&tc, false);
		base_other = tc.other;
	}
	for (k = 0; k < 8; k++)
		seed |= (uint64_t)data[k] << (8 * k);
	c.rec = drec_alloc();
	if (!c.rec)
		abort();
	f2_stream(data + 9, size - 9);
	fuzz_rounds(&c, seed, 1 + data[8] % 12);
	f2_stream(NULL, 0);
	drec_free(c.rec);
	/* a request's dup may take a moment to be closed */
	fds = count_fds(false);
	for (k = 0; fds > base_fds && k < 50; k++) {
		usleep(10000);
		fds = count_fds(false);
	}
	if (fds > base_fds) {
		fprintf(stderr, "fuzz_uuring: %d engine fds open after the program, %d before\n", fds, base_fds);
		count_fds(true);
		abort();
	}
	/* a torn-down ring's threads and idle workers leave within a
	 * bounded time (2 s here, UURING_IOWQ_IDLE_MS 50) */
	count_threads(&tc, false);
	for (k = 0; !threads_back(&tc, base_other) && k < 200; k++) {
		usleep(10000);
		count_threads(&tc, false);
	}
	if (!threads_back(&tc, base_other)) {
		fprintf(stderr, "fuzz_uuring: threads after the program: %d iou-sqp, %d iou-futex, %d iou-wrk (2 allowed), %d uuring-*, %d other (%d before)\n",
			tc.sqp, tc.futex, tc.wrk, tc.engine, tc.other,
			base_other);
		count_threads(&tc, true);
		abort();
	}
	return 0;
}
#else
static void fuzz(struct dctx *c, uint64_t seed)
{
	fuzz_rounds(c, seed, env_uint("UURING_FUZZ_ROUNDS", 40));
}


static void sc_fuzz(struct dctx *c)
{
	uint64_t seed = (uint64_t)(uintptr_t)c->arg;

	fuzz(c, seed + 16 * env_uint("UURING_FUZZ_SEED", 0));
}

/*
 * UURING_FUZZ_INPUT=file: replays an input of fuzz_uuring (the format of
 * corpus_open) on both backends, so a finding is compared with the kernel.
 */
static void sc_input(struct dctx *c)
{
	const char *path = getenv("UURING_FUZZ_INPUT");
	static uint8_t data[1 << 20];
	uint64_t seed = 0;
	size_t size;
	FILE *f;
	int k;

	if (!path || !*path) {
		dnote(c, "UURING_FUZZ_INPUT not set: nothing to replay");
		return;
	}
	f = fopen(path, "r");
	if (!f) {
		dcheck(c, f, "open %s", path);
		return;
	}
	size = fread(data, 1, sizeof(data), f);
	fclose(f);
	if (size < 9) {
		dcheck(c, size >= 9, "%s: %zu bytes", path, size);
		return;
	}
	for (k = 0; k < 8; k++)
		seed |= (uint64_t)data[k] << (8 * k);
	f2_stream(data + 9, size - 9);
	fuzz_rounds(c, seed, 1 + data[8] % 12);
	f2_stream(NULL, 0);
}

static const struct dscenario scenarios[] = {
	{ "input", sc_input, NULL },
	{ "seed1", sc_fuzz, (void *)1 },
	{ "seed2", sc_fuzz, (void *)2 },
	{ "seed3", sc_fuzz, (void *)3 },
	{ "seed4", sc_fuzz, (void *)4 },
};

DTEST_MAIN(scenarios)
#endif
