"""Submissions for the similarity report's tests and benchmark: notebooks built from answers, written honestly or
copied and hidden (moved to other cells, run from strings).

An honest student is a choice of one honest answer per part (``PARTS``): two students who chose
different answers for a part wrote that part on their own; the same answer is a copy of it.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

from code_disguises import Placed
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
