"""Who handed a submission in: the owner of its files in the exchange, never the name written on it.

Every student can write into the exchange's ``inbound/``, by hand as well as through ``nbgrader
submit``, and nbgrader files a submission under the name in its folder's name,
``<student>+<assignment>+<timestamp>+<random>``. A folder named for a classmate with a far-future
time would win every collect and replace the classmate's work (nbgrader only logs a warning).
So an inbound entry counts for student X only when
  - it is a folder (not a link, not a file) owned by X's own account (``pwd``), and every entry
    inside it is X's too (a hard link to someone else's file is not X's work);
  - its name parses as nbgrader writes it, its time is not later than the collect, and the
    ``timestamp.txt`` inside (which late penalties read) says the same time.
Anything else is a ``Refusal`` naming the owner and the claimed student, for the instructor's
refusals file; nothing of a refused entry is copied. ``check_owner`` is nbgrader's own switch
(``ExchangeCollect.check_owner``): off, the owner is not compared (an exchange where every
submission is made by one account, as on a laptop); the rest still holds.

The top-level judgement (``judge``) reads only directory entries; the inside of a submission
(``inside_problem``) is read in the student's own unit of the collect (``exchange``).
"""
from __future__ import annotations

import datetime
import os
import pwd
import stat
from dataclasses import dataclass

from autograder.collecting.safe_files import DIR_FLAGS, shown

TIMESTAMP = "timestamp.txt"
MAX_ENTRIES = 20_000  # entries of one submission looked at; past it, refused as too many to check


@dataclass(frozen=True)
class Record:
    """A genuine inbound submission."""

    student: str  # the account that owns it, which is the student it names
    name: str  # its folder's name in inbound/
    timestamp: datetime.datetime  # its time (UTC, naive), from its name
    uid: int  # the owner's uid


@dataclass(frozen=True)
class Refusal:
    """An inbound entry that is not collected, and why (the instructor's words)."""

    entry: str  # its name in inbound/, as it can be shown
    claimed: str  # the student its name claims, as it can be shown
    owner: str  # the account that owns it ("uid N" when the uid has no account)
    why: str  # why it is refused, in the grader's words
    raw: str = ""  # its exact name in inbound/ (what --remove takes out), never shown as it is


def refused_inside(record: Record, why: str) -> Refusal:
    """A rightly named entry refused for what it holds (its owner is the student it names)."""
    return Refusal(shown(record.name), shown(record.student), shown(record.student), why, record.name)


def owner_name(uid: int) -> str:
    """The account name of ``uid``, else "uid N"."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def parse_name(name: str) -> tuple[str, str, str] | None:
    """(student, assignment, timestamp text) from an inbound folder's name (nbgrader's), or None."""
    parts = name.rsplit("+", 3)
    if len(parts) == 4:
        student, assignment, timestamp, _ = parts
    elif len(parts) == 3:
        student, assignment, timestamp = parts
    else:
        return None
    return (student, assignment, timestamp) if student and timestamp else None


def parse_time(text: str) -> datetime.datetime | None:
    """A time as nbgrader writes it (UTC, naive), else None."""
    from nbgrader.utils import parse_utc

    try:
        return parse_utc(text.strip())
    except (ValueError, OverflowError, TypeError, AttributeError):
        return None


def judge(inbound_fd: int, name: str, assignment: str, now: datetime.datetime, check_owner: bool
          ) -> Record | Refusal | None:
    """One entry of inbound/ (by name in the open folder): a genuine Record, a Refusal, or None
    if it is no submission of this assignment (another assignment's, or a hidden name nbgrader
    never lists)."""
    parsed = parse_name(name)
    if name.startswith(".") or parsed is None or parsed[1] != assignment:
        return None
    student, _, time_text = parsed
    try:
        st = os.stat(name, dir_fd=inbound_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None  # gone since it was listed
    owner = owner_name(st.st_uid)

    def refuse(why: str) -> Refusal:
        return Refusal(shown(name), shown(student), shown(owner), why, name)

    if not stat.S_ISDIR(st.st_mode):
        return refuse("not a folder (nbgrader submit makes a folder)")
    if check_owner:
        try:
            account = pwd.getpwnam(student)
        except KeyError:
            return refuse(f"it claims a student with no account here; it is owned by {shown(owner)}")
        if account.pw_uid != st.st_uid:
            return refuse(f"it claims to be {shown(student)}'s but is owned by {shown(owner)}")
    when = parse_time(time_text)
    if when is None:
        return refuse("its name holds no time nbgrader can read")
    if when > now:
        return refuse(f"its time ({shown(time_text)}) is later than the collect ({now:%Y-%m-%d %H:%M:%S} UTC)")
    return Record(student, name, when, st.st_uid)


def inside_problem(folder: str, record: Record, check_owner: bool) -> str | None:
    """Why the inside of a genuine-looking submission is not its owner's work, or None. Reads
    entries without following links (a link is judged by its own owner); timestamp.txt must
    match the name."""
    top = os.open(folder, DIR_FLAGS)
    try:
        seen = 0
        stack = [top]
        opened = []
        try:
            while stack:
                fd = stack.pop()
                with os.scandir(fd) as entries:
                    for entry in entries:
                        seen += 1
                        if seen > MAX_ENTRIES:
                            return f"it holds more than {MAX_ENTRIES} entries"
                        st = entry.stat(follow_symlinks=False)
                        if check_owner and st.st_uid != record.uid:
                            return (f"it holds {shown(entry.name)}, owned by {shown(owner_name(st.st_uid))}, not by "
                                    f"{shown(record.student)}")
                        if stat.S_ISDIR(st.st_mode):
                            inner = os.open(entry.name, DIR_FLAGS, dir_fd=fd)
                            opened.append(inner)
                            stack.append(inner)
        finally:
            for fd in opened:
                os.close(fd)
        try:
            fd = os.open(TIMESTAMP, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=top)
        except OSError:
            return f"it holds no readable {TIMESTAMP} (nbgrader submit writes one)"
        try:
            said = parse_time(os.read(fd, 256).decode("utf-8", errors="replace")) if stat.S_ISREG(
                os.fstat(fd).st_mode) else None
        finally:
            os.close(fd)
        if said != record.timestamp:
            return f"its {TIMESTAMP} does not say the time its name says"
        return None
    finally:
        os.close(top)
