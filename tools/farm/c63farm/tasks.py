"""The work of one Dask task: encode a range of frames, or decode a range of
bytes, with the c63-enc and c63-dec tools of the worker's host.

This module and c63farm.media use only the standard library (and PyGObject
when the input is decoded with GStreamer) and travel to the workers with
the job (c63farm.cluster.WORKER_MODULES), so a worker host needs Dask and
the tools, not this package. Every task is idempotent: the tools write
their output under a temporary name and rename it, so a finished chunk file is complete, and a
task that runs again (its worker died, or the job was started again) finds
the file or writes the same bytes.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import json
import os
import signal
import subprocess
import time

from . import inprocess, libc63, media


class ChunkFailed(Exception):
    """A tool failed on one chunk; the message is the tool's own."""


def _tool(path, name):
    """The driver's path of a tool where this host has it, else NAME on PATH."""
    return path if path and os.path.exists(path) else name


def _last_line(data):
    lines = [l for l in data.decode("utf-8", "replace").splitlines() if l.strip()]
    return lines[-1] if lines else "(no message)"


def _die_mid_chunk(marker, partial_prefix, proc):
    """Test hook (docs/farm.md, "Testing"): kill this worker process once the
    encoder has started writing, the first time only, as a crash would."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return
    folder, base = os.path.split(partial_prefix)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and proc.poll() is None:
        if any(n.startswith("." + base) for n in os.listdir(folder)):
            break
        time.sleep(0.01)
    proc.kill()
    os.kill(os.getpid(), signal.SIGKILL)


def _encode(job, cmd, stdin, feed=None):
    """Run c63-enc (CMD) into job["out"], its input STDIN, or a pipe that
    FEED(job, pipe) fills, returning the frames it wrote."""
    out, frames = job["out"], job["frames"]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if job.get("kill_marker"):
        _die_mid_chunk(job["kill_marker"], out, proc)
    if feed is not None:
        try:
            frames = feed(job, proc.stdin)
        except BrokenPipeError:
            pass  # the encoder stopped: its message follows
        except BaseException:
            proc.kill()
            raise
        finally:
            try:
                proc.stdin.close()
            except BrokenPipeError:
                pass
    err = proc.stderr.read()
    proc.wait()
    if proc.returncode != 0 and feed is not None and frames == 0:
        open(out, "wb").close()  # a chunk past the input's end: empty
    elif proc.returncode != 0:
        raise ChunkFailed("chunk %d (frames %d-%d): %s" % (
            job["index"], job["first"], job["first"] + job["frames"] - 1, _last_line(err)))
    return {"index": job["index"], "frames": frames, "bytes": os.path.getsize(out),
            "seconds": time.monotonic() - start, "cached": False, "engine": "c63-enc",
            "worker": inprocess.worker_name()}


def _cached(job):
    if os.path.exists(job["out"]):
        return {"index": job["index"], "frames": job["frames"],
                "bytes": os.path.getsize(job["out"]), "seconds": 0.0, "cached": True}
    return None


def _encoder_command(job, extra):
    return [_tool(job["enc"], "c63-enc")] + job["args"] + extra + [
        "--quiet", "-o", job["out"], "-"]


def encode_chunk(job):
    """Encode job["frames"] frames from byte job["offset"] of the raw file
    job["input"] into job["out"]: in this process with libc63 (job["engine"]
    "libc63", c63farm.inprocess), or where this host has none with c63-enc,
    which reads the range straight from the file (its standard input is
    the file, positioned at the chunk's first frame)."""
    cached = _cached(job)
    if cached:
        return cached
    if job.get("engine") == "libc63":
        try:
            return inprocess.encode_chunk(job)
        except libc63.LibraryMissing:
            pass
        except (libc63.Failed, MemoryError) as e:
            raise ChunkFailed("chunk %d (frames %d-%d): %s" % (
                job["index"], job["first"], job["first"] + job["frames"] - 1, e))
    fd = os.open(job["input"], os.O_RDONLY)
    try:
        os.lseek(fd, job["offset"], os.SEEK_SET)
        return _encode(job, _encoder_command(job, ["-f", str(job["frames"])]), fd)
    finally:
        os.close(fd)


def encode_media_chunk(job):
    """Encode the chunk's frames of a file GStreamer decodes (c63farm.media)
    into job["out"]."""
    cached = _cached(job)
    if cached:
        return cached
    try:
        return _encode(job, _encoder_command(job, []), subprocess.PIPE, media.feed_chunk)
    except media.MediaError as e:
        raise ChunkFailed("chunk %d: %s" % (job["index"], e))


def _read_range(path, offset, length):
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read(length)
    if len(data) != length:
        raise ChunkFailed("%s is shorter than when the job started" % path)
    return data


def _finish_piece(done, result):
    """Record the piece's result next to its pictures (a job started again
    finds it) and return it."""
    tmp = "%s.%d" % (done, os.getpid())
    with open(tmp, "w") as f:
        json.dump({k: result[k] for k in ("status", "message", "in_place")}, f)
    os.replace(tmp, done)
    return result


def _decode_in_place(job, result):
    """The piece decoded by libc63 into its place in job["frames_file"], or
    None where c63-dec must take it (a frame that does not decode cleanly,
    or no libc63 on this host)."""
    start = time.monotonic()
    try:
        if not inprocess.decode_piece(job):
            return None
    except libc63.LibraryMissing:
        return None
    except (libc63.Failed, MemoryError) as e:
        raise ChunkFailed("piece %d: %s" % (job["index"], e))
    return dict(result, status=0, message="", in_place=True, engine="libc63",
                worker=inprocess.worker_name(), seconds=time.monotonic() - start)


def decode_piece(job):
    """Decode bytes [offset, offset + length) of job["input"] (whole frames,
    the first a keyframe): with libc63 into the piece's place in the
    job's frames file (job["engine"] "libc63"), else, or when a frame of it
    does not decode cleanly, with c63-dec into job["out"]. c63-dec's status
    comes back as a result, not an error: a corrupt frame is reported, not
    retried."""
    out, done = job["out"], job["out"] + ".status"
    result = {"index": job["index"], "frames": job["frames"], "cached": False}
    if os.path.exists(done):
        with open(done) as f:
            return dict(result, **json.load(f), seconds=0.0, cached=True)
    if job.get("engine") == "libc63":
        in_place = _decode_in_place(job, result)
        if in_place is not None:
            return _finish_piece(done, in_place)
    data = _read_range(job["input"], job["offset"], job["length"])
    cmd = [_tool(job["dec"], "c63-dec")] + job["args"] + ["--quiet", "-", out]
    start = time.monotonic()
    proc = subprocess.run(cmd, input=data, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    if proc.returncode not in (0, 1):
        raise ChunkFailed("piece %d: %s" % (job["index"], _last_line(proc.stderr)))
    if not os.path.exists(out):
        open(out, "wb").close()  # nothing decoded: an empty piece
    message = proc.stderr.decode("utf-8", "replace").strip()
    return _finish_piece(done, dict(result, status=proc.returncode, message=message,
                                    in_place=False, engine="c63-dec",
                                    worker=inprocess.worker_name(),
                                    seconds=time.monotonic() - start))


def prepare(job):
    """Run on every worker before a job's timing starts: the libc63 encoder
    or decoder of JOB made and kept (c63farm.inprocess), so that the chunks
    find it. Returns what the worker will encode or decode with."""
    if job["engine"] != "libc63":
        return job["engine"]
    try:
        make = inprocess.prepare_encoder if "enc" in job else inprocess.prepare_decoder
        return "libc63 " + make(job)
    except libc63.LibraryMissing as e:
        return "the tools, no libc63 here (%s)" % e
    except (libc63.Failed, MemoryError) as e:
        return "libc63 failed: %s" % e  # each chunk then says so
