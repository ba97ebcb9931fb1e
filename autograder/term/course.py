"""The course's nbgrader config, read as nbgrader reads it, for the term's commands that are not nbgrader apps."""
from __future__ import annotations

from pathlib import Path

CONFIG_FILE = "nbgrader_config.py"


def course_config(course: Path):
    """The config of ``course``'s nbgrader_config.py (an empty one when there is none); a config that
    fails to load raises, as it would stop nbgrader's own commands. What loading it prepares for the
    grading kernel (``configure_grading``: settings in the environment, a folder for its sockets) is
    undone: this process only reads the config."""
    import os
    import tempfile

    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    if not (Path(course) / CONFIG_FILE).is_file():
        return Config()
    environ, saved = dict(os.environ), tempfile.tempdir
    with tempfile.TemporaryDirectory(prefix="course-config-") as scratch:
        tempfile.tempdir = scratch
        try:
            return PyFileConfigLoader(CONFIG_FILE, path=str(course)).load_config()
        finally:
            tempfile.tempdir = saved
            os.environ.clear()
            os.environ.update(environ)


def course_db_url(course: Path, config=None) -> str:
    """The gradebook URL the course's config sets (else nbgrader's default, gradebook.db in ``course``)."""
    config = course_config(course) if config is None else config
    return config.CourseDirectory.get("db_url") or f"sqlite:///{Path(course) / 'gradebook.db'}"


def course_source(course: Path, assignment: str) -> Path:
    """The assignment's source folder as the course's config names it (nbgrader's ``source/`` when it names
    none, or when the config is absent or broken: nbgrader refuses a broken one itself)."""
    try:
        source = course_config(course).CourseDirectory.get("source_directory")
    except Exception:  # what nbgrader would log and skip
        source = None
    return Path(course) / (source or "source") / assignment
