"""One SQLAlchemy engine per gradebook in a process, so that each query nbgrader makes is compiled once there.

nbgrader opens a ``Gradebook`` in each step it takes on each notebook (a student's autograde opens dozens), and each
``Gradebook`` makes an engine of its own: a new dialect and an empty cache of compiled statements, so every query is
compiled again. Compiling was 15% of a student's nbgrader process in autograde (py-spy, issue 50 item 8).
``reuse_engines`` gives nbgrader's ``Gradebook`` this process's engine for its URL. ``Gradebook.close`` still
disposes of it: its pooled connections are closed as before (a SQLite file's lock is let go, a PostgreSQL server's
sessions end), and the next ``Gradebook`` opens new ones through the same engine and its compiled statements. A forked
process makes engines of its own: a pool's connections must never be shared across a fork.
"""
from __future__ import annotations

import os
import threading

import sqlalchemy

_ENGINES: dict[tuple, sqlalchemy.engine.Engine] = {}  # (pid, url, options) -> the engine made for them
_LOCK = threading.Lock()  # feedback's threads may open gradebooks at once


def engine_for(url, **options) -> sqlalchemy.engine.Engine:
    """``sqlalchemy.create_engine(url, **options)``, made once in this process for the same URL and options."""
    key = (os.getpid(), str(url), repr(sorted(options.items())))  # (an option's value need not be hashable)
    with _LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = _ENGINES[key] = sqlalchemy.create_engine(url, **options)
        return engine


def reuse_engines() -> None:
    """Make nbgrader's ``Gradebook`` take ``engine_for`` its URL in this process."""
    import nbgrader.api

    nbgrader.api.create_engine = engine_for
