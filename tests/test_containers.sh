#!/bin/sh
# What carries video/x-c63 today (docs/elements.md, "Containers and
# transport"): GStreamer's data protocol (gdppay to a file, gdpdepay back)
# and RTP (rtpgstpay / rtpgstdepay). Each round trip must decode to the
# same pictures as c63-dec from the original stream.
#   test_containers.sh DEC STREAM
set -eu
dec=$1 stream=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/c63-containers.XXXXXX")
trap 'rm -rf "$T"' EXIT
"$dec" --quiet "$stream" "$T/want.yuv"
gst-launch-1.0 -q filesrc location="$stream" ! c63parse ! gdppay ! filesink location="$T/s.gdp"
gst-launch-1.0 -q filesrc location="$T/s.gdp" ! gdpdepay ! c63dec ! video/x-raw,format=I420 ! \
  filesink location="$T/gdp.yuv"
cmp "$T/want.yuv" "$T/gdp.yuv"
echo "gdppay file: same pictures as c63-dec"
gst-launch-1.0 -q filesrc location="$stream" ! c63parse ! rtpgstpay ! rtpgstdepay ! c63dec ! \
  video/x-raw,format=I420 ! filesink location="$T/rtp.yuv"
cmp "$T/want.yuv" "$T/rtp.yuv"
echo "rtpgstpay / rtpgstdepay: same pictures as c63-dec"
