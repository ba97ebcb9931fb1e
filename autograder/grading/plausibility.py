"""Runs above what the course's code reaches: flagged without retraining, and audited first.

The audit retrains a sample of students; a model finetuned on the test questions in an
unsampled submission would keep its points unseen. But no run of the course's code gets far
above the reference's best score at the graded preset: each bar in ``bars.toml`` carries a
``*_ceiling``, that best over the seeds measured plus the reference's seed-to-seed spread (the
audit's tolerance). A split whose handed-in params (as the grader decoded them) score above its
ceiling is recorded in the student's result (``above_ceiling``, computed in the student's grade
unit), listed in ``flags.csv`` with both numbers, and taken first by the audit's sampler
(``audit.sample``). Flags never change a score.
"""
from __future__ import annotations

from collections.abc import Iterable

from autograder.checks.bars import Bar
from autograder.collecting.flags import Flag
from autograder.grading.results import SubmissionResult

COURSE_REACH = "(the course's reach)"  # the other party of a run above the ceiling


def above_ceiling(accuracies: dict[str, float], bars: Iterable[Bar]) -> list[str]:
    """The run splits ("<part>/<split>") whose handed-in accuracy is above their bar's ceiling."""
    return [f"{b.part}/{b.split}" for b in bars
            if f"{b.part}/{b.split}" in accuracies and b.above_ceiling(accuracies[f"{b.part}/{b.split}"])]


def ceiling_flags(results: list[SubmissionResult], bars: Iterable[Bar], preset: str) -> list[Flag]:
    """One flag per split above its ceiling, for every graded student (audited or not)."""
    ceilings = {f"{b.part}/{b.split}": b.ceiling for b in bars}
    return [Flag(split, r.student, COURSE_REACH,
                 f"handed-in params reach {100 * r.accuracies[split]:.1f}%, above the {100 * ceilings[split]:.1f}% "
                 f"the course's code reaches with the {preset} preset (the reference's best over seeds plus its "
                 "seed-to-seed spread): audit it")
            for r in results for split in r.above_ceiling if split in r.accuracies and ceilings.get(split) is not None]
