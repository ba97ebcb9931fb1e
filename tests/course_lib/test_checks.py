"""The public checks students run: one code path with the grader, replayable, and an unwritten part named."""
from __future__ import annotations

import random

import pytest

from autograder.checks import registry
from autograder.inside.probes import PROBES
from course_lib import checks
from course_lib.attention import SynthesizerAttentionBase
from course_lib.checks import (check_finetune_config, check_pretrain_config, check_span_corruption_basic,
                               check_synthesizer_model, check_synthesizer_shapes)


def test_unwritten_synthesizer_forward_is_named():
    """Does the public synthesizer check say forward is not written yet, naming where to write it?"""

    class SynthesizerAttention(SynthesizerAttentionBase):
        def forward(self, x):
            raise NotImplementedError()

    with pytest.raises(AssertionError, match="forward is not written yet.*notebook 05"):
        check_synthesizer_shapes(SynthesizerAttention)


def test_every_public_cell_runs_the_graders_check():
    """Does each public check's grade_id grade with exactly the inputs, probe and judge its notebook cell runs?"""
    for grade_id, public in checks.PUBLIC.items():
        check = registry.BY_ID[grade_id]
        assert (check.inputs, PROBES[check.probe], check.judge, check.needs) == \
            (public.inputs, public.probe, public.judge, public.needs), grade_id


def test_reference_passes_every_public_cell(reference, capsys):
    """Do the reference solutions pass every public cell, as the notebooks call them, on a fresh seed?"""
    check_finetune_config(reference.initialize_vanilla_model, reference.finetune)
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
