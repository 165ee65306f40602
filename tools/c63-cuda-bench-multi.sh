#!/bin/sh
# c63-cuda-bench-multi.sh: N encoder processes sharing one GPU.
#
# usage: c63-cuda-bench-multi.sh BENCH N [c63-cuda-bench options...]
#   BENCH is the c63-cuda-bench binary. Runs N copies at once, each with the
#   given options, and prints each one's median fps and their sum next to a
#   single process's figure (run alone first, same options). Speed is
#   measured, never asserted.
set -eu
bench=${1:?usage: $0 BENCH N [options...]}; n=${2:?process count}; shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fps_of() { sed -n 's/^median of [0-9]* runs: \([0-9.]*\) fps$/\1/p' "$1"; }

"$bench" "$@" > "$tmp/single.log"
single=$(fps_of "$tmp/single.log")
i=1
while [ "$i" -le "$n" ]; do
  "$bench" "$@" > "$tmp/p$i.log" &
  i=$((i + 1))
done
wait
sum=0
i=1
while [ "$i" -le "$n" ]; do
  f=$(fps_of "$tmp/p$i.log")
  echo "process $i: $f fps"
  sum=$(echo "$sum $f" | awk '{printf "%.1f", $1 + $2}')
  i=$((i + 1))
done
echo "one process alone: $single fps"
echo "$n processes at once: aggregate $sum fps ($(echo "$sum $single" | awk '{printf "%.2f", $1 / $2}')x one)"
