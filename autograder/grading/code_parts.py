"""The checks' half of a grading: probes run confined, their outputs judged in the grader's process.

One confined probe job runs the student's notebooks as Jupyter's Run All does, and every check's
probe on fresh inputs where its test cell stands (``autograder.checks.registry`` names each
check's probe and judge). Nothing the job says about itself counts: a missing or malformed output
is that check's zero, and a probe that did not return becomes a reason from the fixed vocabulary
of ``autograder.exports.reasons``.
"""
from __future__ import annotations

import random
import tempfile
import traceback
from pathlib import Path

from autograder.checks import hyperparameters, registry, run_files
from autograder.collecting.collect import OUTPUTS
from autograder.collecting.safe_files import shown
from autograder.confinement.jobs import JobResult, run_job
from autograder.exports import reasons
from autograder.grading.results import OUT_OF_TIME, Budget, PartResult, Settings
from autograder.grading.run_parts import DecodeFirst, decoded_first
from course_lib import layout
from course_lib.contract import PARTS
from course_lib.notebook.plots_off import OFF_ENV


def data_inputs(settings: Settings) -> dict[str, Path]:
    """The student data files (never the answers), for the probe job's COURSE_DATA_DIR."""
    return {f"data/{name}": settings.data_dir / name for name in layout.STUDENT_DATA_FILES
            if (settings.data_dir / name).is_file()}


# what a student's cells see while the probe job loads their notebooks: grading mode, course data
PROBE_ENV = {"NBGRADER_EXECUTION": "autograde", "COURSE_DATA_DIR": "{job}/data", "COURSE_OUT_DIR": "{tmp}/outputs"}
# Run All in the probe job: training cells read the handed-in run logs and predictions (read-only,
# in outputs/ as nbgrader's kernel has them; no params, no cell reads them); the course's plots
# draw nothing (course_lib.notebook.plots), a student's own draw on Agg
RUN_ALL_ENV = {"COURSE_OUT_DIR": "{job}/" + OUTPUTS, **OFF_ENV, "MPLBACKEND": "Agg"}
LOG_TAIL = 12000  # characters of the probe job's output (every cell's) kept in the instructor's log
# of a probe job's time limit, what its own deadline leaves for starting Python and torch and answering: a tenth,
# within these bounds, and at most half
MIN_MARGIN_SECONDS, ANSWER_MARGIN_SECONDS = 15, 60


def saved_runs(folder: Path) -> dict[str, Path]:
    """The run logs and predictions handed in beside the notebooks, for the training cells."""
    names = sorted(run_files.RUN_LOGS | {name for p in run_files.RUN_PARTS for name in (p.dev, p.test)})
    return {f"{OUTPUTS}/{name}": folder / OUTPUTS / name for name in names if (folder / OUTPUTS / name).is_file()}


def error_reason(error, check: registry.Check, failed: dict, seconds: float | None = None) -> str:
    """A student-facing reason for a probe that did not return, from the fixed vocabulary; ``seconds`` is the
    time the probe job had for all the notebooks."""
    kind = error.get("kind") if isinstance(error, dict) else None
    where = reasons.place(error.get("where")) if isinstance(error, dict) else ""
    if kind == "missing":
        names = [n for n in check.needs if n in (error.get("names") or [])] or list(check.needs)
        return f"not defined in your notebooks: {', '.join(names)}" + _why_missing(names, failed)
    if kind == "not_written":
        return "not written yet (NotImplementedError)" + where
    if kind == "timeout":
        return f"ran past its time limit of {check.seconds} s and was stopped" + where
    if kind == "out_of_time":
        total = f"the {seconds:.0f} s" if seconds else "the time"
        return (f"not checked: {total} the grader gives all your notebooks together ran out before this check "
                "(cells of your own that run long use it up; each cell may take at most the time limit of a cell)")
    if kind == "memory":
        return "ran out of memory" + where
    if kind == "raised":
        return f"your code raised {reasons.error_type(error.get('type'))}{where}"
    return "no result came back for this check"


def _why_missing(names: list[str], failed: dict) -> str:
    """Why the missing names' notebook did not give them: unreadable, or with a failing cell (a notebook not
    handed in is said by ``grade.said_about_notebooks``)."""
    said = []
    for notebook in sorted({f"{PARTS[n].notebook}.ipynb" for n in names if n in PARTS}):
        info = failed.get(notebook)
        if isinstance(info, dict) and info.get("kind") == "unreadable":
            said.append(f"{notebook} could not be read as a notebook")
        elif isinstance(info, dict) and info.get("kind") == "cell":
            said.append(f"{notebook}: a cell raised {reasons.error_type(info.get('type'))}"
                        f"{reasons.place(info.get('where'))}")
    return f" ({'; '.join(said)})" if said else ""


def notebooks_seconds(timeout: float) -> float:
    """The probe job's own deadline for running the notebooks and their checks, inside its ``timeout``: the
    rest starts Python and torch and sends the answer back, so a deadline that comes keeps what was checked."""
    return max(1.0, timeout - min(ANSWER_MARGIN_SECONDS, max(MIN_MARGIN_SECONDS, 0.1 * timeout), 0.5 * timeout))


def grade_code(notebooks: list[Path], settings: Settings, log: list[str], seed: int, budget: Budget,
               chosen: dict[str, dict] | None = None, first: DecodeFirst | None = None) -> list[PartResult]:
    """Probe every check in one confined job on inputs drawn from ``seed``; judge each output here.
    The training hyperparameters the glue chose (``autograder.checks.hyperparameters``, from the
    glue checks that passed) go into ``chosen``, for the audit. ``first``: the decode, run first in
    the same job (its result goes into ``first.result``)."""
    timeout = budget.job_timeout(settings.timeout)
    if timeout <= 0:
        if first is not None:
            first.result = JobResult(None, "was not started: " + OUT_OF_TIME, "", 0.0)
        return [PartResult(c.grade_id, 0.0, c.points, OUT_OF_TIME) for c in registry.CHECKS]
    rng = random.Random(seed)
    seconds = notebooks_seconds(timeout)
    with tempfile.TemporaryDirectory(prefix="grader-inputs-") as tmp:
        inputs, files = registry.prepare(rng, tmp)
        request = {"notebooks": [p.name for p in notebooks], "cell_seconds": settings.cell_seconds, "seconds": seconds,
                   "checks": [{"grade_id": c.grade_id, "notebook": c.notebook, "needs": list(c.needs),
                               "probe": c.probe, "seconds": c.seconds,
                               "inputs": registry.sent_inputs(c, inputs[c.grade_id])} for c in registry.CHECKS]}
        given = {**{p.name: p for p in notebooks}, **saved_runs(notebooks[0].parent), **files, **data_inputs(settings)}
        if first is not None:  # the decode's time comes before the notebooks' own deadline starts
            given.update(first.files)
            timeout = budget.job_timeout(timeout + first.seconds)
        job = run_job("probe", request, given, timeout, settings.limits, settings.confined,
                      env={**PROBE_ENV, **RUN_ALL_ENV, "COURSE_PRESET": settings.preset},
                      first=None if first is None else (first.request, first.seconds))
    log.append(f"probe job: {job.seconds:.1f} s, {job.problem or 'answered'}; its output:\n{job.log[-LOG_TAIL:]}")
    if first is not None:
        first.result = decoded_first(job, first, settings, log)
    if job.problem:
        return [PartResult(c.grade_id, 0.0, c.points, f"your notebooks {job.problem}") for c in registry.CHECKS]
    answer = job.answer if isinstance(job.answer, dict) else {}
    checks = answer.get("checks") if isinstance(answer.get("checks"), dict) else {}
    failed = answer.get("failed_notebooks") if isinstance(answer.get("failed_notebooks"), dict) else {}
    late = answer.get("out_of_time")
    late = [n for n in late if isinstance(n, str)][:len(notebooks)] if isinstance(late, list) else []
    if late:
        log.append(f"out of time ({seconds:.0f} s) in: {', '.join(shown(n) for n in late)}")
    results = [_judged(check, inputs[check.grade_id], checks.get(check.grade_id), failed, seconds, log)
               for check in registry.CHECKS]
    if chosen is not None:
        passed = {r.part for r in results if r.points == r.max_points}
        stages, said = hyperparameters.from_outputs({g: checks[g].get("output") for g in hyperparameters.STAGES
                                                     if g in passed and isinstance(checks.get(g), dict)})
        chosen.update(stages)
        log += said
    return results


def _judged(check: registry.Check, inputs: dict, got, failed: dict, seconds: float, log: list[str]) -> PartResult:
    """One check's points from its probe's raw output (or the error that stopped the probe)."""
    if not isinstance(got, dict) or ("output" not in got and "error" not in got):
        return PartResult(check.grade_id, 0.0, check.points, "no result came back for this check")
    if "error" in got:
        why = error_reason(got["error"], check, failed, seconds)
        return PartResult(check.grade_id, 0.0, check.points, reasons.bounded(why))
    try:
        problems = check.judge(inputs, got["output"])
    except Exception:  # a malformed output is the submission's doing, not a grader crash
        log.append(f"{check.grade_id}: the judge could not read the output:\n{traceback.format_exc()[-2000:]}")
        problems = ["the check's outputs were not of the expected form"]
    passed = not problems
    return PartResult(check.grade_id, check.points if passed else 0.0, check.points,
                      "passed" if passed else reasons.bounded("; ".join(problems)))
