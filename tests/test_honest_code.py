"""The honest cohorts' code (tests/honest_code.py, tests/similarity_cohorts.py) is right answers: each one, in its
release notebook, loads through the student loader and passes every check of its notebook, as the grader grades it."""
from __future__ import annotations

import pytest
from similarity_cohorts import GRADED, PARTS, SHORT, files, honest

from autograder.checks import registry
from autograder.grading import one_check
from course_lib.loader.load import load_notebooks

ANSWERS = max(len(answers) for answers in PARTS.values())  # the i-th student writes the i-th answer of each part


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """One grading seed's inputs, and the folder holding their files."""
    folder = tmp_path_factory.mktemp("inputs")
    return one_check.prepare(0, folder), folder


@pytest.mark.parametrize("i", range(ANSWERS))
def test_every_honest_answer_earns_full_marks(i, inputs, tmp_path):
    """Does the student who wrote answer i of every part (07's short answers one of their forms) load each notebook on
    its own without an error, as nbgrader runs each in a kernel of its own, and pass every check of that notebook
    (a name the notebook does not import, such as math, would fail here)?"""
    given = honest({part: i % len(answers) for part, answers in PARTS.items()}, short=i % len(SHORT))
    prepared, folder = inputs
    for name, text in files(given).items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    problems = {}
    for name in GRADED:
        module = load_notebooks([tmp_path / name], module_name=f"honest_{i}_{name[:2]}", errors="record")
        assert module.__errors__ == [] and module.__not_written__ == [], name
        for check in (c for c in registry.CHECKS if c.notebook == name.removesuffix(".ipynb")):
            if found := one_check.grade_check(check, module, prepared[check.grade_id], folder):
                problems[check.grade_id] = found
    assert problems == {}
