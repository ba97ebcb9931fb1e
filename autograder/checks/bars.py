"""Read the pass bars of the training runs from bars.toml."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

BARS_FILE = Path(__file__).with_name("bars.toml")
@dataclass(frozen=True)
class Bar:
    """What one split of one part must reach, and what it is worth."""

    part: str  # name of one of run_files.RUN_PARTS
    split: str  # "dev" or "test"
    min_fraction: float  # fraction of questions right needed (0 when a count is given)
    min_correct: int  # questions right needed (0 when a fraction is given)
    points: float  # awarded when the bar is met
    audit_tolerance: float | None = None  # handed-in accuracy may exceed the retrained one by this
    ceiling: float | None = None  # best the course's code reaches at this preset (None: unmeasured)

    def above_ceiling(self, fraction: float) -> bool:
        """Whether a handed-in accuracy beats the course's own code (flagged, and audited first)."""
        return self.ceiling is not None and fraction > self.ceiling

    def passed(self, correct: int, total: int) -> bool:
        """Whether ``correct`` right of ``total`` questions meets the bar."""
        return total > 0 and correct >= self.min_correct and correct / total >= self.min_fraction


def load_bars(dataset: str, preset: str, path: Path = BARS_FILE) -> list[Bar]:
    """Each run part's dev and test bars for ``dataset`` at ``preset`` (ValueError: unknown)."""
    config = tomllib.loads(path.read_text(encoding="utf-8"))
    try:
        table = config[dataset][preset]
    except KeyError:
        known = [f"{d}.{p}" for d, presets in config.items() if d != "points" for p in presets]
        raise ValueError(f"no bars for dataset {dataset!r} with preset {preset!r} in {path}; known: {known}") from None
    from autograder.checks.run_files import RUN_PARTS

    bars = []
    for part in (p.name for p in RUN_PARTS):
        for split in ("dev", "test"):
            spec = table[part]
            tolerance, ceiling = spec.get(f"{split}_audit"), spec.get(f"{split}_ceiling")
            bars.append(Bar(part, split, float(spec.get(split, 0.0)), int(spec.get(f"{split}_correct", 0)),
                            float(config["points"][part][split]), None if tolerance is None else float(tolerance),
                            None if ceiling is None else float(ceiling)))
    return bars
