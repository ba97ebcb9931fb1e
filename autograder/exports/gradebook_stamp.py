"""nbgrader's gradebook migration stamp, read in this process instead of by the ``alembic`` command.

nbgrader stamps every gradebook it creates with the head of its own migrations
(``nbgrader.api.get_alembic_version``), found by running ``alembic heads`` as a command: a new
Python process per gradebook, which fails where the venv's ``bin`` is not on PATH. alembic's
``ScriptDirectory`` reads the same head from the same migrations folder in this process; a
gradebook stamped either way is the same gradebook.
"""
from __future__ import annotations

from functools import cache


@cache
def migrations_head() -> str:
    """The head revision of nbgrader's migrations, as ``alembic heads`` prints it first."""
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import ALEMBIC_DIR

    return ScriptDirectory(ALEMBIC_DIR).get_current_head()


def stamp_in_process() -> None:
    """Make nbgrader stamp every gradebook it creates in this process with ``migrations_head``."""
    import nbgrader.api

    nbgrader.api.get_alembic_version = migrations_head
