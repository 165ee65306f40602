#!/bin/sh
# real-footage.sh: 1080p real footage for the benchmarks, made from a clip
# that Debian ships: forensics-samples-files'
# original-files/movie1/VID_20191220_170832.mp4 (a phone recording of a dog
# on a tiled floor, 1920x1080 H.264 at 30 fps, 41 pictures; CC-BY-SA-4.0,
# Joao Eriberto Mota Filho). Nothing is downloaded and nothing of it is
# committed here.
#
# usage: real-footage.sh OUT.yuv [FRAMES] [MP4]
#
# Writes FRAMES (default 82) raw I420 1920x1080 pictures: the clip forward,
# then backward without repeating its ends, and so on, so that motion stays
# continuous (no scene cut where it wraps). MP4 defaults to the installed
# package's file (apt-get install forensics-samples-files); a copy may be
# given instead, for example on the GPU machine. The H.264 decoder is
# avdec_h264 (gstreamer1.0-libav) or, where it is missing, nvcodec's
# nvh264dec (whose NV12 is converted to I420 exactly): H.264 decoding is
# exact, so both give the same pictures.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
out=${1:?usage: $0 OUT.yuv [FRAMES] [MP4]}
frames=${2:-82}
mp4=${3:-/usr/share/forensics-samples/original-files/movie1/VID_20191220_170832.mp4}
[ -f "$mp4" ] || {
  echo "real-footage: $mp4 missing (apt-get install forensics-samples-files)" >&2
  exit 1
}
if gst-inspect-1.0 avdec_h264 > /dev/null 2>&1; then
  dec="avdec_h264"
elif gst-inspect-1.0 nvh264dec > /dev/null 2>&1; then
  dec="nvh264dec ! cudadownload"
else
  echo "real-footage: no H.264 decoder (apt-get install gstreamer1.0-libav)" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# a signal ends the script (a trap that returns would let it go on)
trap "exit 130" INT
trap "exit 143" TERM
# shellcheck disable=SC2086 # $dec is a pipeline fragment
gst-launch-1.0 -q filesrc location="$mp4" ! qtdemux ! h264parse ! $dec ! videoconvert \
  ! video/x-raw,format=I420,width=1920,height=1080 ! filesink location="$tmp/clip.yuv"
python3 - "$tmp/clip.yuv" "$out" "$frames" << 'PY'
import sys
size = 1920 * 1080 * 3 // 2
data = open(sys.argv[1], 'rb').read()
n = len(data) // size
if n < 2:
    sys.exit('real-footage: the clip decoded to %d pictures' % n)
order = list(range(n)) + list(range(n - 2, 0, -1))  # 0..n-1, n-2..1: a loop
with open(sys.argv[2], 'wb') as f:
    for i in range(int(sys.argv[3])):
        k = order[i % len(order)]
        f.write(data[k * size:(k + 1) * size])
PY
echo "real-footage: $out, $frames pictures of 1920x1080 from $(basename "$mp4")"
