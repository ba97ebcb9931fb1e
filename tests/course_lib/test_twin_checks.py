"""Checks of the checks: every numeric twin accepts right answers in other forms and rejects plausible wrong ones.

Each twin is checked twice, the way it runs in the course: by ``course_lib.twin_checks`` with the notebook's
values and fixed seed (the notebook's test cell), and by the grader's judge (``autograder.judges.twin_*``)
with fresh inputs from the registry. A wrong answer must fail both, with a message.
"""
from __future__ import annotations

import math
import random

import pytest
import torch

from autograder import judges, registry
from course_lib import twin_checks as tc
from course_lib.attention_math import DTYPE, position_free_layer

G7 = judges.given(judges.NB07)
G8 = judges.given(judges.NB08)
SEEDS = (0, 1, 2)  # grader seeds: random.Random(s) draws the judge's fresh inputs


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
    "beta=50": lambda: 50.0 * K7[2],
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
    "beta=50": lambda: (PROJ, 50.0 * (K7[1] + K7[4])),
    "minus the other keys": lambda: (PROJ, 10.0 * (K7[1] + K7[4] - _others(K7, {1, 4}))),
    "float32 q_avg": lambda: (PROJ, Q_AVG.float()),
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
}


def _07_b(pair, seed=5):
    return tc.problems_07_b(*pair, K7, V7, BA, BB, seed=seed)


# ---------------------------------------------------------------------------------------------------- 07 (c), (d)
MU, A, B = G7.means, G7.a, G7.b
VALID_07_C = {
    "beta=10": lambda: 10.0 * (MU[A] + MU[B]),
    "beta=20": lambda: 20.0 * (MU[A] + MU[B]),
    "beta=50": lambda: 50.0 * (MU[A] + MU[B]),
    "float32": lambda: (20.0 * (MU[A] + MU[B])).float(),
    "minus the other means": lambda: 20.0 * (MU[A] + MU[B] - _others(MU, {A, B})),
}
WRONG_07_C = {
    "beta=1": lambda: MU[A] + MU[B],
    "one mean": lambda: 20.0 * MU[A],
    "difference": lambda: 20.0 * (MU[A] - MU[B]),
    "keys of (a) instead of the means": lambda: 20.0 * (K7[A] + K7[B]),
    "an int scalar": lambda: torch.tensor(20),
}
VALID_07_D = {
    "beta=10": lambda: (10.0 * MU[A], 10.0 * MU[B]),
    "beta=20": lambda: (20.0 * MU[A], 20.0 * MU[B]),
    "beta=50": lambda: (50.0 * MU[A], 50.0 * MU[B]),
    "beta=9 (the smallest scale (c) accepts)": lambda: (9.0 * MU[A], 9.0 * MU[B]),
    "heads swapped": lambda: (20.0 * MU[B], 20.0 * MU[A]),
    "different scale per head": lambda: (10.0 * MU[A], 50.0 * MU[B]),
    "float32": lambda: ((20.0 * MU[A]).float(), (20.0 * MU[B]).float()),
    "minus the other means": lambda: (20.0 * (MU[A] - _others(MU, {A})), 20.0 * (MU[B] - _others(MU, {B}))),
}
WRONG_07_D = {
    "beta=1": lambda: (MU[A], MU[B]),
    "one head (the average query twice)": lambda: (10.0 * (MU[A] + MU[B]), 10.0 * (MU[A] + MU[B])),
    "one head at beta=20 twice": lambda: (20.0 * (MU[A] + MU[B]), 20.0 * (MU[A] + MU[B])),
    "both heads on a": lambda: (20.0 * MU[A], 20.0 * MU[A]),
    "second head negative": lambda: (20.0 * MU[A], -20.0 * MU[B]),
    "q_2 missing (None)": lambda: (20.0 * MU[A], None),
    "wrong length": lambda: (20.0 * MU[A][:6], 20.0 * MU[B][:6]),
}


def _07_c(q, seed=6):
    return tc.problems_07_c(q, MU, V7, A, B, seed=seed)


def _07_d(pair, seed=7):
    return tc.problems_07_d(*pair, MU, V7, A, B, seed=seed)


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
    return tc.check_08_a(P, fn, PARAMS, T8, G8.d, seed=seed)


# ---------------------------------------------------------------------------------------------------- 08 (b)
def _phi(T, d, *, dtype=DTYPE, base=10000.0, two=2.0, swap=False, inverse=True, start=0, trig=None):
    t = torch.arange(start, start + T, dtype=dtype)[:, None]
    i = torch.arange(0, d // 2, dtype=dtype)
    rate = torch.tensor(base, dtype=dtype) ** (two * i / d)
    angle = t / rate if inverse else t * rate
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


VALID_08_B = {
    "float64": lambda: _phi,
    "float32 throughout": lambda: lambda T, d: _phi(T, d, dtype=torch.float32),
    "float32 cast to float64": lambda: lambda T, d: _phi(T, d, dtype=torch.float32).double(),
    "python loop (float32 tensor)": lambda: _phi_loop,
    "exp-log rates, interleaved by stacking": lambda: _phi_exp_log,
}
WRONG_08_B = {
    "sin and cos swapped": lambda: lambda T, d: _phi(T, d, swap=True),
    "10000**(i/d) instead of 10000**(2i/d)": lambda: lambda T, d: _phi(T, d, two=1.0),
    "10000**(4i/d) (column index as i)": lambda: lambda T, d: _phi(T, d, two=4.0),
    "multiplied instead of divided": lambda: lambda T, d: _phi(T, d, inverse=False),
    "base 1000": lambda: lambda T, d: _phi(T, d, base=1000.0),
    "positions from 1": lambda: lambda T, d: _phi(T, d, start=1),
    "sin only": lambda: lambda T, d: _phi(T, d, trig=torch.sin),
    "transposed (d, T)": lambda: lambda T, d: _phi(T, d).T.contiguous(),
    "a numpy array": lambda: lambda T, d: _phi(T, d).numpy(),
    "raises": lambda: lambda T, d: 1 / 0,
}


def _08_b(fn, seed=None):
    return tc.check_08_b(fn, [(512, 16)]) + tc.check_08_b(fn, [(7, 6), (40, 10), (3, 2)])


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


def _judge(gid: str, answer, seed: int) -> list[str]:
    check = registry.BY_ID[gid]
    inputs = check.inputs(random.Random(seed))
    try:
        output = _judge_output(gid, answer, inputs)
    except Exception as err:  # in the sandbox the probe itself would report this
        return [f"the probe raised {type(err).__name__}"]
    return check.judge(inputs, output)


TWINS = {  # grade_id: (notebook check, valid family, wrong family)
    "07-a-test": (_07_a, VALID_07_A, WRONG_07_A),
    "07-b-test": (_07_b, VALID_07_B, WRONG_07_B),
    "07-c-test": (_07_c, VALID_07_C, WRONG_07_C),
    "07-d-test": (_07_d, VALID_07_D, WRONG_07_D),
    "07-e-test": (_07_e, VALID_07_E, WRONG_07_E),
    "08-a-test": (_08_a, VALID_08_A, WRONG_08_A),
    "08-b-test": (_08_b, VALID_08_B, WRONG_08_B),
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


@pytest.mark.parametrize("gid", list(TWINS))
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


def test_messages_say_what_was_found_and_what_is_expected():
    """Do the messages give the found value and the target, without naming the answer's form?"""
    [message] = _07_a(1.0 * K7[2])
    assert "values[2]" in message and "allowed: 0.001" in message and "alpha[" in message
    [message] = _07_d((10.0 * (MU[A] + MU[B]), 10.0 * (MU[A] + MU[B])))
    assert "of 400" in message and "at least 160" in message
    [message] = _07_e(_kqv(K=Q_H, Q=K_H))
    assert "exchanged" in message
    [message] = tc.check_08_b(lambda T, d: _phi(T, d, swap=True), [(512, 16)])
    assert "exchanged" in message and "angle" in message
    [message] = _08_a((SHIFT, lambda P, X: P @ Z8))
    assert "from its arguments" in message
    for message in _07_a(2.0 * K7[2]) + _07_c(MU[A] + MU[B]) + _07_e(_kqv(V=EYE6)):
        assert "mu" not in message and "beta" not in message and "keys[" not in message


def test_two_head_bar_separates_right_from_one_head_on_many_seeds():
    """Over 20 seeds, do right two-head answers (beta 9..50) clear the bar and one head stay far below it?"""
    for seed in range(20):
        for beta in (9.0, 10.0, 50.0):
            assert _07_d((beta * MU[A], beta * MU[B]), seed=seed) == [], (seed, beta)
        assert _07_d((10.0 * (MU[A] + MU[B]), 10.0 * (MU[A] + MU[B])), seed=seed), seed


def test_seeded_checks_are_reproducible():
    """Does the same seed give the same verdict and message, and a different seed fresh samples?"""
    one_head = (10.0 * (MU[A] + MU[B]), 10.0 * (MU[A] + MU[B]))
    assert _07_d(one_head, seed=3) == _07_d(one_head, seed=3)
    assert tc.calls_08_a(T8, G8.d, seed=3)[0][1].equal(tc.calls_08_a(T8, G8.d, seed=3)[0][1])
    assert not tc.calls_08_a(T8, G8.d, seed=3)[0][1].equal(tc.calls_08_a(T8, G8.d, seed=4)[0][1])
