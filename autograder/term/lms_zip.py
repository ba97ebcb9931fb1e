"""A student's zip, opened safely: regular files only, inside the folder given, within size and count limits.

A zip is the student's bytes, names and all: an entry may be named ``../../gradebook.db`` or
``/etc/cron.d/x``, be a symbolic link (its Unix mode says so), declare a small size and inflate to
gigabytes, hold a million entries, or another zip. ``extract`` writes only regular files, each under
a path built here from the entry's name (no absolute path, no ``..``, no empty or overlong component;
Windows' ``\\`` read as a separator), into a folder it made, creating each file afresh (``O_EXCL``,
``O_NOFOLLOW``); it counts the bytes it really writes, stops a file at its cap and the zip at its total,
lists at most ``entries`` entries, and never opens a zip inside the zip. Whatever it leaves out is a
note in the instructor's words (names shown sanitised); a zip it cannot read at all raises
``zipfile.BadZipFile``. It runs in the student's own unit (``autograder.term.lms``).
"""
from __future__ import annotations

import os
import stat
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from autograder.collecting.safe_files import MB, shown, size_text

CHUNK = 1 * MB
SKIPPED_TOP = ("__MACOSX",)  # macOS's resource forks, never a student's work
SKIPPED_NAMES = (".DS_Store", "Thumbs.db", "desktop.ini")


@dataclass(frozen=True)
class ZipLimits:
    """What one student's hand-in may make the intake write."""

    entries: int = 2000  # entries of one zip looked at (the collect step lists 2,000 a folder)
    file_bytes: int = 64 * MB  # one file (the collect step's largest cap: a params file)
    total_bytes: int = 256 * MB  # one student's files in all (the collect step then keeps 200 MB)


class Budget:
    """The bytes left of one student's total, shared by their loose files and their zips."""

    def __init__(self, limits: ZipLimits):
        self.limits, self.left = limits, limits.total_bytes


def entry_parts(name: str) -> list[str] | None:
    """The path components of a zip entry's name, or None when it could lead outside (absolute, a
    drive, ``..``) or cannot be a file's name here."""
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or (parts and len(parts[0]) == 2 and parts[0][1] == ":"):
        return None
    parts = [p for p in parts if p not in ("", ".")]
    if not parts or any(p == ".." or "\0" in p or len(p.encode("utf-8", "surrogatepass")) > 255 for p in parts):
        return None
    return parts


def write_new(dest: Path, rel: str, source, budget: Budget, notes: list[str], label: str) -> bool:
    """Copy the readable ``source`` to the new file ``dest/rel`` within the file cap and the budget; a
    note and no file when past either. Folders of ``rel`` are made here; nothing existing is followed."""
    path = dest / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    cap = min(budget.limits.file_bytes, budget.left)
    written = 0
    try:
        with os.fdopen(fd, "wb") as out:
            while chunk := source.read(CHUNK):
                written += len(chunk)
                if written > cap:
                    break
                out.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)  # ours: made afresh above
        raise
    if written > cap:
        path.unlink()
        limit = (f"the {size_text(budget.limits.file_bytes)} limit of a file" if cap == budget.limits.file_bytes
                 else f"the {size_text(budget.limits.total_bytes)} limit of one student's files")
        notes.append(f"{label}: past {limit}, not taken")
        return False
    budget.left -= written
    return True


def _kind(info: zipfile.ZipInfo) -> str | None:
    """Why an entry is no regular file (a link, a device, ...), or None for a file."""
    kind = stat.S_IFMT(info.external_attr >> 16)
    if info.create_system == 3 and kind and kind != stat.S_IFREG:  # Unix: the mode is the file's (0: unsaid)
        return "a symbolic link" if kind == stat.S_IFLNK else "not a regular file"
    return None


def extract(archive, dest: Path, place: Callable[[list[str]], str | None], budget: Budget, notes: list[str],
            label: str) -> list[str]:
    """Every regular file of the zip ``archive`` (a path or a seekable binary file) into ``dest`` at
    ``place(parts)`` (None: not taken); the relative paths written. ``label`` names the zip in notes."""
    written: list[str] = []
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        if len(infos) > budget.limits.entries:
            notes.append(f"{label}: more than {budget.limits.entries} entries; only the first were looked at")
        for info in infos[:budget.limits.entries]:
            shown_name = f"{label}/{shown(info.filename)}"
            parts = entry_parts(info.filename)
            folder = info.filename.endswith(("/", "\\"))  # (ZipInfo.is_dir fails on an empty name)
            if folder or (parts and (parts[0] in SKIPPED_TOP or parts[-1] in SKIPPED_NAMES)):
                continue
            if parts is None:
                notes.append(f"{shown_name}: a name that leads outside the zip, not taken")
                continue
            why = _kind(info) or ("a zip inside the zip, not opened" if parts[-1].lower().endswith(".zip") else None)
            if why:
                notes.append(f"{shown_name}: {why}" + ("" if why.endswith("opened") else ", not taken"))
                continue
            rel = place(parts)
            if rel is None:
                continue
            if rel in written or (dest / rel).exists():
                notes.append(f"{shown_name}: a second {shown(rel)}, not taken")
                continue
            try:
                with zf.open(info) as source:
                    if write_new(dest, rel, source, budget, notes, shown_name):
                        written.append(rel)
            except (zipfile.BadZipFile, RuntimeError, NotImplementedError, EOFError, ValueError, OSError) as err:
                notes.append(f"{shown_name}: could not be taken from the zip ({type(err).__name__})")
    return written
