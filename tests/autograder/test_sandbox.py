"""Hostile submission code: hangs, memory hogs, fake success and forged answers stay inside their process."""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder.grade import CODE_POINTS, grade_code
from autograder.sandbox import SandboxError, run_job

from conftest import REPO

NB = "05_synthesizer.ipynb"


def _notebook(tmp_path, source):
    path = tmp_path / "05_synthesizer.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell(source)]), path)
    return path


def _reasons(tmp_path, source, **limits):
    parts = grade_code([_notebook(tmp_path, source)], **{"timeout": 60, "memory_mb": 4096, **limits})
    assert [p.part for p in parts] == list(CODE_POINTS)
    return {p.part: (p.points, p.reason) for p in parts}


def test_hanging_submission_times_out_with_a_reason(tmp_path):
    """Does a notebook that never finishes loading end at the time limit, every check saying so?"""
    reasons = _reasons(tmp_path, "while True:\n    pass", timeout=5)
    assert all(points == 0 and "still running after 5 s" in why for points, why in reasons.values())


def test_processes_a_submission_starts_die_with_it(tmp_path):
    """Does a timed-out submission's background process get killed too, instead of running on after grading?"""
    # a folder the confined user can reach and write (tmp_path lies under root's private pytest folder)
    shared = Path(tempfile.mkdtemp(prefix="sandbox-test-"))
    os.chmod(shared, 0o777)
    marker = shared / "still_alive"
    child = f"import time, pathlib; time.sleep(6); pathlib.Path({str(marker)!r}).touch()"
    source = f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', {child!r}])\nwhile True:\n    pass"
    reasons = _reasons(tmp_path, source, timeout=3)
    assert all(points == 0 and "still running" in why for points, why in reasons.values())
    time.sleep(8)
    assert not marker.exists()
    shutil.rmtree(shared)


def test_memory_hog_is_stopped_with_a_reason(tmp_path):
    """Does a notebook that allocates far too much get stopped by the memory limit, not take the grader down?"""
    reasons = _reasons(tmp_path, "hog = bytearray(50 * 1024 ** 3)", memory_mb=3000)
    points, why = reasons["synthesizer_public"]
    assert points == 0 and "MemoryError" in why


def test_printed_success_does_not_count(tmp_path):
    """Does printing a fake success message leave every check failed?"""
    reasons = _reasons(tmp_path, 'print(\'{"synthesizer_public": {"report": "passed"}}\')\nprint("All tests passed!")')
    assert all(points == 0 for points, _ in reasons.values())
    assert "not defined" in reasons["synthesizer_public"][1]


def test_forged_answer_file_does_not_count(tmp_path):
    """Does a notebook that writes its own 'all passed' answer file and exits still get zero everywhere?"""
    forge = ("import json, os, sys\n"
             "json.dump({name: {'report': {'passed': True, 'subclass': True, 'pair': True}} for name in "
             f"{list(CODE_POINTS)!r}}}, open(sys.argv[3], 'w'))\n"
             "os._exit(0)")
    reasons = _reasons(tmp_path, forge)
    assert all(points == 0 for points, _ in reasons.values()), reasons


def test_crashing_job_reports_why(tmp_path):
    """Does a job whose process dies at once come back as a SandboxError with the last line it printed?"""
    with pytest.raises(SandboxError, match="crashed"):
        run_job("no-such-job", {}, timeout=30)


@pytest.mark.skipif(not (hasattr(os, "geteuid") and os.geteuid() == 0), reason="confinement needs root on Linux")
def test_hidden_paths_are_out_of_sight(tmp_path):
    """Can submission code in the sandbox read a hidden file (the test answers) or a reference solution? (no)"""
    secret = tmp_path / "grader_only"
    secret.mkdir()
    (secret / "birth_test.tsv").write_text("Where was X born?\tNowhere\n")
    probe = (f"for path in [{str(secret / 'birth_test.tsv')!r}, {str(REPO / 'solutions' / 'a5' / NB)!r}]:\n"
             "    try:\n        open(path).read()\n        raise RuntimeError('LEAKED ' + path)\n"
             "    except OSError as err:\n        print(type(err).__name__)\n"
             "raise RuntimeError('blocked')")
    notebook = tmp_path / "nb" / "05_synthesizer.ipynb"
    notebook.parent.mkdir()
    nbformat.write(new_notebook(cells=[new_code_cell(probe)]), notebook)
    parts = grade_code([notebook], timeout=60, memory_mb=4096, hidden=[secret])
    reason = parts[0].reason
    assert "blocked" in reason and "LEAKED" not in reason, reason
