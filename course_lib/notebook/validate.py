"""What nbgrader's Validate tells a student, the course's way: each written answer left empty, and each message whole.

nbgrader's Validate (the notebook toolbar's button, or ``nbgrader validate``) runs the notebook in a fresh kernel
through its Validator, reading the student's nbgrader config. It fails a test cell that raised, and a written answer
whose cell still holds the release's ``YOUR ANSWER HERE`` unchanged (its checksum); a written answer whose
placeholder was deleted and nothing written passes as answered, and the failure it lists shows the cell's text, which
for an empty cell names nothing. ``configure`` sets two of nbgrader's own options in that config
(student_jupyter/nbgrader_config.py, which ``make student`` and a student's server on the hub read, and
hub/student/nbgrader_config.py):

- ``Execute.on_notebook_start``, nbclient's hook, called on Validate's copy of the notebook before any cell runs:
  ``name_empty_answers`` gives every written answer left empty (or only the placeholder) one line naming it and
  the question it answers, and marks it unanswered as nbgrader does an untouched one (the checksum of what it
  holds now), so the Validator lists it as failed ("You did not provide a response.") under that line. Only the
  copy in memory changes: Validate never writes the notebook, and grading reads the student's own file.
- ``Validator.width``: the Validator cuts each line of a failure at its width (90: about 80 characters of a
  message after its indent and "Check failed: "); at WIDTH every check message shows its first SHOWN characters
  whole, and every message puts what to fix there (tests/check_grading.py and the checks' tests hold them to it).
"""
from __future__ import annotations

from course_lib.notebook.check_failed import BULLET, PREFIX

SHOWN = 80  # characters of a message that say what to fix (and that Validate shows whole)
INDENT = "    "  # the Validator's indent of a failure's lines (its default)
# the Validator cuts a line at its width - 3 and adds "...": at WIDTH a message's first SHOWN characters show whole
WIDTH = len(INDENT) + len(PREFIX) + len(BULLET) + SHOWN + len("...")
TEXT_STUB = "YOUR ANSWER HERE"  # what a written answer holds in the release (nbgrader_config.py's text stub)
PROMPT = 70  # characters of the question a line quotes


def is_written_answer(cell) -> bool:
    """A cell the student writes prose in: nbgrader's graded solution cell in markdown."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.get("cell_type") == "markdown" and bool(meta.get("grade")) and bool(meta.get("solution"))


def is_empty(cell) -> bool:
    """Nothing written: blank, or the release's placeholder alone."""
    return cell.get("source", "").strip() in ("", TEXT_STUB)


def _prompt(cells, index: int) -> str:
    """Where the question of the answer cell at ``index`` starts: the first line of the last paragraph of the
    markdown cell just above it ("**(ii)** With the stretched ...", "## (a) Permuting the input")."""
    above = cells[index - 1] if index else {}
    if above.get("cell_type") != "markdown" or is_written_answer(above):
        return ""
    paragraphs = [p.strip() for p in above.get("source", "").split("\n\n") if p.strip()]
    line = paragraphs[-1].splitlines()[0].lstrip("# ").replace("**", "") if paragraphs else ""
    return line if len(line) <= PROMPT else line[: PROMPT - 3].rstrip() + "..."


def empty_answer_line(grade_id: str, prompt: str) -> str:
    """What Validate lists for an empty written answer: which one, then the question it answers."""
    return f"empty written answer {grade_id}: write it under " + (f'"{prompt}"' if prompt else "its question")


def name_empty_answers(notebook, **_) -> None:
    """nbclient's on_notebook_start hook: each empty written answer says which it is, and counts as unanswered."""
    from nbgrader.utils import compute_checksum

    for index, cell in enumerate(notebook.cells):
        if is_written_answer(cell) and is_empty(cell):
            cell.source = empty_answer_line(cell.metadata.nbgrader.grade_id, _prompt(notebook.cells, index))
            cell.metadata.nbgrader["checksum"] = compute_checksum(cell)  # as nbgrader marks an untouched answer


def configure(c) -> None:
    """Set Validate's options in an nbgrader config ``c`` (see the module's docstring)."""
    c.Execute.on_notebook_start = name_empty_answers
    c.Validator.width = WIDTH
