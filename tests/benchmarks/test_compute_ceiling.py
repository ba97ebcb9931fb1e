"""Tests for benchmarks/compute_ceiling.py: its operation count, not its timings."""
from __future__ import annotations

import importlib.util
import random
import sys

import pytest
from conftest import REPO
from torch.utils.flop_counter import FlopCounterMode

from course_lib.data_files import read_text
from course_lib.presets import get_preset, with_overrides

spec = importlib.util.spec_from_file_location("compute_ceiling", REPO / "benchmarks" / "compute_ceiling.py")
compute_ceiling = importlib.util.module_from_spec(spec)
sys.modules["compute_ceiling"] = compute_ceiling  # its dataclass looks its module up there
spec.loader.exec_module(compute_ceiling)


def paper_flops(shapes, n_layer: int, d: int, vocab: int) -> int:
    """A GPT step's matmul operations on paper: forward, and twice that backward."""
    total = 0
    for b, t in shapes:
        linear = 2 * b * t * d * (3 * d + d + 4 * d + 4 * d)  # qkv, output projection, MLP in and out
        attention = 2 * 2 * b * t * t * d  # scores q @ k^T, then scores @ v
        total += n_layer * (linear + attention) + 2 * b * t * d * vocab  # the head
    return 3 * total


@pytest.fixture(scope="module")
def dataset(reference, world_dir):
    random.seed(0)
    return reference.CharCorruptionDataset(read_text(world_dir / "wiki.txt"), get_preset("smoke").block_size)


def test_counts_what_a_gpt_step_costs_on_paper(dataset):
    """Does the counted run see every matmul of the timed steps, forward and backward, and nothing else?"""
    preset = with_overrides(get_preset("smoke"), ["model.n_layer=2"])
    with FlopCounterMode(display=False) as counter:
        measured = compute_ceiling.pretrain_steps(dataset, preset, steps=3, warmup=1, attention_impl="manual",
                                                  counter=counter)
    assert len(measured.shapes) == 3
    assert measured.flops == paper_flops(measured.shapes, 2, preset.model["n_embd"], dataset.vocab_size)


def test_same_seed_trains_on_the_same_batches(dataset):
    """Are the counted (manual attention) and the timed (SDPA) runs fed identical batches, as the ratio assumes?"""
    preset = get_preset("smoke")
    counted = compute_ceiling.pretrain_steps(dataset, preset, steps=3, warmup=1, attention_impl="manual")
    timed = compute_ceiling.pretrain_steps(dataset, preset, steps=3, warmup=1)
    assert counted.shapes == timed.shapes and counted.real_tokens == timed.real_tokens > 0
