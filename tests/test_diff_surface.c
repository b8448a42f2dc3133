// SPDX-License-Identifier: MIT
/*
 * Differential surface sweep: what this kernel accepts
 * and refuses, compared case by case with uuring: the REGISTER_PROBE
 * opcode table, every IORING_SETUP_* bit alone and in pairs, every
 * IORING_REGISTER_* opcode with empty or invalid arguments, the FEAT bits,
 * every IOSQE_* bit on a NOP, and the socket URING_CMD sub-commands.
 *
 * Only acceptance and the errno are compared.  A case that differs fails
 * the test unless the allowlist below names it with the value uuring
 * gives and the docs/compatibility.md row that says why; the kernel's
 * child runs such a case on uuring too, so an entry that no longer
 * matches what uuring does (fixed, or changed) fails until it is updated.
 *
 * The test picks its own ring flags: UURING_TEST_RING_MODE is ignored.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dtest.h"

/* socket URING_CMD sub-commands (include/uapi/linux/io_uring.h) */
#define SURF_SOCK_SIOCINQ	0
#define SURF_SOCK_SIOCOUTQ	1
#define SURF_SOCK_GETSOCKOPT	2
#define SURF_SOCK_SETSOCKOPT	3
#define SURF_SOCK_TX_TIMESTAMP	4

/* ---- the allowlist ---- */

struct allow {
	const char *label;	/* the recorded value's label */
	long uu;		/* what uuring gives there */
	const char *row;	/* the docs/compatibility.md row */
};

#define NOT_BUILT "docs/compatibility.md #31"
#define NOT_USER "docs/compatibility.md #32"

static const struct allow allowlist[] = {
	/* opcodes: RECV_ZC */
	{ "probe: op 58 supported", 0, NOT_USER },
	/* NAPI busy polling */
	{ "register: 27 NAPI (unmapped,1)", -EINVAL, NOT_USER },
	{ "register: 27 NAPI (zeros,1)", -EINVAL, NOT_USER },
	{ "register: 28 UNREGISTER_NAPI (NULL,1)", -EINVAL, NOT_USER },
	{ "register: 28 UNREGISTER_NAPI (unmapped,1)", -EINVAL, NOT_USER },
	{ "register: 28 UNREGISTER_NAPI (zeros,1)", -EINVAL, NOT_USER },
};

#define NALLOW (sizeof(allowlist) / sizeof(allowlist[0]))

/* which entries a scenario reached (kernel child only) */
static bool allow_seen[NALLOW];

static bool allowlist_active(void)
{
	return backend_under_test()->kind == BACKEND_UURING;
}

static int allow_find(const char *label)
{
	unsigned int i;

	for (i = 0; i < NALLOW; i++)
		if (allowlist[i].label && !strcmp(allowlist[i].label, label))
			return (int)i;
	return -1;
}

#define MAXV 4

/* One case: runs on be and fills up to MAXV values. */
typedef void (*case_fn)(const struct backend *be, const void *arg, long *v);

/*
 * Runs a case on c->be and records its values under "name: what[i]",
 * except allowlisted ones: for those the kernel's child runs the case on
 * uuring as well and checks that uuring still gives the listed value and
 * that it still differs from the kernel's.
 */
static void sweep(struct dctx *c, const char *name, case_fn fn,
		  const void *arg, const char *const *what, unsigned int nv)
{
	long v[MAXV], u[MAXV];
	bool have_u = false;
	char label[120], b1[32], b2[32];
	unsigned int i;

	memset(v, 0, sizeof(v));
	fn(c->be, arg, v);
	for (i = 0; i < nv; i++) {
		int a;

		if (what[i])
			snprintf(label, sizeof(label), "%s: %s", name, what[i]);
		else
			snprintf(label, sizeof(label), "%s", name);
		a = allowlist_active() ? allow_find(label) : -1;
		if (a < 0) {
			drec_int(c, v[i], "%s", label);
			continue;
		}
		if (!c->is_kernel)
			continue;
		allow_seen[a] = true;
		if (!have_u) {
			memset(u, 0, sizeof(u));
			fn(backend_under_test(), arg, u);
			have_u = true;
		}
		/* short: the harness keeps 120 characters of it */
		if (u[i] != allowlist[a].uu || u[i] == v[i])
			dcheck(c, 0, "allowlisted \"%s\": kernel %s uuring %s, listed %ld",
			       label, derrname(v[i], b1, sizeof(b1)),
			       derrname(u[i], b2, sizeof(b2)), allowlist[a].uu);
		if (getenv("DTEST_VERBOSE"))
			dnote(c, "allowlisted %s: kernel %s, uuring %s (%s)",
			      label, derrname(v[i], b1, sizeof(b1)),
			      derrname(u[i], b2, sizeof(b2)), allowlist[a].row);
	}
}

/* Every allowlist entry of this scenario ("prefix: ...") names a case. */
static void allow_check_used(struct dctx *c, const char *prefix)
{
	size_t n = strlen(prefix);
	unsigned int i;

	if (!c->is_kernel || !allowlist_active())
		return;
	for (i = 0; i < NALLOW; i++)
		if (allowlist[i].label &&
		    !strncmp(allowlist[i].label, prefix, n) &&
		    allowlist[i].label[n] == ':')
			dcheck(c, allow_seen[i], "allowlist entry \"%s\" names no case",
			       allowlist[i].label);
}

static void sweep1(struct dctx *c, const char *name, case_fn fn,
		   const void *arg)
{
	static const char *const none[] = { NULL };

	sweep(c, name, fn, arg, none, 1);
}

/* ---- names, for readable labels ---- */

static const char *const setup_names[] = {
	"IOPOLL", "SQPOLL", "SQ_AFF", "CQSIZE", "CLAMP", "ATTACH_WQ",
	"R_DISABLED", "SUBMIT_ALL", "COOP_TASKRUN", "TASKRUN_FLAG", "SQE128",
	"CQE32", "SINGLE_ISSUER", "DEFER_TASKRUN", "NO_MMAP",
	"REGISTERED_FD_ONLY", "NO_SQARRAY", "HYBRID_IOPOLL", "CQE_MIXED",
	"SQE_MIXED", "SQ_REWIND",
};
#define NSETUP_KNOWN (sizeof(setup_names) / sizeof(setup_names[0]))

static const char *setup_name(unsigned int bit, char *buf, size_t len)
{
	if (bit < NSETUP_KNOWN)
		return setup_names[bit];
	snprintf(buf, len, "bit%u", bit);
	return buf;
}

static const char *const reg_names[] = {
	"BUFFERS", "UNREGISTER_BUFFERS", "FILES", "UNREGISTER_FILES",
	"EVENTFD", "UNREGISTER_EVENTFD", "FILES_UPDATE", "EVENTFD_ASYNC",
	"PROBE", "PERSONALITY", "UNREGISTER_PERSONALITY", "RESTRICTIONS",
	"ENABLE_RINGS", "FILES2", "FILES_UPDATE2", "BUFFERS2",
	"BUFFERS_UPDATE", "IOWQ_AFF", "UNREGISTER_IOWQ_AFF",
	"IOWQ_MAX_WORKERS", "RING_FDS", "UNREGISTER_RING_FDS", "PBUF_RING",
	"UNREGISTER_PBUF_RING", "SYNC_CANCEL", "FILE_ALLOC_RANGE",
	"PBUF_STATUS", "NAPI", "UNREGISTER_NAPI", "CLOCK", "CLONE_BUFFERS",
	"SEND_MSG_RING", "ZCRX_IFQ", "RESIZE_RINGS", "MEM_REGION", "QUERY",
	"ZCRX_CTRL", "BPF_FILTER",
};
#define NREG_KNOWN (sizeof(reg_names) / sizeof(reg_names[0]))

static const char *const feat_names[] = {
	"SINGLE_MMAP", "NODROP", "SUBMIT_STABLE", "RW_CUR_POS",
	"CUR_PERSONALITY", "FAST_POLL", "POLL_32BITS", "SQPOLL_NONFIXED",
	"EXT_ARG", "NATIVE_WORKERS", "RSRC_TAGS", "CQE_SKIP", "LINKED_FILE",
	"REG_REG_RING", "RECVSEND_BUNDLE", "MIN_TIMEOUT", "RW_ATTR",
	"NO_IOWAIT",
};
#define NFEAT_KNOWN (sizeof(feat_names) / sizeof(feat_names[0]))

/* A plain ring (no mapping needed for register calls): fd or -errno. */
static int plain_ring(const struct backend *be, struct io_uring_params *p)
{
	struct io_uring_params local;

	if (!p) {
		memset(&local, 0, sizeof(local));
		p = &local;
	}
	return be->setup(4, p);
}

/* ---- REGISTER_PROBE ---- */

/* v[0]: the op's probe flags (unused: -1), or -errno of the probe */
static void case_probe(const struct backend *be, const void *arg, long *v)
{
	size_t sz = sizeof(struct io_uring_probe) +
		    256 * sizeof(struct io_uring_probe_op);
	struct io_uring_probe *pr = calloc(1, sz);
	long idx = (long)(intptr_t)arg;
	int fd = plain_ring(be, NULL), ret;

	if (!pr)
		abort();
	if (fd < 0) {
		v[0] = fd;
		free(pr);
		return;
	}
	ret = be->reg(fd, IORING_REGISTER_PROBE, pr, 256);
	if (ret < 0)
		v[0] = ret;
	else if (idx == -1)
		v[0] = pr->last_op;
	else if (idx == -2)
		v[0] = pr->ops_len;
	else
		v[0] = idx < pr->ops_len ?
		       (long)(pr->ops[idx].flags & IO_URING_OP_SUPPORTED) : -1;
	be->close(fd);
	free(pr);
}

static void sc_probe(struct dctx *c)
{
	char name[64];
	long i;

	sweep1(c, "probe: last_op", case_probe, (void *)(intptr_t)-1);
	sweep1(c, "probe: ops_len", case_probe, (void *)(intptr_t)-2);
	for (i = 0; i < 256; i++) {
		snprintf(name, sizeof(name), "probe: op %ld supported", i);
		sweep1(c, name, case_probe, (void *)(intptr_t)i);
	}
	allow_check_used(c, "probe");
}

/* ---- FEAT bits ---- */

static void case_feat(const struct backend *be, const void *arg, long *v)
{
	unsigned int bit = (unsigned int)(uintptr_t)arg;
	struct io_uring_params p;
	int fd;

	memset(&p, 0, sizeof(p));
	fd = plain_ring(be, &p);
	if (fd < 0) {
		v[0] = fd;
		return;
	}
	be->close(fd);
	v[0] = (p.features >> bit) & 1;
}

static void sc_features(struct dctx *c)
{
	char name[64];
	unsigned int b;

	for (b = 0; b < 32; b++) {
		snprintf(name, sizeof(name), "feat: bit %u %s", b,
			 b < NFEAT_KNOWN ? feat_names[b] : "(unknown)");
		sweep1(c, name, case_feat, (void *)(uintptr_t)b);
	}
	allow_check_used(c, "feat");
}

/* ---- setup flags ---- */

enum wq_kind {
	WQ_AUTO,	/* an SQPOLL ring with SQPOLL, else a plain one */
	WQ_PLAIN,	/* a ring without an SQ thread */
	WQ_CLOSED,	/* an fd number that is not open */
	WQ_NOT_RING,	/* /dev/null */
};

struct setup_case {
	unsigned int flags;
	/* leave out what the flags need (cq_entries, ring memory, wq_fd) */
	bool bare;
	enum wq_kind wq;
};

/*
 * io_uring_setup with the flags and, unless bare, what they need to be
 * meaningful: cq_entries for CQSIZE, ring and SQE memory for NO_MMAP, a
 * ring of the same backend for ATTACH_WQ.  The ring is closed at once
 * (a REGISTERED_FD_ONLY one unregistered); v[0]: 0 or -errno.
 */
static void case_setup(const struct backend *be, const void *arg, long *v)
{
	const struct setup_case *sc = arg;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct io_uring_params p;
	void *mem = MAP_FAILED;
	int wq = -1, fd;

	memset(&p, 0, sizeof(p));
	p.flags = sc->flags;
	if (!sc->bare) {
		if (p.flags & IORING_SETUP_CQSIZE)
			p.cq_entries = 8;
		if (p.flags & IORING_SETUP_NO_MMAP) {
			/* shared: uuring may keep using it until it is closed */
			mem = mmap(NULL, 8 * pg, PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
			if (mem == MAP_FAILED)
				abort();
			p.cq_off.user_addr = (uint64_t)(uintptr_t)mem;
			p.sq_off.user_addr = (uint64_t)(uintptr_t)mem + 6 * pg;
		}
		if ((p.flags & IORING_SETUP_ATTACH_WQ) &&
		    (sc->wq == WQ_AUTO || sc->wq == WQ_PLAIN)) {
			struct io_uring_params wp;

			memset(&wp, 0, sizeof(wp));
			if (sc->wq == WQ_AUTO)
				wp.flags = p.flags & IORING_SETUP_SQPOLL;
			wq = plain_ring(be, &wp);
		} else if (p.flags & IORING_SETUP_ATTACH_WQ) {
			wq = open("/dev/null", O_RDONLY);
		}
		p.wq_fd = (uint32_t)wq;
		if (sc->wq == WQ_CLOSED) {
			close(wq);
			wq = -1;
		}
	}
	fd = be->setup(4, &p);
	v[0] = fd < 0 ? fd : 0;
	if (fd >= 0 && (p.flags & IORING_SETUP_REGISTERED_FD_ONLY)) {
		struct io_uring_rsrc_update up;

		memset(&up, 0, sizeof(up));
		up.offset = (unsigned int)fd;
		be->reg((unsigned int)fd, IORING_UNREGISTER_RING_FDS |
			IORING_REGISTER_USE_REGISTERED_RING, &up, 1);
	} else if (fd >= 0) {
		be->close(fd);
	}
	if (wq >= 0 && sc->wq == WQ_NOT_RING)
		close(wq);
	else if (wq >= 0)
		be->close(wq);
	if (mem != MAP_FAILED)
		munmap(mem, 8 * pg);
}

static void setup_label(char *buf, size_t len, const char *prefix,
			unsigned int flags, const char *suffix)
{
	char nb[16];
	size_t off, start;
	unsigned int b;

	off = start = (size_t)snprintf(buf, len, "%s:", prefix);
	for (b = 0; b < 32 && off < len; b++)
		if (flags & (1U << b))
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						off > start ? "|" : " ",
						setup_name(b, nb, sizeof(nb)));
	if (!flags && off < len)
		off += (size_t)snprintf(buf + off, len - off, " 0");
	if (suffix && off < len)
		snprintf(buf + off, len - off, " %s", suffix);
}

static void sweep_setup(struct dctx *c, const char *prefix, unsigned int flags,
			bool bare)
{
	struct setup_case sc = { flags, bare, WQ_AUTO };
	char name[110];

	setup_label(name, sizeof(name), prefix, flags, bare ? "(bare)" : NULL);
	sweep1(c, name, case_setup, &sc);
}

/* each bit alone, bare and (where it needs something) with what it needs */
static void sc_setup_bits(struct dctx *c)
{
	const unsigned int needs = IORING_SETUP_CQSIZE | IORING_SETUP_NO_MMAP |
				   IORING_SETUP_ATTACH_WQ;
	unsigned int b;

	sweep_setup(c, "setup_bits", 0, true);
	for (b = 0; b < 32; b++) {
		sweep_setup(c, "setup_bits", 1U << b, true);
		if ((1U << b) & needs)
			sweep_setup(c, "setup_bits", 1U << b, false);
	}
	/* what ATTACH_WQ's wq_fd may be */
	for (b = 0; b < 2; b++) {
		static const char *const wq_names[] = {
			"wq SQPOLL ring", "wq plain ring", "wq closed fd",
			"wq /dev/null",
		};
		unsigned int w;

		for (w = WQ_AUTO; w <= WQ_NOT_RING; w++) {
			struct setup_case sc = {
				IORING_SETUP_ATTACH_WQ |
				(b ? IORING_SETUP_SQPOLL : 0), false,
				(enum wq_kind)w
			};
			char name[110];

			if (!b && w == WQ_AUTO)
				continue;	/* plain again */
			setup_label(name, sizeof(name), "setup_bits", sc.flags,
				    wq_names[w]);
			sweep1(c, name, case_setup, &sc);
		}
	}
	allow_check_used(c, "setup_bits");
}

/* every pair of known bits, with what they need */
static void sc_setup_pairs(struct dctx *c)
{
	unsigned int i, j;

	for (i = 0; i < NSETUP_KNOWN; i++)
		for (j = i + 1; j < NSETUP_KNOWN; j++)
			sweep_setup(c, "setup_pairs", (1U << i) | (1U << j),
				    false);
	allow_check_used(c, "setup_pairs");
}

/* pairs that only mean something together, with each other bit */
static void sc_setup_triples(struct dctx *c)
{
	static const unsigned int bases[] = {
		IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER,
		IORING_SETUP_NO_MMAP | IORING_SETUP_REGISTERED_FD_ONLY,
		IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF,
		IORING_SETUP_IOPOLL | IORING_SETUP_HYBRID_IOPOLL,
	};
	unsigned int i, b;

	for (i = 0; i < sizeof(bases) / sizeof(bases[0]); i++)
		for (b = 0; b < 32; b++)
			if (!(bases[i] & (1U << b)))
				sweep_setup(c, "setup_triples",
					    bases[i] | (1U << b), false);
	allow_check_used(c, "setup_triples");
}

/* ---- register opcodes ---- */

enum reg_arg {
	RA_NULL0,	/* arg NULL, nr_args 0 */
	RA_NULL1,	/* arg NULL, nr_args 1 */
	RA_UNMAPPED1,	/* an unmapped arg, nr_args 1 */
	RA_ZERO0,	/* a zeroed page, nr_args 0 */
	RA_ZERO1,	/* a zeroed page, nr_args 1 */
	RA_BLIND,	/* fd -1 ("blind" opcodes), arg NULL, nr_args 0 */
	RA_NOT_RING,	/* fd of /dev/null, arg NULL, nr_args 0 */
	RA_NR,
};

static const char *const reg_arg_names[RA_NR] = {
	"NULL,0", "NULL,1", "unmapped,1", "zeros,0", "zeros,1", "fd -1",
	"fd /dev/null",
};

struct reg_case {
	unsigned int opcode;
	enum reg_arg kind;
};

/* a fresh plain ring per call: earlier calls leave nothing behind */
static void case_register(const struct backend *be, const void *arg,
			  long *v)
{
	const struct reg_case *rc = arg;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	void *zeros = NULL, *a = NULL;
	unsigned int nr = 0;
	int fd, ret;

	if (rc->kind == RA_BLIND) {
		v[0] = be->reg(-1U, rc->opcode, NULL, 0);
		return;
	}
	if (rc->kind == RA_NOT_RING) {
		fd = open("/dev/null", O_RDONLY);
		v[0] = be->reg((unsigned int)fd, rc->opcode, NULL, 0);
		close(fd);
		return;
	}
	fd = plain_ring(be, NULL);
	if (fd < 0) {
		v[0] = fd;
		return;
	}
	switch (rc->kind) {
	case RA_NULL1:
		nr = 1;
		break;
	case RA_UNMAPPED1:
		a = dunmapped_addr();
		nr = 1;
		break;
	case RA_ZERO0:
	case RA_ZERO1:
		zeros = mmap(NULL, pg, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (zeros == MAP_FAILED)
			abort();
		a = zeros;
		nr = rc->kind == RA_ZERO1;
		break;
	default:
		break;
	}
	ret = be->reg((unsigned int)fd, rc->opcode, a, nr);
	v[0] = ret;
	be->close(fd);
	if (zeros)
		munmap(zeros, pg);
}

static void sweep_register(struct dctx *c, enum reg_arg kind)
{
	/* every opcode up to a few past the last, and some far off */
	static const unsigned int extra[] = { 64, 255, 0x7fffffff };
	unsigned int i, n = NREG_KNOWN + 4;
	char name[100];

	for (i = 0; i < n + sizeof(extra) / sizeof(extra[0]); i++) {
		struct reg_case rc;

		rc.opcode = i < n ? i : extra[i - n];
		rc.kind = kind;
		snprintf(name, sizeof(name), "register: %u %s (%s)", rc.opcode,
			 rc.opcode < NREG_KNOWN ? reg_names[rc.opcode] :
			 "unknown", reg_arg_names[kind]);
		sweep1(c, name, case_register, &rc);
	}
}

static void sc_register(struct dctx *c)
{
	unsigned int k;

	for (k = 0; k < RA_NR; k++)
		sweep_register(c, (enum reg_arg)k);
	allow_check_used(c, "register");
}

/* ---- SQE flags on a NOP ---- */

/*
 * A NOP (user_data 1) with the flags, submitted alone (a refused SQE ends
 * its submission), then a NOP (user_data 2) with IO_DRAIN in a second
 * enter: it completes only after the first one, so its CQE says that
 * everything the first would post is there (CQE_SKIP_SUCCESS posts
 * nothing), with no timing.  v: the first submit's result, the first
 * NOP's CQE count, res (1000: no CQE) and CQE flags.
 */
static void case_sqe_flags(const struct backend *be, const void *arg,
			   long *v)
{
	unsigned int flags = (unsigned int)(uintptr_t)arg, n = 0;
	struct io_uring_sqe *sqe;
	struct tcqe cqe;
	struct tring r;

	v[1] = 0;
	v[2] = 1000;
	v[3] = -1;
	v[0] = tring_init(&r, be, 8, 0);
	if (v[0])
		return;
	sqe = tring_get_sqe(&r);
	tring_prep_nop(sqe, 1);
	sqe->flags = (uint8_t)flags;
	v[0] = tring_submit(&r);
	sqe = tring_get_sqe(&r);
	tring_prep_nop(sqe, 2);
	sqe->flags = IOSQE_IO_DRAIN;
	tring_submit(&r);
	/* the 1 s per wait is a hang guard only */
	while (n++ < 4 && tring_reap_wait(&r, &cqe, 1, 1000000000LL) == 1) {
		if (cqe.user_data == 2)
			break;
		v[1]++;
		v[2] = cqe.res;
		v[3] = cqe.flags;
	}
	tring_exit(&r);
}

static void sc_sqe_flags(struct dctx *c)
{
	static const char *const what[] = { "submit", "CQEs", "res",
					    "cqe flags" };
	static const unsigned int combos[] = {
		IOSQE_IO_LINK | IOSQE_IO_HARDLINK,
		IOSQE_ASYNC | IOSQE_IO_DRAIN,
		IOSQE_CQE_SKIP_SUCCESS | IOSQE_IO_LINK,
		IOSQE_FIXED_FILE | IOSQE_BUFFER_SELECT,
		0x7f, 0xff,
	};
	char name[64];
	unsigned int b;

	for (b = 0; b <= 8; b++) {
		unsigned int f = b < 8 ? 1U << b : 0;

		snprintf(name, sizeof(name), "sqe_flags: 0x%02x", f);
		sweep(c, name, case_sqe_flags, (void *)(uintptr_t)f, what, 4);
	}
	for (b = 0; b < sizeof(combos) / sizeof(combos[0]); b++) {
		snprintf(name, sizeof(name), "sqe_flags: 0x%02x", combos[b]);
		sweep(c, name, case_sqe_flags, (void *)(uintptr_t)combos[b],
		      what, 4);
	}
	allow_check_used(c, "sqe_flags");
}

/* ---- socket URING_CMD ---- */

enum sock_kind {
	SK_UDP,		/* a UDP socket on 127.0.0.1 */
	SK_UDP_DATA,	/* the same with one 5-byte datagram queued */
	SK_UNIX,	/* an AF_UNIX stream socket */
	SK_PIPE,	/* not a socket */
};

struct sock_case {
	const char *name;
	enum sock_kind kind;
	uint32_t cmd_op;
	uint32_t level, optname;
};

static const struct sock_case sock_cases[] = {
	{ "SIOCINQ empty", SK_UDP, SURF_SOCK_SIOCINQ, 0, 0 },
	{ "SIOCINQ one datagram", SK_UDP_DATA, SURF_SOCK_SIOCINQ, 0, 0 },
	{ "SIOCOUTQ", SK_UDP, SURF_SOCK_SIOCOUTQ, 0, 0 },
	{ "SIOCINQ unix", SK_UNIX, SURF_SOCK_SIOCINQ, 0, 0 },
	{ "SIOCINQ pipe", SK_PIPE, SURF_SOCK_SIOCINQ, 0, 0 },
	{ "GETSOCKOPT SO_TYPE", SK_UDP, SURF_SOCK_GETSOCKOPT, SOL_SOCKET,
	  SO_TYPE },
	{ "GETSOCKOPT IP_TTL", SK_UDP, SURF_SOCK_GETSOCKOPT, IPPROTO_IP,
	  IP_TTL },
	{ "SETSOCKOPT SO_PRIORITY", SK_UDP, SURF_SOCK_SETSOCKOPT, SOL_SOCKET,
	  SO_PRIORITY },
	{ "SETSOCKOPT IP_TTL", SK_UDP, SURF_SOCK_SETSOCKOPT, IPPROTO_IP,
	  IP_TTL },
	{ "TX_TIMESTAMP", SK_UDP, SURF_SOCK_TX_TIMESTAMP, 0, 0 },
	{ "cmd_op 99", SK_UDP, 99, 0, 0 },
};

/*
 * v: the CQE's res (1000: none) and the option: getsockopt's output
 * (-1 if not written), 1 if setsockopt set it to 3, else 0 (-1 for
 * other sub-commands).
 */
static void case_sock(const struct backend *be, const void *arg, long *v)
{
	const struct sock_case *sc = arg;
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	struct io_uring_sqe *sqe;
	struct tcqe cqe;
	struct tring r;
	int fds[2] = { -1, -1 }, opt = 0;

	v[0] = 1000;
	v[1] = -1;
	switch (sc->kind) {
	case SK_UDP:
	case SK_UDP_DATA:
		fds[0] = socket(AF_INET, SOCK_DGRAM, 0);
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (fds[0] < 0 ||
		    bind(fds[0], (struct sockaddr *)&sin, sizeof(sin)) ||
		    getsockname(fds[0], (struct sockaddr *)&sin, &sl))
			abort();
		/* loopback delivery is done when sendto returns */
		if (sc->kind == SK_UDP_DATA &&
		    sendto(fds[0], "abcde", 5, 0, (struct sockaddr *)&sin,
			   sizeof(sin)) != 5)
			abort();
		break;
	case SK_UNIX:
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds))
			abort();
		break;
	case SK_PIPE:
		if (pipe(fds))
			abort();
		break;
	}
	if (tring_init(&r, be, 8, 0) == 0) {
		sqe = tring_get_sqe(&r);
		sqe->opcode = IORING_OP_URING_CMD;
		sqe->fd = fds[0];
		sqe->cmd_op = sc->cmd_op;
		sqe->user_data = 1;
		if (sc->cmd_op == SURF_SOCK_GETSOCKOPT ||
		    sc->cmd_op == SURF_SOCK_SETSOCKOPT) {
			opt = sc->cmd_op == SURF_SOCK_SETSOCKOPT ? 3 : -1;
			sqe->level = sc->level;
			sqe->optname = sc->optname;
			sqe->optlen = sizeof(opt);
			sqe->optval = (uint64_t)(uintptr_t)&opt;
		}
		tring_submit(&r);
		if (tring_reap_wait(&r, &cqe, 1, 1000000000LL) == 1)
			v[0] = cqe.res;
		tring_exit(&r);
	}
	if (sc->cmd_op == SURF_SOCK_GETSOCKOPT) {
		v[1] = opt;
	} else if (sc->cmd_op == SURF_SOCK_SETSOCKOPT) {
		sl = sizeof(opt);
		opt = -1;
		getsockopt(fds[0], sc->level, sc->optname, &opt, &sl);
		/* not the value itself: the default TTL is a sysctl */
		v[1] = opt == 3;
	}
	close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
}

static void sc_sock_cmd(struct dctx *c)
{
	static const char *const what[] = { "res", "option" };
	char name[64];
	unsigned int i;

	for (i = 0; i < sizeof(sock_cases) / sizeof(sock_cases[0]); i++) {
		snprintf(name, sizeof(name), "sock_cmd: %s", sock_cases[i].name);
		sweep(c, name, case_sock, &sock_cases[i], what, 2);
	}
	allow_check_used(c, "sock_cmd");
}

static const struct dscenario scenarios[] = {
	{ "probe", sc_probe, NULL },
	{ "features", sc_features, NULL },
	{ "setup_bits", sc_setup_bits, NULL },
	{ "setup_pairs", sc_setup_pairs, NULL },
	{ "setup_triples", sc_setup_triples, NULL },
	{ "register", sc_register, NULL },
	{ "sqe_flags", sc_sqe_flags, NULL },
	{ "sock_cmd", sc_sock_cmd, NULL },
};

int main(int argc, char **argv)
{
	/* the sweep chooses every ring's flags itself */
	unsetenv("UURING_TEST_RING_MODE");
	return dtest_main(argc, argv, scenarios,
			  sizeof(scenarios) / sizeof(scenarios[0]));
}
