"""A new nbgrader gradebook's migration stamp, read in this process instead of by the ``alembic`` command.

nbgrader stamps every gradebook it creates with the head of its own migrations
(``nbgrader.api.get_alembic_version``), which it finds by running ``alembic heads`` as a
command: a new Python process that imports nbgrader and SQLAlchemy, about 2 s of CPU a
gradebook (measured), and a failure where the venv's ``bin`` is not on PATH. alembic's own
``ScriptDirectory`` reads the same head from the same migrations folder in this process, in
0.05 s once nbgrader is imported. A gradebook stamped either way is the same gradebook.
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
    """Make every gradebook nbgrader creates in this process take its stamp from ``migrations_head``."""
    import nbgrader.api

    nbgrader.api.get_alembic_version = migrations_head
