#!/bin/sh
# fetch-wheels.sh: Dask for a machine without a package registry
# (docs/farm.md, "Installing Dask").
#
#   fetch-wheels.sh DIR [PYTHON_VERSION]   on a machine with a registry:
#       download dask, distributed and every package they need as wheels
#       for CPython PYTHON_VERSION (default 3.12: Ubuntu 24.04's) on
#       x86_64 Linux (manylinux) into DIR. Carry DIR to the target.
#   fetch-wheels.sh --install DIR          on the target: unpack them into
#       DIR/site (pip install --no-index where the target's Python has pip,
#       else the wheels unzipped, which is all a wheel's installation is
#       for these packages), and print the PYTHONPATH to set.
#
# Settings (environment): PYTHON (default python3) runs pip and the
# install; PACKAGES (default "dask distributed") what to fetch.
# Only wheels: nothing is built; a package without one for the target fails
# the download. Dask's dashboard (bokeh) is left out: it is large and
# c63-farm does not need it.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
py=${PYTHON:-python3}

if [ "${1:-}" = --install ]; then
  dir=${2:?usage: $0 --install DIR}
  site=$dir/site
  if [ -d "$site" ]; then
    echo "fetch-wheels: $site exists; remove it to install again" >&2
  elif "$py" -m pip --version > /dev/null 2>&1; then
    # shellcheck disable=SC2086 # a list of names
    "$py" -m pip install --quiet --no-index --find-links "$dir" --target "$site" \
      ${PACKAGES:-dask distributed}
  else
    for wheel in "$dir"/*.whl; do
      "$py" -m zipfile -e "$wheel" "$site"
    done
  fi
  PYTHONPATH=$site "$py" -c 'import dask, distributed
print("fetch-wheels: dask %s, distributed %s" % (dask.__version__, distributed.__version__))' >&2
  echo "export PYTHONPATH=$(cd "$site" && pwd)\${PYTHONPATH:+:\$PYTHONPATH}"
  exit 0
fi

dir=${1:?usage: $0 DIR [PYTHON_VERSION] | $0 --install DIR}
version=${2:-3.12}
mkdir -p "$dir"
# manylinux tags up to glibc 2.28 run on every current distribution
# (Ubuntu 24.04 has 2.39); pure-Python wheels (py3-none-any) need none.
# shellcheck disable=SC2086 # a list of names
"$py" -m pip download --quiet --only-binary=:all: --dest "$dir" \
  --python-version "$version" --implementation cp \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_5_x86_64 \
  --platform manylinux1_x86_64 --platform linux_x86_64 \
  ${PACKAGES:-dask distributed}
count=$(find "$dir" -maxdepth 1 -name '*.whl' | wc -l)
size=$(du -sk "$dir" | cut -f1)
echo "fetch-wheels: $count wheels for CPython $version in $dir, $((size / 1024)) MiB" \
  "($((size)) KiB); on the target: $0 --install $dir"
