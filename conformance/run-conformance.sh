#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The external judge: liburing's own test suite (2.9 by default, 2.3 with
# LIBURING_VERSION=2.3), run on the kernel's io_uring and on uuring.  See
# conformance/README.md.
#
#   run-conformance.sh api BUILD       every test on both; table, skip
#                                      audit, pass list candidates, counts
#   run-conformance.sh passlist BUILD  the tests on passlist-VERSION.txt,
#                                      on uuring only; exit 1 if one fails
#   run-conformance.sh intercept BUILD  as api, but the uuring column is
#                                      the UNMODIFIED liburing build run
#                                      under `BUILD/tools/uuring run
#                                      --mode=force --block-kernel-uring`
#   run-conformance.sh intercept-passlist BUILD
#                                      as passlist, under interception
#
# BUILD is uuring's Meson build directory (src/libuuring.a is linked into
# the tests).  Environment: TIMEOUT (per test, default 60 s, 180 s in a
# sanitizer build), TESTS (api mode: run only these), UURING_NOURING=0
# (do not block the kernel's io_uring while the uuring build runs),
# LIBURING_VERSION (2.9 or 2.3), WORK, PREFIX, JOBS, LIBURING_SRC (see
# build-liburing.sh).
#
# Per version: the pass list passlist-VERSION.txt, its retry list
# passlist-timing-VERSION.txt and its not-run list passlist-skip-VERSION.txt;
# logs in WORK/logs/VERSION/, the report in WORK/report-MODE-VERSION.txt.
set -euo pipefail

MODE=${1:-}
BUILD=${2:-build}
case $MODE in
api|passlist) INTERCEPT=0;;
intercept|intercept-passlist) INTERCEPT=1;;
*) echo "usage: $0 api|passlist|intercept|intercept-passlist [BUILD]" >&2; exit 2;;
esac

# shellcheck source=conformance/build-liburing.sh
. "$(dirname "$0")/build-liburing.sh"
cd "$ROOT"
# a sanitizer build gets 3x the default (asan_env): poll-many took 97 s
# under ASan at load 25, where the kernel took 28 s and 3 s idle
TIMEOUT_DEFAULTED=${TIMEOUT:+0}
TIMEOUT=${TIMEOUT:-60}
# A LIBURING_SRC checkout of version X (X-srcHASH) is judged by X's lists.
LIST_VERSION=${LIBURING_VERSION%%-src*}
PASSLIST=$CONF_DIR/passlist-$LIST_VERSION.txt
TIMINGLIST=$CONF_DIR/passlist-timing-$LIST_VERSION.txt
SKIPLIST=$CONF_DIR/passlist-skip-$LIST_VERSION.txt
LOGS=$WORK/logs/$LIBURING_VERSION
NOURING=${UURING_NOURING:-1}
# Lines of a test's output that tell of a part it skipped or a fallback.
SKIP_RE='skip|not supported|unsupported|not available|unavailable|doesn.t support|does not support|no support|einval|eopnotsupp|invalid argument|operation not supported|not implemented|enosys|too old'

# Test names on the pass list (comments and blank lines dropped).
passlist_names() {
	[ -f "$PASSLIST" ] || return 0
	sed -e 's/#.*//' -e 's/[[:space:]]//g' -e 's/\.t$//' "$PASSLIST" | grep -v '^$' || true
}

# run_test DIR NAME LOG [WRAPPER...]: runs DIR/NAME.t in DIR in a process
# group of its own, with a timeout; kills the whole group afterwards (tests
# that fork can leave children behind).  Sets RESULT and SECS.
run_test() {
	local dir=$1 name=$2 logf=$3 pidf rc=0 start ms pg
	shift 3

	pidf=$(mktemp "$WORK/.pgid.XXXXXX")
	start=$(date +%s%N)
	(cd "$dir" && exec setsid bash -c 'echo $$ > "$0"; exec "$@"' "$pidf" \
		"$@" timeout -k 5 "$TIMEOUT" "./$name.t") </dev/null >"$logf" 2>&1 &
	# (braces: no "Aborted" notice from bash when a test dies of a signal)
	{ wait $! || rc=$?; } 2>/dev/null
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	pg=$(cat "$pidf" 2>/dev/null || true)
	[ -z "$pg" ] || kill -KILL -- "-$pg" 2>/dev/null || true
	rm -f "$pidf"
	SECS=$((ms / 1000)).$(( (ms % 1000) / 100 ))
	case $rc in
	0) RESULT=pass;;
	77) RESULT=skip;;
	124|137) if [ "$ms" -ge $((TIMEOUT * 1000)) ]; then RESULT=timeout; else RESULT=fail; fi;;
	*) RESULT=fail;;
	esac
	# A crash says more than "fail": fail(SEGV), fail(ABRT)...
	if [ "$RESULT" = fail ] && [ "$rc" -gt 128 ] && [ "$rc" -lt 192 ]; then
		RESULT="fail($(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128))))"
	fi
	RC=$rc
}

# The skip/fallback lines of a log, trailing blanks dropped, each once.
skip_lines() {
	{ grep -aiE "$SKIP_RE" "$1" 2>/dev/null || true; } | sed -E 's/[[:space:]]+$//' |
		awk '!seen[$0]++' | head -n 40
}

# The same, with numbers masked, sorted: what two runs are compared by.
skip_key() {
	skip_lines "$1" | sed -E 's/[0-9]+/N/g' | sort -u
}

uuring_wrapper() {
	if [ $INTERCEPT = 1 ]; then
		# uuring run installs the EPERM filter itself
		echo "$(cd "$BUILD" && pwd)/tools/uuring run --mode=force --block-kernel-uring --"
	elif [ "$NOURING" != 0 ]; then
		echo "$BIN_DIR/nouring"
	fi
}

# Builds the tests named (or all) for the uuring column and sets UT_DIR,
# the directory they run in, and ULOG, the name of their log directory:
# the routed build (api), or the unmodified one (intercept).
build_column() {
	if [ $INTERCEPT = 1 ]; then
		[ -x "$BUILD/tools/uuring" ] ||
			die "$BUILD/tools/uuring not found: build uuring first (make build)"
		build_flavor "$BUILD"
		[ -z "$FLAVOR_SAN" ] ||
			die "intercept modes want a build without sanitizers (the preload library cannot be injected into uninstrumented tests)"
		build_kernel "$@"
		UT_DIR=$KERNEL_DIR/test
		ULOG=intercept
	else
		build_uuring "$BUILD" "$@"
		UT_DIR=$UURING_DIR/test
		ULOG=uuring
	fi
}

# The reason a pass-list test is not run in this build (empty: it is
# run), from conformance/passlist-skip-VERSION.txt: entries for this
# sanitizer, entries for this column ("api": the routed build, where a
# test's own libc calls on the ring fd are not routed; "intercept"), and
# entries marked "all" (a test whose result does not depend on uuring).
passlist_skip() {
	local col=api

	[ $INTERCEPT = 0 ] || col=intercept
	awk -v san="${FLAVOR_SAN:-none},$col" -v t="$1" '
		/^#/ || NF < 3 { next }
		$1 == t && ($2 == "all" || index(san, $2)) { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit }
	' "$SKIPLIST" 2>/dev/null
}

asan_env() {
	[ "$TIMEOUT_DEFAULTED" = 0 ] || TIMEOUT=180
	# The liburing tests are not ours: their own leaks are not uuring's.
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	# Nor, under TSan, their threads left unjoined (wakeup-hang) or a
	# mutex unlocked by another thread as a semaphore (socket,
	# send_recvmsg): reports whose stack is in a liburing test source.
	if [[ $FLAVOR_SAN == *thread* ]]; then
		printf '%s\n' 'thread:*/liburing-*/test/*' 'mutex:*/liburing-*/test/*' \
			> "$WORK/tsan-suppress-tests.txt"
		export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=$WORK/tsan-suppress-tests.txt"
	fi
}

# timing_test NAME: NAME is on passlist-timing-VERSION.txt (retried once)
timing_test() {
	[ -f "$TIMINGLIST" ] &&
		sed -e 's/#.*//' -e 's/[[:space:]]//g' "$TIMINGLIST" |
		grep -qxF -- "$1"
}

mode_passlist() {
	local names=() name pass=0 fail=0 failed=() wrap retried=0

	mapfile -t names < <(passlist_names)
	if [ ${#names[@]} -eq 0 ]; then
		echo "conformance: $PASSLIST is missing or empty: no liburing test to run"
		exit 0
	fi
	build_tools
	fetch_source
	local known=()
	for name in "${names[@]}"; do
		[ ! -f "$SRC_DIR/test/$name.c" ] && [ ! -f "$SRC_DIR/test/$name.cc" ] ||
			known+=("$name")
	done
	# helpers some tests run, built but not run themselves: timeout's
	# test_timeout_link_cancel execs exec-target (and skips that part,
	# which fails the pass, without it)
	local helpers=()
	[[ " ${known[*]} " != *" timeout "* ]] || helpers+=(exec-target)
	build_column "${known[@]}" "${helpers[@]}" none
	[ -z "$FLAVOR_SAN" ] || asan_env
	mkdir -p "$LOGS/passlist-$ULOG"
	wrap=$(uuring_wrapper)
	echo "conformance: ${#names[@]} liburing $LIBURING_VERSION tests of ${PASSLIST##*/} on uuring" \
		"(${wrap:+kernel io_uring blocked, }$([ $INTERCEPT = 0 ] || echo "unmodified liburing under uuring run, ")timeout ${TIMEOUT}s)"
	local skipped=0 reason
	for name in "${names[@]}"; do
		local logf=$LOGS/passlist-$ULOG/$name.log extra
		reason=$(passlist_skip "$name")
		if [ -n "$reason" ]; then
			echo "SKIP $name${FLAVOR_SAN:+ under $FLAVOR_SAN}: $reason"
			skipped=$((skipped + 1))
			continue
		fi
		if [ ! -x "$UT_DIR/$name.t" ]; then
			echo "FAIL $name: no such test in liburing $LIBURING_VERSION"
			fail=$((fail + 1)); failed+=("$name")
			continue
		fi
		# shellcheck disable=SC2086
		run_test "$UT_DIR" "$name" "$logf" $wrap
		extra=$(skip_lines "$logf")
		if [ "$RESULT" != pass ] && timing_test "$name"; then
			# passlist-timing-VERSION.txt: a second run, said aloud
			local first="$RESULT (exit $RC, ${SECS}s)"
			mv "$logf" "$logf.first"
			# shellcheck disable=SC2086
			run_test "$UT_DIR" "$name" "$logf" $wrap
			extra=$(skip_lines "$logf")
			if [ "$RESULT" = pass ] && [ -z "$extra" ]; then
				echo "PASS $name on retry (${SECS}s; first run: $first, see ${TIMINGLIST##*/})"
				tail -n 3 "$logf.first" | sed 's/^/    first run: /'
				pass=$((pass + 1)); retried=$((retried + 1))
				continue
			fi
		fi
		if [ "$RESULT" = pass ] && [ -z "$extra" ]; then
			echo "PASS $name (${SECS}s)"
			pass=$((pass + 1))
			continue
		fi
		if [ "$RESULT" = pass ]; then
			echo "FAIL $name: passed, but skipped parts (${SECS}s)"
		else
			echo "FAIL $name: $RESULT (exit $RC, ${SECS}s)"
		fi
		tail -n 8 "$logf" | sed 's/^/    /'
		fail=$((fail + 1)); failed+=("$name")
	done
	[ $fail -eq 0 ] || echo "failed: ${failed[*]}"
	[ $retried -eq 0 ] || echo "$retried of the passes needed a second run (${TIMINGLIST##*/})"
	echo "liburing $LIBURING_VERSION: $pass passed, $fail failed, $skipped skipped${FLAVOR_SAN:+ under $FLAVOR_SAN}"
	[ $fail -eq 0 ]
}

mode_api() {
	local names=() name kernel=1 kres ures wrap n=0 total
	local -A K U KSEC USEC EXTRA
	local npass=0 nfail=0 nskip=0 cands=() kept=() report

	build_tools
	if ! "$BIN_DIR/kernel-probe" >/dev/null; then
		kernel=0
		echo "conformance: the kernel's io_uring is not usable here" \
			"($("$BIN_DIR/kernel-probe" || true)): kernel column n/a"
	fi
	build_kernel all
	build_column all
	[ $INTERCEPT = 1 ] || install_uuring "$BUILD" >/dev/null 2>&1 || [ -n "$FLAVOR_SAN" ] ||
		echo "conformance: warning: installing liburing-uuring into $PREFIX failed"
	[ -z "$FLAVOR_SAN" ] || asan_env
	wrap=$(uuring_wrapper)

	if [ -n "${TESTS:-}" ]; then
		read -r -a names <<< "$TESTS"
		names=("${names[@]%.t}")
	else
		mapfile -t names < <(cd "$UT_DIR" && ls -- *.t | sed 's/\.t$//')
	fi
	total=${#names[@]}
	rm -rf "$LOGS/kernel" "$LOGS/$ULOG"
	mkdir -p "$LOGS/kernel" "$LOGS/$ULOG"
	report=$WORK/report-$MODE-$LIBURING_VERSION.txt

	echo "liburing $LIBURING_VERSION test suite: kernel $(uname -r) vs uuring ($BUILD$([ $INTERCEPT = 0 ] ||
		echo ": the unmodified liburing build under uuring run --mode=force"))," \
		"timeout ${TIMEOUT}s${wrap:+, kernel io_uring blocked for uuring}"
	echo
	printf '%-24s %-8s %-20s %s\n' test kernel uuring "time (kernel/uuring)"
	printf '%-24s %-8s %-20s %s\n' ---- ------ ------ --------------------
	for name in "${names[@]}"; do
		n=$((n + 1))
		if [ $kernel -eq 1 ]; then
			run_test "$KERNEL_DIR/test" "$name" "$LOGS/kernel/$name.log"
			K[$name]=$RESULT KSEC[$name]=$SECS
		else
			K[$name]=n/a KSEC[$name]=-
		fi
		# shellcheck disable=SC2086
		run_test "$UT_DIR" "$name" "$LOGS/$ULOG/$name.log" $wrap
		U[$name]=$RESULT USEC[$name]=$SECS
		EXTRA[$name]=
		if [ "$RESULT" = pass ]; then
			if [ $kernel -eq 1 ]; then
				EXTRA[$name]=$(comm -13 <(skip_key "$LOGS/kernel/$name.log") \
					<(skip_key "$LOGS/$ULOG/$name.log"))
			else
				EXTRA[$name]=$(skip_key "$LOGS/$ULOG/$name.log")
			fi
			[ -z "${EXTRA[$name]}" ] || U[$name]="pass(skipped-parts)"
		fi
		printf '%-24s %-8s %-20s %s\n' "$name" "${K[$name]}" "${U[$name]}" \
			"${KSEC[$name]}/${USEC[$name]}s"
	done

	echo
	echo "== Skip audit: lines about skipped parts or fallbacks (+: uuring only) =="
	for name in "${names[@]}"; do
		local kl ul kkey line
		kl=$([ $kernel -eq 0 ] || skip_lines "$LOGS/kernel/$name.log")
		ul=$(skip_lines "$LOGS/$ULOG/$name.log")
		[ -n "$kl$ul" ] || continue
		echo "--- $name [kernel ${K[$name]}, uuring ${U[$name]}]"
		[ -z "$kl" ] || sed 's/^/      kernel: /' <<< "$kl"
		kkey=$([ $kernel -eq 0 ] || skip_key "$LOGS/kernel/$name.log")
		while IFS= read -r line; do
			[ -n "$line" ] || continue
			if grep -qxF -- "$(sed -E 's/[0-9]+/N/g' <<< "$line")" <<< "$kkey"; then
				echo "      uuring: $line"
			else
				echo "    + uuring: $line"
			fi
		done <<< "$ul"
	done

	for name in "${names[@]}"; do
		case ${U[$name]} in
		pass) npass=$((npass + 1));;
		skip|"pass(skipped-parts)") nskip=$((nskip + 1));;
		*) nfail=$((nfail + 1));;
		esac
		# Candidates: pass on both, identical skip lines.
		[ "${U[$name]}" = pass ] || continue
		if [ $kernel -eq 1 ]; then
			[ "${K[$name]}" = pass ] || continue
			[ "$(skip_key "$LOGS/kernel/$name.log")" = \
			  "$(skip_key "$LOGS/$ULOG/$name.log")" ] || continue
		fi
		cands+=("$name")
	done

	# A test that passes with no io_uring at all proves nothing: run the
	# candidates once more, unmodified liburing with io_uring blocked.
	local informative=() blind=()
	mkdir -p "$LOGS/blocked"
	for name in "${cands[@]}"; do
		run_test "$KERNEL_DIR/test" "$name" "$LOGS/blocked/$name.log" "$BIN_DIR/nouring"
		if [ "$RESULT" = pass ]; then
			blind+=("$name")
		else
			informative+=("$name")
		fi
	done
	cands=("${informative[@]}")

	echo
	echo "== Pass list candidates (${#cands[@]}): pass on kernel and uuring, same skip lines =="
	[ $kernel -eq 1 ] || echo "(kernel n/a: uuring passes without any skip line)"
	printf '%s\n' "${cands[@]}" | fmt -w 100
	local noisy=()
	for name in "${cands[@]}"; do
		[ -z "$(skip_lines "$LOGS/$ULOG/$name.log")" ] || noisy+=("$name")
	done
	echo "of which with the same skip lines on both (passlist mode allows none): ${noisy[*]:-none}"
	echo "not candidates, as they also pass with io_uring blocked (${#blind[@]}): ${blind[*]:-none}"
	mapfile -t kept < <(passlist_names)
	echo
	echo "== Compared with the kept list conformance/${PASSLIST##*/} (${#kept[@]} tests; not edited) =="
	local add drop
	add=$(comm -23 <(printf '%s\n' "${cands[@]}" | grep -v '^$' | sort) \
		<(printf '%s\n' "${kept[@]}" | grep -v '^$' | sort) | fmt -w 100)
	drop=$(comm -13 <(printf '%s\n' "${cands[@]}" | grep -v '^$' | sort) \
		<(printf '%s\n' "${kept[@]}" | grep -v '^$' | sort))
	echo "candidates not on the list: ${add:-none}"
	if [ -n "$drop" ]; then
		echo "ON THE LIST BUT NOT CANDIDATES NOW (regressions, or not run):"
		while IFS= read -r name; do
			echo "    $name: kernel ${K[$name]:-not run}, uuring ${U[$name]:-not run}"
		done <<< "$drop"
	else
		echo "on the list but not candidates now: none"
	fi
	echo
	echo "logs: $LOGS/{kernel,$ULOG,blocked}/TEST.log; this report: $report"
	echo "uuring: $npass passed, $nfail failed, $nskip skipped"
	# Fail only when a test of the kept list regressed.
	if [ -n "$drop" ] && [ -z "${TESTS:-}" ]; then
		return 1
	fi
	return 0
}

case $MODE in
api|intercept) mkdir -p "$WORK"; mode_api 2>&1 | tee "$WORK/report-$MODE-$LIBURING_VERSION.txt";;
passlist|intercept-passlist) mode_passlist;;
esac
