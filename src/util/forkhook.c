// SPDX-License-Identifier: MIT
/*
 * The table of fork hooks (util/forkhook.h).  Registration happens in
 * constructors, before any thread of the engine exists, so the table is
 * written by one thread before any fork can read it; constructors of
 * different files run in an unspecified order, so entries are kept
 * sorted by rank as they arrive.
 */
#include <pthread.h>
#include <stdio.h>

#include "util/forkhook.h"

#define MAX_FORK_HOOKS 16

static const struct uu_fork_hook *hooks[MAX_FORK_HOOKS];
static int nr_hooks;

static void run_prepare(void)
{
	for (int i = 0; i < nr_hooks; i++)
		if (hooks[i]->prepare)
			hooks[i]->prepare();
}

static void run_parent(void)
{
	for (int i = nr_hooks - 1; i >= 0; i--)
		if (hooks[i]->parent)
			hooks[i]->parent();
}

static void run_child(void)
{
	for (int i = 0; i < nr_hooks; i++)
		if (hooks[i]->child)
			hooks[i]->child();
}

void uu_fork_hook_register(const struct uu_fork_hook *h)
{
	int i;

	if (!nr_hooks)
		pthread_atfork(run_prepare, run_parent, run_child);
	if (nr_hooks == MAX_FORK_HOOKS) {
		fprintf(stderr, "uuring: fork hook table full (rank %d)\n",
			(int)h->rank);
		return;
	}
	/* insertion sort: equal ranks keep their registration order */
	for (i = nr_hooks; i > 0 && hooks[i - 1]->rank > h->rank; i--)
		hooks[i] = hooks[i - 1];
	hooks[i] = h;
	nr_hooks++;
}
