"""What an instructor should look at across a cohort: shared files, notebooks someone else wrote.

Flags never change a score (an honest student whose file another student hard-linked keeps
every point): they list pairs for a person to read, in ``flags.csv``. Made from the prints each
student's collect unit computed of its own copy (``autograder.collecting.prints``): the driver
compares hashes and never reads a submission.
  - byte-identical params or run logs of two students (not predictions: see ``cohort_flags``);
  - the same file (one inode: a hard link) in two students' submissions;
  - a notebook whose cells are the instructor's solution notebook's, or another student's
    (cells compared by their sources, so a re-saved copy with other outputs still matches;
    a notebook identical to the blank release is nobody's copy);
  - runs that are near-copies though not byte for byte (``near_copies``: the params' weights
    and the wrong answers two runs share), with the evidence;
  - a run whose log records a classmate's personal seed (``course_lib.seeds``): students
    train from their own seed unless they set one.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from autograder.collecting.collect import Collected, release_folder
from autograder.collecting.near_copies import near_copies
from autograder.collecting.prints import notebook_fingerprint
from course_lib import layout
from course_lib.seeds import personal_seed

SOLUTION = "(the solution notebook)"  # the other party of a notebook identical to the instructor's


@dataclass(frozen=True)
class Flag:
    """Two parties sharing something, for the instructor to look at."""

    file: str  # the file (as the assignment names it)
    student: str  # a student
    other: str  # another student, or SOLUTION
    why: str  # in the instructor's words


def _trusted_print(path: Path) -> str | None:
    """The fingerprint of one of the course's own notebooks (the solution's, the release's)."""
    return notebook_fingerprint(path.read_bytes())


def _pairs(groups: dict, file_of, why: str) -> list[Flag]:
    flags = []
    for key, students in sorted(groups.items()):
        students = sorted(set(students))
        flags += [Flag(file_of(key), a, b, why) for i, a in enumerate(students) for b in students[i + 1:]]
    return flags


def _classmates_seeds(collected: list[Collected]) -> list[Flag]:
    """Run logs recording another student's personal seed: their run, or trained as theirs."""
    owners = {personal_seed(c.student): c.student for c in collected}
    flags = []
    for c in collected:
        theirs: dict[str, list[str]] = defaultdict(list)  # owner -> the logs recording their seed
        for log, seed in c.prints.seeds:
            if owners.get(seed, c.student) != c.student:
                theirs[owners[seed]].append(log)
        flags += [Flag(logs[0], c.student, owner,
                       f"{len(logs)} run log(s) record {owner}'s personal seed ({personal_seed(owner)})")
                  for owner, logs in sorted(theirs.items())]
    return flags


def cohort_flags(collected: list[Collected], assignment: str = layout.ASSIGNMENT,
                 solutions: Path | None = None, release: Path | None = None,
                 gold: dict[str, bytes] | None = None) -> list[Flag]:
    """Every flag of the cohort, sorted by kind then file. ``gold`` (split -> the right answers'
    hashes, ``near_copies.gold_hashes``) lets near-copies be found by their answers as well as their
    weights."""
    solutions = solutions or layout.SOLUTIONS_DIR.parent / assignment
    release = release or release_folder(assignment)
    run_files: dict[tuple[str, str], list[str]] = defaultdict(list)
    inodes: dict[tuple[int, int, str], list[str]] = defaultdict(list)
    notebooks: dict[tuple[str, str], list[str]] = defaultdict(list)
    solution_prints = {p.name: _trusted_print(p) for p in solutions.glob("*.ipynb")}
    release_prints = {p.name: _trusted_print(p) for p in release.glob("*.ipynb")}
    flags: list[Flag] = []
    present = [c for c in collected if c.folder is not None]
    for c in present:
        for relative, inode in c.inodes.items():
            inodes[(*inode, Path(relative).name)].append(c.student)
        for name, digest in c.prints.run_files:
            if Path(name).suffix != ".predictions":  # see _pairs' call below
                run_files[(name, digest)].append(c.student)
        for name, mark in c.prints.notebooks:
            if mark is None or mark == release_prints.get(name):
                continue
            if mark == solution_prints.get(name):
                flags.append(Flag(name, c.student, SOLUTION, "identical cells to the instructor's solution"))
            notebooks[(name, mark)].append(c.student)
    # byte-identical params and logs only: two honest weak models may both answer the commonest
    # place everywhere, so predictions count only through near_copies, which allows for chance
    flags += _pairs({k: v for k, v in run_files.items() if len(set(v)) > 1}, lambda k: k[0], "byte-identical files")
    flags += _pairs({k: v for k, v in inodes.items() if len(set(v)) > 1}, lambda k: k[2],
                    "the same file (a hard link) in both submissions")
    flags += _pairs({k: v for k, v in notebooks.items() if len(set(v)) > 1}, lambda k: k[0],
                    "notebooks with identical cells")
    flags += [Flag(n.file, n.student, n.other, n.why)
              for n in near_copies([(c.student, c.prints) for c in present], gold)]
    flags += _classmates_seeds(present)
    return flags
