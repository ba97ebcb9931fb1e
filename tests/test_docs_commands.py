"""The instructor's grading path in docs/grading.md, run literally on a tiny cohort in a copy of the course.

Every ```bash block of the page runs as written, in order, with bash from the copy's root
(```sh blocks are option templates with the reader's host names, and ```python ones run elsewhere);
the only step that is not a command (putting the submissions into ``submitted/``) is done
by the test just before the first block that reads them. So the page cannot drift from
what works.
"""
from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import nbformat
import pytest
from conftest import REPO, SOLUTIONS

from autograder.confinement import status

pytestmark = [pytest.mark.timeout(900),
              pytest.mark.skipif(status() is not None, reason=f"the doc's grading needs confinement: {status()}")]

DOC = REPO / "docs" / "grading.md"
NB03 = "03_span_corruption.ipynb"


def doc_blocks(text: str) -> list[str]:
    """The page's ```bash blocks, in order."""
    return re.findall(r"^```bash\n(.*?)^```$", text, flags=re.S | re.M)


def _course_copy(root: Path) -> Path:
    """The files git tracks, copied as a fresh clone has them, beside the real .venv (linked, not rebuilt)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)
    (root / ".venv").symlink_to(REPO / ".venv")
    return root


def _submit(course: Path) -> None:
    """Two students in nbgrader's layout: one with the reference span corruption, one with the blank release."""
    release = nbformat.read(course / "notebooks" / "a5" / NB03, as_version=4)
    solution = nbformat.read(SOLUTIONS / NB03, as_version=4)
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in solution.cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    for student, fill in (("ada", True), ("bo", False)):
        nb = nbformat.read(course / "notebooks" / "a5" / NB03, as_version=4) if fill else release
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if fill and meta.get("solution"):
                cell.source = answers[meta["grade_id"]]
        folder = course / "submitted" / student / "a5"
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / NB03)


@pytest.fixture(scope="module")
def run_page(tmp_path_factory) -> tuple[Path, list[tuple[str, str]]]:
    """The course copy after every command of the page ran, and each block with what it printed."""
    course = _course_copy(tmp_path_factory.mktemp("doc-course"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COURSE_", "PYTEST_", "NBGRADER"))}
    submitted, printed = False, []
    for block in doc_blocks(DOC.read_text(encoding="utf-8")):
        if "submitted/" in block and not submitted:
            _submit(course)
            submitted = True
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=course, env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, f"this block of docs/grading.md failed:\n{block}\n{done.stderr[-3000:]}"
        printed.append((block, done.stdout))
    assert submitted, "no command of the page reads submitted/"
    return course, printed


@pytest.fixture(scope="module")
def graded(run_page) -> Path:
    return run_page[0]


def test_the_page_has_the_whole_path():
    """Does the page show every step as a command: world, bundle, gradebook, autograde, grade, report, export?"""
    text = "\n".join(doc_blocks(DOC.read_text(encoding="utf-8")))
    for step in ("course_lib world", "autograder bundle", "generate_assignment", "autograder autograde",
                 "autograder grade", "autograder report", "nbgrader export"):
        assert step in text, step


def test_the_score_of_record_tells_the_students_apart(graded):
    """After the page's commands, does our grades.csv give the filled student the span points and the blank none?"""
    with open(graded / "grades" / "grades.csv", newline="") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"ada", "bo"}
    assert float(rows["ada"]["03-span-hidden"]) == 15 and float(rows["bo"]["03-span-hidden"]) == 0


def test_nbgraders_export_holds_the_trusted_scores(graded):
    """Does nbgrader's own CSV, exported last, list both students with the trusted span points?"""
    with open(graded / "grades.csv", newline="") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"ada", "bo"}
    assert float(rows["ada"]["raw_score"]) >= 20 > float(rows["bo"]["raw_score"])


def test_the_parallel_rerun_keeps_the_unchanged_students(run_page):
    """Does the page's --workers run, after step 3 graded everyone, keep both students instead of regrading?"""
    rerun = [out for block, out in run_page[1] if "--workers" in block and "autograder autograde" not in block]
    assert rerun and "0 student(s) graded, 2 unchanged" in rerun[0], rerun


def test_the_parallel_autograde_reached_both_students(run_page):
    """Did the page's parallel nbgrader autograde (two workers, the SQLite gradebook) autograde both students?"""
    course, printed = run_page
    said = next(out for block, out in printed if "autograder autograde" in block)
    assert "2 student(s) autograded" in said, said
    assert all((course / "autograded" / s / "a5" / NB03).is_file() for s in ("ada", "bo"))


def test_nothing_of_the_grader_reached_the_bundle(graded):
    """Does the bundle the page builds hold the release and course_lib, and no answers?"""
    with zipfile.ZipFile(graded / "dist" / "attention-course-student.zip") as z:
        names = z.namelist()
    assert any(n.endswith(NB03) for n in names) and not any("birth_test.tsv" in n for n in names)
