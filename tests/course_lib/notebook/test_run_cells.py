"""The run cells of 02, 04 and 05: what they say in Jupyter and Validate, and that the kernel never scores a run."""
from __future__ import annotations

import json
import shutil

import pytest

from course_lib.data_files import read_birth_places
from course_lib.notebook import env, run_cells
from course_lib.run_specs import RUNS

DEV_RUN, TEST_RUN = "vanilla_eval_dev_without_pretrain", "vanilla_eval_test_without_pretrain"


@pytest.fixture
def outputs(monkeypatch, tmp_path, world_dir):
    """An empty outputs folder and the course world, as a notebook's kernel has them (not grading), in a course that
    grades the smoke preset."""
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.setattr(env, "OUT_DIR", tmp_path)
    monkeypatch.setattr(env, "DATA_DIR", world_dir)
    monkeypatch.setattr(env, "GRADED_PRESET", "smoke")
    monkeypatch.setattr(env, "CURRENT_CODE", {})
    return tmp_path


def _old_logs(outputs, *names, preset="smoke"):
    """Run logs as the runs wrote them before issue 51 (no prints, no "completed")."""
    for name in names:
        log = dict(name=name, preset=preset, seconds=1.0, written=[], history=None, seed=0, accuracy=None)
        (outputs / f"{name}.json").write_text(json.dumps(log))


def _places(world_dir, corpus: str) -> list[str]:
    return [e.place or "somewhere" for e in read_birth_places(world_dir / corpus)]


def test_autograde_never_scores_a_run_in_the_kernel(outputs, monkeypatch, smoke_runs):
    """While nbgrader autogrades, does a run cell fail even with every run file there (the grader's points replace
    its 0), in one line that says where the points come from?"""
    shutil.copytree(smoke_runs, outputs, dirs_exist_ok=True)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(run_cells.ScoredByTheGrader) as err:
        run_cells.check_run(DEV_RUN)
    assert err.value._render_traceback_() == [f"ScoredByTheGrader: {err.value}"]
    assert "grader scores vanilla.nopretrain.dev.predictions" in str(err.value)


def test_a_missing_run_says_which_file_and_what_writes_it(outputs):
    """Before the run, does the cell fail in one line naming the predictions file and the cell that writes it?"""
    wanted = "^run the training cell above: vanilla.nopretrain.dev.predictions is not written yet"
    with pytest.raises(run_cells.RunNotHandedIn, match=wanted):
        run_cells.check_run(DEV_RUN)


def test_dev_counts_right_answers_and_forgives_what_the_grader_forgives(outputs, world_dir, capsys):
    """Does the dev cell count the right answers of a file with CRLF ends and blank lines after the last answer (as
    the grader reads it), and the test cell only the number of answers?"""
    _old_logs(outputs, "vanilla_finetune_without_pretrain", DEV_RUN, TEST_RUN)  # an older log reads as before
    places = _places(world_dir, RUNS[DEV_RUN].eval_corpus)
    answers = places[:-1] + ["nowhere at all"]  # all right but one
    (outputs / RUNS[DEV_RUN].outputs).write_bytes(("\r\n".join(answers) + "\r\n\r\n").encode())
    run_cells.check_run(DEV_RUN)
    assert f"{len(places) - 1}/{len(places)} dev answers right" in capsys.readouterr().out
    tests = _places(world_dir, RUNS[TEST_RUN].eval_corpus)
    (outputs / RUNS[TEST_RUN].outputs).write_text("\n".join(tests) + "\n")
    run_cells.check_run(TEST_RUN)
    assert f"{len(tests)} answers, one per test question" in capsys.readouterr().out


def test_a_file_of_the_wrong_length_is_refused(outputs, world_dir):
    """Does a predictions file with answers missing fail, saying how many lines it has for how many questions?"""
    _old_logs(outputs, "vanilla_finetune_without_pretrain", DEV_RUN)
    places = _places(world_dir, RUNS[DEV_RUN].eval_corpus)
    (outputs / RUNS[DEV_RUN].outputs).write_text("\n".join(places[:-3]) + "\n")
    with pytest.raises(run_cells.RunNotHandedIn, match=f"has {len(places) - 3} lines for {len(places)} questions"):
        run_cells.check_run(DEV_RUN)


FINETUNE = "vanilla_finetune_without_pretrain"
PRETRAINED_DEV = "vanilla_eval_dev_with_pretrain"


@pytest.fixture
def trained(outputs, smoke_runs):
    """The outputs folder holding the reference's smoke runs (trained with this code on this world)."""
    shutil.copytree(smoke_runs, outputs, dirs_exist_ok=True)
    return outputs


def _edit_log(outputs, name, **changes):
    path = outputs / f"{name}.json"
    log = json.loads(path.read_text())
    log.update(changes)
    path.write_text(json.dumps(log))


def _said(run_name) -> str:
    """The first line the failing cell shows (as IPython renders it), which Validate cuts at about 80 characters."""
    with pytest.raises(run_cells.RunNotHandedIn) as err:
        run_cells.check_run(run_name)
    return err.value._render_traceback_()[0]


def test_runs_of_this_code_data_and_preset_pass(trained, capsys):
    """Do runs trained by this code on the course's data with the graded preset pass their cells, dev and test?"""
    run_cells.check_run(DEV_RUN)
    run_cells.check_run(PRETRAINED_DEV)
    run_cells.check_run("synthesizer_eval_test_with_pretrain")
    assert "dev answers right" in capsys.readouterr().out


def test_each_run_that_would_lose_the_points_is_named_in_80_characters(trained, monkeypatch, world_dir,
                                                                       tmp_path_factory):
    """Does the cell fail, saying what to redo and which run within its first 80 characters, for a run trained with
    another preset, stopped short, on other data, by older code, from params replaced since, with its params
    changed after it, or with no log?"""
    from course_lib.world import write_world

    monkeypatch.setattr(env, "GRADED_PRESET", "cpu")
    assert _said(DEV_RUN)[:80] == "Check failed: retrain with cpu: finetuning used the smoke preset; run the traini"
    monkeypatch.setattr(env, "GRADED_PRESET", "smoke")

    _edit_log(trained, FINETUNE, completed=False, steps=300)
    assert _said(DEV_RUN).startswith("Check failed: finish training: finetuning stopped at step 4 of 300; run")
    _edit_log(trained, FINETUNE, completed=True)

    other = tmp_path_factory.mktemp("other") / "world"
    write_world(other, 1)
    monkeypatch.setattr(env, "DATA_DIR", other)
    assert _said(DEV_RUN).startswith("Check failed: retrain: finetuning read other data than world/ (wiki.txt)")
    monkeypatch.setattr(env, "DATA_DIR", world_dir)

    monkeypatch.setitem(env.CURRENT_CODE, FINETUNE, {"finetune": "0" * 16})
    assert _said(DEV_RUN).startswith("Check failed: retrain: finetuning ran older code of finetune; run")
    env.CURRENT_CODE.clear()

    _edit_log(trained, "vanilla_finetune_with_pretrain", reads={"vanilla.pretrain.params": "0" * 16})
    assert _said(PRETRAINED_DEV).startswith("Check failed: retrain: finetuning started from an older "
                                            "vanilla.pretrain.params")
    params = trained / "vanilla.model.params"
    params.write_bytes(params.read_bytes() + b"\0")
    assert _said(DEV_RUN).startswith("Check failed: retrain: vanilla.model.params changed after finetuning wrote it")
    (trained / f"{FINETUNE}.json").unlink()
    assert _said(DEV_RUN).startswith("Check failed: retrain: finetuning left no run log")


def _validate_02(folder, monkeypatch, world_dir, graded: str) -> dict:
    """nbgrader's Validate of ``folder``'s 02 notebook, its kernel in a course that grades ``graded``."""
    from nbgrader.validator import Validator

    for key, value in dict(COURSE_PRESET="smoke", COURSE_GRADED_PRESET=graded, COURSE_DATA_DIR=str(world_dir),
                           COURSE_OUT_DIR=str(folder / "outputs")).items():
        monkeypatch.setenv(key, value)
    return Validator().validate(str(folder / "02_finetune_without_pretraining.ipynb"))


def test_validate_passes_on_runs_of_this_code_and_names_older_code(tmp_path, monkeypatch, world_dir, smoke_runs):
    """In nbgrader's Validate (a fresh kernel), do runs trained elsewhere by the notebook's code pass, and does a
    statement changed in train() since name the run to redo in the error's first 80 characters?"""
    import nbformat

    from course_lib.layout import SOLUTIONS_DIR

    notebook = "02_finetune_without_pretraining.ipynb"
    shutil.copy(SOLUTIONS_DIR / notebook, tmp_path / notebook)
    shutil.copytree(smoke_runs, tmp_path / "outputs")
    assert _validate_02(tmp_path, monkeypatch, world_dir, "smoke") == {}

    nb = nbformat.read(tmp_path / notebook, as_version=4)
    glue = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "02-glue")
    assert "    trainer.train()\n" in glue.source
    glue.source = glue.source.replace("    trainer.train()\n", "    history = trainer.train()\n")  # same behaviour
    nbformat.write(nb, tmp_path / notebook)
    failed = _validate_02(tmp_path, monkeypatch, world_dir, "smoke")["failed"]
    said = [f["raw_error"].splitlines()[0][:80] for f in failed]  # the dev and test cells
    assert len(said) == 2 and all(s.startswith("Check failed: retrain: finetuning ran older code of train;")
                                  for s in said), said


def test_a_kernel_shows_each_run_warning_in_one_line(trained, world_dir, tmp_path_factory):
    """In a real kernel, does each run that would lose the points (another preset, stopped short, other data, params
    changed after it, started from params replaced since, no log, an unreadable log, no predictions) fail its cell
    with one line, the fix and the run within its first 80 characters?"""
    import nbformat
    from notebook_client import notebook_client

    from course_lib.world import write_world

    cases = tmp_path_factory.mktemp("cases")
    other = cases / "other" / "world"
    write_world(other, 1)
    cases_run = {"preset": DEV_RUN, "stopped": DEV_RUN, "data": DEV_RUN, "params": DEV_RUN, "reads": PRETRAINED_DEV,
                 "log": DEV_RUN, "unreadable": DEV_RUN, "missing": DEV_RUN}
    for case in cases_run:
        shutil.copytree(trained, cases / case)
    _edit_log(cases / "stopped", FINETUNE, completed=False, steps=300)
    (cases / "params" / "vanilla.model.params").write_bytes(b"not these params")
    _edit_log(cases / "reads", "vanilla_finetune_with_pretrain", reads={"vanilla.pretrain.params": "0" * 16})
    (cases / "log" / f"{FINETUNE}.json").unlink()
    (cases / "unreadable" / f"{FINETUNE}.json").write_text("{not json")
    (cases / "missing" / RUNS[DEV_RUN].outputs).unlink()
    expected = {
        "preset": ("cpu", world_dir, "retrain with cpu: finetuning used the smoke preset"),
        "stopped": ("smoke", world_dir, "finish training: finetuning stopped at step 4 of 300"),
        "data": ("smoke", other, "retrain: finetuning read other data than world/ (wiki.txt)"),
        "params": ("smoke", world_dir, "retrain: vanilla.model.params changed after finetuning wrote it"),
        "reads": ("smoke", world_dir, "retrain: finetuning started from an older vanilla.pretrain.params"),
        "log": ("smoke", world_dir, "retrain: finetuning left no run log"),
        "unreadable": ("smoke", world_dir, "retrain: finetuning left an unreadable run log"),
        "missing": ("smoke", world_dir, f"run the training cell above: {RUNS[DEV_RUN].outputs} is"),
    }
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "from pathlib import Path\nfrom course_lib.notebook import env\nfrom course_lib.notebook.run_cells import "
        "check_run")]
    nb.cells += [nbformat.v4.new_code_cell(
        f"env.OUT_DIR, env.DATA_DIR, env.GRADED_PRESET = Path({str(cases / case)!r}), Path({str(data)!r}), {graded!r}\n"
        f"check_run({cases_run[case]!r})") for case, (graded, data, _) in expected.items()]
    notebook_client(nb, timeout=120, kernel_name="python3", allow_errors=True).execute()
    for cell, (case, (_, _, said)) in zip(nb.cells[1:], expected.items()):
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert len(errors) == 1 and len(errors[0].traceback) == 1, (case, cell.outputs)
        assert errors[0].traceback[0][:80].startswith(f"Check failed: {said}"), (case, errors[0].traceback)
