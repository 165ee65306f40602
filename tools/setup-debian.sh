#!/bin/sh
# Install everything gst-c63 needs to build, test and run on Debian 12
# (bookworm): compiler and build tools, GStreamer development files, tools
# and plugins. Runs apt-get through sudo unless already root.
# clang builds the libFuzzer targets (tests/fuzz); the build works without.
# python3-dask and python3-distributed are c63-farm's Dask (docs/farm.md).
# The aarch64 cross compiler and qemu-user are tools/run-tests-aarch64.sh's
# (the library, tools, plugin and tests cross-built and run under
# emulation); dpkg's arm64 architecture gives apt the arm64 package lists,
# from which tools/aarch64-sysroot.sh downloads (installs nothing arm64).
# CUDA is optional: when nvcc is on the PATH (or in /usr/local/cuda/bin) the
# build adds the CUDA backend; nothing here installs it.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu

packages="
  build-essential gcc pkg-config meson ninja-build xz-utils coreutils
  libglib2.0-dev
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgstreamer-plugins-bad1.0-dev
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly
  python3-gi gir1.2-gstreamer-1.0 gir1.2-gst-plugins-base-1.0
  python3-dask python3-distributed
  clang
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
"

if [ "$(id -u)" -eq 0 ]; then
  SUDO=
elif command -v sudo >/dev/null 2>&1; then
  SUDO=sudo
else
  echo "setup-debian.sh: run as root or install sudo" >&2
  exit 1
fi

arch_added=
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $SUDO dpkg --add-architecture arm64
  arch_added=1
fi

# Skip apt when everything is there already (e.g. a second run).
missing=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' $packages 2>/dev/null |
  awk '$2 != "ii" { print $1 }')
installed=$(dpkg-query -W -f='${Package}\n' $packages 2>/dev/null | wc -l)
if [ -z "$arch_added" ] && [ -z "$missing" ] && [ "$installed" -eq "$(echo $packages | wc -w)" ]; then
  echo "setup-debian.sh: all packages are installed"
  exit 0
fi
$SUDO apt-get update
# shellcheck disable=SC2086
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $packages
