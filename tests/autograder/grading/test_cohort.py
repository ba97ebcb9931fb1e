"""Re-runs of a cohort: kept results, changed files and settings, the grader's own failures graded again.

These count gradings with the per-student grading stubbed, since what they check is
which students are graded. Real gradings on Dask, with workers killed (kill -9) mid-student,
are in test_adversarial.py, on its cohort (serial against parallel, SQLite against PostgreSQL).
"""
from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
import unit_work

import autograder.grading.cohort as cohort_module
from autograder.__main__ import main
from autograder.grading.cohort import CACHE_DIR
from autograder.grading.folder import grade_folder
from autograder.grading.results import settings_for
from course_lib.layout import ASSIGNMENT


def _rows(out: Path) -> list[dict]:
    with open(out / "grades.csv") as f:
        return list(csv.DictReader(f))


@pytest.fixture
def tiny(tmp_path, world_dir, world_answers):
    """Three submissions (any bytes do: the grading is stubbed) and the settings to grade them with."""
    submitted = tmp_path / "submitted"
    for student in ("ann", "ben", "cal"):
        folder = submitted / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / "03_span_corruption.ipynb").write_text(f"{student}'s notebook")
    settings = settings_for(world_dir, world_answers, "synthetic", "smoke")
    return dict(submitted=submitted, settings=settings, out=tmp_path / "grades")


class _Graded:
    """The students the stubbed grade units graded (they write them beside the --out folder)."""

    def __init__(self, base: Path):
        self.path = base / "graded.txt"

    def __eq__(self, other) -> bool:
        return self.list() == other

    def __iter__(self):
        return iter(self.list())

    def __repr__(self) -> str:
        return repr(self.list())

    def list(self) -> list[str]:
        return self.path.read_text().split() if self.path.exists() else []

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


def _stub(monkeypatch, tiny, fail: set[str] = frozenset()) -> _Graded:
    """Each student's grade unit stubbed by a function it imports (unit_work.stub_grade_task)."""
    base = tiny["out"].parent
    (base / "fail.txt").write_text("\n".join(fail))
    monkeypatch.setattr(cohort_module, "run_task", unit_work.stub_grade_task)
    graded = _Graded(base)
    graded.clear()
    return graded


def test_rerun_grades_only_what_changed(tiny, monkeypatch):
    """Does a re-run keep unchanged students, grade a changed one, and --force (or new settings) grade all?"""
    graded = _stub(monkeypatch, tiny)

    def again(force: bool = False):
        return grade_folder(tiny["submitted"], ASSIGNMENT, tiny["out"], tiny["settings"], progress=False, force=force)

    first = again()
    assert sorted(graded) == ["ann", "ben", "cal"] and (first.graded, first.reused) == (3, 0)
    before = (tiny["out"] / "grades.csv").read_text()
    graded.clear()
    second = again()
    assert graded == [] and (second.graded, second.reused) == (0, 3)
    assert (tiny["out"] / "grades.csv").read_text() == before
    (tiny["submitted"] / "ben" / ASSIGNMENT / "03_span_corruption.ipynb").write_text("ben's second try")
    third = again()
    assert graded == ["ben"] and (third.graded, third.reused) == (1, 2)
    graded.clear()
    assert again(force=True).graded == 3 and sorted(graded) == ["ann", "ben", "cal"]
    graded.clear()
    changed = settings_for(tiny["settings"].data_dir, tiny["settings"].answers, "synthetic", "smoke", timeout=17)
    grade_folder(tiny["submitted"], ASSIGNMENT, tiny["out"], changed, progress=False)
    assert sorted(graded) == ["ann", "ben", "cal"]


def test_grader_failure_is_a_row_and_is_retried_next_run(tiny, monkeypatch):
    """Is the grader's own crash on one student that student's row (not kept), graded again on the next run?"""
    graded = _stub(monkeypatch, tiny, fail={"ben"})
    run = grade_folder(tiny["submitted"], ASSIGNMENT, tiny["out"], tiny["settings"], progress=False)
    assert run.failed == ["ben"] and [r["student_id"] for r in _rows(tiny["out"])] == ["ann", "ben", "cal"]
    reasons = json.loads((tiny["out"] / "reasons.json").read_text())
    assert all("could not grade" in p["reason"] for p in reasons["ben"])
    assert "RuntimeError" in (tiny["out"] / "instructor_log.txt").read_text()
    assert sorted(p.name for p in (tiny["out"] / CACHE_DIR).iterdir()) == ["ann.json", "cal.json"]
    graded.clear()
    _stub(monkeypatch, tiny)
    rerun = grade_folder(tiny["submitted"], ASSIGNMENT, tiny["out"], tiny["settings"], progress=False)
    assert (rerun.graded, rerun.reused, rerun.failed) == (1, 2, [])


def test_a_kept_result_from_other_files_is_not_used(tiny, monkeypatch):
    """Is a kept result whose content hash does not match the files (say, copied from another student) ignored?"""
    graded = _stub(monkeypatch, tiny)
    grade_folder(tiny["submitted"], ASSIGNMENT, tiny["out"], tiny["settings"], progress=False)
    cache = tiny["out"] / CACHE_DIR
    shutil.copy(cache / "ann.json", cache / "ben.json")
    graded.clear()
    grade_folder(tiny["submitted"], ASSIGNMENT, tiny["out"], tiny["settings"], progress=False)
    assert graded == ["ben"]


def test_parallel_refuses_zero_workers(tmp_path, world_dir, world_answers, capsys):
    """Is --workers 0 refused with a message, before anything is graded?"""
    (tmp_path / "submitted").mkdir()
    code = main(["grade", str(tmp_path / "submitted"), "--out", str(tmp_path / "out"), "--data-dir",
                 str(world_dir), "--answers", str(world_answers), "--workers", "0", "--unconfined"])
    assert code == 2 and "--workers" in capsys.readouterr().err
    assert not (tmp_path / "out" / "grades.csv").exists()


def test_an_unknown_assignment_is_refused_before_grading(tmp_path, world_dir, world_answers, capsys):
    """Is --assignment naming no released assignment refused in one line, with no grades written?"""
    (tmp_path / "submitted").mkdir()
    code = main(["grade", str(tmp_path / "submitted"), "--out", str(tmp_path / "out"), "--data-dir",
                 str(world_dir), "--answers", str(world_answers), "--assignment", "b5", "--unconfined"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "unknown assignment 'b5'" in err, err
    assert not (tmp_path / "out" / "grades.csv").exists()


def test_new_gradebook_without_the_venv_on_path(tmp_path, monkeypatch):
    """Can the grader write a gradebook that does not exist yet when .venv/bin is not on PATH (nbgrader's alembic)?"""
    import nbgrader.api

    from autograder.exports.gradebook import write_trusted_scores

    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    # nbgrader's own stamp, as a process that never installed the grader's would have it (the command is not found)
    monkeypatch.setattr(nbgrader.api, "get_alembic_version",
                        lambda: nbgrader.api.sp.check_output(["alembic", "heads"]).decode())
    notes = write_trusted_scores(f"sqlite:///{tmp_path / 'gradebook.db'}", ASSIGNMENT, {"ann": {}})
    assert "is not in the gradebook" in notes[0] and (tmp_path / "gradebook.db").is_file()


def test_the_collect_steps_notices_reach_the_students_log(tiny):
    """Does what the collect step told the instructor of a student (a notebook not handed in, a renamed copy taken)
    travel with that student's task to the worker and into their lines of the instructor's log?"""
    from autograder.collecting.collect import Collected
    from autograder.grading.cohort import run_task, task_for

    said = ["05_synthesizer.ipynb was not handed in", "took '02 (1).ipynb' as 02_finetune_without_pretraining.ipynb"]
    result = run_task(task_for(Collected("ann", None, ["no notebooks"], {}, notices=said)), tiny["settings"], {})
    assert [line for line in result.log if line.startswith("the collect step: ")] == \
        [f"the collect step: {line}" for line in said]
