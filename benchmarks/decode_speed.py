"""Greedy decoding of the dev questions: batched with a KV cache against the plain loops.

    python benchmarks/decode_speed.py --data-dir ../shared/data/cs224n_a5 [--one-at-a-time]

Uses the original's model config (random weights: the speed does not depend on them) and
checks that every path gives exactly the same predictions.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

from course_lib.data_files import read_birth_places, read_text
from course_lib.gpt.datasets import CharCorruptionDatasetBase
from course_lib.gpt.evaluation import DECODE_STEPS, extract_prediction, greedy_decode
from course_lib.gpt.model import GPT, GPTConfig
from course_lib.gpt.vocab import MASK_CHAR
from course_lib.layout import ORIGINAL_DATA_DIR


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=str(ORIGINAL_DATA_DIR))
    parser.add_argument("--one-at-a-time", action="store_true", help="also time the original's one-prompt loop (slow)")
    args = parser.parse_args(argv)
    data = Path(args.data_dir)
    vocab = CharCorruptionDatasetBase(read_text(data / "wiki.txt"), 128).vocab
    torch.manual_seed(0)
    model = GPT(GPTConfig(len(vocab), 128)).eval()
    prompts = [vocab.encode(e.question + MASK_CHAR) for e in read_birth_places(data / "birth_dev.tsv")]
    timings, outputs = {}, {}
    paths = [("batched + KV cache", dict(use_cache=True)), ("batched, no cache", dict(use_cache=False))]
    if args.one_at_a_time:
        paths.append(("one at a time, no cache", dict(use_cache=False, batch_size=1)))
    for label, kwargs in paths:
        start = time.perf_counter()
        out = greedy_decode(model, prompts, DECODE_STEPS, **kwargs)
        timings[label] = time.perf_counter() - start
        outputs[label] = [extract_prediction(vocab.decode(o)) for o in out]
        print(f"{label:<26}{timings[label]:7.2f} s for {len(prompts)} questions", flush=True)
    first = next(iter(outputs.values()))
    same = all(o == first for o in outputs.values())
    print(f"identical predictions: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
