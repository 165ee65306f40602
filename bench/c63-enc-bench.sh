#!/bin/sh
# c63-enc-bench.sh: c63-enc file to file on tmpfs, by reader and writer
# threads, beside dd of the same file:
#   dd if=IN of=/dev/null bs=FRAME              reading it, one thread
#   dd if=IN of=OUT bs=FRAME                    copying it within tmpfs
#   c63-read-bench -j MAX_READERS               c63-enc's reader pool alone
#   c63-enc --readers N (N = 1..MAX_READERS)    with the default writer
#   c63-enc --writers W (W in WRITERS)          with the default readers
# Each c63-enc row gives the median of RUNS runs of the whole command (its
# start, a CUDA context included) and of the fps c63-enc reports itself
# (from the first frame read to the last packet written), and checks that
# every run wrote the same bytes as --readers 1 --writers 0. Speed is
# measured here, never asserted.
#
# usage: c63-enc-bench.sh BUILD_DIR INPUT.yuv|synth WIDTH HEIGHT [FRAMES] [RUNS]
#                         [BACKEND] [MAX_READERS] [WRITERS]
#   BUILD_DIR holds tools/ and bench/; synth makes a clip with c63-synth;
#   FRAMES (default 3000) repeats INPUT as needed; RUNS defaults to 3,
#   BACKEND to cuda, MAX_READERS to 8, WRITERS to "0 1 4".
# The files go to $SHM (default /dev/shm), removed at the end.
set -eu
build=${1:?usage: $0 BUILD_DIR INPUT.yuv|synth WIDTH HEIGHT [FRAMES] [RUNS] [BACKEND] [MAX_READERS] [WRITERS]}
in=${2:?input}; w=${3:?width}; h=${4:?height}
frames=${5:-3000}; runs=${6:-3}; backend=${7:-cuda}; max_readers=${8:-8}
writers=${9:-0 1 4}
enc=$build/tools/c63-enc
fsize=$(( w * h + 2 * ((w + 1) / 2) * ((h + 1) / 2) ))
dir=${SHM:-/dev/shm}/c63-enc-bench.$$
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
# a signal ends the script (a trap that returns would let it go on)
trap "exit 130" INT
trap "exit 143" TERM

# The input: INPUT repeated to FRAMES frames, on tmpfs.
if [ "$in" = synth ]; then
  "$build/tools/c63-synth" -w "$w" -h "$h" -f "$frames" "$dir/in.yuv"
else
  python3 "$(dirname "$0")/repeat-frames.py" "$in" "$w" "$h" "$frames" "$dir/in.yuv"
fi
echo "input: $frames frames of ${w}x${h} ($(( frames * fsize )) bytes) in $dir"

now() { date +%s.%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
fps_of() { echo "$frames $1 $2" | awk '{ printf "%.1f", $1 / ($3 - $2) }'; }

t0=$(now); dd if="$dir/in.yuv" of=/dev/null bs="$fsize" 2> /dev/null; t1=$(now)
echo "dd to /dev/null (reading, one thread): $(fps_of "$t0" "$t1") fps"
t0=$(now); dd if="$dir/in.yuv" of="$dir/copy.yuv" bs="$fsize" 2> /dev/null; t1=$(now)
rm -f "$dir/copy.yuv"
echo "dd to a tmpfs file (copying, one thread): $(fps_of "$t0" "$t1") fps"
"$build/bench/c63-read-bench" -w "$w" -h "$h" -j "$max_readers" -n "$runs" "$dir/in.yuv"

# The reference bytes: one reader, packets written by the encoder's thread.
"$enc" --quiet --backend "$backend" -w "$w" -h "$h" --readers 1 --writers 0 \
  -o "$dir/ref.c63" "$dir/in.yuv"

# c63-enc with these options: RUNS runs, medians of whole and own fps.
run_enc() {
  all=""
  for _ in $(seq 1 "$runs"); do
    rm -f "$dir/out.c63" # a new file each run, as for dd
    t0=$(now)
    own=$("$enc" --backend "$backend" -w "$w" -h "$h" "$@" -o "$dir/out.c63" "$dir/in.yuv" 2>&1 |
      sed -n 's/.* bytes, \([0-9.]*\) fps.*/\1/p')
    t1=$(now)
    cmp -s "$dir/out.c63" "$dir/ref.c63" || { echo "c63-enc $*: the bytes differ" >&2; exit 1; }
    all="$all$(fps_of "$t0" "$t1") $own
"
  done
  echo "c63-enc --backend $backend $*: median whole $(printf '%s' "$all" | cut -d' ' -f1 |
    median) fps, own $(printf '%s' "$all" | cut -d' ' -f2 | median) fps"
}

for r in $(seq 1 "$max_readers"); do
  run_enc --readers "$r"
done
for wr in $writers; do
  run_enc --writers "$wr"
done
