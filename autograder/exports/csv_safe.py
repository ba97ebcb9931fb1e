"""CSV files a spreadsheet can open safely: no cell starts a formula (OWASP's CSV injection rule).

A cell holding text a student chose (an id, an exception's name, a file name) could start
with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return, which some spreadsheets
skip before reading a formula); such a cell gets a leading apostrophe, which spreadsheets
show as text. Numbers the grader writes itself (scores) are never negative, so they never
need it. Every CSV the project writes goes through ``write_csv``.
"""
from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value) -> str:
    """The cell as text, with a leading apostrophe when a spreadsheet would read it as a formula."""
    text = value if isinstance(value, str) else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def write_csv(path: str | Path, header: Sequence[str], rows: Iterable[Sequence]) -> Path:
    """Write ``header`` and ``rows`` to ``path`` (UTF-8), every cell through ``safe_cell``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow([safe_cell(h) for h in header])
        writer.writerows([safe_cell(v) for v in row] for row in rows)
    return path


def unescape_cell(text: str) -> str:
    """A cell as ``safe_cell`` was given it (for programs reading these files back)."""
    return text[1:] if text.startswith("'") and text[1:2] and text[1] in "=+-@\t\r" else text
