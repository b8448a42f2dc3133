/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the `uuring run` tests (tests/test_run_*.c).
 *
 * Each such test is one binary playing two parts: run without arguments
 * it is the driver, which runs itself (or another program) under
 * `uuring run ...` with a payload argument and checks how that ended;
 * run with a payload argument it is the program under test.  The driver
 * finds the tool next to the build: BUILD/tests/test_x -> BUILD/tools/uuring.
 * Every child is killed after a timeout, so a hang is a failure, never a
 * hang.  Exit status: 0 pass, 77 skip, anything else fail.
 */
#ifndef UURING_RUN_UTIL_H
#define UURING_RUN_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RU_SKIP 77

static int ru_failures;

#define RU_CHECK(cond, ...)                                                   \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__,         \
				__LINE__, #cond);                             \
			fprintf(stderr, __VA_ARGS__);                         \
			fputc('\n', stderr);                                  \
			ru_failures++;                                        \
		}                                                             \
	} while (0)

static inline double ru_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Directory of this executable. */
static inline const char *ru_self_dir(void)
{
	static char dir[PATH_MAX];
	ssize_t n;
	char *s;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0)
		return ".";
	dir[n] = 0;
	s = strrchr(dir, '/');
	if (s)
		*s = 0;
	return dir;
}

static inline const char *ru_self_exe(void)
{
	static char exe[PATH_MAX];
	ssize_t n;

	if (exe[0])
		return exe;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0)
		exe[n] = 0;
	return exe;
}

/* BUILD/tools/uuring, or NULL (not built; or a sanitizer build, whose
 * preload library cannot be injected into uninstrumented programs) */
static inline const char *ru_tool(void)
{
	static char tool[PATH_MAX + 32];

#ifdef RU_SANITIZED
	return NULL;
#endif
	if (!tool[0])
		snprintf(tool, sizeof(tool), "%s/../tools/uuring",
			 ru_self_dir());
	return access(tool, X_OK) ? NULL : tool;
}

/*
 * In the calling (child) process: a Docker-like filter, io_uring_setup,
 * enter and register fail with EPERM.  0 or -1.
 */
static inline int ru_block_kernel_uring(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_enter, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_register, 1,
			 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = { .len = 6, .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

/*
 * What a hung child was doing, for the log: the threads of every process
 * in process group pgid, counted by (name without its numeric suffix,
 * system call number or "running", wchan), one short line each, so the
 * few lines a CI log keeps of a failed test still hold them.  A hang hit
 * once in a hundred runs is then diagnosable from the log alone.
 */
struct ru_thread_kind {
	char what[112];
	int n;
};

static inline void ru_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = 0;
	if (f) {
		if (!fgets(buf, (int)len, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, " \n")] = 0;
}

static inline void ru_dump_group(pid_t pgid)
{
	static struct ru_thread_kind kinds[24];
	char path[320], buf[256], comm[32], wchan[40], sc[24], what[112];
	int nkinds = 0, threads = 0;
	DIR *procs = opendir("/proc");
	struct dirent *p;

	if (!procs)
		return;
	while ((p = readdir(procs))) {
		long pid = strtol(p->d_name, NULL, 10), pg = -1;
		struct dirent *t;
		const char *q;
		DIR *tasks;
		FILE *f;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && (q = strrchr(buf, ')')))
			sscanf(q + 2, "%*c %*d %ld", &pg);
		fclose(f);
		if (pg != pgid)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/task", pid);
		tasks = opendir(path);
		while (tasks && (t = readdir(tasks))) {
			size_t l;
			int k;

			if (t->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%ld/task/%s/comm",
				 pid, t->d_name);
			ru_read_line(path, comm, sizeof(comm));
			for (l = strlen(comm); l && comm[l - 1] >= '0' &&
					       comm[l - 1] <= '9'; l--)
				comm[l - 1] = 0;
			snprintf(path, sizeof(path),
				 "/proc/%ld/task/%s/syscall", pid, t->d_name);
			ru_read_line(path, sc, sizeof(sc));
			snprintf(path, sizeof(path), "/proc/%ld/task/%s/wchan",
				 pid, t->d_name);
			ru_read_line(path, wchan, sizeof(wchan));
			snprintf(what, sizeof(what), "%s sys %s in %s", comm,
				 sc, wchan[0] && strcmp(wchan, "0") ? wchan :
				 "-");
			threads++;
			for (k = 0; k < nkinds; k++)
				if (!strcmp(kinds[k].what, what))
					break;
			if (k == nkinds && nkinds < 24)
				snprintf(kinds[nkinds++].what, sizeof(what),
					 "%s", what);
			if (k < nkinds)
				kinds[k].n++;
		}
		if (tasks)
			closedir(tasks);
	}
	closedir(procs);
	fprintf(stderr, "  %d threads in the hung group:", threads);
	for (int k = 0; k < nkinds; k++)
		fprintf(stderr, "%s %dx %s", k % 3 ? ";" : "\n   ",
			kinds[k].n, kinds[k].what);
	fprintf(stderr, "\n");
}

/*
 * Runs argv (argv[0] a path), stdout/stderr to this process's stderr, with
 * a timeout, optionally under ru_block_kernel_uring() alone (no uuring).
 * Returns the exit status, or 1000 + signal, or -1.
 */
static inline int ru_run_ex(char *const argv[], int timeout_s, bool block)
{
	double end = ru_now() + timeout_s;
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		setpgid(0, 0);
		dup2(2, 1);
		if (block && ru_block_kernel_uring())
			_exit(126);
		execv(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return -1;
		if (ru_now() > end) {
			fprintf(stderr, "TIMEOUT after %d s: %s ...\n",
				timeout_s, argv[0]);
			ru_dump_group(pid);
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return 1000 + SIGKILL;
		}
		usleep(2000);
	}
	/* anything the payload left behind in its group */
	kill(-pid, SIGKILL);
	if (WIFSIGNALED(st))
		return 1000 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

static inline int ru_run(char *const argv[], int timeout_s)
{
	return ru_run_ex(argv, timeout_s, false);
}

/* uuring run OPTS... -- ARGS...; NULL-terminated lists. */
static inline int ru_uuring_run(const char *const *opts,
				const char *const *args, int timeout_s)
{
	const char *v[64];
	int n = 0;

	v[n++] = ru_tool();
	v[n++] = "run";
	for (; opts && *opts && n < 40; opts++)
		v[n++] = *opts;
	v[n++] = "--";
	for (; args && *args && n < 62; args++)
		v[n++] = *args;
	v[n] = NULL;
	return ru_run((char *const *)v, timeout_s);
}

/* Runs this binary's payload `what` under uuring run --block-kernel-uring
 * [extra option]; returns its status as ru_run does. */
static inline int ru_payload(const char *what, const char *opt,
			     int timeout_s)
{
	const char *opts[] = { "--block-kernel-uring", opt, NULL };
	const char *args[] = { ru_self_exe(), what, NULL };

	return ru_uuring_run(opts, args, timeout_s);
}

static inline void ru_describe(const char *name, int st)
{
	if (st >= 1000)
		fprintf(stderr, "%s: killed by %s\n", name,
			strsignal(st - 1000));
	else
		fprintf(stderr, "%s: exit %d\n", name, st);
}

/* "Seccomp_filters:" of /proc/self/status, or -1 */
static inline int ru_seccomp_filters(void)
{
	char line[256];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Seccomp_filters: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

#endif
