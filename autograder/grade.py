"""Grade a folder of submissions laid out as nbgrader's submitted/ folder.

submitted/<student>/<assignment>/NN_*.ipynb, plus the training runs' files (the
seed's names) beside them or in an outputs/ folder there. Each student gets the
code checks (run in a sandboxed process on their notebooks) and the run parts
(dev and test scored here against the grader-only answers, after checking that
a sample of the predictions decodes from the submitted params with the
student's own model code).
"""
from __future__ import annotations

import csv
import json
import random
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import torch

from course_lib import checks as public_checks
from course_lib.data_files import DataFormatError, read_birth_places, read_predictions
from course_lib.evaluation import accuracy

from . import hidden_checks
from .bars import RUN_PARTS, Bar, load_bars
from .sandbox import SandboxError, run_job

CODE_POINTS = {  # check -> points (the original's weights where it has them)
    "finetune_config": 4, "finetune_after_pretraining": 3, "pretrain_config": 7,
    "span_corruption_public": 5, "span_corruption_hidden": 15,
    "synthesizer_public": 2, "synthesizer_equivalence": 5,
}
SPAN_PUBLIC = dict(block_size=50, samples=100, seed=0)  # what the notebook's public check samples
PROVENANCE_SAMPLE = 24  # dev questions re-decoded per part to tie predictions to params


@dataclass
class PartResult:
    """One graded part of one submission."""

    part: str  # check name or "<run part>/<split>"
    points: float  # awarded
    max_points: float  # available
    reason: str  # what a student reads


@dataclass
class SubmissionResult:
    student: str
    parts: list[PartResult] = field(default_factory=list)

    @property
    def score(self) -> float:
        return sum(p.points for p in self.parts)

    @property
    def max_score(self) -> float:
        return sum(p.max_points for p in self.parts)


def _find(folder: Path, name: str) -> Path | None:
    for candidate in (folder / name, folder / "outputs" / name):
        if candidate.is_file():
            return candidate
    return None


def _tensors(value):
    """Undo the sandbox's JSON encoding of tensors."""
    if isinstance(value, dict):
        if set(value) == {"tensor"}:
            return torch.tensor(value["tensor"], dtype=torch.float32)
        return {k: _tensors(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_tensors(v) for v in value]
    return value


def _judges(context: dict) -> dict:
    """check -> function(report) -> problems, deciding from the submission's raw outputs only."""
    cases = context["cases"]
    return {
        "finetune_config": lambda r: public_checks.finetune_problems(r, pretrained=False),
        "finetune_after_pretraining": lambda r: hidden_checks.finetune_after_pretraining_problems(r, context["sums"]),
        "pretrain_config": public_checks.pretrain_problems,
        "span_corruption_public": lambda r: public_checks.span_problems(r, SPAN_PUBLIC["block_size"]),
        "span_corruption_hidden": lambda r: hidden_checks.span_hidden_problems(context["span_plan"], r),
        "synthesizer_public": lambda r: hidden_checks.synthesizer_problems(
            cases["synth_public"], _tensors(r), against_reference=False),
        "synthesizer_equivalence": lambda r: hidden_checks.synthesizer_problems(cases["synth"], _tensors(r)),
    }


def grade_code(notebooks: list[Path], timeout: float, memory_mb: int, hidden: list[Path] = ()) -> list[PartResult]:
    """Run the probes on the submission in the sandbox; judge what they produced here."""
    with tempfile.TemporaryDirectory(prefix="grader-") as tmp:
        seed = random.SystemRandom().randrange(2 ** 31)  # fresh weights and params each grading
        context = {"span_plan": hidden_checks.span_plan(),
                   "cases": {"synth": hidden_checks.synthesizer_cases(seed),
                             "synth_public": hidden_checks.public_synthesizer_cases()},
                   "sums": hidden_checks.pretrained_params(Path(tmp) / "pretrained.params", seed)}
        torch.save(context["cases"], Path(tmp) / "cases.pt")
        inputs = {p.name: p for p in notebooks}
        inputs.update({"cases.pt": Path(tmp) / "cases.pt", "pretrained.params": Path(tmp) / "pretrained.params"})
        request = {"notebooks": [p.name for p in notebooks], "checks": list(CODE_POINTS), "cases": "cases.pt",
                   "pretrained_params": "pretrained.params", "span_public": SPAN_PUBLIC,
                   "span_hidden": context["span_plan"]}
        try:
            answers = run_job("checks", request, timeout=timeout, memory_mb=memory_mb, inputs=inputs, hidden=hidden)
        except SandboxError as err:
            return [PartResult(name, 0.0, pts, str(err)) for name, pts in CODE_POINTS.items()]
    judges = _judges(context)
    results = []
    for name, pts in CODE_POINTS.items():
        answer = answers.get(name) if isinstance(answers, dict) else None
        if not isinstance(answer, dict) or ("report" not in answer and "error" not in answer):
            results.append(PartResult(name, 0.0, float(pts), "no result came back for this check"))
            continue
        if "error" in answer:
            results.append(PartResult(name, 0.0, float(pts), str(answer["error"])[:500]))
            continue
        try:
            problems = judges[name](answer["report"])
        except Exception as err:  # a malformed report is the submission's doing, never the grader's crash
            problems = [f"the check's outputs were malformed ({type(err).__name__})"]
        passed = not problems
        results.append(PartResult(name, float(pts) if passed else 0.0, float(pts),
                                  "passed" if passed else "; ".join(problems)[:500]))
    return results


def grade_runs(folder: Path, notebooks: list[Path], data_dir: Path, answers_path: Path, bars: list[Bar],
               preset: str, timeout: float, memory_mb: int, hidden: list[Path] = ()) -> list[PartResult]:
    gold = {"dev": read_birth_places(data_dir / "birth_dev.tsv", require_answers=True),
            "test": read_birth_places(answers_path, require_answers=True)}
    results, verified = [], {}
    for bar in bars:
        params_name, dev_name, test_name = RUN_PARTS[bar.part]
        pred_name = dev_name if bar.split == "dev" else test_name
        label = f"{bar.part}/{bar.split}"
        pred_path, params_path = _find(folder, pred_name), _find(folder, params_name)
        if pred_path is None:
            results.append(PartResult(label, 0.0, bar.points, f"{pred_name} is not in the submission"))
            continue
        try:
            predictions = read_predictions(pred_path)
        except (OSError, DataFormatError) as err:
            results.append(PartResult(label, 0.0, bar.points, f"{pred_name} could not be read: {err}"))
            continue
        examples = gold[bar.split]
        if len(predictions) != len(examples):
            results.append(PartResult(label, 0.0, bar.points,
                                      f"{pred_name} has {len(predictions)} lines for {len(examples)} questions"))
            continue
        if params_path is None:
            results.append(PartResult(label, 0.0, bar.points, f"{params_name} is not in the submission"))
            continue
        key = (bar.part, bar.split)
        if key not in verified:
            verified[key] = _provenance(bar.part, params_path, notebooks, data_dir, preset, examples, predictions,
                                        timeout, memory_mb, hidden)
        problem = verified[key]
        if problem:
            results.append(PartResult(label, 0.0, bar.points, problem))
            continue
        correct, total = accuracy(predictions, [e.place for e in examples])
        met = bar.passed(correct, total)
        need = f"{bar.min_correct} right" if bar.min_correct else f"{100 * bar.min_fraction:.0f}%"
        results.append(PartResult(label, bar.points if met else 0.0, bar.points,
                                  f"{correct}/{total} right ({100 * correct / total:.1f}%); the bar is {need}"))
    return results


def _provenance(part: str, params: Path, notebooks: list[Path], data_dir: Path, preset: str, examples,
                predictions: list[str], timeout: float, memory_mb: int, hidden: list[Path] = ()) -> str | None:
    """None if a random sample of questions decodes to the submitted predictions, else the reason.

    The sandbox gets copies of the notebooks, the params and wiki.txt only: never
    the predictions file, the answers or the rest of the submission.
    """
    rng = random.SystemRandom()
    sample = sorted(rng.sample(range(len(examples)), min(PROVENANCE_SAMPLE, len(examples))))
    inputs = {p.name: p for p in notebooks}
    inputs.update({"submitted.params": params, "wiki.txt": data_dir / "wiki.txt"})
    request = {"notebooks": [p.name for p in notebooks], "params": "submitted.params", "preset": preset,
               "variant": part.split("_")[0], "wiki": "wiki.txt", "questions": [examples[i].question for i in sample]}
    try:
        decoded = run_job("decode", request, timeout=timeout, memory_mb=memory_mb, inputs=inputs,
                          hidden=hidden)["predictions"]
        if not (isinstance(decoded, list) and len(decoded) == len(sample)):
            raise TypeError("the decoded answers did not come back complete")
    except (SandboxError, KeyError, TypeError) as err:
        return f"could not decode with the submitted params and model code: {err}"
    mismatched = sum(decoded[j] != predictions[i] for j, i in enumerate(sample))
    if mismatched:
        return (f"{mismatched} of {len(sample)} sampled predictions differ from what the submitted params "
                "produce with the submitted model code")
    return None


def grade_submission(folder: Path, student: str, data_dir: Path, answers_path: Path, bars: list[Bar], preset: str,
                     timeout: float = 300, memory_mb: int = 4096, hidden: list[Path] = ()) -> SubmissionResult:
    """Code checks and run parts of one student; ``hidden`` paths stay out of the sandbox's sight."""
    result = SubmissionResult(student)
    notebooks = sorted(folder.glob("*.ipynb"))
    if not notebooks:
        result.parts = [PartResult(n, 0.0, p, "no notebooks in the submission") for n, p in CODE_POINTS.items()]
        return result
    result.parts = grade_code(notebooks, timeout, memory_mb, hidden)
    result.parts += grade_runs(folder, notebooks, data_dir, answers_path, bars, preset, timeout, memory_mb, hidden)
    return result


def grade_folder(submitted: Path, assignment: str, out: Path, data_dir: Path, answers_path: Path, dataset: str,
                 preset: str, timeout: float = 300, memory_mb: int = 4096, gradescope: bool = False,
                 progress: bool = True) -> list[SubmissionResult]:
    from tqdm.auto import tqdm

    bars = load_bars(dataset, preset)
    students = sorted(p for p in submitted.iterdir() if p.is_dir())
    out.mkdir(parents=True, exist_ok=True)
    # out of the sandbox's sight: every submission, the answers, the data folder and the grades
    hidden = [submitted, answers_path, data_dir, out]
    results = []
    for student_dir in tqdm(students, desc="grading", unit="submission", disable=not progress):
        results.append(grade_submission(student_dir / assignment, student_dir.name, data_dir, answers_path, bars,
                                        preset, timeout, memory_mb, hidden))
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        names = [p.part for p in results[0].parts] if results else []
        writer.writerow(["student_id", "score", "max_score", *names])
        for r in results:
            writer.writerow([r.student, f"{r.score:g}", f"{r.max_score:g}", *(f"{p.points:g}" for p in r.parts)])
    with open(out / "reasons.json", "w", encoding="utf-8") as f:
        json.dump({r.student: [vars(p) for p in r.parts] for r in results}, f, indent=1)
    if gradescope:
        for r in results:
            folder = out / "gradescope" / r.student
            folder.mkdir(parents=True, exist_ok=True)
            tests = [{"name": p.part, "score": p.points, "max_score": p.max_points, "output": p.reason}
                     for p in r.parts]
            (folder / "results.json").write_text(json.dumps({"score": r.score, "tests": tests}, indent=1))
    return results


def summary_table(results: list[SubmissionResult]) -> str:
    lines = [f"{'student':<20}{'score':>10}{'of':>8}  first problem"]
    for r in results:
        problem = next((p for p in r.parts if p.points < p.max_points), None)
        note = f"{problem.part}: {problem.reason}"[:70] if problem else "full marks"
        lines.append(f"{r.student:<20}{r.score:>10g}{r.max_score:>8g}  {note}")
    return "\n".join(lines)
