"""nbgrader's sanitising steps, as configure_grading lists them, on notebooks with cells split in JupyterLab."""
from __future__ import annotations

import logging
import os

import nbformat
import pytest
from conftest import REPO, SOLUTIONS
from jupyterlab_edits import split_cell
from nbgrader.preprocessors import DeduplicateIds, OverwriteCells, OverwriteKernelspec
from traitlets.config import Config
from traitlets.utils.importstring import import_item

from autograder.nbgrader_glue.collected_only import OnlyCollectedCopies
from autograder.nbgrader_glue.setup import configure_grading

RELEASE = REPO / "notebooks" / "a5"
# these steps (and their subclasses) read the gradebook or the course folder
NEEDS_THE_COURSE = (OnlyCollectedCopies, OverwriteKernelspec, OverwriteCells)


def _sanitizing_steps() -> list:
    """The sanitising steps configure_grading gives nbgrader's autograde, less those that read the course."""
    environ = dict(os.environ)
    try:  # configure_grading also sets the kernel's environment
        config = Config()
        configure_grading(config)
    finally:
        os.environ.clear()
        os.environ.update(environ)
    steps = [import_item(step) for step in config.Autograde.sanitize_preprocessors]
    return [step for step in steps if not issubclass(step, NEEDS_THE_COURSE)]


def _cell(nb, grade_id):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def test_a_split_answer_and_a_split_written_answer_pass_nbgraders_steps(caplog):
    """Does a notebook whose answer cell and written answer were split in JupyterLab pass nbgrader's sanitising steps
    as configured (nbgrader's own DeduplicateIds fails it), the answer's parts still cells of their own in order, the
    last keeping the grade_id, the written answer merged back into its graded cell, each repair in the log?"""
    nb = nbformat.read(SOLUTIONS / "07_attention_exploration.ipynb", as_version=4)  # the answers written
    code = split_cell(nb, "07-a-code", "q_copy = 20.0")
    text = split_cell(nb, "07-a-i", "terms, so")
    count = len(nb.cells)
    steps = _sanitizing_steps()
    assert DeduplicateIds not in steps
    with caplog.at_level(logging.WARNING):
        for step in steps:
            nb, _ = step().preprocess(nb, {})
    assert len(nb.cells) == count - 1  # the written answer's parts merged: one cell fewer
    index = next(i for i, c in enumerate(nb.cells) if c.source == code[1])
    assert nb.cells[index - 1].source == code[0] and "nbgrader" not in nb.cells[index - 1].metadata
    assert nb.cells[index].metadata["nbgrader"]["grade_id"] == "07-a-code"
    assert _cell(nb, "07-a-i").source == f"{text[0]}\n\n{text[1]}"
    said = caplog.text
    assert "'07-a-code'" in said and "'07-a-i'" in said, said


def test_nbgraders_own_step_fails_a_split_answer():
    """Does nbgrader's own DeduplicateIds leave a split answer's first part with metadata its CheckCellMetadata
    refuses (what failed the whole student before)?"""
    from nbgrader.nbgraderformat.common import SchemaTooOldError
    from nbgrader.preprocessors import CheckCellMetadata

    nb = nbformat.read(RELEASE / "02_finetune_without_pretraining.ipynb", as_version=4)
    split_cell(nb, "02-glue", "raise NotImplementedError")
    nb, _ = DeduplicateIds().preprocess(nb, {})
    with pytest.raises(SchemaTooOldError):
        CheckCellMetadata().preprocess(nb, {})
