"""nbgrader's release_feedback (the command and formgrader's button), each student in a unit.

nbgrader files each student's feedback pages in the exchange under a hash of the
``submission_secret.txt`` that came with their submission, in one loop over the class: a
feedback folder without that file (a submission made by hand, a secret deleted) stops the
release with a traceback after some of the class had theirs. Here each student's pages are
released in a unit (``autograder.units``); a student whose pages cannot be released is named
with the reason, everyone else's are released, and the command ends in an error listing who
was left out. It ends with the step's summary: each student left out and why, and each student
autograded whose feedback pages were never generated.
"""
from __future__ import annotations

import glob
import os
import re
import shutil
from collections import defaultdict
from dataclasses import dataclass

from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.utils import notebook_hash

from autograder.collecting.safe_files import shown
from autograder.exports.step_summary import Problem, log_summary
from autograder.units.limits import UnitLimits
from autograder.units.stage import Step, outcomes

SECRET_BYTES = 1024  # a submission_secret.txt nbgrader writes holds 128 hex digits
RELEASE_STEP = Step("release feedback", UnitLimits(seconds=60, memory_mb=512),
                    preload=("autograder.nbgrader_glue.release_feedback",))


@dataclass(frozen=True)
class Released:
    """One student's pages, released."""

    student: str  # nbgrader student id
    pages: tuple[str, ...]  # notebook ids released


def release_student(student: str, pages: list[tuple[str, str]], dest: str) -> Released:
    """In the student's unit: copy each (notebook id, html file) into the exchange's feedback folder
    under nbgrader's name for it (a hash of the submission's secret and notebook id), atomically."""
    released = []
    for notebook_id, html_file in pages:
        feedback_dir = os.path.dirname(html_file)
        with open(os.path.join(feedback_dir, "submission_secret.txt"), "rb") as f:
            secret = f.read(SECRET_BYTES + 1)
        if len(secret) > SECRET_BYTES or not secret.strip():
            raise ValueError("its submission_secret.txt is not one nbgrader wrote")
        checksum = notebook_hash(secret=secret.decode("utf-8", errors="replace"), notebook_id=notebook_id)
        partial = os.path.join(dest, f"{checksum}-tmp.html")
        shutil.copy(html_file, partial)
        shutil.move(partial, os.path.join(dest, f"{checksum}.html"))
        released.append(notebook_id)
    return Released(student, tuple(released))


class UnitReleaseFeedback(ExchangeReleaseFeedback):
    """``nbgrader release_feedback``, a unit per student: one missing secret stops nobody else."""

    def copy_files(self):
        """Release each student's pages in a unit; fail at the end, naming who was left out."""
        exclude = set(self.coursedir.student_id_exclude.split(",")) if self.coursedir.student_id_exclude else set()
        regexp = re.escape(os.path.sep).join([
            self.coursedir.format_path(self.coursedir.feedback_directory, "(?P<student_id>.*)",
                                       self.coursedir.assignment_id, escape=True),
            "(?P<notebook_id>.*).html"])
        by_student: dict[str, list[tuple[str, str]]] = defaultdict(list)
        left_out, problems = [], []
        for html_file in sorted(glob.glob(os.path.join(self.src_path, "*.html"))):
            match = re.fullmatch(regexp, html_file, flags=re.S)
            if match is None:  # a name nbgrader's pattern cannot read back (no id collect accepts)
                left_out.append(shown(os.path.relpath(html_file, self.coursedir.root)))
                problems.append(Problem(left_out[-1], "NOT released: its path is no feedback page of one student",
                                        act=True))
                continue
            if match["student_id"] not in exclude:
                by_student[match["student_id"]].append((match["notebook_id"], html_file))
        students = sorted(by_student)
        done = outcomes(RELEASE_STEP, len(students), lambda i: (release_student, (
            students[i], by_student[students[i]], self.dest_path)), workers=2)
        for student, outcome in zip(students, done):
            if outcome.ok:
                self.log.info("Released feedback for student '%s' on assignment '%s/%s': %d page(s)", shown(student),
                              self.coursedir.course_id, self.coursedir.assignment_id, len(outcome.value.pages))
            else:
                reason = ("it has no readable submission_secret.txt (nbgrader files feedback under it)"
                          if "FileNotFoundError" in outcome.detail else outcome.failure)
                left_out.append(shown(student))
                problems.append(Problem(student, f"NOT released: {reason}", act=True))
        never = self._never_generated(set(by_student) | exclude)
        left_out += [shown(p.student) for p in never]
        log_summary(self.log, "release_feedback", problems + never)
        if left_out:
            released = len(students) - sum(1 for s in students if shown(s) in left_out)
            self.fail(f"released the feedback of {released} student(s); not of {', '.join(left_out)} (see the summary "
                      "above: hand theirs out by hand from feedback/, or generate it first)")

    def _never_generated(self, released: set[str]) -> list[Problem]:
        """Students with an autograded copy and no feedback pages to release."""
        found = glob.glob(os.path.join(self.coursedir.format_path(self.coursedir.autograded_directory, "*",
                                                                  self.coursedir.assignment_id)))
        return [Problem(student, "no feedback pages to release: run generate_feedback (its summary says why none "
                                 "were made)", act=True)
                for student in sorted(os.path.basename(os.path.dirname(f)) for f in found) if student not in released]
