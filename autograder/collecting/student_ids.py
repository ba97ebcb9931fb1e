"""Which folder names of ``submitted/`` are student ids every grading step can carry, and why the others are not.

An id nbgrader accepts (a space inside, letters of any alphabet, a leading dash, even
``--help``) is an honest id: it gets its row in every file and gradebook, and it only
ever travels as data (a config value, a file name, a CSV cell), never as a word on a
command line. What is refused is what nbgrader itself cannot carry exactly, refused by
name before any grading starts:
  - a hidden name (nbgrader's ``*`` never lists it);
  - ``*``, ``?`` or ``[``: nbgrader reads the id as a file pattern and would grade others;
  - spaces at either end: nbgrader strips them and would look for another folder;
  - control characters or bytes that are not UTF-8: no file or terminal shows them faithfully;
  - more than 128 characters: the gradebook's column holds no more.
"""
from __future__ import annotations

MAX_ID_CHARS = 128  # nbgrader's gradebook stores ids in String(128)
PATTERN_CHARACTERS = frozenset("*?[]")


def id_problem(name: str) -> str | None:
    """Why ``name`` cannot be a student id, in the instructor's words; None when it can."""
    if name in ("", ".", ".."):
        return "not a folder name"
    if name.startswith("."):
        return "a hidden folder: nbgrader never lists it as a student"
    if any(0xD800 <= ord(c) <= 0xDFFF for c in name):
        return "its name is not valid UTF-8"
    if any(not c.isprintable() for c in name):
        return "its name holds control characters"
    if PATTERN_CHARACTERS & set(name):
        return "nbgrader reads * ? [ ] in a student id as a file pattern (rename the folder)"
    if name != name.strip():
        return "nbgrader strips spaces at the ends of a student id (rename the folder)"
    if "/" in name or "\0" in name:
        return "not a single folder name"
    if len(name) > MAX_ID_CHARS:
        return f"longer than the {MAX_ID_CHARS} characters nbgrader's gradebook holds"
    return None


def is_student_id(name: str) -> bool:
    return id_problem(name) is None
