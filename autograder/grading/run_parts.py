"""The runs' half of a grading: submitted params decoded by trusted code, scored against the bars.

Confined trusted code answers every question with each run part's submitted params, before any
student code runs in its sandbox (``decode_first``: a child of the probe job; the audit's own decode
job: ``decode_params``); a split scores what those answers get against its bar, only when every
check of the code it depends on passed and the submitted predictions are those answers.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.checks import registry, run_files
from autograder.collecting.collect import OUTPUTS
from autograder.confinement.jobs import JobResult, run_job
from autograder.exports import reasons
from autograder.grading.results import OUT_OF_TIME, Budget, PartResult, Settings
from autograder.inside import wire
from autograder.inside.working_folder import DECODE_FOLDER
from course_lib import layout
from course_lib.data_files import DataFormatError, read_handed_in_predictions
from course_lib.gpt.evaluation import accuracy
from course_lib.layout import SOLUTIONS_DIR
from course_lib.presets import get_preset

MISMATCH_ALLOWED = 0.01  # share of predictions that may differ from the grader's (other hardware)
SYNTHESIZER_REFERENCE = SOLUTIONS_DIR / "05_synthesizer.ipynb"  # the trusted attention the decode builds models with
NOT_RUN = object()  # grade_runs' ``decoded`` when no decode has run yet
# the decode's problem words (``autograder.inside.decode_first.PROBLEMS``) in the grader's words
FIRST_PROBLEMS = {"timeout": "ran past the time limit of {seconds:.0f} s and was stopped",
                  "memory": "ran out of memory (the limit is {memory} MB) and was stopped",
                  "too_large": "answered with more than the grader reads back",
                  "stopped": "stopped before answering"}


def gold_questions(gold: dict) -> dict[str, list[str]]:
    """Each split's questions, in the gold's order (what the decode answers)."""
    return {split: [e.question for e in examples] for split, examples in gold.items()}


def _decode_request(folder: Path, settings: Settings, questions: dict[str, list[str]], wiki: str,
                    params: str = "") -> tuple[dict, dict[str, Path]] | None:
    """The decode's request and the files it reads (``wiki``: where the job sees the wiki; each part's params
    under the folder ``params``), or None when no run part's params were handed in."""
    present = [p for p in run_files.RUN_PARTS if (folder / OUTPUTS / p.params).is_file()]
    if not present:
        return None
    preset = get_preset(settings.preset)
    files = {wiki: settings.data_dir / layout.WIKI}
    files.update({f"{params}{p.name}.params": folder / OUTPUTS / p.params for p in present})
    request = {"wiki": wiki, "block_size": preset.block_size, "model": dict(preset.model),
               "batch_size": preset.eval_batch_size,
               "parts": [{"name": p.name, "params": f"{params}{p.name}.params", "attention": p.attention,
                          "questions": questions} for p in present]}
    return request, files


def decode_params(folder: Path, settings: Settings, questions: dict[str, list[str]], log: list[str],
            budget: Budget) -> JobResult | None:
    """Answer every question with trusted model code and each run part's params, in a job of its own."""
    made = _decode_request(folder, settings, questions, layout.WIKI)
    if made is None:
        return None
    timeout = budget.job_timeout(settings.timeout)
    if timeout <= 0:
        return JobResult(None, "was not started: " + OUT_OF_TIME, "", 0.0)
    request, files = made
    request["synthesizer_reference"] = "synthesizer_reference.ipynb"
    files["synthesizer_reference.ipynb"] = SYNTHESIZER_REFERENCE
    job = run_job("decode", request, files, timeout, settings.limits, settings.confined)
    log.append(f"decode job: {job.seconds:.1f} s, {job.problem or 'answered'}; its output:\n{job.log[-2000:]}")
    return job


@dataclass
class DecodeFirst:
    """The decode of a submission's params, run first in its probe job (``autograder.inside.decode_first``)."""

    request: bytes  # what only the decode reads, through a pipe: the questions, the synthesizer reference's source
    files: dict[str, Path]  # put in the probe job's folder: the params (the student's own) and the wiki
    seconds: float  # its time limit, as a decode job of its own has
    result: JobResult | None = None  # set by the probe job's run (``code_parts.grade_code``)


def decode_first(folder: Path, settings: Settings, questions: dict[str, list[str]]) -> DecodeFirst | None:
    """The decode to run first in the probe job, or None when no run part's params were handed in."""
    made = _decode_request(folder, settings, questions, f"data/{layout.WIKI}", f"{DECODE_FOLDER}/")
    if made is None:
        return None
    request, files = made
    request["synthesizer_reference_text"] = SYNTHESIZER_REFERENCE.read_text(encoding="utf-8")
    return DecodeFirst(wire.dumps(request), files, settings.timeout)


def decoded_first(job: JobResult, first: DecodeFirst, settings: Settings, log: list[str]) -> JobResult:
    """What the decode sent from inside the probe job, as the JobResult a decode job of its own gives."""
    try:
        sent = wire.loads(job.first) if job.first else None
    except wire.WireError:
        sent = None
    problem = sent.get("problem") if isinstance(sent, dict) else None
    if isinstance(sent, dict) and isinstance(sent.get("answer"), dict):
        result = JobResult(sent["answer"], None, "", job.seconds)
    elif problem in FIRST_PROBLEMS:
        result = JobResult(None, FIRST_PROBLEMS[problem].format(seconds=first.seconds,
                                                                 memory=settings.limits.memory_mb), "", job.seconds)
    else:  # nothing whole came back: the probe job's own end says why
        result = JobResult(None, job.problem or "gave an answer the grader could not read", "", job.seconds)
    log.append(f"decode, run first in the probe job: {result.problem or 'answered'}")
    return result


def grade_runs(folder: Path, settings: Settings, code: list[PartResult], gold: dict, log: list[str],
               budget: Budget, notes: dict[str, str] | None = None,
               accuracies: dict[str, float] | None = None, decoded: object = NOT_RUN) -> list[PartResult]:
    """Each run part's dev and test splits, scored on the grader's own decoding of the submitted
    params (their accuracy also goes into ``accuracies``): ``decoded``, the decode already run first in
    the probe job (None: no params were handed in), else a decode job of its own."""
    passed = {p.part for p in code if p.points == p.max_points}
    job = decode_params(folder, settings, gold_questions(gold), log, budget) if decoded is NOT_RUN else decoded
    decoded_answers = job.answer if job is not None and isinstance(job.answer, dict) else {}
    results = []
    for bar in settings.bars:
        part = next(p for p in run_files.RUN_PARTS if p.name == bar.part)
        label, pred_name = f"{bar.part}/{bar.split}", part.dev if bar.split == "dev" else part.test
        reason = _run_problem(folder, part, pred_name, bar.split, passed, job, decoded_answers, gold, settings,
                              notes or {})
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


def _missing(name: str, notes: dict[str, str]) -> str:
    """A missing file's reason, with the collect step's note if any."""
    return f"{name} is not in the submission" + (f" ({notes[name]})" if name in notes else "")


def _run_problem(folder, part, pred_name, split, passed, job, decoded, gold, settings, notes):
    """A reason string when the split cannot score, else (the grader's answers, a note)."""
    missing = [g for g in registry.needs(part) if g not in passed]
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
    """A shape from the decode job as '3x4', or '?' if it is not a list of ints."""
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
