#!/bin/bash
# SPDX-License-Identifier: MIT
# Configured by Meson into BUILD/tests/test_run_conformance, so that
# tests/run-tests.sh (make test) runs it: the liburing tests of
# conformance/passlist-api.txt, the UNMODIFIED liburing build, under
# `BUILD/tools/uuring run --mode=force --block-kernel-uring`.  Every test
# that passes through the uuring API must pass through interception too; a
# difference is an interception bug.  UURING_SKIP_CONFORMANCE skips it.
set -u
ROOT='@SOURCE_ROOT@'
BUILD=$(cd "$(dirname "$0")/.." && pwd)
if [ -n '@SANITIZED@' ]; then
	echo "skip: a sanitizer build (the preload library cannot be injected)"
	exit 77
fi
if [ -n "${UURING_SKIP_CONFORMANCE:-}" ]; then
	echo "skip: UURING_SKIP_CONFORMANCE is set"
	exit 77
fi
exec "$ROOT/conformance/run-conformance.sh" intercept-passlist "$BUILD"
