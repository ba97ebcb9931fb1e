"""``nbgrader autograde`` of a whole cohort, one task per student on Dask distributed.

nbgrader never reads ``submitted/``: the collect step (``autograder.collecting.collect``) first
copies each student's notebooks, run files and timestamp into ``collected/<student>/<assignment>``
(regular files by name, no links, no special files, sizes capped), and nbgrader autogrades that
copy (its ``submitted_directory``), so what reaches ``autograded/``, the grading kernel and the
feedback is only what the collect step produced.

Each student is one unit of the autograde step (``autograder.units``): nbgrader's own autograde
of one student, run by ``autograder.nbgrader_glue.one_student`` in a child process of the unit
(which inherits its memory limit), in the course folder, with the grading kernel
(``autograder.nbgrader_glue.kernel``: the sandbox applies on every worker). The student id
travels as data (a JSON argument one_student sets as config), never as a word nbgrader parses. A
student whose autograde fails, hangs past ``timeout``, runs out of memory or whose worker dies
(it is retried once on another worker) gets a reason in the result; nobody else is affected.

Nothing grader-only reaches a student's kernel: no grading seed and no reference output. The
hidden test cells score zero in nbgrader's own run and say so; their points, like every
autograded cell's, come from ``autograder grade --gradebook`` (the trusted judge, outside the
kernel), and the feedback shows its reasons.

The gradebook: PostgreSQL takes parallel writers as it is. A SQLite gradebook takes one writer
at a time, and can refuse a second outright ("database is locked"), so with SQLite every
gradebook session of every student's nbgrader holds a lock file beside the database
(``GRADEBOOK.db.lock``): sessions are short and take turns, the kernels run in parallel. A
SQLite gradebook therefore needs its workers on this machine (or one filesystem with working
``flock``); a cluster of machines should use PostgreSQL.

Re-runs start only students whose collected files changed since their last autograde, or
whose autograde failed (``autograde_state.json`` in the course folder keeps the hashes; the
collect unit of each student computed its hash).
"""
from __future__ import annotations

import json
import os
import select
import shutil
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, replace
from pathlib import Path

from autograder.atomic import write_atomically
from autograder.collecting.cohort import collect_cohort
from autograder.collecting.collect import Cohort, wanted_for
from autograder.collecting.safe_files import shown
from autograder.exports.step_summary import Problem
from autograder.nbgrader_glue.collected_only import COLLECTED
from autograder.nbgrader_glue.one_student import LOCK_VARIABLE, PARENT_VARIABLE
from autograder.units.dask import Cluster
from autograder.units.limits import UnitLimits
from autograder.units.stage import Step, preload, run_step

# imported once in the fork server: the step, and the student's nbgrader each unit forks
# (IPython.paths: jupyter_client's kernel spec lookup imports it, with all of IPython, at a student's first kernel)
# (autograde_warmup: the notebook schema's validators, compiled once for every student's nbgrader)
AUTOGRADE_PRELOAD = ("autograder.nbgrader_glue.autograde", "autograder.nbgrader_glue.one_student",
                     "nbgrader.apps.autogradeapp", "IPython.paths", "autograder.nbgrader_glue.autograde_warmup")
preload(*AUTOGRADE_PRELOAD)

STATE_FILE = "autograde_state.json"  # in the course folder: student -> hash last autograded
LOG_TAIL = 4000  # characters of nbgrader's output kept for a student whose autograde failed
SKIPPED = "Skipping existing assignment"  # nbgrader's words for a student done before (no --force)
CHANGED = "has changed!"  # nbgrader's words for a locked cell a student edited (it puts the released one back)
# the unit and its nbgrader, which inherits the limit (it parses the student's notebooks); the
# kernels and their sandbox have limits of their own
UNIT_MEMORY_MB = 3072
UNIT_MARGIN_SECONDS = 60  # beyond --timeout, which the unit enforces on nbgrader itself


@dataclass(frozen=True)
class AutogradeSettings:
    """What every student's nbgrader autograde runs with."""

    course: Path  # the nbgrader course folder (nbgrader_config.py, submitted/, ...), absolute
    assignment: str  # nbgrader assignment id
    db_url: str  # the gradebook nbgrader writes; a relative SQLite path is relative to ``course``
    db_given: bool  # pass db_url to nbgrader (--db), not leave it to the course's config
    # COURSE_PRESET, COURSE_DATA_DIR, COURSE_OUT_DIR for the kernels
    kernel_env: tuple[tuple[str, str], ...]
    force: bool = False  # autograde again students nbgrader autograded before
    timeout: float = 600.0  # seconds for a student's whole autograde (all notebooks); then stopped
    unconfined: bool = False  # let the kernel start unconfined (GRADING_ALLOW_UNCONFINED=1)


@dataclass
class Autograded:
    """One student's nbgrader autograde, as the instructor reads it."""

    student: str  # nbgrader student id (the folder in submitted/)
    ok: bool  # nbgrader finished without error
    seconds: float  # wall time of this student's autograde
    reason: str  # "" when ok, else why not, in a line
    log: str  # nbgrader's own output for this student (its tail when it failed)
    skipped: bool = False  # left as it was: unchanged since last time (or nbgrader skipped it)


def sqlite_path(settings: AutogradeSettings) -> Path | None:
    """The gradebook's file when it is SQLite, else None."""
    from sqlalchemy.engine import make_url

    url = make_url(settings.db_url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    return settings.course / url.database  # an absolute database path stays as it is


def collect_course(course: Path, assignment: str, only: list[str] | None = None) -> Cohort:
    """The collect step for nbgrader: every student's (or ``only`` those) sanitised copy into
    ``course/collected``, replacing an earlier run's; those no longer in submitted/ are removed."""
    final = course / COLLECTED
    staging = course / f".{COLLECTED}-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        cohort = collect_cohort(course / "submitted", assignment, staging, wanted=wanted_for(assignment, course=course),
                                only=only)
        final.mkdir(exist_ok=True)
        present = {c.student for c in cohort.students}
        if only is None:
            for old in final.iterdir():
                if old.name not in present:
                    shutil.rmtree(old, ignore_errors=True)
        for collected in cohort.students:
            shutil.rmtree(final / collected.student, ignore_errors=True)
            if collected.folder is not None:
                os.replace(staging / collected.student, final / collected.student)
                collected.folder = final / collected.student / assignment
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return cohort


def autograde_one(student: str, settings: AutogradeSettings) -> Autograded:
    """In the student's unit: nbgrader autograde of one student, stopped (with its kernels) after
    ``settings.timeout``."""
    # the venv's bin first on PATH: nbgrader runs alembic and jupyter from there
    env = {**os.environ, **dict(settings.kernel_env), PARENT_VARIABLE: str(os.getpid()),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("COURSE_HIDDEN_INPUTS", None)  # nothing grader-only in a kernel, whatever the shell has
    database = sqlite_path(settings)
    if database is not None:
        env[LOCK_VARIABLE] = f"{database}.lock"
    if settings.unconfined:
        env["GRADING_ALLOW_UNCONFINED"] = "1"
    spec = {"assignment": settings.assignment, "student": student, "force": settings.force,
            "submitted_directory": COLLECTED, "db_url": settings.db_url if settings.db_given else None}
    start = time.perf_counter()
    with tempfile.TemporaryFile() as log:
        code = _nbgrader(spec, env, settings.course, log.fileno(), settings.timeout)
        log.seek(0)
        output = log.read().decode("utf-8", errors="replace")
    seconds = time.perf_counter() - start
    if code is None:
        return Autograded(student, False, seconds, f"stopped after {settings.timeout:g} s (--timeout)",
                          output[-LOG_TAIL:])
    if code != 0:
        errors = [line for line in output.splitlines() if "| ERROR]" in line or line.startswith("nbgrader.")]
        first = errors[0].split("]", 1)[-1].strip() if errors else f"nbgrader exited with status {code}"
        return Autograded(student, False, seconds, first[:300], output[-LOG_TAIL:])
    return Autograded(student, True, seconds, "", output, skipped=SKIPPED in output)


def _nbgrader(spec: dict, env: dict[str, str], course: Path, log: int, timeout: float) -> int | None:
    """``one_student`` in a child of this unit (its memory limit inherited), a session of its own,
    with ``env``, in ``course``, printing to the file ``log``; its exit status, or None if stopped
    after ``timeout`` (with its whole session; its kernels die with it by parent-death signals).

    Forked, not started: the unit's fork server preloaded nbgrader and the grader, so the student's
    nbgrader starts without a new interpreter importing them."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the student's nbgrader: nothing here returns
        code = 1
        try:
            os.setsid()
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            os.dup2(log, 1)
            os.dup2(log, 2)
            os.chdir(course)
            os.environ.clear()
            os.environ.update(env)
            from autograder.nbgrader_glue.one_student import main

            main([json.dumps(spec)])
            code = 0
        except SystemExit as err:  # nbgrader's exit (1: a notebook failed), or the refusal's (3)
            code = err.code if isinstance(err.code, int) else 0 if err.code is None else 1
        except BaseException:  # noqa: BLE001 (its traceback goes to the log)
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    ended = os.pidfd_open(pid)
    try:
        stopped = not select.select([ended], [], [], timeout)[0]
        if stopped:
            os.killpg(pid, signal.SIGKILL)
    finally:
        os.close(ended)
    _, status = os.waitpid(pid, 0)
    return None if stopped else os.waitstatus_to_exitcode(status)


def _read_state(path: Path) -> dict[str, str]:
    """student -> hash last autograded, from the state file ({} if none or unreadable)."""
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        return {str(k): str(v) for k, v in state.items()} if isinstance(state, dict) else {}
    except (OSError, ValueError):
        return {}  # none yet, or unreadable: nbgrader's own rule decides


def _write_state(path: Path, state: dict[str, str]) -> None:
    """Write the state file whole or not at all."""
    write_atomically(path, json.dumps(state, indent=1, sort_keys=True))


def autograde_cohort(settings: AutogradeSettings, students: list[str], hashes: dict[str, str], cluster: Cluster,
                     progress: bool = True) -> list[Autograded]:
    """Every student's autograde, each a unit of its own (a Dask task, or forked here one after
    another for ``Cluster(1)``); one result per student, in the order given. ``hashes`` holds each
    student's collected files' digest ("" if the collect step kept nothing), from its collect unit.

    Re-runs: the hash of each student's submission autograded last is kept in the course's
    ``autograde_state.json``. A student autograded before with the same files is not started again;
    one whose files changed since, or whose autograde failed, is autograded again (nbgrader alone
    would skip it); ``force`` redoes everyone.
    """
    from tqdm.auto import tqdm

    state_path = settings.course / STATE_FILE
    kept = _read_state(state_path)
    results: dict[int, Autograded] = {}
    todo, redo = [], set()
    for place, student in enumerate(students):
        if not hashes.get(student):  # collect kept nothing: nbgrader would find no notebook either
            results[place] = Autograded(student, False, 0.0, "nothing of the submission could be collected (see "
                                        "the collect step's reasons in autograde_log.txt)", "")
            continue
        done_before = (settings.course / "autograded" / student / settings.assignment).is_dir()
        if done_before and not settings.force and kept.get(student) == hashes[student]:
            results[place] = Autograded(student, True, 0.0, "", "unchanged since its last autograde", skipped=True)
            continue
        todo.append(place)
        if done_before and student in kept:  # autograded before, by this command, from other files
            redo.add(place)

    attempts: dict[int, int] = {}

    def task(place: int) -> tuple:
        attempts[place] = attempts.get(place, 0) + 1
        # a retry after its worker died redoes the student: the first try may have left a partial
        # autograded/ folder, which nbgrader would otherwise skip as done
        force = settings.force or place in redo or attempts[place] > 1
        return autograde_one, (students[place], replace(settings, force=force))

    step = Step("autograde", UnitLimits(seconds=settings.timeout + UNIT_MARGIN_SECONDS, memory_mb=UNIT_MEMORY_MB),
                preload=AUTOGRADE_PRELOAD)
    with tqdm(total=len(students), initial=len(results), desc="nbgrader autograde", unit="student",
              disable=not progress) as bar:
        for place, outcome in run_step(step, todo, task, cluster):
            if place in results:
                continue
            result = outcome.value if outcome.ok else Autograded(
                students[place], False, outcome.seconds, f"could not be autograded: {outcome.failure}", outcome.detail)
            results[place] = result
            if result.ok and not result.skipped:
                kept[students[place]] = hashes[students[place]]
            elif not result.ok:  # forced next run: a failed autograde may leave a partial folder
                kept[students[place]] = ""
            bar.update()
            bar.set_postfix(failed=sum(not r.ok for r in results.values()), refresh=False)
    _write_state(state_path, kept)
    return [results[place] for place in range(len(students))]


def write_log(results: list[Autograded], path: Path, collect_notes: dict[str, list[str]] | None = None) -> Path:
    """The instructor's log: each student's outcome, what the collect step left out, nbgrader's
    output. Each run appends a section (a re-run with nothing changed keeps what the first said)."""
    collect_notes = collect_notes or {}
    with open(path, "a", encoding="utf-8") as f:
        f.write(f"########## autograder autograde, {time.strftime('%Y-%m-%d %H:%M:%S %z')}\n")
        for r in results:
            f.write(f"===== {shown(r.student)}: {'ok' if r.ok else 'FAILED: ' + r.reason} ({r.seconds:.1f} s)\n")
            f.writelines(f"left out by the collect step: {note}\n" for note in collect_notes.get(r.student, []))
            f.write(f"{r.log}\n")
    return path


def autograde_problems(settings: AutogradeSettings, cohort: Cohort, results: list[Autograded]) -> list[Problem]:
    """What the command's summary says: folders refused, the collect step's notices (a renamed copy taken,
    a notebook missing), students nbgrader could not autograde, a locked cell changed, late work with the share of
    its points the course's late plugin will take (nbgrader's kernels judge no check: the points come at the grade)."""
    from autograder.term.course import course_config
    from autograder.term.late import late_plugin, policy_share, refresh_course

    problems = [Problem(f"submitted/{r.shown}", f"refused: cannot be a student id: {r.why}", act=True)
                for r in cohort.refused]
    notices = {c.student: getattr(c, "notices", []) for c in cohort.students}  # the collect step's, when it has
    for r in results:
        problems += [Problem(r.student, notice) for notice in notices.get(r.student, [])]
        if not r.ok:
            problems.append(Problem(r.student, f"nbgrader could not autograde it: {r.reason}", act=True))
        elif CHANGED in r.log:
            problems.append(Problem(r.student, "a locked cell was changed: nbgrader put the released one back "
                                               "(autograde_log.txt)"))
    students = {r.student for r in results if r.ok}
    if students:
        config = course_config(settings.course)
        late, plugin = refresh_course(settings.db_url, settings.assignment, config, students), late_plugin(config)
        problems += [Problem(x.student, x.line_before_record(policy_share(plugin, x.student, x.seconds_late)))
                     for x in late]
    return problems
