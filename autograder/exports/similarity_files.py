"""The similarity report's files: ``similarity.csv``, ``skipped.csv`` and ``similarity.html``.

Everything a student wrote (code, and the names collect shows) is untrusted: the
page escapes all of it, shows control and bidirectional-format characters as
``\ufffd`` (so no code can read differently than it is), runs no script and
loads nothing; the CSV cells cannot start a spreadsheet formula.
"""
from __future__ import annotations

import html
import unicodedata
from pathlib import Path

import numpy as np

from autograder.exports.csv_safe import write_csv
from autograder.exports.similarity import OVERALL, Report
from autograder.exports.similarity_scores import PairScore

HEADER = ["rank", "cell", "student_a", "student_b", "similarity", "raw_similarity", "a_in_b", "b_in_a", "raw_a_in_b",
          "raw_b_in_a", "matched_fingerprints"]
TOP_PAIRS = 50  # overall pairs listed on the page (the CSV has each row kind's Settings.max_pairs best)
TOP_PER_CELL = 10  # pairs listed per cell on the page


def write_report(report: Report, out: Path, assignment: str = "a5") -> list[Path]:
    """Write the three files into ``out`` (created); their paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "similarity.csv", out / "skipped.csv", out / "similarity.html"]
    write_csv(paths[0], HEADER, [_row(i, p) for cell in [OVERALL, *(c.grade_id for c in report.cells)]
                                  for i, p in enumerate(report.ranked(cell), 1)])
    write_csv(paths[1], ["student", "where", "reason"], [[s.student, s.where, s.reason] for s in report.skipped])
    paths[2].write_text(page(report, assignment), encoding="utf-8")
    return paths


def _row(rank: int, p: PairScore) -> list:
    """One CSV row of a ranked pair."""
    return [rank, p.cell, p.a, p.b, f"{p.similarity:.3f}", f"{p.raw:.3f}", f"{p.a_in_b:.3f}", f"{p.b_in_a:.3f}",
            f"{p.raw_a_in_b:.3f}", f"{p.raw_b_in_a:.3f}", p.matched]


def _esc(text: str) -> str:
    """Untrusted text for the page: escaped; control and format characters (bidi) as U+FFFD."""
    shown = "".join(c if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cf") else "\ufffd" for c in text)
    return html.escape(shown, quote=True)


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _marked(text: str, slices) -> str:
    """``text`` escaped, with copydetect's matched slices (starts, ends) in <mark>."""
    parts, at = [], 0
    starts, ends = (np.asarray(row).tolist() for row in slices)
    for start, end in sorted(zip(starts, ends)):
        start, end = max(int(start), at), min(int(end), len(text))
        if start < end:
            parts += [_esc(text[at:start]), "<mark>", _esc(text[start:end]), "</mark>"]
            at = end
    return "".join(parts) + _esc(text[at:])


def _table(head: list[str], rows: list[list[str]]) -> str:
    """A table of already escaped cells."""
    th = "".join(f"<th scope='col'>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{v}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _pair_rows(pairs: list[PairScore]) -> list[list[str]]:
    return [[str(i), _esc(p.a), _esc(p.b), _pct(p.similarity), _pct(p.raw), _pct(p.a_in_b), _pct(p.b_in_a),
             str(p.matched)] for i, p in enumerate(pairs, 1)]


PAIR_HEAD = ["rank", "student a", "student b", "similarity (class-weighted)", "raw", "a in b", "b in a",
             "matched fingerprints"]
STYLE = """body{font-family:sans-serif;max-width:80rem;margin:1rem auto;padding:0 1rem;color:#111}
table{border-collapse:collapse;margin:.5rem 0}th,td{border:1px solid #888;padding:.2rem .5rem;text-align:left}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1rem}pre{background:#f4f4f4;padding:.5rem;overflow:auto;
max-height:30rem;white-space:pre-wrap}mark{background:#ffd54f;color:#000;text-decoration:underline}"""


def _with_code(report: Report, cell: str, ranked: list[PairScore]) -> list[str]:
    """The top pairs of a row kind, each pair's code side by side with its matches marked."""
    parts = []
    for i, p in enumerate(ranked, 1):
        if (slices := report.matches.get((cell, p.a, p.b))) is None:  # not among the top few
            continue
        parts.append(f"<h3>{i}. {_esc(p.a)} and {_esc(p.b)}: {_pct(p.similarity)} (raw {_pct(p.raw)})</h3>"
                     "<div class='pair'>" +
                     "".join(f"<div><p>{_esc(who)}</p><pre>{_marked(report.code[(who, cell)], s)}</pre></div>"
                             for who, s in ((p.a, slices[0]), (p.b, slices[1]))) + "</div>")
    return parts


def page(report: Report, assignment: str) -> str:
    """The instructor's page: skipped work, rankings (overall, per cell), the top pairs' code."""
    overall = report.ranked(OVERALL)
    parts = [f"<h1>Similarity of the students' code: {_esc(assignment)}</h1>",
             f"<p>{len(report.students)} students, {len(report.cells)} graded cells, "
             f"{report.sharing.get(OVERALL, 0)} pairs sharing any code. <em>All code</em> compares every code cell "
             "of a student's notebooks, tagged or not, with code in strings (exec, eval, compile, magics) unwrapped, "
             "statement by statement, so moved, wrapped and reordered code still matches. A graded cell's rows "
             "compare the code its answer runs: the cell, wherever else its answers are defined or changed, and the "
             "helpers they call, in any cell. The base code (the release's, and any snippet you gave out) is left "
             "out; names, comments, strings and layout do not count, so renamed variables still match. The code "
             "shown is each student's own statements. <em>a in b</em> is the share of a's code (its fingerprints) "
             "found in b's, each fingerprint weighed by how rare it is in the class (held by d students, it counts "
             "one over their d(d-1)/2 pairs; by two or fewer, 1): code several students share, such as a study "
             "group's or a forum's snippet, says little. "
             "<em>raw</em> counts every fingerprint alike. <em>similarity</em> is the larger share; pairs are ranked "
             "by it. A high score is a reason to read both submissions, not a verdict: short cells with one right "
             "answer look alike.</p>",
             "<h2>Skipped</h2>",
             _table(["student", "where", "reason"], [[_esc(s.student), _esc(s.where), _esc(s.reason)]
                                                      for s in report.skipped]) if report.skipped else "<p>None.</p>",
             f"<h2>All code (top {TOP_PAIRS})</h2>",
             _table(PAIR_HEAD, _pair_rows(overall[:TOP_PAIRS])) if overall else "<p>No pair shares any code.</p>",
             *_with_code(report, OVERALL, overall[:TOP_PER_CELL])]
    for cell in report.cells:
        ranked = report.ranked(cell.grade_id)
        parts += [f"<h2 id='{_esc(cell.grade_id)}'>Cell {_esc(cell.grade_id)} ({_esc(cell.notebook)})</h2>",
                  _table(PAIR_HEAD, _pair_rows(ranked[:TOP_PER_CELL])) if ranked
                  else "<p>No pair shares code here.</p>", *_with_code(report, cell.grade_id, ranked[:TOP_PER_CELL])]
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>Similarity report: {_esc(assignment)}</title><style>{STYLE}</style></head><body>"
            + "\n".join(parts) + "</body></html>\n")
