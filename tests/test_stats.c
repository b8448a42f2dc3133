// SPDX-License-Identifier: MIT
/*
 * The statistics (uuring_get_stats; uuring only: the kernel has none of
 * these counters): routes, task_work runs and items, io-wq workers per
 * class, and the two text forms (uuring_dump_stats) carrying every field
 * of struct uuring_stats with the values uuring_get_stats returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tcheck.h"
#include "tring.h"
#include "uuring.h"

static int setup(struct tring *r, unsigned int flags)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	return tring_init_params(r, &backend_uuring, 16, &p);
}

/* n NOPs with IOSQE_ASYNC, all reaped; returns how many CQEs had res 0 */
static unsigned int async_nops(struct tring *r, unsigned int n)
{
	struct tcqe cqes[16];
	unsigned int got, ok = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = tring_get_sqe(r);

		tring_prep_nop(sqe, 100 + i);
		sqe->flags |= IOSQE_ASYNC;
	}
	tring_submit(r);
	got = tring_reap_wait(r, cqes, n, 5000000000LL);
	for (unsigned int i = 0; i < got; i++)
		ok += cqes[i].res == 0;
	return ok;
}

static void defer_taskrun_counts(void)
{
	struct uuring_stats st;
	struct tring r;
	int ret;

	ret = setup(&r, IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER);
	CHECK(ret == 0, "setup %d", ret);
	if (ret)
		return;
	CHECK(async_nops(&r, 4) == 4, "4 ASYNC NOPs complete");
	ret = uuring_get_stats(r.fd, &st, sizeof(st));
	CHECK(ret == (int)sizeof(st), "get_stats %d", ret);
	CHECK(st.route_iowq == 4, "route_iowq %llu, want 4",
	      (unsigned long long)st.route_iowq);
	/* each worker completion is a task_work item the submitter runs */
	CHECK(st.tw_items == 4, "tw_items %llu, want 4",
	      (unsigned long long)st.tw_items);
	CHECK(st.tw_runs >= 1 && st.tw_runs <= 4, "tw_runs %llu, want 1..4",
	      (unsigned long long)st.tw_runs);
	CHECK(st.iowq_workers_bound + st.iowq_workers_unbound >= 1,
	      "a worker is alive (bound %llu unbound %llu)",
	      (unsigned long long)st.iowq_workers_bound,
	      (unsigned long long)st.iowq_workers_unbound);
	/* a NOP is bounded work, as on the kernel (no unbound_nonreg_file) */
	CHECK(st.iowq_workers_bound >= 1, "bound workers %llu",
	      (unsigned long long)st.iowq_workers_bound);
	CHECK(st.iowq_workers_created >=
		      st.iowq_workers_bound + st.iowq_workers_unbound,
	      "created %llu < alive", (unsigned long long)st.iowq_workers_created);
	tring_exit(&r);
}

static void default_ring_counts(void)
{
	struct uuring_stats st;
	struct tring r;
	int ret;

	ret = setup(&r, 0);
	CHECK(ret == 0, "setup %d", ret);
	if (ret)
		return;
	CHECK(async_nops(&r, 3) == 3, "3 ASYNC NOPs complete");
	for (unsigned int i = 0; i < 2; i++)
		tring_prep_nop(tring_get_sqe(&r), i);
	tring_submit_and_wait(&r, 2);
	tring_cq_advance(&r, tring_cq_ready(&r));
	ret = uuring_get_stats(r.fd, &st, sizeof(st));
	CHECK(ret == (int)sizeof(st), "get_stats %d", ret);
	CHECK(st.route_iowq == 3, "route_iowq %llu, want 3",
	      (unsigned long long)st.route_iowq);
	CHECK(st.route_inline == 2, "route_inline %llu, want 2",
	      (unsigned long long)st.route_inline);
	CHECK(st.sqes_consumed == 5, "sqes_consumed %llu, want 5",
	      (unsigned long long)st.sqes_consumed);
	CHECK(st.cqes_posted == 5, "cqes_posted %llu, want 5",
	      (unsigned long long)st.cqes_posted);
	/* default rings post where the work finished: no task_work */
	CHECK(st.tw_items == 0 && st.tw_runs == 0, "tw %llu/%llu, want 0",
	      (unsigned long long)st.tw_runs, (unsigned long long)st.tw_items);
	tring_exit(&r);
}

/* a WAITID that has to wait blocks an unbounded worker */
static void unbound_worker(void)
{
	struct uuring_stats st;
	struct io_uring_sqe *sqe;
	struct tcqe cqe;
	struct tring r;
	siginfo_t si;
	pid_t child;
	int ret, go[2];
	char b;

	ret = setup(&r, 0);
	CHECK(ret == 0, "setup %d", ret);
	if (ret)
		return;
	if (pipe(go))
		abort();
	/*
	 * The child exits only once the WAITID is submitted (the pipe's
	 * EOF), so the WAITID has to wait however late this thread runs; it
	 * slept 100 ms before, and exited first when the parent was kept
	 * off the CPU that long (the WAITID then completed at once, on no
	 * worker).
	 */
	child = fork();
	if (child == 0) {
		close(go[1]);
		if (read(go[0], &b, 1) < 0)
			_exit(4);
		_exit(3);
	}
	close(go[0]);
	sqe = tring_get_sqe(&r);
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_WAITID;
	sqe->len = P_PID;
	sqe->fd = child;
	/* WSTOPPED too: a wait for exits alone is armed on a pidfd in the
	 * readiness engine (ops/waitid.c); this one must block a worker */
	sqe->file_index = WEXITED | WSTOPPED;
	sqe->addr2 = (uint64_t)(uintptr_t)&si;
	sqe->user_data = 7;
	tring_submit(&r);
	close(go[1]);
	ret = (int)tring_reap_wait(&r, &cqe, 1, 5000000000LL);
	CHECK(ret == 1 && cqe.res == 0, "WAITID: %d CQEs, res %d", ret, cqe.res);
	uuring_get_stats(r.fd, &st, sizeof(st));
	CHECK(st.route_iowq == 1, "route_iowq %llu",
	      (unsigned long long)st.route_iowq);
	CHECK(st.iowq_workers_unbound >= 1, "unbound workers %llu",
	      (unsigned long long)st.iowq_workers_unbound);
	tring_exit(&r);
}

/* O_DIRECT reads go to Linux AIO and count in route_aio, not route_iowq */
static void direct_reads_count_aio(void)
{
	char path[] = "/tmp/uuring-stats-XXXXXX";
	struct uuring_stats st;
	struct tcqe cqes[2];
	struct tring r;
	void *buf;
	int fd, dfd, ret;

	fd = mkstemp(path);
	CHECK(fd >= 0, "mkstemp in /tmp");
	if (fd < 0)
		return;
	unlink(path);
	CHECK(ftruncate(fd, 2 * 4096) == 0, "ftruncate");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	dfd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (dfd < 0 || posix_memalign(&buf, 4096, 2 * 4096)) {
		printf("# no O_DIRECT in /tmp: route_aio not checked\n");
		close(fd);
		return;
	}
	ret = setup(&r, 0);
	CHECK(ret == 0, "setup %d", ret);
	if (!ret) {
		for (unsigned int i = 0; i < 2; i++)
			tring_prep_rw(tring_get_sqe(&r), IORING_OP_READ, dfd,
				      (char *)buf + 4096 * i, 4096, 4096 * i,
				      i);
		tring_submit(&r);
		ret = (int)tring_reap_wait(&r, cqes, 2, 5000000000LL);
		CHECK(ret == 2 && cqes[0].res == 4096 && cqes[1].res == 4096,
		      "2 O_DIRECT reads: %d CQEs", ret);
		uuring_get_stats(r.fd, &st, sizeof(st));
		CHECK(st.route_aio == 2, "route_aio %llu, want 2",
		      (unsigned long long)st.route_aio);
		CHECK(st.route_iowq == 0, "route_iowq %llu, want 0",
		      (unsigned long long)st.route_iowq);
		tring_exit(&r);
	}
	free(buf);
	close(dfd);
	close(fd);
}

/* every field appears once in the dump, with get_stats' value */
static void dump_has_every_field(void)
{
	static const char *const names[] = {
		"enter_calls",	     "sqes_consumed",	 "sqes_dropped",
		"cqes_posted",	     "cqes_overflowed",	 "cqes_lost",
		"route_inline",	     "route_iowq",	 "route_poll",
		"route_sqpoll",	     "waits",		 "wakeups",
		"spurious_wakeups",  "readiness_signals", "readiness_drains",
		"tw_runs",	     "tw_items",	 "iowq_workers_bound",
		"iowq_workers_unbound", "iowq_workers_created", "route_aio",
		"route_nullb",
	};
	struct uuring_stats st;
	uint64_t vals[sizeof(names) / sizeof(names[0])];
	char buf[2048], *line, *save;
	unsigned int lines = 0;
	struct tring r;
	ssize_t n;
	int fd, ret;

	/* the table above must name every field of the struct */
	CHECK(sizeof(names) / sizeof(names[0]) ==
		      sizeof(struct uuring_stats) / sizeof(uint64_t),
	      "names %zu, fields %zu", sizeof(names) / sizeof(names[0]),
	      sizeof(struct uuring_stats) / sizeof(uint64_t));
	ret = setup(&r, 0);
	CHECK(ret == 0, "setup %d", ret);
	if (ret)
		return;
	for (unsigned int i = 0; i < 3; i++)
		tring_prep_nop(tring_get_sqe(&r), i);
	tring_submit_and_wait(&r, 3);
	fd = memfd_create("stats", 0);
	ret = uuring_dump_stats(r.fd, fd);
	CHECK(ret == 0, "dump_stats %d", ret);
	uuring_get_stats(r.fd, &st, sizeof(st));
	memcpy(vals, &st, sizeof(vals));
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *name = names[lines];
		size_t len = strlen(name);

		if (lines >= sizeof(names) / sizeof(names[0])) {
			CHECK(0, "extra line '%s'", line);
			break;
		}
		CHECK(!strncmp(line, name, len) && line[len] == ' ',
		      "line %u '%s', want '%s ...'", lines, line, name);
		/* counters that cannot move between dump and get_stats */
		if (strcmp(name, "iowq_workers_bound") &&
		    strcmp(name, "iowq_workers_unbound") &&
		    strcmp(name, "iowq_workers_created"))
			CHECK(strtoull(line + len + 1, NULL, 10) == vals[lines],
			      "%s: dump %s, get_stats %llu", name, line + len + 1,
			      (unsigned long long)vals[lines]);
		lines++;
	}
	CHECK(lines == sizeof(names) / sizeof(names[0]), "%u lines", lines);
	CHECK(vals[3] == 3, "cqes_posted %llu", (unsigned long long)vals[3]);
	/* a bad fd: the register call's error */
	CHECK(uuring_dump_stats(-1, fd) == -EBADF, "dump on fd -1");
	close(fd);
	tring_exit(&r);
}

int main(void)
{
	defer_taskrun_counts();
	default_ring_counts();
	unbound_worker();
	direct_reads_count_aio();
	dump_has_every_field();
	printf("%s test_stats\n", tcheck_failures ? "FAIL" : "ok");
	return tcheck_failures ? 1 : 0;
}
