"""Dev accuracy against wall time: pretrain for a budget, then finetune + evaluate snapshots.

    python benchmarks/time_to_bar.py --preset cpu --data-dir ../shared/data/cs224n_a5 \
        --minutes 24 --marks 8,16,24 --out outputs/time_to_bar
    python benchmarks/time_to_bar.py --preset cpu-original --set pretrain.length_buckets=8 \
        --set pretrain.max_epochs=260 --minutes 25 --marks 12,18,25 --out outputs/ttb_buckets

Pretraining runs once, saving params at each mark (minutes of pretraining wall
time). Each snapshot is then finetuned with the preset's finetune-with-pretrain
settings and scored on dev; the x axis is pretraining minutes + that snapshot's
finetuning minutes. Writes results.csv and accuracy_vs_time.png into --out.
"""
from __future__ import annotations

import argparse
import csv
import shutil
import sys
import time
from pathlib import Path

from plot_time_to_bar import plot_runs  # noqa: E402  (this folder is on sys.path when run as a script)

from course_lib.gpt.checkpoint import save_params  # noqa: E402
from course_lib.gpt.evaluation import baseline_accuracy  # noqa: E402
from course_lib.layout import DEFAULT_OUT_DIR, DEV, ORIGINAL_DATA_DIR, SOLUTIONS_DIR, TRAIN
from course_lib.presets import get_preset, with_overrides  # noqa: E402
from course_lib.runs import run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="cpu")
    parser.add_argument("--variant", default="vanilla", choices=["vanilla", "synthesizer"])
    parser.add_argument("--data-dir", default=str(ORIGINAL_DATA_DIR))
    parser.add_argument("--minutes", type=float, default=24.0, help="pretraining budget")
    parser.add_argument("--marks", default="8,16,24", help="minutes of pretraining at which to snapshot")
    parser.add_argument("--out", default=str(DEFAULT_OUT_DIR / "time_to_bar"))
    parser.add_argument("--notebooks", default=str(SOLUTIONS_DIR))
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                        help="override a preset field, e.g. model.n_embd=256 or all.autocast_bf16=True (repeatable)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    marks = sorted(float(m) for m in args.marks.split(","))
    preset = with_overrides(get_preset(args.preset), args.settings)
    print(f"preset {preset.name}: model {preset.model}, pretrain {preset.pretrain}", flush=True)
    variant = args.variant

    # pretraining stops at the budget; snapshots at the marks
    state = {"start": None, "next": 0}

    def snapshot(trainer):
        if state["start"] is None:
            state["start"] = time.perf_counter()
        minutes = (time.perf_counter() - state["start"]) / 60
        while state["next"] < len(marks) and minutes >= marks[state["next"]]:
            save_params(trainer.model, out / f"pretrain_{marks[state['next']]:g}min.params")
            state["next"] += 1
        if minutes >= args.minutes:
            trainer.should_stop = True

    from course_lib.contract import StudentParts

    class WithSnapshots(StudentParts):
        """The student's pretrain, with a snapshot callback on the Trainer it builds."""

        def pretrain(self, dataset, block_size, model):
            trainer = super().pretrain(dataset, block_size, model)
            trainer.add_callback("on_batch_end", snapshot)
            return trainer

    pretrain = run(f"{variant}_pretrain", WithSnapshots(args.notebooks), preset=preset, data_dir=args.data_dir,
                   out_dir=out)
    print(f"pretraining: {pretrain.seconds / 60:.1f} min, {len(pretrain.history)} steps", flush=True)
    # the end of pretraining is a snapshot too (when the epochs ran out before the budget)
    end = round(pretrain.seconds / 60, 1)
    if end not in marks:
        shutil.copy(out / f"{variant}.pretrain.params", out / f"pretrain_{end:g}min.params")
        marks.append(end)

    place, base = baseline_accuracy(Path(args.data_dir) / TRAIN, Path(args.data_dir) / DEV)
    rows = []
    for mark in sorted(marks):
        params = out / f"pretrain_{mark:g}min.params"
        if not params.is_file():
            continue
        shutil.copy(params, out / f"{variant}.pretrain.params")
        ft = run(f"{variant}_finetune_with_pretrain", args.notebooks, preset=preset, data_dir=args.data_dir,
                 out_dir=out)
        dev = run(f"{variant}_eval_dev_with_pretrain", args.notebooks, preset=preset, data_dir=args.data_dir,
                  out_dir=out)
        total = mark + (ft.seconds + dev.seconds) / 60
        rows.append(dict(preset=preset.name, variant=variant, pretrain_minutes=mark, total_minutes=round(total, 2),
                         dev_accuracy=dev.accuracy))
        print(f"{mark:g} min pretraining -> {total:.1f} min total: dev {100 * dev.accuracy:.1f}% "
              f"(baseline {place} {100 * base:.1f}%)", flush=True)
    with open(out / "results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)

    plot_runs([(preset.name, rows)], place, base, out / "accuracy_vs_time.png")
    print(f"wrote {out / 'results.csv'} and {out / 'accuracy_vs_time.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
