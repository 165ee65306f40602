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
every chunk. Standard library
only: this module travels to the workers by value with the tasks.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import concurrent.futures
import ctypes
import mmap
import os
import queue
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
    """A libc63 encoder and a ring of picture buffers for its input."""

    def __init__(self, lib, args):
        self.lib = lib
        self.storage, params = libc63.enc_params(lib, args)
        self.width, self.height = params.width, params.height
        self.reusable = params.rate_control == libc63.RC_QUALITY
        self.frame_size, ysize, csize = _i420_size(self.width, self.height)
        self.plane_offsets = (0, ysize, ysize + csize)
        self.strides = (self.width, (self.width + 1) // 2, (self.width + 1) // 2)
        self.handle = libc63.new(lib, "encoder", self.storage)
        self.backend = lib.c63_encoder_backend_name(self.handle).decode()
        self.held = lib.c63_encoder_delay(self.handle) + 1  # pictures lent at most
        self.buffers, self.views, self.pictures = [], [], []
        self.packet = lib.t.Packet()
        self.released = None  # called with a picture's user once its packet is out

    def ring(self, depth):
        """DEPTH picture buffers (and a c63_picture of each)."""
        while len(self.buffers) < depth:
            address = self.lib.c63_picture_memory_alloc(self.frame_size)
            if not address:
                raise MemoryError("out of memory for picture buffers")
            self.buffers.append(address)
            self.views.append(libc63.buffer_at(address, self.frame_size))
            pic = self.lib.t.Picture()
            for p in range(3):
                pic.data[p] = address + self.plane_offsets[p]
                pic.stride[p] = self.strides[p]
            self.pictures.append(pic)
        return self.views[:depth], self.pictures[:depth]

    def error(self):
        return self.lib.c63_encoder_error(self.handle).decode("utf-8", "replace")

    def receive(self, write):
        """WRITE every packet ready; True once drained (C63_ERR_EOF)."""
        lib, pkt = self.lib, self.packet
        while True:
            ret = lib.c63_encoder_receive_packet(self.handle, ctypes.byref(pkt))
            if ret == libc63.ERR_AGAIN:
                return False
            if ret == libc63.ERR_EOF:
                return True
            if ret != libc63.OK:
                raise libc63.Failed("encoding failed: " + self.error())
            if self.released:
                self.released(pkt.user)
            write(libc63.buffer_at(pkt.data, pkt.size))

    def send(self, pic, write):
        """Send PIC (None: drain, to the end), writing the packets that come.
        The picture is lent: its buffer stays unchanged until its packet is
        out (self.released), so the library neither copies it nor waits
        for its upload."""
        ref = ctypes.byref(pic) if pic is not None else None
        while True:
            ret = self.lib.c63_encoder_send_picture_borrowed(self.handle, ref)
            if ret == libc63.OK:
                break
            if ret != libc63.ERR_AGAIN:
                raise libc63.Failed("encoding failed: " + self.error())
            self.receive(write)
        if pic is not None:
            self.receive(write)
            return
        while not self.receive(write):
            pass

    def free(self):
        self.lib.c63_encoder_free(self.handle)  # it may read pictures it was lent
        self.handle = None
        for address in self.buffers:
            self.lib.c63_picture_memory_free(address)
        self.buffers, self.views, self.pictures = [], [], []


def _pread_full(fd, view, offset):
    done = 0
    while done < len(view):
        n = os.preadv(fd, [view[done:]], offset + done)
        if n == 0:
            break
        done += n
    return done


class _Writer:
    """The chunk's packets written by a thread of their own, in order, so
    that the encoding loop goes on while the kernel copies each packet into
    the file: for a GPU worker that copy is a large share of a frame's
    time. Packets are copied out of the library's memory, which holds only
    until the next receive; at most DEPTH wait."""

    _END = None

    def __init__(self, fd, depth=64):
        self.fd = fd
        self.queue = queue.Queue(depth)
        self.failure = None
        self.thread = threading.Thread(target=self._run, name="c63farm-writer", daemon=True)
        self.thread.start()

    def _run(self):
        end = False
        while not end:
            batch = [self.queue.get()]
            while len(batch) < 64:  # whatever else waits, in one writev
                try:
                    batch.append(self.queue.get_nowait())
                except queue.Empty:
                    break
            if batch[-1] is self._END:
                batch.pop()
                end = True
            if self.failure is None:
                try:
                    _writev_all(self.fd, batch)
                except OSError as e:
                    self.failure = e

    def put(self, view):
        """Queue a copy of VIEW; raises the write's error once one failed."""
        if self.failure is not None:
            raise self.failure
        self.queue.put(bytes(view))

    def close(self, quiet=False):
        """Wait for every packet queued; raises the write's error unless
        QUIET (when the chunk failed already)."""
        self.queue.put(self._END)
        self.thread.join()
        if self.failure is not None and not quiet:
            raise self.failure


def _writev_all(fd, buffers):
    """All of BUFFERS (fewer than IOV_MAX) to FD, in order."""
    views = [memoryview(b) for b in buffers if len(b)]
    while views:
        n = os.writev(fd, views)
        while views and n >= len(views[0]):
            n -= len(views[0])
            views.pop(0)
        if n:
            views[0] = views[0][n:]


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


class _Reader:
    """Frames of the raw input read ahead into the encoder's ring by
    THREADS threads, each frame by one pread straight into its buffer."""

    def __init__(self, fd, offset, frame_size, frames, views, threads):
        self.fd, self.offset, self.frame_size = fd, offset, frame_size
        self.frames, self.views = frames, views
        self.pool = concurrent.futures.ThreadPoolExecutor(threads)
        self.pending = [None] * len(views)
        self.read_s = self.wait_s = 0.0
        for i in range(min(len(views), frames)):
            self._start(i)

    def _read(self, i):
        t = time.perf_counter()
        n = _pread_full(self.fd, self.views[i % len(self.views)],
                        self.offset + i * self.frame_size)
        if n != self.frame_size:
            raise libc63.Failed("the input is shorter than when the job started")
        return time.perf_counter() - t

    def _start(self, i):
        self.pending[i % len(self.views)] = self.pool.submit(self._read, i)

    def wait(self, i):
        """Frame I is in its buffer."""
        t = time.perf_counter()
        self.read_s += self.pending[i % len(self.views)].result()
        self.wait_s += time.perf_counter() - t

    def done_with(self, i):
        """Frame I's buffer is free again: read the frame that goes there."""
        if i + len(self.views) < self.frames:
            self._start(i + len(self.views))

    def close(self):
        """Every read is over (before a buffer may be freed or reused)."""
        for future in self.pending:
            if future is not None:
                future.cancel()
        self.pool.shutdown(wait=True)


def worker_name():
    gpu = os.environ.get("CUDA_VISIBLE_DEVICES")
    return "%s:%d%s" % (socket.gethostname(), os.getpid(), " gpu %s" % gpu if gpu else "")


def _ring_depth(job, enc):
    """Picture buffers: two per reading thread, so each has one to read
    into while the encoder takes another, and those the encoder holds."""
    return max(4, 2 * job["io_threads"]) + enc.held


def _encode(enc, job, out_fd):
    frames = job["frames"]
    depth = _ring_depth(job, enc)
    views, pictures = enc.ring(depth)
    received = [0]
    writer = _Writer(out_fd)

    def write(data):
        writer.put(data)
        received[0] += 1
        if received[0] == 1 and job.get("kill_marker"):
            _die_once(job["kill_marker"])

    fd = os.open(job["input"], os.O_RDONLY)
    reader = _Reader(fd, job["offset"], enc.frame_size, frames, views, job["io_threads"])
    enc.released = reader.done_with  # a frame's buffer is read into again after its packet
    encoded = False
    try:
        for i in range(frames):
            reader.wait(i)
            pic = pictures[i % depth]
            # A chunk starts as a fresh encoder would, kept encoders included.
            pic.force_keyframe, pic.user = int(i == 0), i
            enc.send(pic, write)
        enc.send(None, write)
        encoded = True
    finally:
        enc.released = None
        reader.close()
        os.close(fd)
        writer.close(quiet=not encoded)  # before the caller closes out_fd
    return reader


def _kept_encoder(job):
    lib = libc63.load(job["lib"])
    key = (job["args"], job["lib"])
    return key, _take("encoder", key, lambda: Encoder(lib, job["args"]))


def prepare_encoder(job):
    """Make the encoder the chunks of JOB will use, and its picture memory,
    and keep them: the worker's part of the cluster's start. Returns the
    encoder's backend."""
    key, enc = _kept_encoder(job)
    try:
        enc.ring(_ring_depth(job, enc))
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


def encode_chunk(job):
    """Encode job["frames"] raw frames from byte job["offset"] of
    job["input"] into job["out"] with libc63 (the options job["args"]).
    LibraryMissing when this host has no libc63."""
    start = time.monotonic()
    key, enc = _kept_encoder(job)
    setup = time.monotonic() - start
    tmp = _temporary(job["out"])
    out_fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        try:
            reader = _encode(enc, job, out_fd)
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
    return {"index": job["index"], "frames": job["frames"],
            "bytes": os.path.getsize(job["out"]), "seconds": time.monotonic() - start,
            "cached": False, "engine": "libc63 " + enc.backend, "worker": worker_name(),
            "setup_s": setup, "read_s": reader.read_s, "wait_s": reader.wait_s}


class Decoder:
    """A libc63 decoder; flushed between pieces, which start at keyframes."""

    def __init__(self, lib, args):
        self.lib = lib
        self.storage, _ = libc63.dec_params(lib, args)
        self.handle = libc63.new(lib, "decoder", self.storage)
        self.backend = lib.c63_decoder_backend_name(self.handle).decode()
        self.picture = lib.t.DecodedPicture()

    def free(self):
        self.lib.c63_decoder_free(self.handle)
        self.handle = None


def _kept_decoder(job):
    lib = libc63.load(job["lib"])
    key = (job["args"], job["lib"])
    return key, _take("decoder", key, lambda: Decoder(lib, job["args"]))


class _Unclean(Exception):
    """A piece that does not decode frame for frame: c63-dec takes it."""


def _pwrite_all(fd, view, offset):
    while len(view):
        n = os.pwrite(fd, view, offset)
        view, offset = view[n:], offset + n


def _write_share(fd, share):
    for offset, src, size in share:
        _pwrite_all(fd, libc63.buffer_at(src, size), offset)


class _PictureWriter:
    """Decoded pictures written into their place in the output file, each
    in THREADS slices (one thread copies far below the memory's pace).
    Written, not mapped: pages written through a mapping of a large piece
    count against the worker's memory (a nanny restarts a worker past its
    limit), and a write reports a full disk where a mapping would raise
    SIGBUS."""

    def __init__(self, dec, fd, base, width, height, frames, threads):
        self.dec, self.fd, self.base, self.frames = dec, fd, base, frames
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
        """PIC's planes copied by the library into one packed picture."""
        if self.scratch is None:
            self.scratch = (ctypes.c_char * self.frame_size)()
        base = ctypes.addressof(self.scratch)
        planes = (ctypes.c_void_p * 3)(*[base + off for off, _, _ in self.planes])
        strides = (ctypes.c_int * 3)(*[w for _, w, _ in self.planes])
        if self.dec.lib.c63_decoder_copy_picture(self.dec.handle, ctypes.byref(pic), planes,
                                                 strides, libc63.MEMORY_HOST) != libc63.OK:
            raise _Unclean()
        return memoryview(self.scratch).cast("B")

    def write(self, pic):
        n = pic.user
        if pic.width != self.width or pic.height != self.height or not 0 <= n < self.frames:
            raise _Unclean()
        at = self.base + n * self.frame_size
        shares = self._shares(pic, at)
        if shares is None:
            _pwrite_all(self.fd, self._packed(pic), at)
        elif self.pool:
            for f in [self.pool.submit(_write_share, self.fd, share) for share in shares]:
                f.result()
        else:
            _write_share(self.fd, shares[0])
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
    out_fd = os.open(job["frames_file"], os.O_WRONLY)
    maps = []
    try:
        maps.append(_map(in_fd, job["offset"], job["length"], mmap.ACCESS_COPY))
        writer = _PictureWriter(dec, out_fd, job["first"] * frame_size, width, height,
                                job["frames"], job["io_threads"])
        try:
            _decode_frames(dec, maps[0][2], job["length"], writer, job["frames"])
            clean = True
        except _Unclean:
            clean = False
        finally:
            writer.close()
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
