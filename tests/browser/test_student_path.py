"""The student path as written: `make student`, and the student copy's README saying the same (no browser)."""
from __future__ import annotations

import json
import os
import subprocess

from course_lib.layout import REPO

GUIDE = REPO / "docs" / "students.md"


def test_make_student_keeps_the_course_config_out():
    """Does `make student` start Jupyter in notebooks/a5 with the student config and no JUPYTER_PATH?"""
    # -W: as if .venv were just set up, so make prints the Jupyter command without reinstalling anything
    # (run by `make test`, this is a make inside a make: it would print the folders it enters and leaves)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    command = subprocess.run(["make", "--no-print-directory", "-n", "-W", ".venv/.installed", "student"], cwd=REPO,
                             text=True, capture_output=True, check=True, env=env).stdout.strip().splitlines()[-1]
    # not the course folder: nbgrader_config.py there puts the grading kernel on JUPYTER_PATH
    assert command.startswith("cd notebooks/a5 && env -u JUPYTER_PATH "), command
    assert f"JUPYTER_CONFIG_DIR={REPO / 'student_jupyter'} " in command and " -m jupyter lab" in command


def test_student_config_hides_the_instructor_tools_only():
    """Does student_jupyter/ turn off formgrader, the course and assignment lists and authoring, and keep Validate?"""
    server = json.loads((REPO / "student_jupyter" / "jupyter_server_config.json").read_text())
    extensions = server["ServerApp"]["jpserver_extensions"]
    assert {name.rsplit(".", 1)[1] for name, on in extensions.items() if not on} == \
        {"formgrader", "assignment_list", "course_list"}
    disabled = json.loads((REPO / "student_jupyter" / "labconfig" / "page_config.json").read_text())
    plugins = {name for name, off in disabled["disabledExtensions"].items() if off}
    assert "@jupyter/nbgrader:create-assignment" in plugins and "@jupyter/nbgrader:formgrader" in plugins
    assert "@jupyter/nbgrader:validate-assignment" not in plugins


def test_the_guide_sends_zip_students_to_the_copys_own_readme():
    """Does the student guide point students of the zip to the copy's README, whose commands it repeats?"""
    guide = GUIDE.read_text(encoding="utf-8")
    copy_readme = (REPO / "docs" / "student_copy.md").read_text(encoding="utf-8")
    assert "make student" in guide and "student_copy.md" in guide
    setup = ".venv/bin/pip install -e . jupyterlab\n.venv/bin/python -m jupyter lab notebooks/a5"
    assert setup in guide and setup in copy_readme
