#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Fetches liburing (Debian's source package: 2.9 from trixie by default,
# 2.3 from bookworm with LIBURING_VERSION=2.3) and builds it in
# conformance/work/ (gitignored): nothing of liburing is kept in the repo.
# Each version has its own source, build and log directories.
#
#   build-liburing.sh source               fetch and unpack the source (once)
#   build-liburing.sh kernel [TESTS]       unmodified liburing + its tests
#   build-liburing.sh uuring BUILD [TESTS] liburing routed to uuring + tests
#   build-liburing.sh install BUILD        the routed build, installed as
#                                          liburing-uuring into $PREFIX
#   build-liburing.sh tools                nouring and kernel-probe helpers
#
# TESTS is "all" (default), "none", or test names ("nop cq-full ...").
# BUILD is a Meson build directory of uuring holding src/libuuring.a.
#
# The routed copy differs from the unmodified one in its system call layer
# only: src/arch/<arch>/syscall.h includes uuring-syscall-defs.h (ours, from
# this directory) instead of syscall-defs.h, so __sys_io_uring_setup/enter/
# enter2/register, __sys_mmap, __sys_munmap and __sys_close call the uuring
# API.  Tests are linked statically against it and libuuring.a.
#
# Environment: LIBURING_VERSION (2.9, the default, or 2.3), WORK (default
# conformance/work), PREFIX (default $WORK/prefix), JOBS (default nproc),
# LIBURING_SRC (a liburing checkout to use instead of Debian's).  Also
# meant to be sourced: run-conformance.sh and demo/run-demo.sh call the
# functions below.

CONF_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$CONF_DIR/.." && pwd)
WORK=${WORK:-$CONF_DIR/work}
PREFIX=${PREFIX:-$WORK/prefix}
JOBS=${JOBS:-$(nproc)}
LIBURING_VERSION=${LIBURING_VERSION:-2.9}
# The Debian release whose source package is that version.  Only deb-src
# entries are added for it (build-liburing.sh never installs from it), and
# `apt-get source liburing/SUITE` names it, so bookworm's apt state and
# package candidates are untouched.
case $LIBURING_VERSION in
2.3) DEBIAN_SUITE=bookworm;;
2.9) DEBIAN_SUITE=trixie;;
*) echo "build-liburing: error: LIBURING_VERSION=$LIBURING_VERSION: 2.9 or 2.3" \
	"(or LIBURING_SRC=dir for another liburing)" >&2; exit 2;;
esac
SRC_DIR=$WORK/src/$LIBURING_VERSION/liburing-$LIBURING_VERSION
KERNEL_DIR=$WORK/kernel/liburing-$LIBURING_VERSION
BIN_DIR=$WORK/bin
# LIBURING_SRC=dir: a liburing checkout of your own instead of Debian's
# (used as is, never fetched; built in its own work directories).
if [ -n "${LIBURING_SRC:-}" ]; then
	SRC_DIR=$(cd "$LIBURING_SRC" && pwd) || exit 1
	LIBURING_VERSION=$(sed -nE 's/^Version:[[:space:]]*//p' "$SRC_DIR/liburing.spec" 2>/dev/null | head -n1)
	LIBURING_VERSION=${LIBURING_VERSION:-custom}-src$(echo "$SRC_DIR" | sha256sum | cut -c1-8)
	KERNEL_DIR=$WORK/kernel/liburing-$LIBURING_VERSION
fi

log() { echo "build-liburing: $*" >&2; }
die() { echo "build-liburing: error: $*" >&2; exit 1; }

# shellcheck source=tools/need-pkgs.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tools/need-pkgs.sh"

# has_deb_src SUITE: an enabled deb-src entry for SUITE exists (one-line
# or deb822 format).
has_deb_src() {
	local suite=$1 d=/etc/apt/sources.list.d f

	{ cat /etc/apt/sources.list "$d"/*.list 2>/dev/null || true; } |
		grep -qE "^[[:space:]]*deb-src[[:space:]]+(\[[^]]*\][[:space:]]+)?[^[:space:]]+[[:space:]]+$suite[[:space:]]" &&
		return 0
	for f in "$d"/*.sources; do
		[ -f "$f" ] || continue
		awk -v suite="$suite" '
			function check() { if (src && has && !off) found = 1; src = has = off = 0 }
			/^[[:space:]]*$/ { check(); next }
			/^[[:space:]]*#/ { next }
			tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb-src") src = 1 }
			tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == suite) has = 1 }
			tolower($1) == "enabled:" && tolower($2) == "no" { off = 1 }
			END { check(); exit !found }
		' "$f" && return 0
	done
	return 1
}

# ensure_deb_src SUITE: a deb-src entry for SUITE (main), on the host (and
# with the keyring) that the existing deb entries use, in the same format
# (deb822 or one-line), in a file of its own: uuring-src-SUITE.sources or
# .list.  deb-src entries only bring Sources indexes: no binary package of
# another release becomes a candidate for apt-get install.  Idempotent.
ensure_deb_src() {
	local suite=$1 d=/etc/apt/sources.list.d uri= signed= opts= f name

	has_deb_src "$suite" && return 0
	name=$d/uuring-src-$suite
	for f in "$d"/*.sources; do
		[ -f "$f" ] || continue
		uri=$(sed -nE 's|^URIs:[[:space:]]*([a-z]+://[^[:space:]]*/debian/?)([[:space:]].*)?$|\1|p' "$f" | head -n1)
		[ -n "$uri" ] || continue
		signed=$(sed -nE 's/^Signed-By:[[:space:]]*([^[:space:]]+)[[:space:]]*$/\1/p' "$f" | head -n1)
		log "adding $name.sources (deb-src $uri $suite main)"
		{
			echo "Types: deb-src"
			echo "URIs: $uri"
			echo "Suites: $suite"
			echo "Components: main"
			[ -z "$signed" ] || echo "Signed-By: $signed"
		} > "$name.sources"
		break
	done
	if [ -z "$uri" ]; then
		uri=$({ cat /etc/apt/sources.list "$d"/*.list 2>/dev/null || true; } |
			sed -nE 's|^[[:space:]]*deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([a-z]+://[^[:space:]]*/debian/?)[[:space:]].*|\1\2|p' |
			head -n1)
		if [[ $uri == \[* ]]; then
			opts="${uri%%]*}] "
			uri=${uri#*] }
		fi
		uri=${uri:-http://deb.debian.org/debian}
		log "adding $name.list (deb-src $opts$uri $suite main)"
		echo "deb-src $opts$uri $suite main" > "$name.list"
	fi
	if ! apt-get update -qq >/dev/null; then
		rm -f "$name.sources" "$name.list"
		die "apt-get update failed with the deb-src entry for $suite added (removed it again)"
	fi
}

fetch_source() {
	local dl=$WORK/src/$LIBURING_VERSION pkg=liburing/$DEBIAN_SUITE

	if [ -n "${LIBURING_SRC:-}" ]; then
		[ -f "$SRC_DIR/src/include/liburing.h" ] ||
			die "LIBURING_SRC=$LIBURING_SRC is not a liburing source tree"
		return 0
	fi
	[ -f "$SRC_DIR/.uuring-source-ok" ] && return 0
	need_pkgs gcc g++ make dpkg-dev pkg-config libseccomp-dev python3
	ensure_deb_src "$DEBIAN_SUITE"
	rm -rf "$dl"
	mkdir -p "$dl"
	# The release is named: with deb-src entries for both bookworm and
	# trixie, a plain `apt-get source liburing` takes the newest.
	log "fetching liburing $LIBURING_VERSION source (apt-get source $pkg)"
	if ! (cd "$dl" && apt-get source -qq -o APT::Sandbox::User=root \
			"$pkg" >/dev/null 2>"$dl/apt.log"); then
		# The Sources index may be stale or missing: refresh once.
		apt-get update -qq >/dev/null
		(cd "$dl" && apt-get source -qq -o APT::Sandbox::User=root \
			"$pkg" >/dev/null 2>"$dl/apt.log") ||
			{ cat "$dl/apt.log" >&2; die "apt-get source $pkg failed"; }
	fi
	[ -f "$SRC_DIR/src/arch/syscall-defs.h" ] ||
		die "expected liburing $LIBURING_VERSION in $SRC_DIR ($(ls "$dl" | tr '\n' ' '))"
	touch "$SRC_DIR/.uuring-source-ok"
}

build_tools() {
	mkdir -p "$BIN_DIR"
	need_pkgs gcc libseccomp-dev
	if [ ! -x "$BIN_DIR/nouring" ] || [ "$ROOT/demo/nouring.c" -nt "$BIN_DIR/nouring" ]; then
		gcc -O2 -Wall -Wextra -o "$BIN_DIR/nouring" "$ROOT/demo/nouring.c" -lseccomp
	fi
	if [ ! -x "$BIN_DIR/kernel-probe" ] ||
	   [ "$CONF_DIR/kernel-probe.c" -nt "$BIN_DIR/kernel-probe" ]; then
		gcc -O2 -Wall -Wextra -o "$BIN_DIR/kernel-probe" "$CONF_DIR/kernel-probe.c"
	fi
}

# Per-build settings: the sanitizer a Meson build uses, and its compiler.
# Sets FLAVOR_SAN ("" or "address,undefined"...), FLAVOR_CC, UURING_DIR.
build_flavor() {
	local build=$1 info=$1/meson-info

	FLAVOR_SAN=
	FLAVOR_CC=gcc
	if [ -f "$info/intro-buildoptions.json" ]; then
		FLAVOR_SAN=$(python3 - "$info" <<'PY'
import json, sys
info = sys.argv[1]
v = "none"
for o in json.load(open(info + "/intro-buildoptions.json")):
    if o["name"] == "b_sanitize":
        v = o["value"]
if isinstance(v, list):
    v = ",".join(v)
print("" if v in ("none", "") else v)
PY
)
		if [ -n "$FLAVOR_SAN" ]; then
			FLAVOR_CC=$(python3 - "$info" <<'PY'
import json, sys
cc = "cc"
for t in json.load(open(sys.argv[1] + "/intro-targets.json")):
    for src in t.get("target_sources", []):
        if src.get("language") == "c" and src.get("compiler"):
            cc = src["compiler"][0]
            break
    else:
        continue
    break
print(cc)
PY
)
		fi
	fi
	if [ -n "$FLAVOR_SAN" ]; then
		UURING_DIR=$WORK/uuring-${FLAVOR_SAN//,/-}/liburing-$LIBURING_VERSION
	else
		UURING_DIR=$WORK/uuring/liburing-$LIBURING_VERSION
	fi
}

# The libraries libuuring needs after it when linked statically.
uuring_libs_private() {
	local build=$1 libs=

	if [ -f "$build/meson-private/uuring.pc" ]; then
		libs=$(PKG_CONFIG_PATH=$build/meson-private \
			pkg-config --static --libs-only-l --libs-only-other uuring 2>/dev/null |
			tr ' ' '\n' | grep -vx -e '-luuring' -e '' | tr '\n' ' ')
	fi
	echo "${libs:--lpthread}"
}

# test names -> make targets: "all" is every test, "none" (or nothing) none.
test_targets() {
	local t out=()

	for t in "$@"; do
		case $t in
		all) echo all; return;;
		none|"") ;;
		*) out+=("${t%.t}.t");;
		esac
	done
	echo "${out[*]}"
}

configure_tree() {
	local dir=$1 cc=$2 cxx

	# The C++ compiler of the same family (sq-full-cpp links libuuring too).
	case ${cc##*/} in
	clang*) cxx=${cc/%clang/clang++}; cxx=${cxx/clang-/clang++-};;
	gcc*) cxx=${cc/%gcc/g++}; cxx=${cxx/gcc-/g++-};;
	*) cxx=${CXX:-g++};;
	esac
	(cd "$dir" && ./configure --cc="$cc" --cxx="$cxx" --prefix=/usr >"$dir/configure.log" 2>&1) ||
		{ tail -n 20 "$dir/configure.log" >&2; die "configure failed in $dir"; }
}

build_kernel() {
	local targets

	fetch_source
	mkdir -p "$WORK/kernel"
	exec 9>"$WORK/.build.lock"
	flock 9
	if [ ! -f "$KERNEL_DIR/.uuring-configured" ]; then
		rm -rf "$KERNEL_DIR"
		cp -a "$SRC_DIR" "$KERNEL_DIR"
		configure_tree "$KERNEL_DIR" gcc
		touch "$KERNEL_DIR/.uuring-configured"
	fi
	log "building unmodified liburing $LIBURING_VERSION (kernel reference)"
	make -s -C "$KERNEL_DIR/src" -j"$JOBS" >"$KERNEL_DIR/src-build.log" 2>&1 ||
		{ tail -n 30 "$KERNEL_DIR/src-build.log" >&2; die "building liburing failed"; }
	targets=$(test_targets "$@")
	if [ -n "$targets" ]; then
		# shellcheck disable=SC2086
		make -s -C "$KERNEL_DIR/test" -j"$JOBS" $targets >"$KERNEL_DIR/test-build.log" 2>&1 ||
			{ tail -n 30 "$KERNEL_DIR/test-build.log" >&2; die "building the kernel tests failed"; }
	fi
	exec 9>&-
}

# Routes the system call layer of the liburing tree in $1.
route_syscalls() {
	local dir=$1 arch_h

	cp "$CONF_DIR/uuring-syscall-defs.h" "$dir/src/arch/uuring-syscall-defs.h"
	for arch_h in "$dir"/src/arch/*/syscall.h; do
		sed -i 's|#include "../syscall-defs.h"|#include "../uuring-syscall-defs.h"|' "$arch_h"
	done
	grep -q 'uuring-syscall-defs.h' "$dir/src/arch/x86/syscall.h" ||
		die "could not route liburing's syscall layer (unexpected source)"
}

build_uuring() {
	local build=$1 targets stamp libs ldflags cflags=() cc
	shift

	[ -f "$build/src/libuuring.a" ] ||
		die "$build/src/libuuring.a not found: build uuring first (make build)"
	build=$(cd "$build" && pwd)
	fetch_source
	build_flavor "$build"
	cc=$FLAVOR_CC
	ldflags=
	if [ -n "$FLAVOR_SAN" ]; then
		ldflags="-fsanitize=$FLAVOR_SAN"
		# The test Makefile compiles and links in one step, so the
		# tests get instrumented too.  Under TSan their own benign
		# races (plain exit flags) are not uuring's: leave the test
		# sources uninstrumented (clang's ignorelist).
		if [[ $FLAVOR_SAN == *thread* ]] && "$cc" --version 2>/dev/null | grep -qi clang; then
			mkdir -p "$WORK"
			echo 'src:*' > "$WORK/tsan-ignore-tests.txt"
			ldflags+=" -fsanitize-ignorelist=$WORK/tsan-ignore-tests.txt"
		fi
	fi
	mkdir -p "$(dirname "$UURING_DIR")"
	exec 9>"$WORK/.build.lock"
	flock 9
	# A change of the routing, of the uuring API or of the compiler
	# starts the tree afresh (the tests have no header dependencies).
	stamp=$(cat "$CONF_DIR/uuring-syscall-defs.h" "$ROOT/include/uuring.h" \
		"${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)-$cc-$FLAVOR_SAN
	if [ "$(cat "$UURING_DIR/.uuring-configured" 2>/dev/null)" != "$stamp" ]; then
		rm -rf "$UURING_DIR"
		cp -a "$SRC_DIR" "$UURING_DIR"
		route_syscalls "$UURING_DIR"
		configure_tree "$UURING_DIR" "$cc"
		echo "$stamp" > "$UURING_DIR/.uuring-configured"
	fi
	log "building liburing $LIBURING_VERSION routed to uuring ($build)"
	# LINK_FLAGS= drops 2.9's -Wl,-z,defs from its own liburing.so link:
	# the routed library's uuring_* symbols are only resolved when a
	# program links libuuring after it (install_uuring links its own .so).
	make -s -C "$UURING_DIR/src" -j"$JOBS" CPPFLAGS="-I$ROOT/include" LINK_FLAGS= \
		>"$UURING_DIR/src-build.log" 2>&1 ||
		{ tail -n 30 "$UURING_DIR/src-build.log" >&2; die "building liburing-uuring failed"; }
	[[ $(nm -u "$UURING_DIR/src/liburing.a" 2>/dev/null) == *uuring_setup* ]] ||
		die "liburing-uuring.a does not call uuring_setup: routing failed"
	# New engine: relink every test against it.
	if ! cmp -s "$build/src/libuuring.a" "$UURING_DIR/libuuring.a"; then
		cp "$build/src/libuuring.a" "$UURING_DIR/libuuring.a"
		touch "$UURING_DIR/src/liburing.a"
	fi
	targets=$(test_targets "$@")
	if [ -n "$targets" ]; then
		libs=$(uuring_libs_private "$build")
		# The test Makefile appends "-L../src/ -luring -lpthread" to
		# LDFLAGS: name liburing first here so libuuring.a follows it.
		# shellcheck disable=SC2086
		make -s -C "$UURING_DIR/test" -j"$JOBS" CPPFLAGS="-I$ROOT/include" \
			LDFLAGS="$ldflags -L../src -luring $UURING_DIR/libuuring.a $libs" \
			$targets >"$UURING_DIR/test-build.log" 2>&1 ||
			{ tail -n 30 "$UURING_DIR/test-build.log" >&2; die "building the tests on uuring failed"; }
	fi
	exec 9>&-
}

write_pc() {
	local file=$1 name=$2 version=$3 desc=$4 requires=$5 libs=$6 libs_private=$7 cflags=$8

	cat > "$file" <<EOF
prefix=$PREFIX
exec_prefix=\${prefix}
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: $name
Version: $version
Description: $desc
Requires: $requires
Libs: $libs
Libs.private: $libs_private
Cflags: $cflags
EOF
}

install_uuring() {
	local build=$1 lib=$PREFIX/lib inc=$PREFIX/include so soname version

	build_uuring "$build" none
	build=$(cd "$build" && pwd)
	[ -z "$FLAVOR_SAN" ] || die "install wants a build without sanitizers"
	mkdir -p "$lib/pkgconfig" "$inc/liburing-uuring/liburing"

	# uuring itself.
	version=$(sed -nE "s/^[[:space:]]*version[[:space:]]*:[[:space:]]*'([^']*)'.*/\1/p" \
		"$ROOT/meson.build" | head -n1)
	install -m 644 "$ROOT/include/uuring.h" "$inc/uuring.h"
	install -m 644 "$build/src/libuuring.a" "$lib/libuuring.a"
	so=$(find "$build/src" -maxdepth 1 -type f -name 'libuuring.so*' | head -n1)
	if [ -n "$so" ]; then
		soname=$(objdump -p "$so" | awk '/SONAME/ { print $2 }')
		install -m 755 "$so" "$lib/$(basename "$so")"
		[ -z "$soname" ] || [ "$soname" = "$(basename "$so")" ] ||
			ln -sf "$(basename "$so")" "$lib/$soname"
		[ "$(basename "$so")" = libuuring.so ] || ln -sf "$(basename "$so")" "$lib/libuuring.so"
	fi
	write_pc "$lib/pkgconfig/uuring.pc" uuring "${version:-0}" \
		"io_uring in user space" "" "-L\${libdir} -luuring" \
		"$(uuring_libs_private "$build")" "-I\${includedir}"

	# liburing, routed.  Headers in their own directory so they never
	# shadow a real liburing's.
	install -m 644 "$UURING_DIR/src/include/liburing.h" "$inc/liburing-uuring/liburing.h"
	install -m 644 "$UURING_DIR"/src/include/liburing/*.h "$inc/liburing-uuring/liburing/"
	install -m 644 "$UURING_DIR/src/liburing.a" "$lib/liburing-uuring.a"
	# liburing's own link line (nolibc on x86_64), under our soname,
	# against libuuring.so found next to it.
	(cd "$UURING_DIR/src" && gcc -fPIC -shared -Wl,--version-script=liburing.map \
		-Wl,-soname=liburing-uuring.so.${LIBURING_VERSION%%.*} \
		-o "$lib/liburing-uuring.so.$LIBURING_VERSION" ./*.os \
		$(grep -q '^CONFIG_NOLIBC=y' ../config-host.mak && echo -nostdlib -nodefaultlibs) \
		-L"$lib" -luuring -Wl,-rpath,'$ORIGIN')
	ln -sf "liburing-uuring.so.$LIBURING_VERSION" "$lib/liburing-uuring.so.${LIBURING_VERSION%%.*}"
	ln -sf "liburing-uuring.so.$LIBURING_VERSION" "$lib/liburing-uuring.so"
	write_pc "$lib/pkgconfig/liburing-uuring.pc" liburing-uuring "$LIBURING_VERSION" \
		"liburing $LIBURING_VERSION with its system calls routed to uuring" \
		uuring "-L\${libdir} -luring-uuring" "" "-I\${includedir}/liburing-uuring"
	log "installed liburing-uuring into $PREFIX"
}

main() {
	local cmd=${1:-}

	[ $# -gt 0 ] && shift
	case $cmd in
	source) fetch_source;;
	kernel) build_kernel "${@:-all}";;
	uuring) [ $# -ge 1 ] || die "usage: $0 uuring BUILD [TESTS]"
		[ $# -ge 2 ] || set -- "$1" all
		build_uuring "$@";;
	install) [ $# -eq 1 ] || die "usage: $0 install BUILD"; install_uuring "$1";;
	tools) build_tools;;
	*) sed -n '3,/^$/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2;;
	esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	main "$@"
fi
