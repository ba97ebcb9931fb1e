"""Tests for course_lib/notebook/not_written.py: an answer not written yet shows as one line naming it, and still
fails."""
from __future__ import annotations

import linecache

import nbformat
from notebook_client import notebook_client

from course_lib.notebook.not_written import line, unwritten


def _raised(source: str, filename: str, call: str | None = None) -> NotImplementedError:
    """The NotImplementedError that ``source`` (registered as a cell, as IPython does) raises, or ``call`` after it."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict = {}
    try:
        exec(compile(source, filename, "exec"), namespace)
        if call:
            exec(compile(call, filename + " (call)", "exec"), namespace)
    except NotImplementedError as err:
        return err
    raise AssertionError("nothing raised")


STUB = "    # YOUR CODE HERE\n    raise NotImplementedError()\n"


def test_a_function_or_method_stub_is_named():
    """Is a stub inside a function or a method named by its qualified name?"""
    err = _raised(f"def initialize_vanilla_model(mconf):\n{STUB}", "<cell 1>", "initialize_vanilla_model(None)")
    assert unwritten(err) == "initialize_vanilla_model"
    err = _raised("class SynthesizerAttention:\n    def forward(self, x):\n        # YOUR CODE HERE\n"
                  "        raise NotImplementedError()\n", "<cell 2>", "SynthesizerAttention().forward(None)")
    assert unwritten(err) == "SynthesizerAttention.forward"


def test_a_top_level_stub_is_named_by_its_placeholders():
    """Does a cell's top-level stub name the answers the cell sets to None above it (or 'this cell's answer')?"""
    err = _raised("M = q_avg = None  # None until you write your answers below\n# YOUR CODE HERE\n"
                  "raise NotImplementedError()\n", "<cell 3>")
    assert unwritten(err) == "M and q_avg"
    assert line("M and q_avg").startswith("M and q_avg are not written yet: write them under # YOUR CODE HERE")
    err = _raised("# YOUR CODE HERE\nraise NotImplementedError()\n", "<cell 4>")
    assert unwritten(err) == "this cell's answer"
    assert line(unwritten(err)).startswith("this cell's answer is not written yet")


def test_other_not_implemented_errors_are_not_the_stub():
    """Is a NotImplementedError with a message, or raised by another line, left alone (None)?"""
    assert unwritten(_raised("raise NotImplementedError('an op this device lacks')\n", "<cell 5>")) is None
    assert unwritten(_raised("def f():\n    raise NotImplementedError\nf()\n", "<cell 6>")) is None
    assert unwritten(ValueError()) is None


def _run_in_kernel(*sources: str, tags=("raises-exception",)) -> list:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s, metadata={"tags": list(tags)}) for s in sources]
    notebook_client(nb, timeout=60, kernel_name="python3").execute()
    return nb.cells


def test_a_real_kernel_shows_one_line_and_the_cell_still_fails():
    """In a real kernel after importing env, is the stub's error one line naming the answer, and the
    next cell still run (raises-exception, as the release's answer cells are tagged)?"""
    cells = _run_in_kernel("from course_lib.notebook import env",
                           "q_copy = None  # None until you write your answer below\n# YOUR CODE HERE\n"
                           "raise NotImplementedError()",
                           "def f():\n    raise NotImplementedError('a library limit')\nf()",
                           "print('after')")
    error = next(o for o in cells[1].outputs if o.output_type == "error")
    assert error.ename == "NotImplementedError"
    assert error.traceback == ["q_copy is not written yet: write it under # YOUR CODE HERE, in place of "
                               "raise NotImplementedError()"]
    other = next(o for o in cells[2].outputs if o.output_type == "error")
    assert len(other.traceback) > 1 and "a library limit" in other.traceback[-1]  # a real error keeps its traceback
    assert cells[3].outputs[0].text == "after\n"


def test_outside_a_kernel_nothing_is_installed():
    """Outside a Jupyter kernel (the loader, a script, these tests) does install() leave IPython alone?"""
    from course_lib.notebook.not_written import install

    assert install() is False
