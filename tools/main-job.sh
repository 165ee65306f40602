#!/bin/sh
# The main job: build gst-c63, then encode and decode a 1080p clip and print
# the speed (frames per second) and the quality (PSNR).
#
# With the GStreamer plugin built (build/gst/libgstc63.so) the clip goes
# through gst-launch-1.0: rawvideoparse ! c63enc ! filesink, then
# filesrc ! c63dec ! filesink; c63cudaenc replaces c63enc when a CUDA device
# is usable. Without the plugin, the command-line tools c63-enc and c63-dec
# do the same. The fps figures are wall-clock times of the whole commands,
# start-up and file I/O included.
#
# Environment (all optional):
#   BUILD=build           build directory
#   SKIP_BUILD=1          use the build directory as it is (no meson/ninja)
#   MODE=auto|gst|cli     auto: gst-launch when the plugin exists
#   ENCODER=c63enc        element for MODE=gst (default: c63cudaenc if usable)
#   INPUT=file.yuv WIDTH=1920 HEIGHT=1080   raw I420 input (default: a
#                         synthetic clip made by c63-synth)
#   FRAMES=50             frames of the synthetic clip
#   QUALITY=25            encoder quality
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
MODE=${MODE:-auto}
WIDTH=${WIDTH:-1920}
HEIGHT=${HEIGHT:-1080}
FRAMES=${FRAMES:-50}
QUALITY=${QUALITY:-25}

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  if [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD"
  fi
  ninja -C "$BUILD"
fi
T=$BUILD/tools

WORK=$(mktemp -d "${TMPDIR:-/tmp}/c63-main-job.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

if [ -n "${INPUT:-}" ]; then
  in=$INPUT
  fsize=$((WIDTH * HEIGHT + 2 * ((WIDTH + 1) / 2) * ((HEIGHT + 1) / 2)))
  FRAMES=$(($(wc -c <"$in") / fsize))
else
  in=$WORK/in.yuv
  "$T/c63-synth" -w "$WIDTH" -h "$HEIGHT" -f "$FRAMES" "$in"
fi
echo "input: ${INPUT:-synthetic clip}, ${WIDTH}x${HEIGHT}, $FRAMES frames, quality $QUALITY"

now() { date +%s.%N; }
# fps from frames and two timestamps
fps() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.2f", n / (b - a) }'; }

if [ "$MODE" = auto ]; then
  # GStreamer pads I420 rows to multiples of 4 bytes: raw files match its
  # layout only when the width is a multiple of 8.
  if [ -f "$BUILD/gst/libgstc63.so" ] && command -v gst-launch-1.0 >/dev/null 2>&1 &&
    [ $((WIDTH % 8)) -eq 0 ]; then
    MODE=gst
  else
    MODE=cli
  fi
fi

if [ "$MODE" = gst ]; then
  export GST_PLUGIN_PATH="$ROOT/$BUILD/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
  if [ -z "${ENCODER:-}" ]; then
    ENCODER=c63enc
    if gst-inspect-1.0 c63cudaenc >/dev/null 2>&1; then ENCODER=c63cudaenc; fi
  fi
  fsize=$((WIDTH * HEIGHT + 2 * ((WIDTH + 1) / 2) * ((HEIGHT + 1) / 2)))
  echo "encoder: gst-launch-1.0 ... ! $ENCODER ! ..."
  t0=$(now)
  gst-launch-1.0 -q filesrc location="$in" blocksize=$fsize \
    ! rawvideoparse width="$WIDTH" height="$HEIGHT" format=i420 framerate=25/1 \
    ! "$ENCODER" quality="$QUALITY" ! filesink location="$WORK/out.c63"
  t1=$(now)
  gst-launch-1.0 -q filesrc location="$WORK/out.c63" ! c63dec ! filesink location="$WORK/out.yuv"
  t2=$(now)
else
  echo "encoder: $T/c63-enc (CPU backend)"
  t0=$(now)
  "$T/c63-enc" --quiet -w "$WIDTH" -h "$HEIGHT" -q "$QUALITY" -o "$WORK/out.c63" "$in"
  t1=$(now)
  "$T/c63-dec" --quiet "$WORK/out.c63" "$WORK/out.yuv"
  t2=$(now)
fi

bytes=$(wc -c <"$WORK/out.c63")
echo "stream: $bytes bytes ($(awk -v b="$bytes" -v n="$FRAMES" -v w="$WIDTH" -v h="$HEIGHT" \
  'BEGIN { printf "%.3f", b * 8 / (n * w * h) }') bits per pixel)"
echo "encode: $(fps "$FRAMES" "$t0" "$t1") fps ($MODE)"
echo "decode: $(fps "$FRAMES" "$t1" "$t2") fps ($MODE)"
"$T/c63-psnr" -w "$WIDTH" -h "$HEIGHT" "$in" "$WORK/out.yuv" | sed 's/^/quality: /'
