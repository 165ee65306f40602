"""The job folder (finished chunks, kept so that a job started again
resumes) and the output file (written under a temporary name, renamed once
the whole job succeeded).
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import concurrent.futures
import errno
import hashlib
import json
import mmap
import os
import shutil
import tempfile

from . import FarmError, UsageError


def input_identity(path):
    """What tells one input file from another, or from itself after a change."""
    st = os.stat(path)
    return {"path": os.path.realpath(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "inode": st.st_ino, "device": st.st_dev}


class JobDir:
    """WORK_DIR/<key>/: a manifest naming the input and parameters, and one
    file per finished chunk. The key is a hash of the manifest, so a job
    started again with the same input and parameters finds its chunks and
    any other job gets a folder of its own."""

    def __init__(self, work_dir, manifest):
        self.text = json.dumps(manifest, sort_keys=True)
        self.key = hashlib.sha256(self.text.encode()).hexdigest()[:16]
        self.work_dir = work_dir
        self.path = os.path.join(work_dir, self.key)

    def create(self):
        """Make the folder when the first chunk is about to run: a job that
        fails before leaves none."""
        try:
            os.makedirs(self.path, exist_ok=True)
            manifest_path = os.path.join(self.path, "manifest.json")
            if not os.path.exists(manifest_path):
                _write_atomically(manifest_path, self.text.encode())
        except OSError as e:
            raise FarmError("cannot use the work folder %s: %s" % (self.work_dir, e.strerror))

    def chunk_path(self, index, suffix):
        return os.path.join(self.path, "chunk-%06d%s" % (index, suffix))

    def remove(self):
        """After success: the chunks, and the work folder if nothing else is in it."""
        shutil.rmtree(self.path, ignore_errors=True)
        try:
            os.rmdir(self.work_dir)
        except OSError:
            pass


def _write_atomically(path, data):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".manifest.")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def check_output(output, input):
    """Before any work: UsageError when OUTPUT names the file INPUT (by any
    link: writing it would destroy what the workers read), FarmError when
    its folder takes no new file."""
    if os.path.exists(output) and os.path.exists(input) and os.path.samefile(output, input):
        raise UsageError("the output %s is the input" % output)
    folder = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(folder):
        raise FarmError("cannot write %s: its folder does not exist" % output)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FarmError("cannot write %s: its folder is not writable" % output)


def default_work_dir(output):
    folder, name = os.path.split(os.path.abspath(output))
    return os.path.join(folder, ".%s.farm" % name)


# The join copies in segments of this size on several threads: one thread
# copies far below a host's memory or file system bandwidth.
SEGMENT_BYTES = 256 << 20
JOIN_THREADS = 8
COPY_BLOCK = 16 << 20


def _map_into(dst, dst_off, length, src, src_off):
    """Read LENGTH bytes of SRC from SRC_OFF straight into a shared mapping
    of DST at DST_OFF (its blocks allocated, so that no page fault finds the
    disk full). False where DST cannot be mapped or allocated (a file
    system without fallocate or mmap): the caller copies by hand.
    Into a mapping because write() and copy_file_range() hold the file's
    inode lock while they copy, so the join's threads would write the one
    output one at a time (on tmpfs, one core's memcpy), where page faults
    into a shared mapping go in parallel."""
    try:
        os.posix_fallocate(dst, dst_off, length)
    except OSError as e:
        if e.errno in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
            return False
        raise
    skew = dst_off % mmap.ALLOCATIONGRANULARITY
    try:
        window = mmap.mmap(dst, skew + length, offset=dst_off - skew)
    except (OSError, ValueError):
        return False
    try:
        with memoryview(window) as view:
            done = 0
            while done < length:
                n = os.preadv(src, [view[skew + done:skew + length]], src_off + done)
                if n == 0:
                    raise OSError("a chunk file became shorter while it was copied")
                done += n
    finally:
        window.close()
    return True


def _copy_segment(src, dst, src_off, dst_off, length):
    """Copy LENGTH bytes between the open descriptors at the offsets given:
    through a mapping of DST (_map_into), else in the kernel
    (copy_file_range), else by pread/pwrite."""
    if length == 0 or _map_into(dst, dst_off, length, src, src_off):
        return
    done = 0
    try:
        while done < length:
            n = os.copy_file_range(src, dst, length - done, src_off + done, dst_off + done)
            if n == 0:
                break
            done += n
    except (AttributeError, OSError):
        pass  # not between these files (an old kernel, another file system): by hand
    while done < length:
        block = os.pread(src, min(COPY_BLOCK, length - done), src_off + done)
        if not block:
            raise OSError("a chunk file became shorter while it was copied")
        os.pwrite(dst, block, dst_off + done)
        done += len(block)


class Joiner:
    """Writes parts, in order, to OUTPUT while later parts are still being
    made: each part is copied as soon as every part before it is there,
    in segments on JOIN_THREADS threads. Under a temporary name in the
    output's folder, renamed by finish(), so that OUTPUT is either absent
    or whole; abort() removes the temporary."""

    def __init__(self, output, count):
        self.output, self.count = output, count
        folder, name = os.path.split(os.path.abspath(output))
        try:
            self.fd, self.tmp = tempfile.mkstemp(dir=folder, prefix=".%s." % name)
        except OSError as e:
            raise FarmError("cannot write %s: %s" % (output, e.strerror))
        self.pool = concurrent.futures.ThreadPoolExecutor(JOIN_THREADS)
        self.parts, self.copies, self.sources = {}, [], []
        self.next = self.size = 0

    def add(self, index, part):
        """Part INDEX is complete: a file, or (file, offset, length) for a
        range of one."""
        self.parts[index] = part
        while self.next in self.parts:
            self._copy(self.parts.pop(self.next))
            self.next += 1

    def _copy(self, part):
        path, start, length = part if isinstance(part, tuple) else (part, 0, None)
        try:
            src = os.open(path, os.O_RDONLY)
        except OSError as e:
            raise FarmError("cannot read %s: %s" % (path, e.strerror))
        self.sources.append(src)
        if length is None:
            length = os.fstat(src).st_size
        for off in range(0, length, SEGMENT_BYTES):
            self.copies.append(self.pool.submit(_copy_segment, src, self.fd, start + off,
                                                self.size + off,
                                                min(SEGMENT_BYTES, length - off)))
        self.size += length

    def _wait(self):
        self.pool.shutdown(wait=True)
        for src in self.sources:
            os.close(src)
        self.sources = []
        for copy in self.copies:
            copy.result()

    def finish(self):
        try:
            if self.next != self.count:
                raise FarmError("part %d of %s is missing" % (self.next, self.output))
            self._wait()
            os.ftruncate(self.fd, self.size)
            os.fsync(self.fd)
            os.close(self.fd)
            self.fd = None
            _publish(self.tmp, self.output)
        except OSError as e:
            self.abort()
            raise FarmError("cannot write %s: %s" % (self.output, e.strerror or e))
        except BaseException:
            self.abort()
            raise

    def abort(self):
        for copy in self.copies:
            copy.cancel()
        try:
            self._wait()
        except OSError:
            pass
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if os.path.exists(self.tmp):
            os.unlink(self.tmp)


def join_files(parts, output):
    """Write PARTS (files, or (file, offset, length) ranges), in order, to
    OUTPUT, which is either absent or whole (Joiner)."""
    joiner = Joiner(output, len(parts))
    try:
        for index, part in enumerate(parts):
            joiner.add(index, part)
    except BaseException:
        joiner.abort()
        raise
    joiner.finish()


def _publish(path, output):
    os.chmod(path, 0o666 & ~_umask())
    os.replace(path, output)


def move_file(path, output):
    """PATH, complete, becomes OUTPUT: renamed where both are on one file
    system, else copied (join_files)."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        _publish(path, output)
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise FarmError("cannot write %s: %s" % (output, e.strerror or e))
        join_files([path], output)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
