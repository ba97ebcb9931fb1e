"""Each student's own training seed, from their student id: two honest students never train the same runs.

Every student trains the same code on the same data; with one default seed, two honest
students with the same correct glue would hand in byte-identical params, and a copied run
would look like an honest one. So a run's seed is the student's own, derived from the id
nbgrader knows them by (the grader derives it the same way from the submission's id):
  1. ``COURSE_SEED`` when set (an explicit seed always wins);
  2. else the JupyterHub user (``JUPYTERHUB_USER``: on the course's hub, the student id);
  3. else nbgrader's own id, the one ``nbgrader submit`` files a submission under (its
     ``nbgrader.utils.get_username``: the account's name in the password database);
  4. else the operating system's user as Python's ``getpass`` finds it (Windows has no
     password database).
Each run's log records the seed, and the grader's audit retrains with it.
"""
from __future__ import annotations

import getpass
import hashlib
import os
from dataclasses import dataclass

try:
    import pwd
except ImportError:  # Windows
    pwd = None

# personal seeds are 1..2**31-1: NumPy takes seeds below 2**32, and 0 stays the shared default
SEED_SPACE = 2 ** 31 - 1
SALT = b"attention-course personal seed\0"  # so a seed is not the hash of the id alone


@dataclass(frozen=True)
class SeedChoice:
    """The seed a run trains with, and where it came from (for what the run prints)."""

    seed: int  # the training's random seed
    source: str  # "COURSE_SEED", or the kind of id it was derived from ("JupyterHub user", ...)
    student: str | None = None  # the id it was derived from (None for an explicit seed)


def personal_seed(student: str) -> int:
    """The seed of student id ``student``: the same on every machine, 1..2**31-1."""
    digest = hashlib.sha256(SALT + student.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % SEED_SPACE + 1


def student_id() -> tuple[str, str]:
    """(the student's id, its kind): the JupyterHub user, else nbgrader's id, else the OS user."""
    if os.environ.get("JUPYTERHUB_USER"):
        return os.environ["JUPYTERHUB_USER"], "JupyterHub user"
    # nbgrader.utils.get_username's rule, copied: importing nbgrader would slow every kernel's start
    # (tests/course_lib/test_seeds.py checks the two agree)
    try:
        return pwd.getpwuid(os.getuid()).pw_name, "nbgrader id"
    except (AttributeError, KeyError):
        pass  # no password database (Windows), or no entry for this uid (a bare container)
    try:
        return getpass.getuser(), "OS user"
    except (OSError, KeyError):
        return "", "no user"


def choose_seed(explicit: int | None = None) -> SeedChoice:
    """The seed to train with: ``explicit`` (``--seed``), else ``COURSE_SEED``, else the student's own."""
    if explicit is not None:
        return SeedChoice(explicit, "--seed")
    if os.environ.get("COURSE_SEED", "").strip():
        return SeedChoice(int(os.environ["COURSE_SEED"]), "COURSE_SEED")
    student, kind = student_id()
    return SeedChoice(personal_seed(student), kind, student)
