"""One SQLAlchemy engine per gradebook in a process, so that each query nbgrader makes is compiled once there.

nbgrader opens a ``Gradebook`` in each step it takes on each notebook (a student's autograde opens dozens), and each
``Gradebook`` makes an engine of its own: a new dialect and an empty cache of compiled statements, so every query is
compiled again. Compiling was 15% of a student's nbgrader process in autograde (py-spy, issue 50 item 8).
``reuse_engines`` gives nbgrader's ``Gradebook`` this process's engine for its URL. ``Gradebook.close`` still
disposes of it: its pooled connections are closed as before (a SQLite file's lock is let go, a PostgreSQL server's
sessions end), and the next ``Gradebook`` opens new ones through the same engine and its compiled statements.

A process forked after its parent made an engine (a unit from a fork server that ``gradebook_ready`` warmed) takes that
engine with its compiled statements, and lets go of the parent's pool without closing it
(``Engine.dispose(close=False)``, SQLAlchemy's way across a fork): a pool's connections are never shared across a fork.
"""
from __future__ import annotations

import os
import threading

import sqlalchemy

_ENGINES: dict[tuple, tuple[int, sqlalchemy.engine.Engine]] = {}  # (url, options) -> the pid using it, the engine
_LOCK = threading.Lock()  # feedback's threads may open gradebooks at once


def engine_for(url, **options) -> sqlalchemy.engine.Engine:
    """``sqlalchemy.create_engine(url, **options)``, made once in this process (or in the process it was forked from)
    for the same URL and options."""
    key = (str(url), repr(sorted(options.items())))  # (an option's value need not be hashable)
    with _LOCK:
        made = _ENGINES.get(key)
        if made is None:
            made = _ENGINES[key] = (os.getpid(), sqlalchemy.create_engine(url, **options))
        elif made[0] != os.getpid():  # made before this process was forked: the parent's connections are its own
            made[1].dispose(close=False)
            made = _ENGINES[key] = (os.getpid(), made[1])
        return made[1]


def reuse_engines() -> None:
    """Make nbgrader's ``Gradebook`` take ``engine_for`` its URL in this process."""
    import nbgrader.api

    nbgrader.api.create_engine = engine_for
