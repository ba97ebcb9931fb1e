"""The command line's paths mean what they say in the folder the command is typed in.

The commands hand paths on to nbgrader, Dask workers and subprocesses that run elsewhere (``bundle``
runs nbgrader in the checkout), so each path option and a SQLite gradebook's file is made absolute
against the working folder as soon as it is parsed. ``autograde --out-dir`` is left as it is: it
names a folder inside each submission, relative to its notebooks.
"""
from __future__ import annotations

import argparse
import os

# argparse dests holding paths
PATH_OPTIONS = ("submitted", "out", "data_dir", "answers", "course", "release")
DB_OPTIONS = ("db", "gradebook")  # argparse dests holding gradebook URLs
SQLITE = "sqlite:///"


def absolute_db_url(url: str) -> str:
    """A SQLite URL's relative file (sqlite:///gradebook.db) made absolute; other URLs unchanged."""
    if not url.startswith(SQLITE) or url.startswith(SQLITE + "/") or url[len(SQLITE):].startswith(":memory:"):
        return url
    path, query = url[len(SQLITE):], ""
    if "?" in path:
        path, query = path.split("?", 1)
        query = "?" + query
    return SQLITE + os.path.abspath(path) + query


def absolute_paths(args: argparse.Namespace) -> argparse.Namespace:
    """``args`` with each path option and SQLite gradebook absolute against the working folder."""
    for name in PATH_OPTIONS:
        if getattr(args, name, None) is not None:
            setattr(args, name, os.path.abspath(getattr(args, name)))
    for name in DB_OPTIONS:
        if getattr(args, name, None) is not None:
            setattr(args, name, absolute_db_url(getattr(args, name)))
    return args
