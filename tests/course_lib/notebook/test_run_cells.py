"""The run cells of 02, 04 and 05: what they say in Jupyter and Validate, and that the kernel never scores a run."""
from __future__ import annotations

import shutil

import pytest

from course_lib.data_files import read_birth_places
from course_lib.notebook import env, run_cells
from course_lib.run_specs import RUNS

DEV_RUN, TEST_RUN = "vanilla_eval_dev_without_pretrain", "vanilla_eval_test_without_pretrain"


@pytest.fixture
def outputs(monkeypatch, tmp_path, world_dir):
    """An empty outputs folder and the course world, as a notebook's kernel has them (not grading)."""
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.setattr(env, "OUT_DIR", tmp_path)
    monkeypatch.setattr(env, "DATA_DIR", world_dir)
    return tmp_path


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
    with pytest.raises(run_cells.RunNotHandedIn, match="vanilla.nopretrain.dev.predictions is not written yet"):
        run_cells.check_run(DEV_RUN)


def test_dev_counts_right_answers_and_forgives_what_the_grader_forgives(outputs, world_dir, capsys):
    """Does the dev cell count the right answers of a file with CRLF ends and blank lines after the last answer (as
    the grader reads it), and the test cell only the number of answers?"""
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
    places = _places(world_dir, RUNS[DEV_RUN].eval_corpus)
    (outputs / RUNS[DEV_RUN].outputs).write_text("\n".join(places[:-3]) + "\n")
    with pytest.raises(run_cells.RunNotHandedIn, match=f"has {len(places) - 3} lines for {len(places)} questions"):
        run_cells.check_run(DEV_RUN)
