// SPDX-License-Identifier: MIT
/*
 * exec under the trap filter (T11).  The filter survives execve; our
 * SIGSYS handler and LD_PRELOAD may not:
 *
 *  - an environment without our LD_PRELOAD (env -i, a sanitising
 *    launcher): we put LD_PRELOAD (and UURING_TOOL) back into it, so a
 *    dynamically linked program loads the shim again (whose constructor
 *    finds the inherited filter with the sentinel and does not stack a
 *    second one);
 *  - a program without PT_INTERP (static, static-pie), directly or as the
 *    interpreter of a #! script: LD_PRELOAD cannot reach it, and its first
 *    trapped call would kill it with SIGSYS where, without uuring, it
 *    would have got EPERM and fallen back.  So it is started through
 *    `uuring exec-static` (tools/uuring.c), which puts it under a small
 *    ptrace supervisor that answers our traps: EPERM for io_uring_*, and
 *    a replay of the real call for the fd-range rules.  If that is not
 *    possible the exec fails with EPERM and one line on stderr.
 *    UURING_STATIC_EXEC=refuse refuses such execs outright, =allow lets
 *    them run unsupervised.
 *
 * These wrappers may run in a vfork child that shares the parent's memory,
 * so they allocate nothing: the new argv/envp live on the stack.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/registry.h"
#include "core/tctx.h"
#include "core/types.h"
#include "core/xproc.h"
#include "shim/shim.h"

#define MAX_ENV 8192
#define MAX_ARGS 8192

extern char **environ;

enum { ELF_UNKNOWN, ELF_DYNAMIC, ELF_STATIC };

/* PT_INTERP or not, by the file's program headers. */
static int elf_kind_fd(int fd)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(ph) || eh.e_phnum > 256)
		return ELF_UNKNOWN;
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph),
			  (off_t)(eh.e_phoff + i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			return ELF_UNKNOWN;
		if (ph.p_type == PT_INTERP)
			return ELF_DYNAMIC;
	}
	return ELF_STATIC;
}

/* ELF_STATIC if path (or its #! interpreter) has no PT_INTERP. */
static int exec_kind(int dirfd, const char *path, int depth)
{
	char buf[256], *p, *e;
	ssize_t n;
	int fd, kind;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ELF_UNKNOWN;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n >= 2 && buf[0] == '#' && buf[1] == '!' && depth == 0) {
		close(fd);
		buf[n] = 0;
		for (p = buf + 2; *p == ' ' || *p == '\t'; p++)
			;
		for (e = p; *e && *e != ' ' && *e != '\t' && *e != '\n'; e++)
			;
		*e = 0;
		return *p ? exec_kind(AT_FDCWD, p, depth + 1) : ELF_UNKNOWN;
	}
	kind = elf_kind_fd(fd);
	close(fd);
	return kind;
}

/* execvp's search: the first executable PATH entry for `file`. */
static const char *search_path(const char *file, char *out, size_t outlen)
{
	const char *path = getenv("PATH"), *p, *c;

	if (strchr(file, '/'))
		return file;
	if (!path)
		path = "/bin:/usr/bin";
	for (p = path;; p = c + 1) {
		size_t dl;

		c = strchr(p, ':');
		dl = c ? (size_t)(c - p) : strlen(p);
		if (dl + strlen(file) + 2 <= outlen) {
			if (dl == 0)
				snprintf(out, outlen, "%s", file);
			else
				snprintf(out, outlen, "%.*s/%s", (int)dl, p,
					 file);
			if (access(out, X_OK) == 0)
				return out;
		}
		if (!c)
			break;
	}
	return NULL;
}

static bool env_has(char *const envp[], const char *kv)
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (!strcmp(envp[i], kv))
			return true;
	return false;
}

static bool preload_listed(const char *val)
{
	const char *me = uu_shim.preload_path;
	size_t ml = strlen(me);

	/* LD_PRELOAD is separated by spaces or colons */
	for (const char *p = val; (p = strstr(p, me)); p += ml) {
		if ((p == val || p[-1] == ':' || p[-1] == ' ') &&
		    (p[ml] == 0 || p[ml] == ':' || p[ml] == ' '))
			return true;
	}
	return false;
}

typedef int (*exec_fn)(void *ctx, const char *path, char *const argv[],
		       char *const envp[]);

/*
 * Calls fn with the path, argv and envp to really use: envp with our
 * LD_PRELOAD and UURING_TOOL put back, and path/argv through `uuring
 * exec-static` for a static target.  `target` is the file the kernel will
 * run (resolved for execvp), or NULL when it cannot be known.
 */
static int with_exec_args(const char *path, const char *target,
			  char *const argv[], char *const envp[], exec_fn fn,
			  void *ctx)
{
	size_t envc = 0, argc = 0, k = 0;
	char preload[8192], tool[4200];
	const char *pre_old = NULL, *policy;
	bool add_tool;
	int kind;

	/* a shared ring's requests of this process end with it (the
	 * exec is taken to succeed if the file is executable) */
	if (uu_shim.mode == UU_MODE_UURING && target &&
	    !access(target, X_OK))
		uu_xproc_before_exec();
	if (uu_shim.mode != UU_MODE_UURING || !uu_shim.trap_on ||
	    !uu_shim.preload_path[0])
		return fn(ctx, path, argv, envp);

	while (envp && envp[envc])
		envc++;
	while (argv && argv[argc])
		argc++;
	if (envc + 3 > MAX_ENV || argc + 5 > MAX_ARGS)
		return fn(ctx, path, argv, envp);

	char *nenv[envc + 3];
	char *nargv[argc + 5];

	for (size_t i = 0; i < envc; i++) {
		if (!strncmp(envp[i], "LD_PRELOAD=", 11))
			pre_old = envp[i] + 11;
		else
			nenv[k++] = envp[i];
	}
	if (pre_old && preload_listed(pre_old))
		snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", pre_old);
	else if (pre_old && *pre_old)
		snprintf(preload, sizeof(preload), "LD_PRELOAD=%s:%s",
			 uu_shim.preload_path, pre_old);
	else
		snprintf(preload, sizeof(preload), "LD_PRELOAD=%s",
			 uu_shim.preload_path);
	nenv[k++] = preload;
	add_tool = uu_shim.tool_path[0];
	if (add_tool) {
		snprintf(tool, sizeof(tool), "UURING_TOOL=%s",
			 uu_shim.tool_path);
		if (env_has(envp, tool))
			add_tool = false;
		else
			for (size_t i = 0; i < k; i++)
				if (!strncmp(nenv[i], "UURING_TOOL=", 12))
					nenv[i] = tool, add_tool = false;
		if (add_tool)
			nenv[k++] = tool;
	}
	nenv[k] = NULL;

	kind = target ? exec_kind(AT_FDCWD, target, 0) : ELF_UNKNOWN;
	if (kind != ELF_STATIC)
		return fn(ctx, path, argv, nenv);

	policy = getenv("UURING_STATIC_EXEC");
	if (policy && !strcmp(policy, "allow"))
		return fn(ctx, path, argv, nenv);
	if ((policy && !strcmp(policy, "refuse")) || !uu_shim.tool_path[0] ||
	    argc == 0) {
		uu_shim_msg("refusing to exec %s: a static program would be "
			    "killed by SIGSYS under uuring's trap filter "
			    "(%s)", target,
			    uu_shim.tool_path[0] ? "UURING_STATIC_EXEC=refuse"
						 : "UURING_TOOL unknown");
		errno = EPERM;
		return -1;
	}
	nargv[0] = (char *)uu_shim.tool_path;
	nargv[1] = (char *)"exec-static";
	nargv[2] = (char *)target;
	for (size_t i = 0; i <= argc; i++)
		nargv[3 + i] = argv[i];
	if (uu_shim.verbose)
		uu_shim_msg("%s is static: started under the supervisor",
			    target);
	return fn(ctx, uu_shim.tool_path, nargv, nenv);
}

/* ---- execve family ----------------------------------------------- */

static int call_execve(void *ctx, const char *path, char *const argv[],
		       char *const envp[])
{
	(void)ctx;
	return uu_real.execve(path, argv, envp);
}

static int call_execvpe(void *ctx, const char *path, char *const argv[],
			char *const envp[])
{
	(void)ctx;
	if (strchr(path, '/'))
		return uu_real.execve(path, argv, envp);
	return uu_real.execvpe(path, argv, envp);
}

__attribute__((visibility("default"))) int execve(const char *path,
						  char *const argv[],
						  char *const envp[])
{
	uu_shim_init();
	return with_exec_args(path, path, argv, envp, call_execve, NULL);
}

__attribute__((visibility("default"))) int execv(const char *path,
						 char *const argv[])
{
	return execve(path, argv, environ);
}

__attribute__((visibility("default"))) int execvpe(const char *file,
						   char *const argv[],
						   char *const envp[])
{
	char buf[PATH_MAX];
	const char *target;

	uu_shim_init();
	if (!*file) {
		errno = ENOENT;
		return -1;
	}
	target = search_path(file, buf, sizeof(buf));
	if (!target)
		return uu_real.execvpe(file, argv, envp); /* its errno */
	/* the real execvpe searches again (and runs #!-less scripts) */
	return with_exec_args(file, target, argv, envp, call_execvpe, NULL);
}

__attribute__((visibility("default"))) int execvp(const char *file,
						  char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* execl*: collect the arguments on the stack */
#define COLLECT_ARGS(arg0, last)                                            \
	size_t n_ = 1;                                                      \
	va_list ap_;                                                        \
	va_start(ap_, arg0);                                                \
	while (va_arg(ap_, char *))                                         \
		n_++;                                                       \
	va_end(ap_);                                                        \
	if (n_ > MAX_ARGS) {                                                \
		errno = E2BIG;                                              \
		return -1;                                                  \
	}                                                                   \
	char *argv_[n_ + 1];                                                \
	argv_[0] = (char *)(arg0);                                          \
	va_start(ap_, arg0);                                                \
	for (size_t i_ = 1; i_ <= n_; i_++)                                 \
		argv_[i_] = va_arg(ap_, char *);                            \
	last;                                                               \
	va_end(ap_)

__attribute__((visibility("default"))) int execl(const char *path,
						 const char *arg, ...)
{
	COLLECT_ARGS(arg, (void)0);
	return execve(path, argv_, environ);
}

__attribute__((visibility("default"))) int execlp(const char *file,
						  const char *arg, ...)
{
	COLLECT_ARGS(arg, (void)0);
	return execvpe(file, argv_, environ);
}

__attribute__((visibility("default"))) int execle(const char *path,
						  const char *arg, ...)
{
	char **envp_;

	COLLECT_ARGS(arg, envp_ = va_arg(ap_, char **));
	return execve(path, argv_, envp_);
}

struct fd_ctx {
	int dirfd;
	int flags;
	bool is_fexecve;
};

static int call_execveat(void *ctx, const char *path, char *const argv[],
			 char *const envp[])
{
	struct fd_ctx *c = ctx;

	if (path == uu_shim.tool_path) /* rewritten: a plain execve */
		return uu_real.execve(path, argv, envp);
	if (c->is_fexecve)
		return uu_real.fexecve(c->dirfd, argv, envp);
	return uu_real.execveat(c->dirfd, path, argv, envp, c->flags);
}

__attribute__((visibility("default"))) int fexecve(int fd, char *const argv[],
						   char *const envp[])
{
	struct fd_ctx c = { .dirfd = fd, .is_fexecve = true };
	char target[64];

	uu_shim_init();
	snprintf(target, sizeof(target), "/proc/self/fd/%d", fd);
	/* the supervisor cannot open a close-on-exec fd: plain exec then */
	return with_exec_args("", (fcntl(fd, F_GETFD) & FD_CLOEXEC) ? NULL :
				  target, argv, envp, call_execveat, &c);
}

__attribute__((visibility("default"))) int execveat(int dirfd,
						    const char *path,
						    char *const argv[],
						    char *const envp[],
						    int flags)
{
	struct fd_ctx c = { .dirfd = dirfd, .flags = flags };
	char target[PATH_MAX];

	uu_shim_init();
	if (path[0] == '/')
		snprintf(target, sizeof(target), "%s", path);
	else if (!path[0] || dirfd != AT_FDCWD)
		target[0] = 0; /* fd-relative: not followed */
	else
		snprintf(target, sizeof(target), "%s", path);
	return with_exec_args(path, target[0] ? target : NULL, argv, envp,
			      call_execveat, &c);
}

/* ---- posix_spawn --------------------------------------------------- */

struct spawn_ctx {
	pid_t *pid;
	const posix_spawn_file_actions_t *fa;
	const posix_spawnattr_t *attr;
	bool search;
	int ret;
};

static int call_spawn(void *ctx, const char *path, char *const argv[],
		      char *const envp[])
{
	struct spawn_ctx *c = ctx;

	if (c->search && path != uu_shim.tool_path)
		c->ret = uu_real.posix_spawnp(c->pid, path, c->fa, c->attr,
					      argv, envp);
	else
		c->ret = uu_real.posix_spawn(c->pid, path, c->fa, c->attr,
					     argv, envp);
	return 0;
}

static int spawn_common(pid_t *pid, const char *path,
			const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[],
			char *const envp[], bool search)
{
	struct spawn_ctx c = { pid, fa, attr, search, 0 };
	char buf[PATH_MAX];
	const char *target = path;
	int saved = errno;

	uu_shim_init();
	if (search)
		target = search_path(path, buf, sizeof(buf));
	if (with_exec_args(path, target, argv, envp, call_spawn, &c) < 0) {
		c.ret = errno;
		errno = saved;
	}
	return c.ret;
}

__attribute__((visibility("default"))) int
posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
	    const posix_spawnattr_t *attr, char *const argv[],
	    char *const envp[])
{
	return spawn_common(pid, path, fa, attr, argv, envp, false);
}

__attribute__((visibility("default"))) int
posix_spawnp(pid_t *pid, const char *file,
	     const posix_spawn_file_actions_t *fa,
	     const posix_spawnattr_t *attr, char *const argv[],
	     char *const envp[])
{
	return spawn_common(pid, file, fa, attr, argv, envp, true);
}
