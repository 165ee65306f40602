"""The encode job's plan: the raw input's frames, and their chunks.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import os
import stat

from . import FarmError

DEFAULT_KEYFRAME_INTERVAL = 100  # c63-enc's default
DEFAULT_FPS = 25.0
CHUNK_SECONDS = 2.0


def i420_frame_size(width, height):
    cw, ch = (width + 1) // 2, (height + 1) // 2
    return width * height + 2 * cw * ch


def check_readable(path):
    """os.stat of PATH, a regular file this process can read, else FarmError."""
    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            raise FarmError("cannot read %s: it is a directory" % path)
        with open(path, "rb"):
            pass
    except OSError as e:
        raise FarmError("cannot read %s: %s" % (path, e.strerror))
    if not stat.S_ISREG(st.st_mode):
        raise FarmError("%s is not a regular file: the workers read it by path" % path)
    return st


def count_frames(path, frame_size, max_frames, allow_partial):
    """The number of frames to encode from PATH, as c63-enc would take them;
    FarmError for an input c63-enc would refuse."""
    st = check_readable(path)
    frames, rest = divmod(st.st_size, frame_size)
    if max_frames is not None and max_frames <= frames:
        return max_frames
    if frames == 0:
        raise FarmError("no complete frame in %s (a frame of this size is %d bytes, the file %d)"
                        % (path, frame_size, st.st_size))
    if rest and not allow_partial:
        raise FarmError("input ends with a partial frame (%d of %d bytes): wrong size, or a cut "
                        "file? (--allow-partial encodes the complete frames)" % (rest, frame_size))
    return frames


def parse_fps(text):
    """Frames per second from c63-enc's N[/D]; None when it is not one
    (c63-enc then says why)."""
    if text is None:
        return DEFAULT_FPS
    num, _, den = text.partition("/")
    try:
        value = int(num) / int(den or "1")
    except (ValueError, ZeroDivisionError):
        return None
    return value if value > 0 else None


def default_chunk_frames(keyframe_interval, fps):
    """About CHUNK_SECONDS of video, a whole number of keyframe intervals so
    that the chunks join into one run's stream."""
    target = max(1, round(CHUNK_SECONDS * fps))
    if keyframe_interval <= 0:
        return target
    return keyframe_interval * max(1, round(target / keyframe_interval))


def chunks(frames, chunk_frames):
    """[(index, first frame, frame count)] covering 0..frames-1."""
    return [(i, first, min(chunk_frames, frames - first))
            for i, first in enumerate(range(0, frames, chunk_frames))]


def why_not_identical(opts, chunk_frames, frames):
    """None when the joined chunks are one c63-enc run's stream byte for
    byte, else the reason."""
    if frames <= chunk_frames:
        return None
    k = DEFAULT_KEYFRAME_INTERVAL if opts.keyframe_interval is None else opts.keyframe_interval
    if opts.bitrate is not None or opts.rate_control not in (None, "quality"):
        return "rate control runs on each chunk apart (each gets the bitrate)"
    if k <= 0:
        return "-k 0: every chunk starts with a keyframe, one run has only the first"
    if chunk_frames % k:
        return "chunks of %d frames are no multiple of the keyframe interval %d: every " \
               "chunk starts with a keyframe" % (chunk_frames, k)
    return None
