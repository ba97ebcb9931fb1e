"""nbgrader's autograde warns of a locked cell a student changed, and not of an honest submission's hidden tests."""
from __future__ import annotations

import logging
import shutil

import nbformat
import pytest
from conftest import SOLUTIONS
from nbgrader.preprocessors import OverwriteCells
from traitlets.config import Config
from traitlets.utils.importstring import import_item

from autograder.exports.gradebook_stamp import stamp_in_process
from autograder.nbgrader_glue.restore_cells import RestoreLockedCells
from autograder.nbgrader_glue.setup import configure_grading

NB03 = "03_span_corruption"
HIDDEN, PUBLIC = "03-span-hidden", "03-span-public"  # locked test cells: one with hidden tests, one without
CHANGED = "has changed"  # nbgrader's warning: "Attribute 'checksum' for cell ... has changed!"


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """Notebook 03 released by nbgrader's own generate_assignment from the solution; (release, gradebook URL)."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    course = tmp_path_factory.mktemp("course")
    shutil.copytree(SOLUTIONS, course / "source" / "a5", ignore=lambda d, names: [n for n in names if NB03 not in n])
    url = f"sqlite:///{course / 'gradebook.db'}"
    stamp_in_process()  # as the course's nbgrader processes do: no `alembic` command per gradebook
    api = NbGraderAPI(coursedir=CourseDirectory(root=str(course), db_url=url))
    assert api.generate_assignment("a5", force=True)["success"]
    return nbformat.read(course / "release" / "a5" / f"{NB03}.ipynb", as_version=4), url


def _overwrite(step, nb, url: str, caplog) -> tuple[nbformat.NotebookNode, str]:
    """``step`` (an OverwriteCells) over a submitted notebook: the notebook as autograde goes on with it, and what
    the step warned."""
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        nb, _ = step.preprocess(nb, {"nbgrader": {"db_url": url, "assignment": "a5", "notebook": NB03}})
    return nb, caplog.text


def _cell(nb, grade_id: str):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def test_nbgrader_alone_warns_for_every_honest_submission(released, caplog):
    """(The cause.) Does nbgrader's own OverwriteCells warn that the checksum of the hidden-test cell changed in a
    submission that is the release itself?"""
    release, url = released
    _, warned = _overwrite(OverwriteCells(), nbformat.from_dict(release), url, caplog)
    assert f"for cell {HIDDEN} has changed" in warned


def test_an_honest_submission_gets_its_hidden_tests_back_without_a_warning(released, caplog):
    """Does a submission whose locked cells are as released get its hidden tests restored, with no warning?"""
    release, url = released
    nb, warned = _overwrite(RestoreLockedCells(), nbformat.from_dict(release), url, caplog)
    assert CHANGED not in warned
    assert "BEGIN HIDDEN TESTS" in _cell(nb, HIDDEN).source
    assert "BEGIN HIDDEN TESTS" not in _cell(release, HIDDEN).source


@pytest.mark.parametrize("grade_id", [HIDDEN, PUBLIC])
def test_a_locked_cell_a_student_changed_is_still_reported_and_restored(released, caplog, grade_id):
    """Does a locked test cell a student edited (the one with hidden tests, or a public one) still get nbgrader's
    warning, and its instructor's source back?"""
    release, url = released
    submitted = nbformat.from_dict(release)
    _cell(submitted, grade_id).source = "assert True  # the student's own test"
    nb, warned = _overwrite(RestoreLockedCells(), submitted, url, caplog)
    assert f"for cell {grade_id} has changed" in warned
    assert "the student's own test" not in _cell(nb, grade_id).source


def test_the_course_autogrades_with_it():
    """Does the course's nbgrader config put this step where nbgrader's OverwriteCells was, and nowhere else?"""
    c = Config()
    configure_grading(c)
    steps = [import_item(step) for step in c.Autograde.sanitize_preprocessors]
    assert RestoreLockedCells in steps and OverwriteCells not in steps
