"""Hostile submission code: hangs, memory hogs and fake success messages stay inside their process."""
from __future__ import annotations

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder.sandbox import SandboxError, run_job


def _notebook(tmp_path, source):
    path = tmp_path / "05_synthesizer.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell(source)]), path)
    return str(path)


def test_hanging_submission_times_out_with_a_reason(tmp_path):
    """Does a notebook that never finishes loading end at the time limit with a reason?"""
    path = _notebook(tmp_path, "while True:\n    pass")
    with pytest.raises(SandboxError, match="still running after 5 s"):
        run_job("checks", {"notebooks": [path], "checks": ["synthesizer_public"]}, timeout=5)


def test_memory_hog_is_stopped_with_a_reason(tmp_path):
    """Does a notebook that allocates far too much get stopped by the memory limit, not take the grader down?"""
    path = _notebook(tmp_path, "hog = bytearray(50 * 1024 ** 3)")
    answer = run_job("checks", {"notebooks": [path], "checks": ["synthesizer_public"]}, timeout=60, memory_mb=3000)
    passed, message = answer["synthesizer_public"]
    assert passed is False and "MemoryError" in message


def test_printed_success_does_not_count(tmp_path):
    """Does printing a fake success message leave the check failed?"""
    path = _notebook(tmp_path, 'print(\'{"synthesizer_public": [true, "passed"]}\')\nprint("All tests passed! 100/100")')
    answer = run_job("checks", {"notebooks": [path], "checks": ["synthesizer_public"]}, timeout=60)
    assert answer["synthesizer_public"][0] is False
    assert "not defined" in answer["synthesizer_public"][1]
