"""tools/hub_setup.sh and the people it is given: a name that is no account is refused before anything changes, and
made only when asked (--create, which `make hub HUB_CREATE_USERS=1` passes)."""
from __future__ import annotations

import os
import pwd
import stat
import subprocess

import pytest

from course_lib.layout import REPO

from . import hub_server
from .hub_server import INSTRUCTOR, PASSWORDS, STUDENTS, machine

TYPO = "hubtest-typo"  # a student list's misspelt name: no account on the machine


def _exists(user: str) -> bool:
    try:
        pwd.getpwnam(user)
        return True
    except KeyError:
        return False


def _remove(user: str) -> None:
    """The account, its home and its line of the passwords file gone."""
    if _exists(user):
        subprocess.run(["userdel", "--remove", user], check=True, capture_output=True)
    if PASSWORDS.exists():
        lines = [line for line in PASSWORDS.read_text().splitlines(keepends=True) if not line.startswith(f"{user} ")]
        PASSWORDS.write_text("".join(lines))


def _setup(*words: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "tools/hub_setup.sh", *words], cwd=REPO, capture_output=True, text=True,
                          timeout=900)


@pytest.fixture
def typo(machine_ready):
    _remove(TYPO)
    yield TYPO
    _remove(TYPO)


def test_a_name_that_is_no_account_is_refused_naming_it_and_nothing_changes(typo):
    """Does the setup, given a name that is no Linux account, refuse in one line naming it (and how to create it),
    without making the account or touching the passwords or the users' tree?"""
    passwords = PASSWORDS.read_bytes()
    tree = (machine.users_tree(REPO) / "python").stat().st_ino
    done = _setup(INSTRUCTOR, STUDENTS[0], typo)
    assert done.returncode != 0 and done.stdout == ""
    [said] = done.stderr.splitlines()
    assert typo in said and STUDENTS[0] not in said and "HUB_CREATE_USERS=1" in said
    assert not _exists(typo)
    assert PASSWORDS.read_bytes() == passwords and (machine.users_tree(REPO) / "python").stat().st_ino == tree


def test_create_makes_the_missing_account_with_a_private_home_and_a_password(typo):
    """Given --create, does the setup make the missing account, with a home only it can read and a password line?"""
    done = _setup("--create", INSTRUCTOR, typo)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"creating user {typo}" in done.stdout
    home = pwd.getpwnam(typo).pw_dir
    assert stat.S_IMODE(os.stat(home).st_mode) == 0o700
    assert typo in hub_server.passwords()
