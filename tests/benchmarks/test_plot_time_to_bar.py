"""Tests for benchmarks/plot_time_to_bar.py, which also draws time_to_bar.py's plot."""
from __future__ import annotations

import csv
import importlib.util
import warnings
from pathlib import Path

import pytest
from conftest import REPO

spec = importlib.util.spec_from_file_location("plot_time_to_bar", REPO / "benchmarks" / "plot_time_to_bar.py")
plot_time_to_bar = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plot_time_to_bar)

LONG_NAME = "cpu-original+" + ",".join(f"pretrain.setting_{i}={i}e-3" for i in range(12))
FIELDS = ["preset", "variant", "pretrain_minutes", "total_minutes", "dev_accuracy"]  # as time_to_bar.py writes


def write_results(path: Path, rows: list[dict]) -> Path:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_data(folder: Path) -> Path:
    """A data folder whose training set's most common place is Paris, 1 of 4 dev answers."""
    folder.mkdir()
    train = [("Ann", "Paris"), ("Bob", "Paris"), ("Cy", "Rome")]
    dev = [("Di", "Paris"), ("Ed", "Rome"), ("Flo", "Oslo"), ("Gus", "Rome")]
    for name, people in (("birth_places_train.tsv", train), ("birth_dev.tsv", dev)):
        (folder / name).write_text("".join(f"Where was {who} born?\t{place}\n" for who, place in people))
    return folder


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
    full = write_results(tmp_path / "a.csv", [dict(preset=LONG_NAME, variant="vanilla", pretrain_minutes=30,
                                                   total_minutes=30.3, dev_accuracy=0.024)])
    empty = write_results(tmp_path / "b.csv", [])
    out = tmp_path / "plots" / "all.png"
    data = write_data(tmp_path / "data")
    assert plot_time_to_bar.main([str(full), str(empty), "--out", str(out), "--data-dir", str(data)]) == 0
    assert out.stat().st_size > 10_000
    assert f"{empty}: no rows, skipped" in capsys.readouterr().err


def test_the_baseline_line_comes_from_the_data(tmp_path, monkeypatch):
    """Does the command draw the baseline of the --data-dir it is given, not a fixed one?"""
    drawn = {}
    monkeypatch.setattr(plot_time_to_bar, "plot_runs",
                        lambda runs, place, base, path: drawn.update(place=place, base=base))
    results = write_results(tmp_path / "a.csv", [dict(preset="cpu", variant="vanilla", pretrain_minutes=8,
                                                      total_minutes=9.1, dev_accuracy=0.4)])
    data = write_data(tmp_path / "d")
    plot_time_to_bar.main([str(results), "--out", str(tmp_path / "p.png"), "--data-dir", str(data)])
    assert drawn == dict(place="Paris", base=0.25)


def test_a_missing_data_folder_is_named(tmp_path, capsys):
    """Does a --data-dir without the course files stop with its path, before plotting?"""
    results = write_results(tmp_path / "a.csv", [dict(preset="cpu", variant="vanilla", pretrain_minutes=8,
                                                      total_minutes=9.1, dev_accuracy=0.4)])
    with pytest.raises(SystemExit):
        plot_time_to_bar.main([str(results), "--out", str(tmp_path / "p.png"), "--data-dir", str(tmp_path / "nope")])
    assert f"{tmp_path / 'nope' / 'birth_places_train.tsv'}" in capsys.readouterr().err
    assert not (tmp_path / "p.png").exists()


def test_a_missing_or_foreign_results_file_is_named(tmp_path, capsys):
    """Does a results path that is absent, or a CSV without time_to_bar.py's columns, stop with its name?"""
    data = str(write_data(tmp_path / "data"))
    foreign = tmp_path / "other.csv"
    foreign.write_text("step,loss\n1,2.5\n")
    for path, words in ((tmp_path / "gone.csv", "no such results file"), (foreign, "no column dev_accuracy")):
        with pytest.raises(SystemExit):
            plot_time_to_bar.main([str(path), "--out", str(tmp_path / "p.png"), "--data-dir", data])
        assert f"{path}: " in (err := capsys.readouterr().err) and words in err
