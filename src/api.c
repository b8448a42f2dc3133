// SPDX-License-Identifier: MIT
/*
 * The ring-fd calls of the public API (mmap, munmap, close, dup), the
 * statistics, and the knobs.  Non-ring fds pass straight to the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/buffers.h"
#include "core/config.h"
#include "core/lockstat.h"
#include "core/memregion.h"
#include "core/registry.h"
#include "core/ring.h"
#include "core/types.h"
#include "exec/iowq.h"
#include "ops/kbuf.h"
#include "ublk/ublk.h"
#include "util/fault.h"
#include "util/mapalias.h"
#include "util/rawsys.h"
#include "uuring.h"

struct uu_config uu_config = { .sqpoll_tw_cap = 32 };

#ifdef UURING_API_SCM
/*
 * Links api_scm.c's sendmsg/sendmmsg into every program that links
 * libuuring.a, also where another definition would satisfy the names
 * first (a sanitizer runtime's weak interceptors, linked whole).
 */
extern const char uu_api_scm_anchor;
__attribute__((used)) static const char *const scm_anchor = &uu_api_scm_anchor;
#endif

/* "0"/"1" (as the other on/off knobs: anything but "0" is on) */
static int knob_bool(atomic_bool *knob, const char *v)
{
	atomic_store_explicit(knob, *v && strcmp(v, "0"), memory_order_relaxed);
	return 0;
}

static int knob_choice(atomic_bool *knob, const char *v, const char *off,
		       const char *on)
{
	if (strcmp(v, off) && strcmp(v, on))
		return -EINVAL;
	atomic_store_explicit(knob, !strcmp(v, on), memory_order_relaxed);
	return 0;
}

static int knob_set(const char *name, const char *v)
{
	if (!strcmp(name, "UURING_SQPOLL_TW_CAP")) {
		char *end;
		long n = strtol(v, &end, 10);

		if (*end || end == v || n < 1 || n > INT32_MAX)
			return -EINVAL;
		atomic_store_explicit(&uu_config.sqpoll_tw_cap, (unsigned int)n,
				      memory_order_relaxed);
		return 0;
	}
	if (!strcmp(name, "UURING_PRIO_TW"))
		return knob_bool(&uu_config.prio_tw, v);
	if (!strcmp(name, "UURING_ISSUE_VIA_TW"))
		return knob_bool(&uu_config.issue_via_tw, v);
	if (!strcmp(name, "UURING_WAKE"))
		return knob_choice(&uu_config.wake_every, v, "threshold", "every");
	if (!strcmp(name, "UURING_IOWQ_LOCK"))
		return knob_choice(&uu_config.iowq_global, v, "split", "global");
	if (!strcmp(name, "UURING_LOCKSTAT")) {
		uu_lockstat_enable(*v && strcmp(v, "0"));
		return 0;
	}
	return -EINVAL;
}

/* The knobs uuring_set_knob also takes, from the environment; a bad
 * value leaves the default, after one line on stderr. */
static void knobs_load(void)
{
	static const char *const names[] = {
		"UURING_SQPOLL_TW_CAP", "UURING_PRIO_TW", "UURING_ISSUE_VIA_TW",
		"UURING_WAKE",		"UURING_IOWQ_LOCK", "UURING_LOCKSTAT",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *v = getenv(names[i]);

		if (v && *v && knob_set(names[i], v))
			fprintf(stderr, "uuring: %s=%s: bad value, ignored\n",
				names[i], v);
	}
}

UU_EXPORT long uuring_fault_hits(const char *site)
{
	int s = site ? uu_fault_site_of(site) : -EINVAL;

	return s < 0 ? s : (long)uu_fault_count((enum uu_fault_site)s);
}

UU_EXPORT int uuring_set_knob(const char *name, const char *value)
{
	if (!name || !value)
		return -EINVAL;
	return knob_set(name, value);
}

void uu_config_load(void)
{
	const char *v = getenv("UURING_FAULT_OCQE_ALLOC");

	/* the two older switches are spellings of UURING_FAULT sites */
	if (v && *v && strcmp(v, "0"))
		uu_fault_parse("ocqe_alloc:0:0");
	v = getenv("UURING_FAULT_WORKER_CREATE");
	if (v && *v) {
		const char *colon = strchr(v, ':');
		char spec[64];

		snprintf(spec, sizeof(spec), "worker_create:%d:%d",
			 colon ? atoi(v) : 0, atoi(colon ? colon + 1 : v));
		if (atoi(colon ? colon + 1 : v) > 0)
			uu_fault_parse(spec);
	}
	v = getenv("UURING_FAULT");
	if (v && *v && uu_fault_parse(v))
		fprintf(stderr, "uuring: UURING_FAULT=%s: not site[:skip[:count]],... "
			"(uuring faults lists the sites); ignored in part\n", v);
	v = getenv("UURING_STATS");
	uu_config.stats_path = v && *v ? v : NULL;
	v = getenv("UURING_RING_FD_EDGES");
	uu_config.ring_fd_edges = v && *v && strcmp(v, "0");
	knobs_load();
}

static void *mmap_err(int err)
{
	return (void *)(intptr_t)err;
}

static void *raw_mmap(void *addr, size_t len, int prot, int flags, int fd,
		      off_t off)
{
	return uu_sys_mmap(addr, len, prot, flags, fd, off);
}

/*
 * A second mapping of the ring's shared pages (mremap with old size 0);
 * see docs/architecture.md "Mapping, and the kernel's aliasing".
 */
/*
 * Under ThreadSanitizer the application gets the engine's own mapping
 * instead of a second one: TSan tracks memory by virtual address and
 * cannot see that two mappings alias, so the release/acquire pairs on the
 * ring words would look like no synchronisation at all (false reports).
 * uuring_munmap then leaves engine mappings alone.  Test builds only.
 */
#if defined(__SANITIZE_THREAD__)
#define UU_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UU_TSAN 1
#endif
#endif

static void *map_region(void *src, size_t region, void *addr, size_t len,
			int prot, int flags)
{
	void *p;
	int err;

#ifdef UU_TSAN
	if (!(flags & MAP_FIXED) && len && len <= region &&
	    (prot & (PROT_READ | PROT_WRITE)) == (PROT_READ | PROT_WRITE))
		return src;
#endif
	(void)region; /* like the kernel, a longer mapping is allowed; only the
		       * region's pages are backed */
	err = uu_map_alias(src, addr, len, prot, flags, &p);
	return err ? mmap_err(err) : p;
}

UU_EXPORT void *uuring_mmap(void *addr, size_t length, int prot, int flags,
			    int fd, off_t offset)
{
	struct uu_ring *r = uu_ring_get_cached(fd);
	uint64_t off = (uint64_t)offset & IORING_OFF_MMAP_MASK;
	void *p;

	if (!r) {
		int err;

		if (fd < 0 || (flags & MAP_ANONYMOUS) ||
		    !(r = uu_ring_get(fd, &err))) {
			/* a ublk char device's descriptors (ublk/) */
			p = uu_ublk_try_mmap(addr, length, prot, flags, fd,
					     offset);
			return p ? p : raw_mmap(addr, length, prot, flags, fd,
						offset);
		}
	}
	/* the kernel's offset validation fails in get_unmapped_area, so
	 * mmap(2) reports ENOMEM for all of these */
	if (off == IORING_OFF_PBUF_RING) {
		int err = uu_kbuf_mmap(r, (uint64_t)offset, addr, length, prot,
				       flags, &p); /* IOU_PBUF_RING_MMAP */

		if (err)
			p = mmap_err(err);
	} else if (off == UU_MAP_OFF_PARAM_REGION) {
		int err = uu_mem_region_mmap(r, addr, length, prot, flags, &p);

		if (err)
			p = mmap_err(err);
	} else if (r->user_mem) {
		p = mmap_err(-ENOMEM); /* NO_MMAP rings cannot be mapped */
	} else if (off == IORING_OFF_SQ_RING || off == IORING_OFF_CQ_RING) {
		p = map_region(r->mem.rings, r->mem.rings_size, addr, length,
			       prot, flags);
	} else if (off == IORING_OFF_SQES) {
		p = map_region(r->mem.sqes, r->mem.sqes_size, addr, length, prot,
			       flags);
	} else {
		p = mmap_err(-ENOMEM);
	}
	uu_ring_put(r);
	return p;
}

UU_EXPORT int uuring_munmap(void *addr, size_t length)
{
#ifdef UU_TSAN
	if (uu_registry_is_engine_mapping(addr))
		return 0;
#endif
	return munmap(addr, length) ? -errno : 0;
}

UU_EXPORT int uuring_close(int fd)
{
	return uu_ring_close_fd(fd);
}

UU_EXPORT int uuring_dup(int fd)
{
	struct uu_ring *r;
	int nfd = uu_sys_dup(fd), err;

	if (nfd < 0)
		return nfd;
	r = uu_ring_get(fd, &err);
	if (r) {
		uu_registry_note_fd(r, nfd);
		uu_ring_put(r);
	}
	return nfd;
}

UU_EXPORT int uuring_is_ring_fd(int fd)
{
	int err;
	struct uu_ring *r = uu_ring_get(fd, &err);

	if (!r)
		return 0;
	uu_ring_put(r);
	return 1;
}

static void fill_stats(struct uu_ring *r, struct uuring_stats *s)
{
	uint64_t alive[2];

#define G(f) s->f = atomic_load_explicit(&r->st.f, memory_order_relaxed)
	G(enter_calls);
	G(sqes_consumed);
	G(sqes_dropped);
	G(cqes_posted);
	G(cqes_overflowed);
	G(cqes_lost);
	G(route_inline);
	G(route_iowq);
	G(route_poll);
	G(route_sqpoll);
	G(waits);
	G(wakeups);
	G(spurious_wakeups);
	G(readiness_signals);
	G(readiness_drains);
	G(tw_runs);
	G(tw_items);
	G(route_aio);
	G(route_nullb);
#undef G
	uu_iowq_worker_counts(alive, &s->iowq_workers_created);
	s->iowq_workers_bound = alive[0];
	s->iowq_workers_unbound = alive[1];
}

/* every counter, by the name both text forms print */
static const struct {
	const char *name;
	size_t off;
} stat_fields[] = {
#define F(f) { #f, offsetof(struct uuring_stats, f) }
	F(enter_calls),	      F(sqes_consumed),	       F(sqes_dropped),
	F(cqes_posted),	      F(cqes_overflowed),      F(cqes_lost),
	F(route_inline),      F(route_iowq),	       F(route_poll),
	F(route_sqpoll),      F(waits),		       F(wakeups),
	F(spurious_wakeups),  F(readiness_signals),    F(readiness_drains),
	F(tw_runs),	      F(tw_items),	       F(iowq_workers_bound),
	F(iowq_workers_unbound), F(iowq_workers_created), F(route_aio),
	F(route_nullb),
#undef F
};

/* Appends "<name><sep><value><end>" for every counter; returns the new
 * length, or -1 if buf is too small. */
static int format_stats(const struct uuring_stats *s, char *buf, size_t size,
			size_t len, char sep, char end)
{
	for (size_t i = 0; i < sizeof(stat_fields) / sizeof(stat_fields[0]);
	     i++) {
		uint64_t v;
		int n;

		memcpy(&v, (const char *)s + stat_fields[i].off, sizeof(v));
		n = snprintf(buf + len, size - len, "%s%c%llu%c",
			     stat_fields[i].name, sep, (unsigned long long)v,
			     end);
		if (n < 0 || (size_t)n >= size - len)
			return -1;
		len += (size_t)n;
	}
	return (int)len;
}

UU_EXPORT int uuring_get_stats(int ring_fd, struct uuring_stats *st,
			       size_t size)
{
	struct uuring_stats s;
	struct uu_ring *r;
	int err;

	r = uu_ring_get(ring_fd, &err);
	if (!r)
		return err;
	fill_stats(r, &s);
	uu_ring_put(r);
	if (size > sizeof(s))
		size = sizeof(s);
	memcpy(st, &s, size);
	return (int)size;
}

/* UURING_LOCKSTAT: its lines after the counters (process-wide, so not
 * in struct uuring_stats: uuring_get_lockstat) */
static int dump_lockstat(int out_fd, const char *prefix)
{
	char buf[2048];
	int n;

	if (!atomic_load_explicit(&uu_lockstat_on, memory_order_relaxed))
		return 0;
	n = uu_lockstat_format(buf, sizeof(buf), prefix);
	if (n < 0)
		return -ENOBUFS;
	if (n && write(out_fd, buf, (size_t)n) != n)
		return -EIO;
	return 0;
}

UU_EXPORT int uuring_dump_stats(int ring_fd, int out_fd)
{
	struct uuring_stats s;
	char buf[1024];
	int n, ret;

	ret = uuring_get_stats(ring_fd, &s, sizeof(s));
	if (ret < 0)
		return ret;
	n = format_stats(&s, buf, sizeof(buf), 0, ' ', '\n');
	if (n < 0)
		return -ENOBUFS;
	if (write(out_fd, buf, (size_t)n) != n)
		return -EIO;
	return dump_lockstat(out_fd, "");
}

/*
 * UURING_STATS=PATH: one line per ring appended to PATH when the ring is
 * released (its last fd closed) or, for rings still open, when the
 * process exits (uu_registry_report_live).  One write(2) per line on an
 * O_APPEND file, so a program's processes can share the file; a forked
 * child does not report its parent's rings.  This is how `uuring run`
 * shows that uuring, not the kernel or a fallback, served a program.
 */
void uu_stats_report(struct uu_ring *r, const char *when)
{
	struct uuring_stats s;
	char buf[1024];
	int fd, n;

	if (!uu_config.stats_path || uu_ring_foreign(r) ||
	    atomic_exchange(&r->stats_reported, true))
		return;
	fill_stats(r, &s);
	n = snprintf(buf, sizeof(buf),
		     "uuring-stats pid=%d at=%s setup_flags=0x%x sq_entries=%u "
		     "cq_entries=%u ",
		     (int)getpid(), when, r->setup_flags, r->mem.sq_entries,
		     r->mem.cq_entries);
	if (n <= 0 || n >= (int)sizeof(buf))
		return;
	n = format_stats(&s, buf, sizeof(buf) - 1, (size_t)n, '=', ' ');
	if (n <= 0)
		return;
	buf[n - 1] = '\n'; /* the last separator ends the line */
	fd = open(uu_config.stats_path,
		  O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, buf, (size_t)n) != n) {
		/* nothing to do: statistics are best effort */
	}
	snprintf(buf, sizeof(buf), "uuring-lockstat pid=%d at=%s ",
		 (int)getpid(), when);
	dump_lockstat(fd, buf);
	uu_sys_close(fd);
}
