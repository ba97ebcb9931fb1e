"""The student bundle: the release notebooks and course_lib, nothing of the grader's.

    python -m autograder bundle --out dist/

Writes ``dist/attention-course-student/`` and a zip of it. Left out on purpose:
autograder/ (hidden checks), solutions/, tests/, benchmarks/, any answers file.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NAME = "attention-course-student"
# what a student's copy must never hold (checked on every file written)
FORBIDDEN_TEXT = ("BEGIN HIDDEN TESTS", "### BEGIN SOLUTION", "autograder.hidden_checks")
FORBIDDEN_FILES = ("birth_test.tsv", "world.json")  # the answers, and the random seed that remakes them

STUDENT_README = """# Self-attention, Transformers and pretraining: student copy

Set up once (Python 3.11):

```bash
python3 -m venv .venv
.venv/bin/pip install -e .            # torch is pinned to the CPU wheel torch=={torch}
.venv/bin/pip install jupyterlab      # or open the notebooks in VS Code with this .venv
.venv/bin/python -m jupyter lab notebooks/a5
```

Work through `notebooks/a5/` in order. Each graded cell has public checks you can
run as often as you like; hidden checks run only when your work is graded.
Training cells use `COURSE_PRESET` (default `cpu`: minutes on a laptop; `gpu` for the
handout's exact runs). Hand in the notebooks and, for the training parts, the params
and predictions files your runs wrote to `outputs/`.
"""


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
    torch_pin = re.search(r'"torch==([^"]+)"', (REPO / "pyproject.toml").read_text()).group(1)
    (folder / "README.md").write_text(STUDENT_README.replace("{torch}", torch_pin), encoding="utf-8")
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
