"""A notebook file read as Jupyter reads it, whichever editor saved it."""
from __future__ import annotations

import json

import nbformat
import pytest
from conftest import SOLUTIONS

from course_lib.loader.load import load_notebook
from course_lib.loader.notebook_file import BOM, NotebookUnreadable, normalised, read_bytes

NB07 = SOLUTIONS / "07_attention_exploration.ipynb"


def _older(data: bytes, minor: int) -> dict:
    raw = json.loads(data)
    raw["nbformat_minor"] = minor
    for cell in raw["cells"]:
        cell.pop("id", None)
    return raw


def test_a_notebook_jupyter_saved_is_read_as_is_and_normalises_to_its_own_bytes():
    """Does a notebook as Jupyter saves it need no fix, and normalise to the very bytes it has?"""
    data = NB07.read_bytes()
    file = read_bytes(data)
    assert file.fixes == () and normalised(file) == data


@pytest.mark.parametrize("minor", [0, 1, 2, 3, 4])
def test_an_editors_save_is_read_with_what_it_needed_said(minor):
    """Is a notebook with a byte-order mark, CRLF line ends and nbformat 4.0-4.4 read (upgraded to 4.5, with cell
    ids that depend only on their place) and are the fixes named?"""
    data = BOM + json.dumps(_older(NB07.read_bytes(), minor), indent=2).replace("\n", "\r\n").encode()
    file = read_bytes(data)
    assert file.fixes == ("UTF-8 BOM", "CRLF line endings", f"nbformat 4.{minor}")
    assert (file.notebook.nbformat, file.notebook.nbformat_minor) == (4, 5)
    assert [c.id for c in file.notebook.cells] == [f"cell-{i}" for i in range(len(file.notebook.cells))]
    assert normalised(read_bytes(data)) == normalised(file)
    nbformat.validate(nbformat.reads(normalised(file).decode(), as_version=4))


def test_an_nbformat_3_notebook_is_converted_as_jupyter_converts_it():
    """Is an nbformat 3 notebook (worksheets) read as nbformat 4.5, its code kept?"""
    v3 = nbformat.v3.new_notebook(worksheets=[nbformat.v3.new_worksheet(cells=[nbformat.v3.new_code_cell("x = 1")])])
    file = read_bytes(nbformat.writes(v3, version=3).encode())
    assert file.fixes == ("nbformat 3.0",) and [c.source for c in file.notebook.cells] == ["x = 1"]


@pytest.mark.parametrize("data,why", [
    (b"\xff\xfe{}", "not UTF-8 text"), (BOM + b"{not json", "not valid JSON"), (b"[]", "its JSON is no object"),
    (b'{"cells": []}', "names no nbformat version"), (b'{"nbformat": 5, "cells": []}', "no version Jupyter reads"),
    (b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [3]}', "cannot convert"),
])
def test_what_jupyter_cannot_open_is_refused_with_a_reason_that_quotes_nothing(data, why):
    """Is every file Jupyter cannot open as a notebook refused with the grader's words, none of its content?"""
    with pytest.raises(NotebookUnreadable, match=why) as refused:
        read_bytes(data)
    assert "{not" not in str(refused.value) and "\\x" not in str(refused.value) and len(str(refused.value)) < 80


def test_the_loader_loads_a_notebook_any_editor_saved(tmp_path):
    """Does the loader (the runs', the training cells', the grader's) load a notebook saved with a BOM and CRLF?"""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("answer = 42")])
    path = tmp_path / "nb.ipynb"
    path.write_bytes(BOM + nbformat.writes(notebook).replace("\n", "\r\n").encode())
    assert load_notebook(path).answer == 42
