"""Do the reference solutions clear the pass bars, seed after seed?

    python benchmarks/calibrate_bars.py --variant synthesizer --seeds 0,1,2,3 --jobs 2
    python benchmarks/calibrate_bars.py --preset cpu --set pretrain.max_epochs=400 --seeds 0,1
    python benchmarks/calibrate_bars.py --variant nopretrain --seeds 0,1,2,3,4 --jobs 2

Runs one variant's pretrain -> finetune -> dev and test evaluation (``nopretrain``: the
vanilla model finetuned without pretraining) with the reference notebooks once per seed (a student's own
initialisation order draws a different stream, so a bar has to hold across seeds, not for seed 0 alone), then
prints each seed's dev and test accuracy beside the bars in autograder/checks/bars.toml.
With --jobs 2 two seeds train at once on one thread each. Runs go to --out/seedN.
Test accuracy is scored against --answers (grader-only); without it, against the data
folder's birth_test.tsv if it has one (the original files), else the answers of the
default world (seed 0) are written to --out/grader_only/birth_test.tsv, provided the
data folder holds that world.
"""
from __future__ import annotations

import argparse
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from autograder.checks.bars import load_bars
from course_lib.data_files import read_birth_places
from course_lib.gpt.evaluation import accuracy
from course_lib.layout import DEFAULT_DATA_DIR, DEFAULT_OUT_DIR, SOLUTIONS_DIR, TEST_ANSWERS, TEST_INPUTS
from course_lib.presets import get_preset, with_overrides
from course_lib.runs import run
from course_lib.world import write_world

# variant -> (its runs before the dev evaluation, its dev evaluation, its test predictions, its run part in bars.toml)
VARIANTS = {
    "vanilla": (("vanilla_pretrain", "vanilla_finetune_with_pretrain", "vanilla_eval_test_with_pretrain"),
                "vanilla_eval_dev_with_pretrain", "vanilla.pretrain.test.predictions", "vanilla_pretrain"),
    "synthesizer": (("synthesizer_pretrain", "synthesizer_finetune_with_pretrain",
                     "synthesizer_eval_test_with_pretrain"),
                    "synthesizer_eval_dev_with_pretrain", "synthesizer.pretrain.test.predictions",
                    "synthesizer_pretrain"),
    "nopretrain": (("vanilla_finetune_without_pretrain", "vanilla_eval_test_without_pretrain"),
                   "vanilla_eval_dev_without_pretrain", "vanilla.nopretrain.test.predictions", "vanilla_nopretrain"),
}


def one_seed(variant: str, seed: int, preset_name: str, settings: list[str], data_dir: str, answers: str, out: str,
             notebooks: str, threads: int | None) -> tuple[int, tuple[int, int], tuple[int, int], float]:
    """(seed, dev (correct, total), test (correct, total), minutes) of one seed's pretrain + finetune + evaluation."""
    preset = with_overrides(get_preset(preset_name), settings)
    start = time.perf_counter()
    before, dev_run, test_predictions, _ = VARIANTS[variant]
    for name in before:
        run(name, notebooks, preset=preset, data_dir=data_dir, out_dir=out, seed=seed, progress=False,
            num_threads=threads)
    dev = run(dev_run, notebooks, preset=preset, data_dir=data_dir, out_dir=out, seed=seed, progress=False,
              num_threads=threads)
    # the test questions run.sh evaluates carry no answers: score them against the grader-only file
    predictions = (Path(out) / test_predictions).read_text(encoding="utf-8").splitlines()
    gold = [e.place for e in read_birth_places(Path(answers), require_answers=True)]
    return seed, (dev.correct, dev.total), accuracy(predictions, gold), (time.perf_counter() - start) / 60


def default_answers(data_dir: Path, out: Path) -> Path | None:
    """The seed-0 answers, written under ``out``, if ``data_dir`` holds the seed-0 world's test questions; else None."""
    # the student folder holds no answers: regenerate the default world's beside the outputs
    written = write_world(out / "world0", 0, answers_path=out / "grader_only" / TEST_ANSWERS)
    same = (data_dir / TEST_INPUTS).read_bytes() == written[TEST_INPUTS].read_bytes()
    return written[TEST_ANSWERS] if same else None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="cpu")
    parser.add_argument("--variant", default="synthesizer", choices=sorted(VARIANTS))
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--jobs", type=int, default=1, help="seeds trained at once (one thread each when > 1)")
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR),
                        help="the student data folder (the default synthetic world is written here if missing)")
    parser.add_argument("--answers", default=None,
                        help="the grader-only test answers (default: DATA_DIR/birth_test.tsv if there, else those of "
                             "the seed-0 world, written under --out)")
    parser.add_argument("--dataset", default="synthetic", choices=["synthetic", "original"], help="whose bars to show")
    parser.add_argument("--out", default=str(DEFAULT_OUT_DIR / "calibrate_bars"))
    parser.add_argument("--notebooks", default=str(SOLUTIONS_DIR))
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="SECTION.FIELD=VALUE")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    data_dir = Path(args.data_dir)
    if not (data_dir / "wiki.txt").is_file():
        write_world(data_dir, 0)
    answers = Path(args.answers) if args.answers else None
    if answers is None and (data_dir / TEST_ANSWERS).is_file():
        answers = data_dir / TEST_ANSWERS  # e.g. the original course files, which carry their answers
    if answers is None:
        answers = default_answers(data_dir, Path(args.out))
    if answers is None:
        parser.error(f"{data_dir} is not the default world (seed 0): pass its test answers with --answers")
    if not answers.is_file():
        parser.error(f"{answers} (the test answers) not found")
    bars = {b.split: b for b in load_bars(args.dataset, args.preset) if b.part == VARIANTS[args.variant][3]}
    threads = 1 if args.jobs > 1 else None
    jobs = [(args.variant, s, args.preset, args.settings, str(data_dir), str(answers),
             str(Path(args.out) / f"seed{s}"), args.notebooks, threads) for s in seeds]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        rows = sorted(pool.map(one_seed, *zip(*jobs)))
    print(f"{args.variant}, preset {args.preset}{' ' + ' '.join(args.settings) if args.settings else ''}")
    print(f"{'seed':>4} {'dev':>7} {'test':>7} {'minutes':>8}")
    for seed, (dev, dev_n), (test, test_n), minutes in rows:
        print(f"{seed:>4} {100 * dev / dev_n:>6.1f}% {100 * test / test_n:>6.1f}% {minutes:>8.1f}")
    for split, column in (("dev", 1), ("test", 2)):
        counts = [row[column] for row in rows]
        fractions = [correct / total for correct, total in counts]
        bar = bars[split]
        cleared = sum(bar.passed(correct, total) for correct, total in counts)
        print(f"{split}: min {100 * min(fractions):.1f}%, mean {100 * statistics.mean(fractions):.1f}%; bar "
              f"{100 * bar.min_fraction:.1f}% and {bar.min_correct} right, cleared by {cleared} of {len(counts)} seeds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
