#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The demo: one ordinary liburing 2.3 program (demo/uring-cp.c), built twice
# from the same source:
#   uring-cp-kernel  against Debian's liburing (-luring): the kernel's io_uring
#   uring-cp-uuring  against liburing-uuring (conformance/build-liburing.sh):
#                    the same liburing, with its system calls routed to uuring
# and run where the kernel's io_uring is switched off, as under Docker's
# default seccomp profile (demo/nouring.c).
#
#   demo/run-demo.sh [BUILD]      BUILD: uuring's Meson build directory
set -euo pipefail

BUILD=${1:-build}
DEMO_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=conformance/build-liburing.sh
. "$DEMO_DIR/../conformance/build-liburing.sh"
OUT=$DEMO_DIR/work
SIZE_MB=${DEMO_SIZE_MB:-16}
DEPTH=${DEMO_DEPTH:-16}

if [ -t 1 ]; then
	say() { printf '\n\033[1m%s\033[0m\n' "$*"; }
else
	say() { printf '\n== %s\n' "$*"; }
fi
run() { printf '$ %s\n' "$*"; "$@"; }

need_pkgs gcc pkg-config libseccomp-dev liburing-dev fio python3
install_uuring "$BUILD"
build_tools
mkdir -p "$OUT"
rm -f "$OUT"/copy-*

say "1. One program, two builds"
run gcc -O2 -Wall -o "$OUT/uring-cp-kernel" "$DEMO_DIR/uring-cp.c" -luring
# shellcheck disable=SC2046
run gcc -O2 -Wall -o "$OUT/uring-cp-uuring" "$DEMO_DIR/uring-cp.c" \
	$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --cflags --libs liburing-uuring) \
	-Wl,-rpath,"$PREFIX/lib"
echo "uring-cp-kernel uses: $(ldd "$OUT/uring-cp-kernel" | awk '/uring/ { print $1 }' | tr '\n' ' ')"
echo "uring-cp-uuring uses: $(ldd "$OUT/uring-cp-uuring" | awk '/uring/ { print $1 }' | tr '\n' ' ')"

head -c $((SIZE_MB * 1024 * 1024 + 12345)) /dev/urandom > "$OUT/source.bin"
say "2. A ${SIZE_MB} MiB file, copied with the kernel's io_uring (no sandbox)"
if run "$OUT/uring-cp-kernel" -q "$DEPTH" "$OUT/source.bin" "$OUT/copy-kernel.bin" &&
   cmp "$OUT/source.bin" "$OUT/copy-kernel.bin"; then
	echo "-> identical copy"
else
	echo "-> the kernel's io_uring is not usable on this machine (blocked already?)"
fi

say "3. The kernel build inside 'nouring' (io_uring_setup/enter/register -> EPERM, like Docker)"
if run "$BIN_DIR/nouring" "$OUT/uring-cp-kernel" -q "$DEPTH" "$OUT/source.bin" \
	"$OUT/copy-blocked.bin"; then
	echo "demo: error: uring-cp-kernel worked although io_uring was blocked" >&2
	exit 1
fi
echo "-> fails, as expected: there is no io_uring to be had"

say "4. The uuring build inside the same 'nouring'"
if ! run "$BIN_DIR/nouring" "$OUT/uring-cp-uuring" -q "$DEPTH" "$OUT/source.bin" \
	"$OUT/copy-uuring.bin" || ! run cmp "$OUT/source.bin" "$OUT/copy-uuring.bin"; then
	echo "demo: error: the uuring build did not copy the file" >&2
	exit 1
fi
echo "-> identical copy, without the kernel's io_uring"

say "5. The unmodified kernel build, inside 'nouring', under 'uuring run'"
UURING_TOOL=$(cd "$BUILD" && pwd)/tools/uuring
[ -x "$UURING_TOOL" ] || { echo "demo: error: $UURING_TOOL missing (make build)" >&2; exit 1; }
if ! run "$BIN_DIR/nouring" "$UURING_TOOL" run "$OUT/uring-cp-kernel" -q "$DEPTH" \
	"$OUT/source.bin" "$OUT/copy-run.bin" ||
   ! run cmp "$OUT/source.bin" "$OUT/copy-run.bin"; then
	echo "demo: error: uuring run did not copy the file" >&2
	exit 1
fi
echo "-> identical copy: the same binary that failed in step 3, not rebuilt"

say "6. fio's io_uring engine: blocked, then under 'uuring run' (data verified)"
FIO_JOB=(fio --name=verify --filename="$OUT/fio.bin" --size=16m --ioengine=io_uring
	--rw=randwrite --bs=4k --iodepth=32 --verify=crc32c --do_verify=1 --verify_state_save=0
	--output-format=normal)
printf '$ %s\n' "$BIN_DIR/nouring ${FIO_JOB[*]}"
if "$BIN_DIR/nouring" "${FIO_JOB[@]}" >"$OUT/fio-blocked.out" 2>&1; then
	echo "demo: error: fio's io_uring engine worked although io_uring was blocked" >&2
	exit 1
fi
echo "-> fio fails: $(grep -m1 -E 'err=' "$OUT/fio-blocked.out" || echo 'exit status non-zero')"
printf '$ %s\n' "$BIN_DIR/nouring $UURING_TOOL run ${FIO_JOB[*]}"
if ! "$BIN_DIR/nouring" "$UURING_TOOL" run "${FIO_JOB[@]}" >"$OUT/fio-run.out" 2>&1 ||
   grep -qE 'err= *[1-9]|verify: bad|verify failed' "$OUT/fio-run.out"; then
	cat "$OUT/fio-run.out" >&2
	echo "demo: error: fio under uuring run failed" >&2
	exit 1
fi
grep -E '^ +(read|write): IOPS|err= ' "$OUT/fio-run.out" || true
echo "-> fio wrote 16 MiB at random offsets and verified every block (crc32c)"

say "7. A short comparison: fio 4 KiB random reads, QD32, page cache warm"
head -c $((64 * 1024 * 1024)) /dev/urandom > "$OUT/fio-read.bin"
cat "$OUT/fio-read.bin" > /dev/null
iops() { awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^ops_per_s=/) { sub("ops_per_s=", "", $i); print $i } }'; }
k=$("$DEMO_DIR/../bench/fio-bench.sh" "$OUT/fio-read.bin" 3 32 8 | iops)
u=$("$BIN_DIR/nouring" "$UURING_TOOL" run "$DEMO_DIR/../bench/fio-bench.sh" \
	"$OUT/fio-read.bin" 3 32 8 | iops)
python3 -c "k, u = float('$k'), float('$u')
print('kernel io_uring      %9.0f IOPS' % k)
print('uuring run (sandbox) %9.0f IOPS  = %.2fx the kernel (one 3 s sample each;'
      ' make bench measures properly)' % (u, u / k))"

say "What happened"
cat <<EOF
Both binaries come from the same demo/uring-cp.c and use the same liburing
$LIBURING_VERSION API: READ and WRITE SQEs $DEPTH deep, io_uring_wait_cqe_timeout,
an FSYNC at the end.  Under the seccomp filter every io_uring system call
fails with EPERM, so the kernel build cannot even set up its ring.  The
uuring build never makes those calls: liburing-uuring is liburing with its
system call layer routed to libuuring, which runs the ring in user space
(plain read/write/fsync underneath).  Any liburing program gets this by
linking with \`pkg-config --libs liburing-uuring\` (installed in $PREFIX).
Step 5 needs no rebuild at all: \`uuring run\` preloads uuring's shim, which
answers the program's io_uring system calls (a seccomp filter of its own
turns any it cannot patch into SIGSYS, handled in process), so the binary
linked with Debian's liburing copies the file where the kernel says EPERM.
Steps 6 and 7 do the same for Debian's fio: its io_uring engine is
refused by the sandbox, and runs, verified, under \`uuring run\`.
EOF
