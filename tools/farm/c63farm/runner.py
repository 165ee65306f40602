"""Running a job's tasks on the farm, in order of submission, with
progress, and what a failed task means for the job.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import os
import time

from . import FarmError, note, tasks

# Retries for a task that raised (a tool that failed on a worker, e.g. a
# full disk there); a task whose worker died is retried by the scheduler
# (distributed.scheduler.allowed-failures).
TASK_RETRIES = 1


def kill_hook(job_dir, index):
    """Test hook: C63_FARM_TEST_KILL_CHUNK=N makes the first attempt of
    chunk N kill its worker process mid-chunk (tests/test_farm.py). The
    marker that says it happened is left in the work folder."""
    wanted = os.environ.get("C63_FARM_TEST_KILL_CHUNK")
    if wanted is not None and wanted == str(index):
        return os.path.join(job_dir.work_dir, "killed-%s-%d" % (job_dir.key, index))
    return None


def prepare(opts, farm, worker):
    """Every worker makes its libc63 encoder or decoder (and picture
    memory) for the job WORKER describes before the job's timing starts,
    so that a CUDA context's start is not counted as the job's speed.
    --stats says how long that took and what the workers will use; a
    worker that cannot use libc63 is told of without it, since its tool a
    chunk is several times slower."""
    t = time.monotonic()
    ready = farm.client.run(farm.remote(tasks.prepare), worker)
    kinds = sorted(set(ready.values()))
    if opts.stats:
        note(opts, "workers ready in %.2f s: %s" % (time.monotonic() - t, ", ".join(kinds)))
    elif worker["engine"] == "libc63":
        for kind in kinds:
            if not kind.startswith("libc63 "):
                note(opts, "note: some workers run %s: a tool's process a chunk, slower" % kind)


def run(farm, func, jobs, name, progress, on_result=None):
    """Submit func(job) for every job and wait for all, handing each result
    to ON_RESULT as it comes. Returns the results in job order; FarmError
    on the first task that failed for good.
    Test hook: C63_FARM_TEST_STOP_AFTER=N stops the job, as an interrupted
    driver would, after N tasks."""
    distributed = __import__("distributed")
    stop_after = os.environ.get("C63_FARM_TEST_STOP_AFTER")
    func = farm.remote(func)
    futures = [farm.client.submit(func, job, key="%s-%d" % (name, job["index"]),
                                  resources=farm.resources, retries=TASK_RETRIES)
               for job in jobs]
    results = {}
    try:
        for future in distributed.as_completed(futures):
            try:
                result = future.result()
            except Exception as e:  # the task's own exception, or KilledWorker
                raise FarmError(str(e) or type(e).__name__)
            results[result["index"]] = result
            progress.add(result["frames"])
            if on_result is not None:
                on_result(result)
            if stop_after is not None and len(results) >= int(stop_after):
                raise FarmError("stopped after %d tasks (C63_FARM_TEST_STOP_AFTER)" % len(results))
    finally:
        farm.client.cancel(futures)
        progress.finish()
    return [results[job["index"]] for job in jobs]


def report_workers(opts, results):
    """--stats: a line per worker of the tasks that ran (not those found
    done): chunks, frames per second of its own time, and where that time
    went (finding or making the encoder, libc63farm.so's chunk loop), and
    the span of its tasks (the time between them is the scheduler's)."""
    workers = {}
    for r in results:
        if not r.get("cached"):
            workers.setdefault(r.get("worker", "?"), []).append(r)
    for name in sorted(workers):
        rs = workers[name]
        frames, seconds = sum(r["frames"] for r in rs), sum(r["seconds"] for r in rs)
        detail = "; set-up %.3f s" % sum(r["setup_s"] for r in rs) if "setup_s" in rs[0] else ""
        if "loop_s" in rs[0]:
            detail += ", in the chunk loop %.3f s" % sum(r["loop_s"] for r in rs)
        if all("ended" in r for r in rs):  # one process's monotonic clock
            span = max(r["ended"] for r in rs) - min(r["ended"] - r["seconds"] for r in rs)
            detail += "; from its first task's start to its last's end %.3f s" % span
        note(opts, "worker %s (%s): %d tasks, %d frames in %.3f s, %.1f fps%s" % (
            name, rs[0].get("engine", "?"), len(rs), frames, seconds,
            frames / seconds if seconds > 0 else 0.0, detail))
