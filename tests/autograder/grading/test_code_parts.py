"""The probe job's request: what a student's notebooks find while the score of record runs them."""
from __future__ import annotations

import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder import confinement
from autograder.confinement.jobs import run_job
from autograder.grading.code_parts import PROBE_ENV, RUN_ALL_ENV, saved_runs

pytestmark = [pytest.mark.skipif(confinement.status() is not None, reason=f"no confinement: {confinement.status()}"),
              pytest.mark.timeout(300)]

TRAINING_CELL = """from course_lib.notebook import env
dev = env.run_or_load("vanilla_eval_dev_without_pretrain", globals())
result = [dev.correct, dev.total, (env.OUT_DIR / "vanilla.nopretrain.dev.predictions").read_text()]
"""


def test_training_cells_load_the_run_outputs_handed_in(tmp_path):
    """Does a training cell in the probe job load the run log and predictions handed in (as it does under
    nbgrader, from outputs/ beside the notebooks), with no params copied in?"""
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    (outputs / "vanilla_eval_dev_without_pretrain.json").write_text(json.dumps(
        {"name": "vanilla_eval_dev_without_pretrain", "preset": "smoke", "seconds": 1.0,
         "written": ["vanilla.nopretrain.dev.predictions"], "correct": 3, "total": 4, "seed": 0, "accuracy": 0.75}))
    (outputs / "vanilla.nopretrain.dev.predictions").write_text("Oria\nOria\nOria\nZelora\n")
    (outputs / "vanilla.model.params").write_bytes(b"params are the decode job's")
    cell = new_code_cell(TRAINING_CELL, metadata={"tags": ["training"]})
    path = tmp_path / "02_finetune_without_pretraining.ipynb"
    nbformat.write(new_notebook(cells=[cell]), path)
    given = saved_runs(tmp_path)
    assert sorted(given) == ["outputs/vanilla.nopretrain.dev.predictions",
                             "outputs/vanilla_eval_dev_without_pretrain.json"]
    request = {"notebooks": [path.name], "checks": [{"grade_id": "g", "notebook": path.stem, "needs": ["result"],
                                                     "probe": "variables", "inputs": {"names": ["result"]}}]}
    job = run_job("probe", request, {path.name: path, **given}, timeout=120, env={**PROBE_ENV, **RUN_ALL_ENV})
    assert job.answer["checks"]["g"]["output"]["result"] == [3, 4, "Oria\nOria\nOria\nZelora\n"], job.log[-2000:]
