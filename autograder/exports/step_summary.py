"""The closing summary every grading step prints: each student it could not treat normally, one line each.

    autograde: 2 student(s) to know about, 1 needing you
      ada: late by 1 h 5 min (penalty 10% of the points earned)
      bo: NEEDS YOU: nbgrader could not autograde: ...

A log file is where an instructor looks last, so ``autograder autograde``, ``grade`` and ``report``,
``nbgrader generate_feedback``, ``release_feedback`` and ``export`` (as the course configures them) end
with these lines. A ``Problem`` the instructor must act on (a student the step could not grade, a
feedback page not made, a refused entry) makes the step's exit status non-zero; one that is only worth
knowing (late work and its penalty, a renamed copy taken, a notebook not handed in) does not. Names
are shown sanitised (``safe_files.shown``).
"""
from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass

from autograder.collecting.safe_files import shown

NEEDS_YOU = "NEEDS YOU: "  # the mark of a line the instructor must act on


@dataclass(frozen=True)
class Problem:
    """Something about one student a step's instructor should read."""

    student: str  # the student id (or a folder's name), shown sanitised
    why: str  # one line in the grader's words
    act: bool = False  # the instructor must do something (the step then exits non-zero)


def _lines(step: str, problems: Iterable[Problem]) -> list[tuple[str, bool]]:
    """(line, needs the instructor) pairs: the head, then one per student."""
    by_student: dict[str, list[Problem]] = {}
    for p in problems:
        by_student.setdefault(p.student, []).append(p)
    if not by_student:
        return [(f"{step}: every student was treated normally", False)]
    acting = sum(any(p.act for p in mine) for mine in by_student.values())
    lines = [(f"{step}: {len(by_student)} student(s) to know about" + (f", {acting} needing you" if acting else ""),
              False)]
    for student, mine in by_student.items():
        mine = sorted(mine, key=lambda p: not p.act)
        whys = "; ".join(dict.fromkeys(p.why for p in mine))
        lines.append((f"  {shown(student)}: {NEEDS_YOU if mine[0].act else ''}{whys}", mine[0].act))
    return lines


def summary_lines(step: str, problems: Iterable[Problem]) -> list[str]:
    """The summary: a head line, then one line per student (their problems joined, those needing the
    instructor first), in the order students first appear."""
    return [line for line, _ in _lines(step, problems)]


def status(problems: Iterable[Problem]) -> int:
    """The step's exit status: 1 when any problem needs the instructor, else 0."""
    return 1 if any(p.act for p in problems) else 0


def print_summary(step: str, problems: list[Problem], file=None) -> int:
    """Print the summary (to stdout); the exit status it calls for."""
    print("\n".join(summary_lines(step, problems)), file=file or sys.stdout, flush=True)
    return status(problems)


def log_summary(log, step: str, problems: list[Problem]) -> int:
    """The summary into an nbgrader app's log (formgrader shows it too): lines needing the instructor
    as errors, the rest as warnings, the head as info; the exit status it calls for."""
    (head, _), *lines = _lines(step, problems)
    log.info("%s", head)
    for line, act in lines:
        (log.error if act else log.warning)("%s", line)
    return status(problems)
