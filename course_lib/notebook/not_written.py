"""An answer not written yet, shown in one line: what the release's ``raise NotImplementedError()`` says in Jupyter.

nbgrader's release puts ``# YOUR CODE HERE`` and ``raise NotImplementedError()`` where each
answer goes. Running such a cell, or calling a function that still holds the stub, raises
NotImplementedError. In a Jupyter kernel (``install``, which ``course_lib.notebook.env``
calls when a notebook imports it) that error shows as one line naming what is not written
yet, instead of a traceback:

    q_copy is not written yet: write it under # YOUR CODE HERE, in place of raise NotImplementedError()

Only its look changes: the cell still fails, so nbgrader, the course's loader and Run All see
it fail. A NotImplementedError that is not the stub (a library's, or one with a
message) keeps its traceback.
"""
from __future__ import annotations

import ast
import linecache
import traceback

STUB = "raise NotImplementedError()"  # nbgrader's code stub (nbgrader_config.py)


def _stub_frame(err: BaseException):
    """(frame, line number) where ``err`` was raised, if that line is the release's stub; else None."""
    if not isinstance(err, NotImplementedError) or err.args:
        return None
    frames = list(traceback.walk_tb(err.__traceback__))
    if not frames:
        return None
    frame, lineno = frames[-1]
    line = linecache.getline(frame.f_code.co_filename, lineno, frame.f_globals).strip()
    return (frame, lineno) if line == STUB else None


def _placeholders(filename: str, before: int) -> list[str]:
    """Names a cell sets to None above its stub (``q_copy = None``): the answers it is for."""
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return []
    names = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.lineno < before and isinstance(node.value, ast.Constant) \
                and node.value.value is None:
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return names


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def unwritten(err: BaseException) -> str | None:
    """What a stub's NotImplementedError leaves unwritten: "initialize_vanilla_model",
    "SynthesizerAttention.forward", "q_copy", "M and q_avg" (the names a cell sets to None above its stub) or
    "this cell's answer"; None when ``err`` is not the release's stub."""
    found = _stub_frame(err)
    if found is None:
        return None
    frame, lineno = found
    if frame.f_code.co_name != "<module>":
        return frame.f_code.co_qualname
    names = _placeholders(frame.f_code.co_filename, lineno)
    return _and(names) if names else "this cell's answer"


def line(what: str) -> str:
    """The one line a notebook shows for an answer not written yet."""
    several = " and " in what
    return (f"{what} {'are' if several else 'is'} not written yet: write {'them' if several else 'it'} under "
            f"# YOUR CODE HERE, in place of {STUB}")


def _show(shell, etype, value, tb, tb_offset=None):
    """IPython's custom exception handler: the stub's error as one line, any other as IPython shows it."""
    what = unwritten(value)
    if what is not None:
        value._render_traceback_ = lambda: [line(what)]  # shown instead of a traceback
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)


def install() -> bool:
    """In a Jupyter kernel, show the stub's NotImplementedError as one line (True if it does so now).

    Does nothing outside a kernel (the course's loader, a terminal, the tests) or when something else already
    handles exceptions of its own in this kernel."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return False
    if NotImplementedError in shell.custom_exceptions:
        return True
    if shell.custom_exceptions:
        return False
    shell.set_custom_exc((NotImplementedError,), _show)
    return True
