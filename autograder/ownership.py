"""What a grading command run as root makes in someone else's folder goes back to its owner.

On the hub the grading commands run as root (confinement needs it) in the instructor's course folder
(docs/hub.md). What they create there (autograded/, grades/, nbgrader's log, a new gradebook) would
stay root's, and the instructor's own nbgrader (export, formgrader, feedback) would then stop at a
PermissionError. ``kept_by_owner`` wraps a command: afterwards every entry under the folder that the
command's user owns and created or changed (new, or its inode changed) goes to the folder's owner
and group. ``given_back_at_exit`` does the same for nbgrader's own commands run as root there; the
course's nbgrader_config.py calls it through ``configure_grading``.

Links are never followed: the folder is walked by descriptor (``os.fwalk``) and each entry changed
as itself. A file with other hard links is left as it is and counted: its other names may be
outside the folder, so the owner must not get it.
"""
from __future__ import annotations

import atexit
import functools
import os
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

Snapshot = dict[tuple[int, int], int]  # (device, inode) -> ctime (ns) of the entries one user owns
WRAPPED = "AUTOGRADER_KEPT_BY_OWNER"  # set while a wrapped command runs: its children leave it be


@dataclass
class GivenBack:
    """What ``give_back`` did: entries given to the owner, hard-linked files left as they were."""

    given: int = 0  # entries now the owner's
    left_linked: int = 0  # files with other hard links, left root's


def _entries(folder: Path) -> Iterator[tuple[str, int, os.stat_result]]:
    """(name, folder's descriptor, own stat) of every entry under ``folder``, no link followed."""
    for _, dirs, files, dir_fd in os.fwalk(folder, follow_symlinks=False):
        for name in dirs + files:
            try:
                yield name, dir_fd, os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:  # gone since it was listed
                continue


def snapshot(folder: Path, mine: int) -> Snapshot:
    """What ``mine`` owns under ``folder`` now, to tell later what a command created or changed."""
    return {(st.st_dev, st.st_ino): st.st_ctime_ns for _, _, st in _entries(folder) if st.st_uid == mine}


def give_back(folder: Path, uid: int, gid: int, before: Snapshot, mine: int) -> GivenBack:
    """Give ``uid``:``gid`` every entry under ``folder`` that ``mine`` owns and that is new or
    changed since ``before``, following no link; files with other hard links are left."""
    done = GivenBack()
    for name, dir_fd, st in _entries(folder):
        if st.st_uid != mine or before.get((st.st_dev, st.st_ino)) == st.st_ctime_ns:
            continue
        if not stat.S_ISDIR(st.st_mode) and st.st_nlink > 1:
            done.left_linked += 1
            continue
        try:
            os.chown(name, uid, gid, dir_fd=dir_fd, follow_symlinks=False)
            done.given += 1
        except FileNotFoundError:
            continue
    return done


def _someone_elses(folder: Path) -> os.stat_result | None:
    """The folder's stat when this process is root and someone else owns the folder; else None."""
    owner = folder.stat()
    return owner if os.geteuid() == 0 and owner.st_uid != 0 else None


def _give_back_and_say(folder: Path, owner: os.stat_result, before: Snapshot) -> None:
    done = give_back(folder, owner.st_uid, owner.st_gid, before, 0)
    if done.left_linked:
        print(f"warning: {done.left_linked} file(s) the command wrote in {folder} have other hard links and stay "
              "root's", file=sys.stderr)


def kept_by_owner(command: Callable[..., int]) -> Callable[..., int]:
    """``command`` (a CLI's main), after which what it made as root in the working folder belongs to
    that folder's owner, when someone else owns it; anywhere else it runs as it is."""

    @functools.wraps(command)
    def run(*args, **kwargs) -> int:
        folder = Path.cwd()
        owner = _someone_elses(folder)
        if owner is None or os.environ.get(WRAPPED):
            return command(*args, **kwargs)
        before = snapshot(folder, 0)
        os.environ[WRAPPED] = "1"
        try:
            return command(*args, **kwargs)
        finally:
            del os.environ[WRAPPED]
            _give_back_and_say(folder, owner, before)

    return run


def given_back_at_exit() -> None:
    """What this process makes as root in the working folder goes to the folder's owner at exit
    (when someone else owns it and no wrapped command above this process does it already)."""
    folder = Path.cwd()
    owner = _someone_elses(folder)
    if owner is not None and not os.environ.get(WRAPPED):
        os.environ[WRAPPED] = "1"  # its own children (kernels, converters) leave it to this one
        atexit.register(_give_back_and_say, folder, owner, snapshot(folder, 0))
