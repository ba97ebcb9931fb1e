"""How alike the cohort's code is: pairwise, over all of each student's code and per graded cell.

All of a student's code counts, wherever it stands: every code cell of every notebook of the
assignment, tagged or not, is turned into its top-level statements, with the code in its
strings (``exec``, ``eval``, ``compile``, magics) unwrapped (``similarity_code``: parsed with
``ast``, never run, within a budget). Each statement is fingerprinted on its own with copydetect
(names, strings, comments and layout folded), with every k-gram of the release's code as
boilerplate and the release's own statements left out (``similarity_prints``), so a copy moved
to another cell, wrapped in ``exec``, renamed or reordered is the same code, and blank
submissions share nothing. The ``overall`` rows compare all of each student's code; the rows of
each graded cell (a code cell of the release with nbgrader ``solution: true``, matched by its
``grade_id``) show where the code is alike. Submissions are read through the collect step
(regular files only, no link followed, sizes capped), then each student's notebooks are parsed
(bounded JSON) and fingerprinted in that student's own unit (``autograder.units``): no student
code is ever run or imported, and the driver compares fingerprints only. A notebook that
cannot be read, or a student whose unit failed, is listed as skipped with a reason; everyone
else is compared as usual. The release's code never counts.
"""
from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from autograder.collecting.cohort import collect_cohort
from autograder.collecting.collect import Limits, Wanted
from autograder.exports.similarity_code import Budget, statements
from autograder.exports.similarity_prints import Document, boilerplate_of, document, marks, overlap
from autograder.inside import bounded_json
from autograder.units.limits import UnitLimits
from autograder.units.stage import Step, outcomes

OVERALL = "overall"  # the cell column of a pair's all-code row (no grade_id is spelled so)
MB = 2 ** 20
# one student's notebooks (at most 5 MB each) parsed, their statements unwrapped and fingerprinted
READ_STEP = Step("similarity", UnitLimits(seconds=60, memory_mb=1024), preload=("autograder.exports.similarity",))


@dataclass(frozen=True)
class Settings:
    """How submissions are read and compared."""

    # copydetect's noise threshold (k of its k-grams): shorter matches are ignored; every k-gram is
    # kept (window 1), so scores do not depend on the per-process salt of Python's str hash
    noise: int = 20
    max_cell_chars: int = 20_000  # a cell's code past this is left out (pasted data is not code)
    max_code_chars: int = 200_000  # a student's code parsed in all, unwrapped strings included
    notebook_bytes: int = 5 * MB  # larger notebooks are skipped unread
    max_entries: int = 200  # directory entries looked at per submission
    shown_with_code: int = 3  # top pairs per row kind (overall, each cell) shown with matched code


@dataclass(frozen=True)
class GradedCell:
    """A cell students write, as released."""

    grade_id: str  # nbgrader's grade_id, the key a submission's cell is matched by
    notebook: str  # the release notebook's file name


@dataclass(frozen=True)
class Release:
    """What the students were given: the graded cells, and every code cell's source."""

    cells: list[GradedCell]  # the graded cells, in release order
    notebooks: tuple[str, ...]  # every notebook's file name: all student code in them is compared
    code: tuple[str, ...]  # every code cell's source, given, starter and test cells alike


@dataclass(frozen=True)
class Skipped:
    """Part of a submission that was not compared (in full), and why: grader-written words only."""

    student: str  # the student's id as collect shows it
    where: str  # a notebook's file name, a cell's grade_id or place, or "" for the whole submission
    reason: str  # why


@dataclass(frozen=True, slots=True)
class PairScore:
    """How much of two students' code (all of it, or one graded cell's) is the same."""

    cell: str  # grade_id, or OVERALL
    a: str  # one student (a < b)
    b: str  # the other
    a_in_b: float  # share of a's own code (its fingerprinted filtered tokens) also in b's
    b_in_a: float  # share of b's own code also in a's
    tokens: int  # a's filtered tokens matching b's (copydetect's count; a name is one character)

    @property
    def similarity(self) -> float:
        """The larger share: one student's code found whole in the other's is what matters."""
        return max(self.a_in_b, self.b_in_a)


@dataclass
class Report:
    """The whole comparison of a cohort."""

    cells: list[GradedCell]  # the graded cells, in release order
    students: list[str]  # everyone whose submission folder was read, sorted
    pairs: list[PairScore]  # every pair sharing any code: overall rows first, then per cell; ranked
    skipped: list[Skipped]  # what was not compared, and why
    # (student, OVERALL or grade_id) -> the code compared
    code: dict[tuple[str, str], str] = field(default_factory=dict)
    # (cell, a, b) -> a top pair's matched spans in a's and b's code, as (starts, ends)
    matches: dict[tuple[str, str, str], tuple] = field(default_factory=dict)

    def ranked(self, cell: str) -> list[PairScore]:
        """The pairs of one row kind (OVERALL or a grade_id), best first."""
        return [p for p in self.pairs if p.cell == cell]


class Malformed(Exception):
    """A notebook that is not one: its message is the reason shown."""


def _code_cells(path: Path) -> list[dict]:
    return [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]


def graded_cells(release: Path) -> list[GradedCell]:
    """The graded code cells of the release notebooks (trusted files), in notebook, cell order."""
    return [GradedCell(c["metadata"]["nbgrader"]["grade_id"], path.name)
            for path in sorted(Path(release).glob("*.ipynb")) for c in _code_cells(path)
            if c.get("metadata", {}).get("nbgrader", {}).get("solution") and c["metadata"]["nbgrader"].get("grade_id")]


def release_of(release: Path) -> Release:
    """The release's graded cells, notebooks and code (trusted files)."""
    paths = sorted(Path(release).glob("*.ipynb"))
    return Release(graded_cells(release), tuple(p.name for p in paths),
                   tuple(_source(c) for p in paths for c in _code_cells(p)))


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(s, str) for s in source):
        return "".join(source)
    if isinstance(source, str):
        return source
    raise Malformed("a cell's source is neither text nor a list of lines")


def read_cells(data: bytes, wanted: set[str]) -> tuple[list[tuple[str | None, str]], list[tuple[str, str]]]:
    """Every code cell of a notebook's bytes as (its grade_id if the first cell of a wanted one, its
    code), and (grade_id, reason) notes on the wanted cells; Malformed if unreadable."""
    try:
        notebook = bounded_json.loads(data)
    except bounded_json.JsonRefused as err:
        raise Malformed(str(err)) from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise Malformed("not a notebook: no list of cells")
    found: list[tuple[str | None, str]] = []
    notes = []
    seen: set[str] = set()
    for cell in notebook["cells"]:
        if not isinstance(cell, dict) or not isinstance(cell.get("metadata", {}), dict):
            raise Malformed("a cell is not a JSON object with metadata")
        if cell.get("cell_type") != "code":
            continue
        meta = cell.get("metadata", {}).get("nbgrader", {})
        grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
        graded = grade_id if isinstance(grade_id, str) and grade_id in wanted else None
        if graded is not None and graded in seen:
            notes.append((graded, "the cell appears more than once: the first is its cell's row, all are overall"))
            graded = None
        if graded is not None:
            seen.add(graded)
        found.append((graded, _source(cell)))
    notes += [(g, "no cell with this grade_id (deleted, or its metadata changed); its code, wherever it is, is "
                  "compared overall") for g in sorted(wanted - seen)]
    return found, notes


@dataclass
class StudentCode:
    """One student's code, read in the student's unit."""

    code: dict[str, str]  # OVERALL or grade_id -> the code compared (the student's own statements)
    docs: dict[str, Document]  # OVERALL or grade_id -> its fingerprints, boilerplate aside
    skipped: list[Skipped]  # what of it was not compared, and why


def read_student(student: str, folder: str, graded: dict[str, set[str]], settings: Settings,
                 release: tuple[str, ...]) -> StudentCode:
    """In the student's unit: every code cell of each notebook in the collected ``folder``
    (``graded``: notebook -> its graded cells' grade_ids), as statements fingerprinted, ``release``
    as boilerplate. copydetect hashes with Python's salted ``hash``: every unit of a step forks
    from one fork server, so all students' hashes and the boilerplate's share one salt; no hash is
    made anywhere else."""
    k = settings.noise
    given = [t for source in release for t in statements(source, Budget(len(source) * 8)).texts]
    boilerplate = boilerplate_of(given, k)
    budget = Budget(settings.max_code_chars)
    everything: list[str] = []
    cells: dict[str, list[str]] = {}
    skipped: list[Skipped] = []
    runtime = 0
    for notebook, wanted in sorted(graded.items()):
        path = Path(folder) / notebook
        if not path.is_file():
            continue
        try:
            found, notes = read_cells(path.read_bytes(), wanted)
        except Malformed as err:
            skipped.append(Skipped(student, notebook, str(err)))
            continue
        skipped += [Skipped(student, g, why) for g, why in notes]
        for i, (grade_id, text) in enumerate(found, 1):
            if len(text) > settings.max_cell_chars:
                skipped.append(Skipped(student, grade_id or f"{notebook} code cell {i}",
                                       f"code past the first {settings.max_cell_chars} characters left out"))
            got = statements(text[:settings.max_cell_chars], budget)
            everything += got.texts
            runtime += got.runtime
            if grade_id is not None:
                cells[grade_id] = got.texts
    if budget.spent_out:
        skipped.append(Skipped(student, "", f"code past the first {settings.max_code_chars} characters of the "
                                            "submission (strings of code unwrapped included) left out"))
    if runtime:
        skipped.append(Skipped(student, "", f"{runtime} exec/eval/compile call(s) on code built at run time: that "
                                            "code is not compared (read the notebooks)"))
    docs = {OVERALL: document(everything, k, boilerplate)}
    docs.update((g, document(texts, k, boilerplate)) for g, texts in cells.items())
    return StudentCode({cell: doc.text for cell, doc in docs.items()}, docs, skipped)


def collect_code(submitted: Path, assignment: str, release: Release, settings: Settings
                 ) -> tuple[dict[str, StudentCode], list[Skipped]]:
    """student -> their code and its fingerprints, read from a sanitised copy of each submission in
    a unit of its own; and what was skipped."""
    graded: dict[str, set[str]] = {name: set() for name in release.notebooks}
    for c in release.cells:
        graded[c.notebook].add(c.grade_id)
    # every notebook of the assignment, by name; no run files
    limits = Limits(notebook_bytes=settings.notebook_bytes, total_bytes=16 * settings.notebook_bytes,
                    max_entries=settings.max_entries)
    wanted = Wanted(frozenset(graded), frozenset(), frozenset())
    code: dict[str, StudentCode] = {}
    skipped: list[Skipped] = []
    with tempfile.TemporaryDirectory(prefix="similarity-") as tmp:
        cohort = collect_cohort(Path(submitted), assignment, Path(tmp) / "copy", limits, wanted)
        skipped += [Skipped(r.shown, "", f"not compared: the folder cannot be a student id ({r.why})")
                    for r in cohort.refused]
        readable = []
        for got in cohort.students:
            # collect's reasons about the compared notebooks only (too big, a link, ...)
            mine_dropped = [Skipped(got.student, r.split(":", 1)[0], r.split(":", 1)[1].strip())
                            for r in got.dropped if r.split(":", 1)[0] in graded]
            skipped += mine_dropped
            if got.folder is None:  # nothing usable: say why once, in collect's first few words
                if not mine_dropped:
                    skipped.append(Skipped(got.student, "", "; ".join(got.dropped[:3]) or "no notebooks"))
                continue
            readable.append(got)
        done = outcomes(READ_STEP, len(readable), lambda i: (read_student, (
            readable[i].student, str(readable[i].folder), graded, settings, release.code)), workers=2)
        for got, outcome in zip(readable, done):
            if not outcome.ok:
                skipped.append(Skipped(got.student, "", f"not compared: reading it failed ({outcome.failure})"))
                continue
            code[got.student] = outcome.value
            skipped += outcome.value.skipped
    return code, skipped


def compare(cells: list[GradedCell], code: dict[str, StudentCode], settings: Settings) -> Report:
    """Every pair of students, overall and per graded cell, ranked, from the units' fingerprints."""
    k = settings.noise
    pairs: list[PairScore] = []
    matches: dict[tuple[str, str, str], tuple] = {}
    for cell in (OVERALL, *(c.grade_id for c in cells)):
        docs = {s: mine.docs[cell] for s, mine in sorted(code.items())
                if cell in mine.docs and mine.docs[cell].coverage}
        ranked = _rank(_pairs(cell, docs, k))
        for p in ranked[:settings.shown_with_code]:  # where the matches are, in each one's own code
            matches[(cell, p.a, p.b)] = (marks(docs[p.a], docs[p.b], k), marks(docs[p.b], docs[p.a], k))
        pairs += ranked
    return Report(cells, sorted(code), pairs, [],
                  {(s, cell): text for s, mine in code.items() for cell, text in mine.code.items()}, matches)


def _pairs(cell: str, docs: dict[str, Document], k: int) -> list[PairScore]:
    """Every pair of students sharing code in one row kind.

    Scores depend on the filtered statements alone, and many students write the same filtered code
    (one right line, renamed), so each pair of distinct filtered documents is compared once.
    """
    groups: dict[str, list[str]] = defaultdict(list)
    for s in sorted(docs):
        groups[docs[s].key].append(s)
    keys = list(groups)
    found = []
    for i, x in enumerate(keys):
        dx = docs[groups[x][0]]
        for y in keys[i:]:
            dy = docs[groups[y][0]]
            tx, x_in_y = overlap(dx, dy, k)
            if not tx:
                continue
            ty, y_in_x = overlap(dy, dx, k)
            side = {x: (x_in_y, tx), y: (y_in_x, ty)}
            who = combinations(groups[x], 2) if x == y else ((a, b) for a in groups[x] for b in groups[y])
            for a, b in who:
                (a_in_b, ta), (b_in_a, _) = side[x], side[y]
                if b < a:
                    a, b, a_in_b, b_in_a, ta = b, a, b_in_a, a_in_b, side[y][1]
                found.append(PairScore(cell, a, b, a_in_b, b_in_a, ta))
    return found


def _rank(pairs: list[PairScore]) -> list[PairScore]:
    """Best first: the larger share, then more matched tokens; ties by name."""
    return sorted(pairs, key=lambda p: (-p.similarity, -p.tokens, p.a, p.b))


def similarity_report(submitted: Path, release: Path, assignment: str = "a5", settings: Settings = Settings()
                      ) -> Report:
    """Read the cohort in ``submitted/<student>/<assignment>/`` and compare all of its code, the
    ``release``'s aside."""
    given = release_of(release)
    code, skipped = collect_code(submitted, assignment, given, settings)
    report = compare(given.cells, code, settings)
    report.skipped = skipped
    return report
