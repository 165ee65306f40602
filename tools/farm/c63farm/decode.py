"""c63-farm decode: cut the stream at keyframes, decode the pieces on the
farm, join the pictures.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import errno
import os
import sys
import time

from . import PROG, FarmError, cluster, jobdir, note, options, plan, runner, stream
from . import tasks, tools
from .progress import Progress

DEFAULT_PIECE_FRAMES = 50


def decode(opts):
    cluster.import_distributed()  # missing Dask fails at once
    dec = tools.find("c63-dec")
    jobdir.check_output(opts.output, opts.input)
    starts, keys, (width, height), size = stream.scan(opts.input)
    pieces = stream.pieces(starts, keys, size, opts.chunk_frames or DEFAULT_PIECE_FRAMES)
    machine_args = options.tool_args(opts, options.MACHINE_OPTIONS)
    manifest = {"command": "decode", "input": jobdir.input_identity(opts.input),
                "pieces": [p[1] for p in pieces], "decoder": tools.version(dec),
                "engine": opts.engine}
    work = jobdir.JobDir(opts.work_dir or jobdir.default_work_dir(opts.output), manifest)
    paths = [work.chunk_path(i, ".yuv") for i, _, _, _ in pieces]
    frames_file = os.path.join(work.path, "frames.yuv")
    frame_size = plan.i420_frame_size(width, height)
    firsts = [sum(p[3] for p in pieces[:i]) for i in range(len(pieces))]
    with cluster.connect(opts, opts.backend == "cuda") as farm:
        fresh = not os.path.exists(work.path)
        work.create()
        if opts.engine == "libc63":
            try:
                _make_frames_file(frames_file, len(starts) * frame_size)
            except FarmError:
                if fresh:  # nothing done to keep: as a job that failed before
                    work.remove()
                raise
        worker = {"input": os.path.abspath(opts.input), "dec": dec,
                  "args": machine_args + farm.threads_args(opts), "engine": opts.engine,
                  "lib": tools.libc63_candidates(dec),
                  "worker_lib": tools.farm_worker_candidates(dec),
                  "io_threads": options.io_threads(opts, options.DECODE_GPU_IO_THREADS),
                  "frames_file": frames_file, "size": (width, height)}
        runner.prepare(opts, farm, worker)
        # Timed from the cluster's being up and its workers ready: their
        # start is no part of the job's speed.
        start = time.monotonic()
        link = farm.dashboard()
        if link:
            note(opts, "dashboard: %s" % link)
        jobs = [dict(worker, index=i, offset=offset, length=length, frames=n, first=firsts[i],
                     out=paths[i]) for i, offset, length, n in pieces]
        progress = Progress(len(starts), 0, opts.progress or sys.stderr.isatty(), "decoded")
        results = runner.run(farm, tasks.decode_piece, jobs, "c63-decode-" + work.key, progress)
    if opts.stats:
        runner.report_workers(opts, results)
    failed = [r for r in results if r["status"] != 0]
    for r in failed:
        sys.stderr.write("%s: piece %d: %s\n" % (PROG, r["index"], r["message"] or "corrupt"))
    parts = [(frames_file, firsts[r["index"]] * frame_size, r["frames"] * frame_size)
             if r["in_place"] else paths[r["index"]] for r in results]
    if not any(r["in_place"] or os.path.getsize(paths[r["index"]]) for r in results):
        raise FarmError("no frame of %s decoded" % opts.input)
    decoded = time.monotonic()
    if all(r["in_place"] for r in results):
        jobdir.move_file(frames_file, opts.output)  # every picture is in its place
    else:
        jobdir.join_files(parts, opts.output)
    work.remove()
    end = time.monotonic()
    note(opts, "decoded %d frames of %dx%d in %d pieces, %.2f fps (pieces %.2f s, join %.2f s)"
          % (len(starts), width, height, len(pieces), len(starts) / (end - start),
             decoded - start, end - decoded))
    return 1 if failed else 0


def _make_frames_file(path, size):
    """The file the workers decode into, each piece at its frames' place:
    as large as the whole output, its blocks allocated now, so that too
    little room is one clear error before any piece is decoded, not a
    failure late in the job. Kept from an interrupted run, with the pieces
    it holds."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            if os.fstat(fd).st_size != size:
                os.ftruncate(fd, size)
            os.posix_fallocate(fd, 0, size)
        finally:
            os.close(fd)
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            raise FarmError("no room for the decoded pictures (%d bytes) in %s: free space "
                            "there, or give --work-dir on a file system with room"
                            % (size, os.path.dirname(path)))
        raise FarmError("cannot write %s: %s" % (path, e.strerror or e))
