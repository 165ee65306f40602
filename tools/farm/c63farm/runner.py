"""Running a job's tasks on the farm, in order of submission, with
progress, and what a failed task means for the job.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import os

from . import FarmError

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


def run(farm, func, jobs, name, progress):
    """Submit func(job) for every job and wait for all. Returns the results
    in job order; FarmError on the first task that failed for good.
    Test hook: C63_FARM_TEST_STOP_AFTER=N stops the job, as an interrupted
    driver would, after N tasks."""
    distributed = __import__("distributed")
    stop_after = os.environ.get("C63_FARM_TEST_STOP_AFTER")
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
            if stop_after is not None and len(results) >= int(stop_after):
                raise FarmError("stopped after %d tasks (C63_FARM_TEST_STOP_AFTER)" % len(results))
    finally:
        farm.client.cancel(futures)
        progress.finish()
    return [results[job["index"]] for job in jobs]
