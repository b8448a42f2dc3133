#!/bin/bash
# SPDX-License-Identifier: MIT
# make bench-seeds: the seed patches' own experiments on uuring, each an
# interleaved A/B of the switch that brings back the
# behaviour before the patch (README "Configuration knobs").
#
#   bench/seeds.sh [BUILD]
#
# Every experiment runs its arms back to back per repetition, the order
# reversed every other repetition; bench/seeds-report.py then writes
# bench/results/seeds.md (medians, the on/off ratio with a 95 % bootstrap
# interval, the seed's reported figures beside them, machine, kernel,
# commit) and PNG plots when python3-matplotlib is installed.
#
#   000  fio SQPOLL randread 4k QD128 on the null target under `uuring
#        run`: UURING_SQPOLL_TW_CAP 8 vs 32 (IOPS, mean latency)
#   001  IOSQE_ASYNC NOP flood QD128 (bench/ubench -T, 1, 2 and 4
#        submitting threads, each with its ring): UURING_IOWQ_LOCK global
#        vs split, and the kernel; one extra run per arm with
#        UURING_LOCKSTAT=1 for contended acquisitions/s and lock wait share
#   002  fio SQPOLL randread on the null target with UURING_ISSUE_VIA_TW=1,
#        per iodepth (UURING_SEEDS_DEPTHS): UURING_PRIO_TW 0 vs 1 (mean latency)
#   003  bench/ubench -m wait2: one thread keeping QD512 of reads on the
#        null target (irqmode=2, completion_nsec=5000), one waiting for 128
#        CQEs at a time: UURING_WAKE every vs threshold (IOPS, wakeups/CQE)
#
# Environment: UURING_BENCH_REPS (15), UURING_BENCH_SECS (2, per run),
# UURING_SEEDS_ONLY (a regex over 000|001|002|003), UURING_SEEDS_DEPTHS ("8 16 32 64 256
# 1024 4096"), UURING_SEEDS_THREADS (001's submitting threads, "1 2 4").  Raw results: bench/results/seeds-raw.txt, one line per run.
set -u
BUILD=${1:-build}
REPS=${UURING_BENCH_REPS:-15}
SECS=${UURING_BENCH_SECS:-2}
ONLY=${UURING_SEEDS_ONLY:-}
DEPTHS=${UURING_SEEDS_DEPTHS:-8 16 32 64 256 1024 4096}
THREADS=${UURING_SEEDS_THREADS:-1 2 4}
cd "$(dirname "$0")/.."
OUT=bench/results
RAW=$OUT/seeds-raw.txt
NB=/var/tmp/uuring-seeds-nb0
mkdir -p "$OUT"

if [ ! -f "$BUILD/build.ninja" ]; then
	meson setup "$BUILD" >/dev/null || exit 1
fi
ninja -C "$BUILD" bench/ubench tools/uuring tools/libuuring-preload.so \
	>/dev/null || exit 1
UBENCH=$BUILD/bench/ubench
TOOL=$BUILD/tools/uuring
# the null target's file: recognised by its inode, never read or written
[ "$(stat -c %s "$NB" 2>/dev/null)" = 1073741824 ] || truncate -s 1G "$NB"

RAMP=$(python3 -c "print(min(1.0, $SECS / 4))")
RUN=$(python3 -c "print(max(1, int(round($SECS - $RAMP))))")

# fio randread under `uuring run` on the null target; prints
# "ops_per_s=N lat_us=X"
fio_nullb() { # DEPTH ENV...
	local depth=$1; shift
	env UURING_NULLB="$NB" "$@" "$TOOL" run --mode=force \
		--block-kernel-uring -- fio --name=seed --filename="$NB" \
		--ioengine=io_uring --sqthread_poll=1 --direct=1 \
		--rw=randread --bs=4k --iodepth="$depth" --size=1g \
		--norandommap --randrepeat=0 --time_based \
		--ramp_time="$RAMP" --runtime="$RUN" --output-format=json \
		2>/dev/null | python3 -c '
import json, sys
try:
    r = json.load(sys.stdin)["jobs"][0]["read"]
    print("ops_per_s=%.0f lat_us=%.2f" % (r["iops"], r["lat_ns"]["mean"] / 1e3))
except Exception:
    print("error")'
}

# bench/ubench; prints its RESULT fields
ubench() { # BACKEND ENV... -- ARGS...
	local be=$1; shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" "$UBENCH" -b "$be" -t "$SECS" "$@" 2>/dev/null |
		sed -n 's/^RESULT //p' | head -n1
}

# one run of ARM of EXPERIMENT, appended to RAW
record() { # EXP ARM REP RESULT...
	local exp=$1 arm=$2 rep=$3; shift 3
	echo "exp=$exp arm=$arm rep=$rep $*" >> "$RAW"
}

run_arm() { # EXP ARM
	case $1:$2 in
	000:cap8) fio_nullb 128 UURING_SQPOLL_TW_CAP=8;;
	000:cap32) fio_nullb 128 UURING_SQPOLL_TW_CAP=32;;
	001:global_t*) ubench uuring UURING_IOWQ_LOCK=global -- -m nop -d 128 -s 32 -a -T "${2#*_t}";;
	001:split_t*) ubench uuring UURING_IOWQ_LOCK=split -- -m nop -d 128 -s 32 -a -T "${2#*_t}";;
	001:kernel_t*) ubench kernel UURING_IOWQ_LOCK=split -- -m nop -d 128 -s 32 -a -T "${2#*_t}";;
	002:prio0_qd*) fio_nullb "${2#prio0_qd}" UURING_ISSUE_VIA_TW=1 UURING_PRIO_TW=0;;
	002:prio1_qd*) fio_nullb "${2#prio1_qd}" UURING_ISSUE_VIA_TW=1 UURING_PRIO_TW=1;;
	003:every|003:threshold)
		ubench uuring UURING_WAKE="$2" \
			UURING_NULLB="$NB:irqmode=2,completion_nsec=5000,hw_queue_depth=512" \
			-- -m wait2 -d 512 -W 128 -f "$NB";;
	esac
}

EXPS=()
for e in 000 001 002 003; do
	[ -z "$ONLY" ] || [[ $e =~ $ONLY ]] && EXPS+=("$e")
done
arms_of() {
	case $1 in
	000) echo "cap8 cap32";;
	001) for t in $THREADS; do printf 'global_t%s split_t%s kernel_t%s ' "$t" "$t" "$t"; done;;
	002) for d in $DEPTHS; do printf 'prio0_qd%s prio1_qd%s ' "$d" "$d"; done;;
	003) echo "every threshold";;
	esac
}

: > "$RAW"
echo "seeds: ${EXPS[*]}, $REPS reps, $SECS s per run, raw results in $RAW"
for rep in $(seq 1 "$REPS"); do
	for e in "${EXPS[@]}"; do
		arms=$(arms_of "$e")
		[ $((rep % 2)) = 0 ] && arms=$(echo "$arms" | tr ' ' '\n' | tac | tr '\n' ' ')
		for a in $arms; do
			record "$e" "$a" "$rep" "$(run_arm "$e" "$a")"
		done
	done
	echo "rep $rep of $REPS done"
done
# 001's lock statistics: one more run per uuring arm, counting (it costs
# a little, so not in the measured reps)
if [[ " ${EXPS[*]} " == *" 001 "* ]]; then
	for t in $THREADS; do
		for a in global split; do
			st=$(mktemp)
			ubench uuring UURING_IOWQ_LOCK=$a UURING_LOCKSTAT=1 \
				UURING_STATS="$st" -- -m nop -d 128 -s 32 -a \
				-T "$t" >/dev/null
			grep '^uuring-lockstat' "$st" | tail -n 8 |
				sed "s/^/exp=001-lockstat arm=${a}_t$t /" >> "$RAW"
			rm -f "$st"
		done
	done
fi
# Debian's python3-matplotlib is for /usr/bin/python3, which a python3
# earlier in PATH (pyenv) may not be
PY=python3
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null && PY=/usr/bin/python3
"$PY" bench/seeds-report.py "$RAW" "$OUT" "$REPS" "$SECS"
