"""Late work the nbgrader way: the gradebook's due date and extensions, a late-submission plugin, one penalty.

nbgrader measures lateness itself: a submission's ``timestamp.txt`` against the assignment's due date
in the gradebook (``nbgrader db assignment add a5 --duedate=...``) plus the student's extension
(``SubmittedAssignment.extension``). Its ``AssignLatePenalties`` step of autograde asks the configured
``LateSubmissionPlugin`` for each notebook's penalty, and ``nbgrader export`` writes ``score = raw_score
- late_submission_penalty``. ``CourseLatePenalty`` is the course's plugin: no penalty, zero, or a
percent of the points earned per started hour or day late, with a cap and a cut-off after which
everything is taken, set by typed settings in nbgrader_config.py (``c.CourseLatePenalty...``).

nbgrader computes the penalty once, from the notebook's score when its autograde ran; the score of record
(``autograder grade --gradebook``) and the manual points come later and change that score. So
``refresh_penalties`` recomputes every notebook's penalty from its score as it stands, with the same
plugin; ``grade --gradebook``, ``extend``, ``generate_feedback`` and ``export`` call it, so the penalty
is the policy's share of the points as they are now: never lost with the kernel's scores, never taken twice.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from nbgrader.plugins import BasePlugin, LateSubmissionPlugin
from traitlets import Enum, Float

METHODS = ("none", "zero", "per_hour", "per_day")
UNIT_SECONDS = {"per_hour": 3600.0, "per_day": 86400.0}


@dataclass(frozen=True)
class LatePolicy:
    """How many of a late submission's points are taken."""

    method: str = "none"  # none, zero (everything), per_hour or per_day (``percent`` per started unit)
    percent: float = 0.0  # per_hour/per_day: percent of the points earned taken per started hour or day late
    cap_percent: float = 100.0  # per_hour/per_day: at most this percent of the points earned is taken
    cutoff_hours: float | None = None  # later than this many hours: everything is taken (None: no cut-off)
    grace_minutes: float = 0.0  # lateness up to this is not late (a clock's or an upload's delay)

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"late policy: method {self.method!r} is none of {', '.join(METHODS)}")
        for name in ("percent", "cap_percent", "grace_minutes", "cutoff_hours"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value >= 0):
                raise ValueError(f"late policy: {name} must be a number of at least 0, not {value!r}")
        if self.cap_percent > 100:
            raise ValueError(f"late policy: cap_percent must be at most 100, not {self.cap_percent!r}")

    def fraction(self, seconds_late: float) -> float:
        """The share (0..1) of the points earned taken from work ``seconds_late`` past its due date."""
        if self.method == "none" or seconds_late <= self.grace_minutes * 60:
            return 0.0
        if self.method == "zero" or (self.cutoff_hours is not None and seconds_late > self.cutoff_hours * 3600):
            return 1.0
        units = math.ceil(seconds_late / UNIT_SECONDS[self.method])
        return min(units * self.percent, self.cap_percent) / 100

    def penalty(self, score: float, seconds_late: float) -> float:
        """Points taken from ``score`` (within 0..score)."""
        score = max(score, 0.0)
        return min(round(score * self.fraction(seconds_late), 6), score)  # rounded: no 1e-16 points shown

    def describe(self) -> str:
        """The policy in a line, for the instructor."""
        if self.method in ("none", "zero"):
            return {"none": "no late penalty", "zero": "late work scores zero"}[self.method]
        unit = self.method.removeprefix("per_")
        cut = f", zero after {self.cutoff_hours:g} h late" if self.cutoff_hours is not None else ""
        return f"{self.percent:g}% of the points earned per started {unit} late, at most {self.cap_percent:g}%{cut}"


class CourseLatePenalty(LateSubmissionPlugin):
    """nbgrader's late-submission plugin, with the course's policies (``LatePolicy``)."""

    penalty_method = Enum(METHODS, default_value="none", help="none; zero: late work scores 0; per_hour, per_day: "
                          "`percent` of the points earned per started hour or day late").tag(config=True)
    percent = Float(0.0, help="per_hour/per_day: percent of the points earned taken per started unit late").tag(
        config=True)
    cap_percent = Float(100.0, help="per_hour/per_day: at most this percent of the points earned").tag(config=True)
    cutoff_hours = Float(None, allow_none=True, help="work later than this many hours scores 0 (None: never)").tag(
        config=True)
    grace_minutes = Float(0.0, help="lateness up to this many minutes is not late").tag(config=True)

    @property
    def policy(self) -> LatePolicy:
        """The settings as a validated policy (ValueError names a wrong one)."""
        return LatePolicy(self.penalty_method, self.percent, self.cap_percent, self.cutoff_hours, self.grace_minutes)

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float) -> float | None:
        """nbgrader's question: the points taken from one notebook's ``score``."""
        return self.policy.penalty(score, total_seconds_late)


def late_plugin(config):
    """The late-submission plugin nbgrader's autograde would use with ``config`` (a traitlets Config): the
    class ``AssignLatePenalties.plugin_class`` names (nbgrader's own by default), configured by it."""
    from traitlets.utils.importstring import import_item

    named = config.AssignLatePenalties.get("plugin_class", LateSubmissionPlugin) if "AssignLatePenalties" in config \
        else LateSubmissionPlugin
    cls = import_item(named) if isinstance(named, str) else named
    if not (isinstance(cls, type) and issubclass(cls, BasePlugin) and hasattr(cls, "late_submission_penalty")):
        raise ValueError(f"AssignLatePenalties.plugin_class {named!r} is no late-submission plugin")
    return cls(config=config)


def policy_problem(config) -> str | None:
    """Why ``config``'s late policy cannot be used, in a line (None when it can)."""
    try:
        plugin = late_plugin(config)
        if isinstance(plugin, CourseLatePenalty):
            plugin.policy  # noqa: B018 (validates the settings together)
    except Exception as err:  # a wrong type or value in nbgrader_config.py: traitlets' or the policy's words
        return f"the course's late policy in nbgrader_config.py is wrong: {err}"
    return None


@dataclass(frozen=True)
class Lateness:
    """One student who handed in after the assignment's due date, after their penalty was recomputed."""

    student: str  # nbgrader student id
    seconds_late: float  # past their own due date (their extension included): 0 when it covers them
    penalty: float  # points taken, every notebook
    raw_score: float  # points before the penalty
    past_due: float  # past the assignment's due date, any extension left out

    def line(self) -> str:
        """What the summaries say of them."""
        return self._said(f"penalty {self.penalty:g} of {self.raw_score:g} point(s)" if self.penalty else "no penalty")

    def line_before_record(self, share: float | None) -> str:
        """What autograde's summary says of them: its points are not the score of record (nbgrader's kernels judge no
        check), so the share of the points the policy will take (``share``: ``policy_share``'s)."""
        if share is None:
            return self._said("their penalty is computed from the points `autograder grade --gradebook` gives")
        if not share:
            return self._said("no penalty")
        return self._said(f"the late policy takes {100 * share:g}% of the points the course's grader gives them")

    def _said(self, taken: str) -> str:
        if not self.seconds_late:
            return f"handed in {late_text(self.past_due)} after the due date, within their extension: no penalty"
        extended = " (past their extension)" if self.past_due > self.seconds_late else ""
        return f"late by {late_text(self.seconds_late)}{extended}: {taken}"


def policy_share(plugin, student: str, seconds_late: float) -> float | None:
    """The share (0..1) of the points earned that ``plugin`` takes from ``student``'s work ``seconds_late`` past their
    due date; None when its penalty is no share of the points (then it is known only from the points)."""
    if seconds_late <= 0:
        return 0.0
    if isinstance(plugin, CourseLatePenalty):  # the course's own: its policy says the share
        return plugin.policy.fraction(seconds_late)
    # another plugin (nbgrader's own takes none or everything): asked of 100 points and of 40
    whole, part = (plugin.late_submission_penalty(student, points, seconds_late) or 0.0 for points in (100.0, 40.0))
    return whole / 100 if math.isclose(part, 0.4 * whole, abs_tol=1e-6) else None


def _lateness(submission) -> Lateness | None:
    """The submission's lateness, or None when it came before the assignment's due date."""
    due = submission.assignment.duedate
    if submission.timestamp is None or due is None or submission.timestamp <= due:
        return None
    return Lateness(submission.student_id, submission.total_seconds_late, submission.late_submission_penalty,
                    submission.score, (submission.timestamp - due).total_seconds())


def late_text(seconds: float) -> str:
    """``2 d 3 h``, ``1 h 5 min``, ``40 s``: a lateness for a person."""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min" if minutes else f"{secs} s"


def refresh_penalties(gb, assignment: str, plugin, students: set[str] | None = None) -> list[Lateness]:
    """Set every (or ``students``') submitted notebook's ``late_submission_penalty`` from its score as it
    stands now, by ``plugin`` as nbgrader's AssignLatePenalties does (None when not late, clipped to
    0..score); not committed. The students who handed in after the assignment's due date (late, or within
    an extension), by id."""
    from nbgrader.api import MissingEntry

    gb.db.flush()  # the scores written in this session count
    gb.db.expire_all()  # notebooks' scores are computed columns: read them again
    if students is None:
        submissions = list(gb.find_assignment(assignment).submissions)
    else:  # each one looked up: a page of one student's feedback reads no one else's
        submissions = []
        for student in sorted(students):
            try:
                submissions.append(gb.find_submission(assignment, student))
            except MissingEntry:
                continue
    late = []
    for submission in submissions:
        student, seconds = submission.student_id, submission.total_seconds_late
        for notebook in submission.notebooks:
            penalty = plugin.late_submission_penalty(student, notebook.score, seconds) if seconds > 0 else None
            notebook.late_submission_penalty = None if penalty is None else min(max(penalty, 0.0), notebook.score)
        gb.db.flush()
        gb.db.expire(submission)
        found = _lateness(submission)
        if found is not None:
            late.append(found)
    return sorted(late, key=lambda x: x.student)


def current_lateness(db_url: str, assignment: str) -> list[Lateness]:
    """The late students and the penalties the gradebook holds now (read only)."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url) as gb:
        found = (_lateness(s) for s in gb.find_assignment(assignment).submissions)
        return sorted((x for x in found if x is not None), key=lambda x: x.student)


def refresh_course(db_url: str, assignment: str, config, students: set[str] | None = None) -> list[Lateness]:
    """``refresh_penalties`` in the gradebook at ``db_url`` with ``config``'s plugin, committed."""
    from nbgrader.api import Gradebook

    plugin = late_plugin(config)
    with Gradebook(db_url) as gb:
        late = refresh_penalties(gb, assignment, plugin, students)
        gb.db.commit()
    return late


def settle_in(course, assignment: str, students: set[str], found: list[Lateness]):
    """``write_trusted_scores``'s ``settle`` for a grading run in ``course``: the students' penalties
    recomputed in its transaction with the course's plugin, the late ones appended to ``found``. Without
    the course's nbgrader_config.py (the command run elsewhere) the penalties are left as nbgrader set them,
    and ``found`` says so."""
    from pathlib import Path

    from autograder.term.course import CONFIG_FILE, course_config

    if not (Path(course) / CONFIG_FILE).is_file():
        print(f"warning: no {CONFIG_FILE} in {course}: late penalties were left as nbgrader's autograde set them; "
              "run `autograder grade` in the course folder to recompute them from the trusted scores")
        return None
    plugin = late_plugin(course_config(course))

    def settle(gb) -> None:
        found.extend(refresh_penalties(gb, assignment, plugin, students))

    return settle
