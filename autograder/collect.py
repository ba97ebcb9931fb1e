"""Sanitise students' submissions before any grader sees them.

nbgrader lays submissions out as ``submitted/<student>/<assignment>/...``: the
notebooks ``NN_*.ipynb`` at the top and the training runs' files either at the
top or in an ``outputs/`` folder. A submission is the student's to shape, so it
may hold a symbolic link to the gradebook or to ``/etc/shadow``, a FIFO that
blocks a reader, a folder named like a notebook, a huge file or a million empty
ones. This module copies only what the assignment asks for, as regular files of
bounded size, into a fresh folder of the grader's, and says in a short reason of
its own wording what it left out and why.

How it stays safe:

* No symbolic link is ever followed. Every folder below the grader's own paths is
  opened with ``O_NOFOLLOW | O_DIRECTORY`` relative to its parent's descriptor
  and listed from that descriptor, and every file is opened with
  ``O_NOFOLLOW | O_NONBLOCK`` relative to its folder's descriptor, so a link
  swapped in after the listing is refused too. Each name looked up is a single
  component from a listing, so no ``..`` or ``/`` can lead anywhere else.
* A file is read only when ``fstat`` on the open descriptor shows a regular file
  with a single link (a hard link could share a file from outside the
  submission). Devices, FIFOs and sockets are never opened at all.
* Copies are read in chunks and stop once a size cap is passed, whatever the
  first ``fstat`` said: a file may grow while it is read.
* Reasons hold names (printable, at most 80 characters) and sizes, never contents.
"""
from __future__ import annotations

import errno
import os
import re
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .registry import RUN_FILES  # the run files graded: params and predictions of each run part

OUTPUTS = "outputs"  # the run files' folder, in a submission and in the copy
NOTEBOOK_NAME = re.compile(r"^\d\d_[A-Za-z0-9_]+\.ipynb$")
SAFE_NAME = re.compile(r"^[A-Za-z0-9_.@+-]{1,64}$")  # a student id or assignment name (not starting with a dot)
SHOWN_CHARS = 80  # longest name a reason shows
MAX_REASONS = 100  # reasons kept per submission; the rest are counted in one last line
CHUNK = 1 << 20  # bytes read at a time
COPY_MODE = 0o644
MB = 2 ** 20

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class Limits:
    """Caps on what one submission may make the grader read and store."""

    notebook_bytes: int = 20 * MB  # one notebook
    params_bytes: int = 256 * MB  # one .params file
    predictions_bytes: int = 2 * MB  # one .predictions file (and any other run file)
    total_bytes: int = 1024 * MB  # one submission in all
    max_entries: int = 2000  # directory entries looked at per submission


@dataclass
class Collected:
    """One student's sanitised submission, or why there is none."""

    student: str  # the id as found when it is safe, else its shown (sanitised) form
    folder: Path | None  # the sanitised copy: dest/<student>/<assignment> (None when nothing usable was found)
    dropped: list[str] = field(default_factory=list)  # one short grader-written reason per thing left out


class _Reasons(list):
    """Reasons of one submission, at most MAX_REASONS of them plus a count of the rest."""

    def __init__(self) -> None:
        super().__init__()
        self.extra = 0

    def add(self, reason: str) -> None:
        if len(self) < MAX_REASONS:
            self.append(reason)
        else:
            self.extra += 1

    def closed(self) -> list[str]:
        more = [f"... and {self.extra} more things left out"] if self.extra else []
        return list(self) + more


@dataclass
class _Candidate:
    """A regular file, as listed, that the assignment asks for."""

    dir_fd: int  # its folder, open
    name: str
    shown: str  # its path in the submission, as reasons show it
    target: str  # where the copy goes, relative to dest/<student>/<assignment>
    cap: int  # its own size limit


# --- names and wording ---------------------------------------------------------------------------


def is_safe_name(name: str) -> bool:
    """Whether ``name`` may be a student id or assignment name: one plain path component."""
    return bool(SAFE_NAME.match(name)) and not name.startswith(".")


def digest_files(digest, files: Iterable[tuple[str, Path]]) -> None:
    """Feed each (name, path) file's name, size and bytes to ``digest`` (a hashlib object): how a re-run knows a
    submission unchanged."""
    for name, path in files:
        digest.update(f"\0{name}\0{path.stat().st_size}\0".encode())
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)


def shown(name: str) -> str:
    """``name`` as a reason may show it: no repr, non-printable characters as ``?``, at most 80 characters."""
    text = "".join(c if c.isprintable() else "?" for c in name)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 3] + "..."


def size_text(n: int) -> str:
    """A size for a reason: ``300 MB``, ``1.5 KB``, ``12 bytes``."""
    for unit, scale in (("MB", MB), ("KB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n} bytes"


def kind_of(mode: int) -> str:
    """What a non-regular file is, for a reason: ``a symbolic link``, ``a FIFO (named pipe)``, ..."""
    for test, kind in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file" if not stat.S_ISREG(mode) else "a regular file"


def cap_for(name: str, limits: Limits) -> int:
    """The size limit of one file, by its kind."""
    if name.endswith(".ipynb"):
        return limits.notebook_bytes
    if name.endswith(".params"):
        return limits.params_bytes
    return limits.predictions_bytes


# --- reading the submission without following links -----------------------------------------------


def _open_dir(name: str, dir_fd: int | None) -> int:
    """Open folder ``name`` (relative to ``dir_fd``) without following a link; OSError when it is none."""
    return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)


def _lstat(name: str, dir_fd: int | None) -> os.stat_result | None:
    """The entry's own stat (a link's, not its target's), or None when there is no such entry."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _folder_problem(label: str, st: os.stat_result | None) -> str | None:
    """Why an entry (by its own lstat, never its target's) is not a plain folder to go into, or None."""
    if st is None:
        return f"no {shown(label)} folder in the submission"
    if stat.S_ISDIR(st.st_mode):
        return None
    kind = kind_of(st.st_mode)
    return f"{shown(label)}: {'a file' if kind == 'a regular file' else kind}, not a folder"


class _Budget:
    """Directory entries a submission may still make the grader look at."""

    def __init__(self, entries: int) -> None:
        self.left, self.ran_out = entries, False


def _entries(dir_fd: int, budget: _Budget) -> list[tuple[str, int]]:
    """(name, lstat mode) of a folder's entries, sorted, hidden ones left out, while the budget lasts."""
    found = []
    with os.scandir(dir_fd) as listing:
        for entry in listing:
            if budget.left <= 0:
                budget.ran_out = True
                break
            budget.left -= 1
            if entry.name.startswith("."):  # .ipynb_checkpoints, .DS_Store, editor files: noise
                continue
            try:
                found.append((entry.name, entry.stat(follow_symlinks=False).st_mode))
            except FileNotFoundError:  # gone since it was listed
                continue
    return sorted(found)


def _unwanted(name: str, top: bool, run_files: frozenset[str]) -> str | None:
    """Why a regular file of this name is left out, or None when the assignment asks for it."""
    if name in run_files or (top and NOTEBOOK_NAME.match(name)):
        return None
    if top and name.endswith(".ipynb"):
        return "not a notebook name the assignment uses (NN_name.ipynb)"
    return "not a file the assignment asks for"


def _scan(dir_fd: int, prefix: str, run_files: frozenset[str], reasons: _Reasons, budget: _Budget
          ) -> tuple[dict[str, str], os.stat_result | None]:
    """Regular files of one folder that the assignment asks for, as name -> shown path; the rest become reasons.

    At the top (empty ``prefix``) an ``outputs`` entry that is not a regular file is not judged
    here: its lstat comes back second, for the caller to go into (None when there is none).
    """
    found: dict[str, str] = {}
    outputs = None
    for name, mode in _entries(dir_fd, budget):
        label = shown(prefix + name)
        if not prefix and name == OUTPUTS and not stat.S_ISREG(mode):
            outputs = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        elif not stat.S_ISREG(mode):
            reasons.add(f"{label}: {kind_of(mode)}, not a file")
        elif reason := _unwanted(name, not prefix, run_files):
            reasons.add(f"{label}: {reason}")
        else:
            found[name] = label
    return found, outputs


# --- copying ---------------------------------------------------------------------------------------


def _copy(candidate: _Candidate, out_dir: Path, remaining: int, limits: Limits) -> tuple[int, str | None]:
    """Copy one listed file into ``out_dir`` from its open descriptor: (bytes copied, None) or (0, reason)."""
    label = candidate.shown
    try:
        src = os.open(candidate.name, _FILE_FLAGS, dir_fd=candidate.dir_fd)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.EMLINK):  # swapped for a link since it was listed
            return 0, f"{label}: a symbolic link, not a file"
        return 0, f"{label}: could not be opened ({err.strerror})"
    try:
        st = os.fstat(src)
        if not stat.S_ISREG(st.st_mode):
            return 0, f"{label}: {kind_of(st.st_mode)}, not a file"
        if st.st_nlink > 1:
            return 0, f"{label}: a hard link shared with {st.st_nlink - 1} other name(s), not a plain file"
        cap = min(candidate.cap, remaining)
        if st.st_size > candidate.cap:
            return 0, _too_big(label, st.st_size, candidate.cap)
        if st.st_size > remaining:
            return 0, _over_total(label, limits)
        target = out_dir / candidate.target
        target.parent.mkdir(exist_ok=True)
        copied = _copy_capped(src, target, cap)
        if copied is None:
            return 0, (f"{label}: grew past the {size_text(candidate.cap)} limit while being copied"
                       if cap == candidate.cap else _over_total(label, limits))
        return copied, None
    finally:
        os.close(src)


def _copy_capped(src: int, target: Path, cap: int) -> int | None:
    """Copy from ``src`` to a new file ``target`` (mode 0644): bytes copied, or None (and no file) past ``cap``."""
    out = os.open(target, _WRITE_FLAGS, COPY_MODE)
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


def _too_big(label: str, size: int, cap: int) -> str:
    size_shown, cap_shown = size_text(size), size_text(cap)
    if size_shown == cap_shown:
        return f"{label}: larger than the {cap_shown} limit"
    return f"{label}: {size_shown}, over the {cap_shown} limit"


def _over_total(label: str, limits: Limits) -> str:
    return f"{label}: would take the submission past the {size_text(limits.total_bytes)} limit for all files"


# --- one submission and a cohort -------------------------------------------------------------------


def collect_submission(student_dir: Path, student: str, assignment: str, dest: Path, limits: Limits = Limits(),
                       run_files: Iterable[str] = RUN_FILES) -> Collected:
    """Copy the safe part of one student's submission to ``dest/<student>/<assignment>/``.

    ``student_dir`` is ``submitted/<student>``; its parent is the grader's and is trusted, nothing
    below it is. Notebooks land at the top of the copy and run files in its ``outputs/``, whichever
    of the two places they came from (``outputs/`` wins when both hold one). Raises ValueError for
    an unsafe ``assignment`` name and FileExistsError when the copy's folder is there already (both
    the grader's mistakes). Every problem of the submission's shape becomes a reason; an OSError
    while reading it (an unreadable folder, say) propagates, and collect_cohort makes it a reason.
    """
    _check_assignment(assignment)
    student_dir = Path(student_dir)
    parent = os.open(student_dir.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return _collect(parent, student_dir.name, student, assignment, Path(dest), limits, frozenset(run_files))
    finally:
        os.close(parent)


def collect_cohort(submitted: Path, assignment: str, dest: Path, limits: Limits = Limits(),
                   run_files: Iterable[str] = RUN_FILES) -> list[Collected]:
    """One Collected per entry of ``submitted/``, sorted by name; one student's problem never stops the rest.

    ``dest`` must be absent or empty (FileExistsError otherwise), so no copy mixes with an old one.
    """
    _check_assignment(assignment)
    dest = Path(dest)
    if dest.is_dir() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty")
    run_files = frozenset(run_files)
    parent = os.open(submitted, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with os.scandir(parent) as listing:
            names = sorted(entry.name for entry in listing)
        results = []
        for name in names:
            try:
                results.append(_collect(parent, name, name, assignment, dest, limits, run_files))
            except OSError as err:  # unsafe names never get this far: they are turned away before any I/O
                if is_safe_name(name):
                    shutil.rmtree(dest / name, ignore_errors=True)
                reason = f"the submission could not be read ({err.strerror or type(err).__name__})"
                results.append(Collected(shown(name), None, [reason]))
        return results
    finally:
        os.close(parent)


def _check_assignment(assignment: str) -> None:
    if not is_safe_name(assignment):
        raise ValueError(f"not a safe assignment name: {shown(assignment)}")


def _collect(parent_fd: int, name: str, student: str, assignment: str, dest: Path, limits: Limits,
             run_files: frozenset[str]) -> Collected:
    """The submission in folder ``name`` of the open folder ``parent_fd``, for ``student``."""
    if not is_safe_name(student):
        return Collected(shown(student), None, [f"{shown(student)}: not a safe student name, so not collected"])
    st = _lstat(name, parent_fd)
    if st is None:
        return Collected(student, None, [f"{shown(name)}: no such student folder"])
    if problem := _folder_problem(name, st):  # a link to someone else's folder, or a file
        return Collected(student, None, [problem])
    student_fd = _open_dir(name, parent_fd)
    try:
        problem = _folder_problem(assignment, _lstat(assignment, student_fd))
        if problem:
            return Collected(student, None, [problem])
        assignment_fd = _open_dir(assignment, student_fd)
        try:
            reasons = _Reasons()
            outputs_fd, candidates = _candidates(assignment_fd, reasons, limits, run_files)
            try:
                folder = _copy_all(candidates, dest / student / assignment, reasons, limits)
            finally:
                if outputs_fd is not None:
                    os.close(outputs_fd)
            return Collected(student, folder, reasons.closed())
        finally:
            os.close(assignment_fd)
    finally:
        os.close(student_fd)


def _candidates(top_fd: int, reasons: _Reasons, limits: Limits, run_files: frozenset[str]
                ) -> tuple[int | None, list[_Candidate]]:
    """The files to copy from the open assignment folder and its outputs/ (left open: returned first)."""
    budget = _Budget(limits.max_entries)
    top, outputs_st = _scan(top_fd, "", run_files, reasons, budget)
    outputs: dict[str, str] = {}
    outputs_fd = None
    if outputs_st is not None:
        problem = _folder_problem(OUTPUTS, outputs_st)
        if problem:
            reasons.add(problem)
        else:
            outputs_fd = _open_dir(OUTPUTS, top_fd)
            try:
                outputs, _ = _scan(outputs_fd, OUTPUTS + "/", run_files, reasons, budget)
            except BaseException:
                os.close(outputs_fd)
                raise
    if budget.ran_out:  # first, so that the cap on reasons never hides it
        reasons.insert(0, f"more than {limits.max_entries} entries in the submission: only the first "
                          f"{limits.max_entries} were looked at")
    found = [_Candidate(top_fd, n, top[n], n, cap_for(n, limits)) for n in sorted(top) if n not in run_files]
    for name in sorted(n for n in top if n in run_files):
        if name in outputs:
            reasons.add(f"{top[name]}: also in {OUTPUTS}/, whose copy is kept")
        else:
            found.append(_Candidate(top_fd, name, top[name], f"{OUTPUTS}/{name}", cap_for(name, limits)))
    found += [_Candidate(outputs_fd, n, outputs[n], f"{OUTPUTS}/{n}", cap_for(n, limits)) for n in sorted(outputs)]
    return outputs_fd, found


def _copy_all(candidates: list[_Candidate], out_dir: Path, reasons: _Reasons, limits: Limits) -> Path | None:
    """Copy the candidates into ``out_dir`` (created here, removed again if nothing lands); the folder or None."""
    if not candidates:
        return None
    out_dir.mkdir(parents=True)  # FileExistsError: the grader's dest holds an old copy
    remaining, copied_any = limits.total_bytes, False
    try:
        for candidate in candidates:
            copied, reason = _copy(candidate, out_dir, remaining, limits)
            if reason:
                reasons.add(reason)
            else:
                remaining -= copied
                copied_any = True
    except BaseException:
        shutil.rmtree(out_dir, ignore_errors=True)
        _remove_if_empty(out_dir.parent)
        raise
    if not copied_any:
        shutil.rmtree(out_dir)
        _remove_if_empty(out_dir.parent)
        return None
    return out_dir


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass
