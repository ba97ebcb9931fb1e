"""Hidden checks: what the public checks do not judge, each in a hidden test cell of its own grade_id.

What each adds to its part's public checks:
- glue, ``02-glue-pretrained``: the public check's judges of finetune given a params path and of train()
  (``course_lib.checks.glue_train``) on the grader's own world and params, which the student never sees;
- span, ``03-span-hidden``: the public judge itself (``span_problems``) on larger blocks and more draws per plan;
- synth, ``05-synthesizer-equivalence``: the layer's outputs against the reference solution's, on the original
  grader's case and fresh ones, and what attention dropout drops.

A hidden check has the public checks' form (``course_lib.checks``): fresh inputs,
a probe that runs the student's code on them (the probes are course_lib's, so the
grader's sandbox can run them), and a judge here. ``autograder grade`` runs the probe
in its sandbox and the judge in its own process (``autograder.checks.registry`` points at
the functions below): that is the score of record, and the only place a hidden check is
judged on a student's code. The synthesizer's check compares with the reference solution:
its inputs carry the reference's outputs, computed where the reference can be seen.

Nothing grader-only is ever readable in a kernel that runs student code: no grading seed,
no reference output. So in nbgrader's autograde (``NBGRADER_EXECUTION=autograde``) a hidden
test cell judges nothing: it fails with a line saying its points come from the course's
grader (``autograder grade --gradebook`` writes them, the feedback shows its reason).
Elsewhere (the instructor's own runs of the solutions, the tests) a hidden cell draws its
inputs and judges in place, as the grader would.

This module imports only course_lib (the grading kernel sees this file and course_lib,
nothing else of the course). Each failure message names what is wrong without giving
the answer away.
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import random
import tempfile
import types
from pathlib import Path

import torch

from course_lib.checks.common import TOLERANCE, plain, sent
from course_lib.checks.glue import WITH_PARAMS, finetune_pretrained_probe, setup_problems
from course_lib.checks.glue_train import loaded_problems, train_problems
from course_lib.checks.inputs import (
    SYNTH_PARAMS,
    handout_state,
    item_indices,
    random_state,
    sequence_inputs,
    synthesizer_config,
    toy_model,
    toy_world,
)
from course_lib.checks.span import span_inputs, span_probe, span_problems
from course_lib.checks.synth import (
    ATTN_DROP,
    MalformedOutput,
    synth_dims,
    synthesizer_outputs,
    synthesizer_probe,
    term_cases,
    term_problems,
)
from course_lib.layout import SOLUTIONS_DIR
from course_lib.notebook import check_failed
from course_lib.notebook.check_failed import CheckFailed

# (low, high) block size drawn per plan: sizes the handout never shows, all >= 17 so that 7/8 of
# the block plus three masks fits
SPAN_BLOCK_SIZES = ((19, 27), (41, 63), (129, 199), (201, 255))
# draws per plan: enough to see both extremes of the truncated length at the smallest block
SPAN_SAMPLES = (1000, 1200, 3000, 6000)
SYNTH_SHAPES = ((6, 3, 8), (16, 4, 12), (32, 8, 20), (12, 1, 5))  # (n_embd, n_head, block_size)
DROPOUT_DIMS = (16, 2, 7)  # head size 8 >= T = 6: every dropped weight shows in its head's output
DROPOUT_IDENTIFIABLE = 0.02  # an attention weight this large shows whether dropout kept it


@functools.lru_cache(maxsize=1)
def reference():
    """The graded parts as the instructor wrote them (trusted code; never in a student's sight)."""
    from course_lib.loader.load import load_notebooks, notebook_paths

    if not SOLUTIONS_DIR.is_dir():  # the confined grading kernel: the reference is hidden by design
        raise CheckFailed("this check compares with the reference solution, which only the course's grader "
                          "can see: its score comes from `python -m autograder grade`")
    return load_notebooks(notebook_paths(SOLUTIONS_DIR), module_name="hidden_reference")


# --- glue: finetuning after pretraining (02) -----------------------------------------------------

def finetune_pretrained_inputs(rng: random.Random) -> dict:
    """A toy world without dropout (train()'s one step is then the same whatever draws from torch's
    generator), its pretrained params, and a seed."""
    world = toy_world(rng, dropout=False)
    state = random_state(toy_model(world), rng, scale=0.1)
    # the params file travels with the job; the judge compares with its own copy of the state
    return {**world, "expected_state": state, "params_file": "pretrained.params",
            "item_indices": item_indices(rng, world), "seed": rng.randrange(2 ** 31)}


def finetune_pretrained_problems(inputs: dict, output) -> list[str]:
    """With params: loaded into the model, 10 epochs, the rest as without; train() trains that
    model once, then saves its params where it is told (``course_lib.checks.glue_train``)."""
    if not isinstance(output, dict):
        return ["finetune's results did not come back"]
    return (setup_problems(inputs, output, WITH_PARAMS, 10)
            or loaded_problems(output.get("state_after_finetune"), inputs["expected_state"])
            or train_problems(inputs, output, inputs["expected_state"]))


# --- span: span corruption (03) ------------------------------------------------------------------

def span_hidden_inputs(rng: random.Random) -> dict:
    """The span check's inputs at the hidden block sizes and draw counts (every kept length is the public plans')."""
    return span_inputs(rng, block_sizes=SPAN_BLOCK_SIZES, samples=SPAN_SAMPLES, every_length=False)


# --- synth: synthesizer attention (05) -----------------------------------------------------------

def _original_case() -> dict:
    """The original grader's case: seed-0 weights, n_embd 6, 3 heads, block 8, input (11, 7, 6)."""
    from course_lib.gpt.attention import SynthesizerAttentionBase

    torch.manual_seed(0)
    layer = SynthesizerAttentionBase(synthesizer_config(6, 3, 8))  # its own initial weights
    state = {k: v.clone() for k, v in layer.state_dict().items() if k in SYNTH_PARAMS}
    # the original's 1e-8 suited float32 against float32; a right answer in float64 (or summed in
    # another order) differs by float32's rounding, ~1e-7 of the norm
    return {"dims": [6, 3, 8], "state": state, "inputs": [torch.randn(11, 7, 6)], "tolerance": 1e-5}


def _dropout_case(rng: random.Random) -> dict:
    """Train mode, attention dropout 0.5 only, identity projection: y is the heads' own outputs."""
    n_embd, _, block_size = DROPOUT_DIMS
    state = handout_state(rng, DROPOUT_DIMS)
    state["proj.weight"], state["proj.bias"] = torch.eye(n_embd), torch.zeros(n_embd)
    generator = torch.Generator().manual_seed(rng.randrange(2 ** 62))
    return {"dims": list(DROPOUT_DIMS), "state": state, "train": True, "attn_pdrop": 0.5, "resid_pdrop": 0.0,
            "seed": rng.randrange(2 ** 31), "inputs": [torch.randn(6, block_size - 1, n_embd, generator=generator)]}


def synthesizer_hidden_inputs(rng: random.Random) -> dict:
    """The term cases (their own messages say which term differs), then fresh weights and inputs of
    fixed and drawn sizes with what the reference layer gives on them ("expected" keys: the judge's,
    never sent to the student's code)."""
    drawn = synth_dims(rng)
    cases = [{"dims": list(dims), "state": handout_state(rng, dims), "tolerance": 1e-4,
              "inputs": sequence_inputs(rng, dims[0], dims[2])} for dims in (*SYNTH_SHAPES, drawn)]
    cases = [*term_cases(rng, drawn), *cases, _original_case(), _dropout_case(rng)]
    for case in cases:
        if case.get("term"):
            continue
        layer = _reference_layer(case)
        if case.get("train"):
            case["expected_weights"] = _attention_weights(layer, case["inputs"][0])
        else:
            with torch.no_grad():
                case["expected"] = [layer(x) for x in case["inputs"]]
    return {"cases": cases}


def _reference_layer(case: dict):
    layer = reference().SynthesizerAttention(synthesizer_config(*case["dims"]))
    layer.load_state_dict(case["state"], strict=False)
    return layer.eval()


def _attention_weights(layer, x: torch.Tensor) -> torch.Tensor:
    """(B, nh, T, T): the weights the reference layer hands to its attention dropout."""
    seen = []
    hook = layer.attn_drop.register_forward_pre_hook(lambda module, args: seen.append(args[0]))
    try:
        with torch.no_grad():
            layer(x)
    finally:
        hook.remove()
    return seen[0].double()


def _dropout_problems(case: dict, y: torch.Tensor) -> list[str]:
    """Train mode: every row of each head's output is sum_s d_s A_ts v_s / (1 - p) for some
    d in {0, 1}^(t+1), A the reference's weights (found by trying every d); some weights dropped and
    some kept. A right answer keeps (or drops) all its >= 60 clearly visible weights with
    probability <= 2 * 0.5^60."""
    x, p = case["inputs"][0], case["attn_pdrop"]
    weights = case["expected_weights"].double()  # (B, nh, T, T): the reference's, on these inputs
    B, nh, T, _ = weights.shape
    values = (x.double() @ case["state"]["value.weight"].double().T + case["state"]["value.bias"].double())
    values = values.view(B, T, nh, -1).transpose(1, 2)  # (B, nh, T, hs)
    # (B, nh, T, hs): y's heads as they are, since the projection is the identity
    heads = y.double().view(B, T, nh, -1).transpose(1, 2)
    kept, dropped = 0, 0
    for t in range(T):
        # (M, t+1): every keep/drop choice of row t's weights
        masks = torch.tensor(list(itertools.product((0.0, 1.0), repeat=t + 1)), dtype=torch.float64)
        coeffs = masks * weights[:, :, t, None, : t + 1] / (1 - p)  # (B, nh, M, t+1)
        candidates = coeffs @ values[:, :, : t + 1]  # (B, nh, M, hs)
        error = (candidates - heads[:, :, t, None]).abs().amax(-1)  # (B, nh, M)
        best, choice = error.min(-1)
        if bool((best > TOLERANCE["atol"] + TOLERANCE["rtol"] * heads[:, :, t].abs().amax(-1)).any()):
            return [f"{ATTN_DROP}: in training it zeroes some weights and scales the rest by 1/(1 - attn_pdrop)"]
        visible = weights[:, :, t, : t + 1] >= DROPOUT_IDENTIFIABLE  # (B, nh, t+1)
        chosen = masks[choice]  # (B, nh, t+1)
        kept += int((visible & (chosen == 1)).sum())
        dropped += int((visible & (chosen == 0)).sum())
    if kept + dropped >= 60 and (kept == 0 or dropped == 0):
        return [f"{ATTN_DROP}: in training it drops attention weights at random (rate attn_pdrop)"]
    return []


def _heads_part(y: torch.Tensor, state: dict) -> torch.Tensor:
    """(B, T, C): the heads' outputs side by side, i.e. y with the output projection undone."""
    weight, bias = state["proj.weight"].double(), state["proj.bias"].double()
    return torch.linalg.solve(weight, (y.double() - bias).transpose(-1, -2)).transpose(-1, -2)


def _where_differs(case: dict, y: torch.Tensor, want: torch.Tensor) -> str:
    """Where an output first differs: its position and the head whose part (pre-projection) does."""
    n_embd, n_head, _ = case["dims"]
    got, ref = _heads_part(y, case["state"]), _heads_part(want, case["state"])
    off = ((got - ref).abs() > 1e-3 * max(1.0, float(ref.abs().max()))).any(0)  # (T, C)
    if not bool(off.any()):
        return ""
    t, column = (int(v) for v in off.nonzero()[0])
    return f" first at t={t}, in head {column // (n_embd // n_head)}'s part before the output projection"


def synthesizer_hidden_problems(inputs: dict, output) -> list[str]:
    """The term cases, the same outputs as the reference layer with the same weights (eval mode,
    several shapes), and attention dropout acting on the attention weights in training. Each message
    names the term, or the position and head, that differs."""
    try:
        results = synthesizer_outputs(inputs, output)
    except MalformedOutput as err:
        return [str(err)]
    for case, result in zip(inputs["cases"], results):
        if case.get("term") or case.get("train"):
            problems = (term_problems(case, result["outputs"][0]) if case.get("term")
                        else _dropout_problems(case, result["outputs"][0]))
            if problems:
                return problems
            continue
        n_embd, n_head, _ = case["dims"]
        for x, y, want in zip(case["inputs"], result["outputs"], case["expected"]):
            if (y.double() - want.double()).norm() >= case["tolerance"] * max(1.0, float(want.norm())):
                return [f"output differs{_where_differs(case, y, want)} (n_embd={n_embd}, n_head={n_head}, "
                        f"T={x.size(1)}, against the reference layer with the same weights)"]
    return []


# --- the table, and the functions the hidden test cells call -------------------------------------

# grade_id -> (inputs, probe, judge); points and needed names are in autograder.checks.registry
HIDDEN = {
    "02-glue-pretrained": (finetune_pretrained_inputs, finetune_pretrained_probe, finetune_pretrained_problems),
    "03-span-hidden": (span_hidden_inputs, span_probe, span_problems),
    "05-synthesizer-equivalence": (synthesizer_hidden_inputs, synthesizer_probe, synthesizer_hidden_problems),
}


# what a hidden cell says in nbgrader's autograde: it judges nothing there, the trusted grader does
SCORED_OUTSIDE = ("this hidden check is judged by the course's grader, outside your notebook: its points and the "
                  "reason for them are in your feedback")


def judged_outside() -> None:
    """A hidden cell in nbgrader's autograde: CheckFailed saying where its score comes from (zero
    until the trusted score is written: a kernel that runs student code holds no grading seed and no
    reference output)."""
    check_failed.judged_outside(SCORED_OUTSIDE)


def _inputs(grade_id: str, seed: int | None) -> tuple[dict, str]:
    """The check's inputs drawn from ``seed`` (fresh when None), and where they came from."""
    seed = random.SystemRandom().randrange(2 ** 31) if seed is None else seed
    return HIDDEN[grade_id][0](random.Random(seed)), f"inputs of seed {seed}"


def run_hidden(grade_id: str, parts, seed: int | None = None) -> None:
    """A hidden test cell: the grader's inputs, probe and judge in this kernel (in nbgrader's
    autograde: nothing, the trusted grader judges); CheckFailed with the first problem."""
    judged_outside()
    _, probe, judge = HIDDEN[grade_id]
    inputs, origin = _inputs(grade_id, seed)
    with tempfile.TemporaryDirectory(prefix="hidden-check-") as tmp, contextlib.chdir(tmp):
        if "params_file" in inputs:  # the file the grader sends with the job
            torch.save(inputs["expected_state"], Path(tmp) / inputs["params_file"])
        output = plain(probe(parts, sent(inputs)))
    problems = judge(inputs, output)
    if problems:
        raise CheckFailed(f"{problems[0]} ({origin})")


def check_finetune_after_pretraining(initialize_vanilla_model, finetune, train, seed: int | None = None) -> None:
    """The hidden test cell 02-glue-pretrained."""
    run_hidden("02-glue-pretrained", types.SimpleNamespace(initialize_vanilla_model=initialize_vanilla_model,
                                                           finetune=finetune, train=train), seed)


def check_span_corruption_hidden(dataset_class, seed: int | None = None) -> None:
    """The hidden test cell 03-span-hidden."""
    run_hidden("03-span-hidden", types.SimpleNamespace(CharCorruptionDataset=dataset_class), seed)


def check_synthesizer_hidden(attention_class, seed: int | None = None) -> None:
    """The hidden test cell 05-synthesizer-equivalence."""
    judged_outside()
    reference()  # in the confined grading kernel there is none: say so before running anything
    run_hidden("05-synthesizer-equivalence", types.SimpleNamespace(SynthesizerAttention=attention_class), seed)
