"""The grade command's guard: no grading without confinement unless the instructor accepts the risk.

The score of record on whole cohorts (references, blank, partial, hand-edited predictions,
corrupt notebooks, flags, Gradescope files) is tested in test_adversarial.py.
"""
from __future__ import annotations

import shutil

from autograder import confinement
from autograder.__main__ import main

from conftest import REPO

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
