#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The soak (`make soak`, issue 20 item 4).

One process tree under `uuring run --mode=force --block-kernel-uring` runs
for SOAK_MINUTES: fio verify jobs one run after another (buffered and
O_DIRECT randwrite with verify, iodepth 1 to 64, SQPOLL rings, registered
files), tests/soak/soak_load.c's TCP echo load, timer and cancel rounds and
fork/exec churn.  Every 10 s the tree is sampled from /proc (per process:
RSS, open fds, threads; see sample_burst).  At the end:

* the least-squares slope of RSS, fds and threads over the last 2/3 of the
  run, summed over the processes that lived through that whole window (the
  shell, the three soak_load programs; fio runs and forked children come
  and go and cannot accumulate anything), must be within +-1 % of the mean
  RSS and +-1 fd and +-1 thread per 10 minutes (judged when the window is
  10 minutes or longer, i.e. SOAK_MINUTES >= 15; shorter runs report the
  slopes and their standard errors only); the whole tree's sums are
  plotted and reported too;
* every fio run must exit 0 with error 0 in every job and have read back
  (verified) exactly the bytes it wrote; every soak_load must report
  errors=0 and the tree must exit 0.

Writes OUT/soak.md, OUT/soak.png (matplotlib) and OUT/soak-samples.csv;
the per-process samples go to OUT/raw/ (ignored by git).  Exit 0 on pass.

usage: soak.py BUILD [--minutes N] [--out DIR]
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SAMPLE_S = 10
BURST = 10
JUDGE_MIN_S = 600
HZ = os.sysconf("SC_CLK_TCK")

FIO_JOBS = """[global]
ioengine=io_uring
rw=randwrite
bs=4k
size=4m
do_verify=1
verify_fatal=1
verify_state_save=0
directory={dir}

[buffered-qd1-crc32c]
size=1m
iodepth=1
verify=crc32c

[buffered-qd32-md5]
iodepth=32
verify=md5

[direct-qd16-crc32c]
direct=1
iodepth=16
verify=crc32c

[direct-qd64-sha256]
direct=1
iodepth=64
verify=sha256

[sqpoll-buffered-qd32-crc32c]
sqthread_poll=1
iodepth=32
verify=crc32c

[sqpoll-direct-qd8-registerfiles-md5]
sqthread_poll=1
registerfiles=1
direct=1
iodepth=8
verify=md5
"""

# Runs inside `uuring run`: every program it starts inherits the preload
# and the EPERM filter on the kernel's io_uring.
TREE_SH = """#!/bin/bash
cd "{dir}"
end=$((SECONDS + {secs}))
"{load}" echo {secs} > echo.out 2>&1 & echo_pid=$!
"{load}" timers {secs} > timers.out 2>&1 & timers_pid=$!
"{load}" forkexec {secs} > forkexec.out 2>&1 & fork_pid=$!
runs=0
while [ $SECONDS -lt $end ]; do
	runs=$((runs + 1))
	# its own session: fio's kill(0, SIGTERM) after a job that failed to
	# start (a zero pid) must end that fio, not the whole tree
	setsid -w /usr/bin/fio --output-format=json --output=fio-$runs.json \\
		jobs.fio > fio-$runs.err 2>&1
	echo $? > fio-$runs.rc
done
wait $echo_pid; echo_rc=$?
wait $timers_pid; timers_rc=$?
wait $fork_pid; fork_rc=$?
echo "fio_runs=$runs echo_rc=$echo_rc timers_rc=$timers_rc forkexec_rc=$fork_rc" > tree.out
[ $echo_rc -eq 0 ] && [ $timers_rc -eq 0 ] && [ $fork_rc -eq 0 ]
"""


def proc_tree(root):
    """pid -> (comm, starttime) for root and its descendants."""
    children, info = {}, {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        rest = stat[stat.rindex(")") + 2:].split()
        pid, ppid = int(name), int(rest[1])
        info[pid] = (comm, int(rest[19]))
        children.setdefault(ppid, []).append(pid)
    out, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in info:
            out[pid] = info[pid]
            todo.extend(children.get(pid, []))
    return out


def sample_proc(pid):
    """(rss_kb, fds, threads) of one process, or None if it is gone."""
    try:
        rss = thr = 0
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("Threads:"):
                    thr = int(line.split()[1])
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        return rss, fds, thr
    except OSError:
        return None


def sample_burst(root):
    """One sample: BURST readings of the tree 0.1 s apart.

    A process counts if it is in every reading (a forked child living
    for milliseconds is not part of the steady state), with its last RSS
    and its lowest fd and thread counts: a connection being opened or an
    io-wq worker about to exit is there in one reading and gone in the
    next, while a leaked fd or thread raises the floor.
    """
    merged = None
    for i in range(BURST):
        if i:
            time.sleep(0.1)
        now = {}
        for pid, (comm, start) in proc_tree(root).items():
            s = sample_proc(pid)
            if s:
                now[f"{pid}@{start}"] = (comm,) + s
        if merged is None:
            merged = now
            continue
        merged = {k: (v[0], now[k][1], min(v[2], now[k][2]),
                      min(v[3], now[k][3]))
                  for k, v in merged.items() if k in now}
    return merged


def slope(xs, ys):
    """Least-squares slope of ys over xs."""
    return fit(xs, ys)[0]


def fit(xs, ys):
    """Least-squares slope of ys over xs and its standard error."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if not sxx or n < 3:
        return 0.0, 0.0
    k = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    resid = sum((y - my - k * (x - mx)) ** 2 for x, y in zip(xs, ys))
    return k, (resid / (n - 2) / sxx) ** 0.5


def run_tree(args, work, secs):
    """Runs the tree, sampling it; returns (exit status, samples)."""
    tool = os.path.abspath(os.path.join(args.build, "tools", "uuring"))
    cmd = [tool, "run", "--mode=force", "--block-kernel-uring", "--",
           "/bin/bash", os.path.join(work, "tree.sh")]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=work, start_new_session=True)
    samples = []
    limit = secs + 600
    while True:
        t = time.monotonic() - t0
        samples.append((t, sample_burst(proc.pid)))
        try:
            proc.wait(timeout=SAMPLE_S - (time.monotonic() - t0 - t))
            break
        except subprocess.TimeoutExpired:
            pass
        if t > limit:
            print(f"soak: the tree still runs after {limit} s: killed",
                  file=sys.stderr)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return -1, samples
    return proc.returncode, samples


def check_fio(work):
    """Totals over every fio run, and the list of problems found."""
    tot = {"runs": 0, "jobs": 0, "written": 0, "verified": 0}
    problems = []
    run = 1
    while os.path.exists(os.path.join(work, f"fio-{run}.err")):
        rc = read_text(os.path.join(work, f"fio-{run}.rc"))
        if rc != "0":
            err = read_text(os.path.join(work, f"fio-{run}.err"))
            problems.append(f"fio run {run}: exit status {rc}; its stderr: "
                            + " / ".join(err.splitlines()[-4:]))
        try:
            with open(os.path.join(work, f"fio-{run}.json")) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            problems.append(f"fio run {run}: no JSON output ({e})")
            run += 1
            continue
        tot["runs"] += 1
        for job in data["jobs"]:
            tot["jobs"] += 1
            w = job["write"]["io_kbytes"] * 1024
            r = job["read"]["io_kbytes"] * 1024
            tot["written"] += w
            tot["verified"] += r
            if job["error"]:
                problems.append(f"fio run {run} {job['jobname']}: error {job['error']}")
            if w == 0 or r != w:
                problems.append(f"fio run {run} {job['jobname']}: wrote {w} B, verified {r} B")
        run += 1
    if tot["runs"] == 0:
        problems.append("no fio run completed")
    return tot, problems


def series(samples, keys=None):
    """Per sample: (t, rss_kb, fds, threads, processes) over keys or all."""
    out = []
    for t, procs in samples:
        sel = [v for k, v in procs.items() if keys is None or k in keys]
        out.append((t, sum(v[1] for v in sel), sum(v[2] for v in sel),
                    sum(v[3] for v in sel), len(sel)))
    return out


def analyse(samples, secs):
    """The window's samples, the persistent set, slopes and verdicts."""
    start = secs / 3.0
    # the loads stop at secs: the last samples before it can already see
    # them gone (measured: none left in the sample 6 s before the end)
    win = [s for s in samples if start <= s[0] <= secs - 2 * SAMPLE_S]
    if len(win) < 3:
        return None
    persistent = set(win[0][1]) & set(win[-1][1])
    persistent = {k for k in persistent if all(k in p for _, p in win)}
    ser = series(win, persistent)
    xs = [s[0] / 600.0 for s in ser]  # in units of 10 minutes
    res = {"window_start_s": start, "window_end_s": win[-1][0],
           "window_samples": len(win),
           "persistent": sorted({win[-1][1][k][0] for k in persistent}),
           "persistent_n": len(persistent), "persistent_keys": persistent}
    rss = [s[1] for s in ser]
    mean_rss = sum(rss) / len(rss)
    res["rss_mean_kb"] = mean_rss
    k, se = fit(xs, rss)
    res["rss_slope_pct"] = 100.0 * k / mean_rss if mean_rss else 0
    res["rss_se_pct"] = 100.0 * se / mean_rss if mean_rss else 0
    res["fds_slope"], res["fds_se"] = fit(xs, [s[2] for s in ser])
    res["thr_slope"], res["thr_se"] = fit(xs, [s[3] for s in ser])
    # Judged on a window of JUDGE_MIN_S or more: over a shorter one the
    # extrapolation to 10 minutes is dominated by the noise of the
    # samples (a connection's fds open at one sample and not the next).
    res["judged"] = res["window_end_s"] - start >= JUDGE_MIN_S
    for key, val in (("rss_ok", res["rss_slope_pct"]),
                     ("fds_ok", res["fds_slope"]),
                     ("thr_ok", res["thr_slope"])):
        res[key] = abs(val) <= 1.0 or not res["judged"]
    res["series"] = ser
    allser = series(win)
    allx = [s[0] / 600.0 for s in allser]
    mean_all = sum(s[1] for s in allser) / len(allser)
    res["all_rss_slope_pct"] = 100.0 * slope(allx, [s[1] for s in allser]) / mean_all
    res["all_fds_slope"] = slope(allx, [s[2] for s in allser])
    res["all_thr_slope"] = slope(allx, [s[3] for s in allser])
    return res


def read_text(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return "(missing)"


def plot(samples, res, secs, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    allser = series(samples)
    fig, axes = plt.subplots(3, 1, figsize=(9, 9), sharex=True)
    labels = [("RSS (MiB)", 1, 1024.0), ("open fds", 2, 1), ("threads", 3, 1)]
    for ax, (label, i, div) in zip(axes, labels):
        ax.plot([s[0] / 60 for s in allser], [s[i] / div for s in allser],
                ".", color="0.6", label="whole tree")
        if res:
            ser = res["series"]
            xs = [s[0] / 60 for s in ser]
            ys = [s[i] / div for s in ser]
            ax.plot(xs, ys, "-", color="C0",
                    label="processes alive through the window")
            k = slope(xs, ys)
            my, mx = sum(ys) / len(ys), sum(xs) / len(xs)
            ax.plot([xs[0], xs[-1]], [my + k * (xs[0] - mx),
                    my + k * (xs[-1] - mx)], "--", color="C3",
                    label="least-squares fit")
            ax.axvspan(res["window_start_s"] / 60, res["window_end_s"] / 60,
                       color="C2",
                       alpha=0.08)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8, loc="lower right")
    axes[-1].set_xlabel("minutes (shaded: the measured window)")
    fig.suptitle("uuring soak: samples every 10 s")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def verdict(res, val):
    if not res["judged"]:
        return "not judged (window under 10 min)"
    return "pass" if abs(val) <= 1.0 else "**FAIL**"


def write_report(path, ctx):
    res, fio = ctx["res"], ctx["fio"]
    L = ["<!-- SPDX-License-Identifier: MIT -->", "# Soak report", "",
         f"Written by `tests/soak/soak.py` (`make soak`) at {ctx['date']}; "
         f"commit `{ctx['commit']}`{ctx['dirty']}, kernel {ctx['kernel']}, "
         f"{os.cpu_count()} CPUs.", "",
         f"**Result: {'PASS' if ctx['ok'] else 'FAIL'}.** "
         f"SOAK_MINUTES={ctx['minutes']:g}; the tree ran "
         f"{ctx['elapsed']:.0f} s under `uuring run --mode=force "
         "--block-kernel-uring` and exited with status "
         f"{ctx['rc']}.", "", "## Loads", "",
         "| load | figures |", "|---|---|",
         f"| fio (6 jobs a run: buffered qd1/qd32, O_DIRECT qd16/qd64, "
         "SQPOLL buffered qd32, SQPOLL O_DIRECT qd8 registerfiles; "
         f"randwrite + verify crc32c/md5/sha256) | {fio['runs']} runs, "
         f"{fio['jobs']} jobs, {fio['written'] / 2**20:.0f} MiB written, "
         f"{fio['verified'] / 2**20:.0f} MiB read back and verified |"]
    for name in ("echo", "timers", "forkexec"):
        L.append(f"| soak_load {name} | `{ctx['loads'][name]}` |")
    L += [f"| tree | `{ctx['tree']}` |", "", "## Resources", ""]
    if res:
        L += [f"Sampled every {SAMPLE_S} s ({ctx['nsamples']} samples). "
              f"Window: {res['window_start_s'] / 60:.1f} to "
              f"{res['window_end_s'] / 60:.1f} min "
              f"({res['window_samples']} samples). Processes alive through "
              f"the whole window: {res['persistent_n']} "
              f"({', '.join(res['persistent'])}); mean RSS "
              f"{res['rss_mean_kb'] / 1024:.1f} MiB.", "",
              "| slope per 10 min (least squares) | persistent processes "
              "| its standard error | limit | verdict | whole tree (for "
              "information) |",
              "|---|---|---|---|---|---|",
              f"| RSS | {res['rss_slope_pct']:+.3f} % | {res['rss_se_pct']:.3f} % "
              f"| +-1 % | {verdict(res, res['rss_slope_pct'])} | "
              f"{res['all_rss_slope_pct']:+.3f} % |",
              f"| open fds | {res['fds_slope']:+.3f} | {res['fds_se']:.3f} | "
              f"+-1 | {verdict(res, res['fds_slope'])} | "
              f"{res['all_fds_slope']:+.3f} |",
              f"| threads | {res['thr_slope']:+.3f} | {res['thr_se']:.3f} | "
              f"+-1 | {verdict(res, res['thr_slope'])} | "
              f"{res['all_thr_slope']:+.3f} |", ""]
        first, last = res["series"][0], res["series"][-1]
        L += ["| persistent processes | window start | end |", "|---|---|---|",
              f"| RSS (KiB) | {first[1]} | {last[1]} |",
              f"| open fds | {first[2]} | {last[2]} |",
              f"| threads | {first[3]} | {last[3]} |", ""]
    else:
        L += ["Too few samples in the window to fit a slope.", ""]
    L += ["![samples](soak.png)", "", "Samples: `soak-samples.csv` (whole "
          "tree and persistent processes per sample).", "", "## Problems", ""]
    L += [f"* {p}" for p in ctx["problems"]] or ["None."]
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


def write_csv(path, samples, res):
    keys = res["persistent_keys"] if res else set()
    with open(path, "w") as f:
        f.write("seconds,tree_rss_kb,tree_fds,tree_threads,tree_procs,"
                "persistent_rss_kb,persistent_fds,persistent_threads\n")
        for (t, procs), a in zip(samples, series(samples)):
            sel = [v for k, v in procs.items() if k in keys]
            f.write(f"{t:.1f},{a[1]},{a[2]},{a[3]},{a[4]},"
                    f"{sum(v[1] for v in sel)},{sum(v[2] for v in sel)},"
                    f"{sum(v[3] for v in sel)}\n")


def git(*args):
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--out", default="tests/results")
    args = ap.parse_args()
    secs = int(args.minutes * 60)
    load = os.path.abspath(os.path.join(args.build, "tests", "soak_load"))
    for need in (os.path.join(args.build, "tools", "uuring"), load,
                 "/usr/bin/fio"):
        if not os.access(need, os.X_OK):
            print(f"soak: {need} missing (build first, fio from Debian)",
                  file=sys.stderr)
            return 2
    os.makedirs(os.path.join(args.out, "raw"), exist_ok=True)
    work = tempfile.mkdtemp(prefix="uuring-soak-", dir="/var/tmp")
    with open(os.path.join(work, "jobs.fio"), "w") as f:
        f.write(FIO_JOBS.format(dir=work))
    with open(os.path.join(work, "tree.sh"), "w") as f:
        f.write(TREE_SH.format(dir=work, secs=secs, load=load))
    print(f"soak: {args.minutes:g} min in {work}, sampling every {SAMPLE_S} s",
          file=sys.stderr)
    t0 = time.monotonic()
    rc, samples = run_tree(args, work, secs)
    elapsed = time.monotonic() - t0
    fio, problems = check_fio(work)
    loads = {}
    for name in ("echo", "timers", "forkexec"):
        loads[name] = read_text(os.path.join(work, f"{name}.out"))
        if not loads[name].endswith(" errors=0"):
            problems.append(f"soak_load {name}: {loads[name]}")
    if rc != 0:
        problems.append(f"the tree exited with status {rc}")
    res = analyse(samples, secs)
    if res is None:
        problems.append("too few samples in the window")
    else:
        for k, what in (("rss_ok", "RSS"), ("fds_ok", "fd"), ("thr_ok", "thread")):
            if not res[k]:
                problems.append(f"{what} slope out of bounds")
    ok = not problems
    with open(os.path.join(args.out, "raw", "samples.jsonl"), "w") as f:
        for t, procs in samples:
            f.write(json.dumps({"t": round(t, 1), "procs": procs}) + "\n")
    write_csv(os.path.join(args.out, "soak-samples.csv"), samples, res)
    plot(samples, res, secs, os.path.join(args.out, "soak.png"))
    dirty = git("status", "--porcelain", "--untracked-files=no")
    ctx = {"res": res, "fio": fio, "loads": loads, "problems": problems,
           "ok": ok, "rc": rc, "elapsed": elapsed, "minutes": args.minutes,
           "nsamples": len(samples), "tree": read_text(os.path.join(work, "tree.out")),
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "commit": git("rev-parse", "--short", "HEAD") or "?",
           "dirty": " (with uncommitted changes in the tree)" if dirty else "",
           "kernel": os.uname().release}
    write_report(os.path.join(args.out, "soak.md"), ctx)
    print(f"soak: {'PASS' if ok else 'FAIL'}; report in "
          f"{os.path.join(args.out, 'soak.md')}", file=sys.stderr)
    for p in problems:
        print(f"soak: {p}", file=sys.stderr)
    if ok:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"soak: work directory kept: {work}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
