"""Tests for course_lib/notebook/validate.py: nbgrader's Validate names each written answer left empty, and shows
each check message's first 80 characters whole, in a real `nbgrader validate` run with the student's config."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import REPO
from traitlets.config.loader import PyFileConfigLoader

from course_lib.notebook import validate
from course_lib.notebook.check_failed import PREFIX

RELEASE = REPO / "notebooks" / "a5"
NB07 = "07_attention_exploration.ipynb"
# 07 (e) with K and Q exchanged: its check's one line says so first, in more than 80 characters
SWAPPED_KQ = """c2_plain = self_attention(X, *[torch.eye(6, dtype=DTYPE)] * 3)[1]
V = (torch.outer(u_b, u_b) - torch.outer(u_c, u_c)) / beta**2
Q = torch.outer(u_d, u_d) + torch.outer(u_c, u_c)
K = torch.outer(u_d, u_a) + torch.outer(u_c, u_d)"""
SWAPPED_SAYS = "K and Q are exchanged (with them swapped it passes): K makes the keys (k_i = K x_i), Q the queries"


def _cell(nb, grade_id: str):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _student_07(folder: Path) -> Path:
    """The released 07 as a student left it: (a)(i) emptied, (a)(ii) untouched, (b)(i) written, the twin (a) right,
    the twin (e) with K and Q exchanged."""
    nb = nbformat.read(RELEASE / NB07, as_version=4)
    _cell(nb, "07-a-i").source = "\n"
    _cell(nb, "07-b-i").source = "The projection onto A."
    _cell(nb, "07-a-code").source = "q_copy = 20.0 * keys[2]"
    _cell(nb, "07-e-code").source = SWAPPED_KQ
    path = folder / NB07
    nbformat.write(nb, path)
    return path


def test_an_empty_answer_is_named_and_marked_unanswered():
    """Does the hook give each empty written answer (blank, or the placeholder alone) one line naming it and its
    question, with the checksum nbgrader gives an untouched answer, and leave written answers and code alone?"""
    from nbgrader.utils import compute_checksum, determine_grade

    nb = nbformat.read(RELEASE / NB07, as_version=4)
    _cell(nb, "07-a-i").source = "  \n"
    _cell(nb, "07-b-i").source = "The projection onto A."
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    validate.name_empty_answers(notebook=nb)
    emptied, untouched, written = (_cell(nb, g) for g in ("07-a-i", "07-a-ii", "07-b-i"))
    assert emptied.source == 'empty written answer 07-a-i: write it under "(i) Why can the weights ' \
                             '$\\alpha_1,\\dots,\\alpha_n$ be read as a cate..."'
    assert untouched.source.startswith('empty written answer 07-a-ii: write it under "(ii) Usually the mass')
    assert written.source == "The projection onto A."
    for cell in (emptied, untouched):
        assert cell.metadata.nbgrader.checksum == compute_checksum(cell) and determine_grade(cell)[0] == 0
    assert [c.source for c in nb.cells if c.cell_type == "code"] == code


@pytest.mark.parametrize("config", ["student_jupyter/nbgrader_config.py", "hub/student/nbgrader_config.py"])
def test_both_student_configs_set_validate_the_courses_way(config):
    """Do `make student`'s and the hub student's nbgrader configs both install the hook (the hub's before its folder
    check) and Validate's width?"""
    path = REPO / config
    loaded = PyFileConfigLoader(path.name, str(path.parent)).load_config()
    hook = loaded.Execute.on_notebook_start
    # (the hub's runs the grader's folder check after it: autograder.nbgrader_glue.submit_check.FolderCheck)
    assert (getattr(hook, "after", hook)) is validate.name_empty_answers
    assert loaded.Validator.width == validate.WIDTH == 4 + len(PREFIX) + 2 + validate.SHOWN + 3


def test_the_validate_button_reads_the_students_config():
    """Does the Validate button's server handler, in the server `make student` starts (in notebooks/a5, with
    student_jupyter/ as its config folder), load the course's Validate options?"""
    code = ("from nbgrader.server_extensions.validate_assignment.handlers import ValidateAssignmentHandler as H\n"
            "c = H.load_config(None)\n"
            "print(c.Validator.width, c.Execute.on_notebook_start.__qualname__)")
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_PATH"}
    env["JUPYTER_CONFIG_DIR"] = str(REPO / "student_jupyter")
    done = subprocess.run([sys.executable, "-c", code], cwd=RELEASE, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.split() == [str(validate.WIDTH), "name_empty_answers"], done.stderr[-2000:]


def test_nbgrader_validate_names_empty_answers_and_shows_each_message_whole(tmp_path, world_dir):
    """In a real `nbgrader validate` of a student's 07 (a real kernel, the student's config), is each empty written
    answer listed as failed under a line naming it, the written one not, and does a check's message show its first
    80 characters whole?"""
    path = _student_07(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_PATH"}
    env.update(JUPYTER_CONFIG_DIR=str(REPO / "student_jupyter"), COURSE_DATA_DIR=str(world_dir),
               PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""))
    done = subprocess.run([sys.executable, "-m", "nbgrader", "validate", path.name], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    said = done.stdout
    assert "VALIDATION FAILED" in said, (said + done.stderr)[-3000:]
    assert 'empty written answer 07-a-i: write it under "(i) Why can the weights' in said, said[-3000:]
    assert "empty written answer 07-a-ii: write it under" in said
    assert "answer 07-b-i:" not in said and "assert_passes(problems_07_a(" not in said  # written, and right
    assert f"{PREFIX}- {SWAPPED_SAYS[:validate.SHOWN]}" in said, said[-3000:]
    blocks = said.split("The following cell failed:")[1:]
    empty = [b for b in blocks if "empty written answer" in b]
    assert all("You did not provide a response." in b for b in empty)
    # every written answer of the release but (b)(i): 07's graded markdown cells less the one written
    answers = [c for c in nbformat.read(path, as_version=4).cells if validate.is_written_answer(c)]
    assert len(empty) == len(answers) - 1
