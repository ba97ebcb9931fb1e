"""How near the float32 matmul ceiling can a training step of the original's model get on this CPU?

``train_throughput.py`` sets each row against a ceiling: the row's counted matrix
multiplies at this machine's best float32 matmul (a 2048-cube or the MLP's own
shape into a kept output). This script asks what share of that ceiling the
step's matmuls reach on their own: it records every matmul of forward and
backward (``aten.mm``, ``addmm``, ``bmm``, ``baddbmm``, with their shapes and
strides) in one step of our best float32 row, then replays only those, on
tensors of the same layout, nothing else in between. If the replayed matmuls
alone take longer than the counted work at the best matmul, no saving elsewhere
(softmax, dropout, GELU, norms, optimizer) lifts the row above that share.

    python benchmarks/matmul_floor.py --data-dir ../shared/data/cs224n_a5
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from typing import NamedTuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from train_throughput import (  # noqa: E402  (a sibling on sys.path)
    add_corpus_options,
    best_matmul_gflops,
    check_corpus,
    reference_corruption_dataset,
)

from course_lib.gpt.device import keep_freed_memory
from course_lib.gpt.model import GPT, GPTConfig
from course_lib.gpt.trainer import bucket_batches

MATMULS = {torch.ops.aten.mm.default, torch.ops.aten.addmm.default, torch.ops.aten.bmm.default,
           torch.ops.aten.baddbmm.default}


class Layout(NamedTuple):
    """How a recorded tensor argument was laid out."""

    shape: tuple[int, ...]  # its sizes
    stride: tuple[int, ...]  # its strides, in elements (transposed views and broadcast dims as recorded)


class RecordMatmuls(TorchDispatchMode):
    """Keeps (op, [Layout of each tensor argument, or the argument itself], keyword arguments) of every matmul."""

    def __init__(self):
        super().__init__()
        self.calls: list[tuple] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in MATMULS:
            layout = [Layout(tuple(a.shape), a.stride()) if isinstance(a, torch.Tensor) else a for a in args]
            self.calls.append((func, layout, dict(kwargs or {})))
        return func(*args, **(kwargs or {}))


def flops(func, layout) -> int:
    """Multiply-add operations of one recorded matmul, counted 2 per multiply-add."""
    shapes = [item.shape for item in layout if isinstance(item, Layout)]
    a, b = shapes[-2:]  # the two multiplied operands come last among the tensors
    batch = a[0] if len(a) == 3 else 1
    return 2 * batch * a[-2] * a[-1] * b[-1]


def strided_random(layout: Layout) -> torch.Tensor:
    """Random numbers laid out as recorded: transposed views and broadcast (stride 0) dims included."""
    needed = 1 + sum((size - 1) * step for size, step in zip(layout.shape, layout.stride))
    return torch.randn(needed).as_strided(layout.shape, layout.stride)


def replay(calls, rounds: int) -> float:
    """Median seconds of running every recorded matmul once, back to back, on tensors of the recorded layouts."""
    prepared = [(func, [strided_random(item) if isinstance(item, Layout) else item for item in layout], kwargs)
                for func, layout, kwargs in calls]
    times = []
    for _ in range(rounds + 1):  # the first replay warms up
        start = time.perf_counter()
        for func, args, kwargs in prepared:
            func(*args, **kwargs)
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_corpus_options(parser)
    parser.add_argument("--batches", type=int, default=4, help="batches of the best row to record and replay")
    parser.add_argument("--rounds", type=int, default=5, help="replays per batch; the median is kept")
    args = parser.parse_args(argv)
    check_corpus(parser, args)
    keep_freed_memory()  # as the best row: no page faults on fresh outputs
    dataset = reference_corruption_dataset(args.data_dir)
    torch.manual_seed(0)
    model = GPT(GPTConfig(dataset.vocab_size, 128, fast_dropout=True)).train()
    order = random.sample(range(len(dataset)), min(len(dataset), args.batch_size * 32))  # one load, as 32 buckets draw
    examples = [dataset[i] for i in order]
    batches = list(bucket_batches(examples, args.batch_size, trim=True))[: args.batches]
    peak = best_matmul_gflops(args.batch_size)
    print(f"best float32 matmul {peak:.0f} GFLOP/s; original model, fast dropout, batch {args.batch_size}, "
          f"{len(batches)} batches grouped by length and trimmed", flush=True)
    total_counted = total_step = total_alone = 0.0
    for x, y, _ in batches:
        for _ in range(2):  # warm the kept heap and the kernels
            model.zero_grad(set_to_none=True)
            model(x, y)[1].backward()
        start = time.perf_counter()
        model.zero_grad(set_to_none=True)
        model(x, y)[1].backward()
        step = time.perf_counter() - start
        recorder = RecordMatmuls()
        with recorder:
            model(x, y)[1].backward()
        work = sum(flops(func, layout) for func, layout, _ in recorder.calls)
        alone = replay(recorder.calls, args.rounds)
        counted = work / (peak * 1e9)
        total_counted, total_step, total_alone = total_counted + counted, total_step + step, total_alone + alone
        print(f"batch {tuple(x.shape)}: step {step * 1e3:.0f} ms (forward + backward); its {len(recorder.calls)} "
              f"matmuls alone {alone * 1e3:.0f} ms; at the best matmul {counted * 1e3:.0f} ms", flush=True)
    print(f"the step's matmuls alone run at {total_counted / total_alone:.0%} of the best matmul; "
          f"the whole step at {total_counted / total_step:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
