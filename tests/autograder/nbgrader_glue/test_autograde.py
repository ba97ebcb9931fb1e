"""The cohort's nbgrader autograde: its gradebook, its students, a student that hangs, SQLite writes taking turns.

Whole autogrades (hostile students, a worker killed, a PostgreSQL gradebook) are in
test_nbgrader_autograde.py; the instructor's literal commands (SQLite, two workers) in
tests/test_docs_commands.py.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import unit_work

import autograder.nbgrader_glue.autograde as autograde_module
from autograder.nbgrader_glue.autograde import (
    AutogradeSettings,
    autograde_cohort,
    autograde_one,
    collect_course,
    sqlite_path,
)
from autograder.nbgrader_glue.collected_only import COLLECTED
from autograder.units.dask import Cluster


def _settings(course: Path, url: str, **kwargs) -> AutogradeSettings:
    return AutogradeSettings(course, "a5", url, False, (("COURSE_PRESET", "smoke"),), **kwargs)


def test_sqlite_gradebooks_are_found_relative_to_the_course(tmp_path):
    """Is a relative SQLite gradebook taken in the course folder, an absolute one as it is, and PostgreSQL not?"""
    assert sqlite_path(_settings(tmp_path, "sqlite:///gradebook.db")) == tmp_path / "gradebook.db"
    assert sqlite_path(_settings(tmp_path, "sqlite:////srv/g.db")) == Path("/srv/g.db")
    assert sqlite_path(_settings(tmp_path, "postgresql://grader@dbhost/course")) is None


def test_nbgrader_gets_the_collect_steps_copy_only(tmp_path):
    """Is every usable student copied into collected/ (links and FIFOs left out, odd but honest ids kept), an id
    nbgrader cannot carry refused, and a copy of a student gone from submitted/ removed?"""
    secret = tmp_path / "grader_only" / "world-seed.txt"
    secret.parent.mkdir()
    secret.write_text("SECRET")
    for name in ("ann", "--help", "bad*name", ".hidden"):
        folder = tmp_path / "submitted" / name / "a5"
        folder.mkdir(parents=True)
        (folder / "03_span_corruption.ipynb").write_text(name)
    os.symlink(secret, tmp_path / "submitted" / "ann" / "a5" / "02_finetune_without_pretraining.ipynb")
    os.mkfifo(tmp_path / "submitted" / "ann" / "a5" / "05_synthesizer.ipynb")
    (tmp_path / COLLECTED / "gone" / "a5").mkdir(parents=True)
    cohort = collect_course(tmp_path, "a5")
    assert [c.student for c in cohort.students] == ["--help", "ann"]
    assert [r.shown for r in cohort.refused] == [".hidden", "bad*name"]  # every name: a row or a refusal
    assert sorted(p.name for p in (tmp_path / COLLECTED).iterdir()) == ["--help", "ann"]
    assert sorted(p.name for p in (tmp_path / COLLECTED / "ann" / "a5").iterdir()) == ["03_span_corruption.ipynb"]


def test_a_student_past_the_time_limit_is_stopped_with_a_reason(tmp_path):
    """Is a student's nbgrader that never finishes stopped at --timeout, marked, and nothing of it left running?"""
    (tmp_path / "submitted" / "ann" / "a5").mkdir(parents=True)
    marker = tmp_path / "started"
    # nbgrader reads the course's config first: this one never lets it go on
    (tmp_path / "nbgrader_config.py").write_text(
        f"import pathlib, time\npathlib.Path({str(marker)!r}).write_text(str(__import__('os').getpid()))\n"
        "time.sleep(600)\n")
    start = time.monotonic()
    result = autograde_one("ann", _settings(tmp_path, "sqlite:///gradebook.db", timeout=5))
    assert time.monotonic() - start < 60
    assert not result.ok and result.reason == "stopped after 5 s (--timeout)"
    pid = int(marker.read_text())
    time.sleep(0.5)
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


def test_a_student_starts_in_a_process_that_ran_another_nbgrader_app(tmp_path):
    """Does a student's nbgrader, forked from a process holding another nbgrader app as traitlets' singleton (formgrader
    and the suite run several in one process), still start and read the course's config?"""
    from nbgrader.apps import CollectApp

    (tmp_path / "submitted" / "ann" / "a5").mkdir(parents=True)
    marker = tmp_path / "started"
    (tmp_path / "nbgrader_config.py").write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('read')\n"
                                                 "raise SystemExit(0)\n")
    CollectApp.instance()
    try:
        autograde_one("ann", _settings(tmp_path, "sqlite:///gradebook.db", timeout=60))
    finally:
        CollectApp.clear_instance()
    assert marker.read_text() == "read"


def test_nbgraders_kernels_learn_how_many_notebooks_were_handed_in(tmp_path, monkeypatch):
    """Does a student's nbgrader tell the kernels it starts how many notebooks the student handed in (the student's
    sandbox preloads less for one), counting notebooks only?"""
    import json

    from nbgrader.apps.autogradeapp import AutogradeApp

    from autograder.nbgrader_glue import one_student, setup
    from autograder.nbgrader_glue.zygote import NOTEBOOKS_VARIABLE

    folder = tmp_path / "submitted" / "ann" / "a5"
    folder.mkdir(parents=True)
    for name in ("02_finetune_without_pretraining.ipynb", "03_span_corruption.ipynb", "notes.txt"):
        (folder / name).write_text("{}")
    (tmp_path / "nbgrader_config.py").write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(NOTEBOOKS_VARIABLE, "unset")  # put back as it was when the test ends
    monkeypatch.setattr(setup, "grading_problem", lambda config: None)  # the confined kernel is test_kernel.py's
    monkeypatch.setattr(one_student, "die_with_parent", lambda variable: None)  # (this is the test's process)
    seen = []
    monkeypatch.setattr(AutogradeApp, "start", lambda app: seen.append(os.environ[NOTEBOOKS_VARIABLE]))
    try:
        one_student.main([json.dumps({"assignment": "a5", "student": "ann", "submitted_directory": "submitted"})])
    finally:
        AutogradeApp.clear_instance()
    assert seen == ["2"]


LOCK_HOLDER = """
import sys, time
from autograder.nbgrader_glue.one_student import serialize_gradebook_sessions
serialize_gradebook_sessions(sys.argv[1])
from nbgrader.api import Gradebook
with Gradebook(sys.argv[2]) as gb:
    opened = time.time()
    time.sleep(float(sys.argv[3]))
    closed = time.time()
print(opened, closed)
"""


def test_sqlite_gradebook_sessions_take_turns(tmp_path):
    """With the lock, do two processes' gradebook sessions never overlap, whichever opens first?"""
    url, lock = f"sqlite:///{tmp_path / 'gradebook.db'}", str(tmp_path / "gradebook.db.lock")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # alembic
    subprocess.run([sys.executable, "-c", LOCK_HOLDER, lock, url, "0"], check=True, env=env)  # a new gradebook
    first = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, lock, url, "3"], stdout=subprocess.PIPE, text=True,
                             env=env)
    time.sleep(1.5)  # the first has its session open by now (its imports take about a second)
    second = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, lock, url, "2"], stdout=subprocess.PIPE, text=True,
                              env=env)
    # on a loaded machine the second may open first: what matters is that the two sessions never overlap
    (opened1, closed1), (opened2, closed2) = ([float(x) for x in p.communicate(timeout=120)[0].split()]
                                              for p in (first, second))
    assert closed1 <= opened2 or closed2 <= opened1, "one session opened while the other was still open"


def test_rerun_autogrades_only_what_changed(tmp_path, monkeypatch):
    """Does a re-run leave unchanged students alone, redo (forced) a changed one and a failed one, and --force all?"""
    notebook = "03_span_corruption.ipynb"
    for student in ("ann", "ben", "cal"):
        (tmp_path / "submitted" / student / "a5").mkdir(parents=True)
        (tmp_path / "submitted" / student / "a5" / notebook).write_text(student)
    started, failing = tmp_path / "started.txt", tmp_path / "failing.txt"
    failing.write_text("cal")
    # nbgrader's part, stubbed by a function each student's unit imports: it makes the autograded folder
    monkeypatch.setattr(autograde_module, "autograde_one", unit_work.fake_autograde_one)

    def again(**kwargs):
        started.write_text("")
        cohort = collect_course(tmp_path, "a5")
        hashes = {c.student: c.prints.digest for c in cohort.students}
        results = autograde_cohort(_settings(tmp_path, "sqlite:///gradebook.db", **kwargs), ["ann", "ben", "cal"],
                                   hashes, Cluster(1), progress=False)
        return [(r.student, r.ok, r.skipped) for r in results]

    def starts() -> list[tuple[str, bool]]:
        return [(line.split()[0], line.split()[1] == "True") for line in started.read_text().splitlines()]

    assert again() == [("ann", True, False), ("ben", True, False), ("cal", False, False)]
    failing.write_text("")
    assert again() == [("ann", True, True), ("ben", True, True), ("cal", True, False)] and starts() == [("cal", True)]
    (tmp_path / "submitted" / "ben" / "a5" / notebook).write_text("ben, handed in again")
    again()
    assert starts() == [("ben", True)]  # nbgrader alone would skip it: its autograded folder exists
    again()
    assert starts() == []
    again(force=True)
    assert sorted(starts()) == [("ann", True), ("ben", True), ("cal", True)]


def test_one_worker_runs_in_this_process():
    """Does --workers 1 autograde here, one student after another, rather than start a cluster?"""
    assert Cluster(1).serial


def test_a_course_config_that_would_run_notebooks_unconfined_is_refused(tmp_path, capsys):
    """When the course's nbgrader_config.py fails to load (nbgrader would go on with a plain kernel) or never sets the
    grading kernel, does autograde refuse in one line before any student runs?"""
    from autograder.__main__ import main
    from autograder.nbgrader_glue.setup import course_grading_problem

    (tmp_path / "submitted" / "ann" / "a5").mkdir(parents=True)
    (tmp_path / "source" / "a5").mkdir(parents=True)
    data = tmp_path / "data"
    data.mkdir()
    (data / "wiki.txt").write_text("x\n")
    for config in ("from autograder.nbgrader_setup import configure_grading\n",  # the module moved: fails to load
                   "c = get_config()\nc.CourseDirectory.course_id = 'x'\n"):  # loads, no grading kernel
        (tmp_path / "nbgrader_config.py").write_text(config)
        assert course_grading_problem(tmp_path)
        code = main(["autograde", "a5", "--course", str(tmp_path), "--data-dir", str(data), "--workers", "1"])
        err = capsys.readouterr().err
        assert code == 2 and "refusing to autograde" in err and not (tmp_path / "collected").exists(), err
    (tmp_path / "nbgrader_config.py").write_text(
        "from autograder.nbgrader_glue.setup import configure_grading\nc = get_config()\nconfigure_grading(c)\n")
    assert course_grading_problem(tmp_path) is None


def test_a_rerun_keeps_the_earlier_runs_log(tmp_path):
    """Does autograde's log keep what an earlier run said (a section per run), so a re-run with nothing changed erases
    nothing?"""
    from autograder.nbgrader_glue.autograde import Autograded, write_log

    log = tmp_path / "autograde_log.txt"
    write_log([Autograded("ann", False, 3.0, "kernel died", "nbgrader's own words, first run")], log)
    write_log([Autograded("ann", True, 0.0, "", "unchanged since its last autograde", skipped=True)], log)
    text = log.read_text()
    assert text.count("########## autograder autograde") == 2
    assert "nbgrader's own words, first run" in text and text.index("first run") < text.index("unchanged since")
