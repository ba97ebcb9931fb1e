"""The error a course check raises: in a notebook it shows as its message alone, not as a traceback.

It is an AssertionError, so nbgrader still counts the test cell as failed, and the
message is still the error's text for any other reader. IPython renders an exception
that has ``_render_traceback_`` with the lines it returns instead of a traceback, so a
student reads what is wrong and what to do, not the checker's call stack.
"""
from __future__ import annotations

import os

PREFIX = "Check failed: "  # before a check's first line, in the notebook and in what Validate lists
BULLET = "- "  # before each line of a check that says several things (the twins')


class CheckFailed(AssertionError):
    """A check's verdict on the student's code, worded for the student."""

    def _render_traceback_(self) -> list[str]:
        lines = str(self).splitlines() or ["the check failed"]
        return [f"{PREFIX}{lines[0]}", *lines[1:]]


def require(condition: object, message: str) -> None:
    """Raise CheckFailed(message) unless ``condition`` holds (an ``assert`` that -O cannot strip)."""
    if not condition:
        raise CheckFailed(message)


def judged_outside(message: str) -> None:
    """In nbgrader's autograde (``NBGRADER_EXECUTION=autograde``): CheckFailed(message), the check not run. There the
    course's grader judges every check again where the submission cannot reach the verdict (``autograder grade
    --gradebook`` writes the points, the feedback page shows its reason in the cell's place), so a verdict here would
    be thrown away; nbgrader's Validate and the student's own runs still judge in place."""
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        raise CheckFailed(message)
