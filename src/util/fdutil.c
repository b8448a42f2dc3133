// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <sys/eventfd.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fdutil.h"
#include "util/fault.h"
#include "util/rawsys.h"

#define UU_RESERVED_FD_BASE 1024

/*
 * ThreadSanitizer follows file descriptors through libc's close(): after a
 * raw close it would still take the low number for the engine's file, and
 * report a race when another thread (the poller accepting a connection)
 * gets that number.  Test builds only.
 */
#if defined(__SANITIZE_THREAD__)
#define UU_TSAN_FDS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UU_TSAN_FDS 1
#endif
#endif

int uu_fd_to_reserved(int fd)
{
	struct rlimit rl;
	int nfd;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur <= UU_RESERVED_FD_BASE)
		return fd;
	nfd = uu_sys_fcntl(fd, F_DUPFD_CLOEXEC, UU_RESERVED_FD_BASE);
	if (nfd < 0)
		return fd; /* keep the low number rather than fail */
#ifdef UU_TSAN_FDS
	close(fd);
#else
	uu_sys_close(fd);
#endif
	return nfd;
}

int uu_engine_eventfd(int flags)
{
	if (uu_fault(UU_FAULT_EVENTFD)) {
		errno = EMFILE;
		return -1;
	}
	return eventfd(0, flags);
}

int uu_fd_dup_reserved(int fd)
{
	int nfd;

	/*
	 * The engine's dups must not take the low numbers the application
	 * expects open() to return next.  F_DUPFD fails with EINVAL exactly
	 * when the base is not below RLIMIT_NOFILE, so trying first saves
	 * a getrlimit per dup (the readiness engine dups once per file
	 * registration, and a program re-arming polls registers often).
	 */
	nfd = uu_sys_fcntl(fd, F_DUPFD_CLOEXEC, UU_RESERVED_FD_BASE);
	if (nfd == -EINVAL)
		nfd = uu_sys_fcntl(fd, F_DUPFD_CLOEXEC, 0);
	return nfd;
}

ino_t uu_fd_ino(int fd)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st))
		return 0;
	return st.st_ino;
}

long long uu_eventfd_id(int fd)
{
	char path[48], buf[512], *p;
	long long id = -1;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -1;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "eventfd-id:");
	if (p && sscanf(p + 11, "%lld", &id) != 1)
		id = -1;
	return id;
}

/* an IPv4 address in 127.0.0.0/8 or ::1 or ::ffff:127.x.y.z */
static bool sockaddr_is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (ss->ss_family == AF_INET6) {
		const struct in6_addr *a =
			&((const struct sockaddr_in6 *)ss)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

bool uu_fd_may_wake_inproc(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct stat st;

	if (fstat(fd, &st))
		return true;
	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode) ||
	    (S_ISCHR(st.st_mode) && major(st.st_rdev) == 1))
		return false;
	if (!S_ISSOCK(st.st_mode))
		return true;
	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return true; /* cannot tell: assume it can */
	if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)
		return true; /* AF_UNIX, netlink, ... */
	return sockaddr_is_loopback(&ss);
}

/*
 * Whether this process holds an fanotify or inotify group: one of its
 * fds is the anonymous inode "[fanotify]" or "inotify".  One readlink per
 * open fd; false if /proc cannot be read.
 */
bool uu_proc_has_fsnotify_group(void)
{
	static const char *const names[] = { "anon_inode:[fanotify]",
					     "anon_inode:inotify" };
	struct dirent *de;
	bool found = false;
	DIR *d = opendir("/proc/self/fd");

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		char link[64];
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			found |= !strcmp(link, names[i]);
	}
	closedir(d);
	return found;
}
