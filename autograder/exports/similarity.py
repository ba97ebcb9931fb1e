"""How alike the cohort's graded cells are: pairwise, per cell and overall, the released starter code excluded.

Each graded cell (a code cell of the release with nbgrader ``solution: true``,
matched in a submission by its ``grade_id``) is fingerprinted with copydetect
(tokenised by pygments, names replaced by placeholders, hashed k-grams), with
the k-grams of that cell's released starter code as boilerplate, so a blank
submission shares nothing with another blank one. Submissions are read through
the collect step (regular files only, no link followed, sizes capped), then each
student's notebooks are parsed (bounded JSON) and fingerprinted in that student's own
unit (``autograder.units``): no student code is ever run or imported, and the driver
compares fingerprints only. A notebook that cannot be read, or a student whose unit
failed, is listed as skipped with a reason; everyone else is compared as usual.
"""
from __future__ import annotations

import io
import json
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from copydetect import CodeFingerprint, compare_files

from autograder.collecting.collect import Limits, Wanted, collect_cohort
from autograder.inside import bounded_json
from autograder.units.limits import UnitLimits
from autograder.units.stage import Step, outcomes

OVERALL = "overall"  # the cell column of a pair's all-cells row (no grade_id is spelled so)
MB = 2 ** 20
# one student's notebooks parsed (at most 5 MB each) and their cells fingerprinted (20,000 characters each at most)
READ_STEP = Step("similarity", UnitLimits(seconds=60, memory_mb=1024), preload=("autograder.exports.similarity",))


@dataclass(frozen=True)
class Settings:
    """How submissions are read and compared."""

    noise: int = 20  # copydetect's noise threshold: shorter runs of matching filtered code are ignored
    # copydetect's guarantee threshold: runs this long are always found (winnowing window = g - n + 1); equal to
    # the noise threshold (copydetect's default) every k-gram is kept, so the scores do not depend on the
    # per-process salt of Python's str hash that winnowing's choice would
    guarantee: int = 20
    max_cell_chars: int = 20_000  # a cell's code past this is left out (a pasted dataset is not code to compare)
    notebook_bytes: int = 5 * MB  # larger notebooks are skipped unread
    max_entries: int = 200  # directory entries looked at per submission
    shown_with_code: int = 3  # top pairs per cell whose matched code the page shows


@dataclass(frozen=True)
class GradedCell:
    """A cell students write, as released."""

    grade_id: str  # nbgrader's grade_id, the key a submission's cell is matched by
    notebook: str  # the release notebook's file name
    starter: str  # the released code of the cell: excluded from every comparison


@dataclass(frozen=True)
class Skipped:
    """Something of a submission that was not compared (in full), and why: grader-written words only."""

    student: str  # the student's id as collect shows it
    where: str  # a notebook's file name, a cell's grade_id, or "" for the whole submission
    reason: str  # why


@dataclass(frozen=True, slots=True)
class PairScore:
    """How much of two students' code in one cell (or all cells) is the same, starter code aside."""

    cell: str  # grade_id, or OVERALL
    a: str  # one student (a < b)
    b: str  # the other
    a_in_b: float  # share of a's own code (its fingerprinted filtered tokens) also in b's
    b_in_a: float  # share of b's own code also in a's
    tokens: int  # a's filtered tokens that match b's (copydetect's count; names count as one character)

    @property
    def similarity(self) -> float:
        """The larger share: one student's code found whole in the other's is what an instructor looks at."""
        return max(self.a_in_b, self.b_in_a)


@dataclass
class Report:
    """The whole comparison of a cohort."""

    cells: list[GradedCell]  # the graded cells, in release order
    students: list[str]  # everyone whose submission folder was read, sorted
    pairs: list[PairScore]  # every pair sharing any code: overall rows first, then per cell; each ranked
    skipped: list[Skipped]  # what was not compared, and why
    code: dict[tuple[str, str], str] = field(default_factory=dict)  # (student, grade_id) -> code compared
    # (cell, a, b) -> copydetect's slices for each cell's top pairs: a's and b's matched spans, as (starts, ends)
    matches: dict[tuple[str, str, str], tuple] = field(default_factory=dict)

    def ranked(self, cell: str) -> list[PairScore]:
        return [p for p in self.pairs if p.cell == cell]


class Malformed(Exception):
    """A notebook that is not one: its message is the reason shown."""


def graded_cells(release: Path) -> list[GradedCell]:
    """The graded code cells of the release notebooks (trusted files), in notebook and cell order."""
    cells = []
    for path in sorted(Path(release).glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if cell["cell_type"] == "code" and meta.get("solution") and meta.get("grade_id"):
                cells.append(GradedCell(meta["grade_id"], path.name, _source(cell)))
    return cells


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(s, str) for s in source):
        return "".join(source)
    if isinstance(source, str):
        return source
    raise Malformed("a cell's source is neither text nor a list of lines")


def read_cells(data: bytes, wanted: set[str]) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The wanted grade_ids' code in a notebook's bytes, and (grade_id, reason) notes; Malformed if unreadable."""
    try:
        notebook = bounded_json.loads(data)
    except bounded_json.JsonRefused as err:
        raise Malformed(str(err)) from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise Malformed("not a notebook: no list of cells")
    found: dict[str, str] = {}
    notes = []
    for cell in notebook["cells"]:
        if not isinstance(cell, dict) or not isinstance(cell.get("metadata", {}), dict):
            raise Malformed("a cell is not a JSON object with metadata")
        meta = cell.get("metadata", {}).get("nbgrader", {})
        grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
        if cell.get("cell_type") != "code" or not isinstance(grade_id, str) or grade_id not in wanted:
            continue
        if grade_id in found:
            notes.append((grade_id, "the cell appears more than once: the first is compared"))
            continue
        found[grade_id] = _source(cell)
    notes += [(g, "no cell with this grade_id (deleted, or its metadata changed)") for g in sorted(wanted - set(found))]
    return found, notes


@dataclass
class StudentCode:
    """One student's graded cells, read in the student's unit."""

    code: dict[str, str]  # grade_id -> the code compared (cut to max_cell_chars)
    prints: dict[str, CodeFingerprint]  # grade_id -> its fingerprint, the cell's starter code as boilerplate
    skipped: list[Skipped]  # what of it was not compared, and why


def read_student(student: str, folder: str, by_notebook: dict[str, set[str]], settings: Settings,
                 starters: dict[str, str]) -> StudentCode:
    """In the student's unit: the wanted cells' code of each notebook in the collected ``folder``, fingerprinted with
    each cell's ``starters`` code as boilerplate. (copydetect hashes k-grams with Python's ``hash``, salted per
    process: every unit of a step is forked from one fork server, so every student's hashes and the boilerplate's
    are made with the same salt, and no hash is made anywhere else.)"""
    mine: dict[str, str] = {}
    skipped: list[Skipped] = []
    for notebook, wanted in sorted(by_notebook.items()):
        path = Path(folder) / notebook
        if not path.is_file():
            continue
        try:
            found, notes = read_cells(path.read_bytes(), wanted)
        except Malformed as err:
            skipped.append(Skipped(student, notebook, str(err)))
            continue
        skipped += [Skipped(student, g, why) for g, why in notes]
        for grade_id, text in found.items():
            if len(text) > settings.max_cell_chars:
                skipped.append(Skipped(student, grade_id, f"code past the first "
                                       f"{settings.max_cell_chars} characters left out"))
            mine[grade_id] = text[:settings.max_cell_chars]
    # all k-grams of each starter (window 1), as copydetect's CopyDetector builds its boilerplate
    boilerplates = {g: sorted(_fingerprint("starter.py", starters[g], settings).hashes) for g in mine}
    prints = {g: _fingerprint(f"{student}/{g}.py", text, settings, boilerplates[g]) for g, text in mine.items()}
    return StudentCode(mine, prints, skipped)


def collect_code(submitted: Path, assignment: str, cells: list[GradedCell], settings: Settings
                 ) -> tuple[dict[str, StudentCode], list[Skipped]]:
    """student -> their graded cells' code and fingerprints, read from a sanitised copy of each submission in a unit of
    its own; and what was skipped."""
    by_notebook: dict[str, set[str]] = defaultdict(set)
    for c in cells:
        by_notebook[c.notebook].add(c.grade_id)
    starters = {c.grade_id: c.starter for c in cells}
    # the notebooks holding graded cells, by name; no run files
    limits = Limits(notebook_bytes=settings.notebook_bytes, total_bytes=16 * settings.notebook_bytes,
                    max_entries=settings.max_entries)
    wanted = Wanted(frozenset(by_notebook), frozenset(), frozenset())
    code: dict[str, StudentCode] = {}
    skipped: list[Skipped] = []
    with tempfile.TemporaryDirectory(prefix="similarity-") as tmp:
        cohort = collect_cohort(Path(submitted), assignment, Path(tmp) / "copy", limits, wanted)
        skipped += [Skipped(r.shown, "", f"not compared: the folder cannot be a student id ({r.why})")
                    for r in cohort.refused]
        readable = []
        for got in cohort.students:
            # collect's reasons about the notebooks compared (too big, a link, ...); the rest is not ours to judge
            mine_dropped = [Skipped(got.student, r.split(":", 1)[0], r.split(":", 1)[1].strip())
                            for r in got.dropped if r.split(":", 1)[0] in by_notebook]
            skipped += mine_dropped
            if got.folder is None:  # nothing usable: say why once, in collect's words (the first few)
                if not mine_dropped:
                    skipped.append(Skipped(got.student, "", "; ".join(got.dropped[:3]) or "no notebooks"))
                continue
            readable.append(got)
        done = outcomes(READ_STEP, len(readable), lambda i: (read_student, (
            readable[i].student, str(readable[i].folder), dict(by_notebook), settings, starters)), workers=2)
        for got, outcome in zip(readable, done):
            if not outcome.ok:
                skipped.append(Skipped(got.student, "", f"not compared: reading it failed ({outcome.failure})"))
                continue
            code[got.student] = outcome.value
            skipped += outcome.value.skipped
    return code, skipped


def _fingerprint(name: str, text: str, settings: Settings, boilerplate=None) -> CodeFingerprint:
    window = settings.guarantee - settings.noise + 1
    return CodeFingerprint(name, settings.noise, 1 if boilerplate is None else window, boilerplate=boilerplate,
                           language="python", fp=io.StringIO(text))


def compare(cells: list[GradedCell], code: dict[str, StudentCode], settings: Settings) -> Report:
    """Every pair of students, per cell and overall, ranked; the starter code of each cell excluded. Works on the
    fingerprints the students' units made."""
    students = sorted(code)
    pairs: list[PairScore] = []
    matches: dict[tuple[str, str, str], tuple] = {}
    own: dict[str, float] = defaultdict(float)  # student -> fingerprinted tokens of their own, all cells
    shared: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])  # (a, b) -> matched tokens each way
    for cell in cells:
        prints = {s: code[s].prints[cell.grade_id] for s in students if cell.grade_id in code[s].prints}
        for s, fp in prints.items():
            own[s] += float(fp.token_coverage)
        ranked = _rank(_cell_pairs(cell.grade_id, prints))
        for p in ranked:
            shared[(p.a, p.b)][0] += p.a_in_b * float(prints[p.a].token_coverage)
            shared[(p.a, p.b)][1] += p.b_in_a * float(prints[p.b].token_coverage)
        for p in ranked[:settings.shown_with_code]:  # where the matches are, in each one's own code
            matches[(cell.grade_id, p.a, p.b)] = compare_files(prints[p.a], prints[p.b])[2]
        pairs += ranked
    overall = [PairScore(OVERALL, a, b, ta / own[a], tb / own[b], round(ta)) for (a, b), (ta, tb) in shared.items()]
    return Report(cells, students, _rank(overall) + pairs, [],
                  {(s, g): t for s, mine in code.items() for g, t in mine.code.items()}, matches)


def _cell_pairs(grade_id: str, prints: dict[str, CodeFingerprint]) -> list[PairScore]:
    """Every pair of students sharing code in one cell.

    Scores depend on the filtered code alone, and many students write the same filtered code
    (one right line, renamed), so each pair of distinct filtered codes is compared once.
    """
    groups: dict[str, list[str]] = defaultdict(list)
    for s in sorted(prints):
        groups[prints[s].filtered_code].append(s)
    codes = list(groups)
    found = []
    for i, x in enumerate(codes):
        for y in codes[i:]:
            fx, fy = prints[groups[x][0]], prints[groups[y][0]]
            if not fx.hashes & fy.hashes:
                continue
            tokens, (x_in_y, y_in_x), _ = compare_files(fx, fy)
            if not tokens:
                continue
            side = {x: (float(x_in_y), float(x_in_y * fx.token_coverage)),
                    y: (float(y_in_x), float(y_in_x * fy.token_coverage))}
            who = combinations(groups[x], 2) if x == y else ((a, b) for a in groups[x] for b in groups[y])
            for a, b in who:
                (a_in_b, ta), (b_in_a, _) = side[x], side[y]
                if b < a:
                    a, b, a_in_b, b_in_a, ta = b, a, b_in_a, a_in_b, side[y][1]
                found.append(PairScore(grade_id, a, b, a_in_b, b_in_a, round(ta)))
    return found


def _rank(pairs: list[PairScore]) -> list[PairScore]:
    return sorted(pairs, key=lambda p: (-p.similarity, -p.tokens, p.a, p.b))


def similarity_report(submitted: Path, release: Path, assignment: str = "a5", settings: Settings = Settings()
                      ) -> Report:
    """Read the cohort in ``submitted/<student>/<assignment>/`` and compare every graded cell of ``release``."""
    cells = graded_cells(release)
    code, skipped = collect_code(submitted, assignment, cells, settings)
    report = compare(cells, code, settings)
    report.skipped = skipped
    return report
