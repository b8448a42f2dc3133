#!/bin/bash
# SPDX-License-Identifier: MIT
# Interleaved A/B of two uuring builds on the same machine and boot:
#
#   bench/ab-builds.sh UBENCH_A UBENCH_B
#
# UBENCH_A and UBENCH_B are bench/ubench binaries of two builds (each
# linked to its own libuuring).  Every rep runs every config on A and on
# B back to back, the order alternating per rep, so drift in the machine's
# load hits both alike.  Per config it prints the median of each build and
# the median of the paired per-rep ratios B/A of ops/s and of CPU µs per
# op, with the 95 % interval of that median from order statistics (the
# binomial rule: for 15 reps the 4th and 12th smallest ratio).  A change
# "excludes -5 %" when the interval's low end of the ops/s ratio is above
# 0.95.
#
# Environment:
#   UURING_BENCH_REPS  repetitions (default 15)
#   UURING_BENCH_SECS  seconds per run (default 2)
#   UURING_BENCH_FILE  the file for the read/wait configs
#                      (default bench/work/f1g, made by run-bench.sh)
set -u
A=${1:?usage: $0 UBENCH_A UBENCH_B}
B=${2:?usage: $0 UBENCH_A UBENCH_B}
REPS=${UURING_BENCH_REPS:-15}
SECS=${UURING_BENCH_SECS:-2}
FILE=${UURING_BENCH_FILE:-bench/work/f1g}

CONFIGS=(
	"nop_qd128_b32|-m nop -d 128 -s 32"
	"nop_async_qd128|-m nop -d 128 -s 32 -a"
	"wait2_qd512_w128|-m wait2 -d 512 -W 128 -f $FILE"
)
if [ ! -f "$FILE" ]; then
	mkdir -p "$(dirname "$FILE")"
	head -c $((1 << 30)) /dev/urandom > "$FILE"
fi

RAW=$(mktemp)
trap 'rm -f "$RAW"' EXIT
for rep in $(seq 1 "$REPS"); do
	if [ $((rep % 2)) = 1 ]; then order="A B"; else order="B A"; fi
	for c in "${CONFIGS[@]}"; do
		IFS='|' read -r name args <<< "$c"
		for which in $order; do
			if [ "$which" = A ]; then bin=$A; else bin=$B; fi
			[[ $args == *"-f "* ]] && cat "$FILE" > /dev/null
			# shellcheck disable=SC2086
			line=$(timeout -k 5 $((SECS + 60)) "$bin" -b uuring $args \
				-t "$SECS" 2>&1 | grep -m1 '^RESULT ')
			if [ -z "$line" ]; then
				echo "rep $rep $name $which: FAILED" >&2
				exit 1
			fi
			ops=$(sed -e 's/.*ops_per_s=\([0-9.]*\).*/\1/' <<< "$line")
			cpu=$(sed -e 's/.*cpu_us_per_op=\([0-9.]*\).*/\1/' <<< "$line")
			echo "$rep $name $which $ops $cpu" >> "$RAW"
			printf '  rep %2d %-18s %s %10s ops/s %8s us/op\n' \
				"$rep" "$name" "$which" "$ops" "$cpu"
		done
	done
done

python3 - "$RAW" <<'EOF'
import sys
from collections import defaultdict
from math import comb

runs = defaultdict(dict)
for l in open(sys.argv[1]):
    rep, name, which, ops, cpu = l.split()
    runs[(name, int(rep))][which] = (float(ops), float(cpu))

def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2

def interval(v):
    """95 % interval of the median: the widest symmetric pair of order
    statistics whose binomial coverage is still >= 0.95"""
    v = sorted(v)
    n = len(v)
    lo = 0
    for k in range(n // 2):
        cover = sum(comb(n, i) for i in range(k + 1, n - k)) / 2 ** n
        if cover >= 0.95:
            lo = k
        else:
            break
    return v[lo], v[n - 1 - lo]

names = []
for (name, _) in runs:
    if name not in names:
        names.append(name)
print()
print(f"{'config':18} {'A ops/s':>12} {'B ops/s':>12} {'B/A ops':>8} "
      f"{'95% interval':>16} {'B/A cpu':>8} {'excl -5%':>8}")
for name in names:
    pairs = [runs[k] for k in sorted(runs) if k[0] == name]
    pairs = [p for p in pairs if 'A' in p and 'B' in p]
    ra = [p['B'][0] / p['A'][0] for p in pairs]
    rc = [p['B'][1] / p['A'][1] for p in pairs if p['A'][1] > 0]
    lo, hi = interval(ra)
    print(f"{name:18} {median([p['A'][0] for p in pairs]):12.0f} "
          f"{median([p['B'][0] for p in pairs]):12.0f} {median(ra):8.3f} "
          f"  [{lo:.3f}, {hi:.3f}] {median(rc):8.3f} "
          f"{'yes' if lo > 0.95 else 'NO':>8}")
print(f"({len(pairs)} paired reps per config)")
EOF
