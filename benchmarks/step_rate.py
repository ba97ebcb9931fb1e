"""Seconds per training step of a preset's runs: what the notebooks' time estimates are made of.

    python benchmarks/step_rate.py --preset cpu --steps 300
    python benchmarks/step_rate.py --preset cpu-original --data-dir ../shared/data/cs224n_a5 --steps 300
    python benchmarks/step_rate.py --preset cpu-handout --steps 12 --warmup 3

Runs the preset's real runs (the reference notebooks' glue, the preset's overrides) for
``--steps`` steps each: vanilla pretraining, finetuning without and with pretraining, and
the synthesizer's pretraining, and prints the median time per step after ``--warmup``
steps, and the fastest tenth's (on a machine others share, what the run takes alone).
``course_lib.presets.Preset.seconds_per_step`` holds these numbers for a 2-core CPU; the
runs multiply them by their step count for the estimate they print before training
(``course_lib.runs.plan_lines``).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile

from course_lib.layout import DEFAULT_DATA_DIR, SOLUTIONS_DIR
from course_lib.loader.load import load_notebooks, notebook_paths
from course_lib.presets import get_preset, with_overrides
from course_lib.runs import run
from course_lib.world import write_world

# each run, in an order that has every run's input written by an earlier one
STAGES = ("vanilla_pretrain", "vanilla_finetune_without_pretrain", "vanilla_finetune_with_pretrain",
          "synthesizer_pretrain")


def step_times(history: list[dict], warmup: int) -> list[float]:
    """Wall time of each step after the first ``warmup``, in order."""
    times = [row["seconds"] for row in history]
    return [b - a for a, b in zip(times[warmup:], times[warmup + 1:])]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="cpu")
    parser.add_argument("--steps", type=int, default=300, help="steps timed per run (after the warm-up)")
    parser.add_argument("--warmup", type=int, default=20, help="steps left out of the timing")
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR))
    parser.add_argument("--notebooks", default=str(SOLUTIONS_DIR))
    args = parser.parse_args(argv)
    if args.data_dir == str(DEFAULT_DATA_DIR) and not (DEFAULT_DATA_DIR / "wiki.txt").is_file():
        write_world(DEFAULT_DATA_DIR, 0)
    parts = load_notebooks(notebook_paths(args.notebooks), module_name="step_rate_reference")
    steps = args.steps + args.warmup + 1
    preset = with_overrides(get_preset(args.preset), [f"all.max_steps={steps}"])
    print(f"preset {args.preset}, {steps} steps per run ({args.warmup} left out), data {args.data_dir}", flush=True)
    with tempfile.TemporaryDirectory() as out:
        for name in STAGES:
            result = run(name, parts, preset=preset, data_dir=args.data_dir, out_dir=out, progress=False)
            gaps = step_times(result.history, args.warmup)
            median, tenth = statistics.median(gaps), statistics.quantiles(gaps, n=10)[0]
            # on a machine others share, the fastest tenth of the steps shows what the run takes alone
            print(f"{name:36} median {median * 1000:7.1f} ms/step ({1 / median:5.1f} steps/s), "
                  f"fastest tenth {tenth * 1000:7.1f} ms/step", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
