// SPDX-License-Identifier: MIT
/*
 * uuring: run unmodified io_uring programs on uuring.
 *
 *   uuring run [--mode=auto|force] [--block-kernel-uring] [--verbose]
 *              [--] CMD [ARG...]
 *   uuring exec-static PATH ARGV0 [ARG...]     (internal, see below)
 *
 * `run` injects libuuring-preload.so with LD_PRELOAD and execs CMD, so
 * the process and its children are served by uuring whichever way they
 * issue io_uring calls (docs/architecture.md, "Interception"):
 *   --mode=auto   (default) the kernel's io_uring where io_uring_setup
 *                 works, uuring where it is refused (EPERM, ENOSYS, ...);
 *   --mode=force  uuring always;
 *   --block-kernel-uring  first install a Docker-like seccomp filter that
 *                 makes io_uring_setup/enter/register fail with EPERM, so
 *                 a machine whose kernel allows io_uring behaves like a
 *                 container (uuring's trap filter outranks it).
 * Before exec'ing it checks, in a throw-away child, that this can work:
 * a seccomp filter that KILLs io_uring (a TRAP cannot override it) and a
 * refused no_new_privs are reported in one line, exit status 125.
 *
 * `exec-static` is how the preload library starts a program that has no
 * PT_INTERP (LD_PRELOAD cannot reach it) under the inherited trap filter
 * (T11): a small ptrace supervisor, a grandchild detached from us, answers
 * the traps of that program by replaying each trapped call marked to pass
 * the filter, so the program gets what it would have got without uuring
 * (EPERM for io_uring under a Docker-like filter: it takes its own
 * fallback); then this process execs PATH.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "shim/shim.h" /* UU_TRAP_TAG, UU_PASS_MAGIC */
#include "util/fault_sites.h"

#ifndef UURING_PRELOAD_BUILD
#define UURING_PRELOAD_BUILD ""
#endif
#ifndef UURING_PRELOAD_INSTALL
#define UURING_PRELOAD_INSTALL ""
#endif
#define PRELOAD_NAME "libuuring-preload.so"
#define EXIT_UURING 125

static bool verbose;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: uuring run [--mode=auto|force] [--block-kernel-uring] "
		"[--verbose] [--] CMD [ARG...]\n"
		"Runs CMD with io_uring served by uuring where the kernel's "
		"io_uring is refused\n"
		"(auto, the default) or always (force).  --block-kernel-uring "
		"first makes the\n"
		"kernel's io_uring fail with EPERM, as Docker's default seccomp "
		"profile does.\n"
		"       uuring faults\n"
		"Lists the sites UURING_FAULT=site[:skip[:count]],... can make "
		"fail (tests).\n");
}

/* `uuring faults`: the engine's fault-injection sites */
static int cmd_faults(void)
{
#define UU_FAULT_LINE(id, name, what) printf("%-16s %s\n", name, what);
	UU_FAULT_SITES(UU_FAULT_LINE)
#undef UU_FAULT_LINE
	return 0;
}

static __attribute__((format(printf, 1, 2))) void err(const char *fmt, ...)
{
	va_list ap;

	fputs("uuring: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- locating the preload library ---------------------------------- */

static bool usable(const char *p)
{
	return p && *p == '/' && access(p, R_OK) == 0;
}

static const char *find_preload(char *buf, size_t len)
{
	const char *env = getenv("UURING_PRELOAD");
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env)
		return usable(env) ? env : NULL;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			if (snprintf(buf, len, "%s/%s", exe, PRELOAD_NAME) <
				    (int)len && usable(buf))
				return buf;
			if (snprintf(buf, len, "%s/../lib/uuring/%s", exe,
				     PRELOAD_NAME) < (int)len && usable(buf))
				return buf;
		}
	}
	if (usable(UURING_PRELOAD_BUILD))
		return UURING_PRELOAD_BUILD;
	if (usable(UURING_PRELOAD_INSTALL))
		return UURING_PRELOAD_INSTALL;
	return NULL;
}

/* ---- --block-kernel-uring ----------------------------------------- */

static int block_kernel_uring(void)
{
	static const int calls[] = {
		__NR_io_uring_setup, __NR_io_uring_enter,
		__NR_io_uring_register,
	};
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int ret = 0;

	if (!ctx)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]) && !ret; i++)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), calls[i], 0);
	if (!ret)
		ret = seccomp_load(ctx);
	seccomp_release(ctx);
	return ret;
}

/* ---- pre-flight checks, in a child --------------------------------- */

/*
 * Runs fn in a child and returns its exit status, or -SIG if it was
 * killed by a signal.  A hang is impossible: the calls made are
 * non-blocking, and the child is killed after 10 s anyway.
 */
static int in_child(int (*fn)(void))
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1000;
	if (pid == 0) {
		alarm(10);
		_exit(fn());
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1000;
	if (WIFSIGNALED(st))
		return -WTERMSIG(st);
	return WEXITSTATUS(st);
}

static int probe_setup(void)
{
	errno = 0;
	syscall(__NR_io_uring_setup, 0, NULL);
	return errno & 0xff;
}

static int probe_enter(void)
{
	errno = 0;
	syscall(__NR_io_uring_enter, -1, 0, 0, 0, NULL, 0);
	return errno & 0xff;
}

static int probe_register(void)
{
	errno = 0;
	syscall(__NR_io_uring_register, -1, 0, NULL, 0);
	return errno & 0xff;
}

/* Can this process install a seccomp filter (no_new_privs if need be)? */
static int probe_filter(void)
{
	struct sock_filter f = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { .len = 1, .filter = &f };

	if (!syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return 0;
	if (errno != EACCES)
		return errno & 0xff;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 200;
	if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return errno & 0xff;
	return 0;
}

static int preflight(bool force, bool *kernel_ok)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} probes[] = {
		{ "io_uring_setup", probe_setup },
		{ "io_uring_enter", probe_enter },
		{ "io_uring_register", probe_register },
	};
	int r;

	*kernel_ok = false;
	for (size_t i = 0; i < 3; i++) {
		r = in_child(probes[i].fn);
		if (r < 0) {
			err("%s is killed by a seccomp filter (%s): uuring's "
			    "trap cannot override a KILL action, so io_uring "
			    "programs cannot run here", probes[i].name,
			    r == -1000 ? "fork failed" : strsignal(-r));
			return -1;
		}
		/* io_uring_setup(0, NULL): EINVAL or EFAULT from a kernel
		 * that has io_uring; EPERM/ENOSYS when it is refused */
		if (i == 0)
			*kernel_ok = r == EINVAL || r == EFAULT;
	}
	if (verbose)
		err("the kernel's io_uring is %s", *kernel_ok ? "available" :
			"refused");
	if (!force && *kernel_ok)
		return 0; /* auto mode will use the kernel: no filter needed */
	r = in_child(probe_filter);
	if (r == 200) {
		err("cannot install a seccomp filter: no_new_privs refused "
		    "(prctl(PR_SET_NO_NEW_PRIVS) failed)");
		return -1;
	}
	if (r != 0) {
		err("cannot install a seccomp filter: %s",
		    r < 0 ? strsignal(-r) : strerror(r));
		return -1;
	}
	return 0;
}

/* ---- environment ---------------------------------------------------- */

static int set_env(const char *preload, const char *mode)
{
	const char *old = getenv("LD_PRELOAD");
	char exe[PATH_MAX], *val;
	ssize_t n;
	int ret;

	if (old && strstr(old, preload))
		ret = 0;
	else if (old && *old)
		ret = asprintf(&val, "%s:%s", preload, old) < 0 ? -1 :
		      setenv("LD_PRELOAD", val, 1);
	else
		ret = setenv("LD_PRELOAD", preload, 1);
	if (ret)
		return -1;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		setenv("UURING_TOOL", exe, 1);
	}
	if (verbose)
		setenv("UURING_VERBOSE", "1", 1);
	return setenv("UURING_MODE", mode, 1);
}

/* 1 if path has no PT_INTERP (static), 0 otherwise or if unknown */
static int is_static(const char *file)
{
	char buf[PATH_MAX];
	const char *path = file;
	FILE *f;
	int st = 0;

	if (!strchr(file, '/')) {
		const char *p = getenv("PATH");

		path = NULL;
		while (p && *p) {
			const char *c = strchr(p, ':');
			size_t dl = c ? (size_t)(c - p) : strlen(p);

			snprintf(buf, sizeof(buf), "%.*s/%s", (int)dl, p, file);
			if (!access(buf, X_OK)) {
				path = buf;
				break;
			}
			p = c ? c + 1 : NULL;
		}
		if (!path)
			return 0;
	}
	f = fopen(path, "rb");
	if (f) {
		unsigned char eh[64];

		if (fread(eh, 1, sizeof(eh), f) == sizeof(eh) &&
		    !memcmp(eh, "\177ELF", 4) && eh[4] == 2) {
			uint64_t phoff;
			uint16_t phnum, phentsize;

			memcpy(&phoff, eh + 32, 8);
			memcpy(&phentsize, eh + 54, 2);
			memcpy(&phnum, eh + 56, 2);
			st = 1;
			for (unsigned int i = 0; i < phnum && phentsize >= 4;
			     i++) {
				uint32_t type;

				if (fseek(f, (long)(phoff + i * phentsize),
					  SEEK_SET) ||
				    fread(&type, 4, 1, f) != 1) {
					st = 0;
					break;
				}
				if (type == 3 /* PT_INTERP */) {
					st = 0;
					break;
				}
			}
		}
		fclose(f);
	}
	return st;
}

static int cmd_run(int argc, char **argv)
{
	const char *mode = "auto", *preload;
	char buf[PATH_MAX];
	bool block = false, kernel_ok;
	int i;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (!strncmp(a, "--mode=", 7)) {
			mode = a + 7;
			if (strcmp(mode, "auto") && strcmp(mode, "force")) {
				err("unknown mode '%s' (auto or force)", mode);
				return 2;
			}
		} else if (!strcmp(a, "--block-kernel-uring")) {
			block = true;
		} else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
			verbose = true;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else {
			err("unknown option '%s'", a);
			usage(stderr);
			return 2;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	preload = find_preload(buf, sizeof(buf));
	if (!preload) {
		err("cannot find %s (set UURING_PRELOAD)", PRELOAD_NAME);
		return EXIT_UURING;
	}
	if (block) {
		int ret = block_kernel_uring();

		if (ret) {
			err("--block-kernel-uring: cannot install the EPERM "
			    "filter: %s", strerror(-ret));
			return EXIT_UURING;
		}
	}
	if (preflight(!strcmp(mode, "force"), &kernel_ok))
		return EXIT_UURING;
	if (set_env(preload, mode)) {
		err("cannot set the environment: %s", strerror(errno));
		return EXIT_UURING;
	}
	if (is_static(argv[i]))
		err("%s is statically linked: LD_PRELOAD cannot reach it, so "
		    "it runs without uuring (io_uring as the kernel allows)",
		    argv[i]);
	execvp(argv[i], &argv[i]);
	err("%s: %s", argv[i], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

/* ---- exec-static: the ptrace supervisor ---------------------------- */

#define MAX_TRACEES 4096

static bool has_preload(pid_t pid)
{
	char path[64], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, PRELOAD_NAME) != NULL;
	fclose(f);
	return found;
}

/*
 * Answers one of our traps in a tracee that may have no handler.  Returns
 * the signal to deliver (0: handled here).
 */
static int answer_trap(pid_t pid)
{
	struct user_regs_struct regs;
	siginfo_t si;

	if (ptrace(PTRACE_GETSIGINFO, pid, 0, &si) ||
	    si.si_code != 1 /* SYS_SECCOMP */ ||
	    si.si_errno != (int)UU_TRAP_TAG)
		return SIGSYS;
	/* a program that loaded the preload library serves itself */
	if (has_preload(pid))
		return SIGSYS;
	if (ptrace(PTRACE_GETREGS, pid, 0, &regs))
		return SIGSYS;
	/* replay the call, marked as let through (the kernel ignores the
	 * high half of that argument): the program gets what it would have
	 * got without uuring, e.g. EPERM from a Docker-like filter */
	if (si.si_syscall == __NR_mmap)
		regs.r8 = (regs.r8 & 0xffffffffull) |
			  ((unsigned long long)UU_PASS_MAGIC << 32);
	else
		regs.rdi = (regs.rdi & 0xffffffffull) |
			   ((unsigned long long)UU_PASS_MAGIC << 32);
	regs.rax = (unsigned long long)si.si_syscall;
	regs.rip -= 2; /* back onto the syscall instruction */
	if (ptrace(PTRACE_SETREGS, pid, 0, &regs))
		return SIGSYS;
	return 0;
}

static void supervise(void)
{
	for (;;) {
		int st, sig, event;
		pid_t pid = waitpid(-1, &st, __WALL);

		if (pid < 0) {
			if (errno == EINTR)
				continue;
			_exit(0); /* ECHILD: no tracee left */
		}
		if (!WIFSTOPPED(st))
			continue;
		sig = WSTOPSIG(st);
		event = st >> 16;
		if (event == PTRACE_EVENT_STOP) {
			if (sig == SIGSTOP || sig == SIGTSTP ||
			    sig == SIGTTIN || sig == SIGTTOU)
				ptrace(PTRACE_LISTEN, pid, 0, 0);
			else
				ptrace(PTRACE_CONT, pid, 0, 0);
			continue;
		}
		if (event) { /* fork, clone, exec events */
			ptrace(PTRACE_CONT, pid, 0, 0);
			continue;
		}
		if (sig == SIGSYS)
			sig = answer_trap(pid);
		ptrace(PTRACE_CONT, pid, 0, (void *)(long)sig);
	}
}

static ssize_t read_full(int fd, void *buf, size_t len)
{
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

/*
 * Starts the supervisor: child C forks G and exits (so G is nobody's
 * child of ours); G waits for our go (we first allow it to trace us under
 * Yama), attaches and reports.  0 once G traces us.
 */
static int start_supervisor(void)
{
	int up[2], down[2], res = -1, st;
	pid_t me = getpid(), c, g = 0;

	if (pipe2(up, O_CLOEXEC) || pipe2(down, O_CLOEXEC))
		return -errno;
	c = fork();
	if (c < 0)
		return -errno;
	if (c == 0) {
		g = fork();
		if (g != 0) {
			if (write(up[1], &g, sizeof(g)) < 0)
				_exit(1);
			_exit(0);
		}
		/* G */
		char go;
		long opts = PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
			    PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC;

		setsid();
		if (read_full(down[0], &go, 1) != 1)
			_exit(1);
		res = ptrace(PTRACE_SEIZE, me, 0, (void *)opts) ? -errno : 0;
		if (write(up[1], &res, sizeof(res)) < 0 || res)
			_exit(1);
		/* hold nothing of the program's */
		syscall(__NR_close_range, 0, ~0u, 0);
		supervise();
	}
	close(up[1]);
	close(down[0]);
	while (waitpid(c, &st, 0) < 0 && errno == EINTR)
		;
	if (read_full(up[0], &g, sizeof(g)) != (ssize_t)sizeof(g) || g <= 0) {
		res = -ECHILD;
		goto out;
	}
	prctl(PR_SET_PTRACER, g, 0, 0, 0); /* Yama; EINVAL without it */
	if (write(down[1], "g", 1) != 1 ||
	    read_full(up[0], &res, sizeof(res)) != (ssize_t)sizeof(res))
		res = -ECHILD;
out:
	close(up[0]);
	close(down[1]);
	return res;
}

extern char **environ;

static int cmd_exec_static(int argc, char **argv)
{
	int ret;

	if (argc < 2) {
		err("usage: uuring exec-static PATH ARGV0 [ARG...]");
		return 2;
	}
	ret = start_supervisor();
	if (ret) {
		err("refusing to exec %s: it is static, and without a "
		    "supervisor its io_uring calls would be killed by SIGSYS "
		    "under uuring's trap filter (ptrace: %s)", argv[0],
		    strerror(-ret));
		return 126;
	}
	/* the raw system call: the preload's execve would send a static
	 * program back here */
	syscall(__NR_execve, argv[0], &argv[1], environ);
	err("%s: %s", argv[0], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "run"))
		return cmd_run(argc - 2, argv + 2);
	if (argc == 2 && !strcmp(argv[1], "faults"))
		return cmd_faults();
	if (argc >= 2 && !strcmp(argv[1], "exec-static"))
		return cmd_exec_static(argc - 2, argv + 2);
	if (argc >= 2 && (!strcmp(argv[1], "--help") ||
			  !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return 2;
}
