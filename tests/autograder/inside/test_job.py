"""The probe job runs a notebook as Jupyter's Run All does, and runs each check where its test cell stands."""
from __future__ import annotations

import copy

import nbformat
import pytest
import torch
from nbformat.v4 import new_code_cell, new_notebook

from autograder import confinement
from autograder.confinement.jobs import run_job

pytestmark = [pytest.mark.skipif(confinement.status() is not None, reason=f"no confinement: {confinement.status()}"),
              pytest.mark.timeout(300)]


def _cell(source: str, *tags: str, **nbgrader):
    cell = new_code_cell(source)
    if tags:
        cell.metadata["tags"] = list(tags)
    if nbgrader:
        cell.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": False, "schema_version": 3,
                                     "task": False, **nbgrader}
    return cell


def _answer(source: str):
    return _cell(source, grade_id="07-code", solution=True)


def _test_cell(grade_id: str = "07-test"):
    return _cell("assert False, 'the student's copy of a test cell never runs in the probe job'", grade_id=grade_id,
                 grade=True, locked=True, points=1)


def _probe(tmp_path, cells, checks: dict[str, list[str]]):
    """Run one notebook of ``cells`` in the probe job; grade_id -> what came back for a check of those names."""
    path = tmp_path / "07_run_all.ipynb"
    nbformat.write(new_notebook(cells=cells), path)
    request = {"notebooks": [path.name], "checks": [
        {"grade_id": gid, "notebook": "07_run_all", "needs": names, "probe": "variables", "inputs": {"names": names}}
        for gid, names in checks.items()]}
    job = run_job("probe", request, {path.name: path}, timeout=120)
    assert job.problem is None, job.log[-3000:]
    return job


def test_every_cell_runs_and_a_check_sees_the_names_at_its_test_cell(tmp_path):
    """Do exploration and training cells run (an answer may use their names), does a check see its names as they
    stand at its test cell (an exploration below that rebinds one, or changes a tensor in place, changes nothing), and
    does a check whose test cell was deleted see the notebook's final names?"""
    job = _probe(tmp_path, [
        _cell("import torch\nkeys = torch.eye(4)", "explore"), _cell("scale = 'loaded'", "training"),
        _answer("q_copy = 20.0 * keys[2]\nvalues = torch.ones(2)"), _test_cell(),
        _cell("q_copy = 0.01 * keys[2]  # what a small query does\nvalues *= 0", "explore")],
        {"07-test": ["q_copy", "values", "scale"], "07-deleted": ["q_copy"]})
    checks = job.answer["checks"]
    assert torch.equal(checks["07-test"]["output"]["q_copy"], 20.0 * torch.eye(4)[2])
    assert torch.equal(checks["07-test"]["output"]["values"], torch.ones(2))
    assert checks["07-test"]["output"]["scale"] == "loaded"
    assert torch.equal(checks["07-deleted"]["output"]["q_copy"], 0.01 * torch.eye(4)[2])


def test_a_split_answer_runs_part_by_part_and_a_repeated_test_cell_checks_at_the_last(tmp_path):
    """Does an answer split in two cells (one grade_id, as JupyterLab's Split Cell leaves it) run part after part, is
    a check whose test cell appears twice run at the last (where nbgrader grades it), and does the log say so?"""
    answer = _answer("def scaled(v):\n    return 20.0 * v\n\n\nq_copy = None")
    parts = [_answer("def scaled(v):\n    return 20.0 * v"), _answer("q_copy = scaled(torch.ones(3))")]
    assert parts[0].metadata == parts[1].metadata == answer.metadata
    test = _test_cell()
    job = _probe(tmp_path, [_cell("import torch"), *parts, test, _cell("q_copy = q_copy * 2"),
                            _cell(test.source, **copy.deepcopy(test.metadata["nbgrader"])), _cell("q_copy = None")],
                 {"07-test": ["q_copy"]})
    assert torch.equal(job.answer["checks"]["07-test"]["output"]["q_copy"], torch.full((3,), 40.0))
    assert "one grade_id in 2 cells" in job.log and "07_run_all.ipynb cell 2 (07-code)" in job.log
