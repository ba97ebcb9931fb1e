import tomllib

import pytest

from autograder.checks.bars import BARS_FILE, load_bars
from autograder.checks.run_files import RUN_PARTS
from course_lib.presets import PRESETS


def _tables():
    config = tomllib.loads(BARS_FILE.read_text(encoding="utf-8"))
    return [(dataset, preset) for dataset, presets in config.items() if dataset != "points" for preset in presets]


@pytest.mark.parametrize("dataset,preset", _tables())
def test_every_table_loads_with_sane_bars(dataset, preset):
    """Does every table in bars.toml give a dev and a test bar per run part, each a fraction in [0, 1]?"""
    bars = load_bars(dataset, preset)
    parts = [part.name for part in RUN_PARTS]
    assert {(b.part, b.split) for b in bars} == {(p, s) for p in parts for s in ("dev", "test")}
    assert all(0.0 <= b.min_fraction <= 1.0 and b.min_correct >= 0 and b.points > 0 for b in bars)


def test_every_table_names_a_preset():
    """Does every bars table name a preset that exists, so that grading with it can find the table?"""
    assert {preset for _, preset in _tables()} <= set(PRESETS)


def test_every_preset_for_the_original_files_has_bars():
    """Can a grader grade runs on the original files with each preset meant for them?"""
    for preset in ("gpu", "gpu-fast", "cpu-original"):
        assert load_bars("original", preset)


def test_unknown_table_names_the_known_ones():
    """Does asking for bars that do not exist say which ones do?"""
    with pytest.raises(ValueError, match="synthetic.cpu"):
        load_bars("synthetic", "no-such-preset")


@pytest.mark.parametrize("dataset,preset", _tables())
def test_every_table_has_a_ceiling_above_its_bars(dataset, preset):
    """Does every split carry a ceiling (what the course's code reaches) above its pass bar and below 100%, so that
    a run that merely passes is never flagged and a run far above the reference is?"""
    for bar in load_bars(dataset, preset):
        assert bar.ceiling is not None and bar.min_fraction < bar.ceiling < 1.0, bar
        assert bar.above_ceiling(bar.ceiling + 0.01) and not bar.above_ceiling(bar.ceiling)
