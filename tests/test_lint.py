"""The code reads as one project: ruff passes at 120 characters, no file is over 400 lines, and no comment names a
path or module that is not there."""
from __future__ import annotations

import ast
import importlib
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

from conftest import REPO

MAX_LINES = 400  # a module that outgrows this is two modules
CODE = ("course_lib", "autograder", "tests", "benchmarks", "hub", "tools")
# a repository path as comments write them (globs and placeholders such as <name> are left alone)
PATH = re.compile(r"(?<![\w./<-])((?:course_lib|autograder|tests|benchmarks|docs|tools|hub|solutions|notebooks|"
                  r"student_jupyter)/[\w./-]*\w)")
DOTTED = re.compile(r"(?<![\w./-])((?:course_lib|autograder)(?:\.\w+)+)")


def test_ruff_passes():
    """Does ruff (pyproject.toml's rules: pyflakes, pycodestyle's errors, 120 characters, import order) pass?"""
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]


def test_no_module_is_over_400_lines():
    """Is every module of course_lib and autograder at most 400 lines long?"""
    long = {str(p.relative_to(REPO)): n for folder in ("course_lib",
                                                       "autograder") for p in (REPO / folder).rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, long


def _prose(path: Path):
    """(line, text) of every comment and docstring of a Python file."""
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node, clean=False)
            if text:
                yield node.body[0].lineno, text


def _names_something(dotted: str) -> bool:
    """Whether ``course_lib.gpt.model.GPT`` is a module of the repository, or a name (or dataclass field) in one."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        base = REPO.joinpath(*parts[:i])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            value = importlib.import_module(".".join(parts[:i]))
            for name in parts[i:]:
                fields = getattr(value, "__dataclass_fields__", {})
                if name.endswith("_") or name in fields:  # a prefix ("twin_"), or a field without a default
                    return True
                if not hasattr(value, name):
                    return False
                value = getattr(value, name)
            return True
    return False


def test_no_comment_names_a_missing_path_or_module():
    """Does every path (``autograder/checks/hidden.py``) and module name (``course_lib.notebook.env``) that a comment
    or docstring names exist?"""
    missing = []
    for folder in CODE:
        for path in sorted((REPO / folder).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            for line, text in _prose(path):
                where = f"{path.relative_to(REPO)}:{line}"
                missing += [f"{where}: {p}" for p in PATH.findall(text) if not (REPO / p.rstrip(".")).exists()]
                missing += [f"{where}: {d}" for d in DOTTED.findall(text) if not _names_something(d.rstrip("."))]
    assert not missing, "\n".join(missing)


def _made_later(path: str) -> bool:
    """Whether ``path`` is one git ignores (made by setup or a run: ``hub/node_modules``, ``outputs/...``)."""
    return subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO).returncode == 0


def test_no_page_of_the_docs_names_a_missing_path():
    """Does every repository path the README and docs name (``course_lib/checks/span.py``, ``tests/...``) exist, or
    is it one that setup or a run makes?"""
    pages = [REPO / "README.md", REPO / "hub" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    missing = [f"{page.relative_to(REPO)}:{number}: {p}" for page in pages
               for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
               for p in PATH.findall(line) if not (REPO / p.rstrip(".")).exists() and not _made_later(p.rstrip("."))]
    assert not missing, "\n".join(missing)
