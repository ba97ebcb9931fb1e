"""Why each student lost points in nbgrader's autograde: a row per graded cell short of full marks.

    python -m autograder report COURSE_DIR --assignment a5 --out DIR

Scores come from the gradebook nbgrader wrote; reasons come from the error each
failing test cell left in the autograded notebook, or from why a whole notebook
has no grades: missing from the submission, unreadable, or not graded (nbgrader
stopped on it); a cell counts as deleted only in a notebook that was graded.
Nothing a submission printed counts: a cell's score is nbgrader's, decided by
whether the restored test cell raised. Only what the collect step produced is read
(``collected/`` and nbgrader's ``autograded/`` made from it, never ``submitted/``), each
notebook up to a size cap and a budget of JSON values, and each student's explanation in a
unit of its own (``autograder.units``: its own process, within a time and a memory limit), so
one student's notebooks never stop the report for the class: a unit that fails is that
student's row with the reason.
When ``autograder grade`` has written its ``reasons.json`` (the score of record, which
``--gradebook`` put into the gradebook), a cell it judged takes its reason from there: the
hidden checks (which nbgrader's kernel never judges) and the run cells
(``run_files.RUN_CELLS``) included. Without that file the run cells are not explained here.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.checks.run_files import RUN_CELLS
from autograder.collecting.safe_files import shown
from autograder.exports.csv_safe import write_csv
from autograder.exports.gradebook_preload import GRADEBOOK_PRELOAD
from autograder.exports.reasons import bounded, error_type
from autograder.exports.step_summary import Problem
from autograder.inside import bounded_json
from autograder.units.limits import UnitLimits
from autograder.units.stage import Step, outcomes

# what a cell shows once nbgrader interrupted it past its timeout
TIMEOUT_ERRORS = {"CellTimeoutError", "TimeoutError", "KeyboardInterrupt"}
STUDENT_SECONDS = 30  # one student's explanation; past it, the student's row says so
# memory: two notebooks of at most 20 MB each parsed at once (nbformat), within a value budget
REPORT_STEP = Step("report", UnitLimits(seconds=STUDENT_SECONDS, memory_mb=1536),
                   preload=("autograder.exports.report", *GRADEBOOK_PRELOAD))
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
    """(notebook, None) or (None, why not): a regular file (no link or FIFO), up to the size cap."""
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
    if not bounded_json.within(data, bounded_json.MAX_VALUES):
        return None, f"could not be read as a notebook (more than {bounded_json.MAX_VALUES:,} JSON values)"
    try:
        return nbformat.reads(data.decode("utf-8"), as_version=4), None
    except Exception as err:  # nbformat raises several kinds for bad JSON or schema
        return None, f"could not be read as a notebook ({type(err).__name__})"


NOT_GRADED = ("was not graded (nbgrader stopped on it, e.g. its kernel died or a locked cell changed: "
              "see nbgrader's log)")


def _was_executed(notebook) -> bool:
    """Did nbgrader run this notebook? A run leaves execution counts or outputs on code cells."""
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
    """The cell's error as a reason: a known exception type and (``message``) its message's
    first line, sanitised. A student's own cell gets its type only: its message is theirs."""
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


def explain(course_dir: str | Path, assignment: str, db_url: str | None = None, workers: int = 2,
            reasons_file: Path | None = None) -> tuple[dict[str, float], list[CellReason]]:
    """Total score per student, and a reason per graded cell short of full marks (a unit each).
    ``reasons_file``: ``autograder grade``'s reasons.json (default: grades/reasons.json)."""
    from nbgrader.api import Gradebook, MissingEntry

    from autograder.exports import trusted_reasons

    course_dir = Path(course_dir)
    db_url = db_url or f"sqlite:///{course_dir / 'gradebook.db'}"
    trusted = trusted_reasons.load(reasons_file or course_dir / "grades" / "reasons.json")
    totals: dict[str, float] = {}
    with Gradebook(db_url) as gb:
        master = gb.find_assignment(assignment)
        max_score = master.max_score
        students = sorted(s.id for s in gb.students)
        for student in students:
            try:
                totals[student] = gb.find_submission(assignment, student).score
            except MissingEntry:
                totals[student] = None
    explained = [s for s in students if totals[s] is not None]
    done = outcomes(REPORT_STEP, len(explained), lambda i: (explain_student, (
        str(course_dir), db_url, assignment, explained[i], trusted.get(explained[i], {}))), workers=workers)
    mine = dict(zip(explained, done))
    reasons: list[CellReason] = []
    for student in students:
        if totals[student] is None:
            totals[student] = 0.0
            reasons.append(CellReason(student, "*", "*", 0.0, max_score, "no submission was autograded"))
        elif mine[student].ok:
            reasons += mine[student].value
        else:
            why = ("could not be explained within {STUDENT_SECONDS} s" if "stopped after" in mine[student].failure
                   else f"could not be explained: {mine[student].failure}").format(STUDENT_SECONDS=STUDENT_SECONDS)
            reasons.append(CellReason(student, "*", "*", totals[student], max_score, why))
    return totals, reasons


def explain_student(course_dir: str, db_url: str, assignment: str, student: str, trusted: dict) -> list[CellReason]:
    """In the student's unit: a reason per graded cell short of full marks (``trusted``: the
    score of record's verdict per grade_id)."""
    from nbgrader.api import Gradebook

    out: list[CellReason] = []
    with Gradebook(db_url) as gb:
        _explain_student(gb, gb.find_assignment(assignment), Path(course_dir), student, assignment, out, trusted)
    return out


def _explain_student(gb, master, course_dir: Path, student: str, assignment: str, out: list[CellReason],
                     trusted: dict | None = None) -> None:
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
        trusted = trusted or {}
        for cell in nb.grade_cells:
            if (nb.name, cell.name) in RUN_CELL_IDS and cell.name not in trusted:
                continue  # scored by `autograder grade`, explained in its reasons.json
            grade = grades.get(cell.name)
            score = grade.score if grade is not None else 0.0
            if score >= cell.max_score:
                continue
            if cell.name in trusted:  # the score of record's reason for the gradebook's score
                why = trusted[cell.name].reason
            elif notebook_problem:
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
    """The reasons as a CSV at ``path``."""
    return write_csv(path, ["student_id", "notebook", "cell", "score", "max_score", "reason"],
                     [[r.student, r.notebook, r.cell, f"{r.score:g}", f"{r.max_score:g}", r.reason] for r in reasons])


def summary(totals: dict[str, float], reasons: list[CellReason]) -> str:
    """A table for the terminal: each student's total and first lost points."""
    lines = [f"{'student':<22}{'score':>8}  first lost points"]
    for student, total in totals.items():
        first = next((r for r in reasons if r.student == student), None)
        note = f"{first.notebook}/{first.cell}: {first.reason}"[:80] if first else "full marks"
        lines.append(f"{student:<22}{total:>8g}  {note}")
    return "\n".join(lines)


def report_problems(reasons: list[CellReason]) -> list[Problem]:
    """What the report's summary says: each student with a whole notebook missing, unreadable or not
    graded, or who could not be explained (those two need the instructor)."""
    problems, seen = [], set()
    for r in reasons:
        if (r.cell != "*" and not r.reason.startswith("notebook ")) or (r.student, r.notebook) in seen:
            continue
        seen.add((r.student, r.notebook))
        where = "" if r.notebook == "*" else f"{r.notebook}: "
        act = r.reason.startswith(("could not be explained", "notebook could not be read", f"notebook {NOT_GRADED}"))
        problems.append(Problem(r.student, f"{where}{r.reason}", act=act))
    return problems
