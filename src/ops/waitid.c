// SPDX-License-Identifier: MIT
/*
 * WAITID: waitid(2) for the submitting process's children (which in len,
 * the id in fd, the options in file_index, the siginfo in addr2).
 *
 * As the kernel's io_waitid, the wait is first tried when the request is
 * issued (in the submitting thread, with WNOHANG added).  If no child is
 * ready, the kernel arms a callback on the wait queue; uuring does the
 * same where a file can stand for that wait: a wait for the exit of one
 * child (P_PID or P_PIDFD, WEXITED only) waits on the readiness engine
 * for a pidfd of that child (readable once it has exited), which tries
 * again, so it is cancelled as the kernel's is (ASYNC_CANCEL and a
 * LINK_TIMEOUT find it and answer 1, io_waitid_cancel's count).  Any
 * other wait (P_ALL, P_PGID, stops and continues) blocks in io-wq, where
 * a cancel interrupts it (-EALREADY, docs/compatibility.md #10).  A
 * child's state change stays until it is reaped, so nothing is missed in
 * between.  Only the six siginfo fields the kernel writes are written
 * (si_signo, si_errno, si_code, si_pid, si_uid, si_status), all zero when
 * WNOHANG finds nothing.  A waitid that waits with __WNOTHREAD would wait
 * for the io-wq worker's own children, of which it has none: such a
 * request is completed by the first try only (documented divergence).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/types.h"
#include "exec/iowq.h"
#include "ops/ops.h"
#include "ops/waitid.h"
#include "util/cpsys.h"
#include "util/fdutil.h"
#include "util/usercopy.h"

#ifndef __WNOTHREAD
#define __WNOTHREAD 0x20000000
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/*
 * A pidfd for the one child this request waits for the exit of, in the
 * engine's fd range, or -1 if the wait is of another kind (or none can be
 * had: the request then waits in io-wq).
 */
static int exit_pidfd(const struct uu_req *req)
{
	const struct uu_waitid_cmd *waitid_st = uu_cmd(req, waitid);
	int fd;

	if ((waitid_st->options & (WSTOPPED | WCONTINUED | __WNOTHREAD)) ||
	    !(waitid_st->options & WEXITED))
		return -1;
	if (waitid_st->which == P_PID)
		fd = (int)syscall(SYS_pidfd_open, waitid_st->upid, 0);
	else if (waitid_st->which == P_PIDFD)
		return uu_fd_dup_reserved(waitid_st->upid);
	else
		return -1;
	return fd < 0 ? -1 : uu_fd_to_reserved(fd);
}

int uu_waitid_prep(struct uu_req *req)
{
	struct uu_waitid_cmd *waitid_st = uu_cmd(req, waitid);
	const struct io_uring_sqe *sqe = &req->sqe;

	if (sqe->addr || sqe->buf_index || sqe->addr3 || sqe->waitid_flags)
		return -EINVAL;
	waitid_st->which = (int)sqe->len;
	waitid_st->upid = sqe->fd;
	waitid_st->options = (int)sqe->file_index;
	waitid_st->uinfop = sqe->addr2;
	return 0;
}

/* io_waitid_copy_si: the fields waitid(2) writes, at their offsets */
static int copy_si(uint64_t uinfop, const siginfo_t *si, int signo)
{
	int32_t head[3] = { signo, 0, signo ? si->si_code : 0 };
	int32_t body[3] = { 0, 0, 0 };

	if (!uinfop)
		return 0;
	if (signo) {
		body[0] = si->si_pid;
		body[1] = (int32_t)si->si_uid;
		body[2] = si->si_status;
	}
	if (uu_copy_to_user((void *)(uintptr_t)uinfop, head, sizeof(head)) ||
	    uu_copy_to_user((char *)(uintptr_t)uinfop +
			    offsetof(siginfo_t, si_pid), body, sizeof(body)))
		return -EFAULT;
	return 0;
}

int uu_waitid_issue(struct uu_req *req, unsigned int issue_flags)
{
	struct uu_waitid_cmd *waitid_st = uu_cmd(req, waitid);
	bool worker = issue_flags & UU_ISSUE_F_WORKER;
	int options = waitid_st->options;
	bool nohang = options & WNOHANG;
	siginfo_t si;
	long ret;

	if (!worker)
		options |= WNOHANG;
	memset(&si, 0, sizeof(si));
	if (worker)
		uu_iowq_blocking(true); /* counted out while it sleeps */
	do {
		ret = syscall(SYS_waitid, waitid_st->which,
			      waitid_st->upid, &si, options, NULL);
	} while (ret < 0 && errno == EINTR && worker &&
		 !uu_req_cancelled(req));
	if (worker)
		uu_iowq_blocking(false);
	/* interrupted by a cancel: the kernel's waitid (not io-wq there)
	 * completes -ECANCELED (T7) */
	if (ret < 0 && errno == EINTR && worker && uu_cp_cancelled())
		return -ECANCELED;
	if (ret < 0)
		return -errno;
	/* WNOHANG and nothing ready: si_pid stays 0 */
	if (!si.si_pid && !nohang && !worker &&
	    !(waitid_st->options & __WNOTHREAD)) {
		/* tried again when the pidfd turns readable (the request
		 * owns it from the first park on) */
		if (!req->fd_owned) {
			int fd = exit_pidfd(req);

			if (fd >= 0) {
				req->fd = fd;
				req->fd_owned = true;
			}
		}
		if (req->fd_owned)
			return uu_park(req, UU_ISSUE_PARK_POLLIN);
		return uu_park(req, UU_ISSUE_PUNT_UNBOUND);
	}
	return copy_si(waitid_st->uinfop, &si, si.si_pid ? SIGCHLD : 0);
}
