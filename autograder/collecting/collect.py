"""The collect step: grading reads a sanitised copy of each submission, never ``submitted/`` itself.

nbgrader lays submissions out as ``submitted/<student>/<assignment>/...``: the notebooks at the top and the training
runs' files at the top or in ``outputs/``. A submission is the student's to shape: it may hold a link to the gradebook,
a FIFO named like a notebook, a folder named like a file, a huge file, a million empty ones, or a hard link (an honest
backup, or files gathered with ``cp -al``). This step looks up the files the assignment is made of **by name** (so no
number of other entries hides them), copies each one that is a regular file of bounded size (a hard-linked one by its
content) into a folder of the grader's (``autograder.collecting.safe_files`` reads without following links), and says
what it left out: to the instructor in ``dropped`` (names shown sanitised), and to the student, for an expected file
that is missing, in ``notes`` (grader-written words naming the assignment's file, never the student's). The entries it
does not need are listed only up to a cap, for those reasons and for names that miss an expected one by spaces or
capitals. Notebooks are copied as Jupyter saves them, and a missing one's renamed copy is taken in its place
(``autograder.collecting.notebook_copies``); the instructor reads one line about each in ``notices``.
"""
from __future__ import annotations

import os
import re
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from autograder.checks.run_files import (
    RUN_FILES,  # the run files graded: params and predictions of each run part
    RUN_LOGS,  # every run's log: the run cells show it; the audit retrains with its seeds
)
from autograder.collecting.notebook_copies import Marks, missing_notices, normalise, release_marks, stand_ins
from autograder.collecting.prints import Prints, prints_of
from autograder.collecting.safe_files import (
    MB,
    CopyRefused,
    OutsideLink,
    copy_regular,
    folder_problem,
    kind_of,
    listing,
    lstat_at,
    open_dir,
    resolve_inside,
    shown,
    size_text,
)
from autograder.collecting.student_ids import id_problem
from course_lib import layout

OUTPUTS = "outputs"  # the run files' folder, in a submission and in the copy
TIMESTAMP = "timestamp.txt"  # when nbgrader received the submission (late penalties read it)
SECRET = "submission_secret.txt"  # written by nbgrader submit; release_feedback needs it
# an assignment name: the instructor's, one plain path component (no leading dot: is_safe_name)
SAFE_NAME = re.compile(r"^[A-Za-z0-9_.@+-]{1,64}$")
MAX_REASONS = 100  # reasons kept per submission; the rest are counted in one last line


@dataclass(frozen=True)
class Limits:
    """Caps on what one submission may make the grader read and store."""

    notebook_bytes: int = 20 * MB  # one notebook
    params_bytes: int = 64 * MB  # one .params file (the course's largest model saves ~13 MB)
    predictions_bytes: int = 2 * MB  # one .predictions file (and any other small file)
    total_bytes: int = 200 * MB  # one submission in all
    max_entries: int = 2000  # entries listed a folder for reasons; wanted files are found by name


@dataclass(frozen=True)
class Wanted:
    """The files a submission of the assignment is made of, by name."""

    notebooks: frozenset[str]  # the assignment's notebooks, at the top of the submission
    run_files: frozenset[str]  # runs' params, predictions and logs, in outputs/ or at the top
    extras: frozenset[str] = frozenset({TIMESTAMP, SECRET})  # nbgrader's small files, at the top
    marks: Marks = ()  # each release notebook's grade_ids, to tell a renamed copy of a missing one (none: none taken)


def release_folder(assignment: str, course: Path | None = None) -> Path:
    """``course``'s ``release/<assignment>`` if it has one (it may give out only some notebooks), else the project's."""
    own = course / "release" / assignment if course is not None else None
    return own if own is not None and own.is_dir() else layout.RELEASE_DIR.parent / assignment


def wanted_for(assignment: str, release: Path | None = None, course: Path | None = None) -> Wanted:
    """The assignment's notebooks (``release``'s names and grade_ids; by default ``release_folder``), the run files."""
    release = release or release_folder(assignment, course)
    if not release.is_dir():
        return Wanted(frozenset(), frozenset(RUN_FILES) | RUN_LOGS)
    return Wanted(frozenset(p.name for p in release.glob("*.ipynb")), frozenset(RUN_FILES) | RUN_LOGS,
                  marks=release_marks(release))


@dataclass
class Collected:
    """One student's sanitised submission, or why there is none."""

    student: str  # the student id (the folder's name in submitted/)
    folder: Path | None  # the copy: dest/<student>/<assignment> (None: nothing usable found)
    dropped: list[str] = field(default_factory=list)  # instructor's: one reason per thing left out
    # for the student: expected file -> why it is missing, or that a renamed copy was graded as it (grader's words)
    notes: dict[str, str] = field(default_factory=dict)
    # copied file -> its source's (device, inode)
    inodes: dict[str, tuple[int, int]] = field(default_factory=dict)
    linked: list[str] = field(default_factory=list)  # copies whose source had other hard links
    prints: Prints = Prints((), (), "")  # the copy's hashes from its unit (for flags and re-runs)
    # instructor's, one sanitised line each, for every step's closing summary: a notebook not handed in, a renamed
    # copy taken in its place, a notebook normalised or unreadable, a submission not collected
    notices: list[str] = field(default_factory=list)


def not_collected(student: str, why: str) -> Collected:
    """A student with nothing usable collected: ``why`` in the instructor's log and in every step's summary."""
    return Collected(student, None, [why], notices=[why])


@dataclass(frozen=True)
class Refused:
    """A folder of submitted/ whose name cannot be a student id: refused by name before grading."""

    shown: str  # the name as it can be shown
    why: str  # the instructor's words


@dataclass
class Cohort:
    """What the collect step made of a whole submitted/ folder."""

    students: list[Collected]  # one per usable student id, sorted by id
    refused: list[Refused]  # folders whose names cannot be ids


class _Reasons(list):
    """Reasons of one submission, at most MAX_REASONS of them plus a count of the rest."""

    extra = 0

    def add(self, reason: str) -> None:
        if len(self) < MAX_REASONS:
            self.append(reason)
        else:
            self.extra += 1

    def closed(self) -> list[str]:
        return list(self) + ([f"... and {self.extra} more things left out"] if self.extra else [])


def is_safe_name(name: str) -> bool:
    """Whether ``name`` can be an assignment name: a single plain path component."""
    return bool(SAFE_NAME.match(name)) and not name.startswith(".")


def cap_for(name: str, limits: Limits) -> int:
    """The size limit of one file, by its kind."""
    if name.endswith(".ipynb"):
        return limits.notebook_bytes
    if name.endswith(".params"):
        return limits.params_bytes
    return limits.predictions_bytes


def _near(name: str) -> str:
    return re.sub(r"\s+", "", name).casefold()


# --- one submission ------------------------------------------------------------------------------


@dataclass
class _Found:
    """A wanted file, as found: the open folder holding it and where its copy goes."""

    dir_fd: int  # the open folder holding it
    name: str  # its name in that folder (a link inside the submission resolved)
    label: str  # its path in the submission, as reasons show it
    target: str  # where the copy goes, relative to dest/<student>/<assignment>

    @property
    def wanted(self) -> str:
        """The assignment's name for it."""
        return os.path.basename(self.target)


class _Submission:
    """One assignment folder, open: looks wanted files up by name, lists the rest for reasons."""

    def __init__(self, top_fd: int, wanted: Wanted, limits: Limits, reasons: _Reasons):
        self.top_fd, self.wanted, self.limits, self.reasons = top_fd, wanted, limits, reasons
        self.notes: dict[str, str] = {}
        self.notices: list[str] = []
        self.held: list[int] = []  # folders opened following links, closed with the submission
        self.outputs_fd: int | None = None
        st = lstat_at(OUTPUTS, top_fd)
        place = (top_fd, OUTPUTS, st) if st is not None else None
        if st is not None and stat.S_ISLNK(st.st_mode):  # a link inside the submission is followed
            place = self._through_link([OUTPUTS], OUTPUTS)
        if place is not None:
            fd, name, st = place
            if problem := folder_problem(OUTPUTS, st):
                reasons.add(problem)
            else:
                self.outputs_fd = open_dir(name, fd)
                self.held.append(self.outputs_fd)

    def close(self) -> None:
        for fd in self.held:
            os.close(fd)

    def _through_link(self, parts: list[str], label: str) -> tuple[int, str, os.stat_result] | None:
        """Where a link in the submission leads, when it stays inside it: (folder, name, its lstat);
        None (with a reason and a note) when it leads out or nowhere."""
        try:
            resolved = resolve_inside(self.top_fd, parts)
        except OutsideLink as err:
            self.reasons.add(f"{shown(label)}: {err}, not taken")
            self.notes[os.path.basename(label)] = f"it is {err}: hand in the file itself"
            return None
        if resolved is None:
            self.reasons.add(f"{shown(label)}: a symbolic link to nothing, not taken")
            self.notes[os.path.basename(label)] = "it is a symbolic link to nothing: hand in the file itself"
            return None
        fd, name = resolved
        self.held.append(fd)
        return fd, name, lstat_at(name, fd)

    def _regular(self, dir_fd: int, name: str, label: str) -> tuple[int, str] | None | bool:
        """(folder, name) of a regular file, following a link that stays inside the submission; None
        when absent; False (with a reason and a note) for anything else."""
        st = lstat_at(name, dir_fd)
        if st is None:
            return None
        place = (dir_fd, name)
        if stat.S_ISLNK(st.st_mode):
            through = self._through_link(label.split("/"), label)
            if through is None:
                return False
            place, st = through[:2], through[2]
        if st is not None and stat.S_ISREG(st.st_mode):
            return place
        kind = kind_of(st.st_mode) if st is not None else "gone"
        self.reasons.add(f"{shown(label)}: {kind}, not a file")
        self.notes[os.path.basename(label)] = f"it is {kind}, not a file"
        return False

    def find(self) -> list[_Found]:
        """Wanted regular files: notebooks and extras at the top (a missing notebook's renamed copy in its place),
        run files in outputs/ first."""
        found, absent = [], set()
        for name in sorted(self.wanted.notebooks | self.wanted.extras):
            if place := self._regular(self.top_fd, name, name):
                found.append(_Found(*place, name, name))
            elif place is None and name in self.wanted.notebooks:
                absent.add(name)
        found += self._stand_ins(absent)
        for name in sorted(self.wanted.run_files):
            inside = self.outputs_fd is not None and self._regular(self.outputs_fd, name, f"{OUTPUTS}/{name}")
            at_top = self._regular(self.top_fd, name, name)
            if inside:
                found.append(_Found(*inside, f"{OUTPUTS}/{name}", f"{OUTPUTS}/{name}"))
                if at_top:
                    self.reasons.add(f"{name}: also in {OUTPUTS}/, whose copy is kept")
            elif at_top:
                found.append(_Found(*at_top, name, f"{OUTPUTS}/{name}"))
        return found

    def _stand_ins(self, absent: set[str]) -> list[_Found]:
        """The renamed copies taken in missing notebooks' places (``notebook_copies``), said to both readers."""
        limits = self.limits
        taken = stand_ins(self.top_fd, absent, self.wanted.notebooks, self.wanted.marks, limits.notebook_bytes,
                          limits.total_bytes, limits.max_entries, self.notes, self.notices)
        return [_Found(self.top_fd, name, name, release) for name, release in taken]

    def explain_the_rest(self, found: list[_Found]) -> None:
        """Reasons for what else is there (a bounded listing); notes for names near a wanted one."""
        taken = {f.label for f in found} | {f"{OUTPUTS}/{n}" for n in self.wanted.run_files} | set(self.notes)
        missing = {_near(n): n for n in self.wanted.notebooks if n not in {f.wanted for f in found} | set(self.notes)}
        folders = [("", self.top_fd)] + ([(f"{OUTPUTS}/", self.outputs_fd)] if self.outputs_fd is not None else [])
        for prefix, fd in folders:
            entries, cut = listing(fd, self.limits.max_entries)
            if cut:
                self.reasons.insert(0, f"{prefix or 'the submission'}: more than {self.limits.max_entries} entries; "
                                       "only the first were listed (the assignment's files were looked up by name)")
            for name, mode in entries:
                label = prefix + name
                if label in taken or label == OUTPUTS or name in self.wanted.run_files:
                    continue
                expected = missing.get(_near(name)) if not prefix else None
                if expected:
                    self.notes[expected] = ("a file whose name differs from it only in spaces or capitals was handed "
                                            "in instead: rename it")
                what = "a file" if stat.S_ISREG(mode) else kind_of(mode)
                why = "not one of the assignment's files" if stat.S_ISREG(mode) else "not a file"
                self.reasons.add(f"{shown(label)}: {why}" + (f" ({what} named like {expected})" if expected else ""))


def collect_submission(student_dir: Path, student: str, assignment: str, dest: Path, limits: Limits = Limits(),
                       wanted: Wanted | None = None) -> Collected:
    """Copy the wanted files of one student's submission to ``dest/<student>/<assignment>/``.

    ``student_dir`` is ``submitted/<student>``; its parent is the grader's and is trusted, nothing
    below it is. Notebooks land at the top of the copy and run files in its ``outputs/``, whichever
    of the two places they came from (``outputs/`` wins when both hold one). Raises ValueError for
    an unsafe ``assignment`` name and FileExistsError when the copy's folder is there already (both
    the grader's mistakes). An OSError while reading (an unreadable folder) propagates;
    collect_cohort makes it a reason.
    """
    check_assignment(assignment)
    wanted = wanted or wanted_for(assignment)
    student_dir = Path(student_dir)
    if problem := id_problem(student):
        return not_collected(shown(student), f"{shown(student)}: {problem}, so not collected")
    parent = os.open(student_dir.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        collected = collect_at(parent, student_dir.name, student, assignment, Path(dest), limits, wanted)
    finally:
        os.close(parent)
    collected.prints = prints_of(collected.folder)
    return collected


def collect_at(parent_fd: int, name: str, student: str, assignment: str, dest: Path, limits: Limits,
             wanted: Wanted) -> Collected:
    """The submission in folder ``name`` of the open folder ``parent_fd``, for ``student``."""
    st = lstat_at(name, parent_fd)
    if st is None:
        return not_collected(student, f"{shown(name)}: no such student folder")
    if problem := folder_problem(name, st):  # a link to someone else's folder, or a file
        return not_collected(student, problem)
    student_fd = open_dir(name, parent_fd)
    try:
        if problem := folder_problem(assignment, lstat_at(assignment, student_fd)):
            return not_collected(student, problem)
        assignment_fd = open_dir(assignment, student_fd)
        try:
            reasons = _Reasons()
            submission = _Submission(assignment_fd, wanted, limits, reasons)
            try:
                found = submission.find()
                submission.explain_the_rest(found)
                collected = Collected(student, None, notes=submission.notes, notices=submission.notices)
                collected.folder = _copy_all(found, dest / student / assignment, reasons, limits, collected)
            finally:
                submission.close()
            collected.dropped = reasons.closed()
            if collected.folder is not None:
                notebooks = sorted(t for t in collected.inodes if t.endswith(".ipynb"))
                collected.notices += [n for name in notebooks if (n := normalise(collected.folder / name,
                                                                                   limits.notebook_bytes))]
            collected.notices += missing_notices(wanted.notebooks, collected.inodes, collected.notes, collected.notices)
            return collected
        finally:
            os.close(assignment_fd)
    finally:
        os.close(student_fd)


def _copy_all(found: list[_Found], out_dir: Path, reasons: _Reasons, limits: Limits, into: Collected) -> Path | None:
    """Copy the found files into a new ``out_dir`` (removed if nothing lands); it, or None."""
    if not found:
        return None
    out_dir.mkdir(parents=True)  # FileExistsError: the grader's dest holds an old copy
    remaining = limits.total_bytes
    try:
        for item in found:
            cap, label = cap_for(item.wanted, limits), shown(item.label)
            try:
                st = copy_regular(item.dir_fd, item.name, label, out_dir / item.target, min(cap, remaining))
            except CopyRefused as refused:
                text = _over_total(label, limits) if refused.oversize and remaining < cap else str(refused)
                reasons.add(text)
                into.notes[item.wanted] = "it could not be taken: " + text.split(": ", 1)[-1]
                continue
            remaining -= st.st_size
            into.inodes[item.target] = (st.st_dev, st.st_ino)
            if st.st_nlink > 1:  # an honest backup or cp -al: the content counts, the link is noted
                into.linked.append(item.target)
    except BaseException:
        shutil.rmtree(out_dir, ignore_errors=True)
        _remove_if_empty(out_dir.parent)
        raise
    if not into.inodes:
        shutil.rmtree(out_dir)
        _remove_if_empty(out_dir.parent)
        return None
    return out_dir


def _over_total(label: str, limits: Limits) -> str:
    return f"{label}: would take the submission past the {size_text(limits.total_bytes)} limit for all files"


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass


def check_assignment(assignment: str) -> None:
    """ValueError unless ``assignment`` is a safe name (the grader's mistake, not a student's)."""
    if not is_safe_name(assignment):
        raise ValueError(f"not a safe assignment name: {shown(assignment)}")
