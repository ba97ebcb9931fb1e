"""Every autograded check of the course, once: its nbgrader cell, points, needs, probe, fresh inputs and judge.

Both graders read this table: ``autograder grade`` runs the probes in the
sandbox and the judges here, and writes the points into nbgrader's gradebook
under each ``grade_id``; a test checks that the solution notebooks' nbgrader
metadata gives every cell the same points. The training runs' parts (scored
on the predictions their params give) are in ``RUN_PARTS``; each split's points go into a run
cell of its own (``RUN_CELLS``, ``course_lib.run_cells``), so nbgrader's total is the course's.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import torch

from autograder.checks import hidden as hidden_checks
from autograder.checks import judges
from course_lib import check_inputs, checks, twin_checks
from autograder.checks.run_files import (  # noqa: F401 (read from here too, by the checks' users)
    RUN_CELLS, RUN_FILES, RUN_LOGS, RUN_PARTS, RunPart)


@dataclass(frozen=True)
class Check:
    """One autograded nbgrader test cell."""

    grade_id: str  # nbgrader grade_id of the test cell
    notebook: str  # the notebook it is in, without .ipynb
    points: float  # what it is worth (the nbgrader metadata must say the same)
    needs: tuple[str, ...]  # names the student's notebooks must define
    probe: str  # function of autograder.inside.probes that runs the student's code
    inputs: Callable[[random.Random], dict]  # fresh inputs for this grading (the grader keeps them)
    judge: Callable[[dict, object], list[str]]  # (inputs, raw output) -> problems; empty: passed
    seconds: int = 60  # the probe's share of the job's time


def _public(grade_id: str, notebook: str, points: float, seconds: int = 60) -> Check:
    """A public check: its inputs, probe and judge are course_lib's, the same code its notebook cell runs."""
    c = checks.PUBLIC[grade_id]
    return Check(grade_id, notebook, points, c.needs, c.probe.__name__, c.inputs, c.judge, seconds)


def _hidden(grade_id: str, notebook: str, points: float, needs: tuple[str, ...], seconds: int = 60) -> Check:
    """A hidden check: inputs and judge in autograder.checks.hidden (its hidden cell runs them), a course_lib probe."""
    inputs, probe, judge = hidden_checks.HIDDEN[grade_id]
    return Check(grade_id, notebook, points, needs, probe.__name__, inputs, judge, seconds)


def _seed(rng: random.Random) -> dict:
    return {"seed": rng.randrange(2 ** 31)}


def _names(*names: str, calls: Callable[[int], dict] | None = None) -> Callable[[random.Random], dict]:
    """The names a twin sends back, a fresh seed, and (optionally) fresh calls of the student's functions."""
    def inputs(rng: random.Random) -> dict:
        seed = _seed(rng)
        return {"names": list(names), **seed, **({"calls": calls(seed["seed"])} if calls else {})}
    return inputs


def _permuted_output_calls(seed: int) -> dict:
    g = judges.given(judges.NB08)
    return {"permuted_output": [list(c) for c in twin_checks.calls_08_a(g.T, g.d, seed)]}


def _phi_sizes(rng: random.Random, positions: int, dimensions: int) -> list[list[int]]:
    """The notebook's (512, 16) and three (T, d) the handout never shows: T from 9 to ``positions``, d even, from
    14 to ``dimensions`` (a d typed in, say the 16 of the notebook's first size, is then wrong at all three)."""
    evens = [d for d in range(14, dimensions + 1, 2) if d not in check_inputs.HANDOUT_NUMBERS]
    return [[512, 16], *([check_inputs.draw_size(rng, 9, positions), rng.choice(evens)] for _ in range(3))]


def _phi_inputs(rng: random.Random) -> dict:
    """The public check's kind of sizes: the notebook's (512, 16) and three drawn ones up to 80 x 24."""
    return {"calls": {"position_embeddings": _phi_sizes(rng, 80, 24)}}


def _phi_hidden_inputs(rng: random.Random) -> dict:
    """The hidden check's sizes: drawn up to 300 positions and 64 dimensions (float32 stays within 1e-4 there)."""
    return {"calls": {"position_embeddings": _phi_sizes(rng, 300, 64)}}


GLUE = ("initialize_vanilla_model", "finetune")
CHECKS: tuple[Check, ...] = (
    _public("02-glue-config", "02_finetune_without_pretraining", 4),
    _hidden("02-glue-pretrained", "02_finetune_without_pretraining", 3, (*GLUE, "train")),
    _public("03-span-public", "03_span_corruption", 5),
    _hidden("03-span-hidden", "03_span_corruption", 15, ("CharCorruptionDataset",), seconds=180),
    _public("04-pretrain-config", "04_pretrain_then_finetune", 7),
    _public("05-synthesizer-public", "05_synthesizer", 2),
    _hidden("05-synthesizer-equivalence", "05_synthesizer", 5, ("SynthesizerAttention",)),
    _public("05-synthesizer-model", "05_synthesizer", 4),
    Check("07-a-test", "07_attention_exploration", 0.5, ("q_copy",), "variables", _names("q_copy"),
          judges.twin_07_a),
    Check("07-b-test", "07_attention_exploration", 1, ("M", "q_avg"), "variables", _names("M", "q_avg"),
          judges.twin_07_b),
    Check("07-c-test", "07_attention_exploration", 1, ("q_single",), "variables", _names("q_single"),
          judges.twin_07_c),
    Check("07-d-test", "07_attention_exploration", 1, ("q_1", "q_2"), "variables", _names("q_1", "q_2"),
          judges.twin_07_d),
    Check("07-e-test", "07_attention_exploration", 1.5, ("c2_plain", "K", "Q", "V"), "variables",
          _names("c2_plain", "K", "Q", "V"), judges.twin_07_e),
    Check("08-a-test", "08_position_embeddings", 1, ("P", "permuted_output"), "variables",
          _names("P", calls=_permuted_output_calls), judges.twin_08_a),
    Check("08-b-test", "08_position_embeddings", 0.5, ("position_embeddings",), "variables", _phi_inputs,
          judges.twin_08_b),
    Check("08-b-hidden", "08_position_embeddings", 0.5, ("position_embeddings",), "variables", _phi_hidden_inputs,
          judges.twin_08_b_hidden),
)
BY_ID = {c.grade_id: c for c in CHECKS}


def needs(part: RunPart) -> tuple[str, ...]:
    """grade_ids a run part's points depend on: every check, public and hidden, of the notebooks whose code its
    runs run; all must pass for any points."""
    return tuple(c.grade_id for c in CHECKS if c.notebook[:2] in part.code_of)


def code_points() -> float:
    return sum(c.points for c in CHECKS)


def prepare(rng: random.Random, folder) -> tuple[dict[str, dict], dict[str, str]]:
    """Fresh inputs of every check, and the files they need written into ``folder`` (name -> path)."""
    from pathlib import Path

    inputs = {c.grade_id: c.inputs(rng) for c in CHECKS}
    files = {}
    pretrained = inputs["02-glue-pretrained"]
    path = Path(folder) / pretrained["params_file"]
    torch.save(pretrained["expected_state"], path)
    files[pretrained["params_file"]] = str(path)
    return inputs, files


def sent_inputs(check: Check, inputs: dict) -> dict:
    """What of a check's inputs goes into the sandbox (the judge's expectations, "expected..." at any depth, stay
    here)."""
    return checks.sent(inputs)

