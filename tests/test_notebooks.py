"""The notebook series: executes top to bottom, and its nbgrader metadata is sound."""
from __future__ import annotations

import shutil

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import SOLUTIONS

NOTEBOOKS = sorted(p.name for p in SOLUTIONS.glob("*.ipynb"))


def test_series_is_numbered_and_complete():
    """Are there eight notebooks named NN_topic.ipynb in order?"""
    assert [n[:3] for n in NOTEBOOKS] == [f"{i:02d}_" for i in range(1, 9)]


def test_grade_ids_are_unique_and_graded_cells_have_points():
    """Is every grade_id unique across the series, and does every graded cell carry points?"""
    seen = {}
    for name in NOTEBOOKS:
        nb = nbformat.read(SOLUTIONS / name, as_version=4)
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader")
            if not meta:
                continue
            assert meta["grade_id"] not in seen, f"{meta['grade_id']} in {name} and {seen.get(meta['grade_id'])}"
            seen[meta["grade_id"]] = name
            if meta.get("grade"):
                assert meta.get("points", 0) > 0 or meta.get("solution"), f"{name}: {meta['grade_id']} has no points"
                if not meta.get("solution"):
                    assert meta.get("locked"), f"{name}: test cell {meta['grade_id']} is not locked"


def test_original_points_carried_over():
    """Do the coding parts keep the original's points (finetune config 4, span corruption 5 public, pretrain config 7, synthesizer forward 5)?"""
    points = {}
    for name in NOTEBOOKS:
        for cell in nbformat.read(SOLUTIONS / name, as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade"):
                points[meta["grade_id"]] = meta.get("points")
    assert points["02-glue-config"] == 4 and points["04-pretrain-config"] == 7 and points["05-synthesizer-equivalence"] == 5 and points["03-span-public"] + points["03-span-hidden"] == 20


@pytest.fixture(scope="module")
def series(tmp_path_factory, world_dir):
    """A folder holding a copy of every solution notebook, and the smoke preset's environment for its kernels."""
    work = tmp_path_factory.mktemp("series")
    for name in NOTEBOOKS:
        shutil.copy(SOLUTIONS / name, work / name)
    env = {"COURSE_PRESET": "smoke", "COURSE_DATA_DIR": str(world_dir), "COURSE_OUT_DIR": str(work / "outputs")}
    with pytest.MonkeyPatch.context() as patch:  # kernels inherit the test process's environment
        for key, value in env.items():
            patch.setenv(key, value)
        yield work


# one test per notebook, in series order, all writing into one outputs folder (checked by the
# test after them), so a slow machine spends its time budget per notebook and a failure names its notebook
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_solution_notebook_executes_top_to_bottom(series, name):
    """Does this solution notebook run start to finish in the smoke preset?"""
    nb = nbformat.read(series / name, as_version=4)
    client = NotebookClient(nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(series)}})
    client.execute()


def test_training_cells_wrote_the_seed_files(series):
    """Did the training cells of the series write the original's params and predictions files?"""
    out = series / "outputs"
    for name in ("vanilla.model.params", "vanilla.nopretrain.dev.predictions", "vanilla.pretrain.test.predictions",
                 "synthesizer.finetune.params", "synthesizer.pretrain.dev.predictions"):
        assert (out / name).is_file(), name
