#!/bin/sh
# test_layout.sh SOURCE_DIR: the layout rules of CONTRIBUTING.md ("Layout")
# that the build alone cannot hold:
#  - the installed programs (tools/) and the plugin (gst/) include the
#    public header "c63/c63.h" and no internal header of libc63 or cuda/;
#  - gst/common/ includes nothing of the elements; the elements reach the
#    shared code as "common/...";
#  - tools/ holds no benchmark and no check (those are in bench/, tests/).
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
cd "${1:?usage: $0 SOURCE_DIR}"
status=0
[ -d gst/common ] || { echo "FAIL: no gst/common/"; exit 1; }
fail() {
  echo "FAIL: $*"
  status=1
}

# shellcheck disable=SC2046 # one word per file
bad=$(grep -n -E '#include "(c63/|cuda/|\.\./)' /dev/null $(find tools gst -name '*.[ch]') |
  grep -v '#include "c63/c63.h"' || true)
[ -z "$bad" ] || fail "internal headers included by the tools or the plugin:
$bad"

# shellcheck disable=SC2046
bad=$(grep -n -E '#include "(c63enc|c63dec|c63parse)/|#include "plugin' /dev/null $(find gst/common -name '*.[ch]') ||
  true)
[ -z "$bad" ] || fail "gst/common/ includes the elements:
$bad"
for f in gst/common/*.h; do
  name=$(basename "$f")
  # shellcheck disable=SC2046
  bad=$(grep -n "#include \"$name\"" /dev/null $(find gst -path gst/common -prune -o -name '*.[ch]' -print) ||
    true)
  [ -z "$bad" ] || fail "$name included without its folder (common/$name):
$bad"
done

bad=$(find tools -maxdepth 1 -type f \( -name '*bench*' -o -name '*check*' -o -name '*soak*' \))
[ -z "$bad" ] || fail "benchmarks or checks in tools/: $bad"

[ "$status" = 0 ] && echo "layout: the tools and the plugin use c63/c63.h only, gst/common/ nothing" \
  "of the elements, tools/ no benchmark or check"
exit "$status"
