"""Connecting to Dask: a scheduler given by address, or a local cluster of
one worker per GPU (pinned with CUDA_VISIBLE_DEVICES, resource GPU=1) or per
four CPU cores.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import contextlib
import logging
import os
import subprocess

from . import FarmError, inprocess, libc63, media, tasks

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
    # The tasks travel by value, so that workers need no copy of this package.
    import cloudpickle
    if hasattr(cloudpickle, "register_pickle_by_value"):
        for module in (tasks, media, inprocess, libc63):
            cloudpickle.register_pickle_by_value(module)
    return distributed


def by_value(func):
    """FUNC, as a closure that travels to the workers by value whatever
    Dask's version: distributed pickles a task with the standard pickle
    first, which names a function by its module (absent on the workers),
    and only what that cannot pickle goes to cloudpickle, which takes this
    package's task modules by value (import_distributed)."""
    return lambda *args: func(*args)


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

    def __init__(self, client, workers, use_gpu, threads_per_worker):
        self.client = client
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

    def dashboard(self):
        services = self.client.scheduler_info().get("services", {})
        if "dashboard" not in services:
            return None
        try:
            has_pages = self.client.run_on_scheduler(by_value(tasks.has_bokeh))
        except Exception:  # a scheduler that cannot run it: say nothing
            return None
        return self.client.dashboard_link if has_pages else None


@contextlib.contextmanager
def connect(opts, use_gpu):
    """A Farm for the job: the scheduler at opts.scheduler, or a local cluster."""
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
    try:
        workers = client.scheduler_info()["workers"]
        if use_gpu and not any(w.get("resources", {}).get("GPU") for w in workers.values()):
            raise FarmError("--backend cuda: no worker declares a GPU (dask worker "
                            "--resources GPU=1, see docs/farm.md)")
        yield Farm(client, len(workers), use_gpu, threads)
    finally:
        if cluster is not None:
            _settle(client, len(cluster.workers))
        client.close()
        if cluster is not None:
            cluster.close()


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
