"""Hostile cohorts made by Hypothesis, through every step that reads students' bytes: each hostile student gets a row or
a named refusal, the honest students' rows are what they are without them, and nothing hangs.

The cheap steps (the collect step and its flags, similarity, the report, nbgrader's feedback and its release, the
exchange's collect) take many generated cohorts here; the graders' own steps (grade and autograde, whose units start
sandboxes and kernels) take one derandomized cohort each in test_hostile_graders.py. benchmarks/fuzz_cohort.py runs the
same strategies for longer (its figures are in benchmarks/FINDINGS.md).
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import hostile_submissions as hs
import nbformat
import pytest
from conftest import REPO, SOLUTIONS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.checks.run_files import RUN_FILES
from autograder.collecting.cohort import collect_cohort
from autograder.collecting.collect import Wanted
from autograder.collecting.flags import SOLUTION, cohort_flags
from autograder.collecting.notebook_copies import copy_of, release_marks
from autograder.collecting.safe_files import shown
from autograder.collecting.student_ids import is_student_id
from autograder.exports.report import explain
from autograder.exports.similarity import similarity_report
from autograder.nbgrader_glue.release_feedback import UnitReleaseFeedback
from autograder.nbgrader_glue.setup import configure_feedback

RELEASE = REPO / "notebooks" / "a5"
A5 = "a5"
HONEST = ("ann", "ben")
WANTED = Wanted(frozenset(hs.NOTEBOOKS), frozenset(RUN_FILES), marks=release_marks(RELEASE))
# examples per run: a few in the suite, hundreds in benchmarks/fuzz_cohort.py (which sets FUZZ_EXAMPLES)
FUZZ = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "6")), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large, HealthCheck.large_base_example])
COHORTS = st.lists(hs.hostile(), min_size=1, max_size=3, unique_by=lambda h: h.student).filter(
    lambda cohort: not {h.student for h in cohort} & set(HONEST))


def _honest(submitted: Path) -> None:
    """ann hands in the reference's notebooks and a run file, ben the blank release."""
    for student, source in (("ann", SOLUTIONS), ("ben", RELEASE)):
        folder = submitted / student / A5
        (folder / "outputs").mkdir(parents=True)
        for name in hs.NOTEBOOKS:
            shutil.copy(source / name, folder / name)
        (folder / "outputs" / hs.RUN_FILE).write_text(f"{student}'s answers\n")


def _cohort(root: Path, hostile: list[hs.Hostile]) -> Path:
    submitted = root / "submitted"
    _honest(submitted)
    for h in hostile:
        hs.write(submitted / h.student / A5, h)
    return submitted


def _collect_rows(submitted: Path, dest: Path):
    cohort = collect_cohort(submitted, A5, dest, wanted=WANTED)
    rows = {c.student: (c.folder is not None, c.dropped, sorted(c.notes.items()), c.prints, c.notices)
            for c in cohort.students}
    return cohort, rows


def _similarity_rows(submitted: Path) -> tuple[set, list]:
    report = similarity_report(submitted, RELEASE)
    # the raw shares: the class-weighted ones weigh each fingerprint by how many classmates hold it, by design
    honest = [(p.cell, p.a, p.b, round(p.raw_a_in_b, 9), round(p.raw_b_in_a, 9), p.matched) for p in report.pairs
              if {p.a, p.b} <= set(HONEST)]
    return set(report.students) | {s.student for s in report.skipped}, honest


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """Every cheap step on the honest students alone."""
    root = tmp_path_factory.mktemp("honest")
    submitted = _cohort(root, [])
    cohort, rows = _collect_rows(submitted, root / "dest")
    return {"collect": rows, "flags": cohort_flags(cohort.students, A5), "similarity": _similarity_rows(submitted)[1]}


def _accounted(student: str, named: set[str]) -> bool:
    """A hostile student has its row (its id) or a refusal naming it as it can be shown."""
    return student in named or shown(student) in named


@FUZZ
@given(hostile=COHORTS)
def test_collect_flags_and_similarity_give_every_student_a_row_and_leave_the_honest_ones_alone(
        hostile, baseline, tmp_path_factory):
    """Through the collect step, the flags and the similarity report, does every hostile student get a row or a
    named refusal, and do the honest students' rows, flags and pairs stay what they are without them?"""
    root = tmp_path_factory.mktemp("fuzz")
    submitted = _cohort(root, hostile)
    try:
        cohort, rows = _collect_rows(submitted, root / "dest")
        named = set(rows) | {r.shown for r in cohort.refused}
        assert all(_accounted(h.student, named) for h in hostile), (named, [h.student for h in hostile])
        for h in hostile:  # a notebook stands in for a missing one only when its content is that one's
            taken = [n for c in cohort.students if c.student == h.student for n in c.notices if n.startswith("took")]
            for notice in taken:
                name, release = notice.removeprefix("took '").split("' as ")
                data = next(e.data for e in h.entries if e.path == name)
                assert copy_of(data, WANTED.marks) == release and release not in {e.path for e in h.entries}
        assert {s: rows[s] for s in HONEST} == baseline["collect"]
        flags = [f for f in cohort_flags(cohort.students, A5) if {f.student, f.other} <= {*HONEST, SOLUTION}]
        assert flags == baseline["flags"]
        seen, honest_pairs = _similarity_rows(submitted)
        assert all(_accounted(h.student, seen) for h in hostile)
        assert honest_pairs == baseline["similarity"]
    finally:
        hs.make_readable(root)
        shutil.rmtree(root, ignore_errors=True)


NB03 = "03_span_corruption"
CELLS = ("03-span-public", "03-span-hidden")


def _executed(notebook_path: Path) -> bytes:
    """A notebook as nbgrader's autograde leaves it: every code cell run (counts set)."""
    nb = nbformat.read(notebook_path, as_version=4)
    for count, cell in enumerate((c for c in nb.cells if c.cell_type == "code"), 1):
        cell.execution_count = count
    return nbformat.writes(nb).encode()


def _hand_in(course: Path, student: str, notebook: bytes, secret: bytes | None) -> None:
    """The collect step's copy, nbgrader's autograded notebook and a feedback page of one student."""
    for kind in ("collected", "autograded"):
        folder = course / kind / student / A5
        folder.mkdir(parents=True)
        (folder / f"{NB03}.ipynb").write_bytes(notebook)
    feedback = course / "feedback" / student / A5
    feedback.mkdir(parents=True)
    (feedback / f"{NB03}.html").write_text(f"<p>{len(notebook)} bytes</p>")
    (feedback / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")
    if secret is not None:
        (feedback / "submission_secret.txt").write_bytes(secret)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course folder with a gradebook where ann (the reference, full marks) and ben (blank) were autograded."""
    from nbgrader.api import Gradebook

    course = tmp_path_factory.mktemp("course")
    saved = os.environ["PATH"]
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{saved}"  # nbgrader stamps a new gradebook
    try:
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
            gb.add_assignment(A5)
            gb.add_notebook(NB03, A5)
            for grade_id, points in zip(CELLS, (5, 15)):
                gb.add_grade_cell(grade_id, NB03, A5, max_score=points, cell_type="code")
            gb.add_solution_cell("03-span-corruption", NB03, A5)  # (its comment is on the feedback page)
            for student in HONEST:
                _add(gb, student, full=student == "ann")
    finally:
        os.environ["PATH"] = saved
    for student, source in (("ann", SOLUTIONS), ("ben", RELEASE)):
        _hand_in(course, student, _executed(source / f"{NB03}.ipynb"), student.encode() * 64)
    return course


def _add(gb, student: str, full: bool = False) -> None:
    gb.add_student(student)
    gb.add_submission(A5, student)
    for grade_id in CELLS:
        grade = gb.find_grade(grade_id, NB03, A5, student)
        grade.auto_score, grade.needs_manual_grade = (grade.max_score if full else 0), False
    gb.db.commit()


def _drop(gb, student: str) -> None:
    gb.remove_submission(A5, student)
    gb.remove_student(student)


# nbgrader generate_feedback's folders here: its input holds the notebooks of the ids the collect step accepts (it
# refuses every other name before nbgrader sees it), its output is kept apart from the pages release_feedback hands out
FEEDBACK_IN, FEEDBACK_OUT = "feedback_input", "feedback_made"


def _generate_feedback(course: Path) -> tuple[dict[str, bytes], str]:
    """nbgrader's generate_feedback, configured as the course configures it (each page a unit of its own), of every
    student in FEEDBACK_IN: student -> their page's bytes, and what nbgrader logged as errors."""
    import logging

    from nbgrader.converters import GenerateFeedback
    from nbgrader.converters.base import NbGraderException
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    config = Config()
    configure_feedback(config)
    config.BaseConverter.force = True
    errors: list[str] = []
    log = logging.getLogger(f"fuzz-feedback-{id(errors)}")
    log.propagate = False
    handler = logging.Handler(logging.ERROR)
    handler.emit = lambda record: errors.append(record.getMessage())
    log.addHandler(handler)
    coursedir = CourseDirectory(root=str(course), assignment_id=A5, autograded_directory=FEEDBACK_IN,
                                feedback_directory=FEEDBACK_OUT)
    try:
        GenerateFeedback(coursedir=coursedir, config=config, log=log).start()
    except NbGraderException:
        pass  # the students it could not make pages for: in the errors
    pages = {folder.name: (folder / A5 / f"{NB03}.html").read_bytes()
             for folder in (course / FEEDBACK_OUT).iterdir() if (folder / A5 / f"{NB03}.html").is_file()}
    return pages, "\n".join(errors)


@pytest.fixture(scope="module")
def honest_pages(course) -> dict[str, bytes]:
    """ann's and ben's feedback pages, made by generate_feedback with nobody else in its input."""
    for student in HONEST:
        shutil.copytree(course / "autograded" / student, course / FEEDBACK_IN / student)
    pages, errors = _generate_feedback(course)
    assert set(pages) == set(HONEST) and not errors, errors
    return pages


SECRETS = st.one_of(st.none(), st.binary(max_size=200), st.just(b"s" * 5_000_000))


@FUZZ
@given(hostile=COHORTS, secrets=st.lists(SECRETS, min_size=3, max_size=3))
def test_report_and_feedback_give_every_student_a_row_and_leave_the_honest_ones_alone(hostile, secrets, course,
                                                                                     honest_pages):
    """With generated hostile students in the gradebook (their notebooks in collected/ and autograded/, their feedback
    folders with forged or missing secrets), does the report explain every student and the honest ones as before,
    does generate_feedback make every page it can, name every student it cannot and leave the honest pages as they
    were, and does release_feedback release the honest students' pages and name every student it could not release?"""
    from nbgrader.api import Gradebook
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange import ExchangeError

    notebooks = [next((e.data for e in h.entries if e.kind == "file" and e.path.startswith(NB03)), b"{}")
                 for h in hostile]
    db = f"sqlite:///{course / 'gradebook.db'}"
    exchange = course / "exchange"
    try:
        with Gradebook(db) as gb:
            for h in hostile:
                _add(gb, h.student)
        for h, notebook, secret in zip(hostile, notebooks, secrets):
            _hand_in(course, h.student, notebook, secret)
        totals, reasons = explain(course, A5, db)
        explained = {r.student for r in reasons}
        assert all(h.student in explained for h in hostile)
        assert {s: totals[s] for s in HONEST} == {"ann": 20, "ben": 0}
        assert [r for r in reasons if r.student == "ann"] == []
        assert {r.cell for r in reasons if r.student == "ben"} == set(CELLS)
        pageable = [h.student for h in hostile if is_student_id(h.student)]  # the ids the collect step lets through
        for student in pageable:
            shutil.copytree(course / "autograded" / student, course / FEEDBACK_IN / student)
        pages, errors = _generate_feedback(course)
        assert {s: pages[s] for s in HONEST} == honest_pages, errors
        assert all(student in pages or f"for student '{student}'" in errors for student in pageable), errors
        shutil.rmtree(exchange, ignore_errors=True)
        exchange.mkdir()
        release = UnitReleaseFeedback(coursedir=CourseDirectory(root=str(course), course_id="c", assignment_id=A5),
                                      authenticator=None, root=str(exchange))
        try:
            release.start()
            failed = ""
        except ExchangeError as err:
            failed = str(err)
        released = len(list((exchange / "c" / "feedback").iterdir()))
        assert released >= len(HONEST)  # ann's and ben's pages at least, whatever the others held
        # (a hidden name is no student of nbgrader's: its glob never lists the folder)
        unreleasable = [h.student for h, s in zip(hostile, secrets)
                        if not h.student.startswith(".") and (s is None or not s.strip() or len(s) > 1024)]
        assert all(shown(student) in failed for student in unreleasable), (failed, unreleasable)
    finally:
        with Gradebook(db) as gb:
            for h in hostile:
                _drop(gb, h.student)
        for h in hostile:
            for kind in ("collected", "autograded", "feedback", FEEDBACK_IN, FEEDBACK_OUT):
                shutil.rmtree(course / kind / h.student, ignore_errors=True)
