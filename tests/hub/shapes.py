"""The hand-ins a term brings beside the browser's, for the hub test: each the same work (notebook 03's span corruption
answered as the instructor wrote it), in the shape a student's tools or habits give it, and three students' work in a
Canvas download.

The shapes whose grading rests on issue 50's items 1-3 (any editor's files read as Jupyter reads them, a renamed copy
taken in the missing notebook's place, a notebook's own helper files and slow explorations under Run All's limits:
branch issue-50a) join the cohort only when that work is in the checkout; their collect step then keeps notes for the
instructor (``Collected.notices``), which is how the test knows.
"""
from __future__ import annotations

import dataclasses
import re
import textwrap
from pathlib import Path

import nbformat

from autograder.collecting.collect import Collected
from course_lib.layout import SOLUTIONS_DIR

NB03, NB07 = "03_span_corruption.ipynb", "07_attention_exploration.ipynb"
SPAN = "03-span-corruption"
# issue 50 items 1-3 are in this checkout (branch issue-50a): the shapes they grade can join
EDITOR_SHAPES_READY = "notices" in {f.name for f in dataclasses.fields(Collected)}
NEEDS_ITEMS_1_3 = "needs issue 50 items 1-3 (branch issue-50a: the collect step's notices, renamed copies, Run All's " \
                  "limits)"
# user -> what their hand-in is: the same work as hubtest-ada's first one, in another shape
SHAPES = {
    "hubtest-win": "saved by a Windows editor: a UTF-8 byte order mark and CRLF line endings in every notebook",
    "hubtest-ren": "03 handed in only as the browser's download of it, '03_span_corruption (1).ipynb'",
    "hubtest-del": "07 deleted: not handed in at all",
    "hubtest-slow": "an exploration cell of their own taking 35 s in 03 and in 07 (nbgrader's default: 30 s a cell)",
    "hubtest-wf": "03's answer in a helper module the notebook writes with %%writefile and imports",
}
# the Canvas download's students: its name for each (no Linux account: they hand in through the LMS) -> how
CANVAS = {"canvasloose": "the notebooks as loose files", "canvaszip": "a zip of the a5/ folder",
          "canvaslate": "loose files, marked LATE by Canvas"}


def span_answer() -> str:
    """The instructor's answer to 03's span corruption, without nbgrader's BEGIN/END SOLUTION lines."""
    cell = next(c for c in nbformat.read(SOLUTIONS_DIR / NB03, as_version=4).cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == SPAN)
    return "\n".join(line for line in cell.source.splitlines() if not re.match(r"\s*### (BEGIN|END) SOLUTION", line))


def _answered(released: Path, answer: str | None = None):
    """Released notebook 03 with the span corruption answered (by ``answer``, else the instructor's)."""
    nb = nbformat.read(released / NB03, as_version=4)
    next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == SPAN).source = answer or span_answer()
    return nb


def _explored(nb):
    """``nb`` with an exploration cell of the student's own at its end, 35 s long (past nbgrader's default limit)."""
    nb.cells.append(nbformat.v4.new_code_cell("import time\ntime.sleep(35)  # my own look at the data\nprint('done')"))
    return nb


def _written_helper(released: Path):
    """03 whose answer lives in span_helpers.py, which a cell writes with %%writefile before the answer imports it."""
    body = span_answer().split("def __getitem__(self, idx):\n", 1)[1]
    body = textwrap.indent(textwrap.dedent(body), "    ")
    helper = "import random\n\nimport torch\n\n\ndef corrupt(self, idx):\n" + body
    nb = _answered(released, "from span_helpers import corrupt\n\n\n"
                             "class CharCorruptionDataset(CharCorruptionDatasetBase):\n"
                             "    def __getitem__(self, idx):\n        return corrupt(self, idx)\n")
    at = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == SPAN)
    nb.cells.insert(at, nbformat.v4.new_code_cell("%%writefile span_helpers.py\n" + helper))
    return nb


def hand_in(user: str, released: Path) -> dict[str, bytes]:
    """The files of ``user``'s hand-in (file name -> bytes), made from the released notebooks."""
    files = {p.name: p.read_bytes() for p in sorted(released.glob("*.ipynb"))}
    files[NB03] = nbformat.writes(_answered(released)).encode()
    if user == "hubtest-win":
        files = {name: b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n") for name, data in files.items()}
    elif user == "hubtest-ren":
        files["03_span_corruption (1).ipynb"] = files.pop(NB03)
    elif user == "hubtest-del":
        del files[NB07]
    elif user == "hubtest-slow":
        files[NB03] = nbformat.writes(_explored(_answered(released))).encode()
        files[NB07] = nbformat.writes(_explored(nbformat.read(released / NB07, as_version=4))).encode()
    elif user == "hubtest-wf":  # (the helper handed in beside, as Jupyter left it)
        nb = _written_helper(released)
        files[NB03] = nbformat.writes(nb).encode()
        files["span_helpers.py"] = next(c.source for c in nb.cells if c.source.startswith("%%writefile")).split(
            "\n", 1)[1].encode()
    return files


def canvas_download(released: Path) -> bytes:
    """Canvas's Download Submissions for the three Canvas students: each the same work as the shapes."""
    from lms_downloads import make_zip

    work = {p.name: p.read_bytes() for p in sorted(released.glob("*.ipynb"))}
    work[NB03] = nbformat.writes(_answered(released)).encode()
    entries = {f"canvasloose_1001_{500 + i}_{name}": data for i, (name, data) in enumerate(work.items())}
    entries["canvaszip_1002_600_a5.zip"] = make_zip({f"a5/{name}": data for name, data in work.items()})
    entries.update({f"canvaslate_LATE_1003_{700 + i}_{name}": data for i, (name, data) in enumerate(work.items())})
    return make_zip(entries)
