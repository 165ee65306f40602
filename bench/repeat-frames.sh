#!/bin/sh
# repeat-frames.sh: write OUTPUT.yuv holding FRAMES frames of WIDTH x HEIGHT
# I420, INPUT.yuv's whole frames repeated as often as needed (the
# benchmarks' long inputs from a short clip).
#
# usage: repeat-frames.sh INPUT.yuv WIDTH HEIGHT FRAMES OUTPUT.yuv
set -eu
in=${1:?usage: $0 INPUT.yuv WIDTH HEIGHT FRAMES OUTPUT.yuv}
w=${2:?width}; h=${3:?height}; frames=${4:?frames}; out=${5:?output}
fsize=$(( w * h + 2 * ((w + 1) / 2) * ((h + 1) / 2) ))
have=$(( $(wc -c < "$in") / fsize ))
[ "$have" -ge 1 ] || { echo "$in holds no whole ${w}x${h} frame" >&2; exit 1; }
# Copy the input's frames once, then double what is there while that fits.
n=$(( have < frames ? have : frames ))
head -c $(( n * fsize )) "$in" > "$out"
while [ "$n" -lt "$frames" ]; do
  take=$(( frames - n < n ? frames - n : n ))
  head -c $(( take * fsize )) "$out" >> "$out.part"
  cat "$out.part" >> "$out" && rm -f "$out.part"
  n=$(( n + take ))
done
