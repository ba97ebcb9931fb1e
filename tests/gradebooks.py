"""Course gradebooks for tests: the assignment's cells saved by nbgrader's own SaveCells, and what the cells hold."""
from __future__ import annotations

import nbformat
from nbgrader.api import Gradebook
from nbgrader.preprocessors import SaveCells

from autograder.exports.gradebook_stamp import stamp_in_process
from course_lib.layout import ASSIGNMENT, SOLUTIONS_DIR


def course_gradebook(url: str, students: list[str]) -> str:
    """A gradebook as `nbgrader generate_assignment` leaves it (every notebook's grade and solution cells), plus
    ``students``; returns ``url``."""
    stamp_in_process()  # as the course's nbgrader processes do: no `alembic` command per gradebook
    with Gradebook(url) as gb:
        gb.add_assignment(ASSIGNMENT)
        for student in students:
            gb.add_student(student)
    for path in sorted(SOLUTIONS_DIR.glob("*.ipynb")):
        resources = {"nbgrader": {"db_url": url, "assignment": ASSIGNMENT, "notebook": path.stem}}
        SaveCells().preprocess(nbformat.read(path, as_version=4), resources)
    return url


def cell_scores(url: str) -> dict[tuple[str, str, str], float | None]:
    """(student, notebook, grade_id) -> the cell's score, for every grade row in the gradebook."""
    with Gradebook(url) as gb:
        return {(s.student.id, nb.name, g.name): g.score
                for s in gb.find_assignment(ASSIGNMENT).submissions for nb in s.notebooks for g in nb.grades}


def late_work_gradebook(folder, due, handed_in: dict, auto: float = 10.0, manual: float | None = None) -> str:
    """A gradebook of its own in ``folder``: a5 due at ``due`` with one notebook (03: an autograded cell of 20 points, a
    written answer of 4), each student of ``handed_in`` (id -> their submission's time, or None: not handed in) with
    ``auto`` points of the cell and ``manual`` of the answer; returns its URL."""
    url = f"sqlite:///{folder / 'gradebook.db'}"
    notebook = "03_span_corruption"
    stamp_in_process()
    with Gradebook(url) as gb:
        gb.add_assignment(ASSIGNMENT, duedate=due)
        gb.add_notebook(notebook, ASSIGNMENT)
        gb.add_grade_cell("03-span-hidden", notebook, ASSIGNMENT, max_score=20, cell_type="code")
        gb.add_grade_cell("03-written", notebook, ASSIGNMENT, max_score=4, cell_type="markdown")
        gb.add_solution_cell("03-written", notebook, ASSIGNMENT)
        for student, when in handed_in.items():
            gb.add_student(student)
            if when is None:
                continue
            gb.add_submission(ASSIGNMENT, student, timestamp=when)
            gb.find_grade("03-span-hidden", notebook, ASSIGNMENT, student).auto_score = auto
            gb.find_grade("03-written", notebook, ASSIGNMENT, student).manual_score = manual
        gb.db.commit()
    return url
