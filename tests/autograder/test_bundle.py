"""The student bundle: everything a student needs, nothing of the grader's."""
from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest

from autograder.bundle import NAME, build_bundle, bundle_problems

from conftest import REPO


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    return build_bundle(out), out / NAME


def test_bundle_holds_the_release_and_course_lib_only(bundle):
    """Does the zip hold every release notebook and course_lib, and no grader file, hidden test or answer?"""
    archive, folder = bundle
    names = set(zipfile.ZipFile(archive).namelist())
    for notebook in (REPO / "notebooks" / "a5").glob("*.ipynb"):
        assert f"{NAME}/notebooks/a5/{notebook.name}" in names
    assert f"{NAME}/course_lib/model.py" in names
    assert not [n for n in names if n.split("/")[1] in ("autograder", "solutions", "tests", "benchmarks")]
    assert bundle_problems(folder) == []
    assert "nbgrader" not in (folder / "pyproject.toml").read_text()


def test_bundle_problems_catch_a_leak(tmp_path):
    """Would a solution region or an answers file in the student folder be caught?"""
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "x.ipynb").write_text('{"source": "### BEGIN SOLUTION"}')
    (tmp_path / "birth_test.tsv").write_text("Q\tA\n")
    assert len(bundle_problems(tmp_path)) == 2


def test_bundle_works_without_the_repo(bundle):
    """Can the bundle's course_lib load the blank release notebooks with no access to the grader's packages?"""
    _, folder = bundle
    script = (
        "import sys\n"
        "sys.meta_path = [f for f in sys.meta_path if 'editable' not in getattr(f, '__module__', '')]\n"
        # drop the repo itself but keep site-packages, which may live in the repo's .venv
        "from pathlib import Path\n"
        f"sys.path = [{str(folder)!r}] + [p for p in sys.path if p and Path(p).resolve() != Path({str(REPO)!r})]\n"
        "import course_lib\n"
        f"assert course_lib.__file__.startswith({str(folder)!r}), course_lib.__file__\n"
        "try:\n    import autograder\nexcept ModuleNotFoundError:\n    pass\n"
        "else:\n    raise SystemExit('the grader is importable from the bundle')\n"
        "from course_lib.notebook_loader import load_notebooks, notebook_paths\n"
        "parts = load_notebooks(notebook_paths('notebooks/a5'))\n"
        "print('not written:', len(parts.__not_written__))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=folder, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "not written:" in result.stdout
