"""The score of record for one student: the checks (``code_parts``), then the runs (``run_parts``).

After the collect step has copied only the assignment's files (``autograder.collecting``),
one confined *probe* job runs every check's probe on inputs drawn from this grading's seed
(recorded in the result, so ``--seed`` replays it) and each output is judged here. Before any
student code runs there, the *decode*, a child of the same job with no student code, answers
the questions with each run part's params (``autograder.inside.decode_first``). All of one
student's jobs share a time budget. One student's failure of any kind is
that student's row with reasons from a fixed vocabulary; the full story goes to the
instructor's log.
"""
from __future__ import annotations

import random
import traceback

from autograder.checks import registry
from autograder.checks.run_files import RUN_CELLS
from autograder.collecting.collect import Collected
from autograder.exports import reasons
from autograder.grading.code_parts import grade_code
from autograder.grading.plausibility import above_ceiling
from autograder.grading.results import (
    Budget,
    PartResult,
    Settings,
    SubmissionResult,
    failed_row,
)
from autograder.grading.run_parts import NOT_RUN, decode_first, gold_questions, grade_runs
from course_lib import layout
from course_lib.data_files import read_birth_places


def grade_submission(collected: Collected, settings: Settings, gold: dict, seed: int | None = None) -> SubmissionResult:
    """Both halves for one collected submission; every failure becomes reasons in its own row."""
    seed = seed if seed is not None else settings.seed if settings.seed is not None \
        else random.SystemRandom().randrange(2 ** 63)
    result = SubmissionResult(collected.student, log=[f"grading seed: {seed}"], seed=seed)
    result.log += [f"left out by the collect step: {d}" for d in collected.dropped]
    result.log += [f"copied by content, had other hard links: {name}" for name in collected.linked]
    result.log += [f"the collect step: {notice}" for notice in collected.notices]
    budget = Budget(settings.student_seconds)
    notebooks = sorted(collected.folder.glob("*.ipynb")) if collected.folder else []
    # the params are decoded first in the probe job's sandbox: one Python and torch for both
    first = decode_first(collected.folder, settings, gold_questions(gold)) if notebooks else None
    if not notebooks:
        result.parts = [PartResult(c.grade_id, 0.0, c.points,
                                   "no notebooks in the submission") for c in registry.CHECKS]
    else:
        result.parts = grade_code(notebooks, settings, result.log, seed, budget, result.hyperparameters, first)
    if collected.folder is None:
        result.parts += [PartResult(f"{b.part}/{b.split}", 0.0, b.points, "no submission folder")
                         for b in settings.bars]
    else:
        if first is not None:  # decoded first in the probe job
            decoded = first.result
        else:  # no params handed in (None), or no probe job to decode in: a decode job of its own
            decoded = None if notebooks else NOT_RUN
        result.parts += grade_runs(collected.folder, settings, result.parts, gold, result.log, budget,
                                   collected.notes, result.accuracies, decoded)
        result.above_ceiling = above_ceiling(result.accuracies, settings.bars)
        result.log += [f"{split}: {100 * result.accuracies[split]:.1f}% is above what the course's code reaches "
                       "with this preset (bars.toml's ceiling): flagged, audited first"
                       for split in result.above_ceiling]
    result.parts = said_about_notebooks(result.parts, {p.name for p in notebooks}, collected.notes)
    return result


def said_about_notebooks(parts: list[PartResult], present: set[str], notes: dict[str, str]) -> list[PartResult]:
    """Every part a notebook holds (its checks, and the run splits whose points its run cells hold) says what the
    collect step said of that notebook: "05_synthesizer.ipynb was not handed in" (and why, when it knows) when it is
    not in the copy; the collect step's note when it is (a renamed copy taken in its place). Names only the
    assignment's own notebooks."""
    holder = _holders()
    said = []
    for part in parts:
        notebook = holder.get(part.part)
        if notebook is not None and notebook not in present:
            why = f"{notebook} was not handed in" + (f": {notes[notebook]}" if notebook in notes else "")
            part = PartResult(part.part, 0.0, part.max_points, reasons.bounded(why))
        elif notebook in notes:
            part = PartResult(part.part, part.points, part.max_points,
                              reasons.bounded(f"{part.reason} ({notebook} {notes[notebook]})"))
        said.append(part)
    return said


def grade_one(collected: Collected, settings: Settings, gold: dict) -> SubmissionResult:
    """One student's whole grading as a self-contained task (here or on a Dask worker)."""
    try:
        return grade_submission(collected, settings, gold)
    except Exception:  # the grader's own fault on one submission stays in that row
        return failed_row(collected.student, settings, traceback.format_exc())


def load_gold(settings: Settings) -> dict:
    """The dev and test questions with their answers, read once by the driver."""
    return {"dev": read_birth_places(settings.data_dir / layout.DEV, require_answers=True),
            "test": read_birth_places(settings.answers, require_answers=True)}


def _holders() -> dict[str, str]:
    """Each graded part (a check's grade_id, a run split) -> the notebook file that holds its cell."""
    holder = {c.grade_id: f"{c.notebook}.ipynb" for c in registry.CHECKS}
    holder.update({label: f"{notebook}.ipynb" for label, (notebook, _) in RUN_CELLS.items()})
    return holder


def released_parts(parts: list[PartResult], released: frozenset[str]) -> list[PartResult]:
    """The parts whose notebook the course released (``released``: its file names; empty: every part): a course
    that gives out only some of the notebooks grades out of their points, not the whole assignment's."""
    holder = _holders()
    return [p for p in parts if not released or holder.get(p.part) is None or holder[p.part] in released]
