"""The synthesizer checks (notebook 05): the layer's forward (public) and the GPT built with it.

The public check runs the student's layer on handout weights of sizes the handout never shows, and judges
only what follows from the handout's formula Y_i = softmax(ReLU(X A_i + b1) B + b2)(X V_i) for any right
answer: shapes, causality, prefixes, position 0, what dropout does, and four *term cases* whose weights
reduce the formula to something the judge can state without computing the layer (``term_cases``): with
w1's weight 0 its bias alone sets ReLU(X A_i + b1), so the scores are b2 alone, or 0 everywhere, or one
row of B per head, and with the value and projection the identity every head's weights show in its own
output columns. Each term case names the term it isolates (ReLU, b2, the scale, the heads) and where the
output first differs. The grader's hidden check compares with the reference.
"""
from __future__ import annotations

import itertools
import random

import torch
from torch import nn

from course_lib.checks.common import TOLERANCE, close, type_found
from course_lib.checks.glue import model_problems, model_view
from course_lib.checks.inputs import (
    DROPOUT_RATES,
    LAYER_COUNTS,
    draw_heads,
    draw_size,
    handout_state,
    sequence_inputs,
    synthesizer_config,
)
from course_lib.gpt.attention import SynthesizerAttentionBase
from course_lib.gpt.model import GPT, GPTConfig

DROPOUT_BATCH = 16  # rows of the attention-dropout case: each head-row is kept or dropped
TERM_SCORE = 3.0  # c: large enough that an uneven weight pattern is clearly uneven
TERMS = ("relu", "b2", "scale", "heads")  # judging order: each assumes the earlier ones pass
# what to check when position 0, which attends only to itself, differs
POSITION_0 = "check the causal mask, the softmax's dim (the last), the heads' split and merge"
ATTN_DROP = "apply self.attn_drop to the attention weights, after the softmax, as in vanilla attention"


def synth_dims(rng: random.Random) -> list[int]:
    """(n_embd, n_head, block_size) of sizes the handout never shows."""
    n_head, n_embd = draw_heads(rng)
    return [n_embd, n_head, draw_size(rng, 9, 27)]


def load_handout_params(layer: nn.Module, state: dict) -> list[str]:
    """Load the handout's parameters into a student's layer, ignoring its own extra buffers (a persistent
    mask, say); returns the names the layer has no place for."""
    _, unexpected = layer.load_state_dict(state, strict=False)
    return sorted(unexpected)


# --- the term cases ------------------------------------------------------------------------------

def term_cases(rng: random.Random, dims: list[int]) -> list[dict]:
    """One eval case per term: w1's weight 0 (its bias alone is X A_i + b1), value and projection the identity.

    relu:  b1 < 0 everywhere, b2 = 0: ReLU gives 0, every score is 0, every row uniform over its past.
    b2:    b1 < 0, b2 random: the scores are b2 alone, row t is softmax(b2[:t+1]) in every head.
    scale: b1 = c everywhere, b2 = -c (the sum of B's rows): the scores are 0, every row uniform.
    heads: b1 = c on unit i (mod hs) of head i, b2 = 0: head i's row t is softmax(c B[i, :t+1]).
    B's rows all have a positive column 0 and a negative column 1, so a ReLU in the wrong place shows.
    """
    n_embd, n_head, block_size = dims
    hs = n_embd // n_head
    generator = torch.Generator().manual_seed(rng.randrange(2 ** 62))
    w2 = torch.randn(hs, block_size - 1, generator=generator)
    w2[:, 0], w2[:, 1] = w2[:, 0].abs() + 0.5, -(w2[:, 1].abs() + 0.5)
    x = torch.randn(3, block_size - 1, n_embd, generator=generator)  # (B, T, C)
    eye, zeros = torch.eye(n_embd), torch.zeros(n_embd)
    base = {"w1.weight": torch.zeros(n_embd, n_embd), "w2": w2, "value.weight": eye, "value.bias": zeros,
            "proj.weight": eye.clone(), "proj.bias": zeros.clone()}
    negative = torch.full((n_embd,), -TERM_SCORE)
    own = torch.zeros(n_embd)
    for i in range(n_head):
        own[i * hs + i % hs] = TERM_SCORE  # unit i of head i
    biases = {"relu": (negative, torch.zeros(block_size - 1)),
              "b2": (negative, 1.5 * torch.randn(block_size - 1, generator=generator)),
              "scale": (-negative, -TERM_SCORE * w2.sum(0)),  # same in every head, however split
              "heads": (own, torch.zeros(block_size - 1))}
    return [{"dims": list(dims), "term": term, "inputs": [x.clone()],
             "state": {**{k: v.clone() for k, v in base.items()}, "w1.bias": b1.clone(), "b2": b2.clone()}}
            for term, (b1, b2) in biases.items()]


def _term_scores(case: dict, T: int) -> torch.Tensor:
    """(nh, T, T) the scores the handout's formula gives in a term case (before the causal mask)."""
    _, n_head, _ = case["dims"]
    state = case["state"]
    w2, b2 = state["w2"].double()[:, :T], state["b2"].double()[:T]
    if case["term"] == "heads":
        hs = w2.size(0)
        rows = torch.stack([TERM_SCORE * w2[i % hs] for i in range(n_head)])  # (nh, T)
        return rows[:, None, :].expand(n_head, T, T)
    if case["term"] == "b2":
        return b2.expand(n_head, T, T)
    return torch.zeros(n_head, T, T, dtype=torch.float64)  # relu, scale: every score 0


def _mixed(x: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """(B, T, C): each head's columns of x mixed by that head's (nh, T, T) weights (value and projection I)."""
    B, T, C = x.shape
    n_head = weights.size(0)
    heads = x.double().view(B, T, n_head, C // n_head).transpose(1, 2)  # (B, nh, T, hs)
    return (weights @ heads).transpose(1, 2).reshape(B, T, C)


def _causal_softmax(scores: torch.Tensor) -> torch.Tensor:
    T = scores.size(-1)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)


def _first_difference(y: torch.Tensor, want: torch.Tensor, n_head: int) -> tuple[int, int] | None:
    """(position, head) of the first output column off by more than the tolerance, or None."""
    # (T, C)
    off = ((y.double() - want).abs() > TOLERANCE["atol"] + TOLERANCE["rtol"] * want.abs()).any(0)
    if not bool(off.any()):
        return None
    t, column = (int(v) for v in off.nonzero()[0])
    return t, column // (want.size(-1) // n_head)


def _b2_hint(case: dict, y: torch.Tensor) -> str:
    """What a b2 case's output matches instead: b2 ignored (added by row, or not at all) or the scores scaled."""
    x = case["inputs"][0]
    n_embd, n_head, _ = case["dims"]
    T = x.size(1)
    scores = _term_scores(case, T)
    if close(y, _mixed(x, _causal_softmax(torch.zeros_like(scores))), **TOLERANCE):
        return "b2 has no effect on your weights (is it added to each row instead of each column?)"
    for label, size in (("head size", n_embd // n_head), ("n_embd", n_embd), ("T", T)):
        for power, way in ((-0.5, "divided"), (0.5, "multiplied")):
            if close(y, _mixed(x, _causal_softmax(scores * size ** power)), **TOLERANCE):
                return f"your scores are {way} by sqrt({label}); the synthesizer's scores are not scaled"
    return "add b2[s] unscaled to the score of position s in every row"


def term_problems(case: dict, y: torch.Tensor) -> list[str]:
    """The output of a term case against what the formula reduces to there; the message names the term."""
    x = case["inputs"][0]
    _, n_head, _ = case["dims"]
    T = x.size(1)
    want = _mixed(x, _causal_softmax(_term_scores(case, T)))
    found = _first_difference(y, want, n_head)
    if found is None:
        return []
    t, head = found
    hs = x.size(-1) // n_head
    term = case["term"]
    if t == 0:
        # position 0 attends only to itself, whatever the scores: the term is not what differs
        return [POSITION_0 + f": with the value and the projection the identity, position 0's output should be its own "
                f"input (it can only attend to itself); yours differs in head {head}'s columns"]
    if term == "relu":
        return ["apply ReLU to w1's output X A_i + b1, before multiplying by B (w2): with w1's weight 0 and its bias "
                "negative, ReLU(X A_i + b1) = 0 and (b2 = 0) every score is 0, so position t should attend equally "
                f"to positions 0..t; yours differs at t={t} (head {head})"]
    if term == "b2":
        return [f"{_b2_hint(case, y)}: with ReLU(X A_i + b1) = 0 (w1's weight 0, its bias negative) the scores are "
                "b2 alone, so position t should weigh each position s <= t by exp(b2[s]); yours differs at "
                f"t={t} (head {head})"]
    if term == "scale":
        return ["add b1 (w1's bias) before the ReLU, and leave the scores unscaled (no 1/sqrt(d)): with w1's "
                "weight 0 and its bias c > 0, ReLU(X A_i + b1) B is c times the sum of B's (w2's) rows, and b2 = minus "
                f"that makes every score 0, so position t should attend equally to 0..t; yours differs at t={t} "
                f"(head {head})"]
    return [f"head i is columns i*hs to (i+1)*hs - 1 of w1's and value's outputs, and the heads go back side by side "
            f"in that order: with b2 = 0 and w1's bias c on another unit in each head, output columns "
            f"{head * hs}..{(head + 1) * hs - 1} are head {head}'s values mixed by head {head}'s weights; yours "
            f"differ there first, at t={t}"]


# --- the public layer check ----------------------------------------------------------------------

def synthesizer_public_inputs(rng: random.Random) -> dict:
    """Random handout weights of drawn sizes; inputs for shapes and causality (eval), the term cases (eval), and
    dropout (train, known seeds)."""
    dims = synth_dims(rng)
    n_embd, _, block_size = dims
    generator = torch.Generator().manual_seed(rng.randrange(2 ** 62))
    return {"cases": [
        {"dims": list(dims), "state": handout_state(rng, dims),
         "inputs": sequence_inputs(rng, n_embd, block_size)},
        *term_cases(rng, dims),
        {"dims": list(dims), "state": handout_state(rng, dims), "train": True, "attn_pdrop": 0.5,
         "resid_pdrop": 0.0, "seed": rng.randrange(2 ** 31),
         "inputs": [torch.randn(DROPOUT_BATCH, block_size - 1, n_embd, generator=generator)]},
        {"dims": list(dims), "state": handout_state(rng, dims), "train": True, "attn_pdrop": 0.0,
         "resid_pdrop": 0.5, "seed": rng.randrange(2 ** 31),
         "inputs": [torch.randn(4, block_size - 1, n_embd, generator=generator)]},
    ]}


def synthesizer_probe(parts, inputs: dict) -> list[dict]:
    """The student's layer with the given weights on the given inputs: in eval mode, or in train mode after
    seeding (then also in eval mode on the same inputs)."""
    results = []
    for case in inputs["cases"]:
        config = synthesizer_config(*case["dims"], attn_pdrop=case.get("attn_pdrop", 0.1),
                                          resid_pdrop=case.get("resid_pdrop", 0.1))
        layer = parts.SynthesizerAttention(config)
        result = {"subclass": isinstance(layer, SynthesizerAttentionBase),
                  "unloaded": load_handout_params(layer, case["state"])}
        torch.manual_seed(case.get("seed", 0))
        layer.train(bool(case.get("train")))
        with torch.no_grad():
            result["outputs"] = [layer(x) for x in case["inputs"]]
            if case.get("train"):
                layer.eval()
                result["eval"] = [layer(x) for x in case["inputs"]]
        results.append(result)
    return results


class MalformedOutput(Exception):
    """The outputs do not have the form the probe returns: the submission's doing."""


def synthesizer_outputs(inputs: dict, output) -> list[dict]:
    """The probe's results with every output checked for shape and finiteness; MalformedOutput says what is off."""
    if not isinstance(output, list) or len(output) != len(inputs["cases"]):
        raise MalformedOutput("the synthesizer outputs did not come back complete")
    for case, result in zip(inputs["cases"], output):
        if not isinstance(result, dict) or result.get("subclass") is not True:
            raise MalformedOutput("SynthesizerAttention must subclass SynthesizerAttentionBase")
        if result.get("unloaded"):
            raise MalformedOutput("SynthesizerAttention should keep the given parameters (w1, w2, b2, value, "
                                  "proj) under their given names")
        for key in ("outputs", "eval") if case.get("train") else ("outputs",):
            outs = result.get(key)
            if not isinstance(outs, list) or len(outs) != len(case["inputs"]):
                raise MalformedOutput("the synthesizer outputs did not come back complete")
            for x, y in zip(case["inputs"], outs):
                if not isinstance(y, torch.Tensor) or tuple(y.shape) != tuple(x.shape):
                    shape = tuple(y.shape) if isinstance(y, torch.Tensor) else type_found(y)
                    raise MalformedOutput(f"forward should return a tensor shaped like its input {tuple(x.shape)}, "
                                          f"got {shape}")
                if not bool(torch.isfinite(y).all()):
                    raise MalformedOutput(f"{ATTN_DROP}: in training, forward returned NaN or infinite values"
                                          if case.get("train") and key == "outputs"
                                          else "forward returned NaN or infinite values")
    return output


def _linear(x: torch.Tensor, state: dict, name: str) -> torch.Tensor:
    return x.double() @ state[f"{name}.weight"].double().T + state[f"{name}.bias"].double()


def _causal_problems(xs: list[torch.Tensor], ys: list[torch.Tensor], state: dict) -> list[str]:
    """Eval mode: earlier outputs ignore later inputs, prefixes agree, and position 0 is proj(value(x_0))."""
    for i in range(len(xs) - 1):
        x, x2 = xs[i], xs[i + 1]
        if x.shape == x2.shape and torch.equal(x[:, :-1], x2[:, :-1]) and not torch.equal(x, x2):
            if not torch.allclose(ys[i][:, :-1], ys[i + 1][:, :-1], **TOLERANCE):
                return ["the causal mask is missing or misplaced: changing the last position changed earlier outputs"]
    for x, y in zip(xs, ys):
        longer = next((j for j, z in enumerate(xs) if z.size(1) > x.size(1) and z.size(0) == x.size(0)
                       and torch.equal(z[:, : x.size(1)], x)), None)
        if longer is not None and not torch.allclose(y, ys[longer][:, : x.size(1)], **TOLERANCE):
            return ["a shorter sequence should give the same outputs on its positions"]
        first = _linear(_linear(x[:, 0], state, "value"), state, "proj")  # (B, C)
        if not torch.allclose(y[:, 0].double(), first, **TOLERANCE):
            return ["check how values, heads and the output projection combine: position 0 can only attend to "
                    "itself, so its output should be the projection of its own value"]
    return []


def _first_position_candidates(x: torch.Tensor, state: dict, n_head: int, p: float) -> torch.Tensor:
    """(B, 2^nh, C): position 0's output for every choice of heads whose one attention weight dropout zeroed."""
    value = _linear(x[:, 0], state, "value")  # (B, C)
    hs = value.size(1) // n_head
    # (2^nh, nh)
    kept = torch.tensor(list(itertools.product((0.0, 1.0), repeat=n_head)), dtype=torch.float64)
    scale = kept.repeat_interleave(hs, dim=1) / (1 - p)  # (2^nh, C)
    return _linear(value[:, None, :] * scale, state, "proj")  # (B, 2^nh, C)


def _attention_dropout_problems(case: dict, y: torch.Tensor) -> list[str]:
    """Train mode, attention dropout p only: at position 0 each head's single weight is 0 or 1/(1-p), and both
    happen. A right answer shows no drop (or no keep) in 16 rows x n_head (>= 5) heads with probability
    2 * 0.5^80."""
    n_head, p = case["dims"][1], case["attn_pdrop"]
    # (B, 2^nh, C)
    candidates = _first_position_candidates(case["inputs"][0], case["state"], n_head, p)
    got = y[:, 0].double()[:, None, :]  # (B, 1, C)
    near = ((got - candidates).abs() <= TOLERANCE["atol"] + TOLERANCE["rtol"] * candidates.abs()).all(-1)
    if not bool(near.any(-1).all()):
        return [f"{ATTN_DROP}: in training it zeroes some weights and scales the rest by 1/(1 - attn_pdrop)"]
    choice = near.float().argmax(-1)  # (B,) the first matching combination of kept heads
    kept = torch.tensor(list(itertools.product((0, 1), repeat=n_head)))[choice]  # (B, nh)
    if bool(kept.all()) or not bool(kept.any()):
        return [f"{ATTN_DROP}: in training it drops attention weights at random (rate attn_pdrop)"]
    return []


def _residual_dropout_problems(case: dict, y: torch.Tensor, y_eval: torch.Tensor) -> list[str]:
    """Train mode, residual dropout p only: each output element is 0 or its eval value / (1-p), and both happen.
    A right answer drops none (or all) of its 4 x T x C (>= 4 x 8 x 45) elements with probability
    2 * 0.5^1440."""
    p = case["resid_pdrop"]
    scaled = y_eval.double() / (1 - p)
    ok = (y.double() == 0) | torch.isclose(y.double(), scaled, **TOLERANCE)
    zeros = (y == 0) & (y_eval != 0)
    if not bool(ok.all()) or not bool(zeros.any()) or bool(zeros.all()):
        return ["apply self.resid_drop after the output projection, as in vanilla attention (in training it drops "
                "output elements at random)"]
    return []


def synthesizer_public_problems(inputs: dict, output) -> list[str]:
    """Shapes, causality, prefixes, position 0 (proj(value(x_0)) in any causal attention), the term cases, and what
    dropout does in training (probability <= 2 * 0.5^80 that a right answer fails: see the two dropout helpers)."""
    try:
        results = synthesizer_outputs(inputs, output)
    except MalformedOutput as err:
        return [str(err)]
    for case, result in zip(inputs["cases"], results):
        if case.get("term"):
            problems = term_problems(case, result["outputs"][0])
        elif not case.get("train"):
            problems = _causal_problems(case["inputs"], result["outputs"], case["state"])
        elif case["attn_pdrop"] > 0:
            problems = _attention_dropout_problems(case, result["outputs"][0])
        else:
            problems = _residual_dropout_problems(case, result["outputs"][0], result["eval"][0])
        if problems:
            return problems
    return []


# --- the synthesizer model (05) ------------------------------------------------------------------

def synthesizer_model_inputs(rng: random.Random) -> dict:
    """A fresh config (several layers, dropouts of their own, sizes the handout never shows) and random handout
    weights for its layers."""
    # with one layer, "the synthesizer in the first block only" would be the right model
    n_embd, n_head, block_size = synth_dims(rng)
    drops = rng.sample(DROPOUT_RATES, 3)
    config = dict(vocab_size=draw_size(rng, 9, 40), block_size=block_size, n_layer=rng.choice(LAYER_COUNTS),
                  n_head=n_head, n_embd=n_embd, embd_pdrop=drops[0], resid_pdrop=drops[1], attn_pdrop=drops[2])
    dims = (n_embd, n_head, block_size)
    generator = torch.Generator().manual_seed(rng.randrange(2 ** 62))
    return {"config": config, "state": handout_state(rng, dims),
            "x": torch.randn(2, block_size - 1, n_embd, generator=generator)}


def synthesizer_model_probe(parts, inputs: dict) -> dict:
    """The model's parameter shapes and dropout rates (by module name), and each block's attention against a fresh
    layer of the student's own SynthesizerAttention, both given the same weights."""
    config = GPTConfig(**inputs["config"])
    model = parts.initialize_synthesizer_model(config)
    out = {"model": model_view(model), "blocks": []}
    for block in getattr(model, "blocks", []) if isinstance(model, GPT) else []:
        own = parts.SynthesizerAttention(config)
        try:  # another shape cannot take these weights: the shapes already say what is wrong
            for layer in (block.attn, own):
                layer.load_state_dict(inputs["state"], strict=False)
                layer.eval()
            with torch.no_grad():
                out["blocks"].append([block.attn(inputs["x"]), own(inputs["x"])])
        except (RuntimeError, TypeError, AttributeError):
            out["blocks"].append(None)
    return out


def synthesizer_model_problems(inputs: dict, output) -> list[str]:
    """The course's GPT of the given config (shapes and dropout rates by module name, in any order they were made)
    with the student's SynthesizerAttention in every block."""
    who, what = "initialize_synthesizer_model", "the course's GPT with your SynthesizerAttention in every block"
    wrong = [f"{who}: put your SynthesizerAttention in every block of the course's GPT, built from the config it "
             "is given"]
    if not isinstance(output, dict):
        return wrong
    config = GPTConfig(**inputs["config"])
    want = GPT(config, attention_class=SynthesizerAttentionBase)
    view = output.get("model")
    problems = model_problems(view, config, want, who, what)
    if problems:
        return problems
    if view.get("gpt") is not True:
        return wrong
    blocks = output.get("blocks")
    if not (isinstance(blocks, list) and len(blocks) == config.n_layer):
        return wrong
    for pair in blocks:
        if not (isinstance(pair, list) and len(pair) == 2 and close(pair[0], pair[1], atol=1e-6)
                and isinstance(pair[1], torch.Tensor) and pair[1].shape == inputs["x"].shape):
            return wrong
    return []
