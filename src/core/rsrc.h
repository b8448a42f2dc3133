/* SPDX-License-Identifier: MIT */
/*
 * Registered files, the CQ eventfd, FILES_UPDATE (core/rsrc.c).
 */
#ifndef UURING_CORE_RSRC_H
#define UURING_CORE_RSRC_H

#include "core/types.h"

int uu_rsrc_register(struct uu_ring *ring, unsigned int opcode, void *arg,
		     unsigned int nr_args);
void uu_eventfd_signal_locked(struct uu_ring *ring, uint32_t tail);
void uu_eventfd_signal_tw(struct uu_ring *ring);
int uu_fixed_file(struct uu_ring *ring, unsigned int idx);
/* as uu_fixed_file; a tagged slot's file also takes a reference in *tag
 * (NULL otherwise), dropped with uu_file_tag_put when the request ends */
struct uu_file_tag;
int uu_fixed_file_ref(struct uu_ring *ring, unsigned int idx,
		      struct uu_file_tag **tag);
void uu_file_tag_put(struct uu_file_tag *tag);
int uu_fixed_install(struct uu_ring *ring, int fd, uint32_t file_slot);
int uu_fixed_remove(struct uu_ring *ring, uint32_t file_slot);
struct stat;
/* fd (st: its fstat) is an io_uring instance, uuring's or the kernel's */
bool uu_is_ring_fd(int fd, const struct stat *st);
int uu_fixed_file_dup(struct uu_ring *r, unsigned int idx);
int uu_files_update_prep(struct uu_req *req);
int uu_files_update_issue(struct uu_req *req, unsigned int issue_flags);
void uu_rsrc_free(struct uu_ring *ring);

/* per-op state, in the request's area (uu_req_cmd in core/types.h) */
/* FILES_UPDATE */
struct uu_upd_cmd {
	uint64_t arg;      /* the user's array of fds */
	uint32_t nr, offset;
};

#endif /* UURING_CORE_RSRC_H */
