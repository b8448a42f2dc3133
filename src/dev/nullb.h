/* SPDX-License-Identifier: MIT */
/*
 * The null target of the block-queue model (dev/blkq.h), with null_blk's
 * parameters, reached at the fd level: UURING_NULLB or uuring_nullb_config
 * names regular files, and READ/WRITE(V)(_FIXED) and FSYNC on an fd whose
 * (st_dev, st_ino) is one of them are served by the model instead of the
 * file.  See the top of nullb.c.
 */
#ifndef UURING_DEV_NULLB_H
#define UURING_DEV_NULLB_H

#include <stdatomic.h>
#include <stdbool.h>

struct uu_req;

/* A device is configured: the issue hooks look (one relaxed load; the
 * only cost on the path of programs without UURING_NULLB). */
extern atomic_bool uu_nullb_active;

/* ops/rw.c: true if req's file is a null device, *res then the issue's
 * result (a CQE result, or uu_park's) */
bool uu_nullb_rw(struct uu_req *req, bool is_write, int *res);
/* ops/fs.c: the same for FSYNC */
bool uu_nullb_fsync(struct uu_req *req, int *res);
/* core/setup.c: UURING_NULLB is read at the first setup; 0, or -EINVAL
 * (every setup) when it is bad */
int uu_nullb_setup_check(void);

#endif
