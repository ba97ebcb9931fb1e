"""Notebook cells run as Jupyter runs them: by IPython's own InteractiveShell, with side effects made inert.

A cell a student's kernel runs (``display(...)``, ``%%time``, ``files = !ls``, ``obj?``,
a continuation line that starts with ``%``, a top-level ``await``) must load wherever the
course loads notebooks: in the grader's sandbox, in a notebook's training cell that
loads the earlier notebooks, in the tests. So cells go through IPython's input
transformers and ``run_cell``, never through a parser of our own.

What a cell may do to the world is cut down to what defining things needs:
  - ``%time``, ``%%time``, ``%%capture`` run as IPython runs them (their body defines
    things); ``%timeit``, ``%%timeit``, ``%prun`` and ``%%prun`` run their statement once,
    like ``%time`` (no report file is written);
  - ``%%writefile`` (and its alias ``%%file``) writes its file as IPython does, into the
    working folder, so a later cell can import the helper it holds, as under Run All (when
    grading, that folder is the sandbox's own scratch: ``autograder.inside.job``);
  - every other magic (``%%bash``, ``%pip``, ``%run``, ``%matplotlib``, ``obj?`` ...) and
    every shell escape (``!cmd``, ``x = !cmd``) does nothing and says so on standard output
    (the instructor's log, when grading); ``x = !cmd`` gets an empty list.
Each cell gets its own file name in tracebacks (``02_x.ipynb cell 5 (02-glue)``), so an
error can be placed in its notebook and cell.
"""
from __future__ import annotations

import sys
import types

from IPython.core.compilerop import CachingCompiler
from IPython.core.interactiveshell import ExecutionResult, InteractiveShell
from IPython.utils.text import SList
from traitlets.config import Config

# magics that run exactly as in IPython: timing and capturing run their body, writefile saves a helper for later cells
RUN_AS_IS = frozenset({"time", "capture", "writefile", "file"})
# magics whose statement runs once under %time (no timing loops, no profiler report files),
# with their options as IPython's own magic parses them
RUN_ONCE = {"timeit": "n:r:tcp:qo", "prun": "D:l:rs:T:q"}


class _LabelCompiler(CachingCompiler):
    """IPython's compiler, naming each cell's code by the label the loader gives it."""

    label: str | None = None

    def get_code_name(self, raw_code: str, transformed_code: str, number: int) -> str:
        return self.label or super().get_code_name(raw_code, transformed_code, number)


class CellShell(InteractiveShell):
    """An InteractiveShell of its own (never the running kernel's), with magics and shell escapes inert."""

    def run_line_magic(self, magic_name: str, line: str, _stack_depth: int = 1):
        if magic_name in RUN_AS_IS:
            return super().run_line_magic(magic_name, line, _stack_depth + 1)
        if magic_name in RUN_ONCE:
            return super().run_line_magic("time", self._statement(magic_name, line), _stack_depth + 1)
        print(f"[course loader] %{magic_name} not run here (magics other than %time, %timeit, %prun and %%capture "
              "are inert)")
        return None

    def run_cell_magic(self, magic_name: str, line: str, cell: str):
        if magic_name in RUN_AS_IS:
            return super().run_cell_magic(magic_name, line, cell)
        if magic_name in RUN_ONCE:  # the line is setup code, run before the timed body
            setup = self._statement(magic_name, line)
            return super().run_cell_magic("time", "", f"{setup}\n{cell}" if setup.strip() else cell)
        print(f"[course loader] %%{magic_name} cell not run here (magics other than %%time, %%timeit, %%prun, "
              "%%capture and %%writefile are inert)")
        return None

    def _statement(self, magic_name: str, line: str) -> str:
        """The statement of a timing magic's line, its options (-n 10 -r 3 ...) removed by IPython's own parser."""
        magics = self.find_line_magic(magic_name).__self__
        _, statement = magics.parse_options(line, RUN_ONCE[magic_name], posix=False, strict=False,
                                            preserve_non_opts=True)
        return statement

    def system(self, cmd: str) -> None:
        print("[course loader] shell command not run here (! lines are inert)")

    def getoutput(self, cmd: str, split: bool = True, depth: int = 0) -> SList:
        print("[course loader] shell command not run here (x = !cmd gives an empty list)")
        return SList()

    def showtraceback(self, exc_tuple=None, *args, **kwargs):
        etype = (exc_tuple or sys.exc_info())[0]
        if isinstance(etype, type) and issubclass(etype, NotImplementedError):
            return None  # not written yet: the loader lists it; a traceback is noise
        return super().showtraceback(exc_tuple, *args, **kwargs)

    def ask_exit(self) -> None:
        self.exit_now = True  # exit() in a cell: nothing to leave here


def new_shell(module: types.ModuleType) -> CellShell:
    """A shell whose namespace is ``module`` (registered in sys.modules, so its classes pickle)."""
    config = Config()
    config.HistoryManager.enabled = False  # no history database written anywhere
    config.InteractiveShell.colors = "NoColor"  # tracebacks go to logs, not terminals
    config.InteractiveShell.xmode = "Plain"
    return CellShell(config=config, user_module=module, compiler_class=_LabelCompiler)


def run_cell(shell: CellShell, source: str, label: str) -> ExecutionResult:
    """Run one cell as IPython would, its code named ``label``; the result says whether and how it failed."""
    shell.compile.label = label
    try:
        return shell.run_cell(source, store_history=False, silent=True)
    finally:
        shell.compile.label = None
