"""Hostile submissions, made by Hypothesis: what students who read this repository could hand in to hurt the grader
or each other. Used by tests/autograder/units/test_hostile_graders.py and test_hostile_cohort.py (every grading
step) and benchmarks/fuzz_cohort.py (long runs).

A hostile submission is a student id and a list of entries put into ``submitted/<id>/a5`` (or an exchange folder):
  - notebooks that are malformed JSON, nested deeply, of another nbformat, with huge cells or outputs, with a
    million-value bomb of empty objects, with duplicated grade_ids, any of them behind a UTF-8 byte-order mark;
  - renamed copies (``Copy of ...``, ``... (1)``, another letter case) of a release notebook, of another one, two
    of one notebook, or garbage under such a name;
  - odd entries: FIFOs and sockets named like notebooks, links (out of the submission, inside it, dangling, looping),
    folders named like files, files of odd modes, many small files;
  - odd ids: leading dots, control and format characters, bidi overrides, 255-byte names, pattern characters.
Sizes stay small enough for the suite (a few MB); benchmarks/fuzz_cohort.py runs the same strategies longer.
"""
from __future__ import annotations

import json
import os
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

NOTEBOOKS = ("02_finetune_without_pretraining.ipynb", "03_span_corruption.ipynb", "05_synthesizer.ipynb")
# the big cases' scale: a third of the benchmark's in the suite (a 1 MB notebook of empty objects, a 1 MB cell);
# benchmarks/fuzz_cohort.py sets 1 (and more)
SUITE_SCALE = float(os.environ.get("HOSTILE_SCALE", "0.34"))
RUN_FILE = "vanilla.nopretrain.dev.predictions"
RELEASE = Path(__file__).resolve().parents[1] / "notebooks" / "a5"
# names a browser's download, a "Duplicate" or another letter case give the notebooks
RENAMED = ("Copy of 03_span_corruption.ipynb", "02_finetune_without_pretraining (1).ipynb", "05_SYNTHESIZER.ipynb",
           "03_span_corruption-Copy1.ipynb")
BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Entry:
    """One thing in a hostile submission."""

    path: str  # relative to the assignment folder
    kind: str  # "file", "fifo", "socket", "link", "folder"
    data: bytes = b""  # a file's bytes
    target: str = ""  # a link's target
    mode: int = 0o644  # a file's or folder's mode


@dataclass(frozen=True)
class Hostile:
    """One hostile student's submission."""

    student: str
    entries: tuple[Entry, ...]


def _notebook(cells: list) -> bytes:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}).encode()


def _code(source, grade_id: str | None = None, outputs=None) -> dict:
    meta = {"nbgrader": {"grade_id": grade_id, "solution": True, "grade": False, "locked": False,
                         "schema_version": 3}} if grade_id else {}
    return {"cell_type": "code", "metadata": meta, "source": source, "outputs": outputs or [],
            "execution_count": None}


@st.composite
def notebook_bytes(draw) -> bytes:
    """Bytes a hostile notebook holds."""
    kind = draw(st.sampled_from(["garbage", "truncated", "deep", "empty_objects", "nbformat", "huge_cell",
                                 "huge_outputs", "duplicated_ids", "odd_types", "bom", "release_copy"]))
    if kind == "bom":
        bomb = b'{"nbformat": 4, "cells": [' + b",".join([b"{}"] * int(SUITE_SCALE * 1_500_000)) + b"]}"
        return BOM + draw(st.one_of(st.binary(max_size=2000), st.just(_notebook([_code("x = 1")])), st.just(bomb)))
    if kind == "release_copy":  # a release notebook's bytes, maybe as a Windows editor saves them
        data = (RELEASE / draw(st.sampled_from(NOTEBOOKS))).read_bytes()
        return draw(st.sampled_from([data, BOM + data.replace(b"\n", b"\r\n")]))
    if kind == "garbage":
        return draw(st.binary(max_size=2000))
    if kind == "truncated":
        whole = _notebook([_code("x = 1\n" * 50)])
        return whole[: draw(st.integers(0, len(whole) - 1))]
    if kind == "deep":
        depth = draw(st.sampled_from([1_000, 200_000]))
        return b'{"cells": ' + b"[" * depth + b"]" * depth + b"}"
    if kind == "empty_objects":
        count = draw(st.sampled_from([10_000, int(SUITE_SCALE * 1_500_000)]))
        return b'{"cells": [' + b",".join([b"{}"] * count) + b"]}"
    if kind == "nbformat":
        version = draw(st.sampled_from([1, 3, 99, "4", None]))
        return json.dumps({"nbformat": version, "cells": draw(st.sampled_from([[], {}, "x", None]))}).encode()
    if kind == "huge_cell":
        return _notebook([_code("x = 1  # " + "y" * draw(st.sampled_from([10_000, int(SUITE_SCALE * 3_000_000)])))])
    if kind == "huge_outputs":
        many = draw(st.sampled_from([10, int(SUITE_SCALE * 20_000)]))
        return _notebook([_code("print(1)", outputs=[{"output_type": "stream", "name": "stdout",
                                                      "text": "z" * 100}] * many)])
    if kind == "duplicated_ids":
        return _notebook([_code("a = 1", "03-span-corruption"), _code("b = 2", "03-span-corruption")])
    return _notebook([{"cell_type": draw(st.sampled_from(["code", 7, None])), "metadata": [], "source": [1, None]}])


ODD_NAMES = st.one_of(
    st.sampled_from(["..x", ".hidden", "-dash", "--help", "a b", " lead", "trail ", "st*r", "q?", "[x]",
                     "e\u0301", "\u202eevil", "a\u200db", "\U0001F469\u200d\U0001F52C", "tab\tname", "nl\nname",
                     "x" * 129, "\u00e9" * 127, "\U0001F600" * 63]),
    st.text(st.characters(codec="utf-8", exclude_characters="/\x00"), min_size=1, max_size=20),
).filter(lambda name: name not in (".", "..") and len(name.encode()) <= 255)  # what a file system can hold


@st.composite
def entry(draw) -> Entry:
    """One hostile entry of a submission."""
    kind = draw(st.sampled_from(["notebook", "notebook", "renamed", "fifo", "socket", "link", "folder", "mode",
                                 "run_file"]))
    name = draw(st.sampled_from(NOTEBOOKS))
    if kind == "notebook":
        return Entry(name, "file", draw(notebook_bytes()))
    if kind == "renamed":
        return Entry(draw(st.sampled_from(RENAMED)), "file", draw(notebook_bytes()))
    if kind == "fifo":
        return Entry(name, "fifo")
    if kind == "socket":
        return Entry(draw(st.sampled_from([name, "sock"])), "socket")
    if kind == "link":
        target = draw(st.sampled_from(["/etc/shadow", "../../other/a5/03_span_corruption.ipynb", "missing",
                                       name, "outputs", "."]))
        return Entry(draw(st.sampled_from([name, "outputs", f"outputs/{RUN_FILE}"])), "link", target=target)
    if kind == "folder":
        return Entry(draw(st.sampled_from([name, "outputs/" + RUN_FILE])), "folder", mode=draw(
            st.sampled_from([0o755, 0o000, 0o444])))
    if kind == "mode":
        return Entry(name, "file", _notebook([]), mode=draw(st.sampled_from([0o000, 0o200, 0o4755])))
    return Entry(f"outputs/{RUN_FILE}", "file", draw(st.binary(max_size=500)))


@st.composite
def hostile(draw, ids=ODD_NAMES) -> Hostile:
    """A hostile student: an id (odd or plain) and up to four hostile entries."""
    student = draw(st.one_of(ids, st.from_regex(r"\Ahostile[0-9]{1,3}\Z")))
    return Hostile(student, tuple(draw(st.lists(entry(), min_size=1, max_size=4))))


def write(folder: Path, submission: Hostile) -> None:
    """Lay one hostile submission out in ``folder`` (its assignment folder), as the student would."""
    folder.mkdir(parents=True, exist_ok=True)
    for e in submission.entries:
        try:
            _write_entry(folder / e.path, e)
        except OSError:  # a student could not make it either (a folder where a link is, say): left out
            continue


def _write_entry(path: Path, e: Entry) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if os.path.lexists(path):
        return  # the first entry of a name wins
    if e.kind == "file":
        path.write_bytes(e.data)
        os.chmod(path, e.mode)
    elif e.kind == "fifo":
        os.mkfifo(path)
    elif e.kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        here = os.getcwd()
        os.chdir(path.parent)  # a socket's path must be short: bound by its name
        try:
            server.bind(path.name)
        finally:
            os.chdir(here)
            server.close()
    elif e.kind == "link":
        path.symlink_to(e.target)
    elif e.kind == "folder":
        path.mkdir()
        (path / "inner.txt").write_text("x")
        os.chmod(path, e.mode)


def make_readable(root: Path) -> None:
    """Give back every folder's owner bits, so a test's tmp folder can be removed after hostile modes."""
    for dirpath, dirnames, _ in os.walk(root, topdown=True):
        for name in dirnames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, stat.S_IRWXU)
