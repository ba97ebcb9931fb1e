"""nbgrader's collect from the exchange: a submission is its owner's, each student is collected alone, links are never
read through. Real Linux accounts own the inbound folders, as on the course's hub (tests/hub drives it in a browser)."""
from __future__ import annotations

import csv
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import linux_users
import pytest
import unit_work
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange import ExchangeError
from traitlets.config import Config

import autograder.nbgrader_glue.exchange as exchange_module
from autograder.nbgrader_glue.exchange import REFUSED_FILE, OwnedCollect
from autograder.nbgrader_glue.setup import configure_grading

pytestmark = pytest.mark.skipif(linux_users.why_not() is not None, reason=str(linux_users.why_not()))

A5 = "a5"
EARLY, LATE = "2026-11-20 10:00:00.000000 UTC", "2026-11-21 10:00:00.000000 UTC"
FUTURE = "2099-01-01 00:00:00.000000 UTC"
SECRET = b"Where was Laura Luserto born?\tZeliport\n"


@pytest.fixture(scope="module")
def people():
    return linux_users.ensure("ada", "bo", "eve", "teacher")


@pytest.fixture(autouse=True)
def _nbgraders_tools(monkeypatch):
    """nbgrader calls `alembic` by name when it makes a gradebook: the venv's, as in the instructor's terminal."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


@pytest.fixture
def exchange(tmp_path, people) -> Path:
    inbound = tmp_path / "exchange" / "course" / "inbound"
    inbound.mkdir(parents=True)
    os.chmod(inbound, 0o2733)  # as nbgrader's release makes it: everyone writes, nobody else lists
    return tmp_path / "exchange"


def user(people, name: str) -> str:
    return people[name].pw_name


def submit(exchange: Path, people, owner: str, claimed: str | None = None, when: str = EARLY,
           files: dict[str, bytes] | None = None, said: str | None = None) -> Path:
    """An inbound folder as ``owner`` leaves it, named for ``claimed`` (the owner by default), with its
    timestamp.txt saying ``said`` (the name's time by default)."""
    name = f"{user(people, claimed or owner)}+{A5}+{when}+{os.urandom(4).hex()}"
    folder = exchange / "course" / "inbound" / name
    folder.mkdir()
    for rel, data in {"03_span_corruption.ipynb": f'{{"by": "{owner}"}}'.encode(), **(files or {})}.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    (folder / "timestamp.txt").write_text(said or when)
    (folder / "submission_secret.txt").write_text("s" * 128)
    linux_users.give(folder, people[owner])
    return folder


def collect(tmp_path, exchange: Path, update: bool = True) -> tuple[str | None, list[dict]]:
    """nbgrader's collect as formgrader's button runs it (``update``): (the error it ends with, or None; the rows of
    the course's refusals file)."""
    coursedir = CourseDirectory(root=str(tmp_path / "course"), course_id="course", assignment_id=A5)
    (tmp_path / "course").mkdir(exist_ok=True)
    collector = OwnedCollect(coursedir=coursedir, authenticator=None, root=str(exchange))
    collector.update = update
    error = None
    try:
        collector.start()
    except ExchangeError as err:
        error = str(err)
    with open(tmp_path / "course" / REFUSED_FILE, newline="") as f:
        return error, list(csv.DictReader(f))


def held(tmp_path, people, student: str) -> bytes | None:
    path = tmp_path / "course" / "submitted" / user(people, student) / A5 / "03_span_corruption.ipynb"
    return path.read_bytes() if path.exists() else None


def test_a_folder_named_for_a_classmate_is_refused_naming_owner_and_claim(tmp_path, exchange, people):
    """Is eve's folder named for ada (with a far-future time) refused as an error naming eve and ada, with a row in
    the refusals file, while ada's own submission is collected as ada's?"""
    submit(exchange, people, "ada", when=EARLY)
    submit(exchange, people, "eve", claimed="ada", when=FUTURE)
    submit(exchange, people, "eve", claimed="ada", when=LATE)  # a plausible time: the owner is what counts
    error, rows = collect(tmp_path, exchange)
    assert held(tmp_path, people, "ada") == b'{"by": "ada"}'
    assert error and "refused 2 inbound entries" in error and REFUSED_FILE in error
    assert {(r["claimed_student"], r["owner"]) for r in rows} == {(user(people, "ada"), user(people, "eve"))}
    assert all(f"owned by {user(people, 'eve')}" in r["why"] for r in rows)


def test_a_later_time_than_the_collect_is_refused_even_from_the_owner(tmp_path, exchange, people):
    """Is a student's own folder with a time later than the collect refused (it would win every later collect), and
    one whose timestamp.txt contradicts its name?"""
    submit(exchange, people, "bo", when=FUTURE)
    submit(exchange, people, "ada", when=LATE, said=EARLY)
    error, rows = collect(tmp_path, exchange)
    assert error and held(tmp_path, people, "bo") is None and held(tmp_path, people, "ada") is None
    why = {r["owner"]: r["why"] for r in rows}
    assert "later than the collect" in why[user(people, "bo")]
    assert "timestamp.txt does not say the time its name says" in why[user(people, "ada")]


def test_a_file_inside_owned_by_someone_else_is_refused(tmp_path, exchange, people):
    """Is a submission holding a file another account owns (a hard link to a classmate's work) refused, naming it?"""
    folder = submit(exchange, people, "eve", files={"outputs/vanilla.model.params": b"params"})
    os.lchown(folder / "outputs" / "vanilla.model.params", people["ada"].pw_uid, people["ada"].pw_gid)
    error, rows = collect(tmp_path, exchange)
    assert error and held(tmp_path, people, "eve") is None
    assert f"owned by {user(people, 'ada')}" in rows[0]["why"] and "vanilla.model.params" in rows[0]["why"]


def test_a_collected_submission_is_replaced_only_by_a_later_genuine_one(tmp_path, exchange, people):
    """Once ada's work is collected, does a forged later folder leave it in place, and does ada's own later
    submission replace it?"""
    submit(exchange, people, "ada", when=EARLY)
    assert collect(tmp_path, exchange) == (None, [])
    submit(exchange, people, "eve", claimed="ada", when=LATE)
    error, _ = collect(tmp_path, exchange)
    assert error and held(tmp_path, people, "ada") == b'{"by": "ada"}'
    later = submit(exchange, people, "ada", when=LATE)
    (later / "03_span_corruption.ipynb").write_bytes(b'{"by": "ada", "again": true}')
    error, _ = collect(tmp_path, exchange)
    assert held(tmp_path, people, "ada") == b'{"by": "ada", "again": true}'


def test_one_students_failing_copy_stops_nobody_and_keeps_their_last_copy(tmp_path, exchange, people, monkeypatch):
    """When copying bo's new submission fails (a folder made unreadable, a file gone mid-copy), is bo refused with the
    reason, bo's earlier copy kept, and ada and eve collected all the same?"""
    submit(exchange, people, "bo", when=EARLY)
    collect(tmp_path, exchange)
    for student in ("ada", "bo", "eve"):
        submit(exchange, people, student, when=LATE)
    monkeypatch.setattr(exchange_module, "collect_student", unit_work.collect_student_failing_for_bo)
    error, rows = collect(tmp_path, exchange)
    assert error and [r["owner"] for r in rows] == [user(people, "bo")]
    assert "cannot be read (PermissionError)" in rows[0]["why"]
    assert held(tmp_path, people, "bo") == b'{"by": "bo"}'  # the copy collected before
    assert held(tmp_path, people, "ada") == b'{"by": "ada"}' and held(tmp_path, people, "eve") == b'{"by": "eve"}'


def test_names_nbgrader_could_not_parse_are_refused_not_fatal(tmp_path, exchange, people):
    """Does a folder named `x+a5+not a time` (which stopped nbgrader's collect for the class) become a refusal, and a
    file named like a submission too, while the others are collected?"""
    submit(exchange, people, "ada")
    (exchange / "course" / "inbound" / f"{user(people, 'eve')}+{A5}+not a time+x").mkdir()
    (exchange / "course" / "inbound" / f"{user(people, 'eve')}+{A5}+{EARLY}+y").write_text("a file")
    error, rows = collect(tmp_path, exchange)
    assert held(tmp_path, people, "ada") == b'{"by": "ada"}' and len(rows) == 2


def test_collect_copies_links_as_links_and_leaves_special_files_out(tmp_path, exchange, people, monkeypatch):
    """Does collecting a hand-made submission copy its notebook, keep its links as links (never the answers' bytes
    as a file), and leave out a FIFO and a socket without blocking?"""
    secret = tmp_path / "grader_only" / "birth_test.tsv"
    secret.parent.mkdir()
    secret.write_bytes(SECRET)
    src = submit(exchange, people, "ada", files={"outputs/.keep": b""})
    (src / "outputs" / "vanilla.pretrain.test.predictions").symlink_to(secret)
    (src / "peer").symlink_to(secret.parent)
    os.mkfifo(src / "04_pretrain_then_finetune.ipynb")
    server = socket.socket(socket.AF_UNIX)
    monkeypatch.chdir(src)  # a socket's path must be short: bound by a relative one
    server.bind("05_synthesizer.ipynb")
    linux_users.give(src, people["ada"])
    try:
        assert collect(tmp_path, exchange) == (None, [])
    finally:
        server.close()
    dest = tmp_path / "course" / "submitted" / user(people, "ada") / A5
    assert (dest / "outputs" / "vanilla.pretrain.test.predictions").is_symlink() and (dest / "peer").is_symlink()
    assert sorted(p.name for p in dest.iterdir()) == ["03_span_corruption.ipynb", "outputs", "peer",
                                                     "submission_secret.txt", "timestamp.txt"]
    for path in dest.rglob("*"):
        assert path.is_symlink() or path.is_dir() or SECRET not in path.read_bytes(), path


def test_a_submission_folder_that_is_a_link_is_refused(tmp_path, exchange, people):
    """Is an inbound entry that links to another folder (a classmate's, the grader's) refused, nothing copied?"""
    elsewhere = tmp_path / "grader_only"
    elsewhere.mkdir()
    (elsewhere / "birth_test.tsv").write_bytes(SECRET)
    link = exchange / "course" / "inbound" / f"{user(people, 'eve')}+{A5}+{EARLY}+x2"
    link.symlink_to(elsewhere)
    os.lchown(link, people["eve"].pw_uid, people["eve"].pw_gid)
    error, rows = collect(tmp_path, exchange)
    assert error and "not a folder" in rows[0]["why"] and not (tmp_path / "course" / "submitted").exists()


@pytest.fixture
def open_folder():
    """A folder every account can traverse (pytest's own tmp folders are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="exchange-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_the_instructor_lists_and_removes_refused_entries_without_root(tmp_path, open_folder, people):
    """Can the instructor (not root), owner of inbound/, take a refused entry out of the exchange, even one whose
    owner keeps it read-only (renamed out of every collect's sight)?"""
    from autograder.nbgrader_glue import refused_inbound

    exchange = open_folder / "exchange"
    inbound = exchange / "course" / "inbound"
    inbound.mkdir(parents=True)
    linux_users.give(exchange, people["teacher"])
    os.chmod(inbound, 0o2733)
    forged = submit(exchange, people, "eve", claimed="ada", files={"outputs/x.params": b"p"})
    os.chmod(forged / "outputs", 0o555)  # nbgrader submit leaves subfolders so: the instructor cannot empty it
    tool = open_folder / "tool"
    tool.mkdir()
    (tool / "refused_inbound.py").write_bytes(Path(refused_inbound.__file__).read_bytes())
    script = ("import sys; sys.path.insert(0, sys.argv[1]); from refused_inbound import remove_entry; "
              "print(remove_entry(sys.argv[2], sys.argv[3]))")
    done = subprocess.run(["setpriv", f"--reuid={people['teacher'].pw_uid}", f"--regid={people['teacher'].pw_gid}",
                           "--clear-groups", "/usr/bin/python3", "-I", "-c", script, str(tool), str(inbound),
                           forged.name], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "taken out of collect's sight" in done.stdout
    assert [p.name for p in inbound.iterdir() if not p.name.startswith(".")] == []
    assert collect(tmp_path, exchange) == (None, [])


def _inbound_command(tmp_path, exchange: Path, monkeypatch, capsys, *runs: list[str]) -> list[str]:
    """What `python -m autograder <run>` printed for each of ``runs``, in a course folder collecting from
    ``exchange`` (each exiting 0)."""
    from autograder.__main__ import main

    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text(
        "from autograder.nbgrader_glue.setup import configure_grading\nc = get_config()\nconfigure_grading(c)\n"
        f"c.CourseDirectory.course_id = 'course'\nc.Exchange.root = {str(exchange)!r}\n")
    monkeypatch.chdir(course)
    environ, said = dict(os.environ), []
    try:
        for argv in runs:
            assert main(argv) == 0
            said.append(capsys.readouterr().out)
    finally:
        os.environ.clear()
        os.environ.update(environ)
    return said


def test_the_inbound_command_lists_and_removes_what_collect_refuses_inside(tmp_path, exchange, people, monkeypatch,
                                                                         capsys):
    """Does `python -m autograder inbound --remove` also list and take out a submission rightly named whose inside
    collect refuses (a classmate's file in it; tests/hub makes one unreadable), so that the collect after it takes
    everyone else's and ends without an error?"""
    submit(exchange, people, "ada")
    planted = submit(exchange, people, "bo", files={"outputs/x.params": b"p"})
    os.lchown(planted / "outputs" / "x.params", people["eve"].pw_uid, people["eve"].pw_gid)
    [removed] = _inbound_command(tmp_path, exchange, monkeypatch, capsys, ["inbound", "--remove"])
    assert removed.startswith("1 refused inbound entry of a5"), removed
    assert f"owned by {user(people, 'bo')}: it holds x.params, owned by {user(people, 'eve')}" in removed
    assert [p.name.split("+")[0] for p in (exchange / "course" / "inbound").iterdir()] == [user(people, "ada")]
    assert collect(tmp_path, exchange)[0] is None


def test_the_inbound_command_lists_the_refusals_in_the_course_folder(tmp_path, exchange, people, monkeypatch, capsys):
    """Does `python -m autograder inbound` in a course folder list each refused entry with owner, claim and reason, and
    --remove take it out?"""
    submit(exchange, people, "ada")
    submit(exchange, people, "eve", claimed="ada", when=LATE)
    listed, removed = _inbound_command(tmp_path, exchange, monkeypatch, capsys, ["inbound"], ["inbound", "--remove"])
    assert listed.startswith("1 refused inbound entry of a5")
    assert f"claims {user(people, 'ada')}, owned by {user(people, 'eve')}" in listed
    assert "deleted" in removed
    assert [p.name.split("+")[0] for p in (exchange / "course" / "inbound").iterdir()] == [user(people, "ada")]


def test_a_resubmission_is_taken_and_the_collect_says_which(tmp_path, exchange, people, caplog):
    """After a first collect, does the next collect take the student's later submission (as formgrader's button and
    the course's config do: nbgrader's --update) and say which time it took over which, and keep an unchanged one
    saying so?"""
    import logging

    submit(exchange, people, "ada", when=EARLY)
    submit(exchange, people, "bo", when=EARLY)
    assert collect(tmp_path, exchange) == (None, [])
    submit(exchange, people, "ada", when=LATE)
    with caplog.at_level(logging.INFO):
        assert collect(tmp_path, exchange) == (None, [])
    ada, bo = user(people, "ada"), user(people, "bo")
    assert f"{ada}: handed in again: took the submission of 2026-11-21 10:00:00 UTC over that of 2026-11-20 10:00:00 " \
           "UTC" in caplog.text
    assert f"{bo}: kept the submission of 2026-11-20 10:00:00 UTC: no newer submission" in caplog.text


def test_the_course_config_collects_with_it():
    """Does configure_grading make nbgrader's collect (the command and formgrader's button) this one, taking a later
    submission over one collected before?"""
    c = Config()
    environ = dict(os.environ)
    try:
        configure_grading(c)
    finally:
        os.environ.clear()
        os.environ.update(environ)
    assert c.ExchangeFactory.collect == "autograder.nbgrader_glue.exchange.OwnedCollect"
    assert c.ExchangeCollect["update"] is True
