"""Hand-ins downloaded from Canvas or Moodle: whose each file is, and where in the submission it goes.

An LMS's download names every file after the student who handed it in:
  - Canvas ("Download Submissions": a zip of loose files)
    ``doejane_LATE_12345_6789_02_finetune_without_pretraining.ipynb``: the student's sortable name,
    ``LATE`` when Canvas counts it late, their Canvas user id, the attachment's id, then the file's own
    name (``-1``, ``-2`` added to a file handed in again);
  - Moodle ("Download all submissions": a zip of one folder per student)
    ``Jane Doe_12345_assignsubmission_file_/02_finetune_without_pretraining.ipynb`` (loose files
    ``Jane Doe_12345_assignsubmission_file_02_...`` when folders are off): full name, participant id.
``CANVAS_FILES`` and ``MOODLE_FILES`` read those names; a course's own regexp may replace them
(``c.LmsFileNames.named_regexp``). A regexp must match a file's **whole path below the download**
(``re.fullmatch``) and name the groups ``name`` (or ``student_id``) and ``file``; ``late``,
``lms_user_id`` and ``timestamp`` (a time nbgrader's ``parse_utc`` reads) are kept when present.
A student is the gradebook's student whose ``lms_user_id`` is the file's (``nbgrader db student import``
with that column), else the name the file carries. A file may be a notebook, a run file, or a zip of
the ``a5/`` folder (docs/student_copy.md asks for one): its files go where they stood below ``a5/`` (or
``outputs/``), a loose file to the top, and Canvas's ``-1`` comes off a name the assignment knows.

``LmsFileNames`` and ``SafeExtractor`` are the same rules as nbgrader's ``zip_collect`` plugins; the
course's own ``python -m autograder lms`` (``autograder.term.lms_intake``) is the route with the summary.
"""
from __future__ import annotations

import csv
import datetime
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.plugins import FileNameCollectorPlugin

CANVAS_FILES = r"(?P<name>[^/]+?)(?P<late>_LATE)?_(?P<lms_user_id>\d+)_\d+_(?P<file>.+)"
MOODLE_FILES = r"(?P<name>[^/]+?)_(?P<lms_user_id>\d+)_assignsubmission_file_/?(?P<file>.+)"
LMS_FILES = {"canvas": CANVAS_FILES, "moodle": MOODLE_FILES}
INTAKE_FILE = "lms_intake.csv"  # in the course folder: each student's last hand-in from an LMS download
INTAKE_COLUMNS = ["assignment", "student_id", "lms", "lms_user_id", "late", "timestamp", "files"]
OUTPUTS = "outputs"
RESUBMITTED = re.compile(r"(?P<stem>.+)-\d+(?P<ext>\.[^.]+)$")  # Canvas's name for a file handed in again


class RegexpProblem(ValueError):
    """A file-name regexp that cannot be used (the words say why)."""


def compiled(regexp: str) -> re.Pattern:
    """The regexp, checked for the groups it must name."""
    try:
        pattern = re.compile(regexp)
    except re.error as err:
        raise RegexpProblem(f"the file-name regexp does not compile: {err}") from None
    if "file" not in pattern.groupindex or not {"name", "student_id"} & set(pattern.groupindex):
        raise RegexpProblem("the file-name regexp must name the groups 'file' and 'name' (or 'student_id')")
    return pattern


@dataclass
class HandIn:
    """One student's files in a download."""

    student: str  # the course's student id for them
    lms_user_id: str = ""  # the LMS's id in the file names ("" when the regexp has none)
    late: bool = False  # the LMS marked it late
    timestamp: datetime.datetime | None = None  # when handed in (UTC), when the names say
    entries: list[tuple[str, str]] = field(default_factory=list)  # (path in the download, the file's own path)
    known: bool = False  # found in the gradebook's roster by their LMS id
    shared_name: str = ""  # the name the file names give, when another LMS user has it too ("": nobody)


def group(paths: list[str], pattern: re.Pattern, roster: dict[str, str]) -> tuple[list[HandIn], list[str]]:
    """The download's files by student (sorted by id), and the paths no name matches."""
    from nbgrader.utils import parse_utc

    by_user: dict[tuple[str, str], HandIn] = {}  # (the id the names give, the LMS's id) -> their files
    unmatched = []
    for path in paths:
        match = pattern.fullmatch(path)
        if match is None:
            unmatched.append(path)
            continue
        groups = {k: v for k, v in match.groupdict().items() if v is not None}
        lms_id = groups.get("lms_user_id", "")
        student = groups.get("student_id") or roster.get(lms_id) or groups["name"]
        hand_in = by_user.setdefault((student, lms_id), HandIn(student, lms_id, known=lms_id in roster))
        hand_in.late |= bool(groups.get("late"))
        hand_in.entries.append((path, groups["file"]))
        if groups.get("timestamp"):
            try:
                when = parse_utc(groups["timestamp"])
            except (ValueError, OverflowError):
                continue
            hand_in.timestamp = max(hand_in.timestamp or when, when)
    named = [student for student, _ in by_user]
    for (student, lms_id), hand_in in by_user.items():  # two LMS users of one name (two Jane Does): kept apart
        if named.count(student) > 1:
            hand_in.student = f"{student}-{lms_id}"
            hand_in.shared_name = student
    return sorted(by_user.values(), key=lambda h: h.student), unmatched


def known_names(assignment: str) -> frozenset[str]:
    """The names a submission's files have: the release's notebooks and the runs' files."""
    from autograder.collecting.collect import wanted_for

    wanted = wanted_for(assignment)
    return wanted.notebooks | wanted.run_files


def place(parts: list[str], assignment: str, known: frozenset[str]) -> str:
    """Where a file whose path (in the student's zip, or the name the LMS kept) is ``parts`` goes in the
    submission: what stood below the last ``a5/`` (or from ``outputs/`` on), else the top."""
    folders = parts[:-1]
    if assignment in folders:
        parts = parts[len(folders) - folders[::-1].index(assignment):]
    elif OUTPUTS in folders:
        parts = parts[len(folders) - 1 - folders[::-1].index(OUTPUTS):]
    else:
        parts = parts[-1:]
    again = RESUBMITTED.fullmatch(parts[-1])
    if again and parts[-1] not in known and again["stem"] + again["ext"] in known:
        parts = [*parts[:-1], again["stem"] + again["ext"]]
    return "/".join(parts)


def roster(db_url: str | None) -> dict[str, str]:
    """LMS user id -> student id, from the gradebook's students (none when it has no such ids or no file)."""
    if not db_url:
        return {}
    from nbgrader.api import Gradebook
    from sqlalchemy.engine import make_url

    url = make_url(db_url)
    if url.get_backend_name() == "sqlite" and not (url.database and os.path.isfile(url.database)):
        return {}
    with Gradebook(db_url) as gb:
        return {s.lms_user_id: s.id for s in gb.students if s.lms_user_id}


@dataclass(frozen=True)
class IntakeRecord:
    """One student's last hand-in from an LMS, as the course's intake file keeps it."""

    assignment: str
    student: str
    lms: str  # "canvas", "moodle" or "custom"
    lms_user_id: str
    late: bool  # the LMS marked it late
    timestamp: str  # the time written to its timestamp.txt ("" when the download gave none)
    files: int  # files taken


def read_intake(course: Path) -> dict[tuple[str, str], IntakeRecord]:
    """(assignment, student) -> the record, from the course's intake file (none: empty)."""
    from autograder.exports.csv_safe import unescape_cell

    try:
        with open(Path(course) / INTAKE_FILE, newline="", encoding="utf-8") as f:
            rows = [{k: unescape_cell(v or "") for k, v in row.items()} for row in csv.DictReader(f)]
    except OSError:
        return {}
    records = {}
    for row in rows:
        try:
            record = IntakeRecord(row["assignment"], row["student_id"], row["lms"], row["lms_user_id"],
                                  row["late"] == "yes", row["timestamp"], int(row["files"] or 0))
        except (KeyError, ValueError):
            continue
        records[(record.assignment, record.student)] = record
    return records


def write_intake(course: Path, records: list[IntakeRecord]) -> Path:
    """Keep ``records`` in the intake file, replacing those of the same students and assignment."""
    from autograder.exports.csv_safe import write_csv

    kept = read_intake(course)
    kept.update({(r.assignment, r.student): r for r in records})
    rows = [[r.assignment, r.student, r.lms, r.lms_user_id, "yes" if r.late else "", r.timestamp, r.files]
            for _, r in sorted(kept.items())]
    return write_csv(Path(course) / INTAKE_FILE, INTAKE_COLUMNS, rows)


def _course_roster(app) -> dict[str, str]:
    """The roster of the gradebook an nbgrader app (zip_collect) works with ({} without one)."""
    coursedir = getattr(app, "coursedir", None)
    return roster(coursedir.db_url) if coursedir is not None else {}


class LmsFileNames(FileNameCollectorPlugin):
    """nbgrader zip_collect's file-name collector with the course's rules: ``named_regexp`` matched against a
    file's whole path below the extracted folder, the student found by their LMS id in the roster, the file
    put where it stood below ``a5/`` (``place``)."""

    def pattern(self) -> re.Pattern:
        """The configured regexp, checked (RegexpProblem names what is wrong)."""
        return compiled(self.named_regexp)

    def _hand_ins(self, root: str) -> dict[str, HandIn]:
        """Every extracted file's hand-in (path below ``root`` -> it), grouped once over them all, so two LMS
        users of one name are kept apart as the intake keeps them."""
        if getattr(self, "_by_path", None) is None:
            paths = [os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
                     for folder, _, names in os.walk(root) for name in names]
            hand_ins, _ = group(sorted(paths), self.pattern(), _course_roster(self.parent))
            self._by_path = {path: h for h in hand_ins for path, _ in h.entries}
        return self._by_path

    def collect(self, submitted_file: str) -> dict | None:
        """nbgrader's question for each extracted file: whose it is and where it goes (None: not a hand-in)."""
        app = self.parent
        root = app._format_collect_path(app.extracted_directory) if app is not None else os.path.dirname(
            submitted_file)
        rel = os.path.relpath(submitted_file, root).replace(os.sep, "/")
        hand_in = self._hand_ins(root).get(rel)
        if hand_in is None:
            self.log.warning("Not a hand-in (its path matches no hand-in name): %s", rel)
            return None
        own = next(file for path, file in hand_in.entries if path == rel)
        assignment = app.coursedir.assignment_id if app is not None else "a5"
        found = {"student_id": hand_in.student, "file_id": place(own.split("/"), assignment, known_names(assignment))}
        if hand_in.timestamp is not None:
            found["timestamp"] = f"{hand_in.timestamp:%Y-%m-%d %H:%M:%S.%f} UTC"
        return found
