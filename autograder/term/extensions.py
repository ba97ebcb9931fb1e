"""One student's extension, in nbgrader's gradebook: ``python -m autograder extend a5 STUDENT --hours 48``.

nbgrader keeps an extension on the student's submission (``SubmittedAssignment.extension``): their due
date is the assignment's plus it, and its autograde measures lateness from there. The gradebook's
``grant_extension`` needs that submission row, which autograde makes when it first grades the
student; an extension given before that (the usual case: asked for before the due date) makes the
row here, empty, as ``add_submission`` does, and autograde fills it later. A new extension replaces
the old one (nbgrader's rule: they never add up); no time at all takes it away. The student's penalty
is recomputed at once (``late.refresh_penalties``), so the gradebook, the feedback and the export agree.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass

from autograder.collecting.safe_files import shown
from autograder.collecting.student_ids import id_problem
from autograder.term.late import Lateness, late_plugin, late_text, refresh_penalties


class ExtensionRefused(Exception):
    """An extension that cannot be given (the words say why, for the instructor)."""


@dataclass(frozen=True)
class Extension:
    """A student's due date after an extension was given (or taken away)."""

    student: str  # nbgrader student id
    due: datetime.datetime | None  # the assignment's due date (UTC), None when it has none
    extension: datetime.timedelta | None  # the student's, None when they have none
    submitted: datetime.datetime | None  # their submission's time, None before autograde saw one
    late: Lateness | None  # their lateness and penalty now, None when on time

    def line(self) -> str:
        """What the command prints."""
        own = self.due + self.extension if self.due and self.extension else self.due
        due = (f"due {own:%Y-%m-%d %H:%M} UTC" if own else "no due date is set for the assignment")
        if self.extension is not None:
            due += f" (the assignment's due date plus {late_text(self.extension.total_seconds())})"
        late = self.late.line() if self.late and self.late.seconds_late else "on time"
        handed = ("nothing handed in and autograded yet" if self.submitted is None else
                  f"handed in {self.submitted:%Y-%m-%d %H:%M} UTC, {late}")
        return f"{shown(self.student)}: {due}; {handed}"


def grant(gb, assignment: str, student: str, extension: datetime.timedelta, config) -> Extension:
    """Give ``student`` ``extension`` on ``assignment`` (a zero one takes theirs away), recompute their
    penalty with ``config``'s late plugin, commit; ExtensionRefused for an id or assignment that cannot be."""
    from nbgrader.api import MissingEntry

    problem = id_problem(student)
    if problem:
        raise ExtensionRefused(f"{shown(student)} cannot be a student id: {problem}")
    if extension < datetime.timedelta(0):
        raise ExtensionRefused("an extension cannot be negative")
    try:
        due = gb.find_assignment(assignment).duedate
    except MissingEntry:
        raise ExtensionRefused(f"no assignment {shown(assignment)} in the gradebook (nbgrader generate_assignment "
                               "puts it there)") from None
    gb.update_or_create_student(student)
    try:
        gb.find_submission(assignment, student)
    except MissingEntry:
        gb.add_submission(assignment, student)  # empty until autograde fills it, with its time
    gb.grant_extension(assignment, student, minutes=extension.total_seconds() / 60)
    late = refresh_penalties(gb, assignment, late_plugin(config), {student})
    gb.db.commit()
    submission = gb.find_submission(assignment, student)
    return Extension(student, due, submission.extension, submission.timestamp, late[0] if late else None)


def main(course, assignment: str, student: str, extension: datetime.timedelta, db_url: str | None = None) -> int:
    """The command: give the extension in the course's gradebook, print the student's due date; exit status."""
    import sys

    from nbgrader.api import Gradebook

    from autograder.term.course import course_config, course_db_url
    from autograder.term.late import policy_problem

    config = course_config(course)
    problem = policy_problem(config)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    with Gradebook(db_url or course_db_url(course, config)) as gb:
        try:
            given = grant(gb, assignment, student, extension, config)
        except ExtensionRefused as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    print(given.line())
    return 0
