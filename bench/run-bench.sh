#!/bin/bash
# SPDX-License-Identifier: MIT
# make bench: kernel io_uring vs uuring, interleaved.
#
#   bench/run-bench.sh [BUILD]
#
# Builds bench/ubench in BUILD (default: build), then runs every benchmark
# config on the kernel's io_uring and on uuring, interleaved: rep 1 of every
# config (kernel and uuring back to back, the order alternating per rep),
# then rep 2, ...  It prints a table of medians over the reps, the ratio
# uuring/kernel against the target, CPU µs/op of the whole process, uuring's
# request routes, and every per-rep value.
#
# Environment:
#   UURING_BENCH_REPS   repetitions per config            (default 5)
#   UURING_BENCH_SECS   seconds per run, incl. warm-up    (default 2)
#   UURING_BENCH_FILE   the 1 GiB test file      (default bench/work/f1g)
#   UURING_BENCH_ONLY   run only configs whose name matches this regex
#
# Configs with a runner other than ubench measure `uuring run` (issue 5):
# the "kernel" run is the unmodified program on the kernel's io_uring, the
# "uuring" run the same program under `BUILD/tools/uuring run --mode=force`:
#   trap  bench/trapbench (liburing: raw syscall instructions; the first
#         enter from each call site traps, then the site is patched into a
#         direct call, src/shim/patch.c)
#   trap-nopatch  the same with UURING_PATCH=0: every enter is a seccomp
#         trap; the cost of one empty trap is measured too and printed
#         under the table
#   fio   Debian's fio, 4 KiB randread (bench/fio-bench.sh; its enter is a
#         raw syscall instruction too, patched like liburing's)
#
# The read benchmarks use a 1 GiB file of random data on ext4 (created once)
# and re-warm its page cache with a full sequential read right before each
# run; ubench reports the file's residency (mincore) at start and end, and
# a run with less than 99.8 % resident at either end is flagged and left out
# of the medians.  Raw results go to bench/work/results-<time>.txt.
# Exit status: 1 if the build or any run failed; a missed target is only
# reported ("met" column), since single runs on this VM are noisy.
set -u
BUILD=${1:-build}
REPS=${UURING_BENCH_REPS:-5}
SECS=${UURING_BENCH_SECS:-2}
ONLY=${UURING_BENCH_ONLY:-}
cd "$(dirname "$0")/.."
WORK=bench/work
FILE=${UURING_BENCH_FILE:-$WORK/f1g}
FILE_SIZE=$((1024 * 1024 * 1024))
mkdir -p "$WORK"

# --- build -----------------------------------------------------------------
if [ ! -f "$BUILD/build.ninja" ]; then
	meson setup "$BUILD" >/dev/null || exit 1
fi
ninja -C "$BUILD" bench/ubench >/dev/null || {
	ninja -C "$BUILD" bench/ubench; exit 1; }
UBENCH=$BUILD/bench/ubench
# the `uuring run` configs need the tool, the preload and trapbench
TOOL=$BUILD/tools/uuring
TRAPBENCH=$BUILD/bench/trapbench
ninja -C "$BUILD" tools/uuring tools/libuuring-preload.so bench/trapbench \
	>/dev/null 2>&1 || true

# --- configs ----------------------------------------------------------------
# name | args | target: ratio uuring/kernel of ops/s (>=, "-" = none) |
#   target: ratio uuring/kernel of CPU us/op (<=, "-" = none) |
#   runner (ubench if absent; trap, fio: see above)
CONFIGS=(
	"nop_qd128_b32|-m nop -d 128 -s 32|2.0|-"
	"read4k_qd1|-m read -d 1 -s 1 -f $FILE|1.0|1.0"
	"read4k_qd32_b32|-m read -d 32 -s 32 -f $FILE|0.75|1.0"
	"nop_async_qd128|-m nop -d 128 -s 32 -a|1.5|1.0"
	"nop_async_defer_qd128|-m nop -d 128 -s 32 -a -F 0x3000|-|-"
	"read4k_direct_qd32|-m read -D -d 32 -s 8 -f $FILE|0.8|-"
	"wait2_qd512_w128|-m wait2 -d 512 -W 128 -f $FILE|1.0|-"
	"sqpoll_nop_qd128|-m nop -d 128 -s 32 -F 0x2|-|-"
	"sqpoll_read4k_qd32|-m read -d 32 -s 32 -F 0x2 -f $FILE|-|-"
	"run_trap_nop_b1|-m nop -s 1|-|-|trap-nopatch"
	"run_trap_nop_b8|-m nop -s 8|-|-|trap-nopatch"
	"run_trap_nop_b32|-m nop -s 32|0.6|-|trap-nopatch"
	"run_patched_nop_b1|-m nop -s 1|-|-|trap"
	"run_patched_nop_b8|-m nop -s 8|-|-|trap"
	"run_patched_nop_b32|-m nop -s 32|0.6|-|trap"
	"run_fio_read4k_qd128|128 32|1.0|1.0|fio"
)
# without the tool, the preload or trapbench (no liburing-dev), no
# `uuring run` configs
sel=()
for c in "${CONFIGS[@]}"; do
	IFS='|' read -r _ _ _ _ runner <<< "$c"
	case ${runner:-ubench} in
	trap|trap-nopatch) [ -x "$TOOL" ] && [ -x "$TRAPBENCH" ] || continue;;
	fio) [ -x "$TOOL" ] && command -v fio >/dev/null || continue;;
	esac
	sel+=("$c")
done
CONFIGS=("${sel[@]}")
if [ -n "$ONLY" ]; then
	sel=()
	for c in "${CONFIGS[@]}"; do
		[[ ${c%%|*} =~ $ONLY ]] && sel+=("$c")
	done
	CONFIGS=("${sel[@]}")
fi
need_file=0
for c in "${CONFIGS[@]}"; do
	[[ $c == *"-m read"* || $c == *"|fio" ]] && need_file=1
done

# --- machine ----------------------------------------------------------------
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
echo "machine: nproc=$(nproc) kernel=$(uname -r) cpu=\"$cpu\"" \
     "io_uring_disabled=$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo ?)"
echo "bench: reps=$REPS secs/run=$SECS (first min(1, secs/4) s = warm-up, not measured)"

# --- the test file ----------------------------------------------------------
if [ $need_file = 1 ]; then
	if [ "$(stat -c %s "$FILE" 2>/dev/null)" != "$FILE_SIZE" ]; then
		echo "creating $FILE (1 GiB of random data) ..."
		head -c "$FILE_SIZE" /dev/urandom > "$FILE.tmp" && mv "$FILE.tmp" "$FILE" || exit 1
		sync "$FILE"
	fi
	fstype=$(df --output=fstype "$FILE" 2>/dev/null | tail -n1)
	echo "file: $FILE on $fstype ($(df --output=source "$FILE" | tail -n1))"
	[ "$fstype" = ext4 ] || echo "WARNING: $FILE is on $fstype, not ext4"
fi

warm() {
	cat "$FILE" > /dev/null
}

# --- runs -------------------------------------------------------------------
RAW=$WORK/results-$(date +%Y%m%d-%H%M%S).txt
: > "$RAW"
failed=0
echo "runs: ${#CONFIGS[@]} configs x 2 backends x $REPS reps, raw results in $RAW"
for rep in $(seq 1 "$REPS"); do
	if [ $((rep % 2)) = 1 ]; then order="kernel uuring"; else order="uuring kernel"; fi
	for c in "${CONFIGS[@]}"; do
		IFS='|' read -r name args target cputarget runner <<< "$c"
		for be in $order; do
			[[ $args == *"-m read"* || $runner == fio ]] && warm
			# shellcheck disable=SC2206
			case ${runner:-ubench} in
			ubench) cmd=("$UBENCH" -b "$be" $args -t "$SECS");;
			trap|trap-nopatch) cmd=("$TRAPBENCH" $args -t "$SECS");;
			fio) cmd=(bench/fio-bench.sh "$FILE" "$SECS" $args);;
			esac
			[ "${runner:-ubench}" = ubench ] || [ "$be" = kernel ] ||
				cmd=("$TOOL" run --mode=force -- "${cmd[@]}")
			[ "$runner" != trap-nopatch ] || [ "$be" = kernel ] ||
				cmd=(env UURING_PATCH=0 "${cmd[@]}")
			out=$(timeout -k 5 $((${SECS%.*} + 60)) "${cmd[@]}" 2>&1)
			rc=$?
			line=$(grep -m1 '^RESULT ' <<< "$out")
			if [ $rc != 0 ] || [ -z "$line" ]; then
				failed=$((failed + 1))
				err=$(tr '\n' ' ' <<< "$out" | cut -c1-200)
				echo "  rep $rep $name $be: FAILED (rc=$rc) $err"
				echo "$rep $name $be $target $cputarget FAIL rc=$rc" >> "$RAW"
				continue
			fi
			echo "$rep $name $be $target $cputarget ${line#RESULT }" >> "$RAW"
			printf '  rep %d %-16s %-6s %s\n' "$rep" "$name" "$be" \
				"$(sed -e 's/.*ops_per_s=\([0-9]*\).*cpu_us_per_op=\([0-9.]*\).*/\1 ops\/s  \2 us\/op/' <<< "$line")"
		done
	done
done

# the cost of one empty trap, beside the trapped-path rows
TRAPCOST=
if [ -x "$TOOL" ] && [ -x "$TRAPBENCH" ] && [[ " ${CONFIGS[*]} " == *"|trap"* ]]; then
	TRAPCOST=$("$TOOL" run --mode=force -- "$TRAPBENCH" -m trap -t 2 2>/dev/null |
		sed -n 's/^TRAP //p')
fi

# --- table ------------------------------------------------------------------
python3 - "$RAW" "$TRAPCOST" <<'EOF'
import sys, statistics as stx

rows = []
for ln in open(sys.argv[1]):
    f = ln.split()
    if len(f) < 6:
        continue
    r = {"rep": int(f[0]), "name": f[1], "be": f[2],
         "target": None if f[3] == "-" else float(f[3]),
         "cputarget": None if f[4] == "-" else float(f[4])}
    if f[5] == "FAIL":
        r["fail"] = True
    else:
        r["fail"] = False
        for kv in f[5:]:
            k, v = kv.split("=", 1)
            r[k] = float(v)
    rows.append(r)

names = []
for r in rows:
    if r["name"] not in names:
        names.append(r["name"])

def valid(r):
    if r["fail"]:
        return False
    for k in ("resid_start", "resid_end"):
        if r.get(k, -1) >= 0 and r[k] < 0.998:
            return False
    return True

def si(v):
    for div, suf in ((1e6, "M"), (1e3, "K")):
        if v >= div:
            return "%.2f%s" % (v / div, suf)
    return "%.0f" % v

def med(rs, k):
    v = [r[k] for r in rs]
    return stx.median(v) if v else None

print()
hdr = ("benchmark", "kernel/s", "uuring/s", "ratio", "target",
       "k CPU us/op", "u CPU us/op", "u/k CPU", "CPU target", "met",
       "uuring routes inline/iowq/poll/sqpoll/aio (wakeups per CQE), all reps")
print("| " + " | ".join(hdr) + " |")
print("|" + "|".join("---" for _ in hdr) + "|")
for n in names:
    rs = [r for r in rows if r["name"] == n]
    target, ctarget = rs[0]["target"], rs[0]["cputarget"]
    k = [r for r in rs if r["be"] == "kernel" and valid(r)]
    u = [r for r in rs if r["be"] == "uuring" and valid(r)]
    km, um = med(k, "ops_per_s"), med(u, "ops_per_s")
    kc, uc = med(k, "cpu_us_per_op"), med(u, "cpu_us_per_op")
    ratio = um / km if km and um else None
    cratio = uc / kc if kc and uc is not None else None
    if ratio is None:
        ok = "n/a"
    else:
        miss = []
        if target is not None and ratio < target:
            miss.append("speed")
        if ctarget is not None and (cratio is None or cratio > ctarget):
            miss.append("CPU")
        ok = "NO (" + ", ".join(miss) + ")" if miss else "yes"
    if u and all(r["route_inline"] >= 0 for r in u):
        tot = sum(int(r["ops_total"]) for r in u)
        routes = "%d/%d/%d/%d/%d (%.4f)" % (tuple(sum(int(r.get(x, 0)) for r in u) for x in
                 ("route_inline", "route_iowq", "route_poll", "route_sqpoll", "route_aio")) +
                 (sum(int(r["wakeups"]) for r in u) / tot if tot else 0.0,))
    else:
        routes = "n/a"
    cells = (n, si(km) if km else "n/a", si(um) if um else "n/a",
             "%.2f" % ratio if ratio else "n/a",
             ">= %.2f" % target if target is not None else "-",
             "%.3f" % kc if kc is not None else "n/a",
             "%.3f" % uc if uc is not None else "n/a",
             "%.2f" % cratio if cratio is not None else "n/a",
             "<= %.2f" % ctarget if ctarget is not None else "-", ok, routes)
    print("| " + " | ".join(cells) + " |")

print()
print("medians over valid reps; ratio = uuring/kernel of the medians; CPU us/op = getrusage(RUSAGE_SELF)")
print("user+sys of the whole process over the measured window / ops; routes from uuring_get_stats.")
if any(n.startswith("run_") for n in names):
    print("run_*: the same unmodified program on the kernel's io_uring, and under `uuring run --mode=force`")
    print("(run_trap_*: liburing, every enter a seccomp trap (UURING_PATCH=0); run_patched_*: the same, its enter")
    print("call site patched into a direct call after its first trap; fio: its enter is patched the same way).")
    if sys.argv[2]:
        kv = dict(x.split("=") for x in sys.argv[2].split())
        print("empty trap (SIGSYS delivery + handler + sigreturn): %s ns; a plain getppid(2): %s ns"
              % (kv.get("empty_trap_ns", "?"), kv.get("raw_syscall_ns", "?")))
print()
print("per-rep values (ops/s, CPU us/op, [CPU cores used by other processes]; * = invalid run):")
for n in names:
    for be in ("kernel", "uuring"):
        rs = sorted((r for r in rows if r["name"] == n and r["be"] == be),
                    key=lambda r: r["rep"])
        vals = []
        for r in rs:
            if r["fail"]:
                vals.append("FAIL")
                continue
            s = "%s %.3f [%.2f]" % (si(r["ops_per_s"]), r["cpu_us_per_op"],
                                    r["other_cores"])
            if not valid(r):
                s += "* (resident %.3f/%.3f)" % (r["resid_start"], r["resid_end"])
            vals.append(s)
        print("  %-16s %-6s %s" % (n, be, ", ".join(vals)))
    ks = {r["rep"]: r for r in rows if r["name"] == n and r["be"] == "kernel" and valid(r)}
    us = {r["rep"]: r for r in rows if r["name"] == n and r["be"] == "uuring" and valid(r)}
    pr = ["%.2f" % (us[i]["ops_per_s"] / ks[i]["ops_per_s"]) for i in sorted(ks) if i in us]
    if pr:
        print("  %-16s ratio  %s" % (n, ", ".join(pr)))
    ur = [r for r in rows if r["name"] == n and r["be"] == "uuring" and not r["fail"]]
    if ur:
        print("  %-16s uuring per rep: inline/iowq/poll/sqpoll/aio = %s; waits/wakeups = %s" % (n,
              ", ".join("%d/%d/%d/%d/%d" % (r["route_inline"], r["route_iowq"], r["route_poll"],
                                            r["route_sqpoll"], r.get("route_aio", 0)) for r in ur),
              ", ".join("%d/%d" % (r["waits"], r["wakeups"]) for r in ur)))
EOF
[ $failed = 0 ] || { echo "$failed run(s) failed"; exit 1; }
