#!/bin/sh
# thread-profile.sh: where a command's CPU time goes, thread by thread
# (issues 31 and 32 ask for per-thread CPU samples of the pipelines). Runs
# COMMAND under `perf record` (sampling every thread at FREQ Hz, default
# 1999) and prints, for the threads with the most samples, their share and
# their top functions (library and symbol). GStreamer names its streaming
# threads after their pads (filesrc0:src, c63dec0:src, ...), so a
# pipeline's threads read as its elements. Speed is measured here, never
# asserted.
#
# usage: thread-profile.sh OUT_DIR COMMAND [ARGS...]
#   OUT_DIR   gets perf.data and report.txt (the whole report)
#   PERF      the perf program (default: perf on the PATH; the GPU
#             machine has none, so carry one: ../shared/gpu/make-kit.sh
#             packs /usr/bin/perf with its libraries like any program)
#   THREADS   threads shown (default 6), SYMBOLS per thread (default 8)
# perf needs the right to sample (kernel.perf_event_paranoid at most 2
# for one's own processes); where it has none, the script says so.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
out=${1:?usage: $0 OUT_DIR COMMAND [ARGS...]}
shift
[ $# -gt 0 ] || { echo "usage: $0 OUT_DIR COMMAND [ARGS...]" >&2; exit 2; }
perf=${PERF:-perf}
threads=${THREADS:-6}
symbols=${SYMBOLS:-8}
mkdir -p "$out"
if ! command -v "$perf" > /dev/null 2>&1; then
  echo "thread-profile: no perf ($perf); set PERF=path" >&2
  exit 1
fi
# perf record exits with the command's status, or fails itself where it
# has no right to sample.
if ! "$perf" record -q -F "${FREQ:-1999}" -o "$out/perf.data" -- "$@"; then
  echo "thread-profile: the command, or perf record (the right to sample?), failed" >&2
  exit 1
fi
"$perf" report -i "$out/perf.data" --stdio --no-children --sort comm,dso,sym \
  2> /dev/null > "$out/report.txt"
# Lines: "  12.34%  comm  dso  [.] symbol"; per thread (comm), its total and
# its first symbols.
awk -v threads="$threads" -v symbols="$symbols" '
  /^ *[0-9.]+%/ {
    pct = $1; sub(/%/, "", pct); comm = $2
    line = $0; sub(/^ *[0-9.]+% +[^ ]+ +/, "", line)
    total[comm] += pct
    if (n[comm] < symbols) { n[comm]++; top[comm, n[comm]] = sprintf("  %6.2f%%  %s", pct, line) }
  }
  END {
    for (c in total) order[c] = total[c]
    shown = 0
    while (shown < threads) {
      best = ""; bv = -1
      for (c in order) if (order[c] > bv) { bv = order[c]; best = c }
      if (best == "") break
      printf "%6.2f%%  thread %s\n", total[best], best
      for (i = 1; i <= n[best]; i++) print top[best, i]
      delete order[best]; shown++
    }
  }' "$out/report.txt"
