#!/bin/sh
# fuzz-long.sh: run the libFuzzer targets of tests/fuzz for a long time
# (hours), each with its own corpus, and report executions and coverage.
# Crashes are left as crash-* files in OUT_DIR; rerun one with
#   OUT_DIR/fuzz_TARGET OUT_DIR/crash-...
#
# usage: tests/fuzz/fuzz-long.sh [SECONDS_PER_TARGET [OUT_DIR [TARGET...]]]
#   defaults: 3600 s, /tmp/c63-fuzz, all targets (decoder encoder headers framer gst)
# Needs clang with libFuzzer (Debian: clang). Run from the repository root.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -u
seconds=${1:-3600}
out=${2:-/tmp/c63-fuzz}
shift 2 2> /dev/null || shift $#
targets=${*:-decoder encoder headers framer gst}
mkdir -p "$out/seeds"
for f in tests/data/conformance/*.c63; do
  head -c 32768 "$f" > "$out/seeds/$(basename "$f" .c63).seed"
done
status=0
for t in $targets; do
  echo "== $t: $seconds s"
  sh tests/fuzz/run-fuzzer.sh "$t" "$PWD" "$out" "$seconds" "$out"/seeds/*.seed || status=1
  grep -E "DONE" "$out/fuzz_$t.run.log" | tail -1
done
exit $status
