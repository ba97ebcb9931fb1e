"""The grade command: its guard against grading unconfined, replaying a grading from its seed, a student's time budget.

The score of record on whole cohorts (references, blank, partial, hand-edited predictions,
corrupt notebooks, flags, Gradescope files) is tested in test_adversarial.py.
"""
from __future__ import annotations

import json
import shutil
import time

import nbformat
import pytest
from conftest import REPO, SOLUTIONS

from autograder import confinement
from autograder.__main__ import main

RELEASE = REPO / "notebooks" / "a5"


def test_refuses_to_grade_unconfined(monkeypatch, tmp_path, world_dir, world_answers, capsys):
    """Without confinement, does the grader refuse unless the instructor passes --unconfined?"""
    submitted = tmp_path / "submitted"
    shutil.copytree(RELEASE, submitted / "bob" / "a5")
    monkeypatch.setattr(confinement, "status", lambda: "bwrap is not installed (apt-get install bubblewrap)")
    code = main(["grade", str(submitted), "--out", str(tmp_path / "grades"), "--data-dir", str(world_dir),
                 "--answers", str(world_answers), "--preset", "smoke"])
    assert code == 2 and "refusing to grade" in capsys.readouterr().err
    assert not (tmp_path / "grades" / "grades.csv").exists()


def _grade(submitted, out, world_dir, world_answers, *options) -> int:
    return main(["grade", str(submitted), "--out", str(out), "--data-dir", str(world_dir), "--answers",
                 str(world_answers), "--preset", "smoke", "--workers", "1", *options])


@pytest.mark.skipif(confinement.status() is not None, reason="no confinement")
def test_a_grading_replays_from_its_recorded_seed(tmp_path, world_dir, world_answers):
    """Does a student's result record its grading seed, and does grading again with --seed give the very same
    points and reasons (the same fresh inputs)?"""
    submitted = tmp_path / "submitted"
    partial = submitted / "ben" / "a5"
    shutil.copytree(RELEASE, partial)
    shutil.copy(SOLUTIONS / "03_span_corruption.ipynb", partial)  # some parts right, the rest with reasons
    (partial / "07_attention_exploration.ipynb").write_text(  # twins judged on fresh seeds, some of them wrong
        (SOLUTIONS / "07_attention_exploration.ipynb").read_text().replace("20.0 * keys[2]", "2.0 * keys[2]"))
    assert _grade(submitted, tmp_path / "first", world_dir, world_answers) == 0
    for student in ("ben",):
        kept = json.loads((tmp_path / "first" / "results" / f"{student}.json").read_text())
        assert isinstance(kept["seed"], int)
        assert _grade(submitted, tmp_path / student, world_dir, world_answers, "--seed", str(kept["seed"]),
                      "--student", student) == 0
        again = json.loads((tmp_path / student / "reasons.json").read_text())
        assert again[student] == json.loads((tmp_path / "first" / "reasons.json").read_text())[student]


@pytest.mark.skipif(confinement.status() is not None, reason="no confinement")
def test_a_submission_that_sleeps_costs_no_more_than_its_time_budget(tmp_path, world_dir, world_answers):
    """Does a notebook whose cells sleep get stopped at the per-cell limit and the student's total budget, with
    reasons, in little more than that budget?"""
    folder = tmp_path / "submitted" / "sleeper" / "a5"
    shutil.copytree(SOLUTIONS, folder)
    for name, grade_id in (("02_finetune_without_pretraining.ipynb", "02-glue"), ("05_synthesizer.ipynb",
                                                                                    "05-synthesizer")):
        nb = nbformat.read(folder / name, as_version=4)
        answer = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
        answer.source = "import time\nwhile True:\n    time.sleep(1)\n" + answer.source  # never gets to define
        nbformat.write(nb, folder / name)
    start = time.monotonic()
    assert _grade(tmp_path / "submitted", tmp_path / "grades", world_dir, world_answers, "--cell-timeout", "3",
                  "--student-timeout", "12", "--timeout", "60") == 0
    assert time.monotonic() - start < 40
    reasons = json.loads((tmp_path / "grades" / "reasons.json").read_text())["sleeper"]
    assert all(p["reason"] for p in reasons if p["points"] < p["max_points"])
    glue = next(p for p in reasons if p["part"] == "02-glue-config")
    assert glue["points"] == 0 and ("CellTimeout" in glue["reason"] or "time limit" in glue["reason"]), glue


@pytest.mark.skipif(confinement.status() is not None, reason="no confinement")
def test_a_deleted_notebook_is_said_for_every_part_it_holds_and_a_renamed_copy_is_graded_in_its_place(
        tmp_path, world_dir, world_answers):
    """With 05 deleted and 03 handed in only as a browser's renamed download, does every part 05 holds (its checks,
    the synthesizer run's splits) say "05_synthesizer.ipynb was not handed in", and do 03's checks pass on the
    renamed copy, their reasons saying so in the assignment's own names only?"""
    folder = tmp_path / "submitted" / "dana" / "a5"
    shutil.copytree(SOLUTIONS, folder)
    (folder / "05_synthesizer.ipynb").unlink()
    (folder / "03_span_corruption.ipynb").rename(folder / "03_span_corruption (1).ipynb")
    assert _grade(tmp_path / "submitted", tmp_path / "grades", world_dir, world_answers) == 0
    reasons = {p["part"]: p for p in json.loads((tmp_path / "grades" / "reasons.json").read_text())["dana"]}
    held = [p for part, p in reasons.items() if part.startswith(("05-", "synthesizer_pretrain/"))]
    assert len(held) == 5 and {p["reason"] for p in held} == {"05_synthesizer.ipynb was not handed in"}
    span = [p for part, p in reasons.items() if part.startswith("03-")]
    assert span and all(p["points"] == p["max_points"] for p in span), span
    assert all("03_span_corruption.ipynb was handed in under another name" in p["reason"] and "(1)" not in p["reason"]
               for p in span)
