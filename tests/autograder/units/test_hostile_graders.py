"""The graders' own steps on a hostile cohort made by Hypothesis: the score of record (grade) and nbgrader's autograde
each get one derandomized cohort (their units start sandboxes and kernels: seconds a student). Every hostile student
gets a row with a reason; the honest student's row is the very one it gets graded alone; nothing hangs."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import hostile_submissions as hs
import nbformat
import pytest
from conftest import REPO, SOLUTIONS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder import confinement
from autograder.grading.folder import grade_folder
from autograder.grading.results import settings_for

pytestmark = [pytest.mark.timeout(900),
              pytest.mark.skipif(confinement.status() is not None, reason=f"no confinement: {confinement.status()}")]

RELEASE = REPO / "notebooks" / "a5"
A5 = "a5"
NB03 = "03_span_corruption.ipynb"
HONEST = "honest"
ONCE = settings(max_examples=1, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
COHORT = st.lists(hs.hostile(ids=st.from_regex(r"\Ahostile[0-9]{1,3}\Z")), min_size=3, max_size=3,
                  unique_by=lambda h: h.student)


def _honest(submitted: Path) -> None:
    """An honest student who answered the span corruption (03) and handed in the release's 02 as it was."""
    folder = submitted / HONEST / A5
    folder.mkdir(parents=True)
    release03 = nbformat.read(RELEASE / NB03, as_version=4)
    solution03 = nbformat.read(SOLUTIONS / NB03, as_version=4)
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in solution03.cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    for cell in release03.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    nbformat.write(release03, folder / NB03)
    shutil.copy(RELEASE / "02_finetune_without_pretraining.ipynb", folder)


@ONCE
@given(hostile=COHORT)
def test_the_score_of_record_of_an_honest_student_ignores_hostile_classmates(hostile, tmp_path_factory, world_dir,
                                                                             world_answers):
    """Graded with the same seed beside three generated hostile students, is the honest student's row (every part's
    points and reason) the one it gets graded alone, and does each hostile student have a full row?"""
    root = tmp_path_factory.mktemp("hostile-grade")
    alone, crowd = root / "alone" / "submitted", root / "crowd" / "submitted"
    _honest(alone)
    _honest(crowd)
    for h in hostile:
        hs.write(crowd / h.student / A5, h)
    settings_ = settings_for(world_dir, world_answers, "synthetic", "smoke", seed=7, student_seconds=120)
    by_itself = grade_folder(alone, A5, root / "alone" / "grades", settings_, progress=False).results
    together = {r.student: r for r in grade_folder(crowd, A5, root / "crowd" / "grades", settings_,
                                                   progress=False).results}
    assert [(p.part, p.points, p.reason) for p in together[HONEST].parts] == \
        [(p.part, p.points, p.reason) for p in by_itself[0].parts]
    assert by_itself[0].score > 0
    for h in hostile:
        row = together[h.student]
        assert len(row.parts) == len(by_itself[0].parts) and all(p.reason for p in row.parts if p.points < p.max_points)
    hs.make_readable(root)


@ONCE
@given(hostile=COHORT)
def test_nbgrader_autograde_of_an_honest_student_ignores_hostile_classmates(hostile, tmp_path_factory, world_dir):
    """Autograded beside three generated hostile students, is the honest student autograded with its expected score,
    and every hostile one listed (autograded or failed with a reason), with nothing left running?"""
    course = tmp_path_factory.mktemp("hostile-autograde") / "course"
    (course / "source" / A5).mkdir(parents=True)
    for name in ("02_finetune_without_pretraining.ipynb", NB03):
        shutil.copy(SOLUTIONS / name, course / "source" / A5 / name)
    (course / "nbgrader_config.py").write_text(
        "from autograder.nbgrader_glue.setup import configure_grading\nc = get_config()\n"
        "c.CourseDirectory.course_id = 'hostile-autograde'\nconfigure_grading(c, timeout=60)\n")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    generated = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", A5, "--force"], cwd=course,
                               env=env, capture_output=True, text=True, timeout=300)
    assert generated.returncode == 0, generated.stderr[-2000:]
    _honest(course / "submitted")
    for h in hostile:
        hs.write(course / "submitted" / h.student / A5, h)
    done = subprocess.run([sys.executable, "-m", "autograder", "autograde", A5, "--workers", "1", "--preset",
                           "smoke", "--data-dir", str(world_dir), "--timeout", "240"], cwd=course, env=env,
                          capture_output=True, text=True, timeout=800)
    log = (course / "autograde_log.txt").read_text(encoding="utf-8")
    assert f"===== {HONEST}: ok" in log, done.stderr[-3000:]
    for h in hostile:
        assert f"===== {h.student}: " in log, (h.student, log[-3000:])
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:  # no check is judged in nbgrader's kernels
        assert gb.find_submission(A5, HONEST).score == 0
    # every cell of the honest 03 ran to the end, as Run All: its solution cells without an error, and its public and
    # hidden test cells each saying that the course's grader judges it
    ran = nbformat.read(course / "autograded" / HONEST / A5 / NB03, as_version=4)
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in ran.cells if c.cell_type == "code"}
    for grade_id in ("03-span-public", "03-span-hidden"):
        assert any("judged by the course's grader" in str(o) for o in cells[grade_id].outputs), cells[grade_id]
    assert not [c for c in ran.cells if c.metadata.get("nbgrader", {}).get("solution")
                and any(o.get("output_type") == "error" for o in c.get("outputs", []))]
    hs.make_readable(course)
