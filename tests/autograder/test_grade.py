"""Grading a submitted/ folder: the reference gets full marks, bad submissions get zero with a reason."""
from __future__ import annotations

import csv
import json
import shutil

import pytest

from autograder.__main__ import main
from autograder.grade import CODE_POINTS
from course_lib.runs import RUNS, run

from conftest import REPO, SOLUTIONS

# grading the reference submission (smoke training runs, sandboxed probes) takes ~120 s on a
# quiet 2-core machine; a slower or busier CI machine needs room
pytestmark = pytest.mark.timeout(900)

RELEASE = REPO / "notebooks" / "a5"


@pytest.fixture(scope="module")
def submitted(tmp_path_factory, world_dir, reference):
    """Three students: the reference solutions with smoke runs, the blank release, and a corrupt notebook."""
    root = tmp_path_factory.mktemp("submitted")
    good = root / "alice" / "a5"
    shutil.copytree(SOLUTIONS, good)
    for name in RUNS:
        run(name, reference, preset="smoke", data_dir=world_dir, out_dir=good / "outputs", progress=False)
    # a student who edited a prediction by hand
    tampered = root / "carol" / "a5"
    shutil.copytree(good, tampered)
    preds = tampered / "outputs" / "vanilla.pretrain.dev.predictions"
    preds.write_text("".join("Atlantis\n" for _ in preds.read_text().splitlines()))
    shutil.copytree(RELEASE, root / "bob" / "a5")
    broken = root / "dave" / "a5"
    broken.mkdir(parents=True)
    (broken / "02_finetune_without_pretraining.ipynb").write_text("{ this is not json")
    return root


@pytest.fixture(scope="module")
def graded(submitted, tmp_path_factory, world_dir):
    out = tmp_path_factory.mktemp("grades")
    assert main(["grade", str(submitted), "--out", str(out), "--data-dir", str(world_dir), "--preset", "smoke",
                 "--gradescope", "--timeout", "240"]) == 0
    with open(out / "grades.csv") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    reasons = json.loads((out / "reasons.json").read_text())
    return out, rows, reasons


def test_reference_gets_full_marks(graded):
    """Does the reference submission get every point?"""
    _, rows, reasons = graded
    assert float(rows["alice"]["score"]) == float(rows["alice"]["max_score"]), reasons["alice"]


def test_blank_release_gets_zero_with_reasons(graded):
    """Does the blank release score zero, each part saying what is missing?"""
    _, rows, reasons = graded
    assert float(rows["bob"]["score"]) == 0
    assert any("not written yet" in p["reason"] for p in reasons["bob"])
    assert any("not in the submission" in p["reason"] for p in reasons["bob"])


def test_hand_edited_predictions_are_caught(graded):
    """Do predictions that the submitted params do not produce get zero for that part, with the reason?"""
    _, rows, reasons = graded
    part = next(p for p in reasons["carol"] if p["part"] == "vanilla_pretrain/dev")
    assert part["points"] == 0 and "differ from what the submitted params produce" in part["reason"]
    assert float(rows["carol"]["score"]) == float(rows["alice"]["score"]) - part["max_points"]


def test_corrupt_notebook_gets_its_row(graded):
    """Does a corrupt notebook get a row with zero and a readable reason instead of stopping the batch?"""
    _, rows, reasons = graded
    assert float(rows["dave"]["score"]) == 0
    assert "could not be loaded" in reasons["dave"][0]["reason"]


def test_gradescope_results_written(graded):
    """Is a Gradescope results.json with one test per part written for each student?"""
    out, _, _ = graded
    result = json.loads((out / "gradescope" / "alice" / "results.json").read_text())
    assert len(result["tests"]) == len(CODE_POINTS) + 6
