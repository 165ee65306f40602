#!/bin/sh
# test_install.sh: what `meson install` gives another project, checked in a
# scratch destination directory (meson install --destdir):
#  - libc63.so exports exactly the functions c63.h declares;
#  - an outside program (examples/encode_decode.c) builds with
#    `pkg-config --cflags --libs c63` against the installed tree and runs;
#  - the installed tools run (a small clip through c63-enc and c63-dec);
#  - nothing else is installed in include/ and bin/ (no internal header,
#    no benchmark);
#  - the installed plugin loads in gst-inspect-1.0 and exports only the
#    plugin entry points.
#
#   test_install.sh BUILD_DIR SOURCE_DIR PREFIX LIBDIR PLUGIN_DIR CC
set -eu
build=$1 src=$2 prefix=$3 libdir=$4 plugindir=$5 cc=$6
dest=$(mktemp -d "${TMPDIR:-/tmp}/c63-install.XXXXXX")
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --destdir "$dest" --no-rebuild --quiet > "$dest/install.log" 2>&1 ||
  { cat "$dest/install.log"; exit 1; }
case $libdir in /*) lib=$dest$libdir ;; *) lib=$dest$prefix/$libdir ;; esac
case $plugindir in /*) plug=$dest$plugindir ;; *) plug=$dest$prefix/$plugindir ;; esac

# Exports: the declarations of c63.h (static inline helpers excepted).
"$cc" -fsyntax-only -aux-info "$dest/aux.txt" "$dest$prefix/include/c63/c63.h"
grep 'c63\.h' "$dest/aux.txt" | grep -v static | grep -oE '\bc63_[a-z0-9_]+ \(' |
  sed 's/ (//' | sort -u > "$dest/declared.txt"
nm -D --defined-only "$lib/libc63.so" | awk '$3 !~ /^C63_/ {sub(/@.*/, "", $3); print $3}' |
  sort -u > "$dest/exported.txt"
if ! cmp -s "$dest/declared.txt" "$dest/exported.txt"; then
  echo "libc63.so exports differ from c63.h (< declared, > exported):"
  diff "$dest/declared.txt" "$dest/exported.txt" || true
  exit 1
fi
echo "libc63.so: exports the $(wc -l < "$dest/exported.txt") functions of c63.h, nothing else"

# An outside program, built the way another project would.
flags=$(PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest pkg-config --cflags --libs c63)
echo "pkg-config --cflags --libs c63: $flags"
# shellcheck disable=SC2086 # flags are words
"$cc" -std=c11 -o "$dest/encode_decode" "$src/examples/encode_decode.c" $flags -lm
LD_LIBRARY_PATH=$lib "$dest/encode_decode"

# The tools.
bin=$dest$prefix/bin
"$bin/c63-synth" -w 64 -h 48 -f 3 "$dest/clip.yuv" > /dev/null
"$bin/c63-enc" -w 64 -h 48 -o "$dest/clip.c63" "$dest/clip.yuv" > /dev/null 2>&1
"$bin/c63-dec" "$dest/clip.c63" "$dest/out.yuv" > /dev/null 2>&1
[ "$(wc -c < "$dest/out.yuv")" -eq $((64 * 48 * 3 / 2 * 3)) ]
echo "tools: c63-synth, c63-enc and c63-dec run from $prefix/bin"
# Only the public header and the installed programs: benchmarks and checks
# (bench/, tests/) and the library's internal headers stay in the tree.
headers=$(cd "$dest$prefix/include" && find . -type f | sort | tr '\n' ' ')
[ "$headers" = "./c63/c63.h " ] || { echo "installed headers: $headers, expected ./c63/c63.h"; exit 1; }
programs=$(ls "$bin" | tr '\n' ' ')
[ "$programs" = "c63-dec c63-enc c63-farm c63-psnr c63-rd c63-synth " ] ||
  { echo "installed programs: $programs"; exit 1; }
echo "installed: the header c63/c63.h, the programs $programs"
# c63-farm: the launcher names its package where it was installed (run from
# the scratch tree through PYTHONPATH).
farm_py=$prefix/share/gst-c63/python
grep -q "\"$farm_py\"" "$bin/c63-farm"
PYTHONPATH=$dest$farm_py python3 "$bin/c63-farm" encode --help | grep -q "Usage: c63-farm encode"
echo "tools: c63-farm runs from $prefix/bin with its package in $farm_py"

# The plugin, when it was built.
if [ -f "$plug/libgstc63.so" ]; then
  extra=$(nm -D --defined-only "$plug/libgstc63.so" | awk '{print $3}' |
    grep -v '^gst_plugin_c63_' || true)
  if [ -n "$extra" ]; then
    echo "the plugin exports more than its entry points:"
    echo "$extra" | head
    exit 1
  fi
  GST_PLUGIN_PATH=$plug GST_REGISTRY=$dest/registry.bin gst-inspect-1.0 c63enc > "$dest/inspect.txt"
  grep -q 'c63enc' "$dest/inspect.txt"
  echo "plugin: GST_PLUGIN_PATH=$plugindir finds c63enc; only gst_plugin_c63_* exported"
fi
echo "install: passed"
