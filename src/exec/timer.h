/* SPDX-License-Identifier: MIT */
/*
 * The timer thread (exec/timer.c): struct uu_timer is in core/types.h.
 */
#ifndef UURING_EXEC_TIMER_H
#define UURING_EXEC_TIMER_H

#include "core/types.h"

int uu_timer_arm(struct uu_timer *t);
bool uu_timer_cancel(struct uu_timer *t); /* true: was pending, disarmed */
int64_t uu_clock_now(int clock);

void uu_timer_prewarm(void);

void uu_timer_atfork_prepare(void);
void uu_timer_atfork_parent(void);
void uu_timer_atfork_child(void);

#endif /* UURING_EXEC_TIMER_H */
