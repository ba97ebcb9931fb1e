"""The runs' half of a grading: submitted params decoded by trusted code, scored against the bars.

A confined job with no student code answers every question with trusted model code and each run
part's submitted params; a split scores what those answers get against its bar, only when every
check of the code it depends on passed and the submitted predictions are those answers.
"""
from __future__ import annotations

from pathlib import Path

from autograder.checks import registry, run_files
from autograder.collecting.collect import OUTPUTS
from autograder.confinement.jobs import JobResult, run_job
from autograder.exports import reasons
from autograder.grading.results import OUT_OF_TIME, Budget, PartResult, Settings
from course_lib import layout
from course_lib.data_files import DataFormatError, read_handed_in_predictions
from course_lib.gpt.evaluation import accuracy
from course_lib.layout import SOLUTIONS_DIR
from course_lib.presets import get_preset

MISMATCH_ALLOWED = 0.01  # share of predictions that may differ from the grader's (other hardware)


def decode_params(folder: Path, settings: Settings, questions: dict[str, list[str]], log: list[str],
            budget: Budget) -> JobResult | None:
    """Answer every question with trusted model code and each run part's params."""
    present = [p for p in run_files.RUN_PARTS if (folder / OUTPUTS / p.params).is_file()]
    if not present:
        return None
    timeout = budget.job_timeout(settings.timeout)
    if timeout <= 0:
        return JobResult(None, "was not started: " + OUT_OF_TIME, "", 0.0)
    preset = get_preset(settings.preset)
    files = {layout.WIKI: settings.data_dir / layout.WIKI,
             "synthesizer_reference.ipynb": SOLUTIONS_DIR / "05_synthesizer.ipynb"}
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
    """Each run part's dev and test splits, scored on the grader's own decoding of the submitted
    params (their accuracy also goes into ``accuracies``)."""
    passed = {p.part for p in code if p.points == p.max_points}
    questions = {split: [e.question for e in examples] for split, examples in gold.items()}
    job = decode_params(folder, settings, questions, log, budget)
    decoded = job.answer if job is not None and isinstance(job.answer, dict) else {}
    results = []
    for bar in settings.bars:
        part = next(p for p in run_files.RUN_PARTS if p.name == bar.part)
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
