"""Imported by the autograde step's fork server only: fills the caches every student's nbgrader would fill again.

nbformat compiles a notebook schema's validator (fastjsonschema) the first time a process validates against it, and
nbconvert validates each notebook after each of nbgrader's steps: 6% of a student's nbgrader process (py-spy, issue 50
item 8). Here the current schema's validators are compiled once, before the fork server forks any student's unit. A
failure here costs only time.
"""
import sys

import nbformat
from nbformat.validator import get_validator


def warm() -> None:
    """The validators of the current notebook format, as nbformat's reader and nbconvert's steps ask for them."""
    for relax in (False, True):
        get_validator(version=nbformat.current_nbformat, version_minor=nbformat.current_nbformat_minor,
                      relax_add_props=relax)


try:
    warm()
except Exception as err:  # each student's nbgrader compiles them itself, as before
    print(f"autograde: the fork server's warm-up failed ({type(err).__name__})", file=sys.stderr, flush=True)
