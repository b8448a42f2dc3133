// SPDX-License-Identifier: MIT
/*
 * The readiness engine ("apoll"): requests on pollable files (pipes,
 * sockets, eventfds, ttys) that would block wait here instead of holding
 * a thread (T5, T6), and POLL_ADD lives here.
 *
 * One poller thread per process, one epoll instance.  Each open file is
 * registered once, on the engine's own dup, keyed by (st_dev, st_ino), and
 * serves every request waiting on it (T16).  The registration is
 * edge-triggered: an edge means "something changed", every waiter is
 * re-examined, and a multishot poll posts one CQE per edge (per wakeup),
 * not per epoll round.  A request added while its file is already
 * registered is checked once with poll(2) (it may have missed the edge).
 * Retries run in the poller thread and are non-blocking.
 * (Past 800 lines: the registrations, the waiter lists, the sync rounds
 * and POLL_ADD/POLL_REMOVE share P.lock, the file hash and the poll_*
 * fields of a request, and are checked against each other: one unit.)
 */
#include <errno.h>
#include <linux/futex.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/cancel.h"
#include "core/cq_post.h"
#include "core/registry.h"
#include "core/task_work.h"
#include "core/tctx.h"
#include "core/types.h"
#include "exec/iowq.h"
#include "exec/poller.h"
#include "util/fault.h"
#include "util/fdutil.h"
#include "util/forkhook.h"
#include "util/rawsys.h"

#define HASH_SIZE 4096 /* registered files: a program may poll thousands */
#define UD_HASH_SIZE 4096 /* armed POLL_ADDs by (ring, user_data) */
#define GRAVE_KICK 64 /* released pollfiles that wake the poller to free them */
#define INTEREST                                                         \
	(EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLPRI | EPOLLRDNORM |        \
	 EPOLLRDBAND | EPOLLWRNORM | EPOLLWRBAND | EPOLLET)
#define ALWAYS (EPOLLERR | EPOLLHUP | POLLNVAL | EPOLLRDHUP)

struct uu_pollfile {
	struct uu_pollfile *hnext;
	dev_t dev;
	ino_t ino;
	int accmode;                   /* the two ends of a pipe share an
					* inode but not readiness */
	int fd;                        /* engine dup registered in epoll */
	bool borrowed;                 /* fd is the application's own
					* number (no fd left for a dup) */
	struct uu_req *head, *tail;    /* waiters, FIFO */
	struct uu_pollfile *recheck_next;
	bool on_recheck;
	bool dead;                     /* deregistered; freed by the poller */
	bool inproc;                   /* counted in uu_inproc_watched */
	struct uu_pollfile *close_next; /* on P.closing */
	struct uu_pollfile *grave_next;
};

static struct {
	/*
	 * Adaptive: the submitter and the poller take it for a few
	 * hundred nanoseconds at a time, so a short bounded spin (glibc's,
	 * ~100 tries, then the futex) halves the context switches; it is
	 * no spinlock in T18's sense, a preempted holder costs the waiter
	 * those tries, not a timeslice.
	 */
	pthread_mutex_t lock;
	int epfd, kickfd;
	bool up;
	struct uu_pollfile *hash[HASH_SIZE];
	struct uu_pollfile *recheck, **recheck_tail; /* FIFO */
	struct uu_pollfile *graveyard; /* deregistered, not yet freed */
	unsigned int grave_n;          /* on the graveyard */
	/* a kick is written and the poller has not yet taken the recheck
	 * list: later rechecks need no kick of their own (one eventfd
	 * write per poller round, not one per poll update or arm) */
	bool kick_pending;
	/*
	 * Set by the poller while it holds P.lock: a registration released
	 * then is unhashed and marked dead at once, but its EPOLL_CTL_DEL
	 * and close wait on P.closing until the poller dropped the lock
	 * (before it posts the round's CQEs, so the file is closed by the
	 * time the application sees the completion that released it).
	 */
	bool defer_close;
	struct uu_pollfile *closing;
	/* POLL_REMOVE and poll updates find their target here in O(1), as
	 * the kernel's cancel hash does, not by walking every waiter of
	 * every file (liburing's poll-mshot-update does 500 updates per
	 * round against 5000 armed polls) */
	struct uu_req *ud_hash[UD_HASH_SIZE];
} P = { .lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP, .epfd = -1, .kickfd = -1 };

/*
 * Started on first use, and again in a forked child: a pthread_once could
 * not be reset there, and the child has neither the poller thread nor an
 * epoll instance of its own (the inherited epfd is the parent's: a
 * registration made through it would deliver the child's pointers to the
 * parent's poller).
 */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool started; /* release: pairs with ensure_started's acquire */

/*
 * Poller rounds, for uu_poller_sync: begun when epoll_wait returns, done
 * (a futex word) when the round's completions and task_work are queued.
 */
static _Atomic uint32_t rounds_begun, rounds_done;
/* the poller's current wait numbers its round before taking events
 * (poller_main, while uu_inproc_watched is non-zero) */
static atomic_bool careful_round;
/*
 * Sync tickets (poller_sync_exact's kick path): a waker takes a ticket
 * after its waking call and kicks; the poller reads the last ticket
 * before it takes events and, at the end of that round, stores it in
 * tickets_served.  A served ticket was taken before the round took its
 * events, so whatever the waker's call made ready was taken by that
 * round or an earlier one, all ended.
 */
static _Atomic uint32_t tickets_taken, tickets_served;
static atomic_int sync_waiters;

/*
 * All anonymous-inode files (eventfd, timerfd, signalfd, epoll, ...) share
 * one inode, so (dev, ino) does not tell them apart: for those a file is
 * only shared with a registration of the same open file description, as
 * kcmp(2) says; where kcmp is denied, never.
 */
static dev_t anon_dev;
static ino_t anon_ino;
static pthread_once_t anon_once = PTHREAD_ONCE_INIT;

/* exec/poller.h: watched files a writer of this process could wake */
atomic_int uu_inproc_watched;

static void anon_probe(void)
{
	int fd = eventfd(0, EFD_CLOEXEC);
	struct stat st;

	if (fd >= 0 && !fstat(fd, &st)) {
		anon_dev = st.st_dev;
		anon_ino = st.st_ino;
	}
	if (fd >= 0)
		close(fd);
}

static bool same_description(int a, int b)
{
	pid_t pid = getpid();

	return syscall(SYS_kcmp, pid, pid, 0 /* KCMP_FILE */, a, b) == 0;
}

static unsigned int hash_of(dev_t dev, ino_t ino)
{
	return (unsigned int)((ino * 2654435761u) ^ dev) % HASH_SIZE;
}

static void *poller_main(void *arg);

static void poller_start(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &P };

	P.epfd = uu_fault(UU_FAULT_EPOLL_CREATE) ? -1 :
						   epoll_create1(EPOLL_CLOEXEC);
	P.kickfd = uu_engine_eventfd(EFD_CLOEXEC | EFD_NONBLOCK);
	if (P.epfd >= 0 && P.kickfd >= 0) {
		P.epfd = uu_fd_to_reserved(P.epfd);
		P.kickfd = uu_fd_to_reserved(P.kickfd);
		if (!epoll_ctl(P.epfd, EPOLL_CTL_ADD, P.kickfd, &ev) &&
		    !uu_thread_start(poller_main, NULL)) {
			P.up = true;
			return;
		}
	}
	/* nothing stays behind a start that failed (its requests got
	 * -ENOMEM): the next request tries again */
	if (P.epfd >= 0)
		close(P.epfd);
	if (P.kickfd >= 0)
		close(P.kickfd);
	P.epfd = P.kickfd = -1;
}

static void ensure_started(void)
{
	/* acquire: pairs with the release below, so P.up, P.epfd and
	 * P.kickfd are seen as poller_start left them */
	if (atomic_load_explicit(&started, memory_order_acquire))
		return;
	pthread_mutex_lock(&start_lock);
	if (!atomic_load_explicit(&started, memory_order_relaxed)) {
		poller_start();
		if (P.up)
			atomic_store_explicit(&started, true,
					      memory_order_release);
	}
	pthread_mutex_unlock(&start_lock);
}

/*
 * fork: P.lock is held across fork so that the child inherits a consistent
 * table.  The child then drops everything of the parent's: its copies of
 * the engine's fds are closed (the open files stay the parent's), the
 * waiters are the parent's requests (their rings are foreign in the child
 * and never complete there), and the next arm starts a new poller.
 */
void uu_poller_atfork_prepare(void)
{
	pthread_mutex_lock(&start_lock);
	pthread_mutex_lock(&P.lock);
}

void uu_poller_atfork_parent(void)
{
	pthread_mutex_unlock(&P.lock);
	pthread_mutex_unlock(&start_lock);
}

void uu_poller_atfork_child(void)
{
	/* released, not re-initialised: the forking thread took them in
	 * prepare and is the child's only thread (a re-initialised mutex
	 * still counts as held for ThreadSanitizer, whose lock graph then
	 * sees an inversion at the child's own next fork) */
	pthread_mutex_unlock(&P.lock);
	pthread_mutex_unlock(&start_lock);
	if (!atomic_load_explicit(&started, memory_order_relaxed))
		return;
	for (int h = 0; h < HASH_SIZE; h++) {
		for (struct uu_pollfile *pf = P.hash[h]; pf; pf = pf->hnext)
			uu_sys_close(pf->fd);
		P.hash[h] = NULL;
	}
	P.recheck = NULL;
	P.recheck_tail = &P.recheck;
	P.graveyard = NULL;
	P.grave_n = 0;
	P.kick_pending = false;
	atomic_store_explicit(&uu_inproc_watched, 0, memory_order_relaxed);
	P.defer_close = false; /* prepare took P.lock: no poller section */
	P.closing = NULL;
	if (P.epfd >= 0)
		uu_sys_close(P.epfd);
	if (P.kickfd >= 0)
		uu_sys_close(P.kickfd);
	P.epfd = -1;
	P.kickfd = -1;
	P.up = false;
	atomic_store_explicit(&started, false, memory_order_relaxed);
}

UU_FORK_HOOK(poller_fork_hook, UU_FORK_RANK_POLLER, uu_poller_atfork_prepare,
	     uu_poller_atfork_parent, uu_poller_atfork_child)

static void kick(void)
{
	uint64_t one = 1;

	if (write(P.kickfd, &one, sizeof(one)) < 0 ||
	    uu_fault_errno(UU_FAULT_EVENTFD_EAGAIN, EAGAIN)) {
		/* the counter cannot overflow in practice */
	}
}

/*
 * With P.lock held: true if the caller must kick the poller (after
 * dropping the lock, or under it) for work it just queued.  The poller
 * clears kick_pending under P.lock when it takes the recheck list and the
 * graveyard, after it read the eventfd: work queued before that is
 * taken in that round, work queued after it kicks again.
 */
static bool kick_needed_locked(void)
{
	if (P.kick_pending)
		return false;
	P.kick_pending = true;
	return true;
}

/* with P.lock held; true if the caller must kick the poller */
static bool recheck_queue_locked(struct uu_pollfile *pf)
{
	if (!pf->on_recheck) {
		/* in order: a requeued multishot receive goes behind the
		 * requests requeued before it (uu_net_requeue) */
		pf->on_recheck = true;
		pf->recheck_next = NULL;
		if (!P.recheck_tail)
			P.recheck_tail = &P.recheck;
		*P.recheck_tail = pf;
		P.recheck_tail = &pf->recheck_next;
	}
	return kick_needed_locked();
}

static unsigned int ud_hash_of(const struct uu_ring *ring, uint64_t ud)
{
	uint64_t h = ud ^ ((uint64_t)(uintptr_t)ring >> 6);

	h *= 0x9e3779b97f4a7c15ull;
	return (unsigned int)(h >> 52) % UD_HASH_SIZE;
}

/* with P.lock held */
static void ud_index_add(struct uu_req *req)
{
	struct uu_req **head = &P.ud_hash[ud_hash_of(req->ring,
						     req->user_data)];

	req->ud_next = *head;
	if (*head)
		(*head)->ud_pprev = &req->ud_next;
	req->ud_pprev = head;
	*head = req;
}

/* with P.lock held */
static void ud_index_del(struct uu_req *req)
{
	*req->ud_pprev = req->ud_next;
	if (req->ud_next)
		req->ud_next->ud_pprev = req->ud_pprev;
	req->ud_next = NULL;
	req->ud_pprev = NULL;
}

static void waiter_append(struct uu_pollfile *pf, struct uu_req *req)
{
	struct uu_poll_cmd *poll_st = uu_cmd(req, poll);

	if (req->opcode == IORING_OP_POLL_ADD) {
		/*
		 * A POLL_ADD needs no file reference of its own: pf's dup
		 * keeps the file open while req waits on it (a program
		 * polling thousands of files would otherwise need two
		 * engine fds per file).  Done before req becomes visible
		 * to the poller, which may complete it at once.
		 */
		poll_st->dev = pf->dev;
		poll_st->ino = pf->ino;
		if (req->fd_owned)
			uu_sys_close(req->fd);
		req->fd_owned = false;
		req->fd = -1;
		ud_index_add(req);
	}
	req->poll_next = NULL;
	req->poll_prev = pf->tail;
	req->pf = pf;
	req->poll_fresh = true;
	req->poll_state = UU_POLLST_ARMED;
	if (pf->tail)
		pf->tail->poll_next = req;
	else
		pf->head = req;
	pf->tail = req;
}

/* O(1): a file may have tens of thousands of waiters (liburing's
 * poll-cancel-ton removes 30000 polls of one pipe one by one) */
static void waiter_unlink(struct uu_pollfile *pf, struct uu_req *req)
{
	if (req->poll_prev)
		req->poll_prev->poll_next = req->poll_next;
	else
		pf->head = req->poll_next;
	if (req->poll_next)
		req->poll_next->poll_prev = req->poll_prev;
	else
		pf->tail = req->poll_prev;
	req->poll_next = req->poll_prev = NULL;
	req->pf = NULL;
	req->poll_state = UU_POLLST_TAKEN;
	if (req->opcode == IORING_OP_POLL_ADD)
		ud_index_del(req);
}

/*
 * A borrowed registration is removed only while the application's
 * number still names the registered file (epoll keys an entry by file
 * and number).  Anonymous-inode files cannot be told apart by fstat:
 * those are never deregistered by number.
 */
static bool borrowed_deregister(struct uu_pollfile *pf)
{
	struct stat st;
	int fl = fcntl(pf->fd, F_GETFL);

	if (fl < 0 || fstat(pf->fd, &st) || st.st_dev != pf->dev ||
	    st.st_ino != pf->ino || (fl & O_ACCMODE) != pf->accmode ||
	    (st.st_dev == anon_dev && st.st_ino == anon_ino))
		return false;
	return epoll_ctl(P.epfd, EPOLL_CTL_DEL, pf->fd, NULL) == 0;
}

static void pollfile_release_locked(struct uu_pollfile *pf)
{
	struct uu_pollfile **pp = &P.hash[hash_of(pf->dev, pf->ino)];

	if (pf->dead || pf->head || pf->on_recheck)
		return;
	while (*pp != pf)
		pp = &(*pp)->hnext;
	*pp = pf->hnext;
	pf->dead = true;
	if (pf->inproc)
		atomic_fetch_sub_explicit(&uu_inproc_watched, 1,
					  memory_order_relaxed);
	if (pf->borrowed && !borrowed_deregister(pf)) {
		/*
		 * The application's number no longer names the file, so
		 * the registration cannot be removed: it stays in epoll
		 * until the file itself is released, and its events must
		 * keep finding a (dead) pollfile.  Never freed: a few
		 * bytes per such close, only after fds ran out.
		 */
		return;
	}
	if (!pf->borrowed && P.defer_close) {
		pf->close_next = P.closing;
		P.closing = pf;
	} else if (!pf->borrowed) {
		epoll_ctl(P.epfd, EPOLL_CTL_DEL, pf->fd, NULL);
		uu_sys_close(pf->fd);
	}
	/*
	 * Not freed here: an epoll_wait that already returned may hold an
	 * event pointing at it.  The poller frees the graveyard before its
	 * next epoll_wait, when no returned event can refer to it any more.
	 */
	pf->grave_next = P.graveyard;
	P.graveyard = pf;
	/*
	 * Only memory waits for it: the poller frees it at the end of its
	 * current or next round.  No kick per release (a one-shot poll
	 * released by task_work in the application's thread would wake the
	 * poller for nothing, once per completion); one when GRAVE_KICK
	 * wait, so that a poller with no events still frees them (none when
	 * this thread is the poller).
	 */
	if (++P.grave_n >= GRAVE_KICK && !uu_tctx.poller &&
	    kick_needed_locked())
		kick();
}

/*
 * The slow half of uu_poller_inproc_wake (exec/poller.h): a call of the
 * application's own may have woken a watched file; wait for a poller
 * round that has seen it, as the kernel's wakeup runs before the waker's
 * call returns.  Not from the engine's own threads or from inside an
 * execution context (an inline SEND issued by enter: the poller may need
 * what that context holds; the enter's own end syncs with the poller
 * where it must).
 */
static void poller_sync_exact(int max_ms);

void uu_poller_inproc_wake_slow(void)
{
	int saved = errno;

	/* holding nothing of the engine's: up to a second for a round
	 * (a poller kept off the CPU beside CPU hogs) */
	if (!uu_tctx.engine_thread && !uu_tctx.exec && !uu_tctx.poller)
		poller_sync_exact(1000);
	errno = saved;
}

/*
 * Parks req until its file is ready.  For POLL_ADD requests the interest
 * is uu_cmd(req, poll)->events; for parked reads/writes it is req->park_events.
 * Returns 0, or -errno if the file cannot be polled (the caller decides).
 */
static int arm(struct uu_req *req)
{
	struct uu_poll_cmd *poll_st = uu_cmd(req, poll);
	struct epoll_event ev = { .events = INTEREST };
	struct uu_pollfile *pf;
	struct stat st;
	unsigned int h;
	bool need_kick;

	ensure_started();
	if (!P.up)
		return -ENOMEM;
	int accmode = fcntl(req->fd, F_GETFL);

	if (accmode < 0)
		return -EBADF;
	if (req->opcode == IORING_OP_POLL_ADD && poll_st->stat_known) {
		/* uu_poll_add_issue's fstat, a moment ago in this thread */
		st.st_dev = poll_st->dev;
		st.st_ino = poll_st->ino;
	} else if (fstat(req->fd, &st)) {
		return -EBADF;
	}
	bool anon;

	accmode &= O_ACCMODE;
	pthread_once(&anon_once, anon_probe);
	anon = st.st_dev == anon_dev && st.st_ino == anon_ino;
	h = hash_of(st.st_dev, st.st_ino);
	pthread_mutex_lock(&P.lock);
	/*
	 * Cancelled before it could be armed (uu_poll_cancel_req), or its
	 * ring lost its last fd (the dead flag is set before
	 * uu_poll_cancel_ring takes P.lock, so under P.lock we either see
	 * it or are found on the file by that sweep).
	 */
	if (req->poll_state == UU_POLLST_CANCEL_AT_ARM ||
	    atomic_load_explicit(&req->ring->dead, memory_order_acquire)) {
		pthread_mutex_unlock(&P.lock);
		return -ECANCELED;
	}
	for (pf = P.hash[h]; pf; pf = pf->hnext)
		if (pf->dev == st.st_dev && pf->ino == st.st_ino &&
		    pf->accmode == accmode &&
		    (!anon || same_description(pf->fd, req->fd)))
			break;
	if (!pf) {
		pf = calloc(1, sizeof(*pf));
		if (!pf) {
			pthread_mutex_unlock(&P.lock);
			return -ENOMEM;
		}
		pf->dev = st.st_dev;
		pf->ino = st.st_ino;
		pf->accmode = accmode;
		pf->inproc = anon || uu_fd_may_wake_inproc(req->fd);
		pf->fd = uu_fd_dup_reserved(req->fd);
		if ((pf->fd == -EMFILE || pf->fd == -ENFILE) &&
		    req->opcode == IORING_OP_POLL_ADD && !req->fd_owned) {
			/*
			 * No fd left for the engine's dup (the kernel needs
			 * none): register the application's own number.  The
			 * file then lives only as long as the application
			 * keeps it open (docs/compatibility.md).
			 */
			pf->fd = req->fd;
			pf->borrowed = true;
		}
		ev.data.ptr = pf;
		if (pf->fd < 0 || epoll_ctl(P.epfd, EPOLL_CTL_ADD, pf->fd, &ev)) {
			int err = pf->fd < 0 ? pf->fd : -errno;

			if (pf->fd >= 0 && !pf->borrowed)
				uu_sys_close(pf->fd);
			free(pf);
			pthread_mutex_unlock(&P.lock);
			return err;
		}
		pf->hnext = P.hash[h];
		P.hash[h] = pf;
		/* seq_cst: the count's side of the Dekker pair with
		 * poller_main's mode (careful_round) */
		if (pf->inproc)
			atomic_fetch_add_explicit(&uu_inproc_watched, 1,
						  memory_order_seq_cst);
		/* EPOLL_CTL_ADD reports the current readiness itself: no
		 * recheck, or a multishot would see one readiness twice */
		waiter_append(pf, req);
		pthread_mutex_unlock(&P.lock);
		return 0;
	}
	waiter_append(pf, req);
	need_kick = recheck_queue_locked(pf);
	pthread_mutex_unlock(&P.lock);
	if (need_kick)
		kick();
	return 0;
}

/* Starts the poller now (its epoll and eventfd take the lowest free fd
 * numbers for an instant; better at setup than during the application's
 * own opens). */
void uu_poller_prewarm(void)
{
	ensure_started();
	pthread_once(&anon_once, anon_probe);
}

/* 0: armed (or handed to io-wq); -ECANCELED: cancelled before it could
 * be armed, the caller completes it. */
int uu_poll_arm(struct uu_req *req, int dir)
{
	int ret;

	req->park_events = dir == UU_POLL_IN ? EPOLLIN | EPOLLRDNORM :
					       EPOLLOUT | EPOLLWRNORM;
	ret = arm(req);
	if (ret == -ECANCELED)
		return ret;
	if (ret) {
		/* not pollable after all: let a worker block on it */
		uu_stat_inc(req->ring, route_iowq);
		uu_iowq_enqueue(req, true);
	}
	return 0;
}

/*
 * Whether the ring signalled its own eventfd since a multishot poll on it
 * last looked: the kernel's wakeup then carries EPOLL_URING_WAKE and the
 * poll's CQE is its last (no F_MORE).  The signal of the poll's own
 * previous CQE counts too: on the kernel a second application write
 * after one shot ends the poll (tests/test_diff_rsrc eventfd_poll_mshot).
 * The readiness seen may also hold a write of the application's that
 * came first; that one wakeup then counts as the ring's.
 */
static bool uu_poll_uring_wake(struct uu_req *req)
{
	struct uu_poll_cmd *poll_st = uu_cmd(req, poll);
	uint32_t n;

	if (!poll_st->ring_evfd)
		return false;
	/* acquire: pairs with the release in the ring's eventfd_write_ring */
	n = atomic_load_explicit(&req->ring->evfd_signals,
				 memory_order_acquire);
	if (n == poll_st->evfd_seen)
		return false;
	poll_st->evfd_seen = n;
	return true;
}

/*
 * A POLL_ADD waiter of a file that reported revents: true when it is done
 * (req->res holds its mask); a multishot's shot is posted, or queued on
 * *shots for task_work, and it goes on waiting.
 */
static bool wake_poll_req(struct uu_req *req, uint32_t revents,
			  struct uu_req **shots)
{
	uint32_t m = revents & uu_cmd(req, poll)->events;
	bool ring_wake = false;

	if (unlikely(uu_cmd(req, poll)->ring_file)) {
		/*
		 * A ring fd: after what its arm found, only
		 * the ring's CQ wakes it (io_cqring_wake's
		 * EPOLLIN | EPOLL_URING_WAKE, which ends a
		 * multishot poll); uuring's socket reports
		 * POLLOUT with every edge.
		 */
		if (uu_cmd(req, poll)->ring_seen) {
			m &= EPOLLIN | EPOLLRDNORM;
			ring_wake = true;
		}
		uu_cmd(req, poll)->ring_seen = true;
	}
	if (uu_cmd(req, poll)->arm_absorb) {
		/* the shot of what the arm found is posted
		 * (uu_poll_tw_shot): this first look sees
		 * that readiness again, not a new wakeup */
		uu_cmd(req, poll)->arm_absorb = false;
		return false;
	}
	if (!m) {
		return false;
	}
	if (req->poll_tw) {
		/*
		 * A wakeup waits to be run already: the
		 * ones that come before it runs add no item
		 * (the kernel's poll_refs), one CQE covers
		 * them.  The first one seen after readiness
		 * found at arm decides the mask, as the
		 * wakeup that takes ownership does.
		 */
		if (!uu_cmd(req, poll)->tw_nr++) {
			uu_cmd(req, poll)->tw_mask = m;
			uu_cmd(req, poll)->tw_uring =
				uu_cmd(req, poll)->multishot &&
				(ring_wake ||
				 uu_poll_uring_wake(req));
		}
		return false;
	}
	if ((req->ring->setup_flags & IORING_SETUP_DEFER_TASKRUN) ||
	    req->poll_hold) {
		/*
		 * The kernel's wakeup queues io_poll_task_func,
		 * which completes or posts then
		 * (uu_poll_tw_shot), the request armed
		 * meanwhile: on DEFER_TASKRUN for the
		 * submitter's GETEVENTS; during the batch that
		 * armed it (poll_hold), at that batch's end
		 * (core/req.c release_holds), so a cancel or
		 * POLL_REMOVE later in the batch finds the
		 * wakeup pending.
		 */
		req->poll_tw = true;
		uu_cmd(req, poll)->tw_nr = 1;
		uu_cmd(req, poll)->tw_mask = m;
		/* decided by the wakeup that takes
		 * ownership, as io_poll_wake does */
		uu_cmd(req, poll)->tw_uring =
			uu_cmd(req, poll)->multishot &&
			(ring_wake || uu_poll_uring_wake(req));
		if (!req->poll_hold) {
			req->late_next = *shots;
			*shots = req;
		}
		return false;
	}
	if (uu_cmd(req, poll)->multishot && !ring_wake &&
	    !uu_poll_uring_wake(req) &&
	    uu_req_post_cqe(req, (int32_t)m, 0, 0)) {
		return false;
	}
	req->res = (int32_t)m;
	return true;
}

/*
 * A request parked for readiness (a read, write, send, receive, accept,
 * ...) on a file that reported revents: issued again, true when it is
 * done (req->res set).  *in_blocked / *out_blocked: a retry in that
 * direction found the file not ready, so later waiters are not tried.
 */
static bool retry_parked(struct uu_pollfile *pf, struct uu_req *req,
			 uint32_t revents, bool *in_blocked, bool *out_blocked,
			 bool *kick_after)
{
	bool want_in = req->park_events & EPOLLIN;
	int res;

	if (!(revents & (req->park_events | ALWAYS)) ||
	    (want_in ? *in_blocked : *out_blocked)) {
		return false;
	}
	req->park = UU_ISSUE_DONE;
	res = uu_opdefs[req->opcode].issue(req,
					   UU_ISSUE_F_POLLER);
	if (req->park && req->cq_uncommitted) {
		/* waits again: no final CQE yet */
		req->cq_uncommitted = false;
		uu_cq_commit(req->ring);
	}
	if (req->park && req->requeue) {
		/*
		 * A multishot receive at its retry cap with
		 * data still queued (uu_net_requeue): no
		 * edge will come for that data, so the file
		 * is rechecked after the files ready now, in
		 * the order requeued (the kernel's
		 * IOU_REQUEUE puts its task_work last).
		 */
		req->requeue = false;
		req->poll_fresh = true;
		if (recheck_queue_locked(pf))
			*kick_after = true;
		return false;
	}
	if (req->park) {
		/* still not ready: later waiters in the same
		 * direction would not be either */
		if (want_in)
			*in_blocked = true;
		else
			*out_blocked = true;
		return false;
	}
	req->res = res;
	return true;
}

/*
 * Examine the waiters of pf against revents.  fresh_only: a recheck after
 * an arm, for the waiters that may have missed the last edge.  Finished
 * requests are moved to *done (completed outside the lock).
 */
static void process(struct uu_pollfile *pf, uint32_t revents, bool fresh_only,
		    struct uu_req **done, struct uu_req **shots,
		    bool *kick_after)
{
	struct uu_req *req, *next;
	bool in_blocked = false, out_blocked = false;

	if (pf->dead)
		return;
	for (req = pf->head; req; req = next) {
		next = req->poll_next;
		if (fresh_only && !req->poll_fresh) {
			continue;
		}
		req->poll_fresh = false;
		if (req->opcode == IORING_OP_POLL_ADD ?
			    !wake_poll_req(req, revents, shots) :
			    !retry_parked(pf, req, revents, &in_blocked,
					  &out_blocked, kick_after))
			continue;
		waiter_unlink(pf, req);
		req->poll_next = *done;
		*done = req;
	}
}

/* queue the multishot wakeups collected by process(), outside P.lock */
static void queue_shots(struct uu_req *shots)
{
	struct uu_req *rev = NULL, *next;

	for (; shots; shots = next) {
		next = shots->late_next;
		shots->late_next = rev;
		rev = shots;
	}
	for (; rev; rev = next) {
		next = rev->late_next;
		rev->late_next = NULL;
		uu_tw_queue_poll_shot(rev);
	}
}

static void finish_list(struct uu_req *done)
{
	/* FIFO order of completion within one file: reverse the stack */
	struct uu_req *rev = NULL, *next;

	for (; done; done = next) {
		next = done->poll_next;
		done->poll_next = rev;
		rev = done;
	}
	for (; rev; rev = next) {
		next = rev->poll_next;
		rev->poll_next = NULL;
		/* a DEFER ring's multishot receive handed to the submitter:
		 * committed now that P.lock is dropped (lock order) */
		if (rev->tw_reissue_req)
			uu_tw_reissue_commit(rev);
		if (rev->cq_uncommitted) {
			/* shots filled by its last issue: committed after
			 * the final CQE where that is posted at once (default
			 * rings, in the same commit), before it elsewhere;
			 * the reference keeps the ring for the commit */
			struct uu_ring *r = rev->ring;

			rev->cq_uncommitted = false;
			atomic_fetch_add_explicit(&r->refs, 1,
						  memory_order_relaxed);
			uu_req_finish_async(rev);
			uu_cq_commit(r);
			uu_ring_put(r);
			continue;
		}
		uu_req_finish_async(rev);
	}
}

#define RECHECK_BATCH 128 /* files polled per poll(2) call */

/* the poller takes P.lock for a round's work (see P.defer_close) */
static void poller_lock(void)
{
	pthread_mutex_lock(&P.lock);
	P.defer_close = true;
}

/* drops P.lock, then deregisters and closes what was released meanwhile
 * (the pollfiles stay on the graveyard until the round ends) */
static void poller_unlock(void)
{
	struct uu_pollfile *pf = P.closing, *next;

	P.closing = NULL;
	P.defer_close = false;
	pthread_mutex_unlock(&P.lock);
	for (; pf; pf = next) {
		next = pf->close_next;
		epoll_ctl(P.epfd, EPOLL_CTL_DEL, pf->fd, NULL);
		uu_sys_close(pf->fd);
	}
}

/*
 * Rechecks the files an arm or a poll update queued: one poll(2) for up
 * to RECHECK_BATCH files (outside P.lock; a file on the recheck list is
 * not deregistered, so its fd stays open), then one P.lock section.
 */
static void recheck_batch(struct uu_pollfile **rcp)
{
	struct pollfd pfds[RECHECK_BATCH];
	struct uu_pollfile *batch[RECHECK_BATCH];
	struct uu_req *done = NULL, *shots = NULL;
	bool kick_after = false;
	int nb = 0;

	for (struct uu_pollfile *pf = *rcp; pf && nb < RECHECK_BATCH;
	     pf = pf->recheck_next) {
		batch[nb] = pf;
		pfds[nb].fd = pf->fd;
		pfds[nb].events = POLLIN | POLLOUT | POLLPRI | POLLRDHUP |
				  POLLRDNORM | POLLWRNORM | POLLRDBAND |
				  POLLWRBAND;
		pfds[nb].revents = 0;
		nb++;
	}
	if (poll(pfds, (nfds_t)nb, 0) < 0) {
		for (int i = 0; i < nb; i++)
			pfds[i].revents = 0;
	}
	poller_lock();
	for (int i = 0; i < nb; i++) {
		struct uu_pollfile *pf = batch[i];

		*rcp = pf->recheck_next;
		pf->on_recheck = false;
		if (!pf->dead) {
			process(pf, (uint32_t)pfds[i].revents, true, &done,
				&shots, &kick_after);
			pollfile_release_locked(pf);
		}
	}
	poller_unlock();
	/* requeued for the next round */
	if (kick_after)
		kick();
	queue_shots(shots);
	finish_list(done);
}

/*
 * The wait of one poller round, up to nevs events into evs: *ticketp is
 * the last sync ticket read before the round takes any event (the round
 * serves it at its end).  Returns what epoll_wait returned.
 */
static int round_wait(struct epoll_event *evs, int nevs, uint32_t *ticketp)
{
	/* seq_cst: before this round takes any event (see
	 * tickets_taken) */
	uint32_t ticket = atomic_load_explicit(&tickets_taken,
					       memory_order_seq_cst);
	bool careful = atomic_load_explicit(&uu_inproc_watched,
					    memory_order_relaxed);
	int n;

	*ticketp = ticket;

	/*
	 * Dekker pair with poller_sync_exact: we store the mode,
	 * then load the count; a new watch increments the count
	 * (arm), and its waker loads the mode.  Either we see the
	 * watch and wait carefully, or the waker sees a plain
	 * wait and kicks.
	 */
	atomic_store_explicit(&careful_round, careful,
			      memory_order_seq_cst);
	if (!careful && atomic_load_explicit(&uu_inproc_watched,
					     memory_order_seq_cst)) {
		careful = true;
		atomic_store_explicit(&careful_round, true,
				      memory_order_seq_cst);
	}
	if (careful) {
		/*
		 * A waker of this process may be syncing
		 * (uu_poller_inproc_wake_slow): number the round
		 * before it takes any event from the instance, so
		 * that a sync that finds the instance empty knows
		 * the round that took its event (poller_sync_for).
		 * Wait for readiness without taking it, then take.
		 */
		struct pollfd pfd = { .fd = P.epfd, .events = POLLIN };

		/* no wait with a ticket not yet served (below) */
		if (ticket == atomic_load_explicit(&tickets_served,
						   memory_order_relaxed) &&
		    !uu_fault_errno(UU_FAULT_PPOLL_EINTR, EINTR))
			uu_rawsys6(__NR_ppoll, (long)&pfd, 1, 0, 0, 0,
				   0);
		atomic_fetch_add_explicit(&rounds_begun, 1,
					  memory_order_seq_cst);
		n = uu_fault_errno(UU_FAULT_EPOLL_WAIT_EINTR, EINTR) ?
			    -1 :
			    epoll_wait(P.epfd, evs, nevs, 0);
	} else {
		/* a ticket not yet served: take events without
		 * waiting, so a round that read it follows soon */
		n = uu_fault_errno(UU_FAULT_EPOLL_WAIT_EINTR, EINTR) ?
			    -1 :
			    epoll_wait(P.epfd, evs, nevs,
				       ticket == atomic_load_explicit(
						 &tickets_served,
						 memory_order_relaxed) ?
					       -1 :
					       0);
		atomic_fetch_add_explicit(&rounds_begun, 1,
					  memory_order_seq_cst);
	}
	return n;
}

static void *poller_main(void *arg)
{
	struct epoll_event evs[64];
	struct uu_pollfile *grave = NULL;

	(void)arg;
	uu_tctx.engine_thread = true;
	uu_tctx.poller = true;
	pthread_setname_np(pthread_self(), "uuring-poll");
	uu_thread_ready();
	for (;;) {
		struct uu_pollfile *rc;
		struct uu_req *done = NULL, *shots = NULL;
		bool requeued = false;
		uint32_t ticket;
		int n;

		/* taken at the end of the last round: no event returned by
		 * that round's epoll_wait can refer to them any more */
		while (grave) {
			struct uu_pollfile *next = grave->grave_next;

			free(grave);
			grave = next;
		}
		n = round_wait(evs, 64, &ticket);

		/*
		 * The kick is consumed before the recheck list is taken
		 * (kick_needed_locked): a recheck queued after the read
		 * either is in the list taken below or kicks again.
		 */
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == &P) {
				uint64_t v;

				/* EAGAIN leaves a kick unread: the next
				 * round sees it again (a spurious round) */
				if (uu_fault_errno(UU_FAULT_EVENTFD_EAGAIN,
						   EAGAIN) ||
				    read(P.kickfd, &v, sizeof(v)) < 0) {
				}
			}
		}
		/* one P.lock section for the round's edges (a lock round
		 * trip per file would contend with every submitter) */
		poller_lock();
		for (int i = 0; i < n; i++) {
			struct uu_pollfile *pf = evs[i].data.ptr;

			if (evs[i].data.ptr == &P || pf->dead)
				continue;
			/* a requeue lands on the recheck list this round
			 * takes below: no kick */
			process(pf, evs[i].events, false, &done, &shots,
				&requeued);
			pollfile_release_locked(pf);
		}
		rc = P.recheck;
		P.recheck = NULL;
		P.recheck_tail = &P.recheck;
		P.kick_pending = false;
		poller_unlock();
		queue_shots(shots);
		finish_list(done);
		while (rc)
			recheck_batch(&rc);
		pthread_mutex_lock(&P.lock);
		grave = P.graveyard;
		P.graveyard = NULL;
		P.grave_n = 0;
		pthread_mutex_unlock(&P.lock);
		atomic_store_explicit(&tickets_served, ticket,
				      memory_order_seq_cst);
		/* seq_cst: pairs with uu_poller_sync's waiter count */
		atomic_fetch_add_explicit(&rounds_done, 1, memory_order_seq_cst);
		if (atomic_load_explicit(&sync_waiters, memory_order_seq_cst))
			syscall(SYS_futex, &rounds_done, FUTEX_WAKE_PRIVATE,
				INT_MAX, NULL, NULL, 0);
	}
	return NULL;
}

/*
 * The kernel turns a wakeup into task_work in the waker's own context: by
 * the time write(2) on a pipe returns, the poll's completion is queued
 * (and, on a ring without DEFER_TASKRUN, run before the writer returns
 * to user space).  The poller does it a moment later.  Callers that must
 * not overtake readiness signalled before them call this first: a
 * DEFER_TASKRUN submitter about to run its task_work, an enter that only
 * reaps (io_uring_get_events), a cancel (whose target may have data
 * waiting).  If the epoll instance already holds readiness, it waits
 * (bounded) for a poller round that began after it looked, so that the
 * readiness has been processed.  Not in the poller itself.
 */
static bool epoll_has_readiness(void)
{
	static const struct timespec no_wait;
	struct pollfd pfd = { .fd = P.epfd, .events = POLLIN };

	/* the system call itself: poll() would be the preload's wrapper */
	return uu_rawsys6(__NR_ppoll, (long)&pfd, 1, (long)&no_wait, 0, 0,
			  0) > 0 &&
	       (pfd.revents & POLLIN);
}

/*
 * Until *count (rounds_done, or tickets_served, which a round advances
 * before rounds_done) has reached target, or max_ms; false on the
 * timeout.  Sleeps on rounds_done, which every round's end wakes while
 * sync_waiters is non-zero (poller_main).
 */
static bool await_count(_Atomic uint32_t *count, uint32_t target, int *max_ms)
{
	for (; *max_ms > 0; (*max_ms)--) {
		struct timespec ts = { 0, 1000000 }; /* 1 ms per try */
		uint32_t done = atomic_load_explicit(&rounds_done,
						     memory_order_seq_cst);

		if ((int32_t)(atomic_load_explicit(count,
						   memory_order_seq_cst) -
			      target) >= 0)
			return true;
		/* EINTR: a spurious wake, look again */
		if (!uu_fault_errno(UU_FAULT_FUTEX_WAIT_EINTR, EINTR))
			uu_rawsys6(SYS_futex, (long)&rounds_done,
				   FUTEX_WAIT_PRIVATE, done, (long)&ts, 0, 0);
	}
	return false;
}

/*
 * Readiness still in the epoll instance needs a round that takes it;
 * readiness a round already took (the instance is no longer readable
 * then) needs that round to end.  While uu_inproc_watched is non-zero the
 * poller numbers a round before it takes events (poller_main), so the
 * number read after a look that found the instance empty covers the round
 * that took the event; otherwise a round is numbered just after its
 * epoll_wait returned, and a sync that looks in between returns a moment
 * early.  A look that finds readiness waits for the round in progress,
 * or for the next one if none is, and looks again; a few rounds at most,
 * as an instance that other files keep readable would otherwise hold the
 * caller for max_ms.
 */
static void poller_sync_for(int max_ms, int passes)
{
	if (!atomic_load_explicit(&started, memory_order_acquire) || !P.up ||
	    uu_tctx.poller)
		return;
	atomic_fetch_add_explicit(&sync_waiters, 1, memory_order_seq_cst);
	for (int pass = 0; pass < passes; pass++) {
		uint32_t begun = atomic_load_explicit(&rounds_begun,
						      memory_order_seq_cst);
		uint32_t done = atomic_load_explicit(&rounds_done,
						     memory_order_seq_cst);

		if (epoll_has_readiness()) {
			/* one pass: the next round surely took it; more:
			 * the round in progress may have, look again */
			uint32_t target = passes == 1 || done == begun ?
						  begun + 1 :
						  begun;

			if (!await_count(&rounds_done, target, &max_ms))
				break;
			continue;
		}
		begun = atomic_load_explicit(&rounds_begun,
					     memory_order_seq_cst);
		await_count(&rounds_done, begun, &max_ms);
		break;
	}
	atomic_fetch_sub_explicit(&sync_waiters, 1, memory_order_seq_cst);
}

/*
 * For an in-process waker: exact.  If the poller's current wait takes
 * events before numbering its round (a plain wait, begun when the watch
 * was new), a look at the instance cannot tell whether a round took the
 * waker's event a moment ago: take a ticket, kick the poller and wait
 * until a round that read the ticket before taking its events has ended
 * (tickets_taken; every round that took the event earlier ended before
 * it, the poller being one thread).  Otherwise the looks of
 * poller_sync_for are exact.
 */
static void poller_sync_exact(int max_ms)
{
	uint32_t ticket;

	if (!atomic_load_explicit(&started, memory_order_acquire) || !P.up ||
	    uu_tctx.poller)
		return;
	if (atomic_load_explicit(&careful_round, memory_order_seq_cst)) {
		poller_sync_for(max_ms, 4);
		return;
	}
	atomic_fetch_add_explicit(&sync_waiters, 1, memory_order_seq_cst);
	ticket = atomic_fetch_add_explicit(&tickets_taken, 1,
					   memory_order_seq_cst) + 1;
	kick();
	await_count(&tickets_served, ticket, &max_ms);
	atomic_fetch_sub_explicit(&sync_waiters, 1, memory_order_seq_cst);
}

/* 50 ms at most: a caller may hold what a stuck round waits for; one
 * round at most, as before the in-process wakers (an enter that only
 * reaps must not wait for several rounds of a busy instance) */
void uu_poller_sync(void)
{
	poller_sync_for(50, 1);
}

/* ---- IORING_OP_POLL_ADD / POLL_REMOVE ---- */

/* io_poll_parse_events: the wire format to an interest mask */
static uint32_t parse_events(const struct io_uring_sqe *sqe)
{
	return sqe->poll32_events | ALWAYS;
}

int uu_poll_add_prep(struct uu_req *req)
{
	struct uu_poll_cmd *poll_st = uu_cmd(req, poll);
	const struct io_uring_sqe *sqe = &req->sqe;
	uint32_t flags = sqe->len;

	if (sqe->buf_index || sqe->off || sqe->addr)
		return -EINVAL;
	if (flags & ~(uint32_t)IORING_POLL_ADD_MULTI)
		return -EINVAL;
	if ((flags & IORING_POLL_ADD_MULTI) && (req->flags & UU_REQ_CQE_SKIP))
		return -EINVAL;
	poll_st->events = parse_events(sqe);
	poll_st->multishot = flags & IORING_POLL_ADD_MULTI;
	poll_st->stat_known = false;
	return 0;
}

#define DEFAULT_POLLMASK (EPOLLIN | EPOLLOUT | EPOLLRDNORM | EPOLLWRNORM)

int uu_poll_add_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_poll_cmd *poll_st = uu_cmd(req, poll);
	struct stat st;

	(void)issue_flags;
	if (req->flags & UU_REQ_FIXED_FILE)
		return -EBADF;
	if (fstat(req->fd, &st))
		return -EBADF;
	/* files without a poll method (regular files, directories) are
	 * always ready, where epoll_ctl would refuse them (T16) */
	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode)) {
		uint32_t m = DEFAULT_POLLMASK & poll_st->events;

		/* no wait queue and nothing ready: the kernel says -EINVAL */
		return m ? (int)m : -EINVAL;
	}
	/*
	 * A one-shot poll on a file that is ready now completes at once:
	 * the kernel's __io_arm_poll_handler polls the file as it arms and
	 * completes inline with that mask, in every ring mode.  Left to the
	 * readiness engine, its CQE would come later, after a cancel of the
	 * same batch, or (DEFER_TASKRUN, COOP_TASKRUN) only when the
	 * submitter runs its task_work.  A multishot poll is armed however
	 * ready the file is, its first shot pending as the kernel's
	 * task_work (__io_poll_execute): a POLL_REMOVE before that runs
	 * finds it busy (-EALREADY), a cancel ends it without the shot.
	 */
	poll_st->arm_mask = 0;
	/* a ring fd: readable when its CQ holds a CQE (a stale readiness
	 * drained first, so the poll below and the arm see the CQ) */
	poll_st->ring_file = uu_ring_fd_readable(req->fd) >= 0;
	poll_st->ring_seen = false;
	{
		struct pollfd pfd = {
			.fd = req->fd,
			.events = (short)(poll_st->events & 0xffff),
		};
		uint32_t m;

		if (poll(&pfd, 1, 0) == 1 && !(pfd.revents & POLLNVAL)) {
			m = (uint16_t)pfd.revents & poll_st->events;
			if (m && !poll_st->multishot)
				return (int)m;
			/* multishot: armed with that wakeup pending
			 * (uu_poll_arm_request) */
			poll_st->arm_mask = m;
		}
	}
	/* a multishot poll on the ring's own eventfd (an anonymous inode:
	 * no file type bits) ends at the ring's first signal of it */
	poll_st->ring_evfd = false;
	if (poll_st->multishot && !(st.st_mode & S_IFMT) &&
	    atomic_load_explicit(&req->ring->evfd, memory_order_relaxed) >= 0) {
		long long id = uu_eventfd_id(req->fd);

		poll_st->ring_evfd =
			id >= 0 &&
			id == uu_eventfd_id(atomic_load_explicit(
				      &req->ring->evfd, memory_order_relaxed));
		poll_st->evfd_seen = atomic_load_explicit(
			&req->ring->evfd_signals, memory_order_acquire);
	}
	/* arm() keys the registration by these: no second fstat there */
	poll_st->dev = st.st_dev;
	poll_st->ino = st.st_ino;
	poll_st->stat_known = true;
	return uu_park(req, UU_ISSUE_PARK_POLLREQ);
}

/* Parks a POLL_ADD request (called by core/req.c). */
int uu_poll_arm_request(struct uu_req *req)
{
	struct uu_poll_cmd *poll_st = uu_cmd(req, poll);
	bool defer = req->ring->setup_flags & IORING_SETUP_DEFER_TASKRUN;
	bool pending = poll_st->arm_mask && (defer || req->poll_hold);
	int ret;

	/*
	 * A multishot poll ready at issue: armed with that wakeup pending
	 * (tw_nr 0: the readiness engine has not seen it yet; its first
	 * look at the file is counted, and the shot then posts what the
	 * file holds).  Run by the submitter's task_work (DEFER_TASKRUN)
	 * or at the end of the batch (poll_hold), as the kernel's
	 * __io_poll_execute from __io_arm_poll_handler: if the readiness
	 * engine has not looked by then, the shot posts the arm's mask and
	 * that engine's first look is absorbed (arm_absorb).  Not visible
	 * to the poller before arm() adds it, under P.lock.
	 */
	poll_st->arm_absorb = false;
	if (pending) {
		req->poll_tw = true;
		poll_st->tw_nr = 0;
		poll_st->tw_mask = poll_st->arm_mask;
		poll_st->tw_uring = false;
	}
	ret = arm(req);
	if (ret) {
		req->poll_tw = false;
		req->poll_hold = false;
	} else if (pending && defer) {
		uu_tw_queue_poll_shot(req);
	}

	if (ret == -EPERM) {
		/* no poll support (e.g. /dev/null): always ready */
		uint32_t m = DEFAULT_POLLMASK & poll_st->events;

		req->res = m ? (int)m : -EINVAL;
		return 1;
	}
	if (ret) {
		req->res = ret;
		return 1;
	}
	return 0;
}

int uu_poll_remove_prep(struct uu_req *req)
{
	struct uu_poll_upd_cmd *poll_upd_st = uu_cmd(req, poll_upd);
	const struct io_uring_sqe *sqe = &req->sqe;
	uint32_t flags = sqe->len;

	if (sqe->buf_index || sqe->splice_fd_in)
		return -EINVAL;
	if (flags & ~(uint32_t)(IORING_POLL_UPDATE_EVENTS |
				IORING_POLL_UPDATE_USER_DATA |
				IORING_POLL_ADD_MULTI))
		return -EINVAL;
	if (flags == IORING_POLL_ADD_MULTI)
		return -EINVAL;
	poll_upd_st->old_user_data = sqe->addr;
	poll_upd_st->update_events = flags & IORING_POLL_UPDATE_EVENTS;
	poll_upd_st->update_user_data = flags & IORING_POLL_UPDATE_USER_DATA;
	poll_upd_st->new_user_data = sqe->off;
	if (!poll_upd_st->update_user_data && poll_upd_st->new_user_data)
		return -EINVAL;
	if (poll_upd_st->update_events) {
		poll_upd_st->events = parse_events(sqe);
		poll_upd_st->multishot = flags & IORING_POLL_ADD_MULTI;
	} else if (sqe->poll32_events) {
		return -EINVAL;
	}
	return 0;
}

/* Finds an armed POLL_ADD of ring by user_data; with P.lock held.  When
 * several share a user_data the newest wins, as in the kernel's hash
 * (entries are added at the bucket's head there too). */
static struct uu_req *find_poll(struct uu_ring *ring, uint64_t ud)
{
	struct uu_req *found;

	for (found = P.ud_hash[ud_hash_of(ring, ud)]; found;
	     found = found->ud_next)
		if (found->ring == ring && found->user_data == ud)
			break;
	return found;
}

/*
 * A one-shot poll whose events an update changed is armed again by the
 * kernel (io_poll_remove -> io_poll_add): ready then, it completes with
 * that mask at once, through task_work, and no cancel finds it any more.
 * Called under P.lock, which it drops when true.
 */
#ifdef UU_MUTATE_POLL_UPDATE_LATE
/* mutation build (tests/fuzz/mutants.sh): left to the engine's recheck */
#define POLL_UPDATE_AT_ONCE 0
#else
#define POLL_UPDATE_AT_ONCE 1
#endif

static bool update_ready(struct uu_pollfile *pf, struct uu_req *target)
{
	struct uu_poll_cmd *target_poll = uu_cmd(target, poll);
	struct pollfd pfd = {
		.fd = pf->fd,
		.events = (short)(target_poll->events & 0xffff),
	};
	uint32_t m;

	/* armed by the running batch: its end settles it (poll_hold) */
	if (target_poll->ring_file || target->poll_hold ||
	    poll(&pfd, 1, 0) != 1 ||
	    (pfd.revents & POLLNVAL))
		return false;
	m = (uint16_t)pfd.revents & target_poll->events;
	if (!m)
		return false;
	pthread_mutex_unlock(&P.lock);
	/* -EALREADY: the readiness engine completes it meanwhile */
	uu_complete_parked(target, (int)m);
	return true;
}

int uu_poll_remove_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_poll_upd_cmd *poll_upd_st = uu_cmd(req, poll_upd);
	struct uu_pollfile *pf;
	struct uu_req *target;
	bool update = poll_upd_st->update_events ||
		      poll_upd_st->update_user_data;
	bool need_kick;

	(void)issue_flags;
	if (!P.up)
		return -ENOENT;
	pthread_mutex_lock(&P.lock);
	target = find_poll(req->ring, poll_upd_st->old_user_data);
	if (!target) {
		pthread_mutex_unlock(&P.lock);
		return -ENOENT;
	}
	if (target->poll_tw || target->poll_state == UU_POLLST_CANCEL_AT_TW) {
		/* a wakeup is pending (DEFER_TASKRUN task_work, or held by
		 * the batch that armed it), or a cancel's: the kernel's
		 * io_poll_disarm cannot take ownership of the poll and
		 * neither removes nor updates it */
		pthread_mutex_unlock(&P.lock);
		return -EALREADY;
	}
	pf = target->pf;
	if (update) {
		if (poll_upd_st->update_events) {
			/* only the event mask changes; one-shot or multishot
			 * stays what the POLL_ADD said */
			struct uu_poll_cmd *tp = uu_cmd(target, poll);

			tp->events = (tp->events & ~0xffffu) |
				     (poll_upd_st->events & 0xffff) | ALWAYS;
		}
		if (poll_upd_st->update_user_data) {
			ud_index_del(target);
			target->user_data = poll_upd_st->new_user_data;
			ud_index_add(target);
		}
		if (!poll_upd_st->update_events) {
			/* same interest: the edges keep coming, nothing to
			 * re-examine (a recheck could race with an edge and
			 * report one readiness twice) */
			pthread_mutex_unlock(&P.lock);
			return 0;
		}
		if (!uu_cmd(target, poll)->multishot && POLL_UPDATE_AT_ONCE &&
		    update_ready(pf, target))
			return 0;
		target->poll_fresh = true;
		need_kick = recheck_queue_locked(pf);
		pthread_mutex_unlock(&P.lock);
		if (need_kick)
			kick();
		return 0;
	}
	pthread_mutex_unlock(&P.lock);
	/* through the parked list, so cancels and completions agree */
	return uu_cancel_req(target) ? -EALREADY : 0;
}

/*
 * Cancels a request parked on the readiness engine.  REMOVED: taken off
 * its file's waiters, the caller completes it.  DEFERRED: not armed yet,
 * the arming thread will complete it -ECANCELED.  BUSY: the poller already
 * took it (it is being completed).
 */
int uu_poll_cancel_req(struct uu_req *req)
{
	struct uu_pollfile *pf;
	int ret = UU_POLL_CANCEL_BUSY;

	pthread_mutex_lock(&P.lock);
	switch (req->poll_state) {
	case UU_POLLST_UNARMED:
		req->poll_state = UU_POLLST_CANCEL_AT_ARM;
		ret = UU_POLL_CANCEL_DEFERRED;
		break;
	case UU_POLLST_ARMED:
		/* armed: on pf's waiter list until waiter_unlink */
		pf = req->pf;
		waiter_unlink(pf, req);
		ret = UU_POLL_CANCEL_REMOVED;
		if (req->poll_tw || req->poll_hold) {
			/* a wakeup is queued for the submitter, or held by
			 * the batch that armed it: that item or the batch's
			 * end completes it (the kernel's IO_POLL_CANCEL_FLAG).
			 * Until then it stays in the kernel's cancel hash,
			 * where a POLL_REMOVE finds it busy (-EALREADY) */
			req->poll_state = UU_POLLST_CANCEL_AT_TW;
#ifndef UU_MUTATE_CANCELLED_POLL_HIDDEN
			ud_index_add(req);
#endif
			ret = UU_POLL_CANCEL_DEFERRED;
		}
		pollfile_release_locked(pf);
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&P.lock);
	return ret;
}

/* The ring is going away: end every request still waiting for it. */
void uu_poll_cancel_ring(struct uu_ring *ring)
{
	struct uu_req *done = NULL;

	if (!P.up)
		return;
	pthread_mutex_lock(&P.lock);
	for (int h = 0; h < HASH_SIZE; h++) {
		struct uu_pollfile *pf = P.hash[h], *pnext;

		for (; pf; pf = pnext) {
			struct uu_req *r, *next;

			pnext = pf->hnext;
			for (r = pf->head; r; r = next) {
				next = r->poll_next;
				if (r->ring != ring)
					continue;
				waiter_unlink(pf, r);
				if (r->poll_tw || r->poll_hold) {
					/* its queued wakeup (or the end of
					 * the batch that armed it) completes
					 * it */
					r->poll_state = UU_POLLST_CANCEL_AT_TW;
					continue;
				}
				r->res = -ECANCELED;
				r->poll_next = done;
				done = r;
			}
			pollfile_release_locked(pf);
		}
	}
	pthread_mutex_unlock(&P.lock);
	finish_list(done);
}

/*
 * DEFER_TASKRUN: the submitter runs a queued wakeup of an armed poll
 * (io_poll_task_func).  The mask is the wakeup's, or after several
 * wakeups what polling the file gives now.  A one-shot poll completes
 * with it; a multishot one posts a CQE with F_MORE, nothing if nothing is
 * ready, and when the CQ has no room it ends with that mask as its last
 * CQE (which then overflows, T14).  True when the request ended.
 */
bool uu_poll_tw_shot(struct uu_req *req)
{
	struct uu_poll_cmd *poll_st = uu_cmd(req, poll);
	struct uu_pollfile *pf;
	struct pollfd pfd;
	uint32_t m;

	pthread_mutex_lock(&P.lock);
	req->poll_tw = false;
	if (req->poll_state == UU_POLLST_CANCEL_AT_TW) {
		if (req->ud_pprev)
			ud_index_del(req);
		pthread_mutex_unlock(&P.lock);
		req->res = -ECANCELED;
		return true;
	}
	pf = req->pf;
	if (req->poll_state != UU_POLLST_ARMED || !pf) {
		pthread_mutex_unlock(&P.lock);
		return false;
	}
#ifdef UU_MUTATE_ARM_SHOT_LATE
	/* the shot left to the readiness engine's first look */
	if (!poll_st->tw_nr) {
		pthread_mutex_unlock(&P.lock);
		return false;
	}
#endif
	if (!poll_st->tw_nr) {
		/* readiness found at arm that the readiness engine has not
		 * seen yet: its shot now, as the kernel's task_work posts it
		 * before the submitter's next enter; the engine's first look
		 * is that same readiness (no second shot) */
		m = poll_st->tw_mask;
		poll_st->arm_absorb = true;
	} else if (poll_st->tw_nr == 1) {
		/* one wakeup: its mask, as the kernel stashed it (even if
		 * the data was taken since) */
		m = poll_st->tw_mask;
	} else {
		/* several: the kernel polls the file again */
		pfd.fd = pf->fd;
		pfd.events = POLLIN | POLLOUT | POLLPRI | POLLRDHUP |
			     POLLRDNORM | POLLWRNORM | POLLRDBAND | POLLWRBAND;
		pfd.revents = 0;
		if (poll(&pfd, 1, 0) < 0)
			pfd.revents = 0;
		m = (uint32_t)pfd.revents & poll_st->events;
	}
	/* nothing ready: armed still (a one-shot poll is re-armed,
	 * IOU_POLL_REISSUE) */
	if (!m || (poll_st->multishot && !poll_st->tw_uring &&
		   uu_req_post_cqe(req, (int32_t)m, 0, 0))) {
		pthread_mutex_unlock(&P.lock);
		return false;
	}
	waiter_unlink(pf, req);
	pollfile_release_locked(pf);
	pthread_mutex_unlock(&P.lock);
	req->res = (int32_t)m;
	return true;
}

/*
 * The batch that armed req ended (core/req.c release_holds): a wakeup it
 * held back, or a cancel that came meanwhile, runs now.  True when req
 * ended (its res set).
 */
bool uu_poll_release_hold(struct uu_req *req)
{
	bool run;

	pthread_mutex_lock(&P.lock);
	req->poll_hold = false;
	run = req->poll_tw || req->poll_state == UU_POLLST_CANCEL_AT_TW;
	pthread_mutex_unlock(&P.lock);
	return run && uu_poll_tw_shot(req);
}
