"""Tasks on a Dask cluster whose scheduler goes away mid-cohort: every student still gets exactly one result."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.units.dask import Cluster, run_tasks

START_SECONDS = 120  # for the scheduler and its workers to come up on a busy machine


def _start(argv: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", *argv], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


@pytest.fixture
def scheduler(tmp_path):
    """A Dask scheduler and two single-threaded workers in processes of their own, as on a real cluster."""
    address_file = tmp_path / "scheduler.json"
    server = _start(["distributed.cli.dask_scheduler", "--scheduler-file", str(address_file), "--port", "0",
                     "--no-dashboard"], tmp_path)
    deadline = time.monotonic() + START_SECONDS
    while not address_file.is_file() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert address_file.is_file(), "the scheduler did not start"
    time.sleep(0.5)  # the file is written before the scheduler listens
    address = json.loads(address_file.read_text())["address"]
    workers = _start(["distributed.cli.dask_worker", address, "--nthreads", "1", "--nworkers", "2",
                      "--no-dashboard"], tmp_path)
    yield server, address
    for process in (workers, server):
        process.kill()
        process.wait()


def test_a_lost_scheduler_leaves_no_student_without_a_result(scheduler):
    """When the scheduler dies after two students finished, do those keep their results and every other student
    get exactly one failure result naming the lost scheduler?"""
    server, address = scheduler
    quick = {0, 1}  # places whose task ends at once; the others would take a minute
    results: dict[int, object] = {}
    for place, result in run_tasks(list(range(6)), lambda p: (time.sleep, (0.2 if p in quick else 60,)),
                                   lambda p, why: ("failed", why), Cluster(2, address), "t"):
        assert place not in results, f"place {place} got two results"
        results[place] = result
        if set(results) == quick:
            server.kill()
    assert sorted(results) == list(range(6))
    assert all(results[p] is None for p in quick)
    for place in set(results) - quick:
        assert results[place][0] == "failed" and "scheduler was lost" in results[place][1], results[place]


def test_one_worker_without_a_scheduler_is_serial():
    """Does --workers 1 (and no scheduler) grade in this process, and anything else on Dask?"""
    assert Cluster(1).serial and not Cluster(2).serial and not Cluster(1, "tcp://host:8786").serial


def test_a_worker_imports_nothing_of_the_step_only_its_units_do():
    """On a Dask cluster of worker processes, does each unit import the step's modules (torch here) while the worker
    that asks for it never does (it hands the work and the value on as bytes)?"""
    import dask_faults
    import torch_work

    from autograder.units.limits import UnitLimits
    from autograder.units.stage import Step, outcomes

    # (the fork server cannot preload a module of the tests folder: each unit imports torch, within this limit)
    step = Step("maps", UnitLimits(seconds=120, memory_mb=3072))
    with dask_faults.local_cluster(workers=2) as cluster:
        found = outcomes(step, 2, lambda _: (torch_work.maps_torch, ()), Cluster(2, cluster.scheduler_address))
    assert all(o.ok for o in found), [o.failure for o in found]
    assert [o.value for o in found] == [(True, False)] * 2
