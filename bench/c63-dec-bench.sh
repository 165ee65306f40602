#!/bin/sh
# c63-dec-bench.sh: decoder speed, file to file and in a pipeline, on each
# backend:
#   c63-dec --backend cpu|cuda IN.c63 OUT.yuv            (tmpfs to tmpfs)
#   gst-launch-1.0 filesrc ! c63dec backend=cpu|cuda ! fakesink
# The stream is made first by c63-enc from INPUT.yuv repeated to FRAMES
# frames. Prints each run and the median of RUNS runs, and checks that both
# backends wrote the same pictures. Speed is measured here, never asserted.
# Run with GST_PLUGIN_PATH pointing at the built plugin (and, on the GPU
# machine, the kit's env.sh sourced); without gst-launch-1.0 or the plugin
# only c63-dec is timed.
#
# usage: c63-dec-bench.sh BIN_DIR INPUT.yuv WIDTH HEIGHT [FRAMES] [RUNS] [BACKENDS]
#   BIN_DIR holds c63-enc and c63-dec; BACKENDS defaults to "cpu cuda".
# Startup (plugin load, CUDA context) is reported apart: a 10-frame stream
# is timed too, and steady = (FRAMES - 10) / (t - t10); whole = FRAMES / t.
# The speed at which the machine writes FRAMES pictures into a tmpfs file
# (dd) is printed first: c63-dec file to file cannot go faster.
set -eu
bin=${1:?usage: $0 BIN_DIR INPUT.yuv WIDTH HEIGHT [FRAMES] [RUNS] [BACKENDS]}
in=${2:?input}; w=${3:?width}; h=${4:?height}
frames=${5:-3000}; runs=${6:-3}; backends=${7:-cpu cuda}
fsize=$(( w * h + 2 * ((w + 1) / 2) * ((h + 1) / 2) ))
dir=${SHM:-/dev/shm}/c63-dec-bench.$$
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT INT TERM

# The input repeated to FRAMES frames, coded once (and a 10-frame prefix).
"$(dirname "$0")/repeat-frames.sh" "$in" "$w" "$h" "$frames" "$dir/in.yuv"
enc_backend=cuda
"$bin/c63-enc" --backend cuda -w "$w" -h "$h" -o "$dir/s.c63" "$dir/in.yuv" > /dev/null 2>&1 ||
  { enc_backend=cpu; "$bin/c63-enc" -w "$w" -h "$h" -o "$dir/s.c63" "$dir/in.yuv" > /dev/null 2>&1; }
head -c $(( 10 * fsize )) "$dir/in.yuv" > "$dir/in10.yuv"
"$bin/c63-enc" --backend $enc_backend -w "$w" -h "$h" -o "$dir/s10.c63" "$dir/in10.yuv" \
  > /dev/null 2>&1
rm -f "$dir/in.yuv" "$dir/in10.yuv"
echo "stream: $frames frames of ${w}x${h}, $(wc -c < "$dir/s.c63") bytes"

now() { date +%s.%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
elapsed() { echo "$1 $2" | awk '{printf "%.4f", $2 - $1}'; }

t0=$(now)
dd if=/dev/zero of="$dir/zero.yuv" bs="$fsize" count="$frames" 2> /dev/null
t1=$(now)
rm -f "$dir/zero.yuv"
echo "writing $frames pictures to tmpfs (dd): $(echo "$frames $(elapsed "$t0" "$t1")" |
  awk '{printf "%.1f", $1 / $2}') fps"

for b in $backends; do
  "$bin/c63-dec" --quiet --backend "$b" "$dir/s10.c63" "$dir/warm.yuv" 2>/dev/null || {
    echo "c63-dec --backend $b: not usable here"; continue; }
  all=""
  for i in $(seq 1 "$runs"); do
    # A new file each run, as for dd: replacing the last run's output would
    # time the kernel freeing its pages (about a second for 9 GB).
    rm -f "$dir/out-$b.yuv"
    t0=$(now)
    "$bin/c63-dec" --quiet --backend "$b" "$dir/s.c63" "$dir/out-$b.yuv" 2>/dev/null
    t1=$(now)
    "$bin/c63-dec" --quiet --backend "$b" "$dir/s10.c63" "$dir/warm.yuv" 2>/dev/null
    t2=$(now)
    r=$(echo "$frames $(elapsed "$t0" "$t1") $(elapsed "$t1" "$t2")" |
      awk '{ d = $2 - $3; printf("%.1f %.1f", $1 / $2, d > 0 ? ($1 - 10) / d : 0) }')
    echo "c63-dec --backend $b run $i: whole / steady $r fps"
    all="$all$r
"
  done
  echo "c63-dec --backend $b: median whole $(printf '%s' "$all" | cut -d' ' -f1 | median) fps," \
    "steady $(printf '%s' "$all" | cut -d' ' -f2 | median) fps"
done
if [ -f "$dir/out-cpu.yuv" ] && [ -f "$dir/out-cuda.yuv" ]; then
  if cmp -s "$dir/out-cpu.yuv" "$dir/out-cuda.yuv"; then
    echo "c63-dec: cpu and cuda pictures identical"
  else
    echo "c63-dec: cpu and cuda pictures DIFFER"; exit 1
  fi
fi
rm -f "$dir"/out-*.yuv "$dir/warm.yuv"

command -v gst-launch-1.0 > /dev/null && gst-inspect-1.0 c63dec > /dev/null 2>&1 || exit 0
pipe() { # stream backend -> seconds
  t0=$(now)
  gst-launch-1.0 -q filesrc location="$1" ! c63dec backend="$2" ! fakesink sync=false > /dev/null
  t1=$(now)
  elapsed "$t0" "$t1"
}
for b in $backends; do
  pipe "$dir/s10.c63" "$b" > /dev/null 2>&1 || { echo "c63dec backend=$b: not usable here"; continue; }
  all=""
  for i in $(seq 1 "$runs"); do
    t=$(pipe "$dir/s.c63" "$b")
    t10=$(pipe "$dir/s10.c63" "$b")
    r=$(echo "$frames $t $t10" | awk '{ d = $2 - $3; printf("%.1f %.1f", $1 / $2, d > 0 ? ($1 - 10) / d : 0) }')
    echo "filesrc ! c63dec backend=$b ! fakesink run $i: whole / steady $r fps"
    all="$all$r
"
  done
  echo "filesrc ! c63dec backend=$b ! fakesink: median whole" \
    "$(printf '%s' "$all" | cut -d' ' -f1 | median) fps, steady" \
    "$(printf '%s' "$all" | cut -d' ' -f2 | median) fps"
done
