#!/bin/sh
# entropy-ab.sh: the CPU entropy decoder of two commits, single thread, in
# one go (docs/performance.md): tests/bench_entropy of the working tree is
# built against each commit's library, then run in interleaved rounds on one
# core, and the medians printed. Speed is measured, never asserted.
#
# usage: bench/entropy-ab.sh OLD [NEW] [ROUNDS]   (NEW: HEAD; ROUNDS: 5)
# Streams: tests/data/conformance/mandel_1920x1080.c63, a natural 1080p
# clip (tools/c63-synth --scene natural, 20 frames, c63-enc quality 25,
# a keyframe every 10), and where bench/real-footage.sh can make it (Debian's
# forensics-samples-files and an H.264 decoder installed) 82 pictures of
# real footage coded by c63-enc at quality 25; made with NEW's tools.
# Settings (environment): CPU=1 the core to pin to; WORK=DIR keeps the
# builds and the clip there (default: a scratch folder, removed).
# bench_entropy counts the decoding thread's CPU time, so that other load
# on a shared machine counts little; both builds are measured alike.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
old=$(git -C "$src" rev-parse --short "${1:?usage: $0 OLD [NEW] [ROUNDS]}")
new=$(git -C "$src" rev-parse --short "${2:-HEAD}")
rounds=${3:-5}
cpu=${CPU:-1}
if [ -n "${WORK:-}" ]; then
  work=$WORK
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  # a signal ends the script (a trap that returns would let it go on)
  trap "exit 130" INT
  trap "exit 143" TERM
fi

# The library of a commit, and the working tree's bench_entropy against it.
build() {
  dir=$work/$1
  if [ ! -x "$dir/bench_entropy" ]; then
    rm -rf "$dir"
    mkdir -p "$dir/src"
    git -C "$src" archive "$1" | tar -x -C "$dir/src"
    meson setup "$dir/build" "$dir/src" -Dcuda=disabled > "$dir/setup.log"
    ninja -C "$dir/build" c63/libc63-internal.a tools/c63-synth tools/c63-enc > "$dir/build.log"
    # Commits from before include/ keep c63.h in c63/.
    cc -O3 -std=c11 -D_GNU_SOURCE -pthread -I"$dir/src/include" -I"$dir/src" -I"$dir/build" \
      "$src/tests/bench_entropy.c" "$dir/build/c63/libc63-internal.a" -lm -o "$dir/bench_entropy"
  fi
}

build "$old"
build "$new"
nat=$work/natural_1920x1080_q25.c63
if [ ! -f "$nat" ]; then
  "$work/$new/build/tools/c63-synth" -w 1920 -h 1080 -f 20 --scene natural "$work/nat.yuv" \
    > /dev/null
  "$work/$new/build/tools/c63-enc" -w 1920 -h 1080 -q 25 -k 10 --quiet -o "$nat" "$work/nat.yuv"
  rm -f "$work/nat.yuv"
fi

real=$work/real_1920x1080_q25.c63
if [ ! -f "$real" ] && sh "$src/bench/real-footage.sh" "$work/real.yuv" 82 > /dev/null 2>&1; then
  "$work/$new/build/tools/c63-enc" -w 1920 -h 1080 -q 25 --quiet -o "$real" "$work/real.yuv"
fi
rm -f "$work/real.yuv"
[ -f "$real" ] || real=

# The median fps of commit $1 in $work/fps.
median() {
  awk -v c="$1" '$1 == c { print $2 }' "$work/fps" | sort -n |
    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

for stream in "$src/tests/data/conformance/mandel_1920x1080.c63" "$nat" $real; do
  : > "$work/fps"
  r=0
  while [ "$r" -lt "$rounds" ]; do
    for c in "$old" "$new"; do
      fps=$(taskset -c "$cpu" "$work/$c/bench_entropy" "$stream" 5 |
        sed -n 's/.* MB\/s, \([0-9.]*\) fps (median.*/\1/p')
      echo "$c $fps" >> "$work/fps"
    done
    r=$((r + 1))
  done
  a=$(median "$old")
  b=$(median "$new")
  echo "$(basename "$stream"): $old $a fps, $new $b fps ($(awk -v a="$a" -v b="$b" \
    'BEGIN { printf "%.2f", b / a }') times; medians of $rounds interleaved rounds, CPU $cpu)"
done
