#!/bin/sh
# c63-dec-bench.sh: decoding speed of 1080p streams, every way the decoder
# is used, in one go:
#   the library (c63-decode-bench, the stream in memory): the CUDA backend
#     entropy-decoding on the GPU, the same into CUDA memory (and each
#     picture copied from there into device buffers, as c63dec does), the CUDA
#     backend with entropy decoding on the CPU threads
#     (C63_CUDA_CPU_ENTROPY=1), and the CPU backend;
#   c63-dec IN.c63 OUT.yuv, tmpfs to tmpfs, on the same three, beside dd
#     writing as many bytes into the same tmpfs (c63-dec cannot go faster);
#   filesrc ! c63parse ! c63dec ! video/x-raw(memory:CUDAMemory) ! fakesink,
#     and into system memory (c63dec ! fakesink);
#   filesrc ! c63parse ! c63dec ! c63cudaenc ! fakesink, a transcode that
#     stays on the GPU (the caps between the two are checked to be
#     memory:CUDAMemory).
# The streams: tests/data/conformance/mandel_1920x1080.c63 repeated to
# FRAMES frames, and real footage (bench/real-footage.sh, REAL_FRAMES
# pictures of it, default 82, coded by c63-enc at quality 25 and repeated to
# FRAMES; every repetition starts with a keyframe) when REAL_YUV names such
# a clip (1920x1080 I420) or real-footage.sh can make one (REAL_MP4=path, or
# Debian's forensics-samples-files installed). Prints each run and the
# median of RUNS runs, and checks that all ways wrote the same pictures.
# Speed is measured here, never asserted. Run from the repository root.
#
# usage: c63-dec-bench.sh BIN_DIR [FRAMES] [RUNS]
#   BIN_DIR holds c63-enc, c63-dec, c63-decode-bench and libgstc63.so
#   (tests/cuda/gpu-pack.sh), or is a build directory (its tools/, bench/
#   and gst/ are searched). GST_PLUGIN_PATH defaults to where libgstc63.so
#   is; on the GPU machine, source the kit's env.sh first. Parts whose
#   programs or elements are missing are skipped with a note.
# Pipelines: startup (plugin load, CUDA context) is reported apart: a
# 10-frame stream is timed too, steady = (FRAMES - 10) / (t - t10).
# SWEEP="BATCHxBATCHES ..." (e.g. "16x3 32x3 32x4 64x2") adds library runs
# of the CUDA backend with GPU entropy decoding in batches of BATCH frames,
# BATCHES in flight (c63-decode-bench --batch/--batches), to tune
# c63_cuda_decoder_policy.
set -eu
bin=${1:?usage: $0 BIN_DIR [FRAMES] [RUNS]}
frames=${2:-3000}; runs=${3:-3}
find_prog() { # name -> path, or nothing
  for d in "$bin" "$bin/tools" "$bin/bench" "$bin/gst"; do
    [ -e "$d/$1" ] && { echo "$d/$1"; return 0; }
  done
  return 0
}
enc=$(find_prog c63-enc); dec=$(find_prog c63-dec); lib=$(find_prog c63-decode-bench)
plugin=$(find_prog libgstc63.so)
[ -n "$plugin" ] && export GST_PLUGIN_PATH="${GST_PLUGIN_PATH:-$(dirname "$plugin")}"
[ -n "$lib" ] || { echo "no c63-decode-bench in $bin" >&2; exit 1; }
dir=${SHM:-/dev/shm}/c63-dec-bench.$$
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
# a signal ends the script (a trap that returns would let it go on)
trap "exit 130" INT
trap "exit 143" TERM

now() { date +%s.%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
elapsed() { echo "$1 $2" | awk '{printf "%.4f", $2 - $1}'; }
fps_of() { echo "$1 $2" | awk '{ printf("%.1f", $2 > 0 ? $1 / $2 : 0) }'; }
# whole / steady fps from FRAMES in t and 10 frames in t10
rates() { echo "$frames $1 $2" | awk '{ d = $2 - $3; printf("%.1f %.1f", $1 / $2, d > 0 ? ($1 - 10) / d : 0) }'; }
frames_in() { "$lib" --backend cpu -f 1 -n 1 "$1" 2> /dev/null | sed -n 's/.*: \([0-9]*\) frames (.*/\1/p'; }

# stream IN repeated to FRAMES frames (OUT) and to 10 (OUT10)
repeat_stream() { # in out
  n=$(frames_in "$1")
  if [ -z "$n" ] || [ "$n" -lt 1 ]; then echo "$1: no frames" >&2; return 1; fi
  : > "$2"; i=0
  while [ "$i" -lt $(( (frames + n - 1) / n )) ]; do cat "$1" >> "$2"; i=$((i + 1)); done
  : > "$2.10"; i=0
  while [ "$i" -lt $(( (10 + n - 1) / n )) ]; do cat "$1" >> "$2.10"; i=$((i + 1)); done
}

library() { # stream label
  sweep=""
  for b in ${SWEEP:-}; do
    sweep="$sweep --backend=cuda,--batch=${b%x*},--batches=${b#*x}"
    sweep="$sweep --backend=cuda,--device-out,--batch=${b%x*},--batches=${b#*x}"
  done
  for mode in "--backend cuda" "--backend cuda --device-out" \
    "--backend cuda --device-out --copy-out=cuda" "--backend cuda --cpu-entropy" \
    "--backend cpu" $sweep; do
    mode=$(echo "$mode" | tr ',' ' ')
    # shellcheck disable=SC2086 # mode is a list of options
    "$lib" $mode -f "$frames" -n "$runs" "$1" > "$dir/lib.log" 2>&1 ||
      { echo "$2: c63-decode-bench $mode: not usable here ($(grep -m 1 '^c63-decode-bench:' "$dir/lib.log"))"; continue; }
    sum=$(sed -n 's/^pictures checksum.* \([0-9a-f]*\)$/\1/p' "$dir/lib.log")
    echo "$2: library $mode: $(sed -n 's/^median: //p' "$dir/lib.log")${sum:+, pictures $sum}"
  done
}

file_to_file() { # stream label
  bytes=$(( frames * 1920 * 1080 * 3 / 2 ))
  t0=$(now)
  dd if=/dev/zero of="$dir/zero.yuv" bs=1M count=$(( bytes >> 20 )) 2> /dev/null
  t1=$(now)
  rm -f "$dir/zero.yuv"
  echo "$2: dd, $frames pictures' bytes into tmpfs: $(fps_of "$frames" "$(elapsed "$t0" "$t1")") fps"
  [ -n "$dec" ] || { echo "$2: no c63-dec"; return 0; }
  for mode in cuda cuda-cpu-entropy cpu; do
    b=${mode%%-*}
    e=$([ "$mode" = cuda-cpu-entropy ] && echo 1 || echo 0)
    C63_CUDA_CPU_ENTROPY=$e "$dec" --quiet --backend "$b" "$1.10" "$dir/warm.yuv" 2> /dev/null ||
      { echo "$2: c63-dec --backend $mode: not usable here"; continue; }
    all=""
    for i in $(seq 1 "$runs"); do
      # a new file each run, as for dd (replacing one times freeing its pages)
      rm -f "$dir/out-$mode.yuv"
      t0=$(now)
      C63_CUDA_CPU_ENTROPY=$e "$dec" --quiet --backend "$b" "$1" "$dir/out-$mode.yuv" 2> /dev/null
      t1=$(now)
      C63_CUDA_CPU_ENTROPY=$e "$dec" --quiet --backend "$b" "$1.10" "$dir/warm.yuv" 2> /dev/null
      t2=$(now)
      all="$all$(rates "$(elapsed "$t0" "$t1")" "$(elapsed "$t1" "$t2")")
"
    done
    echo "$2: c63-dec --backend $mode file to file: median whole" \
      "$(printf '%s' "$all" | cut -d' ' -f1 | median) fps, steady" \
      "$(printf '%s' "$all" | cut -d' ' -f2 | median) fps"
    if [ "$mode" != cuda ] && [ -f "$dir/out-cuda.yuv" ]; then
      if cmp -s "$dir/out-cuda.yuv" "$dir/out-$mode.yuv"; then
        echo "$2: c63-dec $mode and cuda: identical"
      else
        echo "$2: c63-dec $mode and cuda pictures DIFFER"; status=1
      fi
      rm -f "$dir/out-$mode.yuv"
    fi
  done
  rm -f "$dir"/out-*.yuv "$dir/warm.yuv"
}

pipeline_secs() { # stream tail-of-pipeline
  t0=$(now)
  # shellcheck disable=SC2086 # the tail is a pipeline fragment
  gst-launch-1.0 -q filesrc location="$1" ! c63parse ! c63dec $2 > /dev/null || return 1
  t1=$(now)
  elapsed "$t0" "$t1"
}

pipelines() { # stream label
  if ! command -v gst-launch-1.0 > /dev/null || ! gst-inspect-1.0 c63dec > /dev/null 2>&1; then
    echo "$2: no gst-launch-1.0 or c63dec: pipelines skipped"; return 0
  fi
  # the transcode's caps between c63dec and c63cudaenc
  if gst-launch-1.0 -v filesrc location="$1.10" ! c63parse ! c63dec ! c63cudaenc name=enc ! \
    fakesink 2> /dev/null | grep -q 'enc.GstPad:sink: caps = video/x-raw(memory:CUDAMemory)'; then
    echo "$2: c63dec ! c63cudaenc negotiates memory:CUDAMemory"
  else
    echo "$2: c63dec ! c63cudaenc does NOT negotiate memory:CUDAMemory (or fails)"
  fi
  for tail in "! video/x-raw(memory:CUDAMemory) ! fakesink sync=false" "! fakesink sync=false" \
    "! c63cudaenc ! fakesink sync=false"; do
    pipeline_secs "$1.10" "$tail" > /dev/null 2>&1 ||
      { echo "$2: c63dec $tail: not usable here"; continue; }
    all=""
    for i in $(seq 1 "$runs"); do
      t=$(pipeline_secs "$1" "$tail")
      t10=$(pipeline_secs "$1.10" "$tail")
      all="$all$(rates "$t" "$t10")
"
    done
    echo "$2: filesrc ! c63parse ! c63dec $tail: median whole" \
      "$(printf '%s' "$all" | cut -d' ' -f1 | median) fps, steady" \
      "$(printf '%s' "$all" | cut -d' ' -f2 | median) fps"
  done
}

bench_stream() { # stream label
  echo "== $2: $frames frames, $(wc -c < "$1") bytes"
  library "$1" "$2"
  file_to_file "$1" "$2"
  pipelines "$1" "$2"
}

status=0
data=${C63_TEST_DATA:-tests/data}
repeat_stream "$data/conformance/mandel_1920x1080.c63" "$dir/mandel.c63"
bench_stream "$dir/mandel.c63" mandel
rm -f "$dir"/mandel.c63*

real=${REAL_YUV:-}
if [ -z "$real" ] && [ -n "$enc" ]; then
  sh bench/real-footage.sh "$dir/real.yuv" "${REAL_FRAMES:-82}" ${REAL_MP4:+"$REAL_MP4"} \
    > /dev/null 2>&1 && real=$dir/real.yuv
fi
if [ -n "$real" ] && [ -n "$enc" ]; then
  "$enc" --backend cuda -q 25 -w 1920 -h 1080 -o "$dir/real1.c63" "$real" > /dev/null 2>&1 ||
    "$enc" -q 25 -w 1920 -h 1080 -o "$dir/real1.c63" "$real" > /dev/null 2>&1
  rm -f "$dir/real.yuv"
  repeat_stream "$dir/real1.c63" "$dir/real.c63"
  bench_stream "$dir/real.c63" "real footage q25"
else
  echo "== real footage: none (REAL_YUV, REAL_MP4, or forensics-samples-files and c63-enc)"
fi
exit $status
