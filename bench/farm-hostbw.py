#!/usr/bin/env python3
"""farm-hostbw.py: the host's side of c63-farm's speed (bench/farm-gpus.sh):
how fast the host copies frames between buffers in memory (memcpy) and how
fast it reads them from a file (pread, as a worker reads its chunk), with
several threads. Measured and printed, never asserted.

  farm-hostbw.py [--file PATH] [--frame-bytes N] [--threads "1 2 4 8 16 32"]
                 [--seconds S]

Each line gives GB/s and the frames of --frame-bytes (default a 1080p I420
frame) per second that this rate would carry. Standard library only
(ctypes.memmove and os.preadv release the GIL, so threads run in parallel).
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import argparse
import ctypes
import os
import threading
import time

FRAME_1080P = 1920 * 1080 * 3 // 2
SOURCE_FRAMES = 64  # a source larger than any cache


def _run(threads, seconds, work):
    """Run WORK(thread index, deadline) on THREADS threads; the bytes they
    moved over the seconds taken."""
    moved = [0] * threads
    deadline = time.perf_counter() + seconds

    def body(t):
        moved[t] = work(t, deadline)
    pool = [threading.Thread(target=body, args=(t,)) for t in range(threads)]
    start = time.perf_counter()
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    return sum(moved), time.perf_counter() - start


def memcpy(threads, frame, seconds):
    src = (ctypes.c_char * (frame * SOURCE_FRAMES))()
    ctypes.memset(src, 1, len(src))
    dst = [(ctypes.c_char * (frame * 4))() for _ in range(threads)]
    for d in dst:
        ctypes.memset(d, 0, len(d))
    base = ctypes.addressof(src)

    def work(t, deadline):
        out, k, done = ctypes.addressof(dst[t]), t, 0
        while time.perf_counter() < deadline:
            ctypes.memmove(out + (k % 4) * frame, base + (k % SOURCE_FRAMES) * frame, frame)
            k += threads
            done += frame
        return done
    return _run(threads, seconds, work)


def pread(threads, frame, seconds, path):
    fd = os.open(path, os.O_RDONLY)
    frames = os.fstat(fd).st_size // frame
    bufs = [bytearray(frame) for _ in range(threads)]

    def work(t, deadline):
        view, k, done = memoryview(bufs[t]), t, 0
        while time.perf_counter() < deadline:
            done += os.preadv(fd, [view], (k % frames) * frame)
            k += threads
        return done
    try:
        return _run(threads, seconds, work)
    finally:
        os.close(fd)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--file")
    p.add_argument("--frame-bytes", type=int, default=FRAME_1080P)
    p.add_argument("--threads", default="1 2 4 8 16 32")
    p.add_argument("--seconds", type=float, default=1.0)
    a = p.parse_args()
    tests = [("memcpy", lambda t: memcpy(t, a.frame_bytes, a.seconds))]
    if a.file:
        tests.append(("pread %s" % a.file, lambda t: pread(t, a.frame_bytes, a.seconds, a.file)))
    for name, test in tests:
        for threads in [int(t) for t in a.threads.split()]:
            moved, seconds = test(threads)
            print("%s, %2d threads: %6.1f GB/s (%7.0f frames/s of %d bytes)" % (
                name, threads, moved / seconds / 1e9, moved / seconds / a.frame_bytes,
                a.frame_bytes), flush=True)


if __name__ == "__main__":
    main()
