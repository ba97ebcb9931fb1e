"""Tests for course_lib/checks/glue_train.py: train() probed in a folder of its own and judged against the judge's
own trainer step (the wrong train() answers themselves are test_glue.py's GLUE_WRONG)."""
from __future__ import annotations

import os
import random

import torch

from course_lib.checks import glue_train
from course_lib.checks.inputs import random_state, toy_model, toy_world
from course_lib.gpt.datasets import CharCorruptionDatasetBase, NameDataset
from course_lib.gpt.model import GPT
from course_lib.gpt.trainer import Trainer, TrainerConfig


def _world():
    world = toy_world(random.Random(3), dropout=False)
    return {**world, "seed": 11}, random_state(toy_model(world), random.Random(4), scale=0.1)


def _trainer(world, state):
    corpus = CharCorruptionDatasetBase(world["corpus"], world["block_size"])
    model = GPT(glue_train.still_config(world, corpus.vocab_size))
    model.load_state_dict(state)
    config = TrainerConfig(max_epochs=10, batch_size=256, learning_rate=6e-4, lr_decay=True, warmup_tokens=512 * 20,
                           final_tokens=200 * len(corpus) * world["block_size"], num_workers=4)
    return model, Trainer(model, NameDataset(corpus, world["train_text"]), None, config)


def _save_here(model, writing_params_path, trainer):
    trainer.train()
    torch.save(model.state_dict(), "vanilla.model.params")


def test_train_runs_in_the_probes_folder_and_a_file_saved_elsewhere_is_not_the_one_asked_for(tmp_path, monkeypatch):
    """Does the probe run train() in its own folder (a file saved under another name lands there, never in the
    caller's folder), and does the judge say nothing was saved at writing_params_path?"""
    world, state = _world()
    caller = tmp_path / "caller"
    caller.mkdir()
    monkeypatch.chdir(caller)
    model, trainer = _trainer(world, state)
    out = glue_train.train_probe(_save_here, model, trainer, tmp_path, world["seed"])
    assert os.listdir(caller) == [] and (tmp_path / "vanilla.model.params").is_file() and out["saved"] is None
    assert glue_train.train_problems(world, out, state) == [
        "train() should save the params to writing_params_path: nothing was saved there"]


def test_the_handouts_train_is_one_step_of_the_judges_own(tmp_path):
    """Does the handout's train() (trainer.train(), then save_params) pass, its params one step of the judge's own
    trainer from the same state, with torch's global generator left as it was by the judge?"""
    from course_lib.gpt.checkpoint import save_params

    def train(model, writing_params_path, trainer):
        trainer.train()
        save_params(model, writing_params_path)

    world, state = _world()
    model, trainer = _trainer(world, state)
    out = glue_train.train_probe(train, model, trainer, tmp_path, world["seed"])
    before = torch.random.get_rng_state()
    assert glue_train.train_problems(world, out, state) == []
    assert torch.equal(torch.random.get_rng_state(), before)
    assert glue_train.same_state(out["saved"], out["state_after_train"])
