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


def _probe(tmp_path, cells, checks: dict[str, list[str]], more: dict[str, list] | None = None, **request):
    """Run one notebook of ``cells`` (and the notebooks ``more`` names, after it) in the probe job; grade_id -> what
    came back for a check of those names, in the first notebook (``more``'s grade_ids name theirs: "08_x/08-test")."""
    notebooks = {"07_run_all": cells, **(more or {})}
    for name, its_cells in notebooks.items():
        nbformat.write(new_notebook(cells=its_cells), tmp_path / f"{name}.ipynb")
    request = {"notebooks": [f"{name}.ipynb" for name in notebooks], **request, "checks": [
        {"grade_id": gid, "notebook": gid.split("/")[0] if "/" in gid else "07_run_all", "needs": names,
         "probe": "variables", "inputs": {"names": names}} for gid, names in checks.items()]}
    job = run_job("probe", request, {f"{name}.ipynb": tmp_path / f"{name}.ipynb" for name in notebooks},
                  timeout=120)
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


def test_a_helper_a_cell_writes_is_imported_by_later_cells_and_notebooks_from_the_sandboxs_scratch(tmp_path):
    """Is a module a cell writes (``%%writefile``, or ``open`` in a cell) importable by the cells after it, and by a
    later notebook from the file as that notebook wrote it again, as in the notebooks' folder under Run All, with
    nothing written into the job's own folder?"""
    job = _probe(tmp_path, [
        _cell("%%writefile span_helpers.py\ndef masked_share():\n    return 0.25"),
        _answer("import span_helpers\nq_copy = span_helpers.masked_share()"),
        _cell("with open('saved_helper.py', 'w') as f:\n    f.write('TWICE = 2')"),
        _answer("from saved_helper import TWICE\nvalues = TWICE * q_copy"), _test_cell()],
        {"07-test": ["q_copy", "values"], "08_x/08-test": ["share", "again"]},
        more={"08_x": [_cell("%%writefile span_helpers.py\ndef masked_share():\n    return 0.5"),
                       _cell("import span_helpers, saved_helper\nshare = span_helpers.masked_share()\n"
                             "again = saved_helper.TWICE")]})
    checks = job.answer["checks"]
    assert checks["07-test"]["output"] == {"q_copy": 0.25, "values": 0.5}, job.log[-3000:]
    assert checks["08_x/08-test"]["output"] == {"share": 0.5, "again": 2}
    assert job.answer["failed_notebooks"] == {} and not list(tmp_path.glob("*.py"))


def test_a_cell_past_its_limit_is_interrupted_and_costs_only_what_it_would_have_defined(tmp_path):
    """Is a cell that runs past the cell limit interrupted (as Jupyter's interrupt: a loop that catches it ends
    there) and recorded like a failing cell, while every check before and after it, needing nothing it would have
    defined, gets its output?"""
    job = _probe(tmp_path, [
        _answer("q_copy = 20.0"), _test_cell(),
        _cell("import time\ntime.sleep(60)\nnever = 1", "explore"),
        _cell("import time\ntry:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    stopped_early = True"),
        _answer("values = q_copy + 1", ), _test_cell("07-after")],
        {"07-test": ["q_copy"], "07-after": ["values", "stopped_early"], "07-never": ["never"]}, cell_seconds=1)
    checks = job.answer["checks"]
    assert checks["07-test"]["output"] == {"q_copy": 20.0}
    assert checks["07-after"]["output"] == {"values": 21.0, "stopped_early": True}
    assert checks["07-never"]["error"]["kind"] == "missing"
    failed = job.answer["failed_notebooks"]["07_run_all.ipynb"]
    assert (failed["type"], failed["count"]) == ("CellTimeout", 2), failed


def test_past_the_jobs_own_deadline_no_cell_runs_and_the_checks_before_keep_their_outputs(tmp_path):
    """When the notebooks use up the job's own time (``seconds``), does every check before the cell that ran out keep
    its output, are the checks after it, in that notebook and the next, "out_of_time", and does the job still
    answer?"""
    job = _probe(tmp_path, [
        _answer("q_copy = 20.0"), _test_cell(), _cell("import time\nwhile True:\n    time.sleep(0.05)"),
        _answer("values = q_copy + 1"), _test_cell("07-after")],
        {"07-test": ["q_copy"], "07-after": ["values"], "08_x/08-test": ["share"]},
        more={"08_x": [_cell("share = 0.5")]}, seconds=4)
    checks = job.answer["checks"]
    assert checks["07-test"]["output"] == {"q_copy": 20.0}
    assert checks["07-after"]["error"]["kind"] == checks["08_x/08-test"]["error"]["kind"] == "out_of_time"
    assert job.answer["out_of_time"] == ["07_run_all.ipynb", "08_x.ipynb"] and job.seconds < 60


def test_a_check_whose_call_runs_out_of_torchs_memory_says_memory_and_another_error_says_raised(tmp_path):
    """When a student's function called by a check asks torch for more memory than the job has (torch says so with a
    RuntimeError of its own, not a MemoryError), is that check's error "memory", while a RuntimeError of the
    student's own, even in the same words, stays "raised"?"""
    nbformat.write(new_notebook(cells=[_cell(
        "import torch\n"
        "def grow():\n    return torch.ones(2 ** 40).sum()  # 4 TB of float32\n"
        "class Mine(RuntimeError):\n    pass\n"
        "def fail():\n    raise Mine(\"can't allocate memory\")\n"
        "def shape():\n    raise RuntimeError('shape mismatch')\n")]), tmp_path / "07_run_all.ipynb")
    checks = [{"grade_id": gid, "notebook": "07_run_all", "needs": [name], "probe": "variables",
               "inputs": {"calls": {name: [[]]}}} for gid, name in (("g", "grow"), ("f", "fail"), ("s", "shape"))]
    job = run_job("probe", {"notebooks": ["07_run_all.ipynb"], "checks": checks},
                  {"07_run_all.ipynb": tmp_path / "07_run_all.ipynb"}, timeout=120)
    assert job.problem is None, job.log[-3000:]
    errors = {gid: job.answer["checks"][gid]["error"] for gid in "gfs"}
    assert [errors[gid]["kind"] for gid in "gfs"] == ["memory", "raised", "raised"], errors
    assert (errors["g"]["type"], errors["f"]["type"]) == ("RuntimeError", "Mine")
