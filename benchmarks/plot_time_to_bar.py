"""One plot of dev accuracy against wall time for several time_to_bar.py runs.

    python benchmarks/plot_time_to_bar.py outputs/ttb_a/results.csv outputs/ttb_b/results.csv \
        --out outputs/time_to_bar/all_configs.png

Each results.csv is one configuration (labelled by its preset and variant, or by
--labels); the horizontal lines are the 10% pass bar and the baseline of --data-dir
(always answering its training set's most common place: "London", 5.0% of the
original dev set). ``plot_runs`` also draws time_to_bar.py's own plot.
"""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from course_lib.gpt.evaluation import baseline_accuracy
from course_lib.layout import DEV, ORIGINAL_DATA_DIR, TRAIN

NEEDED = ("preset", "variant", "total_minutes", "dev_accuracy")  # the results.csv columns the plot reads


def plot_runs(runs: list[tuple[str, list[dict]]], place: str, base: float, path: Path) -> None:
    """Dev accuracy (%) against total wall minutes, one line per (label, rows) run, with the baseline and the bar.

    Rows hold ``total_minutes`` and ``dev_accuracy`` (a fraction), as numbers or as read from results.csv.
    """
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 6))
    for label, rows in runs:
        # a preset with --set overrides has a long name: wrap it at its commas
        ax.plot([float(r["total_minutes"]) for r in rows], [100 * float(r["dev_accuracy"]) for r in rows], "o-",
                label=textwrap.fill(label.replace(",", ", "), 100, break_on_hyphens=False))
    ax.axhline(10, color="r", linestyle=":", label="pass bar 10%")
    ax.axhline(100 * base, color="k", linestyle="--", label=f'always "{place}" {100 * base:.1f}%')
    ax.axvline(30, color="grey", linestyle="-.", linewidth=0.8)
    ax.set_xlabel("wall minutes on 2 CPU cores (pretrain + finetune + eval)")
    ax.set_ylabel("dev accuracy (%)")
    ax.set_ylim(0, max(11, ax.get_ylim()[1]))  # the pass bar stays in view even when every run is far below it
    # below the axes: preset names with their --set overrides are long
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=1, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", help="results.csv files written by time_to_bar.py")
    parser.add_argument("--labels", default=None, help="comma-separated labels, one per file")
    parser.add_argument("--out", default="outputs/time_to_bar/all_configs.png")
    parser.add_argument("--data-dir", default=str(ORIGINAL_DATA_DIR),
                        help="the data the runs were scored on (time_to_bar.py's --data-dir), for the baseline line")
    args = parser.parse_args(argv)
    labels = args.labels.split(",") if args.labels else [None] * len(args.results)
    if len(labels) != len(args.results):
        parser.error("give one label per results file")

    runs = []
    for path, label in zip(args.results, labels):
        if not Path(path).is_file():
            parser.error(f"{path}: no such results file")
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
        missing = set(NEEDED) - set(reader.fieldnames or [])
        if missing:
            parser.error(f"{path}: not a time_to_bar.py results file (no column {', '.join(sorted(missing))})")
        if not rows:
            print(f"{path}: no rows, skipped", file=sys.stderr)
            continue
        runs.append((label or f"{rows[0]['preset']} {rows[0]['variant']}", rows))
    try:
        place, base = baseline_accuracy(Path(args.data_dir) / TRAIN, Path(args.data_dir) / DEV)
    except (FileNotFoundError, ValueError) as err:
        parser.error(f"--data-dir: {err}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    plot_runs(runs, place, base, out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
