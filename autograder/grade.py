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

import csv
import hashlib
import json
import random
import re
import tempfile
import traceback
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from course_lib import layout
from course_lib.data_files import DataFormatError, read_birth_places, read_predictions
from course_lib.evaluation import accuracy
from course_lib.presets import get_preset

from . import registry
from .bars import Bar, load_bars
from .collect import OUTPUTS, Collected, collect_cohort
from .confinement import Limits
from .judges import SOLUTIONS
from .sandbox import JobResult, run_job

if TYPE_CHECKING:  # cohort imports this module
    from .cohort import CohortRun
    from .dask_tasks import Cluster

ERROR_TYPE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,60}$")
CELL_WHERE = re.compile(r"^\d\d_[A-Za-z0-9_]+\.ipynb cell \d+( \([A-Za-z0-9_.-]{1,60}\))? line \d+$")
MISMATCH_ALLOWED = 0.01  # share of predictions that may differ from the grader's decoding (other hardware)


@dataclass
class PartResult:
    """One graded part of one submission: a check (its grade_id) or a run part's split."""

    part: str  # grade_id, or "<run part>/<split>"
    points: float  # awarded
    max_points: float  # available
    reason: str  # what the student reads: grader-written words only


@dataclass
class SubmissionResult:
    """One student's row: every part's points and reason, and the instructor's log."""

    student: str  # the collect step's student id
    parts: list[PartResult] = field(default_factory=list)  # every check, then every run split
    log: list[str] = field(default_factory=list)  # for the instructor only: job logs, tracebacks, dropped files
    graded: bool = True  # False when the grader itself failed on it: never kept, so a re-run grades it again

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
    limits: Limits = Limits()  # memory, scratch, processes per job
    confined: bool = True  # False only when the instructor accepted grading without confinement


def _safe_where(value) -> str:
    return f" (at {value})" if isinstance(value, str) and CELL_WHERE.match(value) else ""


def _error_reason(error, check: registry.Check, failed: dict) -> str:
    """A student-facing reason for a probe that did not return, from the fixed vocabulary."""
    kind = error.get("kind") if isinstance(error, dict) else None
    if kind == "missing":
        names = [n for n in check.needs if n in (error.get("names") or [])] or list(check.needs)
        broken = [f"{nb} could not be loaded{_type_text(info)}" for nb, info in sorted(failed.items())
                  if isinstance(info, dict)][:3]
        return f"not defined in your notebooks: {', '.join(names)}" + (f" ({'; '.join(broken)})" if broken else "")
    if kind == "not_written":
        return "not written yet (NotImplementedError)" + _safe_where(error.get("where"))
    if kind == "timeout":
        return f"ran past its time limit of {check.seconds} s and was stopped" + _safe_where(error.get("where"))
    if kind == "memory":
        return "ran out of memory (MemoryError)" + _safe_where(error.get("where"))
    if kind == "raised":
        kind_name = error.get("type") if ERROR_TYPE.match(str(error.get("type"))) else "an error"
        return f"your code raised {kind_name}{_safe_where(error.get('where'))}"
    return "no result came back for this check"


def _type_text(info: dict) -> str:
    kind = info.get("type")
    text = f": {kind}" if isinstance(kind, str) and ERROR_TYPE.match(kind) else ""
    return text + _safe_where(info.get("where"))


def grade_code(notebooks: list[Path], settings: Settings, log: list[str]) -> list[PartResult]:
    """Probe every check in one confined job on fresh inputs; judge each output here."""
    rng = random.Random(random.SystemRandom().randrange(2 ** 63))
    with tempfile.TemporaryDirectory(prefix="grader-inputs-") as tmp:
        inputs, files = registry.prepare(rng, tmp)
        request = {"notebooks": [p.name for p in notebooks],
                   "checks": [{"grade_id": c.grade_id, "needs": list(c.needs), "probe": c.probe, "seconds": c.seconds,
                               "inputs": registry.sent_inputs(c, inputs[c.grade_id])} for c in registry.CHECKS]}
        job = run_job("probe", request, {**{p.name: p for p in notebooks}, **files}, settings.timeout,
                      settings.limits, settings.confined)
    log.append(f"probe job: {job.seconds:.1f} s, {job.problem or 'answered'}; its output:\n{job.log[-4000:]}")
    if job.problem:
        return [PartResult(c.grade_id, 0.0, c.points, f"your notebooks {job.problem}") for c in registry.CHECKS]
    answer = job.answer if isinstance(job.answer, dict) else {}
    checks = answer.get("checks") if isinstance(answer.get("checks"), dict) else {}
    failed = answer.get("failed_notebooks") if isinstance(answer.get("failed_notebooks"), dict) else {}
    results = []
    for check in registry.CHECKS:
        got = checks.get(check.grade_id)
        if not isinstance(got, dict) or ("output" not in got and "error" not in got):
            results.append(PartResult(check.grade_id, 0.0, check.points, "no result came back for this check"))
            continue
        if "error" in got:
            results.append(PartResult(check.grade_id, 0.0, check.points, _error_reason(got["error"], check, failed)))
            continue
        try:
            problems = check.judge(inputs[check.grade_id], got["output"])
        except Exception:  # a malformed output is the submission's doing, never the grader's crash
            log.append(f"{check.grade_id}: the judge could not read the output:\n{traceback.format_exc()[-2000:]}")
            problems = ["the check's outputs were not of the expected form"]
        passed = not problems
        results.append(PartResult(check.grade_id, check.points if passed else 0.0, check.points,
                                  "passed" if passed else "; ".join(problems)[:500]))
    return results


def _decode(folder: Path, settings: Settings, questions: dict[str, list[str]], log: list[str]) -> JobResult | None:
    """Answer every question with trusted model code and each run part's params (no student code runs)."""
    present = [p for p in registry.RUN_PARTS if (folder / OUTPUTS / p.params).is_file()]
    if not present:
        return None
    preset = get_preset(settings.preset)
    files = {layout.WIKI: settings.data_dir / layout.WIKI,
             "synthesizer_reference.ipynb": SOLUTIONS / "05_synthesizer.ipynb"}
    files.update({f"{p.name}.params": folder / OUTPUTS / p.params for p in present})
    request = {"wiki": layout.WIKI, "block_size": preset.block_size, "model": dict(preset.model),
               "synthesizer_reference": "synthesizer_reference.ipynb", "batch_size": preset.eval_batch_size,
               "parts": [{"name": p.name, "params": f"{p.name}.params", "attention": p.attention,
                          "questions": questions} for p in present]}
    job = run_job("decode", request, files, settings.timeout, settings.limits, settings.confined)
    log.append(f"decode job: {job.seconds:.1f} s, {job.problem or 'answered'}; its output:\n{job.log[-2000:]}")
    return job


def grade_runs(folder: Path, settings: Settings, code: list[PartResult], gold: dict,
               log: list[str]) -> list[PartResult]:
    """Each run part's dev and test splits, scored on the grader's own decoding of the submitted params."""
    passed = {p.part for p in code if p.points == p.max_points}
    questions = {split: [e.question for e in examples] for split, examples in gold.items()}
    job = _decode(folder, settings, questions, log)
    decoded = job.answer if job is not None and isinstance(job.answer, dict) else {}
    results = []
    for bar in settings.bars:
        part = next(p for p in registry.RUN_PARTS if p.name == bar.part)
        label, pred_name = f"{bar.part}/{bar.split}", part.dev if bar.split == "dev" else part.test
        reason = _run_problem(folder, part, pred_name, bar.split, passed, job, decoded, gold)
        if isinstance(reason, str):
            results.append(PartResult(label, 0.0, bar.points, reason))
            continue
        answers, note = reason
        correct, total = accuracy(answers, [e.place for e in gold[bar.split]])
        met = bar.passed(correct, total)
        need = f"{bar.min_correct} right" if bar.min_correct else f"{100 * bar.min_fraction:.1f}%"
        results.append(PartResult(label, bar.points if met else 0.0, bar.points,
                                  f"{correct}/{total} right ({100 * correct / total:.1f}%); the bar is {need}{note}"))
    return results


def _run_problem(folder, part, pred_name, split, passed, job, decoded, gold):
    """A reason string when the split cannot score, else (the grader's answers, a note)."""
    missing = [g for g in part.needs if g not in passed]
    if missing:
        return f"the code this run depends on has to pass first: {', '.join(missing)}"
    pred_path = folder / OUTPUTS / pred_name
    if not pred_path.is_file():
        return f"{pred_name} is not in the submission"
    if not (folder / OUTPUTS / part.params).is_file():
        return f"{part.params} is not in the submission"
    try:
        predictions = read_predictions(pred_path)
    except (OSError, DataFormatError, UnicodeDecodeError):
        return f"{pred_name} could not be read as UTF-8 text"
    if len(predictions) != len(gold[split]):
        return f"{pred_name} has {len(predictions)} lines for {len(gold[split])} questions"
    if job is None or job.problem:
        return f"decoding {part.params} {job.problem if job else 'did not run'}"
    mine = decoded.get(part.name)
    if isinstance(mine, dict) and "error" in mine:
        return f"{part.params} does not hold params of the model this preset trains (it could not be loaded)"
    answers = mine.get(split) if isinstance(mine, dict) else None
    usable = isinstance(answers, list) and len(answers) == len(predictions)
    if not (usable and all(isinstance(a, str) for a in answers)):
        return f"decoding {part.params} gave no usable answers"
    differ = sum(a != p for a, p in zip(answers, predictions))
    if differ > max(1, MISMATCH_ALLOWED * len(answers)):
        return (f"{differ} of {len(answers)} lines of {pred_name} differ from what {part.params} answers: "
                "the predictions must come from the submitted params")
    note = f" ({differ} line(s) differ from the submitted file; the grader's answers count)" if differ else ""
    return answers, note


def grade_submission(collected: Collected, settings: Settings, gold: dict) -> SubmissionResult:
    """Both halves for one collected submission; every failure becomes reasons in its own row."""
    result = SubmissionResult(collected.student, log=[f"left out by the collect step: {d}" for d in collected.dropped])
    notebooks = sorted(collected.folder.glob("*.ipynb")) if collected.folder else []
    if not notebooks:
        why = "no notebooks in the submission" + (f" ({collected.dropped[0]})" if collected.dropped else "")
        result.parts = [PartResult(c.grade_id, 0.0, c.points, why) for c in registry.CHECKS]
    else:
        result.parts = grade_code(notebooks, settings, result.log)
    if collected.folder is None:
        result.parts += [PartResult(f"{b.part}/{b.split}", 0.0, b.points, "no submission folder")
                         for b in settings.bars]
    else:
        result.parts += grade_runs(collected.folder, settings, result.parts, gold, result.log)
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


def duplicates(collected: list[Collected]) -> list[tuple[str, str, str]]:
    """(file name, student, student) for every pair that handed in byte-identical params or predictions."""
    seen: dict[tuple[str, str], list[str]] = defaultdict(list)
    for c in collected:
        if c.folder is None:
            continue
        for path in sorted((c.folder / OUTPUTS).glob("*")) if (c.folder / OUTPUTS).is_dir() else []:
            seen[(path.name, hashlib.sha256(path.read_bytes()).hexdigest())].append(c.student)
    pairs = []
    for (name, _), students in sorted(seen.items()):
        pairs += [(name, a, b) for i, a in enumerate(students) for b in students[i + 1:]]
    return pairs


def grade_folder(submitted: Path, assignment: str, out: Path, settings: Settings, gradescope: bool = False,
                 progress: bool = True, cluster: Cluster | None = None, force: bool = False) -> CohortRun:
    """Collect, grade every student (in parallel on Dask when ``cluster`` says so; unchanged students kept
    from an earlier run unless ``force``), and write grades.csv, reasons.json, flags.csv and the instructor's log."""
    from .cohort import grade_cohort
    from .dask_tasks import Cluster

    gold = load_gold(settings)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="grader-collected-") as staging:
        collected = collect_cohort(submitted, assignment, Path(staging), run_files=registry.RUN_FILES)
        flags = duplicates(collected)
        run = grade_cohort(collected, settings, gold, out, cluster or Cluster(workers=1), force, progress)
    write_outputs(run.results, flags, out, gradescope)
    return run


def write_outputs(results: list[SubmissionResult], flags, out: Path, gradescope: bool) -> None:
    names = [c.grade_id for c in registry.CHECKS]
    names += [p.part for p in results[0].parts[len(names):]] if results else []
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student_id", "score", "max_score", *names])
        for r in results:
            points = {p.part: p.points for p in r.parts}
            writer.writerow([r.student, f"{r.score:g}", f"{r.max_score:g}", *(f"{points.get(n, 0):g}" for n in names)])
    with open(out / "reasons.json", "w", encoding="utf-8") as f:
        json.dump({r.student: [vars(p) for p in r.parts] for r in results}, f, indent=1)
    with open(out / "flags.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["file", "student", "other_student", "why"])
        for name, a, b in flags:
            writer.writerow([name, a, b, "byte-identical files"])
    with open(out / "instructor_log.txt", "w", encoding="utf-8") as f:
        for r in results:
            f.write(f"===== {r.student}: {r.score:g}/{r.max_score:g}\n" + "\n".join(r.log) + "\n")
    if gradescope:
        for r in results:
            folder = out / "gradescope" / r.student
            folder.mkdir(parents=True, exist_ok=True)
            tests = [{"name": p.part, "score": p.points, "max_score": p.max_points, "output": p.reason}
                     for p in r.parts]
            (folder / "results.json").write_text(json.dumps({"score": r.score, "tests": tests}, indent=1))


def summary_table(results: list[SubmissionResult]) -> str:
    lines = [f"{'student':<20}{'score':>10}{'of':>8}  first problem"]
    for r in results:
        problem = next((p for p in r.parts if p.points < p.max_points), None)
        note = f"{problem.part}: {problem.reason}"[:70] if problem else "full marks"
        lines.append(f"{r.student:<20}{r.score:>10g}{r.max_score:>8g}  {note}")
    return "\n".join(lines)


def settings_for(data_dir: Path, answers: Path, dataset: str, preset: str, **kwargs) -> Settings:
    return Settings(Path(data_dir), Path(answers), tuple(load_bars(dataset, preset)), preset, **kwargs)
