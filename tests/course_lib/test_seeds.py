"""Personal seeds: each student trains from a seed derived from their id, unless they set one."""
from __future__ import annotations

import importlib
import json

import pytest
from conftest import SOLUTIONS

from course_lib.__main__ import main
from course_lib.notebook import env
from course_lib.seeds import SEED_SPACE, choose_seed, personal_seed, student_id


@pytest.fixture
def off_the_hub(monkeypatch):
    """No JupyterHub user and no COURSE_SEED: the student's own machine."""
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    monkeypatch.delenv("COURSE_SEED", raising=False)


def test_a_personal_seed_is_the_ids_own_on_every_machine():
    """Is an id's seed the same every time, in NumPy's range and not the old shared 0, and do a large course's ids
    get a seed each (two of 500 share one with probability 6e-5)?"""
    ids = [f"student{i}" for i in range(500)] + ["Ana María", "李雷", "--help"]
    seeds = [personal_seed(i) for i in ids]
    assert seeds == [personal_seed(i) for i in ids]
    assert all(1 <= s <= SEED_SPACE < 2 ** 32 for s in seeds)
    assert len(set(seeds)) == len(ids)


def test_on_the_hub_the_jupyterhub_user_decides_and_course_seed_still_wins(monkeypatch, off_the_hub):
    """Does a run on the hub train with its JupyterHub user's personal seed, and an explicit COURSE_SEED win?"""
    monkeypatch.setenv("JUPYTERHUB_USER", "ana")
    assert choose_seed() == choose_seed().__class__(personal_seed("ana"), "JupyterHub user", "ana")
    monkeypatch.setenv("COURSE_SEED", "7")
    assert choose_seed().seed == 7
    assert choose_seed(3).seed == 3  # a --seed on the command line, over both


def test_off_the_hub_the_id_is_nbgraders_own(off_the_hub):
    """Without a JupyterHub user, is the id the one `nbgrader submit` files the submission under?"""
    from nbgrader.utils import get_username

    assert student_id() == (get_username(), "nbgrader id")


def test_the_notebooks_train_with_the_students_seed(monkeypatch, off_the_hub):
    """Do the notebooks' training cells (env.SEED) take the JupyterHub user's personal seed unasked?"""
    monkeypatch.setenv("JUPYTERHUB_USER", "ben")
    try:
        assert importlib.reload(env).SEED == personal_seed("ben")
    finally:
        monkeypatch.delenv("JUPYTERHUB_USER")
        importlib.reload(env)


def test_two_students_on_the_hub_hand_in_different_params(tmp_path, world_dir, monkeypatch, off_the_hub):
    """Do two students running the same training with the same code on the hub record their own seeds and hand in
    different params (the same default seed made them byte-identical)?"""
    params = {}
    for student in ("ana", "ben"):
        monkeypatch.setenv("JUPYTERHUB_USER", student)
        out = tmp_path / student
        assert main(["run", "vanilla_finetune_without_pretrain", "--notebooks", str(SOLUTIONS), "--preset", "smoke",
                     "--data-dir", str(world_dir), "--out-dir", str(out), "--quiet"]) == 0
        log = json.loads((out / "vanilla_finetune_without_pretrain.json").read_text())
        assert log["seed"] == personal_seed(student)
        params[student] = (out / "vanilla.model.params").read_bytes()
    assert params["ana"] != params["ben"]
