#!/bin/bash
# SPDX-License-Identifier: MIT
# Configured by Meson into BUILD/tests/test_run_no_x87.  The patched
# io_uring_enter sites (src/shim/patch.c) save the vector registers, MXCSR
# and the x87 control word around the engine, not the x87 data registers:
# that is only right while the preload library executes no x87 instruction.
# This checks its disassembly; fnstcw/fldcw (the trampolines' own) and
# fxsave/fxrstor/xsave* forms are allowed.
set -u
BUILD=$(cd "$(dirname "$0")/.." && pwd)
LIB="$BUILD/tools/libuuring-preload.so"
if [ ! -f "$LIB" ]; then
	echo "skip: no $LIB (a sanitizer build has no preload library)"
	exit 0
fi
if ! command -v objdump >/dev/null; then
	echo "FAIL: objdump (binutils) is needed for this check"
	exit 1
fi
x87=$(objdump -d --no-show-raw-insn "$LIB" |
	awk -F'\t' 'NF >= 2 { split($2, a, " "); print a[1] }' |
	grep -E '^f' | grep -Ev '^(fnstcw|fldcw|fxsave|fxrstor)' |
	sort | uniq -c)
n=$(objdump -d --no-show-raw-insn "$LIB" | grep -Ec 'fnstcw|fldcw')
if [ -n "$x87" ]; then
	echo "FAIL: x87 instructions in $LIB:"
	echo "$x87"
	exit 1
fi
if [ "$n" -lt 2 ]; then
	echo "FAIL: the trampolines' fnstcw/fldcw not found ($n): is the check looking at the right code?"
	exit 1
fi
echo "ok: no x87 data instruction in $LIB ($n control-word saves/restores)"
