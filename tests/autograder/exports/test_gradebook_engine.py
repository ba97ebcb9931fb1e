"""One SQLAlchemy engine per gradebook in a process: nbgrader's queries compiled once, connections closed as before."""
from __future__ import annotations

import os
import sqlite3

import nbgrader.api
import pytest

from autograder.exports import gradebook_engine
from autograder.exports.gradebook_stamp import stamp_in_process


@pytest.fixture
def reused(monkeypatch):
    """nbgrader's Gradebook taking the process's engine, put back after the test."""
    monkeypatch.setattr(nbgrader.api, "create_engine", nbgrader.api.create_engine)
    monkeypatch.setattr(gradebook_engine, "_ENGINES", {})
    stamp_in_process()
    gradebook_engine.reuse_engines()


def _queries(gb: nbgrader.api.Gradebook) -> None:
    """What nbgrader's steps ask a gradebook, more or less."""
    gb.update_or_create_assignment("a5")
    gb.update_or_create_student("ann")
    assert [a.name for a in gb.assignments] == ["a5"]
    assert gb.find_student("ann").id == "ann"


def test_gradebooks_of_one_url_share_an_engine_and_compile_each_query_once(tmp_path, reused):
    """Do two gradebooks opened one after the other in a process on the same URL share one engine, the second
    compiling none of the queries the first compiled, with the same answers?"""
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with nbgrader.api.Gradebook(url) as first:
        _queries(first)
    compiled = len(first.engine._compiled_cache)
    with nbgrader.api.Gradebook(url) as second:
        _queries(second)
    assert second.engine is first.engine and compiled > 0
    assert len(second.engine._compiled_cache) == compiled  # nothing compiled again
    other = f"sqlite:///{tmp_path / 'other.db'}"
    with nbgrader.api.Gradebook(other) as third:
        assert third.engine is not first.engine  # another gradebook, another engine


def test_a_closed_gradebook_lets_go_of_its_connections(tmp_path, reused):
    """Does closing a gradebook still close its connections, so that another process may take the SQLite file's
    exclusive lock at once, as with nbgrader's own engine per gradebook?"""
    path = tmp_path / "gradebook.db"
    with nbgrader.api.Gradebook(f"sqlite:///{path}") as gb:
        _queries(gb)
    assert gb.engine.pool.checkedout() == 0 and gb.engine.pool.checkedin() == 0
    other = sqlite3.connect(path, timeout=0)
    try:
        other.execute("BEGIN EXCLUSIVE")  # fails at once ("database is locked") while any connection is open
        other.rollback()
    finally:
        other.close()


def test_a_forked_process_takes_the_engines_statements_and_connections_of_its_own(tmp_path, reused):
    """Does a process forked after a gradebook was opened (a unit of a fork server that opened it first) take the
    engine with the queries compiled, compiling none of them again, but a pool of its own (a pool's connections never
    cross a fork); and does the parent read the gradebook through its own pool afterwards?"""
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with nbgrader.api.Gradebook(url) as gb:
        _queries(gb)
    compiled, parents_pool = len(gb.engine._compiled_cache), gb.engine.pool
    held = gb.engine.connect()  # a connection of the parent's pool, open across the fork
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: nothing here returns
        ok = 0
        try:
            with nbgrader.api.Gradebook(url) as child:
                _queries(child)
                ok = int(child.engine is gb.engine and child.engine.pool is not parents_pool
                         and len(child.engine._compiled_cache) == compiled)
        finally:
            os.write(write, bytes([ok]))
            os._exit(0)
    os.close(write)
    answer = os.read(read, 1)
    os.close(read)
    os.waitpid(pid, 0)
    assert answer == b"\x01"
    assert held.exec_driver_sql("select count(*) from student").scalar() == 1  # the parent's connection, unharmed
    held.close()
    assert gradebook_engine.engine_for(url, echo=False, future=True) is gb.engine and gb.engine.pool is parents_pool


def test_every_nbgrader_step_of_the_course_reuses_engines(tmp_path, monkeypatch):
    """Does the course's grading set-up (every nbgrader command and autograde's per-student nbgrader read it) give
    nbgrader's Gradebook the reused engines?"""
    from traitlets.config import Config

    from autograder.nbgrader_glue.setup import configure_grading

    monkeypatch.setattr(nbgrader.api, "create_engine", nbgrader.api.create_engine)
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", nbgrader.api.get_alembic_version)
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    configure_grading(Config())
    assert nbgrader.api.create_engine is gradebook_engine.engine_for
