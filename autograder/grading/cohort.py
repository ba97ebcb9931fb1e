"""A cohort graded in parallel on Dask: one task per student, files written by the driver alone.

Each student is one unit of the grade step (``autograder.units``): ``grade.grade_one`` on one
collected submission in a process of its own, with a memory and a time limit, forked in this
process for ``--workers 1`` or inside a Dask worker. It starts the same confined probe and
decode jobs either way, so the sandbox (``autograder.confinement``) applies on every worker,
and a worker that cannot confine refuses just as the command does. A task names the collect
step's copy of its submission by path (never its bytes: the driver's memory stays flat whatever
the submissions weigh), so workers on other machines need the course folder (code, data) at
the same path and the grader's --out folder on a filesystem they share.

Faults (``autograder.units``): a unit that fails in any way (an exception, out of memory, past
its time) makes that student's row "could not be graded"; a student whose worker dies is graded
once more on another worker; a second death or a lost scheduler gives that row too; the reason
goes to the instructor's log, and nobody else's row changes.

Re-runs: each graded student's result is kept in ``OUT/results/<student>.json`` with the
hash of the collected files and of everything else that decides a grade (settings, data,
answers, grader code). A re-run grades again only students whose hashes changed, or all
of them with ``force``. Rows of the grader's own failures are never kept, so a re-run
retries them.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from fnmatch import fnmatch
from pathlib import Path

from autograder.atomic import write_atomically
from autograder.checks import hyperparameters
from autograder.collecting.collect import Collected, Refused
from autograder.grading.grade import grade_one
from autograder.grading.results import (
    PartResult,
    Settings,
    SubmissionResult,
    failed_row,
)
from autograder.units.dask import Cluster
from autograder.units.limits import UnitLimits
from autograder.units.stage import Step, preload, run_step
from course_lib import layout
from course_lib.layout import REPO, SOLUTIONS_DIR

CACHE_DIR = "results"  # in the --out folder: one JSON per graded student
CACHE_FORMAT = 4  # bumped when the cache file's layout changes
# what decides a grade besides the submission: the grader's and course library's code, the bars,
# and the reference synthesizer the decode job loads; a new module counts unless in NOT_GRADING
GRADER_FILES = ("autograder/**/*.py", "autograder/checks/bars.toml", "course_lib/**/*.py")
# no grade depends on these: CLI, nbgrader's side, the student copy, the files written, the driver
NOT_GRADING = ("autograder/__main__.py", "autograder/nbgrader_glue/*", "autograder/release/*",
               "autograder/exports/csv_safe.py",
               "autograder/exports/gradebook.py", "autograder/exports/outputs.py", "autograder/exports/report.py",
               "autograder/exports/similarity*.py",
               "autograder/grading/cohort.py", "autograder/units/*.py", "autograder/grading/folder.py",
               "autograder/grading/one_check.py", "autograder/collecting/flags.py")


@dataclass(frozen=True)
class Task:
    """One student's collected submission as it goes to a worker: by reference, never by content."""

    student: str  # the collect step's student id
    folder: str | None  # the collect step's copy (a path the workers share), or None
    dropped: tuple[str, ...]  # the collect step's reasons for what it left out (instructor's log)
    notes: tuple[tuple[str, str], ...]  # expected file -> why it is missing (grader's words)
    linked: tuple[str, ...]  # copied files that had other hard links
    notices: tuple[str, ...] = ()  # the collect step's lines for the instructor (a renamed copy taken, ...)


@dataclass
class CohortRun:
    """What one grading of a cohort did, for the instructor."""

    results: list[SubmissionResult]  # one per collected student, in the cohort's order
    # folders whose names cannot be student ids
    refused: list[Refused] = field(default_factory=list)
    graded: int = 0  # students graded in this run
    reused: int = 0  # students whose kept result was still valid (unchanged files and settings)
    # students the grader itself could not grade (not kept)
    failed: list[str] = field(default_factory=list)


UNIT_MEMORY_MB = 3072  # the grader's code, torch, the decoded answers (jobs have their own caps)
UNIT_MARGIN_SECONDS = 120  # beyond the student's job budget: loading, judging, decoding the answers
# imported once in the fork server, torch._dynamo too (the first optimizer imports it); registered
# at import so the command's fork server, started by collect, has them (Dask workers: the step's)
GRADE_PRELOAD = ("autograder.grading.cohort", "autograder.grading.grade", "torch._dynamo")
preload(*GRADE_PRELOAD)


def grade_step(settings: Settings) -> Step:
    """The grade step's units: one student each, within their time budget and a memory cap."""
    return Step("grade", UnitLimits(seconds=settings.student_seconds + UNIT_MARGIN_SECONDS, memory_mb=UNIT_MEMORY_MB),
                preload=GRADE_PRELOAD)


def task_for(collected: Collected) -> Task:
    """The task that names ``collected`` for a worker."""
    return Task(collected.student, str(collected.folder) if collected.folder else None, tuple(collected.dropped),
                tuple(sorted(collected.notes.items())), tuple(collected.linked), tuple(collected.notices))


def run_task(task: Task, settings: Settings, gold: dict) -> SubmissionResult:
    """In the student's unit: grade the collect step's copy where it lies."""
    collected = Collected(task.student, Path(task.folder) if task.folder else None, list(task.dropped),
                          dict(task.notes), linked=list(task.linked), notices=list(task.notices))
    return grade_one(collected, settings, gold)


def content_hash(collected: Collected) -> str:
    """What the student handed in, as collected: file names and bytes, and what was left out."""
    return hashlib.sha256(json.dumps([collected.student, collected.folder is not None, collected.dropped,
                                      sorted(collected.notes.items()), collected.prints.digest]).encode()).hexdigest()


def settings_hash(settings: Settings) -> str:
    """All else that decides a grade: settings, data, answers, grader code."""
    digest = hashlib.sha256()
    fields = {k: v for k, v in asdict(settings).items() if k not in ("data_dir", "answers")}
    digest.update(json.dumps(fields, sort_keys=True, default=str).encode())
    files = [settings.data_dir / layout.WIKI, settings.data_dir / layout.DEV, settings.answers,
             SOLUTIONS_DIR / "05_synthesizer.ipynb"]
    files += sorted(p for pattern in GRADER_FILES for p in REPO.glob(pattern) if "__pycache__" not in p.parts
                    and not any(fnmatch(p.relative_to(REPO).as_posix(), skip) for skip in NOT_GRADING))
    for path in files:
        digest.update(f"\0{path.name}\0".encode() + path.read_bytes())
    return digest.hexdigest()


def _cache_path(out: Path, student: str) -> Path:
    """Where a student's kept result lives."""
    return out / CACHE_DIR / f"{student}.json"  # collect accepted the id: one plain path component


def _load(path: Path, content: str, grading: str) -> SubmissionResult | None:
    """The kept result when it is for these very files and settings, else None."""
    if not path.is_file():
        return None
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        if (kept.get("format"), kept.get("content"), kept.get("settings")) != (CACHE_FORMAT, content, grading):
            return None
        parts = [PartResult(p["part"], float(p["points"]), float(p["max_points"]), str(p["reason"]))
                 for p in kept["parts"]]
        return SubmissionResult(kept["student"], parts, [*kept["log"], "(kept from an earlier grading: unchanged)"],
                                seed=kept.get("seed"), accuracies=dict(kept.get("accuracies", {})),
                                above_ceiling=[str(s) for s in kept.get("above_ceiling", [])],
                                hyperparameters=_kept_hyperparameters(kept.get("hyperparameters")))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # an unreadable kept result is graded again


def _kept_hyperparameters(kept) -> dict[str, dict]:
    """The kept hyperparameters through the filter they were read with (JSON made betas a list)."""
    if not isinstance(kept, dict):
        return {}
    return {stage: hyperparameters.of_stage(fields)[0] for stage, fields in kept.items()
            if stage in hyperparameters.STAGES.values()}


def _keep(path: Path, result: SubmissionResult, content: str, grading: str) -> None:
    """Keep a graded result for re-runs (never a row of the grader's own failure)."""
    if not result.graded:
        return
    record = {"format": CACHE_FORMAT, "content": content, "settings": grading, "student": result.student,
              "seed": result.seed, "accuracies": result.accuracies, "above_ceiling": result.above_ceiling,
              "hyperparameters": result.hyperparameters,
              "parts": [asdict(p) for p in result.parts],
              "log": result.log}
    write_atomically(path, json.dumps(record))  # never half a file, even if the driver dies here


def grade_cohort(collected: list[Collected], settings: Settings, gold: dict, out: Path, cluster: Cluster,
                 force: bool = False, progress: bool = True) -> CohortRun:
    """Grade every collected student (or reuse a still-valid kept result); a row each, in order."""
    from tqdm.auto import tqdm

    grading = settings_hash(settings)
    results: dict[int, SubmissionResult] = {}
    todo: list[tuple[int, str]] = []
    run = CohortRun([])
    for index, item in enumerate(collected):
        content = content_hash(item)
        kept = None if force else _load(_cache_path(out, item.student), content, grading)
        if kept is not None:
            results[index] = kept
            run.reused += 1
        else:
            todo.append((index, content))
    with tqdm(total=len(collected), initial=run.reused, desc="grading", unit="submission",
              disable=not progress) as bar:
        finished = run_step(grade_step(settings), [index for index, _ in todo],
                            lambda index: (run_task, (task_for(collected[index]), settings, gold)), cluster)
        contents = dict(todo)
        for index, outcome in finished:
            if index in results:  # never two rows for one student, whatever the cluster did
                continue
            failure = f"the grade step's unit failed: {outcome.failure}\n{outcome.detail}"
            result = outcome.value if outcome.ok else failed_row(collected[index].student, settings, failure)
            results[index] = result
            _keep(_cache_path(out, result.student), result, contents[index], grading)
            run.graded += 1
            if not result.graded:
                run.failed.append(result.student)
            bar.update()
    run.results = [results[i] for i in range(len(collected))]
    return run
