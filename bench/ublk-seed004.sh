#!/bin/bash
# SPDX-License-Identifier: MIT
# The per-io daemon experiment (Linux 6.16) on uuring's ublk driver:
# per-io daemons (UBLK_F_PER_IO_DAEMON) against per-queue daemons, null target,
# 2 queues of depth 128, the load from CPU 0, plus one server thread as
# the floor; interleaved rounds, medians with a distribution-free
# interval, each server thread's share and CPU time
# (tests/test_ublk_seed004.h).  The load goes through the driver's
# block side (uuring_ublk_bdev_io), not /dev/ublkbN, so neither root nor
# FUSE is needed.
#
#   bench/ublk-seed004.sh [ROUNDS [SECONDS [DEPTH]]]   (default 15 3 32)
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
[ -x "$BUILD/tests/test_ublk" ] || { echo "skip: no $BUILD/tests/test_ublk"; exit 77; }
UBLK_SEED004_REPS=${1:-15} UBLK_SEED004_SECS=${2:-3} \
UBLK_SEED004_DEPTH=${3:-32} exec "$BUILD/tests/test_ublk" seed004
