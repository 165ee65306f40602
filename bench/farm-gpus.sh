#!/bin/sh
# farm-gpus.sh: c63-farm's encode and decode of one job on 1, 2 and 4 GPUs of
# one host, against c63-enc and c63-dec alone, in one table (docs/farm.md,
# "Measuring"). Speed is measured and printed, never asserted.
#
# usage: farm-gpus.sh BIN_DIR WHEELS_DIR
#   BIN_DIR     c63-enc, c63-dec, c63-synth, libc63farm.so (the workers'
#               chunk encoder) and libc63.so.1 of a CUDA build
#               (build-cuda/tools/* and build-cuda/c63/libc63.so.1 copied
#               into one folder)
#   WHEELS_DIR  Dask's wheels (tools/farm/fetch-wheels.sh), installed into
#               WHEELS_DIR/site on the first run
# The job: FRAMES (default 9000) frames of 1920x1080 in /dev/shm, keyframe
# interval K (default 100): FOOTAGE=clip.mp4 makes them from real footage
# (bench/real-footage.sh, GStreamer needed for that only), else c63-synth;
# the input is kept for the next run (KEEP_INPUT=0 removes it). When it is
# made, twice its size is written and deleted in SHM first (WARM=0: not),
# since a fresh virtual machine's first touch of memory is slow.
# Settings (environment): JOBS="encode decode" (either alone: the table's
# rows of that job; the single c63-enc run is always made, as decode's
# input); GPUS="1 2 4"; CHUNKS="default 2400" (encode:
# c63-farm's default chunks, then chunks of 2400 frames); PIECES="default
# 2400" (decode); ENGINES="libc63 c63-enc" (the in-process workers, then a
# c63-enc or c63-dec process per chunk, on the most GPUs and the last
# chunk length); IO_THREADS=default (c63-farm's --io-threads: its own
# default), IO_SWEEP="8 16" (other thread counts swept on the most GPUs
# and the last chunk length; empty: none); STANDING=1 (the first engine's
# rows again on a cluster started before the command, one dask scheduler
# and a dask worker a GPU, as a farm that runs job after job has: the
# command then pays no cluster start or stop, and the workers keep their
# encoders from one job to the next; 0: none);
# SHM=/dev/shm/farm-gpus; PYTHON=python3; BACKEND=cuda (cpu: a dry run on a
# machine without GPU; then use small FRAMES and W/H).
# Every row gives the wall time of the whole command (process and cluster
# start included), the frames per second from it and the ratio (x) to the
# single process's; then the frames per second the program reports itself
# (c63-enc: from its first frame; c63-farm: from its workers' being ready;
# c63-dec reports none: its wall figure) and the ratio of those; c63-farm's
# time in the chunks and in the join; whether the output is byte-identical
# to the single process's.
# Below the table: each worker's frames per second (c63-farm --stats), and
# the host's memcpy and pread bandwidth.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
bin=$(cd "${1:?usage: $0 BIN_DIR WHEELS_DIR}" && pwd)
wheels=$(cd "${2:?usage: $0 BIN_DIR WHEELS_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
w=${W:-1920} h=${H:-1080} frames=${FRAMES:-9000} k=${K:-100}
gpus=${GPUS:-1 2 4}
chunks=${CHUNKS:-default 2400}
pieces=${PIECES:-default 2400}
engines=${ENGINES:-libc63 c63-enc}
jobs=${JOBS:-encode decode}
io_threads=${IO_THREADS:-default}
io_sweep=${IO_SWEEP-8 16}
standing=${STANDING:-1}
backend=${BACKEND:-cuda}
shm=${SHM:-/dev/shm/farm-gpus}
py=${PYTHON:-python3}
in=$shm/in-${w}x${h}-$frames.yuv
tmp=$(mktemp -d)
mkdir -p "$shm"
# The standing cluster's processes (start_cluster, below).
cluster_pids=""
stop_cluster() {
  # shellcheck disable=SC2086 # a list of process ids
  [ -z "$cluster_pids" ] || { kill $cluster_pids 2> /dev/null; wait $cluster_pids 2> /dev/null; }
  cluster_pids=""
}
cleanup() {
  stop_cluster
  rm -rf "$tmp" "$shm"/*.c63 "$shm"/*.out "$shm"/*.out.yuv "$shm"/.*.farm
  [ "${KEEP_INPUT:-1}" = 1 ] || rm -f "$in"
}
trap cleanup EXIT
# a signal ends the script (a trap that returns would let it go on)
trap "exit 130" INT
trap "exit 143" TERM

for tool in c63-enc c63-dec c63-synth libc63farm.so libc63.so.1; do
  [ -e "$bin/$tool" ] || { echo "farm-gpus: $bin/$tool missing" >&2; exit 1; }
done
eval "$(PYTHON=$py "$repo/tools/farm/fetch-wheels.sh" --install "$wheels")"
PYTHONPATH=$repo/tools/farm:$PYTHONPATH
export PYTHONPATH
# c63-farm next to the tools it runs, with the package of this tree and the
# libc63 of BIN_DIR.
mkdir "$tmp/bin"
ln -s "$bin/c63-enc" "$bin/c63-dec" "$tmp/bin/"
sed -e "s|@FARM_PYDIR@|$repo/tools/farm|" -e "s|@LIBC63@|$bin/libc63.so.1|" \
  -e "s|@FARM_WORKER@|$bin/libc63farm.so|" -e "s|@VERSION@|farm-gpus|" "$repo/tools/c63-farm.in" > "$tmp/bin/c63-farm"
farm="$py $tmp/bin/c63-farm"

echo "host: $(nproc) cores, $("$py" --version 2>&1), $(uname -r)"
nvidia-smi -L 2> /dev/null || echo "no nvidia-smi"
df -h "$shm" | tail -n 1
frame=$((w * h + 2 * ((w + 1) / 2) * ((h + 1) / 2)))
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
if [ "$(stat -c %s "$in" 2> /dev/null || echo 0)" != $((frames * frame)) ]; then
  if [ -n "${FOOTAGE:-}" ]; then
    "$here/real-footage.sh" "$tmp/clip.yuv" 82 "$FOOTAGE"
  else
    "$bin/c63-synth" -w "$w" -h "$h" -f 100 "$tmp/clip.yuv" > /dev/null
  fi
  "$py" "$here/repeat-frames.py" "$tmp/clip.yuv" "$w" "$h" "$frames" "$in"
  # A fresh virtual machine backs a page of memory at its first touch,
  # which is slow: the first run to write a large file would pay for it.
  # Written and deleted once, as much as the decoding rows write (the
  # reference's pictures and a farm's), so that every row pays alike.
  if [ "${WARM:-1}" = 1 ]; then
    t0=$(now)
    if "$py" "$here/repeat-frames.py" "$tmp/clip.yuv" "$w" "$h" $((2 * frames)) "$shm/warm.yuv"; then
      echo "memory: $((2 * frames)) frames written and deleted in $(calc %.1f "$(now) - $t0") s"
    fi
    rm -f "$shm/warm.yuv"
  fi
  rm -f "$tmp/clip.yuv"
fi
echo "input: $in, ${w}x${h}, $frames frames (${FOOTAGE:-c63-synth}), keyframe interval $k"

same() { if cmp -s "$1" "$2"; then echo identical; else echo DIFFERENT; fi; }
devices() { seq -s, 0 $(($1 - 1)); }
# c63-farm's closing line: its fps, the chunks' and the join's seconds
farm_fps() { sed -n 's/.* \([0-9.]*\) fps (.*/\1/p' "$1" | tail -n 1; }
farm_times() {
  t=$(sed -n 's/.*(\(chunks\|pieces\) \([0-9.]*\) s, join \([0-9.]*\) s).*/\2 \3/p' "$1" | tail -n 1)
  echo "${t:-- -}"
}
table=$tmp/table
printf '%-6s %-24s %4s %7s %8s %9s %6s %9s %6s %8s %7s  %s\n' job how GPUs chunk "wall s" \
  "wall fps" "x" "own fps" "x" "chunks s" "join s" output > "$table"
row() { printf '%-6s %-24s %4s %7s %8.2f %9.1f %6s %9s %6s %8s %7s  %s\n' "$@" >> "$table"; }

# $1 job, $2 how, $3 reference fps; the rest: the command, its log in $tmp/log
# A command that fails is reported (its last lines, again below the
# table) and returns 1: the reference runs stop the script, a farm row
# says FAILED and the others go on.
timed() {
  t0=$(now)
  if "$@" 2> "$tmp/log"; then
    t1=$(now)
    wall=$(calc %.3f "$t1 - $t0")
    return 0
  fi
  { echo "FAILED: $*"; tail -n 5 "$tmp/log"; } | tee -a "$tmp/failures" >&2
  return 1
}

last() { echo "$1" | awk '{ print $NF }'; }

# A standing cluster of $1 workers, one a GPU (docs/farm.md, "A cluster
# started by hand"), ready when this returns; stop_cluster ends it.
start_cluster() {
  rm -f "$tmp/scheduler.json"
  "$py" -m distributed.cli.dask_scheduler --scheduler-file "$tmp/scheduler.json" \
    --host 127.0.0.1 --port 0 --dashboard-address :0 > "$tmp/scheduler.log" 2>&1 &
  cluster_pids=$!
  for i in $(seq 0 $(($1 - 1))); do
    CUDA_VISIBLE_DEVICES=$i "$py" -m distributed.cli.dask_worker --scheduler-file \
      "$tmp/scheduler.json" --nthreads 1 --resources GPU=1 --name "gpu-$i" \
      > "$tmp/worker-$i.log" 2>&1 &
    cluster_pids="$cluster_pids $!"
  done
  "$py" -c 'import sys, time, os, distributed
while not os.path.exists(sys.argv[1]): time.sleep(0.1)
with distributed.Client(scheduler_file=sys.argv[1], timeout="30s") as c:
    c.wait_for_workers(int(sys.argv[2]), timeout=60)' "$tmp/scheduler.json" "$1"
}
# $1 encode or decode; $2 the single process's output, $3 and $4 its wall
# and own fps; $5 the engines, $6 the chunk lengths; the rest: c63-farm's
# options for the job, the input last. A row for every GPU count and
# length with the first engine and IO_THREADS; the other engine and
# IO_SWEEP's thread counts on the most GPUs and the last length only;
# with STANDING=1, the first engine's rows on a standing cluster.
farm_rows() {
  job=$1 ref=$2 ref_fps=$3 ref_own=$4 job_engines=$5 lengths=$6
  shift 6
  first=$(echo "$job_engines" | awk '{ print $1 }')
  for engine in $job_engines; do
    for g in $gpus; do
      for c in $lengths; do
        for t in $io_threads $io_sweep; do
          if [ "$engine:$t" != "$first:$io_threads" ]; then
            [ "$g:$c" = "$(last "$gpus"):$(last "$lengths")" ] || continue
            [ "$engine" = "$first" ] || [ "$t" = "$io_threads" ] || continue
          fi
          opt=""
          [ "$t" = default ] || opt="--io-threads $t"
          how="farm $engine"
          [ "$engine" != "$first" ] || [ "$t" = default ] || how="$how io $t"
          # shellcheck disable=SC2086 # $opt is a word list
          farm_row "$how" "$g" "$c" --workers "$g" $opt --engine "$engine" "$@"
        done
      done
    done
  done
  [ "$standing" = 1 ] || return 0
  for g in $gpus; do
    if ! start_cluster "$g"; then
      printf '%-6s %-24s %4s  FAILED (the cluster did not start)\n' "$job" standing "$g" >> "$table"
      stop_cluster
      continue
    fi
    for c in $lengths; do
      farm_row "farm $first standing" "$g" "$c" --scheduler "$(scheduler_address)" \
        --engine "$first" "$@"
    done
    stop_cluster
  done
}

scheduler_address() {
  "$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["address"])' \
    "$tmp/scheduler.json"
}

# One row of farm_rows' job: $1 how, $2 GPUs, $3 chunk length; the rest:
# c63-farm's options, the input last.
farm_row() {
  how=$1 g=$2 c=$3
  shift 3
  out=$shm/farm-$job.out
  opt=""
  [ "$c" = default ] || opt="--chunk-frames $c"
  # shellcheck disable=SC2086 # $farm and $opt are word lists
  if ! timed env CUDA_VISIBLE_DEVICES="$(devices "$g")" $farm "$job" --backend "$backend" \
    $opt --stats -o "$out" "$@"; then
    printf '%-6s %-24s %4s %7s  FAILED\n' "$job" "$how" "$g" "$c" >> "$table"
    rm -f "$out"
    return 0
  fi
  fps=$(calc %.1f "$frames / $wall")
  own=$(farm_fps "$tmp/log")
  times=$(farm_times "$tmp/log")
  row "$job" "$how" "$g" "$c" "$wall" "$fps" "$(calc %.2f "$fps / $ref_fps")" "$own" \
    "$(calc %.2f "${own:-0} / $ref_own")" "${times% *}" "${times#* }" \
    "$(same "$ref" "$out")"
  { echo "$job, $how, $g GPUs, chunks $c:"; grep 'worker\|chunks of\|cluster' "$tmp/log"; } \
    >> "$tmp/workers"
  rm -f "$out"
}

timed "$bin/c63-enc" --backend "$backend" -w "$w" -h "$h" -k "$k" -o "$shm/ref.c63" "$in" || exit 1
enc_fps=$(calc %.1f "$frames / $wall")
enc_own=$(sed -n 's/.* \([0-9.]*\) fps.*/\1/p' "$tmp/log")
row encode c63-enc 1 - "$wall" "$enc_fps" 1.00 "$enc_own" 1.00 - - reference
case " $jobs " in *" encode "*)
  farm_rows encode "$shm/ref.c63" "$enc_fps" "$enc_own" "$engines" "$chunks" \
    -w "$w" -h "$h" -k "$k" "$in" ;;
esac

case " $jobs " in *" decode "*)
  timed "$bin/c63-dec" --backend "$backend" "$shm/ref.c63" "$shm/ref.out.yuv" || exit 1
  dec_fps=$(calc %.1f "$frames / $wall")
  row decode c63-dec 1 - "$wall" "$dec_fps" 1.00 "$dec_fps" 1.00 - - reference
  farm_rows decode "$shm/ref.out.yuv" "$dec_fps" "$dec_fps" \
    "$(echo "$engines" | sed 's/c63-enc/c63-dec/')" "$pieces" "$shm/ref.c63" ;;
esac

echo
cat "$table"
[ ! -s "$tmp/failures" ] || { echo; echo "Failed:"; cat "$tmp/failures"; }
echo
echo "Per worker (c63-farm --stats; a worker's fps count its own tasks' time):"
cat "$tmp/workers"
echo
echo "The host's bandwidth (1080p frames per second it would carry):"
"$py" "$here/farm-hostbw.py" --file "$in" --frame-bytes "$frame" \
  --threads "1 2 4 8 16 $(nproc)"
