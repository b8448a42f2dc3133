// SPDX-License-Identifier: MIT
/*
 * Personalities (IORING_REGISTER_PERSONALITY, the SQE personality field).
 *
 * The kernel snapshots the registering task's credentials and runs a
 * request that names the id with them (override_creds around the issue).
 * User space has no credential object to hand around, but a thread can
 * change its own ids: the raw setres[ug]id/setfs[ug]id/setgroups/capset
 * system calls act on the calling thread only (glibc's wrappers broadcast
 * to every thread; we never use them here).  So:
 *
 *  - REGISTER snapshots the calling thread's ids with raw calls: real,
 *    effective, saved and filesystem uid/gid, supplementary groups and
 *    the capability sets (capget of the thread itself).
 *  - A request with a personality is issued by whatever thread issues it
 *    (inline in the submitter, an io-wq worker, the SQPOLL thread, a
 *    continuation in an engine thread) between uu_pers_enter and
 *    uu_pers_leave: the thread's current ids are read (raw, ~7 calls);
 *    when the effective/filesystem ids, groups and effective capabilities
 *    already match, nothing changes.  Otherwise the thread switches its
 *    effective and filesystem uid/gid, groups and effective capabilities
 *    to the snapshot's, the op runs, and the thread switches back.
 *    Real and saved ids are never touched: they are what lets the thread
 *    return (see can_switch).  Requests without a personality never come
 *    here (one pointer test in issue_one).
 *  - Switching needs privilege: the thread must be able to become euid 0
 *    (its effective, real or saved uid is 0) with CAP_SETUID and
 *    CAP_SETGID permitted.  Otherwise the request completes with -EPERM
 *    where the kernel would have run it (docs/compatibility.md).
 *  - While switched, every asynchronous signal but the io-wq cancel
 *    signal is blocked (raw rt_sigprocmask), glibc's internal SIGSETXID
 *    included: an application handler must not run with the borrowed
 *    ids, and glibc's set*id broadcast from another thread must not be
 *    undone by our restore (it is handled after it instead).
 *  - Failing to switch back leaves the thread with ids it must not have:
 *    the process is aborted rather than run on with them.
 */
#include <errno.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/pers.h"
#include "core/types.h"
#include "util/cpsys.h"
#include "util/rawsys.h"

#define PERS_MAX 65535u /* the kernel's XA_LIMIT(0, USHRT_MAX), id 0 busy */
#define STACK_GROUPS 32

struct uu_cred {
	atomic_int refs;
	uid_t ruid, euid, suid, fsuid;
	gid_t rgid, egid, sgid, fsgid;
	struct __user_cap_data_struct cap[_LINUX_CAPABILITY_U32S_3];
	int ngroups;
	gid_t *groups;   /* points at grp when ngroups <= STACK_GROUPS */
	gid_t grp[STACK_GROUPS];
};

static long rs(long nr, long a1, long a2, long a3)
{
	return uu_rawsys6(nr, a1, a2, a3, 0, 0, 0);
}

static void cred_free_groups(struct uu_cred *c)
{
	if (c->groups && c->groups != c->grp)
		free(c->groups);
	c->groups = NULL;
}

/* The calling thread's ids, read with raw calls (per thread).  0/-errno. */
static int cred_read(struct uu_cred *c)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0,
	};
	long n;

	c->groups = NULL;
	if (rs(SYS_getresuid, (long)&c->ruid, (long)&c->euid, (long)&c->suid) ||
	    rs(SYS_getresgid, (long)&c->rgid, (long)&c->egid, (long)&c->sgid))
		return -EFAULT;
	/* an invalid id changes nothing and returns the current one */
	c->fsuid = (uid_t)rs(SYS_setfsuid, -1, 0, 0);
	c->fsgid = (gid_t)rs(SYS_setfsgid, -1, 0, 0);
	if (rs(SYS_capget, (long)&hdr, (long)c->cap, 0))
		return -EPERM;
	for (;;) {
		n = rs(SYS_getgroups, 0, 0, 0);
		if (n < 0)
			return (int)n;
		if (n <= STACK_GROUPS) {
			c->groups = c->grp;
		} else {
			c->groups = malloc((size_t)n * sizeof(gid_t));
			if (!c->groups)
				return -ENOMEM;
		}
		n = rs(SYS_getgroups, n, (long)c->groups, 0);
		if (n >= 0)
			break;
		/* the list grew in between (another setgroups): again */
		cred_free_groups(c);
		if (n != -EINVAL)
			return (int)n;
	}
	c->ngroups = (int)n;
	return 0;
}

static bool groups_equal(const struct uu_cred *a, const struct uu_cred *b)
{
	return a->ngroups == b->ngroups &&
	       !memcmp(a->groups, b->groups, (size_t)a->ngroups * sizeof(gid_t));
}

/* What permission checks see: the same means no switch is needed. */
static bool cred_same(const struct uu_cred *cur, const struct uu_cred *t)
{
	return cur->euid == t->euid && cur->fsuid == t->fsuid &&
	       cur->egid == t->egid && cur->fsgid == t->fsgid &&
	       cur->cap[0].effective == t->cap[0].effective &&
	       cur->cap[1].effective == t->cap[1].effective &&
	       groups_equal(cur, t);
}

static bool cap_has(const struct __user_cap_data_struct *cap, int bit,
		    bool permitted)
{
	uint32_t w = permitted ? cap[bit / 32].permitted : cap[bit / 32].effective;

	return w & (1u << (bit % 32));
}

/*
 * Whether this thread can switch to other ids and back: it must be able
 * to become euid 0 (and then holds its permitted set), and going from
 * euid 0 to another uid must not clear its permitted set (the kernel
 * clears it when real, effective and saved uid all become nonzero).
 */
static bool can_switch(const struct uu_cred *cur)
{
	if (cur->ruid && cur->suid)
		return false;
	return cap_has(cur->cap, CAP_SETUID, true) &&
	       cap_has(cur->cap, CAP_SETGID, true);
}

static int set_caps(const struct __user_cap_data_struct *eff_from,
		    const struct uu_cred *perm_from)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
		d[i].effective = eff_from[i].effective;
		d[i].permitted = perm_from->cap[i].permitted;
		d[i].inheritable = perm_from->cap[i].inheritable;
	}
	return (int)rs(SYS_capset, (long)&hdr, (long)d, 0);
}

/* the effective set = the permitted one: CAP_SETUID/SETGID usable */
static int raise_caps(const struct uu_cred *cur)
{
	struct __user_cap_data_struct all[_LINUX_CAPABILITY_U32S_3];

	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		all[i].effective = cur->cap[i].permitted;
	return set_caps(all, cur);
}

/*
 * Sets the effective and filesystem ids, groups and effective
 * capabilities of t, from a state where the thread may be anything
 * reachable by can_switch.  0 or -errno (the thread may be half-way: the
 * caller restores).
 */
static int switch_to(const struct uu_cred *t, const struct uu_cred *cur)
{
	long ret;

	/* privileged first: euid 0 and every permitted capability */
	ret = rs(SYS_setresuid, -1, 0, -1);
	if (!ret)
		ret = raise_caps(cur);
	if (!ret)
		ret = rs(SYS_setgroups, t->ngroups, (long)t->groups, 0);
	if (!ret)
		ret = rs(SYS_setresgid, -1, t->egid, -1);
	if (!ret && t->fsgid != t->egid) {
		rs(SYS_setfsgid, t->fsgid, 0, 0);
		if ((gid_t)rs(SYS_setfsgid, -1, 0, 0) != t->fsgid)
			ret = -EPERM;
	}
	if (!ret)
		ret = rs(SYS_setresuid, -1, t->euid, -1);
	if (!ret && t->fsuid != t->euid) {
		rs(SYS_setfsuid, t->fsuid, 0, 0);
		if ((uid_t)rs(SYS_setfsuid, -1, 0, 0) != t->fsuid)
			ret = -EPERM;
	}
	/* the uid changes cleared or restored capabilities by the kernel's
	 * fixup rules: set exactly the snapshot's effective set (EPERM if
	 * it is not within this thread's permitted set) */
	if (!ret)
		ret = set_caps(t->cap, cur);
	return (int)ret;
}

struct uu_pers_save {
	struct uu_cred cur;
	uint64_t mask;
};

static void restore_or_die(const struct uu_cred *cur)
{
	static const char msg[] =
		"uuring: cannot restore the thread's ids after a personality request\n";

	/* the same path as switch_to: from anything back to cur */
	if (switch_to(cur, cur)) {
		(void)!write(2, msg, sizeof(msg) - 1);
		abort();
	}
}

/* the kernel's sigset bit of signal n */
#define SIGBIT(n) (1ull << ((n) - 1))

static void block_signals(uint64_t *old)
{
	int cs = uu_cp_signal_number();
	/*
	 * A raw 64-bit mask: glibc's sigfillset/sigaddset leave out its
	 * internal signals, and SIGSETXID (33) is the one to block here.
	 * Not blocked: the synchronous ones (a fault while switched still
	 * kills, as it would anyway), our SIGSYS (a blocked trap kills) and
	 * the io-wq cancel signal (a blocking op stays interruptible).
	 */
	uint64_t set = ~(SIGBIT(SIGSEGV) | SIGBIT(SIGBUS) | SIGBIT(SIGILL) |
			 SIGBIT(SIGFPE) | SIGBIT(SIGTRAP) | SIGBIT(SIGSYS));

	if (cs > 0 && cs <= 64)
		set &= ~SIGBIT(cs);
	uu_rawsys6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&set, (long)old,
		   sizeof(set), 0, 0);
}

static void unblock_signals(const uint64_t *old)
{
	uu_rawsys6(SYS_rt_sigprocmask, SIG_SETMASK, (long)old, 0, sizeof(*old),
		   0, 0);
}

/*
 * Issues req with its personality's identity.  The switch and the switch
 * back happen in the calling thread around the op's issue.
 */
int uu_pers_issue(struct uu_req *req, unsigned int issue_flags)
{
	const struct uu_opdef *def = &uu_opdefs[req->opcode];
	struct uu_pers_save save;
	int ret, res;

	ret = cred_read(&save.cur);
	if (ret) {
		cred_free_groups(&save.cur);
		return ret;
	}
	if (cred_same(&save.cur, req->cred)) {
		cred_free_groups(&save.cur);
		return def->issue(req, issue_flags);
	}
	if (!can_switch(&save.cur)) {
		cred_free_groups(&save.cur);
		return -EPERM;
	}
	block_signals(&save.mask);
	ret = switch_to(req->cred, &save.cur);
	if (ret) {
		restore_or_die(&save.cur);
		unblock_signals(&save.mask);
		cred_free_groups(&save.cur);
		return ret;
	}
	res = def->issue(req, issue_flags);
	restore_or_die(&save.cur);
	unblock_signals(&save.mask);
	cred_free_groups(&save.cur);
	return res;
}

void uu_cred_put(struct uu_cred *c)
{
	/* acq_rel: the last put sees every use of the snapshot */
	if (c && atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1) {
		cred_free_groups(c);
		free(c);
	}
}

/* IORING_REGISTER_PERSONALITY: the calling thread's ids, by id (>= 1). */
int uu_register_personality(struct uu_ring *r, void *arg, unsigned int nr_args)
{
	struct uu_cred *c;
	uint32_t id;
	int ret;

	if (arg || nr_args)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	ret = cred_read(c);
	if (ret) {
		cred_free_groups(c);
		free(c);
		return ret;
	}
	/* the snapshot outlives this frame: groups on the heap or inline */
	atomic_init(&c->refs, 1);
	pthread_mutex_lock(&r->pers_lock);
	if (r->pers_count >= PERS_MAX) {
		pthread_mutex_unlock(&r->pers_lock);
		uu_cred_put(c);
		return -EBUSY;
	}
	if (!r->pers) {
		r->pers = calloc(PERS_MAX + 1, sizeof(*r->pers));
		if (!r->pers) {
			pthread_mutex_unlock(&r->pers_lock);
			uu_cred_put(c);
			return -ENOMEM;
		}
	}
	/*
	 * Cyclic, as the kernel's xa_alloc_cyclic: the first free id from
	 * the one after the last allocated, wrapping to the lowest free.
	 */
	id = r->pers_next ? r->pers_next : 1;
	while (id <= PERS_MAX && r->pers[id])
		id++;
	if (id > PERS_MAX) {
		id = 1;
		while (r->pers[id])
			id++;
	}
	r->pers[id] = c;
	r->pers_count++;
	r->pers_next = id + 1;
	pthread_mutex_unlock(&r->pers_lock);
	return (int)id;
}

/* IORING_UNREGISTER_PERSONALITY: nr_args is the id. */
int uu_unregister_personality(struct uu_ring *r, void *arg, unsigned int id)
{
	struct uu_cred *c = NULL;

	if (arg)
		return -EINVAL;
	pthread_mutex_lock(&r->pers_lock);
	if (r->pers && id && id <= PERS_MAX) {
		c = r->pers[id];
		r->pers[id] = NULL;
		if (c)
			r->pers_count--;
	}
	pthread_mutex_unlock(&r->pers_lock);
	if (!c)
		return -EINVAL;
	/* requests that hold it keep it until they are freed */
	uu_cred_put(c);
	return 0;
}

/* The snapshot for an SQE's personality, with a reference; NULL if none. */
struct uu_cred *uu_personality_get(struct uu_ring *r, unsigned int id)
{
	struct uu_cred *c = NULL;

	pthread_mutex_lock(&r->pers_lock);
	if (r->pers && id <= PERS_MAX) {
		c = r->pers[id];
		if (c)
			atomic_fetch_add_explicit(&c->refs, 1,
						  memory_order_relaxed);
	}
	pthread_mutex_unlock(&r->pers_lock);
	return c;
}

/* Ring teardown. */
void uu_personalities_free(struct uu_ring *r)
{
	if (r->pers) {
		for (unsigned int i = 1; i <= PERS_MAX; i++)
			uu_cred_put(r->pers[i]);
		free(r->pers);
		r->pers = NULL;
	}
	pthread_mutex_destroy(&r->pers_lock);
}
