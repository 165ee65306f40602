# shellcheck shell=sh disable=SC2154,SC2034 # in, w, h, frames the caller's; raw, status its
# gst-compare.sh: shell functions shared by the pipeline checks
# (c63-pipelines-check.sh, c63-gpus-check.sh), which source it. Each
# pipeline's output goes to a file of its own in a scratch folder; the
# checks compare those files. Sets tmp (removed on exit), raw (the input
# clip as gst-launch words) and status (1 once anything failed).
#
# usage: in=INPUT.yuv w=WIDTH h=HEIGHT frames=N; . tests/cuda/gst-compare.sh
# SPDX-License-Identifier: LGPL-2.1-or-later
fsize=$(( w * h + 2 * ((w + 1) / 2) * ((h + 1) / 2) ))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# a signal ends the script (a trap that returns would let it go on)
trap "exit 130" INT
trap "exit 143" TERM
raw="filesrc location=$in blocksize=$fsize num-buffers=$frames ! \
rawvideoparse width=$w height=$h format=i420 framerate=25/1"
status=0

# run NAME PIPELINE...: gst-launch-1.0 PIPELINE ! filesink into $tmp/NAME
run() {
  name=$1; shift
  if ! gst-launch-1.0 -q "$@" ! filesink location="$tmp/$name" > "$tmp/$name.log" 2>&1; then
    echo "$name: FAILED"; tail -n 5 "$tmp/$name.log"; status=1; return 1
  fi
}
# same NAME REF: NAME's bytes must equal REF's
same() {
  if [ -s "$tmp/$2" ] && cmp -s "$tmp/$1" "$tmp/$2"; then
    echo "$1: identical to $2 ($(wc -c < "$tmp/$1") bytes)"
  else
    echo "$1: DIFFERS from $2"; status=1
  fi
}
