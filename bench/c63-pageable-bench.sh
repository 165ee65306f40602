#!/bin/sh
# c63-pageable-bench.sh: the CUDA encoder from every kind of input memory, in
# one go on a GPU machine: the library (page-locked, pageable staged by 1, 4
# and all threads, registered), c63cudaenc in-process (its own pool, CUDA
# memory, ordinary buffers recycled and allocated a frame), the pipeline a
# user types first beside the same pipeline without the encoder, c63-enc
# file to file, one library process a GPU where there are several, and what
# the host's memory gives to copies by several threads (the staged route's
# limit). Speed is measured, never asserted.
#
# usage: bench/c63-pageable-bench.sh BIN_DIR INPUT.yuv [OUT_DIR]
#   BIN_DIR as tests/cuda/gpu-pack.sh makes it (c63-cuda-bench,
#   c63-memcpy-bench, c63-element-bench, libgstc63.so, c63-enc); INPUT.yuv
#   1080p I420 (mandel_1920x1080.yuv, or bench/real-footage.sh's clip).
#   GStreamer from PATH (on the GPU machine: the kit's env.sh sourced).
#   FRAMES (default 9000) and RUNS (default 3) set the pipeline's length
#   and rounds; each step's log goes to OUT_DIR/NAME.log.
# Run from the repository root.
set -u
bin=${1:?usage: $0 BIN_DIR INPUT.yuv [OUT_DIR]}
in=${2:?usage: $0 BIN_DIR INPUT.yuv [OUT_DIR]}
out=${3:-${TMPDIR:-/tmp}/c63-pageable-bench}
mkdir -p "$out"
status=0
row() { # name command... : run, keep the log, print the lines that matter
  name=$1; shift
  timeout "${STEP_TIMEOUT:-600}" "$@" > "$out/$name.log" 2>&1 || status=1
  echo "== $name: $*"
  grep -E "median|submit|upload|whole|GB/s|frames per run|fps|ms a buffer|of a core|aggregate|process" \
    "$out/$name.log"
}
command -v nvidia-smi > /dev/null && nvidia-smi -L

row memcpy "$bin/c63-memcpy-bench"
row lib-page-locked "$bin/c63-cuda-bench" -p -f 3000 -n 5 "$in"
row lib-pageable "$bin/c63-cuda-bench" -f 3000 -n 5 "$in"
row lib-pageable-t1 "$bin/c63-cuda-bench" -t 1 -f 1000 -n 3 "$in"
row lib-pageable-t4 "$bin/c63-cuda-bench" -t 4 -f 3000 -n 3 "$in"
row lib-registered "$bin/c63-cuda-bench" -R -f 3000 -n 5 "$in"
# one process a GPU where there are several: pageable (staged) and
# page-locked input, each against one process alone
gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)
if [ "${gpus:-0}" -gt 1 ]; then
  row gpus-pageable env PER_GPU=1 sh bench/c63-cuda-bench-multi.sh "$bin/c63-cuda-bench" "$gpus" \
    -f 3000 -n 3 "$in"
  row gpus-page-locked env PER_GPU=1 sh bench/c63-cuda-bench-multi.sh "$bin/c63-cuda-bench" \
    "$gpus" -p -f 3000 -n 3 "$in"
fi

if [ -f "$bin/libgstc63.so" ] && command -v gst-launch-1.0 > /dev/null; then
  export GST_PLUGIN_PATH=$bin
  row element-pool "$bin/c63-element-bench" -p -f 3000 -n 5 "$in"
  row element-cuda "$bin/c63-element-bench" -c -f 3000 -n 5 "$in"
  row element-recycled "$bin/c63-element-bench" -f 3000 -n 5 "$in"
  row element-fresh "$bin/c63-element-bench" --fresh -f 3000 -n 5 "$in"
  row pipeline env TRACE="$out/trace" sh bench/c63-cuda-bench-gst.sh "$in" 1920 1080 \
    "${FRAMES:-9000}" "${RUNS:-3}"
fi

if [ -x "$bin/c63-enc" ]; then
  # 3000 frames on tmpfs, file to file, three times
  shm=${SHM:-/dev/shm}/c63-pageable-bench
  mkdir -p "$shm"
  python3 bench/repeat-frames.py "$in" 1920 1080 3000 "$shm/in.yuv" || status=1
  for i in 1 2 3; do
    t0=$(date +%s.%N)
    "$bin/c63-enc" --backend cuda -w 1920 -h 1080 -o "$shm/out.c63" "$shm/in.yuv" > /dev/null 2>&1 ||
      status=1
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "c63-enc --backend cuda, 3000 frames tmpfs to tmpfs: %.1f fps\n", 3000 / ($2 - $1)}'
  done | tee "$out/enc-file.log"
  rm -rf "$shm"
fi
exit $status
