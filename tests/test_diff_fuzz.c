// SPDX-License-Identifier: MIT
/*
 * Differential SQE fuzzing: deterministic pseudo-random batches of NOP,
 * READ, WRITE, READV, WRITEV, FSYNC and invalid SQEs (bad fds, bad
 * pointers, odd lengths and offsets, file position -1, link/hardlink/drain/
 * skip flags, injected NOP results, RWF flags) run on both backends.
 *
 * The kernel punts buffered ext4 writes and fsync to io-wq, so within a
 * round completions are unordered (compared as multisets) and concurrent:
 * SQE i of a round only touches buffer slot i and file region i, offset -1
 * and RWF_APPEND appear only in single-SQE rounds, and a round ends when
 * all its CQEs are in (CQE_SKIP_SUCCESS only on standalone NOPs, whose
 * outcome is known).  Buffer and file contents, size and position must
 * match at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "dtest.h"

#define SLOT 2048		/* buffer slot per SQE index */
#define REGION 4096		/* file region per SQE index */
#define MAXN 8
#define BUF_SZ (SLOT * MAXN)
#define FILE_SZ (REGION * MAXN)
#define ROUNDS 250	/* UURING_FUZZ_ROUNDS overrides */

static uint64_t rng_state;

static uint32_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 2685821657736338717ULL) >> 32);
}

static uint32_t pick(uint32_t n)
{
	return rnd() % n;
}

static uint64_t hash(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

struct env {
	int fd;
	char *buf;		/* BUF_SZ bytes */
	void *none;		/* PROT_NONE page */
	struct iovec iov[MAXN][4];
	bool solo;		/* single-SQE round */
};

static void *pick_addr(struct env *e, unsigned int i, unsigned int len)
{
	switch (pick(20)) {
	case 0:
		return NULL;
	case 1:
		return dunmapped_addr();
	case 2:
		return e->none;
	default:
		return e->buf + i * SLOT + pick(SLOT - len + 1);
	}
}

static unsigned int pick_len(void)
{
	switch (pick(10)) {
	case 0:
		return 0;
	case 1:
		return 1 + pick(8);
	case 2:
		return SLOT;
	default:
		return 1 + pick(SLOT - 1);
	}
}

/* an offset in region i such that [off, off + len) stays inside it */
static uint64_t pick_off(struct env *e, unsigned int i, unsigned int len,
			 bool read)
{
	unsigned int k = pick(12);

	if (k == 0 && e->solo)
		return (uint64_t)-1;
	if (k == 1)
		return (uint64_t)-2;
	if (k == 2 && read)
		return FILE_SZ + pick(3) * 100;	/* at or past EOF */
	return (uint64_t)i * REGION + pick(REGION - len + 1);
}

static int pick_fd(struct env *e)
{
	switch (pick(25)) {
	case 0:
		return -1;
	case 1:
		return 9999;
	default:
		return e->fd;
	}
}

/* returns true if the SQE will certainly post no CQE (skipped NOP) */
static bool fill_sqe(struct env *e, struct io_uring_sqe *sqe, unsigned int i,
		     uint64_t ud, bool prev_linked)
{
	unsigned int kind = pick(100), len, k, n, total;
	bool is_nop = false, nop_fails = false, read;

	if (kind < 20) {
		tring_prep_nop(sqe, ud);
		is_nop = true;
		if (pick(3) == 0) {
			sqe->nop_flags = IORING_NOP_INJECT_RESULT;
			if (pick(4)) {
				sqe->len = (unsigned int)-(int)(1 + pick(40));
				nop_fails = true;
			} else {
				sqe->len = pick(100000);
			}
		}
	} else if (kind < 65) {
		read = kind < 45;
		len = pick_len();
		tring_prep_rw(sqe, read ? IORING_OP_READ : IORING_OP_WRITE,
			      pick_fd(e), pick_addr(e, i, len), len,
			      pick_off(e, i, len, read), ud);
		if (pick(15) == 0)
			sqe->rw_flags = (pick(2) || !e->solo) ? RWF_DSYNC :
								RWF_APPEND;
	} else if (kind < 88) {
		read = pick(2);
		n = pick(5);
		total = 0;
		for (k = 0; k < n; k++) {
			len = pick(SLOT / 4);
			e->iov[i][k].iov_base = pick(25) ?
				e->buf + i * SLOT + total :
				(void *)dunmapped_addr();
			e->iov[i][k].iov_len = len;
			total += len;
		}
		tring_prep_rw(sqe, read ? IORING_OP_READV : IORING_OP_WRITEV,
			      pick_fd(e),
			      pick(30) ? (void *)e->iov[i] : e->none,
			      pick(40) ? n : 2000,
			      pick_off(e, i, total, read), ud);
	} else if (kind < 95) {
		tring_prep_rw(sqe, IORING_OP_FSYNC, pick_fd(e), NULL, 0, 0, ud);
		if (pick(4) == 0)
			sqe->fsync_flags = IORING_FSYNC_DATASYNC;
	} else {
		tring_prep_nop(sqe, ud);
		sqe->opcode = (uint8_t)(IORING_OP_LAST + pick(100));
	}
	switch (pick(12)) {
	case 0:
	case 1:
	case 2:
		sqe->flags |= IOSQE_IO_LINK;
		break;
	case 3:
		sqe->flags |= IOSQE_IO_HARDLINK;
		break;
	case 4:
		/* only where the outcome is known: a standalone NOP */
		if (is_nop && !prev_linked) {
			sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
			return !nop_fails;
		}
		break;
	case 5:
		sqe->flags |= pick(8) ? 0 : IOSQE_IO_DRAIN;
		break;
	case 6:
		sqe->flags |= pick(10) ? 0 : (1U << 7);
		break;
	default:
		break;
	}
	return false;
}

/* UURING_FUZZ_DUMP=<round>: print that round's SQEs */
static void dump_sqe(struct dctx *c, struct env *e, struct io_uring_sqe *s)
{
	uintptr_t a = (uintptr_t)s->addr, b = (uintptr_t)e->buf;
	char where[48];

	if (a >= b && a < b + BUF_SZ)
		snprintf(where, sizeof(where), "buf+%lu", (unsigned long)(a - b));
	else if (s->addr >= (uint64_t)(uintptr_t)e->iov &&
		 s->addr < (uint64_t)(uintptr_t)(e->iov + MAXN))
		snprintf(where, sizeof(where), "iov[%lu]",
			 (unsigned long)((a - (uintptr_t)e->iov) /
					 sizeof(e->iov[0])));
	else
		snprintf(where, sizeof(where), "%#lx", (unsigned long)a);
	dnote(c, "ud=%llu op=%u flags=%#x fd=%d addr=%s len=%u off=%lld rw_flags=%#x nop_flags=%#x",
	      (unsigned long long)s->user_data, s->opcode, s->flags,
	      s->fd == e->fd ? 1000 : s->fd, where, s->len, (long long)s->off,
	      s->rw_flags, s->nop_flags);
}

static void fuzz(struct dctx *c, uint64_t seed, unsigned int setup_flags)
{
	const char *dr = getenv("UURING_FUZZ_DUMP");
	int dump_round = dr ? atoi(dr) : -1;

	const char *rs = getenv("UURING_FUZZ_ROUNDS");
	unsigned int rounds = rs && *rs ? (unsigned int)atoi(rs) : ROUNDS;
	struct env e;
	struct tring r;
	struct stat st;
	unsigned int round;
	char *fbuf;

	rng_state = seed * 0x9e3779b97f4a7c15ULL + 1;
	if (dring_flags(c, &r, 16, setup_flags))
		return;
	memset(&e, 0, sizeof(e));
	e.fd = dtmpfile(c, FILE_SZ, (unsigned char)seed);
	e.buf = calloc(1, BUF_SZ);
	e.none = dprot_none_page();
	for (round = 0; round < rounds; round++) {
		unsigned int n = pick(3) ? 1 + pick(MAXN) : 1, i, done = 0;
		unsigned int expect = 0, got;
		bool skipped[MAXN], prev_linked = false;
		struct tcqe out[64];
		int ret;

		e.solo = n == 1;
		for (i = 0; i < n; i++) {
			struct io_uring_sqe *sqe = tring_get_sqe(&r);

			skipped[i] = fill_sqe(&e, sqe, i, round * 100 + i,
					      prev_linked);
			if (dump_round >= 0 && (unsigned int)dump_round == round)
				dump_sqe(c, &e, sqe);
			prev_linked = sqe->flags &
				      (IOSQE_IO_LINK | IOSQE_IO_HARDLINK);
		}
		/* submit until the SQ is empty (init failures stop it) */
		while (done < n) {
			ret = tring_submit(&r);
			drec_int(c, ret, "seed %llu round %u: submit at %u",
				 (unsigned long long)seed, round, done);
			if (ret <= 0)
				break;
			for (i = done; i < done + (unsigned int)ret; i++)
				expect += skipped[i] ? 0 : 1;
			done += (unsigned int)ret;
		}
		got = tring_reap_wait(&r, out, expect, 2000000000LL);
		drec_cqes(c, out, got, false, "seed %llu round %u",
			  (unsigned long long)seed, round);
		if (round % 16 == 15 || round == rounds - 1)
			drec_int(c, (long)(hash(e.buf, BUF_SZ) & 0x7fffffff),
				 "seed %llu round %u: buffer hash",
				 (unsigned long long)seed, round);
	}
	tring_wait(&r, 1, 20000000LL);
	drec_int(c, tring_cq_ready(&r), "seed %llu: no stray CQEs",
		 (unsigned long long)seed);
	fstat(e.fd, &st);
	drec_int(c, st.st_size, "seed %llu: file size", (unsigned long long)seed);
	drec_int(c, lseek(e.fd, 0, SEEK_CUR), "seed %llu: file position",
		 (unsigned long long)seed);
	fbuf = malloc((size_t)st.st_size + 1);
	drec_int(c, pread(e.fd, fbuf, (size_t)st.st_size, 0) == st.st_size,
		 "seed %llu: file read back", (unsigned long long)seed);
	drec_int(c, (long)(hash(fbuf, (size_t)st.st_size) & 0x7fffffff),
		 "seed %llu: file hash", (unsigned long long)seed);
	free(fbuf);
	free(e.buf);
	close(e.fd);
	tring_exit(&r);
}

static void sc_fuzz(struct dctx *c)
{
	uint64_t seed = (uint64_t)(uintptr_t)c->arg;

	fuzz(c, seed, seed % 3 == 2 ? IORING_SETUP_SUBMIT_ALL : 0);
}

static const struct dscenario scenarios[] = {
	{ "seed1", sc_fuzz, (void *)1 },
	{ "seed2", sc_fuzz, (void *)2 },
	{ "seed3", sc_fuzz, (void *)3 },
	{ "seed4", sc_fuzz, (void *)4 },
	{ "seed5", sc_fuzz, (void *)5 },
	{ "seed6", sc_fuzz, (void *)6 },
};

DTEST_MAIN(scenarios)
