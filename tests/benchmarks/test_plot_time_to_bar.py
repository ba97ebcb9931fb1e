"""Tests for benchmarks/plot_time_to_bar.py, which also draws time_to_bar.py's plot."""
from __future__ import annotations

import csv
import importlib.util
import sys
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("plot_time_to_bar", REPO / "benchmarks" / "plot_time_to_bar.py")
plot_time_to_bar = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plot_time_to_bar)

LONG_NAME = "cpu-original+" + ",".join(f"pretrain.setting_{i}={i}e-3" for i in range(12))


def test_a_long_preset_name_lays_out_without_warnings(tmp_path):
    """Does a preset name carrying many --set overrides still fit the figure?"""
    rows = [dict(total_minutes=30.3, dev_accuracy=0.024), dict(total_minutes=87.8, dev_accuracy=0.056)]
    path = tmp_path / "accuracy_vs_time.png"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "Tight layout not applied" is a UserWarning
        plot_time_to_bar.plot_runs([(LONG_NAME, rows)], "London", 0.05, path)
    assert path.stat().st_size > 10_000


def test_the_command_plots_results_files_and_skips_empty_ones(tmp_path, capsys):
    """Does the command draw every results.csv time_to_bar.py wrote and say which it skipped?"""
    full, empty = tmp_path / "a.csv", tmp_path / "b.csv"
    fields = ["preset", "variant", "pretrain_minutes", "total_minutes", "dev_accuracy"]  # as time_to_bar.py writes
    with open(full, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerow(dict(preset=LONG_NAME, variant="vanilla", pretrain_minutes=30, total_minutes=30.3,
                             dev_accuracy=0.024))
    empty.write_text(",".join(fields) + "\n")
    out = tmp_path / "plots" / "all.png"
    assert plot_time_to_bar.main([str(full), str(empty), "--out", str(out)]) == 0
    assert out.stat().st_size > 10_000
    assert f"{empty}: no rows, skipped" in capsys.readouterr().err
