/* SPDX-License-Identifier: MIT */
/*
 * O_DIRECT through Linux AIO (exec/aio.c).
 */
#ifndef UURING_EXEC_AIO_H
#define UURING_EXEC_AIO_H

#include "core/types.h"

/* O_DIRECT through Linux AIO (exec/aio.c): whether req can go there,
 * then a batch of such requests in one io_submit (how many were taken:
 * a prefix; the others go to io-wq) */
bool uu_aio_usable(struct uu_req *req);
unsigned int uu_aio_submit_batch(struct uu_req **reqs, unsigned int n);
#define UU_AIO_BATCH 64

void uu_aio_atfork_prepare(void);
void uu_aio_atfork_parent(void);
void uu_aio_atfork_child(void);

#endif /* UURING_EXEC_AIO_H */
