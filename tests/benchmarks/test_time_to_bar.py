"""Tests for benchmarks/time_to_bar.py's plot (its runs are the benchmark itself)."""
from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("time_to_bar", REPO / "benchmarks" / "time_to_bar.py")
time_to_bar = importlib.util.module_from_spec(spec)
sys.modules["time_to_bar"] = time_to_bar
spec.loader.exec_module(time_to_bar)


def test_plot_with_a_long_preset_name_lays_out_without_warnings(tmp_path):
    """Does a preset name carrying many --set overrides still fit the figure?"""
    name = "cpu-original+" + ",".join(f"pretrain.setting_{i}={i}e-3" for i in range(12))
    rows = [dict(total_minutes=30.3, dev_accuracy=0.024), dict(total_minutes=87.8, dev_accuracy=0.056)]
    path = tmp_path / "accuracy_vs_time.png"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "Tight layout not applied" is a UserWarning
        time_to_bar.plot_rows(rows, name, "London", 0.05, path)
    assert path.stat().st_size > 10_000
