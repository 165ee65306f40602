#!/bin/sh
# c63-pipelines-check.sh: the elements' paths through CUDA memory on one GPU,
# each against the same work through system memory. Every pipeline must
# give the same bytes:
#  - c63cudaenc from system memory, against c63enc (the CPU encoder);
#  - c63cudaenc from CUDA memory (cudaupload), I420 and NV12;
#  - c63dec into CUDA memory (cudadownload after it), against c63dec into
#    system memory;
#  - c63dec ! c63cudaenc, the re-encode from GPU to GPU, against the same
#    through system memory;
#  - with an H.264 clip (byte stream, H264=FILE): nvh264dec ! c63cudaenc
#    (NV12 in CUDA memory, converted on the GPU) against nvh264dec !
#    cudadownload ! c63cudaenc (NV12 in system memory) and against the CPU
#    encoder given the same pictures as I420.
# Prints one line per pipeline and exits non-zero on any failure or
# difference. Speed is measured elsewhere (c63-element-bench -c). Needs the
# plugin on GST_PLUGIN_PATH and nvcodec's cudaupload, cudadownload,
# h264parse and nvh264dec (on the GPU machine: the kit's env.sh).
# tests/cuda/c63-gpus-check.sh does the same across two GPUs.
#
# usage: [H264=CLIP.h264] c63-pipelines-check.sh INPUT.yuv WIDTH HEIGHT [FRAMES]
# SPDX-License-Identifier: LGPL-2.1-or-later
set -u
in=${1:?usage: $0 INPUT.yuv WIDTH HEIGHT [FRAMES]}
w=${2:?width}; h=${3:?height}; frames=${4:-60}
if ! gst-inspect-1.0 c63cudaenc > /dev/null 2>&1; then
  echo "SKIP: c63cudaenc is not registered (no CUDA device?)"
  exit 0
fi
# tmp, raw and status from in, w, h and frames; run NAME PIPELINE... and
# same NAME REF
# shellcheck source=tests/cuda/gst-compare.sh
. "$(dirname "$0")/gst-compare.sh"
cuda='video/x-raw(memory:CUDAMemory)'

# shellcheck disable=SC2086 # the pipelines are words for gst-launch
run enc-cpu $raw ! c63enc
# shellcheck disable=SC2086
run enc-system $raw ! c63cudaenc && same enc-system enc-cpu
# shellcheck disable=SC2086
run enc-cuda $raw ! cudaupload ! "$cuda" ! c63cudaenc && same enc-cuda enc-cpu
# shellcheck disable=SC2086
run enc-cuda-nv12 $raw ! videoconvert ! video/x-raw,format=NV12 ! cudaupload ! "$cuda" ! \
  c63cudaenc && same enc-cuda-nv12 enc-cpu

c63="filesrc location=$tmp/enc-cpu ! c63parse"
# shellcheck disable=SC2086
run dec-system $c63 ! c63dec ! video/x-raw
# shellcheck disable=SC2086
run dec-cuda $c63 ! c63dec ! "$cuda" ! cudadownload ! video/x-raw && same dec-cuda dec-system
# shellcheck disable=SC2086
run reenc-system $c63 ! c63dec ! video/x-raw ! c63cudaenc quality=10
# shellcheck disable=SC2086
run reenc-cuda $c63 ! c63dec ! "$cuda" ! c63cudaenc quality=10 && same reenc-cuda reenc-system

if [ -n "${H264:-}" ]; then
  h264="filesrc location=$H264 ! h264parse ! nvh264dec"
  # shellcheck disable=SC2086
  run h264-cpu $h264 ! cudadownload ! video/x-raw ! videoconvert ! video/x-raw,format=I420 ! c63enc
  # shellcheck disable=SC2086
  run h264-cuda $h264 ! "$cuda" ! c63cudaenc && same h264-cuda h264-cpu
  # shellcheck disable=SC2086
  run h264-system $h264 ! cudadownload ! video/x-raw,format=NV12 ! c63cudaenc &&
    same h264-system h264-cpu
fi
exit $status
