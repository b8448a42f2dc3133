#!/bin/bash
# SPDX-License-Identifier: MIT
# 4k random reads at QD1 (psync) and QD32 (the kernel's io_uring) on
#  - /dev/ublkbN of rublk's null target, served by uuring's ublk driver
#    (rublk under uuring run; the node is uublkd's FUSE file + loop dio),
#  - nbdkit's memory plugin and nbdkit's null plugin, each through
#    nbdfuse (a FUSE file) + a loop device with direct I/O,
# interleaved: every round runs each arm once, in the same order.
# Prints each run, then per arm the median IOPS (min-max) and the median
# CPU per I/O taken system-wide from /proc/stat (FUSE, loop workers and
# the servers all run outside fio), and the ublk/nbdkit ratios per round
# with a distribution-free interval of their median (>= 95 %, from 6
# rounds on; the issue asks for 15).
#
#   bench/ublk-vs-nbdkit.sh [ROUNDS [SECONDS]]      (root; default 3 x 5 s)
#
# Needs root, fio, nbdkit, nbdfuse (Debian: nbdkit, libnbd-bin), losetup,
# /dev/fuse, and rublk ($RUBLK or on PATH; see tests/test_run_rublk.c).
set -u
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECS=${2:-5}
BUILD=${BUILD:-build}
RUBLK=${RUBLK:-$(command -v rublk)}
U=$BUILD/tools/uuring
for t in fio nbdkit nbdfuse losetup python3; do
	command -v $t >/dev/null || { echo "skip: no $t"; exit 77; }
done
[ "$(id -u)" = 0 ] && [ -e /dev/fuse ] || { echo "skip: not root or no /dev/fuse"; exit 77; }
[ -x "$RUBLK" ] && [ -x "$U" ] || { echo "skip: no rublk (RUBLK) or no $U"; exit 77; }

W=$(mktemp -d /tmp/uuring-nbdbench-XXXXXX)
export UURING_UBLKD_NAME=uuring-ublkd-nbdbench-$$
ID=$((6000 + $$ % 1000))
NBDPIDS=() LOOPS=() MNTS=()
cleanup() {
	for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null; done
	for m in "${MNTS[@]}"; do fusermount3 -u "$m" 2>/dev/null || umount -l "$m"; done
	for p in "${NBDPIDS[@]}"; do kill "$p" 2>/dev/null; done
	timeout 30 "$U" run --mode=force --block-kernel-uring -- "$RUBLK" del -n $ID >/dev/null 2>&1
	rm -rf "$W"
}
trap cleanup EXIT

timeout 30 "$U" run --mode=force --block-kernel-uring -- "$RUBLK" add null -n $ID --quiet >/dev/null ||
	{ echo "rublk add null failed"; exit 1; }
UBLK=/dev/ublkb$ID
for i in $(seq 100); do [ -b $UBLK ] && break; sleep 0.05; done
[ -b $UBLK ] || { echo "no $UBLK (the driver makes it as root with FUSE and loop)"; exit 1; }

# nbdkit PLUGIN ARGS... -> nbdfuse -> loop dio; the loop device in ARM_DEV
nbd_arm() {
	local name=$1 i l; shift
	nbdkit -f -U "$W/$name.sock" "$@" </dev/null >/dev/null 2>&1 &
	NBDPIDS+=($!)
	for i in $(seq 100); do [ -S "$W/$name.sock" ] && break; sleep 0.05; done
	mkdir -p "$W/$name"
	# nbdfuse stays in the foreground; the pid file appears once mounted
	nbdfuse -P "$W/$name.pid" "$W/$name/disk" --unix "$W/$name.sock" \
		</dev/null >/dev/null 2>&1 &
	NBDPIDS+=($!)
	for i in $(seq 100); do [ -s "$W/$name.pid" ] && break; sleep 0.05; done
	MNTS+=("$W/$name")
	l=$(losetup -f --show --direct-io=on "$W/$name/disk") || return 1
	LOOPS+=("$l")
	ARM_DEV=$l
}
nbd_arm mem memory 256M || { echo "nbdkit memory arm failed"; exit 1; }
NBDMEM=$ARM_DEV
nbd_arm null null 256M || { echo "nbdkit null arm failed"; exit 1; }
NBDNULL=$ARM_DEV

busy() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }
HZ=$(getconf CLK_TCK)
one() { # arm dev qd -> "arm qd iops cpu_us_per_io"
	local arm=$1 dev=$2 qd=$3 eng=psync b0 b1 out
	[ "$qd" -gt 1 ] && eng=io_uring
	b0=$(busy)
	out=$(fio --name=b --filename="$dev" --rw=randread --bs=4k --direct=1 \
		--ioengine=$eng --iodepth="$qd" --size=64m --runtime="$SECS" \
		--time_based --output-format=json 2>/dev/null)
	b1=$(busy)
	python3 -c '
import json, sys
j = json.loads(sys.argv[1]); r = j["jobs"][0]["read"]
ios = max(r["total_ios"], 1)
print(sys.argv[2], sys.argv[3], round(r["iops"]),
      round((int(sys.argv[5]) - int(sys.argv[4])) * 1e6 / int(sys.argv[6]) / ios, 1))' \
		"$out" "$arm" "$qd" "$b0" "$b1" "$HZ"
}

echo "# $(date -u +%FT%TZ) rounds=$ROUNDS secs=$SECS load=$(cut -d' ' -f1-3 /proc/loadavg)"
echo "# ublk=$UBLK nbdkit-memory=$NBDMEM nbdkit-null=$NBDNULL"
for r in $(seq "$ROUNDS"); do
	for qd in 1 32; do
		one ublk-null $UBLK $qd
		one nbdkit-memory $NBDMEM $qd
		one nbdkit-null $NBDNULL $qd
	done
done | tee "$W/runs"
python3 - "$W/runs" <<'EOF'
import statistics as st, sys
from math import comb
runs = [l.split() for l in open(sys.argv[1]) if not l.startswith("#")]

def median_ci(xs):
    # distribution-free interval of the median: the order statistics
    # x(k), x(n-k+1) with the widest k whose coverage, from the binomial
    # (n, 1/2), is still >= 95 % (n = 15: k = 4, 96.5 %)
    n, best = len(xs), None
    for k in range(1, n // 2 + 1):
        cover = 1 - 2 * sum(comb(n, i) for i in range(k)) / 2 ** n
        if cover >= 0.95:
            best = (xs[k - 1], xs[n - k], 100 * cover)
    return best if best else (0, 0, 0)
arms = ["ublk-null", "nbdkit-memory", "nbdkit-null"]
print("\n| arm | QD | IOPS median (min-max) | CPU us/IO median |")
print("|---|---|---|---|")
for qd in ("1", "32"):
    for a in arms:
        v = [int(x[2]) for x in runs if x[0] == a and x[1] == qd]
        c = [float(x[3]) for x in runs if x[0] == a and x[1] == qd]
        if v:
            print(f"| {a} | {qd} | {st.median(v):.0f} ({min(v)}-{max(v)}) | {st.median(c):.1f} |")
for qd in ("1", "32"):
    for b in arms[1:]:
        u = [int(x[2]) for x in runs if x[0] == arms[0] and x[1] == qd]
        n = [int(x[2]) for x in runs if x[0] == b and x[1] == qd]
        rs = sorted(a / max(c, 1) for a, c in zip(u, n))
        if rs:
            lo, hi, conf = median_ci(rs)
            ci = f", {conf:.1f} % interval of the median {lo:.2f}-{hi:.2f}" if conf else ""
            print(f"QD{qd} ublk-null / {b}: per-round ratios {', '.join(f'{x:.2f}' for x in rs)}, median {st.median(rs):.2f}{ci}")
EOF
