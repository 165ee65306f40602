#!/bin/sh
# The rd mode's efficiency gate: c63-rd on a fixed synthetic clip (the
# natural scene, 176x144, 20 frames, qualities 10..50), exact (A) against
# rd (B). The BD-rate of rd against exact (PSNR-Y and PSNR-YUV) and rd's
# bytes at the same qualities as a share of exact's must lie within the
# bands recorded in docs/rd.md ("The efficiency gate"): a change that moves
# them, for better or worse, is a change of the rd mode to measure and
# record there, not a side effect.
# Usage: test_rd_gate.sh C63-RD OUTPUT-FILE
set -eu
rd_tool=$1
out=$2
"$rd_tool" -w 176 -h 144 -f 20 -q 10,20,30,40,50 -a mode=exact -b mode=rd --scene natural >"$out"
cat "$out"
awk '
  /^config A/ { cfg = "A" }
  /^config B/ { cfg = "B" }
  /^  quality / { rate[cfg] += $3 }
  /BD-rate of B against A, PSNR-Y:/ { bd_y = $NF + 0 }
  /BD-rate of B against A, PSNR-YUV:/ { bd_yuv = $NF + 0 }
  function within(name, v, lo, hi) {
    if (v < lo || v > hi) {
      printf "FAIL: %s %.2f outside %.2f..%.2f\n", name, v, lo, hi
      bad = 1
    } else {
      printf "ok: %s %.2f within %.2f..%.2f\n", name, v, lo, hi
    }
  }
  END {
    if (!rate["A"] || !rate["B"] || bd_y == 0 || bd_yuv == 0) { print "FAIL: no result"; exit 1 }
    within("BD-rate PSNR-Y (%)", bd_y, -39.5, -31.5)
    within("BD-rate PSNR-YUV (%)", bd_yuv, -37.0, -29.0)
    within("rd bytes / exact bytes at equal quality", rate["B"] / rate["A"], 0.60, 0.73)
    exit bad
  }' "$out"
