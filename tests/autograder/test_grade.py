"""The score of record on an honest cohort: full marks for the reference, zero with reasons for what is missing."""
from __future__ import annotations

import csv
import json
import shutil

import pytest

from autograder import confinement, registry
from autograder.__main__ import main
from course_lib.runs import RUNS, run

from conftest import REPO, SOLUTIONS

pytestmark = [pytest.mark.timeout(900),
              pytest.mark.skipif(confinement.status() is not None, reason=f"no confinement: {confinement.status()}")]

RELEASE = REPO / "notebooks" / "a5"


@pytest.fixture(scope="module")
def submitted(tmp_path_factory, world_dir, reference):
    """The reference with smoke runs, its copy, a hand-edited prediction, the blank release, and a corrupt notebook."""
    root = tmp_path_factory.mktemp("submitted")
    good = root / "alice" / "a5"
    shutil.copytree(SOLUTIONS, good)
    for name in RUNS:
        run(name, reference, preset="smoke", data_dir=world_dir, out_dir=good / "outputs", progress=False)
    shutil.copytree(good, root / "erin" / "a5")  # the same files as alice: flagged, not penalised
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
def graded(submitted, tmp_path_factory, world_dir, world_answers):
    out = tmp_path_factory.mktemp("grades")
    assert main(["grade", str(submitted), "--out", str(out), "--data-dir", str(world_dir), "--answers",
                 str(world_answers), "--preset", "smoke", "--gradescope", "--timeout", "240"]) == 0
    with open(out / "grades.csv") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    reasons = json.loads((out / "reasons.json").read_text())
    return out, rows, reasons


def test_every_autograded_cell_and_run_split_is_scored(graded):
    """Is the score out of every autograded nbgrader point plus every run split, one column each?"""
    _, rows, _ = graded
    assert float(rows["alice"]["max_score"]) == registry.code_points() + 24
    assert {c.grade_id for c in registry.CHECKS} <= set(rows["alice"])


def test_reference_gets_full_marks(graded):
    """Does the reference submission get every point, and its copy too?"""
    _, rows, reasons = graded
    for student in ("alice", "erin"):
        assert float(rows[student]["score"]) == float(rows[student]["max_score"]), reasons[student]


def test_blank_release_gets_zero_with_reasons(graded):
    """Does the blank release score zero, each part saying what is missing and where?"""
    _, rows, reasons = graded
    assert float(rows["bob"]["score"]) == 0
    by_part = {p["part"]: p["reason"] for p in reasons["bob"]}
    assert by_part["03-span-public"].startswith("not written yet") and "03_span_corruption.ipynb cell" in \
        by_part["03-span-public"]
    assert "has to pass first" in by_part["vanilla_pretrain/dev"]


def test_hand_edited_predictions_are_caught(graded):
    """Do predictions that the submitted params do not produce get zero for that part, with the reason?"""
    _, rows, reasons = graded
    part = next(p for p in reasons["carol"] if p["part"] == "vanilla_pretrain/dev")
    assert part["points"] == 0 and "must come from the submitted params" in part["reason"]
    assert float(rows["carol"]["score"]) == float(rows["alice"]["score"]) - part["max_points"]


def test_corrupt_notebook_gets_its_row(graded):
    """Does a corrupt notebook get a row with zero and a readable reason instead of stopping the batch?"""
    _, rows, reasons = graded
    assert float(rows["dave"]["score"]) == 0
    glue = next(p for p in reasons["dave"] if p["part"] == "02-glue-config")
    assert "02_finetune_without_pretraining.ipynb could not be loaded" in glue["reason"], glue


def test_identical_submissions_are_flagged_with_both_names(graded):
    """Are byte-identical params handed in by two students listed for the instructor with both names?"""
    out, _, _ = graded
    with open(out / "flags.csv") as f:
        flags = list(csv.DictReader(f))
    assert any(r["file"] == "vanilla.finetune.params" and {r["student"], r["other_student"]} == {"alice", "erin"}
               for r in flags)


def test_gradescope_results_written(graded):
    """Is a Gradescope results.json with one test per check and run split written for each student?"""
    out, _, _ = graded
    result = json.loads((out / "gradescope" / "alice" / "results.json").read_text())
    assert len(result["tests"]) == len(registry.CHECKS) + 6


def test_refuses_to_grade_unconfined(monkeypatch, tmp_path, submitted, world_dir, world_answers, capsys):
    """Without confinement, does the grader refuse unless the instructor passes --unconfined?"""
    monkeypatch.setattr(confinement, "status", lambda: "bwrap is not installed (apt-get install bubblewrap)")
    code = main(["grade", str(submitted), "--out", str(tmp_path), "--data-dir", str(world_dir), "--answers",
                 str(world_answers), "--preset", "smoke"])
    assert code == 2 and "refusing to grade" in capsys.readouterr().err
    assert not (tmp_path / "grades.csv").exists()
