// SPDX-License-Identifier: MIT
/*
 * A Rust program on the io-uring crate (tests/rust-iouring: no liburing;
 * the crate issues libc syscall()s, the preload's fast path).  It reads a
 * file back, posts a NOP and a timeout, on a default and on an SQPOLL
 * ring, and exits 0 only if every CQE is the one the kernel posts.
 *
 * Control: with the kernel's io_uring refused by an EPERM filter
 * (Docker's) it must fail; under `uuring run --block-kernel-uring` it must
 * pass.  Built with cargo into BUILD/rust-iouring-target; skipped when
 * cargo is missing or the crate cannot be fetched (no crates.io).
 */
#include <limits.h>

#include "run_util.h"

#ifndef SOURCE_ROOT
#error "SOURCE_ROOT is set by tests/meson.build"
#endif

static const char *find_cargo(char *buf, size_t len)
{
	const char *home = getenv("HOME");

	if (!system("command -v cargo >/dev/null 2>&1"))
		return "cargo";
	if (home) {
		snprintf(buf, len, "%s/.cargo/bin/cargo", home);
		if (!access(buf, X_OK))
			return buf;
	}
	return NULL;
}

int main(void)
{
	char cargo_buf[PATH_MAX], target[PATH_MAX], prog[PATH_MAX + 64];
	char cmd[8 * PATH_MAX + 512];
	const char *cargo;
	int st;

	if (!ru_tool()) {
		fprintf(stderr, "skip: no usable uuring tool (not built, or a sanitizer build)\n");
		return RU_SKIP;
	}
	cargo = find_cargo(cargo_buf, sizeof(cargo_buf));
	if (!cargo) {
		fprintf(stderr, "skip: cargo not installed\n");
		return RU_SKIP;
	}
	snprintf(target, sizeof(target), "%s/../rust-iouring-target",
		 ru_self_dir());
	/* offline first (a warm registry), then crates.io */
	if (snprintf(cmd, sizeof(cmd),
		 "CARGO_TARGET_DIR='%s' '%s' build -q --release --offline "
		 "--manifest-path '%s/tests/rust-iouring/Cargo.toml' 2>/dev/null ||"
		 " CARGO_TARGET_DIR='%s' '%s' build -q --release "
		 "--manifest-path '%s/tests/rust-iouring/Cargo.toml'",
		 target, cargo, SOURCE_ROOT, target, cargo,
		 SOURCE_ROOT) >= (int)sizeof(cmd))
		return 2;
	if (system(cmd)) {
		fprintf(stderr, "skip: the io-uring crate could not be fetched or built\n");
		return RU_SKIP;
	}
	snprintf(prog, sizeof(prog), "%s/release/uuring-rust-iouring", target);

	{
		char *const v[] = { prog, NULL };

		st = ru_run_ex(v, 30, true);
		RU_CHECK(st != 0, "control: the program ran with io_uring blocked");
	}
	{
		const char *opts[] = { "--block-kernel-uring", NULL };
		const char *args[] = { prog, NULL };

		st = ru_uuring_run(opts, args, 60);
		RU_CHECK(st == 0, "under uuring run: exit status %d", st);
	}
	fprintf(stderr, "rust io-uring crate: fails blocked, passes under uuring run\n");
	return 0;
}
