"""Tests for course_lib/checks/glue_train.py: train() probed in a folder of its own and judged against the judge's
own trainer step (the wrong train() answers themselves are test_glue.py's GLUE_WRONG)."""
from __future__ import annotations

import os
import random

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

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


@st.composite
def _states(draw, state: dict):
    """The params as a submission may send them: the model's own names and shapes (moved a little, or not), with at
    most one entry taken away, reshaped, made an integer tensor or not a tensor, and perhaps a name of its own."""
    out = {k: v + draw(st.sampled_from((0.0, 1e-3, 1.0))) for k, v in state.items()}
    name = draw(st.sampled_from(sorted(out)))
    change = draw(st.sampled_from(("none", "drop", "reshape", "int", "junk")))
    if change == "drop":
        del out[name]
    elif change == "reshape":
        out[name] = torch.zeros(draw(st.integers(0, 3)))
    elif change == "int":
        out[name] = torch.ones(out[name].shape, dtype=torch.int64)
    elif change == "junk":
        out[name] = draw(st.one_of(st.none(), st.integers(), st.text(max_size=5)))
    if draw(st.booleans()):
        out[draw(st.text(max_size=5))] = torch.zeros(1)
    return out


JUNK = st.one_of(st.none(), st.integers(), st.text(max_size=10), st.lists(st.integers(), max_size=3))


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_the_judges_take_any_output_a_submission_can_send_without_raising(data):
    """Whatever comes back over the wire for train() and the params (other names, shapes, dtypes, no tensors at all),
    do the judges answer with messages, never an exception (which the grader would only call malformed)?"""
    world, state = _world()
    fields = st.fixed_dictionaries({}, optional={n: JUNK for n in ("batch_size", "learning_rate", "betas")})
    output = {"saved": data.draw(st.one_of(JUNK, st.just("unreadable"), _states(state))),
              "state_after_train": data.draw(st.one_of(JUNK, _states(state))),
              "train_error": data.draw(st.one_of(st.none(), st.text(max_size=12))),
              "trainer_config_run": data.draw(st.one_of(JUNK, fields))}
    for problems in (glue_train.train_problems(world, output, state),
                     glue_train.loaded_problems(output["state_after_train"], state)):
        assert isinstance(problems, list) and all(isinstance(p, str) and p for p in problems)
