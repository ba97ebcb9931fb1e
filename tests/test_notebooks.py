"""The notebook series: executes top to bottom, and its nbgrader metadata is sound."""
from __future__ import annotations

import re
import shutil

import nbformat
import pytest
from conftest import REPO, SOLUTIONS
from notebook_client import notebook_client

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
    """Do the coding parts keep the original's points (finetune config 4, span corruption 5 public, pretrain config 7,
    synthesizer forward 5)?"""
    points = {}
    for name in NOTEBOOKS:
        for cell in nbformat.read(SOLUTIONS / name, as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade"):
                points[meta["grade_id"]] = meta.get("points")
    assert points["02-glue-config"] == 4 and points["04-pretrain-config"] == 7
    assert points["05-synthesizer-equivalence"] == 5 and points["03-span-public"] + points["03-span-hidden"] == 20


def test_answer_and_test_cells_let_run_all_go_on():
    """Does every answer code cell and graded test cell carry raises-exception, so that JupyterLab's Run All goes
    on past an answer not written yet or a failing check (and reaches the cells that explore the answers)?"""
    for name in NOTEBOOKS:
        for cell in nbformat.read(SOLUTIONS / name, as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and (meta.get("solution") or meta.get("grade")):
                assert "raises-exception" in cell.metadata.get("tags", []), f"{name}: {meta['grade_id']}"
            elif cell.cell_type == "code":  # a given cell that fails should stop Run All: it is a real error
                assert "raises-exception" not in cell.metadata.get("tags", []), f"{name}: {meta.get('grade_id')}"


def _training_runs(cell) -> list[str]:
    """The training runs (not evaluations) a cell's run_or_load calls name."""
    from course_lib.run_specs import RUNS

    names = re.findall(r'"(\w+)"', cell.source) if "run_or_load" in cell.source else []
    return [n for n in names if n in RUNS and RUNS[n].function != "evaluate"]


def test_training_cells_say_their_steps_and_time_first(world_dir):
    """Does the markdown before each training cell state each run's steps and time with the default preset
    (as the runs compute them for the handout's glue on the default world), so they cannot go stale?"""
    from course_lib.checks.glue import HANDOUT, PRETRAIN_HANDOUT
    from course_lib.data_files import read_text
    from course_lib.gpt.datasets import CharCorruptionDatasetBase, NameDataset
    from course_lib.gpt.trainer import TrainerConfig
    from course_lib.layout import DEFAULT_PRESET, TRAIN
    from course_lib.presets import get_preset
    from course_lib.run_specs import RUNS
    from course_lib.runs import apply_overrides, duration, plan_of

    preset = get_preset(DEFAULT_PRESET)
    corpus = CharCorruptionDatasetBase(read_text(world_dir / "wiki.txt"), preset.block_size)
    sizes = {"pretrain": len(corpus), "finetune": len(NameDataset(corpus, read_text(world_dir / TRAIN)))}
    checked = []
    for name in NOTEBOOKS:
        cells = nbformat.read(SOLUTIONS / name, as_version=4).cells
        for i, cell in enumerate(cells):
            for run in _training_runs(cell):
                spec = RUNS[run]
                glue = dict(PRETRAIN_HANDOUT if spec.function == "pretrain" else HANDOUT,
                            max_epochs=650 if spec.function == "pretrain" else 10 if spec.reads else 75)
                returned = TrainerConfig(**glue, final_tokens=200 * sizes["pretrain"] * preset.block_size)
                overrides = {"pretrain": preset.pretrain}.get(spec.function) or (
                    preset.finetune_with_pretrain if spec.reads else preset.finetune_without_pretrain)
                n = sizes[spec.function]
                plan = plan_of(run, returned, apply_overrides(returned, overrides, n, preset.block_size), n, preset)
                said = " ".join(cells[i - 1].source.split())
                assert cells[i - 1].cell_type == "markdown", f"{name} cell {i}: no markdown before it"
                assert f"{plan.steps:,} training steps" in said and duration(plan.seconds) in said, (name, run, said)
                checked.append(run)
    assert {"vanilla_pretrain", "vanilla_finetune_without_pretrain", "synthesizer_pretrain"} <= set(checked)


@pytest.fixture(scope="module")
def series(tmp_path_factory, world_dir):
    """A folder holding a copy of every solution notebook, and the smoke preset's environment for its kernels."""
    work = tmp_path_factory.mktemp("series")
    for name in NOTEBOOKS:
        shutil.copy(SOLUTIONS / name, work / name)
    env = {"COURSE_PRESET": "smoke", "COURSE_GRADED_PRESET": "smoke", "COURSE_DATA_DIR": str(world_dir),
           "COURSE_OUT_DIR": str(work / "outputs")}
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
    # force_raise_errors: the answer and test cells carry raises-exception (so Run All goes past an answer not
    # written yet); here, in the solutions, any error at all must fail
    # (notebook_client: with nbclient's Output-widget stand-in, 07's interact cell stalled for the whole 240 s
    # limit in two suites of five, tests/notebook_client.py says why)
    client = notebook_client(nb, timeout=240, kernel_name="python3", force_raise_errors=True,
                             resources={"metadata": {"path": str(series)}})
    client.execute()
    for cell in nb.cells:  # every public test cell, twins included, says in one line that it passed (issue 51)
        meta = cell.metadata.get("nbgrader", {})
        public = cell.cell_type == "code" and meta.get("grade") and not meta.get("solution") \
            and "BEGIN HIDDEN TESTS" not in cell.source and not meta["grade_id"].endswith(("-run-dev", "-run-test"))
        if public:
            said = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
            assert said.count("\n") == 1 and said.endswith(": all public checks passed\n"), (meta["grade_id"], said)


def test_training_cells_wrote_the_seed_files(series):
    """Did the training cells of the series write the original's params and predictions files?"""
    out = series / "outputs"
    for name in ("vanilla.model.params", "vanilla.nopretrain.dev.predictions", "vanilla.pretrain.test.predictions",
                 "synthesizer.finetune.params", "synthesizer.pretrain.dev.predictions"):
        assert (out / name).is_file(), name


def test_the_students_handout_table_gives_every_graded_cell_its_points():
    """Does docs/students.md's handout table name every graded cell of the notebooks once, with its points, in the
    notebook it is in, and add each row's points up right?"""
    page = (REPO / "docs" / "students.md").read_text(encoding="utf-8")
    section = page.split("## The handout, question by question")[1].split("\n## ")[0]
    rows = [line.split("|")[1:-1] for line in section.splitlines() if line.startswith("| ") and "`0" in line]
    cells = {}
    for name in NOTEBOOKS:
        for cell in nbformat.read(SOLUTIONS / name, as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade"):
                cells[meta["grade_id"]] = (name.removesuffix(".ipynb"), float(meta["points"]))
    tabled = {}
    for _, notebooks, named, points, _ in rows:
        found = re.findall(r"`([\w-]+)`(?: \.\.\. `([\w-]+)`)?: ([\d.]+)", named)
        for first, last, value in found:
            ids = [g for g in cells if first <= g <= last] if last else [first]
            for grade_id in ids:
                assert grade_id not in tabled and cells[grade_id][0] in notebooks, grade_id
                tabled[grade_id] = float(value)
        total = sum(tabled[g] for first, last, _ in found for g in ([g for g in cells if first <= g <= last]
                                                                    if last else [first]))
        assert total == float(points), (named, points)
    assert tabled == {g: points for g, (_, points) in cells.items()}
