"""Why each student lost points in an nbgrader autograde: one readable row per graded cell short of full marks.

    python -m autograder report COURSE_DIR --assignment a5 --out DIR

Scores come from the gradebook nbgrader wrote; reasons come from the error each
failing test cell left in the autograded notebook, or from why a whole notebook
has no grades: missing from the submission, unreadable, or not graded (nbgrader
stopped on it); a cell counts as deleted only in a notebook that was graded.
Nothing a submission printed counts: a cell's score is nbgrader's, decided by
whether the restored test cell raised. Only what the collect step produced is read
(``collected/`` and nbgrader's ``autograded/`` made from it, never ``submitted/``), each
notebook up to a size cap, and each student's explanation within a time limit.
The run cells (``registry.RUN_CELLS``) are not nbgrader's to score: their points, and why
any were lost, come from ``autograder grade`` (its reasons.json), so no row here explains them.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.checks.registry import RUN_CELLS
from autograder.collecting.safe_files import shown
from autograder.exports.csv_safe import write_csv
from autograder.exports.reasons import bounded, error_type

# nbgrader interrupts a cell past its timeout: the cell then shows KeyboardInterrupt or CellTimeoutError
TIMEOUT_ERRORS = {"CellTimeoutError", "TimeoutError", "KeyboardInterrupt"}
STUDENT_SECONDS = 30  # one student's explanation; past it, the student's row says so
MAX_NOTEBOOK_BYTES = 20 * 2 ** 20  # the collect step's own cap on a notebook
RUN_CELL_IDS = frozenset(RUN_CELLS.values())  # (notebook, grade_id) of each run split's cell


@dataclass
class CellReason:
    """One graded cell of one student's notebook that did not get full marks."""

    student: str  # nbgrader student id
    notebook: str  # notebook name without .ipynb
    cell: str  # nbgrader grade_id, or "*" for the whole notebook
    score: float  # points given
    max_score: float  # points available
    reason: str  # what a student or instructor reads


def _read(path: Path):
    """(notebook, None) or (None, why not): a regular file (never a link or FIFO), read up to the size cap."""
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, "not in the submission"
    except OSError as err:
        return None, f"could not be read ({err.strerror})"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_NOTEBOOK_BYTES:
            return None, "could not be read as a notebook (not a regular file of at most 20 MB)"
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(MAX_NOTEBOOK_BYTES + 1)
    finally:
        os.close(fd)
    try:
        return nbformat.reads(data.decode("utf-8"), as_version=4), None
    except Exception as err:  # nbformat raises several kinds for bad JSON or schema
        return None, f"could not be read as a notebook ({type(err).__name__})"


NOT_GRADED = ("was not graded (nbgrader stopped on it, e.g. its kernel died or a locked cell changed: "
              "see nbgrader's log)")


def _was_executed(notebook) -> bool:
    """Did nbgrader run this notebook? A run leaves execution counts or outputs on its code cells."""
    return any(c.get("execution_count") or c.get("outputs") for c in notebook.cells if c.cell_type == "code")


def _graded_notebook(course_dir: Path, student: str, assignment: str, name: str):
    """(the autograded notebook, None), or (None, why the whole notebook has no usable grades)."""
    _, submitted_problem = _read(course_dir / "collected" / student / assignment / f"{name}.ipynb")
    if submitted_problem:
        return None, f"notebook {submitted_problem}"
    autograded, _ = _read(course_dir / "autograded" / student / assignment / f"{name}.ipynb")
    if autograded is None or not _was_executed(autograded):
        return None, f"notebook {NOT_GRADED}"
    return autograded, None


def _cell_error(cell, message: bool = True) -> str | None:
    """The cell's error as a reason: a known exception type and (``message``) the first line of its message, shown
    sanitised. A student's own cell gets its type only: its message is the student's text, not the grader's."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            if output.get("ename") in TIMEOUT_ERRORS:
                return "ran past the time limit and was interrupted"
            value = str(output.get("evalue") or "").strip().splitlines() if message else []
            first = shown(value[0])[:200] if value else ""
            return f"{error_type(output.get('ename'))}: {first}".rstrip(": ")
    return None


def _first_error_before(notebook, grade_id: str) -> str | None:
    """The first error in an answer or ordinary cell above the test cell: usually the real cause."""
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") == grade_id:
            return None
        if not meta.get("grade"):
            error = _cell_error(cell, message=False)
            if error:
                return error
    return None


def explain(course_dir: str | Path, assignment: str, db_url: str | None = None) -> tuple[dict[str, float], list[CellReason]]:
    """Total score per student and a reason per graded cell short of full marks."""
    from nbgrader.api import Gradebook, MissingEntry

    from course_lib.time_limit import TimeLimitExceeded, time_limit

    course_dir = Path(course_dir)
    db_url = db_url or f"sqlite:///{course_dir / 'gradebook.db'}"
    totals: dict[str, float] = {}
    reasons: list[CellReason] = []
    with Gradebook(db_url) as gb:
        master = gb.find_assignment(assignment)
        for student in sorted(s.id for s in gb.students):
            try:
                submission = gb.find_submission(assignment, student)
            except MissingEntry:
                totals[student] = 0.0
                reasons.append(CellReason(student, "*", "*", 0.0, master.max_score, "no submission was autograded"))
                continue
            totals[student] = submission.score
            mine: list[CellReason] = []
            try:
                with time_limit(STUDENT_SECONDS):
                    _explain_student(gb, master, course_dir, student, assignment, mine)
            except TimeLimitExceeded:
                mine.append(CellReason(student, "*", "*", submission.score, master.max_score,
                                       f"could not be explained within {STUDENT_SECONDS} s"))
            reasons += mine
    return totals, reasons


def _explain_student(gb, master, course_dir: Path, student: str, assignment: str, out: list[CellReason]) -> None:
    """A reason for each graded cell of one student short of full marks, appended to ``out``."""
    from nbgrader.api import MissingEntry

    for nb in master.notebooks:
        autograded, notebook_problem = _graded_notebook(course_dir, student, assignment, nb.name)
        try:
            grades = {g.name: g for g in gb.find_submission_notebook(nb.name, assignment, student).grades}
        except MissingEntry:
            grades = {}
        cells = {} if autograded is None else {
            c.metadata.get("nbgrader", {}).get("grade_id"): c for c in autograded.cells}
        for cell in nb.grade_cells:
            if (nb.name, cell.name) in RUN_CELL_IDS:
                continue  # scored by `autograder grade`, explained in its reasons.json
            grade = grades.get(cell.name)
            score = grade.score if grade is not None else 0.0
            if score >= cell.max_score:
                continue
            if notebook_problem:
                why = notebook_problem
            elif cell.name not in cells:  # the notebook ran, without this cell
                why = "this test cell was deleted from the submission, so it could not run"
            elif grade is not None and grade.needs_manual_grade:
                why = "waits for manual grading"
            else:
                why = _cell_error(cells[cell.name]) or "the test did not pass"
                earlier = _first_error_before(autograded, cell.name)
                if earlier:
                    why += f" (an earlier cell failed first: {earlier})"
            out.append(CellReason(student, nb.name, cell.name, score, cell.max_score, bounded(why)))


def write_report(reasons: list[CellReason], path: str | Path) -> Path:
    return write_csv(path, ["student_id", "notebook", "cell", "score", "max_score", "reason"],
                     [[r.student, r.notebook, r.cell, f"{r.score:g}", f"{r.max_score:g}", r.reason] for r in reasons])


def summary(totals: dict[str, float], reasons: list[CellReason]) -> str:
    lines = [f"{'student':<22}{'score':>8}  first lost points"]
    for student, total in totals.items():
        first = next((r for r in reasons if r.student == student), None)
        note = f"{first.notebook}/{first.cell}: {first.reason}"[:80] if first else "full marks"
        lines.append(f"{student:<22}{total:>8g}  {note}")
    return "\n".join(lines)
