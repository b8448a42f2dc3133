#!/bin/bash
# SPDX-License-Identifier: MIT
# The fuzzer is itself tested: bugs fixed earlier, re-introduced one at a
# time as mutation builds (-DUU_MUTATE_<NAME> in the engine, a build
# directory build-mut-<name> each), and a campaign of the differential
# fuzzer (test_diff_fuzz2, fresh seeds from 1000 up in the four ring modes
# in turn, as tests/fuzz/run-fuzz.sh runs it) against each, stopped at the
# first run that fails a scenario which passes on BUILD (no mutation; run right
# after), or after MINUTES.  CONTROL=1 also runs BUILD itself for MINUTES
# (its failing runs are the noise floor).  A mutant with a signature (an
# extended regex) counts only a failing run whose log has it: the fuzzer's
# other divergences are timing-prone, and one clean rerun unmutated does
# not prove a failure was the mutant's.  Writes tests/results/$OUT
# (default mutants.md).
#
#   tests/fuzz/mutants.sh BUILD MINUTES [NAME...]
set -u
BUILD=${1:?build dir}
MINUTES=${2:-4}
shift 2
cd "$(dirname "$0")/../.."
RES=tests/results
mkdir -p "$RES/mutants-logs"
OUT=${OUT:-mutants.md}
# each: NAME (the define's tail), the commit whose fix it undoes, and
# optionally the signature of its divergence
all=(
	"POLL_UPDATE_LATE 201e0ae"
	"RINGFD_READ_EARLY 3638163"
	"ARM_SHOT_LATE 1148778 kernel.\\{[^}]*flags=0x[0-9a-f]*[2367abef]\\}.uuring.\\{[^}]*res=-ECANCELED"
	"CANCELLED_POLL_HIDDEN 555bacc kernel.\\{[^}]*res=-EALREADY[^}]*\\}.uuring.\\{[^}]*res=-ENOENT"
	"RINGFD_AS_SOCKET c320d2e"
)
if [ $# -gt 0 ]; then	# only the NAMEs given
	sel=()
	for entry in "${all[@]}"; do
		for n in "$@"; do
			[ "${entry%% *}" = "$n" ] && sel+=("$entry")
		done
	done
	all=("${sel[@]}")
fi
modes=(default coop defer sqpoll)
rows=()

# run DIR MODE SEED LOG: the failing scenarios of one run, one a line
run() {
	local mm=$2
	[ $mm = default ] && mm=
	UURING_TEST_RING_MODE=$mm UURING_FUZZ_SEED=$3 \
		timeout -k 5 120 "$1/tests/test_diff_fuzz2" > "$4" 2>&1
	grep '^FAIL' "$4" | sort
}

# campaign DIR LABEL: "found|not-found secs runs mode:seed/scenario noise"
# A failing run counts when a scenario fails that passes on BUILD (run
# right after); one that fails there too is noise, and the campaign goes
# on.  DIR = BUILD (the control): every failing run counts.
campaign() {
	local dir=$1 label=$2 sig=${3:-} start end seed=1000 runs=0 noise=0 m log f c
	start=$(date +%s)
	end=$((start + MINUTES * 60))
	while [ "$(date +%s)" -lt $end ]; do
		for m in "${modes[@]}"; do
			log=$RES/mutants-logs/$label-$m-$seed.log
			f=$(run "$dir" $m $seed "$log")
			runs=$((runs + 1))
			if [ -n "$f" ] && [ "$dir" != "$BUILD" ]; then
				c=$(run "$BUILD" $m $seed "$log.unmutated")
				f=$(comm -23 <(echo "$f") <(echo "$c"))
				[ -n "$sig" ] && ! grep -qE "$sig" "$log" && f=
				[ -z "$f" ] && noise=$((noise + 1))
			fi
			if [ -n "$f" ]; then
				echo "found $(($(date +%s) - start)) $runs $m:$seed/$(echo $f | sed 's/FAIL //g; s/ /,/g') $noise"
				return
			fi
			[ "$(date +%s)" -lt $end ] || break
		done
		seed=$((seed + 1))
	done
	echo "not-found $(($(date +%s) - start)) $runs - $noise"
}

for entry in "${all[@]}"; do
	read -r name commit sig <<< "$entry"
	lname=$(echo "$name" | tr 'A-Z_' 'a-z-')
	dir=build-mut-$lname
	[ -f $dir/build.ninja ] ||
		meson setup $dir -Dc_args=-DUU_MUTATE_$name > /dev/null ||
		exit 1
	ninja -C $dir tests/test_diff_fuzz2 > /dev/null || exit 1
	read -r what secs runs where noise <<< "$(campaign $dir $lname "${sig:-}")"
	row="| UU_MUTATE_$name | $commit | $what | $secs s | $runs | $where | $noise |"
	echo "$row"
	rows+=("$row")
done
if [ "${CONTROL:-0}" = 1 ]; then
	read -r what secs runs where noise <<< "$(campaign $BUILD control)"
	row="| (none: control) | - | $what | $secs s | $runs | $where | - |"
	echo "$row"
	rows+=("$row")
fi
{
	echo "# mutants: $(date -u '+%Y-%m-%d %H:%M UTC'), $MINUTES min each, commit $(git rev-parse --short HEAD), load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "| mutation | fix undone | result | time to it | runs | first mode:seed/scenario failing only mutated | runs failing on $BUILD too (noise) |"
	echo "|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
} > "$RES/$OUT"
