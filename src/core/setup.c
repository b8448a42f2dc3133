// SPDX-License-Identifier: MIT
/*
 * io_uring_setup(2): parameter validation in the kernel's order, then ring
 * creation (core/ring.c) and registration of the fd.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "core/register.h"
#include "core/registry.h"
#include "core/ring.h"
#include "core/setup.h"
#include "core/tctx.h"
#include "core/types.h"
#include "core/wait.h"
#include "dev/nullb.h"
#include "exec/iowq.h"
#include "exec/poller.h"
#include "exec/sqpoll.h"
#include "exec/timer.h"
#include "util/fdutil.h"
#include "util/rawsys.h"
#include "util/usercopy.h"
#include "uuring.h"

/* Flags a 6.18 kernel knows; anything else is -EINVAL. */
#define SETUP_KNOWN_FLAGS ((IORING_SETUP_CQE_MIXED << 1) - 1)

static unsigned int roundup_pow2(unsigned int v)
{
	unsigned int p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* io_uring_sanitise_params */
static int sanitise_flags(unsigned int flags)
{
	if (flags & ~SETUP_KNOWN_FLAGS)
		return -EINVAL;
	if ((flags & IORING_SETUP_REGISTERED_FD_ONLY) &&
	    !(flags & IORING_SETUP_NO_MMAP))
		return -EINVAL;
	if ((flags & IORING_SETUP_SQPOLL) &&
	    (flags & (IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG |
		      IORING_SETUP_DEFER_TASKRUN)))
		return -EINVAL;
	if ((flags & IORING_SETUP_TASKRUN_FLAG) &&
	    !(flags & (IORING_SETUP_COOP_TASKRUN | IORING_SETUP_DEFER_TASKRUN)))
		return -EINVAL;
	if ((flags & IORING_SETUP_HYBRID_IOPOLL) && !(flags & IORING_SETUP_IOPOLL))
		return -EINVAL;
	if ((flags & IORING_SETUP_DEFER_TASKRUN) &&
	    !(flags & IORING_SETUP_SINGLE_ISSUER))
		return -EINVAL;
	if ((flags & (IORING_SETUP_CQE32 | IORING_SETUP_CQE_MIXED)) ==
	    (IORING_SETUP_CQE32 | IORING_SETUP_CQE_MIXED))
		return -EINVAL;
	if ((flags & IORING_SETUP_SQ_AFF) && !(flags & IORING_SETUP_SQPOLL))
		return -EINVAL;
	/*
	 * Valid for the kernel, but their machinery (SQPOLL, io-wq sharing,
	 * task_work modes, mixed CQEs, fd-less rings) is not built
	 * yet: refused like a kernel that predates them.
	 */
	if (flags & ~UU_SETUP_SUPPORTED)
		return -EINVAL;
	return 0;
}

/* io_uring_fill_params: sizes (also for REGISTER_RESIZE_RINGS) */
int uu_setup_fill_sizes(unsigned int *entries, struct io_uring_params *p)
{
	if (!*entries)
		return -EINVAL;
	if (*entries > UU_MAX_ENTRIES) {
		if (!(p->flags & IORING_SETUP_CLAMP))
			return -EINVAL;
		*entries = UU_MAX_ENTRIES;
	}
	*entries = roundup_pow2(*entries);
	if (p->flags & IORING_SETUP_CQSIZE) {
		if (!p->cq_entries)
			return -EINVAL;
		if (p->cq_entries > UU_MAX_CQ_ENTRIES) {
			if (!(p->flags & IORING_SETUP_CLAMP))
				return -EINVAL;
			p->cq_entries = UU_MAX_CQ_ENTRIES;
		}
		p->cq_entries = roundup_pow2(p->cq_entries);
		if (p->cq_entries < *entries)
			return -EINVAL;
	} else {
		p->cq_entries = 2 * *entries;
	}
	return 0;
}

UU_EXPORT int uuring_setup(unsigned int entries, struct io_uring_params *up)
{
	struct io_uring_params p;
	struct uu_ring *r;
	int fd, ret;

	ret = uu_copy_from_user(&p, up, sizeof(p));
	if (ret)
		return ret;
	for (unsigned int i = 0; i < sizeof(p.resv) / sizeof(p.resv[0]); i++)
		if (p.resv[i])
			return -EINVAL;
	ret = sanitise_flags(p.flags);
	if (ret)
		return ret;
	ret = uu_setup_fill_sizes(&entries, &p);
	if (ret)
		return ret;
	/* a bad UURING_NULLB refuses every ring rather than let it serve
	 * the real file (dev/nullb.c) */
	ret = uu_nullb_setup_check();
	if (ret)
		return ret;

	uu_ring_sweep(); /* rings whose last fd was closed behind our back */
	uu_poller_prewarm();
	uu_iowq_prewarm();
	uu_timer_prewarm();
	uu_wait_prewarm();
	if (p.flags & IORING_SETUP_ATTACH_WQ) {
		/*
		 * Checked before the new ring takes an fd (the kernel
		 * installs it last: a closed wq_fd is -ENXIO, never the new
		 * ring), with the kernel's errors.  io-wq pools are per
		 * thread here, so without SQPOLL attaching only checks that
		 * wq_fd is a ring; with SQPOLL that ring must have an SQ
		 * thread (io_attach_sq_data).
		 */
		int err;
		struct uu_ring *other = uu_ring_get((int)p.wq_fd, &err);
		bool no_sqd;

		if (!other)
			return err == -EBADF ? -ENXIO : -EINVAL;
		no_sqd = !other->sqd;
		uu_ring_put(other);
		if ((p.flags & IORING_SETUP_SQPOLL) && no_sqd)
			return -EINVAL;
	}
	fd = uu_ring_create(&r, entries, &p);
	if (fd < 0)
		return fd;
	if (p.flags & IORING_SETUP_SQPOLL) {
		ret = uu_sqpoll_setup(r, &p);
		if (ret) {
			if (ret == -EBADF)
				ret = -ENXIO;
			uu_sys_close(fd);
			uu_ring_put(r);
			return ret;
		}
	}
	uu_tctx.has_tctx = true;
	if (p.flags & IORING_SETUP_REGISTERED_FD_ONLY) {
		fd = uu_fd_to_reserved(fd);
		r->app_fd_hint = fd;
	}
	ret = uu_copy_to_user(up, &p, sizeof(p));
	if (!ret)
		ret = uu_registry_add(r, fd);
	if (ret) {
		uu_sqpoll_detach(r);
		uu_sys_close(fd);
		uu_ring_put(r);
		return ret;
	}
	if (p.flags & IORING_SETUP_REGISTERED_FD_ONLY) {
		/* the application gets a registered index, never an fd */
		int idx = uu_regring_add_owned(r);

		if (idx < 0) {
			uu_ring_close_fd(fd);
			return idx;
		}
		r->owned_app_fd = fd;
		return idx;
	}
	return fd;
}
