"""``nbgrader export`` the course's way: penalties as they stand, a CSV a spreadsheet opens safely, a summary.

nbgrader's CSV plugin writes ``grades.csv`` (the file for the LMS) by joining cells with commas: an id
holding a comma or starting a formula breaks it. ``CourseExport`` writes the same columns, in the same
order, through ``csv_safe``, after recomputing every late penalty from the scores as they stand (the score
of record and the manual points came after nbgrader's autograde: ``autograder.term.late``), and adds
``seconds_late`` and ``extension_hours``, then the LMS's columns when the hand-ins came from one
(``lms_user_id``, ``lms_late``: ``autograder.term.lms``). With ``canvas_to`` set it also writes the layout
Canvas's gradebook import reads. It ends with the step's summary (late students and their penalties,
students with nothing handed in, answers still to grade by hand), and exits non-zero only when something
needs the instructor.
"""
from __future__ import annotations

import sys
from pathlib import Path

from nbgrader.api import MissingEntry
from nbgrader.plugins import CsvExportPlugin
from traitlets import Unicode

from autograder.exports.csv_safe import write_csv
from autograder.exports.step_summary import Problem, log_summary
from autograder.term import lms
from autograder.term.late import late_plugin, refresh_penalties

NBGRADER_COLUMNS = ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
                    "raw_score", "late_submission_penalty", "score", "max_score"]
COURSE_COLUMNS = ["seconds_late", "extension_hours", "lms_user_id", "lms_late"]
# Canvas's gradebook import: a student is found by ID (Canvas's user id) or SIS ids; Section may be empty; every
# other column is an assignment (a name Canvas does not know becomes a new assignment)
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def _text(value) -> str:
    return "" if value is None else value if isinstance(value, str) else f"{value:g}" if isinstance(
        value, float) else str(value)


def _handed_in(submission) -> bool:
    """Whether a gradebook submission holds any work graded (an extension alone makes an empty one)."""
    return submission is not None and any(g.auto_score is not None or g.manual_score is not None
                                          for nb in submission.notebooks for g in nb.grades)


class CourseExport(CsvExportPlugin):
    """nbgrader's grades.csv, penalties recomputed first, escaped cells, the course's columns, a summary."""

    canvas_to = Unicode("", help="also write the grades in Canvas's gradebook-import layout to this file").tag(
        config=True)
    canvas_column = Unicode("", help="Canvas's column for the assignment, as Canvas's own export names it (e.g. "
                                     "'a5 (123456)'); default: the assignment's name").tag(config=True)

    def export(self, gradebook) -> None:
        """Recompute penalties, write the CSV(s), log the summary; exit 1 when something needs the instructor."""
        course = Path(self.parent.coursedir.root) if self.parent is not None else Path.cwd()
        intake = lms.read_intake(course)
        wanted_assignments, wanted_students = set(map(str, self.assignment)), set(map(str, self.student))
        rows, canvas, problems = [], [], []
        plugin = late_plugin(self.config)
        penalises = bool(plugin.late_submission_penalty("", 100.0, 1e9))  # the policy takes points from late work
        for assignment in gradebook.assignments:
            if wanted_assignments and assignment.name not in wanted_assignments:
                continue
            late = {x.student: x for x in refresh_penalties(gradebook, assignment.name, plugin)}
            gradebook.db.commit()
            for student in gradebook.students:
                if wanted_students and student.id not in wanted_students:
                    continue
                row, problem = self._row(gradebook, assignment, student, late.get(student.id),
                                         intake.get((assignment.name, student.id)), penalises)
                rows.append(row)
                problems += problem
                name = f"{student.last_name}, {student.first_name}" if student.last_name else student.id
                canvas.append([name, row[-2] or student.lms_user_id or "", "", "", "", row[9]])
        dest = self.to or "grades.csv"
        self.log.info("Exporting grades to %s", dest)
        write_csv(dest, NBGRADER_COLUMNS + COURSE_COLUMNS, rows)
        if self.canvas_to:
            column = self.canvas_column or ",".join(sorted({r[0] for r in rows}))
            write_csv(self.canvas_to, CANVAS_COLUMNS + [column], canvas)
            self.log.info("Wrote Canvas's gradebook-import layout to %s", self.canvas_to)
        if log_summary(self.log, "export", problems):
            sys.exit(1)

    @staticmethod
    def _row(gb, assignment, student, late, intake, penalises: bool) -> tuple[list[str], list[Problem]]:
        """One student's row and what the summary says of them."""
        try:
            submission = gb.find_submission(assignment.name, student.id)
        except MissingEntry:
            submission = None
        problems = []
        if not _handed_in(submission):
            raw = penalty = 0.0
            problems.append(Problem(student.id, f"{assignment.name}: nothing handed in: scored 0"))
        else:
            raw, penalty = submission.score, submission.late_submission_penalty
            if late is not None:
                problems.append(Problem(student.id, f"{assignment.name}: {late.line()}"))
            waiting = sum(1 for nb in submission.notebooks for g in nb.grades if g.needs_manual_grade)
            if waiting:
                problems.append(Problem(student.id, f"{assignment.name}: {waiting} answer(s) not graded by hand yet "
                                                    "(they count 0)"))
        if intake is not None and intake.late and late is None and penalises:
            problems.append(Problem(student.id, f"{assignment.name}: the LMS marked it late, but its download "
                                                "gave no time: no penalty applied (docs/grading.md, the LMS path)",
                                    act=True))
        row = [assignment.name, _text(assignment.duedate), _text(submission.timestamp if submission else None),
               student.id, _text(student.last_name), _text(student.first_name), _text(student.email), _text(raw),
               _text(penalty), _text(max(0.0, raw - penalty)), _text(assignment.max_score),
               _text(late.seconds_late if late else 0.0),
               _text(submission.extension.total_seconds() / 3600 if submission and submission.extension else None),
               intake.lms_user_id if intake else "", "yes" if intake and intake.late else ""]
        return row, problems
