/* SPDX-License-Identifier: MIT */
/*
 * nouring: run a command with the kernel's io_uring switched off, the way
 * Docker's default seccomp profile (and kernel.io_uring_disabled=2) do it.
 *
 *	nouring [-e ERRNO] COMMAND [ARG...]
 *
 * Installs a seccomp filter that makes io_uring_setup(2), io_uring_enter(2)
 * and io_uring_register(2) fail with EPERM (or ERRNO: a name such as ENOSYS
 * or a number; the NOURING_ERRNO environment variable works too), then execs
 * COMMAND.  The filter is inherited by every child and survives exec, so the
 * whole process tree runs without kernel io_uring.
 */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
	const char *name;
	int value;
} errnos[] = {
	{ "EPERM", EPERM },
	{ "ENOSYS", ENOSYS },
	{ "EACCES", EACCES },
	{ "EINVAL", EINVAL },
	{ "EOPNOTSUPP", EOPNOTSUPP },
};

static int parse_errno(const char *s)
{
	char *end;
	long v;
	size_t i;

	for (i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (!strcmp(s, errnos[i].name))
			return errnos[i].value;
	v = strtol(s, &end, 0);
	if (*s && !*end && v > 0 && v < 4096)
		return (int)v;
	return -1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: nouring [-e ERRNO] COMMAND [ARG...]\n"
		"Runs COMMAND with io_uring_setup/enter/register failing with ERRNO\n"
		"(default EPERM, as under Docker's default seccomp profile).\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const char *const calls[] = {
		"io_uring_setup", "io_uring_enter", "io_uring_register",
	};
	const char *err_name = getenv("NOURING_ERRNO");
	scmp_filter_ctx ctx;
	int argi = 1, err, ret;
	size_t i;

	if (argi + 1 < argc && !strcmp(argv[argi], "-e")) {
		err_name = argv[argi + 1];
		argi += 2;
	}
	if (argi < argc && !strcmp(argv[argi], "--"))
		argi++;
	if (argi >= argc || argv[argi][0] == '-')
		usage();

	err = parse_errno(err_name && *err_name ? err_name : "EPERM");
	if (err < 0) {
		fprintf(stderr, "nouring: bad errno '%s'\n", err_name);
		return 2;
	}

	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		fprintf(stderr, "nouring: seccomp_init failed\n");
		return 2;
	}
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		int nr = seccomp_syscall_resolve_name(calls[i]);

		if (nr == __NR_SCMP_ERROR) {
			fprintf(stderr, "nouring: libseccomp does not know %s\n",
				calls[i]);
			return 2;
		}
		ret = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(err), nr, 0);
		if (ret < 0) {
			fprintf(stderr, "nouring: seccomp_rule_add(%s): %s\n",
				calls[i], strerror(-ret));
			return 2;
		}
	}
	ret = seccomp_load(ctx);
	seccomp_release(ctx);
	if (ret < 0) {
		fprintf(stderr, "nouring: seccomp_load: %s\n", strerror(-ret));
		return 2;
	}

	execvp(argv[argi], &argv[argi]);
	fprintf(stderr, "nouring: %s: %s\n", argv[argi], strerror(errno));
	return 127;
}
