"""A Dask cluster for tests, configured as the grader's own, and a thread that kills its workers (kill -9)."""
from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
import time
from contextlib import contextmanager

KILL_AFTER = 2.0  # seconds a task runs (its confined job under way) before its worker is killed


@contextmanager
def local_cluster(workers: int = 2):
    """A local cluster of ``workers`` single-threaded worker processes, as on a cluster of machines; every file its
    processes (and their jobs, even killed ones) write goes to a folder of its own, removed at the end."""
    from autograder.units.dask import local_cluster as graders_cluster

    scratch = tempfile.mkdtemp(prefix="dask-test-")
    cluster = graders_cluster(workers, scratch, processes=True)  # the grader's own settings, in processes
    try:
        yield cluster
    finally:
        cluster.close()
        shutil.rmtree(scratch, ignore_errors=True)


def _executing(dask_worker) -> tuple[int, list[str]]:
    """In a worker: its process id and the keys of the tasks it runs now (not those queued on it)."""
    return os.getpid(), [str(task.key) for task in dask_worker.state.executing]


def _kill(address: str, deaths: dict[int, int], stop: threading.Event, killed: list[int], after: float) -> None:
    from dask.distributed import Client

    with Client(address) as client:
        seen: dict[tuple[int, str], float] = {}
        while not stop.is_set() and any(deaths.values()):
            try:
                running = client.run(_executing, on_error="ignore")  # a worker just killed does not answer
            except Exception:  # noqa: BLE001 (no worker at all for a moment)
                running = {}
            for pid, keys in running.values():
                for key in keys:
                    place = int(key.split("-")[1])  # the grader's task keys: grade-<cohort place>-<random>
                    if deaths.get(place, 0) > 0 and \
                            time.monotonic() - seen.setdefault((pid, key), time.monotonic()) >= after:
                        os.kill(pid, signal.SIGKILL)
                        deaths[place] -= 1
                        killed.append(place)
            time.sleep(min(0.2, after / 4))


@contextmanager
def killing(address: str, deaths: dict[int, int], after: float = KILL_AFTER):
    """While inside: kill -9 the worker process running the task of cohort place i, ``deaths[i]`` times, each
    ``after`` seconds into the task. Yields the list of places killed, in order."""
    killed: list[int] = []
    stop = threading.Event()
    thread = threading.Thread(target=_kill, args=(address, dict(deaths), stop, killed, after), daemon=True)
    thread.start()
    try:
        yield killed
    finally:
        stop.set()
        thread.join()
