// SPDX-License-Identifier: MIT
/*
 * Every fault-injection site (UURING_FAULT, util/fault_sites.h) on a mixed
 * workload, uuring only (the kernel gives no way to make these fail).
 *
 * For each site, each of a few positions (the site's 1st, 2nd, 4th and
 * 9th pass fails once) and each ring kind (default, SQPOLL,
 * DEFER_TASKRUN), a fresh process (the variable is read when the library
 * loads) runs the workload twice on one ring:
 *   - a pipe read that waits for data (readiness engine), a regular-file
 *     read, the same IOSQE_ASYNC (io-wq) and O_DIRECT (AIO), a linked
 *     write -> read pair with a link timeout, a 5 ms TIMEOUT, a POLL_ADD
 *     that fires, a POLL_ADD cancelled by ASYNC_CANCEL, a socket RECV that
 *     waits for a send, and NOPs enough to overflow the CQ once;
 *   - round 1 may meet the fault: every SQE must still get exactly one
 *     terminal CQE (or the submission stops with an error, as the
 *     kernel's would), none may hang (a watchdog), and a ring setup the
 *     fault made fail is retried once;
 *   - round 2, after the fault: every result must be the expected one
 *     (the ring and the engine keep working).
 * The process exits 0 only then; under ASan its exit also runs the leak
 * check.  The parent fails a site that no position and ring reached (the
 * workload must exercise every site), and any child that failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tprep.h"
#include "tring.h"
#include "util/fault_sites.h"
#include "uuring.h"

#define NSLOTS 96
#define BLK 4096

static const char *const site_names[] = {
#define SITE_NAME(id, name, what) name,
	UU_FAULT_SITES(SITE_NAME)
#undef SITE_NAME
};
#define NSITES (sizeof(site_names) / sizeof(site_names[0]))

static const unsigned int positions[] = { 0, 1, 3, 8 };
static const struct {
	const char *name;
	unsigned int flags;
} kinds[] = {
	{ "default", 0 },
	{ "sqpoll", IORING_SETUP_SQPOLL },
	{ "defer", IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN },
};

enum {
	UD_PIPE_READ = 1, UD_FILE_READ, UD_ASYNC_READ, UD_DIRECT_READ,
	UD_LINK_WRITE, UD_LINK_READ, UD_LINK_TIMEOUT, UD_TIMEOUT, UD_POLL,
	UD_POLL_CANCELLED, UD_CANCEL, UD_RECV, UD_NOP0,
};
#define NNOPS 60 /* with the rest, more than the CQ's 64 */

struct work {
	int pipe1[2], pipe2[2], pipe3[2], sp[2];
	int file, dfile;
	char *buf;
	char *dbuf;
	char *wbuf;
};

/* publishes and submits what is queued; wakes an SQ thread that sleeps */
static int submit(struct tring *r)
{
	unsigned int n = tring_flush(r);

	return tring_enter(r, n, 0, tring_sqpoll_wakeup_flag(r, n), NULL, 0);
}

/* -1 where one CQE per user_data was not seen, else the number of CQEs */
static int collect(struct tring *r, int *res, unsigned int n)
{
	unsigned int seen = 0, want = n;
	int spins = 0, idle = 0;

	for (unsigned int i = 0; i < NSLOTS; i++)
		res[i] = 1 << 30; /* none yet */
	while (seen < want && spins < 200) {
		struct io_uring_cqe *cqe;
		unsigned int head, got = 0;
		int ret = tring_wait(r, 1, 50 * 1000 * 1000LL);

		if (ret < 0 && ret != -ETIME && ret != -EINTR &&
		    ret != -EBADR && ret != -EBUSY)
			fprintf(stderr, "  wait: %d\n", ret);
		tring_for_each_cqe(r, head, cqe) {
			uint64_t ud = cqe->user_data;

			got++;
			if (ud >= NSLOTS || res[ud] != 1 << 30) {
				fprintf(stderr, "  CQE for %llu twice or "
					"unknown (res %d)\n",
					(unsigned long long)ud, cqe->res);
				return -1;
			}
			if (cqe->flags & IORING_CQE_F_MORE) {
				fprintf(stderr, "  CQE %llu with F_MORE\n",
					(unsigned long long)ud);
				return -1;
			}
			res[ud] = cqe->res;
			seen++;
		}
		tring_cq_advance(r, got);
		spins++;
		/* a dropped overflow entry never comes: half a second of
		 * nothing is enough once the ring counted a drop */
		if (got)
			idle = 0;
		else if (++idle >= 10 && *r->cq_overflow)
			break;
	}
	return (int)seen;
}

static int setup_work(struct work *w)
{
	char path[] = "/tmp/uuring-fault-XXXXXX";

	if (pipe2(w->pipe1, O_NONBLOCK) || pipe2(w->pipe2, O_NONBLOCK) ||
	    pipe2(w->pipe3, O_NONBLOCK) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, w->sp))
		return -1;
	w->file = mkstemp(path);
	if (w->file < 0)
		return -1;
	w->dfile = open(path, O_RDWR | O_DIRECT);
	unlink(path);
	if (posix_memalign((void **)&w->dbuf, BLK, BLK) ||
	    posix_memalign((void **)&w->buf, BLK, 4 * BLK) ||
	    posix_memalign((void **)&w->wbuf, BLK, BLK))
		return -1;
	memset(w->wbuf, 'w', BLK);
	if (pwrite(w->file, w->wbuf, BLK, 0) != BLK || fsync(w->file))
		return -1;
	return 0;
}

/* what setup_work made (the buffers too: LeakSanitizer runs this test) */
static void teardown_work(struct work *w)
{
	int *fds[] = { w->pipe1, w->pipe2, w->pipe3, w->sp };

	for (unsigned int i = 0; i < sizeof(fds) / sizeof(*fds); i++) {
		close(fds[i][0]);
		close(fds[i][1]);
	}
	close(w->file);
	if (w->dfile >= 0)
		close(w->dfile);
	free(w->buf);
	free(w->dbuf);
	free(w->wbuf);
}

/* queues the workload; returns the number of SQEs */
static unsigned int queue_work(struct tring *r, struct work *w)
{
	struct __kernel_timespec *ts5 = (void *)(w->buf + 3 * BLK);
	struct __kernel_timespec *ts1s = ts5 + 1;
	struct io_uring_sqe *sqe;
	unsigned int n = 0;

	ts5->tv_sec = 0;
	ts5->tv_nsec = 5 * 1000 * 1000;
	ts1s->tv_sec = 1;
	ts1s->tv_nsec = 0;
	tprep(r, IORING_OP_READ, w->pipe1[0], w->buf, 16, 0, UD_PIPE_READ, 0);
	tprep(r, IORING_OP_READ, w->file, w->buf + 64, 64, 0, UD_FILE_READ,
	      0);
	tprep(r, IORING_OP_READ, w->file, w->buf + 256, 64, 0, UD_ASYNC_READ,
	      IOSQE_ASYNC);
	tprep(r, IORING_OP_READ, w->dfile >= 0 ? w->dfile : w->file, w->dbuf,
	      BLK, 0, UD_DIRECT_READ, 0);
	tprep(r, IORING_OP_WRITE, w->file, w->wbuf, 64, BLK, UD_LINK_WRITE,
	      IOSQE_IO_LINK);
	tprep(r, IORING_OP_READ, w->file, w->buf + BLK, 64, BLK, UD_LINK_READ,
	      IOSQE_IO_LINK);
	sqe = tprep(r, IORING_OP_LINK_TIMEOUT, -1, ts1s, 1, 0,
		    UD_LINK_TIMEOUT, 0);
	(void)sqe;
	tprep(r, IORING_OP_TIMEOUT, -1, ts5, 1, 0, UD_TIMEOUT, 0);
	sqe = tprep(r, IORING_OP_POLL_ADD, w->pipe2[0], NULL, 0, 0, UD_POLL,
		    0);
	sqe->poll32_events = POLLIN;
	sqe = tprep(r, IORING_OP_POLL_ADD, w->pipe3[0], NULL, 0, 0,
		    UD_POLL_CANCELLED, 0);
	sqe->poll32_events = POLLIN;
	n = 10;
	if (submit(r) < 0)
		return 0;
	/* the cancel after the poll it cancels was submitted */
	sqe = tprep(r, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, UD_CANCEL, 0);
	sqe->addr = UD_POLL_CANCELLED;
	tprep(r, IORING_OP_RECV, w->sp[0], w->buf + 2 * BLK, 16, 0, UD_RECV,
	      0);
	n += 2;
	for (unsigned int i = 0; i < NNOPS; i++) {
		if (!(i % 16)) {
			/* SQ room (an SQ thread takes them in its time) */
			if (submit(r) < 0)
				return n;
			tring_sqpoll_await_sq_taken(r, 2000);
		}
		tprep_nop(r, UD_NOP0 + i, 0);
		n++;
	}
	return n;
}

/* 0 when every result is what an unfaulted run gives */
static int check_round(const int *res)
{
	int bad = 0;

#define EXPECT(ud, v)                                                      \
	do {                                                               \
		if (res[ud] != (v)) {                                      \
			fprintf(stderr, "  %s: %d, expected %d\n", #ud,    \
				res[ud], (v));                             \
			bad = 1;                                           \
		}                                                          \
	} while (0)
	EXPECT(UD_PIPE_READ, 5);
	EXPECT(UD_FILE_READ, 64);
	EXPECT(UD_ASYNC_READ, 64);
	EXPECT(UD_DIRECT_READ, BLK);
	EXPECT(UD_LINK_WRITE, 64);
	EXPECT(UD_LINK_READ, 64);
	EXPECT(UD_LINK_TIMEOUT, -ECANCELED);
	EXPECT(UD_TIMEOUT, -ETIME);
	EXPECT(UD_POLL, POLLIN);
	EXPECT(UD_POLL_CANCELLED, -ECANCELED);
	EXPECT(UD_CANCEL, 0);
	EXPECT(UD_RECV, 3);
	for (unsigned int i = 0; i < NNOPS; i++)
		EXPECT(UD_NOP0 + i, 0);
#undef EXPECT
	return bad;
}

/* round_trip's answer for a round that lost a CQE to a dropped overflow
 * entry (counted in cq_overflow, as the kernel counts it): allowed only
 * in a round that met the fault */
#define ROUND_SHORT 2

static int round_trip(struct tring *r, struct work *w, int round,
		      bool check)
{
	int res[NSLOTS], seen;
	unsigned int n;
	char drain[64];

	n = queue_work(r, w);
	if (!n) {
		fprintf(stderr, "  round %d: first submit failed\n", round);
		return ROUND_SHORT;
	}
	if (submit(r) < 0)
		fprintf(stderr, "  round %d: submit failed\n", round);
	/* the events the waiting requests wait for */
	if (write(w->pipe1[1], "hello", 5) != 5 ||
	    write(w->pipe2[1], "x", 1) != 1 || send(w->sp[1], "abc", 3, 0) != 3)
		return -1;
	seen = collect(r, res, n);
	/* what round 1 left behind must not reach round 2 */
	while (read(w->pipe1[0], drain, sizeof(drain)) > 0 ||
	       read(w->pipe2[0], drain, sizeof(drain)) > 0 ||
	       recv(w->sp[0], drain, sizeof(drain), 0) > 0)
		;
	if (seen < 0)
		return -1;
	if ((unsigned int)seen != n) {
		/* an overflow entry the fault dropped: counted by the ring,
		 * as the kernel counts it */
		if (*r->cq_overflow)
			return ROUND_SHORT;
		fprintf(stderr, "  round %d: %d of %u CQEs, missing:", round,
			seen, n);
		for (unsigned int i = 1; i < UD_NOP0 + NNOPS; i++)
			if (res[i] == 1 << 30)
				fprintf(stderr, " %u", i);
		fprintf(stderr, "\n");
		return -1;
	}
	return check && check_round(res) ? ROUND_SHORT : 0;
}

static int child(const char *kind_name, unsigned int flags)
{
	const struct backend *be = backend_by_name("uuring");
	struct work w;
	struct tring r;
	int ret;

	twatchdog(30);
	if (setup_work(&w)) {
		perror("setup");
		return 2;
	}
	ret = tring_init(&r, be, 32, flags);
	if (ret) {
		/* the kernel's answer to a failed allocation: try again */
		fprintf(stderr, "  %s: setup %d, once more\n", kind_name, ret);
		ret = tring_init(&r, be, 32, flags);
		if (ret) {
			fprintf(stderr, "  setup failed twice: %d\n", ret);
			return 1;
		}
	}
	/* rounds until one ran after the fault without meeting it (a late
	 * position may fall in the second round), at most four */
	for (int round = 1;; round++) {
		const char *site = getenv("UURING_FAULT_SITE");
		long before = site ? uuring_fault_hits(site) : 0;
		bool met;

		ret = round_trip(&r, &w, round, true);
		met = site && uuring_fault_hits(site) != before;
		if (ret && !(met && ret == ROUND_SHORT)) {
			fprintf(stderr, "  %s round %d failed%s\n", kind_name,
				round, met ? " (fault met in it)" : "");
			return 1;
		}
		if (!met && round > 1)
			break;
		if (round == 4) {
			fprintf(stderr, "  the fault was met in 4 rounds\n");
			return 1;
		}
	}
	tring_exit(&r);
	teardown_work(&w);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int reached[NSITES] = { 0 }, failed = 0, runs = 0;

	if (argc == 3 && !strcmp(argv[1], "--child")) {
		int ret;

		for (unsigned int k = 0; k < sizeof(kinds) / sizeof(kinds[0]);
		     k++) {
			if (strcmp(kinds[k].name, argv[2]))
				continue;
			ret = child(kinds[k].name, kinds[k].flags);
			if (!ret && getenv("UURING_FAULT_SITE")) {
				long hits = uuring_fault_hits(
					getenv("UURING_FAULT_SITE"));

				/* the parent reads it from the exit code */
				return hits > 0 ? 10 : 0;
			}
			return ret;
		}
		return 2;
	}
	for (unsigned int s = 0; s < NSITES; s++) {
		for (unsigned int p = 0; p < sizeof(positions) / sizeof(*positions);
		     p++) {
			for (unsigned int k = 0;
			     k < sizeof(kinds) / sizeof(kinds[0]); k++) {
				char spec[64];
				pid_t pid;
				int st = 0;

				snprintf(spec, sizeof(spec), "%s:%u:1",
					 site_names[s], positions[p]);
				pid = fork();
				if (pid == 0) {
					setenv("UURING_FAULT", spec, 1);
					setenv("UURING_FAULT_SITE",
					       site_names[s], 1);
					execl("/proc/self/exe", argv[0],
					      "--child", kinds[k].name,
					      (char *)NULL);
					_exit(127);
				}
				runs++;
				if (pid < 0 || waitpid(pid, &st, 0) != pid ||
				    !WIFEXITED(st) ||
				    (WEXITSTATUS(st) != 0 &&
				     WEXITSTATUS(st) != 10)) {
					printf("FAIL %s on %s (status %#x)\n",
					       spec, kinds[k].name, st);
					failed++;
					continue;
				}
				if (WEXITSTATUS(st) == 10)
					reached[s]++;
			}
		}
		printf("%s %s: fault met in %u of %zu runs\n",
		       reached[s] ? "ok  " : "FAIL", site_names[s], reached[s],
		       sizeof(positions) / sizeof(*positions) *
			       (sizeof(kinds) / sizeof(kinds[0])));
		if (!reached[s])
			failed++;
		fflush(stdout);
	}
	printf("# %u runs, %u failed\n", runs, failed);
	return failed ? 1 : 0;
}
