#!/bin/bash
# SPDX-License-Identifier: MIT
# fio 4 KiB random reads with its io_uring engine, as one RESULT line in
# bench/ubench's format (for bench/run-bench.sh):
#
#   bench/fio-bench.sh FILE SECS DEPTH [BATCH]
#
# --invalidate=0 keeps the (pre-warmed) page cache; plain buffered reads,
# no fixed files or buffers.  ops_per_s is fio's read IOPS over the
# measured window (after a min(1, SECS/4) s ramp), cpu_us_per_op fio's
# usr+sys CPU of the job over its I/Os.  Run it under `uuring run` to
# measure the preload path: fio issues libc syscall()s.
set -eu
FILE=$1 SECS=$2 DEPTH=$3 BATCH=${4:-32}
RAMP=$(python3 -c "print(min(1.0, $SECS / 4))")
RUN=$(python3 -c "print(max(1, int(round($SECS - $RAMP))))")
out=$(fio --name=randread --filename="$FILE" --ioengine=io_uring \
	--rw=randread --bs=4k --iodepth="$DEPTH" --iodepth_batch_submit="$BATCH" \
	--iodepth_batch_complete_min=1 --invalidate=0 --direct=0 --norandommap \
	--randrepeat=0 --time_based --ramp_time="$RAMP" --runtime="$RUN" \
	--output-format=json 2>/dev/null)
python3 - "$out" <<'PY'
import json, sys
j = json.loads(sys.argv[1])["jobs"][0]
r = j["read"]
ios = r["total_ios"]
run_s = j["job_runtime"] / 1000.0
cpu_s = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * run_s
if j["error"] or not ios:
    print("fio error %d" % j["error"])
    sys.exit(1)
print("RESULT ops_per_s=%.0f cpu_us_per_op=%.4f enters_per_op=-1 ops_total=%d "
      "route_inline=-1 route_iowq=-1 route_poll=-1 route_sqpoll=-1 route_aio=-1 waits=-1 "
      "wakeups=-1 resid_start=-1 resid_end=-1 other_cores=0 steal_cores=0 "
      "checked=0" % (r["iops"], cpu_s * 1e6 / ios, ios))
PY
