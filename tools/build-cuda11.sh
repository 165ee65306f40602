#!/bin/sh
# build-cuda11.sh [BUILD_DIR [TARGET...]]: the CUDA kernels compiled for the Jetson
# boards with a CUDA 11 toolkit, the generation JetPack 5 ships: Debian 12's
# nvidia-cuda-toolkit (11.8), device code for sm_72 (AGX Xavier) and sm_87
# (AGX Orin), the ninja target cuda-objects alone (no GPU needed, nothing
# runs). CUDA 13 has no sm_72 any more, so this is the build that shows
# the kernels still compile for Xavier (docs/jetson.md).
# Installs the toolkit when /usr/bin/nvcc is not CUDA 11 (apt, adding
# Debian's contrib and non-free components, where it and the driver
# library it depends on live) and g++-11, the newest GCC CUDA 11.8 takes.
# BUILD_DIR defaults to build-cuda11. TARGETs other than cuda-objects build
# more of a BUILD_DIR configured by hand (docs/jetson.md: the CUDA tests for
# a run on a GPU machine), with the same tools and headers.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build-cuda11}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- cuda-objects

if [ "$(id -u)" -eq 0 ]; then SUDO=; else SUDO=sudo; fi
if ! /usr/bin/nvcc --version 2>/dev/null | grep -q 'release 11\.'; then
  printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' \
    'Suites: bookworm bookworm-updates' 'Components: contrib non-free' \
    'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
    $SUDO tee /etc/apt/sources.list.d/debian-non-free.sources > /dev/null
  $SUDO apt-get update
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    nvidia-cuda-toolkit g++-11
fi
/usr/bin/nvcc --version | tail -n 2

if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" --native-file tools/nvcc-debian.ini -Dcuda=enabled -Dcuda-archs=72,87 \
    -Dgst=disabled -Dtests=disabled
fi
# Debian's nvcc runs the ptxas it finds first on the PATH and reads the
# headers of GCC's search path, where /usr/local (a CUDA 13 installation,
# as on our machines) comes before Debian's own: its own tools first, and
# /usr/local/include hidden in a mount namespace of this build alone.
PATH=/usr/bin:$PATH
export PATH
if [ -e /usr/local/include/cuda_runtime.h ]; then
  if ! unshare -m true 2> /dev/null; then
    echo "build-cuda11.sh: CUDA 11.8 device build skipped: /usr/local/include holds another" \
      "CUDA's headers and this machine gives no mount namespace to hide them" >&2
    exit 0
  fi
  empty=$(mktemp -d)
  status=0
  unshare -m sh -c 'dir=$1 build=$2 && shift 2 &&
    mount --bind "$dir" /usr/local/include && exec ninja -C "$build" "$@"' \
    sh "$empty" "$BUILD" "$@" || status=$?
  rmdir "$empty"
  exit $status
fi
ninja -C "$BUILD" "$@"
