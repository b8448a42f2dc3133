/* SPDX-License-Identifier: MIT */
/*
 * dtest: differential test harness.  A scenario runs once on the kernel's
 * io_uring and once on the backend under test (uuring unless
 * UURING_TEST_BACKEND=kernel), each in a forked child with a hang guard.
 * It records what it observes (return values, CQE batches, failed checks);
 * the two recordings must be identical, CQE batches compared either in
 * order or as multisets.
 */
#ifndef TESTS_DTEST_H
#define TESTS_DTEST_H

#include <stdbool.h>
#include <stdint.h>

#include "tring.h"

struct drec;

struct dctx {
	const struct backend *be;
	struct drec *rec;
	bool is_kernel;
	void *arg;
};

typedef void (*dscenario_fn)(struct dctx *c);

struct dscenario {
	const char *name;
	dscenario_fn fn;
	void *arg;
	/*
	 * A documented divergence (e.g. "docs/compatibility.md #1"): the
	 * differences are printed but do not fail the test when the backend
	 * under test is uuring.  A scenario that then matches is reported
	 * as such, so that the entry can be dropped.
	 */
	const char *known;
};

/*
 * A recording outside DTEST_MAIN (a libFuzzer target drives scenario
 * code on one backend and compares nothing): zeroed, freed by drec_free.
 */
struct drec *drec_alloc(void);
void drec_free(struct drec *r);

/* Records an integer observation. */
void drec_int(struct dctx *c, long v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Records v and also fails (on either backend) unless v == expected. */
void drec_expect(struct dctx *c, long v, long expected, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Records a batch of CQEs; ordered=false compares as a multiset. */
void drec_cqes(struct dctx *c, const struct tcqe *cqes, unsigned int n,
	       bool ordered, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Records a failed check unless cond holds. */
#define dcheck(c, cond, ...) \
	dcheck_((c), !!(cond), #cond, __FILE__, __LINE__, __VA_ARGS__)
void dcheck_(struct dctx *c, int ok, const char *expr, const char *file,
	     int line, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* Informational line printed with the backend name (not compared). */
void dnote(struct dctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Sets up a ring on c->be, records the setup result under `label` and
 * checks that the ring fd belongs to that backend.  Returns 0 or -errno.
 */
int dring(struct dctx *c, struct tring *r, unsigned int entries,
	  struct io_uring_params *p, const char *label);
int dring_flags(struct dctx *c, struct tring *r, unsigned int entries,
		unsigned int flags);

/* Reaps `want` CQEs (1 s per wait) and records them; returns the count. */
unsigned int dreap(struct dctx *c, struct tring *r, unsigned int want,
		   bool ordered, const char *label);

/* An unlinked temp file holding len bytes of pattern (byte i = seed + i). */
int dtmpfile(struct dctx *c, size_t len, unsigned char seed);
/* The same in directory dir (for example /dev/shm for tmpfs). */
int dtmpfile_at(struct dctx *c, const char *dir, size_t len,
		unsigned char seed);
/* Fills buf with the pattern dtmpfile uses. */
void dpattern(void *buf, size_t len, unsigned char seed, size_t start);

/*
 * Runs fn(c, arg) in a forked child (so a hang cannot take the scenario
 * down) and returns its result, or DHUNG if it did not finish within
 * timeout_ms, or DCRASHED if it died.  fn must set up its own ring: a
 * uuring ring belongs to the process that created it.
 */
#define DHUNG (-1000001L)
#define DCRASHED (-1000002L)
long disolated(struct dctx *c, long (*fn)(struct dctx *c, void *arg),
	       void *arg, int timeout_ms);

/* A page that is mapped PROT_NONE, and an address that is unmapped. */
void *dprot_none_page(void);
void *dunmapped_addr(void);

/*
 * Runs the scenarios (all, or those named on the command line) and returns
 * the process exit status: 0 all identical, 1 a difference or failure, 77 if
 * the kernel reference is unavailable (skip line printed).
 */
int dtest_main(int argc, char **argv, const struct dscenario *sc,
	       unsigned int n);

#define DTEST_MAIN(scenarios)						\
	int main(int argc, char **argv)					\
	{								\
		return dtest_main(argc, argv, scenarios,		\
				  sizeof(scenarios) / sizeof(scenarios[0])); \
	}

/* errno name ("EINVAL") of -v, or the number. */
const char *derrname(long v, char *buf, size_t len);

/*
 * Runs body in a forked child (disolated, limit_ms) and records how it
 * ended under its name: 0 when it finished, the error or HUNG otherwise.
 */
void disolated_rec(struct dctx *c, long (*body)(struct dctx *, void *),
		   const char *name, int limit_ms);
#define DISOLATED_SCENARIO(sc, body, limit_ms)			\
	static void sc(struct dctx *c)				\
	{							\
		disolated_rec(c, body, #body, limit_ms);	\
	}

struct uuring_stats;
/* The ring's uuring statistics; all zero on the kernel backend. */
struct uuring_stats dstats(struct dctx *c, struct tring *r);

#endif /* TESTS_DTEST_H */
