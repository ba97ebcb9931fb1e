import importlib
import json

import pytest

import course_lib.notebook_env as notebook_env


@pytest.fixture
def grading_env(monkeypatch, tmp_path):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    monkeypatch.setenv("COURSE_OUT_DIR", str(tmp_path))
    yield importlib.reload(notebook_env)
    monkeypatch.delenv("NBGRADER_EXECUTION")
    monkeypatch.delenv("COURSE_OUT_DIR")
    importlib.reload(notebook_env)


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
    from course_lib import widgets

    assert widgets.head_explorer() is None


def test_needs_turns_only_not_implemented_into_a_reminder(capsys):
    """Does `needs` print a reminder for NotImplementedError and let other errors through?"""
    with notebook_env.needs("the thing"):
        raise NotImplementedError
    assert "write the thing first" in capsys.readouterr().out
    with pytest.raises(ValueError):
        with notebook_env.needs("the thing"):
            raise ValueError("real bug")


def test_corrupt_saved_output_is_skipped_not_fatal(grading_env, tmp_path, capsys):
    """Does an unreadable saved run log make the training cell skip with a message instead of crashing?"""
    (tmp_path / "vanilla_pretrain.json").write_text("{not json")
    assert grading_env.run_or_load("vanilla_pretrain", parts={}) is None
    assert "unreadable" in capsys.readouterr().out
