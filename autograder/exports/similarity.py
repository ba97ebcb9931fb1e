"""How alike the cohort's code is: pairwise, over all of each student's code and per graded cell.

All of a student's code counts, wherever it stands: every code cell of every notebook of the
assignment, tagged or not, is turned into its top-level statements, with the code in its
strings (``exec``, ``eval``, ``compile``, magics) unwrapped (``similarity_code``: parsed with
``ast``, never run, within a budget). Each statement is fingerprinted on its own with copydetect
(names, strings, comments and layout folded), with every k-gram of the base code (the release's
code and any snippet the instructor gave out) as boilerplate and its own statements left out
(``similarity_prints``), so a copy moved to another cell, wrapped in ``exec``, renamed or
reordered is the same code, and blank submissions share nothing. The ``overall`` rows compare all
of each student's code; each graded cell's row (a code cell of the release with nbgrader
``solution: true``, matched by its ``grade_id``) compares the code that cell's answer runs,
wherever it stands: the cell's statements, those defining or changing the names the release's
cell defines, and what they call (``similarity_names``). Every pair gets a raw and a
class-weighted score (``similarity_scores``: fingerprints much of the class holds count less),
ranked by the class-weighted one. Submissions are read through the collect step (regular files
only, no link followed, sizes capped), then each student's notebooks are parsed (bounded JSON)
and fingerprinted in that student's own unit (``autograder.units``): no student code is ever run
or imported, and the driver compares fingerprints only. A notebook that cannot be read, or a
student whose unit failed, is listed as skipped with a reason; everyone else is compared as usual.
"""
from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder.collecting.cohort import collect_cohort
from autograder.collecting.collect import Limits, Wanted
from autograder.collecting.notebook_copies import Marks, release_marks
from autograder.exports.similarity_code import Budget, statements
from autograder.exports.similarity_names import defined_by, followed, names_of
from autograder.exports.similarity_prints import Document, boilerplate_of, document, marks
from autograder.exports.similarity_scores import PairScore, class_weights, ranked, shares
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
    max_pairs: int = 5000  # pairs kept per row kind, best first (the CSV's rows; 500 students make 124,750 pairs)


@dataclass(frozen=True)
class GradedCell:
    """A cell students write, as released."""

    grade_id: str  # nbgrader's grade_id, the key a submission's cell is matched by
    notebook: str  # the release notebook's file name
    answers: frozenset[str] = frozenset()  # the names the release's cell defines: its row follows their code


@dataclass(frozen=True)
class Release:
    """What the students were given: the graded cells, and every code cell's source."""

    cells: list[GradedCell]  # the graded cells, in release order
    notebooks: tuple[str, ...]  # every notebook's file name: all student code in them is compared
    code: tuple[str, ...]  # the base code: every code cell's source (given, starter and test cells), given snippets
    marks: Marks = ()  # each notebook's grade_ids: a missing one's renamed copy is compared in its place, as graded


@dataclass(frozen=True)
class Skipped:
    """Part of a submission that was not compared (in full), and why: grader-written words only."""

    student: str  # the student's id as collect shows it
    where: str  # a notebook's file name, a cell's grade_id or place, or "" for the whole submission
    reason: str  # why


@dataclass
class Report:
    """The whole comparison of a cohort."""

    cells: list[GradedCell]  # the graded cells, in release order
    students: list[str]  # everyone whose submission folder was read, sorted
    pairs: list[PairScore]  # each row kind's best pairs sharing any code: overall first, then per cell; ranked
    skipped: list[Skipped]  # what was not compared, and why
    # (student, OVERALL or grade_id) -> the code compared
    code: dict[tuple[str, str], str] = field(default_factory=dict)
    # (cell, a, b) -> a top pair's matched spans in a's and b's code, as (starts, ends)
    matches: dict[tuple[str, str, str], tuple] = field(default_factory=dict)
    sharing: dict[str, int] = field(default_factory=dict)  # OVERALL or grade_id -> pairs sharing any code there

    def ranked(self, cell: str) -> list[PairScore]:
        """The pairs of one row kind (OVERALL or a grade_id), best first."""
        return [p for p in self.pairs if p.cell == cell]


class Malformed(Exception):
    """A notebook that is not one: its message is the reason shown."""


def _code_cells(path: Path) -> list[dict]:
    return [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]


def graded_cells(release: Path) -> list[GradedCell]:
    """The graded code cells of the release notebooks (trusted files), in notebook, cell order, each with the names
    its code defines."""
    return [GradedCell(c["metadata"]["nbgrader"]["grade_id"], path.name, defined_by(_statements(_source(c))))
            for path in sorted(Path(release).glob("*.ipynb")) for c in _code_cells(path)
            if c.get("metadata", {}).get("nbgrader", {}).get("solution") and c["metadata"]["nbgrader"].get("grade_id")]


def _statements(source: str) -> list[str]:
    """A trusted cell's statements (the release's, a given snippet's), unbounded."""
    return statements(source, Budget(len(source) * 8)).texts


def base_snippets(paths: tuple[Path, ...]) -> tuple[str, ...]:
    """The code the instructor gave out beside the release (trusted files): a notebook's code cells, else the text."""
    snippets: list[str] = []
    for path in map(Path, paths):
        snippets += [_source(c) for c in _code_cells(path)] if path.suffix == ".ipynb" else [
            path.read_text(encoding="utf-8")]
    return tuple(snippets)


def release_of(release: Path, base: tuple[Path, ...] = ()) -> Release:
    """The release's graded cells, notebooks and code, and the ``base`` snippets' code (trusted files)."""
    paths = sorted(Path(release).glob("*.ipynb"))
    return Release(graded_cells(release), tuple(p.name for p in paths),
                   tuple(_source(c) for p in paths for c in _code_cells(p)) + base_snippets(base),
                   release_marks(Path(release)))


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(s, str) for s in source):
        return "".join(source)
    if isinstance(source, str):
        return source
    raise Malformed("a cell's source is neither text nor a list of lines")


def read_cells(data: bytes, wanted: set[str]) -> tuple[list[tuple[str | None, str]], list[tuple[str, str]]]:
    """Every code cell of a notebook's bytes as (its grade_id if a wanted one, its code), every cell holding a
    grade_id (split or copied in JupyterLab) included, and (grade_id, reason) notes on the wanted cells; Malformed if
    unreadable."""
    try:
        notebook = bounded_json.loads(data)
    except bounded_json.JsonRefused as err:
        raise Malformed(str(err)) from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise Malformed("not a notebook: no list of cells")
    found: list[tuple[str | None, str]] = []
    for cell in notebook["cells"]:
        if not isinstance(cell, dict) or not isinstance(cell.get("metadata", {}), dict):
            raise Malformed("a cell is not a JSON object with metadata")
        if cell.get("cell_type") != "code":
            continue
        meta = cell.get("metadata", {}).get("nbgrader", {})
        grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
        found.append((grade_id if isinstance(grade_id, str) and grade_id in wanted else None, _source(cell)))
    seen = {g for g, _ in found if g is not None}
    notes = [(g, "no cell with this grade_id (deleted, or its metadata changed): its row compares the code that "
                 "defines its answers, wherever it stands") for g in sorted(wanted - seen)]
    return found, notes


@dataclass
class StudentCode:
    """One student's code, read in the student's unit."""

    code: dict[str, str]  # OVERALL or grade_id -> the code compared (the student's own statements)
    docs: dict[str, Document]  # OVERALL or grade_id -> its fingerprints, boilerplate aside
    skipped: list[Skipped]  # what of it was not compared, and why


def read_student(student: str, folder: str, graded: dict[str, dict[str, frozenset[str]]], settings: Settings,
                 release: tuple[str, ...]) -> StudentCode:
    """In the student's unit: every code cell of each notebook in the collected ``folder``
    (``graded``: notebook -> its graded cells' grade_ids -> the names each defines), as statements
    fingerprinted, ``release`` (the base code) as boilerplate. A graded cell's row holds the code its
    answer runs (``similarity_names.followed``). copydetect hashes with Python's salted ``hash``:
    every unit of a step forks from one fork server, so all students' hashes and the boilerplate's
    share one salt; no hash is made anywhere else."""
    k = settings.noise
    boilerplate = boilerplate_of([t for source in release for t in _statements(source)], k)
    budget = Budget(settings.max_code_chars)
    everything: list[str] = []
    origin: list[str | None] = []  # each statement's graded cell, if it stands in one
    answers: dict[str, frozenset[str]] = {}  # the graded cells of the notebooks read -> their answers' names
    skipped: list[Skipped] = []
    runtime = 0
    for notebook, wanted in sorted(graded.items()):
        path = Path(folder) / notebook
        if not path.is_file():
            continue
        try:
            found, notes = read_cells(path.read_bytes(), set(wanted))
        except Malformed as err:
            skipped.append(Skipped(student, notebook, str(err)))
            continue
        answers.update(wanted)
        skipped += [Skipped(student, g, why) for g, why in notes]
        for i, (grade_id, text) in enumerate(found, 1):
            if len(text) > settings.max_cell_chars:
                skipped.append(Skipped(student, grade_id or f"{notebook} code cell {i}",
                                       f"code past the first {settings.max_cell_chars} characters left out"))
            got = statements(text[:settings.max_cell_chars], budget)
            everything += got.texts
            origin += [grade_id] * len(got.texts)
            runtime += got.runtime
    if budget.spent_out:
        skipped.append(Skipped(student, "", f"code past the first {settings.max_code_chars} characters of the "
                                            "submission (strings of code unwrapped included) left out"))
    if runtime:
        skipped.append(Skipped(student, "", f"{runtime} exec/eval/compile call(s) on code built at run time: that "
                                            "code is not compared (read the notebooks)"))
    made: dict = {}  # statement -> its fingerprint, made once for every document
    docs = {OVERALL: document(everything, k, boilerplate, made)}
    names = [names_of(text) for text in everything]
    for grade_id, defined in answers.items():
        runs = followed(names, {i for i, g in enumerate(origin) if g == grade_id}, defined)
        docs[grade_id] = document([everything[i] for i in runs], k, boilerplate, made)
    return StudentCode({cell: doc.text for cell, doc in docs.items()}, docs, skipped)


def collect_code(submitted: Path, assignment: str, release: Release, settings: Settings
                 ) -> tuple[dict[str, StudentCode], list[Skipped]]:
    """student -> their code and its fingerprints, read from a sanitised copy of each submission in
    a unit of its own; and what was skipped."""
    graded: dict[str, dict[str, frozenset[str]]] = {name: {} for name in release.notebooks}
    for c in release.cells:
        graded[c.notebook][c.grade_id] = c.answers
    # every notebook of the assignment, by name; no run files
    limits = Limits(notebook_bytes=settings.notebook_bytes, total_bytes=16 * settings.notebook_bytes,
                    max_entries=settings.max_entries)
    wanted = Wanted(frozenset(graded), frozenset(), frozenset(), release.marks)
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
    """Every pair of students, overall and per graded cell, scored raw and class-weighted and ranked, from the units'
    fingerprints; each fingerprint weighed by how many of the class's all-code documents hold it."""
    k = settings.noise
    weight = class_weights(mine.docs[OVERALL] for mine in code.values())
    report = Report(cells, sorted(code), [], [],
                    {(s, cell): text for s, mine in code.items() for cell, text in mine.code.items()})
    for cell in (OVERALL, *(c.grade_id for c in cells)):
        docs = {s: mine.docs[cell] for s, mine in sorted(code.items()) if cell in mine.docs and mine.docs[cell].size}
        best, report.sharing[cell] = ranked(cell, shares(docs, weight), settings.max_pairs)
        for p in best[:settings.shown_with_code]:  # where the matches are, in each one's own code
            report.matches[(cell, p.a, p.b)] = (marks(docs[p.a], docs[p.b], k), marks(docs[p.b], docs[p.a], k))
        report.pairs += best
    return report


def similarity_report(submitted: Path, release: Path, assignment: str = "a5", settings: Settings = Settings(),
                      base: tuple[Path, ...] = ()) -> Report:
    """Read the cohort in ``submitted/<student>/<assignment>/`` and compare all of its code, the
    ``release``'s and the ``base`` snippets' aside."""
    given = release_of(release, base)
    code, skipped = collect_code(submitted, assignment, given, settings)
    report = compare(given.cells, code, settings)
    report.skipped = skipped
    return report
