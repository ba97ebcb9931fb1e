"""Real Linux accounts for the tests that judge who owns a file (nbgrader's exchange): made once, as root."""
from __future__ import annotations

import os
import pwd
import shutil
import subprocess

PREFIX = "agtest-"  # the tests' own accounts: no course or hub of the machine uses these names


def why_not() -> str | None:
    """Why real accounts cannot be made here, or None."""
    if os.geteuid() != 0:
        return "making Linux accounts needs root"
    if shutil.which("useradd") is None:
        return "useradd is missing (Debian: passwd)"
    return None


def ensure(*names: str) -> dict[str, pwd.struct_passwd]:
    """The accounts ``PREFIX + name``, made when missing (system accounts: no home, no login); name -> entry."""
    found = {}
    for name in names:
        user = PREFIX + name
        try:
            found[name] = pwd.getpwnam(user)
        except KeyError:
            subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin",
                            user], check=True, capture_output=True)
            found[name] = pwd.getpwnam(user)
    return found


def give(path, entry: pwd.struct_passwd) -> None:
    """Make ``path`` and everything under it (links themselves, never their targets) belong to the account."""
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), entry.pw_uid, entry.pw_gid)
    os.lchown(path, entry.pw_uid, entry.pw_gid)
