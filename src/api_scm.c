// SPDX-License-Identifier: MIT
/*
 * sendmsg and sendmmsg for a program linked to libuuring: a ring fd in
 * SCM_RIGHTS is refused with EINVAL, as Linux 6.18's scm_fp_copy refuses
 * an io_uring file; everything else goes to libc's call unchanged.
 *
 * A uuring ring fd is an AF_UNIX socket, which the kernel would pass: the
 * ring would then be referenced from a message in flight, possibly on a
 * socket registered in that same ring, and never released (liburing's
 * ring-leak).  Under `uuring run` the preload library's interposers do
 * the same check (src/shim/preload.c); this file is linked into
 * libuuring only, never into the preload library.  The engine's own
 * SENDMSG requests (ops/net.c) reach this definition too, and the kernel's
 * IORING_OP_SENDMSG refuses an io_uring file the same way.
 *
 * Only a message with control data is looked at: the header and the
 * control data are read with the fault-safe copy, and a bad pointer is
 * left for the real call to report (EFAULT).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/registry.h"
#include "core/types.h"
#include "util/usercopy.h"

/* referenced from api.c, so that this object is always linked */
const char uu_api_scm_anchor;

typedef ssize_t (*sendmsg_fn)(int, const struct msghdr *, int);
typedef int (*sendmmsg_fn)(int, struct mmsghdr *, unsigned int, int);

static bool is_ring(int fd)
{
	int err;
	struct uu_ring *r = uu_ring_get(fd, &err);

	if (!r)
		return false;
	uu_ring_put(r);
	return true;
}

static bool control_passes_ring(const struct msghdr *umsg)
{
	unsigned char control[4096]; /* 253 fds fit (SCM_MAX_FD) */
	struct cmsghdr *c;
	struct msghdr m;

	if (uu_copy_from_user(&m, umsg, sizeof(m)) || !m.msg_control ||
	    m.msg_controllen < sizeof(struct cmsghdr))
		return false;
	if (m.msg_controllen > sizeof(control))
		m.msg_controllen = sizeof(control);
	if (uu_copy_from_user(control, m.msg_control, m.msg_controllen))
		return false;
	m.msg_control = control;
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (is_ring(fd))
				return true;
		}
	}
	return false;
}

/*
 * libc's definition, the next one after this object's in lookup order
 * (libc, or a sanitizer's interceptor); a fully static program has none
 * to find and gets the system call.  Relaxed: a racing first call
 * resolves the same pointer again.
 */
static void *next_sym(void **slot, const char *name)
{
	void *f = __atomic_load_n(slot, __ATOMIC_RELAXED);

	if (!f) {
		f = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, f, __ATOMIC_RELAXED);
	}
	return f;
}

UU_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	static void *real;
	sendmsg_fn f;

	if (msg && control_passes_ring(msg)) {
		errno = EINVAL;
		return -1;
	}
	f = (sendmsg_fn)next_sym(&real, "sendmsg");
	if (f)
		return f(fd, msg, flags);
	return syscall(SYS_sendmsg, fd, msg, flags);
}

/* as the kernel's sendmmsg: the messages before the refused one are sent
 * and counted; a refused first message is the call's error */
UU_EXPORT int sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen,
		       int flags)
{
	static void *real;
	sendmmsg_fn f;
	unsigned int i;

	if (vec) {
		for (i = 0; i < vlen; i++)
			if (control_passes_ring(&vec[i].msg_hdr))
				break;
		if (i == 0 && vlen) {
			errno = EINVAL;
			return -1;
		}
		vlen = i;
	}
	f = (sendmmsg_fn)next_sym(&real, "sendmmsg");
	if (f)
		return f(fd, vec, vlen, flags);
	return (int)syscall(SYS_sendmmsg, fd, vec, vlen, flags);
}
