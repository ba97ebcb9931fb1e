"""How near does CPU pretraining run to this machine's float32 matrix-multiply ceiling?

    python benchmarks/compute_ceiling.py --preset cpu-original --set pretrain.length_buckets=8

Measures three things on the original wiki.txt with the reference span corruption:
1. the fastest float32 ``torch.mm`` here (square sizes and the training's own shape);
2. the preset's pretraining: floating-point operations per step, counted by
   ``torch.utils.flop_counter.FlopCounterMode`` on one run (manual attention, because
   the counter does not see the CPU's fused attention; the arithmetic is the same),
   and steps per second timed on a second run with the same seed, so the same batches;
3. from those, the pretraining epochs half an hour holds now and would hold if every
   operation ran at the matmul ceiling. The AdamW update and other elementwise work
   are not counted, so that second number is an upper bound.
"""
from __future__ import annotations

import argparse
import math
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch.utils.flop_counter import FlopCounterMode

from course_lib.data_files import read_text
from course_lib.gpt.model import GPT
from course_lib.gpt.trainer import Trainer, TrainerConfig
from course_lib.layout import ORIGINAL_DATA_DIR, SOLUTIONS_DIR
from course_lib.loader.load import load_notebooks, notebook_paths
from course_lib.presets import get_preset, with_overrides
from course_lib.runs import apply_overrides, model_config


def matmul_gflops(m: int, k: int, n: int, seconds: float = 1.0) -> float:
    """Best GFLOP/s of an (m x k) @ (k x n) float32 product over about ``seconds`` of repeats."""
    # into one kept output: the page faults of a fresh result are not the multiply's
    a, b, out = torch.randn(m, k), torch.randn(k, n), torch.empty(m, n)
    for _ in range(3):
        torch.mm(a, b, out=out)  # warm up the threads and the kernel choice
    best, spent = 0.0, 0.0
    while spent < seconds:
        start = time.perf_counter()
        torch.mm(a, b, out=out)
        took = time.perf_counter() - start
        spent += took
        best = max(best, 2 * m * k * n / took / 1e9)
    return best


@dataclass
class Measured:
    """The timed steps of one pretraining run (those after the warmup)."""

    seconds: float = 0.0  # wall time of the timed steps
    flops: int = 0  # operations the counter saw in them (0 without a counter)
    real_tokens: int = 0  # targets that are not PAD
    shapes: list[tuple[int, int]] = field(default_factory=list)  # (batch, width) of each timed step's input


def measure_steps(model, dataset, config: TrainerConfig, warmup: int,
                  counter: FlopCounterMode | None = None) -> Measured:
    """Train until config.max_steps and measure the steps after the first ``warmup``."""
    trainer = Trainer(model, dataset, None, config)
    measured, marks = Measured(), {"start": time.perf_counter(), "flops": 0}
    forward = model.forward

    def recording_forward(idx, targets=None):
        if trainer.step >= warmup and targets is not None:
            measured.real_tokens += int((targets != 0).sum())
            measured.shapes.append(tuple(idx.shape))
        return forward(idx, targets)

    def on_batch_end(t):
        if t.step == warmup:
            marks["start"] = time.perf_counter()
            marks["flops"] = counter.get_total_flops() if counter else 0

    model.forward = recording_forward
    trainer.add_callback("on_batch_end", on_batch_end)
    trainer.train()
    measured.seconds = time.perf_counter() - marks["start"]
    measured.flops = (counter.get_total_flops() - marks["flops"]) if counter else 0
    return measured


def pretrain_steps(dataset, preset, steps: int, warmup: int, attention_impl: str = "sdpa",
                   counter: FlopCounterMode | None = None) -> Measured:
    """Train the preset's pretraining for warmup + steps steps (seed 0) and measure the last ``steps``."""
    mconf = model_config(preset, dataset.vocab_size)
    mconf.attention_impl = attention_impl
    torch.manual_seed(0)
    config = apply_overrides(TrainerConfig(), {**preset.pretrain, "seed": 0, "progress": False,
                                               "max_steps": warmup + steps}, len(dataset), preset.block_size)
    return measure_steps(GPT(mconf), dataset, config, warmup, counter)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="cpu-original")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                        help="change one preset value, as in benchmarks/time_to_bar.py")
    parser.add_argument("--data-dir", default=str(ORIGINAL_DATA_DIR))
    parser.add_argument("--steps", type=int, default=300, help="timed steps")
    parser.add_argument("--warmup", type=int, default=20, help="untimed steps first")
    parser.add_argument("--minutes", type=float, default=30.0, help="the budget to size in epochs")
    args = parser.parse_args(argv)

    preset = with_overrides(get_preset(args.preset), args.set)
    parts = load_notebooks(notebook_paths(SOLUTIONS_DIR), module_name="bench_reference")
    random.seed(0)
    dataset = parts.CharCorruptionDataset(read_text(Path(args.data_dir) / "wiki.txt"), preset.block_size)
    print(f"preset {preset.name}; model {preset.model}; threads {torch.get_num_threads()}", flush=True)

    mconf = model_config(preset, dataset.vocab_size)
    batch = preset.pretrain.get("batch_size", TrainerConfig.batch_size)
    tokens = batch * preset.block_size  # one untrimmed batch
    shapes = {"square 512": (512, 512, 512), "square 1024": (1024, 1024, 1024), "square 2048": (2048, 2048, 2048),
              f"training's MLP ({tokens}x{mconf.n_embd} @ {mconf.n_embd}x{4 * mconf.n_embd})":
              (tokens, mconf.n_embd, 4 * mconf.n_embd)}
    peaks = {label: matmul_gflops(*shape) for label, shape in shapes.items()}
    for label, gflops in peaks.items():
        print(f"float32 matmul, {label:<40}: {gflops:7.1f} GFLOP/s", flush=True)
    peak = max(peaks.values())

    with FlopCounterMode(display=False) as counter:
        counted = pretrain_steps(dataset, preset, args.steps, args.warmup, "manual", counter)
    timed = pretrain_steps(dataset, preset, args.steps, args.warmup, "sdpa")
    if counted.shapes != timed.shapes:
        raise SystemExit("the counted and the timed run trained on different batches; is the data loading seeded?")
    flops, seconds, real = counted.flops, timed.seconds, timed.real_tokens
    achieved = flops / seconds / 1e9
    print(f"pretraining: {flops / args.steps / 1e9:.3f} GFLOP per step counted, {args.steps / seconds:.1f} steps/s, "
          f"{real / seconds:,.0f} real tokens/s", flush=True)
    print(f"achieved {achieved:.1f} GFLOP/s = {achieved / peak:.0%} of the fastest matmul ({peak:.1f})", flush=True)

    steps_per_epoch = math.ceil(len(dataset) / batch)
    budget = args.minutes * 60
    now = budget * args.steps / seconds / steps_per_epoch
    print(f"{args.minutes:g} minutes hold {now:.0f} epochs at this speed, {now * peak / achieved:.0f} "
          f"if every counted operation ran at the matmul ceiling ({steps_per_epoch} steps per epoch)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
