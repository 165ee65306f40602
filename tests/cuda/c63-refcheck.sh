#!/bin/sh
# c63-refcheck.sh: do streams decode to the same pictures in the reference
# decoder (c63dec of github.com/griwodz/in5050-codec63, c63-in-c) as in
# ours? The reference is not part of this repository: build it in a scratch
# folder, with its own flags, for example
#
#   git clone https://github.com/griwodz/in5050-codec63 /tmp/ref
#   (cd /tmp/ref/c63-in-c && gcc -std=c11 -O1 -fno-tree-vectorize -o /tmp/ref/c63dec \
#      c63dec.c common.c dsp.c io.c me.c tables.c c63_write.c -lm)
#
# usage: c63-refcheck.sh REF_C63DEC STREAM.c63...
#   Our pictures are STREAM.yuv when it exists (test_tolerance writes them
#   with C63_TOLERANCE_DUMP=DIR), otherwise c63-dec makes them ($C63_DEC,
#   default build/tools/c63-dec). The reference writes its padded planes
#   with the visible width as stride, so only pictures whose width is a
#   multiple of 16 and whose height is even compare. Exit 0 when all match.
set -u
ref=${1:?usage: $0 REF_C63DEC STREAM.c63...}
shift
dec=${C63_DEC:-build/tools/c63-dec}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# a signal ends the script (a trap that returns would let it go on)
trap "exit 130" INT
trap "exit 143" TERM
bad=0 n=0
for s in "$@"; do
  ours=${s%.c63}.yuv
  if [ ! -f "$ours" ]; then
    ours=$tmp/ours.yuv
    "$dec" --quiet "$s" "$ours" || { echo "$s: our decoder failed"; bad=$((bad + 1)); continue; }
  fi
  # The reference exits with a failure after the last frame ("End of
  # file"), having written every picture: its output is what counts.
  "$ref" "$s" "$tmp/ref.yuv" > /dev/null 2>&1
  n=$((n + 1))
  if cmp -s "$tmp/ref.yuv" "$ours"; then
    echo "$s: same pictures"
  else
    echo "$s: DIFFERENT pictures ($(wc -c < "$tmp/ref.yuv") bytes from the reference," \
      "$(wc -c < "$ours") from ours)"
    bad=$((bad + 1))
  fi
done
echo "$n streams, $bad different"
[ "$bad" -eq 0 ]
