// SPDX-License-Identifier: MIT
/*
 * SQE generator of tests/test_diff_fuzz2.c.  Every round must end the same
 * way on the kernel whatever the timing, so the rules below keep out what
 * races there (each rule names the race):
 *
 * Event rounds (pipe, socketpair, polls, timers, cancels) run nothing on
 * io-wq: every request completes inline or waits on readiness or a timer,
 * so a cancel's answer never depends on a worker (-EALREADY).
 *  - ops that move data (READ/WRITE/RECV/SEND, buffer selection, PROVIDE)
 *    and control ops (ASYNC_CANCEL, POLL_REMOVE, TIMEOUT_REMOVE) are issued
 *    at submission only: not linked behind another SQE and not behind a
 *    DRAIN, where they would run when a wakeup's task_work runs, which the
 *    kernel does at a different point than uuring;
 *  - a zero or past timer (relative 0, ABS 1 ns) always fires: the driver
 *    waits for it before cancelling, and nothing cancels or removes it
 *    (that would race the timer), ASYNC_CANCEL_ANY only in rounds with no
 *    such timer;
 *  - IOSQE_IO_DRAIN only when every earlier SQE of the round ends by
 *    itself (a drained request behind a parked poll would hold the
 *    driver's cancel behind it: io_drain_req queues everything after);
 *  - HARDLINK only on SQEs that end by themselves (a hard-linked follower
 *    of a parked request would be issued inside the driver's cancel).
 * File rounds run ops the kernel punts to io-wq, so SQE i touches only its
 * own buffer slot, file region, scratch file t<i>, names n<i>_* and fixed
 * slot i; cancels there only name user_data that does not exist.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/stat.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz2.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE 0x01
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif

static uint64_t rng_state;
/* f2_stream: choices taken from a byte string first (libFuzzer input) */
static const uint8_t *stream;
static size_t stream_len, stream_pos;
static FILE *record_to;

void f2_seed(uint64_t seed)
{
	rng_state = seed * 0x9e3779b97f4a7c15ULL + 1;
}

void f2_stream(const uint8_t *data, size_t len)
{
	stream = data;
	stream_len = len;
	stream_pos = 0;
}

void f2_record(FILE *f)
{
	record_to = f;
}

uint32_t f2_rnd(void)
{
	uint32_t v;

	if (stream && stream_pos + 4 <= stream_len) {
		memcpy(&v, stream + stream_pos, 4);
		stream_pos += 4;
	} else {
		/* xorshift64*, as tests/test_diff_fuzz.c */
		rng_state ^= rng_state >> 12;
		rng_state ^= rng_state << 25;
		rng_state ^= rng_state >> 27;
		v = (uint32_t)((rng_state * 2685821657736338717ULL) >> 32);
	}
	if (record_to)
		fwrite(&v, sizeof(v), 1, record_to);
	return v;
}

uint32_t f2_pick(uint32_t n)
{
	return f2_rnd() % n;
}

#define pick f2_pick

/* A buffer the engine writes into: slot i mostly, else hostile memory. */
static void *pick_wbuf(struct f2_env *e, unsigned int i, unsigned int len)
{
	switch (pick(24)) {
	case 0:
		return NULL;
	case 1:
		return dunmapped_addr();
	case 2:
		return e->none;
	case 3:
		return e->ro;			/* read-only where we write */
	case 4:					/* runs into the PROT_NONE page */
		return e->edge + F2_PAGE - (len > 1 ? pick(len) + 1 : 1);
	case 5:
		return e->edge + F2_PAGE - len;	/* ends exactly at the page */
	default:
		return e->buf + i * F2_SLOT + pick(F2_SLOT - len + 1);
	}
}

/* A buffer the engine reads from: read-only memory is fine there. */
static void *pick_rbuf(struct f2_env *e, unsigned int i, unsigned int len)
{
	if (pick(6) == 0)
		return e->ro + pick(F2_PAGE - (len < F2_PAGE ? len : F2_PAGE) + 1);
	return pick_wbuf(e, i, len);
}

static unsigned int pick_len(void)
{
	switch (pick(8)) {
	case 0:
		return 0;
	case 1:
		return 1 + pick(8);
	case 2:
		return F2_SLOT;
	default:
		return 1 + pick(300);
	}
}

/* hostile fds: closed, absurd, the ring itself, wrong types */
static int pick_bad_fd(struct f2_env *e)
{
	switch (pick(6)) {
	case 4:
		/* a directory has no FMODE_NOWAIT: the kernel punts its
		 * READ to io-wq, where an event round's cancel races it */
		return e->kind == F2_EVENT ? 9999 : e->dirfd;
	case 0:
		return -1;
	case 1:
		return 9999;
	case 2:
		return e->closed_fd;
	case 3:
		return e->r->fd;
	default:
		return e->pw;
	}
}

static struct io_uring_sqe *last_sqe;

static struct io_uring_sqe *sqe_at(struct f2_env *e, unsigned int i, int op,
				   int fd, const void *addr, unsigned int len,
				   uint64_t off)
{
	struct io_uring_sqe *sqe = tring_get_sqe(e->r);

	tring_prep_rw(sqe, op, fd, addr, len, off, e->ud_base + i);
	e->meta[i].op = (uint8_t)op;
	last_sqe = sqe;
	return sqe;
}

static void prep_timer(struct f2_env *e, unsigned int i, bool zero)
{
	struct __kernel_timespec *ts = &e->ts[i][0];

	ts->tv_sec = zero ? 0 : 3600;
	ts->tv_nsec = zero && pick(2) ? 1 : 0;
}

/* ---- event rounds ---- */

enum ev_op {
	EV_NOP, EV_READ, EV_WRITE, EV_RECV, EV_SEND, EV_READ_BS, EV_RECV_BS,
	EV_POLL, EV_POLL_REMOVE, EV_TIMEOUT, EV_TIMEOUT_REMOVE, EV_CANCEL,
	EV_PROVIDE, EV_REMOVE_BUFS, EV_BAD, EV_NR
};

/* ops that end by themselves whatever the pipe and socket hold */
static bool ev_finite(enum ev_op op)
{
	return op == EV_NOP || op == EV_WRITE || op == EV_SEND ||
	       op == EV_POLL_REMOVE || op == EV_TIMEOUT_REMOVE ||
	       op == EV_CANCEL || op == EV_PROVIDE || op == EV_REMOVE_BUFS ||
	       op == EV_BAD;
}

/* an earlier SQE of this round that a cancel may name */
static uint64_t pick_target(struct f2_env *e, unsigned int i, int want_op)
{
	unsigned int k, start = i ? pick(i) : 0;

	for (k = 0; k < i; k++) {
		unsigned int j = (start + k) % i;

		if (e->meta[j].must_fire || e->meta[j].ltimeout)
			continue;
		if (want_op < 0 || e->meta[j].op == want_op)
			return e->ud_base + j;
	}
	return e->ud_base + 90 + pick(5);	/* nothing by that name */
}

static void gen_poll(struct f2_env *e, struct io_uring_sqe *sqe)
{
	static const unsigned int masks[] = { POLLIN, POLLOUT, POLLIN | POLLOUT,
					      POLLIN | POLLRDHUP, POLLPRI };
	int fds[] = { e->pr, e->s0, e->pw, e->s1 };
	unsigned int k = pick(4);

	sqe->fd = pick(10) ? fds[k] : pick_bad_fd(e);
	/* s1 and pw only for POLLOUT: they are never read, POLLIN on s1
	 * would depend on what SEND put there */
	sqe->poll32_events = k >= 2 ? POLLOUT : masks[pick(5)];
	if (pick(3) == 0)
		sqe->len = IORING_POLL_ADD_MULTI;
	if (pick(20) == 0)
		sqe->len |= IORING_POLL_ADD_LEVEL;
	if (pick(25) == 0)
		sqe->len = 1U << 9;		/* unknown flag */
}

/* returns the op generated (EV_NOP when the rules forbade the choice) */
/* long: one switch, a short case per opcode family, read top to bottom */
static enum ev_op gen_event(struct f2_env *e, unsigned int i, bool immediate,
			    bool *must_fire)
{
	enum ev_op op = (enum ev_op)pick(EV_NR);
	bool data_or_ctl = op == EV_READ || op == EV_WRITE || op == EV_RECV ||
			   op == EV_SEND || op == EV_READ_BS ||
			   op == EV_RECV_BS || op == EV_POLL_REMOVE ||
			   op == EV_TIMEOUT_REMOVE || op == EV_CANCEL ||
			   op == EV_PROVIDE || op == EV_REMOVE_BUFS;
	struct io_uring_sqe *sqe;
	unsigned int len = pick_len();
	char *slot = e->buf + i * F2_SLOT;

	if (data_or_ctl && !immediate)
		op = EV_NOP;
	switch (op) {
	case EV_READ:
		sqe = sqe_at(e, i, IORING_OP_READ, pick(8) ? e->pr : e->s0,
			     pick_wbuf(e, i, len), len, pick(6) ? 0 : -1ULL);
		if (pick(12) == 0)
			sqe->fd = pick_bad_fd(e);
		break;
	case EV_WRITE:
		sqe = sqe_at(e, i, IORING_OP_WRITE, pick(3) ? e->pw : e->s0,
			     pick_rbuf(e, i, len), len, 0);
		if (pick(12) == 0)
			sqe->fd = pick(2) ? e->pr : pick_bad_fd(e);
		break;
	case EV_RECV:
	case EV_SEND:
		sqe = sqe_at(e, i, op == EV_RECV ? IORING_OP_RECV :
				   IORING_OP_SEND, e->s0,
			     op == EV_RECV ? pick_wbuf(e, i, len) :
					     pick_rbuf(e, i, len), len, 0);
		if (pick(4) == 0)
			sqe->msg_flags = pick(2) ? MSG_DONTWAIT : MSG_PEEK;
		if (pick(10) == 0)
			sqe->fd = pick(2) ? e->pr : pick_bad_fd(e);
		/* rule send-poll-first: not on SEND (the kernel itself
		 * sometimes leaves such a send on the writable socket parked
		 * until the round's cancel: seen kernel against kernel) */
		if (pick(20) == 0 && op == EV_RECV)
			sqe->ioprio = IORING_RECVSEND_POLL_FIRST;
		break;
	case EV_READ_BS:
	case EV_RECV_BS:
		sqe = sqe_at(e, i, op == EV_READ_BS ? IORING_OP_READ :
				   IORING_OP_RECV, pick(2) ? e->pr : e->s0,
			     NULL, pick(5) ? F2_PBUF_SZ : len, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = (uint16_t)(pick(8) ? 1 + pick(2) : 7);
		if (pick(10) == 0)
			sqe->addr = (uint64_t)(uintptr_t)slot;	/* -EINVAL */
		break;
	case EV_POLL:
		sqe = sqe_at(e, i, IORING_OP_POLL_ADD, -1, NULL, 0, 0);
		gen_poll(e, sqe);
		break;
	case EV_POLL_REMOVE:
		sqe = sqe_at(e, i, IORING_OP_POLL_REMOVE, -1, NULL, 0, 0);
		sqe->addr = pick_target(e, i, IORING_OP_POLL_ADD);
		if (pick(3) == 0) {
			/* not UPDATE_USER_DATA: the driver waits for the
			 * target's last CQE under its user_data */
			sqe->len = IORING_POLL_UPDATE_EVENTS |
				   (pick(2) ? IORING_POLL_ADD_MULTI : 0);
			sqe->poll32_events = pick(2) ? POLLIN : POLLOUT;
		}
		break;
	case EV_TIMEOUT:
		/* far (parked until the driver's cancel) or zero/past */
		*must_fire = immediate && pick(3) == 0 && !e->any_allowed;
		prep_timer(e, i, *must_fire);
		sqe = sqe_at(e, i, IORING_OP_TIMEOUT, -1, e->ts[i], 1, 0);
		if (*must_fire && (e->ts[i][0].tv_nsec || pick(2)))
			sqe->timeout_flags = IORING_TIMEOUT_ABS;
		if (!*must_fire && pick(4) == 0)
			sqe->timeout_flags = pick(2) ? IORING_TIMEOUT_BOOTTIME :
				IORING_TIMEOUT_ETIME_SUCCESS;
		if (pick(15) == 0) {
			*must_fire = false;	/* fails at prep */
			sqe->addr = (uint64_t)(uintptr_t)(pick(2) ? e->none :
				dunmapped_addr());
		}
		if (pick(20) == 0) {
			*must_fire = false;
			sqe->timeout_flags = IORING_TIMEOUT_BOOTTIME |
					     IORING_TIMEOUT_REALTIME;
		}
		break;
	case EV_TIMEOUT_REMOVE:
		sqe = sqe_at(e, i, IORING_OP_TIMEOUT_REMOVE, -1, NULL, 0, 0);
		sqe->addr = pick_target(e, i, IORING_OP_TIMEOUT);
		if (pick(2)) {		/* update to another far time */
			sqe->timeout_flags = IORING_TIMEOUT_UPDATE;
			prep_timer(e, i, false);
			e->ts[i][0].tv_sec = 7200;
			sqe->addr2 = pick(10) ? (uint64_t)(uintptr_t)e->ts[i] :
				(uint64_t)(uintptr_t)e->none;
		}
		break;
	case EV_CANCEL:
		sqe = sqe_at(e, i, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0);
		switch (pick(4)) {
		case 0:
			sqe->cancel_flags = IORING_ASYNC_CANCEL_FD |
				(pick(2) ? IORING_ASYNC_CANCEL_ALL : 0);
			sqe->fd = pick(2) ? e->pr : (pick(2) ? e->s0 :
				pick_bad_fd(e));
			break;
		case 1:
			if (e->any_allowed) {
				sqe->cancel_flags = IORING_ASYNC_CANCEL_ANY |
					(pick(2) ? IORING_ASYNC_CANCEL_ALL : 0);
				break;
			}
			/* fall through */
		default:
			sqe->addr = pick_target(e, i, -1);
			if (pick(3) == 0)
				sqe->cancel_flags = IORING_ASYNC_CANCEL_ALL;
			break;
		}
		if (pick(20) == 0)
			sqe->cancel_flags |= 1U << 12;	/* unknown */
		break;
	case EV_PROVIDE:
		sqe = sqe_at(e, i, IORING_OP_PROVIDE_BUFFERS, 1 + (int)pick(4),
			     e->pbuf, F2_PBUF_SZ, pick(F2_PBUF_N));
		sqe->buf_group = 1;
		/* buffers bid..bid+n-1 live at pbuf + bid * F2_PBUF_SZ */
		sqe->addr += sqe->off * F2_PBUF_SZ;
		if (sqe->off + (unsigned int)sqe->fd > F2_PBUF_N)
			sqe->fd = F2_PBUF_N - (int)sqe->off;
		if (pick(12) == 0)
			sqe->addr = (uint64_t)(uintptr_t)(pick(2) ? e->none :
				dunmapped_addr());
		if (pick(15) == 0)
			sqe->fd = pick(2) ? 0 : 70000;
		break;
	case EV_REMOVE_BUFS:
		sqe = sqe_at(e, i, IORING_OP_REMOVE_BUFFERS, 1 + (int)pick(3),
			     NULL, 0, 0);
		sqe->buf_group = (uint16_t)(pick(5) ? 1 : 2 + pick(6));
		break;
	case EV_BAD:
		sqe = sqe_at(e, i, IORING_OP_NOP, -1, NULL, 0, 0);
		sqe->opcode = (uint8_t)(IORING_OP_LAST + pick(60));
		break;
	default:
		sqe = sqe_at(e, i, IORING_OP_NOP, -1, NULL, 0, 0);
		if (pick(3) == 0) {
			sqe->nop_flags = IORING_NOP_INJECT_RESULT;
			sqe->len = (unsigned int)-(int)(1 + pick(40));
		}
		op = EV_NOP;
		break;
	}
	return op;
}

/* ---- file rounds ---- */

enum fl_op {
	FL_READ, FL_WRITE, FL_FIXED, FL_READ_BS, FL_OPENAT, FL_CLOSE,
	FL_STATX, FL_FALLOCATE, FL_FTRUNCATE, FL_UNLINKAT, FL_RENAMEAT,
	FL_MKDIRAT, FL_FSYNC, FL_NOP, FL_CANCEL, FL_NR
};

static const char long_name[300] =
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/* one of SQE i's own names, or a hostile path pointer */
static const char *pick_path(struct f2_env *e, unsigned int i)
{
	switch (pick(22)) {
	case 0:
		return NULL;
	case 1:
		return dunmapped_addr();
	case 2:
		return e->none;
	case 3:			/* no NUL before the PROT_NONE page */
		return e->pedge + F2_PAGE - 3;
	case 4:
		return long_name;
	case 5:
		return "";
	default:
		return e->names[i][pick(3)];
	}
}

static int pick_dirfd(struct f2_env *e)
{
	switch (pick(14)) {
	case 0:
		return e->file;		/* not a directory */
	case 1:
		return e->closed_fd;
	case 2:
		return e->r->fd;
	default:
		return e->dirfd;
	}
}

/* SQE i's own file for size-changing ops, or a hostile fd */
static int pick_tfd(struct f2_env *e, unsigned int i)
{
	return pick(8) ? e->tfd[i] : (pick(2) ? e->pr : pick_bad_fd(e));
}

static void gen_fixed_rw(struct f2_env *e, unsigned int i,
			 struct io_uring_sqe *sqe, unsigned int len)
{
	bool rd = pick(2);

	sqe->opcode = rd ? IORING_OP_READ_FIXED : IORING_OP_WRITE_FIXED;
	e->meta[i].op = sqe->opcode;
	sqe->fd = e->file;
	sqe->off = (uint64_t)i * F2_REGION + pick(F2_REGION - len + 1);
	sqe->addr = (uint64_t)(uintptr_t)(e->buf + i * F2_SLOT +
					  pick(F2_SLOT - len + 1));
	switch (pick(8)) {
	case 0:
		sqe->buf_index = 1;	/* the edge page: range runs off it */
		sqe->addr = (uint64_t)(uintptr_t)(e->edge + F2_PAGE - 16);
		break;
	case 1:
		sqe->buf_index = (uint16_t)(2 + pick(3));	/* -EFAULT */
		break;
	case 2:
		sqe->addr = (uint64_t)(uintptr_t)(e->buf + F2_BUF_SZ -
						  pick(len + 1));
		break;
	case 3:
		sqe->addr = (uint64_t)(uintptr_t)(e->buf - 8);
		break;
	default:
		sqe->buf_index = 0;
		break;
	}
}

/* long: one switch, a short case per opcode family, read top to bottom */
static void gen_file(struct f2_env *e, unsigned int i)
{
	enum fl_op op = (enum fl_op)pick(FL_NR);
	unsigned int len = pick_len();
	uint64_t off = (uint64_t)i * F2_REGION + pick(F2_REGION - len + 1);
	struct io_uring_sqe *sqe;
	bool fixed;

	switch (op) {
	case FL_READ:
	case FL_WRITE:
		fixed = pick(4) == 0;
		sqe = sqe_at(e, i, op == FL_READ ? IORING_OP_READ :
				   IORING_OP_WRITE, e->file,
			     op == FL_READ ? pick_wbuf(e, i, len) :
					     pick_rbuf(e, i, len), len, off);
		if (fixed) {
			static const int slots[] = { F2_FIXED_MAIN, F2_FIXED_MAIN,
				F2_FIXED_HOLE, F2_FIXED_PIPE, F2_NFIXED, 500 };

			sqe->flags |= IOSQE_FIXED_FILE;
			sqe->fd = pick(5) ? slots[pick(6)] : (int)i;
			if (sqe->fd == F2_FIXED_PIPE || sqe->fd == (int)i)
				sqe->opcode = IORING_OP_WRITE;	/* pipe: no wait */
			if (sqe->fd == (int)i)
				sqe->off = 0;
			e->meta[i].op = sqe->opcode;
		} else if (pick(12) == 0) {
			sqe->fd = pick_bad_fd(e);
			if (sqe->fd == e->pw)
				sqe->fd = e->dirfd;	/* no data to block on */
		}
		break;
	case FL_FIXED:
		sqe = sqe_at(e, i, IORING_OP_READ_FIXED, e->file, NULL, len, 0);
		gen_fixed_rw(e, i, sqe, len);
		break;
	case FL_READ_BS:
		sqe = sqe_at(e, i, IORING_OP_READ, e->file, NULL,
			     pick(5) ? F2_PBUF_SZ : len, off);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = (uint16_t)(pick(8) ? 1 + pick(2) : 7);
		break;
	case FL_OPENAT:
		sqe = sqe_at(e, i, IORING_OP_OPENAT, pick_dirfd(e),
			     pick_path(e, i), 0644, 0);
		sqe->open_flags = O_RDWR | (pick(2) ? O_CREAT : 0) |
				  (pick(4) ? 0 : O_EXCL) |
				  (pick(8) ? 0 : O_TRUNC) |
				  (pick(10) ? 0 : O_DIRECTORY);
		if (pick(2))
			sqe->file_index = pick(8) ? i + 1 : F2_NFIXED + 5;
		else
			e->meta[i].fd_result = true;
		break;
	case FL_CLOSE:
		sqe = sqe_at(e, i, IORING_OP_CLOSE, e->closed_fd, NULL, 0, 0);
		if (pick(3)) {
			sqe->fd = 0;
			sqe->file_index = pick(6) ? i + 1 :
				(pick(2) ? F2_NFIXED + 1 : F2_FIXED_HOLE + 1);
		} else if (pick(3) == 0) {
			sqe->fd = pick(2) ? e->r->fd : -1;
		}
		break;
	case FL_STATX:
		sqe = sqe_at(e, i, IORING_OP_STATX, pick_dirfd(e),
			     pick_path(e, i), STATX_BASIC_STATS, 0);
		sqe->off = (uint64_t)(uintptr_t)(e->scratch + i * 256);
		switch (pick(10)) {
		case 0:
			sqe->off = (uint64_t)(uintptr_t)e->ro;
			break;
		case 1:
			/* rule statx-edge: not into the hashed edge page
			 * (a statx's inode numbers and times differ from run
			 * to run, kernel against kernel too): PROT_NONE */
			sqe->off = (uint64_t)(uintptr_t)e->none;
			break;
		case 2:
			sqe->statx_flags = AT_EMPTY_PATH;
			break;
		case 3:
			sqe->statx_flags = 0x40000000;	/* unknown */
			break;
		}
		break;
	case FL_FALLOCATE:
		sqe = sqe_at(e, i, IORING_OP_FALLOCATE, pick_tfd(e, i), NULL,
			     pick(4) ? 1 + pick(9000) : 0, pick(20000));
		/* the kernel takes the mode from len and the length from addr */
		sqe->addr = sqe->len;
		sqe->len = pick(3) ? 0 : (pick(2) ? FALLOC_FL_KEEP_SIZE :
			FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE);
		break;
	case FL_FTRUNCATE:
		sqe = sqe_at(e, i, IORING_OP_FTRUNCATE, pick_tfd(e, i), NULL,
			     0, pick(10) ? pick(20000) : -1ULL);
		break;
	case FL_UNLINKAT:
		sqe = sqe_at(e, i, IORING_OP_UNLINKAT, pick_dirfd(e),
			     pick_path(e, i), 0, 0);
		sqe->unlink_flags = pick(3) ? 0 : (pick(5) ? AT_REMOVEDIR : 1);
		break;
	case FL_RENAMEAT:
		sqe = sqe_at(e, i, IORING_OP_RENAMEAT, pick_dirfd(e),
			     pick_path(e, i), (unsigned int)pick_dirfd(e), 0);
		sqe->addr2 = (uint64_t)(uintptr_t)pick_path(e, i);
		sqe->rename_flags = pick(3) ? 0 : (pick(2) ? RENAME_NOREPLACE :
			(pick(4) ? RENAME_EXCHANGE : 1U << 8));
		break;
	case FL_MKDIRAT:
		sqe = sqe_at(e, i, IORING_OP_MKDIRAT, pick_dirfd(e),
			     pick_path(e, i), 0755, 0);
		break;
	case FL_FSYNC:
		sqe = sqe_at(e, i, IORING_OP_FSYNC, pick_tfd(e, i), NULL, 0, 0);
		sqe->fsync_flags = pick(4) ? 0 : (pick(4) ? IORING_FSYNC_DATASYNC :
			1U << 5);
		break;
	case FL_CANCEL:
		sqe = sqe_at(e, i, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0);
		sqe->addr = e->ud_base + 90 + pick(5);	/* nobody */
		if (pick(5) == 0)
			sqe->cancel_flags = 1U << 13;
		break;
	default:
		sqe = sqe_at(e, i, IORING_OP_NOP, -1, NULL, 0, 0);
		break;
	}
	if (pick(25) == 0)
		sqe->flags |= IOSQE_ASYNC;
}

/* ---- flags and links ---- */

static void add_link_timeout(struct f2_env *e, unsigned int i, bool zero)
{
	struct io_uring_sqe *sqe;

	prep_timer(e, i, zero);
	sqe = sqe_at(e, i, IORING_OP_LINK_TIMEOUT, -1, e->ts[i], 1, 0);
	if (zero && (e->ts[i][0].tv_nsec || pick(2)))
		sqe->timeout_flags = IORING_TIMEOUT_ABS;
	if (pick(20) == 0)
		sqe->addr = (uint64_t)(uintptr_t)e->none;	/* -EFAULT */
	e->meta[i].ltimeout = true;
	e->meta[i].must_fire = zero;
}

/* Generates a round: e->n SQEs, flags and their metadata. */
/* long: the flag rules must sit beside each other to be checked together */
void f2_gen_round(struct f2_env *e)
{
	bool prev_linked = false, drain_seen = false, all_finite = true;
	bool target_immediate = false, sentinel_next = false;
	int chain = -1, chains = 0;
	unsigned int i;

	memset(e->meta, 0, sizeof(e->meta));
	e->any_allowed = e->kind == F2_EVENT && pick(4) == 0;
	for (i = 0; i < e->n; i++) {
		struct io_uring_sqe *sqe;
		bool immediate = !prev_linked && !drain_seen, must_fire = false;
		bool finite = true, is_lt = false;
		enum ev_op op = EV_NOP;

		if (sentinel_next) {
			/* hard-linked behind an SQE that may skip its CQE:
			 * this NOP's CQE tells the driver that one ended */
			sqe_at(e, i, IORING_OP_NOP, -1, NULL, 0, 0);
			e->meta[i].chain = chain;
			e->meta[i].tail = true;
			sentinel_next = prev_linked = false;
			continue;
		}
		/* a LINK_TIMEOUT behind a linked SQE, sometimes one alone */
		if ((prev_linked && pick(3) == 0) || pick(60) == 0) {
			/*
			 * Far only.  A zero one races on the kernel itself:
			 * it is armed after its target's issue succeeded
			 * (io_arm_ltimeout) while the target's CQE waits for
			 * the batch's flush, so it ends -ENOENT or -ECANCELED
			 * as the timer interrupt comes before or after that.
			 */
			add_link_timeout(e, i, false && target_immediate);
			is_lt = true;
		} else if (e->kind == F2_EVENT) {
			op = gen_event(e, i, immediate, &must_fire);
			finite = ev_finite(op) || must_fire;
			e->meta[i].must_fire = must_fire;
		} else {
			gen_file(e, i);
		}
		sqe = last_sqe;
		target_immediate = immediate;
		if (e->kind == F2_EVENT && !finite && !is_lt)
			all_finite = false;
		switch (pick(12)) {
		case 0:
		case 1:
		case 2:
			sqe->flags |= IOSQE_IO_LINK;
			break;
		case 3:
			if (e->kind == F2_FILE || finite)
				sqe->flags |= IOSQE_IO_HARDLINK;
			break;
		case 4:
		case 5:
			/* a must-fire timer that skips would leave nothing to
			 * wait for; -ETIME is a failure unless ETIME_SUCCESS */
			/* a LINK_TIMEOUT disarmed with -ECANCELED posts
			 * nothing with SKIP (io_req_queue_tw_complete does
			 * not mark it failed): never on a zero one */
			if (!(e->meta[i].ltimeout && e->meta[i].must_fire) &&
			    (!e->meta[i].must_fire ||
			     !(sqe->timeout_flags & IORING_TIMEOUT_ETIME_SUCCESS)))
				sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
			break;
		case 6:
			/* rule drain-link-timeout: never on a LINK_TIMEOUT (the
			 * kernel hung such a round: its cancel never ran, seen
			 * kernel against kernel) */
			if (!is_lt && (e->kind == F2_FILE || all_finite))
				sqe->flags |= IOSQE_IO_DRAIN;
			break;
		case 7:
			sqe->flags |= pick(10) ? 0 : (1U << 7);
			break;
		}
		/* rule linked-multishot-poll: a multishot POLL_ADD heads no
		 * chain (whether the kernel posts its arm-time shot before
		 * the round's cancel varied kernel against kernel there) */
		if (sqe->opcode == IORING_OP_POLL_ADD &&
		    (sqe->len & IORING_POLL_ADD_MULTI))
			sqe->flags &= ~(IOSQE_IO_LINK | IOSQE_IO_HARDLINK);
		if (sqe->flags & IOSQE_IO_DRAIN)
			drain_seen = true;
		/* a chain's last CQE must come: a skipping last SQE gets a
		 * sentinel behind it (see the driver) */
		if ((sqe->flags & IOSQE_CQE_SKIP_SUCCESS) &&
		    !(sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK))) {
			if (i + 1 < F2_MAXN) {
				sqe->flags |= IOSQE_IO_HARDLINK;
				sentinel_next = true;
				if (i + 1 == e->n)
					e->n++;
			} else {
				sqe->flags &= ~IOSQE_CQE_SKIP_SUCCESS;
			}
		}
		/* a link left open at the end of a submission goes to io-wq
		 * (io_submit_state_end -> io_queue_sqe_fallback), where
		 * the driver's cancel would race it: event rounds close it */
		if (e->kind == F2_EVENT && i + 1 == e->n)
			sqe->flags &= ~(IOSQE_IO_LINK | IOSQE_IO_HARDLINK);
		/* a skipping SQE that fails silences the CQEs of what it
		 * cancels behind it: only HARDLINK there, so that only a
		 * failure at submission (the whole chain fails) does that */
		if ((sqe->flags & IOSQE_CQE_SKIP_SUCCESS) &&
		    (sqe->flags & IOSQE_IO_LINK))
			sqe->flags ^= IOSQE_IO_LINK | IOSQE_IO_HARDLINK;
		e->meta[i].skip = sqe->flags & IOSQE_CQE_SKIP_SUCCESS;
		e->meta[i].tail = !(sqe->flags & (IOSQE_IO_LINK |
						  IOSQE_IO_HARDLINK)) ||
				  i + 1 == e->n;
		e->meta[i].chain = prev_linked || (sqe->flags &
			(IOSQE_IO_LINK | IOSQE_IO_HARDLINK)) ?
			(prev_linked ? chain : (chain = chains++)) : -1;
		prev_linked = sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK);
	}
}
