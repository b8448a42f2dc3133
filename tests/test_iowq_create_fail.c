// SPDX-License-Identifier: MIT
/*
 * io-wq worker creation that fails (issue 4: "thread-creation failure and
 * RLIMIT_NPROC are handled like the kernel: retry, and cancel only if no
 * worker exists").  uuring only: root ignores RLIMIT_NPROC and the kernel
 * gives no way to make its create_io_thread fail, so creations are made
 * to fail with EAGAIN by UURING_FAULT_WORKER_CREATE=[SKIP:]N; each
 * scenario re-executes this program with its own setting (the knob is
 * read when the library loads).
 *
 *   retry   N=2: the third attempt (second retry) succeeds; the request
 *           completes normally.
 *   cancel  N=4: the first attempt and its three retries fail and no
 *           worker exists: the queued work completes -ECANCELED; once
 *           creation works again, so does io-wq.
 *   busy    1:100: one worker exists (blocked in a WAITID); creating a
 *           second fails: nothing is cancelled, the existing worker runs
 *           the second request after the first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tcheck.h"
#include "tring.h"
#include "uuring.h"

static void async_nop(struct tring *r, uint64_t ud)
{
	struct io_uring_sqe *sqe = tring_get_sqe(r);

	tring_prep_nop(sqe, ud);
	sqe->flags |= IOSQE_ASYNC;
}

static uint64_t workers_created(struct tring *r)
{
	struct uuring_stats st;

	if (uuring_get_stats(r->fd, &st, sizeof(st)) != (int)sizeof(st))
		return ~0ull;
	return st.iowq_workers_created;
}

static void sc_retry(struct tring *r)
{
	struct tcqe cqe;
	unsigned int got;

	async_nop(r, 1);
	tring_submit(r);
	got = tring_reap_wait(r, &cqe, 1, 5000000000LL);
	CHECK(got == 1 && cqe.res == 0, "ASYNC NOP: %u CQEs, res %d", got,
	      cqe.res);
	CHECK(workers_created(r) == 1, "workers created %llu, want 1",
	      (unsigned long long)workers_created(r));
}

static void sc_cancel(struct tring *r)
{
	struct tcqe cqes[2];
	unsigned int got;

	async_nop(r, 1);
	async_nop(r, 2);
	tring_submit(r);
	got = tring_reap_wait(r, cqes, 2, 5000000000LL);
	CHECK(got == 2, "%u CQEs", got);
	for (unsigned int i = 0; i < got; i++)
		CHECK(cqes[i].res == -ECANCELED, "ud %llu res %d, want -ECANCELED",
		      (unsigned long long)cqes[i].user_data, cqes[i].res);
	CHECK(workers_created(r) == 0, "workers created %llu, want 0",
	      (unsigned long long)workers_created(r));
	/* the fault is used up: io-wq works again */
	async_nop(r, 3);
	tring_submit(r);
	got = tring_reap_wait(r, cqes, 1, 5000000000LL);
	CHECK(got == 1 && cqes[0].res == 0, "later ASYNC NOP: %u, res %d", got,
	      cqes[0].res);
}

/*
 * A child that exits ms after go[1] is closed (EOF on go[0]): the parent
 * closes it once the WAITIDs are submitted, so they have to wait however
 * late the parent runs.  (The children slept from the fork on before: a
 * parent kept off the CPU that long found them exited, and the WAITIDs
 * completed at once, on no worker.)
 */
static pid_t sleeper(const int go[2], int ms)
{
	pid_t pid = fork();
	char b;

	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &b, 1) < 0)
			_exit(1);
		usleep((useconds_t)ms * 1000);
		_exit(0);
	}
	return pid;
}

static void prep_waitid(struct tring *r, pid_t pid, siginfo_t *si,
			uint64_t ud)
{
	struct io_uring_sqe *sqe = tring_get_sqe(r);

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_WAITID;
	sqe->len = P_PID;
	sqe->fd = pid;
	/* WSTOPPED too: a wait for exits alone is armed on a pidfd in the
	 * readiness engine (ops/waitid.c); these must block workers */
	sqe->file_index = WEXITED | WSTOPPED;
	sqe->addr2 = (uint64_t)(uintptr_t)si;
	sqe->user_data = ud;
}

static void sc_busy(struct tring *r)
{
	siginfo_t sa, sb;
	struct tcqe cqes[2];
	unsigned int got;
	int go[2];
	pid_t a, b;

	if (pipe(go))
		abort();
	a = sleeper(go, 150);
	b = sleeper(go, 150);
	close(go[0]);
	prep_waitid(r, a, &sa, 1);
	prep_waitid(r, b, &sb, 2);
	tring_submit(r);
	close(go[1]);
	got = tring_reap_wait(r, cqes, 2, 10000000000LL);
	CHECK(got == 2, "%u CQEs", got);
	for (unsigned int i = 0; i < got; i++)
		CHECK(cqes[i].res == 0, "ud %llu res %d, want 0",
		      (unsigned long long)cqes[i].user_data, cqes[i].res);
	CHECK(workers_created(r) == 1, "workers created %llu, want 1",
	      (unsigned long long)workers_created(r));
}

static const struct {
	const char *name, *fault;
	void (*fn)(struct tring *r);
} scenarios[] = {
	{ "retry", "2", sc_retry },
	{ "cancel", "4", sc_cancel },
	{ "busy", "1:100", sc_busy },
};

#define NR_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc == 3) {
		/* one scenario, in the re-executed process */
		struct tring r;
		unsigned int i = (unsigned int)atoi(argv[2]);

		if (i >= NR_SCENARIOS || tring_init(&r, &backend_uuring, 8, 0))
			return 2;
		scenarios[i].fn(&r);
		tring_exit(&r);
		return tcheck_failures ? 1 : 0;
	}
	for (unsigned int i = 0; i < NR_SCENARIOS; i++) {
		char idx[16];
		int st = -1;
		pid_t pid;

		snprintf(idx, sizeof(idx), "%u", i);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			char *args[] = { argv[0], (char *)"scenario", idx, NULL };

			setenv("UURING_FAULT_WORKER_CREATE", scenarios[i].fault, 1);
			execv("/proc/self/exe", args);
			_exit(3);
		}
		waitpid(pid, &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			printf("ok   %s\n", scenarios[i].name);
		} else {
			printf("FAIL %s (status 0x%x)\n", scenarios[i].name, st);
			failed++;
		}
	}
	printf("# %zu scenarios, %d failed\n", NR_SCENARIOS, failed);
	return failed ? 1 : 0;
}
