#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs one test N times and counts the failures, optionally beside two
# CPU-bound processes (the load that widens race windows on 2 cores).
#
#   tests/stress.sh TEST [N] [--hogs] [-- ARGS...]
#
# TEST is a path (build-asan/tests/test_diff_fork) or a name looked up in
# $BUILD/tests (BUILD defaults to build).  ARGS go to every run (a
# differential test takes scenario names).  UURING_TEST_RING_MODE and the
# other UURING_* variables pass through.  Each run gets a timeout
# (STRESS_TIMEOUT, 120 s); the log of each failed run is kept in
# $STRESS_LOGS (a fresh temporary directory by default).  Exit status 0
# only if no run failed.  Last line: "N runs, N failed".
set -u
if [ $# -lt 1 ]; then
	echo "usage: $0 TEST [N] [--hogs] [-- ARGS...]" >&2
	exit 2
fi
test=$1; shift
runs=100
hogs=0
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--hogs) hogs=1;;
	--) shift; args=("$@"); break;;
	*[!0-9]*) echo "$0: unknown argument $1" >&2; exit 2;;
	*) runs=$1;;
	esac
	shift
done
if [ ! -x "$test" ]; then
	test=${BUILD:-build}/tests/$test
fi
if [ ! -x "$test" ]; then
	echo "$0: no executable $test" >&2
	exit 2
fi
logs=${STRESS_LOGS:-$(mktemp -d /tmp/stress.XXXXXX)}
mkdir -p "$logs"

hog_pids=()
stop_hogs() {
	[ ${#hog_pids[@]} -gt 0 ] && kill "${hog_pids[@]}" 2>/dev/null
	wait 2>/dev/null
}
trap stop_hogs EXIT
if [ $hogs -eq 1 ]; then
	for _ in 1 2; do
		( while :; do :; done ) &
		hog_pids+=($!)
	done
fi

failed=0
for ((i = 1; i <= runs; i++)); do
	log=$logs/run-$i.log
	if setsid timeout -k 5 "${STRESS_TIMEOUT:-120}" "$test" \
		"${args[@]}" >"$log" 2>&1; then
		rm -f "$log"
	else
		rc=$?
		# 77: the test skipped, which is not a failure
		if [ $rc -eq 77 ]; then
			rm -f "$log"
			continue
		fi
		failed=$((failed + 1))
		echo "run $i: FAIL (rc=$rc), log $log"
		grep -m3 -i 'fail\|mismatch\|differ' "$log" | sed 's/^/    /'
	fi
done
echo "$runs runs, $failed failed"
[ $failed -eq 0 ]
