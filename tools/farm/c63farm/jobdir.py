"""The job folder (finished chunks, kept so that a job started again
resumes) and the output file (written under a temporary name, renamed once
the whole job succeeded).
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import concurrent.futures
import errno
import hashlib
import json
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


def _copy_segment(src, dst, src_off, dst_off, length):
    """Copy LENGTH bytes between the open descriptors at the offsets given,
    in the kernel where it can (copy_file_range), else by pread/pwrite."""
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


def _segments(ranges):
    """(part index, offset in the part, offset in the output, length) for
    every segment of the parts' ranges (offset, length) laid end to end."""
    out, dst_off = [], 0
    for index, (start, size) in enumerate(ranges):
        for off in range(0, size, SEGMENT_BYTES):
            out.append((index, start + off, dst_off + off, min(SEGMENT_BYTES, size - off)))
        dst_off += size
    return out


def _write_parts(parts, dst):
    fds = [os.open(p[0] if isinstance(p, tuple) else p, os.O_RDONLY) for p in parts]
    try:
        ranges = [p[1:] if isinstance(p, tuple) else (0, os.fstat(fd).st_size)
                  for p, fd in zip(parts, fds)]
        os.ftruncate(dst, sum(n for _, n in ranges))
        with concurrent.futures.ThreadPoolExecutor(JOIN_THREADS) as pool:
            jobs = [pool.submit(_copy_segment, fds[i], dst, src_off, dst_off, n)
                    for i, src_off, dst_off, n in _segments(ranges)]
            for job in jobs:
                job.result()
    finally:
        for fd in fds:
            os.close(fd)


def join_files(parts, output):
    """Write PARTS, in order, to OUTPUT: each a file, or (file, offset,
    length) for a range of one. Under a temporary name in the output's
    folder, renamed when complete, so that OUTPUT is either absent or
    whole."""
    folder, name = os.path.split(os.path.abspath(output))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".%s." % name)
    except OSError as e:
        raise FarmError("cannot write %s: %s" % (output, e.strerror))
    try:
        try:
            _write_parts(parts, fd)
            os.fsync(fd)
        finally:
            os.close(fd)
        _publish(tmp, output)
    except OSError as e:
        os.unlink(tmp)
        raise FarmError("cannot write %s: %s" % (output, e.strerror or e))


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
