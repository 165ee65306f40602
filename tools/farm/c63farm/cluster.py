"""Connecting to Dask: a scheduler given by address, or a local cluster of
one worker per GPU (pinned with CUDA_VISIBLE_DEVICES, resource GPU=1) or per
four CPU cores.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import contextlib
import hashlib
import importlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
import zipfile

from . import FarmError, note

CORES_PER_CPU_WORKER = 4

MISSING_DASK = ("c63-farm needs Dask (the Python packages dask and distributed): on Debian "
                "apt-get install python3-dask python3-distributed, elsewhere pip install dask "
                "distributed, or put their wheels on PYTHONPATH (docs/farm.md)")


def import_distributed():
    """The distributed module, or FarmError saying how to get it."""
    try:
        import distributed
    except ImportError as e:
        raise FarmError("%s (%s)" % (MISSING_DASK, e))
    return distributed


# What runs on the workers (standard library only, imports within it relative).
WORKER_MODULES = ("tasks", "inprocess", "libc63", "media")


class _Shipped:
    """The worker modules as a package of their own, sent to every worker
    once a job (Client.upload_file: a plugin, which the scheduler also gives
    workers that join or restart later, and the scheduler's own copy where
    it reads the tasks, as Dask 2024 and later do) and imported here from
    the same zip, so that a task names its function (the standard pickle, a
    few bytes) instead of carrying this package by value (cloudpickle,
    tens of kilobytes made and read again every task). The package is
    named by a hash of its sources: a worker that outlives a job keeps the
    modules of every version it ran, never a stale one under a new
    driver."""

    def __init__(self):
        here = os.path.dirname(os.path.abspath(__file__))
        sources = []
        for module in WORKER_MODULES:
            with open(os.path.join(here, module + ".py"), "rb") as f:
                sources.append((module, f.read()))
        digest = hashlib.sha256()
        for module, source in sources:
            digest.update(module.encode() + b"\0" + source + b"\0")
        self.name = "c63farm_worker_" + digest.hexdigest()[:16]
        self.folder = tempfile.mkdtemp(prefix="c63-farm-")
        # The file's name is the job's own: a worker that had the same
        # package from an earlier job keeps reading that zip (Python's
        # zipimport caches its directory), which another of the same name
        # would overwrite under it.
        self.path = os.path.join(self.folder, "%s-%s.zip" % (self.name, uuid.uuid4().hex))
        with zipfile.ZipFile(self.path, "w") as z:
            z.writestr(self.name + "/__init__.py", "")
            for module, source in sources:
                z.writestr("%s/%s.py" % (self.name, module), source)
        sys.path.insert(0, self.path)
        self.modules = {m: importlib.import_module("%s.%s" % (self.name, m))
                        for m in WORKER_MODULES}

    def send(self, client):
        client.upload_file(self.path)

    def close(self):
        sys.path.remove(self.path)
        shutil.rmtree(self.folder, ignore_errors=True)


def visible_gpus():
    """The GPUs this host can use, as CUDA_VISIBLE_DEVICES entries."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [d for d in env.split(",") if d.strip()]
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if out.returncode != 0:
        return []
    return [str(i) for i, line in enumerate(out.stdout.splitlines()) if line.startswith("GPU ")]


def _dashboard_address():
    # Any free port: several jobs may run on one host. Without bokeh the
    # scheduler's web server has no dashboard pages, only its other routes.
    return ":0"


def _gpu_cluster(distributed, gpus):
    # A worker of one thread would get the host's memory over its cores
    # (Dask's "auto"); these share the host among themselves, as a
    # LocalCluster's workers do.
    memory = distributed.system.MEMORY_LIMIT // len(gpus)
    workers = {
        "gpu-%s" % gpu: {"cls": distributed.Nanny,
                         "options": {"nthreads": 1, "resources": {"GPU": 1},
                                     "memory_limit": memory,
                                     "env": {"CUDA_VISIBLE_DEVICES": gpu},
                                     "silence_logs": logging.ERROR}}
        for gpu in gpus}
    scheduler = {"cls": distributed.Scheduler,
                 "options": {"dashboard_address": _dashboard_address()}}
    return distributed.SpecCluster(workers=workers, scheduler=scheduler,
                                   silence_logs=logging.ERROR)


class Farm:
    """The client, and what the tasks need to know of the workers."""

    def __init__(self, client, workers, use_gpu, threads_per_worker, shipped):
        self.client = client
        self.shipped = shipped
        self.workers = workers
        self.resources = {"GPU": 1} if use_gpu else None
        # Local workers share the host's cores; a remote worker's tools use all of theirs.
        self.threads_per_worker = threads_per_worker

    def threads_args(self, opts):
        """c63-enc's and c63-dec's -t: the user's, or the host's cores shared
        by the local workers."""
        if opts.threads is None and self.threads_per_worker is not None:
            return ["-t", str(self.threads_per_worker)]
        return []

    def remote(self, func):
        """FUNC of one of WORKER_MODULES, as the workers have it (_Shipped)."""
        module = func.__module__.rsplit(".", 1)[-1]
        return getattr(self.shipped.modules[module], func.__name__)

    def dashboard(self):
        services = self.client.scheduler_info().get("services", {})
        if "dashboard" not in services:
            return None
        try:
            has_pages = self.client.run_on_scheduler(_has_bokeh)
        except Exception:  # a scheduler that cannot run it: say nothing
            return None
        return self.client.dashboard_link if has_pages else None


def _has_bokeh():
    """Whether this process can import bokeh: on the scheduler, whether its
    web server has the dashboard's pages. Standard library only: it travels
    by value (it names no module the scheduler lacks)."""
    import importlib.util
    return importlib.util.find_spec("bokeh") is not None


@contextlib.contextmanager
def connect(opts, use_gpu):
    """A Farm for the job: the scheduler at opts.scheduler, or a local cluster.
    --stats tells how long it took to be up (Dask's import included) and to
    close: on a short job that is much of the command's time."""
    begun = time.monotonic()
    distributed = import_distributed()
    cluster = None
    try:
        if opts.scheduler:
            client = distributed.Client(opts.scheduler, timeout="20s")
            threads = None
        else:
            cluster, threads = _local_cluster(distributed, opts, use_gpu)
            client = distributed.Client(cluster)
    except (OSError, TimeoutError) as e:
        raise FarmError("cannot reach the Dask scheduler %s: %s" % (opts.scheduler, e))
    shipped = None
    try:
        workers = client.scheduler_info()["workers"]
        if use_gpu and not any(w.get("resources", {}).get("GPU") for w in workers.values()):
            raise FarmError("--backend cuda: no worker declares a GPU (dask worker "
                            "--resources GPU=1, see docs/farm.md)")
        shipped = _Shipped()
        shipped.send(client)
        if opts.stats:
            note(opts, "cluster up in %.2f s (%s)" % (
                time.monotonic() - begun, "connected" if opts.scheduler else "started here"))
        yield Farm(client, len(workers), use_gpu, threads, shipped)
    finally:
        closing = time.monotonic()
        if cluster is not None:
            _settle(client, len(cluster.workers))
        client.close()
        if cluster is not None:
            cluster.close()
        if shipped is not None:
            shipped.close()
        if opts.stats:
            note(opts, "cluster %s in %.2f s" % ("closed" if cluster is not None else "left",
                                                 time.monotonic() - closing))


def _settle(client, workers):
    """Wait for a worker that is being restarted (its process died) to be
    back: closing it half-started makes distributed print tracebacks."""
    try:
        client.wait_for_workers(workers, timeout=10)
    except Exception:  # a worker that does not come back does not matter now
        pass


def _local_cluster(distributed, opts, use_gpu):
    gpus = visible_gpus() if use_gpu else []
    if use_gpu and not gpus:
        raise FarmError("--backend cuda: this host shows no GPU (nvidia-smi -L); give "
                        "--scheduler for a cluster with GPU workers")
    if gpus:
        return _gpu_cluster(distributed, gpus[:opts.workers or len(gpus)]), None
    cores = os.cpu_count() or 1
    n = opts.workers or max(1, cores // CORES_PER_CPU_WORKER)
    cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                       dashboard_address=_dashboard_address(),
                                       silence_logs=logging.ERROR)
    return cluster, max(1, cores // n)
