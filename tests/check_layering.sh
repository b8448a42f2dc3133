#!/bin/bash
# SPDX-License-Identifier: MIT
# The folder dependency graph of src/, from #include lines, and its rules:
#   - no cycle between folders, except core<->ops and core<->exec (the
#     opcode table and the engine's threads call back into the core);
#   - src/ring/ depends on src/util/ and src/abi/ only.
# A folder depends on another when one of its files includes a header of
# that folder ("dir/name.h"); src/api.c counts as folder "api".
#
#   tests/check_layering.sh [--graph] [SRCDIR]
#
# --graph prints the edges (with the number of including files) first.
# KNOWN lists edges that break a rule today and are still to be removed,
# each with what keeps it: the check fails on any other, and on a KNOWN
# edge that no longer exists (so the list only shrinks).
set -u
GRAPH=0
if [ "${1:-}" = "--graph" ]; then
	GRAPH=1
	shift
fi
SRC=${1:-$(dirname "$0")/../src}

# Edges that break a rule today, each with what keeps it:
# core*<->dev: the block-queue model (dev/) completes requests through
#   core/req.c, and core/req.c and ops/ park requests on it (dev/blkq.h).
KNOWN="core*->dev dev->core*"

cd "$SRC" || exit 2
edges=$(grep -o '^#include "[a-z_]*/' $(find . -name '*.[ch]' | sort) |
	awk -F: '{
		f = substr($1, 3); n = split(f, p, "/")
		d = n > 1 ? p[1] : f; sub(/\.c$/, "", d)
		t = $2; sub(/^#include "/, "", t); sub(/\/$/, "", t)
		if (d != t && !seen[f, t]++) cnt[d "->" t]++
	} END { for (e in cnt) print e, cnt[e] }' | sort)
[ -n "$edges" ] || { echo "check_layering: no edges found under $SRC"; exit 2; }
if [ $GRAPH = 1 ]; then
	echo "folder graph (from #include; count = including files):"
	echo "$edges" | sed 's/^/  /'
fi

# The rules, in one awk: ops/ and exec/ are merged with core/ into
# "core*" for the cycle check (their cycles with core/ are allowed), then
# every edge of the merged graph whose target reaches its source is a
# cycle.  Prints the verdicts; exit status 1 on a failure.
echo "$edges" | awk -v known="$KNOWN" -v self="$0" '
function m(x) { return (x == "ops" || x == "exec" || x == "core") ? "core*" : x }
BEGIN { nk = split(known, K, " "); for (i = 1; i <= nk; i++) isknown[K[i]] = 1 }
{
	split($1, p, "->"); a = p[1]; b = p[2]; present[$1] = 1
	if (a == "ring" && b != "util" && b != "abi") {
		if (isknown[$1]) { print "known, to remove: " $1; used[$1] = 1 }
		else { print "FAIL: " $1 " (src/ring/ may depend on util/ and abi/ only)"; fail = 1 }
	}
	ma = m(a); mb = m(b)
	if (ma != mb && !(ma SUBSEP mb in adj)) { adj[ma, mb] = 1; N[ma] = 1; N[mb] = 1; E[++ne] = ma "->" mb }
}
END {
	for (x in N) R[x, x] = 1
	for (x in N) for (y in N) if ((x, y) in adj) R[x, y] = 1
	for (k in N) for (x in N) if ((x, k) in R) for (y in N) if ((k, y) in R) R[x, y] = 1
	for (i = 1; i <= ne; i++) {
		split(E[i], p, "->")
		if (!((p[2], p[1]) in R)) continue
		if (isknown[E[i]]) { print "known, to remove: cycle edge " E[i]; used[E[i]] = 1; continue }
		print "FAIL: cycle through " E[i] " (" p[2] " reaches " p[1] ")"; fail = 1
	}
	for (i = 1; i <= nk; i++) if (!used[K[i]]) {
		print "FAIL: " K[i] " is gone: take it off KNOWN in " self; fail = 1
	}
	if (!fail) print "check_layering: ok"
	exit fail
}'
