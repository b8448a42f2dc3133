/* SPDX-License-Identifier: MIT */
/*
 * Personalities (core/pers.c).
 */
#ifndef UURING_CORE_PERS_H
#define UURING_CORE_PERS_H

#include "core/types.h"

struct uu_cred;
int uu_register_personality(struct uu_ring *r, void *arg,
			    unsigned int nr_args);
int uu_unregister_personality(struct uu_ring *r, void *arg, unsigned int id);
struct uu_cred *uu_personality_get(struct uu_ring *r, unsigned int id);
void uu_cred_put(struct uu_cred *c);
int uu_pers_issue(struct uu_req *req, unsigned int issue_flags);
void uu_personalities_free(struct uu_ring *r);

#endif /* UURING_CORE_PERS_H */
