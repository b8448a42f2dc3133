// SPDX-License-Identifier: MIT
/* io_uring_register(2) and the per-thread registered ring fds. */
#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>

#include "core/buffers.h"
#include "core/cancel.h"
#include "core/memregion.h"
#include "core/pers.h"
#include "core/register.h"
#include "core/registry.h"
#include "core/ring.h"
#include "core/rsrc.h"
#include "core/setup.h"
#include "core/tctx.h"
#include "core/types.h"
#include "core/xproc.h"
#include "exec/iowq.h"
#include "exec/sqpoll.h"
#include "ops/msg_ring.h"
#include "util/usercopy.h"
#include "uuring.h"

/* element i of a user array; plain integer arithmetic, since the
 * application's pointer may be NULL or wild (the copy reports -EFAULT) */
static inline void *uarg_at(void *arg, unsigned int i)
{
	return (void *)((uintptr_t)arg + i * sizeof(struct io_uring_rsrc_update));
}

/*
 * A thread that exits lets go of its slots, as the kernel drops a task's
 * registered rings when it exits: a ring they pinned past its last close
 * goes away then (core/tctx.c runs this at the thread's exit).
 */

static void regring_release(struct uu_ring *t)
{
	int owned = t->owned_app_fd;

	if (owned >= 0) {
		/* a REGISTERED_FD_ONLY ring: this slot was its only
		 * handle, so the ring goes away */
		t->owned_app_fd = -1;
		uu_ring_close_fd(owned);
	} else {
		uu_ring_unpin(t);
	}
	uu_ring_put(t);
}

void uu_ringfds_thread_exit(void)
{
	for (unsigned int s = 0; s < UU_RINGFD_REG_MAX; s++) {
		struct uu_ring *t = uu_tctx.ringfds[s];

		if (t) {
			uu_tctx.ringfds[s] = NULL;
			regring_release(t);
		}
	}
}

static void regring_mark_thread(void)
{
	uu_tctx_note_exit(UU_TCTX_EXIT_RINGFDS);
}

struct uu_ring *uu_regring_get(unsigned int idx, int *err)
{
	struct uu_ring *r;

	if (idx >= UU_RINGFD_REG_MAX || !uu_tctx.has_tctx) {
		*err = -EINVAL;
		return NULL;
	}
	r = uu_tctx.ringfds[idx];
	if (!r) {
		*err = -EBADF;
		return NULL;
	}
	atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
	return r;
}

int uu_register_ring_fds(struct uu_ring *ring, void *arg, unsigned int nr)
{
	struct io_uring_rsrc_update upd;
	unsigned int i;
	int ret = 0;

	(void)ring;
	if (!nr || nr > UU_RINGFD_REG_MAX)
		return -EINVAL;
	uu_tctx.has_tctx = true;
	for (i = 0; i < nr; i++) {
		struct uu_ring *target;
		int err;

		ret = uu_copy_from_user(&upd, uarg_at(arg, i), sizeof(upd));
		if (ret)
			break;
		if (upd.resv) {
			ret = -EINVAL;
			break;
		}
		if (upd.offset == -1U) {
			unsigned int s;

			for (s = 0; s < UU_RINGFD_REG_MAX; s++)
				if (!uu_tctx.ringfds[s])
					break;
			if (s == UU_RINGFD_REG_MAX) {
				ret = -EBUSY;
				break;
			}
			upd.offset = s;
		} else {
			if (upd.offset >= UU_RINGFD_REG_MAX) {
				ret = -EINVAL;
				break;
			}
			if (uu_tctx.ringfds[upd.offset]) {
				ret = -EBUSY;
				break;
			}
		}
		target = uu_ring_get((int)upd.data, &err);
		if (!target) {
			ret = err;
			break;
		}
		/* the app gets the slot back in offset */
		ret = uu_copy_to_user(uarg_at(arg, i), &upd, sizeof(upd));
		if (ret) {
			uu_ring_put(target);
			break;
		}
		uu_registry_note_fd(target, (int)upd.data);
		target->app_fd_hint = (int)upd.data;
		atomic_fetch_add_explicit(&target->regfd_pins, 1,
					  memory_order_relaxed);
		regring_mark_thread();
		uu_tctx.ringfds[upd.offset] = target;
	}
	return i ? (int)i : ret;
}

int uu_unregister_ring_fds(void *arg, unsigned int nr)
{
	struct io_uring_rsrc_update upd;
	unsigned int i;
	int ret = 0;

	if (!nr || nr > UU_RINGFD_REG_MAX)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		ret = uu_copy_from_user(&upd, uarg_at(arg, i), sizeof(upd));
		if (ret)
			break;
		if (upd.resv || upd.data || upd.offset >= UU_RINGFD_REG_MAX) {
			ret = -EINVAL;
			break;
		}
		if (uu_tctx.ringfds[upd.offset]) {
			struct uu_ring *t = uu_tctx.ringfds[upd.offset];

			uu_tctx.ringfds[upd.offset] = NULL;
			regring_release(t);
		}
	}
	return i ? (int)i : ret;
}

/*
 * IORING_SETUP_REGISTERED_FD_ONLY: the ring's only handle is a registered
 * ring slot of the creating thread.  Takes a reference for the slot;
 * returns the slot index or -EBUSY.
 */
int uu_regring_add_owned(struct uu_ring *ring)
{
	for (unsigned int s = 0; s < UU_RINGFD_REG_MAX; s++) {
		if (!uu_tctx.ringfds[s]) {
			atomic_fetch_add(&ring->refs, 1);
			regring_mark_thread();
			uu_tctx.ringfds[s] = ring;
			return (int)s;
		}
	}
	return -EBUSY;
}

static int register_probe(void *arg, unsigned int nr_args)
{
	struct io_uring_probe *p;
	size_t size;
	int ret;

	if (nr_args > UU_OP_LAST)
		nr_args = UU_OP_LAST;
	size = sizeof(*p) + nr_args * sizeof(p->ops[0]);
	p = calloc(1, size);
	if (!p)
		return -ENOMEM;
	ret = uu_copy_from_user(p, arg, size);
	if (ret)
		goto out;
	for (size_t i = 0; i < size; i++) {
		if (((unsigned char *)p)[i]) {
			ret = -EINVAL;
			goto out;
		}
	}
	p->last_op = UU_OP_LAST - 1;
	for (unsigned int i = 0; i < nr_args; i++) {
		p->ops[i].op = (uint8_t)i;
		if (uu_opdefs[i].supported)
			p->ops[i].flags = IO_URING_OP_SUPPORTED;
	}
	p->ops_len = (uint8_t)nr_args;
	ret = uu_copy_to_user(arg, p, size);
out:
	free(p);
	return ret;
}

/*
 * IORING_REGISTER_SYNC_CANCEL: cancel like ASYNC_CANCEL and wait until
 * what was found has completed (requests running in a worker, -EALREADY,
 * are waited for), up to the optional timeout (-ETIME).
 */
static int sync_cancel(struct uu_ring *r, void *arg)
{
	struct io_uring_sync_cancel_reg sc;
	struct uu_cancel_match m;
	struct timespec deadline = { 0, 0 };
	bool has_timeout;
	int ret, found = 0;

	ret = uu_copy_from_user(&sc, arg, sizeof(sc));
	if (ret)
		return ret;
	for (size_t i = 0; i < sizeof(sc.pad); i++)
		if (sc.pad[i])
			return -EINVAL;
	for (size_t i = 0; i < sizeof(sc.pad2) / sizeof(sc.pad2[0]); i++)
		if (sc.pad2[i])
			return -EINVAL;
	if (sc.flags & ~(IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_FD |
			 IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_FD_FIXED |
			 IORING_ASYNC_CANCEL_USERDATA | IORING_ASYNC_CANCEL_OP))
		return -EINVAL;
	if ((sc.flags & IORING_ASYNC_CANCEL_ANY) &&
	    (sc.flags & (IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_OP)))
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	m.user_data = sc.addr;
	m.flags = sc.flags;
	m.opcode = sc.opcode;
	m.from_app = true;
	if (sc.flags & IORING_ASYNC_CANCEL_FD) {
		struct stat st;
		int fd = sc.fd;

		if (sc.flags & IORING_ASYNC_CANCEL_FD_FIXED) {
			fd = uu_fixed_file(r, (unsigned int)sc.fd);
			if (fd < 0)
				return -EBADF;
		}
		if (fstat(fd, &st))
			return -EBADF;
		m.dev = st.st_dev;
		m.ino = st.st_ino;
	}
	has_timeout = sc.timeout.tv_sec != -1 || sc.timeout.tv_nsec != -1;
	if (has_timeout) {
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += sc.timeout.tv_sec;
		deadline.tv_nsec += sc.timeout.tv_nsec;
		while (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
	}
	/* on a ring shared across fork the peers cancel theirs too, and
	 * wait for it before they answer (from_app, xproc/xlife.c) */
	ret = uu_cancel_everywhere(r, &m);
	if (ret == -ENOENT)
		return ret;
	found = ret;
	/* what was found (running in a worker, -EALREADY, or cancelled and
	 * completing) must be gone before the call returns */
	for (;;) {
		struct timespec now;

		if (!uu_cancel_still_parked(r, &m)) {
			/* and its CQE posted: the finisher is between the
			 * two for microseconds (every finish counts, so
			 * look until a moment with none) */
			while (!uu_cancel_settled(r))
				sched_yield();
			return found == -EALREADY ? 0 : found;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (has_timeout && (now.tv_sec > deadline.tv_sec ||
				    (now.tv_sec == deadline.tv_sec &&
				     now.tv_nsec >= deadline.tv_nsec)))
			return -ETIME;
		usleep(1000);
	}
}

_Static_assert(IORING_REGISTER_LAST <= 64, "register_op bitmap");
_Static_assert(IORING_OP_LAST <= 128, "sqe_op bitmap");

/* io_check_restriction: may this SQE be submitted on a restricted ring? */
bool uu_restriction_allows(const struct uu_ring *r, unsigned int opcode,
			   unsigned int sqe_flags)
{
	unsigned int required = r->restr.sqe_flags_required;

	if (!(r->restr.sqe_op[opcode / 64] & (1ull << (opcode % 64))))
		return false;
	if ((sqe_flags & required) != required)
		return false;
	return !(sqe_flags & ~(r->restr.sqe_flags_allowed | required));
}

/*
 * IORING_REGISTER_RESTRICTIONS: only on a ring still disabled
 * (R_DISABLED), only once; any bad entry leaves the ring unrestricted
 * and free to register again.
 */
static int register_restrictions(struct uu_ring *r, const void *arg,
				 unsigned int nr_args)
{
	struct io_uring_restriction all[IORING_RESTRICTION_LAST +
					IORING_REGISTER_LAST + IORING_OP_LAST];
	unsigned int i;
	int ret;

	if (!atomic_load(r->disabled))
		return -EBADFD;
	if (r->restr.registered)
		return -EBUSY;
	if (!arg || nr_args > sizeof(all) / sizeof(all[0]))
		return -EINVAL;
	/* the whole array is copied first: a fault anywhere is -EFAULT */
	ret = uu_copy_from_user(all, arg, nr_args * sizeof(all[0]));
	if (ret)
		return ret;
	for (i = 0; i < nr_args && !ret; i++) {
		const struct io_uring_restriction res = all[i];

		switch (res.opcode) {
		case IORING_RESTRICTION_REGISTER_OP:
			if (res.register_op >= IORING_REGISTER_LAST)
				ret = -EINVAL;
			else
				r->restr.register_op |= 1ull << res.register_op;
			break;
		case IORING_RESTRICTION_SQE_OP:
			if (res.sqe_op >= IORING_OP_LAST)
				ret = -EINVAL;
			else
				r->restr.sqe_op[res.sqe_op / 64] |=
					1ull << (res.sqe_op % 64);
			break;
		case IORING_RESTRICTION_SQE_FLAGS_ALLOWED:
			r->restr.sqe_flags_allowed = res.sqe_flags;
			break;
		case IORING_RESTRICTION_SQE_FLAGS_REQUIRED:
			r->restr.sqe_flags_required = res.sqe_flags;
			break;
		default:
			ret = -EINVAL;
		}
	}
	if (ret)
		memset(&r->restr, 0, sizeof(r->restr));
	else
		r->restr.registered = true;
	return ret;
}

/*
 * IORING_REGISTER_IOWQ_AFF: arg is a CPU mask of nr_args bytes, cut to
 * the kernel's cpumask size; CPUs beyond the possible ones are ignored
 * (the kernel compares nr_cpu_ids bits only).  A mask with a possible
 * CPU outside the caller's cpuset is -EINVAL there: here the affinity of
 * the workers then simply fails to narrow (documented).
 */
static int register_iowq_aff(struct uu_ring *r, unsigned int opcode,
			     void *arg, unsigned int nr_args)
{
	long possible;
	unsigned long bits[1024 / (8 * sizeof(long))];
	struct uu_iowq *wq;
	cpu_set_t set;
	size_t len;
	int ret;

	if (opcode == IORING_UNREGISTER_IOWQ_AFF) {
		if (arg || nr_args)
			return -EINVAL;
	} else if (!arg || !nr_args) {
		return -EINVAL;
	}
	/* per call, in the caller's thread: a rare register, and a cached
	 * copy would be written by concurrent registers unsynchronised */
	possible = sysconf(_SC_NPROCESSORS_CONF);
	if (arg) {
		/* cpumask_size(): whole longs covering the possible CPUs */
		len = ((size_t)possible + 8 * sizeof(long) - 1) /
		      (8 * sizeof(long)) * sizeof(long);
		if (len > sizeof(bits))
			len = sizeof(bits);
		if (nr_args < len)
			len = nr_args;
		memset(bits, 0, sizeof(bits));
		ret = uu_copy_from_user(bits, arg, len);
		if (ret)
			return ret;
	}
	wq = uu_iowq_of_caller(r);
	if (!wq)
		return -EINVAL;
	if (!arg) {
		uu_iowq_set_affinity(wq, NULL);
		return 0;
	}
	CPU_ZERO(&set);
	for (long cpu = 0; cpu < possible && cpu < CPU_SETSIZE; cpu++)
		if (bits[cpu / (8 * sizeof(long))] &
		    (1ul << (cpu % (8 * sizeof(long)))))
			CPU_SET(cpu, &set);
	uu_iowq_set_affinity(wq, &set);
	return 0;
}

static int enable_rings(struct uu_ring *r)
{
	if (!atomic_load(r->disabled))
		return -EBADFD;
	if ((r->setup_flags & IORING_SETUP_SINGLE_ISSUER) &&
	    !atomic_load(r->submitter_tid))
		atomic_store(r->submitter_tid, uu_gettid());
	if (r->restr.registered)
		r->restricted = true;
	/* publishes restricted: pairs with the acquire load of disabled
	 * before every submission */
	atomic_store_explicit(r->disabled, false, memory_order_release);
	/* as the kernel's io_register_enable_rings: a sleeping SQ thread
	 * is woken to take what was queued while the ring was disabled
	 * (uu_sqd_wake's seq_cst pairs with the thread's sleep check) */
	if (r->sqd)
		uu_sqd_wake(r->sqd);
	return 0;
}

/* (114 lines: __io_uring_register's one switch, kept whole) */
int uu_do_register(struct uu_ring *r, unsigned int opcode, void *arg,
		   unsigned int nr_args)
{
	pid_t owner = atomic_load(r->submitter_tid);

	if (owner && owner != uu_gettid())
		return -EEXIST;
	if (r->restricted && !(r->restr.register_op & (1ull << opcode)))
		return -EACCES;
	switch (opcode) {
	case IORING_REGISTER_RESTRICTIONS:
		return register_restrictions(r, arg, nr_args);
	case IORING_REGISTER_PROBE:
		if (!arg || nr_args > 256)
			return -EINVAL;
		return register_probe(arg, nr_args);
	case IORING_REGISTER_ENABLE_RINGS:
		if (arg || nr_args)
			return -EINVAL;
		return enable_rings(r);
	case IORING_REGISTER_RING_FDS:
		return uu_register_ring_fds(r, arg, nr_args);
	case IORING_UNREGISTER_RING_FDS:
		return uu_unregister_ring_fds(arg, nr_args);
	case IORING_REGISTER_FILES:
	case IORING_UNREGISTER_FILES:
	case IORING_REGISTER_FILES_UPDATE:
	case IORING_REGISTER_FILES2:
	case IORING_REGISTER_FILES_UPDATE2:
	case IORING_REGISTER_FILE_ALLOC_RANGE:
	case IORING_REGISTER_EVENTFD:
	case IORING_REGISTER_EVENTFD_ASYNC:
	case IORING_UNREGISTER_EVENTFD: {
		int ret;

		/* like the kernel's uring_lock: no inline issue sees a
		 * table change halfway */
		uu_shared_lock(r->uring_lock);
		pthread_mutex_lock(&r->files_lock);
		ret = uu_rsrc_register(r, opcode, arg, nr_args);
		pthread_mutex_unlock(&r->files_lock);
		pthread_mutex_unlock(r->uring_lock);
		return ret;
	}
	case IORING_REGISTER_BUFFERS:
	case IORING_UNREGISTER_BUFFERS:
	case IORING_REGISTER_BUFFERS2:
	case IORING_REGISTER_BUFFERS_UPDATE:
	case IORING_REGISTER_PBUF_RING:
	case IORING_UNREGISTER_PBUF_RING:
	case IORING_REGISTER_PBUF_STATUS: {
		int ret;

		/* as for files: under uring_lock, tables under files_lock */
		uu_shared_lock(r->uring_lock);
		pthread_mutex_lock(&r->files_lock);
		ret = uu_rsrc_buf_register(r, opcode, arg, nr_args);
		pthread_mutex_unlock(&r->files_lock);
		pthread_mutex_unlock(r->uring_lock);
		return ret;
	}
	case IORING_REGISTER_CLONE_BUFFERS:
		return uu_rsrc_buf_clone(r, arg, nr_args);
	case IORING_REGISTER_IOWQ_MAX_WORKERS: {
		uint32_t vals[2];
		int ret;

		if (nr_args != 2)
			return -EINVAL;
		ret = uu_copy_from_user(vals, arg, sizeof(vals));
		if (ret)
			return ret;
		uu_iowq_max_workers(r, vals);
		return uu_copy_to_user(arg, vals, sizeof(vals));
	}
	case IORING_REGISTER_IOWQ_AFF:
	case IORING_UNREGISTER_IOWQ_AFF:
		return register_iowq_aff(r, opcode, arg, nr_args);
	case IORING_REGISTER_CLOCK: {
		struct io_uring_clock_register cr;
		int ret;

		if (!arg || nr_args)
			return -EINVAL;
		ret = uu_copy_from_user(&cr, arg, sizeof(cr));
		if (ret)
			return ret;
		if (cr.__resv[0] || cr.__resv[1] || cr.__resv[2])
			return -EINVAL;
		if (cr.clockid != CLOCK_MONOTONIC && cr.clockid != CLOCK_BOOTTIME)
			return -EINVAL;
		r->clockid = (int)cr.clockid;
		return 0;
	}
	case IORING_REGISTER_PERSONALITY:
		return uu_register_personality(r, arg, nr_args);
	case IORING_UNREGISTER_PERSONALITY:
		return uu_unregister_personality(r, arg, nr_args);
	case IORING_REGISTER_RESIZE_RINGS:
		return uu_register_resize_rings(r, arg, nr_args);
	case IORING_REGISTER_MEM_REGION:
		return uu_register_mem_region(r, arg, nr_args);
	case IORING_REGISTER_QUERY:
		return uu_register_query(arg, nr_args);
	case IORING_REGISTER_SYNC_CANCEL:
		/* a NULL arg is -EINVAL before any copy, as the kernel's */
		if (!arg || nr_args != 1)
			return -EINVAL;
		return sync_cancel(r, arg);
	default:
		/* not built yet: what a kernel without it answers */
		return -EINVAL;
	}
}

UU_EXPORT int uuring_register(unsigned int fd, unsigned int opcode, void *arg,
			      unsigned int nr_args)
{
	struct uu_ring *r;
	bool use_reg = opcode & IORING_REGISTER_USE_REGISTERED_RING;
	int err, ret;

	opcode &= ~IORING_REGISTER_USE_REGISTERED_RING;
	/* unknown to the emulated kernel: -EINVAL before the fd is looked at */
	if (opcode >= UU_REGISTER_LAST)
		return -EINVAL;
	/* io_uring_register_blind: the opcodes that need no ring */
	if (fd == -1U) {
		if (opcode == IORING_REGISTER_SEND_MSG_RING)
			return uu_msg_ring_blind(arg, nr_args);
		return opcode == IORING_REGISTER_QUERY ?
			       uu_register_query(arg, nr_args) :
			       -EINVAL;
	}
	if (use_reg) {
		r = uu_regring_get(fd, &err);
	} else {
		r = (int)fd < 0 ? NULL : uu_ring_get((int)fd, &err);
		if ((int)fd < 0)
			err = -EBADF;
	}
	if (!r)
		return err;
	ret = uu_ring_use(r);
	if (!ret)
		ret = uu_do_register(r, opcode, arg, nr_args);
	uu_ring_put(r);
	return ret;
}
