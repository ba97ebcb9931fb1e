"""The nbgrader report's reasons for lost points, from a hand-built course folder and gradebook (no autograde run)."""
from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.exports.gradebook_stamp import stamp_in_process
from autograder.exports.report import explain

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's add_submission
NB = "03_span_corruption"
CELLS = ("03-span-public", "03-span-hidden")


def _notebook(grade_ids=CELLS, executed: bool = True, error_in: str | None = None, ename="AssertionError",
              evalue="wrong mask"):
    cells = [nbformat.v4.new_code_cell("x = 1")]
    for grade_id in grade_ids:
        cell = nbformat.v4.new_code_cell(f"check('{grade_id}')")
        cell.metadata["nbgrader"] = {"grade": True, "grade_id": grade_id, "points": 5, "locked": True,
                                     "solution": False, "schema_version": 3}
        cells.append(cell)
    if executed:
        for count, cell in enumerate(cells, 1):
            cell.execution_count = count
            if error_in is not None and cell.metadata.get("nbgrader", {}).get("grade_id") == error_in:
                cell.outputs = [nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[])]
    return nbformat.v4.new_notebook(cells=cells)


# student -> (the collect step's copy of the notebook, or raw text, or None for absent; autograded notebook or None)
STUDENTS = {
    "missing": (None, None),
    "corrupt": ('{"cells": [ not JSON', None),
    "not_graded": (_notebook(), None),
    "not_run": (_notebook(), _notebook(executed=False)),
    "deleted": (_notebook(CELLS[:1]), _notebook(CELLS[:1])),
    "failing": (_notebook(), _notebook(error_in="03-span-hidden")),
    "formula": (_notebook(), _notebook(error_in="03-span-hidden", ename='=HYPERLINK("http://x")', evalue="x" * 5000)),
    "earlier_error": (_notebook(), _notebook(error_in="03-span-hidden")),
}
STUDENTS["earlier_error"][1].cells[0].outputs = [nbformat.v4.new_output(
    "error", ename="ValueError", evalue="Grader notice: regrade approved, see http://evil.example/x", traceback=[])]


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    course = tmp_path_factory.mktemp("course")
    stamp_in_process()  # as the course's nbgrader processes do: no `alembic` command per gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.add_assignment("a5")
        gb.add_notebook(NB, "a5")
        for grade_id in CELLS:
            gb.add_grade_cell(grade_id, NB, "a5", max_score=5, cell_type="code")
        for student in STUDENTS:
            gb.add_student(student)
            gb.add_submission("a5", student)
            for grade_id in CELLS:
                grade = gb.find_grade(grade_id, NB, "a5", student)
                # present and passing
                passed = student in ("failing", "deleted", "formula", "earlier_error") and grade_id == CELLS[0]
                grade.auto_score, grade.needs_manual_grade = (5 if passed else 0), False
        gb.db.commit()
    for student, (submitted, autograded) in STUDENTS.items():
        for kind, content in (("collected", submitted), ("autograded", autograded)):
            folder = course / kind / student / "a5"
            folder.mkdir(parents=True)
            if isinstance(content, str):
                (folder / f"{NB}.ipynb").write_text(content)
            elif content is not None:
                nbformat.write(content, folder / f"{NB}.ipynb")
    return course


@pytest.fixture(scope="module")
def reasons(course) -> dict[str, list[str]]:
    _, found = explain(course, "a5")
    by_student: dict[str, list[str]] = {}
    for r in found:
        by_student.setdefault(r.student, []).append(r.reason)
    return by_student


@pytest.mark.parametrize("student, words", [
    ("missing", "notebook not in the submission"),
    ("corrupt", "notebook could not be read as a notebook"),
    ("not_graded", "notebook was not graded"),
    ("not_run", "notebook was not graded"),
])
def test_whole_notebook_problem_is_named_for_every_cell(reasons, student, words):
    """Does each cell of a notebook that could not be graded get the notebook's real problem, not 'deleted'?"""
    assert len(reasons[student]) == len(CELLS) and all(words in r for r in reasons[student]), reasons[student]
    assert not any("deleted" in r for r in reasons[student])


def test_deleted_only_when_the_graded_notebook_lacks_the_cell(reasons):
    """Is a cell reported deleted only when its notebook was graded and that grade_id is absent?"""
    assert reasons["deleted"] == ["this test cell was deleted from the submission, so it could not run"]


def test_failing_cell_gets_its_error(reasons):
    """Does a test cell that ran and failed get its own error as the reason?"""
    assert reasons["failing"] == ["AssertionError: wrong mask"]


def test_a_formula_in_an_exception_reaches_the_csv_as_text_and_bounded(course, tmp_path):
    """Is an exception class named like a spreadsheet formula shown as 'an error', its message cut short, and does
    no cell of nbgrader_reasons.csv start a formula?"""
    import csv

    from autograder.exports.report import write_report

    _, found = explain(course, "a5")
    [mine] = [r.reason for r in found if r.student == "formula"]
    assert mine.startswith("an error: ") and len(mine) <= 300 and "HYPERLINK" not in mine
    path = write_report(found, tmp_path / "nbgrader_reasons.csv")
    with open(path, newline="", encoding="utf-8") as f:
        assert not any(cell.startswith(("=", "+", "-", "@")) for row in csv.reader(f) for cell in row)


@pytest.mark.timeout(30)
def test_a_fifo_in_submitted_is_never_read(course):
    """Does a FIFO named like a notebook in submitted/ (the student's raw folder) leave the report unblocked?"""
    raw = course / "submitted" / "failing" / "a5"
    raw.mkdir(parents=True, exist_ok=True)
    os.mkfifo(raw / f"{NB}.ipynb")
    try:
        _, found = explain(course, "a5")
    finally:
        (raw / f"{NB}.ipynb").unlink()
    assert [r.reason for r in found if r.student == "failing"] == ["AssertionError: wrong mask"]


def test_an_earlier_cells_error_is_named_by_its_type_only(reasons):
    """Does a reason name the type of the student's failing cell above a test, never the text its message holds?"""
    assert reasons["earlier_error"] == ["AssertionError: wrong mask (an earlier cell failed first: ValueError)"]


def test_an_assignment_not_in_the_gradebook_is_one_line(course, capsys):
    """Does `autograder report --assignment b5` on a gradebook without b5 say so in one line, not a traceback?"""
    from autograder.__main__ import main

    assert main(["report", str(course), "--assignment", "b5"]) == 2
    err = capsys.readouterr().err
    assert err == "error: no assignment 'b5' in the course's gradebook\n", err


def test_the_reports_summary_names_whole_notebook_problems_once():
    """Does the report's summary give a student one line per notebook missing or unreadable (however many cells it
    cost), the unreadable and the unexplained needing the instructor, the missing not?"""
    from autograder.exports.report import NOT_GRADED, CellReason, report_problems

    reasons = [CellReason("ada", "05_synthesizer", g, 0, 5, "notebook not in the submission") for g in ("a", "b")]
    reasons += [CellReason("bo", "03_span_corruption", "x", 0, 5, "notebook could not be read as a notebook (BOM)"),
                CellReason("cy", "*", "*", 0, 96, "could not be explained within 30 s"),
                CellReason("dee", "02_finetune_without_pretraining", "y", 0, 2, f"notebook {NOT_GRADED}"),
                CellReason("ed", "03_span_corruption", "z", 0, 5, "ValueError: wrong shape")]
    found = [(p.student, p.why.split(":")[0], p.act) for p in report_problems(reasons)]
    assert found == [("ada", "05_synthesizer", False), ("bo", "03_span_corruption", True), ("cy", "could not be "
                     "explained within 30 s", True), ("dee", "02_finetune_without_pretraining", True)]
