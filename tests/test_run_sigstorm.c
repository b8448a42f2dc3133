// SPDX-License-Identifier: MIT
/*
 * A signal storm (issue 20 item 3): a thread sends SIGUSR1 to the process
 * every 100 us (a handler without SA_RESTART) while the main thread runs
 * a liburing program on a plain, an SQPOLL and a DEFER_TASKRUN ring:
 *
 *   waits    TIMEOUT 200 us, then io_uring_wait_cqe; -EINTR from the wait
 *            is allowed (the kernel's io_cqring_wait returns it) and
 *            retried, the TIMEOUT's CQE must come exactly once (-ETIME)
 *   masked   the same wait with SIGUSR1 in the enter's sigmask: never
 *            -EINTR (the kernel's wait does not see a blocked signal)
 *   io-wq    eight IOSQE_ASYNC reads of a file: each CQE 4096 with the
 *            file's bytes, never -EINTR (the kernel's io-wq workers take
 *            no signals; uuring's engine threads block them, T8)
 *   pipe     an IOSQE_ASYNC read of an empty pipe, then a write: the
 *            written length
 *   submit   io_uring_submit never returns -EINTR (no enter that only
 *            submits waits)
 *
 * The payload runs on the kernel's io_uring and under `uuring run
 * --mode=force --block-kernel-uring`; each writes its invariant counts to
 * a file and the two files must be equal (and every check pass).  How
 * often a wait was interrupted depends on timing and is only printed.
 * A hang is a failure (the driver's timeout).
 */
#include "run_util.h"

#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>

#define ROUNDS 200
#define IOWQ_READS 8
#define BLOCK 4096

/* the handler's count, read by the main thread after the storm */
static atomic_ulong signals_seen;
static atomic_bool storm_stop;

struct counts {
	unsigned long cqes, lost_or_dup, bad_res, eintr_submit, eintr_masked;
	unsigned long eintr_wait; /* timing-dependent: printed only */
};

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&signals_seen, 1, memory_order_relaxed);
}

static void *storm_main(void *arg)
{
	struct timespec gap = { .tv_nsec = 100 * 1000 };
	sigset_t usr1;

	(void)arg;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	while (!atomic_load_explicit(&storm_stop, memory_order_relaxed)) {
		kill(getpid(), SIGUSR1);
		nanosleep(&gap, NULL);
	}
	return NULL;
}

static void submit_all(struct io_uring *ring, struct counts *c)
{
	int ret;

	do {
		ret = io_uring_submit(ring);
		if (ret == -EINTR)
			c->eintr_submit++;
	} while (ret == -EINTR);
}

/* Waits for one CQE; -EINTR counted (masked or not) and retried. */
static void reap(struct io_uring *ring, struct counts *c, sigset_t *mask,
		 uint64_t *ud, int *res)
{
	struct io_uring_cqe *cqe;
	int ret;

	for (;;) {
		ret = io_uring_wait_cqes(ring, &cqe, 1, NULL, mask);
		if (ret != -EINTR)
			break;
		if (mask)
			c->eintr_masked++;
		else
			c->eintr_wait++;
	}
	if (ret < 0) {
		fprintf(stderr, "wait: %d\n", ret);
		exit(3);
	}
	*ud = cqe->user_data;
	*res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	c->cqes++;
}

static void timeout_rounds(struct io_uring *ring, struct counts *c,
			   sigset_t *mask)
{
	struct __kernel_timespec ts = { .tv_nsec = 200 * 1000 };

	for (uint64_t r = 1; r <= ROUNDS; r++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
		uint64_t ud;
		int res;

		io_uring_prep_timeout(sqe, &ts, 0, 0);
		io_uring_sqe_set_data64(sqe, r);
		submit_all(ring, c);
		reap(ring, c, mask, &ud, &res);
		if (ud != r)
			c->lost_or_dup++;
		if (res != -ETIME)
			c->bad_res++;
	}
}

static void iowq_rounds(struct io_uring *ring, struct counts *c, int fd,
			const char *want)
{
	static char bufs[IOWQ_READS][BLOCK];

	for (int r = 0; r < ROUNDS / 4; r++) {
		unsigned int seen = 0;

		for (int i = 0; i < IOWQ_READS; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

			memset(bufs[i], 0, BLOCK);
			io_uring_prep_read(sqe, fd, bufs[i], BLOCK,
					   (uint64_t)i * BLOCK);
			sqe->flags |= IOSQE_ASYNC;
			io_uring_sqe_set_data64(sqe, (uint64_t)i);
		}
		submit_all(ring, c);
		for (int i = 0; i < IOWQ_READS; i++) {
			uint64_t ud;
			int res;

			reap(ring, c, NULL, &ud, &res);
			if (ud >= IOWQ_READS || (seen & (1u << ud))) {
				c->lost_or_dup++;
				continue;
			}
			seen |= 1u << ud;
			if (res != BLOCK ||
			    memcmp(bufs[ud], want + ud * BLOCK, BLOCK))
				c->bad_res++;
		}
	}
}

static void pipe_rounds(struct io_uring *ring, struct counts *c)
{
	char in[64], out[64];
	int pfd[2];

	if (pipe(pfd))
		exit(2);
	for (int r = 0; r < ROUNDS / 4; r++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
		uint64_t ud;
		int res;

		memset(out, 'a' + r % 26, sizeof(out));
		io_uring_prep_read(sqe, pfd[0], in, sizeof(in), 0);
		sqe->flags |= IOSQE_ASYNC;
		io_uring_sqe_set_data64(sqe, 1000 + r);
		submit_all(ring, c);
		if (write(pfd[1], out, sizeof(out)) != sizeof(out))
			exit(2);
		reap(ring, c, NULL, &ud, &res);
		if (ud != (uint64_t)(1000 + r))
			c->lost_or_dup++;
		if (res != sizeof(out) || memcmp(in, out, sizeof(out)))
			c->bad_res++;
	}
	close(pfd[0]);
	close(pfd[1]);
}

static int payload(const char *outpath)
{
	static const struct {
		const char *name;
		unsigned int flags;
	} modes[] = {
		{ "plain", 0 },
		{ "sqpoll", IORING_SETUP_SQPOLL },
		{ "defer", IORING_SETUP_SINGLE_ISSUER |
				   IORING_SETUP_DEFER_TASKRUN },
	};
	static char data[IOWQ_READS * BLOCK];
	struct sigaction sa = { .sa_handler = on_usr1 }; /* no SA_RESTART */
	char tmpl[] = "/tmp/uuring-sigstorm-XXXXXX";
	FILE *out = fopen(outpath, "w");
	sigset_t usr1;
	pthread_t storm;
	int fd = mkstemp(tmpl);

	if (!out || fd < 0)
		return 2;
	unlink(tmpl);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 13 + i / BLOCK);
	if (write(fd, data, sizeof(data)) != sizeof(data))
		return 2;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&storm, NULL, storm_main, NULL);
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct counts c = { 0 };
		struct io_uring ring;
		int ret = io_uring_queue_init(16, &ring, modes[m].flags);

		if (ret < 0) {
			fprintf(out, "%s: setup %d\n", modes[m].name, ret);
			continue;
		}
		timeout_rounds(&ring, &c, NULL);
		timeout_rounds(&ring, &c, &usr1);
		iowq_rounds(&ring, &c, fd, data);
		pipe_rounds(&ring, &c);
		io_uring_queue_exit(&ring);
		fprintf(out, "%s: cqes=%lu lost_or_dup=%lu bad_res=%lu "
			"eintr_submit=%lu eintr_masked=%lu\n", modes[m].name,
			c.cqes, c.lost_or_dup, c.bad_res, c.eintr_submit,
			c.eintr_masked);
		fprintf(stderr, "%s: waits interrupted %lu times, %lu signals so far\n",
			modes[m].name, c.eintr_wait,
			atomic_load(&signals_seen));
	}
	atomic_store_explicit(&storm_stop, true, memory_order_relaxed);
	pthread_join(storm, NULL);
	/* a storm that never reached the waits tests nothing */
	fprintf(out, "storm: %s\n",
		atomic_load(&signals_seen) >= 100 ? "delivered" : "too few");
	fclose(out);
	return 0;
}

static int compare(const char *kpath, const char *upath)
{
	char k[4096] = "", u[4096] = "";
	FILE *kf = fopen(kpath, "r"), *uf = fopen(upath, "r");
	size_t kn = kf ? fread(k, 1, sizeof(k) - 1, kf) : 0;
	size_t un = uf ? fread(u, 1, sizeof(u) - 1, uf) : 0;

	if (kf)
		fclose(kf);
	if (uf)
		fclose(uf);
	fprintf(stderr, "kernel:\n%suuring:\n%s", k, u);
	RU_CHECK(kn > 0 && un > 0, "a payload wrote no counts");
	RU_CHECK(kn == un && !memcmp(k, u, kn), "the counts differ");
	/* and what both must show, whatever the other one did */
	for (const char *p = u; (p = strstr(p, " lost_or_dup=")); p++)
		RU_CHECK(!strncmp(p, " lost_or_dup=0 bad_res=0 eintr_submit=0 eintr_masked=0", 54),
			 "uuring:%.54s", p);
	RU_CHECK(strstr(u, "storm: delivered"), "uuring: the storm did not reach the program");
	return 0;
}

int main(int argc, char **argv)
{
	char kpath[] = "/tmp/uuring-sigstorm-k-XXXXXX";
	char upath[] = "/tmp/uuring-sigstorm-u-XXXXXX";
	int st, kfd, ufd;

	if (argc > 2 && !strcmp(argv[1], "payload"))
		return payload(argv[2]);
	if (!ru_tool()) {
		fprintf(stderr, "skip: no usable uuring tool (not built, or a sanitizer build)\n");
		return RU_SKIP;
	}
	kfd = mkstemp(kpath);
	ufd = mkstemp(upath);
	if (kfd < 0 || ufd < 0)
		return 2;
	close(kfd);
	close(ufd);
	{
		const char *v[] = { ru_self_exe(), "payload", kpath, NULL };

		st = ru_run_ex((char *const *)v, 60, false);
		ru_describe("kernel", st);
		RU_CHECK(st == 0, "the payload on the kernel failed");
	}
	{
		const char *opts[] = { "--mode=force", "--block-kernel-uring",
				       NULL };
		const char *args[] = { ru_self_exe(), "payload", upath, NULL };

		st = ru_uuring_run(opts, args, 60);
		ru_describe("uuring run", st);
		RU_CHECK(st == 0, "the payload under uuring run failed");
	}
	compare(kpath, upath);
	unlink(kpath);
	unlink(upath);
	return ru_failures ? 1 : 0;
}
