"""The score of record's points and reasons by nbgrader cell, for feedback pages and the report.

``autograder grade`` writes ``reasons.json`` (student -> every part's points, maximum and
reason, in the grader's own words). A check's part is its nbgrader grade_id; a run split's
part (``vanilla_pretrain/dev``) has a run cell of its own (``run_files.RUN_CELLS``). This reads
that file back, keyed the way nbgrader's notebooks are: student -> grade_id -> (points, max,
reason). The file is the grader's (no student writes it); an absent or unreadable one is empty.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from autograder.checks.run_files import RUN_CELLS


@dataclass(frozen=True)
class Verdict:
    """One cell's trusted score."""

    points: float  # points given
    max_points: float  # points available
    reason: str  # grader-written, at most reasons.MAX_CHARS

    def line(self) -> str:
        """The verdict as a student reads it under the cell."""
        why = "" if self.reason in ("", "passed") or self.points >= self.max_points else f" {self.reason}"
        return f"The course's grader: {self.points:g} of {self.max_points:g} point(s).{why}"


def load(path: Path) -> dict[str, dict[str, Verdict]]:
    """student -> grade_id -> Verdict, from ``reasons.json`` at ``path`` ({} when there is none)."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    cells = {part: grade_id for part, (_, grade_id) in RUN_CELLS.items()}
    found: dict[str, dict[str, Verdict]] = {}
    for student, parts in raw.items() if isinstance(raw, dict) else ():
        mine = found.setdefault(student, {})
        for p in parts:
            try:
                mine[cells.get(p["part"], p["part"])] = Verdict(float(p["points"]), float(p["max_points"]),
                                                               str(p["reason"]))
            except (KeyError, TypeError, ValueError):
                continue
    return found
