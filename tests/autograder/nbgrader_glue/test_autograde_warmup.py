"""The autograde step's fork server compiles the notebook schema's validators once, for every student's nbgrader."""
from __future__ import annotations

import subprocess
import sys


def test_the_fork_server_preloads_the_warmup():
    """Does the autograde step's fork server import the warm-up with the rest of its preload?"""
    from autograder.nbgrader_glue import autograde
    from autograder.units.unit import PRELOADS

    assert "autograder.nbgrader_glue.autograde_warmup" in autograde.AUTOGRADE_PRELOAD
    assert set(autograde.AUTOGRADE_PRELOAD) <= PRELOADS


def test_after_the_warmup_reading_and_checking_a_notebook_compiles_no_validator():
    """In a process that imported the warm-up, do nbformat's reader and nbconvert's check after each step find
    their validators compiled already, and does a wrong notebook still fail validation?"""
    code = """
import nbformat
from nbformat import validator
import autograder.nbgrader_glue.autograde_warmup
compiled = dict(validator.validators)
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
nbformat.reads(nbformat.writes(nb), as_version=4)
nbformat.validate(nb, relax_add_props=True)
assert validator.validators == compiled, set(validator.validators) - set(compiled)
nb.cells[0]["execution_count"] = "one"
try:
    nbformat.validate(nb)
except nbformat.ValidationError:
    print("refused")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == "refused\n", done.stderr[-2000:]
