"""One task per student on Dask distributed, with the grader's fault rules: how steps' units travel.

The driver keeps every worker thread busy with one student, never more (a task queued behind
another on a worker would be charged with that worker's death too). A task whose worker dies
(kill -9, out of memory) is run again once on another worker: the driver resubmits it, with
Dask's own retry off (``allowed-failures`` 0), since Dask's retry also blames students merely
queued on that worker. A second death, a lost scheduler or any other error gives that student
a failure result (``failed(index, why)``): every student gets exactly one result, keyed by its
place in the cohort, whatever order or how often tasks finish.

Task keys are ``<kind>-<place>-<random>``, so a test (tests/dask_faults.py) can kill the
worker running a given student.
"""
from __future__ import annotations

import logging
import tempfile
import time
import traceback
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

Result = TypeVar("Result")
RETRIES = 1  # a student whose worker died under it is run once more, then marked
POLL_SECONDS = 1.0  # how often the driver looks for free workers (restarted or newly joined)
# a local worker process (``processes``): past this Dask restarts it, and its student is retried
WORKER_MEMORY_MB = 2048


@dataclass(frozen=True)
class Cluster:
    """Where the students' tasks run."""

    # students graded at once here (``local_cluster``: worker threads, each waiting on a unit);
    # 1 runs the units from this process without Dask, one student after another
    workers: int
    scheduler: str | None = None  # an existing scheduler (tcp://host:8786), making workers moot

    @property
    def serial(self) -> bool:
        """Whether the units run from this process, one after another, without Dask."""
        return self.workers <= 1 and not self.scheduler


def local_cluster(workers: int, scratch: str, processes: bool = False):
    """The grader's local Dask cluster: ``workers`` single-threaded workers, the driver (not the
    scheduler) retrying a task whose worker died, and every file its servers write in ``scratch``.

    The grading commands' own (``--workers N``) are threads of the command: a worker only waits on
    its student's unit, a process forked from the command's one fork server with the unit's own
    limits, so a worker process each would only start and preload another fork server for nothing.
    ``processes`` makes them processes of ``WORKER_MEMORY_MB`` each, whose jobs write in ``scratch``
    too, as on a cluster of machines (where a worker can die: tests/dask_faults.py kills them)."""
    import dask
    from dask.distributed import LocalCluster

    memory = {"memory_limit": WORKER_MEMORY_MB * 2 ** 20, "env": {"TMPDIR": scratch}} if processes else \
        {"memory_limit": 0}  # a thread's limit would be the whole command's; each unit has its own
    # allowed-failures, read as the scheduler starts: 0, so Dask never retries (module docstring)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0, "temporary-directory": scratch}):
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes, dashboard_address=None,
                            local_directory=scratch, silence_logs=logging.ERROR, **memory)


def run_tasks(places: list[int], task: Callable[[int], tuple[Callable, tuple]], failed: Callable[[int, str], Result],
              cluster: Cluster, kind: str) -> Iterator[tuple[int, Result]]:
    """Run ``fn(*args)`` for ``fn, args = task(place)`` of every place on a Dask cluster (a local
    one unless a scheduler is named); yields (place, result) as they finish. ``task`` is called only
    when a worker is free, so a bounded number of submissions are held in memory at once."""
    from dask.distributed import Client

    if not places:
        return
    with tempfile.TemporaryDirectory(prefix="grader-dask-") as scratch:
        local = None
        if cluster.scheduler:
            client = Client(cluster.scheduler)
        else:
            local = local_cluster(cluster.workers, scratch)
            client = Client(local)
        try:
            yield from _drive(client, places, task, failed, kind)
        finally:
            client.close()
            if local is not None:
                local.close()


def _drive(client, places, task, failed, kind) -> Iterator[tuple[int, Result]]:
    from dask.distributed import wait
    from distributed.scheduler import KilledWorker

    waiting = deque(places)
    running: dict = {}  # future -> cohort place
    deaths: dict[int, int] = {}  # cohort place -> workers that died under its task
    try:
        while waiting or running:
            free = sum(client.nthreads().values()) - len(running)
            while free > 0 and waiting:
                place = waiting.popleft()
                fn, args = task(place)
                future = client.submit(fn, *args, pure=False, key=f"{kind}-{place}-{uuid.uuid4().hex[:8]}")
                running[future] = place
                free -= 1
            if not running:
                # no worker yet (starting, restarting, or still queued on a batch system)
                time.sleep(POLL_SECONDS)
                continue
            try:
                done, _ = wait(list(running), timeout=POLL_SECONDS, return_when="FIRST_COMPLETED")
            except TimeoutError:  # none finished: look for free workers again
                continue
            for future in done:
                place = running.pop(future)
                try:
                    result = future.result()
                except KilledWorker as err:
                    deaths[place] = deaths.get(place, 0) + 1
                    if deaths[place] <= RETRIES:
                        waiting.appendleft(place)
                        continue
                    result = failed(place, f"the task's worker died {deaths[place]} times ({type(err).__name__}: "
                                           f"{err})")
                except Exception as err:  # noqa: BLE001 (a lost scheduler...: that result says so)
                    result = failed(place, f"the task did not finish ({type(err).__name__}: {err})\n"
                                           f"{traceback.format_exc()[-2000:]}")
                finally:
                    future.release()
                yield place, result
    except Exception as err:  # noqa: BLE001 (the scheduler is gone: the students left fail)
        why = f"the Dask scheduler was lost ({type(err).__name__}: {err})"
        for place in [*running.values(), *waiting]:
            yield place, failed(place, why)
