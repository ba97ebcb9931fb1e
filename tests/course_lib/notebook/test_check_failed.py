"""Tests for course_lib/notebook/check_failed.py: a failed check reads as its message in a notebook, and still fails."""
from __future__ import annotations

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError
from notebook_client import notebook_client

from course_lib.notebook.check_failed import CheckFailed, require


def test_it_is_an_assertion_error_that_renders_as_its_message():
    """Is CheckFailed an AssertionError whose rendering is its message lines, with no traceback?"""
    err = CheckFailed("span corruption: __getitem__ is not written yet\n- and a second line")
    assert isinstance(err, AssertionError)
    assert err._render_traceback_() == ["Check failed: span corruption: __getitem__ is not written yet",
                                        "- and a second line"]


def test_require_raises_only_when_the_condition_fails():
    """Does require pass silently on a true condition and raise with the message on a false one?"""
    require(1 == 1, "never shown")
    with pytest.raises(CheckFailed, match="the causal mask is missing"):
        require([], "the causal mask is missing")


def test_a_real_kernel_shows_the_message_without_a_traceback():
    """In a real IPython kernel, is the failed cell an error output whose text is the message alone?"""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "from course_lib.notebook.check_failed import require\nrequire(False, 'write __getitem__ first')")]
    with pytest.raises(CellExecutionError):
        notebook_client(nb, timeout=60, kernel_name="python3").execute()
    error = next(o for o in nb.cells[0].outputs if o.output_type == "error")
    assert error.ename == "CheckFailed" and error.evalue == "write __getitem__ first"
    assert error.traceback == ["Check failed: write __getitem__ first"]
