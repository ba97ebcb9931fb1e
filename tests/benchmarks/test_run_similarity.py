"""Tests for the near-copy study (benchmarks/run_similarity.py): are its function-preserving copies what they claim?"""
from __future__ import annotations

import benchmark_scripts
import pytest
import torch

from course_lib.contract import StudentParts
from course_lib.gpt.model import GPTConfig


@pytest.fixture(scope="module")
def study():
    return benchmark_scripts.load("run_similarity")


@pytest.mark.parametrize("variant", ["vanilla", "synthesizer"])
@pytest.mark.parametrize("kind", ["mlp_permuted", "heads_permuted", "all_permuted", "residual_permuted"])
def test_a_function_preserving_copy_answers_as_the_original(study, reference, variant, kind):
    """Does each copy the study calls function-preserving (units, heads, units with heads and each head's dimensions,
    or the residual stream reordered) give the original's logits, with other weights?"""
    config = GPTConfig(vocab_size=30, block_size=16, n_layer=2, n_head=4, n_embd=32)
    torch.manual_seed(0)
    parts = StudentParts(reference)
    original = parts.model(variant, config).eval()
    state = {k: v + 0.01 * torch.randn(v.shape) for k, v in original.state_dict().items()}  # no zero pos_emb
    original.load_state_dict(state)
    course = study.Course(type("Preset", (), {"model": {"n_head": 4}})(), parts, None, {}, "")
    changed = study.perturbed(kind, state, torch.Generator().manual_seed(1), course, variant)
    copy = parts.model(variant, config).eval()
    copy.load_state_dict(changed)
    x = torch.randint(0, 30, (3, 15))  # the synthesizer reads at most block_size - 1 characters
    with torch.no_grad():
        assert torch.allclose(original(x)[0], copy(x)[0], atol=1e-5)
    assert any(not torch.equal(state[k], changed[k]) for k in state)


def test_the_drivers_comparison_runs(study):
    """Does the timing of the driver's comparison run on a small random cohort?"""
    assert study.timing(12, questions=40, matrices=4) >= 0
