/* SPDX-License-Identifier: MIT */
/*
 * One table of fork hooks (util/forkhook.c), installed with one
 * pthread_atfork: each mechanism of the engine that keeps state a forked
 * child must not inherit as is (its threads do not exist there, its fds
 * are the parent's open files: docs/architecture.md, "fork") registers
 * its own hook from a constructor, instead of a hub that knows them all.
 *
 * Order: prepare runs in ascending rank, parent in descending rank (the
 * locks prepare took are released in the reverse order), child in
 * ascending rank (the child is single-threaded: it resets what comes
 * first in the lock order first).  The ranks below are the lock order.
 */
#ifndef UURING_FORKHOOK_H
#define UURING_FORKHOOK_H

enum uu_fork_rank {
	UU_FORK_RANK_XPROC = 10,    /* shared-ring adoption lock, lifelines */
	UU_FORK_RANK_REGISTRY = 20, /* the live-ring list's lock */
	UU_FORK_RANK_XPROC_RINGS = 25, /* per live ring, under that lock */
	UU_FORK_RANK_POLLER = 30,
	UU_FORK_RANK_TIMER = 40,
	UU_FORK_RANK_AIO = 50,
	UU_FORK_RANK_IOWQ = 60,
	UU_FORK_RANK_WAIT = 70,
};

struct uu_fork_hook {
	enum uu_fork_rank rank;
	void (*prepare)(void); /* any of the three may be NULL */
	void (*parent)(void);
	void (*child)(void);
};

/* From a constructor; h must stay valid (a static const).  The table
 * holds a few entries per mechanism; a full table drops h and says so on
 * stderr (a programming error, caught by every fork test). */
void uu_fork_hook_register(const struct uu_fork_hook *h);

/* Defines a mechanism's hook and the constructor that registers it. */
#define UU_FORK_HOOK(name, rank_, prepare_, parent_, child_)              \
	static const struct uu_fork_hook name = {                         \
		.rank = (rank_),                                          \
		.prepare = (prepare_),                                    \
		.parent = (parent_),                                      \
		.child = (child_),                                        \
	};                                                                \
	__attribute__((constructor)) static void name##_register(void)   \
	{                                                                 \
		uu_fork_hook_register(&name);                             \
	}

#endif
