#!/bin/sh
# The README's raw-file pipeline, for an odd size (350x202): with the tight
# plane layout passed to rawvideoparse, c63enc must write the same bytes as
# c63-enc from the same file (10 frames in, 10 out).
#   test_readme_raw.sh SYNTH ENC
set -eu
synth=$1 enc=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/c63-readme.XXXXXX")
trap 'rm -rf "$T"' EXIT
W=350 H=202 CW=$(( (W + 1) / 2 )) CH=$(( (H + 1) / 2 ))
"$synth" -w $W -h $H -f 10 "$T/in.yuv" > /dev/null
"$enc" -w $W -h $H -o "$T/cli.c63" "$T/in.yuv" 2> "$T/enc.log"
grep -q "encoded 10 frames" "$T/enc.log"
gst-launch-1.0 -q filesrc location="$T/in.yuv" ! rawvideoparse width=$W height=$H \
    format=i420 framerate=25/1 plane-strides="<$W,$CW,$CW>" \
    plane-offsets="<0,$((W * H)),$((W * H + CW * CH))>" \
    frame-size=$((W * H + 2 * CW * CH)) ! c63enc ! filesink location="$T/gst.c63"
cmp "$T/cli.c63" "$T/gst.c63"
echo "README raw pipeline at ${W}x${H}: same bytes as c63-enc"
