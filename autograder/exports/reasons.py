"""The words a student reads back: a fixed vocabulary, bounded, naming only the assignment.

Whatever a submission makes a job say (an exception's type, a traceback's file name, a
cell's grade_id) is untrusted text: a student could name an exception class after the
sandbox's environment, or a file after a page of it. So a reason takes from a job only
  - an exception type that is one of Python's own (or the course's), else "an error";
  - a place "(at NOTEBOOK cell N line M)" whose NOTEBOOK is one of the assignment's own
    notebooks and whose grade_id is one of the release's, else no place at all;
and every reason is cut to MAX_CHARS.
"""
from __future__ import annotations

import builtins
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from course_lib import layout

MAX_CHARS = 300  # the longest reason a student reads
# the course's own exception types a student may meet (besides Python's)
COURSE_ERRORS = frozenset({"CheckFailed", "CellTimeout", "CheckTimeout", "ContractError", "DataFormatError",
                           "NotebookLoadError", "OutOfMemoryError"})
PYTHON_ERRORS = frozenset(name for name, value in vars(builtins).items()
                          if isinstance(value, type) and issubclass(value, BaseException))
PLACE = re.compile(r"^(?P<notebook>[^ ]{1,80}\.ipynb) cell (?P<cell>\d{1,4})( \((?P<grade_id>[A-Za-z0-9_.-]{1,60})\))?"
                   r"( line (?P<line>\d{1,6}))?$")


@dataclass(frozen=True)
class AssignmentNames:
    """What a reason may name: the assignment's notebooks and the release's grade_ids."""

    notebooks: frozenset[str]  # the release's notebook file names
    grade_ids: frozenset[str]  # every grade_id the release's cells carry


@lru_cache(maxsize=8)
def assignment_names(release: Path = layout.RELEASE_DIR) -> AssignmentNames:
    """The release's notebook names and every grade_id its cells carry."""
    notebooks, grade_ids = set(), set()
    for path in sorted(Path(release).glob("*.ipynb")):
        notebooks.add(path.name)
        for cell in json.loads(path.read_text(encoding="utf-8")).get("cells", []):
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if isinstance(grade_id, str):
                grade_ids.add(grade_id)
    return AssignmentNames(frozenset(notebooks), frozenset(grade_ids))


def bounded(text: str) -> str:
    """A reason cut to MAX_CHARS."""
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 3] + "..."


def error_type(name) -> str:
    """An exception type as a reason may name it: Python's own or the course's, else 'an error'."""
    return name if isinstance(name, str) and (name in PYTHON_ERRORS or name in COURSE_ERRORS) else "an error"


def place(value, names: AssignmentNames | None = None) -> str:
    """' (at 03_x.ipynb cell 2 (03-span) line 7)' when every part of ``value`` is the assignment's
    own, else ''."""
    names = names or assignment_names()
    match = PLACE.match(value) if isinstance(value, str) else None
    if not match or match["notebook"] not in names.notebooks:
        return ""
    text = f"{match['notebook']} cell {int(match['cell'])}"
    if match["grade_id"] and match["grade_id"] in names.grade_ids:
        text += f" ({match['grade_id']})"
    if match["line"]:
        text += f" line {int(match['line'])}"
    return f" (at {text})"
