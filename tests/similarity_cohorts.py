"""Submissions for the similarity report's tests and benchmarks: notebooks built from answers, written honestly or
copied and hidden (moved to other cells, run from strings, disguised: ``code_disguises``).

An honest student is a choice of one honest answer per part (``PARTS``): two students who chose
different answers for a part wrote that part on their own; the same answer is a copy of it. A class
(``write_class``) is honest students each writing one of six answers per part, a study group of
them sharing one cell verbatim, and copies of some of them, each disguised one way.
"""
from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass
from pathlib import Path

from code_disguises import Placed, disguised
from conftest import REPO, SOLUTIONS
from honest_code import (
    CAROL,
    GLUE_CAROL,
    GLUE_DANA,
    GLUE_ELI,
    GLUE_FAY,
    GLUE_HUGO,
    POSITION_COLUMNS,
    POSITION_EXP,
    POSITION_POLAR,
    SCRATCH,
    SHARED_SNIPPET,
    SPAN_CHOICE,
    SPAN_HELPERS,
    SPAN_JOINED,
    SPAN_WITH_TORCH,
    SYNTH_BMM,
    SYNTH_EINSUM_PERSISTENT_MASK,
    SYNTH_FUNCTIONAL_DROPOUT,
    SYNTH_HEAD_LOOP,
    TWINS_07,
    TWINS_08,
)

RELEASE = REPO / "notebooks" / "a5"
# the notebooks whose graded cells students write code in
GRADED = ("02_finetune_without_pretraining.ipynb", "03_span_corruption.ipynb", "04_pretrain_then_finetune.ipynb",
          "05_synthesizer.ipynb", "07_attention_exploration.ipynb", "08_position_embeddings.ipynb")


def notebook(source: Path, cells: dict[str, str] | None = None, edit=None) -> str:
    """The notebook at ``source`` as JSON text, graded cells replaced by ``cells`` or passed through ``edit``."""
    nb = json.loads(source.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] != "code" or not meta.get("solution"):
            continue
        grade_id = meta["grade_id"]
        if cells and grade_id in cells:
            cell["source"] = cells[grade_id]
        elif edit:
            cell["source"] = edit("".join(cell["source"]))
    return json.dumps(nb)


def answers(source: Path) -> dict[str, str]:
    """grade_id -> the code of each graded cell of the notebook at ``source``."""
    nb = json.loads(source.read_text(encoding="utf-8"))
    return {c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"]) for c in nb["cells"]
            if c["cell_type"] == "code" and c.get("metadata", {}).get("nbgrader", {}).get("solution")}


def released(name: str, given: dict[str, str], extra: tuple[str, ...] = ()) -> str:
    """The release's notebook ``name`` with its graded cells' answers from ``given`` and ``extra`` untagged cells at its
    end."""
    nb = json.loads(notebook(RELEASE / name, {g: code for g, code in given.items() if g in answers(RELEASE / name)}))
    nb["cells"] += [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": code}
                    for code in extra]
    return json.dumps(nb)


def _new_cell(source: str, key: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "id": key, "metadata": {}, "outputs": [], "source": source}


def placed(name: str, cells: dict[str, Placed], extra: tuple[str, ...] = ()) -> str:
    """The release's notebook ``name`` with each graded cell's code where ``cells`` puts it (the graded cell, cells
    after it that repeat its grade_id as Split Cell does, untagged cells after it or at the end), then ``extra``."""
    nb = json.loads((RELEASE / name).read_text(encoding="utf-8"))
    out, end = [], []
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        where = cells.get(meta.get("grade_id")) if cell["cell_type"] == "code" and meta.get("solution") else None
        out.append(cell)
        if where is None:
            continue
        if where.graded is not None:
            cell["source"] = where.graded
        out += [dict(copy.deepcopy(cell), source=code, id=f"{cell['id']}-{i}") for i, code in enumerate(where.split)]
        out += [_new_cell(code, f"{cell['id']}-after-{i}") for i, code in enumerate(where.after)]
        end += where.end
    nb["cells"] = out + [_new_cell(code, f"end-{i}") for i, code in enumerate((*end, *extra))]
    return json.dumps(nb)


def moved(name: str, given: dict[str, str]) -> str:
    """The release's notebook ``name``, graded cells as released, the answers ``given`` for them in new untagged cells
    at its end, last answer first."""
    mine = [given[g] for g in answers(RELEASE / name) if g in given]
    return released(name, {}, tuple(reversed(mine)))


def wrapped(code: str, how: int) -> str:
    """``code`` run through a string: exec, exec of compile, two literals added, or IPython's %%capture."""
    return (f"exec({code!r})", f"exec(compile({code!r}, '<cell>', 'exec'))",
            f"exec({code[:40]!r} + {code[40:]!r})", f"%%capture\n{code}")[how % 4]


def submit(submitted: Path, student: str, files: dict[str, str | bytes]) -> None:
    folder = submitted / student / "a5"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))


REFERENCE = {g: code for name in GRADED for g, code in answers(SOLUTIONS / name).items()}
_SHORT_07 = ("07-a-code", "07-b-code", "07-c-code", "07-d-code")
# part -> its honest answers (grade_id -> code), each written apart from the others; 07's short answers have one right
# form each, so two students sharing them is no copy
PARTS = {
    "glue": ({g: REFERENCE[g] for g in GLUE_CAROL}, GLUE_CAROL, GLUE_HUGO, GLUE_DANA, GLUE_ELI, GLUE_FAY),
    "span": tuple({"03-span-corruption": code} for code in (
        REFERENCE["03-span-corruption"], CAROL["03-span-corruption"], SPAN_WITH_TORCH, SPAN_CHOICE, SPAN_JOINED,
        SPAN_HELPERS)),
    "synthesizer": tuple({"05-synthesizer": code} for code in (
        REFERENCE["05-synthesizer"], CAROL["05-synthesizer"], SYNTH_EINSUM_PERSISTENT_MASK, SYNTH_FUNCTIONAL_DROPOUT,
        SYNTH_BMM, SYNTH_HEAD_LOOP)),
    "position": ({g: REFERENCE[g] for g in TWINS_08}, {g: CAROL[g] for g in TWINS_08}, TWINS_08, POSITION_EXP,
                 POSITION_COLUMNS, POSITION_POLAR),
}
SHORT = ({g: REFERENCE[g] for g in _SHORT_07}, TWINS_07)  # 07's one-line answers, the reference's or other forms


def honest(choice: dict[str, int], short: int = 0) -> dict[str, str]:
    """grade_id -> answer of the student who chose answer ``choice[part]`` of each part and ``short`` of 07's."""
    return {g: code for part, i in choice.items() for g, code in PARTS[part][i].items()} | SHORT[short]


def files(given: dict[str, str], extra: tuple[str, ...] = ()) -> dict[str, str]:
    """A submission's notebooks holding the answers ``given``, ``extra`` cells at the end of each."""
    return {name: released(name, given, extra) for name in GRADED}


SNIPPET_NOTEBOOK = "03_span_corruption.ipynb"  # where the study group's shared cell stands
PART_ROWS = ("02-glue", "03-span-corruption", "04-pretrain-glue", "05-synthesizer", "07-e-code", "08-a-code",
             "08-b-code")  # the graded cells students write their own way (07's short answers have one right form)


@dataclass(frozen=True)
class Member:
    """One student of a class."""

    choice: dict[str, int]  # part (and "short") -> the honest answer written (a copy: its original's)
    snippet: bool  # holds the study group's shared cell
    copy_of: str | None = None  # the classmate copied
    disguise: str | None = None  # how (code_disguises.DISGUISES)


def _part_of(grade_id: str) -> str:
    return next((part for part, choices in PARTS.items() if grade_id in choices[0]), "short")


def write_class(submitted: Path, honest_count: int, shared: int, copies: tuple[str, ...], seed: int = 0,
                snippet: tuple[str, ...] = (SHARED_SNIPPET,)) -> dict[str, Member]:
    """``honest_count`` honest students, each part's six answers spread evenly among them, ``shared`` of them holding
    the study group's cells (``snippet``), and one copy of a distinct honest student per disguise in ``copies``
    (``copy-<kind>``, or ``copy-<kind>-<j>`` when a kind repeats: the original's answers disguised, its shared cells
    kept, scratch cells of its own); student -> who they are."""
    rng = random.Random(seed)
    spread = {part: rng.sample([i % len(v) for i in range(honest_count)], honest_count)
              for part, v in (*PARTS.items(), ("short", SHORT))}
    group = set(rng.sample(range(honest_count), shared))
    members = {f"h{i:03d}": Member({part: spread[part][i] for part in spread}, i in group) for i in range(honest_count)}
    for j, (kind, original) in enumerate(zip(copies, rng.sample(sorted(members), len(copies)))):
        name = f"copy-{kind}" + (f"-{j}" if copies.count(kind) > 1 else "")
        members[name] = Member(members[original].choice, members[original].snippet, original, kind)
    for i, (student, m) in enumerate(members.items()):
        given = honest({p: m.choice[p] for p in PARTS}, short=m.choice["short"])
        cells = disguised(m.disguise, given, seed + i) if m.disguise else {g: Placed(c) for g, c in given.items()}
        scratch = tuple(rng.sample(SCRATCH, 3))
        submit(submitted, student, {name: placed(name, {g: c for g, c in cells.items() if g in answers(RELEASE / name)},
                                                 scratch + (snippet if m.snippet and name == SNIPPET_NOTEBOOK
                                                            else ())) for name in GRADED})
    return members


def apart(a: Member, b: Member, grade_id: str | None = None) -> bool:
    """Whether two honest students wrote every part (or ``grade_id``'s part) with different answers."""
    parts = [_part_of(grade_id)] if grade_id else list(PARTS)
    return a.copy_of is None and b.copy_of is None and all(a.choice[p] != b.choice[p] for p in parts)
