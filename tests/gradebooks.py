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
