#!/bin/sh
# c63-cuda-bench-gst.sh: speed of the c63cudaenc element in the pipeline a
# user types first,
#   filesrc ! rawvideoparse ! [queue !] c63cudaenc ! fakesink
# with the input file in memory (tmpfs or page cache), beside the same
# pipeline without the encoder (what the encoder's speed is held to). The
# variants run interleaved (round i runs each once), so a host that speeds
# up or slows down between rounds moves them all alike. Prints each run and
# the medians of RUNS runs for each variant: the whole command (frames /
# time, start-up included) and the steady state. Run with GST_PLUGIN_PATH
# pointing at the built plugin (and, on the GPU machine, the kit's env.sh
# sourced: gst-launch-1.0 is taken from PATH).
#
# usage: c63-cuda-bench-gst.sh INPUT.yuv WIDTH HEIGHT [FRAMES] [RUNS] [ELEMENT]
#   INPUT.yuv is repeated into a temporary file of FRAMES frames (default
#   9000: 28 GB at 1080p, in TMPDIR, default /dev/shm where it exists);
#   ELEMENT defaults to c63cudaenc (c63enc gives the CPU figure; it may
#   carry properties: "c63cudaenc threads=5"). ALT="ELEMENT PROPS" adds
#   queue ! ALT as a fourth variant, in the same rounds.
# Start-up (plugin load, CUDA context, allocation) is told apart: a run of
# 10 frames is timed beside each full run, and the steady-state fps is
# (FRAMES - 10) / (t(FRAMES) - t(10)).
# TRACE=DIR: afterwards, each variant once more under GStreamer's tracers
# (latency per element, CPU load per thread: GST_TRACERS="latency(flags=
# element);rusage"), the logs in DIR and a summary printed: the mean time
# a buffer spends in each element, and each streaming thread's CPU load.
set -eu
in=${1:?usage: $0 INPUT.yuv WIDTH HEIGHT [FRAMES] [RUNS] [ELEMENT]}
w=${2:?width}; h=${3:?height}; frames=${4:-9000}; runs=${5:-5}; element=${6:-c63cudaenc}
fsize=$(( w * h + 2 * ((w + 1) / 2) * ((h + 1) / 2) ))
[ -d /dev/shm ] && [ -w /dev/shm ] && : "${TMPDIR:=/dev/shm}"
tmp=${TMPDIR:-/tmp}/c63-cuda-bench-gst.$$.yuv
trap 'rm -f "$tmp"' EXIT
# a signal ends the script (a trap that returns would let it go on)
trap "exit 130" INT
trap "exit 143" TERM

need_kb=$(( frames * (fsize / 1024 + 1) ))
have_kb=$(df -Pk "$(dirname "$tmp")" | awk 'NR == 2 {print $4}')
[ "${have_kb:-0}" -gt "$need_kb" ] || {
  echo "$frames frames need $(( need_kb / 1048576 + 1 )) GiB in $(dirname "$tmp"); set TMPDIR or FRAMES" >&2
  exit 1
}
python3 "$(dirname "$0")/repeat-frames.py" "$in" "$w" "$h" "$frames" "$tmp" || exit 1
cat "$tmp" > /dev/null  # into the page cache

now() { date +%s.%N; }
launch() { # frames variant
  # shellcheck disable=SC2086
  gst-launch-1.0 -q filesrc location="$tmp" blocksize="$fsize" num-buffers="$1" ! \
    rawvideoparse width="$w" height="$h" format=i420 framerate=25/1 ! \
    $2 fakesink sync=false > /dev/null
}
run() { # frames variant -> seconds
  t0=$(now)
  launch "$1" "$2"
  t1=$(now)
  echo "$t0 $t1" | awk '{printf "%.4f\n", $2 - $1}'
}

gst-inspect-1.0 "${element%% *}" > /dev/null || { echo "element $element not found" >&2; exit 1; }
variants="none enc queue"
[ -n "${ALT:-}" ] && variants="$variants alt"
label() {
  case $1 in none) echo "(no encoder)" ;; enc) echo "$element" ;; alt) echo "queue ! $ALT" ;;
    *) echo "queue ! $element" ;; esac
}
chain() {
  case $1 in none) echo "" ;; enc) echo "$element !" ;; alt) echo "queue ! $ALT !" ;;
    *) echo "queue ! $element !" ;; esac
}
res=${TMPDIR:-/tmp}/c63-cuda-bench-gst.$$.res
trap 'rm -f "$tmp" "$tmp.part" "$res".*' EXIT
for v in $variants; do
  run 10 "$(chain "$v")" > /dev/null  # warm-up: registry, driver
  : > "$res.$v"
done
for i in $(seq 1 "$runs"); do
  for v in $variants; do
    t_full=$(run "$frames" "$(chain "$v")")
    t_short=$(run 10 "$(chain "$v")")
    fps=$(echo "$frames $t_full" | awk '{printf "%.1f", $1 / $2}')
    steady=$(echo "$frames $t_full $t_short" | awk '{ d = $2 - $3; printf("%.1f", (d > 0) ? ($1 - 10) / d : 0) }')
    echo "round $i, $(label "$v"): $frames frames in ${t_full}s: $fps fps whole, $steady fps steady (10 frames ${t_short}s)"
    echo "$fps $steady" >> "$res.$v"
  done
done
median() { # column file
  sort -n -k"$1","$1" "$2" | awk -v c="$1" '{a[NR] = $c} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}
base_whole=$(median 1 "$res.none"); base_steady=$(median 2 "$res.none")
for v in $variants; do
  whole=$(median 1 "$res.$v"); steady=$(median 2 "$res.$v")
  echo "$(label "$v") ${w}x${h}, $frames frames, median of $runs: whole $whole fps, steady $steady fps" \
    "($(echo "$whole $base_whole $steady $base_steady" | awk 'function pc(a, b) { return b > 0 ? sprintf("%.1f%%", 100 * a / b) : "n/a" } {print pc($1, $2) " / " pc($3, $4)}') of no encoder)"
done

[ -n "${TRACE:-}" ] || exit 0
mkdir -p "$TRACE"
for v in $variants; do
  log=$TRACE/trace-$v.log
  GST_TRACERS="latency(flags=element);rusage" GST_DEBUG="GST_TRACER:7" GST_DEBUG_NO_COLOR=1 \
    GST_DEBUG_FILE="$log" launch "$frames" "$(chain "$v")"
  echo "== $(label "$v"): tracers ($log)"
  # element-latency: the time from a buffer entering an element's sink pad
  # to its leaving the src pad; thread-rusage: each thread's CPU load (per
  # mille of one core) at its last report
  awk '
    /element-latency, element-id=\(string\)0x/ {
      match($0, /element=\(string\)[^,]*/); e = substr($0, RSTART + 16, RLENGTH - 16)
      match($0, /time=\(guint64\)[0-9]+/); t = substr($0, RSTART + 14, RLENGTH - 14)
      n[e]++; s[e] += t
    }
    /thread-rusage, thread-id=\(guint64\)[0-9]/ {
      match($0, /thread-id=\(guint64\)[0-9]+/); id = substr($0, RSTART + 19, RLENGTH - 19)
      match($0, /average-cpuload=\(uint\)[0-9]+/); load[id] = substr($0, RSTART + 22, RLENGTH - 22)
    }
    END {
      for (e in n) printf "  %-24s %8.3f ms a buffer (%d buffers)\n", e, s[e] / n[e] / 1e6, n[e]
      for (id in load) printf "  thread %-17s %5.1f%% of a core on average\n", id, load[id] / 10
    }' "$log"
done
