"""The collect step over a whole ``submitted/`` folder: each student's copy made in its own unit.

``collect.collect_at`` makes one student's copy; this module runs it for every folder whose name can
be a student id (``student_ids``), each in a unit (``autograder.units``), and refuses the other
names by name.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from autograder.collecting.collect import (
    Cohort,
    Collected,
    Limits,
    Refused,
    Wanted,
    check_assignment,
    collect_at,
    not_collected,
    wanted_for,
)
from autograder.collecting.prints import prints_of
from autograder.collecting.safe_files import shown
from autograder.collecting.student_ids import id_problem
from autograder.units.limits import UnitLimits
from autograder.units.stage import Step, outcomes

# a collect lists <= 2,000 entries a folder and copies <= 200 MB, running no student code, so its
# memory is the listing's and the prints'; the fork server preloads torch for the params' sketches
COLLECT = Step("collect", UnitLimits(seconds=120, memory_mb=1024), preload=("autograder.collecting.cohort", "torch"))


def collect_one(submitted: str, name: str, assignment: str, dest: str, limits: Limits, wanted: Wanted) -> Collected:
    """In the student's own unit: the sanitised copy of ``submitted/<name>`` and its prints."""
    parent = os.open(submitted, os.O_RDONLY | os.O_DIRECTORY)
    try:
        collected = collect_at(parent, name, name, assignment, Path(dest), limits, wanted)
    finally:
        os.close(parent)
    collected.prints = prints_of(collected.folder)
    return collected


def collect_cohort(submitted: Path, assignment: str, dest: Path, limits: Limits = Limits(),
                   wanted: Wanted | None = None, only: Iterable[str] | None = None,
                   workers: int = len(os.sched_getaffinity(0))) -> Cohort:
    """One Collected per usable student id in ``submitted/`` (sorted), every other name refused with
    its reason; each student is collected in a unit of its own (``autograder.units``), so one
    student's files (unreadable, vanishing, nested too deeply to fingerprint) make that student's
    reasons, never stop the rest. ``only`` restricts it to those ids. ``dest`` must be absent or
    empty (FileExistsError otherwise), so no copy mixes with an old one."""
    check_assignment(assignment)
    wanted = wanted or wanted_for(assignment)
    dest = Path(dest)
    if dest.is_dir() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty")
    only = set(only) if only is not None else None
    with os.scandir(submitted) as entries:
        names = sorted(entry.name for entry in entries if only is None or entry.name in only)
    cohort = Cohort([], [])
    students = []
    for name in names:
        problem = id_problem(name)
        if problem:  # every name of submitted/ is a student or a refusal, a hidden one included
            cohort.refused.append(Refused(shown(name), problem))
        else:
            students.append(name)
    dest.mkdir(parents=True, exist_ok=True)
    done = outcomes(COLLECT, len(students), lambda i: (collect_one, (str(submitted), students[i], assignment,
                                                                       str(dest), limits, wanted)), workers=workers)
    for name, outcome in zip(students, done):
        if outcome.ok:
            cohort.students.append(outcome.value)
            continue
        shutil.rmtree(dest / name, ignore_errors=True)  # whatever the unit copied before it failed
        why = f"the submission could not be collected: {outcome.failure}"
        cohort.students.append(not_collected(name, why))
    return cohort
