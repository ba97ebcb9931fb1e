"""The public checks students run: one code path with the grader, replayable, and an unwritten part named."""
from __future__ import annotations

import random

import pytest

from autograder.checks import registry
from autograder.inside.probes import PROBES
from course_lib.checks import public as checks
from course_lib.checks.inputs import HANDOUT_NUMBERS, HEAD_COUNTS, LAYER_COUNTS
from course_lib.checks.public import (
    check_finetune_config,
    check_pretrain_config,
    check_span_corruption_basic,
    check_synthesizer_model,
    check_synthesizer_shapes,
)
from course_lib.gpt.attention import SynthesizerAttentionBase
from course_lib.gpt.model import GPT, GPTConfig
from course_lib.notebook.check_failed import CheckFailed
from course_lib.notebook.validate import SHOWN


def test_unwritten_synthesizer_forward_is_named():
    """Does the public synthesizer check say forward is not written yet, naming where to write it?"""

    class SynthesizerAttention(SynthesizerAttentionBase):
        def forward(self, x):
            raise NotImplementedError()

    with pytest.raises(AssertionError, match="SynthesizerAttention.forward is not written yet: write it in notebook "
                                             "05"):
        check_synthesizer_shapes(SynthesizerAttention)


def test_every_public_cell_runs_the_graders_check():
    """Does each public check's grade_id grade with exactly the inputs, probe and judge its notebook cell runs?"""
    for grade_id, public in checks.PUBLIC.items():
        check = registry.BY_ID[grade_id]
        assert (check.inputs, PROBES[check.probe], check.judge, check.needs) == \
            (public.inputs, public.probe, public.judge, public.needs), grade_id


def test_reference_passes_every_public_cell(reference, capsys):
    """Do the reference solutions pass every public cell, as the notebooks call them, on a fresh seed?"""
    check_finetune_config(reference.initialize_vanilla_model, reference.finetune, reference.train)
    check_span_corruption_basic(reference.CharCorruptionDataset)
    check_pretrain_config(reference.pretrain)
    check_synthesizer_shapes(reference.SynthesizerAttention)
    check_synthesizer_model(reference.initialize_synthesizer_model, reference.SynthesizerAttention)
    assert capsys.readouterr().out.count("all public checks passed") == 5


def test_a_failure_names_its_seed_and_the_seed_replays_it(reference):
    """Does a failing public check print its seed, and does seed=N give the very same inputs again?"""

    class NoResidualDropout(reference.SynthesizerAttention):
        def forward(self, x):
            self.resid_drop.p = 0.0  # a layer that ignores its residual dropout
            return super().forward(x)

    with pytest.raises(AssertionError, match=r"resid_drop[\s\S]*seed 123.*seed=123") as first:
        check_synthesizer_shapes(NoResidualDropout, seed=123)
    with pytest.raises(AssertionError) as again:
        check_synthesizer_shapes(NoResidualDropout, seed=123)
    assert str(first.value) == str(again.value)
    a, b = (checks.span_inputs(random.Random(7)) for _ in range(2))
    assert a["plans"][0]["draws"] == b["plans"][0]["draws"] and a["plans"][0]["corpus"] == b["plans"][0]["corpus"]


@pytest.mark.parametrize(("init", "said"), [
    (lambda mconf: GPT(GPTConfig(mconf.vocab_size, 128)),
     "initialize_vanilla_model: the model has another block_size, n_layer and n_embd than the config it is given"),
    (lambda mconf: None, "initialize_vanilla_model returned a NoneType: it should return the course's GPT, built from "
                         "the config it is given"),
])
def test_an_init_that_ignores_the_config_is_explained_in_one_line(reference, init, said):
    """Does 02's public cell say in one line that the model ignores its config (issue 40: a raw load_state_dict
    traceback), followed only by the seed's line?"""
    with pytest.raises(CheckFailed) as failed:
        check_finetune_config(init, reference.finetune, reference.train, seed=5)
    first, seed_line = str(failed.value).splitlines()
    assert first == said and seed_line.startswith("(inputs of seed 5")


def test_public_checks_draw_no_handout_number(reference):
    """Does every public check's inputs, on 30 seeds, hold no block size, width or length the handout shows (so an
    answer that types one in fails on every seed)?"""
    for seed in range(30):
        rng = random.Random(seed)
        world = checks.finetune_config_inputs(rng)
        model = world["model"]
        assert not {world["block_size"], model["n_embd"], model["n_embd"] // model["n_head"]} & HANDOUT_NUMBERS
        assert model["n_head"] in HEAD_COUNTS and model["n_layer"] in LAYER_COUNTS
        assert not {model[f] for f in ("embd_pdrop", "resid_pdrop", "attn_pdrop")} & {0.0, 0.1}
        assert not {plan["block_size"] for plan in checks.span_inputs(rng)["plans"]} & HANDOUT_NUMBERS
        for case in checks.synthesizer_public_inputs(rng)["cases"]:
            n_embd, n_head, block_size = case["dims"]
            assert not {n_embd, n_embd // n_head, block_size} & HANDOUT_NUMBERS and n_head in HEAD_COUNTS
        config = checks.synthesizer_model_inputs(rng)["config"]
        assert not {config["n_embd"], config["block_size"], config["vocab_size"]} & HANDOUT_NUMBERS


def train_not_written(model, writing_params_path, trainer):
    raise NotImplementedError()


def test_an_unwritten_function_is_named_first_with_where_to_write_it(reference):
    """Does 02's public cell, now that it calls train() too, name the function still holding the release's stub and
    where to write it, in the first 80 characters (issue 51: "initialize_vanilla_model and finetune" whatever was
    unwritten)?"""
    with pytest.raises(CheckFailed) as failed:
        check_finetune_config(reference.initialize_vanilla_model, reference.finetune, train_not_written, seed=1)
    said = "train_not_written is not written yet: write it in notebook 02's glue cell"
    assert str(failed.value) == said and len(said) <= SHOWN


@pytest.mark.parametrize("grade_id", sorted(checks.PUBLIC))
def test_in_nbgraders_autograde_a_public_cell_runs_nothing_and_says_who_judges(grade_id, monkeypatch):
    """In nbgrader's autograde, does a public test cell run none of the student's code (the course's grader judges it
    on inputs of its own) and say so; and under Validate does the same cell still run it?"""
    ran = []

    class Touched:  # any name a probe reads from the student's parts
        def __getattr__(self, name):
            ran.append(name)
            raise RuntimeError("the student's code ran")

    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(CheckFailed, match="judged by the course's grader, outside your notebook"):
        checks.run_public(grade_id, Touched())
    assert ran == []
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    with pytest.raises(RuntimeError, match="the student's code ran"):
        checks.run_public(grade_id, Touched())
    assert ran
