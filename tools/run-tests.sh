#!/bin/sh
# Configure (first time), build and run every test with `meson test`.
# Usage: tools/run-tests.sh [extra meson test arguments]
# BUILD=dir selects the build directory (default: build).
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}

if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD"
fi
ninja -C "$BUILD"
status=0
meson test -C "$BUILD" --print-errorlogs "$@" || status=$?
# meson shows a skipped test as "exit status 77" only: print each one's
# reason (the SKIP line the test wrote), e.g. that no CUDA device is there.
python3 - "$BUILD/meson-logs/testlog.json" <<'PY' || true
import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    if t.get("result") == "SKIP":
        why = [l for l in (t.get("stdout") or "").splitlines() if "SKIP" in l]
        print("skipped %s: %s" % (t["name"], why[0] if why else "(no reason printed)"))
PY
exit $status
