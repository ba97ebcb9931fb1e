"""A cohort's grading from the command line: collect, grade (``cohort``), audit, write the files."""
from __future__ import annotations

import shutil
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.collecting.cohort import collect_cohort
from autograder.collecting.collect import wanted_for
from autograder.collecting.flags import cohort_flags
from autograder.collecting.near_copies import gold_hashes
from autograder.exports.gradebook import NOT_IN_GRADEBOOK
from autograder.exports.outputs import write_outputs
from autograder.exports.step_summary import Problem
from autograder.grading.cohort import CohortRun, grade_cohort
from autograder.grading.grade import load_gold, released_parts
from autograder.grading.plausibility import ceiling_flags
from autograder.grading.results import Settings, SubmissionResult
from autograder.units.dask import Cluster

if TYPE_CHECKING:
    from autograder.grading.audit import AuditSettings


@dataclass
class FolderRun(CohortRun):
    """A cohort's grading, with what the collect step noted of each student."""

    # student -> the collect step's notes for the instructor (a renamed copy taken, a notebook missing, ...)
    notices: dict[str, list[str]] = field(default_factory=dict)


def grade_folder(submitted: Path, assignment: str, out: Path, settings: Settings, gradescope: bool = False,
                 progress: bool = True, cluster: Cluster | None = None, force: bool = False,
                 only: list[str] | None = None, audit: AuditSettings | None = None) -> FolderRun:
    """Collect, grade every student (on Dask when ``cluster`` says so; unchanged students kept
    from an earlier run unless ``force``), and write grades.csv, reasons.json, flags.csv and
    the instructor's log.

    The collect step's copies go into a folder of ``out`` (removed at the end): tasks name it, so
    workers on other machines need ``out`` on a shared filesystem. ``only`` grades just those
    students (the files then cover them alone). ``audit`` retrains sampled students' runs
    (``autograder.grading.audit``)."""
    gold = load_gold(settings)
    out.mkdir(parents=True, exist_ok=True)
    staging = out / f".collected-{uuid.uuid4().hex[:8]}"
    try:
        wanted = wanted_for(assignment, course=submitted.parent)
        cohort = collect_cohort(submitted, assignment, staging, only=only, wanted=wanted)
        for refused in cohort.refused:  # said before any grading starts; these folders get no row
            print(f"refused: submitted/{refused.shown!r} cannot be a student id: {refused.why}", file=sys.stderr)
        flags = cohort_flags(cohort.students, assignment, gold=gold_hashes(gold))
        cluster = cluster or Cluster(workers=1)
        run = grade_cohort(cohort.students, settings, gold, out, cluster, force, progress)
        for result in run.results:  # out of the released notebooks' points only
            result.parts = released_parts(result.parts, wanted.notebooks)
        flags += ceiling_flags(run.results, settings.bars, settings.preset)
        if audit is not None:
            from autograder.grading.audit import run_audits

            flags += run_audits(cohort.students, run.results, settings, gold, audit, cluster, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    run.refused = cohort.refused
    write_outputs(run.results, flags, cohort.refused, out, gradescope)
    # (the collect step's notices, when it keeps them)
    return FolderRun(**vars(run), notices={c.student: list(getattr(c, "notices", [])) for c in cohort.students})


def grade_problems(run: FolderRun, gradebook_notes: list[str] = (), late=()) -> list[Problem]:
    """What ``autograder grade``'s summary says: folders refused, students the grader could not grade,
    the collect step's notices, a trusted score the gradebook could not take, late work and its penalty."""
    problems = [Problem(f"submitted/{r.shown}", f"refused: cannot be a student id: {r.why}", act=True)
                for r in run.refused]
    failed = set(run.failed)
    students = {r.student for r in run.results}
    for r in run.results:
        problems += [Problem(r.student, notice) for notice in run.notices.get(r.student, [])]
        if r.student in failed:
            problems.append(Problem(r.student, "the grader could not grade it (instructor_log.txt); graded again "
                                               "on the next run", act=True))
    absent = [note for note in gradebook_notes if NOT_IN_GRADEBOOK in note]
    for note in (n for n in gradebook_notes if n not in absent):  # a trusted score the gradebook lacks
        student, _, why = note.partition(": ")
        problems.append(Problem(student, f"gradebook: {why}", act=True) if student in students
                        else Problem("gradebook", note, act=True))
    if absent:  # the course's gradebook has fewer notebooks than the grader checks (a course of its own)
        problems.append(Problem("gradebook", f"{len(absent)} trusted score(s) for cells this course's gradebook "
                                             "does not have, not written (e.g. " + absent[0] + ")"))
    problems += [Problem(x.student, x.line()) for x in late]
    return problems


def summary_table(results: list[SubmissionResult]) -> str:
    """A table for the terminal: each student's score and first problem."""
    from autograder.collecting.safe_files import shown

    lines = [f"{'student':<20}{'score':>10}{'of':>8}  first problem"]
    for r in results:
        problem = next((p for p in r.parts if p.points < p.max_points), None)
        note = f"{problem.part}: {problem.reason}"[:70] if problem else "full marks"
        lines.append(f"{shown(r.student):<20}{r.score:>10g}{r.max_score:>8g}  {note}")
    return "\n".join(lines)
