"""nbgrader's collect (command and formgrader's button): a submission is its owner's; a unit each.

nbgrader's own collect files a submission under the student its folder's name claims, and
copies with ``shutil.copytree``, following links, for the whole class in one loop: a folder
named for a classmate replaces the classmate's work, a link named like a run file brings
the grader's answers into ``submitted/``, and one student's unreadable folder or a file
deleted mid-copy stops the collect for everyone after them. Here
  - an inbound entry is a student's only when their account owns it and all it holds, its
    time is no later than the collect and its ``timestamp.txt`` agrees
    (``autograder.nbgrader_glue.inbound``); anything else is refused, by name of owner and
    claimed student, into the course's ``collect_refused.csv``, and the collect ends in an
    error that says so (never "success" with a warning);
  - each student's latest genuine submission is copied in a unit of its own
    (``autograder.units``): into a staging folder, then put in place in one rename, so a
    copy that fails (a folder the student made unreadable, a file gone mid-copy) leaves the
    copy collected before untouched and that student's refusal row says why;
  - a collected submission is replaced only by a later genuine one (nbgrader's ``--update``,
    which formgrader's button sets), or by the one before the due date when asked
    (``before_duedate``);
  - links are copied as links (the collect step drops every one, with a reason), special files
    (FIFOs, sockets, devices) are left out.
"""
from __future__ import annotations

import datetime
import os
import shutil
import stat
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import ignore_patterns

from autograder.collecting.safe_files import shown
from autograder.exports.csv_safe import write_csv
from autograder.exports.step_summary import Problem, log_summary
from autograder.nbgrader_glue.inbound import Record, Refusal, inside_problem, judge, parse_time, refused_inside
from autograder.units.limits import UnitLimits
from autograder.units.stage import Step, outcomes

REFUSED_FILE = "collect_refused.csv"  # in the course folder: what the last collect refused, and why
# one student's copy: nbgrader's max_dir_size bounds it; listing and copying need little memory
COLLECT_STEP = Step("exchange collect", UnitLimits(seconds=300, memory_mb=1024),
                    preload=("autograder.nbgrader_glue.exchange",))


@dataclass(frozen=True)
class CopyRules:
    """nbgrader's course settings a copy follows (picklable: they travel to the student's unit)."""

    ignore: tuple[str, ...]  # CourseDirectory.ignore: names left out
    include: tuple[str, ...]  # CourseDirectory.include: names taken
    max_file_size: int  # CourseDirectory.max_file_size (KB): larger files left out
    max_dir_size: int  # CourseDirectory.max_dir_size (KB): a larger submission is refused
    groupshared: bool  # CourseDirectory.groupshared: group-writable copies
    update: bool  # replace a collected submission by a later one (formgrader's button: yes)
    before_duedate: bool  # take the latest submission before the due date instead


@dataclass
class Collected:
    """What one student's unit did."""

    student: str  # the account that owns the submission
    action: str  # "collected", "updated", "kept" (nothing newer) or "refused"
    why: str = ""  # for "refused" and "kept"
    notes: list[str] = field(default_factory=list)  # things left out of the copy, for the log
    before: datetime.datetime | None = None  # the time of the submission collected before, if any


class _Notes(list):
    """A logger for nbgrader's ignore_patterns that keeps what it says."""

    def warning(self, message, *args):
        """Keep the message (every level is kept alike)."""
        self.append(message % args if args else message)

    info = debug = error = warning


def _size(folder: str) -> int:
    """Bytes of the regular files under ``folder``, links not followed (as nbgrader's get_size)."""
    total = 0
    for dirpath, _, files in os.walk(folder):
        for name in files:
            st = os.lstat(os.path.join(dirpath, name))
            if stat.S_ISREG(st.st_mode):
                total += st.st_size
    return total


def copy_submission(src: str, dest: str, rules: CopyRules, notes: list) -> None:
    """Copy ``src`` to the new folder ``dest``: links as links, special files left out, nbgrader's
    ignore and size rules applied."""
    if _size(src) > 1000 * rules.max_dir_size:
        raise ValueError(f"larger than the course's max_dir_size ({rules.max_dir_size} KB)")
    nbgraders = ignore_patterns(exclude=list(rules.ignore), include=list(rules.include),
                                max_file_size=rules.max_file_size, log=notes)

    def ignore(directory, names):
        left_out = set(nbgraders(directory, names))
        for name in names:
            mode = os.lstat(os.path.join(directory, name)).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                notes.append(f"not collecting {shown(name)}: not a file")
                left_out.add(name)
        return left_out

    shutil.copytree(src, dest, symlinks=True, ignore=ignore)
    if rules.groupshared:  # nbgrader's own step after its copy, never through a link
        for dirpath, _, filenames in os.walk(dest):
            _share(dirpath, 0o2770, 0o2777, notes)
            for name in filenames:
                if not os.path.islink(os.path.join(dirpath, name)):
                    _share(os.path.join(dirpath, name), 0o660, 0o777, notes)


def _share(path: str, bits: int, keep: int, notes: list) -> None:
    """Add ``bits`` to ``path``'s mode (within ``keep``), as nbgrader's groupshared does."""
    mode = os.lstat(path).st_mode
    if mode & bits != bits:
        try:
            os.chmod(path, (mode | bits) & keep)
        except PermissionError:
            notes.append(f"could not make {shown(os.path.basename(path))} groupshared")


def _existing_time(dest: str) -> datetime.datetime | None:
    """The time of the submission collected before (its timestamp.txt); None if none/unreadable."""
    try:
        with open(os.path.join(dest, "timestamp.txt"), "rb") as f:
            return parse_time(f.read(256).decode("utf-8", errors="replace"))
    except OSError:
        return None


def collect_student(src: str, record: Record, dest: str, rules: CopyRules, check_owner: bool) -> Collected:
    """In the student's unit: check the submission is all its owner's, copy it beside ``dest`` and
    put it in place in one rename, when nbgrader's rules want it replaced."""
    existing = _existing_time(dest) if os.path.isdir(dest) else None
    if os.path.isdir(dest):
        later = existing is None or record.timestamp > existing
        if not ((rules.update and later) or (rules.before_duedate and existing != record.timestamp)):
            return Collected(record.student, "kept", "no newer submission" if rules.update else
                             "already collected (--update takes a newer one)", before=existing)
    problem = inside_problem(src, record, check_owner)
    if problem:
        return Collected(record.student, "refused", problem)
    parent = os.path.dirname(dest)
    os.makedirs(parent, exist_ok=True)
    staging = os.path.join(parent, f".{os.path.basename(dest)}.collecting-{uuid.uuid4().hex[:8]}")
    notes = _Notes()
    try:
        copy_submission(src, staging, rules, notes)
        action = "collected"
        if os.path.isdir(dest):
            old = os.path.join(parent, f".{os.path.basename(dest)}.replaced-{uuid.uuid4().hex[:8]}")
            os.rename(dest, old)
            os.rename(staging, dest)
            shutil.rmtree(old, ignore_errors=True)
            action = "updated"
        else:
            os.rename(staging, dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Collected(record.student, action, notes=list(notes), before=existing)


class OwnedCollect(ExchangeCollect):
    """``nbgrader collect`` taking a submission only from the account that owns it, a unit each."""

    def init_src(self):
        """Judge every inbound entry; keep each student's chosen genuine submission."""
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        only = self.coursedir.student_id if self.coursedir.student_id not in ("", "*") else None
        genuine, self.refusals = judge_inbound(self.inbound_path, self.coursedir.assignment_id, self.check_owner,
                                               only)
        self.src_records = self._choose(genuine)

    def _choose(self, genuine: list[Record]) -> list[Record]:
        """Each student's latest genuine submission (or latest before the due date, if so told)."""
        from nbgrader.api import Gradebook, MissingEntry

        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                duedate = gb.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                duedate = None
        chosen = []
        for student in sorted({r.student for r in genuine}):
            mine = sorted((r for r in genuine if r.student == student), key=lambda r: r.timestamp, reverse=True)
            early = [r for r in mine if duedate is not None and r.timestamp <= duedate] if self.before_duedate else []
            chosen.append(early[0] if early else mine[0])
        return chosen

    def copy_files(self):
        """Collect each chosen submission in a unit; write the refusals; fail if any."""
        records = self.src_records
        assignment = self.coursedir.assignment_id
        self.log.info("Processing %d genuine submission(s) of '%s' for course '%s'", len(records), assignment,
                      self.coursedir.course_id)
        rules = CopyRules(tuple(self.coursedir.ignore), tuple(self.coursedir.include), self.coursedir.max_file_size,
                          self.coursedir.max_dir_size, self.coursedir.groupshared, self.update, self.before_duedate)
        dests = [self.coursedir.format_path(self.coursedir.submitted_directory, r.student, assignment) for r in records]
        done = outcomes(COLLECT_STEP, len(records), lambda i: (collect_student, (
            os.path.join(self.inbound_path, records[i].name), records[i], dests[i], rules, self.check_owner)),
            workers=2)
        refusals, problems = list(self.refusals), []
        for record, outcome in zip(records, done):
            result = outcome.value if outcome.ok else Collected(record.student, "refused", outcome.failure)
            for note in result.notes:
                self.log.warning("%s: %s", shown(record.student), note)
            when = f"{record.timestamp:%Y-%m-%d %H:%M:%S} UTC"
            before = f"{result.before:%Y-%m-%d %H:%M:%S} UTC" if result.before else "an unreadable time"
            if result.action == "refused":
                refusals.append(refused_inside(record, result.why))
            elif result.action == "kept":
                self.log.info("%s: kept the submission of %s: %s", shown(record.student), before, result.why)
            elif result.action == "updated":
                self.log.info("Updated submission: %s %s: took the one of %s over that of %s", shown(record.student),
                              assignment, when, before)
                problems.append(Problem(record.student, f"handed in again: took the submission of {when} over "
                                                        f"that of {before}"))
            else:
                self.log.info("Collected submission: %s %s, handed in %s", shown(record.student), assignment, when)
        path = write_refusals(Path(self.coursedir.root), refusals)
        problems += [Problem(r.owner, f"REFUSED inbound {r.entry} (claims {r.claimed}, owned by {r.owner}): {r.why}",
                             act=True) for r in refusals]
        log_summary(self.log, "collect", problems)
        if refusals:
            self.fail(f"collected every genuine submission; refused {len(refusals)} inbound entr"
                      f"{'y' if len(refusals) == 1 else 'ies'}, listed in {path} (`python -m autograder inbound` "
                      "lists them, `--remove` takes them out of the exchange)")


def judge_inbound(inbound: str, assignment: str, check_owner: bool, only: str | None = None,
                  now: datetime.datetime | None = None) -> tuple[list[Record], list[Refusal]]:
    """Every entry of ``inbound`` for ``assignment`` (only ``only``'s claims when given): genuine
    records and refusals. Reads directory entries only."""
    now = now or datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    genuine: list[Record] = []
    refusals: list[Refusal] = []
    fd = os.open(inbound, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with os.scandir(fd) as entries:
            names = sorted(e.name for e in entries)
        for name in names:
            verdict = judge(fd, name, assignment, now, check_owner)
            if verdict is None or (only is not None and not name.startswith(f"{only}+")):
                continue
            (genuine if isinstance(verdict, Record) else refusals).append(verdict)
    finally:
        os.close(fd)
    return genuine, refusals


def write_refusals(course: Path, refusals: list[Refusal]) -> Path:
    """The course's ``collect_refused.csv``: the last collect's refusals (none: just its header)."""
    return write_csv(course / REFUSED_FILE, ["entry", "claimed_student", "owner", "why"],
                     [[r.entry, r.claimed, r.owner, r.why] for r in refusals])

