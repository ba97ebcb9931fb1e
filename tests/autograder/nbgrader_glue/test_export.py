"""`nbgrader export` the course's way: nbgrader's columns escaped, penalties as they stand, the LMS's columns."""
from __future__ import annotations

import csv
import datetime
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gradebooks import late_work_gradebook
from nbgrader.api import Gradebook

from autograder.term.lms import IntakeRecord, write_intake

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's add_submission

DUE = datetime.datetime(2026, 3, 1, 17, 0)
NBGRADER_COLUMNS = ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
                    "raw_score", "late_submission_penalty", "score", "max_score"]


@pytest.fixture
def course(tmp_path) -> Path:
    """A course whose policy takes 10% a started day; ada on time, '-dash' 30 h late with 20 points of which a manual
    grade came after autograde, 'a,b' nothing handed in, 'zed' from Canvas marked late with no time."""
    (tmp_path / "nbgrader_config.py").write_text(
        "from autograder.nbgrader_glue.setup import configure_grading\nc = get_config()\nconfigure_grading(c)\n"
        "c.CourseLatePenalty.penalty_method = 'per_day'\nc.CourseLatePenalty.percent = 10.0\n"
        "c.CourseExport.canvas_to = 'canvas.csv'\n")
    hour = datetime.timedelta(hours=1)
    url = late_work_gradebook(tmp_path, DUE, {"ada": DUE - hour, "-dash": DUE + 30 * hour, "a,b": None}, auto=16,
                              manual=4)
    with Gradebook(url) as gb:  # zed: no time came with the LMS's download
        gb.add_student("zed", first_name="Zed", last_name="Ng")
        gb.add_submission("a5", "zed")
        gb.find_grade("03-span-hidden", "03_span_corruption", "a5", "zed").auto_score = 16
        gb.find_grade("03-written", "03_span_corruption", "a5", "zed").manual_score = 4
        gb.db.commit()
    write_intake(tmp_path, [IntakeRecord("a5", "zed", "canvas", "4242", True, "", 2)])
    return tmp_path


def _export(course: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run([sys.executable, "-m", "nbgrader", "export"], cwd=course, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_export_is_nbgraders_csv_escaped_with_penalties_as_they_stand(course):
    """Does the export keep nbgrader's columns in order, escape an id that would start a formula and one holding a
    comma, take the policy's share of the points as they stand now (the manual grade included), and add the lateness,
    extension and LMS columns?"""
    done = _export(course)
    with open(course / "grades.csv", newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames[:len(NBGRADER_COLUMNS)] == NBGRADER_COLUMNS
        rows = {r["student_id"]: r for r in reader}
    assert set(rows) == {"ada", "'-dash", "a,b", "zed"}
    late = rows["'-dash"]
    assert (late["raw_score"], late["late_submission_penalty"], late["score"]) == ("20", "4", "16")  # 2 days: 20%
    assert late["seconds_late"] == str(30 * 3600)
    assert (rows["ada"]["late_submission_penalty"], rows["ada"]["score"]) == ("0", "20")
    assert rows["a,b"]["raw_score"] == "0" and rows["a,b"]["timestamp"] == ""
    assert (rows["zed"]["lms_user_id"], rows["zed"]["lms_late"]) == ("4242", "yes")
    # Canvas marked zed late, but no time came with the download: no penalty could be taken, which needs you
    assert done.returncode == 1 and "zed: NEEDS YOU: a5: the LMS marked it late" in done.stderr, done.stderr
    assert "-dash: a5: late by 1 d 6 h: penalty 4 of 20 point(s)" in done.stderr
    assert "a,b: a5: nothing handed in: scored 0" in done.stderr


def test_canvas_gets_its_gradebook_import_layout(course):
    """Is the Canvas layout written beside it: the student's name, Canvas's user id, empty SIS columns and section,
    then the assignment's points after the penalty?"""
    _export(course)
    with open(course / "canvas.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "a5"]
    assert ["Ng, Zed", "4242", "", "", "", "20"] in rows and ["'-dash", "", "", "", "", "16"] in rows
