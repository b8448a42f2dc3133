// SPDX-License-Identifier: MIT
/*
 * task_work: a parked request that finished in another thread (io-wq, the
 * poller, a timer, the AIO reaper) is completed there, or handed to whoever
 * posts its ring's completions: on a DEFER_TASKRUN ring the submitter, when
 * it enters to wait (the kernel's local work list); on an SQPOLL ring the
 * SQPOLL thread.  Both hand-offs go through the ring's deferred queue
 * (defer_tw, an MPSC queue counted by tw_pending), which this file fills,
 * runs and, once the ring's last fd is gone, drains.
 */
#include <sched.h>
#include <stddef.h>
#include <unistd.h>

#include "core/config.h"
#include "core/iopoll.h"
#include "core/lockstat.h"
#include "core/registry.h"
#include "core/req.h"
#include "core/rsrc.h"
#include "core/task_work.h"
#include "core/tctx.h"
#include "core/types.h"
#include "exec/poller.h"
#include "exec/sqpoll.h"
#include "util/mpscq.h"

#ifdef UURING_TEST_HOOKS
/*
 * Test build only (libuuring_hooks, tests/test_tw_prio): the SQPOLL
 * thread runs no task_work while uu_test_tw_hold is set, so a test can
 * queue an item that issues and a completion behind it and then see
 * which runs first; the counters say when each was queued (a completion
 * counts once it is visible to the runner).  Relaxed:
 * they order nothing of the protocol.
 */
_Atomic bool uu_test_tw_hold;
_Atomic unsigned int uu_test_tw_done_queued, uu_test_tw_issue_queued;
#define TEST_TW_HELD()                                                       \
	atomic_load_explicit(&uu_test_tw_hold, memory_order_relaxed)
#define TEST_DONE_QUEUED()                                                   \
	atomic_fetch_add_explicit(&uu_test_tw_done_queued, 1,                 \
				  memory_order_relaxed)
#define TEST_ISSUE_QUEUED()                                                  \
	atomic_fetch_add_explicit(&uu_test_tw_issue_queued, 1,                \
				  memory_order_relaxed)
#else
#define TEST_TW_HELD() false
#define TEST_DONE_QUEUED() do { } while (0)
#define TEST_ISSUE_QUEUED() do { } while (0)
#endif

int uu_tw_reissue(struct uu_req *req)
{
	/*
	 * Called in the poller's process() under the poller's lock, which
	 * ranks below park_lock (cancel takes park_lock, then the poller's):
	 * only noted here; the poller commits it once it dropped its lock
	 * (uu_tw_reissue_commit), before it finishes the request.
	 */
	req->tw_reissue_req = true;
	return 0;
}

void uu_tw_reissue_commit(struct uu_req *req)
{
	req->tw_reissue_req = false;
	pthread_mutex_lock(&req->ring->park_lock);
	req->flags |= UU_REQ_TW_REISSUE;
	req->parked_on = UU_PARKED_TW;
	pthread_mutex_unlock(&req->ring->park_lock);
}

/*
 * DEFER_TASKRUN: a finished parked request (or a link continuation, see
 * tw_push) waits in the ring's task_work queue until the submitter enters
 * to wait; only then are its CQE posted and its chain continued, in the
 * submitter.  The sleeping submitter publishes how many items it needs
 * (tw_wait_nr) and is woken once that many are queued (the kernel's lazy
 * wake), not once per item; force wakes it at once.
 */
static void tw_exit_drain(struct uu_ring *r);

void uu_tw_queue(struct uu_req *req, bool force)
{
	struct uu_ring *r = req->ring;
	unsigned int n, want;

	/* once pushed, req (and its ring reference) belong to the submitter:
	 * hold our own reference for the wake-up below */
	atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
	uu_mpscq_push(&r->defer_tw, &req->tw_node);
	n = atomic_fetch_add_explicit(&r->tw_pending, 1, memory_order_seq_cst) + 1;
	if (n == 1) {
		if (r->setup_flags & IORING_SETUP_TASKRUN_FLAG)
			atomic_fetch_or_explicit(r->sq_flags, IORING_SQ_TASKRUN,
						 memory_order_release);
		uu_eventfd_signal_tw(r);
	}
	/*
	 * Dekker pair with the waiter in wait/cqwait.c: it stores tw_wait_nr
	 * then fences then reads tw_pending; we increment tw_pending
	 * (seq_cst) then fence then read tw_wait_nr.
	 */
	atomic_thread_fence(memory_order_seq_cst);
	want = atomic_load_explicit(&r->tw_wait_nr, memory_order_relaxed);
	if (want && (n >= want || force)) {
		/*
		 * Counted before the claim: the waiter clears tw_wait_nr then
		 * reads tw_wakers (seq_cst both sides), so either our CAS
		 * fails or it sees us and waits until our write is done (the
		 * release decrement), before its thread may close the efd.
		 */
		atomic_fetch_add_explicit(&r->tw_wakers, 1,
					  memory_order_seq_cst);
		if (atomic_compare_exchange_strong(&r->tw_wait_nr, &want, 0)) {
			int efd = atomic_load(&r->tw_waiter_efd);
			uint64_t one = 1;

			if (efd >= 0 && write(efd, &one, sizeof(one)) < 0) {
				/* non-blocking eventfd: cannot fill up */
			}
		}
		atomic_fetch_sub_explicit(&r->tw_wakers, 1,
					  memory_order_release);
	}
	/* seq_cst: pairs with uu_tw_ring_dead (set tw_dead, then read
	 * tw_pending): either it sees our item or we see the flag */
	if (atomic_load_explicit(&r->tw_dead, memory_order_seq_cst))
		tw_exit_drain(r);
	uu_ring_put(r);
}

/* a wakeup of an armed multishot POLL_ADD (exec/poller.c): the kernel
 * runs io_poll_task_func in the submitter, which polls the file again and
 * posts the CQE; a poll wakeup is not lazy for multishot requests */
void uu_tw_queue_poll_shot(struct uu_req *req)
{
	uu_tw_queue(req, true);
}

static void defer_push(struct uu_req *req)
{
	/*
	 * The lazy wake (count-based) is for readiness and AIO completions,
	 * as in the kernel; an io-wq completion wakes the waiter at once
	 * (the kernel queues it with a plain task_work add), so does an
	 * expired timeout (a timeout ends the wait whatever its count), and
	 * so does a request with a chain behind it (the kernel drops the
	 * lazy wake for linked requests): the rest of the chain is issued
	 * only when the submitter runs this item, so the CQEs it waits for
	 * may never be counted here otherwise.
	 */
	bool force = req->parked_on == UU_PARKED_IOWQ ||
		     req->parked_on == UU_PARKED_TIMEOUT || req->link ||
		     (req->flags & (UU_REQ_LINK | UU_REQ_HARDLINK));

	if (req->on_park_list && !(req->flags & UU_REQ_TW_REISSUE)) {
		/* cancels find nothing to do any more (and a synchronous
		 * cancel stops waiting for it: the kernel's returns once
		 * the completion is queued) */
		pthread_mutex_lock(&req->ring->park_lock);
		req->parked_on = UU_PARKED_DONE;
		pthread_mutex_unlock(&req->ring->park_lock);
	}
	uu_tw_queue(req, force);
}

void uu_req_finish_async(struct uu_req *req)
{
	if (req->iopoll_listed && uu_iopoll_complete(req))
		return; /* the application's GETEVENTS reaps it */
	if (req->ring->setup_flags & IORING_SETUP_DEFER_TASKRUN) {
		defer_push(req);
		return;
	}
	if (req->ring->sqd) {
		/* SQPOLL: the thread runs completions, a capped batch per
		 * loop (exec/sqpoll.c).  Once pushed, req belongs to that thread:
		 * read nothing from it afterwards. */
		struct uu_ring *r = req->ring;
		/* UURING_PRIO_TW: a completion that only posts (no chain to
		 * issue behind it) overtakes queued items that issue I/O */
		bool prio = unlikely(uu_knob(prio_tw)) && !req->link &&
			    !(req->flags & UU_REQ_TW_REISSUE);

		/* an io-wq completion counts for EVENTFD_ASYNC when its
		 * CQE is committed (uu_eventfd_signal_locked); release:
		 * before the SQ thread can see the request */
		if (uu_tctx.iowq_worker && r->evfd_async &&
		    !(req->flags & UU_REQ_CQE_SKIP))
			atomic_fetch_add_explicit(&r->evfd_async_due, 1,
						  memory_order_release);
		atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
		if (prio) {
			uu_mpscq_push(&r->prio_tw, &req->tw_node);
			/* before tw_pending: see tw_pop */
			atomic_fetch_add_explicit(&r->tw_prio_pending, 1,
						  memory_order_seq_cst);
		} else {
			uu_mpscq_push(&r->defer_tw, &req->tw_node);
		}
		atomic_fetch_add_explicit(&r->tw_pending, 1, memory_order_seq_cst);
		TEST_DONE_QUEUED();
		uu_sqd_wake(r->sqd);
		/* pairs with uu_tw_ring_dead, as in uu_tw_queue */
		if (atomic_load_explicit(&r->tw_dead, memory_order_seq_cst))
			tw_exit_drain(r);
		uu_ring_put(r);
		return;
	}
	uu_req_finish_now(req, false);
}

/*
 * Pops the oldest task_work item of r (there is one: tw_pending says so),
 * from the priority queue first.  A producer of a priority item counts it
 * in tw_prio_pending before tw_pending (both seq_cst): a runner that saw
 * tw_pending count an item and then reads tw_prio_pending 0 knows every
 * item counted is in defer_tw.  The runner is alone (tw_lock), so a
 * priority item counted is still there.
 */
static struct uu_req *tw_pop(struct uu_ring *r)
{
	struct uu_mpscq *q = &r->defer_tw;
	struct uu_mpsc_node *n;

	if (unlikely(atomic_load_explicit(&r->tw_prio_pending,
					  memory_order_seq_cst))) {
		atomic_fetch_sub_explicit(&r->tw_prio_pending, 1,
					  memory_order_relaxed);
		q = &r->prio_tw;
	}
	while (!(n = uu_mpscq_pop(q)))
		sched_yield(); /* a producer is mid-push */
	return (struct uu_req *)((char *)n - offsetof(struct uu_req, tw_node));
}

/*
 * UURING_ISSUE_VIA_TW, SQPOLL rings: a chain head is not issued where it
 * was submitted but queued for the SQPOLL thread's task_work run, as on
 * a kernel whose io_queue_sqe goes through io_req_task_queue (the setup
 * the priority list was measured on).  It runs as a link continuation does
 * (uu_req_tw_cont), holding the ring reference and the in-flight count
 * the caller (core/req.c) took.  Only the SQPOLL thread submits on such
 * a ring and it runs task_work right after its submission: no wake.
 */
void uu_tw_queue_issue(struct uu_req *req)
{
	struct uu_ring *r = req->ring;

	req->flags |= UU_REQ_TW_ISSUE;
	uu_mpscq_push(&r->defer_tw, &req->tw_node);
	atomic_fetch_add_explicit(&r->tw_pending, 1, memory_order_seq_cst);
	TEST_ISSUE_QUEUED();
	/* pairs with uu_tw_ring_dead, as in uu_tw_queue */
	if (atomic_load_explicit(&r->tw_dead, memory_order_seq_cst))
		tw_exit_drain(r);
}

static void tw_run_item(struct uu_ring *r, struct uu_req *req)
{
	/* the ring lost its last fd: nothing is issued any more (the
	 * kernel's tw.cancel, io_should_terminate_tw) */
	bool dead = atomic_load_explicit(&r->tw_dead, memory_order_relaxed);

	if (unlikely(req->flags & UU_REQ_TW_ISSUE)) {
		struct uu_exec s;

		uu_exec_init(&s, r, true);
		uu_req_tw_issue(&s, req, dead);
		uu_exec_end(&s);
		return;
	}
	if (req->opcode == IORING_OP_POLL_ADD && req->poll_tw) {
		/* an armed multishot poll's wakeup: no ring reference of
		 * its own (the parked request holds one) */
		if (uu_poll_tw_shot(req))
			uu_req_finish_now(req, true);
		return;
	}
	if (!(req->flags & UU_REQ_TW_CONT)) {
		if (dead && (req->flags & UU_REQ_TW_REISSUE)) {
			pthread_mutex_lock(&r->park_lock);
			uu_req_mark_cancelled(req);
			pthread_mutex_unlock(&r->park_lock);
		}
		uu_req_finish_now(req, true);
		return;
	}
	/* a link continuation queued by tw_push (core/req.c) */
	uu_req_tw_cont(r, req, dead);
}

static void tw_count_run(struct uu_ring *r, unsigned int items)
{
	if (!items)
		return;
	atomic_fetch_add_explicit(&r->st.tw_runs, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&r->st.tw_items, items, memory_order_relaxed);
}

/* SQPOLL: runs up to max queued items in the SQPOLL thread; returns how
 * many. */
unsigned int uu_tw_run_deferred(struct uu_ring *r, unsigned int max)
{
	unsigned int done = 0;
	/* UURING_ISSUE_VIA_TW: consecutive heads share one context */
	struct uu_exec issue;
	bool issuing = false;

	if (TEST_TW_HELD())
		return 0;
	uu_lock_cls(&r->tw_lock, UU_LOCK_TW);
	while (done < max &&
	       atomic_load_explicit(&r->tw_pending, memory_order_acquire)) {
		struct uu_req *req = tw_pop(r);

		if (atomic_fetch_sub_explicit(&r->tw_pending, 1,
					      memory_order_acq_rel) == 1 &&
		    (r->setup_flags & IORING_SETUP_TASKRUN_FLAG)) {
			atomic_fetch_and_explicit(r->sq_flags,
						  ~(uint32_t)IORING_SQ_TASKRUN,
						  memory_order_release);
			/* an item pushed meanwhile sets it again */
			if (atomic_load(&r->tw_pending))
				atomic_fetch_or_explicit(r->sq_flags,
							 IORING_SQ_TASKRUN,
							 memory_order_release);
		}
		if (req->flags & UU_REQ_TW_ISSUE) {
			if (!issuing)
				uu_exec_init(&issue, r, true);
			issuing = true;
			uu_req_tw_issue(&issue, req,
					atomic_load_explicit(&r->tw_dead,
							     memory_order_relaxed));
		} else {
			if (issuing)
				uu_exec_end(&issue);
			issuing = false;
			tw_run_item(r, req);
		}
		done++;
	}
	if (issuing)
		uu_exec_end(&issue);
	pthread_mutex_unlock(&r->tw_lock);
	tw_count_run(r, done);
	if (atomic_load_explicit(&r->tw_dead, memory_order_seq_cst))
		tw_exit_drain(r);
	return done;
}

/*
 * DEFER_TASKRUN: the submitter runs its task_work, as the kernel's
 * __io_run_local_work: each round takes the items queued when it starts
 * (at most max_events of them; the rest stay first in line), and another
 * round follows only while items are queued and fewer than min_events ran
 * in the last round.  Items queued by the items run (the next member of a
 * chain) belong to a later round.  Returns the number of items run.
 */
int uu_tw_run_local(struct uu_ring *r, int min_events, int max_events)
{
	bool flag = r->setup_flags & IORING_SETUP_TASKRUN_FLAG;
	int ret = 0, total = 0;

	if (!atomic_load_explicit(&r->tw_pending, memory_order_acquire))
		return 0;
	if (max_events < 1)
		max_events = 1;
	uu_lock_cls(&r->tw_lock, UU_LOCK_TW);
	if (flag)
		atomic_fetch_and_explicit(r->sq_flags,
					  ~(uint32_t)IORING_SQ_TASKRUN,
					  memory_order_release);
	for (;;) {
		unsigned int queued;
		int lim;

		min_events -= ret;
		queued = atomic_load_explicit(&r->tw_pending,
					      memory_order_acquire);
		lim = queued < (unsigned int)max_events ? (int)queued :
							 max_events;
		for (ret = 0; ret < lim; ret++) {
			struct uu_req *req = tw_pop(r);

			atomic_fetch_sub_explicit(&r->tw_pending, 1,
						  memory_order_acq_rel);
			tw_run_item(r, req);
		}
		total += ret;
		if (!atomic_load_explicit(&r->tw_pending, memory_order_acquire))
			break;
		if (ret < min_events)
			continue;
		if (flag)
			atomic_fetch_or_explicit(r->sq_flags, IORING_SQ_TASKRUN,
						 memory_order_release);
		break;
	}
	pthread_mutex_unlock(&r->tw_lock);
	tw_count_run(r, (unsigned int)total);
	/* the ring died meanwhile: a drain that found the lock taken left
	 * its items to us */
	if (atomic_load_explicit(&r->tw_dead, memory_order_seq_cst))
		tw_exit_drain(r);
	return ret;
}

/*
 * The ring's last fd is gone (the kernel's io_ring_exit_work, which moves
 * the local task_work to a fallback worker): nothing will enter to run the
 * queue, so whoever queues an item from now on runs it, and the queue is
 * run here once.  Items already running elsewhere hold tw_lock: the
 * drain then leaves the queue to that runner, which drains again when it
 * lets go of the lock.
 */
static void tw_exit_drain(struct uu_ring *r)
{
	for (;;) {
		if (pthread_mutex_trylock(&r->tw_lock))
			return;
		while (atomic_load_explicit(&r->tw_pending,
					    memory_order_acquire)) {
			struct uu_req *req = tw_pop(r);

			atomic_fetch_sub_explicit(&r->tw_pending, 1,
						  memory_order_acq_rel);
			tw_run_item(r, req);
		}
		pthread_mutex_unlock(&r->tw_lock);
		/* an item queued after our last look whose producer found
		 * the lock taken: ours to run */
		if (!atomic_load_explicit(&r->tw_pending, memory_order_seq_cst))
			return;
	}
}

void uu_tw_ring_dead(struct uu_ring *r)
{
	if (!(r->setup_flags & IORING_SETUP_DEFER_TASKRUN) && !r->sqd)
		return;
	atomic_store_explicit(&r->tw_dead, true, memory_order_seq_cst);
	tw_exit_drain(r);
}
