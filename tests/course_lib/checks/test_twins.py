"""Checks of the checks: every numeric twin accepts right answers in other forms and rejects plausible wrong ones.

Each twin is checked twice, the way it runs in the course: by ``course_lib.checks.twins`` with the notebook's
values (the notebook's test cell), and by the grader's judge (``autograder.checks.twins.twin_*``) with fresh inputs
from the registry. A wrong answer must fail both, with a message. Two kinds of families:
  - named examples (VALID_* / WRONG_*), each run through the notebook check and the judge on a few seeds;
  - property-based families (Hypothesis): right answers drawn over the scales, forms and dtypes the question
    allows must pass; the common slips, drawn the same way, must fail with a message.
"""
from __future__ import annotations

import inspect
import math
import random
import re

import nbformat
import pytest
import torch
from conftest import SOLUTIONS
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from autograder.checks import registry, twins
from course_lib.checks import twins as tc
from course_lib.checks import twins_positions as tp
from course_lib.gpt.attention_math import DTYPE, position_free_layer
from course_lib.notebook.validate import SHOWN

G7 = twins.given(twins.NB07)
G8 = twins.given(twins.NB08)
SEEDS = (0, 1, 2)  # grader seeds: random.Random(s) draws the judge's fresh inputs
# derandomized: the same examples on every run (a family test must not be flaky); no example database on disk
FAMILY = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
SLIPS = settings(FAMILY, max_examples=12)


def _complement(rows: torch.Tensor) -> torch.Tensor:
    """A unit vector orthogonal to every row (adding it to a query changes no score)."""
    q, _ = torch.linalg.qr(torch.cat([rows, torch.randn(1, rows.size(1), dtype=DTYPE,
                                                          generator=torch.Generator().manual_seed(9))]).T)
    return q[:, -1]


def _others(mat: torch.Tensor, keep) -> torch.Tensor:
    return sum(mat[i] for i in range(mat.size(0)) if i not in keep)


# ---------------------------------------------------------------------------------------------------- 07 (a)
K7, V7 = G7.keys, G7.values
VALID_07_A = {
    "beta=10": lambda: 10.0 * K7[2],
    "beta=20": lambda: 20.0 * K7[2],
    "beta=1000": lambda: 1000.0 * K7[2],
    "float32": lambda: (20.0 * K7[2]).float(),
    "minus the other keys": lambda: 20.0 * (K7[2] - _others(K7, {2})),
    "plus a direction no key sees": lambda: 20.0 * K7[2] + 5.0 * _complement(K7),
}
WRONG_07_A = {
    "beta=1": lambda: 1.0 * K7[2],
    "wrong scale beta=3": lambda: 3.0 * K7[2],
    "next key (1-based index)": lambda: 20.0 * K7[3],
    "negative": lambda: -20.0 * K7[2],
    "the value instead of the key": lambda: 20.0 * V7[2],
    "a row, not a vector": lambda: 20.0 * K7[2:3],
    "a list": lambda: (20.0 * K7[2]).tolist(),
    "complex": lambda: (20.0 * K7[2]).to(torch.complex128),
    "NaN": lambda: torch.full((8,), float("nan"), dtype=DTYPE),
}


def _07_a(q, seed=None):
    return tc.problems_07_a(q, K7, V7)


# ---------------------------------------------------------------------------------------------------- 07 (b)
BA, BB = G7.basis_a, G7.basis_b
PROJ = BA.T @ BA
Q_AVG = 20.0 * (K7[1] + K7[4])


def _qr_projection():
    q, _ = torch.linalg.qr(BA.T @ torch.randn(4, 4, dtype=DTYPE, generator=torch.Generator().manual_seed(3)))
    return q @ q.T


VALID_07_B = {
    "projection": lambda: (PROJ, Q_AVG),
    "projection from a QR of another basis of A": lambda: (_qr_projection(), Q_AVG),
    "identity minus the projection onto B": lambda: (torch.eye(8, dtype=DTYPE) - BB.T @ BB, Q_AVG),
    "sum of outer products": lambda: (sum(torch.outer(r, r) for r in BA), Q_AVG),
    "float32 M": lambda: (PROJ.float(), Q_AVG),
    "beta=10": lambda: (PROJ, 10.0 * (K7[1] + K7[4])),
    "beta=1000": lambda: (PROJ, 1000.0 * (K7[1] + K7[4])),
    "minus the other keys": lambda: (PROJ, 10.0 * (K7[1] + K7[4] - _others(K7, {1, 4}))),
    "float32 q_avg": lambda: (PROJ, Q_AVG.float()),
    "float32 q_avg at beta=1e6 (rounding parts the two scores)": lambda: (PROJ, (1e6 * (K7[1] + K7[4])).float()),
}
WRONG_07_B = {
    "M: 4x4 Gram matrix": lambda: (BA @ BA.T, Q_AVG),
    "M: projection onto B": lambda: (BB.T @ BB, Q_AVG),
    "M: identity": lambda: (torch.eye(8, dtype=DTYPE), Q_AVG),
    "M: twice the projection": lambda: (2 * PROJ, Q_AVG),
    "M: a list": lambda: (PROJ.tolist(), Q_AVG),
    "q_avg: beta=1": lambda: (PROJ, K7[1] + K7[4]),
    "q_avg: one key": lambda: (PROJ, 20.0 * K7[1]),
    "q_avg: 1-based keys": lambda: (PROJ, 20.0 * (K7[0] + K7[3])),
    "q_avg: values instead of keys": lambda: (PROJ, 20.0 * (V7[1] + V7[4])),
    "q_avg: one key a thousandth heavier (not a rounding tie)": lambda: (PROJ, 1e4 * (K7[1] + 1.001 * K7[4])),
}


def _07_b(pair, seed=None):
    return tc.problems_07_b(*pair, K7, V7, BA, BB)


# ---------------------------------------------------------------------------------------------------- 07 (c), (d)
MU, A, B = G7.means, G7.a, G7.b
AVOID = _others(MU, {A, B})  # the means no head should pick
VALID_07_C = {
    "beta=10": lambda: 10.0 * (MU[A] + MU[B]),
    "beta=20": lambda: 20.0 * (MU[A] + MU[B]),
    "beta=50": lambda: 50.0 * (MU[A] + MU[B]),
    "beta=100": lambda: 100.0 * (MU[A] + MU[B]),
    "beta=1000": lambda: 1000.0 * (MU[A] + MU[B]),
    "beta=1e9": lambda: 1e9 * (MU[A] + MU[B]),
    "float32": lambda: (20.0 * (MU[A] + MU[B])).float(),
    "float32 at beta=1e5": lambda: (1e5 * (MU[A] + MU[B])).float(),
    "minus the other means": lambda: 20.0 * (MU[A] + MU[B] - AVOID),
    "only minus the other means (a and b tie at 0)": lambda: -20.0 * AVOID,
}
WRONG_07_C = {
    "beta=1": lambda: MU[A] + MU[B],
    "one mean": lambda: 20.0 * MU[A],
    "difference": lambda: 20.0 * (MU[A] - MU[B]),
    "keys of (a) instead of the means": lambda: 20.0 * (K7[A] + K7[B]),
    "an int scalar": lambda: torch.tensor(20),
}
VALID_07_D = {
    "beta=9 (the smallest scale (c) accepts)": lambda: (9.0 * MU[A], 9.0 * MU[B]),
    "beta=10": lambda: (10.0 * MU[A], 10.0 * MU[B]),
    "beta=20": lambda: (20.0 * MU[A], 20.0 * MU[B]),
    "beta=1000": lambda: (1000.0 * MU[A], 1000.0 * MU[B]),
    "beta=1e6 in float32": lambda: ((1e6 * MU[A]).float(), (1e6 * MU[B]).float()),
    "heads swapped": lambda: (20.0 * MU[B], 20.0 * MU[A]),
    "different scale per head": lambda: (10.0 * MU[A], 50.0 * MU[B]),
    "float32": lambda: ((20.0 * MU[A]).float(), (20.0 * MU[B]).float()),
    "minus the other means": lambda: (20.0 * (MU[A] - _others(MU, {A})), 20.0 * (MU[B] - _others(MU, {B}))),
}
WRONG_07_D = {
    "beta=1": lambda: (MU[A], MU[B]),
    "one head (the average query twice)": lambda: (10.0 * (MU[A] + MU[B]), 10.0 * (MU[A] + MU[B])),
    "one head at beta=1000 twice": lambda: (1e3 * (MU[A] + MU[B]), 1e3 * (MU[A] + MU[B])),
    "one head averaging, one copying b": lambda: (20.0 * (MU[A] + MU[B]), 20.0 * MU[B]),
    "one head averaging, one copying a": lambda: (20.0 * (MU[A] + MU[B]), 20.0 * MU[A]),
    "one head copying a, one averaging": lambda: (20.0 * MU[A], 20.0 * (MU[A] + MU[B])),
    "both heads on a": lambda: (20.0 * MU[A], 20.0 * MU[A]),
    "second head negative": lambda: (20.0 * MU[A], -20.0 * MU[B]),
    "q_2 missing (None)": lambda: (20.0 * MU[A], None),
    "wrong length": lambda: (20.0 * MU[A][:6], 20.0 * MU[B][:6]),
}


def _07_c(q, seed=None):
    return tc.problems_07_c(q, MU, V7, A, B)


def _07_d(pair, seed=None):
    return tc.problems_07_d(*pair, MU, V7, A, B)


# ---------------------------------------------------------------------------------------------------- 07 (e)
X7, BETA = G7.X, G7.beta
UA, UB, UC, UD = G7.u_a, G7.u_b, G7.u_c, G7.u_d
EYE6 = torch.eye(6, dtype=DTYPE)
V_H = (torch.outer(UB, UB) - torch.outer(UC, UC)) / BETA ** 2
K_H = torch.outer(UD, UD) + torch.outer(UC, UC)
Q_H = torch.outer(UD, UA) + torch.outer(UC, UD)
C2 = torch.softmax(X7 @ X7[1], 0) @ X7


def _kqv(c2=C2, K=K_H, Q=Q_H, V=V_H):
    return (c2, K, Q, V)


VALID_07_E = {
    "the handout's K, Q, V": lambda: _kqv(),
    "c2_plain as the vector it approximates": lambda: _kqv(c2=UA),
    "c2_plain from self_attention with identities": lambda: _kqv(c2=G7.self_attention(X7, EYE6, EYE6, EYE6)[1]),
    "another V": lambda: _kqv(V=(torch.outer(UB, UD) + torch.outer(UB - UC, UC)) / BETA ** 2),
    "K and Q scaled up": lambda: _kqv(K=2 * K_H, Q=3 * Q_H),
    "K = I, Q carrying both maps": lambda: _kqv(K=EYE6, Q=K_H @ Q_H),
    "an extra key direction": lambda: _kqv(K=K_H + torch.outer(UA, UA)),
    "float32": lambda: tuple(t.float() for t in _kqv()),
}
WRONG_07_E = {
    "c2_plain = u_b": lambda: _kqv(c2=UB),
    "c2_plain = x_1": lambda: _kqv(c2=X7[0]),
    "c2_plain = the mean of the x's": lambda: _kqv(c2=X7.mean(0)),
    "c2_plain = row 0 instead of row 1": lambda: _kqv(c2=torch.softmax(X7 @ X7[0], 0) @ X7),
    "V without 1/beta^2": lambda: _kqv(V=V_H * BETA ** 2),
    "V with 1/beta (wrong exponent)": lambda: _kqv(V=V_H * BETA),
    "K and Q swapped": lambda: _kqv(K=Q_H, Q=K_H),
    "V = I": lambda: _kqv(V=EYE6),
    "plain attention (K = Q = I)": lambda: _kqv(K=EYE6, Q=EYE6),
    "K not square": lambda: _kqv(K=K_H[:4]),
}


def _07_e(kqv, seed=None):
    return tc.problems_07_e(*kqv, X7, UB, UC)


# ---------------------------------------------------------------------------------------------------- 08 (a)
X8, PARAMS, T8, Z8 = G8.X, G8.params, G8.T, G8.Z
SHIFT = torch.eye(T8, dtype=DTYPE)[[1, 2, 3, 4, 0]]


def _layer(M):
    return position_free_layer(M, *PARAMS)


VALID_08_A = {
    "reference": lambda: (SHIFT, lambda P, X: _layer(P.to(X.dtype) @ X)),
    "P as int64": lambda: (SHIFT.long(), lambda P, X: _layer(P @ X)),
    "P as int32": lambda: (SHIFT.int(), lambda P, X: _layer(P @ X)),
    "P as bool": lambda: (SHIFT.bool(), lambda P, X: _layer(P @ X)),
    "P as float32": lambda: (SHIFT.float(), lambda P, X: _layer(P @ X)),
    "another derangement": lambda: (torch.eye(T8, dtype=DTYPE)[[1, 0, 3, 4, 2]], lambda P, X: _layer(P @ X)),
    "permute by indexing": lambda: (SHIFT, lambda P, X: _layer(X[P.argmax(1)])),
    "computed in float32": lambda: (SHIFT, lambda P, X: position_free_layer((P @ X).float(),
                                                                             *[p.float() for p in PARAMS])),
    "the theorem's right side, from the arguments": lambda: (SHIFT, lambda P, X: P @ _layer(X)),
}
WRONG_08_A = {
    "P @ Z (the notebook's Z, not the arguments)": lambda: (SHIFT, lambda P, X: P @ Z8),
    "unpermuted output": lambda: (SHIFT, lambda P, X: _layer(X)),
    "inverse permutation": lambda: (SHIFT, lambda P, X: _layer(P.T @ X)),
    "permuted input only": lambda: (SHIFT, lambda P, X: P @ X),
    "layer on the notebook's X": lambda: (SHIFT, lambda P, X: _layer(P @ X8)),
    "a function that raises": lambda: (SHIFT, lambda P, X: _layer(X) @ P),
    "not a function": lambda: (SHIFT, _layer(SHIFT @ X8)),
    "P = identity (moves nothing)": lambda: (torch.eye(T8, dtype=DTYPE), lambda P, X: _layer(P @ X)),
    "P with a fixed point": lambda: (torch.eye(T8, dtype=DTYPE)[[1, 0, 2, 4, 3]], lambda P, X: _layer(P @ X)),
    "P not a permutation (averaging)": lambda: (torch.full((T8, T8), 1 / T8, dtype=DTYPE),
                                                lambda P, X: _layer(P @ X)),
    "P the wrong size": lambda: (torch.eye(4, dtype=DTYPE)[[1, 2, 3, 0]], lambda P, X: _layer(P @ X)),
    "P a list": lambda: (SHIFT.tolist(), lambda P, X: _layer(P @ X)),
}


def _08_a(pair, seed=11):
    P, fn = pair
    return tp.check_08_a(P, fn, PARAMS, T8, G8.d, seed=seed)


# ---------------------------------------------------------------------------------------------------- 08 (b)
def _phi(T, d, *, dtype=DTYPE, base=10000.0, exponent=lambda i, d: 2 * i / d, swap=False, inverse=True, start=0,
         trig=None, degrees=False):
    """Phi by the formula, or with one slip (another base, exponent, order of sin and cos, ...)."""
    t = torch.arange(start, start + T, dtype=dtype)[:, None]
    i = torch.arange(0, d // 2, dtype=dtype)
    rate = torch.tensor(base, dtype=dtype) ** exponent(i, d)
    angle = t / rate if inverse else t * rate
    if degrees:  # the angle read as degrees
        angle = torch.deg2rad(angle)
    first, second = (torch.cos, torch.sin) if swap else (torch.sin, torch.cos)
    if trig is not None:
        first = second = trig
    phi = torch.zeros(T, d, dtype=dtype)
    phi[:, 0::2], phi[:, 1::2] = first(angle), second(angle)
    return phi


def _phi_loop(T, d):
    return torch.tensor([[math.sin(t / 10000 ** (2 * (j // 2) / d)) if j % 2 == 0
                          else math.cos(t / 10000 ** (2 * (j // 2) / d)) for j in range(d)] for t in range(T)])


def _phi_exp_log(T, d):
    t = torch.arange(T, dtype=torch.float32)[:, None]
    rate = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
    return torch.stack([torch.sin(t * rate), torch.cos(t * rate)], dim=-1).reshape(T, d)


def _phi_shifted_sine(T, d):
    """cos written as a sine shifted by a quarter turn, in numpy, handed back as a tensor."""
    import numpy as np

    t = np.arange(T)[:, None]
    angle = t / np.power(10000.0, np.arange(0, d, 2) / d)
    out = np.empty((T, d))
    out[:, 0::2], out[:, 1::2] = np.sin(angle), np.sin(angle + np.pi / 2)
    return torch.from_numpy(out)


def _phi_concatenated(T, d):
    phi = _phi(T, d)
    return torch.cat([phi[:, 0::2], phi[:, 1::2]], dim=1)


VALID_08_B = {
    "float64": lambda: _phi,
    "float32 throughout": lambda: lambda T, d: _phi(T, d, dtype=torch.float32),
    "float32 cast to float64": lambda: lambda T, d: _phi(T, d, dtype=torch.float32).double(),
    "python loop (float32 tensor)": lambda: _phi_loop,
    "exp-log rates, interleaved by stacking": lambda: _phi_exp_log,
    "numpy, cos as a shifted sine": lambda: _phi_shifted_sine,
}
WRONG_08_B = {
    "sin and cos swapped": lambda: lambda T, d: _phi(T, d, swap=True),
    "10000**(i/d) instead of 10000**(2i/d)": lambda: lambda T, d: _phi(T, d, exponent=lambda i, d: i / d),
    "10000**(4i/d) (column index as i)": lambda: lambda T, d: _phi(T, d, exponent=lambda i, d: 4 * i / d),
    "10000**(2(i+1)/d) (off by one)": lambda: lambda T, d: _phi(T, d, exponent=lambda i, d: 2 * (i + 1) / d),
    "2i//d (integer division)": lambda: lambda T, d: _phi(T, d, exponent=lambda i, d: torch.div(
        2 * i, d, rounding_mode="floor")),
    "multiplied instead of divided": lambda: lambda T, d: _phi(T, d, inverse=False),
    "base 1000": lambda: lambda T, d: _phi(T, d, base=1000.0),
    "degrees instead of radians": lambda: lambda T, d: _phi(T, d, degrees=True),
    "positions from 1": lambda: lambda T, d: _phi(T, d, start=1),
    "sin only": lambda: lambda T, d: _phi(T, d, trig=torch.sin),
    "sines first, then cosines (not interleaved)": lambda: _phi_concatenated,
    "transposed (d, T)": lambda: lambda T, d: _phi(T, d).T.contiguous(),
    "a numpy array": lambda: lambda T, d: _phi(T, d).numpy(),
    "raises": lambda: lambda T, d: 1 / 0,
    "d typed in as 16": lambda: lambda T, d: _phi(T, d, exponent=lambda i, _: 2 * i / 16),
}
PUBLIC_SIZES = [(512, 16), (7, 6), (40, 10), (3, 2)]  # the notebook's public cell


def _08_b(fn, seed=None):
    """Both halves of the twin, as the notebook runs them: the public properties, then the hidden exact check."""
    public = tp.check_08_b(fn, PUBLIC_SIZES)
    hidden = twins.problems_08_b_exact(twins.HIDDEN_SIZES,
                                             tc.call_all(fn, twins.HIDDEN_SIZES))
    return public + hidden


# ---------------------------------------------------------------------------------------------------- the judges
def _judge_output(gid: str, answer, inputs: dict) -> dict:
    """What the probe would send back for this answer and these inputs."""
    if gid == "07-a-test":
        return {"q_copy": answer}
    if gid == "07-b-test":
        return dict(zip(("M", "q_avg"), answer))
    if gid == "07-c-test":
        return {"q_single": answer}
    if gid == "07-d-test":
        return dict(zip(("q_1", "q_2"), answer))
    if gid == "07-e-test":
        return dict(zip(("c2_plain", "K", "Q", "V"), answer))
    if gid == "08-a-test":
        P, fn = answer
        return {"P": P, "permuted_output": [fn(*c) for c in inputs["calls"]["permuted_output"]]}
    return {"position_embeddings": [answer(*c) for c in inputs["calls"]["position_embeddings"]]}


def _judge_one(gid: str, answer, seed: int) -> list[str]:
    check = registry.BY_ID[gid]
    inputs = check.inputs(random.Random(seed))
    try:
        output = _judge_output(gid, answer, inputs)
    except Exception as err:  # in the sandbox the probe itself would report this
        return [f"the probe raised {type(err).__name__}"]
    return check.judge(inputs, output)


def _judge(gid: str, answer, seed: int) -> list[str]:
    """Every judge of the twin: 08 (b) has a public and a hidden cell."""
    gids = ("08-b-test", "08-b-hidden") if gid == "08-b" else (gid,)
    return [p for g in gids for p in _judge_one(g, answer, seed)]


TWINS = {  # twin: (notebook check, valid family, wrong family)
    "07-a-test": (_07_a, VALID_07_A, WRONG_07_A),
    "07-b-test": (_07_b, VALID_07_B, WRONG_07_B),
    "07-c-test": (_07_c, VALID_07_C, WRONG_07_C),
    "07-d-test": (_07_d, VALID_07_D, WRONG_07_D),
    "07-e-test": (_07_e, VALID_07_E, WRONG_07_E),
    "08-a-test": (_08_a, VALID_08_A, WRONG_08_A),
    "08-b": (_08_b, VALID_08_B, WRONG_08_B),
}
VALID = [(gid, name) for gid, (_, family, _) in TWINS.items() for name in family]
WRONG = [(gid, name) for gid, (_, _, family) in TWINS.items() for name in family]


@pytest.mark.parametrize(("gid", "name"), VALID, ids=[f"{g}:{n}" for g, n in VALID])
def test_right_answer_in_another_form_passes_the_notebook_check(gid, name):
    """Does the notebook's test cell accept this right answer, written another way?"""
    check, family, _ = TWINS[gid]
    assert check(family[name]()) == []


@pytest.mark.parametrize(("gid", "name"), VALID, ids=[f"{g}:{n}" for g, n in VALID])
def test_right_answer_in_another_form_passes_the_judge(gid, name):
    """Does the grader's judge accept this right answer, written another way, on fresh inputs?"""
    _, family, _ = TWINS[gid]
    for seed in SEEDS:
        assert _judge(gid, family[name](), seed) == [], seed


@pytest.mark.parametrize(("gid", "name"), WRONG, ids=[f"{g}:{n}" for g, n in WRONG])
def test_plausible_wrong_answer_fails_the_notebook_check_with_a_message(gid, name):
    """Does the notebook's test cell reject this wrong answer with a message (and no crash)?"""
    check, _, family = TWINS[gid]
    problems = check(family[name]())
    assert problems and all(isinstance(p, str) and len(p) > 20 for p in problems)
    with pytest.raises(AssertionError, match=r"\S"):
        tc.assert_passes(problems)


@pytest.mark.parametrize(("gid", "name"), WRONG, ids=[f"{g}:{n}" for g, n in WRONG])
def test_plausible_wrong_answer_fails_the_judge(gid, name):
    """Does the grader's judge reject this wrong answer on fresh inputs, with a message?"""
    _, _, family = TWINS[gid]
    for seed in SEEDS:
        problems = _judge(gid, family[name](), seed)
        assert problems and all(isinstance(p, str) and p for p in problems), seed


@pytest.mark.parametrize("gid", [c.grade_id for c in registry.CHECKS if c.notebook.startswith(("07", "08"))])
def test_judge_reports_junk_output_instead_of_raising(gid):
    """Does the judge turn a missing, mistyped or wrongly shaped output into a message rather than an error?"""
    check = registry.BY_ID[gid]
    inputs = check.inputs(random.Random(0))
    junk = [None, "not a dict", {}, {n: "<object repr>" for n in check.needs},
            {n: torch.zeros(2, 3, dtype=torch.complex64) for n in check.needs},
            {n: [torch.zeros(1)] for n in check.needs}]
    for output in junk:
        problems = check.judge(inputs, output)
        assert problems and all(isinstance(p, str) for p in problems), output


@pytest.mark.parametrize(("gid", "name"), WRONG, ids=[f"{g}:{n}" for g, n in WRONG])
def test_a_wrong_answers_message_names_the_answer_in_its_first_80_characters(gid, name):
    """Does every line the notebook check says of a wrong answer name the answer it is about (q_copy, K, P, ...) in its
    first 80 characters, the part nbgrader's Validate shows (issue 51)?"""
    check, _, family = TWINS[gid]
    names = registry.BY_ID["08-b-test" if gid == "08-b" else gid].needs
    named = re.compile(rf"\b({'|'.join(map(re.escape, names))})\b")
    for problem in check(family[name]()):
        assert named.search(problem[:SHOWN]), problem


def test_a_passing_twin_cell_says_so_in_one_line(capsys):
    """Does a twin's test cell print one line when its answer passes (02-05's do; 07's and 08's printed nothing)?"""
    tc.assert_passes(_07_a(20.0 * K7[2]), "(a) q_copy")
    assert capsys.readouterr().out == "(a) q_copy: all public checks passed\n"


def test_messages_say_what_was_found_and_what_is_expected():
    """Do the messages give the found value and the target, without naming the answer's form?"""
    [message] = _07_a(1.0 * K7[2])
    assert "values[2]" in message and "allowed: 0.001" in message and "alpha[" in message
    [message] = _07_d((10.0 * (MU[A] + MU[B]), 10.0 * (MU[A] + MU[B])))
    assert "stretched to 0.5 times" in message and "allowed: 0.05" in message and "head 2's" in message
    [message] = _07_d((20.0 * (MU[A] + MU[B]), 20.0 * MU[B]))
    assert "every key at its mean" in message and "allowed: 0.001" in message
    [message] = _07_c(MU[A] + MU[B])
    assert "vanishing covariance" in message and "(values[a] + values[b]) / 2" in message
    [message] = _07_e(_kqv(K=Q_H, Q=K_H))
    assert "exchanged" in message
    [message] = tp.check_08_b(lambda T, d: _phi(T, d, swap=True), [(512, 16)])
    assert "t=0" in message and "sin 0" in message
    [message] = _08_a((SHIFT, lambda P, X: P @ Z8))
    assert "from its arguments" in message
    for message in _07_a(2.0 * K7[2]) + _07_c(MU[A] + MU[B]) + _07_e(_kqv(V=EYE6)) + _07_d((MU[A], MU[B])):
        assert "mu" not in message and "beta" not in message and "keys[" not in message


# ---------------------------------------------------------------------------------------------------- issue 29 items 6,
# 7
@pytest.mark.parametrize("beta", [50.0, 100.0, 1e3, 1e6, 1e12])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_07_c_standard_answer_passes_at_every_scale(beta, dtype):
    """Does (c)'s standard answer pass at every large factor, in float64 and float32 (it failed from 100 on)?"""
    assert _07_c((beta * (MU[A] + MU[B])).to(dtype)) == []
    for seed in SEEDS:
        assert _judge("07-c-test", (beta * (MU[A] + MU[B])).to(dtype), seed) == [], seed


def test_07_checks_sample_nothing():
    """Do the 07 checks take no seed, so a regrade gives the same verdict on every run?"""
    for fn in (tc.problems_07_a, tc.problems_07_b, tc.problems_07_c, tc.problems_07_d, tc.problems_07_e):
        assert "seed" not in inspect.signature(fn).parameters, fn.__name__


def test_07_d_tries_both_sides_of_the_stretch():
    """Does (d) try stretches below and above 1, so that one head averaging fails whichever way k_a goes?"""
    assert min(tc.STRETCHES) < 1 < max(tc.STRETCHES) and min(tc.STRETCHES) > 0
    one_head = 20.0 * (MU[A] + MU[B])
    for eps in tc.STRETCHES:  # at each stretch alone, one head is far off
        assert tc.problems_07_d(one_head, one_head, MU, V7, A, B, stretches=(eps,)), eps
    for beta in (9.0, 10.0, 1e3, 1e9):  # right answers pass at every stretch, whatever the scale
        assert tc.problems_07_d(beta * MU[A], beta * MU[B], MU, V7, A, B) == [], beta


def test_notebook_describes_the_stretches_the_check_tries():
    """Does notebook 07's text for (d) name exactly the stretches and tolerances the check uses?"""
    text = _cells(twins.NB07)["07-md-11c"].source
    *most, last = (f"{eps:g}" for eps in tc.STRETCHES)
    assert f"{', '.join(most)} and {last}" in text
    assert f"within {tc.HEADS_ATOL:g}" in text and "within 1e-3" in text


# ---------------------------------------------------------------------------------------------------- issue 30 item 7
def _cells(name: str) -> dict[str, nbformat.NotebookNode]:
    nb = nbformat.read(SOLUTIONS / name, as_version=4)
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "nbgrader" in c.metadata}


def test_08_b_hidden_check_is_a_cell_of_its_own():
    """Is 08 (b)'s exact check a hidden cell with its own grade id, apart from the public check, with the same
    points?"""
    cells = _cells(twins.NB08)
    public, hidden = cells["08-b-test"], cells["08-b-hidden"]
    assert "HIDDEN" not in public.source and "check_08_b(" in public.source
    assert hidden.source.count("### BEGIN HIDDEN TESTS") == 1 and "autograder.checks.twins" in hidden.source
    points = {g: cells[g].metadata["nbgrader"]["points"] for g in ("08-b-test", "08-b-hidden")}
    assert points == {g: registry.BY_ID[g].points for g in points} and sum(points.values()) == 1


def _phi_columns_exponent(T, d):
    """The exponent taken over the columns 0..d-1 (j/d), its first d/2 values used for the pairs: 10000^(i/d)."""
    t = torch.arange(T, dtype=DTYPE)[:, None]
    rate = 10000.0 ** (torch.arange(d, dtype=DTYPE) / d)[: d // 2]
    phi = torch.zeros(T, d, dtype=DTYPE)
    phi[:, 0::2], phi[:, 1::2] = torch.sin(t / rate), torch.cos(t / rate)
    return phi


FACTOR_SLIPS = {  # issue 40: each passed the public check and was first found by the hidden one
    "base 1000": lambda T, d: _phi(T, d, base=1000.0),
    "the factor 2 left out": lambda T, d: _phi(T, d, exponent=lambda i, d: i / d),
    "d typed in as 16 (the cell's first size)": lambda T, d: _phi(T, d, exponent=lambda i, _: 2 * i / 16),
    "exponent over the columns 0..d-1, then sliced": _phi_columns_exponent,
}


@pytest.mark.parametrize("slip", list(FACTOR_SLIPS))
def test_public_08_b_check_names_the_factor_slips(slip):
    """Does the public check (the notebook's cell, and the grader's 08-b-test on 20 seeds) fail another base, a
    missing factor 2, a d typed in and an exponent over the columns, naming the rates' factor 10000^(-2/d)?"""
    fn = FACTOR_SLIPS[slip]
    [message] = tp.check_08_b(fn, PUBLIC_SIZES)
    assert "should shrink by 10000^(-2/d)" in message, message
    for seed in range(20):
        [message] = _judge_one("08-b-test", fn, seed)
        assert "should shrink by 10000^(-2/d)" in message, (seed, message)


def test_a_numpy_answer_is_named_as_one_at_grading():
    """Does a twin handed in as a numpy array get "found numpy.ndarray" from the grader's judge, which receives the
    wire's repr of it (issue 40: it said "found str")?"""
    from autograder.inside import wire

    for gid, output in (("07-a-test", {"q_copy": (20.0 * K7[2]).numpy()}),
                        ("08-b-test", {"position_embeddings": [_phi(T, d).numpy() for T, d in PUBLIC_SIZES]})):
        check = registry.BY_ID[gid]
        inputs = check.inputs(random.Random(0))
        if gid == "08-b-test":
            output = {"position_embeddings": [_phi(T, d).numpy() for T, d in inputs["calls"]["position_embeddings"]]}
        [message] = check.judge(inputs, wire.loads(wire.dumps(output)))
        assert "should be a torch tensor; found numpy.ndarray" in message, message


def test_hidden_08_b_messages_hold_no_value_of_the_formula():
    """Does the hidden check say where and which way Phi is off, with no number a student could read Phi from?"""
    for name, make in WRONG_08_B.items():
        fn = make()
        for message in twins.problems_08_b_exact(twins.HIDDEN_SIZES,
                                                        tc.call_all(fn, twins.HIDDEN_SIZES)):
            if "differs from the formula" in message:
                decimals = set(re.findall(r"\d+\.\d+|\d+e-\d+", message)) - {"0.0001", "1e-04"}
                assert not decimals, (name, message)


# ---------------------------------------------------------------------------------------------------- Hypothesis
# families
def log_uniform(lo: float, hi: float) -> st.SearchStrategy[float]:
    """A scale drawn evenly over orders of magnitude."""
    return st.floats(math.log10(lo), math.log10(hi)).map(lambda e: 10.0 ** e)


DTYPES = st.sampled_from([torch.float32, torch.float64])


def _complement_basis(rows: torch.Tensor) -> torch.Tensor:
    """Orthonormal rows spanning what no row of ``rows`` sees."""
    q, _ = torch.linalg.qr(torch.cat([rows.T, torch.eye(rows.size(1), dtype=DTYPE)], dim=1))
    return q[:, rows.size(0):rows.size(1)].T


@st.composite
def unseen(draw, rows: torch.Tensor, scale: float) -> torch.Tensor:
    """A component no row sees, up to 10 times ``scale`` long."""
    basis = _complement_basis(rows)
    coefficients = draw(st.lists(st.floats(-10.0, 10.0), min_size=basis.size(0), max_size=basis.size(0)))
    return scale * torch.tensor(coefficients, dtype=DTYPE) @ basis


def _margin(draw, beta: float, top: float) -> float:
    """How far below ``beta`` another score may sit: at least 12 (a sharp softmax; 1e-4 of beta for float32's sake)."""
    low = max(12.0, 1e-4 * beta)
    return draw(st.floats(low, max(low, top)))


@st.composite
def top_query(draw, rows: torch.Tensor, chosen: tuple[int, ...], lo: float = 12.0, hi: float = 1e9) -> torch.Tensor:
    """beta on the ``chosen`` rows, every other row's score anywhere at least 12 below (subtracting it included),
    plus a component no row sees, in float32 or float64."""
    beta = draw(log_uniform(lo, hi))
    q = sum(beta * rows[i] for i in chosen)
    for i in range(rows.size(0)):
        if i not in chosen:
            q = q + (beta - _margin(draw, beta, 2 * beta + 100)) * rows[i]
    return (q + draw(unseen(rows, beta))).to(draw(DTYPES))


def _family_check(check, answer):
    problems = check(answer)
    assert problems == [], problems


def _slip_check(check, answer):
    problems = check(answer)
    assert problems and all(isinstance(p, str) and len(p) > 20 for p in problems)
    assert not any("mu_" in p or "beta" in p for p in problems), problems  # never the answer's form


# 07 (a) ------------------------------------------------------------------------------------------------
SLIPS_07_A = {
    "another key (a wrong index)": st.tuples(log_uniform(12, 1e9), st.sampled_from([0, 1, 3, 4, 5])).map(
        lambda bj: bj[0] * K7[bj[1]]),
    "the negative": log_uniform(12, 1e9).map(lambda b: -b * K7[2]),
    "the value instead of the key": log_uniform(12, 1e9).map(lambda b: b * V7[2]),
    "too small a factor": st.floats(0.0, 3.0).map(lambda b: b * K7[2]),
    "every key": log_uniform(12, 1e9).map(lambda b: b * K7.sum(0)),
    "a row, not a vector": log_uniform(12, 1e9).map(lambda b: b * K7[2:3]),
}


@FAMILY
@given(top_query(K7, (2,)))
def test_07_a_family_of_right_answers_passes(q):
    """Does every copying query pass (a): any large factor, other keys subtracted, unseen parts, float32?"""
    _family_check(_07_a, q)



# 07 (b) ------------------------------------------------------------------------------------------------
@st.composite
def projections(draw) -> torch.Tensor:
    """The projection onto A, built any of the ways the maths allows, in float32 or float64."""
    rotation, _ = torch.linalg.qr(torch.tensor(draw(st.lists(st.floats(-1, 1), min_size=16, max_size=16)),
                                               dtype=DTYPE).reshape(4, 4) + 3 * torch.eye(4, dtype=DTYPE))
    other_basis = rotation @ BA  # another orthonormal basis of A
    form = draw(st.sampled_from(["A^T A", "sum of outer products", "I - B^T B", "another basis"]))
    m = {"A^T A": BA.T @ BA, "sum of outer products": sum(torch.outer(r, r) for r in BA),
         "I - B^T B": torch.eye(8, dtype=DTYPE) - BB.T @ BB, "another basis": other_basis.T @ other_basis}[form]
    return m.to(draw(DTYPES))


@FAMILY
@given(projections(), top_query(K7, (1, 4)))
def test_07_b_family_of_right_answers_passes(M, q):
    """Does every projection onto A and every averaging query pass (b), at every scale and dtype?"""
    _family_check(_07_b, (M, q))


SLIPS_07_B = {
    "M: the 4x4 Gram matrix": st.just((BA @ BA.T, Q_AVG)),
    "M: the projection onto B": st.just((BB.T @ BB, Q_AVG)),
    "M: mixing A and B": st.just((BA.T @ BB, Q_AVG)),
    "M: the projection scaled": st.floats(1.01, 3.0).map(lambda s: (s * PROJ, Q_AVG)),
    "q_avg: one key": st.tuples(log_uniform(12, 1e9), st.sampled_from([1, 4])).map(
        lambda bj: (PROJ, bj[0] * K7[bj[1]])),
    "q_avg: 1-based keys": log_uniform(12, 1e9).map(lambda b: (PROJ, b * (K7[0] + K7[3]))),
    "q_avg: a minus sign": log_uniform(12, 1e9).map(lambda b: (PROJ, b * (K7[1] - K7[4]))),
    "q_avg: unequal weights": st.tuples(log_uniform(12, 1e9), st.floats(1.2, 3.0)).map(
        lambda bw: (PROJ, bw[0] * (K7[1] + bw[1] * K7[4]))),
    "q_avg: too small a factor": st.floats(0.0, 3.0).map(lambda b: (PROJ, b * (K7[1] + K7[4]))),
    "q_avg: values instead of keys": log_uniform(12, 1e9).map(lambda b: (PROJ, b * (V7[1] + V7[4]))),
}



# 07 (c) ------------------------------------------------------------------------------------------------
@st.composite
def avoiding_query(draw, rows: torch.Tensor, pair: tuple[int, int]) -> torch.Tensor:
    """Scores 0 on the pair and far below on every other row (float64: in float32 the big parts' rounding
    would part the two zero scores)."""
    q = sum(-draw(log_uniform(12, 1e9)) * rows[i] for i in range(rows.size(0)) if i not in pair)
    return q + draw(unseen(rows, 1.0))


@FAMILY
@given(st.one_of(top_query(MU, (A, B)), avoiding_query(MU, (A, B))))
def test_07_c_family_of_right_answers_passes(q):
    """Does every query scoring a and b equally and the rest far below pass (c), at every scale and dtype?"""
    _family_check(_07_c, q)


SLIPS_07_C = {
    "one mean": st.tuples(log_uniform(12, 1e9), st.sampled_from([A, B])).map(lambda bj: bj[0] * MU[bj[1]]),
    "the difference": log_uniform(12, 1e9).map(lambda b: b * (MU[A] - MU[B])),
    "unequal weights": st.tuples(log_uniform(12, 1e9), st.floats(1.2, 3.0)).map(
        lambda bw: bw[0] * (MU[A] + bw[1] * MU[B])),
    "too small a factor": st.floats(0.0, 3.0).map(lambda b: b * (MU[A] + MU[B])),
    "the keys of (a) instead of the means": log_uniform(12, 1e9).map(lambda b: b * (K7[A] + K7[B])),
    "the next two means (1-based)": log_uniform(12, 1e9).map(lambda b: b * (MU[A + 1] + MU[B + 1])),
}


@pytest.mark.parametrize("part, slip", [("a", slip) for slip in SLIPS_07_A] + [("c", slip) for slip in SLIPS_07_C])
@SLIPS
@given(st.data())
def test_07_a_and_c_slips_fail(part, slip, data):
    """Does this slip of a one-query answer, (a) or (c), fail at every scale and dtype, with a message?"""
    check, slips = {"a": (_07_a, SLIPS_07_A), "c": (_07_c, SLIPS_07_C)}[part]
    _slip_check(check, data.draw(slips[slip].flatmap(lambda q: DTYPES.map(q.to))))


# 07 (d) ------------------------------------------------------------------------------------------------
@st.composite
def copying_heads(draw) -> tuple[torch.Tensor, torch.Tensor]:
    """A head copying a and a head copying b, either order: every other score at least 12 below at every
    stretch the check tries (k_a = eps mu_a scales head 1's top score and head 2's score on a by eps)."""
    lo = draw(st.sampled_from([10.0, 24.0]))  # the plain form down to beta = 10; with other parts from 24
    b1, b2 = draw(log_uniform(lo, 1e9)), draw(log_uniform(lo, 1e9))
    q1, q2 = b1 * MU[A], b2 * MU[B]
    if lo > 10:
        least = min(tc.STRETCHES)
        for i in range(MU.size(0)):
            if i != A:  # head 1's other scores stay below its smallest top score, least * b1
                q1 = q1 + (least * b1 - _margin(draw, b1, 2 * b1 + 100)) * MU[i]
            if i == A:  # head 2's score on a grows with eps: keep it below b2 even at the largest stretch
                q2 = q2 + (b2 - _margin(draw, b2, 4 * b2 + 100)) / max(tc.STRETCHES) * MU[i]
            elif i != B:
                q2 = q2 + (b2 - _margin(draw, b2, 2 * b2 + 100)) * MU[i]
        q1, q2 = q1 + draw(unseen(MU, b1)), q2 + draw(unseen(MU, b2))
    dtype = draw(DTYPES)
    heads = (q1.to(dtype), q2.to(dtype))
    return heads if draw(st.booleans()) else heads[::-1]


@FAMILY
@given(st.one_of(copying_heads(), st.tuples(avoiding_query(MU, (A, B)), avoiding_query(MU, (A, B)))))
def test_07_d_family_of_right_answers_passes(heads):
    """Do two heads that each copy one value (any order, scale, extra parts, dtype) pass (d)? (So do heads that
    score a and b at 0 and the rest far below: the stretch cannot move them, and the maths accepts them.)"""
    _family_check(_07_d, heads)


def _either_order(pair):
    return st.sampled_from([pair, pair[::-1]])


SLIPS_07_D = {
    "one head (the average query twice)": log_uniform(12, 1e9).map(
        lambda b: (b * (MU[A] + MU[B]), b * (MU[A] + MU[B]))),
    "one head averaging, one copying": st.tuples(log_uniform(12, 1e9), st.sampled_from([A, B])).flatmap(
        lambda bj: _either_order((bj[0] * (MU[A] + MU[B]), bj[0] * MU[bj[1]]))),
    "both heads on one mean": st.tuples(log_uniform(12, 1e9), st.sampled_from([A, B])).map(
        lambda bj: (bj[0] * MU[bj[1]], bj[0] * MU[bj[1]])),
    "a head negative": log_uniform(12, 1e9).flatmap(lambda b: _either_order((b * MU[A], -b * MU[B]))),
    "too small a factor": st.floats(0.0, 5.0).map(lambda b: (b * MU[A], b * MU[B])),
    "the wrong pair of means": log_uniform(12, 1e9).map(lambda b: (b * MU[A + 2], b * MU[B + 2])),
}


@pytest.mark.parametrize("part, slip", [("b", slip) for slip in SLIPS_07_B] + [("d", slip) for slip in SLIPS_07_D])
@SLIPS
@given(st.data())
def test_07_b_and_d_slips_fail(part, slip, data):
    """Does this slip of a two-tensor answer, (b)'s (M, q) or (d)'s two queries, fail at every scale and dtype, with a
    message?"""
    check, slips = {"b": (_07_b, SLIPS_07_B), "d": (_07_d, SLIPS_07_D)}[part]
    first, second = data.draw(slips[slip])
    dtype = data.draw(DTYPES)
    _slip_check(check, (first.to(dtype), second.to(dtype)))


# 07 (e) ------------------------------------------------------------------------------------------------
XXT_INV = torch.linalg.inv(X7 @ X7.T)
X_PINV = XXT_INV @ X7  # rows: the dual basis, (X_PINV @ x_j)_i = 1 if i == j
OFF_X = torch.eye(6, dtype=DTYPE) - X7.T @ X_PINV  # projects onto what no x_i spans


def _matrix(draw, rows: int, cols: int, scale: float = 1.0) -> torch.Tensor:
    entries = draw(st.lists(st.floats(-1.0, 1.0), min_size=rows * cols, max_size=rows * cols))
    return scale * torch.tensor(entries, dtype=DTYPE).reshape(rows, cols)


def _plain_c2(draw) -> torch.Tensor:
    form = draw(st.sampled_from(["attend", "self_attention", "the vector it approximates"]))
    return {"attend": C2, "self_attention": G7.self_attention(X7, EYE6, EYE6, EYE6)[1],
            "the vector it approximates": UA}[form]


@st.composite
def kqv_answers(draw) -> tuple:
    """Any K, Q, V doing the job: a position for each query to pick (j1 for x_1, j2 for x_2), V sending x_j1 to
    u_b - u_c and x_j2 to u_b (the third x anywhere, anything beyond the x's), and scores X Q^T K X^T with the
    pick of each row at least 15 above the rest, split into Q and K by a random rotation and scale."""
    j1, j2 = draw(st.permutations([0, 1, 2]))[:2]
    images = torch.stack([torch.zeros(6, dtype=DTYPE)] * 3)
    images[j1], images[j2] = UB - UC, UB
    images[3 - j1 - j2] = _matrix(draw, 1, 6, 5.0)[0]
    V = images.T @ X_PINV + _matrix(draw, 6, 6) @ OFF_X
    margin = draw(st.floats(15.0, 200.0))
    scores = _matrix(draw, 3, 3, margin).clamp(max=0.0)  # every score at most 0 ...
    scores[0, j1], scores[1, j2] = margin, margin  # ... but each row's pick, at margin
    scores[2] = _matrix(draw, 1, 3, margin)[0]  # x_3's own query picks anything
    A_ = X_PINV.T @ scores @ X_PINV + OFF_X @ _matrix(draw, 6, 6) + _matrix(draw, 6, 6) @ OFF_X
    rotation, _ = torch.linalg.qr(_matrix(draw, 6, 6) + 3 * torch.eye(6, dtype=DTYPE))
    s = draw(log_uniform(0.1, 10.0))
    Q, K = s * rotation, rotation @ A_ / s  # Q^T K = A_
    dtype = draw(DTYPES)
    return tuple(t.to(dtype) for t in (_plain_c2(draw), K, Q, V))


@FAMILY
@given(kqv_answers())
def test_07_e_family_of_right_answers_passes(kqv):
    """Does every K, Q, V that routes x_2 to a u_b value and x_1 to a u_b - u_c value pass (e), in any dtype?"""
    _family_check(_07_e, kqv)


def _clearly_wrong(kqv) -> bool:
    """The maths, written out here (not the check's code): is c_2 plain or c_1, c_2 off by more than 0.01?"""
    c2, K, Q, V = (t.double() if isinstance(t, torch.Tensor) else t for t in kqv)
    if not isinstance(K, torch.Tensor) or K.shape != (6, 6) or c2.shape != (6,):
        return True
    plain = torch.softmax(X7 @ X7[1], 0) @ X7
    weights = torch.softmax((X7 @ Q.T) @ (X7 @ K.T).T, dim=1)
    c = weights @ (X7 @ V.T)
    return max(_gap(c2, plain), _gap(c[0], UB - UC), _gap(c[1], UB)) > 0.01


def _gap(a, b):
    return float((a - b).abs().max())


SLIPS_07_E = {
    "K and Q swapped": lambda kqv: (kqv[0], kqv[2], kqv[1], kqv[3]),
    "V transposed": lambda kqv: (kqv[0], kqv[1], kqv[2], kqv[3].T),
    "K transposed": lambda kqv: (kqv[0], kqv[1].T, kqv[2], kqv[3]),
    "V times beta^2": lambda kqv: (kqv[0], kqv[1], kqv[2], kqv[3] * BETA ** 2),
    "plain attention (K = Q = I)": lambda kqv: (kqv[0], EYE6, EYE6, kqv[3]),
    "c2_plain = u_b": lambda kqv: (UB, *kqv[1:]),
    "c2_plain = x_1": lambda kqv: (X7[0], *kqv[1:]),
    "c2_plain from row 0": lambda kqv: (torch.softmax(X7 @ X7[0], 0) @ X7, *kqv[1:]),
}


@pytest.mark.parametrize("slip", list(SLIPS_07_E))
@SLIPS
@given(kqv_answers())
def test_07_e_slips_fail(slip, kqv):
    """Does this slip, made on a right K, Q, V, fail (e) whenever it really is wrong, with a message?"""
    wrong = SLIPS_07_E[slip](kqv)
    assume(_clearly_wrong(wrong))  # a swap or transpose can leave some answers right: those are not slips
    _slip_check(_07_e, wrong)


# 08 (a) ------------------------------------------------------------------------------------------------
@st.composite
def derangements(draw, T: int = T8) -> torch.Tensor:
    """A permutation matrix moving every row, as float, integer or bool."""
    order = draw(st.permutations(range(T)).filter(lambda o: all(o[i] != i for i in range(T))))
    dtype = draw(st.sampled_from([torch.float64, torch.float32, torch.int64, torch.int32, torch.uint8, torch.bool]))
    return torch.eye(T, dtype=DTYPE)[list(order)].to(dtype)


PERMUTED_OUTPUTS = {
    "the layer on P @ X": lambda P, X: _layer(P.to(X.dtype) @ X),
    "indexing the rows": lambda P, X: _layer(X[P.argmax(1)]),
    "P @ the layer's output": lambda P, X: P @ _layer(X),
    "in float32": lambda P, X: position_free_layer((P @ X).float(), *[p.float() for p in PARAMS]),
    "rows gathered by nonzero": lambda P, X: _layer(X[P.nonzero()[:, 1]]),
    "einsum": lambda P, X: _layer(torch.einsum("ij,jk->ik", P, X)),
}


@FAMILY
@given(derangements(), st.sampled_from(list(PERMUTED_OUTPUTS)), st.integers(0, 2 ** 31 - 1))
def test_08_a_family_of_right_answers_passes(P, form, seed):
    """Does every derangement in any dtype, with permuted_output in any right form, pass (a) on any seed?"""
    fn = PERMUTED_OUTPUTS[form]
    assert tp.check_08_a(P, fn, PARAMS, T8, G8.d, seed=seed) == []
    assert _judge("08-a-test", (P, fn), seed) == []


SLIPS_08_A = {
    "the inverse permutation": lambda P, X: _layer(P.T @ X),
    "the notebook's Z": lambda P, X: P @ Z8,
    "the notebook's X": lambda P, X: _layer(P @ X8),
    "unpermuted": lambda P, X: _layer(X),
    "no layer": lambda P, X: P @ X,
    "columns permuted": lambda P, X: _layer(X) @ P[:G8.d, :G8.d],
    "a numpy array": lambda P, X: _layer(P @ X).numpy(),
}
SLIP_PERMUTATIONS = {
    "identity": st.just(torch.eye(T8, dtype=DTYPE)),
    "a fixed point": st.permutations(range(T8)).filter(lambda o: any(o[i] == i for i in range(T8))).map(
        lambda o: torch.eye(T8, dtype=DTYPE)[list(o)]),
    "an average, not a permutation": st.just(torch.full((T8, T8), 1 / T8, dtype=DTYPE)),
    "twice a permutation": derangements().map(lambda P: 2 * P.double()),
}


@pytest.mark.parametrize("slip", list(SLIPS_08_A) + list(SLIP_PERMUTATIONS))
@SLIPS
@given(st.data(), st.integers(0, 2 ** 31 - 1))
def test_08_a_slips_fail(slip, data, seed):
    """Does this slip in P or in permuted_output fail (a), on any seed, with a message?"""
    if slip in SLIPS_08_A:
        P, fn = data.draw(derangements()), SLIPS_08_A[slip]
    else:
        P, fn = data.draw(SLIP_PERMUTATIONS[slip]), PERMUTED_OUTPUTS["the layer on P @ X"]
    _slip_check(lambda answer: tp.check_08_a(*answer, PARAMS, T8, G8.d, seed=seed), (P, fn))
    assert _judge("08-a-test", (P, fn), seed)


# 08 (b) ------------------------------------------------------------------------------------------------
PHI_FORMS = {
    "float64": lambda dtype: _phi,
    "float32": lambda dtype: lambda T, d: _phi(T, d, dtype=torch.float32),
    "float32, cast": lambda dtype: lambda T, d: _phi(T, d, dtype=torch.float32).to(dtype),
    "exp-log rates": lambda dtype: lambda T, d: _phi_exp_log(T, d).to(dtype),
    "numpy, shifted sine": lambda dtype: lambda T, d: _phi_shifted_sine(T, d).to(dtype),
}
SIZES = st.tuples(st.integers(1, 512), st.integers(1, 32).map(lambda h: 2 * h))


@FAMILY
@given(st.sampled_from(list(PHI_FORMS)), DTYPES, st.lists(SIZES, min_size=1, max_size=3))
def test_08_b_family_of_right_answers_passes(form, dtype, sizes):
    """Does a right Phi in any form and dtype pass both halves of (b) at any size up to 512 positions?"""
    fn = PHI_FORMS[form](dtype)
    assert tp.check_08_b(fn, sizes) == []
    assert twins.problems_08_b_exact(sizes, tc.call_all(fn, sizes)) == []


def _another(value: float, lo: float, hi: float) -> st.SearchStrategy[float]:
    """A number in [lo, hi] at least 5% away from ``value``."""
    return log_uniform(lo, hi).filter(lambda x: abs(x / value - 1) > 0.05)


SLIPS_08_B = {
    "another base": _another(1e4, 10.0, 1e6).map(lambda base: lambda T, d: _phi(T, d, base=base)),
    "another factor on i in the exponent": _another(2.0, 0.5, 6.0).map(
        lambda k: lambda T, d: _phi(T, d, exponent=lambda i, d: k * i / d)),
    "exponent off by one": st.just(lambda T, d: _phi(T, d, exponent=lambda i, d: 2 * (i + 1) / d)),
    "a width typed in": st.sampled_from([16, 32, 64, 128, 256, 512]).map(
        lambda w: lambda T, d: _phi(T, d, exponent=lambda i, _: 2 * i / w)),
    "the column index in the exponent": st.just(lambda T, d: _phi(T, d, exponent=lambda i, d: 4 * i / d)),
    "integer division in the exponent": st.just(lambda T, d: _phi(T, d, exponent=lambda i, d: torch.div(
        2 * i, d, rounding_mode="floor"))),
    "multiplied instead of divided": st.just(lambda T, d: _phi(T, d, inverse=False)),
    "sin and cos swapped": st.just(lambda T, d: _phi(T, d, swap=True)),
    "positions from 1 or later": st.integers(1, 10).map(lambda s: lambda T, d: _phi(T, d, start=s)),
    "degrees, not radians": st.just(lambda T, d: _phi(T, d, degrees=True)),
    "sin only": st.just(lambda T, d: _phi(T, d, trig=torch.sin)),
    "cos only": st.just(lambda T, d: _phi(T, d, trig=torch.cos)),
    "sines first, then cosines": st.just(_phi_concatenated),
    "transposed": st.just(lambda T, d: _phi(T, d).T.contiguous()),
}


@pytest.mark.parametrize("slip", list(SLIPS_08_B))
@settings(SLIPS, max_examples=6)  # each example grades Phi at nine sizes, public and hidden, notebook and judge
@given(st.data(), DTYPES, st.integers(0, 2 ** 31 - 1))
def test_08_b_slips_fail(slip, data, dtype, seed):
    """Does this slip fail one half of (b) in the notebook and at grading (any seed), with a message?"""
    made = data.draw(SLIPS_08_B[slip])
    fn = lambda T, d: made(T, d).to(dtype)  # noqa: E731
    _slip_check(_08_b, fn)
    assert _judge("08-b", fn, seed)


# ---------------------------------------------------------------------------------------------------- not written yet
def _stub(*args):
    """A function as the blank release holds it."""
    raise NotImplementedError()


UNWRITTEN = {  # twin: (the blank release's answer: placeholders still None, functions still stubs; what it says)
    "07-a-test": (None, "q_copy is not written yet: write it"),
    "07-b-test": ((None, None), "M and q_avg are not written yet: write them"),
    "07-c-test": (None, "q_single is not written yet: write it"),
    "07-d-test": ((None, None), "q_1 and q_2 are not written yet: write them"),
    "07-e-test": ((None, None, None, None), "c2_plain, K, Q and V are not written yet: write them"),
    "08-a-test": ((None, _stub), "P and permuted_output are not written yet: write them"),
    "08-b": (_stub, "position_embeddings is not written yet: write it"),
}


@pytest.mark.parametrize("gid", list(UNWRITTEN))
def test_an_unwritten_answer_is_named_in_one_line(gid):
    """On the blank release's answers, does the test cell fail with one line naming what is not written yet
    (not "should be a torch tensor; found NoneType")?"""
    answer, said = UNWRITTEN[gid]
    with pytest.raises(AssertionError) as failed:
        tc.assert_passes(TWINS[gid][0](answer))
    assert str(failed.value) == f"{said} in the cell above and run it"


@pytest.mark.parametrize("gid", [g for g in UNWRITTEN if g.startswith("07")])
def test_the_judge_says_not_written_for_a_placeholder(gid):
    """Does the grader's judge say "not written yet" for a placeholder a submission sent back as None?"""
    problems = _judge(gid, UNWRITTEN[gid][0], 0)
    assert problems and all(p.endswith("is not written yet") for p in problems), problems


def test_a_half_written_answer_names_the_missing_half_and_judges_the_other():
    """With M written wrong and q_avg not written, does the cell say both: what is missing, then what is wrong?"""
    with pytest.raises(AssertionError) as failed:
        tc.assert_passes(_07_b((torch.eye(8, dtype=DTYPE), None)))
    first, second = str(failed.value).splitlines()
    assert first == "q_avg is not written yet: write it in the cell above and run it"
    assert second.startswith("- M sends a basis vector of B")
