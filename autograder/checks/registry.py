"""Every autograded check, once: its nbgrader cell, points, needs, probe, fresh inputs and judge.

Both graders read this table: ``autograder grade`` runs the probes in the sandbox and the judges
here, and writes the points into nbgrader's gradebook under each ``grade_id``; a test checks that
the solution notebooks' nbgrader metadata gives every cell the same points. The training runs'
parts (scored on the predictions their params give) are in ``run_files.RUN_PARTS``; each split's
points go into a run cell of its own (``RUN_CELLS``, ``course_lib.notebook.run_cells``), so
nbgrader's total is the course's.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import torch

from autograder.checks import twins
from autograder.checks.hidden import HIDDEN
from autograder.checks.run_files import RunPart
from course_lib.checks.common import sent
from course_lib.checks.public import PUBLIC


@dataclass(frozen=True)
class GradedPart:
    """One graded part, by the name its files share (docs/authoring.md maps each one)."""

    name: str  # course_lib/checks/<name>.py, its section of hidden.py (or twins.py), its tests
    notebooks: tuple[str, ...]  # the notebooks (by number) where the student writes it
    feeds: tuple[str, ...]  # run parts (run_files.RUN_PARTS) whose runs call it; none if written


PARTS = {p.name: p for p in (
    GradedPart("glue", ("02", "04"), ("vanilla_nopretrain", "vanilla_pretrain", "synthesizer_pretrain")),
    GradedPart("span", ("03",), ("vanilla_pretrain", "synthesizer_pretrain")),
    GradedPart("synth", ("05",), ("synthesizer_pretrain",)),
    GradedPart("twins", ("07", "08"), ()),
)}


@dataclass(frozen=True)
class Check:
    """One autograded nbgrader test cell."""

    grade_id: str  # nbgrader grade_id of the test cell
    part: str  # the graded part it checks (PARTS)
    notebook: str  # the notebook it is in, without .ipynb
    points: float  # what it is worth (the nbgrader metadata must say the same)
    needs: tuple[str, ...]  # names the student's notebooks must define
    probe: str  # function of autograder.inside.probes that runs the student's code
    inputs: Callable[[random.Random], dict]  # fresh inputs for this grading (the grader keeps them)
    judge: Callable[[dict, object], list[str]]  # (inputs, raw output) -> problems; empty: passed
    seconds: int = 60  # the probe's share of the job's time


def _public(grade_id: str, part: str, notebook: str, points: float, seconds: int = 60) -> Check:
    """A public check: inputs, probe and judge are course_lib's, the code its notebook cell runs."""
    c = PUBLIC[grade_id]
    return Check(grade_id, part, notebook, points, c.needs, c.probe.__name__, c.inputs, c.judge, seconds)


def _hidden(grade_id: str, part: str, notebook: str, points: float, needs: tuple[str, ...],
            seconds: int = 60) -> Check:
    """A hidden check: inputs and judge from autograder.checks.hidden, the probe from course_lib."""
    inputs, probe, judge = HIDDEN[grade_id]
    return Check(grade_id, part, notebook, points, needs, probe.__name__, inputs, judge, seconds)


def _twin(grade_id: str, notebook: str, points: float, needs: tuple[str, ...], inputs, judge) -> Check:
    """A numeric twin: names sent back by probe ``variables``, judged by autograder.checks.twins."""
    return Check(grade_id, "twins", notebook, points, needs, "variables", inputs, judge)


GLUE = ("initialize_vanilla_model", "finetune")
NB02, NB03, NB04, NB05 = ("02_finetune_without_pretraining", "03_span_corruption", "04_pretrain_then_finetune",
                          "05_synthesizer")
NB07, NB08 = "07_attention_exploration", "08_position_embeddings"
CHECKS: tuple[Check, ...] = (
    _public("02-glue-config", "glue", NB02, 4),
    _hidden("02-glue-pretrained", "glue", NB02, 3, (*GLUE, "train")),
    _public("03-span-public", "span", NB03, 5),
    _hidden("03-span-hidden", "span", NB03, 15, ("CharCorruptionDataset",), seconds=180),
    _public("04-pretrain-config", "glue", NB04, 7),
    _public("05-synthesizer-public", "synth", NB05, 2),
    _hidden("05-synthesizer-equivalence", "synth", NB05, 5, ("SynthesizerAttention",)),
    _public("05-synthesizer-model", "synth", NB05, 4),
    _twin("07-a-test", NB07, 0.5, ("q_copy",), twins.names_inputs("q_copy"), twins.twin_07_a),
    _twin("07-b-test", NB07, 1, ("M", "q_avg"), twins.names_inputs("M", "q_avg"), twins.twin_07_b),
    _twin("07-c-test", NB07, 1, ("q_single",), twins.names_inputs("q_single"), twins.twin_07_c),
    _twin("07-d-test", NB07, 1, ("q_1", "q_2"), twins.names_inputs("q_1", "q_2"), twins.twin_07_d),
    _twin("07-e-test", NB07, 1.5, ("c2_plain", "K", "Q", "V"), twins.names_inputs("c2_plain", "K", "Q", "V"),
          twins.twin_07_e),
    _twin("08-a-test", NB08, 1, ("P", "permuted_output"),
          twins.names_inputs("P", calls=twins.permuted_output_calls), twins.twin_08_a),
    _twin("08-b-test", NB08, 0.5, ("position_embeddings",), twins.phi_inputs, twins.twin_08_b),
    _twin("08-b-hidden", NB08, 0.5, ("position_embeddings",), twins.phi_hidden_inputs, twins.twin_08_b_hidden),
)
BY_ID = {c.grade_id: c for c in CHECKS}


def needs(part: RunPart) -> tuple[str, ...]:
    """grade_ids a run part's points depend on: every check, public and hidden, of the notebooks
    whose code its runs run; all must pass for any points."""
    return tuple(c.grade_id for c in CHECKS if c.notebook[:2] in part.code_of)


def code_points() -> float:
    """The points of all autograded checks (the run parts' points not included)."""
    return sum(c.points for c in CHECKS)


def prepare(rng: random.Random, folder) -> tuple[dict[str, dict], dict[str, str]]:
    """Fresh inputs of every check, and the files they need, in ``folder`` (name -> path)."""
    from pathlib import Path

    inputs = {c.grade_id: c.inputs(rng) for c in CHECKS}
    files = {}
    pretrained = inputs["02-glue-pretrained"]
    path = Path(folder) / pretrained["params_file"]
    torch.save(pretrained["expected_state"], path)
    files[pretrained["params_file"]] = str(path)
    return inputs, files


def sent_inputs(check: Check, inputs: dict) -> dict:
    """What of a check's inputs goes into the sandbox: all but "expected..." keys, at any depth."""
    return sent(inputs)

