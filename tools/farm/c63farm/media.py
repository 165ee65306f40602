"""Encoding input that GStreamer decodes (any container and codec it has a
plugin for, Codec63 included): what the driver learns of the input, and
the worker's decoding of one chunk's frames.

Frames are numbered by their timestamps: frame i is the one that ends
nearest to the first frame's PTS + (i + 1) / framerate. A chunk seeks
(flushing, accurate) to half a frame before its first frame and keeps the
frames whose number is in its range, so that every frame is in exactly one
chunk and chunks join as one run over the decoded frames would.
Constant-framerate input only; a gap or a repeat in the numbers fails the
chunk.

Workers import this module from the package the job sends them
(c63farm.cluster.WORKER_MODULES: standard library and PyGObject only,
imported when used).
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import os

PIPELINE = ("uridecodebin name=src ! videoconvert ! video/x-raw,format=I420 ! "
            "appsink name=sink sync=false max-buffers=4")
TIMEOUT_S = 30


class MediaError(Exception):
    """The input cannot be decoded (as GStreamer says)."""


def _gst():
    import gi
    gi.require_version("Gst", "1.0")
    gi.require_version("GstVideo", "1.0")
    from gi.repository import Gst, GstVideo
    Gst.init(None)
    return Gst, GstVideo


def _bus_error(Gst, pipeline):
    msg = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
    if msg is None:
        return None
    err, _ = msg.parse_error()
    return err.message


def _open(Gst, uri):
    """The decoding pipeline for URI, prerolled (PAUSED)."""
    pipeline = Gst.parse_launch(PIPELINE)
    pipeline.get_by_name("src").set_property("uri", uri)
    pipeline.set_state(Gst.State.PAUSED)
    ret, _, _ = pipeline.get_state(TIMEOUT_S * Gst.SECOND)
    if ret == Gst.StateChangeReturn.FAILURE or ret == Gst.StateChangeReturn.ASYNC:
        why = _bus_error(Gst, pipeline) or "it did not preroll in %d s" % TIMEOUT_S
        pipeline.set_state(Gst.State.NULL)
        raise MediaError(why)
    return pipeline


def probe(path):
    """{uri, width, height, fps_num, fps_den, origin (the first frame's
    PTS), frames (estimated from the duration)} of the file's video."""
    Gst, GstVideo = _gst()
    uri = Gst.filename_to_uri(os.path.abspath(path))
    pipeline = _open(Gst, uri)
    try:
        sample = pipeline.get_by_name("sink").emit("pull-preroll")
        if sample is None:
            raise MediaError("no video")
        info = GstVideo.VideoInfo.new_from_caps(sample.get_caps())
        if info.fps_n <= 0 or info.fps_d <= 0:
            raise MediaError("no constant framerate (variable-framerate video is not supported)")
        origin = sample.get_buffer().pts
        ok, duration = pipeline.query_duration(Gst.Format.TIME)
    finally:
        pipeline.set_state(Gst.State.NULL)
    if not ok or duration <= 0:
        raise MediaError("its duration is unknown")
    frames = max(1, round((duration - origin) * info.fps_n / info.fps_d / Gst.SECOND))
    return {"uri": uri, "width": info.width, "height": info.height, "fps_num": info.fps_n,
            "fps_den": info.fps_d, "origin": origin, "frames": frames}


def _tight_planes(info, data):
    """The I420 picture of DATA (GStreamer's layout, rows padded) as the raw
    file layout c63-enc reads: rows of width and ceil(width / 2)."""
    out = []
    for plane in range(3):
        width = info.width if plane == 0 else (info.width + 1) // 2
        rows = info.height if plane == 0 else (info.height + 1) // 2
        off, stride = info.offset[plane], info.stride[plane]
        if stride == width:
            out.append(data[off:off + width * rows])
        else:
            out.extend(data[off + r * stride:off + r * stride + width] for r in range(rows))
    return b"".join(out)


def frame_number(buf, media):
    """The number of the frame in BUF. By its end where the buffer has a
    duration: the frame before a chunk's first comes clipped to the seek
    position (its start moved, its end kept)."""
    per_ns = media["fps_num"] / (media["fps_den"] * 1e9)
    if buf.duration != 0xFFFFFFFFFFFFFFFF:  # GST_CLOCK_TIME_NONE
        return round((buf.pts + buf.duration - media["origin"]) * per_ns) - 1
    return round((buf.pts - media["origin"]) * per_ns)


def _time_of(frame, media):
    """The PTS half a frame before FRAME's: where a chunk's seek goes, safe
    from rounded timestamps (a container's milliseconds)."""
    return media["origin"] + int((frame - 0.5) * media["fps_den"] * 1e9 / media["fps_num"])


def feed_chunk(job, stdin):
    """Decode the frames job["first"] .. job["first"] + job["frames"] - 1
    (to the end for the last chunk) and write them to STDIN. Returns the
    number of frames written."""
    Gst, GstVideo = _gst()
    media, first = job["media"], job["first"]
    end = None if job["last"] else first + job["frames"]
    pipeline = _open(Gst, job["uri"])
    try:
        # No stop position: a frame clipped at the stop would lose its end.
        pipeline.seek_simple(Gst.Format.TIME, Gst.SeekFlags.FLUSH | Gst.SeekFlags.ACCURATE,
                             max(0, _time_of(first, media)))
        pipeline.set_state(Gst.State.PLAYING)
        sink, written = pipeline.get_by_name("sink"), 0
        while True:
            sample = sink.emit("try-pull-sample", TIMEOUT_S * Gst.SECOND)
            if sample is None:
                break
            n = frame_number(sample.get_buffer(), media)
            if n < first:
                continue
            if end is not None and n >= end:
                return written
            if n != first + written:
                raise MediaError("frame %d missing (the timestamps are not those of a "
                                 "constant framerate)" % (first + written))
            info = GstVideo.VideoInfo.new_from_caps(sample.get_caps())
            buf = sample.get_buffer()
            stdin.write(_tight_planes(info, buf.extract_dup(0, buf.get_size())))
            written += 1
        error = _bus_error(Gst, pipeline)
        if error:
            raise MediaError(error)
        if not sink.get_property("eos"):
            raise MediaError("no frame came in %d s" % TIMEOUT_S)
        return written
    finally:
        pipeline.set_state(Gst.State.NULL)
