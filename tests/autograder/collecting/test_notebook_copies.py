"""The collect step's notebooks: every editor's save read as Jupyter reads it, and a missing notebook's renamed copy
taken in its place only when its content says it is one."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import REPO, SOLUTIONS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.checks.run_files import RUN_FILES
from autograder.collecting.collect import Limits, Wanted, collect_submission
from autograder.collecting.notebook_copies import TAKEN, copy_of, release_marks
from course_lib.loader.notebook_file import BOM

RELEASE = REPO / "notebooks" / "a5"
A = "a5"
NB02, NB03, NB05 = "02_finetune_without_pretraining.ipynb", "03_span_corruption.ipynb", "05_synthesizer.ipynb"
WANTED = Wanted(frozenset(p.name for p in RELEASE.glob("*.ipynb")), frozenset(RUN_FILES), marks=release_marks(RELEASE))


def windows_save(data: bytes, minor: int = 2) -> bytes:
    """A notebook as an older Jupyter on Windows, then an editor writing a byte-order mark, saves it: nbformat 4.x
    without cell ids, two-space indents, CRLF line ends."""
    raw = json.loads(data)
    raw["nbformat_minor"] = minor
    for cell in raw["cells"]:
        cell.pop("id", None)
    return BOM + json.dumps(raw, indent=2, ensure_ascii=False).replace("\n", "\r\n").encode()


def _hand_in(tmp_path: Path, files: dict[str, bytes], student: str = "alice"):
    folder = tmp_path / "submitted" / student / A
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return collect_submission(folder.parent, student, A, tmp_path / "dest", wanted=WANTED)


def _solution(name: str) -> bytes:
    return (SOLUTIONS / name).read_bytes()


def test_a_windows_save_is_collected_as_jupyter_saves_the_same_notebook(tmp_path):
    """Is a notebook saved with a BOM, CRLF line ends and nbformat 4.2 collected as the bytes Jupyter saves for the
    notebook, its cells' sources and metadata unchanged, and said to the instructor in one line?"""
    got = _hand_in(tmp_path, {NB03: windows_save(_solution(NB03)), NB02: _solution(NB02)})
    copy = json.loads((got.folder / NB03).read_bytes())
    solution = json.loads(_solution(NB03))
    assert (copy["nbformat"], copy["nbformat_minor"]) == (4, 5)
    assert [(c["source"], c["metadata"]) for c in copy["cells"]] == [(c["source"], c["metadata"])
                                                                      for c in solution["cells"]]
    assert b"\r" not in (got.folder / NB03).read_bytes() and not (got.folder / NB03).read_bytes().startswith(BOM)
    assert (got.folder / NB02).read_bytes() == _solution(NB02)  # saved as Jupyter saves it: left byte for byte
    assert f"normalised {NB03}: UTF-8 BOM, CRLF line endings, nbformat 4.2" in got.notices
    again = _hand_in(tmp_path / "again", {NB03: windows_save(_solution(NB03))})
    assert (again.folder / NB03).read_bytes() == (got.folder / NB03).read_bytes()  # one file, one copy


@pytest.mark.parametrize("name", [f"{NB02[:-6]} (1).ipynb", f"Copy of {NB02}", f"{NB02[:-6]}-Copy1.ipynb",
                                  NB02.upper().replace(".IPYNB", ".ipynb"), NB02.replace("_", " ")])
def test_a_renamed_copy_of_a_missing_notebook_is_taken_in_its_place(tmp_path, name):
    """Is the one copy of a missing notebook under another name (a download's (1), Copy of, -Copy1, capitals,
    spaces) collected under the release's name, said to the instructor with its name and to the student with the
    assignment's names only?"""
    got = _hand_in(tmp_path, {name: _solution(NB02), NB03: _solution(NB03)})
    assert (got.folder / NB02).read_bytes() == _solution(NB02) and not (got.folder / name).exists()
    assert f"took '{name}' as {NB02}" in got.notices and got.notes[NB02] == TAKEN
    assert name not in json.dumps(got.notes) and not any(name in d for d in got.dropped)
    assert f"{NB05} was not handed in" in got.notices


def test_a_copy_is_told_by_its_content_never_its_name(tmp_path):
    """Is a notebook named like a missing one but holding another notebook left out (and taken for the notebook it
    is a copy of, when that one is missing too), and are two copies of one notebook both left out, with the reasons
    said?"""
    got = _hand_in(tmp_path, {f"{NB03[:-6]} (1).ipynb": _solution(NB02), f"{NB05[:-6]} (1).ipynb": _solution(NB05),
                              f"Copy of {NB05}": _solution(NB05)})
    assert (got.folder / NB02).read_bytes() == _solution(NB02) and not (got.folder / NB03).exists()
    assert not (got.folder / NB05).exists()
    assert f"{NB03} was not handed in" in got.notices
    assert any(n.startswith(f"{NB05} was not handed in; 2 notebooks are copies of it") for n in got.notices)
    assert "copies of it" in got.notes[NB05] and NB03 not in got.notes


def test_a_merged_notebook_never_stands_in_for_two(tmp_path):
    """Is a notebook holding the cells of two missing notebooks taken for neither?"""
    merged = json.loads(_solution(NB02))
    merged["cells"] += json.loads(_solution(NB03))["cells"]
    got = _hand_in(tmp_path, {"02_and_03.ipynb": json.dumps(merged).encode()})
    assert got.folder is None
    assert f"{NB02} was not handed in" in got.notices and f"{NB03} was not handed in" in got.notices
    assert copy_of(json.dumps(merged).encode(), WANTED.marks) is None


def test_hostile_bytes_with_a_byte_order_mark_stand_in_for_nothing_and_stay_unread(tmp_path):
    """Are garbage, a value bomb and an over-size file, each with a byte-order mark and a name like a missing
    notebook, never taken, and is a release-named one left as handed in, said to be unreadable?"""
    bomb = BOM + b'{"nbformat": 4, "cells": [' + b",".join([b"{}"] * 1_100_000) + b"]}"
    limits = Limits(notebook_bytes=3 * 2 ** 20)
    folder = tmp_path / "submitted" / "eve" / A
    folder.mkdir(parents=True)
    for name, data in {f"{NB02[:-6]} (1).ipynb": BOM + os.urandom(5000), f"Copy of {NB03}": bomb,
                       f"{NB05[:-6]} (1).ipynb": BOM + b" " * (4 * 2 ** 20), NB05.replace("05", "5"): bomb,
                       "07_attention_exploration.ipynb": BOM + b"\xff\xfe{"}.items():
        (folder / name).write_bytes(data)
    got = collect_submission(folder.parent, "eve", A, tmp_path / "dest", limits=limits, wanted=WANTED)
    assert sorted(p.name for p in got.folder.iterdir()) == ["07_attention_exploration.ipynb"]
    assert "07_attention_exploration.ipynb could not be read as a notebook: not UTF-8 text" in got.notices
    assert not any(n.startswith("took") for n in got.notices)


HONEST_SAVES = st.tuples(st.booleans(), st.sampled_from(["\n", "\r\n", "\r"]), st.sampled_from([0, 2, 4, 5]),
                         st.sampled_from([None, 1, 2]), st.booleans())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(save=HONEST_SAVES)
def test_an_honest_notebook_in_any_editors_encoding_collects_to_the_same_notebook(tmp_path_factory, save):
    """Does the reference's notebook saved with or without a BOM, with any line ends, indent and nbformat 4.x,
    ascii-escaped or not, collect to a notebook with the same cells as Jupyter's own save?"""
    bom, newline, minor, indent, ascii_only = save
    raw = json.loads(_solution(NB05))
    raw["nbformat_minor"] = minor
    if minor < 5:
        for cell in raw["cells"]:
            cell.pop("id", None)
    text = json.dumps(raw, indent=indent, ensure_ascii=ascii_only).replace("\n", newline)
    tmp = tmp_path_factory.mktemp("save")
    got = _hand_in(tmp, {NB05: (BOM if bom else b"") + text.encode()})
    copy = json.loads((got.folder / NB05).read_bytes())
    assert [(c["cell_type"], c["source"], c["metadata"]) for c in copy["cells"]] == \
        [(c["cell_type"], c["source"], c["metadata"]) for c in json.loads(_solution(NB05))["cells"]]
    assert (copy["nbformat"], copy["nbformat_minor"]) == (4, 5)
    shutil.rmtree(tmp)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=3000), bom=st.booleans(), renamed=st.booleans())
def test_any_bytes_under_a_notebooks_name_are_collected_without_an_error(tmp_path_factory, data, bom, renamed):
    """Do arbitrary bytes (with or without a BOM), under a release notebook's name or a renamed copy's, leave the
    collect step with a row, never an exception, and never take a non-copy in a notebook's place?"""
    tmp = tmp_path_factory.mktemp("bytes")
    name = f"Copy of {NB03}" if renamed else NB03
    got = _hand_in(tmp, {name: (BOM if bom else b"") + data})
    assert not any(n.startswith("took") for n in got.notices)
    shutil.rmtree(tmp)
