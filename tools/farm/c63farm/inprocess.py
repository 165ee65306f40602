"""A worker's chunk through libc63 in its own process (c63farm.libc63):
raw frames read by offset from the shared input straight into the
library's picture memory (page-locked when it has the CUDA backend, so the
GPU reads them by DMA), and decoded pictures written straight to their
place in the output.

The bytes are the tools': the parameters are c63-enc's and c63-dec's
options filled in as the tools fill them, every chunk starts as a fresh
encoder would (a keyframe, the keyframe interval counted from it), and a
decoded piece is written in place only when every frame of it decoded
cleanly (anything else goes to c63-dec, whose messages and skipping rules
then hold).

An encoder at constant quality and a decoder are kept in the worker process
from one task to the next, with their picture memory: the CUDA backend's
set-up (a context, page-locked memory) would otherwise be paid again for
every chunk. Standard library only: this module travels to the workers
with the job (c63farm.cluster.WORKER_MODULES).
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import concurrent.futures
import ctypes
import mmap
import os
import signal
import socket
import threading
import time

from . import libc63


def _take(kind, key, make):
    """The object of KIND kept for KEY, or a new one from MAKE() (the
    object kept before, for another key, is freed). The caller gives it
    back with _keep, or frees it."""
    kept = libc63.worker_state().kept.pop(kind, None)
    if kept is not None:
        if kept[0] == key:
            return kept[1]
        kept[1].free()
    return make()


def _keep(kind, key, obj):
    libc63.worker_state().kept[kind] = (key, obj)


def _i420_size(width, height):
    cw, ch = (width + 1) // 2, (height + 1) // 2
    return width * height + 2 * cw * ch, width * height, cw * ch


class Encoder:
    """A libc63 encoder, and the worker's chunk encoder on it
    (tools/farm_worker.h: the ring of picture buffers it reads the input
    into and lends the encoder, made for a number of reading threads)."""

    def __init__(self, lib, worker, args):
        self.lib, self.worker = lib, worker
        self.storage, params = libc63.enc_params(lib, args)
        self.width, self.height = params.width, params.height
        self.reusable = params.rate_control == libc63.RC_QUALITY
        self.handle = libc63.new(lib, "encoder", self.storage)
        self.backend = lib.c63_encoder_backend_name(self.handle).decode()
        self.chunks, self.readers = None, 0

    def prepare(self, readers):
        """The chunk encoder for READERS reading threads (and its ring)."""
        if self.readers == readers:
            return
        self.worker.c63farm_chunks_free(self.chunks)
        self.chunks = self.worker.c63farm_chunks_new(self.handle, self.width, self.height,
                                                     readers)
        self.readers = readers if self.chunks else 0
        if not self.chunks:
            raise MemoryError("out of memory for picture buffers")

    def encode(self, in_fd, offset, frames, readers, out_fd):
        """FRAMES frames from byte OFFSET of IN_FD into OUT_FD, a keyframe
        first, drained at the end. Returns the bytes written; Failed with
        the reason (then the encoder may still read the ring: free it)."""
        self.prepare(readers)
        written, msg = ctypes.c_uint64(), ctypes.create_string_buffer(512)
        if self.worker.c63farm_encode_chunk(self.chunks, in_fd, offset, frames, out_fd,
                                            ctypes.byref(written), msg, len(msg)) != 0:
            raise libc63.Failed(msg.value.decode("utf-8", "replace"))
        return written.value

    def free(self):
        self.lib.c63_encoder_free(self.handle)  # it may read pictures it was lent
        self.handle = None
        self.worker.c63farm_chunks_free(self.chunks)
        self.chunks, self.readers = None, 0


def _temporary(path):
    """A temporary next to PATH, named as the tools name theirs (a dot and
    the name first), so that a chunk file that exists is complete."""
    folder, base = os.path.split(path)
    return os.path.join(folder, ".%s.%d.part" % (base, os.getpid()))


def _die_once(marker):
    """Test hook (docs/farm.md, "Testing"): kill this worker process in the
    middle of the chunk, the first time only, as a crash would."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return
    os.kill(os.getpid(), signal.SIGKILL)


def worker_name():
    gpu = os.environ.get("CUDA_VISIBLE_DEVICES")
    return "%s:%d%s" % (socket.gethostname(), os.getpid(), " gpu %s" % gpu if gpu else "")


def _kept_encoder(job):
    lib = libc63.load(job["lib"])
    worker = libc63.load_worker(job["worker_lib"])
    key = (__name__, job["args"], job["lib"], job["worker_lib"])
    return key, _take("encoder", key, lambda: Encoder(lib, worker, job["args"]))


def prepare_encoder(job):
    """Make the encoder the chunks of JOB will use, and its picture memory,
    and keep them: the worker's part of the cluster's start. Returns the
    encoder's backend."""
    key, enc = _kept_encoder(job)
    try:
        enc.prepare(job["io_threads"])
    except BaseException:
        enc.free()
        raise
    _keep("encoder", key, enc)
    return enc.backend


def prepare_decoder(job):
    """The same for the decoder of a decoding job."""
    key, dec = _kept_decoder(job)
    _keep("decoder", key, dec)
    return dec.backend


def _die_when_written(path, final, marker):
    """Test hook: a thread that kills this worker once the chunk's output
    at PATH (the temporary) has its first bytes, since the chunk's loop
    runs in C; or, should the chunk have gone faster than the thread
    looked, once it is at FINAL: the worker still dies with a chunk of
    the job to its name."""
    def watch():
        while True:
            try:
                if os.path.getsize(path) > 0:
                    break
            except OSError:  # renamed into place (atomically), or removed: failed
                if os.path.exists(final):
                    break
                return
            time.sleep(0.001)
        _die_once(marker)
    threading.Thread(target=watch, daemon=True).start()


def encode_chunk(job):
    """Encode job["frames"] raw frames from byte job["offset"] of
    job["input"] into job["out"] with libc63 (the options job["args"]),
    through the worker's chunk encoder. LibraryMissing when this host has
    no libc63 or none of it."""
    start = time.monotonic()
    key, enc = _kept_encoder(job)
    setup = time.monotonic() - start
    tmp = _temporary(job["out"])
    out_fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        try:
            in_fd = os.open(job["input"], os.O_RDONLY)
            try:
                if job.get("kill_marker"):
                    _die_when_written(tmp, job["out"], job["kill_marker"])
                loop_start = time.monotonic()
                written = enc.encode(in_fd, job["offset"], job["frames"], job["io_threads"],
                                     out_fd)
                loop_s = time.monotonic() - loop_start
            finally:
                os.close(in_fd)
        finally:
            os.close(out_fd)
        os.replace(tmp, job["out"])
    except BaseException:
        enc.free()  # frames may be in flight: never reused
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    if enc.reusable:
        _keep("encoder", key, enc)
    else:
        enc.free()  # rate control carries over frames: one per chunk, as one c63-enc each
    ended = time.monotonic()
    return {"index": job["index"], "frames": job["frames"], "bytes": written,
            "seconds": ended - start, "ended": ended, "cached": False,
            "engine": "libc63 " + enc.backend, "worker": worker_name(), "setup_s": setup,
            "loop_s": loop_s}


class Decoder:
    """A libc63 decoder; flushed between pieces, which start at keyframes.
    WORKER: libc63farm.so, which writes the pictures through mappings
    (_Output), or None where this host has none."""

    def __init__(self, lib, worker, args):
        self.lib, self.worker = lib, worker
        self.storage, _ = libc63.dec_params(lib, args)
        self.handle = libc63.new(lib, "decoder", self.storage)
        self.backend = lib.c63_decoder_backend_name(self.handle).decode()
        self.picture = lib.t.DecodedPicture()

    def free(self):
        self.lib.c63_decoder_free(self.handle)
        self.handle = None


def _kept_decoder(job):
    lib = libc63.load(job["lib"])
    try:
        worker = libc63.load_worker(job.get("worker_lib", []))
    except libc63.LibraryMissing:
        worker = None
    key = (__name__, job["args"], job["lib"], job.get("worker_lib"))
    return key, _take("decoder", key, lambda: Decoder(lib, worker, job["args"]))


class _Unclean(Exception):
    """A piece that does not decode frame for frame: c63-dec takes it."""


class _Output:
    """The job's output file (allocated to its size before the first
    piece), written through shared mappings by libc63farm.so
    (c63farm_output, tools/mapped_output.c), as c63-dec writes its own:
    write() takes the file's inode lock, so every worker's writes into the
    one file would go one at a time. Its windows are unmapped as they fill,
    so a large piece does not count against the worker's memory (a nanny
    restarts a worker past its limit). With pwrite where there is no
    libc63farm.so or the file cannot be mapped."""

    def __init__(self, fd, worker):
        self.fd, self.worker = fd, worker
        self.handle = worker.c63farm_output_open(fd) if worker else None

    def put(self, offset, src, size):
        """SIZE bytes at address SRC to OFFSET of the file."""
        if self.handle:
            err = self.worker.c63farm_output_put(self.handle, offset, src, size)
            if err:
                raise OSError(err, os.strerror(err))
            return
        view = libc63.buffer_at(src, size)
        while len(view):
            n = os.pwrite(self.fd, view, offset)
            view, offset = view[n:], offset + n

    def close(self):
        if self.handle:
            handle, self.handle = self.handle, None
            err = self.worker.c63farm_output_close(handle)
            if err:
                raise OSError(err, os.strerror(err))


def _write_share(output, share):
    for offset, src, size in share:
        output.put(offset, src, size)


class _PictureWriter:
    """Decoded pictures written into their place in the output file
    (_Output), each in THREADS slices (one thread copies far below the
    memory's pace)."""

    def __init__(self, dec, output, base, width, height, frames, threads):
        self.dec, self.output, self.base, self.frames = dec, output, base, frames
        self.width, self.height = width, height
        self.frame_size, ysize, csize = _i420_size(width, height)
        cw, ch = (width + 1) // 2, (height + 1) // 2
        self.planes = ((0, width, height), (ysize, cw, ch), (ysize + csize, cw, ch))
        self.threads = max(1, threads)
        self.pool = concurrent.futures.ThreadPoolExecutor(threads) if threads > 1 else None
        self.scratch = None  # a whole picture, for pictures with padded rows
        self.done = 0

    def _shares(self, pic, at):
        """For each thread, its (file offset, src, bytes) share of every
        plane of PIC, when every plane is one run of bytes (rows without
        padding); None otherwise."""
        shares = [[] for _ in range(self.threads)]
        for p, (off, w, h) in enumerate(self.planes):
            if pic.stride[p] != w:
                return None
            size = w * h
            step = -(-size // self.threads)
            for t, s in enumerate(range(0, size, step)):
                shares[t].append((at + off + s, pic.data[p] + s, min(step, size - s)))
        return shares

    def _packed(self, pic):
        """PIC's planes copied by the library into one packed picture: its
        address."""
        if self.scratch is None:
            self.scratch = (ctypes.c_char * self.frame_size)()
        base = ctypes.addressof(self.scratch)
        planes = (ctypes.c_void_p * 3)(*[base + off for off, _, _ in self.planes])
        strides = (ctypes.c_int * 3)(*[w for _, w, _ in self.planes])
        if self.dec.lib.c63_decoder_copy_picture(self.dec.handle, ctypes.byref(pic), planes,
                                                 strides, libc63.MEMORY_HOST) != libc63.OK:
            raise _Unclean()
        return base

    def write(self, pic):
        n = pic.user
        if pic.width != self.width or pic.height != self.height or not 0 <= n < self.frames:
            raise _Unclean()
        at = self.base + n * self.frame_size
        shares = self._shares(pic, at)
        if shares is None:
            self.output.put(at, self._packed(pic), self.frame_size)
        elif self.pool:
            for f in [self.pool.submit(_write_share, self.output, share) for share in shares]:
                f.result()
        else:
            _write_share(self.output, shares[0])
        self.done += 1

    def close(self):
        if self.pool:
            self.pool.shutdown(wait=True)


def _receive_all(dec, writer, draining):
    """Write the pictures the decoder has ready; DRAINING: all of them, up
    to its end (it may say C63_ERR_AGAIN while frames are still on their
    way, as c63-dec's drain allows for)."""
    lib = dec.lib
    while True:
        ret = lib.c63_decoder_receive_picture(dec.handle, ctypes.byref(dec.picture))
        if ret == libc63.ERR_AGAIN:
            if draining:
                continue
            return
        if ret == libc63.ERR_EOF:
            return
        if ret != libc63.OK:
            raise _Unclean()
        writer.write(dec.picture)


def _decode_frames(dec, src, length, writer, frames):
    """Split SRC (LENGTH bytes) with libc63's framer, as c63-dec does, and
    decode every frame into WRITER. _Unclean at anything c63-dec would
    report."""
    lib = dec.lib
    scanner, res = lib.t.Scanner(), lib.t.ScanResult()
    lib.c63_frame_scanner_init(ctypes.byref(scanner))
    pos = n = 0
    while pos < length:
        ret = lib.c63_frame_scan(ctypes.byref(scanner), src + pos, length - pos, 1,
                                 ctypes.byref(res))
        if ret != libc63.SCAN_FRAME or not res.complete or n >= frames:
            raise _Unclean()
        while True:
            ret = lib.c63_decoder_send_packet(dec.handle, src + pos, res.size, n)
            if ret != libc63.ERR_AGAIN:
                break
            _receive_all(dec, writer, False)
        if ret != libc63.OK:
            raise _Unclean()
        pos += res.size
        n += 1
    lib.c63_decoder_send_packet(dec.handle, None, 0, 0)
    _receive_all(dec, writer, True)
    if writer.done != frames:
        raise _Unclean()


def _map(fd, offset, length, access):
    """A mapping of LENGTH bytes of FD from OFFSET and the address of byte
    OFFSET in it: (mapping, ctypes anchor, address)."""
    start = offset - offset % mmap.ALLOCATIONGRANULARITY
    m = mmap.mmap(fd, length + offset - start, access=access, offset=start)
    anchor = ctypes.c_char.from_buffer(m, offset - start)
    return m, anchor, ctypes.addressof(anchor)


def decode_piece(job):
    """Decode the piece into its place in job["frames_file"] with libc63;
    True when every frame decoded, False when c63-dec must take the piece.
    LibraryMissing when this host has no libc63."""
    key, dec = _kept_decoder(job)
    lib = dec.lib
    width, height = job["size"]
    frame_size = _i420_size(width, height)[0]
    in_fd = os.open(job["input"], os.O_RDONLY)
    out_fd = os.open(job["frames_file"], os.O_RDWR)
    maps = []
    try:
        maps.append(_map(in_fd, job["offset"], job["length"], mmap.ACCESS_COPY))
        output = _Output(out_fd, dec.worker)
        try:
            writer = _PictureWriter(dec, output, job["first"] * frame_size, width, height,
                                    job["frames"], job["io_threads"])
            try:
                _decode_frames(dec, maps[0][2], job["length"], writer, job["frames"])
                clean = True
            except _Unclean:
                clean = False
            finally:
                writer.close()
        finally:
            output.close()
    except BaseException:
        dec.free()
        raise
    finally:
        mappings = [m for m, _, _ in maps]
        maps.clear()  # the anchors first: a mapping with exported buffers cannot close
        for m in mappings:
            m.close()
        os.close(in_fd)
        os.close(out_fd)
    lib.c63_decoder_flush(dec.handle)
    _keep("decoder", key, dec)
    return clean
