/* SPDX-License-Identifier: MIT */
/*
 * Intrusive multi-producer / single-consumer FIFO (Vyukov's algorithm with
 * a stub node).  Producers never block and never take a lock: push is one
 * exchange of the tail plus one store of the predecessor's next pointer.
 * The consumer may see the queue momentarily "in flight" (a producer
 * between its exchange and its store): pop then returns NULL although the
 * queue is not empty, and the caller retries.
 *
 * Ordering: the producer's store-release of prev->next pairs with the
 * consumer's load-acquire of head->next, so a node's contents written
 * before push are visible to the consumer that pops it.
 */
#ifndef UURING_MPSCQ_H
#define UURING_MPSCQ_H

#include <stdatomic.h>
#include <stddef.h>

struct uu_mpsc_node {
	_Atomic(struct uu_mpsc_node *) next;
};

struct uu_mpscq {
	_Atomic(struct uu_mpsc_node *) tail; /* producers */
	struct uu_mpsc_node *head;           /* consumer only */
	struct uu_mpsc_node stub;
};

static inline void uu_mpscq_init(struct uu_mpscq *q)
{
	atomic_init(&q->stub.next, NULL);
	atomic_init(&q->tail, &q->stub);
	q->head = &q->stub;
}

static inline void uu_mpscq_push(struct uu_mpscq *q, struct uu_mpsc_node *n)
{
	struct uu_mpsc_node *prev;

	atomic_store_explicit(&n->next, NULL, memory_order_relaxed);
	prev = atomic_exchange_explicit(&q->tail, n, memory_order_acq_rel);
	/* release: pairs with the acquire load of next in pop */
	atomic_store_explicit(&prev->next, n, memory_order_release);
}

static inline struct uu_mpsc_node *uu_mpscq_pop(struct uu_mpscq *q)
{
	struct uu_mpsc_node *head = q->head;
	struct uu_mpsc_node *next =
		atomic_load_explicit(&head->next, memory_order_acquire);

	if (head == &q->stub) {
		if (!next)
			return NULL;
		q->head = next;
		head = next;
		next = atomic_load_explicit(&head->next, memory_order_acquire);
	}
	if (next) {
		q->head = next;
		return head;
	}
	if (head != atomic_load_explicit(&q->tail, memory_order_acquire))
		return NULL; /* a producer is between exchange and store */
	uu_mpscq_push(q, &q->stub);
	next = atomic_load_explicit(&head->next, memory_order_acquire);
	if (next) {
		q->head = next;
		return head;
	}
	return NULL;
}

#endif
