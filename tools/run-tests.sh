#!/bin/sh
# Configure (first time), build and run every test with `meson test`; then,
# for a full run (no arguments), the unit and CLI tests again under ASan and
# UBSan in a second build directory (`meson test --setup=asan`), and the
# aarch64 build's tests under qemu-user (tools/run-tests-aarch64.sh).
# Usage: tools/run-tests.sh [extra meson test arguments]
# BUILD=dir selects the build directory (default: build); ASAN_BUILD=dir the
# sanitizer one (default: build-asan); ASAN=0 leaves the sanitizer run out,
# AARCH64=0 the aarch64 one.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ASAN_BUILD=${ASAN_BUILD:-build-asan}
ASAN=${ASAN:-1}
AARCH64=${AARCH64:-1}
[ $# -eq 0 ] || { ASAN=0; AARCH64=0; }

# meson shows a skipped test as "exit status 77" only: print each one's
# reason (the SKIP line the test wrote), e.g. that no CUDA device is there.
report_skips() {
  python3 - "$1" <<'PY' || true
import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    if t.get("result") == "SKIP":
        why = [l for l in (t.get("stdout") or "").splitlines() if "SKIP" in l]
        print("skipped %s: %s" % (t["name"], why[0] if why else "(no reason printed)"))
PY
}

if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD"
fi
ninja -C "$BUILD"
status=0
meson test -C "$BUILD" --print-errorlogs "$@" || status=$?
report_skips "$BUILD/meson-logs/testlog.json"

# The sanitizers need no CUDA (nvcc does not take -fsanitize) nor the
# plugin: only the library, the tools and the tests run are built.
if [ "$ASAN" != 0 ]; then
  if [ ! -f "$ASAN_BUILD/build.ninja" ]; then
    meson setup "$ASAN_BUILD" -Db_sanitize=address,undefined -Dcuda=disabled -Dgst=disabled
  fi
  meson test -C "$ASAN_BUILD" --setup=asan --suite unit --suite cli --print-errorlogs ||
    status=$?
  report_skips "$ASAN_BUILD/meson-logs/testlog-asan.json"
fi

if [ "$AARCH64" != 0 ]; then
  ./tools/run-tests-aarch64.sh || status=$?
fi
exit $status
