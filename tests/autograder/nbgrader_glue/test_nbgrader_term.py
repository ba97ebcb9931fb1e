"""A term's shapes through the real commands in a temporary course: a due date, a late student with a penalty, an
extension, hand-ins from a Canvas download, then autograde, the score of record, feedback and the export.

The course holds notebooks 02 and 03 (27 points of checks, 6 of 02's runs, which nobody hands in) and a late policy
of 10% of the points earned per started hour. Every student hands in the reference's answers, so each total is the
same work less the penalty its lateness earns; each step's closing summary must name the late students.
"""
from __future__ import annotations

import csv
import datetime
import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import SOLUTIONS
from lms_downloads import make_zip

from autograder.confinement import status

pytestmark = [pytest.mark.timeout(900),
              pytest.mark.skipif(status() is not None, reason=f"the score of record needs confinement: {status()}")]

NB02, NB03 = "02_finetune_without_pretraining.ipynb", "03_span_corruption.ipynb"
DUE = datetime.datetime(2026, 3, 1, 17, 0)
TRUSTED = 27  # the reference's points of record for 02 and 03's checks (no runs handed in)
# student -> when they handed in, after the due date (None: no time, as Canvas's download gives none)
HANDED_IN = {"ontime": -2.0, "late": 1.5, "extended": 5.0, "canvas-late": None}
PENALTY = {"ontime": 0.0, "late": 0.2 * TRUSTED, "extended": 0.0, "canvas-late": 0.0}  # 2 started hours: 20%


def _filled(course: Path, name: str):
    """The release notebook with the reference's answers typed in."""
    nb = nbformat.read(course / "release" / "a5" / name, as_version=4)
    solution = {c.metadata["nbgrader"]["grade_id"]: c.source for c in nbformat.read(SOLUTIONS / name, 4).cells
                if c.metadata.get("nbgrader", {}).get("solution")}
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = solution[cell.metadata["nbgrader"]["grade_id"]]
    return nb


@pytest.fixture(scope="module")
def term(tmp_path_factory, world_dir, world_answers):
    """The course after the due date, an extension, the Canvas intake, autograde, grade --gradebook, feedback and
    the export; every command's output."""
    course = tmp_path_factory.mktemp("term") / "course"
    (course / "source" / "a5").mkdir(parents=True)
    for name in (NB02, NB03):
        shutil.copy(SOLUTIONS / name, course / "source" / "a5" / name)
    (course / "grader_only").mkdir(mode=0o700)
    answers = shutil.copy(world_answers, course / "grader_only" / "birth_test.tsv")
    (course / "nbgrader_config.py").write_text(
        "from autograder.nbgrader_glue.setup import configure_grading\n"
        "from autograder.term.lms import CANVAS_FILES\n"
        "c = get_config()\nc.CourseDirectory.course_id = 'term-test'\nconfigure_grading(c, timeout=30)\n"
        "c.CourseLatePenalty.penalty_method = 'per_hour'\nc.CourseLatePenalty.percent = 10.0\n"
        "c.LmsFileNames.named_regexp = CANVAS_FILES\n")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    said = {}

    def run(step: str, *argv: str) -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, "-m", *argv], cwd=course, env=env, capture_output=True, text=True,
                              timeout=900)
        said[step] = done
        return done

    assert run("generate", "nbgrader", "generate_assignment", "a5", "--force").returncode == 0
    assert run("due", "nbgrader", "db", "assignment", "add", "a5", f"--duedate={DUE:%Y-%m-%d %H:%M:%S} UTC"
               ).returncode == 0
    assert run("extend", "autograder", "extend", "a5", "extended", "--hours", "6").returncode == 0
    for student, hours in HANDED_IN.items():
        if hours is None:
            continue
        folder = course / "submitted" / student / "a5"
        folder.mkdir(parents=True)
        for name in (NB02, NB03):
            nbformat.write(_filled(course, name), folder / name)
        (folder / "timestamp.txt").write_text(f"{DUE + datetime.timedelta(hours=hours):%Y-%m-%d %H:%M:%S.%f} UTC")
    download = course.parent / "submissions.zip"
    download.write_bytes(make_zip({f"canvaslate_LATE_4242_99_{name}": nbformat.writes(_filled(course, name)).encode()
                                   for name in (NB02, NB03)}))
    run("lms", "autograder", "lms", "a5", str(download))
    (course / "submitted" / "canvaslate").rename(course / "submitted" / "canvas-late")  # (a roster's id for it)
    run("autograde", "autograder", "autograde", "a5", "--workers", "2", "--preset", "smoke", "--data-dir",
        str(world_dir))
    run("grade", "autograder", "grade", "submitted/", "--out", "grades/", "--data-dir", str(world_dir), "--answers",
        str(answers), "--preset", "smoke", "--timeout", "240", "--gradebook", "sqlite:///gradebook.db")
    run("feedback", "nbgrader", "generate_feedback", "a5")
    run("export", "nbgrader", "export")
    with open(course / "grades.csv", newline="") as f:
        exported = {r["student_id"]: r for r in csv.DictReader(f)}
    return dict(dir=course, said=said, exported=exported)


def test_the_lms_intake_says_canvas_marked_it_late_without_a_time(term):
    """Does the Canvas intake take the student's loose files, and say, needing the instructor, that Canvas marked the
    work late with no time nbgrader could measure?"""
    done = term["said"]["lms"]
    assert done.returncode == 1, done.stderr[-2000:]
    assert "canvaslate: NEEDS YOU: canvas marked it late; its download gives no time" in done.stdout


def test_the_export_holds_each_total_less_its_penalty(term):
    """Does nbgrader's export give each student the trusted points of the same work less the penalty their lateness
    earns (20% for 1.5 h late, none within an extension), the penalty in its own column?"""
    rows = term["exported"]
    for student, penalty in PENALTY.items():
        row = rows[student]
        assert float(row["raw_score"]) == TRUSTED, (student, row)
        assert float(row["late_submission_penalty"]) == pytest.approx(penalty), (student, row)
        assert float(row["score"]) == pytest.approx(TRUSTED - penalty), (student, row)
    assert float(rows["late"]["seconds_late"]) == 5400 and float(rows["extended"]["extension_hours"]) == 6
    assert rows["canvas-late"]["lms_late"] == "" and rows["late"]["lms_late"] == ""  # (renamed: a roster's id)


@pytest.mark.parametrize("step", ["autograde", "grade", "feedback", "export"])
def test_every_step_names_the_late_student(term, step):
    """Does each step end with a summary naming the late student, how late, and the penalty, exiting 0 when nothing
    needs the instructor?"""
    done = term["said"][step]
    text = done.stdout + done.stderr
    # (autograde's is the policy's share: nbgrader's kernels judge no check, the score of record comes next)
    taken = (r"the late policy takes 20% of the points the course's grader gives them" if step == "autograde"
             else r"penalty 5\.4 of 27 point\(s\)")
    assert re.search(rf"  late: (a5: )?late by 1 h 30 min: {taken}", text), text[-3000:]
    assert "extended: late" not in text and "ontime:" not in text
    if step != "autograde":  # (autograde names the students it autograded this time)
        assert re.search(r"extended: (a5: )?handed in 5 h 0 min after the due date, within their extension: no "
                         "penalty", text), text[-3000:]
    if step != "feedback":  # (generate_feedback's exit is nbgrader's: no page missing)
        assert done.returncode == 0, text[-3000:]


def _shown(page: Path) -> str:
    """A feedback page's text as a browser shows it (its character references read)."""
    return html.unescape(page.read_text(encoding="utf-8"))


def test_the_feedback_page_shows_the_penalty_and_the_total(term):
    """Does the late student's feedback page show their total after the penalty, the penalty and how late, and the
    on-time student's no penalty?"""
    late = _shown(term["dir"] / "feedback" / "late" / "a5" / NB03.replace(".ipynb", ".html"))
    total = TRUSTED - PENALTY["late"]
    assert f"Your total for a5: {total:g} of 33 points" in late and f"late penalty of {PENALTY['late']:g}" in late
    assert "handed in 1 h 30 min after your due date" in late
    ontime = _shown(term["dir"] / "feedback" / "ontime" / "a5" / NB03.replace(".ipynb", ".html"))
    assert f"Your total for a5: {TRUSTED:g} of 33 points" in ontime and "late penalty of" not in ontime


def test_the_score_of_record_is_out_of_the_released_notebooks_points(term):
    """Does the score of record of a course that gives out only 02 and 03 grade each student out of those notebooks'
    33 points (their checks and 02's runs), with no column for the parts of notebooks it never released?"""
    with open(term["dir"] / "grades" / "grades.csv", newline="") as f:
        reader = csv.DictReader(f)
        rows = {r["student_id"]: r for r in reader}
        columns = reader.fieldnames
    assert {float(r["max_score"]) for r in rows.values()} == {33.0}, rows
    assert {float(r["score"]) for r in rows.values()} == {float(TRUSTED)}, rows
    assert any(c.startswith("02-") for c in columns) and any(c.startswith("03-") for c in columns)
    assert not any(c.startswith(("04-", "05-", "07-", "08-", "synthesizer")) for c in columns), columns
