// SPDX-License-Identifier: MIT
/*
 * `uuring run` where it cannot work: one clear line on stderr and exit
 * status 125, never a hang and never a death of the program later.
 *
 *   kill-filter  a seccomp filter KILLs io_uring_setup (a TRAP cannot
 *                override it): refused before CMD starts
 *   no-nnp       no CAP_SYS_ADMIN and prctl(PR_SET_NO_NEW_PRIVS) denied:
 *                no seccomp filter can be installed (--mode=force)
 *   usage        a bad option: exit 2
 *   not-found    CMD does not exist: exit 127
 */
#include <linux/capability.h>
#include <sys/prctl.h>

#include "run_util.h"

/* Runs `uuring run OPTS -- /bin/true` in a child prepared by `prep`;
 * returns the status and leaves stderr in buf. */
static int run_prepared(int (*prep)(void), const char *opt1, const char *opt2,
			const char *cmd, char *buf, size_t len)
{
	char tmpl[] = "/tmp/uuring-err-XXXXXX";
	int fd = mkstemp(tmpl), st;
	pid_t pid;
	ssize_t n;

	if (fd < 0)
		return -1;
	unlink(tmpl);
	pid = fork();
	if (pid == 0) {
		const char *v[8];
		int k = 0;

		dup2(fd, 2);
		dup2(fd, 1);
		alarm(20);
		if (prep && prep())
			_exit(99);
		v[k++] = ru_tool();
		v[k++] = "run";
		if (opt1)
			v[k++] = opt1;
		if (opt2)
			v[k++] = opt2;
		v[k++] = "--";
		v[k++] = cmd;
		v[k] = NULL;
		execv(v[0], (char *const *)v);
		_exit(98);
	}
	waitpid(pid, &st, 0);
	n = pread(fd, buf, len - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
	return WIFSIGNALED(st) ? 1000 + WTERMSIG(st) : WEXITSTATUS(st);
}

static int kill_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = 4, .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

/* The no-nnp fixture installs its filter without no_new_privs, which
 * needs CAP_SYS_ADMIN in the effective set (root in a Docker container
 * has none). */
static bool have_cap_sys_admin(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(__NR_capget, &h, d))
		return false;
	return d[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective &
	       CAP_TO_MASK(CAP_SYS_ADMIN);
}

/* No CAP_SYS_ADMIN after exec, and no_new_privs denied. */
static int no_nnp(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prctl, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_NO_NEW_PRIVS, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = 6, .filter = f };

	/* installed while we still have CAP_SYS_ADMIN (no NNP needed) */
	if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return -1;
	/* root regains every capability in the bounding set at exec */
	return prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0);
}

int main(void)
{
	char out[4096];
	int st;

	if (!ru_tool()) {
		fprintf(stderr, "skip: no usable uuring tool (not built, or a sanitizer build)\n");
		return RU_SKIP;
	}

	st = run_prepared(kill_filter, NULL, NULL, "/bin/true", out,
			  sizeof(out));
	fprintf(stderr, "kill-filter: status %d: %s", st, out);
	RU_CHECK(st == 125, "kill-filter: status %d", st);
	RU_CHECK(strstr(out, "killed by a seccomp filter") &&
		 strchr(out, '\n') == out + strlen(out) - 1,
		 "kill-filter: not one clear line");

	if (geteuid() != 0) {
		fprintf(stderr, "no-nnp: not root, not run\n");
	} else if (!have_cap_sys_admin()) {
		fprintf(stderr, "no-nnp: no CAP_SYS_ADMIN to prepare it (a "
			"container?), not run\n");
	} else {
		st = run_prepared(no_nnp, "--mode=force", NULL, "/bin/true",
				  out, sizeof(out));
		fprintf(stderr, "no-nnp: status %d: %s", st, out);
		RU_CHECK(st == 125, "no-nnp: status %d", st);
		RU_CHECK(strstr(out, "no_new_privs refused") &&
			 strchr(out, '\n') == out + strlen(out) - 1,
			 "no-nnp: not one clear line");
	}

	st = run_prepared(NULL, "--mode=sometimes", NULL, "/bin/true", out,
			  sizeof(out));
	RU_CHECK(st == 2, "usage: status %d", st);
	st = run_prepared(NULL, NULL, NULL, "/nonexistent/cmd", out,
			  sizeof(out));
	RU_CHECK(st == 127, "not-found: status %d", st);
	return ru_failures ? 1 : 0;
}
