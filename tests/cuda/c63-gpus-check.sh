#!/bin/sh
# c63-gpus-check.sh: the elements on a second GPU and across two, on a
# machine with two or more. Every pipeline must give the bytes that device
# 0 gives from system memory:
#  - c63cudaenc cuda-device-id=1 from system memory and from CUDA memory
#    uploaded on device 1, and from CUDA memory of device 0 (another
#    device's memory: the element copies it);
#  - c63dec cuda-device-id=1 into system memory and into CUDA memory
#    (cudadownload), against c63dec on device 0;
#  - c63dec ! c63cudaenc on device 1, a GPU-to-GPU re-encode.
# Prints one line per pipeline and exits non-zero on any failure or
# difference. Speed is measured elsewhere (c63-cuda-bench-multi.sh with
# PER_GPU=1). Needs the plugin on GST_PLUGIN_PATH and nvcodec's cudaupload
# and cudadownload (on the GPU machine: the kit's env.sh).
#
# usage: c63-gpus-check.sh INPUT.yuv WIDTH HEIGHT [FRAMES]
# SPDX-License-Identifier: LGPL-2.1-or-later
set -u
in=${1:?usage: $0 INPUT.yuv WIDTH HEIGHT [FRAMES]}
w=${2:?width}; h=${3:?height}; frames=${4:-60}
gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')
if [ "$gpus" -lt 2 ]; then
  echo "SKIP: $gpus GPU(s); this check needs two"
  exit 0
fi
# tmp, raw and status from in, w, h and frames; run NAME PIPELINE... and
# same NAME REF
# shellcheck source=tests/cuda/gst-compare.sh
. "$(dirname "$0")/gst-compare.sh"
# enc NAME SOURCE-ELEMENTS: encode the clip with c63cudaenc on device 1
enc() {
  name=$1; shift
  # shellcheck disable=SC2086 # the pipelines are words for gst-launch
  run "$name" $raw ! "$@" && same "$name" enc-dev0-system
}

# shellcheck disable=SC2086
run enc-dev0-system $raw ! c63cudaenc cuda-device-id=0
enc enc-dev1-system c63cudaenc cuda-device-id=1
enc enc-dev1-cuda cudaupload cuda-device-id=1 ! 'video/x-raw(memory:CUDAMemory)' ! \
  c63cudaenc cuda-device-id=1
enc enc-dev0-cuda-on-dev1 cudaupload cuda-device-id=0 ! 'video/x-raw(memory:CUDAMemory)' ! \
  c63cudaenc cuda-device-id=1

c63="filesrc location=$tmp/enc-dev0-system ! c63parse"
# shellcheck disable=SC2086
run dec-dev0 $c63 ! c63dec cuda-device-id=0 ! video/x-raw
# shellcheck disable=SC2086
run dec-dev1 $c63 ! c63dec cuda-device-id=1 ! video/x-raw && same dec-dev1 dec-dev0
# shellcheck disable=SC2086
run dec-dev1-cuda $c63 ! c63dec cuda-device-id=1 ! 'video/x-raw(memory:CUDAMemory)' ! \
  cudadownload ! video/x-raw && same dec-dev1-cuda dec-dev0
# shellcheck disable=SC2086
run reenc-dev0 $c63 ! c63dec cuda-device-id=0 ! c63cudaenc cuda-device-id=0 quality=10
# shellcheck disable=SC2086
run reenc-dev1 $c63 ! c63dec cuda-device-id=1 ! c63cudaenc cuda-device-id=1 quality=10 &&
  same reenc-dev1 reenc-dev0
exit $status
