"""Tests for benchmarks/train_throughput.py: which rows it measures and that a row measures, not its timings."""
from __future__ import annotations

import argparse
import importlib.util
import math
import sys

import torch
from conftest import REPO
from torch.utils.flop_counter import FlopCounterMode

sys.path.insert(0, str(REPO / "benchmarks"))  # it imports compute_ceiling as a sibling
spec = importlib.util.spec_from_file_location("train_throughput", REPO / "benchmarks" / "train_throughput.py")
train_throughput = importlib.util.module_from_spec(spec)
sys.modules["train_throughput"] = train_throughput  # its dataclass looks its module up there
spec.loader.exec_module(train_throughput)


def test_rows_build_up_and_only_dropout_rows_count():
    """Does each of our rows keep the switches before it, and do only rows with the original's dropout count toward the
    speedup?"""
    rows = train_throughput.planned_rows(bf16=False)
    assert rows[0][1] is None and not rows[0][3]  # the original-faithful loop comes first
    counted = [r for r in rows if r[3]]
    for before, after in zip(counted, counted[1:]):
        assert before[1].items() <= after[1].items() and set(before[2]) <= set(after[2])
    assert all(r[1].get("attn_pdrop", 0.1) == 0.1 for r in counted)
    assert rows[-1][1]["attn_pdrop"] == 0.0 and not rows[-1][3]
    assert not any(r[2].get("autocast_bf16") for r in rows)
    mixed = [r for r in train_throughput.planned_rows(bf16=True) if r[2].get("autocast_bf16")]
    assert mixed[0][3] and mixed[0][1] == counted[-1][1]  # the original's dropout, counted
    assert mixed[1][1]["attn_pdrop"] == 0.0 and not mixed[1][3] and len(mixed) == 2


def test_a_row_and_the_seed_loop_measure_real_tokens(original_data):
    """Do the original-faithful loop and our fastest dropout row both train on the corpus and report a positive rate?"""
    args = argparse.Namespace(data_dir=str(original_data), batch_size=4, steps=1, warmup=1, threads=None)
    rows = {label: (m, t) for label, m, t, _ in train_throughput.planned_rows(bf16=False)}
    fast_model, fast_trainer = rows["ours, + 32 length buckets"]  # the allocator row would outlive the test
    for model_switches, trainer_switches in [(None, {}), (fast_model, fast_trainer)]:
        rate = train_throughput.measure(args, model_switches, trainer_switches)
        assert rate.tokens_per_second > 0 and math.isfinite(rate.tokens_per_second)
        assert rate.matmul_flops_per_token > 0


def test_matmul_count_matches_torchs_flop_counter():
    """Does the matmul count of a training step equal what torch's FLOP counter sees in forward and backward?"""
    from course_lib.gpt.model import GPT, GPTConfig

    config = GPTConfig(vocab_size=11, block_size=16, n_layer=2, n_head=2, n_embd=8, attention_impl="manual")
    model = GPT(config)
    x = torch.randint(1, 11, (3, 7))
    with FlopCounterMode(display=False) as counter:
        _, loss = model(x, x)
        loss.backward()
    assert train_throughput.matmul_flops(model, 2, 8, [(3, 7)]) == counter.get_total_flops()
