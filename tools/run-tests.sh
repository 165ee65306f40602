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
meson test -C "$BUILD" --print-errorlogs "$@"
