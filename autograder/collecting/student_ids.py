"""Which names in ``submitted/`` are student ids that every grading step can carry, and why not.

An id is judged by what nbgrader and the file system really refuse, nothing more: an id
nbgrader carries (a space inside, letters of any alphabet, an emoji joined by U+200D, a
leading dash, even ``--help``) is an honest id. It gets its row in every file and
gradebook, and it only ever travels as data (a config value, a file name, a CSV cell),
never as a word on a command line; people see it through ``safe_files.shown``. Refused,
by name, before any grading starts:
  - what Linux cannot name a folder: empty, ``.``, ``..``, a ``/`` or NUL inside, more than
    255 bytes of UTF-8 (NAME_MAX, however few characters that is), bytes that are not UTF-8
    (a gradebook stores text: Python hands such names over with lone surrogates);
  - a hidden name: nbgrader's ``submitted/*`` never lists it;
  - ``*``, ``?`` or ``[``: nbgrader globs ``submitted/<id>/<assignment>`` and would find others;
  - white space at either end: nbgrader's CourseDirectory strips it and looks for another folder;
  - a newline: nbgrader's converters read the id back from the path with ``(?P<student_id>.*)``,
    whose ``.`` stops at a newline ("Could not match ...");
  - more than 128 characters: the gradebook's ``Student.id`` is ``String(128)`` (PostgreSQL
    holds no more).
Other control characters, format characters (U+200D) and bidi controls pass all of these:
they are ids, shown neutralised. nbgrader's exchange adds no rule for a folder already in
``submitted/``: its file names ``<id>+<assignment>+<timestamp>+<random>`` are read back with
``rsplit('+', 3)`` (a ``+`` in an id survives), and only ``nbgrader submit --student`` refuses
``*`` and ``+``; on the hub an id is a Linux user name, which fits the exchange's 255 bytes.
"""
from __future__ import annotations

import glob

MAX_ID_CHARS = 128  # nbgrader's gradebook stores ids in String(128)
NAME_MAX_BYTES = 255  # Linux's longest file name (NAME_MAX), in bytes of its UTF-8


def id_problem(name: str) -> str | None:
    """Why ``name`` cannot be a student id, in the instructor's words; None when it can."""
    if name in ("", ".", ".."):
        return "not a folder name"
    if "/" in name or "\0" in name:
        return "not a single folder name"
    if any(0xD800 <= ord(c) <= 0xDFFF for c in name):
        return "its name is not valid UTF-8"
    if len(name.encode("utf-8")) > NAME_MAX_BYTES:
        return f"longer than the {NAME_MAX_BYTES} bytes a Linux file name holds"
    if name.startswith("."):
        return "a hidden folder: nbgrader never lists it as a student"
    if glob.has_magic(name):
        return "nbgrader reads * ? [ in a student id as a file pattern (rename the folder)"
    if name != name.strip():
        return "nbgrader strips white space at the ends of a student id (rename the folder)"
    if "\n" in name:
        return "nbgrader cannot read a student id with a newline back from its path (rename the folder)"
    if len(name) > MAX_ID_CHARS:
        return f"longer than the {MAX_ID_CHARS} characters nbgrader's gradebook holds"
    return None


def is_student_id(name: str) -> bool:
    """Whether ``name`` can be a student id."""
    return id_problem(name) is None
