# SPDX-License-Identifier: MIT
# Thin wrapper around Meson.  Every target installs what it needs on a fresh
# Debian bookworm machine (run as root).

BUILD      ?= build
MESON_OPTS ?=
SHELL      := /bin/bash

DEB_PKGS := meson ninja-build gcc clang pkg-config libseccomp-dev liburing-dev \
	    fio dpkg-dev libclang-rt-14-dev
DEPS_STAMP := .deps-installed

.PHONY: all deps build fuzz-mutants test test-asan test-tsan demo demo-docker bench bench-seeds conformance-api \
	conformance check-clang clean format soak fuzz fuzz-build

all: build

# $(call install_missing,PACKAGES): apt-get installs those not installed.
define install_missing
	@missing=""; for p in $(1); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

$(DEPS_STAMP):
	$(call install_missing,$(DEB_PKGS))
	@touch $@

deps: $(DEPS_STAMP)

$(BUILD)/build.ninja: | $(DEPS_STAMP)
	meson setup $(BUILD) $(MESON_OPTS)

build: $(BUILD)/build.ninja
	ninja -C $(BUILD)

# The same sources under clang, compile only (-Werror applies).
check-clang: | $(DEPS_STAMP)
	@[ -f build-clang/build.ninja ] || CC=clang meson setup build-clang >/dev/null
	ninja -C build-clang

test: build check-clang fuzz-build
	tests/run-tests.sh $(BUILD)

# Coverage-guided fuzzing (tests/fuzz/run-fuzz.sh): the
# libFuzzer target fuzz_uuring (tests/test_diff_fuzz2.c's programs on
# uuring, ASan+UBSan, seeded by tests/fuzz/corpus) half of FUZZ_MINUTES,
# the differential test_diff_fuzz2 on fresh seeds in the four ring modes
# the other half; lines of src/ the work corpus executes, from a
# coverage build (build-cov).  Report: tests/results/fuzz.md.  make test
# runs a one-minute smoke (tests/run-tests.sh, fuzz-smoke).
FUZZ_MINUTES ?= 30
FUZZ_BUILD := build-fuzz
COV_BUILD := build-cov

fuzz-build: | $(DEPS_STAMP)
	@[ -f $(FUZZ_BUILD)/build.ninja ] || CC=clang meson setup $(FUZZ_BUILD) \
		-Db_sanitize=address,undefined -Db_lundef=false -Dfuzzer=true >/dev/null
	ninja -C $(FUZZ_BUILD) tests/fuzz_uuring

fuzz: build fuzz-build
	@[ -f $(COV_BUILD)/build.ninja ] || CC=clang meson setup $(COV_BUILD) \
		-Dfuzzer=true -Dc_args='-fprofile-instr-generate -fcoverage-mapping' \
		-Dc_link_args=-fprofile-instr-generate >/dev/null
	ninja -C $(COV_BUILD) tests/fuzz_uuring
	nice -n 19 env COV_BUILD=$(COV_BUILD) tests/fuzz/run-fuzz.sh $(BUILD) $(FUZZ_BUILD) $(FUZZ_MINUTES)

# The fuzzer tested: earlier fixes undone one at a time (build-mut-*), a
# differential campaign of MUTANT_MINUTES against each (tests/fuzz/mutants.sh,
# tests/results/mutants.md).
MUTANT_MINUTES ?= 4
fuzz-mutants: build
	nice -n 19 tests/fuzz/mutants.sh $(BUILD) $(MUTANT_MINUTES)

test-asan: | $(DEPS_STAMP)
	@[ -f build-asan/build.ninja ] || CC=clang meson setup build-asan \
		-Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug >/dev/null
	ninja -C build-asan
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	ASAN_OPTIONS=detect_leaks=1 tests/run-tests.sh build-asan

test-tsan: | $(DEPS_STAMP)
	@[ -f build-tsan/build.ninja ] || CC=clang meson setup build-tsan \
		-Db_sanitize=thread -Db_lundef=false -Dbuildtype=debug >/dev/null
	ninja -C build-tsan
	@# die_after_fork=0: a forked child of a threaded test starts the
	@# engine's threads afresh (tests/test_diff_lifecycle fork_child_engine)
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:die_after_fork=0 \
		tests/run-tests.sh build-tsan

# The soak (tests/soak/soak.py): SOAK_MINUTES of fio
# verify jobs, a TCP echo load, timers and cancels and fork/exec churn in
# one tree under `uuring run --mode=force --block-kernel-uring`, its RSS,
# fds and threads sampled every 10 s; the slopes over the last 2/3 of the
# run, zero errors, every fio byte verified.  Report and plot in
# tests/results/ (soak.md, soak.png).  Not part of `make test`.
SOAK_MINUTES ?= 30
SOAK_PKGS := python3-matplotlib
SOAK_STAMP := .soak-deps-installed

$(SOAK_STAMP): | $(DEPS_STAMP)
	$(call install_missing,$(SOAK_PKGS))
	@touch $@

soak: build | $(SOAK_STAMP)
	/usr/bin/python3 tests/soak/soak.py $(BUILD) --minutes $(SOAK_MINUTES)

bench: build
	bench/run-bench.sh $(BUILD)

# The seed patches' experiments as interleaved A/Bs of their switches
# (bench/seeds.sh): bench/results/seeds.md, and PNG plots with Debian's
# python3-matplotlib (installed here if missing; the report is written
# without plots if that fails).
bench-seeds: build
	@dpkg-query -W -f='$${Status}' python3-matplotlib 2>/dev/null | grep -q 'install ok installed' || \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-matplotlib >/dev/null || true
	bench/seeds.sh $(BUILD)

demo: build
	demo/run-demo.sh $(BUILD)

# uuring run in a real Docker container (starts a daemon if none answers).
demo-docker: build
	demo/docker-demo.sh $(BUILD)

# liburing's test suite on the kernel and on uuring (the routed liburing
# build), side by side.  LIBURING_VERSION=2.9 (default: Debian trixie's
# source package) or 2.3 (bookworm's); each has its own pass list,
# conformance/passlist-VERSION.txt.
LIBURING_VERSION ?= 2.9
export LIBURING_VERSION

conformance-api: build
	conformance/run-conformance.sh api $(BUILD)

# The same suite, unmodified liburing under `uuring run --mode=force
# --block-kernel-uring`.  LIBURING_SRC=dir: another checkout.
conformance: build
	conformance/run-conformance.sh intercept $(BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) build-clang build-asan build-tsan build-fuzz build-cov
