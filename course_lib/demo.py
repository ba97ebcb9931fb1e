"""The main job: the assignment's lesson on the embedded synthetic world, on a CPU.

Writes the default world, then with the reference solutions trains and evaluates
(1) finetuning without pretraining, (2) vanilla pretrain + finetune and
(3) synthesizer pretrain + finetune, and prints dev accuracy against the
majority-place baseline.
"""
from __future__ import annotations

import time
from pathlib import Path

from course_lib import layout
from course_lib.gpt.evaluation import baseline_accuracy
from course_lib.layout import DEV, TRAIN, WIKI
from course_lib.runs import run
from course_lib.world import write_world

ROWS = [
    ("no pretraining", ["vanilla_finetune_without_pretrain", "vanilla_eval_test_without_pretrain"],
     "vanilla_eval_dev_without_pretrain"),
    ("vanilla, pretrained", ["vanilla_pretrain", "vanilla_finetune_with_pretrain", "vanilla_eval_test_with_pretrain"],
     "vanilla_eval_dev_with_pretrain"),
    ("synthesizer, pretrained",
     ["synthesizer_pretrain", "synthesizer_finetune_with_pretrain", "synthesizer_eval_test_with_pretrain"],
     "synthesizer_eval_dev_with_pretrain"),
]


def demo(data_dir: Path = layout.DEFAULT_DATA_DIR, out_dir: Path = layout.DEFAULT_OUT_DIR / "demo",
         notebooks=layout.SOLUTIONS_DIR, preset: str = layout.DEFAULT_PRESET, seed: int = 0,
         world_seed: int | str = layout.DEFAULT_WORLD_SEED) -> list[tuple[str, float, float]]:
    """Run the three rows (``seed``: training's); returns (label, dev accuracy, minutes) per row."""
    if not (data_dir / WIKI).is_file():
        write_world(data_dir, world_seed)  # no answers: the demo scores dev only
        print(f"wrote the synthetic world (seed {world_seed}) to {data_dir}")
    place, base = baseline_accuracy(data_dir / TRAIN, data_dir / DEV)
    print(f"majority-place baseline: always answering {place!r} scores {100 * base:.1f}% on dev")
    rows = []
    for label, steps, dev_run in ROWS:
        start = time.perf_counter()
        for name in steps + [dev_run]:
            print(f"== {name}", flush=True)
            result = run(name, notebooks, preset=preset, data_dir=data_dir, out_dir=out_dir, seed=seed)
        rows.append((label, result.accuracy, (time.perf_counter() - start) / 60))
        print(f"{label}: dev accuracy {100 * result.accuracy:.1f}%", flush=True)
    print()
    print(f"{'model':<26}{'dev accuracy':>14}{'x baseline':>12}{'minutes':>10}")
    print(f"{'majority place (' + place + ')':<26}{100 * base:>13.1f}%{1.0:>12.2f}{0.0:>10.1f}")
    for label, acc, minutes in rows:
        print(f"{label:<26}{100 * acc:>13.1f}%{acc / base if base else float('inf'):>12.2f}{minutes:>10.1f}")
    return rows
