#!/bin/sh
# farm-bench.sh: c63-farm's encode and decode speed on 1, 2, 4 ... GPUs of one
# host, against c63-enc and c63-dec alone on one GPU (docs/farm.md,
# "Measuring"). Speed is measured and printed, never asserted.
#
# usage: farm-bench.sh INPUT.yuv [WIDTH HEIGHT]     (default 1920 1080)
#   INPUT is made when missing: SYNTH_FRAMES frames of tools/c63-synth
#   (default 300), repeated up to FRAMES (default 9000); put it in /dev/shm.
# Settings (environment):
#   TOOLS=DIR    c63-farm, c63-enc, c63-dec, c63-synth (default: the build's
#                tools/ next to this script, build/tools)
#   GPUS="1 2 4" GPU counts to run the farm on (CUDA devices 0..N-1)
#   K=100        keyframe interval
#   CHUNK=N      frames per chunk (default: the frames over the GPUs, rounded
#                up to a multiple of K: one chunk per GPU)
#   OUT=DIR      where the streams and pictures go (default /dev/shm)
#   WHEELS=DIR   wheels of dask and distributed (pip download, docs/farm.md),
#                unpacked into a scratch folder put on PYTHONPATH
#   PYTHON=python3
#   BACKEND=cuda (cpu: a dry run of this script on a machine without GPU)
# Each farm line says whether its output is byte-identical to the single
# process's. The farm's fps count from its cluster's being up (the cluster
# start is printed apart by the farm's timing: chunks, join).
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
in=${1:?usage: $0 INPUT.yuv [WIDTH HEIGHT]}
w=${2:-1920} h=${3:-1080}
here=$(cd "$(dirname "$0")" && pwd)
tools=${TOOLS:-$here/../build/tools}
gpus=${GPUS:-1 2 4}
k=${K:-100}
out=${OUT:-/dev/shm}
py=${PYTHON:-python3}
backend=${BACKEND:-cuda}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out/farm-bench-ref.c63" "$out/farm-bench-farm.c63" \
  "$out/farm-bench-ref.yuv" "$out/farm-bench-farm.yuv"' EXIT INT TERM

if [ -n "${WHEELS:-}" ]; then
  for wheel in "$WHEELS"/*.whl; do
    "$py" -m zipfile -e "$wheel" "$tmp/pylib"
  done
  PYTHONPATH=$tmp/pylib${PYTHONPATH:+:$PYTHONPATH}
  export PYTHONPATH
fi
# The package next to this script, wherever the build that names it went.
PYTHONPATH=$here/farm${PYTHONPATH:+:$PYTHONPATH}
export PYTHONPATH
"$py" -c 'import distributed' || { echo "farm-bench: no Dask for $py (WHEELS=DIR?)"; exit 1; }

frame=$((w * h + 2 * ((w + 1) / 2) * ((h + 1) / 2)))
if [ ! -f "$in" ]; then
  "$tools/c63-synth" -w "$w" -h "$h" -f "${SYNTH_FRAMES:-300}" "$tmp/synth.yuv" > /dev/null
  : > "$in"
  while [ $(($(wc -c < "$in") / frame)) -lt "${FRAMES:-9000}" ]; do cat "$tmp/synth.yuv" >> "$in"; done
  truncate -s $((${FRAMES:-9000} * frame)) "$in"
fi
frames=$(($(wc -c < "$in") / frame))
echo "input: $in, ${w}x${h}, $frames frames, keyframe interval $k"

fps_of() { sed -n 's/.* \([0-9.]*\) fps.*/\1/p' "$1" | tail -n 1; }
ratio() { echo "$1 $2" | awk '{ if ($2 > 0) printf "%.2f", $1 / $2; else print "-" }'; }
same() { if cmp -s "$1" "$2"; then echo identical; else echo DIFFERENT; fi; }
devices() { seq -s, 0 $(($1 - 1)); }
# CHUNK, or the frames over $1 GPUs rounded up to whole keyframe intervals
# shellcheck disable=SC2017 # the division rounds on purpose
chunk_for() { echo "${CHUNK:-$(( (frames + $1 * k - 1) / ($1 * k) * k ))}"; }

ref="$out/farm-bench-ref.c63" farm="$out/farm-bench-farm.c63"
"$tools/c63-enc" --backend "$backend" -w "$w" -h "$h" -k "$k" -o "$ref" "$in" 2> "$tmp/enc.log"
enc_fps=$(fps_of "$tmp/enc.log")
echo "encode: c63-enc --backend $backend alone: $enc_fps fps"
for g in $gpus; do
  chunk=$(chunk_for "$g")
  CUDA_VISIBLE_DEVICES=$(devices "$g") "$py" "$tools/c63-farm" encode --backend "$backend" \
    --workers "$g" -w "$w" -h "$h" -k "$k" --chunk-frames "$chunk" -o "$farm" "$in" \
    2> "$tmp/farm.log" || { cat "$tmp/farm.log"; exit 1; }
  f=$(fps_of "$tmp/farm.log")
  echo "encode: c63-farm on $g GPU(s), chunks of $chunk: $f fps ($(ratio "$f" "$enc_fps")x" \
    "c63-enc), $(same "$ref" "$farm"); $(grep -o '(chunks.*)' "$tmp/farm.log")"
done

t0=$(date +%s.%N)
"$tools/c63-dec" --backend "$backend" "$ref" "$out/farm-bench-ref.yuv" 2> "$tmp/dec.log"
t1=$(date +%s.%N)
# c63-dec prints no speed: the wall clock of the whole command
dec_fps=$(echo "$frames $t0 $t1" | awk '{ printf "%.1f", $1 / ($3 - $2) }')
echo "decode: c63-dec --backend $backend alone: $dec_fps fps (wall clock, process start included)"
for g in $gpus; do
  chunk=$(chunk_for "$g")
  CUDA_VISIBLE_DEVICES=$(devices "$g") "$py" "$tools/c63-farm" decode --backend "$backend" \
    --workers "$g" --chunk-frames "$chunk" -o "$out/farm-bench-farm.yuv" "$ref" \
    2> "$tmp/farm.log" || { cat "$tmp/farm.log"; exit 1; }
  f=$(fps_of "$tmp/farm.log")
  echo "decode: c63-farm on $g GPU(s), pieces of $chunk: $f fps ($(ratio "$f" "$dec_fps")x" \
    "c63-dec), $(same "$out/farm-bench-ref.yuv" "$out/farm-bench-farm.yuv");" \
    "$(grep -o '(pieces.*)' "$tmp/farm.log")"
done
