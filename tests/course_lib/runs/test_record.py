"""Tests for course_lib/runs/record.py: a run's log, written whole, read back old or new."""
from __future__ import annotations

import json

import pytest

from course_lib.runs.record import RunResult, kept, prints, read_log, write_log


def test_a_log_before_issue_51_reads_as_a_completed_run_without_prints(tmp_path):
    """Does a log of the old format (no prints, no "completed") read back as completed, format 1, with no prints,
    and one that is no run log raise ValueError?"""
    old = dict(name="vanilla_pretrain", preset="cpu", seconds=1.0, written=["vanilla.pretrain.params"], correct=None,
               total=None, history=[{"step": 1, "loss": 2.0}], seed=3, accuracy=None)
    (tmp_path / "vanilla_pretrain.json").write_text(json.dumps(old))
    saved = read_log(tmp_path, "vanilla_pretrain")
    assert saved.completed and saved.format == 1 and saved.data == {} and saved.seed == 3 and saved.steps_done == 1
    assert read_log(tmp_path, "vanilla_finetune_with_pretrain") is None
    (tmp_path / "bad.json").write_text(json.dumps(["not", "a", "log"]))
    with pytest.raises(ValueError, match="not a run log"):
        read_log(tmp_path, "bad")


def test_a_run_is_kept_only_when_it_is_the_same_run_and_its_files_are_as_written(tmp_path):
    """Is a completed log kept for the same run (same preset, seed, prints) while its files are unchanged, and not
    for another seed, an incomplete run, or a file changed since?"""
    (tmp_path / "x.params").write_bytes(b"params")
    done = RunResult("vanilla_pretrain", "cpu", 1.0, ["x.params"], seed=1, completed=True, data={"wiki.txt": "a"},
                     code={"pretrain": "b"}, settings="c", outputs=prints(tmp_path, ["x.params"]))
    write_log(done, tmp_path)
    saved = read_log(tmp_path, "vanilla_pretrain")
    wanted = RunResult("vanilla_pretrain", "cpu", 0.0, [], seed=1, completed=False, data={"wiki.txt": "a"},
                       code={"pretrain": "b"}, settings="c")
    assert kept(saved, wanted, tmp_path) and "kept" not in json.loads((tmp_path / "vanilla_pretrain.json").read_text())
    wanted.seed = 2
    assert not kept(saved, wanted, tmp_path)
    wanted.seed = 1
    saved.completed = False
    assert not kept(saved, wanted, tmp_path)
    saved.completed = True
    (tmp_path / "x.params").write_bytes(b"other params")
    assert not kept(saved, wanted, tmp_path)
