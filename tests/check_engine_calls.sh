#!/bin/bash
# SPDX-License-Identifier: MIT
# Inside libuuring-preload.so no engine call binds to the interposers the
# library exports for the program (src/shim/direct.c): every interposed
# name that an engine object calls must be linked through --wrap, which
# shows as a __wrap_NAME definition in the library.
#
#   tests/check_engine_calls.sh [BUILD]
#
# Engine objects are the library's objects outside src/shim/.  Prints each
# offending object with the names it calls unwrapped; exit 1 if any, 77
# (skip) if the library or binutils' nm is missing.
set -u
BUILD=${1:-build}
LIB=$BUILD/tools/libuuring-preload.so
OBJDIR=$BUILD/tools/libuuring-preload.so.p
if [ ! -f "$LIB" ] || ! command -v nm >/dev/null; then
	echo "skip: no $LIB or no nm"
	exit 77
fi
# the interposers: what the library exports, bar the uuring API
interposed=$(nm -D --defined-only "$LIB" | awk '{print $3}' |
	grep -v '^uuring_' | sort -u)
wrapped=$(nm "$LIB" | awk '$3 ~ /^__wrap_/ {sub(/^__wrap_/, "", $3); print $3}' |
	sort -u)
if [ -z "$interposed" ]; then
	echo "no interposers found in $LIB"
	exit 1
fi
bad=0 objs=0
while IFS= read -r o; do
	case $(basename "$o") in
	*_src_shim_*) continue;;
	esac
	objs=$((objs + 1))
	calls=$(nm -u "$o" | awk '{print $2}' | sort -u |
		comm -12 - <(echo "$interposed"))
	[ -n "$calls" ] || continue
	unwrapped=$(comm -23 <(echo "$calls") <(echo "$wrapped"))
	if [ -n "$unwrapped" ]; then
		echo "$(basename "$o"): calls interposed $(echo $unwrapped) without --wrap" \
			"(add to tools/meson.build engine_direct and src/shim/direct.c)"
		bad=1
	fi
done < <(find "$OBJDIR" -name '*.o' | sort)
if [ "$objs" = 0 ]; then
	echo "no engine objects under $OBJDIR"
	exit 1
fi
echo "$objs engine objects; interposed names called through --wrap:" \
	"$(echo $wrapped)"
exit $bad
