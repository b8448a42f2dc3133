// SPDX-License-Identifier: MIT
/*
 * ubench: one io_uring throughput benchmark, run on the kernel's io_uring or
 * on uuring (the same code through tests/lib's backend + tring helper).
 *
 *   ubench -b kernel|uuring -m nop|read [-d depth=128] [-s batch=32]
 *          [-t secs=2] [-w warmup_secs] [-f file] [-F setup_flags]
 *          [-T threads]
 *
 * Loop (the shape of fio's t/io_uring): prepare up to `batch` new requests
 * (never more than `depth` in flight), submit them with one
 * io_uring_enter(to_submit, min_complete, GETEVENTS), where min_complete is
 * 0 while the queue is not full and min(batch, in flight) once it is; then
 * reap every CQE that is there.  So -d1 -s1 is "one request per enter,
 * submit_and_wait(1)" and -d32 -s32 is "32 requests per enter, wait for 32".
 *
 *   -m nop   plain IORING_OP_NOP, no SQE or NOP flags.
 *   -m read  IORING_OP_READ of 4 KiB at a random 4 KiB-aligned offset of -f
 *            (plain read into a per-slot buffer, no fixed files/buffers).
 *            The file's page-cache residency (mincore) is measured before
 *            and after the run and reported; warming the cache is the
 *            caller's job.  One read in CHECK_EVERY gets a poisoned
 *            buffer and its data is compared with pread(2) of the same
 *            block, so an engine cannot score by not reading.
 *
 * -T N (nop mode): N submitting threads, each with its own ring and the
 * loop above, as N tasks of a server would run; the figures are their sum.
 * The main thread only takes the snapshots.  Each submitting thread has
 * its own io-wq pool (uuring as the kernel: one per task), so with -a the
 * threads' workers compete for the CPUs, while each pool's workers share
 * their own work-list locks.
 *
 * The first warm-up seconds (default min(1, secs/4)) are not measured.
 * Output, one line:
 *   RESULT ops_per_s=.. cpu_us_per_op=.. enters_per_op=.. ops_total=..
 *          route_inline=.. route_iowq=.. route_poll=.. route_sqpoll=..
 *          route_aio=..
 *          waits=.. wakeups=.. resid_start=.. resid_end=..
 *          other_cores=.. steal_cores=.. checked=..
 * cpu_us_per_op is getrusage(RUSAGE_SELF) user+sys (all threads of the
 * process) over the measured window divided by the ops in it.  The route_*
 * and wait counters come from uuring_get_stats() over the whole run (-1 on
 * the kernel backend).  other_cores is the CPU that the rest of the machine
 * used during the window (/proc/stat busy time minus ours), a noise gauge.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "abi/io_uring_abi.h"
#include "uuring.h"
#include "backend.h"
#include "tring.h"

#define BLOCK 4096u
/* every CHECK_EVERY-th read is verified against pread(2) */
#define CHECK_EVERY 1024u

enum mode { MODE_NOP, MODE_READ, MODE_WAIT2 };

struct opts {
	const struct backend *be;
	enum mode mode;
	unsigned int depth;
	unsigned int batch;
	double secs;
	double warmup;
	const char *file;
	unsigned int setup_flags;
	unsigned int sqe_flags;  /* -a: IOSQE_ASYNC on every NOP */
	bool direct;             /* -D: open the file O_DIRECT */
	unsigned int wait_nr;    /* -W: wait2 mode's batch (default 128) */
	unsigned int threads;    /* -T: submitting threads (0: the main one) */
};

struct snap {
	double t;
	double cpu;
	uint64_t ops;
	uint64_t enters;
	unsigned long long busy, steal;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_secs(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Machine-wide busy and steal time in clock ticks (first line of /proc/stat). */
static void proc_stat(unsigned long long *busy, unsigned long long *steal)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");

	*busy = *steal = 0;
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
		/* user nice system idle iowait irq softirq steal */
		*busy = v[0] + v[1] + v[2] + v[5] + v[6];
		*steal = v[7];
	}
	fclose(f);
}

static void take_snap(struct snap *s, uint64_t ops, uint64_t enters)
{
	s->t = now();
	s->cpu = cpu_secs();
	s->ops = ops;
	s->enters = enters;
	proc_stat(&s->busy, &s->steal);
}

/* Fraction of the file's pages in the page cache, or -1 on error. */
static double residency(int fd, off_t size)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t npages = ((size_t)size + pg - 1) / pg, i, in = 0;
	unsigned char *vec;
	void *m;

	if (!size)
		return -1;
	m = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -1;
	vec = malloc(npages);
	if (!vec || mincore(m, (size_t)size, vec)) {
		free(vec);
		munmap(m, (size_t)size);
		return -1;
	}
	for (i = 0; i < npages; i++)
		in += vec[i] & 1;
	free(vec);
	munmap(m, (size_t)size);
	return (double)in / (double)npages;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static inline uint64_t rng_next(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s -b kernel|uuring -m nop|read [-d depth] [-s batch]\n"
		"          [-t secs] [-w warmup_secs] [-f file] [-F setup_flags]\n"
		"          [-T threads]\n",
		prog);
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->be = NULL;
	o->mode = MODE_NOP;
	o->depth = 128;
	o->batch = 32;
	o->secs = 2;
	o->warmup = -1;
	while ((c = getopt(argc, argv, "b:m:d:s:t:w:f:F:aDW:T:h")) != -1) {
		switch (c) {
		case 'b':
			o->be = backend_by_name(optarg);
			if (!o->be) {
				fprintf(stderr, "unknown backend %s\n", optarg);
				usage(argv[0]);
			}
			break;
		case 'm':
			if (!strcmp(optarg, "nop"))
				o->mode = MODE_NOP;
			else if (!strcmp(optarg, "read"))
				o->mode = MODE_READ;
			else if (!strcmp(optarg, "wait2"))
				o->mode = MODE_WAIT2;
			else
				usage(argv[0]);
			break;
		case 'd':
			o->depth = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 's':
			o->batch = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 't':
			o->secs = strtod(optarg, NULL);
			break;
		case 'w':
			o->warmup = strtod(optarg, NULL);
			break;
		case 'f':
			o->file = optarg;
			break;
		case 'F':
			o->setup_flags = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'a':
			o->sqe_flags |= IOSQE_ASYNC;
			break;
		case 'D':
			o->direct = true;
			break;
		case 'W':
			o->wait_nr = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'T':
			o->threads = (unsigned int)strtoul(optarg, NULL, 0);
			if (!o->threads || o->threads > 64)
				usage(argv[0]);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (!o->be || !o->depth || !o->batch || o->secs <= 0)
		usage(argv[0]);
	if (o->batch > o->depth)
		o->batch = o->depth;
	if (o->warmup < 0)
		o->warmup = o->secs / 4 < 1 ? o->secs / 4 : 1;
	if (o->warmup >= o->secs)
		usage(argv[0]);
	if (o->mode == MODE_WAIT2 && !o->wait_nr)
		o->wait_nr = 128;
	if (o->threads && o->mode != MODE_NOP) {
		fprintf(stderr, "-T is for -m nop\n");
		usage(argv[0]);
	}
	if (o->mode != MODE_NOP && !o->file) {
		fprintf(stderr, "-m read needs -f file\n");
		usage(argv[0]);
	}
}

/*
 * -m wait2: the seed-003 pattern.  A submitting thread keeps up to -d
 * reads in flight, one SQE per enter; the main thread waits for -W
 * completions at a time (enter GETEVENTS, min_complete = W) and reaps
 * them.  A good wake protocol wakes the waiter once per W CQEs, not once
 * per CQE: uuring reports its wakeups per CQE from its statistics.
 */
struct wait2 {
	struct tring *r;
	const struct opts *o;
	int fd;
	uint64_t nblocks;
	char *bufs;
	atomic_uint inflight;
	atomic_bool stop;
	atomic_int err;
};

static void *wait2_submitter(void *arg)
{
	struct wait2 *w = arg;
	uint64_t seq = 0;

	while (!atomic_load_explicit(&w->stop, memory_order_relaxed)) {
		struct io_uring_sqe *sqe;
		uint64_t blk;
		int ret;

		if (atomic_load(&w->inflight) >= w->o->depth) {
			sched_yield();
			continue;
		}
		sqe = tring_get_sqe(w->r);
		if (!sqe) {
			sched_yield();
			continue;
		}
		blk = (rng_next() >> 8) % w->nblocks;
		tring_prep_rw(sqe, IORING_OP_READ, w->fd,
			      w->bufs + (size_t)(seq % w->o->depth) * BLOCK,
			      BLOCK, blk * BLOCK, seq);
		seq++;
		tring_flush(w->r);
		atomic_fetch_add(&w->inflight, 1);
		ret = tring_enter(w->r, 1, 0, 0, NULL, 0);
		if (ret != 1) {
			atomic_store(&w->err, ret < 0 ? ret : -EIO);
			atomic_store(&w->stop, true);
		}
	}
	return NULL;
}

static uint64_t run_wait2(const struct opts *o, struct tring *r, int fd,
			  uint64_t nblocks, char *bufs, double tw, double tend,
			  struct snap *s0, struct snap *s1)
{
	struct wait2 w = { .r = r, .o = o, .fd = fd, .nblocks = nblocks,
			   .bufs = bufs };
	uint64_t ops = 0, enters = 0;
	bool measuring = false;
	pthread_t th;

	if (pthread_create(&th, NULL, wait2_submitter, &w))
		return 0;
	for (;;) {
		unsigned int head, n = 0;
		struct io_uring_cqe *cqe;
		double t;
		int ret;

		ret = tring_enter(r, 0, o->wait_nr, IORING_ENTER_GETEVENTS,
				  NULL, 0);
		enters++;
		if (ret < 0 && ret != -EINTR) {
			fprintf(stderr, "wait: %s\n", strerror(-ret));
			break;
		}
		tring_for_each_cqe(r, head, cqe) {
			if (cqe->res != (int)BLOCK) {
				fprintf(stderr, "CQE res %d\n", cqe->res);
				atomic_store(&w.stop, true);
				pthread_join(th, NULL);
				return 0;
			}
			n++;
		}
		tring_cq_advance(r, n);
		atomic_fetch_sub(&w.inflight, n);
		ops += n;
		t = now();
		if (!measuring && t >= tw) {
			take_snap(s0, ops, enters);
			measuring = true;
		} else if (measuring && t >= tend) {
			take_snap(s1, ops, enters);
			break;
		}
		if (atomic_load(&w.err))
			break;
	}
	atomic_store(&w.stop, true);
	pthread_join(th, NULL);
	/* drain */
	while (atomic_load(&w.inflight)) {
		unsigned int n;

		if (tring_enter(r, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
			break;
		n = tring_cq_ready(r);
		tring_cq_advance(r, n);
		atomic_fetch_sub(&w.inflight, n);
	}
	if (atomic_load(&w.err)) {
		fprintf(stderr, "submit: %s\n", strerror(-atomic_load(&w.err)));
		return 0;
	}
	return ops;
}

/*
 * One submitting loop on one ring (nop or read mode).  With `stop` set
 * (-T), it runs until the main thread raises it and publishes its counts
 * in ops/enters; without, it takes the snapshots itself at tw and tend.
 */
struct loop {
	const struct opts *o;
	struct tring *r;
	int fd;
	uint64_t nblocks;
	char *bufs;
	uint64_t *slot_off;
	char *chk;
	unsigned int *freelist;
	uint64_t checked;
	/* -T: one writer (this loop), read by the main thread's snapshots */
	_Atomic uint64_t ops, enters;
	atomic_bool *stop;
	double tw, tend;
	struct snap *s0, *s1;
	int err;
};

static int run_loop(struct loop *l)
{
	const struct opts *o = l->o;
	struct tring *r = l->r;
	unsigned int inflight = 0, nfree = o->depth;
	uint64_t ops = 0, enters = 0, preps = 0;
	bool measuring = false;
	int ret;

	for (unsigned int i = 0; i < o->depth; i++)
		l->freelist[i] = o->depth - 1 - i;
	for (;;) {
		unsigned int prep, to_wait, head, n = 0, i;
		struct io_uring_cqe *cqe;

		prep = o->depth - inflight;
		if (prep > o->batch)
			prep = o->batch;
		for (i = 0; i < prep; i++) {
			struct io_uring_sqe *sqe = tring_get_sqe(r);
			unsigned int slot;

			/* SQPOLL: the thread may not have taken the last
			 * batch off the SQ yet */
			while (!sqe && (o->setup_flags & IORING_SETUP_SQPOLL)) {
				tring_enter(r, 0, 0, IORING_ENTER_SQ_WAIT |
					    IORING_ENTER_SQ_WAKEUP, NULL, 0);
				sqe = tring_get_sqe(r);
			}
			if (!sqe) {
				fprintf(stderr, "SQ full\n");
				return -1;
			}
			slot = l->freelist[--nfree];
			if (o->mode == MODE_NOP) {
				tring_prep_nop(sqe, slot);
				sqe->flags |= (uint8_t)o->sqe_flags;
			} else {
				uint64_t blk = (rng_next() >> 8) % l->nblocks;
				char *buf = l->bufs + (size_t)slot * BLOCK;

				/* bit 63 of user_data: verify this one */
				if (!(preps++ % CHECK_EVERY)) {
					memset(buf, 0xa5, BLOCK);
					l->slot_off[slot] = blk * BLOCK;
					tring_prep_rw(sqe, IORING_OP_READ, l->fd,
						      buf, BLOCK, blk * BLOCK,
						      slot | 1ull << 63);
				} else {
					tring_prep_rw(sqe, IORING_OP_READ, l->fd,
						      buf, BLOCK, blk * BLOCK,
						      slot);
				}
			}
		}
		tring_flush(r);
		if (inflight + prep < o->depth)
			to_wait = 0;
		else
			to_wait = inflight + prep < o->batch ?
				  inflight + prep : o->batch;
		{
			unsigned int ef = IORING_ENTER_GETEVENTS;

			/* SQPOLL protocol: tail stored (flush), full fence,
			 * wake the thread only if it asked */
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			if ((o->setup_flags & IORING_SETUP_SQPOLL) &&
			    (tring_sq_flags(r) & IORING_SQ_NEED_WAKEUP))
				ef |= IORING_ENTER_SQ_WAKEUP;
			ret = tring_enter(r, prep, to_wait, ef, NULL, 0);
		}
		enters++;
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN &&
		    ret != -EBUSY) {
			fprintf(stderr, "enter: %s\n", strerror(-ret));
			return -1;
		}
		if (ret >= 0 && (unsigned int)ret != prep) {
			/* no short submits expected from inline requests */
			fprintf(stderr, "enter submitted %d of %u\n", ret,
				prep);
			return -1;
		}
		if (ret > 0)
			inflight += (unsigned int)ret;

		tring_for_each_cqe(r, head, cqe) {
			int want = o->mode == MODE_NOP ? 0 : (int)BLOCK;
			uint64_t slot = cqe->user_data & ~(1ull << 63);

			if (cqe->res != want || slot >= o->depth) {
				fprintf(stderr, "CQE res %d user_data %#llx "
					"(expected res %d)\n", cqe->res,
					(unsigned long long)cqe->user_data,
					want);
				return -1;
			}
			if (cqe->user_data >> 63) {
				char *buf = l->bufs + slot * BLOCK;

				if (pread(l->fd, l->chk, BLOCK,
					  (off_t)l->slot_off[slot]) != BLOCK ||
				    memcmp(l->chk, buf, BLOCK)) {
					fprintf(stderr, "read data mismatch "
						"at offset %llu\n",
						(unsigned long long)
						l->slot_off[slot]);
					return -1;
				}
				l->checked++;
			}
			l->freelist[nfree++] = (unsigned int)slot;
			n++;
		}
		tring_cq_advance(r, n);
		inflight -= n;
		ops += n;

		if (l->stop) {
			atomic_store_explicit(&l->ops, ops,
					      memory_order_relaxed);
			atomic_store_explicit(&l->enters, enters,
					      memory_order_relaxed);
			if (atomic_load_explicit(l->stop, memory_order_relaxed))
				break;
		} else {
			double t = now();

			if (!measuring && t >= l->tw) {
				take_snap(l->s0, ops, enters);
				measuring = true;
			} else if (measuring && t >= l->tend) {
				take_snap(l->s1, ops, enters);
				break;
			}
		}
	}

	/* drain what is still in flight */
	while (inflight) {
		unsigned int n;

		ret = tring_enter(r, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0);
		if (ret < 0 && ret != -EINTR) {
			fprintf(stderr, "drain: %s\n", strerror(-ret));
			return -1;
		}
		n = tring_cq_ready(r);
		tring_cq_advance(r, n);
		inflight -= n;
	}
	return 0;
}

/*
 * -T: every thread sets up its own ring (a DEFER_TASKRUN ring belongs to
 * the thread that made it) and runs run_loop until `stop`.
 */
struct thread_arg {
	struct loop l;
	struct tring r;
	struct uuring_stats st0, st1;
	pthread_barrier_t *ready;
	pthread_t th;
	int ret;
};

static void *loop_thread(void *arg)
{
	struct thread_arg *a = arg;
	bool is_uuring = a->l.o->be->kind == BACKEND_UURING;

	a->ret = tring_init(&a->r, a->l.o->be, a->l.o->depth,
			    a->l.o->setup_flags);
	a->l.r = &a->r;
	if (!a->ret && is_uuring &&
	    uuring_get_stats(a->r.fd, &a->st0, sizeof(a->st0)) < 0)
		memset(&a->st0, 0, sizeof(a->st0));
	pthread_barrier_wait(a->ready);
	if (a->ret)
		return NULL;
	a->l.err = run_loop(&a->l);
	if (is_uuring && uuring_get_stats(a->r.fd, &a->st1, sizeof(a->st1)) < 0)
		memset(&a->st1, 0, sizeof(a->st1));
	tring_exit(&a->r);
	return NULL;
}

static uint64_t sum_counter(struct thread_arg *ta, unsigned int n, bool enters)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v += atomic_load_explicit(enters ? &ta[i].l.enters :
					  &ta[i].l.ops, memory_order_relaxed);
	return v;
}

/* Runs -T threads; fills the snapshots and the summed statistics. */
static int run_threads(const struct opts *o, double warmup, double secs,
		       struct snap *s0, struct snap *s1,
		       struct uuring_stats *st0, struct uuring_stats *st1)
{
	struct thread_arg *ta = calloc(o->threads, sizeof(*ta));
	pthread_barrier_t ready;
	atomic_bool stop = false;
	unsigned int i, started = 0;
	int err = 0;

	if (!ta)
		return -1;
	pthread_barrier_init(&ready, NULL, o->threads + 1);
	for (i = 0; i < o->threads; i++) {
		ta[i].l.o = o;
		ta[i].l.fd = -1;
		ta[i].l.stop = &stop;
		ta[i].l.freelist = calloc(o->depth, sizeof(unsigned int));
		ta[i].ready = &ready;
		if (!ta[i].l.freelist ||
		    pthread_create(&ta[i].th, NULL, loop_thread, &ta[i]))
			break;
		started++;
	}
	if (started < o->threads) {
		/* the barrier counts every thread: let none wait forever */
		fprintf(stderr, "thread start failed\n");
		exit(1);
	}
	pthread_barrier_wait(&ready);
	for (i = 0; i < o->threads; i++)
		if (ta[i].ret) {
			fprintf(stderr, "%s: ring setup failed: %s\n",
				o->be->name, strerror(-ta[i].ret));
			err = -1;
		}
	if (!err) {
		struct timespec ts = { (time_t)warmup,
			(long)((warmup - (double)(time_t)warmup) * 1e9) };

		nanosleep(&ts, NULL);
		take_snap(s0, sum_counter(ta, o->threads, false),
			  sum_counter(ta, o->threads, true));
		ts.tv_sec = (time_t)(secs - warmup);
		ts.tv_nsec = (long)((secs - warmup - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
		take_snap(s1, sum_counter(ta, o->threads, false),
			  sum_counter(ta, o->threads, true));
	}
	atomic_store_explicit(&stop, true, memory_order_relaxed);
	memset(st0, 0, sizeof(*st0));
	memset(st1, 0, sizeof(*st1));
	for (i = 0; i < o->threads; i++) {
		pthread_join(ta[i].th, NULL);
		if (ta[i].l.err)
			err = -1;
#define ADD(f) (st0->f += ta[i].st0.f, st1->f += ta[i].st1.f)
		ADD(route_inline); ADD(route_iowq); ADD(route_poll);
		ADD(route_sqpoll); ADD(route_aio); ADD(waits); ADD(wakeups);
#undef ADD
		free(ta[i].l.freelist);
	}
	pthread_barrier_destroy(&ready);
	free(ta);
	return err;
}

int main(int argc, char **argv)
{
	struct uuring_stats st0, st1;
	struct opts o;
	struct tring r;
	struct snap s0, s1;
	struct stat sb;
	struct loop l;
	uint64_t ops = 0, nblocks = 0;
	double resid0 = -1, resid1 = -1, tw, tend;
	bool is_uuring;
	char *bufs = NULL;
	int fd = -1, ret;

	parse(argc, argv, &o);
	is_uuring = o.be->kind == BACKEND_UURING;
	memset(&l, 0, sizeof(l));
	l.o = &o;

	if (o.mode != MODE_NOP) {
		fd = open(o.file, O_RDONLY | (o.direct ? O_DIRECT : 0));
		if (fd < 0 || fstat(fd, &sb)) {
			perror(o.file);
			return 1;
		}
		nblocks = (uint64_t)sb.st_size / BLOCK;
		if (!nblocks) {
			fprintf(stderr, "%s: smaller than %u bytes\n", o.file,
				BLOCK);
			return 1;
		}
		if (posix_memalign((void **)&bufs, BLOCK,
				   (size_t)o.depth * BLOCK)) {
			fprintf(stderr, "out of memory\n");
			return 1;
		}
		memset(bufs, 0, (size_t)o.depth * BLOCK);
		l.slot_off = calloc(o.depth, sizeof(*l.slot_off));
		/* aligned: the verifying pread must work on an O_DIRECT fd */
		if (posix_memalign((void **)&l.chk, BLOCK, BLOCK))
			l.chk = NULL;
		if (!l.slot_off || !l.chk) {
			fprintf(stderr, "out of memory\n");
			return 1;
		}
		if (!o.direct)
			resid0 = residency(fd, sb.st_size);
	}
	l.fd = fd;
	l.nblocks = nblocks;
	l.bufs = bufs;
	rng_state ^= (uint64_t)getpid() << 17 ^ (uint64_t)(now() * 1e9);

	if (o.threads) {
		if (run_threads(&o, o.warmup, o.secs, &s0, &s1, &st0, &st1))
			return 1;
		ops = s1.ops;
		goto print;
	}
	l.freelist = calloc(o.depth, sizeof(*l.freelist));
	if (!l.freelist) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	ret = tring_init(&r, o.be, o.depth, o.setup_flags);
	if (ret) {
		fprintf(stderr, "%s: ring setup failed: %s\n", o.be->name,
			strerror(-ret));
		return 1;
	}
	memset(&st0, 0, sizeof(st0));
	if (is_uuring && uuring_get_stats(r.fd, &st0, sizeof(st0)) < 0)
		memset(&st0, 0, sizeof(st0));

	tw = now() + o.warmup;
	tend = tw + (o.secs - o.warmup);
	memset(&s0, 0, sizeof(s0));
	if (o.mode == MODE_WAIT2) {
		ops = run_wait2(&o, &r, fd, nblocks, bufs, tw, tend, &s0, &s1);
		if (!ops)
			return 1;
		goto report;
	}
	l.r = &r;
	l.tw = tw;
	l.tend = tend;
	l.s0 = &s0;
	l.s1 = &s1;
	if (run_loop(&l))
		return 1;
	ops = s1.ops;
report:
	memset(&st1, 0, sizeof(st1));
	if (is_uuring && uuring_get_stats(r.fd, &st1, sizeof(st1)) < 0)
		memset(&st1, 0, sizeof(st1));
	if (o.mode != MODE_NOP && !o.direct)
		resid1 = residency(fd, sb.st_size);
	tring_exit(&r);
print:
	{
		uint64_t d_ops = s1.ops - s0.ops;
		double wall = s1.t - s0.t, cpu = s1.cpu - s0.cpu;
		double hz = (double)sysconf(_SC_CLK_TCK);
		double other = (double)(s1.busy - s0.busy) / hz - cpu;
		double steal = (double)(s1.steal - s0.steal) / hz;

		if (other < 0)
			other = 0;
#define ROUTE(f) (is_uuring ? (long long)(st1.f - st0.f) : -1LL)
		printf("RESULT ops_per_s=%.0f cpu_us_per_op=%.4f "
		       "enters_per_op=%.4f ops_total=%llu "
		       "route_inline=%lld route_iowq=%lld route_poll=%lld "
		       "route_sqpoll=%lld route_aio=%lld waits=%lld wakeups=%lld "
		       "resid_start=%.4f resid_end=%.4f "
		       "other_cores=%.2f steal_cores=%.2f checked=%llu\n",
		       d_ops / wall, d_ops ? cpu * 1e6 / (double)d_ops : 0,
		       d_ops ? (double)(s1.enters - s0.enters) / (double)d_ops : 0,
		       (unsigned long long)ops,
		       ROUTE(route_inline), ROUTE(route_iowq),
		       ROUTE(route_poll), ROUTE(route_sqpoll), ROUTE(route_aio),
		       ROUTE(waits),
		       ROUTE(wakeups), resid0, resid1, other / wall,
		       steal / wall, (unsigned long long)l.checked);
#undef ROUTE
	}
	free(l.freelist);
	free(l.slot_off);
	free(l.chk);
	free(bufs);
	if (fd >= 0)
		close(fd);
	return 0;
}
