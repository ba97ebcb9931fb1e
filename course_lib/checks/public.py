"""Public checks: the same code in the student's notebook and in the course's grader.

A check is three functions (``PublicCheck``): ``inputs(rng)`` chooses fresh inputs,
``probe(parts, inputs)`` runs the student's code on them and returns what came out,
raw, and ``judge(inputs, output)`` returns the problems it finds (empty: passed).
The notebook's public test cell runs all three in the student's kernel on inputs of
a fresh seed (printed in the failure, so ``seed=N`` replays it); in nbgrader's autograde it runs
nothing and says so, since the grader judges it anyway. The grader
(``autograder grade``, table ``autograder.checks.registry``) runs ``probe`` in its
sandbox and ``judge`` in its own process, on inputs of its own seed. Every size the
inputs draw is one the handout never shows (``course_lib.checks.inputs.HANDOUT_NUMBERS``),
so a number typed in where the code should read its argument fails on every seed alike.
A judge decides only from properties any right answer has (the handout's values, shapes,
causality, what dropout does, what the formula reduces to on weights chosen for it):
nothing here computes a graded answer. Messages say what is wrong and where, without
giving the answer away. The checks themselves are in ``course_lib.checks.glue`` (02, 04),
``course_lib.checks.span`` (03) and ``course_lib.checks.synth`` (05); this module holds
the table and the functions the notebooks' test cells call. The grader's hidden checks
(never shipped) use the probes here too; what each adds is in its module's docstring:
span's is this judge on larger blocks and more draws, glue's and synth's judge what the
public ones cannot see here (pretrained params loaded and one step trained; the layer
against the reference solution's outputs).

The sampling judges state the probability that a right answer fails them (each
<= 1e-9): see ``span_problems``, ``synthesizer_public_problems`` and
benchmarks/check_false_rejection.py, which measures it.
"""
from __future__ import annotations

import random
import types
from collections.abc import Callable
from dataclasses import dataclass

from course_lib.checks.common import plain, sent
from course_lib.checks.glue import (
    finetune_config_inputs,
    finetune_config_probe,
    finetune_config_problems,
    pretrain_config_inputs,
    pretrain_config_probe,
    pretrain_config_problems,
)
from course_lib.checks.span import span_inputs, span_probe, span_problems
from course_lib.checks.synth import (
    synthesizer_model_inputs,
    synthesizer_model_probe,
    synthesizer_model_problems,
    synthesizer_probe,
    synthesizer_public_inputs,
    synthesizer_public_problems,
)
from course_lib.gpt.datasets import CharCorruptionDatasetBase
from course_lib.notebook.check_failed import CheckFailed, judged_outside
from course_lib.notebook.not_written import unwritten


@dataclass(frozen=True)
class PublicCheck:
    """One public check: its nbgrader grade_id, the names it needs, and its three functions."""

    grade_id: str
    needs: tuple[str, ...]  # names the student's notebooks must define
    inputs: Callable[[random.Random], dict]  # fresh inputs for one run
    probe: Callable[[object, dict], object]  # (the student's parts, inputs) -> raw output
    judge: Callable[[dict, object], list[str]]  # (inputs, raw output) -> problems; empty: passed
    passed: str  # what the notebook prints when it passes ("subject: all public checks passed")
    where: str  # where the student writes what it checks (a message names it when that is not written yet)


# what a public test cell says in nbgrader's autograde, where the course's grader judges it instead
SCORED_OUTSIDE = ("this public check is judged by the course's grader, outside your notebook, on inputs of its own: "
                  "its points and the reason for them are in your feedback (Validate runs it in your notebook)")


def run_public(grade_id: str, parts, seed: int | None = None, replay: str = "") -> None:
    """The notebook's public test cell: fresh inputs, the student's code, the judge; CheckFailed naming the seed. In
    nbgrader's autograde it runs nothing (``judged_outside``): the course's grader runs it, on inputs of its own."""
    judged_outside(SCORED_OUTSIDE)
    check = PUBLIC[grade_id]
    seed = random.SystemRandom().randrange(2 ** 31) if seed is None else seed
    inputs = check.inputs(random.Random(seed))
    try:
        output = check.probe(parts, sent(inputs))
    except NotImplementedError as err:
        what = unwritten(err) or " or ".join(check.needs)  # the function still holding the release's stub
        raise CheckFailed(f"{what} is not written yet: write it in {check.where}") from None
    problems = check.judge(inputs, plain(output))
    if problems:
        again = f"; `{replay.format(seed=seed)}` runs it again on the same inputs" if replay else ""
        raise CheckFailed("\n".join(problems) + f"\n(inputs of seed {seed}{again})")
    print(check.passed)


def _parts(**named) -> types.SimpleNamespace:
    """The student's definitions a check needs, as the grader's sandbox hands them to a probe."""
    return types.SimpleNamespace(**named)


# --- the table, and the functions the notebooks' test cells call ---------------------------------

PUBLIC: dict[str, PublicCheck] = {c.grade_id: c for c in (
    PublicCheck("02-glue-config", ("initialize_vanilla_model", "finetune", "train"), finetune_config_inputs,
                finetune_config_probe, finetune_config_problems,
                "finetune and train: all public checks passed", "notebook 02's glue cell"),
    PublicCheck("03-span-public", ("CharCorruptionDataset",), span_inputs, span_probe, span_problems,
                "span corruption: all public checks passed", "notebook 03's cell with class CharCorruptionDataset"),
    PublicCheck("04-pretrain-config", ("pretrain",), pretrain_config_inputs, pretrain_config_probe,
                pretrain_config_problems, "pretrain: all public checks passed", "notebook 04's glue cell"),
    PublicCheck("05-synthesizer-public", ("SynthesizerAttention",), synthesizer_public_inputs, synthesizer_probe,
                synthesizer_public_problems, "synthesizer: all public checks passed",
                "notebook 05's cell with class SynthesizerAttention"),
    PublicCheck("05-synthesizer-model", ("SynthesizerAttention", "initialize_synthesizer_model"),
                synthesizer_model_inputs, synthesizer_model_probe, synthesizer_model_problems,
                "synthesizer model: all public checks passed", "notebook 05's cells"),
)}


def check_finetune_config(initialize_vanilla_model, finetune, train, seed: int | None = None) -> None:
    run_public("02-glue-config", _parts(initialize_vanilla_model=initialize_vanilla_model, finetune=finetune,
                                        train=train), seed,
               "check_finetune_config(initialize_vanilla_model, finetune, train, seed={seed})")


def check_span_corruption_basic(dataset_class, seed: int | None = None) -> None:
    if not issubclass(dataset_class, CharCorruptionDatasetBase):
        raise CheckFailed("CharCorruptionDataset should subclass CharCorruptionDatasetBase (class "
                          "CharCorruptionDataset(CharCorruptionDatasetBase))")
    run_public("03-span-public", _parts(CharCorruptionDataset=dataset_class), seed,
               "check_span_corruption_basic(CharCorruptionDataset, seed={seed})")


def check_pretrain_config(pretrain, seed: int | None = None) -> None:
    run_public("04-pretrain-config", _parts(pretrain=pretrain), seed, "check_pretrain_config(pretrain, seed={seed})")


def check_synthesizer_shapes(attention_class, seed: int | None = None) -> None:
    run_public("05-synthesizer-public", _parts(SynthesizerAttention=attention_class), seed,
               "check_synthesizer_shapes(SynthesizerAttention, seed={seed})")


def check_synthesizer_model(initialize_synthesizer_model, attention_class, seed: int | None = None) -> None:
    run_public("05-synthesizer-model", _parts(initialize_synthesizer_model=initialize_synthesizer_model,
                                              SynthesizerAttention=attention_class), seed,
               "check_synthesizer_model(initialize_synthesizer_model, SynthesizerAttention, seed={seed})")
