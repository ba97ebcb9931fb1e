"""Student ids: refused exactly when nbgrader or the file system cannot carry them, and every other one collected.

The judge is nbgrader's own code and the file system, asked directly (a folder made, nbgrader's glob and its
converter's reading of the path, its gradebook's store and look-up, its CourseDirectory's id), never our rules."""
from __future__ import annotations

import contextlib
import glob
import logging
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.collecting.cohort import collect_cohort
from autograder.collecting.collect import Wanted
from autograder.collecting.student_ids import id_problem
from autograder.exports.gradebook_stamp import stamp_in_process

A = "a5"
# what real and hostile ids hold: letters of any alphabet, an emoji joined by U+200D (a format character), bidi
# controls, control characters, pattern characters, white space of every kind, a slash, NUL, 4-byte characters
# (128 of them are 512 bytes), a lone surrogate (a name that was not UTF-8), the exchange's separator
ODD = ["a", "Z", "0", "-", "_", ".", " ", "+", "'", ",", '"', "*", "?", "[", "]", "/", "\0", "\n", "\r", "\t", "\x1b",
       "\x1c", "\x85", "\xa0", "\u3000", "\u2028", "é", "李", "\u0301", "\u200d", "👩", "🔬", "😀", "\u202e", "\u2066",
       "\u200f", "\ufeff", "\udc80", "\ud800"]
IDS = st.one_of(st.text(st.sampled_from(ODD), max_size=12),
                st.lists(st.sampled_from(["x", "é", "😀", "👩\u200d🔬"]), min_size=40, max_size=140).map("".join),
                st.sampled_from(["", ".", "..", "..a", "👩\u200d🔬", "x" * 128, "x" * 129, "😀" * 63, "😀" * 64]))


@contextlib.contextmanager
def _no_log_records():
    """No log record while ids are tried: nbgrader's logs name the path, and a record holding an id that is not
    UTF-8 (a lone surrogate) in a test's captured log stops pytest-xdist's worker from sending its report."""
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


def nbgrader_carries(name: str, course: Path, gradebook) -> bool:
    """Whether the file system and nbgrader carry ``name`` as a student id in ``course`` (a fresh folder): the
    folder can be made, nbgrader's listing of submitted/ and its glob for the id find it and nothing else, its
    converter reads the id back from the notebook's path, and its gradebook stores and finds it."""
    from nbgrader.api import MissingEntry, Student
    from nbgrader.converters import Autograde
    from nbgrader.coursedir import CourseDirectory

    submitted = course / "submitted"
    try:
        os.mkdir(os.path.join(submitted, name))
    except (OSError, ValueError, UnicodeEncodeError):  # '/', NUL, too long, '', '.', '..', not encodable
        return False
    os.mkdir(os.path.join(submitted, name, A))
    folder = os.path.join(submitted, name, A)
    coursedir = CourseDirectory(root=str(course))
    if CourseDirectory(root=str(course), student_id=name).student_id != name:  # nbgrader strips it
        return False
    converter = Autograde(coursedir=coursedir)
    if glob.escape(name) != name:  # nbgrader's glob would read it as a pattern, matching other students' folders too
        return False
    if folder not in glob.glob(converter._format_source(A, "*")) or glob.glob(converter._format_source(A, name)) != \
            [folder]:
        return False
    try:
        resources = converter.init_single_notebook_resources(os.path.join(folder, "01_intro.ipynb"))
    except Exception:  # nbgrader's "Could not match ..."
        return False
    if resources["nbgrader"]["student"] != name:
        return False
    if len(name) > Student.__table__.c.id.type.length:  # String(128): PostgreSQL refuses more, SQLite would not
        return False
    try:
        gradebook.update_or_create_student(name)
        return gradebook.find_student(name).id == name
    except (UnicodeEncodeError, MissingEntry):
        gradebook.db.rollback()
        return False


@pytest.fixture(scope="module")
def course():
    with tempfile.TemporaryDirectory(prefix="ids-") as tmp:
        yield Path(tmp)


@pytest.fixture(scope="module")
def gradebook(course):
    """One SQLite gradebook for every example, made once."""
    from nbgrader.api import Gradebook

    stamp_in_process()  # as the course's nbgrader processes do: no `alembic` command per gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        yield gb


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=IDS)
def test_an_id_is_refused_exactly_when_nbgrader_or_the_file_system_cannot_carry_it(name, course, gradebook):
    """Is an id refused exactly when the file system or nbgrader (its glob, its reading of the path, its gradebook)
    cannot carry it, whatever characters it holds?"""
    with tempfile.TemporaryDirectory(dir=course) as tmp, _no_log_records():
        (Path(tmp) / "submitted").mkdir()
        assert (id_problem(name) is None) == nbgrader_carries(name, Path(tmp), gradebook), (name, id_problem(name))


@pytest.mark.parametrize("name", ["👩\u200d🔬", "ada 👩\u200d🔬", "bad\x1bname", "rtl\u202eevil", "a+b", "a]b",
                                  "😀" * 63, "x" * 128], ids=ascii)
def test_ids_nbgrader_carries_are_not_refused(name):
    """Are an emoji joined by U+200D, control and bidi characters, '+' and ']' and 252 bytes of emoji ids?"""
    assert id_problem(name) is None


@pytest.mark.parametrize("name, words", [("😀" * 64, "255 bytes"), ("x" * 129, "128 characters"),
                                         ("bad\nname", "newline"), ("a[1]", "pattern"), (" ada", "white space"),
                                         ("ada\xa0", "white space"), (".ada", "hidden"), ("a\udc80", "UTF-8")],
                         ids=lambda v: ascii(v)[:20])
def test_ids_nbgrader_or_linux_refuse_say_why(name, words):
    """Is an id over 255 bytes (under 128 characters), over 128 characters, with a newline, a pattern, white space at
    an end, a leading dot or bytes that are not UTF-8 refused, saying which?"""
    assert words in id_problem(name)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(IDS, min_size=1, max_size=8, unique=True))
def test_every_id_nbgrader_carries_gets_its_row(names, course):
    """In a submitted/ of odd ids, does every id nbgrader carries get its own row under its own name, with its
    notebook copied, and every other folder a refusal, hidden ones too (nothing left out in silence)?"""
    with tempfile.TemporaryDirectory(dir=course) as tmp, _no_log_records():
        submitted, dest = Path(tmp) / "submitted", Path(tmp) / "dest"
        submitted.mkdir()
        for name in names:
            try:
                os.mkdir(os.path.join(submitted, name))  # no parents: a name with '/' is no folder of submitted/
                os.mkdir(os.path.join(submitted, name, A))
            except (OSError, ValueError, UnicodeEncodeError):
                continue
            Path(os.path.join(submitted, name, A, "01_intro.ipynb")).write_bytes(b"{}")
        folders = os.listdir(submitted)
        cohort = collect_cohort(submitted, A, dest, wanted=Wanted(frozenset({"01_intro.ipynb"}), frozenset()))
        carried = sorted(n for n in folders if id_problem(n) is None)
        assert [c.student for c in cohort.students] == carried
        for student in carried:
            assert os.path.isfile(os.path.join(dest, student, A, "01_intro.ipynb")), student
        assert len(cohort.refused) == len([n for n in folders if id_problem(n) is not None])
