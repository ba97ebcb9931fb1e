"""The score of record: grade a cohort's submissions (nbgrader's submitted/ layout) outside their kernels.

For each student, after the collect step has copied only regular files with the
assignment's names (``autograder.collect``):
1. one confined *probe* job loads the notebooks and runs every check's probe on
   inputs chosen afresh for this grading (``registry``); the outputs come back
   raw and each check's *judge* decides here, in the grader's process;
2. one confined *decode* job, with no student code in it, answers the dev and
   test questions with trusted model code and each run part's submitted params;
   a run part scores what those answers get against the bars, only when the code
   it depends on passed, and only when the submitted predictions are those answers.
One student's failure of any kind is that student's row with a reason; reasons
come from a fixed vocabulary written here (file contents never travel in one);
the full story goes to the instructor's log.
"""
from __future__ import annotations

import random
import sys
import tempfile
import time
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from course_lib import layout
from course_lib.contract import PARTS
from course_lib.data_files import DataFormatError, read_birth_places, read_predictions
from course_lib.evaluation import accuracy
from course_lib.presets import get_preset

from . import reasons, registry
from .bars import Bar, load_bars
from .collect import OUTPUTS, Collected, collect_cohort, wanted_for
from .confinement import Limits
from .judges import SOLUTIONS
from .sandbox import JobResult, run_job

if TYPE_CHECKING:  # cohort and audit import this module
    from .audit import AuditSettings
    from .cohort import CohortRun
    from .dask_tasks import Cluster

MISMATCH_ALLOWED = 0.01  # share of predictions that may differ from the grader's decoding (other hardware)
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
    log: list[str] = field(default_factory=list)  # for the instructor only: job logs, tracebacks, dropped files
    graded: bool = True  # False when the grader itself failed on it: never kept, so a re-run grades it again
    seed: int | None = None  # the grading seed its fresh inputs came from: --seed replays this grading
    accuracies: dict[str, float] = field(default_factory=dict)  # run split -> accuracy of the handed-in params

    @property
    def score(self) -> float:
        return sum(p.points for p in self.parts)

    @property
    def max_score(self) -> float:
        return sum(p.max_points for p in self.parts)


@dataclass(frozen=True)
class Settings:
    """How a cohort is graded."""

    data_dir: Path  # wiki.txt and birth_dev.tsv as the students had them
    answers: Path  # the grader-only test answers
    bars: tuple[Bar, ...]  # pass bars of the run parts
    preset: str  # the preset the students trained with (the model shape to decode with)
    timeout: float = 300  # seconds per confined job
    student_seconds: float = 300  # seconds of all of one student's jobs together
    cell_seconds: float = 60  # seconds per notebook cell while the probe job loads the notebooks
    limits: Limits = Limits()  # memory, scratch, processes per job
    confined: bool = True  # False only when the instructor accepted grading without confinement
    seed: int | None = None  # the grading seed of every student (None: a fresh one each, recorded in its result)


class Budget:
    """One student's wall time across its jobs: each job gets the smaller of its own limit and what is left."""

    def __init__(self, seconds: float):
        self.deadline = time.monotonic() + seconds

    def job_timeout(self, job_limit: float) -> float:
        return max(0.0, min(job_limit, self.deadline - time.monotonic()))


def _data_inputs(settings: Settings) -> dict[str, Path]:
    """The student data files (never the answers), for the probe job's COURSE_DATA_DIR."""
    return {f"data/{name}": settings.data_dir / name for name in layout.STUDENT_DATA_FILES
            if (settings.data_dir / name).is_file()}


# what a student's extra cells find while the probe job loads their notebooks: grading mode, the course data
PROBE_ENV = {"NBGRADER_EXECUTION": "autograde", "COURSE_DATA_DIR": "{job}/data", "COURSE_OUT_DIR": "{tmp}/outputs"}


def _error_reason(error, check: registry.Check, failed: dict, notes: dict[str, str] | None = None) -> str:
    """A student-facing reason for a probe that did not return, from the fixed vocabulary."""
    kind = error.get("kind") if isinstance(error, dict) else None
    where = reasons.place(error.get("where")) if isinstance(error, dict) else ""
    if kind == "missing":
        names = [n for n in check.needs if n in (error.get("names") or [])] or list(check.needs)
        return f"not defined in your notebooks: {', '.join(names)}" + _why_missing(names, failed, notes or {})
    if kind == "not_written":
        return "not written yet (NotImplementedError)" + where
    if kind == "timeout":
        return f"ran past its time limit of {check.seconds} s and was stopped" + where
    if kind == "memory":
        return "ran out of memory (MemoryError)" + where
    if kind == "raised":
        return f"your code raised {reasons.error_type(error.get('type'))}{where}"
    return "no result came back for this check"


def _why_missing(names: list[str], failed: dict, notes: dict[str, str]) -> str:
    """Where the missing names should have come from: a notebook missing (the collect step's note), unreadable,
    or with a failing cell."""
    said = []
    for notebook in sorted({f"{PARTS[n].notebook}.ipynb" for n in names if n in PARTS}):
        info = failed.get(notebook)
        if notebook in notes:
            said.append(f"{notebook} is not in the submission: {notes[notebook]}")
        elif isinstance(info, dict) and info.get("kind") == "unreadable":
            said.append(f"{notebook} could not be read as a notebook")
        elif isinstance(info, dict) and info.get("kind") == "cell":
            said.append(f"{notebook}: a cell raised {reasons.error_type(info.get('type'))}"
                        f"{reasons.place(info.get('where'))}")
    return f" ({'; '.join(said)})" if said else ""


def grade_code(notebooks: list[Path], settings: Settings, log: list[str], seed: int, budget: Budget,
               notes: dict[str, str] | None = None) -> list[PartResult]:
    """Probe every check in one confined job on inputs drawn from ``seed``; judge each output here."""
    timeout = budget.job_timeout(settings.timeout)
    if timeout <= 0:
        return [PartResult(c.grade_id, 0.0, c.points, OUT_OF_TIME) for c in registry.CHECKS]
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="grader-inputs-") as tmp:
        inputs, files = registry.prepare(rng, tmp)
        request = {"notebooks": [p.name for p in notebooks], "cell_seconds": settings.cell_seconds,
                   "checks": [{"grade_id": c.grade_id, "needs": list(c.needs), "probe": c.probe, "seconds": c.seconds,
                               "inputs": registry.sent_inputs(c, inputs[c.grade_id])} for c in registry.CHECKS]}
        job = run_job("probe", request, {**{p.name: p for p in notebooks}, **files, **_data_inputs(settings)},
                      timeout, settings.limits, settings.confined, env={**PROBE_ENV, "COURSE_PRESET": settings.preset})
    log.append(f"probe job: {job.seconds:.1f} s, {job.problem or 'answered'}; its output:\n{job.log[-4000:]}")
    if job.problem:
        return [PartResult(c.grade_id, 0.0, c.points, f"your notebooks {job.problem}") for c in registry.CHECKS]
    answer = job.answer if isinstance(job.answer, dict) else {}
    checks = answer.get("checks") if isinstance(answer.get("checks"), dict) else {}
    failed = answer.get("failed_notebooks") if isinstance(answer.get("failed_notebooks"), dict) else {}
    return [_judged(check, inputs[check.grade_id], checks.get(check.grade_id), failed, notes, log)
            for check in registry.CHECKS]


def _judged(check: registry.Check, inputs: dict, got, failed: dict, notes, log: list[str]) -> PartResult:
    """One check's points from its probe's raw output (or the error that stopped the probe)."""
    if not isinstance(got, dict) or ("output" not in got and "error" not in got):
        return PartResult(check.grade_id, 0.0, check.points, "no result came back for this check")
    if "error" in got:
        why = _error_reason(got["error"], check, failed, notes)
        return PartResult(check.grade_id, 0.0, check.points, reasons.bounded(why))
    try:
        problems = check.judge(inputs, got["output"])
    except Exception:  # a malformed output is the submission's doing, never the grader's crash
        log.append(f"{check.grade_id}: the judge could not read the output:\n{traceback.format_exc()[-2000:]}")
        problems = ["the check's outputs were not of the expected form"]
    passed = not problems
    return PartResult(check.grade_id, check.points if passed else 0.0, check.points,
                      "passed" if passed else reasons.bounded("; ".join(problems)))


def _decode(folder: Path, settings: Settings, questions: dict[str, list[str]], log: list[str],
            budget: Budget) -> JobResult | None:
    """Answer every question with trusted model code and each run part's params (no student code runs)."""
    present = [p for p in registry.RUN_PARTS if (folder / OUTPUTS / p.params).is_file()]
    if not present:
        return None
    timeout = budget.job_timeout(settings.timeout)
    if timeout <= 0:
        return JobResult(None, "was not started: " + OUT_OF_TIME, "", 0.0)
    preset = get_preset(settings.preset)
    files = {layout.WIKI: settings.data_dir / layout.WIKI,
             "synthesizer_reference.ipynb": SOLUTIONS / "05_synthesizer.ipynb"}
    files.update({f"{p.name}.params": folder / OUTPUTS / p.params for p in present})
    request = {"wiki": layout.WIKI, "block_size": preset.block_size, "model": dict(preset.model),
               "synthesizer_reference": "synthesizer_reference.ipynb", "batch_size": preset.eval_batch_size,
               "parts": [{"name": p.name, "params": f"{p.name}.params", "attention": p.attention,
                          "questions": questions} for p in present]}
    job = run_job("decode", request, files, timeout, settings.limits, settings.confined)
    log.append(f"decode job: {job.seconds:.1f} s, {job.problem or 'answered'}; its output:\n{job.log[-2000:]}")
    return job


def grade_runs(folder: Path, settings: Settings, code: list[PartResult], gold: dict, log: list[str],
               budget: Budget, notes: dict[str, str] | None = None,
               accuracies: dict[str, float] | None = None) -> list[PartResult]:
    """Each run part's dev and test splits, scored on the grader's own decoding of the submitted params (their
    accuracy also goes into ``accuracies``)."""
    passed = {p.part for p in code if p.points == p.max_points}
    questions = {split: [e.question for e in examples] for split, examples in gold.items()}
    job = _decode(folder, settings, questions, log, budget)
    decoded = job.answer if job is not None and isinstance(job.answer, dict) else {}
    results = []
    for bar in settings.bars:
        part = next(p for p in registry.RUN_PARTS if p.name == bar.part)
        label, pred_name = f"{bar.part}/{bar.split}", part.dev if bar.split == "dev" else part.test
        reason = _run_problem(folder, part, pred_name, bar.split, passed, job, decoded, gold, settings, notes or {})
        if isinstance(reason, str):
            results.append(PartResult(label, 0.0, bar.points, reasons.bounded(reason)))
            continue
        answers, note = reason
        correct, total = accuracy(answers, [e.place for e in gold[bar.split]])
        if accuracies is not None:
            accuracies[label] = correct / total
        met = bar.passed(correct, total)
        need = f"{bar.min_correct} right" if bar.min_correct else f"{100 * bar.min_fraction:.1f}%"
        results.append(PartResult(label, bar.points if met else 0.0, bar.points,
                                  f"{correct}/{total} right ({100 * correct / total:.1f}%); the bar is {need}{note}"))
    return results


def read_handed_in_predictions(path: Path, questions: int) -> list[str]:
    """The predictions file as a reader of the handout's format reads it: a UTF-8 byte-order mark, CRLF line ends,
    spaces at the ends of a line and blank lines after the last answer are not predictions."""
    lines = [line.strip() for line in read_predictions(path)]
    while len(lines) > questions and not lines[-1]:
        lines.pop()
    return lines


def _missing(name: str, notes: dict[str, str]) -> str:
    return f"{name} is not in the submission" + (f" ({notes[name]})" if name in notes else "")


def _run_problem(folder, part, pred_name, split, passed, job, decoded, gold, settings, notes):
    """A reason string when the split cannot score, else (the grader's answers, a note)."""
    missing = [g for g in part.needs if g not in passed]
    if missing:
        return f"the code this run depends on has to pass first: {', '.join(missing)}"
    pred_path = folder / OUTPUTS / pred_name
    if not pred_path.is_file():
        return _missing(pred_name, notes)
    if not (folder / OUTPUTS / part.params).is_file():
        return _missing(part.params, notes)
    try:
        predictions = read_handed_in_predictions(pred_path, len(gold[split]))
    except (OSError, DataFormatError, UnicodeDecodeError):
        return f"{pred_name} could not be read as UTF-8 text"
    if len(predictions) != len(gold[split]):
        return f"{pred_name} has {len(predictions)} lines for {len(gold[split])} questions"
    if job is None or job.problem:
        return f"decoding {part.params} {job.problem if job else 'did not run'}"
    mine = decoded.get(part.name)
    if isinstance(mine, dict) and "error" in mine:
        return _params_misfit(part.params, mine["error"], settings.preset)
    answers = mine.get(split) if isinstance(mine, dict) else None
    usable = isinstance(answers, list) and len(answers) == len(predictions)
    if not (usable and all(isinstance(a, str) for a in answers)):
        return f"decoding {part.params} gave no usable answers"
    differ = sum(a.strip() != p for a, p in zip(answers, predictions))
    if differ > max(1, MISMATCH_ALLOWED * len(answers)):
        return (f"{differ} of {len(answers)} lines of {pred_name} differ from what {part.params} answers: "
                "the predictions must come from the submitted params")
    note = f" ({differ} line(s) differ from the submitted file; the grader's answers count)" if differ else ""
    return answers, note


def _numbers(value) -> str:
    ok = isinstance(value, list) and all(isinstance(n, int) and not isinstance(n, bool) for n in value)
    return "x".join(str(n) for n in value) if ok and value else "?"


def _params_misfit(params: str, error, preset: str) -> str:
    """Why the params do not fit the model the preset trains, from the decode job's numbers only."""
    kind = error.get("kind") if isinstance(error, dict) else None
    name = error.get("name") if isinstance(error, dict) and isinstance(error.get("name"), str) else ""
    name = name if len(name) <= 60 and name.replace(".", "").replace("_", "").isalnum() else "a tensor"
    got, want = (_numbers(error.get(k)) if isinstance(error, dict) else "?" for k in ("got", "want"))
    if kind == "vocabulary":
        return (f"{params} was trained on other data: its vocabulary has {got} symbols, the course data's {want} "
                "(train on the course's data folder, as the course's README says)")
    if kind == "shape":
        return (f"{params} holds a model of another shape than the {preset!r} preset trains ({name} is {got}, "
                f"not {want}): train with the preset your course uses")
    if kind == "missing":
        return f"{params} does not hold the whole model ({name} is missing): save the model's state_dict"
    return f"{params} could not be loaded as the model's params (a state_dict of tensors saved with torch.save)"


def grade_submission(collected: Collected, settings: Settings, gold: dict, seed: int | None = None) -> SubmissionResult:
    """Both halves for one collected submission; every failure becomes reasons in its own row."""
    seed = seed if seed is not None else settings.seed if settings.seed is not None \
        else random.SystemRandom().randrange(2 ** 63)
    result = SubmissionResult(collected.student, log=[f"grading seed: {seed}"], seed=seed)
    result.log += [f"left out by the collect step: {d}" for d in collected.dropped]
    result.log += [f"copied by content, had other hard links: {name}" for name in collected.linked]
    budget = Budget(settings.student_seconds)
    notebooks = sorted(collected.folder.glob("*.ipynb")) if collected.folder else []
    if not notebooks:
        result.parts = [PartResult(c.grade_id, 0.0, c.points, "no notebooks in the submission") for c in registry.CHECKS]
    else:
        result.parts = grade_code(notebooks, settings, result.log, seed, budget, collected.notes)
    if collected.folder is None:
        result.parts += [PartResult(f"{b.part}/{b.split}", 0.0, b.points, "no submission folder")
                         for b in settings.bars]
    else:
        result.parts += grade_runs(collected.folder, settings, result.parts, gold, result.log, budget,
                                   collected.notes, result.accuracies)
    return result


def failed_row(student: str, settings: Settings, log: str) -> SubmissionResult:
    """The row of a submission the grader itself could not grade: zero everywhere, the story in the log."""
    why = "the grader could not grade this submission; your instructor has the details"
    parts = [PartResult(c.grade_id, 0.0, c.points, why) for c in registry.CHECKS]
    parts += [PartResult(f"{b.part}/{b.split}", 0.0, b.points, why) for b in settings.bars]
    return SubmissionResult(student, parts, [log], graded=False)


def grade_one(collected: Collected, settings: Settings, gold: dict) -> SubmissionResult:
    """One student's whole grading, as a self-contained task (run in this process or on a Dask worker)."""
    try:
        return grade_submission(collected, settings, gold)
    except Exception:  # the grader's own fault on one submission stays in that row
        return failed_row(collected.student, settings, traceback.format_exc())


def load_gold(settings: Settings) -> dict:
    """The dev and test questions with their answers, read once by the driver."""
    return {"dev": read_birth_places(settings.data_dir / layout.DEV, require_answers=True),
            "test": read_birth_places(settings.answers, require_answers=True)}


def grade_folder(submitted: Path, assignment: str, out: Path, settings: Settings, gradescope: bool = False,
                 progress: bool = True, cluster: Cluster | None = None, force: bool = False,
                 only: list[str] | None = None, audit: AuditSettings | None = None) -> CohortRun:
    """Collect, grade every student (in parallel on Dask when ``cluster`` says so; unchanged students kept
    from an earlier run unless ``force``), and write grades.csv, reasons.json, flags.csv and the instructor's log.

    The collect step's copies go into a folder of ``out`` (removed at the end): tasks name it, so workers on
    other machines need ``out`` on a filesystem they share with this one. ``only`` grades just those students
    (the files then cover them alone). ``audit`` retrains sampled students' runs (``autograder.audit``)."""
    from .cohort import grade_cohort
    from .dask_tasks import Cluster
    from .flags import cohort_flags
    from .outputs import write_outputs

    gold = load_gold(settings)
    out.mkdir(parents=True, exist_ok=True)
    staging = out / f".collected-{uuid.uuid4().hex[:8]}"
    try:
        cohort = collect_cohort(submitted, assignment, staging, wanted=wanted_for(assignment), only=only)
        for refused in cohort.refused:  # said before any grading starts; these folders get no row
            print(f"refused: submitted/{refused.shown!r} cannot be a student id: {refused.why}", file=sys.stderr)
        flags = cohort_flags(cohort.students, assignment)
        cluster = cluster or Cluster(workers=1)
        run = grade_cohort(cohort.students, settings, gold, out, cluster, force, progress)
        if audit is not None:
            from .audit import run_audits

            flags += run_audits(cohort.students, run.results, settings, gold, audit, cluster, out)
    finally:
        import shutil

        shutil.rmtree(staging, ignore_errors=True)
    run.refused = cohort.refused
    write_outputs(run.results, flags, cohort.refused, out, gradescope)
    return run


def summary_table(results: list[SubmissionResult]) -> str:
    from .safe_files import shown

    lines = [f"{'student':<20}{'score':>10}{'of':>8}  first problem"]
    for r in results:
        problem = next((p for p in r.parts if p.points < p.max_points), None)
        note = f"{problem.part}: {problem.reason}"[:70] if problem else "full marks"
        lines.append(f"{shown(r.student):<20}{r.score:>10g}{r.max_score:>8g}  {note}")
    return "\n".join(lines)


def settings_for(data_dir: Path, answers: Path, dataset: str, preset: str, **kwargs) -> Settings:
    return Settings(Path(data_dir), Path(answers), tuple(load_bars(dataset, preset)), preset, **kwargs)
