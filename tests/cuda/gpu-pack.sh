#!/bin/sh
# gpu-pack.sh BUILD_DIR DEST_DIR: the programs tests/cuda/gpu-check.sh runs,
# copied from a build into one folder with their debug information stripped
# (function names kept, for backtraces), small enough to travel to a GPU
# machine with the GStreamer kit. A build for that GPU alone
# (meson setup BUILD -Dcuda-archs=90) makes them about half the size.
# Then: ../shared/gpu/make-kit.sh .gpukit DEST_DIR/* (every file here is a
# program or the plugin, which the kit's library scan needs).
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
b=${1:?usage: $0 BUILD_DIR DEST_DIR}
d=${2:?usage: $0 BUILD_DIR DEST_DIR}
rm -rf "$d"
mkdir -p "$d"
for f in tests/cuda/test_cuda_dsp tests/cuda/test_cuda_entropy tests/cuda/test_cuda_huff tests/cuda/test_cuda_encode tests/cuda/test_cuda_routes \
  tests/cuda/test_cuda_decode tests/cuda/test_cuda_decode_errors tests/cuda/test_cuda_zero_copy tests/test_decode_api tests/test_tolerance tests/test_ratectl \
  tests/check/check-c63cudaenc tests/check/check-c63dec tests/check/check-c63parse \
  gst/libgstc63.so bench/c63-cuda-bench bench/c63-memcpy-bench tools/c63-enc tools/c63-dec bench/c63-element-bench bench/c63-decode-bench \
  tests/check/c63-soak; do
  if [ -f "$b/$f" ]; then cp "$b/$f" "$d/"; else echo "gpu-pack: $b/$f not built, left out" >&2; fi
done
strip --strip-debug "$d"/*
du -sh "$d"
