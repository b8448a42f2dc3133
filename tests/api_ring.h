/* SPDX-License-Identifier: MIT */
/*
 * A ring mapped through the uuring API (uuring_setup, uuring_mmap), for
 * the protocol stress tests (tests/test_wake_protocol.c,
 * tests/test_readiness_protocol.c): NO_SQARRAY, 8 entries, the SQ tail
 * and the CQ head and tail as atomics.
 */
#ifndef UURING_TESTS_API_RING_H
#define UURING_TESTS_API_RING_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "abi/io_uring_abi.h"
#include "uuring.h"

struct ring {
	int fd;
	unsigned char *rings, *sqes;
	_Atomic unsigned int *sq_tail, *cq_head, *cq_tail;
	unsigned int sq_mask, cq_mask;
	struct io_uring_cqe *cqes;
	size_t rings_sz, sqes_sz;
};

static inline int ring_init(struct ring *r)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_NO_SQARRAY;
	r->fd = uuring_setup(8, &p);
	if (r->fd < 0)
		return r->fd;
	r->rings_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	r->sqes_sz = p.sq_entries * sizeof(struct io_uring_sqe);
	r->rings = uuring_mmap(NULL, r->rings_sz, PROT_READ | PROT_WRITE,
			       MAP_SHARED, r->fd, IORING_OFF_SQ_RING);
	r->sqes = uuring_mmap(NULL, r->sqes_sz, PROT_READ | PROT_WRITE,
			      MAP_SHARED, r->fd, IORING_OFF_SQES);
	if ((intptr_t)r->rings < 0 && (intptr_t)r->rings > -4096)
		return (int)(intptr_t)r->rings;
	if ((intptr_t)r->sqes < 0 && (intptr_t)r->sqes > -4096)
		return (int)(intptr_t)r->sqes;
	r->sq_tail = (_Atomic unsigned int *)(r->rings + p.sq_off.tail);
	r->cq_head = (_Atomic unsigned int *)(r->rings + p.cq_off.head);
	r->cq_tail = (_Atomic unsigned int *)(r->rings + p.cq_off.tail);
	r->sq_mask = *(unsigned int *)(r->rings + p.sq_off.ring_mask);
	r->cq_mask = *(unsigned int *)(r->rings + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(r->rings + p.cq_off.cqes);
	return 0;
}

#endif /* UURING_TESTS_API_RING_H */
