// SPDX-License-Identifier: MIT
/*
 * The null target of the block-queue model (dev/blkq.c), after the
 * kernel's null_blk, reached at the fd level.
 * (Past 800 lines: 50 of them this comment, the options' reference.)
 *
 * Configuration: UURING_NULLB="PATH[:opt=val,...][;PATH2...]" (read at
 * the first ring setup) or uuring_nullb_config() (replaces whatever was
 * configured).  Each PATH must name an existing regular file; its
 * (st_dev, st_ino) is taken then.  Options, with null_blk's defaults:
 *
 *   irqmode=0|1|2      0 none: the request completes inside its issue
 *                      (when a tag is free; else it waits like any other);
 *                      1 softirq (default): it is parked, and completes at
 *                      once from the completion context, after the
 *                      submitting batch, through task_work;
 *                      2 timer: completion_nsec after its dispatch
 *   completion_nsec=N  irqmode=2's delay (10000)
 *   hw_queue_depth=N   tags per hardware queue (64; 1..65536)
 *   submit_queues=N    hardware queues (1; more than the CPUs are clamped
 *                      to the CPUs, as null_blk does)
 *   bs=N               logical block size (512; a power of two, 512..4096)
 *   size=N[k|m|g|t]    bytes (250g, null_blk's gb=250; a multiple of bs;
 *                      memory_backed=1 at most 1t)
 *   memory_backed=0|1  0 (default): nothing is transferred, a read leaves
 *                      its buffer untouched; 1: reads return what was
 *                      written (zeros elsewhere), 4 KiB pages allocated on
 *                      the first write to them
 *
 * A bad spec prints one line on stderr naming the bad option; from the
 * environment every ring setup then fails with -EINVAL, through the API
 * the call returns -EINVAL and keeps the previous configuration.
 *
 * What is served: READ, WRITE, READV, WRITEV, READ_FIXED, WRITE_FIXED
 * (and the vectored fixed ones) and FSYNC on an fd, plain or fixed, whose
 * file is a configured PATH; the file itself is never read or written
 * (open, fstat, ioctl and the rest are the file's).  Access rules are a
 * block device's under O_DIRECT (block/fops.c): the offset and length
 * must be multiples of bs (-EINVAL; buffer addresses are not checked); a
 * read starting at or past the end returns 0 and one crossing it is cut
 * there (short); a write starting at or past the end fails -ENOSPC and
 * one crossing it is cut; offset -1 uses the fd's file position, advanced
 * at issue.  RWF_NOWAIT with no free tag: -EAGAIN (BLK_MQ_REQ_NOWAIT).
 * IOSQE_BUFFER_SELECT: -EOPNOTSUPP.  Each served request counts in the
 * ring's route_nullb (irqmode=0 ones completed in their issue count in
 * route_inline too).
 *
 * Recognising the file costs one fstat per request while a device is
 * configured (~0.3 us here): a cache keyed by fd number could not be
 * invalidated, since a raw close(2), the preload's close of a non-ring fd
 * and a fixed-file slot update all reuse numbers without telling us.
 * Programs without a device pay one relaxed load (uu_nullb_active).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "core/registry.h"
#include "core/tctx.h"
#include "core/types.h"
#include "dev/blkq.h"
#include "dev/nullb.h"
#include "ops/rw.h"
#include "util/usercopy.h"
#include "uuring.h"

#define NB_PAGE 4096u
#define NB_CHUNK 512u          /* pages per page-table chunk (2 MiB) */
#define NB_DEFAULT_SIZE (250ULL << 30)
#define NB_MAX_MEM_SIZE (1ULL << 40)
#define NB_MAX_DEPTH 65536u

struct nullb {
	struct uu_blkq q;      /* first: container of the queue */
	char *path;
	dev_t dev;
	ino_t ino;
	unsigned int irqmode, bs;
	bool memory_backed;
	uint64_t completion_nsec, size;
	/* memory_backed: dir[i] -> NB_CHUNK page pointers, pages of zeros
	 * until written; installed with compare-and-swap (release), read
	 * with acquire loads */
	void *_Atomic *_Atomic *dir;
	size_t nr_dir;
	atomic_ullong bytes_read, bytes_written, flushes;
};

struct nullb_cfg {
	unsigned int nr;
	struct nullb *devs[];
};

atomic_bool uu_nullb_active;

/* the configuration: devs hold one queue reference each */
static pthread_mutex_t cfg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nullb_cfg *cfg;
static bool env_bad;           /* UURING_NULLB was refused */
static bool api_used;          /* uuring_nullb_config was called */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/* ---- the timer: one deadline queue, one thread ---- */

/*
 * irqmode=2.  Deadlines are dispatch + completion_nsec, so each device's
 * requests arrive in deadline order: the queue is a list kept sorted by
 * inserting from the tail (O(1) with one device).  The thread sleeps in
 * pthread_cond_timedwait on CLOCK_MONOTONIC until the earliest deadline
 * (a futex wait with an absolute timeout; timer slack 1 ns), then ends
 * every request that is due, in one completion section, so their CQEs go
 * to each ring in one batch.  It never spins: the achieved delay is the
 * deadline plus this machine's wakeup latency (the statistics' histogram
 * shows it).  A push signals the condition only when the new request
 * becomes the head while the thread sleeps for a later deadline (or
 * none): sleep_until, read and written under the lock.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct uu_blkq_rq *head, *tail;
	int64_t sleep_until;   /* 0: awake; INT64_MAX: no deadline */
	bool up, tried;
} TM = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *timer_main(void *arg)
{
	(void)arg;
	uu_tctx.engine_thread = true;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	pthread_setname_np(pthread_self(), "uuring-nullb");
	uu_thread_ready();
	pthread_mutex_lock(&TM.lock);
	for (;;) {
		int64_t now = mono_ns();
		struct uu_blkq_rq *due, *last = NULL;

		if (TM.head && TM.head->deadline <= now) {
			due = TM.head;
			while (TM.head && TM.head->deadline <= now) {
				last = TM.head;
				TM.head = TM.head->tnext;
			}
			last->tnext = NULL;
			if (!TM.head)
				TM.tail = NULL;
			pthread_mutex_unlock(&TM.lock);
			uu_blkq_section_begin();
			while (due) {
				struct uu_blkq_rq *rq = due;

				due = rq->tnext;
				uu_blkq_end(rq, rq->res);
			}
			uu_blkq_section_end();
			pthread_mutex_lock(&TM.lock);
			continue;
		}
		if (TM.head) {
			struct timespec ts = {
				.tv_sec = TM.head->deadline / 1000000000LL,
				.tv_nsec = TM.head->deadline % 1000000000LL,
			};

			TM.sleep_until = TM.head->deadline;
			pthread_cond_timedwait(&TM.cond, &TM.lock, &ts);
		} else {
			TM.sleep_until = INT64_MAX;
			pthread_cond_wait(&TM.cond, &TM.lock);
		}
		TM.sleep_until = 0;
	}
	return NULL;
}

/* with TM.lock held */
static bool timer_start_locked(void)
{
	pthread_condattr_t ca;

	if (TM.up || TM.tried)
		return TM.up;
	TM.tried = true;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&TM.cond, &ca);
	pthread_condattr_destroy(&ca);
	TM.sleep_until = 0;
	/* the thread takes TM.lock only after uu_thread_ready */
	TM.up = !uu_thread_start(timer_main, NULL);
	return TM.up;
}

static void timer_push(struct uu_blkq_rq *rq, uint64_t delay)
{
	struct uu_blkq_rq **pp;

	rq->deadline = mono_ns() + (int64_t)delay;
	rq->tnext = NULL;
	pthread_mutex_lock(&TM.lock);
	if (!timer_start_locked()) {
		/* no thread: complete at once (irqmode=1's way) */
		pthread_mutex_unlock(&TM.lock);
		uu_blkq_end(rq, rq->res);
		return;
	}
	if (!TM.tail || TM.tail->deadline <= rq->deadline) {
		if (TM.tail)
			TM.tail->tnext = rq;
		else
			TM.head = rq;
		TM.tail = rq;
	} else {
		for (pp = &TM.head; (*pp)->deadline <= rq->deadline;
		     pp = &(*pp)->tnext)
			;
		rq->tnext = *pp;
		*pp = rq;
	}
	if (TM.head == rq && TM.sleep_until > rq->deadline)
		pthread_cond_signal(&TM.cond);
	pthread_mutex_unlock(&TM.lock);
}

/* ---- memory ---- */

static unsigned char zero_page[NB_PAGE];

static unsigned char *page_of(struct nullb *d, uint64_t idx, bool alloc)
{
	void *_Atomic *chunk;
	void *p, *expected;
	size_t di = idx / NB_CHUNK;

	/* acquire: pairs with the release of the installing CAS below */
	chunk = atomic_load_explicit(&d->dir[di], memory_order_acquire);
	if (!chunk) {
		void *_Atomic *fresh;

		if (!alloc)
			return NULL;
		fresh = calloc(NB_CHUNK, sizeof(*fresh));
		if (!fresh)
			return NULL;
		chunk = NULL;
		if (atomic_compare_exchange_strong_explicit(
			    &d->dir[di], &chunk, fresh, memory_order_acq_rel,
			    memory_order_acquire))
			chunk = fresh;
		else
			free(fresh);
	}
	p = atomic_load_explicit(&chunk[idx % NB_CHUNK], memory_order_acquire);
	if (p || !alloc)
		return p;
	p = calloc(1, NB_PAGE);
	if (!p)
		return NULL;
	expected = NULL;
	if (!atomic_compare_exchange_strong_explicit(&chunk[idx % NB_CHUNK],
						     &expected, p,
						     memory_order_acq_rel,
						     memory_order_acquire)) {
		free(p);
		p = expected;
	}
	return p;
}

/* memory_backed: copies rq's bytes between the pages and the request's
 * buffers (fault-safe, T1); the result, or -EFAULT / -ENOMEM */
static int transfer(struct nullb *d, struct uu_blkq_rq *rq, bool write)
{
	const struct iovec *iov = uu_cmd(rq->req, rw)->iov;
	int nr = uu_cmd(rq->req, rw)->nr_iov, i = 0;
	uint64_t pos = rq->pos, left = rq->len;
	size_t ioff = 0;

	while (left) {
		uint64_t pidx = pos / NB_PAGE;
		size_t poff = (size_t)(pos % NB_PAGE), n;
		unsigned char *page;
		char *ubuf;
		int ret;

		while (i < nr && ioff == iov[i].iov_len) {
			i++;
			ioff = 0;
		}
		if (i == nr)
			break;
		n = NB_PAGE - poff;
		if (n > iov[i].iov_len - ioff)
			n = iov[i].iov_len - ioff;
		if (n > left)
			n = (size_t)left;
		ubuf = (char *)iov[i].iov_base + ioff;
		page = page_of(d, pidx, write);
		if (write) {
			if (!page)
				return -ENOMEM;
			ret = uu_copy_from_user(page + poff, ubuf, n);
		} else {
			ret = uu_copy_to_user(ubuf, page ? page + poff :
							   zero_page, n);
		}
		if (ret)
			return ret;
		ioff += n;
		pos += n;
		left -= n;
	}
	return (int)(rq->len - left);
}

/* ---- the target ---- */

static void nullb_queue_rq(struct uu_blkq_rq *rq)
{
	struct nullb *d = (struct nullb *)rq->q;
	int res;

	switch (rq->op) {
	case UU_BLKQ_FLUSH:
		atomic_fetch_add_explicit(&d->flushes, 1, memory_order_relaxed);
		res = 0;
		break;
	case UU_BLKQ_WRITE:
		res = d->memory_backed ? transfer(d, rq, true) : (int)rq->len;
		if (res > 0)
			atomic_fetch_add_explicit(&d->bytes_written,
						  (uint64_t)res,
						  memory_order_relaxed);
		break;
	default:
		res = d->memory_backed ? transfer(d, rq, false) : (int)rq->len;
		if (res > 0)
			atomic_fetch_add_explicit(&d->bytes_read, (uint64_t)res,
						  memory_order_relaxed);
		break;
	}
	if (d->irqmode == 2 && !rq->inl) {
		rq->res = res;
		timer_push(rq, d->completion_nsec);
		return;
	}
	uu_blkq_end(rq, res);
}

static void nullb_free(struct nullb *d)
{
	if (d->dir) {
		for (size_t i = 0; i < d->nr_dir; i++) {
			void *_Atomic *chunk = atomic_load(&d->dir[i]);

			if (!chunk)
				continue;
			for (unsigned int j = 0; j < NB_CHUNK; j++)
				free(atomic_load(&chunk[j]));
			free(chunk);
		}
		free(d->dir);
	}
	free(d->path);
	free(d);
}

static void nullb_release(struct uu_blkq *q)
{
	nullb_free((struct nullb *)q);
}

static const struct uu_blkq_ops nullb_ops = {
	.queue_rq = nullb_queue_rq,
	.release = nullb_release,
};

/* ---- configuration ---- */

static void cfg_put(struct nullb_cfg *c)
{
	if (!c)
		return;
	for (unsigned int i = 0; i < c->nr; i++)
		uu_blkq_put(&c->devs[i]->q);
	free(c);
}

static void complain(const char *who, const char *fmt, const char *a,
		     const char *b)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "uuring: %s: ", who);

	if (n > 0 && (size_t)n < sizeof(line))
		n += snprintf(line + n, sizeof(line) - (size_t)n, fmt, a, b);
	if (n <= 0)
		return;
	if ((size_t)n >= sizeof(line) - 1)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* one write: one line, even beside other writers */
	if (write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* nothing else to tell */
	}
}

static bool parse_num(const char *v, uint64_t *out, bool suffix)
{
	char *end;
	unsigned long long x;

	if (!*v || *v == '-')
		return false;
	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno)
		return false;
	if (suffix && *end) {
		unsigned int sh;

		switch (*end) {
		case 'k': case 'K': sh = 10; break;
		case 'm': case 'M': sh = 20; break;
		case 'g': case 'G': sh = 30; break;
		case 't': case 'T': sh = 40; break;
		default: return false;
		}
		if (end[1] || x > (~0ULL >> sh))
			return false;
		x <<= sh;
		end++;
	}
	if (*end)
		return false;
	*out = x;
	return true;
}

/* One "PATH[:opt=val,...]"; NULL after complaining. */
/* (116 lines: a flat parser, one branch per option) */
static struct nullb *parse_dev(const char *who, char *s)
{
	char *opts = strchr(s, ':'), *save = NULL, *o;
	unsigned int queues = 1, depth = 64;
	bool size_set = false;
	struct nullb *d;
	struct stat st;
	int ncpu;

	if (opts)
		*opts++ = '\0';
	if (!*s) {
		complain(who, "empty PATH in the spec%s%s", "", "");
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d || !(d->path = strdup(s))) {
		complain(who, "out of memory%s%s", "", "");
		free(d);
		return NULL;
	}
	d->irqmode = 1;
	d->completion_nsec = 10000;
	d->bs = 512;
	d->size = NB_DEFAULT_SIZE;
	for (o = opts ? strtok_r(opts, ",", &save) : NULL; o;
	     o = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(o, '=');
		uint64_t v;

		if (!eq) {
			complain(who, "bad option '%s' for %s (want opt=val)", o,
				 d->path);
			goto bad;
		}
		*eq = '\0';
		if (!strcmp(o, "size")) {
			if (!parse_num(eq + 1, &v, true) || !v)
				goto bad_val;
			d->size = v;
			size_set = true;
			continue;
		}
		if (!parse_num(eq + 1, &v, false))
			goto bad_val;
		if (!strcmp(o, "irqmode") && v <= 2)
			d->irqmode = (unsigned int)v;
		else if (!strcmp(o, "completion_nsec") && v <= 60000000000ULL)
			d->completion_nsec = v;
		else if (!strcmp(o, "hw_queue_depth") && v >= 1 &&
			 v <= NB_MAX_DEPTH)
			depth = (unsigned int)v;
		else if (!strcmp(o, "submit_queues") && v >= 1 && v <= 4096)
			queues = (unsigned int)v;
		else if (!strcmp(o, "bs") && v >= 512 && v <= 4096 &&
			 !(v & (v - 1)))
			d->bs = (unsigned int)v;
		else if (!strcmp(o, "memory_backed") && v <= 1)
			d->memory_backed = v;
		else if (strcmp(o, "irqmode") && strcmp(o, "completion_nsec") &&
			 strcmp(o, "hw_queue_depth") &&
			 strcmp(o, "submit_queues") && strcmp(o, "bs") &&
			 strcmp(o, "memory_backed")) {
			complain(who, "unknown option '%s' for %s", o, d->path);
			goto bad;
		} else {
			goto bad_val;
		}
		continue;
bad_val:
		*eq = '=';
		complain(who, "bad value in option '%s' for %s", o, d->path);
		goto bad;
	}
	(void)size_set;
	if (d->size % d->bs) {
		complain(who, "option 'size' of %s is not a multiple of bs%s",
			 d->path, "");
		goto bad;
	}
	if (d->memory_backed && d->size > NB_MAX_MEM_SIZE) {
		complain(who, "option 'size' of %s: memory_backed allows 1t at "
			 "most%s", d->path, "");
		goto bad;
	}
	if (stat(d->path, &st)) {
		complain(who, "%s: %s", d->path, strerror(errno));
		goto bad;
	}
	if (!S_ISREG(st.st_mode)) {
		complain(who, "%s: not a regular file%s", d->path, "");
		goto bad;
	}
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	ncpu = get_nprocs_conf();
	if (ncpu > 0 && queues > (unsigned int)ncpu)
		queues = (unsigned int)ncpu; /* null_blk: nr_cpu_ids */
	if (d->memory_backed) {
		d->nr_dir = (size_t)((d->size + (uint64_t)NB_PAGE * NB_CHUNK - 1) /
				     ((uint64_t)NB_PAGE * NB_CHUNK));
		d->dir = calloc(d->nr_dir, sizeof(*d->dir));
		if (!d->dir) {
			complain(who, "%s: out of memory%s", d->path, "");
			goto bad;
		}
	}
	if (uu_blkq_init(&d->q, &nullb_ops, d, queues, depth)) {
		complain(who, "%s: out of memory%s", d->path, "");
		goto bad;
	}
	return d;
bad:
	nullb_free(d);
	return NULL;
}

/* A whole spec; NULL with *err (after complaining) or an empty cfg. */
static struct nullb_cfg *parse_spec(const char *who, const char *spec,
				    int *err)
{
	char *copy = strdup(spec ? spec : ""), *save = NULL, *s;
	struct nullb_cfg *c;
	unsigned int max = 1;

	*err = -ENOMEM;
	if (!copy)
		return NULL;
	for (s = copy; *s; s++)
		max += *s == ';';
	c = calloc(1, sizeof(*c) + max * sizeof(c->devs[0]));
	if (!c) {
		free(copy);
		return NULL;
	}
	for (s = strtok_r(copy, ";", &save); s; s = strtok_r(NULL, ";", &save)) {
		struct nullb *d = parse_dev(who, s);

		if (!d)
			goto bad;
		for (unsigned int i = 0; i < c->nr; i++)
			if (c->devs[i]->dev == d->dev &&
			    c->devs[i]->ino == d->ino) {
				complain(who, "%s names the same file as %s",
					 d->path, c->devs[i]->path);
				uu_blkq_put(&d->q);
				goto bad;
			}
		c->devs[c->nr++] = d;
	}
	free(copy);
	*err = 0;
	return c;
bad:
	free(copy);
	cfg_put(c);
	*err = -EINVAL;
	return NULL;
}

/* fork: the child has no timer thread; the parent's requests (in the
 * timer queue, holding tags, waiting) are forgotten */
static void nb_prepare(void)
{
	pthread_mutex_lock(&cfg_lock);
	if (cfg)
		for (unsigned int i = 0; i < cfg->nr; i++)
			uu_blkq_lock_all(&cfg->devs[i]->q);
	pthread_mutex_lock(&TM.lock);
}

static void nb_parent(void)
{
	pthread_mutex_unlock(&TM.lock);
	if (cfg)
		for (unsigned int i = 0; i < cfg->nr; i++)
			uu_blkq_unlock_all(&cfg->devs[i]->q);
	pthread_mutex_unlock(&cfg_lock);
}

static void nb_child(void)
{
	pthread_condattr_t ca;

	TM.head = TM.tail = NULL;
	if (TM.tried) {
		/* the parent's thread may have been waiting on it */
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&TM.cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	TM.up = TM.tried = false;
	TM.sleep_until = 0;
	pthread_mutex_unlock(&TM.lock);
	if (cfg)
		for (unsigned int i = 0; i < cfg->nr; i++) {
			uu_blkq_unlock_all(&cfg->devs[i]->q);
			uu_blkq_reset_child(&cfg->devs[i]->q);
		}
	pthread_mutex_unlock(&cfg_lock);
}

static void fork_init(void)
{
	pthread_atfork(nb_prepare, nb_parent, nb_child);
}

static void install(struct nullb_cfg *c)
{
	struct nullb_cfg *old;

	pthread_once(&fork_once, fork_init);
	pthread_mutex_lock(&cfg_lock);
	old = cfg;
	cfg = c && c->nr ? c : NULL;
	atomic_store_explicit(&uu_nullb_active, cfg != NULL,
			      memory_order_relaxed);
	pthread_mutex_unlock(&cfg_lock);
	if (c && !c->nr)
		free(c);
	/* requests in flight keep their devices (queue references) */
	cfg_put(old);
}

static void load_env(void)
{
	const char *v = getenv("UURING_NULLB");
	struct nullb_cfg *c;
	int err;

	pthread_mutex_lock(&cfg_lock);
	if (api_used || !v || !*v) {
		pthread_mutex_unlock(&cfg_lock);
		return;
	}
	pthread_mutex_unlock(&cfg_lock);
	c = parse_spec("UURING_NULLB", v, &err);
	if (!c) {
		env_bad = true;
		return;
	}
	install(c);
}

int uu_nullb_setup_check(void)
{
	pthread_once(&env_once, load_env);
	return env_bad ? -EINVAL : 0;
}

UU_EXPORT int uuring_nullb_config(const char *spec)
{
	struct nullb_cfg *c;
	int err;

	c = parse_spec("uuring_nullb_config", spec, &err);
	if (!c)
		return err;
	pthread_mutex_lock(&cfg_lock);
	api_used = true;
	pthread_mutex_unlock(&cfg_lock);
	/* the environment no longer applies (nor its refusal) */
	pthread_once(&env_once, load_env);
	env_bad = false;
	install(c);
	return 0;
}

/* The device of (dev, ino), with a queue reference, or NULL. */
static struct nullb *lookup_ino(dev_t dev, ino_t ino)
{
	struct nullb *d = NULL;

	pthread_mutex_lock(&cfg_lock);
	if (cfg)
		for (unsigned int i = 0; i < cfg->nr; i++)
			if (cfg->devs[i]->ino == ino &&
			    cfg->devs[i]->dev == dev) {
				d = cfg->devs[i];
				uu_blkq_get(&d->q);
				break;
			}
	pthread_mutex_unlock(&cfg_lock);
	return d;
}

static struct nullb *lookup_fd(int fd)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode))
		return NULL;
	return lookup_ino(st.st_dev, st.st_ino);
}

UU_EXPORT int uuring_nullb_stats(const char *path,
				 struct uuring_nullb_stats *out, size_t size)
{
	struct uuring_nullb_stats s;
	struct nullb *d;
	struct stat st;
	uint64_t total = 0, acc = 0;

	if (!path || stat(path, &st))
		return -ENOENT;
	d = lookup_ino(st.st_dev, st.st_ino);
	if (!d)
		return -ENOENT;
	memset(&s, 0, sizeof(s));
#define G(f, from) s.f = atomic_load_explicit(&from, memory_order_relaxed)
	G(dispatched, d->q.dispatched);
	G(completed, d->q.completed);
	G(tag_waits, d->q.tag_waits);
	G(inflight_max, d->q.busy_max);
	G(bytes_read, d->bytes_read);
	G(bytes_written, d->bytes_written);
	G(flushes, d->flushes);
#undef G
	s.hw_queues = d->q.nr_hw_queues;
	s.hw_queue_depth = d->q.depth;
	for (unsigned int b = 0; b < UU_BLKQ_LAT_BUCKETS; b++) {
		s.lat_hist[b] = atomic_load_explicit(&d->q.lat[b],
						     memory_order_relaxed);
		total += s.lat_hist[b];
	}
	/* percentiles: the smallest delay of the bucket that holds them */
	for (unsigned int b = 0; b < UU_BLKQ_LAT_BUCKETS && total; b++) {
		uint64_t before = acc;

		acc += s.lat_hist[b];
		if (before * 100 < total * 50 && acc * 100 >= total * 50)
			s.lat_p50_ns = uu_blkq_lat_floor(b);
		if (before * 100 < total * 99 && acc * 100 >= total * 99)
			s.lat_p99_ns = uu_blkq_lat_floor(b);
	}
	uu_blkq_put(&d->q);
	if (size > sizeof(s))
		size = sizeof(s);
	memcpy(out, &s, size);
	return (int)size;
}

/* ---- the issue hooks ---- */

static int served(struct nullb *d, struct uu_req *req, uint8_t op,
		  uint64_t pos, uint64_t len, bool nowait)
{
	int res;

	uu_stat_inc(req->ring, route_nullb);
	/* IOPOLL rings reap parked requests; never complete in the issue */
	if (d->irqmode == 0 && !req->ring->syscall_iopoll &&
	    uu_blkq_run_inline(&d->q, req, op, pos, len, &res))
		return res;
	uu_blkq_prepare(&d->q, op, pos, len, nowait);
	return uu_park(req, UU_ISSUE_PARK_DEV);
}

static int nullb_rw(struct nullb *d, struct uu_req *req, bool is_write)
{
	struct uu_rw_cmd *rw_st = uu_cmd(req, rw);
	int64_t pos = rw_st->pos;
	uint64_t count = rw_st->total;
	bool cur = pos == -1;

	if (req->flags & UU_REQ_BUFFER_SELECT)
		return -EOPNOTSUPP;
	if (cur) {
		pos = lseek(req->fd, 0, SEEK_CUR);
		if (pos < 0)
			return -errno;
	}
	if (pos < 0)
		return -EINVAL;
	if (!count)
		return 0;
	/* blkdev_read_iter / blkdev_write_iter, then blkdev_dio_invalid */
	if ((uint64_t)pos >= d->size)
		return is_write ? -ENOSPC : 0;
	if (count > d->size - (uint64_t)pos)
		count = d->size - (uint64_t)pos;
	if (((uint64_t)pos | count) & (d->bs - 1))
		return -EINVAL;
	if (cur && lseek(req->fd, pos + (int64_t)count, SEEK_SET) < 0)
		return -errno;
	return served(d, req, is_write ? UU_BLKQ_WRITE : UU_BLKQ_READ,
		      (uint64_t)pos, count, rw_st->rw_flags & RWF_NOWAIT);
}

bool uu_nullb_rw(struct uu_req *req, bool is_write, int *res)
{
	struct nullb *d = lookup_fd(req->fd);

	if (!d)
		return false;
	*res = nullb_rw(d, req, is_write);
	uu_blkq_put(&d->q);
	return true;
}

bool uu_nullb_fsync(struct uu_req *req, int *res)
{
	struct nullb *d = lookup_fd(req->fd);

	if (!d)
		return false;
	*res = served(d, req, UU_BLKQ_FLUSH, 0, 0, false);
	uu_blkq_put(&d->q);
	return true;
}
