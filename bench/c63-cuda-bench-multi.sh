#!/bin/sh
# c63-cuda-bench-multi.sh: N encoder processes at once, sharing one GPU or,
# with PER_GPU=1, one process on each of N GPUs.
#
# usage: [PER_GPU=1] c63-cuda-bench-multi.sh BENCH N [bench options...]
#   BENCH is c63-cuda-bench or c63-element-bench (both take -d DEVICE and
#   print "median of R runs: F fps"). Runs N copies at once, each with the
#   given options (with PER_GPU=1, copy i also gets -d i-1: CUDA device
#   i-1, for c63-element-bench the encoder's cuda-device-id), and prints
#   each one's median fps and their sum next to a single process's figure
#   (run alone first, same options, on device 0). Speed is measured, never
#   asserted.
set -eu
bench=${1:?usage: $0 BENCH N [options...]}; n=${2:?process count}; shift 2
per_gpu=${PER_GPU:-0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# a signal ends the script (a trap that returns would let it go on)
trap "exit 130" INT
trap "exit 143" TERM
fps_of() { sed -n 's/^median of [0-9]* runs: \([0-9.]*\) fps$/\1/p' "$1"; }
# the device options of process $1 (1-based): none on a shared GPU
dev_args() { if [ "$per_gpu" = 1 ]; then echo "-d $(($1 - 1))"; fi; }

# shellcheck disable=SC2046 # dev_args is empty or "-d N": two words
"$bench" "$@" $(dev_args 1) > "$tmp/single.log"
single=$(fps_of "$tmp/single.log")
i=1
while [ "$i" -le "$n" ]; do
  # shellcheck disable=SC2046
  "$bench" "$@" $(dev_args "$i") > "$tmp/p$i.log" 2>&1 &
  i=$((i + 1))
done
wait
sum=0
i=1
while [ "$i" -le "$n" ]; do
  f=$(fps_of "$tmp/p$i.log")
  [ -n "$f" ] || { echo "process $i failed:"; tail -n 3 "$tmp/p$i.log"; f=0; }
  echo "process $i$([ "$per_gpu" = 1 ] && echo " (device $((i - 1)))"): $f fps"
  sum=$(echo "$sum $f" | awk '{printf "%.1f", $1 + $2}')
  i=$((i + 1))
done
where=$([ "$per_gpu" = 1 ] && echo "on $n GPUs" || echo "on one GPU")
echo "one process alone: $single fps"
echo "$n processes at once $where: aggregate $sum fps ($(echo "$sum $single" | awk '{printf "%.2f", $1 / $2}')x one)"
