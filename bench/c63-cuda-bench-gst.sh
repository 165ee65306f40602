#!/bin/sh
# c63-cuda-bench-gst.sh: speed of the c63cudaenc element in a whole pipeline,
#   filesrc ! rawvideoparse ! [queue !] c63cudaenc ! fakesink
# with the input file in memory (tmpfs or page cache), and in the same run
# the pipeline without the encoder (what the encoder's speed is held to).
# Prints each run's fps and the median of RUNS runs for each. Run with
# GST_PLUGIN_PATH pointing at the built plugin (and, on the GPU machine, the
# kit's env.sh sourced).
#
# usage: c63-cuda-bench-gst.sh INPUT.yuv WIDTH HEIGHT [FRAMES] [RUNS] [ELEMENT]
#   INPUT.yuv is repeated into a temporary file of FRAMES frames (default
#   300); ELEMENT defaults to c63cudaenc (c63enc gives the CPU figure).
# Startup (plugin load, CUDA context, allocation) is reported separately: a
# run of 10 frames is timed too, and the steady-state fps is
# (FRAMES - 10) / (t(FRAMES) - t(10)).
set -eu
in=${1:?usage: $0 INPUT.yuv WIDTH HEIGHT [FRAMES] [RUNS] [ELEMENT]}
w=${2:?width}; h=${3:?height}; frames=${4:-300}; runs=${5:-5}; element=${6:-c63cudaenc}
fsize=$(( w * h + 2 * ((w + 1) / 2) * ((h + 1) / 2) ))
tmp=${TMPDIR:-/tmp}/c63-cuda-bench-gst.$$.yuv
trap 'rm -f "$tmp"' EXIT INT TERM

# Repeat the input's frames until the file holds FRAMES frames.
have=$(( $(wc -c < "$in") / fsize ))
[ "$have" -ge 1 ] || { echo "$in holds no whole ${w}x${h} frame" >&2; exit 1; }
: > "$tmp"
n=0
while [ "$n" -lt "$frames" ]; do
  take=$(( frames - n < have ? frames - n : have ))
  head -c $(( take * fsize )) "$in" >> "$tmp"
  n=$(( n + take ))
done
cat "$tmp" > /dev/null  # into the page cache

now() { date +%s.%N; }
run() { # frames middle -> seconds
  t0=$(now)
  # shellcheck disable=SC2086
  gst-launch-1.0 -q filesrc location="$tmp" blocksize="$fsize" num-buffers="$1" ! \
    rawvideoparse width="$w" height="$h" format=i420 framerate=25/1 ! \
    $2 fakesink sync=false > /dev/null
  t1=$(now)
  echo "$t0 $t1" | awk '{printf "%.4f\n", $2 - $1}'
}

gst-inspect-1.0 "$element" > /dev/null || { echo "element $element not found" >&2; exit 1; }
for variant in "" "$element !" "queue ! $element !"; do
  label=${variant:-"(no encoder) "}
  run 10 "$variant" > /dev/null  # warm-up: registry, driver
  results=""
  for i in $(seq 1 "$runs"); do
    t_full=$(run "$frames" "$variant")
    t_short=$(run 10 "$variant")
    fps=$(echo "$frames $t_full" | awk '{printf "%.1f", $1 / $2}')
    steady=$(echo "$frames $t_full $t_short" | awk '{ d = $2 - $3; printf("%.1f", (d > 0) ? ($1 - 10) / d : 0) }')
    echo "$label run $i: $frames frames in ${t_full}s: $fps fps (steady state $steady fps; 10 frames ${t_short}s)"
    results="$results$fps $steady
"
  done
  printf '%s' "$results" | sort -n -k1,1 | awk -v r="$runs" -v e="$label" -v w="$w" -v h="$h" \
    '{a[NR] = $1} END {printf "%s %dx%d: median %.1f fps (whole pipeline, %d runs)\n", e, w, h, a[int((NR + 1) / 2)], r}'
  printf '%s' "$results" | sort -n -k2,2 | awk -v e="$label" \
    '{a[NR] = $2} END {printf "%s median steady-state %.1f fps\n", e, a[int((NR + 1) / 2)]}'
done
