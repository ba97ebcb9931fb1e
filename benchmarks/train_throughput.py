"""Training throughput: our trainer against a seed-faithful minGPT loop, side by side.

Both train the seed's model config (4 layers, 8 heads, 256 wide, dropout 0.1) on
span-corrupted real text from the same corpus at the same batch size. The
seed-faithful loop uses manual attention, full padding, float32 and no
shuffling; ours uses the switches named below. Throughput counts real-text
tokens (targets that are not PAD) per second. Ends with ``speedup X.XX``.

bf16 autocast pays only where the CPU has bfloat16 instructions (avx512_bf16 or
amx_bf16): on an AVX2-only CPU its matmuls ran about 25 times slower than float32
here, so by default (``--bf16 auto``) its rows are measured only on such CPUs.

    python benchmarks/train_throughput.py --data-dir ../shared/data/cs224n_a5
"""
from __future__ import annotations

import argparse
import itertools
import random
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from course_lib.data_files import read_text  # noqa: E402
from course_lib.model import GPT, GPTConfig  # noqa: E402
from course_lib.notebook_loader import load_notebooks, notebook_paths  # noqa: E402
from course_lib.trainer import TrainerConfig  # noqa: E402
from compute_ceiling import measure_steps  # noqa: E402  (this folder is on sys.path when run as a script)


def seed_faithful(dataset, mconf: GPTConfig, batch_size: int, steps: int, warmup: int) -> float:
    """The seed's loop: manual attention, padded batches, fp32, AdamW on every non-bias weight."""
    torch.manual_seed(0)
    model = GPT(GPTConfig(**{**mconf.__dict__, "attention_impl": "manual"}))
    model.train()
    decay = [p for n, p in model.named_parameters() if "bias" not in n]
    no_decay = [p for n, p in model.named_parameters() if "bias" in n]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=6e-3, betas=(0.9, 0.95))
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=False)
    real, start = 0, None
    for i, (x, y) in enumerate(itertools.islice(itertools.cycle(loader), warmup + steps)):
        if i == warmup:
            start, real = time.perf_counter(), 0
        _, loss = model(x, y)
        model.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        real += int((y != 0).sum())
    return real / (time.perf_counter() - start)


def ours(dataset, mconf: GPTConfig, batch_size: int, steps: int, warmup: int, **switches) -> float:
    torch.manual_seed(0)
    config = TrainerConfig(max_epochs=10_000, batch_size=batch_size, learning_rate=6e-3, progress=False,
                           max_steps=warmup + steps, **switches)
    measured = measure_steps(GPT(mconf), dataset, config, warmup)
    return measured.real_tokens / measured.seconds


def cpu_has_bf16() -> bool:
    """Does this CPU have bfloat16 matmul instructions (Linux /proc/cpuinfo flags)?"""
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=str(REPO.parent / "shared" / "data" / "cs224n_a5"))
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--bf16", choices=("auto", "on", "off"), default="auto",
                        help="measure bf16 autocast rows; auto: only if the CPU has bf16 instructions")
    args = parser.parse_args(argv)
    has_bf16 = cpu_has_bf16()
    bf16 = args.bf16 == "on" or (args.bf16 == "auto" and has_bf16)
    if args.threads:
        torch.set_num_threads(args.threads)
    parts = load_notebooks(notebook_paths(REPO / "solutions" / "a5"), module_name="bench_reference")
    random.seed(0)
    dataset = parts.CharCorruptionDataset(read_text(Path(args.data_dir) / "wiki.txt"), 128)
    mconf = GPTConfig(dataset.vocab_size, 128)  # the seed's config, dropout 0.1 everywhere
    print(f"corpus {args.data_dir}: {len(dataset)} documents; batch {args.batch_size}; "
          f"{args.steps} timed steps after {args.warmup}; threads {torch.get_num_threads()}; "
          f"CPU {torch.backends.cpu.get_cpu_capability()}, bf16 instructions {'yes' if has_bf16 else 'no'}, "
          f"bf16 rows {'on' if bf16 else 'off'}", flush=True)
    base = seed_faithful(dataset, mconf, args.batch_size, args.steps, args.warmup)
    print(f"seed-faithful (manual attention, padded, fp32): {base:8.0f} real tokens/s", flush=True)
    fp32 = dict(shuffle=True, trim_padding=True, length_buckets=8)
    configs = [("sdpa + trim + buckets", fp32)] + ([("sdpa + trim + buckets + bf16", dict(fp32, autocast_bf16=True))]
                                                   if bf16 else [])
    results = {}
    for label, switches in configs:
        results[label] = ours(dataset, mconf, args.batch_size, args.steps, args.warmup, **switches)
        print(f"ours, {label:<38}: {results[label]:8.0f} real tokens/s ({results[label] / base:.2f}x)", flush=True)
    # reported apart: the goal keeps the seed's dropout
    no_dropout = GPTConfig(dataset.vocab_size, 128, embd_pdrop=0.0, resid_pdrop=0.0, attn_pdrop=0.0)
    for label, switches in configs:
        nd = ours(dataset, no_dropout, args.batch_size, args.steps, args.warmup, **switches)
        print(f"ours, {label + ', no dropout':<38}: {nd:8.0f} real tokens/s ({nd / base:.2f}x), not counted",
              flush=True)
    best = max(results.values())
    print(f"speedup {best / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
