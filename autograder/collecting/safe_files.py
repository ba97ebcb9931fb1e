"""Reading a folder someone else controls: no link followed, no special file opened, sizes capped.

Every folder is opened with ``O_NOFOLLOW | O_DIRECTORY`` relative to its parent's
descriptor, and every file with ``O_NOFOLLOW | O_NONBLOCK`` relative to its folder's,
after an ``lstat`` that shows a regular file: a link swapped in after the look is
refused by the open, a FIFO or device is never opened at all. Each name is a single
component, so no ``..`` or ``/`` leads anywhere else. Copies are read in chunks and stop
once a cap is passed, whatever ``fstat`` said (a file may grow while it is read).
Names shown to a person are readable and at most 80 characters; contents never are.
"""
from __future__ import annotations

import errno
import os
import stat
import unicodedata
from collections.abc import Iterable
from pathlib import Path

SHOWN_CHARS = 80  # longest name a reason shows
CHUNK = 1 << 20  # bytes read at a time
COPY_MODE = 0o644
MB = 2 ** 20

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


# Bidi_Control characters reorder the text around them (an id could make a reason read backwards),
# so no reason shows them; other format characters (U+200D, a soft hyphen) only shape, and stay
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f" + "".join(map(chr, range(0x202A, 0x202F))) +
                          "".join(map(chr, range(0x2066, 0x206A))))


def _readable(c: str) -> bool:
    """Whether ``c`` may be shown as itself: printable, a space, or a harmless format character."""
    if c in BIDI_CONTROLS or 0xD800 <= ord(c) <= 0xDFFF:  # surrogates: bytes that were not UTF-8
        return False
    return c.isprintable() or unicodedata.category(c) in ("Zs", "Cf")


def shown(name: str) -> str:
    """``name`` as a reason may show it: no repr, control characters and bidi controls as ``?`` (an
    emoji joined by U+200D stays whole), at most 80 characters."""
    text = "".join(c if _readable(c) else "?" for c in name)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 3] + "..."


def size_text(n: int) -> str:
    """A size for a reason: ``300 MB``, ``1.5 KB``, ``12 bytes``."""
    for unit, scale in (("MB", MB), ("KB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n} bytes"


def kind_of(mode: int) -> str:
    """What a file is, for a reason: ``a symbolic link``, ``a FIFO (named pipe)``, ..."""
    for test, kind in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISREG, "a regular file")):
        if test(mode):
            return kind
    return "not a regular file"


def digest_files(digest, files: Iterable[tuple[str, Path]]) -> None:
    """Feed each (name, path) file's name, size and bytes to ``digest`` (a hashlib object): how a
    re-run knows a submission unchanged."""
    for name, path in files:
        digest.update(f"\0{name}\0{path.stat().st_size}\0".encode())
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(CHUNK), b""):
                digest.update(chunk)


def lstat_at(name: str, dir_fd: int | None) -> os.stat_result | None:
    """The entry's own stat (a link's, not its target's), or None when there is no such entry."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None


def open_dir(name: str, dir_fd: int | None) -> int:
    """Open folder ``name`` under ``dir_fd`` without following a link; OSError if not a folder."""
    return os.open(name, DIR_FLAGS, dir_fd=dir_fd)


def folder_problem(label: str, st: os.stat_result | None) -> str | None:
    """Why an entry (by its own lstat) is not a plain folder to go into, or None."""
    if st is None:
        return f"no {shown(label)} folder in the submission"
    if stat.S_ISDIR(st.st_mode):
        return None
    kind = kind_of(st.st_mode)
    return f"{shown(label)}: {'a file' if kind == 'a regular file' else kind}, not a folder"


def listing(dir_fd: int, limit: int) -> tuple[list[tuple[str, int]], bool]:
    """(name, lstat mode) of up to ``limit`` entries of a folder, hidden ones left out, sorted; and
    whether entries were left unread past the limit."""
    found, seen = [], 0
    with os.scandir(dir_fd) as entries:
        for entry in entries:
            if seen >= limit:
                return sorted(found), True
            seen += 1
            if entry.name.startswith("."):  # .ipynb_checkpoints, .DS_Store, editor files: noise
                continue
            try:
                found.append((entry.name, entry.stat(follow_symlinks=False).st_mode))
            except FileNotFoundError:  # gone since it was listed
                continue
    return sorted(found), False


class CopyRefused(Exception):
    """A file not copied, with the reason in the grader's words; ``oversize``: its size was why."""

    def __init__(self, reason: str, oversize: bool = False):
        super().__init__(reason)
        self.oversize = oversize


def copy_regular(dir_fd: int, name: str, label: str, target: Path, cap: int) -> os.stat_result:
    """Copy regular file ``name`` of the open folder into the new file ``target`` (mode 0644), at
    most ``cap`` bytes; returns the source's fstat (its inode tells hard links apart). Raises
    CopyRefused with a reason."""
    try:
        src = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.EMLINK):  # swapped for a link since it was looked at
            raise CopyRefused(f"{label}: a symbolic link, not a file") from None
        raise CopyRefused(f"{label}: could not be opened ({err.strerror})") from None
    try:
        st = os.fstat(src)
        if not stat.S_ISREG(st.st_mode):
            raise CopyRefused(f"{label}: {kind_of(st.st_mode)}, not a file")
        if st.st_size > cap:
            raise CopyRefused(too_big(label, st.st_size, cap), oversize=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        if _copy_capped(src, target, cap) is None:
            raise CopyRefused(f"{label}: grew past the {size_text(cap)} limit while being copied", oversize=True)
        return st
    finally:
        os.close(src)


def read_regular(dir_fd: int, name: str, cap: int) -> bytes | None:
    """The bytes of regular file ``name`` of the open folder (no link followed, no FIFO opened), or None when it
    is anything else, cannot be opened or holds more than ``cap`` bytes."""
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > cap:
            return None
        chunks, size = [], 0
        while chunk := os.read(fd, min(CHUNK, cap + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > cap:  # it grew while read
                return None
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _copy_capped(src: int, target: Path, cap: int) -> int | None:
    """Copy ``src`` into a new file ``target``: bytes copied, or None (and no file) past ``cap``."""
    out = os.open(target, WRITE_FLAGS, COPY_MODE)
    copied, ok = 0, False
    try:
        os.fchmod(out, COPY_MODE)  # whatever the umask
        while True:
            chunk = os.read(src, min(CHUNK, cap + 1 - copied))
            if not chunk:
                ok = True
                return copied
            copied += len(chunk)
            if copied > cap:
                return None
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view):]
    finally:
        os.close(out)
        if not ok:
            os.unlink(target)


def too_big(label: str, size: int, cap: int) -> str:
    """The reason for a file over its cap, in sizes a person reads."""
    size_shown, cap_shown = size_text(size), size_text(cap)
    if size_shown == cap_shown:
        return f"{label}: larger than the {cap_shown} limit"
    return f"{label}: {size_shown}, over the {cap_shown} limit"


MAX_LINK_HOPS = 8  # links followed to resolve one path inside a submission


class OutsideLink(Exception):
    """A link out of the submission, or a loop; its message is the reason in the grader's words."""


def _normalised(parts: list[str]) -> list[str]:
    """``parts`` with ``.`` and empty parts dropped and ``..`` applied; OutsideLink when it climbs
    out of the root."""
    out: list[str] = []
    for part in parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not out:
                raise OutsideLink("a symbolic link to somewhere outside the submission")
            out.pop()
        else:
            out.append(part)
    return out


def resolve_inside(root_fd: int, parts: list[str]) -> tuple[int, str] | None:
    """Follow the path ``parts`` from the open folder ``root_fd`` through links that stay inside it:
    an open descriptor of the folder holding its last component (the caller closes it) and that
    component's name, which is no link; None when a component is missing. Raises OutsideLink for a
    link out of the root, an absolute one or one chain of more than MAX_LINK_HOPS links; every
    folder is opened without following links."""
    path = _normalised(parts)
    for _ in range(MAX_LINK_HOPS + 1):
        fd = os.dup(root_fd)
        try:
            for i, name in enumerate(path):
                st = lstat_at(name, fd)
                if st is None:
                    os.close(fd)
                    return None
                if stat.S_ISLNK(st.st_mode):
                    target = os.readlink(name, dir_fd=fd)
                    if target.startswith("/"):
                        raise OutsideLink("a symbolic link to somewhere outside the submission")
                    path = _normalised(path[:i] + target.split("/") + path[i + 1:])
                    break
                if i == len(path) - 1:
                    return fd, name
                inner = open_dir(name, fd)
                os.close(fd)
                fd = inner
            else:  # an empty path: the root itself is no entry of a folder
                raise OutsideLink("a symbolic link to the submission's own folder")
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    raise OutsideLink(f"a chain of more than {MAX_LINK_HOPS} symbolic links")
