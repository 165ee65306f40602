"""c63-farm encode: plan the chunks, encode them on the farm, join them.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import os
import sys
import time

from . import FarmError, UsageError, cluster, jobdir, options, plan, runner, stream, tasks
from . import note, tools
from .progress import Progress


class RawSource:
    """A raw I420 file (-w and -h given): frames read by byte offset."""

    task = staticmethod(tasks.encode_chunk)

    def __init__(self, opts):
        self.frame_size = plan.i420_frame_size(opts.width, opts.height)
        self.frames = plan.count_frames(opts.input, self.frame_size, opts.frames,
                                        opts.allow_partial)
        self.width, self.height, self.fps = opts.width, opts.height, opts.fps
        self.manifest = {}

    def job(self, first, last):
        return {"offset": first * self.frame_size}


class MediaSource:
    """A file GStreamer decodes (no -w/-h): frames found by timestamp."""

    task = staticmethod(tasks.encode_media_chunk)

    def __init__(self, opts):
        from . import media
        plan.check_readable(opts.input)
        try:
            self.media = media.probe(opts.input)
        except (media.MediaError, ImportError, ValueError) as e:
            raise FarmError("cannot decode %s: %s" % (opts.input, e))
        # From the duration: the last chunk takes the rest, unless -f bounds it.
        self.frames = self.media["frames"]
        self.bounded = opts.frames is not None
        if self.bounded:
            self.frames = min(self.frames, opts.frames)
        self.width, self.height = self.media["width"], self.media["height"]
        self.fps = opts.fps or "%d/%d" % (self.media["fps_num"], self.media["fps_den"])
        self.uri = self.media["uri"]
        self.manifest = {"media": self.media}

    def job(self, first, last):
        return {"uri": self.uri, "media": self.media, "last": last and not self.bounded}


def _checked_source(opts, enc):
    """The input, with c63-enc's verdict on the options: before the input
    is read when it is raw (as c63-enc judges its arguments first), after
    the probe that gives the size otherwise."""
    if opts.width is None and opts.height is None:
        source = MediaSource(opts)
        tools.check_encoder_options(enc, _stream_args(opts, source) + _machine_args(opts))
        return source
    if opts.width is None or opts.height is None:
        raise UsageError("-w WIDTH and -h HEIGHT go together (raw input), or neither "
                         "(input that GStreamer decodes)")
    tools.check_encoder_options(enc, _stream_args(opts, opts) + _machine_args(opts))
    return RawSource(opts)


def _machine_args(opts):
    return options.tool_args(opts, options.MACHINE_OPTIONS)


def _stream_args(opts, source):
    """c63-enc's options that make the stream; SOURCE gives the size and
    framerate (opts itself for raw input)."""
    fps = [] if opts.fps or source.fps is None else ["--fps", source.fps]
    return ["-w", str(source.width), "-h", str(source.height)] + options.tool_args(
        opts, options.STREAM_OPTIONS) + fps


def encode(opts):
    cluster.import_distributed()  # missing Dask fails at once
    enc = tools.find("c63-enc")
    jobdir.check_output(opts.output, opts.input)
    source = _checked_source(opts, enc)
    stream_args = _stream_args(opts, source)
    fps = plan.parse_fps(source.fps)
    k = plan.DEFAULT_KEYFRAME_INTERVAL if opts.keyframe_interval is None else \
        opts.keyframe_interval
    chunk_frames = opts.chunk_frames or plan.default_chunk_frames(k, fps)
    why = plan.why_not_identical(opts, chunk_frames, source.frames)
    if why:
        note(opts, "note: the stream differs from one c63-enc run's: " + why)

    manifest = dict(source.manifest, command="encode",
                    input=jobdir.input_identity(opts.input), args=stream_args,
                    frames=source.frames, chunk_frames=chunk_frames, encoder=tools.version(enc))
    work = jobdir.JobDir(opts.work_dir or jobdir.default_work_dir(opts.output), manifest)
    chunks = plan.chunks(source.frames, chunk_frames)
    paths = [work.chunk_path(i, ".c63") for i, _, _ in chunks]
    todo = [c for c in chunks if not os.path.exists(paths[c[0]])]
    if len(todo) < len(chunks):
        note(opts, "resuming: %d of %d chunks done in %s" % (
            len(chunks) - len(todo), len(chunks), work.path))

    # Timed from the cluster's being up: its start is no part of the job's speed.
    start = time.monotonic()
    # The chunks are joined in order as they come, while later ones are encoded.
    joiner = jobdir.Joiner(opts.output, len(chunks))
    try:
        for i, _, _ in chunks:
            if os.path.exists(paths[i]):
                joiner.add(i, paths[i])
        if todo:
            start = _run_chunks(opts, source, work, todo, paths, enc, stream_args, chunk_frames,
                                len(chunks), joiner)
        encoded = time.monotonic()
    except BaseException:
        joiner.abort()
        raise
    joiner.finish()
    work.remove()
    _summary(opts, len(chunks), encoded - start, time.monotonic() - start, source.fps)


def _run_chunks(opts, source, work, todo, paths, enc, stream_args, chunk_frames, chunks,
                joiner):
    """Encode the chunks TODO on the farm, each handed to JOINER when done.
    Returns when the cluster was up and its workers ready (the job's
    timing starts there)."""
    with cluster.connect(opts, opts.backend == "cuda") as farm:
        work.create()
        args = stream_args + _machine_args(opts) + farm.threads_args(opts)
        worker = {"enc": enc, "args": args, "engine": opts.engine,
                  "lib": tools.libc63_candidates(enc),
                  "worker_lib": tools.farm_worker_candidates(enc),
                  "io_threads": options.io_threads(opts, options.ENCODE_GPU_IO_THREADS)}
        if isinstance(source, RawSource):
            runner.prepare(opts, farm, worker)
        start = time.monotonic()
        _announce(opts, farm, chunks, chunk_frames)
        jobs = [dict(source.job(first, i == chunks - 1), **worker, index=i, first=first, frames=n,
                     input=os.path.abspath(opts.input), out=paths[i],
                     kill_marker=runner.kill_hook(work, i))
                for i, first, n in todo]
        done = source.frames - sum(n for _, _, n in todo)
        progress = Progress(source.frames, done, opts.progress or sys.stderr.isatty(), "encoded")
        results = runner.run(farm, source.task, jobs, "c63-encode-" + work.key, progress,
                             lambda r: joiner.add(r["index"], paths[r["index"]]))
        if opts.stats:
            runner.report_workers(opts, results)
    return start


def _announce(opts, farm, chunks, chunk_frames):
    link = farm.dashboard()
    if link:
        note(opts, "dashboard: %s" % link)
    note(opts, "%d chunks of %d frames on %d workers" % (chunks, chunk_frames, farm.workers))


def _summary(opts, chunks, encode_seconds, seconds, fps_text):
    size = os.path.getsize(opts.output)
    frames = len(stream.scan(opts.output)[0]) if size else 0
    note(opts, "encoded %d frames in %d chunks, %d bytes, %.2f fps (chunks %.2f s, join %.2f s)"
          % (frames, chunks, size, frames / seconds if seconds > 0 else 0.0, encode_seconds,
             seconds - encode_seconds))
    fps = plan.parse_fps(fps_text)
    if opts.bitrate is not None and frames and fps:
        note(opts, "%.1f kbit/s at %s fps (target %d)" % (
            8.0 * size * fps / frames / 1000.0, fps_text or "25", opts.bitrate))
