#!/bin/sh
# Cross-build the library, the tools and the tests for aarch64 (the CPU of
# NVIDIA's Jetson boards) with cross/aarch64-linux-gnu.ini in build-aarch64/,
# and run the tests that cover the encoder, the decoder and every DSP
# function (the NEON versions against C) under qemu-user: the unit,
# conformance (the same bytes as on x86-64) and roundtrip suites, the
# decoder's quick robustness tests and the rd mode's. The long robustness
# and fuzz runs stay on x86-64 (the code they exercise is the same C);
# emulation is slower, so the tests get ten times their time limits.
# Without the plugin: Debian 12's GStreamer -dev packages for arm64 cannot be
# installed next to the amd64 ones (docs/jetson.md).
# Usage: tools/run-tests-aarch64.sh [extra meson test arguments]
# AARCH64_BUILD=dir selects the build directory (default: build-aarch64).
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
cd "$(dirname "$0")/.."
BUILD=${AARCH64_BUILD:-build-aarch64}

for tool in aarch64-linux-gnu-gcc qemu-aarch64; do
  if ! command -v $tool >/dev/null 2>&1; then
    echo "run-tests-aarch64.sh: $tool missing: run tools/setup-debian.sh" >&2
    exit 1
  fi
done
if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" --cross-file cross/aarch64-linux-gnu.ini -Dcuda=disabled -Dgst=disabled
fi
ninja -C "$BUILD"
run() {
  meson test -C "$BUILD" --timeout-multiplier 10 --print-errorlogs "$@"
}
if [ $# -gt 0 ]; then
  run "$@"
  exit
fi
status=0
run --suite unit --suite conformance --suite roundtrip || status=$?
run tolerance decode_send_receive frame_scan decoder_memory encoder_params rd_mode || status=$?
exit $status
