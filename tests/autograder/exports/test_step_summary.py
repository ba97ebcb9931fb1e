"""The closing summary every step prints: one line per student, sanitised, non-zero only when the instructor acts."""
from __future__ import annotations

import logging

from autograder.exports.step_summary import Problem, log_summary, print_summary, summary_lines


def test_each_student_gets_one_line_with_their_problems_joined():
    """Does each student get one line, their problems joined, the one needing the instructor marked first, in the
    order students first appear, and a head counting both?"""
    lines = summary_lines("grade", [Problem("ada", "late by 2 h: penalty 4 of 20 point(s)"),
                                    Problem("bo", "05_synthesizer.ipynb was not handed in"),
                                    Problem("ada", "the grader could not grade it", act=True),
                                    Problem("bo", "05_synthesizer.ipynb was not handed in")])
    assert lines == ["grade: 2 student(s) to know about, 1 needing you",
                     "  ada: NEEDS YOU: the grader could not grade it; late by 2 h: penalty 4 of 20 point(s)",
                     "  bo: 05_synthesizer.ipynb was not handed in"]


def test_a_step_with_nothing_to_say_says_so_and_exits_zero(capsys):
    """Does a step whose students were all treated normally say so, and exit 0?"""
    assert print_summary("report", []) == 0
    assert capsys.readouterr().out == "report: every student was treated normally\n"


def test_names_are_shown_sanitised_and_the_status_follows_the_instructors_part(capsys):
    """Are control and bidi characters of a name shown as '?', and is the exit status 1 only when a line needs the
    instructor?"""
    assert print_summary("autograde", [Problem("eve\u202e\x1b[2J", "renamed copy taken")]) == 0
    assert "  eve??[2J: renamed copy taken" in capsys.readouterr().out  # (U+202E and ESC)
    assert print_summary("autograde", [Problem("mal", "refused", act=True)]) == 1


def test_in_an_nbgrader_log_the_lines_needing_the_instructor_are_errors(caplog):
    """Does the summary go into an nbgrader app's log (formgrader shows it), needing-you lines as errors?"""
    log = logging.getLogger("summary-test")
    with caplog.at_level(logging.INFO, logger="summary-test"):
        assert log_summary(log, "export", [Problem("ada", "late"), Problem("bo", "no page", act=True)]) == 1
    levels = {r.getMessage().strip().split(":")[0]: r.levelno for r in caplog.records}
    assert levels == {"export": logging.INFO, "ada": logging.WARNING, "bo": logging.ERROR}
