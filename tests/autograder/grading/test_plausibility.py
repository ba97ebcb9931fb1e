"""Runs above what the course's code reaches: flagged for every student without retraining, and audited first."""
from __future__ import annotations

import csv
import shutil

import pytest
from conftest import SOLUTIONS

from autograder import confinement
from autograder.__main__ import main
from autograder.checks import run_files
from autograder.grading.audit import AuditSettings, sample
from autograder.grading.plausibility import COURSE_REACH
from autograder.grading.results import PartResult, SubmissionResult

CEILING = 0.05  # the smoke preset's ceiling on every split (bars.toml)


def _flags(out) -> list[dict]:
    with open(out / "flags.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.timeout(900)
@pytest.mark.skipif(confinement.status() is not None, reason=f"no confinement: {confinement.status()}")
def test_a_run_far_above_the_ceiling_is_flagged_without_the_audit(tmp_path, world_dir, world_answers,
                                                                  personal_smoke_runs, cheat_runs):
    """Is a model trained on the test questions, graded without --audit, flagged with its accuracy and the ceiling,
    its honest classmate not, and is the flag kept when a re-run reuses the kept results?"""
    submitted = tmp_path / "submitted"
    for student, runs in (("honest", personal_smoke_runs("honest")), ("trained_on_test", cheat_runs)):
        shutil.copytree(SOLUTIONS, submitted / student / "a5")
        shutil.copytree(runs, submitted / student / "a5" / "outputs")
    command = ["grade", str(submitted), "--out", str(tmp_path / "grades"), "--data-dir", str(world_dir),
               "--answers", str(world_answers), "--preset", "smoke", "--workers", "1"]
    for _ in range(2):  # the second grading reuses both kept results
        assert main(command) == 0
        reach = [f for f in _flags(tmp_path / "grades") if f["other_student"] == COURSE_REACH]
        assert {(f["student"], f["file"]) for f in reach} >= {("trained_on_test", "vanilla_pretrain/test")}
        assert {f["student"] for f in reach} == {"trained_on_test"}
        test_flag = next(f for f in reach if f["file"] == "vanilla_pretrain/test")
        handed_in = float(test_flag["why"].split("reach ")[1].split("%")[0])
        assert handed_in > 100 * CEILING + 20 and f"{100 * CEILING:.1f}%" in test_flag["why"]


def _result(student: str, above: list[str]) -> SubmissionResult:
    """A student whose runs all earned points, ``above`` of them above their ceiling."""
    parts = [PartResult(f"{p.name}/{s}", 1.0, 1.0, "") for p in run_files.RUN_PARTS for s in ("dev", "test")]
    return SubmissionResult(student, parts, above_ceiling=above)


def test_the_audit_samples_runs_above_the_ceiling_first():
    """Does the audit's sampler take every student with a run above the ceiling before random ones, and fill the
    rest at random?"""
    results = [_result(f"s{i}", ["vanilla_pretrain/test"] if i in (3, 7) else []) for i in range(20)]
    for seed in range(30):
        assert sample(results, AuditSettings(count=1, seed=seed))[0] in (3, 7)
        chosen = sample(results, AuditSettings(count=4, seed=seed))
        assert {3, 7} <= set(chosen) and len(chosen) == 4
    assert len({tuple(sample(results, AuditSettings(count=4, seed=seed))) for seed in range(30)}) > 1
