"""Training throughput: our trainer against a original-faithful minGPT loop, side by side.

Both train the original's model config (4 layers, 8 heads, 256 wide, dropout 0.1) on
span-corrupted real text from the same corpus at the same batch size. The
original-faithful loop uses manual attention, full padding, float32 and no
shuffling; ours adds the switches of ``ROWS`` one at a time. Throughput counts
real-text tokens (targets that are not PAD) per second. Every measurement runs
in a fresh process (one switch changes the C allocator for a whole process),
and the original-faithful loop and our rows take turns for ``--rounds`` rounds, so
a slow spell on a shared machine lands on all of them; the table shows each
row's median. Ends with ``speedup X.XX``: our best row with dropout over the
original-faithful loop, bf16 autocast included where it was measured (the line before
it gives the best float32 row alone).

Before that it prints a ceiling: each row's matrix multiplies (counted from its
batch shapes, forward and backward) at this machine's best float32 matmul speed.
A row's "matmul share" is the part of its time those multiplies would take there
(float32 rows only); the ceiling is the rate our best float32 dropout row could
reach if everything else (softmax, dropout, GELU, layer norms, the optimizer) took
no time at all.

bf16 autocast pays only where the CPU has bfloat16 instructions (avx512_bf16 or
amx_bf16): on an AVX2-only CPU its matmuls ran about 25 times slower than float32
here, so by default (``--bf16 auto``) its row is measured only on such CPUs. It
keeps the original's model and dropout, so it counts toward the speedup.

    python benchmarks/train_throughput.py --data-dir ../shared/data/cs224n_a5
"""
from __future__ import annotations

import argparse
import itertools
import multiprocessing
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import torch
from compute_ceiling import matmul_gflops, measure_steps  # noqa: E402  (this folder is on sys.path when run as a script)
from torch import nn

from course_lib.data_files import read_text  # noqa: E402
from course_lib.gpt.model import GPT, GPTConfig  # noqa: E402
from course_lib.gpt.trainer import TrainerConfig  # noqa: E402
from course_lib.layout import ORIGINAL_DATA_DIR, SOLUTIONS_DIR
from course_lib.loader.load import load_notebooks, notebook_paths  # noqa: E402


@dataclass
class Rate:
    """One measurement of one row."""

    tokens_per_second: float  # real-text tokens (targets that are not PAD) per second
    matmul_flops_per_token: float  # matrix-multiply operations per real token, forward and backward


def matmul_flops(model: nn.Module, n_layer: int, n_embd: int, shapes: list[tuple[int, int]]) -> int:
    """Matrix-multiply operations of GPT training steps on inputs of these (batch, width) shapes.

    Every Linear does 2 operations per weight and position forward and 4 backward
    (the gradients of its input and its weight); each attention layer multiplies
    (T, hs) by (hs, T) and (T, T) by (T, hs) in every head, 4 * B * T^2 * C forward
    and twice that backward. Softmax, dropout, GELU, norms and the optimizer are
    left out: this is the work a matmul-bound step cannot avoid.
    """
    weights = sum(m.weight.numel() for m in model.modules() if isinstance(m, nn.Linear))
    return sum(6 * b * t * weights + 12 * n_layer * b * t * t * n_embd for b, t in shapes)


def seed_faithful(dataset, mconf: GPTConfig, batch_size: int, steps: int, warmup: int) -> Rate:
    """The original's loop: manual attention, padded batches, fp32, AdamW on every non-bias weight."""
    torch.manual_seed(0)
    model = GPT(GPTConfig(**{**mconf.__dict__, "attention_impl": "manual"}))
    model.train()
    decay = [p for n, p in model.named_parameters() if "bias" not in n]
    no_decay = [p for n, p in model.named_parameters() if "bias" in n]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=6e-3, betas=(0.9, 0.95))
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=False)
    real, start, shapes = 0, None, []
    for i, (x, y) in enumerate(itertools.islice(itertools.cycle(loader), warmup + steps)):
        if i == warmup:
            start, real, shapes = time.perf_counter(), 0, []
        _, loss = model(x, y)
        model.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        real += int((y != 0).sum())
        shapes.append(tuple(x.shape))
    seconds = time.perf_counter() - start
    return Rate(real / seconds, matmul_flops(model, mconf.n_layer, mconf.n_embd, shapes) / real)


def ours(dataset, mconf: GPTConfig, batch_size: int, steps: int, warmup: int, **switches) -> Rate:
    torch.manual_seed(0)
    config = TrainerConfig(max_epochs=10_000, batch_size=batch_size, learning_rate=6e-3, progress=False,
                           max_steps=warmup + steps, **switches)
    model = GPT(mconf)
    measured = measure_steps(model, dataset, config, warmup)
    flops = matmul_flops(model, mconf.n_layer, mconf.n_embd, measured.shapes)
    return Rate(measured.real_tokens / measured.seconds, flops / measured.real_tokens)


# Our rows, each adding one switch to the row before (label, GPTConfig switches, TrainerConfig switches).
ROWS = [
    ("sdpa, trimmed, 8 length buckets", {}, dict(shuffle=True, trim_padding=True, length_buckets=8)),
    ("+ fast CPU dropout", dict(fast_dropout=True), {}),
    ("+ 32 length buckets", {}, dict(length_buckets=32)),
    ("+ glibc keeps freed memory", {}, dict(keep_freed_memory=True)),
    ("+ fused AdamW", {}, dict(fused_adamw=True)),
]
NO_DROPOUT = dict(embd_pdrop=0.0, resid_pdrop=0.0, attn_pdrop=0.0)


def cpu_has_bf16() -> bool:
    """Does this CPU have bfloat16 matmul instructions (Linux /proc/cpuinfo flags)?"""
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def add_corpus_options(parser: argparse.ArgumentParser) -> None:
    """--data-dir and --batch-size: the original's corpus and batch, shared with matmul_floor.py, which replays
    this benchmark's best row."""
    parser.add_argument("--data-dir", default=str(ORIGINAL_DATA_DIR))
    parser.add_argument("--batch-size", type=int, default=128)


def check_corpus(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Stop with one line when --data-dir holds no wiki.txt."""
    if not (Path(args.data_dir) / "wiki.txt").is_file():
        parser.error(f"no wiki.txt in {args.data_dir}; pass --data-dir with the course's data folder")


def reference_corruption_dataset(data_dir: str):
    """The reference notebooks' span corruption over the corpus's wiki.txt at the original's block size, seeded."""
    parts = load_notebooks(notebook_paths(SOLUTIONS_DIR), module_name="bench_reference")
    random.seed(0)
    return parts.CharCorruptionDataset(read_text(Path(data_dir) / "wiki.txt"), 128)


def measure(args: argparse.Namespace, model_switches: dict | None, trainer_switches: dict) -> Rate:
    """Real-text tokens per second of one row and its matmul work (``model_switches`` None: the original-faithful
    loop)."""
    if args.threads:
        torch.set_num_threads(args.threads)
    dataset = reference_corruption_dataset(args.data_dir)
    if model_switches is None:
        return seed_faithful(dataset, GPTConfig(dataset.vocab_size, 128), args.batch_size, args.steps, args.warmup)
    mconf = GPTConfig(dataset.vocab_size, 128,
                      **model_switches)  # the original's config, dropout 0.1 unless switched off
    return ours(dataset, mconf, args.batch_size, args.steps, args.warmup, **trainer_switches)


def best_matmul_gflops(batch_size: int) -> float:
    """This machine's best float32 matmul GFLOP/s: a big square product or the original model's MLP at a trimmed
    batch."""
    width = GPTConfig.n_embd
    return max(matmul_gflops(2048, 2048, 2048), matmul_gflops(batch_size * 64, width, 4 * width))


def matmul_ceiling(args: argparse.Namespace) -> float:
    """:func:`best_matmul_gflops` with the benchmark's thread count."""
    if args.threads:
        torch.set_num_threads(args.threads)
    return best_matmul_gflops(args.batch_size)


def planned_rows(bf16: bool) -> list[tuple[str, dict | None, dict, bool]]:
    """(label, model switches or None for the seed, trainer switches, counts toward the speedup)."""
    rows: list[tuple[str, dict | None, dict, bool]] = [("original-faithful (manual attention, padded, fp32)", None, {},
                                                        False)]
    model_switches: dict = {}
    trainer_switches: dict = {}
    for label, model_more, trainer_more in ROWS:
        model_switches, trainer_switches = {**model_switches, **model_more}, {**trainer_switches, **trainer_more}
        rows.append((f"ours, {label}", model_switches, trainer_switches, True))
    # reported apart: the goal keeps the original's dropout
    rows.append(("ours, all of the above, no dropout", {**model_switches, **NO_DROPOUT}, trainer_switches, False))
    if bf16:  # the original's model and dropout, in mixed precision: counted; without dropout: apart
        mixed = {**trainer_switches, "autocast_bf16": True}
        rows.append(("ours, all of the above + bf16 autocast", model_switches, mixed, True))
        rows.append(("ours, all of the above + bf16 autocast, no dropout", {**model_switches, **NO_DROPOUT}, mixed,
                     False))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_corpus_options(parser)
    parser.add_argument("--steps", type=int, default=8, help="timed steps per measurement")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps before them")
    parser.add_argument("--rounds", type=int, default=3, help="measurements per row, taken in turns; medians shown")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--bf16", choices=("auto", "on", "off"), default="auto",
                        help="measure a bf16 autocast row; auto: only if the CPU has bf16 instructions")
    args = parser.parse_args(argv)
    check_corpus(parser, args)
    has_bf16 = cpu_has_bf16()
    bf16 = args.bf16 == "on" or (args.bf16 == "auto" and has_bf16)
    rows = planned_rows(bf16)
    print(f"corpus {args.data_dir}; batch {args.batch_size}; {args.steps} timed steps after {args.warmup}; "
          f"{args.rounds} rounds; threads {args.threads or torch.get_num_threads()}; "
          f"CPU {torch.backends.cpu.get_cpu_capability()}, bf16 instructions {'yes' if has_bf16 else 'no'}, "
          f"bf16 row {'on' if bf16 else 'off'}", flush=True)
    rates: dict[str, list[Rate]] = {label: [] for label, *_ in rows}
    peaks: list[float] = []
    spawn = multiprocessing.get_context("spawn")
    for round_ in range(1, args.rounds + 1):
        for label, model_switches, trainer_switches, _ in rows:
            # a fresh process per measurement: allocator settings and warm caches stay with their row
            with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
                rate = pool.submit(measure, args, model_switches, trainer_switches).result()
            rates[label].append(rate)
            print(f"round {round_}: {label:<52}: {rate.tokens_per_second:8.0f} real tokens/s", flush=True)
        with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:  # the machine's speed drifts: once a round
            peaks.append(pool.submit(matmul_ceiling, args).result())
        print(f"round {round_}: best float32 matmul: {peaks[-1]:.0f} GFLOP/s", flush=True)
    peak = statistics.median(peaks)

    def median(label: str, field: str) -> float:
        return statistics.median(getattr(rate, field) for rate in rates[label])

    base = median(rows[0][0], "tokens_per_second")
    print(f"\nmedian of {args.rounds} rounds, real-text tokens per second (x the original-faithful loop); "
          f"matmul share at {peak:.0f} GFLOP/s, the best float32 matmul (median of the rounds):")
    for label, _, trainer_switches, counted in rows:
        rate = median(label, "tokens_per_second")
        share = rate * median(label, "matmul_flops_per_token") / (peak * 1e9)
        # bf16 matmuls do not run at the float32 peak: no share for them
        shown = "bf16 matmuls" if trainer_switches.get("autocast_bf16") else f"matmul share {share:.0%}"
        print(f"{label:<60}: {rate:8.0f} ({rate / base:.2f}x), {shown}"
              f"{'' if counted or label == rows[0][0] else ', not counted'}")

    def fastest(labels) -> str:
        return max(labels, key=lambda label: median(label, "tokens_per_second"))

    counted_labels = [label for label, _, _, counted in rows if counted]
    best32 = fastest(label for label, _, switches, counted in rows if counted and not switches.get("autocast_bf16"))
    ceiling = peak * 1e9 / median(best32, "matmul_flops_per_token")
    print(f"ceiling: our best float32 dropout row ({best32.removeprefix('ours, ')}) with everything but its matmuls "
          f"free: {ceiling:,.0f} real tokens/s ({ceiling / base:.2f}x)")
    print(f"float32 speedup {median(best32, 'tokens_per_second') / base:.2f}")
    print(f"speedup {median(fastest(counted_labels), 'tokens_per_second') / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
