"""The fork servers of steps whose units read the gradebook: nbgrader imported and its classes set up once."""
from __future__ import annotations

import subprocess
import sys

from autograder.exports.gradebook_preload import GRADEBOOK_PRELOAD
from autograder.exports.report import REPORT_STEP
from autograder.nbgrader_glue.feedback import PAGE_PRELOAD

READY = """
import importlib, sys
before = "nbgrader.api" in sys.modules
for name in {modules!r}:  # what the step's fork server imports, passing over a driver not installed
    try:
        importlib.import_module(name)
    except ImportError:
        pass
loaded = ["nbgrader.api" in sys.modules, "sqlalchemy.dialects.sqlite.pysqlite" in sys.modules]
from nbgrader.api import Grade
print(before, *loaded, Grade.__mapper__.configured)
"""


def _ready_after(modules: tuple[str, ...]) -> list[str]:
    """Whether nbgrader's api was loaded before, and after importing ``modules``: it, the SQLite driver, the set-up."""
    done = subprocess.run([sys.executable, "-c", READY.format(modules=modules)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


def test_the_report_and_page_steps_preload_the_gradebook():
    """Do the report's and the feedback pages' steps name the gradebook's preload for their fork servers?"""
    assert set(GRADEBOOK_PRELOAD) <= set(REPORT_STEP.preload) and set(GRADEBOOK_PRELOAD) <= set(PAGE_PRELOAD)


def test_a_fork_server_with_the_preload_has_nbgrader_imported_and_its_classes_set_up():
    """After importing the report step's preload in a fresh interpreter (as its fork server does), are nbgrader's api
    and the SQLite driver loaded and the gradebook's classes set up, so that no student's unit does it again; and does
    naming the preload import none of it?"""
    assert _ready_after(REPORT_STEP.preload) == ["False", "True", "True", "True"]
    names_only = subprocess.run([sys.executable, "-c", "import sys\nimport autograder.exports.gradebook_preload\n"
                                 "print('nbgrader' in sys.modules)"], capture_output=True, text=True, timeout=60)
    assert names_only.stdout.split() == ["False"], names_only.stderr[-2000:]
