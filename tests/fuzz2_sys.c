// SPDX-License-Identifier: MIT
/*
 * Hostile io_uring_register and io_uring_enter calls of
 * tests/test_diff_fuzz2.c: arrays and argument structs in unmapped,
 * PROT_NONE and read-only memory or running off their last page, bad
 * counts, offsets, flags and fds.  Every call's result is recorded; the
 * resources the other rounds expect are registered again afterwards.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "fuzz2.h"
#include "tprep.h"

#define pick f2_pick

static int reg(struct f2_env *e, unsigned int op, void *arg, unsigned int nr)
{
	return e->r->be->reg((unsigned int)e->r->fd, op, arg, nr);
}

/* an array of `bytes` bytes, good or hostile; good ones copy `src` */
static void *hostile_array(struct f2_env *e, const void *src, size_t bytes,
			   int *variant)
{
	char *p;

	*variant = (int)pick(6);
	switch (*variant) {
	case 0:
		return dunmapped_addr();
	case 1:
		return e->none;
	case 2:			/* runs off the edge page by 4 bytes */
		p = e->edge + F2_PAGE - bytes + 4;
		memcpy(p, src, bytes - 4);
		return p;
	case 3:			/* ends exactly at the edge page's end */
		p = e->edge + F2_PAGE - bytes;
		memcpy(p, src, bytes);
		return p;
	case 4:			/* read-only: fine where the kernel reads */
		return e->ro;
	default:
		p = e->scratch + 2048;
		memcpy(p, src, bytes);
		return p;
	}
}

static void sys_files(struct f2_env *e, unsigned int round)
{
	int fds[4] = { e->file, -1, e->pr, e->s0 }, v, ret;
	unsigned int nr = 4;
	void *arg;

	switch (pick(5)) {
	case 0:
		fds[1] = 9999;
		break;
	case 1:
		fds[1] = e->r->fd;	/* a ring cannot be a fixed file */
		break;
	case 2:
		fds[3] = e->closed_fd;
		break;
	case 3:
		nr = pick(2) ? 0 : 1U << 30;
		break;
	}
	if (pick(4))
		drec_int(e->c, reg(e, IORING_UNREGISTER_FILES, NULL, 0),
			 "round %u: unregister files", round);
	arg = hostile_array(e, fds, sizeof(fds), &v);
	ret = reg(e, IORING_REGISTER_FILES, arg, nr);
	drec_int(e->c, ret, "round %u: register files (array %d, nr %u)",
		 round, v, nr);
}

static void sys_files_update(struct f2_env *e, unsigned int round)
{
	int fds[2] = { pick(2) ? e->file : e->r->fd, pick(3) ? -1 : 9999 }, v;
	struct io_uring_files_update up;

	memset(&up, 0, sizeof(up));
	up.offset = pick(4) ? F2_FIXED_HOLE : (pick(2) ? F2_NFIXED - 1 : 1000);
	up.fds = (uint64_t)(uintptr_t)hostile_array(e, fds, sizeof(fds), &v);
	if (pick(8) == 0)
		up.resv = 1;
	drec_int(e->c, reg(e, IORING_REGISTER_FILES_UPDATE,
			   pick(10) ? (void *)&up : e->none, 2),
		 "round %u: files update (array %d, offset %u)", round, v,
		 up.offset);
}

static void sys_buffers(struct f2_env *e, unsigned int round)
{
	struct iovec iov[2] = { { e->buf, F2_SLOT }, { e->edge, F2_PAGE } };
	unsigned int nr = 2;
	void *arg;
	int v;

	switch (pick(6)) {
	case 0:
		iov[1].iov_base = e->none;
		break;
	case 1:
		iov[1].iov_base = dunmapped_addr();
		break;
	case 2:			/* runs off the edge page into PROT_NONE */
		iov[1].iov_len = F2_PAGE + 1;
		break;
	case 3:
		iov[0].iov_len = 0;
		break;
	case 4:
		nr = pick(2) ? 0 : 70000;
		break;
	}
	if (pick(4))
		drec_int(e->c, reg(e, IORING_UNREGISTER_BUFFERS, NULL, 0),
			 "round %u: unregister buffers", round);
	arg = hostile_array(e, iov, sizeof(iov), &v);
	drec_int(e->c, reg(e, IORING_REGISTER_BUFFERS, arg, nr),
		 "round %u: register buffers (array %d, nr %u)", round, v, nr);
}

static void sys_pbuf(struct f2_env *e, unsigned int round)
{
	struct io_uring_buf_reg rg;
	void *arg;
	int v;

	memset(&rg, 0, sizeof(rg));
	rg.ring_addr = (uint64_t)(uintptr_t)e->scratch;	/* page aligned */
	rg.ring_entries = 4;
	rg.bgid = (uint16_t)(5 + pick(2));
	switch (pick(6)) {
	case 0:
		rg.ring_addr = (uint64_t)(uintptr_t)e->none;
		break;
	case 1:
		rg.ring_addr += 64;		/* not page aligned */
		break;
	case 2:
		rg.ring_entries = 3;
		break;
	case 3:
		rg.bgid = 2;			/* in use */
		break;
	case 4:
		rg.resv[0] = 1;
		break;
	}
	arg = hostile_array(e, &rg, sizeof(rg), &v);
	drec_int(e->c, reg(e, IORING_REGISTER_PBUF_RING, arg, 1),
		 "round %u: pbuf ring (array %d)", round, v);
	memset(&rg, 0, sizeof(rg));
	rg.bgid = 5;
	drec_int(e->c, reg(e, IORING_UNREGISTER_PBUF_RING, &rg, 1),
		 "round %u: pbuf 5 unregister", round);
	rg.bgid = 6;
	drec_int(e->c, reg(e, IORING_UNREGISTER_PBUF_RING, &rg, 1),
		 "round %u: pbuf 6 unregister", round);
}

static void sys_probe(struct f2_env *e, unsigned int round)
{
	static const unsigned int nrs[] = { 0, 4, 256, 257 };
	size_t sz = sizeof(struct io_uring_probe) +
		    4 * sizeof(struct io_uring_probe_op);
	unsigned int nr = nrs[pick(4)];
	void *arg;

	switch (pick(4)) {
	case 0:
		arg = e->ro;			/* the kernel writes it */
		break;
	case 1:				/* 4 ops, then PROT_NONE */
		arg = e->edge + F2_PAGE - sz;
		memset(arg, 0, sz);
		break;
	case 2:
		arg = e->none;
		break;
	default:
		arg = e->scratch + 1024;
		memset(arg, 0, sz);
		break;
	}
	drec_int(e->c, reg(e, IORING_REGISTER_PROBE, arg, nr),
		 "round %u: probe nr %u", round, nr);
	/* which opcodes each backend has is test_diff_setup's (probe): the
	 * answer must not reach the file through a later WRITE from here */
	if (arg == e->edge + F2_PAGE - sz || arg == e->scratch + 1024)
		memset(arg, 0, sz);
}

static int enter(struct f2_env *e, int fd, unsigned int min,
		 unsigned int flags, const void *arg, size_t argsz)
{
	return e->r->be->enter((unsigned int)fd, 0, min, flags, arg, argsz);
}

static void sys_enter(struct f2_env *e, unsigned int round)
{
	struct io_uring_getevents_arg *ga = (void *)(e->scratch + 3072);
	struct __kernel_timespec *ts = (void *)(e->scratch + 3200);
	sigset_t *ss = (void *)(e->scratch + 3300);
	unsigned int k = pick(9), fl = IORING_ENTER_GETEVENTS |
				      IORING_ENTER_EXT_ARG;
	size_t argsz = sizeof(*ga);
	const void *arg = ga;
	int fd = e->r->fd, ret;

	memset(ga, 0, sizeof(*ga));
	memset(ts, 0, sizeof(*ts));
	sigemptyset(ss);
	ga->ts = (uint64_t)(uintptr_t)ts;
	switch (k) {
	case 0:
		fl |= 1U << 30;
		break;
	case 1:
		argsz = sizeof(*ga) - 8;
		break;
	case 2:
		arg = pick(2) ? dunmapped_addr() : (void *)e->none;
		break;
	case 3:
		ga->ts = (uint64_t)(uintptr_t)(pick(2) ? e->none :
			(void *)(e->edge + F2_PAGE - 8));
		break;
	case 4:
		ga->sigmask = (uint64_t)(uintptr_t)ss;
		ga->sigmask_sz = pick(2) ? 4 : 8;
		break;
	case 5:
		ga->sigmask = (uint64_t)(uintptr_t)e->none;
		ga->sigmask_sz = 8;
		break;
	case 6:
		fd = pick(3) ? e->closed_fd : (pick(2) ? e->pr : e->dirfd);
		break;
	case 7:
		fl = IORING_ENTER_GETEVENTS | IORING_ENTER_REGISTERED_RING;
		fd = 5;
		arg = NULL;
		argsz = 0;
		break;
	default:
		ga->min_wait_usec = 5;
		break;
	}
	/* min 1 and a zero timeout: never waits, -ETIME when nothing is in */
	ret = enter(e, fd, 1, fl, arg, argsz);
	drec_int(e->c, ret, "round %u: enter variant %u", round, k);
}

/*
 * Registers what the file and event rounds expect: the fixed file table
 * (per-index slots empty, the main file, a hole, the pipe's read end),
 * buffers 0 (the slot buffer) and 1 (the edge page), and the PBUF ring of
 * group 2 (empty; the driver fills it per round).
 */
void f2_register_resources(struct f2_env *e, const char *label)
{
	int table[F2_NFIXED], i;
	struct iovec iov[2] = { { e->buf, F2_BUF_SZ }, { e->edge, F2_PAGE } };
	struct io_uring_buf_reg rg;

	for (i = 0; i < F2_NFIXED; i++)
		table[i] = -1;
	table[F2_FIXED_MAIN] = e->file;
	table[F2_FIXED_PIPE] = e->pr;
	reg(e, IORING_UNREGISTER_FILES, NULL, 0);
	drec_int(e->c, reg(e, IORING_REGISTER_FILES, table, F2_NFIXED),
		 "%s: files", label);
	reg(e, IORING_UNREGISTER_BUFFERS, NULL, 0);
	drec_int(e->c, reg(e, IORING_REGISTER_BUFFERS, iov, 2),
		 "%s: buffers", label);
	memset(&rg, 0, sizeof(rg));
	rg.bgid = 2;
	if (e->br_registered)
		reg(e, IORING_UNREGISTER_PBUF_RING, &rg, 1);
	memset(e->br, 0, F2_PAGE);
	drec_int(e->c, tpbuf_reg(e->r, e->br, F2_RING_N, 2, 0),
		 "%s: pbuf ring", label);
	e->br_registered = true;
}

void f2_sys_round(struct f2_env *e, unsigned int round)
{
	unsigned int n = 1 + pick(4), k;

	for (k = 0; k < n; k++) {
		switch (pick(6)) {
		case 0:
			sys_files(e, round);
			break;
		case 1:
			sys_files_update(e, round);
			break;
		case 2:
			sys_buffers(e, round);
			break;
		case 3:
			sys_pbuf(e, round);
			break;
		case 4:
			sys_probe(e, round);
			break;
		default:
			sys_enter(e, round);
			break;
		}
	}
	/* the arrays copied there hold addresses, which differ between the
	 * backends' processes: a later WRITE from the page must not carry
	 * them to the file */
	memset(e->edge, 0, F2_PAGE);
	f2_register_resources(e, "restore");
}
