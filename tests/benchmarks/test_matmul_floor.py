"""Tests for benchmarks/matmul_floor.py: does it record and replay a step's matmuls, and count them right?"""
from __future__ import annotations

import importlib.util
import sys

import torch
from conftest import REPO
from torch.utils.flop_counter import FlopCounterMode

from course_lib.gpt.model import GPT, GPTConfig

sys.path.insert(0, str(REPO / "benchmarks"))  # it imports compute_ceiling as a sibling
spec = importlib.util.spec_from_file_location("matmul_floor", REPO / "benchmarks" / "matmul_floor.py")
matmul_floor = importlib.util.module_from_spec(spec)
spec.loader.exec_module(matmul_floor)


def _recorded_step(model: GPT, x: torch.Tensor):
    recorder = matmul_floor.RecordMatmuls()
    with recorder:
        model(x, x)[1].backward()
    return recorder.calls


def test_recorded_matmuls_count_what_torchs_flop_counter_counts():
    """Do the recorded matmuls of a training step (fused attention path, fast dropout) add up to torch's FLOP count?"""
    torch.manual_seed(0)
    model = GPT(GPTConfig(11, 16, n_layer=2, n_head=2, n_embd=8, fast_dropout=True)).train()
    x = torch.randint(1, 11, (3, 7))
    calls = _recorded_step(model, x)
    assert {func for func, _, _ in calls} >= {torch.ops.aten.addmm.default, torch.ops.aten.mm.default,
                                               torch.ops.aten.baddbmm.default, torch.ops.aten.bmm.default}
    with FlopCounterMode(display=False) as counter:
        model(x, x)[1].backward()
    assert sum(matmul_floor.flops(func, layout) for func, layout, _ in calls) == counter.get_total_flops()


def test_replay_runs_every_layout_it_recorded():
    """Does the replay rebuild transposed operands and the broadcast causal bias, and time every recorded matmul?"""
    torch.manual_seed(0)
    model = GPT(GPTConfig(11, 16, n_layer=1, n_head=2, n_embd=8, fast_dropout=True)).train()
    calls = _recorded_step(model, torch.randint(1, 11, (2, 5)))
    strides = [item.stride for _, layout, _ in calls for item in layout if isinstance(item, matmul_floor.Layout)]
    assert any(stride[-1] != 1 for stride in strides)  # transposed operands (weights, K^T, the backward's)
    biases = [layout[0].shape for func, layout, _ in calls if func is torch.ops.aten.baddbmm.default]
    assert biases and all(len(shape) == 2 for shape in biases)  # the (T, T) causal bias, broadcast over the batch
    seconds = matmul_floor.replay(calls, rounds=2)
    assert 0 < seconds < 10


def test_the_script_prints_its_share(original_data, capsys):
    """Does a small run on the original corpus end with the share of the best matmul its matmuls reach?"""
    assert matmul_floor.main(["--data-dir", str(original_data), "--batch-size", "4", "--batches", "1",
                              "--rounds", "1"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("the step's matmuls alone run at ") and "% of the best matmul" in last
