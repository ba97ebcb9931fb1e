"""The student bundle: a fresh release of the notebooks, course_lib and the course's data only.

    python -m autograder bundle --out dist/ --data-dir data/course-world --preset cpu

Writes ``dist/attention-course-student/`` and a zip of it. The notebooks are released afresh from
``solutions/`` by nbgrader (``generate_assignment`` into the bundle's own folder), never copied
from ``notebooks/``: ``make student`` lets an instructor try the student path there, so it may hold
answers and outputs. The student data files (never the test answers) go to ``course_data/`` with
the preset in ``course_data/course.json``, the notebooks' default (``course_lib.layout``). Left out
on purpose: autograder/ (hidden checks), solutions/, tests/, benchmarks/, any answers file; every
file written is checked.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from course_lib import layout
from course_lib.layout import GRADER_ONLY_FILES, REPO

NAME = "attention-course-student"
# what a student's copy must never hold (checked on every file written)
FORBIDDEN_TEXT = ("BEGIN HIDDEN TESTS", "### BEGIN SOLUTION", "autograder.checks.hidden", "autograder.checks.twins")
FORBIDDEN_FILES = GRADER_ONLY_FILES  # the answers, and the world record whose seed remakes them
README = REPO / "docs" / "student_copy.md"  # the copy's README, word for word


class BundleError(RuntimeError):
    """The bundle cannot be made as asked (say why in one line)."""


def _pyproject() -> str:
    """The project file with course_lib only, no grader and no test extras."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    text = re.sub(r'include = \[[^\]]*\]', 'include = ["course_lib*"]', text)
    text = re.sub(r'\n    "nbgrader==[^"]*",', "", text)
    text = re.sub(r"\n# keep in step with environment.yml[^\n]*", "", text)
    text = re.sub(r"\[project.optional-dependencies\].*?\n\n", "", text, flags=re.S)
    text = re.sub(r"\[tool.pytest.ini_options\].*", "", text, flags=re.S)
    return text.rstrip() + "\n"


def _nbgrader_errors(log: str) -> str:
    """nbgrader's own error lines of a run (its log ends in INFO lines that say nothing useful)."""
    errors = [line.split("] ", 1)[-1] for line in log.splitlines() if "| ERROR]" in line or "| CRITICAL]" in line]
    if errors:
        return "; ".join(errors)[-500:]
    lines = log.strip().splitlines()
    return "it wrote no notebooks there" + (f" (its last line: {lines[-1][-300:]})" if lines else "")


def fresh_release(assignment: str, into: Path) -> Path:
    """nbgrader's release of ``solutions/<assignment>`` made now in ``into``; the release folder."""
    into = Path(into).absolute()  # nbgrader runs in the checkout: a relative path would land there
    with tempfile.TemporaryDirectory(prefix="bundle-release-") as tmp:
        env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        command = [sys.executable, "-m", "nbgrader", "generate_assignment", assignment, "--force",
                   f"--CourseDirectory.root={REPO}", f"--CourseDirectory.release_directory={into}",
                   f"--db=sqlite:///{Path(tmp) / 'release.db'}"]
        done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    release = into / assignment
    if done.returncode != 0 or not any(release.glob("*.ipynb")):
        raise BundleError(f"nbgrader could not release {assignment} into {release}: "
                          f"{_nbgrader_errors(done.stderr or done.stdout)}")
    return release


def _course_data(data_dir: Path, preset: str, into: Path) -> None:
    """The student files of the course's data, and the preset, into ``into`` (never the answers)."""
    from course_lib.data_files import read_birth_places
    from course_lib.presets import get_preset

    get_preset(preset)  # ValueError names the presets there are
    missing = [n for n in layout.STUDENT_DATA_FILES if not (data_dir / n).is_file()]
    if missing:
        raise BundleError(f"{data_dir} lacks {', '.join(missing)}: point --data-dir at the course's student data")
    if any(e.place is not None for e in read_birth_places(data_dir / layout.TEST_INPUTS)):
        raise BundleError(f"{data_dir / layout.TEST_INPUTS} holds answers: it must hold the questions only")
    into.mkdir(parents=True)
    for name in layout.STUDENT_DATA_FILES:
        shutil.copyfile(data_dir / name, into / name)
    (into / "course.json").write_text(json.dumps({"preset": preset}, indent=1) + "\n", encoding="utf-8")


def build_bundle(out: str | Path, data_dir: str | Path | None = None, preset: str = layout.DEFAULT_PRESET,
                 assignment: str = layout.ASSIGNMENT) -> Path:
    """Write the student folder and its zip into ``out`` (relative to the cwd); returns the zip."""
    out = Path(out).absolute()
    folder = out / NAME
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    try:
        shutil.copytree(REPO / "course_lib", folder / "course_lib",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        fresh_release(assignment, folder / "notebooks")
        if data_dir is not None:
            _course_data(Path(data_dir), preset, folder / layout.BUNDLED_DATA_DIR.name)
        (folder / "pyproject.toml").write_text(_pyproject(), encoding="utf-8")
        shutil.copyfile(README, folder / "README.md")
        problems = bundle_problems(folder)
        if problems:
            raise BundleError("the student bundle would leak grader material: " + "; ".join(problems))
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return Path(shutil.make_archive(str(out / NAME), "zip", root_dir=out, base_dir=NAME))


def bundle_problems(folder: Path) -> list[str]:
    """Grader material found in a student folder (empty: none)."""
    problems = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        relative = path.relative_to(folder)
        if path.name in FORBIDDEN_FILES or relative.parts[0] in ("autograder", "solutions", "tests"):
            problems.append(f"{relative} should not be shipped")
            continue
        text = path.read_text(encoding="utf-8", errors="ignore")
        problems += [f"{relative} contains {marker!r}" for marker in FORBIDDEN_TEXT if marker in text]
    return problems
