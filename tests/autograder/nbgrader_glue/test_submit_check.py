"""nbgrader's submit and validate on the student's side say beforehand what the grader will make of each notebook."""
from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
from pathlib import Path

import nbformat
from conftest import REPO, SOLUTIONS
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config

from autograder.nbgrader_glue.submit_check import CheckedSubmit, FolderCheck
from course_lib.loader.notebook_file import BOM

RELEASE = REPO / "notebooks" / "a5"
NB02, NB03, NB05, NB07 = ("02_finetune_without_pretraining.ipynb", "03_span_corruption.ipynb", "05_synthesizer.ipynb",
                          "07_attention_exploration.ipynb")
NB06 = "06_considerations_in_pretrained_knowledge.ipynb"


def _student_folder(home: Path) -> Path:
    """The student's a5: 02 only as a browser's renamed download, 03 saved by a Windows editor, 05 deleted, 07
    broken, the rest as Jupyter saves them."""
    folder = home / "a5"
    shutil.copytree(SOLUTIONS, folder)
    (folder / NB02).rename(folder / "02_finetune_without_pretraining (1).ipynb")
    raw = json.loads((folder / NB03).read_bytes())
    (folder / NB03).write_bytes(BOM + json.dumps(raw, indent=2).replace("\n", "\r\n").encode())
    (folder / NB05).unlink()
    (folder / NB07).write_bytes(b'{"cells": [')
    return folder


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def _logger(name: str) -> tuple[logging.Logger, _Lines]:
    log = logging.getLogger(name)
    log.propagate = False
    handler = _Lines()
    log.addHandler(handler)
    return log, handler


def _said_right(lines: list[str]) -> None:
    text = "\n".join(line for line in lines if not line.startswith("Possible missing"))  # nbgrader's own, by name
    assert f"{NB02} is missing; '02_finetune_without_pretraining (1).ipynb' is a copy of it and will be graded in " \
           "its place" in text, text
    assert f"{NB03} starts with a UTF-8 byte-order mark" in text and "CRLF line endings" in text
    assert f"{NB05} is missing and will not be graded" in text
    assert f"{NB07} cannot be opened as a notebook (not valid JSON" in text
    assert not any(name in text for name in ("04_", "06_", "08_", "01_"))  # the others are graded as they are


def test_submit_says_which_notebooks_the_grader_cannot_take_as_they_are_and_submits_them_all(tmp_path):
    """Does the course's submit warn about a notebook Jupyter cannot open, one an editor saved otherwise, a missing
    one with a renamed copy and a missing one without, and still hand everything in?"""
    exchange, home = tmp_path / "exchange", tmp_path / "home"
    shutil.copytree(RELEASE, exchange / "course" / "outbound" / "a5")
    (exchange / "course" / "inbound").mkdir(parents=True)
    _student_folder(home)
    config = Config()
    config.Exchange.root, config.Exchange.assignment_dir = str(exchange), str(home)
    config.Exchange.cache = str(tmp_path / "cache")
    log, handler = _logger(f"submit-{id(tmp_path)}")
    submit = CheckedSubmit(coursedir=CourseDirectory(course_id="course", assignment_id="a5", root=str(home)),
                           authenticator=Authenticator(config=config), config=config, log=log)
    submit.start()
    _said_right(handler.lines)
    handed_in = next((exchange / "course" / "inbound").iterdir())
    assert (handed_in / NB07).read_bytes() == b'{"cells": ['  # nbgrader's copy as it was: the grader's collect reads it


def test_validates_folder_check_says_the_same_of_the_notebooks_folder(tmp_path):
    """Run as validate's kernel starts, in the notebook's folder, does FolderCheck log the same warnings, finding the
    release in the student's exchange, and write no file?"""
    exchange = tmp_path / "exchange"
    shutil.copytree(RELEASE, exchange / "course" / "outbound" / "a5")
    folder = _student_folder(tmp_path / "home")
    _, handler = _logger("nbgrader")
    notebook = nbformat.v4.new_notebook()
    try:
        with contextlib.chdir(folder):
            FolderCheck(str(exchange), "course")(notebook=notebook)
    finally:
        logging.getLogger("nbgrader").removeHandler(handler)
    _said_right(handler.lines)
    [added] = notebook.cells  # what will not be graded, as a failing cell of Validate's copy
    assert NB05 in added.source and NB07 in added.source and NB03 not in added.source
    kept = [p.name for p in SOLUTIONS.glob("*.ipynb") if p.name not in (NB02, NB05)]
    assert sorted(os.listdir(folder)) == sorted([*kept, "02_finetune_without_pretraining (1).ipynb"])  # none written


def test_the_validate_button_lists_what_will_not_be_graded_as_a_failed_cell(tmp_path, monkeypatch):
    """Does nbgrader's Validate, as the browser's button runs it with the hub's student config, list the missing
    notebook and the broken one among its failed cells, and still pass the notebook's own cells and leave the file
    as it was?"""
    from nbgrader.validator import Validator

    exchange = tmp_path / "exchange"
    shutil.copytree(RELEASE, exchange / "course" / "outbound" / "a5")
    folder = _student_folder(tmp_path / "home")
    monkeypatch.setenv("COURSE_EXCHANGE", str(exchange))  # as hub/jupyterhub_config.py gives a student's server
    monkeypatch.setenv("COURSE_ID", "course")
    config = Config()
    exec((REPO / "hub" / "student" / "nbgrader_config.py").read_text(), {"get_config": lambda: config})
    before = (folder / NB06).read_bytes()
    result = Validator(config=config).validate(str(folder / NB06))
    [failed] = result["failed"]
    assert f"{NB05} is missing and will not be graded" in failed["source"], failed
    assert NB07 in failed["source"] and "FileNotFoundError" in failed["error"]
    assert (folder / NB06).read_bytes() == before
    os.remove(folder / NB07)
    shutil.copy(SOLUTIONS / NB05, folder / NB05)
    shutil.copy(SOLUTIONS / NB07, folder / NB07)
    assert "failed" not in Validator(config=config).validate(str(folder / NB06))  # graded as they are: no failure


def test_the_hubs_student_config_submits_and_validates_with_the_checks():
    """Does a student's nbgrader config on the hub make submit CheckedSubmit and FolderCheck validate's kernel-start
    hook?"""
    from nbgrader.validator import Validator

    config = Config()
    exec((REPO / "hub" / "student" / "nbgrader_config.py").read_text(), {"get_config": lambda: config})
    assert config.ExchangeFactory.submit is CheckedSubmit
    assert isinstance(config.Execute.on_notebook_start, FolderCheck)
    assert Validator(config=config).preprocessors == Validator().preprocessors  # nbgrader's own steps, unchanged


def test_the_hubs_validate_names_empty_answers_and_looks_at_the_folder(tmp_path, monkeypatch):
    """Does the hub's one kernel-start hook both name an emptied written answer (the course's hook, first) and add the
    folder check's failing cell?"""
    from course_lib.notebook import validate

    monkeypatch.setenv("COURSE_EXCHANGE", str(tmp_path / "exchange"))
    shutil.copytree(RELEASE, tmp_path / "exchange" / "course" / "outbound" / "a5")
    monkeypatch.setenv("COURSE_ID", "course")
    config = Config()
    exec((REPO / "hub" / "student" / "nbgrader_config.py").read_text(), {"get_config": lambda: config})
    folder = _student_folder(tmp_path / "home")
    nb = nbformat.read(folder / NB06, as_version=4)
    answer = next(c for c in nb.cells if validate.is_written_answer(c))
    answer.source = ""
    with contextlib.chdir(folder):
        config.Execute.on_notebook_start(notebook=nb)
    assert answer.source.startswith("empty written answer ")
    assert nb.cells[-1].metadata.nbgrader.grade_id == "course-folder-check" and NB05 in nb.cells[-1].source
