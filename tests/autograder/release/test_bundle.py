"""The student bundle: a fresh release, course_lib and the course's data; nothing of the grader's, no one's answers."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile

import nbformat
import pytest
from conftest import REPO

from autograder.release.bundle import NAME, README, BundleError, build_bundle, bundle_problems, fresh_release
from course_lib import layout

# a script run in a folder that is not the checkout: the editable install's finder removed, that folder first
ISOLATED = ("import sys\n"
            "sys.meta_path = [f for f in sys.meta_path if 'editable' not in getattr(f, '__module__', '')]\n"
            "from pathlib import Path\n"
            "sys.path = [{root!r}] + [p for p in sys.path if p and Path(p).resolve() != Path({repo!r})]\n")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory, world_dir):
    """The bundle as the instructor makes it in their course folder: `bundle --out dist/`, relative to it."""
    from autograder.__main__ import main

    course = tmp_path_factory.mktemp("course")
    in_checkout = (REPO / "dist").exists()
    saved = os.getcwd()
    os.chdir(course)
    try:
        assert main(["bundle", "--out", "dist/", "--data-dir", str(world_dir), "--preset", "smoke"]) == 0
    finally:
        os.chdir(saved)
    assert in_checkout or not (REPO / "dist").exists()  # nothing written into the checkout instead
    return course / "dist" / f"{NAME}.zip", course / "dist" / NAME


def _isolated(root, body: str, cwd) -> subprocess.CompletedProcess:
    script = ISOLATED.format(root=str(root), repo=str(REPO)) + body
    return subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_bundle_holds_a_fresh_release_course_lib_and_the_course_data(bundle, world_dir):
    """Does the zip hold every release notebook (no outputs), course_lib, the course's student data and preset, the
    student-copy README, and no grader file, hidden test or answer?"""
    archive, folder = bundle
    names = set(zipfile.ZipFile(archive).namelist())
    for notebook in (REPO / "solutions" / "a5").glob("*.ipynb"):
        assert f"{NAME}/notebooks/a5/{notebook.name}" in names
        released = nbformat.read(folder / "notebooks" / "a5" / notebook.name, as_version=4)
        assert not any(c.get("outputs") for c in released.cells if c.cell_type == "code"), notebook.name
    assert f"{NAME}/course_lib/gpt/model.py" in names
    for name in layout.STUDENT_DATA_FILES:
        assert (folder / "course_data" / name).read_bytes() == (world_dir / name).read_bytes()
    assert json.loads((folder / "course_data" / "course.json").read_text()) == {"preset": "smoke"}
    assert not [n for n in names if n.split("/")[1] in ("autograder", "solutions", "tests", "benchmarks")]
    assert not [n for n in names if n.rsplit("/", 1)[-1] in layout.GRADER_ONLY_FILES]
    assert bundle_problems(folder) == []
    assert "nbgrader" not in (folder / "pyproject.toml").read_text()
    assert (folder / "README.md").read_text() == README.read_text()


def test_a_release_nbgrader_cannot_make_is_refused_with_nbgraders_reason(tmp_path):
    """When nbgrader cannot release the assignment, does the error say nbgrader's own reason and where the release
    was to go, not the tail of its log?"""
    with pytest.raises(BundleError) as refused:
        fresh_release("no-such-assignment", tmp_path / "notebooks")
    assert "No notebooks were matched" in str(refused.value) and str(tmp_path / "notebooks") in str(refused.value)


def test_bundle_problems_catch_a_leak(tmp_path):
    """Would a solution region or an answers file in the student folder be caught?"""
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "x.ipynb").write_text('{"source": "### BEGIN SOLUTION"}')
    (tmp_path / "birth_test.tsv").write_text("Q\tA\n")
    assert len(bundle_problems(tmp_path)) == 2


def test_a_student_copy_trains_on_the_course_data_with_the_course_preset(bundle):
    """Unzipped, with no setting of their own, do the notebooks load, read course_data/, train with the course's
    preset and write the graded run files beside the notebooks (what a student hands in)?"""
    _, folder = bundle
    body = ("import course_lib\n"
            f"assert course_lib.__file__.startswith({str(folder)!r}), course_lib.__file__\n"
            "try:\n    import autograder\nexcept ModuleNotFoundError:\n    pass\n"
            "else:\n    raise SystemExit('the grader is importable from the bundle')\n"
            "from course_lib.notebook import env\n"
            "from course_lib.loader.load import load_notebooks, notebook_paths\n"
            "parts = load_notebooks(notebook_paths('.'), errors='record')\n"
            "print(env.DATA_DIR, env.PRESET, env.OUT_DIR, len(parts.__not_written__))\n")
    result = _isolated(folder, body, folder / "notebooks" / "a5")
    assert result.returncode == 0, result.stderr[-2000:]
    data_dir, preset, out_dir, not_written = result.stdout.split()
    assert (data_dir, preset, out_dir) == (str(folder / "course_data"), "smoke", str(folder / "notebooks/a5/outputs"))
    assert int(not_written) > 0


def test_a_bundle_made_after_make_student_ships_no_answer(tmp_path, world_dir):
    """When the instructor has tried the student path (answers and outputs in notebooks/a5), does the bundle still
    ship the blank release only?"""
    checkout = tmp_path / "checkout"
    for part in ("course_lib", "autograder", "solutions", "docs"):
        shutil.copytree(REPO / part, checkout / part, ignore=shutil.ignore_patterns("__pycache__", "outputs"))
    for name in ("nbgrader_config.py", "pyproject.toml"):
        shutil.copy(REPO / name, checkout / name)
    tried = checkout / "notebooks" / "a5"
    shutil.copytree(REPO / "solutions" / "a5", tried)  # what make student leaves: answers typed in, runs written
    (tried / "outputs").mkdir()
    (tried / "outputs" / "vanilla.model.params").write_bytes(b"params")
    body = ("from autograder.__main__ import main\n"
            f"raise SystemExit(main(['bundle', '--out', {str(tmp_path / 'dist')!r}, "
            f"'--data-dir', {str(world_dir)!r}]))\n")
    result = _isolated(checkout, body, checkout)
    assert result.returncode == 0, result.stderr[-2000:]
    shipped = tmp_path / "dist" / NAME
    assert bundle_problems(shipped) == []
    assert not (shipped / "notebooks" / "a5" / "outputs").exists()
    for path in (shipped / "notebooks" / "a5").glob("*.ipynb"):
        assert "### BEGIN SOLUTION" not in path.read_text() and "raise NotImplementedError" in \
            (shipped / "notebooks" / "a5" / "03_span_corruption.ipynb").read_text()


def test_a_bundle_without_the_course_data_warns_and_one_with_answers_is_refused(tmp_path, world_dir, world_answers):
    """Does bundling warn when no data folder is given, and refuse a data folder whose test questions hold answers?"""
    from autograder.__main__ import main

    polluted = tmp_path / "polluted"
    shutil.copytree(world_dir, polluted)
    shutil.copy(world_answers, polluted / layout.TEST_INPUTS)
    assert main(["bundle", "--out", str(tmp_path / "dist"), "--data-dir", str(polluted)]) == 2
    assert not (tmp_path / "dist" / NAME).exists()


def test_a_student_who_follows_the_readme_keeps_every_run_point(tmp_path):
    """A student who writes the reference's answers into the unzipped notebooks and runs the training cells with no
    setting of their own (the course's data and preset, as the README says): does the grader, on the course's own
    world (not the public default one), give every run split its points?"""
    from conftest import SOLUTIONS

    from autograder.__main__ import main
    from autograder.checks import run_files
    from course_lib.world import write_world

    answers = tmp_path / "grader_only" / layout.TEST_ANSWERS
    answers.parent.mkdir()
    world_dir = write_world(tmp_path / "course-world", seed=7, answers_path=answers)[layout.WIKI].parent
    world_answers = answers
    build_bundle(tmp_path / "dist", world_dir, preset="smoke")
    unzipped = tmp_path / "dist" / NAME
    folder = tmp_path / "submitted" / "student" / "a5"
    shutil.copytree(unzipped, tmp_path / "copy")
    for notebook in SOLUTIONS.glob("*.ipynb"):  # the answers written
        shutil.copy(notebook, tmp_path / "copy" / "notebooks" / "a5" / notebook.name)
    body = ("from course_lib.notebook import env\n"
            "from course_lib.loader.load import load_notebooks, notebook_paths\n"
            "from course_lib.runs import RUNS\n"
            "parts = vars(load_notebooks(notebook_paths('.')))\n"
            "for name in RUNS:  # what the training cells do, in the notebooks' order\n"
            "    assert env.run_or_load(name, parts) is not None, name\n")
    result = _isolated(tmp_path / "copy", body, tmp_path / "copy" / "notebooks" / "a5")
    assert result.returncode == 0, result.stderr[-2000:]
    shutil.copytree(tmp_path / "copy" / "notebooks" / "a5", folder)  # the folder the README says to hand in
    out = tmp_path / "grades"
    assert main(["grade", str(tmp_path / "submitted"), "--out", str(out), "--data-dir", str(world_dir), "--answers",
                 str(world_answers), "--preset", "smoke", "--workers", "1"]) == 0
    parts = {p["part"]: p for p in json.loads((out / "reasons.json").read_text())["student"]}
    runs = {label: parts[label] for label in run_files.RUN_CELLS}
    assert all(p["points"] == p["max_points"] > 0 for p in runs.values()), runs
