/* SPDX-License-Identifier: MIT */
/*
 * The engine's shared types (the kernel's io_uring_types.h): the ring
 * (struct uu_ring), the request (struct uu_req), the opcode table entry,
 * issue flags and park codes, and the few inline helpers every part uses.
 * Each mechanism and opcode family declares its calls, and its per-op
 * state, in its own header; a file includes the headers of what it uses.
 */
#ifndef UURING_CORE_TYPES_H
#define UURING_CORE_TYPES_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "abi/io_uring_abi.h"
#include "core/lockstat.h"
#include "ops/opstate.h"
#include "ring/mem.h"
#include "util/mpscq.h"

#define UU_EXPORT __attribute__((visibility("default")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define UU_MAX_ENTRIES 32768U    /* largest SQ without CLAMP */
#define UU_MAX_CQ_ENTRIES 65536U /* largest CQ without CLAMP */
#define UU_RINGFD_REG_MAX 16U    /* registered ring fds per thread */
#define UU_UIO_MAXIOV 1024U
#define UU_MAX_RW_COUNT 0x7ffff000L
/* The opcode range of the kernel level we emulate (6.18: up to PIPE). */
#define UU_OP_LAST (IORING_OP_PIPE + 1)
/* Its register opcode range (6.18: up to QUERY). */
#define UU_REGISTER_LAST (IORING_REGISTER_QUERY + 1)

/* Setup flags this engine implements (see core/setup.c). */
#define UU_SETUP_SUPPORTED                                                    \
	(IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP | IORING_SETUP_R_DISABLED | \
	 IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SQE128 | IORING_SETUP_CQE32 | \
	 IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_NO_MMAP |                  \
	 IORING_SETUP_NO_SQARRAY | IORING_SETUP_CQE_MIXED |                  \
	 IORING_SETUP_REGISTERED_FD_ONLY | IORING_SETUP_COOP_TASKRUN |          \
	 IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_DEFER_TASKRUN |              \
	 IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF | IORING_SETUP_ATTACH_WQ |  \
	 IORING_SETUP_IOPOLL | IORING_SETUP_HYBRID_IOPOLL)

/*
 * Features advertised: each one has a test of its semantics in tests/.
 */
#define UU_FEATURES                                                         \
	(IORING_FEAT_SINGLE_MMAP | IORING_FEAT_NODROP |                     \
	 IORING_FEAT_SUBMIT_STABLE | IORING_FEAT_RW_CUR_POS |               \
	 IORING_FEAT_EXT_ARG | IORING_FEAT_CQE_SKIP |                       \
	 IORING_FEAT_LINKED_FILE | IORING_FEAT_REG_REG_RING |               \
	 IORING_FEAT_MIN_TIMEOUT | IORING_FEAT_FAST_POLL |                  \
	 IORING_FEAT_NATIVE_WORKERS | IORING_FEAT_SQPOLL_NONFIXED |         \
	 IORING_FEAT_RSRC_TAGS | IORING_FEAT_CUR_PERSONALITY |            \
	 IORING_FEAT_POLL_32BITS | IORING_FEAT_NO_IOWAIT |                 \
	 IORING_FEAT_RECVSEND_BUNDLE | IORING_FEAT_RW_ATTR)

/* IORING_ENTER_* flags enter accepts (core/enter.c), and SQE flags a
 * submission accepts (core/submit.c); REGISTER_QUERY reports both */
#define UU_ENTER_FLAGS                                                      \
	(IORING_ENTER_GETEVENTS | IORING_ENTER_SQ_WAKEUP |                  \
	 IORING_ENTER_SQ_WAIT | IORING_ENTER_EXT_ARG |                      \
	 IORING_ENTER_REGISTERED_RING | IORING_ENTER_ABS_TIMER |            \
	 IORING_ENTER_EXT_ARG_REG | IORING_ENTER_NO_IOWAIT)
#define UU_SQE_FLAGS                                                        \
	(IOSQE_FIXED_FILE | IOSQE_IO_DRAIN | IOSQE_IO_LINK |                \
	 IOSQE_IO_HARDLINK | IOSQE_ASYNC | IOSQE_BUFFER_SELECT |            \
	 IOSQE_CQE_SKIP_SUCCESS)

struct uu_ring;
struct uu_req;
struct uu_sqd;

/* A timer of the timer thread (exec/timer.c). */
struct uu_timer {
	int64_t expires;   /* absolute ns on its clock */
	int clock;         /* UU_CLOCK_* */
	int heap_idx;      /* -1 when not armed */
	void (*fn)(struct uu_timer *t); /* runs in the timer thread */
};
enum { UU_CLOCK_MONO, UU_CLOCK_BOOT, UU_CLOCK_REAL };

/* One entry of the CQ overflow backlog (T14). */
struct uu_ocqe {
	struct uu_ocqe *next;
	uint64_t user_data;
	int32_t res;
	uint32_t flags;
	uint64_t big[2];         /* CQE32 extra words */
};

/*
 * The part of a ring's engine state that lives in shared memory, so that
 * a forked child and its parent, each with its own engine, can use one
 * ring (xproc/xproc.c, docs/architecture.md "fork").  Its own MAP_SHARED
 * page per ring; the mutexes are PTHREAD_PROCESS_SHARED.
 */
enum { READY_CLEAR = 0, READY_SENT = 1, READY_SENDING = 2 };

struct uu_xshared {
	pthread_mutex_t uring_lock;      /* SQ consumption (any process) */
	pthread_mutex_t completion_lock; /* CQ posting (any process) */
	_Atomic pid_t submitter_tid;     /* SINGLE_ISSUER owner (0 = none
					  * yet): a thread id, unique across
					  * the processes */
	atomic_bool disabled;            /* R_DISABLED until ENABLE_RINGS */
	/* the ring fd's readiness byte (core/ring.c): the socket is one
	 * for all processes, so is the flag that says a byte is in it */
	_Atomic uint32_t signalled;      /* READY_* */
	atomic_bool shared;              /* a second process adopted the
					  * ring: cross-process wakeups on */
	/* the request journal (xproc/xlife.c), mapped at the first fork
	 * that inherits the ring, at one address in every process */
	struct uu_xjournal *_Atomic journal;
	atomic_bool journal_tried;       /* at the ring's first fork only */
	atomic_uint xsleepers;           /* waiters polling xwake_fd (all
					  * processes); Dekker pair with the
					  * commit's fence (core/cq.c) */
};

/* A thread sleeping in enter(GETEVENTS); see wait/cqwait.c. */
struct uu_waiter {
	struct uu_waiter *next, *prev;
	uint32_t target;       /* wake when cq tail - target >= 0 */
	int efd;               /* this thread's wake eventfd */
	atomic_bool woken;     /* a poster has signalled efd */
	bool any_new;          /* min_wait expired: any new CQE wakes */
	unsigned int nr_timeouts; /* ring's cq_timeouts when the wait
				   * began: a timeout expiring meanwhile
				   * ends the wait (the kernel's
				   * io_should_wake) */
	struct uu_ring *ring;  /* registered on (holds a reference), or NULL */
	void *frame;           /* stack frame of the wait that registered it */
};

struct uu_ring {
	/* ---- identity and life ---- */
	atomic_int refs;         /* registry + each running call */
	atomic_bool dead;        /* last fd closed; no new lookups */
	ino_t ring_ino;          /* st_ino of the application's end */
	dev_t ring_dev;
	int peer_fd;             /* engine's end of the socketpair */
	ino_t peer_ino;
	int app_fd_hint;         /* an fd number known to be this ring */
	int owned_app_fd;        /* REGISTERED_FD_ONLY: the engine holds the
				  * ring fd (-1 otherwise) */
	atomic_int regfd_pins;   /* RING_FDS slots holding the ring: like the
				  * kernel's file reference in a registered
				  * slot, they keep it alive past the last
				  * close of its fds */
	pid_t owner_pid;         /* process that created the ring */
	atomic_bool stats_reported; /* UURING_STATS line written */
	atomic_uint fork_gen;    /* uu_fork_generation at creation, or at
				  * adoption by a forked child */
	struct uu_xshared *xs;   /* shared with forked children */
	atomic_int xwake_fd;     /* eventfd made at the first fork (-1
				  * before): cross-process wakeups of
				  * waiters (wait/cqwait.c) */
	ino_t xwake_ino;

	/* ---- configuration (immutable after setup) ---- */
	unsigned int setup_flags;
	unsigned int sq_mask, cq_mask; /* mem's entry counts - 1 */
	unsigned int sqe_shift;  /* 6, or 7 with SQE128 */
	unsigned int cqe_shift;  /* 4, or 5 with CQE32 */

	/* ---- memory ---- */
	/* the rings and SQEs in use, with their sizes, entry counts and
	 * whether the engine mapped them (ring/mem.h); replaced as a whole
	 * by REGISTER_RESIZE_RINGS (core/resize.c) */
	struct uu_ring_mem mem;
	bool user_mem;           /* NO_MMAP: the application's memory */
	/* memory REGISTER_RESIZE_RINGS replaced (core/resize.c): kept
	 * mapped until the ring is freed, as threads that read the rings
	 * without the CQ lock (a ring fd's readiness) may still look */
	struct uu_ring_mem *retired_mem;

	_Atomic uint32_t *sq_head, *sq_tail, *sq_flags, *sq_dropped;
	uint32_t *sq_array;      /* NULL with NO_SQARRAY */
	_Atomic uint32_t *cq_head, *cq_tail, *cq_overflow, *cq_flags;
	unsigned char *cqes;

	/* ---- submission side (uring_lock) ---- */
	pthread_mutex_t *uring_lock;   /* &xs->uring_lock */
	uint32_t sq_cached_head;
	bool drain_disabled;     /* a CQE_SKIP_SUCCESS was seen */
	bool drain_next;         /* a chain member had IO_DRAIN: the next
				  * request or chain after it drains too */
	atomic_bool *disabled;   /* &xs->disabled */
	/*
	 * IORING_REGISTER_RESTRICTIONS: registered while the ring is
	 * disabled, enforced from ENABLE_RINGS on.  restricted is written
	 * before the release store that clears disabled, and read after
	 * the acquire load of disabled that every submission does first.
	 */
	struct {
		uint64_t register_op;      /* bit per IORING_REGISTER_* */
		uint64_t sqe_op[2];        /* bit per IORING_OP_* */
		uint8_t sqe_flags_allowed;
		uint8_t sqe_flags_required;
		bool registered;
	} restr;
	bool restricted;
	_Atomic pid_t *submitter_tid; /* &xs->submitter_tid */

	/* ---- completion side (completion_lock) ---- */
	pthread_mutex_t *completion_lock; /* &xs->completion_lock */
	uint32_t cq_cached_tail;       /* next CQE slot; published at commit */
	struct uu_ocqe *ovf_head, *ovf_tail;
	atomic_bool ovf_pending;       /* backlog non-empty */
	bool ovf_wake;                 /* the backlog became non-empty since
					* the last commit: wake waiters even if
					* the tail did not move (completion_lock) */
	atomic_bool cq_dropped;        /* a CQE was lost: next wait -EBADR */

	/* ---- waiters ---- */
	pthread_mutex_t wait_lock;
	struct uu_waiter *waiters;
	atomic_uint nr_sleepers; /* Dekker pair with the CQ tail, see cq.c */

	/* ---- parked requests and drain (core/req.c) ---- */
	atomic_int inflight;           /* parked: in io-wq or the poller */
	/* parked requests taken off the park list whose CQEs this process
	 * has not posted yet (a REGISTER_SYNC_CANCEL waits for them) */
	atomic_uint finishing;
	atomic_bool drain_active;      /* defer list non-empty */
	pthread_mutex_t drain_lock;
	struct uu_req *defer_head, *defer_tail;
	bool defer_running, defer_recheck, defer_after_drain;
	struct uu_iowq *wq_default;    /* pool for punts from the poller */

	/* ---- parked requests (cancellation) and timeouts ---- */
	pthread_mutex_t park_lock;
	struct uu_req *parked;         /* all parked requests */
	struct uu_req *tmo_head, *tmo_tail; /* TIMEOUT list, completion_lock */
	struct uu_req *lt_head;        /* armed LINK_TIMEOUTs, completion_lock */
	uint32_t cq_produced;          /* CQEs produced (completion_lock) */
	atomic_uint cq_timeouts;       /* expired timeouts (count rule) */
	uint32_t cq_last_tm_flush;
	bool off_timeout_used;

	/* ---- DEFER_TASKRUN: completions wait for the submitter ---- */
	struct uu_mpscq defer_tw;      /* finished parked requests */
	atomic_uint tw_pending;        /* items in defer_tw */
	atomic_uint tw_wait_nr;        /* lazy wake: items the sleeping
					* submitter needs (0: not sleeping) */
	atomic_int tw_waiter_efd;      /* the submitter's wake eventfd */
	atomic_uint tw_wakers;         /* uu_tw_queue calls that may write
					* tw_waiter_efd: the waiter, leaving,
					* waits for none (wait/cqwait.c) */
	pthread_mutex_t tw_lock;       /* the queue's one consumer at a time */
	atomic_bool tw_dead;           /* last fd closed: whoever queues an
					* item runs the queue (uu_tw_ring_dead) */
	/* UURING_PRIO_TW (SQPOLL): completion-only items, run before
	 * defer_tw's; counted in tw_prio_pending and in tw_pending too */
	struct uu_mpscq prio_tw;
	atomic_uint tw_prio_pending;

	/* ---- registered resources (core/rsrc.c) ---- */
	pthread_mutex_t files_lock;    /* the table pointer, for lookups */
	struct uu_fixed_file {
		int fd;                /* engine dup, -1 = empty */
		uint64_t tag;
		/* tagged slots: the tag CQE waits for the last request
		 * that resolved the file (FEAT_RSRC_TAGS) */
		struct uu_file_tag *tagref;
	} *files;
	unsigned int nr_files, alloc_start, alloc_end, alloc_hint;
	atomic_int evfd;               /* CQ eventfd (engine dup) or -1 */
	/* bumped before each signal of evfd: a multishot poll on that
	 * eventfd tells the ring's own wakeups (EPOLL_URING_WAKE) apart */
	atomic_uint evfd_signals;
	int clockid;                   /* REGISTER_CLOCK: wait timeouts */
	/* REGISTER_MEM_REGION (core/memregion.c): the ring's one parameter
	 * region, set once under uring_lock; wait_args_size is non-zero
	 * once it holds the registered wait arguments */
	void *param_region;            /* user memory, or param_owned */
	size_t param_region_size;
	bool param_owned;              /* engine-allocated (mmap offset) */
	size_t wait_args_size;
	bool evfd_async;
	uint32_t evfd_last_tail;       /* completion_lock */
	/* SQPOLL + EVENTFD_ASYNC: io-wq completions handed to the SQ
	 * thread whose CQEs are not yet committed (uu_req_finish_async) */
	atomic_uint evfd_async_due;

	/* ---- IOPOLL without SQPOLL (core/iopoll.c) ---- */
	bool syscall_iopoll;           /* completions are reaped by enter */
	pthread_mutex_t iopoll_lock;   /* the list and iopoll_dead */
	struct uu_req *iopoll_head, *iopoll_tail; /* issued, in issue order */
	bool iopoll_dead;              /* no fd left: finish at completion */
	_Atomic uint32_t iopoll_seq;   /* futex: bumped by each completion */
	atomic_uint iopoll_sleepers;   /* reapers waiting on iopoll_seq */

	/* ---- SQPOLL (exec/sqpoll.c) ---- */
	struct uu_sqd *sqd;
	_Atomic uint32_t sq_space_seq; /* futex: SQ_WAIT sleepers */
	atomic_uint sq_space_waiters;  /* threads in uu_sqpoll_wait_sq */

	/* ---- readiness of the ring fd ---- */
	/* where the readiness byte is (core/ring.c): READY_CLEAR,
	 * READY_SENDING (a poster is in send()), READY_SENT */
	_Atomic uint32_t *signalled;
	/* the fd is watched edge-triggered (epoll EPOLLET under uuring run,
	 * or UURING_RING_FD_EDGES): every commit is a new edge */
	atomic_bool edge_watch;
	atomic_uint edge_extra;        /* bytes sent for edges since a trim */

	/* ---- statistics (relaxed atomics) ---- */
	struct {
		atomic_ullong enter_calls, sqes_consumed, sqes_dropped;
		atomic_ullong cqes_posted, cqes_overflowed, cqes_lost;
		atomic_ullong route_inline, route_iowq, route_poll, route_sqpoll;
		atomic_ullong waits, wakeups, spurious_wakeups;
		atomic_ullong readiness_signals, readiness_drains;
		atomic_ullong tw_runs, tw_items;
		atomic_ullong route_aio;
		atomic_ullong route_nullb;
	} st;

	/* ---- buffers (core/rsrc_buf.c, ops/kbuf.c; see core/buffers.h) ---- */
	struct uu_rbuf_node **bufs;    /* registered buffers: uring_lock and
					* files_lock to change, files_lock
					* to look up */
	unsigned int nr_bufs;
	struct uu_kbuf_ctx *_Atomic kbuf; /* provided buffers, created at the
					   * first PROVIDE/PBUF_RING */
	/* ---- end of buffers ---- */

	/* ---- personalities (core/pers.c), under pers_lock ---- */
	pthread_mutex_t pers_lock;
	struct uu_cred **pers;         /* by id, allocated at the first */
	uint32_t pers_next, pers_count;
};

#define uu_stat_inc(r, f) atomic_fetch_add_explicit(&(r)->st.f, 1, memory_order_relaxed)
#define uu_stat_add(r, f, n) atomic_fetch_add_explicit(&(r)->st.f, (n), memory_order_relaxed)
/*
 * A counter whose every writer holds the same lock (cqes_posted: the CQ
 * lock): a plain load and store, no locked read-modify-write on a hot
 * path; readers elsewhere still see whole values (relaxed atomics).
 */
#define uu_stat_inc_locked(r, f)                                            \
	atomic_store_explicit(&(r)->st.f,                                   \
			      atomic_load_explicit(&(r)->st.f,              \
						   memory_order_relaxed) + 1,   \
			      memory_order_relaxed)

/* ---- request ---- */

/* Request flags (private). */
enum {
	UU_REQ_LINK = 1u << 0,       /* soft link to the next */
	UU_REQ_HARDLINK = 1u << 1,
	UU_REQ_FAIL = 1u << 2,       /* failed: breaks a soft chain */
	UU_REQ_CQE_SKIP = 1u << 3,
	UU_REQ_SKIP_LINK_CQES = 1u << 4,
	UU_REQ_FIXED_FILE = 1u << 5,
	UU_REQ_ASYNC = 1u << 6,
	UU_REQ_DRAIN = 1u << 7,
	UU_REQ_BUFFER_SELECT = 1u << 8,
	UU_REQ_SHORT = 1u << 9,      /* rw moved less than asked: fails links */
	UU_REQ_CANCELED_UNUSED = 1u << 10, /* see uu_req.cancel_mark */
	UU_REQ_CQE_POSTED = 1u << 11, /* its CQE was already posted */
	UU_REQ_RES_NOFAIL = 1u << 12, /* a negative res that does not fail
				       * links (TIMEOUT_ETIME_SUCCESS) */
	UU_REQ_ARM_LTIMEOUT = 1u << 13, /* next in chain is a LINK_TIMEOUT */
	UU_REQ_NOT_PARKED = 1u << 14, /* finished late but never parked */
	UU_REQ_PREPPED = 1u << 15,   /* prep succeeded: cleanup applies */
	UU_REQ_TW_REISSUE = 1u << 16, /* ready: to be issued again by the
				       * task_work runner (uu_tw_reissue) */
	UU_REQ_TW_CONT = 1u << 17,   /* DEFER_TASKRUN task_work item: a link
				      * continuation to issue (or, with
				      * tw_cancel, a chain rest to cancel) */
	UU_REQ_TW_ISSUE = 1u << 18,  /* UURING_ISSUE_VIA_TW: a chain head
				      * the SQPOLL thread's task_work issues */
};

#define UU_INLINE_IOVS 8

/*
 * The per-op area of struct uu_req (the kernel's io_kiocb cmd and
 * io_kiocb_to_cmd): each opcode family declares its state as a struct in
 * its own header and reaches it only through uu_req_cmd(req, that
 * struct), which fails the build if the struct outgrows the area.  A
 * family whose state is larger keeps the rest in a block of its own
 * that the area points to (ops/net.c's struct uu_netmsg), so the request
 * does not grow to the largest family.
 */
#define UU_REQ_CMD_SIZE 168
#define uu_req_cmd(req, T)						\
	((T *)(void *)((req)->cmd + 0 * sizeof(struct {			\
		_Static_assert(sizeof(T) <= UU_REQ_CMD_SIZE &&		\
			       _Alignof(T) <= _Alignof(uint64_t),	\
			       #T " outgrows the request's per-op area"); \
		int ok; })))
/* the same for a family named by its short name: struct uu_<fam>_cmd */
#define uu_cmd(req, fam) uu_req_cmd(req, struct uu_##fam##_cmd)

struct uu_req {
	struct uu_req *link;      /* next in the chain */
	unsigned int xj;          /* journal slot + 1 (xproc/xlife.c), 0:
				   * none */
	struct uu_req *tw_next;   /* deferred continuation queue */
	bool tw_cancel;           /* continuation = cancel this chain rest */
	bool link_failed;         /* completed as a failed chain's member
				   * (the kernel's io_fail_links, which
				   * calls no op's ->fail) */
	bool fd_owned;            /* fd is the engine's dup (T4) */
	int fd;                   /* the file, for ops that need one */
	int sqe_fd;               /* the number the SQE named, -1 for a
				   * fixed file: fd may become a dup (T4),
				   * which the registry does not know as a
				   * ring's (ops/rw.c ring_file_rw) */
	struct uu_req *defer_next; /* ring's drain defer list */
	struct uu_iowq *wq;       /* io-wq pool it was punted to (ref) */
	struct uu_req *wq_next;   /* io-wq work list, or before that the
				   * exec's list of AIO submissions */
	struct uu_req *poll_next, *poll_prev; /* readiness engine waiters */
	struct uu_pollfile *pf;   /* readiness engine file it waits on */
	struct uu_file_tag *file_tag; /* tagged fixed file in use (ref) */
	struct uu_req *ud_next, **ud_pprev; /* armed POLL_ADD by user_data */
	bool tw_reissue_req;      /* uu_tw_reissue noted, not committed */
	bool cq_uncommitted;      /* the poller posted shots, not committed
				   * (core/cq_post.c uu_req_post_cqe) */
	uint32_t park_events;     /* EPOLL* a parked read/write waits for */
	bool poll_fresh;          /* added since the file's last edge */
	bool requeue;             /* parked at a multishot receive's retry
				   * cap with data queued: the poller
				   * rechecks its file (uu_net_requeue) */
	bool poll_tw;             /* POLL_ADD: a wakeup waits to be run
				   * (uu_poll_tw_shot) as the kernel's
				   * task_work: queued for a DEFER_TASKRUN
				   * submitter, or held by the batch that
				   * armed it (poll_hold); P.lock */
	bool poll_hold;           /* POLL_ADD armed by a batch still running
				   * (not DEFER_TASKRUN): its wakeups wait
				   * for that batch's end; P.lock */
	struct uu_req *hold_next; /* the arming context's hold list */
	uint8_t poll_state;       /* UU_POLLST_*, under the poller's lock */
	uint8_t park;             /* UU_ISSUE_*: set by uu_park() */
	struct uu_mpsc_node tw_node; /* ring's deferred task_work queue */
	struct uu_req *park_prev, *park_next; /* ring's list of parked reqs */
	uint8_t parked_on;        /* UU_PARKED_*: where it waits */
	bool wq_running;          /* an io-wq worker took it */
	bool on_park_list;        /* counted in inflight, holds a ring ref */
	bool wq_unbound;          /* io-wq class */
	/* a cancel found it (UU_REQ_CANCELED's meaning): written by the
	 * canceller under park_lock while a worker may run the request, so
	 * not in flags, which the worker updates without a lock (T7) */
	atomic_bool cancel_mark;
	pid_t submit_tid;         /* the submitting thread (signals, T9) */
	struct uu_cred *cred;     /* SQE personality's ids (ref), or NULL */
	struct uu_req *late_next; /* exec's list of reqs finished late */
	bool late_inline;         /* finished at its issue after all (a poll
				   * with nothing to wait on): not task_work
				   * on a DEFER_TASKRUN ring */
	struct uu_req *iopoll_next; /* ring's IOPOLL list (iopoll_lock) */
	bool iopoll_listed;       /* on that list: enter reaps it */
	atomic_bool iopoll_done;  /* res is final (release/acquire) */
	struct uu_ring *ring;
	unsigned int flags;       /* UU_REQ_* */
	uint8_t opcode;
	int32_t res;
	uint32_t cflags;
	uint64_t user_data;
	uint64_t big[2];          /* CQE32 extra words */
	struct io_uring_sqe sqe;  /* private copy (first 64 bytes) */
	unsigned char sqe_ext[64]; /* second half of an SQE128 */
	/* per-op state, filled by prep: one area each opcode family views
	 * as its own struct through uu_req_cmd() */
	_Alignas(uint64_t) unsigned char cmd[UU_REQ_CMD_SIZE];

	/* ---- buffers (core/rsrc_buf.c, ops/kbuf.c; see core/buffers.h).
	 * Set by the preps of the ops that use them, not by init_req. ---- */
	struct uu_rbuf_node *buf_node; /* *_FIXED: registered buffer held */
	struct {                       /* IOSQE_BUFFER_SELECT (valid with
					* UU_REQ_BUFFER_SELECT) */
		uint64_t addr;         /* the selected buffer */
		uint32_t len;          /* its length as used */
		uint32_t want;         /* length asked for, 0 = any */
		uint16_t bgid, bid;
		uint8_t state;         /* UU_KB_* */
		bool committed;        /* ring head already moved */
		bool more;             /* IOU_PBUF_RING_INC: not used up */
		bool locked;           /* holds the group lock (uncommitted) */
		void *lbuf;            /* legacy: the buffer taken off the list */
	} kb;
	/* ---- end of buffers ---- */
};

/* ---- opcode table (core/opdef.c) ---- */
struct uu_opdef {
	const char *name;
	bool supported;       /* implemented; listed by REGISTER_PROBE */
	bool needs_file;
	bool ioprio;          /* sqe->ioprio is meaningful */
	bool buffer_select;   /* IOSQE_BUFFER_SELECT allowed */
	bool rw_state;        /* uses req->rw (inline iovec fix-up on copy) */
	bool quick;           /* never blocks: io-wq runs these in batches */
	bool iopoll;          /* allowed on an IOPOLL ring (else -EINVAL) */
	bool iopoll_queue;    /* on an IOPOLL ring, completes by reaping */
	bool errors_keep_links; /* an error of the op itself does not fail
				 * the link chain (the kernel's op does not
				 * req_set_fail); a bad file (-EBADF) does */
	int (*prep)(struct uu_req *req);
	/* returns the CQE res, or a UU_ISSUE_PARK_ and UU_ISSUE_PUNT code */
	int (*issue)(struct uu_req *req, unsigned int issue_flags);
	void (*cleanup)(struct uu_req *req);
};
extern const struct uu_opdef uu_opdefs[IORING_OP_LAST];

/* issue_flags */
#define UU_ISSUE_F_WORKER 1u /* in an io-wq worker: blocking is allowed */
#define UU_ISSUE_F_CONT 2u   /* a link continuation (core-internal) */
/* inside an execution context of the request's ring (core/req.c
 * issue_one): an extra CQE joins its batch (core/cq_post.h) */
#define UU_ISSUE_F_BATCH 4u
/* on the readiness engine's thread, after a wakeup (exec/poller.c) */
#define UU_ISSUE_F_POLLER 8u

/*
 * An issue function that would block parks the request instead of
 * returning a result: return uu_park(req, how).  (Any int is a valid CQE
 * result — a NOP can inject INT_MIN — so parking has its own channel.)
 */
enum {
	UU_ISSUE_DONE = 0,
	UU_ISSUE_PARK_POLLIN,  /* wait for readability, then retry */
	UU_ISSUE_PARK_POLLOUT, /* wait for writability, then retry */
	UU_ISSUE_PUNT,         /* run blocking in io-wq (bounded) */
	UU_ISSUE_PUNT_UNBOUND, /* io-wq, unbounded class */
	UU_ISSUE_PARK_POLLREQ, /* POLL_ADD: wait on the poller */
	UU_ISSUE_PARK_TIMEOUT, /* TIMEOUT: wait on the timer thread */
	UU_ISSUE_PARK_AIO_READ,  /* O_DIRECT read through Linux AIO */
	UU_ISSUE_PARK_AIO_WRITE, /* O_DIRECT write through Linux AIO */
	UU_ISSUE_PARK_TW,      /* done (req->res set): complete through
				* task_work, after the batch (NOP_TW) */
	UU_ISSUE_PARK_DEV,     /* to a device of the block-queue model
				* (dev/blkq.h: uu_blkq_prepare first) */
	UU_ISSUE_PARK_CMD,     /* URING_CMD kept by its file type's handler
				* (ops/uring_cmd.h) */
	UU_ISSUE_PARK_REQUEUE, /* a multishot receive at its retry cap,
				* issued inline: issued again after the
				* batch's other work (IOU_REQUEUE) */
};

/* where a parked request waits (req->parked_on) */
enum { UU_PARKED_NONE, UU_PARKED_IOWQ, UU_PARKED_POLL, UU_PARKED_TIMEOUT,
       UU_PARKED_AIO, UU_PARKED_TW,
       UU_PARKED_DEV, /* on a device of the block-queue model (dev/) */
       UU_PARKED_CMD, /* a URING_CMD its handler holds (ops/uring_cmd.c) */
       UU_PARKED_DONE /* finished: its completion waits in the DEFER_TASKRUN
		       * task_work queue (nothing left to cancel) */ };

static inline int uu_park(struct uu_req *req, int how)
{
	req->park = (uint8_t)how;
	return 0;
}

/*
 * The ring's SQ and CQ locks (uring_lock, completion_lock) are robust
 * process-shared mutexes: a process killed while it holds one (SIGKILL,
 * _exit from a signal handler) leaves it to the next locker with
 * EOWNERDEAD instead of locked forever.  What they guard stays usable:
 * every holder re-reads the shared SQ head and CQ tail under the lock
 * (core/submit.c, core/cq.c), and the dead holder's unpublished work is
 * simply lost (its requests get their -ECANCELED from the journal,
 * xproc/xlife.c; SQEs it had taken but not yet published as consumed are
 * taken again by the next submitter: compatibility #2).
 */
static inline void uu_shared_lock(pthread_mutex_t *m)
{
	int ret;

	if (likely(!atomic_load_explicit(&uu_lockstat_on, memory_order_relaxed)))
		ret = pthread_mutex_lock(m);
	else /* both live at the start of a page-aligned uu_xshared */
		ret = uu_lock_counted(m, ((uintptr_t)m & 4095) ==
						 offsetof(struct uu_xshared,
							  uring_lock) ?
						 UU_LOCK_SQ :
						 UU_LOCK_CQ);
	if (unlikely(ret == EOWNERDEAD))
		pthread_mutex_consistent(m);
}

static inline bool uu_req_cancelled(const struct uu_req *req)
{
	return atomic_load_explicit(&req->cancel_mark, memory_order_acquire);
}

/* pairs with the acquire in uu_req_cancelled */
static inline void uu_req_mark_cancelled(struct uu_req *req)
{
	atomic_store_explicit(&req->cancel_mark, true, memory_order_release);
}

#endif /* UURING_CORE_TYPES_H */
