"""The audit (``autograder grade --audit K``): retrain sampled students' runs with trusted code.

Decoding ties the predictions to the submitted params; only retraining shows whether those
params are what training on the course's data reaches. For each audited student, and each
run part that earned points (so every check of the code it runs passed), one confined
*retrain* job runs that part's training runs (``course_lib.runs``) with the course's
reference implementation of each part, loaded from ``solutions/`` as the hidden checks load
it: on the grading world's student data, with the graded preset, the training
hyperparameters the student's glue chose (what the probe job read of its Trainer configs,
``autograder.checks.hyperparameters``) and the random seed the student's run logs record (0
when they record none). No file of the student's enters the job, so no cell of theirs can
run there, detect the audit or answer for it. A trusted *decode* job answers the questions
with the params it hands back, and the grader scores those answers itself. A split whose
handed-in accuracy exceeds the retrained one by more than the bar's measured tolerance (the
reference's seed-to-seed spread, ``bars.toml``) is flagged with both numbers, and zeroed when
the instructor asks (``--audit-zero``).

What it shows: that a correct implementation, trained as the student says they trained, reaches
the handed-in accuracy. What it does not: that the student's own code made these params (the
checks tie the code to the reference; a run part scores only when they all pass).

Cost: a student's audit is a whole training of every audited part (see "Auditing runs" in
benchmarks/FINDINGS.md); each audited student is one Dask task, so K audits spread over the
workers like the grading itself.
"""
from __future__ import annotations

import random
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import torch

from autograder.checks import registry, run_files
from autograder.checks.run_chains import CHAINS
from autograder.collecting.collect import OUTPUTS, Collected
from autograder.collecting.run_prints import recorded_seed
from autograder.confinement.jobs import run_job
from autograder.grading.code_parts import PROBE_ENV, data_inputs
from autograder.grading.results import Budget, Settings, SubmissionResult
from autograder.grading.run_parts import decode_params, gold_questions
from course_lib.gpt.evaluation import accuracy
from course_lib.layout import SOLUTIONS_DIR
from course_lib.run_specs import RUNS
from course_lib.seeds import personal_seed

RETRAIN_ANSWER_CAP = 512 * 2 ** 20  # three parts' params, base64 on the wire


@dataclass(frozen=True)
class AuditSettings:
    """Which students the audit retrains, and how."""

    count: int | None  # students to audit (None: every student whose runs earned points)
    timeout: float = 3600.0  # seconds for one student's retraining (every audited part)
    zero: bool = False  # zero a flagged split's points (else only flag it)
    seed: int | None = None  # the sample's random seed (None: fresh)


@dataclass
class Finding:
    """One split of one audited run part."""

    student: str  # the collect step's student id
    split: str  # "<run part>/<dev|test>"
    handed_in: float | None  # accuracy of the submitted params, as graded
    retrained: float | None  # accuracy of the params retrained with the reference (None: failed)
    tolerance: float  # how far handed_in may exceed retrained
    note: str = ""  # why there is no retrained number, for the instructor

    @property
    def flagged(self) -> bool:
        """Handed-in accuracy beyond the retrained one plus tolerance (or nothing retrained)."""
        if self.handed_in is None:
            return False
        return self.retrained is None or self.handed_in - self.retrained > self.tolerance


@dataclass
class AuditResult:
    """One student's audit."""

    student: str  # the collect step's student id
    findings: list[Finding] = field(default_factory=list)  # one per audited split
    log: list[str] = field(default_factory=list)  # for the instructor's log


def _recorded_seeds(folder: Path, runs: list[str], student: str) -> dict[str, int]:
    """The seed each training run's log records (the student's file: only an int is taken); a run
    whose log has none gets the student's personal seed, their notebooks' default."""
    seeds = {}
    for name in runs:
        seed = recorded_seed(folder / OUTPUTS / f"{name}.json")
        seeds[name] = seed if seed is not None else personal_seed(student)
    return seeds


def reference_notebooks() -> list[Path]:
    """The course's reference notebooks whose parts the runs call (02 to 05: a run's ``parts_with``
    loads no later one), as the hidden checks load them."""
    last = max(p.notebook[:2] for p in run_files.RUN_PARTS)
    return sorted(p for p in SOLUTIONS_DIR.glob("[0-9][0-9]_*.ipynb") if p.name[:2] <= last)


def _after(runs: list[str]) -> dict[str, list[str]]:
    """run -> the runs among ``runs`` whose params it reads (it cannot start if one failed)."""
    return {name: [n for n in runs if RUNS[name].reads and RUNS[n].writes == RUNS[name].reads] for name in runs}


def audit_student(collected: Collected, result: SubmissionResult, settings: Settings, gold: dict,
                  audit: AuditSettings) -> AuditResult:
    """Retrain the run parts that earned points with the reference and score the retrained params;
    a finding per split."""
    out = AuditResult(collected.student)
    earned = {label.split("/")[0] for label, value in result.accuracies.items()
              if any(p.part == label and p.points > 0 for p in result.parts)}
    parts = [p for p in run_files.RUN_PARTS if p.name in earned]
    if not parts or collected.folder is None:
        return out
    runs = [name for part in parts for name in CHAINS[part.name]]
    runs = list(dict.fromkeys(runs))
    notebooks = reference_notebooks()
    request = {"notebooks": [p.name for p in notebooks], "cell_seconds": settings.cell_seconds,
               "runs": runs, "after": _after(runs), "preset": settings.preset, "data_dir": "data",
               "seeds": _recorded_seeds(collected.folder, runs, collected.student),
               "hyperparameters": result.hyperparameters,
               "finals": {p.name: CHAINS[p.name][-1] for p in parts}}
    out.log.append(f"audit: retraining with the reference and the glue's hyperparameters {result.hyperparameters}, "
                   f"seeds {request['seeds']}")
    job = run_job("retrain", request, {**{p.name: p for p in notebooks}, **data_inputs(settings)},
                  audit.timeout, settings.limits, settings.confined,
                  env={**PROBE_ENV, "COURSE_PRESET": settings.preset}, answer_cap=RETRAIN_ANSWER_CAP)
    out.log.append(f"audit retrain job: {job.seconds:.1f} s, {job.problem or 'answered'}; its output:\n"
                   f"{job.log[-4000:]}")
    answered = job.answer.get("parts", {}) if isinstance(job.answer, dict) else {}
    with tempfile.TemporaryDirectory(prefix="grader-audit-") as tmp:
        folder = Path(tmp)
        (folder / OUTPUTS).mkdir()
        notes = {}
        for part in parts:
            got = answered.get(part.name)
            state = got.get("state") if isinstance(got, dict) else None
            if isinstance(state, dict) and all(isinstance(v, torch.Tensor) for v in state.values()):
                torch.save(state, folder / OUTPUTS / part.params)
            else:
                error = got.get("error") if isinstance(got, dict) else None
                notes[part.name] = (f"retraining stopped ({error})" if isinstance(error, str)
                                    else f"retraining {job.problem or 'gave no params'}")
        questions = gold_questions(gold)
        decoded = decode_params(folder, settings, questions, out.log, Budget(settings.timeout))
    answers = decoded.answer if decoded is not None and isinstance(decoded.answer, dict) else {}
    for bar in settings.bars:
        if bar.part not in {p.name for p in parts}:
            continue
        label = f"{bar.part}/{bar.split}"
        mine = answers.get(bar.part)
        split_answers = mine.get(bar.split) if isinstance(mine, dict) else None
        retrained = None
        if isinstance(split_answers, list) and len(split_answers) == len(gold[bar.split]):
            correct, total = accuracy(split_answers, [e.place for e in gold[bar.split]])
            retrained = correct / total
        tolerance = bar.audit_tolerance if bar.audit_tolerance is not None else 1.0
        out.findings.append(Finding(collected.student, label, result.accuracies.get(label), retrained, tolerance,
                                    notes.get(bar.part, "" if retrained is not None else "decoding failed")))
    return out


# one audited student's unit: it decodes the retrain job's answer (up to 512 MB of params, base64)
AUDIT_UNIT_MEMORY_MB = 4096


def audit_one(collected: Collected, result: SubmissionResult, settings: Settings, gold: dict,
              audit: AuditSettings) -> AuditResult:
    """One student's audit, in its own unit (``autograder.units``)."""
    return audit_student(collected, result, settings, gold, audit)


def sample(results: list[SubmissionResult], audit: AuditSettings) -> list[int]:
    """Places (in the cohort) of the students to audit: K of those whose runs earned points, those
    with a run above the course's reach (``above_ceiling``) first, the rest at random."""
    eligible = [i for i, r in enumerate(results)
                if any(p.points > 0 for p in r.parts if p.part not in registry.BY_ID)]
    if audit.count is None or audit.count >= len(eligible):
        return eligible
    rng = random.Random(audit.seed) if audit.seed is not None else random.SystemRandom()
    first = [i for i in eligible if results[i].above_ceiling]
    rest = [i for i in eligible if not results[i].above_ceiling]
    if len(first) >= audit.count:
        return sorted(rng.sample(first, audit.count))
    return sorted(first + rng.sample(rest, audit.count - len(first)))


def apply(results: list[SubmissionResult], audits: list[AuditResult], audit: AuditSettings) -> list[Finding]:
    """Zero flagged splits if asked, log each audit in its student's row; the flagged findings."""
    by_student = {r.student: r for r in results}
    flagged = []
    for done in audits:
        result = by_student[done.student]
        result.log += done.log
        for finding in done.findings:
            result.log.append(f"audit {finding.split}: handed in {_pct(finding.handed_in)}, retrained "
                              f"{_pct(finding.retrained)} (tolerance {_pct(finding.tolerance)})"
                              + (f" {finding.note}" if finding.note else "") + (" FLAGGED" if finding.flagged else ""))
            if not finding.flagged:
                continue
            flagged.append(finding)
            if audit.zero:
                for part in result.parts:
                    if part.part == finding.split and part.points > 0:
                        part.points = 0.0
                        part.reason = ("the audit retrained this run with the course's code and your settings: its "
                                       f"params reach {_pct(finding.retrained)}, the ones you handed in "
                                       f"{_pct(finding.handed_in)}; "
                                       "your instructor has the details")
    return flagged


def _pct(value: float | None) -> str:
    """A share as a percentage, or 'no result'."""
    return "no result" if value is None else f"{100 * value:.1f}%"


def run_audits(collected: list[Collected], results: list[SubmissionResult], settings: Settings, gold: dict,
               audit: AuditSettings, cluster, out: Path) -> list:
    """Audit the sampled students (a task each), apply the findings, write audit.csv; the flags."""
    from autograder.collecting.flags import Flag
    from autograder.exports.csv_safe import write_csv
    from autograder.units.limits import UnitLimits
    from autograder.units.stage import Step, run_step

    places = sample(results, audit)
    step = Step("audit", UnitLimits(seconds=audit.timeout + 120, memory_mb=AUDIT_UNIT_MEMORY_MB, answer_mb=64),
                preload=("autograder.grading.audit",))
    finished = {}
    for i, outcome in run_step(step, places, lambda i: (audit_one, (collected[i], results[i], settings, gold, audit)),
                               cluster):
        finished.setdefault(i, outcome.value if outcome.ok else AuditResult(
            results[i].student, log=[f"the audit failed: {outcome.failure}\n{outcome.detail}"]))
    done = [finished[i] for i in places]
    flagged = apply(results, done, audit)
    findings = [f for d in done for f in d.findings]
    write_csv(out / "audit.csv", ["student", "split", "handed_in", "retrained", "tolerance", "flagged", "note"],
              [[f.student, f.split, _pct(f.handed_in), _pct(f.retrained), _pct(f.tolerance),
                "yes" if f.flagged else "no", f.note] for f in findings])
    return [Flag(f.split, f.student, "(the audit)", f"handed-in params reach {_pct(f.handed_in)}, retrained from the "
                                                   f"notebooks {_pct(f.retrained)}") for f in flagged]
