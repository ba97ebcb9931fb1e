"""What a grading produces and how it runs: parts, a student's row, settings, the time budget."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.checks import registry
from autograder.checks.bars import Bar, load_bars
from autograder.confinement import Limits

OUT_OF_TIME = "the grader's time for your submission ran out before this part was graded"


@dataclass
class PartResult:
    """One graded part of one submission: a check (its grade_id) or a run part's split."""

    part: str  # grade_id, or "<run part>/<split>"
    points: float  # awarded
    max_points: float  # available
    reason: str  # what the student reads: grader-written words only, at most reasons.MAX_CHARS


@dataclass
class SubmissionResult:
    """One student's row: every part's points and reason, and the instructor's log."""

    student: str  # the collect step's student id
    parts: list[PartResult] = field(default_factory=list)  # every check, then every run split
    # for the instructor only: job logs, tracebacks, dropped files
    log: list[str] = field(default_factory=list)
    graded: bool = True  # False if the grader itself failed: never kept, so a re-run regrades
    seed: int | None = None  # the grading seed of its fresh inputs: --seed replays this grading
    # run split -> accuracy of the handed-in params
    accuracies: dict[str, float] = field(default_factory=dict)
    # run splits above what the course's code reaches
    above_ceiling: list[str] = field(default_factory=list)
    # training stage -> the glue's hyperparameters (autograder.checks.hyperparameters), for audits
    hyperparameters: dict[str, dict] = field(default_factory=dict)

    @property
    def score(self) -> float:
        """Points awarded, all parts."""
        return sum(p.points for p in self.parts)

    @property
    def max_score(self) -> float:
        """Points available, all parts."""
        return sum(p.max_points for p in self.parts)


@dataclass(frozen=True)
class Settings:
    """How a cohort is graded."""

    data_dir: Path  # wiki.txt and birth_dev.tsv as the students had them
    answers: Path  # the grader-only test answers
    bars: tuple[Bar, ...]  # pass bars of the run parts
    preset: str  # the preset the students trained with (the model shape to decode with)
    timeout: float = 600  # seconds per confined job
    student_seconds: float = 900  # seconds of all of one student's jobs together
    cell_seconds: float = 120  # seconds per notebook cell while the probe job loads the notebooks (nbgrader's)
    limits: Limits = Limits()  # memory, scratch, processes per job
    confined: bool = True  # False only when the instructor accepted grading without confinement
    seed: int | None = None  # every student's grading seed (None: a fresh one each, recorded)


class Budget:
    """One student's wall time: each job gets the lesser of its own limit and what is left."""

    def __init__(self, seconds: float):
        self.deadline = time.monotonic() + seconds

    def job_timeout(self, job_limit: float) -> float:
        """Seconds the next job may take."""
        return max(0.0, min(job_limit, self.deadline - time.monotonic()))


def failed_row(student: str, settings: Settings, log: str) -> SubmissionResult:
    """The row of a submission the grader could not grade: zero everywhere, the story in the log."""
    why = "the grader could not grade this submission; your instructor has the details"
    parts = [PartResult(c.grade_id, 0.0, c.points, why) for c in registry.CHECKS]
    parts += [PartResult(f"{b.part}/{b.split}", 0.0, b.points, why) for b in settings.bars]
    return SubmissionResult(student, parts, [log], graded=False)


def settings_for(data_dir: Path, answers: Path, dataset: str, preset: str, **kwargs) -> Settings:
    """Settings with the bars of ``dataset`` at ``preset``."""
    return Settings(Path(data_dir), Path(answers), tuple(load_bars(dataset, preset)), preset, **kwargs)
