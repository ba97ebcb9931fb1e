"""nbgrader's submit (and validate) on the student's side, saying beforehand what the grader will make of the files.

nbgrader's own submit lists notebooks as FOUND, MISSING or EXTRA by name and takes any bytes. The grader reads
notebooks as Jupyter does and takes a missing notebook's one renamed copy in its place
(``autograder.collecting.notebook_copies``), so a student learns here, with the same code, what it will do:
  - a notebook Jupyter cannot open (not UTF-8, not JSON, past the grader's size limit): it will not be graded;
  - a notebook an editor saved otherwise (a byte-order mark, CRLF line ends, an older nbformat): it is graded as
    Jupyter saves it (a byte-order mark also keeps Jupyter itself from opening it);
  - a missing notebook: which other notebook, if exactly one is a copy of it, is graded in its place, else that
    it will not be graded.
``CheckedSubmit`` is the exchange's submit (``c.ExchangeFactory.submit``); ``FolderCheck`` runs when nbgrader
validate's kernel has started (``c.Execute.on_notebook_start``), on the folder of the notebook validated, and says
the same in validate's log and, for what will not be graded, as a failed cell. Both only read the student's own
files, in the student's own process.
"""
from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from nbgrader.exchange.default.submit import ExchangeSubmit

from autograder.collecting.collect import Limits
from autograder.collecting.notebook_copies import read_notebook, release_marks, stand_ins
from autograder.collecting.safe_files import listing, shown, size_text
from course_lib.loader.notebook_file import NotebookUnreadable

MAX_NOTEBOOKS = 40  # notebooks of a folder looked at (an assignment has 8)


def folder_warnings(folder: Path, release: Path | None, limits: Limits = Limits()) -> list[str]:
    """What the grader will make of the notebooks at the top of ``folder``, one line each (none: graded as they
    are); ``release``, the assignment's released folder, names the notebooks expected."""
    said = []
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        entries, _ = listing(fd, limits.max_entries)
        notebooks = sorted(name for name, _ in entries if name.lower().endswith(".ipynb"))[:MAX_NOTEBOOKS]
        for name in notebooks:
            said += _file_warning(fd, name, limits)
        if release is not None and release.is_dir():
            said += _missing_warnings(fd, set(notebooks), release, limits)
    finally:
        os.close(fd)
    return said


def _file_warning(fd: int, name: str, limits: Limits) -> list[str]:
    """The line for one notebook that will not be graded as it is, if any (a link is read through: nbgrader's
    submit copies what it leads to)."""
    try:
        st = os.stat(name, dir_fd=fd)
    except OSError:
        return [f"{shown(name)} cannot be read; it will not be graded"]
    if not stat.S_ISREG(st.st_mode):
        return []
    if st.st_size > limits.notebook_bytes:
        return [f"{shown(name)} is {size_text(st.st_size)}, over the {size_text(limits.notebook_bytes)} the grader "
                "reads; it will not be graded (clear its outputs and save it again)"]
    with open(os.open(name, os.O_RDONLY | os.O_NONBLOCK, dir_fd=fd), "rb") as f:
        data = f.read(limits.notebook_bytes)
    try:
        fixes = read_notebook(data).fixes
    except NotebookUnreadable as err:
        return [f"{shown(name)} cannot be opened as a notebook ({err}); it will not be graded: open the copy you "
                "worked in with Jupyter and save it again"]
    if "UTF-8 BOM" in fixes:
        return [f"{shown(name)} starts with a UTF-8 byte-order mark, which Jupyter cannot open; the grader reads it "
                f"as Jupyter would save it ({', '.join(fixes)})"]
    if fixes:
        return [f"{shown(name)} was saved otherwise than Jupyter saves it ({', '.join(fixes)}); the grader reads it "
                "as Jupyter would save it"]
    return []


def _missing_warnings(fd: int, present: set[str], release: Path, limits: Limits) -> list[str]:
    """The lines for the release's notebooks the folder lacks: graded from a renamed copy, or not at all."""
    expected = frozenset(p.name for p in release.glob("*.ipynb"))
    missing = expected - present
    notes: dict[str, str] = {}
    taken = dict((release_name, name) for name, release_name in stand_ins(
        fd, missing, expected, release_marks(release), limits.notebook_bytes, limits.total_bytes,
        limits.max_entries, notes, []))
    said = []
    for name in sorted(missing):
        if name in taken:
            said.append(f"{name} is missing; '{shown(taken[name])}' is a copy of it and will be graded in its place "
                        f"(rename it {name} to be sure)")
        else:
            why = f" ({notes[name]})" if name in notes else ""
            said.append(f"{name} is missing and will not be graded{why}")
    return said


class CheckedSubmit(ExchangeSubmit):
    """nbgrader's submit, warning about each notebook the grader will not take as it is."""

    def check_filename_diff(self):
        super().check_filename_diff()
        for line in folder_warnings(Path(self.src_path), Path(self.release_path)):
            self.log.warning(line)


NOT_GRADED = "will not be graded"  # the words of every line that costs the student points
FOLDER_CHECK_ID = "course-folder-check"  # the grade_id of the cell Validate adds to its own copy


def failing_cell(lines: list[str]):
    """A zero-point test cell that raises with ``lines``: nbgrader's Validate lists it among the failed cells, so
    the browser's Validate button shows what will not be graded (the log alone reaches only the server's)."""
    from nbformat.v4 import new_code_cell

    text = "; ".join(lines)
    return new_code_cell(
        f"# the course's look at this assignment's folder (in Validate's copy only, never saved)\n"
        f"raise FileNotFoundError({text!r})",
        metadata={"nbgrader": {"grade": True, "grade_id": FOLDER_CHECK_ID, "locked": False, "points": 0,
                               "solution": False, "task": False, "schema_version": 3}})


class FolderCheck:
    """nbgrader validate's look at the notebook's folder (validate runs in it), the release found in the student's
    exchange: its Execute step's ``on_notebook_start`` hook (``c.Execute.on_notebook_start``; Validator's own list
    of steps cannot be configured). Logs every line; what will not be graded also becomes a failing cell at the end
    of Validate's copy of the notebook, the only place the browser's Validate button shows. The file is never
    changed. ``after``: the hook it follows (the course's naming of empty written answers), run first."""

    def __init__(self, exchange_root: str | None, course_id: str | None, after=None):
        self.release_root = Path(exchange_root, course_id, "outbound") if exchange_root and course_id else None
        self.after = after

    def __call__(self, notebook, **kwargs) -> None:
        if self.after is not None:
            self.after(notebook=notebook, **kwargs)
        folder = Path.cwd()
        try:
            lines = folder_warnings(folder, self.release_root / folder.name if self.release_root else None)
        except OSError as err:  # an unreadable folder: validate goes on
            lines = [f"the notebook's folder could not be looked at ({err.strerror})"]
        for line in lines:
            logging.getLogger("nbgrader").warning(line)
        failing = [line for line in lines if NOT_GRADED in line]
        if failing:
            notebook.cells.append(failing_cell(failing))
