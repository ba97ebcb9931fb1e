"""Turn a notebook's code cells into an importable module.

Used by the runs (to take a student's graded parts), by the tests (to load the
reference solutions) and by the grader. Cells that train, explore or test are
skipped, so importing is quick and has no side effects beyond definitions:
  - cells tagged ``training``, ``explore`` or ``skip-import``;
  - nbgrader test cells (graded, not a solution);
  - IPython magics and shell escapes (lines starting with ``%`` or ``!``).
A cell that raises NotImplementedError (an answer not written yet) is skipped and
listed in the module's ``__not_written__``; any other error stops the load.
"""
from __future__ import annotations

import ast
import sys
import types
from collections.abc import Iterable
from pathlib import Path

import nbformat

SKIP_TAGS = frozenset({"training", "explore", "skip-import"})


class NotebookLoadError(RuntimeError):
    """A notebook could not be read, parsed or executed; the message names the cell."""


def _cell_label(path: Path, index: int, cell) -> str:
    grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    return f"{path.name} cell {index}" + (f" ({grade_id})" if grade_id else "")


def importable_cells(nb, skip_tags: Iterable[str] = SKIP_TAGS) -> list[tuple[int, object, str]]:
    """(index, cell, source) for the code cells that make up the module."""
    skip_tags = set(skip_tags)
    cells = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        meta = cell.get("metadata", {})
        if skip_tags & set(meta.get("tags", [])):
            continue
        grading = meta.get("nbgrader", {})
        if grading.get("grade") and not grading.get("solution"):
            continue  # an autograder test cell
        lines = [ln for ln in cell.source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
        cells.append((index, cell, "\n".join(lines)))
    return cells


def read_notebook(path: str | Path):
    path = Path(path)
    if not path.is_file():
        raise NotebookLoadError(f"notebook not found: {path}")
    try:
        return nbformat.read(path, as_version=4)
    except Exception as err:  # bad JSON, wrong schema
        raise NotebookLoadError(f"{path} is not a readable notebook: {err}") from err


def load_notebooks(paths: Iterable[str | Path], module_name: str = "student_notebooks",
                   skip_tags: Iterable[str] = SKIP_TAGS) -> types.ModuleType:
    """Execute the importable cells of several notebooks, in order, into one module."""
    paths = [Path(p) for p in paths]
    if not paths:
        raise NotebookLoadError("no notebooks given")
    module = types.ModuleType(module_name, f"code cells of {', '.join(p.name for p in paths)}")
    module.__file__ = str(paths[-1])
    module.__not_written__ = []  # labels of cells that raised NotImplementedError
    sys.modules[module_name] = module  # so classes defined in cells pickle (DataLoader workers)
    for path in paths:
        nb = read_notebook(path)
        for index, cell, source in importable_cells(nb, skip_tags):
            label = _cell_label(path, index, cell)
            try:
                code = compile(ast.parse(source, filename=label), label, "exec")
            except SyntaxError as err:
                raise NotebookLoadError(f"{label}: syntax error on line {err.lineno}: {err.msg}") from err
            try:
                exec(code, module.__dict__)
            except NotImplementedError:
                # a top-level answer cell not written yet: the rest of the notebook still loads
                module.__not_written__.append(label)
            except Exception as err:
                raise NotebookLoadError(f"{label}: {type(err).__name__}: {err}") from err
    return module


def load_notebook(path: str | Path, module_name: str = "student_notebook",
                  skip_tags: Iterable[str] = SKIP_TAGS) -> types.ModuleType:
    return load_notebooks([path], module_name, skip_tags)


def notebook_paths(target: str | Path) -> list[Path]:
    """A notebook file, or every ``NN_*.ipynb`` of a folder in order."""
    target = Path(target)
    if target.is_dir():
        paths = sorted(p for p in target.glob("*.ipynb") if not p.name.startswith("."))
        if not paths:
            raise NotebookLoadError(f"no notebooks in {target}")
        return paths
    if not target.exists():
        raise NotebookLoadError(f"notebook not found: {target}")
    return [target]
