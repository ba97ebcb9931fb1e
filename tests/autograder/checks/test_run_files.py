"""The run parts by name (``run_files``) serve the steps that only read files, without importing torch."""
from __future__ import annotations

import subprocess
import sys

from conftest import REPO

from autograder.checks import registry, run_files

# what the commands that start the file-reading steps import (the steps' fork servers load what their units need)
READERS = ("autograder.__main__", "autograder.collecting.flags", "autograder.exports.similarity",
           "autograder.exports.report", "autograder.nbgrader_glue.feedback", "autograder.nbgrader_glue.autograde",
           "autograder.nbgrader_glue.release_feedback", "autograder.nbgrader_glue.setup")


def test_the_file_reading_steps_import_no_torch():
    """Does importing what the autograde, report, similarity and feedback commands import leave torch unimported
    (about 1 CPU-s a process)?"""
    code = f"import sys; sys.path[:0] = [{str(REPO)!r}]\nimport " + ", ".join(READERS) + \
        "\nprint(sorted(m for m in sys.modules if m == 'torch' or m.startswith('autograder.checks.registry')))"
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]", done.stdout


def test_the_collect_units_fork_server_loads_torch_for_them():
    """Does the collect step preload torch, which its units' params sketches use, so no unit imports it itself?"""
    from autograder.collecting.cohort import COLLECT

    assert "torch" in COLLECT.preload


def test_each_run_part_needs_the_checks_of_the_notebooks_it_runs():
    """Does each run part need checks of exactly the notebooks whose code it runs?"""
    for part in run_files.RUN_PARTS:
        assert {g[:2] for g in registry.needs(part)} == set(part.code_of), part.name
