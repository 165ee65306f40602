#!/bin/sh
# run-fuzzer.sh: build one libFuzzer target of tests/fuzz with clang
# (-fsanitize=fuzzer,address,undefined, libc63's C sources without CUDA)
# and run it for SECONDS, starting from the seeds and the corpus it keeps
# in the build directory. Exit status 77 (skipped) when clang cannot build
# fuzzers here; non-zero when the target found a crash (the reproducer is
# left in the build directory as crash-*).
#
# usage: run-fuzzer.sh TARGET SOURCE_ROOT BUILD_DIR SECONDS [SEED...]
#   TARGET: decoder, encoder, headers, framer, gst or gstelements. For hours: tests/fuzz/fuzz-long.sh.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
target=$1 src=$2 out=$3 seconds=$4
shift 4
cc=${CLANG:-clang}
command -v "$cc" > /dev/null || { echo "SKIP: no clang"; exit 77; }
mkdir -p "$out/fuzz-$target.inc" "$out/corpus-$target"
# libc63's configuration without the CUDA backend (GPU code is not fuzzed
# here), with this machine's SIMD files as meson.build picks them, and a
# version of 0.0.0
case $(uname -m) in
x86_64 | i?86) x86=1 arm=0 other_simd='_neon' ;;
aarch64) x86=0 arm=1 other_simd='_sse41|_avx2' ;;
*) x86=0 arm=0 other_simd='_neon|_sse41|_avx2' ;;
esac
printf '#pragma once\n#define HAVE_CUDA 0\n#define C63_VERSION "0.0.0"\n#define C63_VERSION_MAJOR 0\n#define C63_VERSION_MINOR 0\n#define C63_VERSION_MICRO 0\n' \
  > "$out/fuzz-$target.inc/c63-config.h"
printf '#define C63_ARCH_X86 %s\n#define C63_ARCH_AARCH64 %s\n' $x86 $arm \
  >> "$out/fuzz-$target.inc/c63-config.h"
c63_sources=
for f in "$src"/c63/*.c; do
  echo "$f" | grep -Eq "($other_simd)\.c$" || c63_sources="$c63_sources $f"
done
bin=$out/fuzz_$target
# The gst and gstelements targets compile the elements in as well, so
# libFuzzer sees their branches, and links GStreamer (not instrumented).
extra=
case $target in
gst)
  elements="$src/gst/c63dec/gstc63dec.c $src/gst/c63dec/gstc63framer.c
    $src/gst/c63dec/gstc63decoutput.c $src/gst/c63parse/gstc63parse.c
    $src/gst/c63parse/gstc63index.c $src/gst/c63parse/gstc63indexer.c
    $src/gst/common/gstc63videolayout.c
    $src/gst/common/gstc63pinnedallocator.c" ;;
gstelements)
  elements="$src/gst/c63enc/gstc63encbase.c $src/gst/common/gstc63pinnedallocator.c $src/gst/c63enc/gstc63memoryregistry.c
    $src/gst/c63dec/gstc63dec.c $src/gst/c63dec/gstc63framer.c $src/gst/c63dec/gstc63decoutput.c
    $src/gst/common/gstc63videolayout.c" ;;
*) elements= ;;
esac
if [ -n "$elements" ]; then
  pkgs="gstreamer-check-1.0 gstreamer-video-1.0 gstreamer-base-1.0 gstreamer-1.0"
  pkg-config --exists $pkgs || { echo "SKIP: no GStreamer development files"; exit 77; }
  extra="-I$src/gst -I$src -DPACKAGE=\"gst-c63\" -DPACKAGE_VERSION=\"fuzz\" $elements
    $(pkg-config --cflags --libs $pkgs)"
fi
# $c63_sources and $extra are split into words on purpose
# shellcheck disable=SC2086
if ! "$cc" -std=c11 -O1 -g -fno-omit-frame-pointer -ffp-contract=off -D_GNU_SOURCE \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$out/fuzz-$target.inc" -I"$src/include" -I"$src/c63" \
    "$src/tests/fuzz/fuzz_$target.c" $c63_sources $extra -lm -lpthread -o "$bin" 2> "$bin.log"; then
  if grep -q "fuzzer" "$bin.log"; then
    echo "SKIP: this clang cannot build libFuzzer targets:"; tail -3 "$bin.log"; exit 77
  fi
  cat "$bin.log"; exit 1
fi
# -timeout: one input taking over 10 s is a hang; -rss_limit_mb: a leak or
# a runaway allocation. New inputs go to the corpus, crashes to $out.
mkdir -p "$out/seeds-$target"
[ $# -eq 0 ] || cp "$@" "$out/seeds-$target/" # libFuzzer reads directories
status=0
# GStreamer and GLib keep allocations for the life of the process (type
# system, thread pools), which LeakSanitizer reports at exit; the elements'
# own leaks are the leaks tracer's job (docs/soak.md, gst-restart-short).
if [ -n "$elements" ]; then
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
  export ASAN_OPTIONS
fi
"$bin" -max_total_time="$seconds" -max_len=32768 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$out/" "$out/corpus-$target" "$out/seeds-$target" \
  > "$out/fuzz_$target.run.log" 2>&1 || status=$?
grep -E "DONE|stat::number_of_executed_units|ERROR|SUMMARY|Test unit written" \
  "$out/fuzz_$target.run.log" | tail -6
exit $status
