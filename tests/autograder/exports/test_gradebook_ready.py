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


# a fork server told its units' gradebook (WARM_VARIABLE) imports gradebook_ready; then a unit it forks asks a feedback
# page's questions. Prints: the variable left in the environment, whether the unit compiled anything, its answers.
WARMED = """
import hashlib, os, sys
from pathlib import Path
from autograder.exports.gradebook_preload import WARM_VARIABLE
url, path = sys.argv[1], Path(sys.argv[2])
before = hashlib.sha256(path.read_bytes()).hexdigest()
os.environ[WARM_VARIABLE] = url
import autograder.exports.gradebook_ready
from nbgrader.api import Gradebook
print(WARM_VARIABLE in os.environ, hashlib.sha256(path.read_bytes()).hexdigest() == before)
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    with Gradebook(url) as gb:
        compiled = len(gb.engine._compiled_cache)
        notebook = gb.find_submission_notebook("nb", "a5", "ann")
        answers = [gb.find_submission("a5", "ann").score, notebook.score, notebook.max_score,
                   gb.find_grade("q1", "nb", "a5", "ann").max_score, gb.find_comment("q1", "nb", "a5", "ann").comment]
        new = len(gb.engine._compiled_cache) - compiled
    os.write(write, f"{new} {answers}".encode())
    os._exit(0)
os.close(write)
print(os.read(read, 4096).decode())
os.waitpid(pid, 0)
"""


def _course_gradebook(path, monkeypatch) -> str:
    """A gradebook with one handed-in notebook of one graded cell, as autograde leaves it; its URL."""
    import nbgrader.api

    from autograder.exports.gradebook_stamp import stamp_in_process

    monkeypatch.setattr(nbgrader.api, "get_alembic_version", nbgrader.api.get_alembic_version)
    stamp_in_process()  # as the course's commands create a gradebook
    url = f"sqlite:///{path}"
    with nbgrader.api.Gradebook(url) as gb:
        gb.add_assignment("a5")
        gb.add_notebook("nb", "a5")
        gb.add_grade_cell("q1", "nb", "a5", max_score=2, cell_type="code")
        gb.add_solution_cell("q1", "nb", "a5")
        gb.add_source_cell("q1", "nb", "a5", cell_type="code", locked=False, source="x = 1")
        gb.add_student("ann")
        gb.add_submission("a5", "ann")
    return url


def test_a_fork_server_told_its_gradebook_opens_it_first_and_its_units_compile_nothing_again(tmp_path,
                                                                                             monkeypatch):
    """Does a fork server told its units' gradebook open it as it starts, writing nothing, and take the URL out of its
    environment, so that a unit it forks answers a feedback page's questions (submission, notebook, grade, comment)
    without compiling a single query?"""
    path = tmp_path / "gradebook.db"
    url = _course_gradebook(path, monkeypatch)
    done = subprocess.run([sys.executable, "-c", WARMED, url, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == ["False True", "0 [0.0, 0.0, 2.0, 2.0, None]"], done.stdout + done.stderr


def test_a_gradebook_the_fork_server_cannot_open_is_said_and_left_to_the_units(tmp_path):
    """Does a fork server told a gradebook it cannot open (a file in a folder that is not there) say so in one line
    and go on, so that its units open it themselves?"""
    done = subprocess.run([sys.executable, "-c", "import os\nfrom autograder.exports.gradebook_preload import "
                           "WARM_VARIABLE\nos.environ[WARM_VARIABLE] = 'sqlite:////nonexistent/folder/gradebook.db'\n"
                           "import autograder.exports.gradebook_ready\nprint(WARM_VARIABLE in os.environ)"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.split() == ["False"], done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == ["gradebook: the fork server could not open it ahead of the units "
                                                "(OperationalError); each unit opens it itself"]
