"""Turn a notebook's code cells into an importable module, running them as Jupyter does.

Used by the runs (to take a student's graded parts), by the notebooks' training cells
(to load the earlier notebooks), by the tests (to load the reference solutions) and by
the grader. Cells run through IPython (``course_lib.loader.cell_shell``): whatever a student's
kernel runs loads here too, with magics and shell escapes inert. Skipped, so that
loading is quick and has no side effects beyond definitions:
  - cells tagged ``training``, ``explore`` or ``skip-import`` (``skip_tags=RUN_ALL`` skips none:
    every cell runs in order, as Jupyter's Run All runs them; the score of record loads so);
  - nbgrader test cells (graded, not a solution): where one stands, ``at_test`` is called with
    the names as they are there, so the grader's own check runs at the test cell's place.
A cell that raises NotImplementedError (an answer not written yet) is listed in the
module's ``__not_written__`` and the rest still loads. Any other error either stops the
load (``errors="raise"``, for the course's own notebooks) or is recorded in
``__errors__`` while the rest of the notebook runs on, as nbgrader's autograde runs on
past a failing cell (``errors="record"``, for students' notebooks).
"""
from __future__ import annotations

import sys
import time
import traceback
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from course_lib.loader.cell_shell import new_shell, run_cell
from course_lib.loader.grade_ids import grade_id, repeated_ids
from course_lib.loader.notebook_file import NotebookUnreadable, read_path
from course_lib.loader.time_limit import time_limit

SKIP_TAGS = frozenset({"training", "explore", "skip-import"})
RUN_ALL: frozenset[str] = frozenset()  # skip no cell for its tags: Jupyter's Run All
IPYTHON_OUTPUTS = ("_", "__", "___")  # the displayhook's last outputs, not definitions


class NotebookLoadError(RuntimeError):
    """A notebook could not be read, or (with errors="raise") one of its cells failed; the message names the cell."""


class CellTimeout(KeyboardInterrupt):
    """A cell ran past its time limit: interrupted as Jupyter interrupts a kernel (a KeyboardInterrupt)."""


@dataclass(frozen=True)
class CellError:
    """A cell that failed while its notebook loaded (errors="record")."""

    label: str  # "02_x.ipynb cell 5 (02-glue)"
    kind: str  # the exception's type name ("SyntaxError", "CellTimeout", ...)
    line: int | None  # the line in that cell where it happened, when known


def cell_label(path: Path, index: int, cell) -> str:
    gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    return f"{path.name} cell {index}" + (f" ({gid})" if gid else "")


def is_test_cell(cell) -> bool:
    """An nbgrader test cell: a graded code cell that is not a solution."""
    grading = cell.get("metadata", {}).get("nbgrader", {})
    return cell.cell_type == "code" and bool(grading.get("grade")) and not grading.get("solution")


def importable_cells(nb, skip_tags: Iterable[str] = SKIP_TAGS) -> list[tuple[int, object, str]]:
    """(index, cell, source) for the code cells that make up the module."""
    skip_tags = set(skip_tags)
    return [(index, cell, cell.source) for index, cell in enumerate(nb.cells)
            if cell.cell_type == "code" and not is_test_cell(cell)
            and not skip_tags & set(cell.get("metadata", {}).get("tags", []))]


def check_places(nb) -> dict[int, str]:
    """cell index -> grade_id of the test cell whose check runs there: the last test cell of each grade_id (the one
    nbgrader's DeduplicateIds keeps when a copy or Split Cell repeats it)."""
    last = {grade_id(cell) or "": index for index, cell in enumerate(nb.cells) if is_test_cell(cell)}
    return {index: gid for gid, index in last.items() if gid}


def read_notebook(path: str | Path):
    """The notebook at ``path`` as Jupyter reads it, whichever editor saved it (``notebook_file``)."""
    path = Path(path)
    if not path.is_file():
        raise NotebookLoadError(f"notebook not found: {path}")
    try:
        return read_path(path).notebook
    except (NotebookUnreadable, OSError) as err:
        raise NotebookLoadError(f"{path} is not a readable notebook: {err}") from err


def _line_in(err: BaseException, label: str) -> int | None:
    """The innermost line of cell ``label`` in the error's traceback (or a syntax error's own line)."""
    if isinstance(err, SyntaxError) and err.filename == label:
        return err.lineno
    found = None
    for frame, lineno in traceback.walk_tb(err.__traceback__):
        if frame.f_code.co_filename == label:
            found = lineno
    return found


def _raise_for(err: BaseException, label: str) -> None:
    if isinstance(err, SyntaxError):
        raise NotebookLoadError(f"{label}: syntax error on line {err.lineno}: {err.msg}") from err
    raise NotebookLoadError(f"{label}: {type(err).__name__}: {err}") from err


def definitions(module: types.ModuleType, shell) -> dict:
    """The notebook's own names in ``module``: not IPython's (In, Out, get_ipython, open, ...) nor its last outputs."""
    hidden = shell.user_ns_hidden
    return {k: v for k, v in vars(module).items()
            if k not in IPYTHON_OUTPUTS and not (k in hidden and hidden[k] is v)}


def load_notebooks(paths: Iterable[str | Path], module_name: str = "student_notebooks",
                   skip_tags: Iterable[str] = SKIP_TAGS, errors: str = "raise",
                   cell_seconds: float | None = None,
                   at_test: Callable[[str, dict], None] | None = None,
                   deadline: float | None = None) -> types.ModuleType:
    """Run the importable cells of several notebooks, in order, into one module.

    ``errors`` is "raise" (a failing cell stops the load with NotebookLoadError) or "record"
    (it is listed in ``__errors__`` and the next cell runs). ``cell_seconds`` interrupts a cell
    that runs longer, as Jupyter's interrupt does (a CellTimeout, a KeyboardInterrupt: what the
    cell defined before stays), and records it like any other error, even when the cell caught
    it. ``deadline`` (a ``time.monotonic()`` time) bounds the whole load: no cell runs past it,
    the cell it cuts is recorded as a CellTimeout, and ``__out_of_time__`` names the first cell
    not run (no ``at_test`` call follows). ``at_test(grade_id, names)`` is called where each
    test cell stands (see ``check_places``), with the names defined so far. Cells that share a
    grade_id (a cell split or copied in JupyterLab) all run, in order; their labels are listed
    in ``__repeated__``, one list per grade_id.
    """
    if errors not in ("raise", "record"):
        raise ValueError(f"errors must be 'raise' or 'record', not {errors!r}")
    paths = [Path(p) for p in paths]
    if not paths:
        raise NotebookLoadError("no notebooks given")
    module = types.ModuleType(module_name, f"code cells of {', '.join(p.name for p in paths)}")
    module.__file__ = str(paths[-1])
    module.__not_written__ = []  # labels of cells that raised NotImplementedError
    module.__errors__ = []  # CellError of every other failing cell (errors="record")
    module.__repeated__ = []  # labels of the cells of each grade_id several cells hold
    module.__out_of_time__ = None  # label of the first cell the deadline kept from running
    shell = new_shell(module)  # registers module in sys.modules, so cells' classes pickle
    try:
        for path in paths:
            nb = read_notebook(path)
            module.__repeated__ += [[cell_label(path, i, nb.cells[i]) for i in indices]
                                    for indices in repeated_ids(nb.cells).values()]
            tests = check_places(nb) if at_test is not None else {}
            cells = {index: (cell, source) for index, cell, source in importable_cells(nb, skip_tags)}
            for index in sorted({*cells, *tests}):
                limit = _limit(cell_seconds, deadline)
                if limit is not None and limit <= 0:
                    module.__out_of_time__ = cell_label(path, index, nb.cells[index])
                    return module
                if index in tests:
                    at_test(tests[index], definitions(module, shell))
                    continue
                cell, source = cells[index]
                label = cell_label(path, index, cell)
                err = _run_timed(shell, source, label, limit)
                if err is None:
                    continue
                if isinstance(err, NotImplementedError):
                    module.__not_written__.append(label)  # not written yet: the rest still loads
                elif errors == "raise":
                    _raise_for(err, label)
                else:
                    module.__errors__.append(CellError(label, type(err).__name__, _line_in(err, label)))
    finally:
        sys.modules[module_name] = module  # the shell's namespace bookkeeping must not replace it
        kept = definitions(module, shell)
        for key in [k for k in vars(module) if k not in kept]:
            del module.__dict__[key]
    return module


def _limit(cell_seconds: float | None, deadline: float | None) -> float | None:
    """The next cell's limit: its own, or what is left before the deadline when that is less (None: no limit)."""
    if deadline is None:
        return cell_seconds or None
    left = deadline - time.monotonic()
    return min(cell_seconds, left) if cell_seconds else left


def _run_timed(shell, source: str, label: str, limit: float | None) -> BaseException | None:
    """Run one cell within ``limit`` seconds; its error, a CellTimeout when interrupted (even if the cell caught it)."""
    try:
        with time_limit(limit, CellTimeout) as alarm:
            result = run_cell(shell, source, label)
        err = result.error_before_exec or result.error_in_exec
    except CellTimeout as timeout:  # the alarm went off outside the cell's own code
        return timeout
    if alarm.fired and not isinstance(err, CellTimeout):  # the cell caught the interrupt: nbgrader records it too
        return CellTimeout(f"ran past {limit:g} s")
    return err


def load_notebook(path: str | Path, module_name: str = "student_notebook",
                  skip_tags: Iterable[str] = SKIP_TAGS, errors: str = "raise") -> types.ModuleType:
    return load_notebooks([path], module_name, skip_tags, errors)


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
