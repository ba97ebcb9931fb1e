"""A new gradebook's migration stamp, read in the process instead of by nbgrader's `alembic` command."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbgrader.api
from nbgrader.dbutil import _temp_alembic_ini
from sqlalchemy import create_engine, text

from autograder.exports.gradebook_stamp import migrations_head, stamp_in_process


def test_the_stamp_is_the_head_alembic_prints():
    """Is the head read in the process the revision nbgrader's own way (the `alembic heads` command) finds?"""
    with _temp_alembic_ini("sqlite:////tmp/gradebook.db") as ini:  # what nbgrader.api.get_alembic_version runs
        printed = subprocess.run([str(Path(sys.executable).parent / "alembic"), "-c", ini, "heads"],
                                 capture_output=True, text=True, check=True).stdout
    assert migrations_head() == printed.split("\n")[0].split(" ")[0]


def test_a_new_gradebook_is_stamped_without_the_command(tmp_path, monkeypatch):
    """With the stamp installed, does nbgrader make a gradebook when the `alembic` command is not to be found, stamped
    with the head of its migrations?"""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no venv: nbgrader's own stamp fails here
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", nbgrader.api.get_alembic_version)  # put back after
    stamp_in_process()
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with nbgrader.api.Gradebook(url) as gb:
        gb.add_student("ann")
    with create_engine(url).connect() as db:
        assert db.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == [migrations_head()]
