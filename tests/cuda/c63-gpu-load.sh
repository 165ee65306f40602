#!/bin/sh
# c63-gpu-load.sh: N encoders and N decoders on one GPU at once, every output
# checked (docs/soak.md). Run from the repository root with the plugin on
# GST_PLUGIN_PATH:
#
#   tests/cuda/c63-gpu-load.sh BIN_DIR [N] [FRAMES] [WORK_DIR]
#
# BIN_DIR holds c63-synth, c63-enc and c63-dec. Each encoder gets its own
# synthetic clip (sizes differ, so no two outputs are alike); the CPU
# encoder writes the expected stream first. Then, all at once, N
# gst-launch-1.0 processes encode their clip with c63cudaenc and N decode
# the expected streams with c63dec (CUDA backend). Every stream must equal
# the CPU encoder's bytes and every decoded file the CPU decoder's.
set -u
enc=${C63_LOAD_ENC:-c63cudaenc}          # the CPU pair for a dry run: c63enc, cpu
dec_backend=${C63_LOAD_DEC_BACKEND:-cuda}
bin=${1:?usage: $0 BIN_DIR [N] [FRAMES] [WORK_DIR]}
n=${2:-8}
frames=${3:-300}
dir=${4:-${TMPDIR:-/tmp}/c63-gpu-load}
mkdir -p "$dir"
# Sizes with GStreamer's default I420 strides equal to the packed layout
# (widths multiples of 8), so rawvideoparse and the tools agree.
sizes="1920x1080 1280x720 1600x896 1024x768 1920x800 1440x1080 960x544 1280x1024"
i=0
for s in $sizes; do
  [ $i -ge "$n" ] && break
  w=${s%x*} h=${s#*x}
  "$bin/c63-synth" -w "$w" -h "$h" -f "$frames" "$dir/in$i.yuv" > /dev/null || exit 1
  "$bin/c63-enc" --backend cpu -w "$w" -h "$h" -o "$dir/want$i.c63" "$dir/in$i.yuv" > /dev/null ||
    exit 1
  "$bin/c63-dec" --backend cpu "$dir/want$i.c63" "$dir/want$i.yuv" > /dev/null || exit 1
  i=$((i + 1))
done
[ $i -eq "$n" ] || { echo "at most 8 sizes"; exit 2; }

t0=$(date +%s.%N)
pids=
i=0
for s in $sizes; do
  [ $i -ge "$n" ] && break
  w=${s%x*} h=${s#*x}
  gst-launch-1.0 -q filesrc location="$dir/in$i.yuv" ! \
    rawvideoparse format=i420 width="$w" height="$h" framerate=25/1 ! \
    "$enc" ! filesink location="$dir/got$i.c63" > "$dir/enc$i.log" 2>&1 &
  pids="$pids $!"
  gst-launch-1.0 -q filesrc location="$dir/want$i.c63" ! c63parse ! c63dec backend="$dec_backend" ! \
    video/x-raw,format=I420 ! filesink location="$dir/got$i.yuv" > "$dir/dec$i.log" 2>&1 &
  pids="$pids $!"
  i=$((i + 1))
done
fail=0
for pid in $pids; do
  wait "$pid" || fail=1
done
t1=$(date +%s.%N)
echo "$n encoders and $n decoders of $frames frames at once: $(echo "$t0 $t1" |
  awk '{printf "%.1f", $2 - $1}') s"
i=0
while [ $i -lt "$n" ]; do
  if cmp -s "$dir/want$i.c63" "$dir/got$i.c63"; then e=identical; else e=DIFFERENT; fail=1; fi
  if cmp -s "$dir/want$i.yuv" "$dir/got$i.yuv"; then d=identical; else d=DIFFERENT; fail=1; fi
  echo "pair $i: stream $e to c63-enc --backend cpu, pictures $d to c63-dec --backend cpu"
  [ -s "$dir/enc$i.log" ] && cat "$dir/enc$i.log"
  [ -s "$dir/dec$i.log" ] && cat "$dir/dec$i.log"
  i=$((i + 1))
done
[ $fail -eq 0 ] && echo "load: passed" || echo "load: FAILED"
exit $fail
