/* SPDX-License-Identifier: MIT */
#ifndef UURING_FDUTIL_H
#define UURING_FDUTIL_H

#include <sys/types.h>

/* Moves fd to the engine's reserved range (>= 1024 when RLIMIT_NOFILE
 * allows), close-on-exec; returns the new fd (the old one is closed). */
int uu_fd_to_reserved(int fd);
/* A close-on-exec dup of fd in the reserved range, or -errno. */
int uu_fd_dup_reserved(int fd);
/* st_ino of fd, or 0 if fd is not open */
ino_t uu_fd_ino(int fd);
/* The eventfd behind fd (its fdinfo "eventfd-id"), or -1 if fd is not an
 * eventfd or the kernel does not say: equal ids, the same eventfd. */
long long uu_eventfd_id(int fd);

#endif
