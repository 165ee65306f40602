"""Finding and asking the c63 tools: next to c63-farm (installed or built
together), else on PATH.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import os
import shutil
import subprocess
import sys
import tempfile

import c63farm
from . import FarmError, UsageError

SONAME = "libc63.so.1"
FARM_WORKER_NAME = "libc63farm.so"


def find(name):
    here = os.path.dirname(os.path.abspath(sys.argv[0]))
    path = os.path.join(here, name)
    if os.access(path, os.X_OK):
        return path
    found = shutil.which(name)
    if found is None:
        raise FarmError("cannot find %s next to c63-farm or on PATH" % name)
    return os.path.abspath(found)


def version(path):
    out = subprocess.run([path, "--version"], capture_output=True, text=True)
    return out.stdout.strip()


def check_encoder_options(enc, args):
    """Let c63-enc judge the options (ranges, combinations), with -f 0 on an
    empty input: UsageError with its message when it refuses them. The CPU backend
    stands in for the GPU's, which the driver's host may lack."""
    args = list(args)
    if "--backend" in args:
        args[args.index("--backend") + 1] = "cpu"
    with tempfile.TemporaryDirectory(prefix="c63-farm.") as scratch:
        out = subprocess.run([enc] + args + ["-f", "0", "--quiet", "-o",
                                             os.path.join(scratch, "check.c63"), os.devnull],
                             capture_output=True, text=True)
    # -f 0 passes the options and then refuses to write an empty stream
    # (exit 1, "no frame to encode"): that refusal is the answer wanted
    if out.returncode == 0 or (out.returncode == 1 and "no frame to encode" in out.stderr):
        return
    first = out.stderr.strip().splitlines()[0] if out.stderr.strip() else "exit status %d" % (
        out.returncode)
    first = first.replace("c63-enc:", "").strip()
    if out.returncode == 2:
        raise UsageError(first)
    raise FarmError("c63-enc refuses the options: " + first)


def farm_worker_candidates(tool):
    """Where a worker looks for its chunk encoder (tools/farm_worker.h):
    the one built or installed with c63-farm, then the one next to TOOL (a
    build tree's tools, or a folder of binaries; TOOL's own folder where
    TOOL is a link)."""
    return [p for p in (c63farm.FARM_WORKER,
                        os.path.join(os.path.dirname(tool), FARM_WORKER_NAME),
                        os.path.join(os.path.dirname(os.path.realpath(tool)),
                                     FARM_WORKER_NAME)) if p]


def libc63_candidates(tool):
    """Where a worker looks for libc63 (c63farm.libc63.load), in order: the
    one built or installed with c63-farm, the one next to TOOL (a folder of
    binaries), the build tree's beside TOOL's folder; then the loader's."""
    here = os.path.dirname(tool)
    return [p for p in (c63farm.LIBC63, os.path.join(here, SONAME),
                        os.path.join(os.path.dirname(here), "c63", SONAME)) if p]
