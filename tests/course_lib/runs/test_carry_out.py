import json

import pytest
from conftest import SOLUTIONS

from course_lib.__main__ import main
from course_lib.data_files import read_birth_places, read_predictions
from course_lib.gpt.evaluation import accuracy
from course_lib.run_specs import RUNS
from course_lib.runs import RunError, run


def test_run_names_and_files_match_the_seed():
    """Are all eleven runs of run.sh named, writing the original's file names?"""
    assert len(RUNS) == 11
    assert RUNS["vanilla_finetune_without_pretrain"].writes == "vanilla.model.params"
    assert RUNS["vanilla_eval_test_with_pretrain"].outputs == "vanilla.pretrain.test.predictions"
    assert RUNS["synthesizer_eval_dev_with_pretrain"].outputs == "synthesizer.pretrain.dev.predictions"


@pytest.fixture(scope="module")
def smoke_outputs(tmp_path_factory, world_dir, reference):
    out = tmp_path_factory.mktemp("smoke")
    results = {}
    for name in RUNS:
        results[name] = run(name, reference, preset="smoke", data_dir=world_dir, out_dir=out, progress=False)
    return out, results


def test_smoke_runs_end_to_end_write_predictions_that_score(smoke_outputs, world_dir):
    """Does every named run finish in the smoke preset and leave predictions that the scorer reads?"""
    out, results = smoke_outputs
    dev = read_birth_places(world_dir / "birth_dev.tsv", require_answers=True)
    test_inputs = read_birth_places(world_dir / "birth_test_inputs.tsv")
    for prefix in ("vanilla.nopretrain", "vanilla.pretrain", "synthesizer.pretrain"):
        predictions = read_predictions(out / f"{prefix}.dev.predictions")
        assert len(predictions) == len(dev)
        correct, total = accuracy(predictions, [e.place for e in dev])
        assert total == len(dev) and 0 <= correct <= total
        assert len(read_predictions(out / f"{prefix}.test.predictions")) == len(test_inputs)
    assert results["vanilla_eval_dev_with_pretrain"].accuracy is not None
    assert results["vanilla_eval_test_with_pretrain"].accuracy is None  # no answers in the inputs file
    log = json.loads((out / "vanilla_pretrain.json").read_text())
    assert log["preset"] == "smoke" and len(log["history"]) == 4


def test_finetune_with_pretrain_needs_the_pretrained_params(tmp_path, world_dir, reference):
    """Does finetuning after pretraining say which run to do first when its params are missing?"""
    with pytest.raises(RunError, match="vanilla.pretrain.params not found: run vanilla_pretrain first"):
        run("vanilla_finetune_with_pretrain", reference, preset="smoke", data_dir=world_dir, out_dir=tmp_path)


def test_notebook_without_the_graded_part_is_named(tmp_path, world_dir):
    """Does a run name the part a notebook namespace is missing?"""
    with pytest.raises(RunError, match="pretrain"):
        run("vanilla_pretrain", {"x": 1}, preset="smoke", data_dir=world_dir, out_dir=tmp_path)


def test_command_line_run_and_errors(tmp_path, world_dir, capsys):
    """Does `python -m course_lib run` train from the solution notebooks, and report a missing data folder as an
    error?"""
    assert main(["run", "vanilla_finetune_without_pretrain", "vanilla_eval_dev_without_pretrain", "--notebooks",
                 str(SOLUTIONS), "--preset", "smoke", "--data-dir", str(world_dir), "--out-dir", str(tmp_path),
                 "--quiet"]) == 0
    assert "correct:" in capsys.readouterr().out
    assert main(["run", "vanilla_pretrain", "--notebooks", str(SOLUTIONS), "--preset", "smoke",
                 "--data-dir", str(tmp_path / "nowhere"), "--out-dir", str(tmp_path), "--quiet"]) == 2
    assert "data file not found" in capsys.readouterr().err


def test_command_line_settings_reach_the_run(capsys, monkeypatch):
    """Does `run --set` hand each run the preset with that field changed, and name a misspelt field?"""
    import course_lib.runs as runs_module

    seen = []
    monkeypatch.setattr(runs_module, "run", lambda name, notebooks, preset, **kw: seen.append(preset)
                        or runs_module.RunResult(name=name, preset=preset.name, seconds=0.0, written=[]))
    args = ["run", "vanilla_pretrain", "vanilla_finetune_with_pretrain", "--preset", "smoke", "--quiet",
            "--set", "all.autocast_bf16=True", "--set", "pretrain.max_steps=2"]
    assert main(args) == 0
    assert [p.pretrain["max_steps"] for p in seen] == [2, 2] and seen[0].finetune_with_pretrain["max_steps"] == 4
    assert all(p.finetune_with_pretrain["autocast_bf16"] is True for p in seen)
    assert main(["run", "vanilla_pretrain", "--set", "all.learning_rat=1e-3"]) == 2
    assert "has no field 'learning_rat'" in capsys.readouterr().err


def test_command_line_world_is_deterministic(tmp_path):
    """Does `python -m course_lib world` write the same files for the same seed?"""
    assert main(["world", "--out", str(tmp_path / "a"), "--seed", "3"]) == 0
    assert main(["world", "--out", str(tmp_path / "b"), "--seed", "3"]) == 0
    assert (tmp_path / "a" / "wiki.txt").read_bytes() == (tmp_path / "b" / "wiki.txt").read_bytes()


def test_a_run_prints_its_threads_and_plan_before_training(tmp_path, world_dir, reference, capsys, monkeypatch):
    """Are the threads it trains on the first thing a training run prints, then its plan, before its progress bar
    and its training?"""
    monkeypatch.setenv("COURSE_THREADS", "1")
    run("vanilla_finetune_without_pretrain", reference, preset="smoke", data_dir=world_dir, out_dir=tmp_path,
        progress=False)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "vanilla_finetune_without_pretrain: training on 1 CPU thread (COURSE_THREADS=1)"
    assert out[1] == "vanilla_finetune_without_pretrain: 4 training steps (the smoke preset stops it there)"
    assert out[2].startswith("  for this run the smoke preset replaces what your finetune returned: max_epochs 75 -> 1")


def _pretrain_command(out_dir, world_dir, *extra) -> list[str]:
    """`python -m course_lib run vanilla_pretrain` on the smoke model for 40 epochs, one thread, a checkpoint at every
    epoch's end."""
    import sys

    return [sys.executable, "-m", "course_lib", "run", "vanilla_pretrain", "--notebooks", str(SOLUTIONS),
            "--preset", "smoke", "--set", "pretrain.max_epochs=40", "--set", "pretrain.max_steps=None", "--seed", "7",
            "--data-dir", str(world_dir), "--out-dir", str(out_dir), "--quiet", *extra]


def test_a_pretraining_killed_mid_run_resumes_and_reaches_the_same_params(tmp_path, world_dir):
    """Killed (SIGKILL) once it has saved a checkpoint, does a pretraining's rerun resume from there and write the
    params an uninterrupted run writes, and does its log say it stopped short meanwhile?"""
    import os
    import subprocess
    import time

    import torch

    env = dict(os.environ, COURSE_THREADS="1", COURSE_CHECKPOINT_SECONDS="0")
    whole = subprocess.run(_pretrain_command(tmp_path / "whole", world_dir), env=env, capture_output=True,
                           text=True, timeout=600)
    assert whole.returncode == 0, whole.stderr
    killed = tmp_path / "killed"
    process = subprocess.Popen(_pretrain_command(killed, world_dir), env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not (killed / "checkpoints" / "vanilla_pretrain.pt").is_file() and time.monotonic() < deadline:
        time.sleep(0.05)
    process.kill()
    process.wait()
    assert not (killed / "vanilla.pretrain.params").exists()
    stopped = json.loads((killed / "vanilla_pretrain.json").read_text())
    assert stopped["completed"] is False and stopped["steps"] == 40 * 16
    again = subprocess.run(_pretrain_command(killed, world_dir), env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert "vanilla_pretrain: resuming at step " in again.stdout
    assert not (killed / "checkpoints" / "vanilla_pretrain.pt").exists()  # the run is done: its params are the record
    params = [torch.load(folder / "vanilla.pretrain.params", weights_only=True) for folder in (tmp_path / "whole",
                                                                                               killed)]
    assert params[0].keys() == params[1].keys() and all(torch.equal(params[0][k], params[1][k]) for k in params[0])
    assert json.loads((killed / "vanilla_pretrain.json").read_text())["completed"] is True


def test_a_finished_run_is_kept_until_its_code_data_or_seed_change(tmp_path, world_dir, reference, capsys,
                                                                    monkeypatch):
    """Run again with the same code, data, preset and seed, is a done pretraining (and the finetune after it) kept
    with its files, and trained again with another seed, once its params file changed, or when asked afresh?"""
    monkeypatch.setenv("COURSE_THREADS", "1")
    runs = ("vanilla_pretrain", "vanilla_finetune_with_pretrain")
    first = [run(name, reference, preset="smoke", data_dir=world_dir, out_dir=tmp_path, progress=False)
             for name in runs]
    capsys.readouterr()
    again = [run(name, reference, preset="smoke", data_dir=world_dir, out_dir=tmp_path, progress=False)
             for name in runs]
    out = capsys.readouterr().out.splitlines()
    assert [r.kept for r in again] == [True, True] and [r.history for r in again] == [r.history for r in first]
    assert out[0].startswith("vanilla_pretrain: done already (") and "kept vanilla.pretrain.params" in out[0]
    assert len(out) == 2
    assert not run("vanilla_pretrain", reference, preset="smoke", data_dir=world_dir, out_dir=tmp_path, seed=1,
                   progress=False).kept
    assert not run(runs[1], reference, preset="smoke", data_dir=world_dir, out_dir=tmp_path, progress=False).kept
    assert run(runs[1], reference, preset="smoke", data_dir=world_dir, out_dir=tmp_path, progress=False).kept
    assert not run(runs[1], reference, preset="smoke", data_dir=world_dir, out_dir=tmp_path, progress=False,
                   fresh=True).kept
