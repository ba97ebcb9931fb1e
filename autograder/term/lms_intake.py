"""``python -m autograder lms a5 DOWNLOAD``: an LMS's download into ``submitted/``, each student in a unit.

The download (Canvas's or Moodle's zip, or the folder it was unzipped into) is listed in a unit of its
own (names only: a zip's directory, a folder's regular files, links never followed); its files are
grouped by student with the course's file-name regexp (``autograder.term.lms``); then each student's
files, loose or zipped, are written into a new folder in that student's own unit (``lms_zip``: regular
files only, inside that folder, within size and count limits), and put in place as
``submitted/<student>/<assignment>/`` in one rename, replacing a copy taken before. A time the names
carry goes to ``timestamp.txt`` (nbgrader's lateness reads it); the LMS's own late mark and ids go to the
course's ``lms_intake.csv``, which ``nbgrader export`` carries into ``grades.csv``. A download no name
matches is an error that shows the first names and the regexp; otherwise the command ends with the
step's summary (students the LMS marked late, files left out, files matching no name).
"""
from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
import uuid
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from autograder.collecting.safe_files import shown
from autograder.collecting.student_ids import id_problem
from autograder.exports.step_summary import Problem, print_summary
from autograder.term import lms
from autograder.term.lms_zip import Budget, ZipLimits, entry_parts, extract, write_new
from autograder.units.limits import UnitLimits
from autograder.units.stage import Step, outcomes

MAX_LISTED = 100_000  # files of a download listed (a class of 1,000 handing in 100 files each)
MAX_UNMATCHED_SHOWN = 10  # files matching no name, each a line of the summary; the rest counted
LISTING = Step("lms listing", UnitLimits(seconds=120, memory_mb=1024), preload=("autograder.term.lms_intake",))
TAKING = Step("lms hand-in", UnitLimits(seconds=300, memory_mb=1024), preload=("autograder.term.lms_intake",))


def list_download(download: str) -> list[str]:
    """In a unit: the download's files, as paths below it (``/`` between folders), at most MAX_LISTED."""
    if zipfile.is_zipfile(download) and os.path.isfile(download):
        with zipfile.ZipFile(download) as zf:
            return [i.filename.replace("\\", "/") for i in zf.infolist()[:MAX_LISTED] if not i.is_dir()]
    found: list[str] = []
    for folder, dirs, files in os.walk(download):  # os.walk never descends through a link
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            if stat.S_ISREG(os.lstat(path).st_mode):
                found.append(os.path.relpath(path, download).replace(os.sep, "/"))
            if len(found) >= MAX_LISTED:
                return found
    return found


@dataclass
class Taken:
    """What one student's unit wrote."""

    files: list[str] = field(default_factory=list)  # paths in the submission
    notes: list[str] = field(default_factory=list)  # what was left out, the instructor's words


@contextmanager
def _download(download: str):
    """Open the download once: a function giving each of its files (at a path below it), readable; a
    folder's file is opened without following a link and must be regular."""
    if os.path.isdir(download):
        def opened(path: str):
            parts = entry_parts(path)
            if parts is None:
                raise ValueError("a path that leads outside the download")
            fd = os.open(os.path.join(download, *parts), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                raise ValueError("not a regular file")
            return os.fdopen(fd, "rb")

        yield opened
        return
    with zipfile.ZipFile(download) as zf:
        yield zf.open


def take(download: str, entries: list[tuple[str, str]], dest: str, assignment: str, keep_paths: bool = False,
         limits: ZipLimits = ZipLimits()) -> Taken:
    """In the student's unit: their files into the new folder ``dest``: each zip's files (never a zip in
    it), then the loose files, each where ``lms.place`` puts it (``keep_paths``: at its path in the
    download, a zip's files below the zip's name). A second copy of a file is left out with a note."""
    known = lms.known_names(assignment)
    taken, budget = Taken(), Budget(limits)
    Path(dest).mkdir(parents=True)
    zips = [e for e in entries if e[1].lower().endswith(".zip")]
    with _download(download) as opened:
        for path, own in zips + [e for e in entries if e not in zips]:
            label = shown(own)
            base = (entry_parts(path[:-4]) or []) if keep_paths else []

            def where(parts: list[str], base=base) -> str:
                return "/".join(base + parts) if keep_paths else lms.place(parts, assignment, known)

            try:
                with opened(path) as source:
                    if own.lower().endswith(".zip"):
                        with tempfile.TemporaryFile() as copy:
                            if _bounded_copy(source, copy, limits.total_bytes):
                                taken.files += extract(copy, Path(dest), where, budget, taken.notes, label)
                            else:
                                taken.notes.append(f"{label}: larger than one student's files may be, not opened")
                        continue
                    parts = entry_parts(path if keep_paths else own)
                    rel = ("/".join(parts) if keep_paths else where(parts)) if parts else None
                    if rel is None or rel in taken.files:
                        taken.notes.append(f"{label}: " + ("a second copy of it, not taken" if rel else
                                                           "a name that cannot be a file's, not taken"))
                    elif write_new(Path(dest), rel, source, budget, taken.notes, label):
                        taken.files.append(rel)
            except (zipfile.BadZipFile, OSError, ValueError, RuntimeError, EOFError) as err:
                taken.notes.append(f"{label}: could not be read ({type(err).__name__}), not taken")
    return taken


def _bounded_copy(source, out, cap: int) -> bool:
    """Copy at most ``cap`` bytes; False when there was more."""
    written = 0
    while chunk := source.read(1 << 20):
        written += len(chunk)
        if written > cap:
            return False
        out.write(chunk)
    out.seek(0)
    return True


class NothingMatched(Exception):
    """A download none of whose files a hand-in name matches (the words show the first names)."""


def intake(download: Path, course: Path, assignment: str, pattern, lms_name: str, roster: dict[str, str],
           penalises: bool, workers: int = 2) -> tuple[list[lms.IntakeRecord], list[Problem]]:
    """The download's hand-ins into ``course/submitted``, a unit each: the students taken and what the
    summary says. Raises
    NothingMatched (nothing written) when no file's path matches ``pattern``."""
    listed, = outcomes(LISTING, 1, lambda _: (list_download, (str(download),)))
    if not listed.ok:
        raise NothingMatched(f"the download could not be listed: {listed.failure}")
    hand_ins, unmatched = lms.group(listed.value, pattern, roster)
    if not hand_ins:
        first = ", ".join(shown(p) for p in listed.value[:5]) or "none"
        raise NothingMatched(f"no file of {download} matches the {lms_name} hand-in names (the regexp "
                             f"{pattern.pattern!r} must match each file's whole path below the download); its first "
                             f"files: {first}")
    problems = [Problem(p, "matches no hand-in name: not taken", act=True) for p in unmatched[:MAX_UNMATCHED_SHOWN]]
    if len(unmatched) > MAX_UNMATCHED_SHOWN:
        problems.append(Problem(f"{len(unmatched) - MAX_UNMATCHED_SHOWN} more file(s)", "match no hand-in name",
                                act=True))
    usable = []
    for hand_in in hand_ins:
        problem = id_problem(hand_in.student)
        if problem:
            problems.append(Problem(hand_in.student, f"cannot be a student id ({problem}): not taken", act=True))
        else:
            usable.append(hand_in)
    staging = course / f".lms-intake-{uuid.uuid4().hex[:8]}"
    try:
        done = outcomes(TAKING, len(usable), lambda i: (take, (str(download), usable[i].entries,
                                                               str(staging / str(i)), assignment)), workers=workers)
        records = []
        for i, (hand_in, outcome) in enumerate(zip(usable, done)):
            problems += _place(course, assignment, hand_in, outcome, staging / str(i), lms_name, penalises, records)
        lms.write_intake(course, records)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return records, problems


def _place(course: Path, assignment: str, hand_in: lms.HandIn, outcome, staged: Path, lms_name: str,
           penalises: bool, records: list) -> list[Problem]:
    """Put one student's unit's folder in place as their submission; what the summary says of them."""
    student = hand_in.student
    if not outcome.ok or not outcome.value.files:
        why = f"could not be taken: {outcome.failure}" if not outcome.ok else "no file could be taken"
        return [Problem(student, why + (f" ({'; '.join(outcome.value.notes[:3])})" if outcome.ok else ""),
                        act=True)]
    taken = outcome.value
    dest = course / "submitted" / student / assignment
    dest.parent.mkdir(parents=True, exist_ok=True)
    if hand_in.timestamp is not None:
        (staged / "timestamp.txt").write_text(f"{hand_in.timestamp:%Y-%m-%d %H:%M:%S.%f} UTC", encoding="utf-8")
    old = dest.parent / f".{assignment}.replaced-{uuid.uuid4().hex[:8]}"
    if dest.is_dir():
        os.rename(dest, old)
    os.rename(staged, dest)
    shutil.rmtree(old, ignore_errors=True)
    records.append(lms.IntakeRecord(assignment, student, lms_name, hand_in.lms_user_id, hand_in.late,
                                    f"{hand_in.timestamp:%Y-%m-%d %H:%M:%S} UTC" if hand_in.timestamp else "",
                                    len(taken.files)))
    problems = [Problem(student, f"left out: {note}") for note in taken.notes[:5]]
    if hand_in.shared_name:
        problems.append(Problem(student, f"another {lms_name} user has the name {shown(hand_in.shared_name)}: filed "
                                         "under the name and their LMS id (a roster with LMS ids names them)"))
    if len(taken.notes) > 5:
        problems.append(Problem(student, f"and {len(taken.notes) - 5} more things left out"))
    if hand_in.late and hand_in.timestamp is None:
        problems.append(Problem(student, f"{lms_name} marked it late; its download gives no time, so nbgrader "
                                         "cannot measure it: write its time into its timestamp.txt"
                                if penalises else f"{lms_name} marked it late (the course has no late penalty)",
                                act=penalises))
    elif hand_in.late:
        problems.append(Problem(student, f"{lms_name} marked it late (handed in {hand_in.timestamp:%Y-%m-%d %H:%M} "
                                         "UTC)"))
    return problems


def main(course: Path, assignment: str, download: Path, lms_name: str | None, regexp: str | None) -> int:
    """The command; its exit status (2: nothing taken, 1: something needs the instructor)."""
    from autograder.term.course import course_config, course_db_url
    from autograder.term.late import late_plugin, policy_problem

    config = course_config(course)
    problem = policy_problem(config) or (None if download.exists() else f"{download} not found")
    configured = config.LmsFileNames.get("named_regexp") if "LmsFileNames" in config else None
    regexp = regexp or (lms.LMS_FILES[lms_name] if lms_name else configured)
    lms_name = lms_name or next((name for name, known in lms.LMS_FILES.items() if known == regexp), None)
    if problem or not regexp:
        print(f"error: {problem or 'say which LMS the download is from (--from canvas or moodle) or give --regexp'}",
              file=sys.stderr)
        return 2
    try:
        pattern = lms.compiled(regexp)
        records, problems = intake(download, course, assignment, pattern, lms_name or "the LMS",
                          lms.roster(course_db_url(course, config)),
                          bool(late_plugin(config).late_submission_penalty("", 100.0, 1e9)))
    except (lms.RegexpProblem, NothingMatched) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {course / 'submitted'}: {len(records)} student(s) of {assignment} from {lms_name or 'the LMS'} "
          f"(each listed in {course / lms.INTAKE_FILE})")
    return print_summary("lms intake", problems)
