"""A step over a cohort: each student's work a unit of its own, on this machine or as Dask tasks.

    for place, outcome in run_step(STEP, places, lambda place: (fn, (args,)), cluster):
        ...  # outcome.value, or outcome.failure: that student's row says why

Each place (a student's index in the step's cohort) gets exactly one ``Outcome``, in the order
units finish. On this machine up to ``workers`` units run at once (threads that only wait on
their unit's process). On a Dask cluster each unit is one task (``autograder.units.dask``: a
worker whose task died is retried once, then that student fails alone), and the unit is forked
inside the worker, so the same limits hold wherever a student is graded.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass

from autograder.units.dask import Cluster, run_tasks
from autograder.units.limits import UnitLimits
from autograder.units.unit import PRELOADS, Outcome, failed, pickled_work, run_pickled_unit, run_unit, unpickled

Work = Callable[[int], tuple[Callable, tuple]]  # place -> (module-level function, picklable args)


def preload(*modules: str) -> None:
    """Add modules for the fork server to import when it starts (a step whose limits are made at run
    time says so when its module is imported)."""
    PRELOADS.update(modules)


@dataclass(frozen=True)
class Step:
    """One step of the grader's pipeline, as its units run."""

    name: str  # as the instructor's log names it: "collect", "grade", "similarity", ...
    limits: UnitLimits  # what each student's unit may use
    preload: tuple[str, ...] = ()  # modules the step's units import, loaded once by the fork server

    def __post_init__(self):
        # the fork server, started by whichever unit comes first, imports every step's
        PRELOADS.update(self.preload)


def run_step(step: Step, places: Sequence[int], work: Work, cluster: Cluster | None = None,
             workers: int = 1) -> Iterator[tuple[int, Outcome]]:
    """Run ``fn(*args)`` for ``fn, args = work(place)`` of every place as a unit; yields (place,
    outcome) as each finishes. A non-serial ``cluster`` runs them as Dask tasks, else ``workers`` at
    a time run here."""
    places = list(places)
    if not places:
        return
    if cluster is not None and not cluster.serial:
        # pickled here, read in the unit: the worker imports none of it
        def task(place: int) -> tuple[Callable, tuple]:
            return run_pickled_unit, (pickled_work(*work(place)), step.limits, step.preload)

        def lost(place: int, why: str) -> Outcome:
            return failed(f"its {step.name} task could not finish on Dask", why)

        for place, outcome in run_tasks(places, task, lost, cluster, step.name):
            yield place, unpickled(outcome)
        return
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix=f"unit-{step.name}") as pool:
        running = {}
        for place in places:
            fn, args = work(place)
            running[pool.submit(run_unit, fn, args, step.limits, step.preload)] = place
        for future in as_completed(running):
            yield running[future], future.result()


def outcomes(step: Step, count: int, work: Work, cluster: Cluster | None = None, workers: int = 1) -> list[Outcome]:
    """Every place's outcome, in place order."""
    found: dict[int, Outcome] = {}
    for place, outcome in run_step(step, range(count), work, cluster, workers):
        found.setdefault(place, outcome)
    return [found[place] for place in range(count)]
