#!/usr/bin/env python3
"""repeat-frames.py: write OUTPUT.yuv holding FRAMES frames of WIDTH x HEIGHT
I420, INPUT.yuv's whole frames repeated as often as needed (the benchmarks'
long inputs from a short clip).

usage: repeat-frames.py INPUT.yuv WIDTH HEIGHT FRAMES OUTPUT.yuv

The copies are written through shared mappings of OUTPUT by one child
process a core (PROCESSES in the environment sets the count). Writing a
large file on tmpfs is bound by allocating and zeroing its pages, and on a
fresh virtual machine by the host backing them: write() holds the file's
lock while it does that, one writer at a time, where page faults into a
shared mapping run in parallel.
SPDX-License-Identifier: LGPL-2.1-or-later
"""

import mmap
import os
import sys


def fill(path, size, clip, first, step):
    """Copy clip into every step-th slot of path's mapping from slot first."""
    fd = os.open(path, os.O_RDWR)
    try:
        with mmap.mmap(fd, size) as out:
            start = first * len(clip)
            while start < size:
                end = min(size, start + len(clip))
                out[start:end] = clip[: end - start]
                start += step * len(clip)
    finally:
        os.close(fd)


def main(argv):
    if len(argv) != 6:
        sys.exit("usage: repeat-frames.py INPUT.yuv WIDTH HEIGHT FRAMES OUTPUT.yuv")
    src, w, h, frames, dst = argv[1], int(argv[2]), int(argv[3]), int(argv[4]), argv[5]
    fsize = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
    with open(src, "rb") as f:
        have = os.fstat(f.fileno()).st_size // fsize
        if have < 1:
            sys.exit("%s holds no whole %dx%d frame" % (src, w, h))
        clip = f.read(min(have, frames) * fsize)
    size = frames * fsize
    # a page that cannot be allocated behind a mapping is a SIGBUS, so
    # look for the room first
    room = os.statvfs(os.path.dirname(os.path.abspath(dst)))
    if room.f_bavail * room.f_frsize < size:
        sys.exit("repeat-frames: %s needs %d bytes, its file system has %d free"
                 % (dst, size, room.f_bavail * room.f_frsize))
    with open(dst, "wb") as f:
        f.truncate(size)
    jobs = max(1, min(int(os.environ.get("PROCESSES", os.cpu_count() or 1)),
                      -(-size // len(clip))))
    children = []
    for first in range(jobs):
        pid = os.fork()
        if pid == 0:
            try:
                fill(dst, size, clip, first, jobs)
            except BaseException as e:  # the child reports and exits
                print("repeat-frames: %s: %s" % (dst, e), file=sys.stderr)
                os._exit(1)
            os._exit(0)
        children.append(pid)
    failed = False
    for pid in children:
        _, status = os.waitpid(pid, 0)
        failed |= status != 0
    if failed:
        os.unlink(dst)
        sys.exit("repeat-frames: writing %s failed" % dst)

if __name__ == "__main__":
    main(sys.argv)
