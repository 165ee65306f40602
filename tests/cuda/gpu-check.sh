#!/bin/sh
# gpu-check.sh: the CUDA backend's whole verification on a GPU machine in one
# go (device time is scarce): the tests, the tests under compute-sanitizer
# memcheck and racecheck, and the benchmarks. Run from the repository root:
#
#   tests/cuda/gpu-check.sh BIN_DIR [OUT_DIR [PARTS]]
#
# PARTS picks what runs, since the whole takes longer than one device call
# may: any of tests, sanitizers, bench, joined by commas (default all three),
# pageable (bench/c63-pageable-bench.sh: every input route, one call),
# and gpus, on a machine with two GPUs: the elements on the second GPU and
# across both (tests/cuda/c63-gpus-check.sh), then one encoder process per GPU
# against one alone (the library from page-locked memory, and the element
# from CUDA memory), and profile: where the element pipelines' CPU time
# goes, thread by thread (bench/thread-profile.sh; the GPU machine has no
# perf: copy /usr/bin/perf into BIN_DIR before ../shared/gpu/make-kit.sh,
# which packs its libraries, or set PERF).
#
# BIN_DIR holds test_cuda_dsp, test_cuda_entropy, test_cuda_encode, test_cuda_decode,
# c63-cuda-bench and optionally test_cuda_routes, test_cuda_decode_errors, test_cuda_zero_copy,
# test_api, test_decode_api, test_tolerance, test_ratectl, c63-enc, c63-dec, c63-decode-bench,
# c63-element-bench, c63-memcpy-bench, check-c63cudaenc, check-c63dec,
# check-c63parse and libgstc63.so; the conformance inputs are unpacked from
# tests/data into OUT_DIR (xz, or Python's lzma where xz is missing).
# The GStreamer part needs a kit (../shared/gpu/make-kit.sh) sourced first.
# FUZZ_CORPUS=dir replays its files through the decoder under memcheck.
# REAL_MP4=path adds benchmarks on real 1080p footage (bench/real-footage.sh
# decodes that copy of its clip with the kit's nvh264dec); H264_CLIP=path
# (an H.264 byte stream) adds nvh264dec ! c63cudaenc to the pipelines
# checked (tests/cuda/c63-pipelines-check.sh).
# tests/cuda/gpu-pack.sh BUILD BIN_DIR gathers BIN_DIR from a build.
set -u
bin=${1:?usage: $0 BIN_DIR [OUT_DIR]}
out=${2:-${TMPDIR:-/tmp}/c63-gpu-check}
parts=,${3:-tests,sanitizers,bench},
want() { case $parts in *,$1,*) return 0 ;; esac; return 1; }
mkdir -p "$out/yuv"
export C63_TEST_DATA=$PWD/tests/data C63_TEST_YUV_DIR=$out/yuv
for f in tests/data/conformance/*.yuv.xz; do
  y=$out/yuv/$(basename "$f" .xz)
  [ -s "$y" ] && continue
  if command -v xz > /dev/null; then xz -dc "$f" > "$y"
  else python3 -c 'import lzma,sys; open(sys.argv[2],"wb").write(lzma.open(sys.argv[1]).read())' "$f" "$y"
  fi
done
status=0
# Every step has a time limit (STEP_TIMEOUT, default 300 s), so one that
# hangs is reported (exit 124) and the rest still run within the device
# call's own limit.
step() { # name command...
  name=$1; shift
  t0=$(date +%s.%N)
  # line-buffered, so a step that runs out of time shows how far it got
  timeout "${STEP_TIMEOUT:-300}" stdbuf -oL "$@" > "$out/$name.log" 2>&1; rc=$?
  t1=$(date +%s.%N)
  tail -n 4 "$out/$name.log"
  echo "== $name: exit $rc ($(echo "$t0 $t1" | awk '{printf "%.1f", $2 - $1}') s)"
  [ $rc -eq 0 ] || status=1
}
nvidia-smi -L
if want tests; then
step dsp "$bin/test_cuda_dsp"
step entropy "$bin/test_cuda_entropy"
step conformance "$bin/test_cuda_encode" conformance
step odd-sizes "$bin/test_cuda_encode" odd-sizes
step long "$bin/test_cuda_encode" long
step pinned "$bin/test_cuda_encode" pinned
# pictures in host memory by every route (staged, registered, page-locked,
# freed registrations, registrations shared by four encoders)
[ -x "$bin/test_cuda_routes" ] && step routes "$bin/test_cuda_routes"
step api "$bin/test_cuda_encode" api
step layouts "$bin/test_cuda_encode" layouts
step rd "$bin/test_cuda_encode" rd
step decode "$bin/test_cuda_decode"
# corrupt frames, resets and flushes mid-batch: verdicts as the CPU's
[ -x "$bin/test_cuda_decode_errors" ] && step decode-errors "$bin/test_cuda_decode_errors"
# the integrated-GPU path forced on (C63_CUDA_ZERO_COPY=1) against the
# copying path and the CPU
[ -x "$bin/test_cuda_zero_copy" ] && step zero-copy "$bin/test_cuda_zero_copy"
[ -x "$bin/test_decode_api" ] && step decode-api "$bin/test_decode_api"
# the public API with a device: registering picture memory among the rest
[ -x "$bin/test_api" ] && step api-unit "$bin/test_api"
# crafted streams of every accepted quirk, decoded on both backends (the
# CUDA pictures must equal the CPU's), and the rejections on both
[ -x "$bin/test_tolerance" ] && step tolerance "$bin/test_tolerance"
# rate control with frames in flight on the GPU (their sizes come back late)
[ -x "$bin/test_ratectl" ] && step ratectl "$bin/test_ratectl"
# The GStreamer suites get the environment tests/check/meson.build gives
# them: check's per-test time limits (with its default, 4 s, the CUDA
# memory input test timed out on a two-GPU H100 host, and passed there
# with CUDA_VISIBLE_DEVICES=0), and the CUDA suite in one process
# (CK_FORK=no, as the driver prefers).
if [ -f "$bin/libgstc63.so" ] && [ -x "$bin/check-c63cudaenc" ]; then
  GST_PLUGIN_PATH=$bin CK_FORK=no CK_DEFAULT_TIMEOUT=300 step gst-c63cudaenc \
    "$bin/check-c63cudaenc"
fi
if [ -f "$bin/libgstc63.so" ] && [ -x "$bin/check-c63dec" ]; then
  # backend=auto: the decoder element reconstructs on the GPU here
  GST_PLUGIN_PATH=$bin CK_DEFAULT_TIMEOUT=120 step gst-c63dec "$bin/check-c63dec"
  # decodebin and playbin pick c63dec, on the GPU here, after c63parse
  [ -x "$bin/check-c63parse" ] && GST_PLUGIN_PATH=$bin CK_DEFAULT_TIMEOUT=120 step gst-c63parse \
    "$bin/check-c63parse"
fi
# The paths through CUDA memory in whole gst-launch pipelines, each against
# system memory and the CPU encoder (H264_CLIP=path adds nvh264dec !
# c63cudaenc on that H.264 byte stream)
if [ -f "$bin/libgstc63.so" ] && command -v gst-launch-1.0 > /dev/null; then
  GST_PLUGIN_PATH=$bin H264=${H264_CLIP:-} step pipelines sh tests/cuda/c63-pipelines-check.sh \
    "$out/yuv/mandel_1920x1080.yuv" 1920 1080 30
  cat "$out/pipelines.log"
fi
fi
if want sanitizers && command -v compute-sanitizer > /dev/null; then
  if [ -f "$bin/libgstc63.so" ] && [ -x "$bin/check-c63cudaenc" ]; then
    # API errors are not counted here: the suite asks whether the element
    # registered a memory by registering it again from its own copy of
    # libc63, which the driver refuses (cudaErrorHostMemoryAlreadyRegistered)
    GST_PLUGIN_PATH=$bin CK_FORK=no CK_DEFAULT_TIMEOUT=300 step memcheck-gst-c63cudaenc \
      timeout 300 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 \
      "$bin/check-c63cudaenc"
  fi
  export C63_TEST_QUICK=1
  step memcheck-dsp timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/test_cuda_dsp"
  step racecheck-dsp timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/test_cuda_dsp"
  for tool in memcheck racecheck synccheck; do
    step $tool-entropy timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 \
      "$bin/test_cuda_entropy"
  done
  step memcheck-pinned timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$bin/test_cuda_encode" pinned
  [ -x "$bin/test_cuda_routes" ] && step memcheck-routes timeout 300 compute-sanitizer \
    --tool memcheck --error-exitcode 9 "$bin/test_cuda_routes"
  step memcheck-layouts timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$bin/test_cuda_encode" layouts
  for tool in memcheck racecheck initcheck; do
    step $tool-rd timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 \
      "$bin/test_cuda_encode" rd
  done
  step memcheck-decode timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$bin/test_cuda_decode"
  [ -x "$bin/test_cuda_zero_copy" ] && step memcheck-zero-copy timeout 300 compute-sanitizer \
    --tool memcheck --error-exitcode 9 "$bin/test_cuda_zero_copy"
  # The decoder's kernels under racecheck: its entropy stages in
  # test_cuda_huff, its reconstruction in racecheck-dsp, its own kernel
  # (expand_sparse) in test_cuda_decode, alone: with every kernel raced,
  # test_cuda_decode runs past any limit here.
  step racecheck-huff timeout 300 compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$bin/test_cuda_huff"
  step racecheck-decode timeout 300 compute-sanitizer --tool racecheck --kernel-name kns=expand_sparse \
    --error-exitcode 9 "$bin/test_cuda_decode"
  if [ -x "$bin/test_cuda_decode_errors" ]; then
    step memcheck-decode-errors timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
      "$bin/test_cuda_decode_errors"
    # FUZZ_CORPUS=dir: its files' frames through the decoder (GPU entropy)
    [ -d "${FUZZ_CORPUS:-}" ] && step memcheck-decode-replay timeout 300 compute-sanitizer \
      --tool memcheck --error-exitcode 9 "$bin/test_cuda_decode_errors" replay "$FUZZ_CORPUS"/*
  fi
  [ -x "$bin/test_decode_api" ] && step memcheck-decode-api timeout 300 compute-sanitizer \
    --tool memcheck --error-exitcode 9 "$bin/test_decode_api"
  [ -x "$bin/test_tolerance" ] && step memcheck-tolerance timeout 300 compute-sanitizer \
    --tool memcheck --error-exitcode 9 "$bin/test_tolerance"
  step synccheck-conformance timeout 150 compute-sanitizer --tool synccheck --error-exitcode 9 \
    "$bin/test_cuda_encode" conformance
  step memcheck-conformance timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$bin/test_cuda_encode" conformance
  step memcheck-odd-sizes timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$bin/test_cuda_encode" odd-sizes
  unset C63_TEST_QUICK
fi
# Benchmarks (speed is measured, never asserted). Library: delta frames
# (staged input, and page-locked input as from a pinned pool), all-keyframe,
# the rd mode (delta frames and all-keyframe),
# synthetic, 4K; then c63-enc file to file on tmpfs, N processes on one GPU,
# the element in-process and in gst-launch pipelines.
bench() { # name args...
  name=$1; shift
  step "$name" "$@"
  grep -E "median|upload|motion|transform|entropy|host|GPU stages|submit|collect|process|aggregate" \
    "$out/$name.log"
}
mandel=$out/yuv/mandel_1920x1080.yuv
if want gpus; then
  if [ -f "$bin/libgstc63.so" ]; then
    GST_PLUGIN_PATH=$bin step gpus-check sh tests/cuda/c63-gpus-check.sh "$mandel" 1920 1080 60
    cat "$out/gpus-check.log"
  fi
  PER_GPU=1 bench bench-gpus-lib sh bench/c63-cuda-bench-multi.sh "$bin/c63-cuda-bench" 2 -p \
    -f 3000 -n 5 "$mandel"
  [ -x "$bin/c63-element-bench" ] && GST_PLUGIN_PATH=$bin PER_GPU=1 bench bench-gpus-element \
    sh bench/c63-cuda-bench-multi.sh "$bin/c63-element-bench" 2 -c -f 3000 -n 5 "$mandel"
fi
# The encoder from every kind of input memory (issue 32's rows): library,
# element and pipeline, with the host's copy bandwidth
if want pageable; then
  step pageable sh bench/c63-pageable-bench.sh "$bin" "$mandel" "$out/pageable"
  grep -vE "^(round|run) " "$out/pageable.log"
fi
# Where the pipelines' CPU time goes, by thread and function: c63dec into
# CUDA and system memory, and the encoder behind rawvideoparse.
if want profile && [ -f "$bin/libgstc63.so" ] && command -v gst-launch-1.0 > /dev/null; then
  export PERF=${PERF:-$bin/perf}
  c63=$out/mandel-3000.c63
  python3 - "$C63_TEST_DATA/conformance/mandel_1920x1080.c63" "$c63" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
open(sys.argv[2], 'wb').write(d * (3000 // d.count(b'\xff\xd8\xff\xdb')))
PY
  profile() { # name pipeline...
    name=$1; shift
    GST_PLUGIN_PATH=$bin step "$name" sh bench/thread-profile.sh "$out/$name" gst-launch-1.0 -q "$@"
    head -n 40 "$out/$name.log"
  }
  profile profile-dec-cuda filesrc location="$c63" ! c63parse ! c63dec ! \
    "video/x-raw(memory:CUDAMemory)" ! fakesink sync=false
  profile profile-dec-sysmem filesrc location="$c63" ! c63parse ! c63dec ! fakesink sync=false
  python3 bench/repeat-frames.py "$mandel" 1920 1080 1000 "$out/mandel-1000.yuv"
  profile profile-enc-rawvideoparse filesrc location="$out/mandel-1000.yuv" \
    blocksize=3110400 ! rawvideoparse width=1920 height=1080 format=i420 ! queue ! \
    c63cudaenc ! fakesink sync=false
  rm -f "$c63" "$out/mandel-1000.yuv"
fi
want bench || exit $status
bench bench-mandel "$bin/c63-cuda-bench" -f 300 -n 5 "$mandel"
# Real 1080p footage (bench/real-footage.sh), where REAL_MP4 names a copy of
# the clip it decodes (the GPU machine has no package registry)
if [ -n "${REAL_MP4:-}" ] && sh bench/real-footage.sh "$out/yuv/real.yuv" 82 "$REAL_MP4"; then
  bench bench-real-pinned "$bin/c63-cuda-bench" -p -f 600 -n 5 "$out/yuv/real.yuv"
  bench bench-real-key-pinned "$bin/c63-cuda-bench" -p -k 1 -f 600 -n 5 "$out/yuv/real.yuv"
fi
bench bench-mandel-t4 "$bin/c63-cuda-bench" -t 4 -f 300 -n 5 "$mandel"
bench bench-mandel-pinned "$bin/c63-cuda-bench" -p -f 300 -n 5 "$mandel"
bench bench-mandel-key "$bin/c63-cuda-bench" -k 1 -f 300 -n 5 "$mandel"
bench bench-mandel-rd "$bin/c63-cuda-bench" -p -m rd -f 200 -n 3 "$mandel"
bench bench-mandel-rd-key "$bin/c63-cuda-bench" -p -m rd -k 1 -f 300 -n 3 "$mandel"
bench bench-mandel-key-pinned "$bin/c63-cuda-bench" -p -k 1 -f 300 -n 5 "$mandel"
# the integrated-GPU path forced on a discrete GPU: kernels read the
# pictures in host memory over the bus (staged, and page-locked in place)
bench bench-mandel-zero-copy "$bin/c63-cuda-bench" -z -f 300 -n 5 "$mandel"
bench bench-mandel-pinned-zero-copy "$bin/c63-cuda-bench" -p -z -f 300 -n 5 "$mandel"
bench bench-synth "$bin/c63-cuda-bench" -f 300 -n 5
bench bench-4k "$bin/c63-cuda-bench" -w 3840 -h 2160 -f 100 -n 5
bench bench-4k-pinned "$bin/c63-cuda-bench" -p -w 3840 -h 2160 -f 100 -n 5
bench bench-multi4 sh bench/c63-cuda-bench-multi.sh "$bin/c63-cuda-bench" 4 -f 1000 -n 3 "$mandel"
# page-locked input, where one process alone keeps the GPU busy: without
# MPS the others only share its time
bench bench-multi4-pinned sh bench/c63-cuda-bench-multi.sh "$bin/c63-cuda-bench" 4 -p -f 1000 -n 3 \
  "$mandel"
# The same under CUDA MPS, which runs the kernels of several processes at
# once instead of in time slices (a private daemon, stopped afterwards).
if command -v nvidia-cuda-mps-control > /dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY="$out/mps" CUDA_MPS_LOG_DIRECTORY="$out/mps-log"
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d; then
    bench bench-multi4-mps sh bench/c63-cuda-bench-multi.sh "$bin/c63-cuda-bench" 4 -f 1000 -n 3 \
      "$mandel"
    echo quit | nvidia-cuda-mps-control
  fi
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
fi
if [ -x "$bin/c63-enc" ]; then
  # 3000 frames of mandel on tmpfs, file to file, median of 3
  shm=${SHM:-/dev/shm}/c63-gpu-check
  mkdir -p "$shm"
  python3 - "$mandel" "$shm/in.yuv" 3000 <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
with open(sys.argv[2], 'wb') as f:
    for i in range(int(sys.argv[3]) // 5):
        f.write(d)
PY
  for i in 1 2 3; do
    "$bin/c63-enc" --backend cuda -w 1920 -h 1080 -o "$shm/out.c63" "$shm/in.yuv" 2>&1 | tail -1
  done > "$out/enc-file.log"
  cat "$out/enc-file.log"
  rm -rf "$shm"
fi
if [ -f "$bin/libgstc63.so" ] && command -v gst-launch-1.0 > /dev/null; then
  export GST_PLUGIN_PATH=$bin
  if [ -x "$bin/c63-element-bench" ]; then
    bench element "$bin/c63-element-bench" -f 3000 -n 5 "$mandel"
    bench element-pool "$bin/c63-element-bench" -p -f 3000 -n 5 "$mandel"
    # frames already in CUDA memory (cudaupload once, context shared)
    bench element-cuda "$bin/c63-element-bench" -c -f 3000 -n 5 "$mandel"
  fi
  bench gst-bench sh bench/c63-cuda-bench-gst.sh "$mandel" 1920 1080 1000 3
fi
# The decoder (bench/c63-dec-bench.sh): the library, c63-dec file to file
# beside dd, the element into CUDA and system memory, c63dec ! c63cudaenc;
# on mandel_1920x1080.c63 repeated to 3000 frames, and on real footage
# where REAL_MP4 names the clip.
if [ -x "$bin/c63-decode-bench" ]; then
  STEP_TIMEOUT=${STEP_TIMEOUT:-600} step dec-bench sh bench/c63-dec-bench.sh "$bin" 3000 3
  grep -E ": |==" "$out/dec-bench.log"
fi
exit $status
