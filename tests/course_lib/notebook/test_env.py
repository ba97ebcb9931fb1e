import importlib
import json
import os

import pytest

from course_lib.notebook import env


@pytest.fixture
def grading_env(monkeypatch, tmp_path):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    monkeypatch.setenv("COURSE_OUT_DIR", str(tmp_path))
    yield importlib.reload(env)
    monkeypatch.delenv("NBGRADER_EXECUTION")
    monkeypatch.delenv("COURSE_OUT_DIR")
    importlib.reload(env)


def test_grading_loads_saved_outputs_instead_of_training(grading_env, tmp_path):
    """While nbgrader grades, does a training cell read the saved run log instead of training?"""
    log = dict(name="vanilla_eval_dev_with_pretrain", preset="cpu", seconds=1.0, written=["x"], correct=3, total=4,
               history=None, accuracy=0.75)
    (tmp_path / "vanilla_eval_dev_with_pretrain.json").write_text(json.dumps(log))
    result = grading_env.run_or_load("vanilla_eval_dev_with_pretrain", parts={})
    assert result.accuracy == 0.75
    assert grading_env.run_or_load("vanilla_pretrain", parts={}) is None


def test_widgets_are_inert_while_grading(grading_env):
    """Does the explorer return nothing while grading?"""
    from course_lib.notebook import widgets

    assert widgets.head_explorer() is None


def test_needs_turns_only_not_implemented_into_a_reminder(capsys):
    """Does `needs` print a reminder for NotImplementedError and let other errors through?"""
    with env.needs("the thing"):
        raise NotImplementedError
    assert "write the thing first" in capsys.readouterr().out
    with pytest.raises(ValueError):
        with env.needs("the thing"):
            raise ValueError("real bug")


def test_corrupt_saved_output_is_skipped_not_fatal(grading_env, tmp_path, capsys):
    """Does an unreadable saved run log make the training cell skip with a message instead of crashing?"""
    (tmp_path / "vanilla_pretrain.json").write_text("{not json")
    assert grading_env.run_or_load("vanilla_pretrain", parts={}) is None
    assert "unreadable" in capsys.readouterr().out


def test_ensure_data_writes_no_answers(monkeypatch, tmp_path):
    """Does ensure_data write the practice world into the data folder without a test answers file?"""
    from course_lib.layout import DEV, TEST_INPUTS, TRAIN, WIKI

    monkeypatch.delenv("COURSE_DATA_DIR", raising=False)
    monkeypatch.setattr(env, "DATA_DIR", tmp_path / "data")
    assert env.ensure_data() == tmp_path / "data"
    assert sorted(f.name for f in (tmp_path / "data").iterdir()) == sorted(
        [WIKI, TRAIN, DEV, TEST_INPUTS])


@pytest.fixture
def smoke_env(monkeypatch, tmp_path):
    from course_lib.world import write_world

    write_world(tmp_path / "data", 0)
    monkeypatch.setenv("COURSE_PRESET", "smoke")
    monkeypatch.setenv("COURSE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("COURSE_OUT_DIR", str(tmp_path / "out"))
    (tmp_path / "out").mkdir()
    yield importlib.reload(env)
    for name in ("COURSE_PRESET", "COURSE_DATA_DIR", "COURSE_OUT_DIR"):
        monkeypatch.delenv(name)
    importlib.reload(env)


def test_stored_and_answered_reads_the_saved_runs(smoke_env, tmp_path, monkeypatch):
    """Does the comparison pair the pretrained params' recall on dev biographies with the saved dev accuracy?"""
    from types import SimpleNamespace

    import course_lib.gpt.recall
    from course_lib.gpt.checkpoint import save_params
    from course_lib.gpt.datasets import CharCorruptionDatasetBase
    from course_lib.gpt.model import GPT
    from course_lib.presets import get_preset
    from course_lib.runs import model_config

    parts = SimpleNamespace(initialize_vanilla_model=GPT)
    assert smoke_env.stored_and_answered("vanilla", parts) is None  # nothing saved yet

    text = (tmp_path / "data" / "wiki.txt").read_text()
    vocab_size = CharCorruptionDatasetBase(text, get_preset("smoke").block_size).vocab_size
    save_params(GPT(model_config(get_preset("smoke"), vocab_size)), tmp_path / "out" / "vanilla.pretrain.params")
    assert smoke_env.stored_and_answered("vanilla", parts) is None  # no dev run yet
    (tmp_path / "out" / "vanilla_eval_dev_with_pretrain.json").write_text(json.dumps({"accuracy": 0.25}))
    asked = []
    monkeypatch.setattr(course_lib.gpt.recall, "recall", lambda model, vocab, mentions: asked.extend(mentions) or 0.5)
    assert smoke_env.stored_and_answered("vanilla", parts) == (0.5, 0.25)
    dev = (tmp_path / "data" / "birth_dev.tsv").read_text().splitlines()
    # dev people only, and only places the smoke model's 63-character context can hold
    assert asked and all(m.end <= get_preset("smoke").block_size - 1 for m in asked)
    assert {m.place for m in asked} <= {line.split("\t")[1] for line in dev}


def test_stored_and_answered_is_inert_while_grading(grading_env):
    """While grading, does the comparison do nothing (display only)?"""
    assert grading_env.stored_and_answered("vanilla", parts=None) is None


def test_written_raises_for_a_placeholder():
    """Does written() raise NotImplementedError for an answer still None (so needs() skips) and hand back others?"""
    with pytest.raises(NotImplementedError):
        env.written(None)
    assert env.written(3) == 3


def test_a_run_whose_glue_is_not_written_is_skipped_in_one_line(smoke_env, capsys):
    """Does a training cell whose glue still holds the release's stub print one line naming it, and go on?"""
    import linecache
    from types import SimpleNamespace

    source = "def initialize_vanilla_model(mconf):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"
    linecache.cache["<02 glue>"] = (len(source), None, source.splitlines(True), "<02 glue>")
    namespace: dict = {}
    exec(compile(source, "<02 glue>", "exec"), namespace)
    parts = SimpleNamespace(initialize_vanilla_model=namespace["initialize_vanilla_model"], finetune=print,
                            train=print)
    assert smoke_env.run_or_load("vanilla_finetune_without_pretrain", parts) is None
    from course_lib.gpt.model import GPT

    written = SimpleNamespace(initialize_vanilla_model=GPT, finetune=print, train=print)
    assert smoke_env.run_or_load("vanilla_finetune_with_pretrain", written) is None  # nothing pretrained yet
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("vanilla_finetune_without_pretrain: skipped, initialize_vanilla_model is not written yet "
                      "(02_finetune_without_pretraining)")
    assert out[1].startswith("vanilla_finetune_with_pretrain: skipped, ") and "vanilla.pretrain.params" in out[1]
    assert len(out) == 2
    with pytest.raises(TypeError):  # any other error is the student's to see, with its traceback
        smoke_env.run_or_load("vanilla_finetune_without_pretrain", SimpleNamespace(
            initialize_vanilla_model=lambda mconf: GPT(mconf, "not an option"), finetune=print, train=print))


def _first_training_line(tmp_path, world_dir, monkeypatch, enter: str = "") -> str:
    """The line a training cell prints first about its threads, in a real kernel (started by this process, so with
    its CPU affinity) that runs ``enter`` first; no COURSE_THREADS in its environment."""
    import nbformat
    from conftest import SOLUTIONS
    from notebook_client import notebook_client

    for key, value in dict(COURSE_PRESET="smoke", COURSE_DATA_DIR=str(world_dir),
                           COURSE_OUT_DIR=str(tmp_path / "out")).items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("COURSE_THREADS", raising=False)
    monkeypatch.delenv("CPU_LIMIT", raising=False)
    glue = SOLUTIONS / "02_finetune_without_pretraining.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(enter or "pass"), nbformat.v4.new_code_cell(
        f"from course_lib.notebook import env\nparts = env.parts_with([{str(glue)!r}], {{}})\n"
        f"env.run_or_load('vanilla_finetune_without_pretrain', parts)")]
    notebook_client(nb, timeout=180, kernel_name="python3").execute()
    text = "".join(o.get("text", "") for o in nb.cells[1].outputs)
    return next(line for line in text.splitlines() if "training on" in line)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs CPU affinity and two CPUs or more")
def test_a_training_cell_on_one_cpu_of_the_machine_trains_on_one_thread(tmp_path, world_dir, monkeypatch):
    """Started on one CPU of the machine (taskset's affinity), does a training cell train on one thread and say its
    share is one CPU?"""
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(before)})  # the kernel inherits it
    try:
        line = _first_training_line(tmp_path, world_dir, monkeypatch)
    finally:
        os.sched_setaffinity(0, before)
    assert line.startswith("vanilla_finetune_without_pretrain: training on 1 CPU thread (this machine's share: 1 CPU")


def test_a_training_cell_in_a_cgroup_of_one_cpu_trains_on_one_thread(tmp_path, world_dir, monkeypatch):
    """In a cgroup whose CPU quota is one CPU (as a hub's server is), does a training cell train on one thread and
    say it is this server's share?"""
    from autograder.confinement.cgroups import Cgroup, cgroup_layout
    from autograder.confinement.limits import Limits

    if os.geteuid() != 0 or cgroup_layout() is None:
        pytest.skip("needs root and writable cgroups")
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU is already the whole machine")
    group = Cgroup(Limits(memory_mb=8192, max_processes=4096, cpus=1.0))
    enter = "import os\n" + "".join(f"open({str(folder / 'cgroup.procs')!r}, 'w').write(str(os.getpid()))\n"
                                    for folder in group.folders)
    try:
        line = _first_training_line(tmp_path, world_dir, monkeypatch, enter)
    finally:
        group.kill()
    assert line.startswith("vanilla_finetune_without_pretrain: training on 1 CPU thread (this server's share: 1 CPU")


def test_a_kernel_outside_the_checkout_writes_its_world_beside_its_notebooks(monkeypatch, tmp_path):
    """Started in a folder of notebooks copied out of the checkout, does a kernel's env write the world into that
    folder's data/world, not into the checkout?"""
    monkeypatch.delenv("COURSE_DATA_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    try:
        copied = importlib.reload(env)
        world = tmp_path / "data" / "world"
        assert copied.DATA_DIR == world and copied.ensure_data() == world and (world / "wiki.txt").is_file()
    finally:
        monkeypatch.undo()
        importlib.reload(env)
