/* SPDX-License-Identifier: MIT */
/*
 * The umbrella of the engine's internal headers, during the transition
 * to one header per mechanism and per opcode family (the kernel's
 * layout): core/types.h holds the shared types, each other header the
 * calls of one part.  A file that includes only what it uses does not
 * need this one; nothing may be added here but an #include.
 */
#ifndef UURING_INTERNAL_H
#define UURING_INTERNAL_H

#include "uuring.h"
#include "util/fault.h"
#include "core/types.h"
#include "core/config.h"
#include "core/cq.h"
#include "core/req.h"
#include "core/iopoll.h"
#include "core/cancel.h"
#include "core/register.h"
#include "core/registry.h"
#include "core/ring.h"
#include "core/setup.h"
#include "core/rsrc.h"
#include "core/pers.h"
#include "core/buffers.h"
#include "core/task_work.h"
#include "core/tctx.h"
#include "core/wait.h"
#include "core/xproc.h"
#include "exec/iowq.h"
#include "exec/aio.h"
#include "exec/poller.h"
#include "exec/sqpoll.h"
#include "exec/timer.h"
#include "ops/ops.h"
#include "ops/nop.h"
#include "ops/rw.h"
#include "ops/fs.h"
#include "ops/openclose.h"
#include "ops/xattr.h"
#include "ops/splice.h"
#include "ops/futex.h"
#include "ops/waitid.h"
#include "ops/epoll.h"
#include "ops/net.h"
#include "ops/kbuf.h"
#include "ops/timeout.h"
#include "ops/msg_ring.h"

#endif /* UURING_INTERNAL_H */
