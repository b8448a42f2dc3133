// SPDX-License-Identifier: MIT
/*
 * One primitive for every read or write of application memory that the
 * engine itself performs (T1).  process_vm_readv/writev on our own pid makes
 * the kernel do the copy, so a bad address comes back as EFAULT instead of
 * SIGSEGV in an engine thread (or, later, in the SIGSYS handler).  If a
 * seccomp profile denies process_vm_* (EPERM/ENOSYS), a pipe does the same
 * job: write(2) from a bad address fails with EFAULT.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/usercopy.h"

static atomic_int use_pipe_fallback;

static int pipe_copy(void *dst, const void *src, size_t len, int check_dst)
{
	int p[2];
	int ret = 0;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	while (len) {
		size_t chunk = len > 65536 ? 65536 : len;
		ssize_t w = write(p[1], src, chunk);
		if (w < 0) {
			ret = -errno;
			break;
		}
		/* read(2) into a bad destination fails with EFAULT too */
		ssize_t r = read(p[0], dst, (size_t)w);
		if (r < 0) {
			ret = -errno;
			break;
		}
		if (r != w) {
			ret = -EFAULT;
			break;
		}
		src = (const char *)src + w;
		dst = (char *)dst + w;
		len -= (size_t)w;
	}
	(void)check_dst;
	close(p[0]);
	close(p[1]);
	return ret == -EFAULT || ret == 0 ? ret : -EFAULT;
}

static int vm_copy(void *dst, const void *src, size_t len, int to_user)
{
	struct iovec local = { .iov_base = to_user ? (void *)src : dst,
			       .iov_len = len };
	struct iovec remote = { .iov_base = to_user ? dst : (void *)src,
				.iov_len = len };
	size_t done = 0;

	if (!len)
		return 0;
	if (atomic_load_explicit(&use_pipe_fallback, memory_order_relaxed))
		return pipe_copy(dst, src, len, to_user);

	while (done < len) {
		ssize_t n = to_user ?
			process_vm_writev(getpid(), &local, 1, &remote, 1, 0) :
			process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
		if (n < 0) {
			if (errno == EPERM || errno == ENOSYS) {
				atomic_store(&use_pipe_fallback, 1);
				return pipe_copy(dst, src, len, to_user);
			}
			if (errno == EINTR)
				continue;
			return -EFAULT;
		}
		if (n == 0)
			return -EFAULT; /* partial copy stopped at a bad page */
		done += (size_t)n;
		local.iov_base = (char *)local.iov_base + n;
		local.iov_len -= (size_t)n;
		remote.iov_base = (char *)remote.iov_base + n;
		remote.iov_len -= (size_t)n;
	}
	return 0;
}

int uu_copy_from_user(void *dst, const void *usrc, size_t len)
{
	return vm_copy(dst, usrc, len, 0);
}

int uu_copy_to_user(void *udst, const void *src, size_t len)
{
	return vm_copy(udst, src, len, 1);
}

int uu_check_user(const void *uaddr, size_t len, int write)
{
	char buf[4096];
	const char *p = uaddr;

	while (len) {
		size_t chunk = len > sizeof(buf) ? sizeof(buf) : len;
		int ret = uu_copy_from_user(buf, p, chunk);
		if (ret)
			return ret;
		/* writing back what we read checks writability without change
		 * (racy only against concurrent writers of the same bytes,
		 * which own the memory anyway) */
		if (write && (ret = uu_copy_to_user((void *)p, buf, chunk)))
			return ret;
		p += chunk;
		len -= chunk;
	}
	return 0;
}
