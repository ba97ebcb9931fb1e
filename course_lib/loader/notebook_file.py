"""A notebook file read as Jupyter reads it, whichever editor saved it.

Jupyter's file manager reads a notebook as UTF-8 and hands it to ``nbformat``, which reads any
nbformat version and converts it (3 to 4, an older 4.x to 4.5 when saved again). Editors save the
same notebook differently: with a UTF-8 byte-order mark (Notepad, some Windows tools), with CRLF
line ends, or in an older nbformat. ``read_bytes`` reads all of these as one notebook and says what
it had to tolerate (``fixes``), and ``normalised`` writes the notebook as Jupyter saves it. The
loader reads every notebook through it, the grader's collect step writes the collected copy
normalised (so every grading step sees one notebook), and the submit check tells a student
beforehand. Whoever parses untrusted bytes passes its own bounded ``parse``.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import nbformat
from nbformat.notebooknode import NotebookNode

BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark: Jupyter's json.loads refuses it, many editors write it
CURRENT = (4, 5)  # the nbformat Jupyter saves
READABLE_MAJORS = (3, 4)  # the versions nbformat converts to 4 that a Jupyter of the last ten years saved


class NotebookUnreadable(ValueError):
    """Bytes no Jupyter opens as a notebook; the message says why in the grader's words (never the content)."""


@dataclass(frozen=True)
class NotebookFile:
    """A notebook as Jupyter holds it, and what its file had that Jupyter would not have saved."""

    notebook: NotebookNode  # nbformat 4 (4.5 when it was older), as Jupyter's Save would write it
    fixes: tuple[str, ...]  # "UTF-8 BOM", "CRLF line endings", "nbformat 4.2": empty when saved as Jupyter saves


def _parse(data: bytes) -> object:
    """Strict UTF-8 JSON, as Jupyter's file manager decodes a notebook."""
    return json.loads(data.decode("utf-8"))


def _why_unparsed(err: Exception) -> str:
    """Why the JSON could not be parsed, in the grader's words (a bounded parser's refusal is in its own)."""
    if isinstance(err, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(err, RecursionError):
        return "JSON nested too deeply"
    if isinstance(err, json.JSONDecodeError):
        return f"not valid JSON (line {err.lineno}, column {err.colno})"
    return str(err)


def line_endings(data: bytes) -> str | None:
    """'CRLF line endings' or 'CR line endings' when the JSON text uses them (JSON reads both), else None."""
    if b"\r\n" in data:
        return "CRLF line endings"
    return "CR line endings" if b"\r" in data else None


def _version(raw: dict) -> tuple[int, int]:
    if "nbformat" not in raw:  # nbformat would take it for a version 1 notebook and drop its cells
        raise NotebookUnreadable("not a notebook (it names no nbformat version)")
    major, minor = raw["nbformat"], raw.get("nbformat_minor", 0)
    if not (isinstance(major, int) and isinstance(minor, int)) or isinstance(major, bool):
        raise NotebookUnreadable("its nbformat version is not a number")
    if major not in READABLE_MAJORS:
        raise NotebookUnreadable(f"nbformat {major} is no version Jupyter reads")
    return major, minor


def read_bytes(data: bytes, parse: Callable[[bytes], object] = _parse) -> NotebookFile:
    """The notebook in ``data``, read as Jupyter reads it and brought to nbformat 4.5 when older; raises
    NotebookUnreadable. ``parse`` turns the bytes (the byte-order mark removed) into JSON values: pass a
    bounded one for bytes someone else wrote (its ValueError is the reason)."""
    fixes = []
    if data.startswith(BOM):
        data = data[len(BOM):]
        fixes.append("UTF-8 BOM")
    if ending := line_endings(data):
        fixes.append(ending)
    try:
        raw = parse(data)
    except (ValueError, RecursionError) as err:
        raise NotebookUnreadable(_why_unparsed(err)) from None
    if not isinstance(raw, dict):
        raise NotebookUnreadable("not a notebook (its JSON is no object)")
    major, minor = _version(raw)
    try:
        notebook = nbformat.versions[major].to_notebook_json(raw, minor=minor)
        del raw  # the notebook holds copies: the parsed values need not stay for the rest
        notebook = nbformat.convert(notebook, 4)
        if (major, minor) < CURRENT:
            notebook = _upgraded(notebook, major, minor)
            fixes.append(f"nbformat {major}.{minor}")
    except (ValueError, TypeError, AttributeError, KeyError, RecursionError, nbformat.ValidationError):
        raise NotebookUnreadable(f"an nbformat {major}.{minor} notebook Jupyter cannot convert") from None
    if not isinstance(notebook.get("cells"), list) or not all(isinstance(c, dict) for c in notebook.cells):
        raise NotebookUnreadable("not a notebook (it has no list of cells)")
    return NotebookFile(notebook, tuple(fixes))


def _upgraded(notebook: NotebookNode, major: int, minor: int) -> NotebookNode:
    """nbformat's own upgrade to 4.5, with cell ids that depend on nothing but the cell's place (nbformat draws
    random ones), so one file always normalises to the same bytes."""
    if major == 4:
        notebook = nbformat.v4.upgrade(notebook, from_version=4, from_minor=minor)
    for index, cell in enumerate(notebook.cells):
        if isinstance(cell, dict):
            cell["id"] = f"cell-{index}"
    return notebook


def normalised(file: NotebookFile) -> bytes:
    """The notebook's bytes as Jupyter saves it: UTF-8 without a byte-order mark, LF line ends, nbformat 4.5."""
    text = nbformat.versions[4].writes_json(file.notebook)  # nbformat.writes' own, without its second validation
    return (text if text.endswith("\n") else text + "\n").encode("utf-8")


def read_path(path) -> NotebookFile:
    """A notebook file on disk, read as ``read_bytes`` reads it."""
    with open(path, "rb") as f:
        return read_bytes(f.read())
