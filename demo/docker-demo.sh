#!/bin/bash
# SPDX-License-Identifier: MIT
#
# uuring in a real Docker container (make demo-docker, issue 5).
#
# Builds a small image locally (no registry: `docker import` of a rootfs
# made from this machine's files: demo/uring-cp.c linked with Debian's
# liburing, the uuring tool and its preload library, a shell, cmp, and the
# shared libraries they need), then runs in it:
#   1. uring-cp with Docker's default seccomp profile: io_uring_setup is
#      refused (EPERM), the copy fails;
#   2. the same binary, same profile, under `uuring run`: the copy works and
#      is compared with its source inside the container;
#   3. uring-cp with --security-opt seccomp=unconfined: the kernel's
#      io_uring works.
#
# Docker 25.0 removed io_uring_setup/enter/register from its default profile
# (moby PR #46762).  An older daemon (Debian bookworm's docker.io 20.10)
# still allows them; the demo then says so and uses that daemon's own
# default profile with exactly those three calls removed, which is what
# Docker >= 25 ships (the profile comes from Debian's
# golang-github-docker-docker-dev package of the same version, or from
# DOCKER_SECCOMP_JSON=file).
#
# If no Docker daemon answers, one is started for the demo (installing
# Debian's docker.io if need be; as root) without networking or iptables,
# and stopped at the end.  The image (uuring-docker-demo) is kept.
#
#   demo/docker-demo.sh [BUILD]     BUILD: uuring's Meson build directory
#
# DOCKER_DEMO_TESTS=1 also runs uuring's `uuring run` tests
# (build/tests/test_run_*) in containers under both profiles, with the
# host's /usr and /etc bind-mounted read-only.
set -euo pipefail

BUILD=${1:-build}
DEMO_DIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$DEMO_DIR/.." && pwd)
BUILD=$(cd "$BUILD" && pwd)
OUT=$DEMO_DIR/work/docker
IMAGE=uuring-docker-demo
SIZE=$((16 * 1024 * 1024 + 12345))
DOCKER_PROFILE_DEB=golang-github-docker-docker-dev
DOCKER_PROFILE_PATH=usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json

if [ -t 1 ]; then
	say() { printf '\n\033[1m%s\033[0m\n' "$*"; }
else
	say() { printf '\n== %s\n' "$*"; }
fi
log() { echo "docker-demo: $*" >&2; }
die() { echo "docker-demo: error: $*" >&2; exit 1; }
run() { printf '$ %s\n' "$*"; "$@"; }

# shellcheck source=tools/need-pkgs.sh
. "$DEMO_DIR/../tools/need-pkgs.sh"

[ -x "$BUILD/tools/uuring" ] && [ -f "$BUILD/tools/libuuring-preload.so" ] ||
	die "$BUILD/tools/uuring or libuuring-preload.so missing (make build)"
need_pkgs --no-recommends gcc libc6-dev liburing-dev python3
mkdir -p "$OUT"

# ---- a Docker daemon ---------------------------------------------------

DOCKERD_PID=
stop_dockerd() {
	if [ -n "$DOCKERD_PID" ]; then
		log "stopping the dockerd started for the demo (pid $DOCKERD_PID)"
		kill "$DOCKERD_PID" 2>/dev/null || true
		wait "$DOCKERD_PID" 2>/dev/null || true
	fi
}
trap stop_dockerd EXIT

docker_up() { timeout 20 docker info >/dev/null 2>&1; }

if ! command -v docker >/dev/null || ! docker_up; then
	command -v dockerd >/dev/null || need_pkgs --no-recommends docker.io
	command -v docker >/dev/null || die "no docker client"
	[ "$(id -u)" -eq 0 ] || die "no Docker daemon answers, and starting one needs root"
	log "no Docker daemon answers: starting dockerd (log: $OUT/dockerd.log)"
	# No bridge, no iptables: the containers run with --network none.
	dockerd --iptables=false --ip6tables=false --bridge=none \
		>"$OUT/dockerd.log" 2>&1 &
	DOCKERD_PID=$!
	for _ in $(seq 60); do
		docker_up && break
		kill -0 "$DOCKERD_PID" 2>/dev/null ||
			{ tail -5 "$OUT/dockerd.log" >&2; DOCKERD_PID=; die "dockerd exited"; }
		sleep 1
	done
	docker_up || { tail -5 "$OUT/dockerd.log" >&2; die "dockerd did not come up in 60 s"; }
fi
SERVER=$(docker version -f '{{.Server.Version}}')
echo "Docker daemon $SERVER, client $(docker version -f '{{.Client.Version}}')"

# ---- the image ---------------------------------------------------------

say "Building the image $IMAGE from this machine's files (no registry)"
ROOTFS=$OUT/rootfs
rm -rf "$ROOTFS"
mkdir -p "$ROOTFS"/{bin,uuring,tmp}
chmod 1777 "$ROOTFS/tmp"
run gcc -O2 -Wall -o "$ROOTFS/bin/uring-cp" "$DEMO_DIR/uring-cp.c" -luring
cp "$BUILD/tools/uuring" "$BUILD/tools/libuuring-preload.so" "$ROOTFS/uuring/"
for b in dash cmp head; do
	cp -L "$(command -v $b)" "$ROOTFS/bin/"
done
ln -s dash "$ROOTFS/bin/sh"
# Every shared library (and the loader) those programs need, at the path
# the host has it.
for f in "$ROOTFS"/bin/* "$ROOTFS"/uuring/*; do
	[ -L "$f" ] || ldd "$f" 2>/dev/null | grep -o '/[^ ]*' || true
done | sort -u | while read -r lib; do
	mkdir -p "$ROOTFS$(dirname "$lib")"
	cp -L "$lib" "$ROOTFS$lib"
done
tar -C "$ROOTFS" -c . | docker import - "$IMAGE" >/dev/null
echo "image $IMAGE: $(du -sh "$ROOTFS" | cut -f1) ($(cd "$ROOTFS" && find . -type f | wc -l) files;" \
	"uring-cp uses $(ldd "$ROOTFS/bin/uring-cp" | awk '/liburing/ { print $1 }'))"

# The command run in every container: a random file of $SIZE bytes,
# copied by uring-cp (after the words given, e.g. a `uuring run`), then
# compared with its copy.  Seccomp: 2 means a seccomp filter is on.
COPY='while read -r k v; do [ "$k" = Seccomp: ] && echo "in the container: Seccomp: $v"; done </proc/self/status
head -c '"$SIZE"' /dev/urandom >/tmp/src
"$@" /bin/uring-cp -q 16 /tmp/src /tmp/dst || { echo "-> uring-cp exit status $?"; exit 1; }
cmp /tmp/src /tmp/dst && echo "-> /tmp/dst is identical to /tmp/src"'
echo "In every container, COPY (\$@: the words before uring-cp, if any):"
printf '%s\n' "$COPY" | sed 's/^/    /'
in_container() { # [docker run options] -- [words before uring-cp]
	local opts=()

	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	echo "\$ docker run --rm --network none ${opts[*]:+${opts[*]} }$IMAGE sh -c \"\$COPY\" sh $*"
	docker run --rm --network none "${opts[@]}" "$IMAGE" /bin/sh -c "$COPY" sh "$@"
}

# ---- 1. the default profile --------------------------------------------

say "1. uring-cp (Debian's liburing) with Docker's default seccomp profile"
PROFILE_OPT=()
PROFILE_NAME="Docker $SERVER's default profile"
if in_container -- 2>"$OUT/step1.err"; then
	cat "$OUT/step1.err"
	echo "-> works: Docker $SERVER's built-in default profile still allows io_uring."
	echo "   Docker 25.0 removed io_uring_setup/enter/register from it (moby PR #46762);"
	echo "   the same profile without those three calls is what Docker >= 25 applies."
	json=${DOCKER_SECCOMP_JSON:-}
	if [ -z "$json" ]; then
		deb_ver=$(dpkg-query -W -f='${Version}' docker.io 2>/dev/null || true)
		json=/$DOCKER_PROFILE_PATH
		src="$json ($DOCKER_PROFILE_DEB, installed)"
		if [ ! -f "$json" ]; then
			rm -rf "$OUT/deb" && mkdir -p "$OUT/deb"
			spec=$DOCKER_PROFILE_DEB${deb_ver:+=$deb_ver}
			(cd "$OUT/deb" && apt-get download -qq -o APT::Sandbox::User=root "$spec" ||
				apt-get download -qq -o APT::Sandbox::User=root $DOCKER_PROFILE_DEB) \
				>/dev/null 2>&1 || die "apt-get download $spec failed" \
				"(or set DOCKER_SECCOMP_JSON to Docker's default.json)"
			dpkg-deb -x "$OUT"/deb/*.deb "$OUT/deb/x"
			json=$OUT/deb/x/$DOCKER_PROFILE_PATH
			src="$(basename "$OUT"/deb/*.deb) (apt-get download)"
		fi
	else
		src=$json
	fi
	python3 - "$json" "$OUT/default-no-io_uring.json" <<'EOF'
import json, sys

prof = json.load(open(sys.argv[1]))
removed = []
for rule in prof["syscalls"]:
    keep = [n for n in rule["names"] if not n.startswith("io_uring_")]
    removed += [n for n in rule["names"] if n.startswith("io_uring_")]
    rule["names"] = keep
prof["syscalls"] = [r for r in prof["syscalls"] if r["names"]]
if sorted(removed) != ["io_uring_enter", "io_uring_register", "io_uring_setup"]:
    sys.exit("expected the three io_uring calls once each, removed %s" % removed)
json.dump(prof, open(sys.argv[2], "w"), indent="\t")
print("   removed from the profile: " + ", ".join(sorted(removed)))
EOF
	echo "   profile: $src, written without them to demo/work/docker/default-no-io_uring.json"
	PROFILE_OPT=(--security-opt "seccomp=$OUT/default-no-io_uring.json")
	PROFILE_NAME="Docker's default profile without io_uring (as in Docker >= 25)"
	say "1b. The same with $PROFILE_NAME"
	if in_container "${PROFILE_OPT[@]}" -- 2>"$OUT/step1.err"; then
		cat "$OUT/step1.err"
		die "uring-cp worked although the profile refuses io_uring"
	fi
fi
cat "$OUT/step1.err"
grep -q 'Operation not permitted' "$OUT/step1.err" ||
	die "uring-cp failed, but not with EPERM from io_uring_setup"
echo "-> fails: io_uring_setup returns EPERM ($PROFILE_NAME)"

# ---- 2. under uuring run -----------------------------------------------

say "2. The same binary, same container profile, under 'uuring run'"
in_container "${PROFILE_OPT[@]}" -- /uuring/uuring run --verbose -- 2>&1 |
	tee "$OUT/step2.out" || true
grep -q 'identical' "$OUT/step2.out" || die "the copy under uuring run failed"
grep -q 'uuring serves io_uring' "$OUT/step2.out" ||
	die "uuring run did not serve io_uring itself"
echo "-> uuring served the ring inside the container: the same binary, not rebuilt"
# What `uuring run` changed for its command: its own trap filter on top of
# Docker's, installed under no_new_privs (no CAP_SYS_ADMIN in a container).
STATUS='while read -r k v; do case $k in NoNewPrivs:|Seccomp_filters:) echo "under uuring run: $k $v";; esac; done </proc/self/status'
echo "STATUS: $STATUS"
echo "\$ docker run --rm --network none ${PROFILE_OPT[*]:+${PROFILE_OPT[*]} }$IMAGE /uuring/uuring run --mode=force -- sh -c \"\$STATUS\""
docker run --rm --network none "${PROFILE_OPT[@]}" "$IMAGE" \
	/uuring/uuring run --mode=force -- /bin/sh -c "$STATUS"

# ---- 3. unconfined -----------------------------------------------------

say "3. uring-cp with --security-opt seccomp=unconfined: the kernel's io_uring"
in_container --security-opt seccomp=unconfined -- 2>&1 | tee "$OUT/step3.out" || true
grep -q 'identical' "$OUT/step3.out" || die "the kernel's io_uring did not work unconfined"
grep -q 'Seccomp: 0' "$OUT/step3.out" || die "a seccomp filter was on although unconfined"
echo "-> works on the kernel's io_uring once the profile is lifted"

# ---- optional: uuring's own `uuring run` tests in containers -----------

if [ -n "${DOCKER_DEMO_TESTS:-}" ]; then
	say "DOCKER_DEMO_TESTS: uuring's 'uuring run' tests inside containers"
	[ -L /lib ] || die "the host's /lib is not a link into /usr (merged /usr needed)"
	HOSTISH=$OUT/hostish
	rm -rf "$HOSTISH"
	mkdir -p "$HOSTISH"/{usr,etc,tmp,var/tmp,"$(dirname "$ROOT")"}
	chmod 1777 "$HOSTISH/tmp" "$HOSTISH/var/tmp"
	for l in bin sbin lib lib64; do
		[ -L "/$l" ] && ln -s "usr/$l" "$HOSTISH/$l"
	done
	tar -C "$HOSTISH" -c . | docker import - "$IMAGE-host" >/dev/null
	fails=0
	for t in liburing_dyn liburing_static raw process seccomp errors fio; do
		for p in daemon-default derived; do
			opts=()
			if [ $p = derived ]; then
				[ ${#PROFILE_OPT[@]} -gt 0 ] || continue
				opts=("${PROFILE_OPT[@]}")
			fi
			if docker run --rm --network none "${opts[@]}" -v /usr:/usr:ro \
				-v /etc:/etc:ro -v "$ROOT:$ROOT" -w "$ROOT" "$IMAGE-host" \
				timeout 600 "$BUILD/tests/test_run_$t" >"$OUT/test_run_$t.$p.log" 2>&1; then
				echo "test_run_$t ($p profile): ok"
			else
				echo "test_run_$t ($p profile): FAILED (demo/work/docker/test_run_$t.$p.log)"
				fails=$((fails + 1))
			fi
		done
	done
	[ $fails -eq 0 ] || die "$fails test runs failed in containers"
fi

say "What happened"
cat <<EOF
One binary, linked with Debian's liburing, in one image.  With Docker's
default seccomp profile (as Docker >= 25 ships it) io_uring_setup returns
EPERM and the program fails.  Under \`uuring run\` in the same container the
preload library serves the ring in user space: its own seccomp filter
(installed with no_new_privs, allowed by Docker's profile) turns the raw
io_uring calls into SIGSYS, which it handles, and the data moves through
plain read/write/fsync that the profile allows.  Unconfined, the kernel's
io_uring does the same copy.
EOF
