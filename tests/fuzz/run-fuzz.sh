#!/bin/bash
# SPDX-License-Identifier: MIT
# Both fuzzers for MINUTES (make fuzz, FUZZ_MINUTES; make test runs a
# smoke with --smoke, in which libFuzzer only replays tests/fuzz/corpus):
#  1. the coverage-guided one: fuzz_uuring (tests/test_diff_fuzz2.c built
#     with F2_LIBFUZZER in FUZZ_BUILD, ASan+UBSan, libFuzzer), half the
#     time, from tests/fuzz/corpus (the differential fuzzer's own runs,
#     written with UURING_FUZZ_CORPUS) into a work corpus;
#  2. the differential one: test_diff_fuzz2 of BUILD on fresh seeds
#     (UURING_FUZZ_SEED from 1000 up), the four ring modes in turn, the
#     other half.
# Writes tests/results/fuzz.md (or fuzz-smoke.md): executions, findings,
# the differential runs and their failures (logs kept beside it).  With
# COV_BUILD (a build with -fprofile-instr-generate -fcoverage-mapping and
# the fuzzer option), the work corpus is replayed there and the lines of
# src/ executed are reported (llvm-profdata, llvm-cov).
#
#   tests/fuzz/run-fuzz.sh BUILD FUZZ_BUILD MINUTES [--smoke]
set -u
BUILD=${1:?build dir}
FUZZ_BUILD=${2:?fuzz build dir}
MINUTES=${3:-30}
SMOKE=${4:-}
cd "$(dirname "$0")/../.."
RES=tests/results
name=fuzz
[ "$SMOKE" = --smoke ] && name=fuzz-smoke
mkdir -p "$RES/$name-logs" "$RES/$name-corpus" "$RES/$name-artifacts"
rm -f "$RES/$name-logs"/* "$RES/$name-artifacts"/*
total=$((MINUTES * 60))
half=$((total / 2))
[ $half -lt 10 ] && half=10
report=$RES/$name.md
fail=0

# 1. libFuzzer
lf_status=skipped
lf_line=""
if [ -x "$FUZZ_BUILD/tests/fuzz_uuring" ]; then
	start=$(date +%s)
	# the smoke (make test) replays the committed corpus once, without
	# mutating it: make test must not fail by chance, and a mutation
	# campaign finds new inputs at random (one found a hang within 11 s
	# of a fresh-clone make test: tests/fuzz/findings/README)
	if [ "$SMOKE" = --smoke ]; then
		lf_args=(-runs=0 tests/fuzz/corpus)
	else
		lf_args=(-max_total_time=$half "$RES/$name-corpus" tests/fuzz/corpus)
	fi
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 \
		"$FUZZ_BUILD/tests/fuzz_uuring" \
		-timeout=60 -rss_limit_mb=4096 -print_final_stats=1 \
		-artifact_prefix="$RES/$name-artifacts/" "${lf_args[@]}" \
		> "$RES/$name-logs/libfuzzer.log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	lf_line=$(grep -E '^#[0-9]+.*(DONE|cov:)' "$RES/$name-logs/libfuzzer.log" | tail -n 1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$RES/$name-logs/libfuzzer.log")
	if [ $rc -eq 0 ]; then
		lf_status="no finding ($secs s, ${execs:-?} executions)"
	else
		lf_status="FINDING (exit $rc after $secs s; artifacts in $RES/$name-artifacts)"
		fail=1
	fi
fi

# 2. the differential fuzzer on fresh seeds
modes=(default coop defer sqpoll)
runs=0 dfails=0 failed_runs=()
end=$(( $(date +%s) + total - half ))
seed=1000
while [ "$(date +%s)" -lt $end ]; do
	for m in "${modes[@]}"; do
		mm=$m
		[ $m = default ] && mm=
		log=$RES/$name-logs/diff-$m-$seed.log
		UURING_TEST_RING_MODE=$mm UURING_FUZZ_SEED=$seed \
			timeout -k 5 120 "$BUILD/tests/test_diff_fuzz2" > "$log" 2>&1
		if [ $? -eq 0 ]; then
			rm -f "$log"
		else
			dfails=$((dfails + 1))
			failed_runs+=("$m:$seed")
		fi
		runs=$((runs + 1))
		[ "$(date +%s)" -lt $end ] || break
	done
	seed=$((seed + 1))
done

# coverage of src/ by the work corpus
cov_line="not measured (COV_BUILD unset)"
if [ -n "${COV_BUILD:-}" ] && [ -x "$COV_BUILD/tests/fuzz_uuring" ]; then
	rm -f "$RES/$name-logs"/*.profraw
	LLVM_PROFILE_FILE="$RES/$name-logs/cov-%p.profraw" \
		"$COV_BUILD/tests/fuzz_uuring" -runs=0 "$RES/$name-corpus" \
		tests/fuzz/corpus > "$RES/$name-logs/cov-replay.log" 2>&1
	llvm-profdata merge -sparse "$RES/$name-logs"/cov-*.profraw \
		-o "$RES/$name-logs/cov.profdata" &&
	llvm-cov report "$COV_BUILD/tests/fuzz_uuring" \
		-instr-profile="$RES/$name-logs/cov.profdata" \
		> "$RES/$name-logs/cov-report.txt" 2>&1 &&
	cov_line=$(awk '$1 ~ /(^|\/)src\// { l += $8; m += $9 }
		END { printf "lines of src/ executed: %d of %d (%.1f%%)", l - m, l, l ? 100 * (l - m) / l : 0 }' \
		"$RES/$name-logs/cov-report.txt")
	rm -f "$RES/$name-logs"/*.profraw
fi

{
	echo "# $name: $(date -u '+%Y-%m-%d %H:%M UTC'), $MINUTES min, commit $(git rev-parse --short HEAD)"
	echo
	echo "- libFuzzer (fuzz_uuring, ASan+UBSan): $lf_status"
	[ -n "$lf_line" ] && echo "  - last status: \`$lf_line\`"
	echo "  - work corpus: $(ls "$RES/$name-corpus" | wc -l) inputs (seeded by tests/fuzz/corpus, $(ls tests/fuzz/corpus | wc -l))"
	echo "- differential (test_diff_fuzz2, seeds 1000-$seed, default/coop/defer/sqpoll): $runs runs, $dfails failed ${failed_runs[*]:+(${failed_runs[*]})}"
	echo "- coverage: $cov_line"
} > "$report"
cat "$report"
[ $fail -eq 0 ]
