"""Command-line parsing: c63-enc's and c63-dec's option names, plus the
farm's own. Values are checked by the tools themselves (see
encoder_check in encode.py), so that the ranges live in one place.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import argparse
import sys

from . import PROG, UsageError

# c63-enc's options that shape the stream: (flags, dest, type). Every one is
# handed to each chunk's encoder as given (c63-enc, or libc63 with the
# parameters c63-enc would fill from them).
STREAM_OPTIONS = [
    (("-q", "--quality"), "quality", int),
    (("-k", "--keyframe-interval"), "keyframe_interval", int),
    (("-r", "--search-range"), "search_range", int),
    (("-m", "--mode"), "mode", str),
    (("-b", "--bitrate"), "bitrate", int),
    (("--rate-control",), "rate_control", str),
    (("--buffer",), "buffer", int),
    (("--fps",), "fps", str),
]
# Threads per GPU worker that move raw frames between the files and the
# library, one thread copying a fraction of what a GPU encodes: to read
# the input, c63-enc's own default (one a core, up to eight: its loop is
# the worker's); to write decoded pictures into the one output file, four
# (more only contend for that file).
ENCODE_GPU_IO_THREADS = 8
DECODE_GPU_IO_THREADS = 4
# Options that choose where and how fast, never the bytes.
MACHINE_OPTIONS = [
    (("--backend",), "backend", str),
    (("--device",), "device", int),
    (("-t", "--threads"), "threads", int),
]

ENCODE_USAGE = """\
Usage: c63-farm encode -w WIDTH -h HEIGHT [c63-enc options] [farm options]
                       -o OUTPUT.c63 INPUT.yuv
       c63-farm encode [c63-enc options] [farm options] -o OUTPUT.c63 INPUT
Encode video into one Codec63 stream on the workers of a Dask cluster: each
worker encodes a chunk of frames (with libc63 in its own process, or with
c63-enc), and the chunks are joined in order. With -w and -h, INPUT is raw
I420 (frames read by offset); without, any file GStreamer decodes (each
worker seeks to its frames; constant framerate, --fps defaults to the
file's). INPUT must be a path every worker can read.

c63-enc's options, with its names and meanings (c63-enc --help):
  -w -h -f -q -k -r -m -b --rate-control --buffer --fps --backend --device
  -t --allow-partial --quiet
(--device: a worker of the local cluster sees its one GPU as device 0, so
leave it out there; -t: by default the host's cores over its local workers)

Farm options:
      --chunk-frames N   frames per chunk (default: a multiple of the keyframe
                         interval, about 2 seconds at --fps)
      --scheduler ADDR   the Dask scheduler to use (tcp://host:8786); default:
                         a local cluster, one worker per GPU (--backend cuda)
                         or per 4 CPU cores
      --workers N        local cluster: this many workers
      --work-dir DIR     where finished chunks are kept until the job is done
                         (default: .OUTPUT.farm next to the output); it must be
                         a path every worker can write
      --engine E         how a worker encodes raw input: libc63 in its own
                         process, frames read straight into the library's
                         picture memory (the default; c63-enc where the worker
                         finds no libc63), or c63-enc, a process per chunk.
                         Input that GStreamer decodes always goes to c63-enc.
      --io-threads N     threads per worker that read the raw input (libc63;
                         default 8 with --backend cuda, as c63-enc's
                         --readers, else 1)
      --progress         show progress also when standard error is no terminal
      --stats            how long the workers took to get ready, and after the
                         job a line per worker: its chunks, frames per second

With -m exact, constant quality and chunks a multiple of the keyframe interval
(the default), the output is byte for byte that of one c63-enc run. Otherwise
every chunk starts with a keyframe: the stream decodes, but differs from one
run's (with -k 0 each chunk has one keyframe; with -b each chunk gets the
bitrate). Finished chunks are kept, so a job started again resumes. The output
only appears when the whole job succeeded. Exit status: 0 on success, 1 on
errors, 2 on bad arguments.
"""

DECODE_USAGE = """\
Usage: c63-farm decode [--backend cpu|cuda] [--device N] [-t N] [farm options]
                       -o OUTPUT.yuv INPUT.c63
Decode a Codec63 stream on the workers of a Dask cluster: the stream is cut
at keyframes, the pieces are decoded in parallel (with libc63 in the
workers' processes, or with c63-dec) and the pictures are written in order
to one raw I420 file.

Farm options: --chunk-frames N (frames per piece, at least; default 50),
--scheduler ADDR, --workers N, --work-dir DIR, --progress, --stats, --quiet
(see c63-farm encode --help), and
      --engine E         libc63: decode a piece in the worker's process, its
                         pictures written straight to their place in the output
                         (the default; c63-dec takes a piece with a frame that
                         does not decode cleanly, and all where the worker finds
                         no libc63); c63-dec: a c63-dec process per piece
      --io-threads N     threads per worker that copy the pictures into the
                         output (libc63; default 4 with --backend cuda, else 1)

Corrupt frames are reported and skipped as c63-dec does (exit status 1, the
output holds the frames that decoded). Exit status: 0 when the whole stream
decoded cleanly, 1 on errors, 2 on bad arguments.
"""


class _Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of exiting, so that the
    message format is ours."""

    def error(self, message):
        raise UsageError(message)


def _farm_options(p):
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--chunk-frames", type=int)
    p.add_argument("--scheduler")
    p.add_argument("--workers", type=int)
    p.add_argument("--work-dir")
    p.add_argument("--io-threads", type=int)
    p.add_argument("--progress", action="store_true")
    p.add_argument("--stats", action="store_true")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--help", action="store_true")
    p.add_argument("input")


def _add(p, table):
    for flags, dest, typ in table:
        p.add_argument(*flags, dest=dest, type=typ)


def encode_parser():
    p = _Parser(prog=PROG + " encode", add_help=False)
    p.add_argument("-w", "--width", type=int)
    p.add_argument("-h", "--height", type=int)
    p.add_argument("-f", "--frames", type=int)
    p.add_argument("--allow-partial", action="store_true")
    _add(p, STREAM_OPTIONS)
    _add(p, MACHINE_OPTIONS)
    _farm_options(p)
    p.add_argument("--engine", choices=("libc63", "c63-enc"), default="libc63")
    return p


def decode_parser():
    p = _Parser(prog=PROG + " decode", add_help=False)
    _add(p, MACHINE_OPTIONS)
    _farm_options(p)
    p.add_argument("--engine", choices=("libc63", "c63-dec"), default="libc63")
    return p


def io_threads(opts, gpu_default):
    """--io-threads, or GPU_DEFAULT (ENCODE_ or DECODE_GPU_IO_THREADS) with
    --backend cuda, else 1."""
    if opts.io_threads is not None:
        return opts.io_threads
    return gpu_default if opts.backend == "cuda" else 1


def tool_args(opts, table):
    """The options of TABLE that were given, as a tool's argument list."""
    args = []
    for flags, dest, _ in table:
        value = getattr(opts, dest)
        if value is not None:
            args += [flags[-1], str(value)]
    return args


def parse(argv):
    """(command, options) from argv (without the program name). Returns
    (command, None) after printing help."""
    if not argv or argv[0] in ("--help", "help"):
        sys.stdout.write("Usage: c63-farm encode|decode [options] -o OUTPUT INPUT\n"
                         "       c63-farm encode --help, c63-farm decode --help\n")
        return None, None
    command, rest = argv[0], argv[1:]
    if command not in ("encode", "decode"):
        raise UsageError("unknown command '%s' (encode or decode)" % command)
    text = ENCODE_USAGE if command == "encode" else DECODE_USAGE
    if "--help" in rest:
        sys.stdout.write(text)
        return command, None
    opts = (encode_parser() if command == "encode" else decode_parser()).parse_args(rest)
    for name in ("chunk_frames", "workers", "io_threads"):
        value = getattr(opts, name)
        if value is not None and value < 1:
            raise UsageError("--%s must be at least 1 (got %d)" % (name.replace("_", "-"), value))
    if opts.input == "-" or opts.output == "-":
        raise UsageError("input and output must be files (workers read and write them by path)")
    return command, opts
