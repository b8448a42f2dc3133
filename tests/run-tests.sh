#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs every tests/test_* executable of a build directory, each in its own
# process group with a timeout, then the conformance pass list (if liburing
# on uuring has been built by the conformance harness).
# Exit status of a test: 0 pass, 77 skip, anything else fail.
# Prints "N passed, N failed, N skipped" last.
set -u
BUILD=${1:-build}
TIMEOUT=${UURING_TEST_TIMEOUT:-120}
cd "$(dirname "$0")/.."
pass=0 fail=0 skip=0 failed=()

run_one() {
	local name=$1; shift
	local start=$(date +%s%N) rc
	setsid timeout -k 5 "${RUN_LIMIT:-$TIMEOUT}" "$@" > "$LOGDIR/$name.log" 2>&1
	rc=$?
	local ms=$(( ($(date +%s%N) - start) / 1000000 ))
	local t=$((ms / 1000)).$(( (ms % 1000) / 100 ))
	case $rc in
	0) pass=$((pass + 1)); echo "PASS $name (${t}s)";;
	77) skip=$((skip + 1)); echo "SKIP $name: $(grep -m1 -i skip "$LOGDIR/$name.log")";;
	*) fail=$((fail + 1)); failed+=("$name"); echo "FAIL $name (rc=$rc, ${t}s)";
	   tail -n 20 "$LOGDIR/$name.log" | sed 's/^/    /';;
	esac
}

LOGDIR=$BUILD/test-logs
mkdir -p "$LOGDIR"
# The liburing versions whose pass lists (conformance/passlist-VERSION.txt)
# are run, through the API and under `uuring run`.
CONFORMANCE_VERSIONS=${UURING_CONFORMANCE_VERSIONS:-2.3 2.9}

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	case $(basename "$t") in
	test_run_conformance)
		# the liburing pass lists under `uuring run`, one run per
		# version: ~100 s each on an idle machine, more on a loaded one;
		# it has per-test timeouts
		for v in $CONFORMANCE_VERSIONS; do
			RUN_LIMIT=${UURING_CONFORMANCE_TIMEOUT:-900} \
				run_one "test_run_conformance@$v" env LIBURING_VERSION="$v" "$t"
		done
		continue;;
	test_fault_sites)
		# ~110 child runs that each start a ring's threads: 11 s in
		# the plain build, 51 s under ASan, past 120 s under TSan at
		# a load average of 10
		RUN_LIMIT=${UURING_FAULT_SITES_TIMEOUT:-480} \
			run_one test_fault_sites "$t"
		continue;;
	esac
	run_one "$(basename "$t")" "$t"
done
# one minute of both fuzzers (tests/fuzz/run-fuzz.sh; make test builds
# build-fuzz's libFuzzer target first): fails on a libFuzzer finding
FUZZ_BUILD=${UURING_FUZZ_BUILD:-build-fuzz}
if [ -x "$FUZZ_BUILD/tests/fuzz_uuring" ] && [ -z "${UURING_SKIP_FUZZ:-}" ]; then
	run_one fuzz-smoke tests/fuzz/run-fuzz.sh "$BUILD" "$FUZZ_BUILD" 1 --smoke
fi
# the folder dependency rules of src/ (no build needed)
run_one check_layering tests/check_layering.sh --graph
# no engine call inside libuuring-preload.so binds to its interposers
run_one check_engine_calls tests/check_engine_calls.sh "$BUILD"

# The differential suite again on COOP_TASKRUN, DEFER_TASKRUN and SQPOLL
# rings (UURING_TEST_RING_MODE, tests/lib/tring.c: the mode's flags are
# added to every ring whose scenario chose no mode itself).  A test not
# listed for a mode still diverges there: docs/compatibility.md row 20.
RING_MODE_TESTS=(
	"coop:async buffers bundle cancel_running epoll fault fork fsops futex fuzz lifecycle link msgring net netbuf nop overflow personality pipe poll read_mshot region register rsrc rw rw_attr setup sqpoll timeout uring_cmd wait"
	"defer:async buffers bundle epoll fault fork fsops futex fuzz lifecycle link msgring net netbuf nop overflow pipe poll read_mshot region register rsrc rw rw_attr setup sqpoll timeout uring_cmd wait"
	"sqpoll:async buffers bundle cancel_running epoll fault fork fsops futex fuzz lifecycle link msgring net netbuf nop overflow personality pipe poll read_mshot region register rsrc rw rw_attr setup sqpoll timeout uring_cmd wait"
)
if [ -z "${UURING_SKIP_RING_MODES:-}" ]; then
	for entry in "${RING_MODE_TESTS[@]}"; do
		mode=${entry%%:*}
		for t in ${entry#*:}; do
			exe=$BUILD/tests/test_diff_$t
			[ -x "$exe" ] || continue
			run_one "test_diff_$t@$mode" env UURING_TEST_RING_MODE="$mode" "$exe"
		done
	done
fi

# The experiment switches (README "Configuration knobs") change timing,
# never a CQE: io-wq's tests with one io-wq-wide lock, the wait tests with
# a wake per CQ commit, and SQPOLL runs with the priority task_work list.
# "VAR=VAL ...:tests".
SWITCH_RUNS=(
	"UURING_IOWQ_LOCK=global:test_iowq_idle test_iowq_create_fail test_iowq_stale_wake test_diff_async test_diff_cancel_running"
	"UURING_WAKE=every:test_diff_wait test_diff_timeout test_wake_protocol"
	"UURING_PRIO_TW=1 UURING_TEST_RING_MODE=sqpoll:test_diff_async test_diff_poll test_diff_rw test_diff_link"
)
if [ -z "${UURING_SKIP_SWITCH_RUNS:-}" ]; then
	for entry in "${SWITCH_RUNS[@]}"; do
		vars=${entry%%:*}
		for t in ${entry#*:}; do
			exe=$BUILD/tests/$t
			[ -x "$exe" ] || continue
			# shellcheck disable=SC2086 # vars is a list of VAR=VAL
			run_one "$t@${vars// /,}" env $vars "$exe"
		done
	done
fi

if [ -x conformance/run-conformance.sh ] && [ -z "${UURING_SKIP_CONFORMANCE:-}" ]; then
	# Each version's pass list through the uuring API (the routed liburing
	# build).  It builds liburing first, then runs each test with its own
	# timeout.
	for v in $CONFORMANCE_VERSIONS; do
		RUN_LIMIT=${UURING_CONFORMANCE_TIMEOUT:-900} \
			run_one "conformance-passlist@$v" env LIBURING_VERSION="$v" \
			conformance/run-conformance.sh passlist "$BUILD"
	done
fi

[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
