"""The job folder (finished chunks, kept so that a job started again
resumes) and the output file (written under a temporary name, renamed once
the whole job succeeded).
SPDX-License-Identifier: LGPL-2.1-or-later
"""
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


def refuse_output_on_input(output, input):
    """UsageError when OUTPUT names the file INPUT (by any link): writing it
    would destroy what the workers read."""
    if os.path.exists(output) and os.path.exists(input) and os.path.samefile(output, input):
        raise UsageError("the output %s is the input" % output)


def default_work_dir(output):
    folder, name = os.path.split(os.path.abspath(output))
    return os.path.join(folder, ".%s.farm" % name)


def _append(dst, path):
    """Append the file PATH to the open file DST, in the kernel where it can."""
    with open(path, "rb") as src:
        size = os.fstat(src.fileno()).st_size
        copied = 0
        try:
            while copied < size:
                n = os.copy_file_range(src.fileno(), dst.fileno(), size - copied)
                if n == 0:
                    break
                copied += n
        except (AttributeError, OSError):
            src.seek(copied)
            dst.seek(0, os.SEEK_END)
            shutil.copyfileobj(src, dst, 16 << 20)
            copied = size
        if copied != size:
            raise OSError("%s changed while it was copied" % path)


def join_files(parts, output):
    """Write the files PARTS, in order, to OUTPUT: under a temporary name in
    the output's folder, renamed when complete, so that OUTPUT is either
    absent or whole."""
    folder, name = os.path.split(os.path.abspath(output))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".%s." % name)
    except OSError as e:
        raise FarmError("cannot write %s: %s" % (output, e.strerror))
    try:
        with os.fdopen(fd, "wb") as dst:
            for part in parts:
                _append(dst, part)
            dst.flush()
            os.fsync(dst.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, output)
    except OSError as e:
        os.unlink(tmp)
        raise FarmError("cannot write %s: %s" % (output, e.strerror or e))


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
