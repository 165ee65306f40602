#!/bin/sh
# aarch64-sysroot.sh [DIR]: Debian 12's arm64 GLib and GStreamer (libraries,
# development files, the base plugins) unpacked into DIR/root without
# installing them, so that the plugin and its element tests cross-build and
# run under qemu-user (tools/run-tests-aarch64.sh). Installing those arm64
# -dev packages would remove the amd64 ones the x86-64 build needs (they are
# not multi-arch co-installable), so the .debs are fetched with
# `apt-get download` into DIR/debs (kept: a second run downloads nothing)
# and unpacked with `dpkg -x`.
#
# The packages are ROOTS and what they depend on, followed recursively
# (apt-cache depends, arm64), keeping only libraries and their development
# files: not the C library and compiler runtime (the cross toolchain's, in
# /usr/aarch64-linux-gnu), not programs (*-bin: the build machine's own run),
# not the GL and window-system stack that the base library's development
# package pulls in (neither the plugin nor its tests use it).
#
# Writes DIR/cross.ini, a Meson cross file to give after
# cross/aarch64-linux-gnu.ini: pkg-config reads the sysroot's .pc files,
# the linker finds the libraries' own dependencies there, and the emulated
# programs load the sysroot's libraries and GStreamer plugins, scanning them
# in-process (GST_REGISTRY_FORK=no: the plugin scanner is an aarch64
# program a fork cannot start without binfmt_misc).
# Needs dpkg's arm64 architecture and its package lists (tools/setup-debian.sh).
# DIR defaults to build-aarch64-sysroot.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
cd "$(dirname "$0")/.."
DIR=${1:-build-aarch64-sysroot}
ROOTS="libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-plugins-base
  libglib2.0-dev"
# Extended regular expressions on package names.
KEEP='^(lib|zlib1g|gstreamer1[.]0-plugins-base$)'
SKIP='^lib(c6|c6-dev|gcc-s1|stdc[+][+]6|crypt-dev|nsl-dev|tirpc-dev)$|-bin$'
SKIP="$SKIP|^lib(gstreamer-gl|gbm|drm|wayland|gudev|udev|pciaccess)"
SKIP="$SKIP|^lib(gl|glx|gles|egl|glvnd|glapi)[0-9]*(-|$)|^lib(x11|xcb|xau|xdmcp|pthread-stubs).*-dev$"

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "aarch64-sysroot.sh: dpkg has no arm64 architecture: run tools/setup-debian.sh" >&2
  exit 1
fi

# ROOTS and the closure of their dependencies under KEEP and SKIP, from one
# recursive listing (apt builds its cache anew for each call where the
# cache file is turned off, as in Debian's container images). A package's
# dependencies are its arm64 ones (not Architecture: all data, nor the
# build machine's packages): of each group of alternatives the first, of a
# virtual package its first arm64 provider.
resolve() {
  # shellcheck disable=SC2086
  printf '%s:arm64\n' $ROOTS |
    xargs apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
      --no-breaks --no-replaces --no-enhances |
    awk -v roots="$ROOTS" -v keep="$KEEP" -v skip="$SKIP" '
      function add(d) {
        if (sub(/:arm64$/, "", d)) deps[pkg] = deps[pkg] " " d
      }
      /^[^ ]/ {
        pkg = $1
        if (!sub(/:arm64$/, "", pkg)) pkg = ""
        in_group = 0
        virtual = 0
        next
      }
      pkg == "" { next }
      /^  \|?(Pre)?Depends: / {
        if (!in_group) { virtual = $2 ~ /^</; if (!virtual) add($2) }
        else virtual = 0
        in_group = $1 ~ /^\|/
        next
      }
      /^    [^ ]*:arm64$/ { if (virtual) { add($1); virtual = 0 } }
      END {
        n = split(roots, queue)
        for (i = 1; i <= n; i++) {
          if (queue[i] in seen) continue
          seen[queue[i]] = 1
          print queue[i]
          m = split(deps[queue[i]], d)
          for (j = 1; j <= m; j++)
            if (d[j] ~ keep && d[j] !~ skip && !(d[j] in seen)) queue[++n] = d[j]
        }
      }' | sort
}

mkdir -p "$DIR/debs"
packages=$(resolve)
# "package version" of each, and the file apt-get download saves it in
# (an epoch's colon written %3a)
wanted=$(echo "$packages" | sed 's/$/:arm64/' | xargs apt-cache policy |
  awk '/^[^ ]/ { sub(/:arm64:$/, ""); p = $1 } /Candidate:/ { print p, $2 }')
if [ -z "$wanted" ] || echo "$wanted" | grep -q ' (none)$'; then
  echo "aarch64-sysroot.sh: apt has no arm64 packages: run tools/setup-debian.sh" \
    "(apt-get update after dpkg --add-architecture arm64)" >&2
  exit 1
fi
deb_file() {
  echo "$DIR/debs/${1}_$(echo "$2" | sed 's/:/%3a/')_arm64.deb"
}
stamp="$DIR/root/.packages"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] && [ -f "$DIR/cross.ini" ]; then
  echo "aarch64-sysroot.sh: $DIR is up to date ($(echo "$packages" | wc -l) packages)"
  exit 0
fi

missing=$(echo "$wanted" | while read -r p v; do
  [ -f "$(deb_file "$p" "$v")" ] || echo "$p:arm64=$v"
done)
if [ -n "$missing" ]; then
  # shellcheck disable=SC2086
  (cd "$DIR/debs" && apt-get download $missing)
fi

rm -rf "$DIR/root"
mkdir -p "$DIR/root"
root=$(cd "$DIR/root" && pwd)
echo "$wanted" | while read -r p v; do
  dpkg -x "$(deb_file "$p" "$v")" "$root"
done
# Links to absolute paths point into the sysroot, not at the build machine.
find "$root" -type l -lname '/*' | while read -r link; do
  ln -sfn "$root$(readlink "$link")" "$link"
done

lib="$root/usr/lib/aarch64-linux-gnu"
# Every library and plugin finds what it links to, in the sysroot or in the
# cross toolchain's C library.
unresolved=$(find "$lib" "$root/lib" -name '*.so*' -type f -exec aarch64-linux-gnu-readelf -d {} + \
  2> /dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' | sort -u |
  while read -r so; do
    [ -e "$lib/$so" ] || [ -e "$root/lib/aarch64-linux-gnu/$so" ] ||
      [ -e "/usr/aarch64-linux-gnu/lib/$so" ] || echo "$so"
  done)
if [ -n "$unresolved" ]; then
  echo "aarch64-sysroot.sh: no package here provides $(echo "$unresolved" | tr '\n' ' ')" >&2
  exit 1
fi
cat > "$DIR/cross.ini" << EOF
# Generated by tools/aarch64-sysroot.sh: after cross/aarch64-linux-gnu.ini.
[constants]
sysroot = '$root'
libs = sysroot + '/usr/lib/aarch64-linux-gnu:' + sysroot + '/lib/aarch64-linux-gnu'

[binaries]
exe_wrapper = ['qemu-aarch64', '-L', '/usr/aarch64-linux-gnu',
  '-E', 'LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib:' + libs,
  '-E', 'GST_PLUGIN_SYSTEM_PATH=' + sysroot + '/usr/lib/aarch64-linux-gnu/gstreamer-1.0',
  '-E', 'GST_REGISTRY_FORK=no']

[properties]
sys_root = sysroot
pkg_config_libdir = [sysroot + '/usr/lib/aarch64-linux-gnu/pkgconfig',
  sysroot + '/usr/share/pkgconfig']

[built-in options]
c_link_args = ['-Wl,-rpath-link,' + libs]
EOF
echo "$wanted" > "$stamp"
echo "aarch64-sysroot.sh: $(echo "$packages" | wc -l) packages in $root ($(du -sh "$DIR/debs" | cut -f1) of .debs)"
