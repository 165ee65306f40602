"""c63-farm decode: cut the stream at keyframes, decode the pieces on the
farm, join the pictures.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import os
import sys
import time

from . import PROG, FarmError, cluster, jobdir, note, options, runner, stream
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
                "pieces": [p[1] for p in pieces], "decoder": tools.version(dec)}
    work = jobdir.JobDir(opts.work_dir or jobdir.default_work_dir(opts.output), manifest)
    paths = [work.chunk_path(i, ".yuv") for i, _, _, _ in pieces]
    with cluster.connect(opts, opts.backend == "cuda") as farm:
        # Timed from the cluster's being up: its start is no part of the job's speed.
        start = time.monotonic()
        work.create()
        link = farm.dashboard()
        if link:
            note(opts, "dashboard: %s" % link)
        args = machine_args + farm.threads_args(opts)
        jobs = [{"index": i, "offset": offset, "length": length, "frames": n,
                 "input": os.path.abspath(opts.input), "dec": dec, "args": args,
                 "out": paths[i]} for i, offset, length, n in pieces]
        progress = Progress(len(starts), 0, opts.progress or sys.stderr.isatty(), "decoded")
        results = runner.run(farm, tasks.decode_piece, jobs, "c63-decode-" + work.key, progress)
    failed = [r for r in results if r["status"] != 0]
    for r in failed:
        sys.stderr.write("%s: piece %d: %s\n" % (PROG, r["index"], r["message"] or "corrupt"))
    if sum(os.path.getsize(p) for p in paths) == 0:
        raise FarmError("no frame of %s decoded" % opts.input)
    decoded = time.monotonic()
    jobdir.join_files(paths, opts.output)
    work.remove()
    end = time.monotonic()
    note(opts, "decoded %d frames of %dx%d in %d pieces, %.2f fps (pieces %.2f s, join %.2f s)"
          % (len(starts), width, height, len(pieces), len(starts) / (end - start),
             decoded - start, end - decoded))
    return 1 if failed else 0
