"""Trusted scores written into a real nbgrader gradebook (sqlite, built with nbgrader's own API)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.exports.gradebook import write_trusted_scores
from autograder.exports.gradebook_stamp import stamp_in_process

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's add_submission

NB = "03_span_corruption"


@pytest.fixture(scope="module")
def template_db(tmp_path_factory) -> Path:
    """A gradebook with a5 (one notebook: two test cells, one manually graded answer) and two submissions."""
    path = tmp_path_factory.mktemp("gradebook") / "gradebook.db"
    url = f"sqlite:///{path}"
    stamp_in_process()  # (built once, copied per test)
    with Gradebook(url) as gb:
        gb.add_assignment("a5")
        gb.add_notebook(NB, "a5")
        gb.add_grade_cell("03-span-public", NB, "a5", max_score=5, cell_type="code")
        gb.add_grade_cell("03-span-hidden", NB, "a5", max_score=15, cell_type="code")
        gb.add_grade_cell("03-written", NB, "a5", max_score=4, cell_type="markdown")
        gb.add_solution_cell("03-written", NB, "a5")
        for student in ("alice", "bob", "carol"):
            gb.add_student(student)
        for student in ("alice", "bob"):
            gb.add_submission("a5", student)
            for cell, score in (("03-span-public", 5), ("03-span-hidden", 15)):  # what the kernel claimed
                gb.find_grade(cell, NB, "a5", student).auto_score = score
            gb.find_grade("03-written", NB, "a5", student).manual_score = 3
        gb.db.commit()
    return path


@pytest.fixture
def db_url(template_db: Path, tmp_path: Path) -> str:
    """A fresh copy of the template gradebook."""
    copy = tmp_path / "gradebook.db"
    shutil.copyfile(template_db, copy)
    return f"sqlite:///{copy}"


def _scores(url: str, student: str) -> tuple[float, dict[str, float]]:
    with Gradebook(url) as gb:
        cells = {name: gb.find_grade(name, NB, "a5", student).score
                 for name in ("03-span-public", "03-span-hidden", "03-written")}
        return gb.find_submission("a5", student).score, cells


def test_trusted_points_replace_the_kernels_scores(db_url):
    """Do the trusted points become each autograded cell's score and the submission's total?"""
    notes = write_trusted_scores(db_url, "a5", {"alice": {(NB, "03-span-public"): 5, (NB, "03-span-hidden"): 0},
                                                "bob": {(NB, "03-span-public"): 2.5, (NB, "03-span-hidden"): 15}})
    assert notes == []
    assert _scores(db_url, "alice") == (8, {"03-span-public": 5, "03-span-hidden": 0, "03-written": 3})
    assert _scores(db_url, "bob") == (20.5, {"03-span-public": 2.5, "03-span-hidden": 15, "03-written": 3})


def test_manually_graded_cell_keeps_its_manual_score(db_url):
    """Is a trusted score for a manually graded cell refused, its manual score kept, with a note?"""
    notes = write_trusted_scores(db_url, "a5", {"alice": {(NB, "03-span-public"): 5, (NB, "03-span-hidden"): 15,
                                                          (NB, "03-written"): 0}})
    assert _scores(db_url, "alice")[1]["03-written"] == 3
    assert any("03-written" in n and "not an autograded cell" in n for n in notes), notes


def test_unknown_student_or_cell_gives_a_note_not_an_exception(db_url):
    """Does an unknown student, notebook or cell give a note while the rest is still written?"""
    notes = write_trusted_scores(db_url, "a5", {"mallory": {(NB, "03-span-public"): 5},
                                                "alice": {(NB, "03-span-public"): 1, (NB, "03-span-hidden"): 2,
                                                          (NB, "no-such-cell"): 1, ("99_nothing", "x"): 1}})
    assert any(n.startswith("mallory:") and "not a student" in n for n in notes), notes
    assert any("no-such-cell" in n for n in notes) and any("99_nothing/x" in n for n in notes), notes
    assert _scores(db_url, "alice")[0] == 1 + 2 + 3


def test_student_without_submission_gets_one(db_url):
    """Does a gradebook student with no nbgrader submission get one holding the trusted scores?"""
    notes = write_trusted_scores(db_url, "a5", {"carol": {(NB, "03-span-public"): 5, (NB, "03-span-hidden"): 15}})
    assert notes == []
    assert _scores(db_url, "carol") == (20, {"03-span-public": 5, "03-span-hidden": 15, "03-written": 0})


def test_missing_trusted_score_and_out_of_range_points_are_noted(db_url):
    """Is a cell with no trusted score noted (kernel's score kept), and are impossible points clipped?"""
    notes = write_trusted_scores(db_url, "a5", {"bob": {(NB, "03-span-public"): 99}})
    assert any("clipped" in n for n in notes) and any("no trusted score for" in n for n in notes), notes
    assert _scores(db_url, "bob")[1]["03-span-public"] == 5


def test_unknown_assignment_is_a_note(db_url):
    """Does an assignment missing from the gradebook give a note instead of an exception?"""
    assert "not in the gradebook" in write_trusted_scores(db_url, "a9", {"alice": {}})[0]
