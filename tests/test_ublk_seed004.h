/* SPDX-License-Identifier: MIT */
/*
 * tests/test_ublk.c's per-io daemon experiment (named only: "seed004";
 * docs/ublk.md, "Per-io daemons against per-queue daemons"):
 * UBLK_F_PER_IO_DAEMON lets a ublk server's threads serve any tag, so a
 * load coming from one CPU (one hardware queue) is served by every
 * server thread.  A null target (the server answers at once, no data),
 * 2 queues of depth 128, the load from CPU 0 (UBLK_SEED004_DEPTH
 * threads, default 32, each one 4 KiB read at a time through
 * uuring_ublk_bdev_io); three arms, interleaved in every round:
 *   per-queue: 2 threads, thread k fetches every tag of queue k;
 *   per-io:    2 threads, PER_IO_DAEMON, thread k the tags t % 2 == k
 *              of both queues;
 *   1 thread:  1 thread fetches everything (the floor).
 * Prints each run's IOPS, each server thread's share of the requests
 * and its CPU time, then per arm the median IOPS with a distribution-
 * free interval (>= 95 % from 6 rounds), and per round the ratio
 * per-io / per-queue.  UBLK_SEED004_REPS rounds (default 15) of
 * UBLK_SEED004_SECS seconds (default 3).
 */
#ifndef UURING_TESTS_UBLK_SEED004_H
#define UURING_TESTS_UBLK_SEED004_H

#define S4_DEPTH 128
#define S4_MAX_REPS 64

struct s4_load {
	pthread_t th;
	int dev;
	atomic_bool *stop;
	long done, errors;
};

static void *s4_load_main(void *arg)
{
	struct s4_load *l = arg;
	uint8_t *buf = aligned_alloc(4096, 4096);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	for (long k = 0; !atomic_load(l->stop); k++) {
		if (uuring_ublk_bdev_io(l->dev, UBLK_IO_OP_READ, buf, 4096,
					(uint64_t)(k % 2048) * 4096) == 4096)
			l->done++;
		else
			l->errors++;
	}
	free(buf);
	return NULL;
}

struct s4_run {
	double iops;
	double share[2];   /* each server thread's part of the requests */
	double cpu[2];     /* each server thread's CPU seconds */
};

/* one run of arm a (0 per-queue, 1 per-io, 2 one thread): 0 or -1 */
static int s4_one(struct tr *r, int cfd, int a, int depth, double secs,
		  struct s4_run *out)
{
	static struct srv_thread th[2];
	struct s4_load *ld = calloc((size_t)depth, sizeof(*ld));
	unsigned int nth = a == 2 ? 1 : 2;
	atomic_bool stop = false;
	double t0, dt;
	long done = 0, errors = 0;
	struct srv s;

	if (!ld || dev_setup(r, cfd, &s, 2, S4_DEPTH,
			     a == 1 ? UBLK_F_PER_IO_DAEMON : 0) ||
	    srv_open(&s)) {
		free(ld);
		return -1;
	}
	if (s.nq != 2) { /* queues are clamped to the CPU count */
		fprintf(stderr, "seed004: %u queue(s), needs 2 CPUs\n", s.nq);
		srv_close(&s);
		free(ld);
		return -1;
	}
	memset(th, 0, sizeof(th));
	for (unsigned int q = 0; q < 2; q++)
		for (unsigned int t = 0; t < S4_DEPTH; t++) {
			unsigned int k = a == 0 ? q : a == 1 ? t % 2 : 0;

			th[k].slots[th[k].nslots++] = q << 16 | t;
		}
	for (unsigned int k = 0; k < nth; k++) {
		th[k].fetched_pipe = -1;
		th[k].null_target = true;
		srv_thread_start(&th[k], &s);
	}
	EQ(ctrl(r, cfd, UBLK_U_CMD_START_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		(uint64_t)getpid()), 0, "seed004: START_DEV");
	t0 = now_s();
	for (int k = 0; k < depth; k++) {
		ld[k] = (struct s4_load){ .dev = s.id, .stop = &stop };
		pthread_create(&ld[k].th, NULL, s4_load_main, &ld[k]);
	}
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&stop, true);
	for (int k = 0; k < depth; k++) {
		pthread_join(ld[k].th, NULL);
		done += ld[k].done;
		errors += ld[k].errors;
	}
	dt = now_s() - t0;
	EQ(ctrl(r, cfd, UBLK_U_CMD_STOP_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "seed004: STOP_DEV");
	for (unsigned int k = 0; k < nth; k++) {
		srv_thread_join(&th[k]);
		EQ(th[k].errors, 0, "seed004: server thread errors");
	}
	EQ(errors, 0, "seed004: load errors");
	memset(out, 0, sizeof(*out));
	out->iops = (double)done / dt;
	for (unsigned int k = 0; k < nth; k++) {
		int all = th[0].served + th[1].served;

		out->share[k] = all ? (double)th[k].served / all : 0;
		out->cpu[k] = th[k].cpu_s;
	}
	srv_close(&s);
	EQ(ctrl(r, cfd, UBLK_U_CMD_DEL_DEV, (uint32_t)s.id, 0xffff, NULL, 0,
		0), 0, "seed004: DEL_DEV");
	free(s.disk);
	free(ld);
	return 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double load_avg(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

/* the median of v[0..n) (sorted here) and its interval's order
 * statistics: the widest k with binomial(n, 1/2) coverage >= 95 %
 * (returned; 0: fewer than 6 values, no interval) */
static int s4_median(double *v, int n, double *med, double *lo, double *hi)
{
	double cover, p;
	int k = 0;

	qsort(v, (size_t)n, sizeof(double), cmp_d);
	*med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	for (int j = 1; j <= n / 2; j++) {
		/* P(X < j) for X ~ binomial(n, 1/2) */
		double tail = 0, c = 1;

		for (int i = 0; i < j; i++) {
			tail += c;
			c = c * (n - i) / (i + 1);
		}
		p = tail;
		for (int i = 0; i < n; i++)
			p /= 2;
		cover = 1 - 2 * p;
		if (cover >= 0.95)
			k = j;
	}
	*lo = k ? v[k - 1] : 0;
	*hi = k ? v[n - k] : 0;
	return k;
}

static void scenario_seed004(void)
{
	static const char *const arm[3] = { "per-queue, 2 threads",
					    "per-io, 2 threads",
					    "1 thread" };
	const char *e = getenv("UBLK_SEED004_REPS");
	int reps = e ? atoi(e) : 15;
	double secs = getenv("UBLK_SEED004_SECS") ?
			      atof(getenv("UBLK_SEED004_SECS")) : 3;
	int depth = getenv("UBLK_SEED004_DEPTH") ?
			    atoi(getenv("UBLK_SEED004_DEPTH")) : 32;
	static double v[3][S4_MAX_REPS], ratio[S4_MAX_REPS];
	int cfd = uuring_ublk_open("/dev/ublk-control", O_RDWR);
	struct tr r;

	if (reps < 1 || reps > S4_MAX_REPS)
		reps = 15;
	if (depth < 1 || depth > 256)
		depth = 32;
	if (cfd < 0 || tr_init(&r, 8, IORING_SETUP_SQE128)) {
		CHECK(0, "setup");
		return;
	}
	fprintf(stderr, "seed004: %d rounds of %.1f s, load depth %d from "
			"CPU 0, %d CPUs, load %.2f\n",
		reps, secs, depth, get_nprocs(), load_avg());
	for (int k = 0; k < reps; k++) {
		for (int a = 0; a < 3; a++) {
			struct s4_run o;

			if (s4_one(&r, cfd, a, depth, secs, &o)) {
				CHECK(0, "seed004: %s", arm[a]);
				goto out;
			}
			v[a][k] = o.iops;
			fprintf(stderr, "round %d %-20s %8.0f IOPS  shares "
					"%.2f/%.2f  cpu %.2f/%.2f s\n",
				k, arm[a], o.iops, o.share[0], o.share[1],
				o.cpu[0], o.cpu[1]);
		}
		ratio[k] = v[1][k] / v[0][k];
	}
	for (int a = 0; a < 3; a++) {
		double med, lo, hi;

		if (s4_median(v[a], reps, &med, &lo, &hi))
			fprintf(stderr, "seed004: %-20s median %.0f IOPS "
					"(interval %.0f-%.0f)\n",
				arm[a], med, lo, hi);
		else
			fprintf(stderr, "seed004: %-20s median %.0f IOPS\n",
				arm[a], med);
	}
	{
		double med, lo, hi;

		if (s4_median(ratio, reps, &med, &lo, &hi))
			fprintf(stderr, "seed004: per-io / per-queue median "
					"%.3f (interval %.3f-%.3f; seed: "
					"1.15)\n", med, lo, hi);
		else
			fprintf(stderr, "seed004: per-io / per-queue median "
					"%.3f (seed: 1.15)\n", med);
	}
out:
	tr_exit(&r);
	uuring_close(cfd);
}

#endif
