"""A grading command run as root in the instructor's course folder leaves that folder the instructor's."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.ownership import give_back, kept_by_owner, snapshot

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="changing owners needs root")
OWNER = (4242, 4343)  # the instructor: a uid and gid of no account, as good as any for chown


def _owner(path: Path) -> tuple[int, int]:
    st = os.lstat(path)
    return st.st_uid, st.st_gid


@pytest.fixture
def places(tmp_path):
    """The instructor's course folder (with a file root left there earlier) and root's own files outside it."""
    course, outside = tmp_path / "course", tmp_path / "outside"
    course.mkdir()
    outside.mkdir()
    os.chown(course, *OWNER)
    (course / "earlier.txt").write_text("root's, from before")
    (outside / "secret.txt").write_text("root's")
    (outside / "folder").mkdir()
    (outside / "folder" / "inside.txt").write_text("root's")
    return course, outside


def _grading(course: Path, outside: Path) -> int:
    """What a grading command does in the course folder: folders and files, a file replaced by a rename, links
    pointing out of the folder (as a submission's collected copy might hold), and a hard link to a file outside."""
    (course / "grades" / "results").mkdir(parents=True)
    (course / "grades" / "grades.csv").write_text("student_id,score\n")
    (course / "gradebook.db.new").write_text("db")
    os.replace(course / "gradebook.db.new", course / "gradebook.db")
    (course / "grades" / "link-to-file").symlink_to(outside / "secret.txt")
    (course / "grades" / "link-to-folder").symlink_to(outside / "folder")
    os.link(outside / "secret.txt", course / "grades" / "hard-link")
    return 0


def test_what_root_writes_in_the_instructors_folder_becomes_theirs(places, monkeypatch, capsys):
    """Run as root in a folder the instructor owns, is everything the command made theirs (links as links), while
    no link is followed, a hard-linked file and what root left there before stay root's, and the command's exit
    status is kept?"""
    course, outside = places
    monkeypatch.chdir(course)
    assert kept_by_owner(_grading)(course, outside) == 0
    for made in ("grades", "grades/results", "grades/grades.csv", "gradebook.db", "grades/link-to-file",
                 "grades/link-to-folder"):
        assert _owner(course / made) == OWNER, made
    for root_s in (outside / "secret.txt", outside / "folder", outside / "folder" / "inside.txt",
                   course / "earlier.txt"):
        assert _owner(root_s) == (0, 0), root_s
    assert "1 file(s) the command wrote" in capsys.readouterr().err


def test_nothing_changes_hands_in_roots_own_folder(places, monkeypatch):
    """Run as root in a folder root owns, does everything the command made stay root's?"""
    course, outside = places
    os.chown(course, 0, 0)
    monkeypatch.chdir(course)
    kept_by_owner(_grading)(course, outside)
    assert {_owner(p) for p in course.rglob("*")} == {(0, 0)}


def test_only_the_commands_own_changes_are_given_back(places):
    """Are entries root left there before and did not touch since, or that another user owns, left as they are,
    while a file root made and one it changed (a new mode) are given back?"""
    course, _ = places
    (course / "changed.txt").write_text("root's, changed by the command")
    (course / "someone_else.txt").write_text("x")
    os.chown(course / "someone_else.txt", 1234, 1234)
    before = snapshot(course, 0)
    (course / "new.txt").write_text("x")
    os.chmod(course / "changed.txt", 0o600)
    done = give_back(course, *OWNER, before, 0)
    assert (done.given, done.left_linked) == (2, 0)
    assert _owner(course / "new.txt") == _owner(course / "changed.txt") == OWNER
    assert _owner(course / "earlier.txt") == (0, 0) and _owner(course / "someone_else.txt") == (1234, 1234)


def test_nbgraders_own_commands_give_back_at_exit(places):
    """Does a process that calls given_back_at_exit (nbgrader run as root there: the course's config calls it) leave
    what it wrote to the folder's owner when it exits, and leave it to a wrapped command that started it?"""
    course, _ = places
    script = ("from pathlib import Path\nfrom autograder.ownership import given_back_at_exit\n"
              "given_back_at_exit()\nPath('grades.csv').write_text('student_id,raw_score\\n')\n")
    env = {k: v for k, v in os.environ.items() if k != "AUTOGRADER_KEPT_BY_OWNER"}
    subprocess.run([sys.executable, "-c", script], cwd=course, env=env, check=True)
    assert _owner(course / "grades.csv") == OWNER
    (course / "grades.csv").unlink()
    subprocess.run([sys.executable, "-c", script], cwd=course, env={**env, "AUTOGRADER_KEPT_BY_OWNER": "1"},
                   check=True)
    assert _owner(course / "grades.csv") == (0, 0)
