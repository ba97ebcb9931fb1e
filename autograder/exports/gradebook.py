"""Put the trusted scores into nbgrader's gradebook, over what the student's own kernel reported.

nbgrader scores a test cell by whether it raised inside the student's kernel, and
a submission can make every cell look successful. ``python -m autograder grade``
re-checks the work where the submission cannot reach the verdict and scores the
training runs; this module writes its points as the ``auto_score`` of each
autograded cell and of each run cell (``course_lib.notebook.run_cells``), so that nbgrader's
export, feedback and formgrader show the trusted scores in one total.
Manually graded cells are never touched.

Any database nbgrader's db_url takes works: SQLite (``sqlite:///gradebook.db``, the default
for a small course) or PostgreSQL (``postgresql://user@host/db``, through psycopg2). Only
the grading driver writes here, one transaction for the cohort, so parallel grading never
meets SQLite's "database is locked".
"""
from __future__ import annotations

from autograder.exports.gradebook_stamp import stamp_in_process

Scores = dict[str, dict[tuple[str, str], float]]  # student -> {(notebook, grade_id): points}
NOT_IN_GRADEBOOK = "is not an autograded cell of"  # a note's words for a cell the course's gradebook lacks


def trusted_cell_scores(parts) -> dict[tuple[str, str], float]:
    """One student's (part, points) pairs (a part is a check's grade_id or "<run part>/<split>") as
    {(notebook, grade_id): points} of the nbgrader cells holding them: a check's own test cell, or a
    run split's run cell (so nbgrader's total holds the runs too)."""
    from autograder.checks.registry import BY_ID
    from autograder.checks.run_files import RUN_CELLS

    cells = {}
    for part, points in parts:
        if part in BY_ID:
            cells[(BY_ID[part].notebook, part)] = points
        elif part in RUN_CELLS:
            cells[RUN_CELLS[part]] = points
    return cells


def autograded_cells(gb, assignment: str) -> dict[tuple[str, str], float]:
    """(notebook, grade_id) -> max score of every cell nbgrader scores by itself (code tests)."""
    cells = {}
    for notebook in gb.find_assignment(assignment).notebooks:
        answers = {cell.name for cell in notebook.solution_cells}
        for cell in notebook.grade_cells:
            # a grade cell that is also an answer cell is hand-graded (nbgrader's determine_grade)
            if cell.cell_type == "code" and cell.name not in answers:
                cells[(notebook.name, cell.name)] = cell.max_score
    return cells


def _submission_ready(gb, assignment: str, student: str) -> str | None:
    """Make sure the student's submission has grade rows; None when ready, else why not."""
    from nbgrader.api import MissingEntry

    try:
        gb.find_student(student)
    except MissingEntry:
        return f"{student}: not a student in the gradebook; trusted scores not written"
    try:
        gb.find_submission(assignment, student)
    except MissingEntry:
        gb.add_submission(assignment, student)  # nbgrader makes every notebook's grade rows with it
    return None


def write_trusted_scores(db_url: str, assignment: str, scores: Scores, settle=None) -> list[str]:
    """scores: student -> {(notebook name without .ipynb, grade_id): points}. Set nbgrader's
    auto_score of each autograded cell to the trusted points (manually graded cells untouched);
    return notes for the instructor (a student or cell missing from the gradebook, ...). ``settle(gb)``,
    when given, runs in the same transaction after the points are written (the late penalties are
    recomputed from them there: ``autograder.term.late``)."""
    from nbgrader.api import Gradebook, MissingEntry

    stamp_in_process()  # a new gradebook is stamped here, not by nbgrader's `alembic` command
    notes: list[str] = []
    with Gradebook(db_url) as gb:
        try:
            cells = autograded_cells(gb, assignment)
        except MissingEntry:
            return [f"assignment {assignment} is not in the gradebook {db_url}; nothing written"]
        for student, points_by_cell in sorted(scores.items()):
            problem = _submission_ready(gb, assignment, student)
            if problem:
                notes.append(problem)
                continue
            for (notebook, grade_id), points in sorted(points_by_cell.items()):
                if (notebook, grade_id) not in cells:
                    notes.append(f"{student}: {notebook}/{grade_id} {NOT_IN_GRADEBOOK} {assignment}; "
                                 "its trusted score was not written")
                    continue
                max_score = cells[(notebook, grade_id)]
                if not 0 <= points <= max_score:
                    notes.append(f"{student}: {notebook}/{grade_id} trusted score {points:g} is outside "
                                 f"0..{max_score:g}; clipped")
                    points = min(max(points, 0.0), max_score)
                grade = gb.find_grade(grade_id, notebook, assignment, student)
                grade.auto_score = float(points)
                # an instructor's override on the cell still wins, as in nbgrader
                if grade.manual_score is None:
                    grade.needs_manual_grade = False
            for notebook, grade_id in sorted(set(cells) - set(points_by_cell)):
                notes.append(f"{student}: no trusted score for {notebook}/{grade_id}; the kernel's own score stays")
        if settle is not None:
            settle(gb)
        gb.db.commit()
    return notes
