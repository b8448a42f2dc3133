/* SPDX-License-Identifier: MIT */
#ifndef UURING_FDUTIL_H
#define UURING_FDUTIL_H

#include <stdbool.h>
#include <sys/types.h>

/* Moves fd to the engine's reserved range (>= 1024 when RLIMIT_NOFILE
 * allows), close-on-exec; returns the new fd (the old one is closed). */
int uu_fd_to_reserved(int fd);
/* eventfd(0, flags) for the engine's own use (UURING_FAULT site
 * "eventfd": -1 with EMFILE) */
int uu_engine_eventfd(int flags);
/* A close-on-exec dup of fd in the reserved range, or -errno. */
int uu_fd_dup_reserved(int fd);
/* st_ino of fd, or 0 if fd is not open */
ino_t uu_fd_ino(int fd);
/* The eventfd behind fd (its fdinfo "eventfd-id"), or -1 if fd is not an
 * eventfd or the kernel does not say: equal ids, the same eventfd. */
long long uu_eventfd_id(int fd);
/*
 * Whether a call made in this process on fd (a write, a send, a close)
 * could change the readiness of a file someone polls, and so whether a
 * polled fd can become ready that way: false for regular files,
 * directories, block devices, the memory devices (/dev/null, /dev/zero,
 * ...) and IP sockets bound to an address other than loopback (woken by
 * the network only); true for the rest (pipes and FIFOs, other character
 * devices such as a pty's other end, anonymous-inode files such as an
 * eventfd, UNIX sockets, loopback sockets), and when fd cannot be looked
 * at.  Costs an fstat and, for a socket, a getsockname.
 */
bool uu_fd_may_wake_inproc(int fd);
/* Whether this process holds an fanotify or inotify group (an fd open on
 * one), by a look at /proc/self/fd; false if it cannot be read. */
bool uu_proc_has_fsnotify_group(void);

#endif
