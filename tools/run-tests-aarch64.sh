#!/bin/sh
# Cross-build the library, the tools, the GStreamer plugin and the tests for
# aarch64 (the CPU of NVIDIA's Jetson boards) with cross/aarch64-linux-gnu.ini
# in build-aarch64/, against Debian's arm64 GLib and GStreamer unpacked into
# a sysroot (tools/aarch64-sysroot.sh: the arm64 -dev packages cannot be
# installed next to the amd64 ones), and run under qemu-user the tests that
# cover the encoder, the decoder, every DSP function (the NEON versions
# against C) and the elements: the unit, conformance (the same bytes as on
# x86-64) and roundtrip suites, the decoder's quick robustness tests and the
# rd mode's; the element tests of c63enc, c63dec, c63parse, the typefinder
# and the framer, the conformance vectors decoded through c63dec and
# decodebin and encoded and decoded in one pipeline, the short soak and the
# GStreamer fuzz corpora replayed. The long robustness and fuzz runs, the
# element tests of properties and corrupt streams and the conformance
# vectors encoded by c63enc stay on x86-64 (the code they exercise is the
# same C); emulation is slower, so the tests get ten times their time limits.
# Usage: tools/run-tests-aarch64.sh [extra meson test arguments]
# AARCH64_BUILD=dir selects the build directory (default: build-aarch64),
# AARCH64_SYSROOT=dir the sysroot's (default: build-aarch64-sysroot).
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
cd "$(dirname "$0")/.."
BUILD=${AARCH64_BUILD:-build-aarch64}
SYSROOT=${AARCH64_SYSROOT:-build-aarch64-sysroot}

for tool in aarch64-linux-gnu-gcc qemu-aarch64; do
  if ! command -v $tool >/dev/null 2>&1; then
    echo "run-tests-aarch64.sh: $tool missing: run tools/setup-debian.sh" >&2
    exit 1
  fi
done
./tools/aarch64-sysroot.sh "$SYSROOT"
setup() {
  meson setup "$@" "$BUILD" --cross-file cross/aarch64-linux-gnu.ini \
    --cross-file "$SYSROOT/cross.ini" -Dcuda=disabled
}
if [ ! -f "$BUILD/build.ninja" ]; then
  setup
elif ! grep -qF "$SYSROOT/cross.ini" "$BUILD/meson-private/cmd_line.txt"; then
  setup --wipe # configured without the sysroot, by an older version of this script
fi
ninja -C "$BUILD"
# check's own time limit of each element test (CK_DEFAULT_TIMEOUT) as well
run() {
  CK_TIMEOUT_MULTIPLIER=10 meson test -C "$BUILD" --timeout-multiplier 10 --print-errorlogs "$@"
}
if [ $# -gt 0 ]; then
  run "$@"
  exit
fi
status=0
run --suite unit --suite conformance --suite roundtrip || status=$?
run tolerance decode_send_receive frame_scan decoder_memory encoder_params rd_mode || status=$?
run gst-c63enc gst-c63dec gst-c63parse gst-typefind gst-framer gst-soak-short \
  fuzz_replay_gst fuzz_replay_gstelements || status=$?
GST_CHECKS=test_manifest,test_decode_c63dec,test_decode_decodebin,test_decode_1byte_buffers,test_encode_decode \
  run gst-conformance || status=$?
exit $status
