"""The collect step's notebooks: each copy as Jupyter saves it, and a missing one's renamed copy, told by its content.

Two things an honest student's tools do to a notebook that must not cost a point:
  - an editor saves it with a UTF-8 byte-order mark, CRLF line ends or an older nbformat, which Jupyter reads
    (or, for the mark, the editor does) and some steps would not: the collected copy is rewritten as Jupyter
    saves it (``course_lib.loader.notebook_file``), so nbgrader's autograde, the score of record, the feedback
    and every other step read one notebook;
  - a browser download or a "Duplicate" renames it (``02_x (1).ipynb``, ``Copy of 02_x.ipynb``,
    ``02_x-Copy1.ipynb``, ``02_X.ipynb``): when the release's notebook is missing and exactly one other notebook
    at the top of the submission is a copy of it, that one is taken in its place. A copy is told by its content,
    never its name: its cells' nbgrader grade_ids are all of that release notebook and cover at least half of
    them, so one notebook never stands in for two, and two copies of one notebook leave it missing.
Both read a student's bytes, so they run in the student's collect unit, within the notebook's size cap and the
JSON value budget (``autograder.inside.bounded_json``).
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from autograder.collecting.safe_files import listing, read_regular, shown
from autograder.inside import bounded_json
from course_lib.loader.notebook_file import NotebookUnreadable, normalised, read_bytes

MAX_CANDIDATES = 16  # other notebooks of a submission read to find a missing one's copy (names nearest first)
TAKEN = "was handed in under another name and graded as it"  # the student's note (grader's words)
NOT_HANDED_IN = "was not handed in"
# a release notebook -> the grade_ids of its cells: how a renamed copy is told
Marks = tuple[tuple[str, frozenset[str]], ...]


def grade_ids(cells: Iterable) -> set[str]:
    """Every nbgrader grade_id the cells carry."""
    found = set()
    for cell in cells:
        meta = cell.get("metadata") if isinstance(cell, dict) else None
        nbgrader = meta.get("nbgrader") if isinstance(meta, dict) else None
        value = nbgrader.get("grade_id") if isinstance(nbgrader, dict) else None
        if isinstance(value, str):
            found.add(value)
    return found


def release_marks(release: Path) -> Marks:
    """Each release notebook's grade_ids (the instructor's files: trusted)."""
    marks = []
    for path in sorted(Path(release).glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        marks.append((path.name, frozenset(grade_ids(cells))))
    return tuple(marks)


def read_notebook(data: bytes):
    """A student's notebook bytes read as Jupyter reads them, within the JSON value budget; NotebookUnreadable."""
    return read_bytes(data, parse=bounded_json.loads)


def copy_of(data: bytes, marks: Marks) -> str | None:
    """The release notebook whose copy ``data`` is (its grade_ids all that notebook's, at least half of them),
    else None."""
    try:
        ids = grade_ids(read_notebook(data).notebook.cells)
    except NotebookUnreadable:
        return None
    owners = [(name, own) for name, own in marks if ids & own]
    if len(owners) != 1:
        return None
    name, own = owners[0]
    return name if 2 * len(ids & own) >= len(own) else None


def _nearest_first(names: list[str], missing: set[str]) -> list[str]:
    """Names holding a missing notebook's name (spaces and capitals aside) first."""
    stems = [m.removesuffix(".ipynb").replace(" ", "").casefold() for m in missing]
    return sorted(names, key=lambda n: (not any(s in n.replace(" ", "").casefold() for s in stems), n))


def stand_ins(top_fd: int, missing: set[str], wanted: frozenset[str], marks: Marks, cap: int, budget: int,
              max_entries: int, notes: dict[str, str], notices: list[str]) -> list[tuple[str, str]]:
    """(name, release name) of each other notebook at the top of the submission taken in a missing release
    notebook's place: the one copy of it there is. Says so in ``notes`` (the student's) and ``notices`` (the
    instructor's), and says it too when several are copies of one (none taken). Reads at most MAX_CANDIDATES
    regular files of at most ``cap`` bytes each and ``budget`` in all."""
    if not missing or not marks:
        return []
    entries, _ = listing(top_fd, max_entries)
    others = [name for name, mode in entries if name.lower().endswith(".ipynb") and name not in wanted]
    copies: dict[str, list[str]] = {}
    for name in _nearest_first(others, missing)[:MAX_CANDIDATES]:
        data = read_regular(top_fd, name, min(cap, budget))
        if data is None:
            continue
        budget -= len(data)
        release = copy_of(data, marks)
        if release in missing:
            copies.setdefault(release, []).append(name)
    taken = []
    for release, names in sorted(copies.items()):
        if len(names) == 1:
            taken.append((names[0], release))
            notes[release] = TAKEN
            notices.append(f"took '{shown(names[0])}' as {release}")
        else:
            listed = ", ".join(f"'{shown(n)}'" for n in names[:3]) + (", ..." if len(names) > 3 else "")
            notes[release] = f"{len(names)} notebooks handed in are copies of it: hand in one, under its name"
            notices.append(f"{release} {NOT_HANDED_IN}; {len(names)} notebooks are copies of it ({listed}), none taken")
    return taken


def missing_notices(notebooks: frozenset[str], copied: Iterable[str], notes: dict[str, str],
                    notices: list[str]) -> list[str]:
    """The instructor's line for each release notebook not in the copy that ``notices`` does not name yet."""
    said = [n for n in notices if NOT_HANDED_IN in n]
    missing = sorted(name for name in notebooks - set(copied) if not any(n.startswith(f"{name} ") for n in said))
    return [f"{name} {NOT_HANDED_IN}" + (f" ({notes[name]})" if name in notes else "") for name in missing]


def normalise(path: Path, cap: int) -> str | None:
    """Rewrite a collected notebook as Jupyter saves it when an editor saved it otherwise; the instructor's line
    saying what was done (or that it could not be read), else None."""
    name = path.name
    try:
        file = read_notebook(path.read_bytes())
    except NotebookUnreadable as err:
        return f"{name} could not be read as a notebook: {err}"
    if not file.fixes:
        return None
    data = normalised(file)
    if len(data) > cap:
        return f"{name} was not normalised ({', '.join(file.fixes)}): it would be larger than the size limit"
    temporary = path.with_name(f".{name}.normalised")
    temporary.write_bytes(data)
    os.replace(temporary, path)
    return f"normalised {name}: {', '.join(file.fixes)}"
