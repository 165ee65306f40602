"""Cutting a Codec63 stream at keyframes without decoding it.

A frame starts with FF D8 FF DB, which entropy-coded data cannot hold (every
FF there is followed by 00), and byte 220 of a frame is its keyframe flag
(docs/format.md, sections 2.5 and 2.10). A stream is therefore cut at the
starts whose flag is 1; each piece decodes on its own.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import mmap
import os

from . import FarmError

FRAME_START = b"\xff\xd8\xff\xdb"
KEYFRAME_FLAG_OFFSET = 220
SIZE_OFFSET = 206  # height, then width, two bytes each, big-endian


def scan(path):
    """(frame start offsets, keyframe flags, (width, height) of the first
    frame, file size). FarmError when PATH holds no Codec63 frame."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if os.path.isdir(path):
                raise FarmError("cannot read %s: it is a directory" % path)
            if size == 0:
                raise FarmError("%s is empty" % path)
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                return _scan(m, size, path)
    except OSError as e:
        raise FarmError("cannot read %s: %s" % (path, e.strerror or e))


def _scan(m, size, path):
    starts, keys = [], []
    pos = m.find(FRAME_START)
    while pos >= 0:
        flag = pos + KEYFRAME_FLAG_OFFSET
        starts.append(pos)
        keys.append(flag < size and m[flag] == 1)
        pos = m.find(FRAME_START, pos + len(FRAME_START))
    if not starts or not keys[0] or starts[0] + SIZE_OFFSET + 4 > size:
        raise FarmError("%s is not a Codec63 stream (it must start with a keyframe)" % path)
    s = starts[0] + SIZE_OFFSET
    height, width = (m[s] << 8) | m[s + 1], (m[s + 2] << 8) | m[s + 3]
    return starts, keys, (width, height), size


def pieces(starts, keys, size, min_frames):
    """[(index, offset, length, frames)]: runs of whole keyframe intervals of
    at least MIN_FRAMES frames (the last may be shorter). The first piece
    starts at byte 0 and the last ends at the end of the file, so that every
    byte reaches a decoder, damage included."""
    cuts = [0] + [i for i in range(1, len(starts)) if keys[i]]
    bounds, last = [], 0
    for cut in cuts[1:]:
        if cut - last >= min_frames:
            bounds.append((last, cut))
            last = cut
    bounds.append((last, len(starts)))
    out = []
    for index, (a, b) in enumerate(bounds):
        begin = 0 if a == 0 else starts[a]
        end = size if b == len(starts) else starts[b]
        out.append((index, begin, end - begin, b - a))
    return out
