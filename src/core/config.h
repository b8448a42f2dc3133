/* SPDX-License-Identifier: MIT */
/*
 * Knobs read at startup or set by uuring_set_knob (api.c), and the
 * UURING_STATS lines.
 */
#ifndef UURING_CORE_CONFIG_H
#define UURING_CORE_CONFIG_H

#include "core/types.h"

struct uu_config {
	const char *stats_path; /* UURING_STATS: per-ring lines appended */
	bool ring_fd_edges;     /* UURING_RING_FD_EDGES: every ring's fd
				 * gets an edge per CQ commit */
	/*
	 * Experiment switches (README "Configuration knobs"): earlier
	 * kernels' scheduling choices; defaults are Linux 6.18's.  Read
	 * relaxed where decided: uuring_set_knob may change them at any
	 * time, and they order nothing.
	 */
	atomic_uint sqpoll_tw_cap; /* UURING_SQPOLL_TW_CAP: items per loop */
	atomic_bool prio_tw;       /* UURING_PRIO_TW: completions first */
	atomic_bool issue_via_tw;  /* UURING_ISSUE_VIA_TW: SQPOLL issues in
				    * task_work */
	atomic_bool wake_every;    /* UURING_WAKE=every: a wake per commit */
	atomic_bool iowq_global;   /* UURING_IOWQ_LOCK=global: one io-wq lock */
};
#define uu_knob(f) atomic_load_explicit(&uu_config.f, memory_order_relaxed)
extern struct uu_config uu_config;
void uu_config_load(void);
void uu_stats_report(struct uu_ring *ring, const char *when);
void uu_registry_report_live(void);

#endif /* UURING_CORE_CONFIG_H */
