"""The student bundle: the release notebooks and course_lib, nothing of the grader's.

    python -m autograder bundle --out dist/

Writes ``dist/attention-course-student/`` and a zip of it. Left out on purpose:
autograder/ (hidden checks), solutions/, tests/, benchmarks/, any answers file.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

from course_lib.layout import GRADER_ONLY_FILES, REPO

NAME = "attention-course-student"
# what a student's copy must never hold (checked on every file written)
FORBIDDEN_TEXT = ("BEGIN HIDDEN TESTS", "### BEGIN SOLUTION", "autograder.hidden_checks")
FORBIDDEN_FILES = GRADER_ONLY_FILES  # the answers, and the world record whose random seed remakes them

# the student guide, word for word: the copy's README and `make student` say the same thing
STUDENT_GUIDE = REPO / "docs" / "students.md"


def student_readme() -> str:
    """The student guide under the copy's own title."""
    body = STUDENT_GUIDE.read_text(encoding="utf-8").split("\n", 1)[1]  # after its "# For students"
    return ("# Self-attention, Transformers and pretraining: student copy\n\n"
            "The course's student guide. In this copy, follow \"In the student copy\" below.\n" + body)


def _pyproject() -> str:
    """The project file with course_lib only, no grader and no test extras."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    text = re.sub(r'packages = \[[^\]]*\]', 'packages = ["course_lib"]', text)
    text = re.sub(r'\n    "nbgrader==[^"]*",', "", text)
    text = re.sub(r"\n# keep in step with environment.yml[^\n]*", "", text)
    text = re.sub(r"\[project.optional-dependencies\].*?\n\n", "", text, flags=re.S)
    text = re.sub(r"\[tool.pytest.ini_options\].*", "", text, flags=re.S)
    return text.rstrip() + "\n"


def build_bundle(out: str | Path) -> Path:
    """Write the student folder and its zip into ``out``; returns the zip's path."""
    out = Path(out)
    folder = out / NAME
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    shutil.copytree(REPO / "course_lib", folder / "course_lib", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copytree(REPO / "notebooks", folder / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    (folder / "pyproject.toml").write_text(_pyproject(), encoding="utf-8")
    (folder / "README.md").write_text(student_readme(), encoding="utf-8")
    problems = bundle_problems(folder)
    if problems:
        shutil.rmtree(folder)
        raise RuntimeError("the student bundle would leak grader material: " + "; ".join(problems))
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
