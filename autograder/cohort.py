"""A cohort graded in parallel on Dask distributed: one task per student, files written by the driver alone.

Each task is ``grade.grade_one`` on one collected submission, run in a Dask worker
process: it starts the same confined probe and decode jobs a serial grading starts, so
the sandbox (``autograder.confinement``) applies on every worker, and a worker that
cannot confine refuses just as the command does. The submission travels to the worker
as bytes (the collect step's copy), so workers on other machines need no shared disk
for submissions; they need the course folder (code, data) at the same path.

Faults: a task whose worker dies (kill -9, out of memory) is run again once on another
worker (the driver resubmits it: Dask's own retry would also blame students merely queued on
that worker); a second death, a lost scheduler or any other
error makes that student's row "could not be graded", with the reason in the instructor's
log. Every student gets exactly one row: results are keyed by the student's place in the
cohort, whatever order or how often tasks finish.

Re-runs: each graded student's result is kept in ``OUT/results/<student>.json`` with the
hash of the collected files and of everything else that decides a grade (settings, data,
answers, grader code). A re-run grades again only students whose hashes changed, or all
of them with ``force``. Rows of the grader's own failures are never kept, so a re-run
retries them.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
import traceback
import uuid
from collections import deque
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from course_lib import layout
from course_lib.layout import REPO

from .collect import Collected, is_safe_name
from .grade import PartResult, Settings, SubmissionResult, failed_row, grade_one
from .judges import SOLUTIONS

CACHE_DIR = "results"  # in the --out folder: one JSON per graded student
CACHE_FORMAT = 1  # bumped when the cache file's layout changes
RETRIES = 1  # a student whose worker died under it is graded once more, then marked
POLL_SECONDS = 1.0  # how often the driver looks for free workers (a restarted one, a new one joining)
# what decides a grade besides the submission: the grader's and the course library's code, the bars,
# and the reference synthesizer the decode job loads; a new module counts unless named as not grading
GRADER_FILES = ("autograder/**/*.py", "autograder/bars.toml", "course_lib/**/*.py")
NOT_GRADING = {"__main__.py", "cohort.py", "bundle.py", "gradebook_sync.py", "kernel.py", "nbgrader_report.py",
               "nbgrader_setup.py", "similarity.py", "similarity_files.py"}  # autograder modules no grade depends on


@dataclass(frozen=True)
class Cluster:
    """Where the students' tasks run."""

    workers: int  # local Dask worker processes; 1 grades in this process, one student after another
    scheduler: str | None = None  # address of an existing Dask scheduler (tcp://host:8786); workers is then unused


@dataclass(frozen=True)
class Task:
    """One student's collected submission as it travels to a worker."""

    student: str  # the collect step's student id
    files: tuple[tuple[str, bytes], ...]  # (path relative to the collected folder, content)
    has_folder: bool  # False when the collect step found nothing usable
    dropped: tuple[str, ...]  # the collect step's reasons for what it left out


@dataclass
class CohortRun:
    """What one grading of a cohort did, for the instructor."""

    results: list[SubmissionResult]  # one per collected student, in the cohort's order
    graded: int = 0  # students graded in this run
    reused: int = 0  # students whose kept result was still valid (unchanged files and settings)
    failed: list[str] = field(default_factory=list)  # students the grader itself could not grade (not kept)


def _files(collected: Collected) -> list[tuple[str, Path]]:
    if collected.folder is None:
        return []
    return sorted((p.relative_to(collected.folder).as_posix(), p) for p in collected.folder.rglob("*") if p.is_file())


def task_for(collected: Collected) -> Task:
    return Task(collected.student, tuple((name, path.read_bytes()) for name, path in _files(collected)),
                collected.folder is not None, tuple(collected.dropped))


def run_task(task: Task, settings: Settings, gold: dict) -> SubmissionResult:
    """In a worker: lay the submission out in a private folder, grade it there, remove the folder."""
    with tempfile.TemporaryDirectory(prefix="grader-task-") as tmp:
        folder = None
        if task.has_folder:
            folder = Path(tmp) / task.student
            folder.mkdir()
            for name, content in task.files:
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                (folder / name).write_bytes(content)
        return grade_one(Collected(task.student, folder, list(task.dropped)), settings, gold)


def content_hash(collected: Collected) -> str:
    """What the student handed in, as collected: file names and bytes, and what was left out."""
    digest = hashlib.sha256(json.dumps([collected.student, collected.folder is not None, collected.dropped]).encode())
    for name, path in _files(collected):
        digest.update(f"\0{name}\0{path.stat().st_size}\0".encode())
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def settings_hash(settings: Settings) -> str:
    """Everything besides the submission that decides a grade: settings, data, answers and the grader's code."""
    digest = hashlib.sha256()
    fields = {k: v for k, v in asdict(settings).items() if k not in ("data_dir", "answers")}
    digest.update(json.dumps(fields, sort_keys=True, default=str).encode())
    files = [settings.data_dir / layout.WIKI, settings.data_dir / layout.DEV, settings.answers,
             SOLUTIONS / "05_synthesizer.ipynb"]
    files += sorted(p for pattern in GRADER_FILES for p in REPO.glob(pattern)
                    if "__pycache__" not in p.parts and not (p.parent.name == "autograder" and p.name in NOT_GRADING))
    for path in files:
        digest.update(f"\0{path.name}\0".encode() + path.read_bytes())
    return digest.hexdigest()


def _cache_path(out: Path, student: str) -> Path | None:
    return out / CACHE_DIR / f"{student}.json" if is_safe_name(student) else None


def _load(path: Path | None, content: str, grading: str) -> SubmissionResult | None:
    """The kept result when it is for these very files and settings, else None."""
    if path is None or not path.is_file():
        return None
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        if (kept.get("format"), kept.get("content"), kept.get("settings")) != (CACHE_FORMAT, content, grading):
            return None
        parts = [PartResult(p["part"], float(p["points"]), float(p["max_points"]), str(p["reason"]))
                 for p in kept["parts"]]
        return SubmissionResult(kept["student"], parts, [*kept["log"], "(kept from an earlier grading: unchanged)"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # an unreadable kept result is graded again


def _keep(path: Path | None, result: SubmissionResult, content: str, grading: str) -> None:
    if path is None or not result.graded:
        return
    record = {"format": CACHE_FORMAT, "content": content, "settings": grading, "student": result.student,
              "parts": [asdict(p) for p in result.parts], "log": result.log}
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}")
    partial.write_text(json.dumps(record), encoding="utf-8")
    os.replace(partial, path)  # a reader never sees half a file, even if the driver dies here


def grade_cohort(collected: list[Collected], settings: Settings, gold: dict, out: Path, cluster: Cluster,
                 force: bool = False, progress: bool = True) -> CohortRun:
    """Grade every collected student (or reuse a still-valid kept result); one row each, in the cohort's order."""
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
        finished = _serial(collected, todo, settings, gold) if cluster.workers <= 1 and not cluster.scheduler \
            else _on_dask(collected, todo, settings, gold, cluster)
        contents = dict(todo)
        for index, result in finished:
            if index in results:  # never two rows for one student, whatever the cluster did
                continue
            results[index] = result
            _keep(_cache_path(out, result.student), result, contents[index], grading)
            run.graded += 1
            if not result.graded:
                run.failed.append(result.student)
            bar.update()
    run.results = [results[i] for i in range(len(collected))]
    return run


def _serial(collected, todo, settings, gold) -> Iterator[tuple[int, SubmissionResult]]:
    for index, _ in todo:
        yield index, grade_one(collected[index], settings, gold)


def _on_dask(collected, todo, settings, gold, cluster: Cluster) -> Iterator[tuple[int, SubmissionResult]]:
    """Each student a task on a Dask cluster (a local one unless a scheduler is named); results as they finish."""
    import dask
    from dask.distributed import Client, LocalCluster

    if not todo:
        return
    with tempfile.TemporaryDirectory(prefix="grader-dask-") as scratch:
        local = None
        if cluster.scheduler:
            client = Client(cluster.scheduler)
        else:
            # the driver, not the scheduler, retries a task whose worker died (read when the scheduler starts);
            # every server's scratch folder goes in ours, removed at the end; memory is capped per confined job
            with dask.config.set({"distributed.scheduler.allowed-failures": 0, "temporary-directory": scratch}):
                # the workers' temporary files too (a killed worker's job leaves its copy of a submission)
                local = LocalCluster(n_workers=cluster.workers, threads_per_worker=1, processes=True,
                                     memory_limit=0, dashboard_address=None, local_directory=scratch,
                                     env={"TMPDIR": scratch}, silence_logs=logging.ERROR)
            client = Client(local)
        try:
            yield from _drive(client, collected, todo, settings, gold)
        finally:
            client.close()
            if local is not None:
                local.close()


def _drive(client, collected, todo, settings, gold) -> Iterator[tuple[int, SubmissionResult]]:
    """Keep every worker thread busy with one student, never more: a task queued behind another on a worker
    would be charged with that worker's death too. A task whose worker died is queued again, up to RETRIES."""
    from dask.distributed import wait
    from distributed.scheduler import KilledWorker

    waiting = deque(index for index, _ in todo)
    running: dict = {}  # future -> cohort place
    deaths: dict[int, int] = {}  # cohort place -> workers that died under its task
    try:
        while waiting or running:
            free = sum(client.nthreads().values()) - len(running)
            while free > 0 and waiting:
                index = waiting.popleft()
                # the submission goes as bytes, read only now: a bounded number are held in memory at once
                future = client.submit(run_task, task_for(collected[index]), settings, gold, pure=False,
                                       key=f"grade-{index}-{uuid.uuid4().hex[:8]}")
                running[future] = index
                free -= 1
            if not running:
                time.sleep(POLL_SECONDS)  # no worker yet (starting, restarting, or still queued on a batch system)
                continue
            try:
                done, _ = wait(list(running), timeout=POLL_SECONDS, return_when="FIRST_COMPLETED")
            except TimeoutError:  # none finished: look for free workers again
                continue
            for future in done:
                index = running.pop(future)
                try:
                    result = future.result()
                except KilledWorker as err:
                    deaths[index] = deaths.get(index, 0) + 1
                    if deaths[index] <= RETRIES:
                        waiting.appendleft(index)
                        continue
                    why = f"the grading task's worker died {deaths[index]} times ({type(err).__name__}: {err})"
                    result = failed_row(collected[index].student, settings, why)
                except Exception as err:  # noqa: BLE001 (a lost scheduler, ...: that student's row says so)
                    result = failed_row(collected[index].student, settings,
                                        f"the grading task did not finish ({type(err).__name__}: {err})\n"
                                        f"{traceback.format_exc()[-2000:]}")
                finally:
                    future.release()
                yield index, result
    except Exception as err:  # noqa: BLE001 (the scheduler went away: the students left get rows, graded next run)
        why = f"the Dask scheduler was lost ({type(err).__name__}: {err})"
        for index in [*running.values(), *waiting]:
            yield index, failed_row(collected[index].student, settings, why)
