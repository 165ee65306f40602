"""c63-farm encode: plan the chunks, encode them on the farm, join them.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import os
import sys
import time

from . import PROG, FarmError, UsageError, cluster, jobdir, options, plan, runner, tasks, tools
from .progress import Progress


def _note(opts, text):
    if not opts.quiet:
        sys.stderr.write("%s: %s\n" % (PROG, text))


def _threads_args(opts, farm):
    if opts.threads is None and farm.threads_per_worker is not None:
        return ["-t", str(farm.threads_per_worker)]
    return []


def encode(opts):
    cluster.import_distributed()  # missing Dask fails at once
    enc = tools.find("c63-enc")
    stream_args = ["-w", str(opts.width), "-h", str(opts.height)] + options.tool_args(
        opts, options.STREAM_OPTIONS)
    machine_args = options.tool_args(opts, options.MACHINE_OPTIONS)
    tools.check_encoder_options(enc, stream_args + machine_args)
    if os.path.exists(opts.output) and os.path.exists(opts.input) and \
            os.path.samefile(opts.output, opts.input):
        raise UsageError("the output %s is the input" % opts.output)
    frame_size = plan.i420_frame_size(opts.width, opts.height)
    frames = plan.count_frames(opts.input, frame_size, opts.frames, opts.allow_partial)
    fps = plan.parse_fps(opts.fps)
    k = plan.DEFAULT_KEYFRAME_INTERVAL if opts.keyframe_interval is None else \
        opts.keyframe_interval
    chunk_frames = opts.chunk_frames or plan.default_chunk_frames(k, fps)
    why = plan.why_not_identical(opts, chunk_frames, frames)
    if why:
        _note(opts, "note: the stream differs from one c63-enc run's: " + why)

    manifest = {"command": "encode", "input": jobdir.input_identity(opts.input),
                "args": stream_args, "frames": frames, "chunk_frames": chunk_frames,
                "encoder": tools.version(enc)}
    work = jobdir.JobDir(opts.work_dir or jobdir.default_work_dir(opts.output), manifest)
    chunks = plan.chunks(frames, chunk_frames)
    paths = [work.chunk_path(i, ".c63") for i, _, _ in chunks]
    todo = [c for c in chunks if not os.path.exists(paths[c[0]])]
    if len(todo) < len(chunks):
        _note(opts, "resuming: %d of %d chunks done in %s" % (
            len(chunks) - len(todo), len(chunks), work.path))

    # Timed from the cluster's being up: its start is no part of the job's speed.
    start = time.monotonic()
    if todo:
        use_gpu = opts.backend == "cuda"
        with cluster.connect(opts, use_gpu) as farm:
            start = time.monotonic()
            _announce(opts, farm, len(chunks), chunk_frames)
            args = stream_args + machine_args + _threads_args(opts, farm)
            jobs = [{"index": i, "first": first, "frames": n, "offset": first * frame_size,
                     "input": os.path.abspath(opts.input), "enc": enc, "args": args,
                     "out": paths[i], "kill_marker": runner.kill_hook(work, i)}
                    for i, first, n in todo]
            done = frames - sum(n for _, _, n in todo)
            progress = Progress(frames, done, opts.progress or sys.stderr.isatty(), "encoded")
            runner.run(farm, tasks.encode_chunk, jobs, "c63-encode-" + work.key, progress)
    encoded = time.monotonic()
    jobdir.join_files(paths, opts.output)
    work.remove()
    _summary(opts, frames, len(chunks), encoded - start, time.monotonic() - start, fps)


def _announce(opts, farm, chunks, chunk_frames):
    link = farm.dashboard()
    if link:
        _note(opts, "dashboard: %s" % link)
    _note(opts, "%d chunks of %d frames on %d workers" % (chunks, chunk_frames, farm.workers))


def _summary(opts, frames, chunks, encode_seconds, seconds, fps):
    size = os.path.getsize(opts.output)
    _note(opts, "encoded %d frames in %d chunks, %d bytes, %.2f fps (chunks %.2f s, join %.2f s)"
          % (frames, chunks, size, frames / seconds if seconds > 0 else 0.0, encode_seconds,
             seconds - encode_seconds))
    if opts.bitrate is not None and frames and fps:
        _note(opts, "%.1f kbit/s at %s fps (target %d)" % (
            8.0 * size * fps / frames / 1000.0, opts.fps or "25", opts.bitrate))
