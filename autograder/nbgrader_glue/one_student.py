"""One student's ``nbgrader autograde``, in a child process of a grading task.

``autograder.nbgrader_glue.autograde`` forks it from the student's unit and calls ``main``. By hand:

    python -m autograder.nbgrader_glue.one_student \
        '{"assignment": "a5", "student": "S", "force": false,
          "submitted_directory": "collected", "db_url": null}'

It is nbgrader's own AutogradeApp, configured from that JSON after it read the course's
nbgrader_config.py: the student id (which may be ``--help`` or hold spaces) is set as a
value, never parsed from a command line. And two differences for running many at once:
- with ``GRADEBOOK_LOCK`` set (a SQLite gradebook), every gradebook session nbgrader opens
  holds an exclusive lock on that file, so parallel students' writes take turns instead of
  failing with "database is locked" (SQLite's own locking can refuse a writer outright);
- it dies with the task that started it (the parent-death signal), and the grading kernels
  die with it (``autograder.nbgrader_glue.kernel`` does the same), so a killed worker leaves
  nothing running.
"""
from __future__ import annotations

import fcntl
import json
import os
import sys
import threading
from pathlib import Path

from autograder.confinement.isolation import die_with_parent
from autograder.nbgrader_glue.zygote import NOTEBOOKS_VARIABLE

LOCK_VARIABLE = "GRADEBOOK_LOCK"
PARENT_VARIABLE = "AUTOGRADE_PARENT_PID"  # the grading task's pid, set by nbgrader_glue.autograde


def serialize_gradebook_sessions(lock_path: str) -> None:
    """Hold an exclusive lock on ``lock_path`` while any Gradebook of this process is open."""
    from nbgrader import api

    state = {"open": 0, "fd": None}
    guard = threading.Lock()
    original_init, original_close = api.Gradebook.__init__, api.Gradebook.close

    def acquire() -> None:
        with guard:
            if state["open"] == 0:
                state["fd"] = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
                fcntl.flock(state["fd"], fcntl.LOCK_EX)  # waits for the other students' sessions
            state["open"] += 1

    def release() -> None:
        with guard:
            state["open"] -= 1
            if state["open"] == 0:
                os.close(state["fd"])  # closing drops the lock

    def __init__(self, *args, **kwargs):
        acquire()
        try:
            original_init(self, *args, **kwargs)
        except BaseException:
            release()
            raise
        self._course_lock_held = True

    def close(self):
        try:
            original_close(self)
        finally:
            if getattr(self, "_course_lock_held", False):
                self._course_lock_held = False
                release()

    api.Gradebook.__init__, api.Gradebook.close = __init__, close


def _forget_singletons() -> None:
    """Make this process's nbgrader app its only one: a process forked from one that ran another
    nbgrader app (CollectApp, ...) holds it as traitlets' singleton, and AutogradeApp.instance()
    would refuse to start."""
    from traitlets.config import SingletonConfigurable

    classes = [SingletonConfigurable]
    while classes:
        cls = classes.pop()
        cls._instance = None
        classes.extend(cls.__subclasses__())


def main(argv: list[str]) -> None:
    """Autograde one student as the JSON in ``argv[0]`` says; refuse without the confined kernel."""
    die_with_parent(PARENT_VARIABLE)
    spec = json.loads(argv[0])
    if os.environ.get(LOCK_VARIABLE):
        serialize_gradebook_sessions(os.environ[LOCK_VARIABLE])
    from nbgrader.apps.autogradeapp import AutogradeApp
    from traitlets.config import Config

    from autograder.nbgrader_glue import schema_once
    from autograder.nbgrader_glue.setup import grading_problem

    schema_once.install()
    _forget_singletons()
    app = AutogradeApp.instance()
    app.initialize([])  # nbgrader's own start: logging, then the course's nbgrader_config.py
    problem = grading_problem(app.config)
    if problem:  # never run a student's notebooks in a plain kernel
        app.log.error("refusing to autograde: %s", problem)
        sys.exit(3)
    coursedir = app.coursedir
    coursedir.assignment_id = spec["assignment"]
    coursedir.student_id = spec["student"]
    coursedir.submitted_directory = spec["submitted_directory"]
    if spec.get("db_url"):
        coursedir.db_url = spec["db_url"]
    if spec.get("force"):
        app.update_config(Config({"BaseConverter": {"force": True}}))
    # for the student's sandbox (autograder.nbgrader_glue.zygote): a kernel to preload per notebook
    handed_in = Path(coursedir.format_path(coursedir.submitted_directory, coursedir.student_id,
                                           coursedir.assignment_id))
    os.environ[NOTEBOOKS_VARIABLE] = str(sum(1 for _ in handed_in.glob("*.ipynb")))
    app.start()


if __name__ == "__main__":
    main(sys.argv[1:])
