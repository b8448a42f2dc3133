/* SPDX-License-Identifier: MIT */
/*
 * A minimal io_uring ring without liburing, for the `uuring run` tests:
 * every system call either a raw `syscall` instruction (use_raw, like
 * liburing) or libc's syscall()/mmap/dup/close (like fio).
 */
#ifndef UURING_RUN_RING_H
#define UURING_RUN_RING_H

#include <linux/io_uring.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "run_util.h"

static bool use_raw = true;

static inline long raw6(long nr, long a1, long a2, long a3, long a4, long a5,
		 long a6)
{
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10),
			   "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/* -errno convention for both flavours */
static inline long sys6(long nr, long a1, long a2, long a3, long a4, long a5,
		 long a6)
{
	long r;

	if (use_raw)
		return raw6(nr, a1, a2, a3, a4, a5, a6);
	r = syscall(nr, a1, a2, a3, a4, a5, a6);
	return r == -1 ? -errno : r;
}

static inline void *map(size_t len, int fd, long off)
{
	void *p;

	if (use_raw) {
		long r = raw6(__NR_mmap, 0, (long)len, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_POPULATE, fd, off);
		return (r < 0 && r > -4096) ? NULL : (void *)r;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		 fd, off);
	return p == MAP_FAILED ? NULL : p;
}

static inline int do_close(int fd)
{
	return use_raw ? (int)raw6(__NR_close, fd, 0, 0, 0, 0, 0) :
			 (close(fd) ? -errno : 0);
}

static inline int do_dup(int fd)
{
	int r;

	if (use_raw)
		return (int)raw6(__NR_dup, fd, 0, 0, 0, 0, 0);
	r = dup(fd);
	return r < 0 ? -errno : r;
}

struct ring {
	int fd;
	struct io_uring_params p;
	unsigned char *sq, *cq;
	struct io_uring_sqe *sqes;
	size_t sq_len, cq_len;
};

static inline int ring_init_flags(struct ring *r, unsigned int entries,
				  unsigned int flags)
{
	memset(r, 0, sizeof(*r));
	r->p.flags = flags;
	if (flags & IORING_SETUP_SQPOLL)
		r->p.sq_thread_idle = 10; /* ms, as libuv */
	r->fd = (int)sys6(__NR_io_uring_setup, entries, (long)&r->p, 0, 0, 0, 0);
	if (r->fd < 0)
		return r->fd;
	r->sq_len = r->p.sq_off.array + r->p.sq_entries * sizeof(uint32_t);
	r->cq_len = r->p.cq_off.cqes +
		    r->p.cq_entries * sizeof(struct io_uring_cqe);
	r->sq = map(r->sq_len, r->fd, IORING_OFF_SQ_RING);
	r->cq = map(r->cq_len, r->fd, IORING_OFF_CQ_RING);
	r->sqes = map(r->p.sq_entries * sizeof(struct io_uring_sqe), r->fd,
		      IORING_OFF_SQES);
	if (!r->sq || !r->cq || !r->sqes)
		return -ENOMEM;
	return 0;
}

static inline int ring_init(struct ring *r, unsigned int entries)
{
	return ring_init_flags(r, entries, 0);
}

#define U32(base, off) ((volatile uint32_t *)((base) + (off)))

static inline struct io_uring_sqe *get_sqe(struct ring *r)
{
	uint32_t tail = *U32(r->sq, r->p.sq_off.tail);
	uint32_t idx = tail & *U32(r->sq, r->p.sq_off.ring_mask);
	struct io_uring_sqe *sqe = &r->sqes[idx];

	memset(sqe, 0, sizeof(*sqe));
	U32(r->sq, r->p.sq_off.array)[idx] = idx;
	__atomic_store_n((uint32_t *)(r->sq + r->p.sq_off.tail), tail + 1,
			 __ATOMIC_RELEASE);
	return sqe;
}

static inline int enter(int fd, unsigned int submit, unsigned int wait,
		 unsigned int flags, void *arg, size_t sz)
{
	return (int)sys6(__NR_io_uring_enter, fd, submit, wait,
			 flags | (wait ? IORING_ENTER_GETEVENTS : 0),
			 (long)arg, (long)sz);
}

/* Pops one CQE (through the CQ-ring mapping); 0 if there was one. */
static inline int pop(struct ring *r, struct io_uring_cqe *out)
{
	uint32_t head = *U32(r->cq, r->p.cq_off.head);
	uint32_t tail = __atomic_load_n((uint32_t *)(r->cq + r->p.cq_off.tail),
					__ATOMIC_ACQUIRE);
	struct io_uring_cqe *cqes = (void *)(r->cq + r->p.cq_off.cqes);

	if (head == tail)
		return -EAGAIN;
	*out = cqes[head & *U32(r->cq, r->p.cq_off.ring_mask)];
	__atomic_store_n((uint32_t *)(r->cq + r->p.cq_off.head), head + 1,
			 __ATOMIC_RELEASE);
	return 0;
}

/* One NOP through a fresh ring (raw system calls); 0 or -errno. */
static inline int ring_nop_once(void)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe cqe;
	struct ring r;
	int ret = ring_init(&r, 4);

	if (ret)
		return ret;
	sqe = get_sqe(&r);
	sqe->opcode = IORING_OP_NOP;
	sqe->user_data = 5;
	ret = enter(r.fd, 1, 1, 0, NULL, 0);
	if (ret == 1)
		ret = pop(&r, &cqe) || cqe.user_data != 5 ? -EIO : 0;
	else if (ret >= 0)
		ret = -EIO;
	munmap(r.sq, r.sq_len);
	munmap(r.cq, r.cq_len);
	munmap(r.sqes, r.p.sq_entries * sizeof(struct io_uring_sqe));
	do_close(r.fd);
	return ret;
}

#endif
