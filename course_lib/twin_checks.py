"""The checks of the numeric twins (notebooks 07 and 08), written once.

The same functions run in two places: the notebooks' locked test cells call them
with the notebook's own values, and the grader's judges (``autograder.judges``)
call them with the solution notebook's values and the raw tensors a submission
sent back. Each ``problems_*`` function returns a list of messages (empty: the
twin passes). A message says what was found and what was expected, never what
the answer is. Anything may come in (a list, an int tensor, the wrong shape):
the checks turn it into a message instead of raising. Random draws take a seed.

The checks judge the *effect* of an answer (the output ``c``, ``M`` applied to
vectors, the rows of ``Phi``), so any answer the maths accepts passes, in
float32 as well as float64.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch

from .attention_math import (
    DTYPE,
    attend,
    attention_weights,
    position_free_layer,
    sample_keys,
    self_attention,
)
from .check_failed import CheckFailed

# (d): right answers stay near the average in ~75-90% of samples (more for a larger scale),
# one head in 1-3%: 160 of 400 separates the two with a wide margin on every seed
HEADS_SAMPLES, HEADS_NEEDED, HEADS_ATOL = 400, 160, 0.05
PHI_ATOL = 1e-4  # accepts a right Phi computed in float32


class _Problem(Exception):
    """One message ends the check early (later checks would only repeat it)."""


def assert_passes(problems: Sequence[str]) -> None:
    """For the notebooks' test cells: fail with every message, or pass silently."""
    if problems:
        raise CheckFailed("\n".join(f"- {p}" for p in problems))


def _shape(t) -> str:
    return "x".join(str(n) for n in t.shape) if t.dim() else "a scalar"


def _tensor(value, name: str, shape: tuple[int, ...] | None = None, *, allow_bool: bool = False) -> torch.Tensor:
    """``value`` as a float64 tensor of ``shape``, or a _Problem saying what it is instead."""
    if not isinstance(value, torch.Tensor):
        # the type only: a reason never echoes what a submission sent back
        raise _Problem(f"{name} should be a torch tensor; found {type(value).__name__}")
    if value.is_complex() or (value.dtype == torch.bool and not allow_bool):
        raise _Problem(f"{name} should hold real numbers; found dtype {value.dtype}")
    if shape is not None and tuple(value.shape) != tuple(shape):
        want = "x".join(map(str, shape)) if len(shape) > 1 else f"a vector of length {shape[0]}"
        raise _Problem(f"{name} should be {want}; found shape {_shape(value)}")
    out = value.detach().to("cpu", DTYPE)
    if not bool(torch.isfinite(out).all()):
        raise _Problem(f"{name} holds NaN or infinite values")
    return out


def _gap(got: torch.Tensor, want: torch.Tensor) -> float:
    return float((got - want).abs().max())


def _run(check: Callable[[], list[str]]) -> list[str]:
    try:
        return check()
    except _Problem as problem:
        return [str(problem)]


def call_all(fn, calls: Sequence[Sequence]) -> list:
    """Call ``fn(*args)`` for every call; an exception becomes a ``RuntimeError`` the checks report."""
    if not callable(fn):
        return [RuntimeError(f"should be a function; found {type(fn).__name__}")] * len(calls)
    results = []
    for args in calls:
        try:
            results.append(fn(*args))
        except Exception as err:  # the student's code: report it, do not crash the check
            results.append(RuntimeError(f"raised {type(err).__name__}: {err}"))
    return results


def _weights_summary(q: torch.Tensor, keys: torch.Tensor) -> str:
    w = attention_weights(q, keys)
    top = torch.argsort(w, descending=True)[:2].tolist()
    return ", ".join(f"alpha[{i}] = {float(w[i]):.3f}" for i in top)


# --- 07 (a): copying ------------------------------------------------------------------------------

def problems_07_a(q_copy, keys: torch.Tensor, values: torch.Tensor, target: int = 2, atol: float = 1e-3) -> list[str]:
    """c = attend(q_copy, keys, values) must be within ``atol`` of values[target]."""
    def check():
        q = _tensor(q_copy, "q_copy", (keys.size(1),))
        c = attend(q, keys, values)
        gap = _gap(c, values[target])
        if gap > atol:
            return [f"with q_copy, c differs from values[{target}] by up to {gap:.2g} in a coordinate "
                    f"(allowed: {atol:g}); its largest attention weights are {_weights_summary(q, keys)}"]
        return []
    return _run(check)


# --- 07 (b): an average of two ---------------------------------------------------------------------

def problems_07_b(M, q_avg, keys: torch.Tensor, values: torch.Tensor, basis_a: torch.Tensor, basis_b: torch.Tensor,
                  seed: int, pair: tuple[int, int] = (1, 4), trials: int = 5, atol: float = 1e-3) -> list[str]:
    """M(v_a + v_b) = v_a for random v_a in span(basis_a), v_b in span(basis_b); attend(q_avg) = the average."""
    problems = []

    def check_m():
        d = basis_a.size(1)
        m = _tensor(M, "M", (d, d))
        g = torch.Generator().manual_seed(seed)
        for _ in range(trials):
            v_a = torch.randn(basis_a.size(0), generator=g, dtype=DTYPE) @ basis_a
            v_b = torch.randn(basis_b.size(0), generator=g, dtype=DTYPE) @ basis_b
            gap = _gap(m @ (v_a + v_b), v_a)
            if gap > 1e-5 * max(1.0, float(v_a.abs().max())):
                leftover_b = _gap(m @ v_b, torch.zeros_like(v_b))
                return [f"M(v_a + v_b) differs from v_a by up to {gap:.2g} for a random v_a in A and v_b in B "
                        f"(M v_b alone is {leftover_b:.2g} away from zero); it should equal v_a for every such pair"]
        return []

    def check_q():
        i, j = pair
        q = _tensor(q_avg, "q_avg", (keys.size(1),))
        target = 0.5 * (values[i] + values[j])
        gap = _gap(attend(q, keys, values), target)
        if gap > atol:
            return [f"with q_avg, c differs from (values[{i}] + values[{j}]) / 2 by up to {gap:.2g} (allowed: "
                    f"{atol:g}); its largest attention weights are {_weights_summary(q, keys)}"]
        return []

    problems += _run(check_m)
    problems += _run(check_q)
    return problems


# --- 07 (c): one head, tiny covariance -------------------------------------------------------------

def problems_07_c(q_single, means: torch.Tensor, values: torch.Tensor, a: int, b: int, seed: int,
                  samples: int = 20, atol: float = 1e-3) -> list[str]:
    """With keys sampled at a tiny covariance, c must be within ``atol`` of (v_a + v_b) / 2 in every sample."""
    def check():
        q = _tensor(q_single, "q_single", (means.size(1),))
        g = torch.Generator().manual_seed(seed)
        target = 0.5 * (values[a] + values[b])
        for n in range(samples):
            keys = sample_keys(means, alpha=1e-10, generator=g)
            gap = _gap(attend(q, keys, values), target)
            if gap > atol:
                return [f"with keys sampled at a tiny covariance, c differs from (values[a] + values[b]) / 2 by up "
                        f"to {gap:.2g} in sample {n + 1} (allowed: {atol:g}); its largest attention weights are "
                        f"{_weights_summary(q, keys)}"]
        return []
    return _run(check)


# --- 07 (d): two heads, stretched k_a --------------------------------------------------------------

def problems_07_d(q_1, q_2, means: torch.Tensor, values: torch.Tensor, a: int, b: int, seed: int,
                  samples: int = HEADS_SAMPLES, needed: int = HEADS_NEEDED, atol: float = HEADS_ATOL) -> list[str]:
    """With k_a stretched along mu_a, the two-head output must be within ``atol`` of the average in ``needed``
    of ``samples`` key samples."""
    def check():
        d = means.size(1)
        q1, q2 = _tensor(q_1, "q_1", (d,)), _tensor(q_2, "q_2", (d,))
        g = torch.Generator().manual_seed(seed)
        target = 0.5 * (values[a] + values[b])
        close = 0
        for _ in range(samples):
            keys = sample_keys(means, alpha=1e-8, stretched=a, stretch=0.5, generator=g)
            c = 0.5 * (attend(q1, keys, values) + attend(q2, keys, values))
            close += _gap(c, target) <= atol
        if close < needed:
            return [f"with k_a stretched, the two-head output was within {atol:g} of (values[a] + values[b]) / 2 "
                    f"in {close} of {samples} key samples; at least {needed} are needed"]
        return []
    return _run(check)


# --- 07 (e): keys, queries and values --------------------------------------------------------------

def problems_07_e(c2_plain, K, Q, V, X: torch.Tensor, u_b: torch.Tensor, u_c: torch.Tensor,
                  atol: float = 1e-3) -> list[str]:
    """c2_plain: c_2 with k = q = v = x; self_attention(X, K, Q, V) must give c_1 ~ u_b - u_c and c_2 ~ u_b."""
    d = X.size(1)
    problems = []

    def check_plain():
        got = _tensor(c2_plain, "c2_plain", (d,))
        want = attend(X[1], X, X)  # x_2 attending over the x's, each its own key and value
        gap = _gap(got, want)
        if gap > atol:
            return [f"c2_plain differs from c_2 of plain self-attention (k_i = q_i = v_i = x_i) by up to {gap:.2g} "
                    f"(allowed: {atol:g})"]
        return []

    def check_kqv():
        k, q, v = (_tensor(m, name, (d, d)) for m, name in ((K, "K"), (Q, "Q"), (V, "V")))
        C = self_attention(X, k, q, v)
        wants = (("c_1", C[0], u_b - u_c, "u_b - u_c"), ("c_2", C[1], u_b, "u_b"))
        wrong = [f"{name} differs from {label} by up to {_gap(got, want):.2g}" for name, got, want, label in wants
                 if _gap(got, want) > atol]
        if not wrong:
            return []
        message = "self_attention(X, K, Q, V): " + "; ".join(wrong) + f" (allowed: {atol:g})"
        swapped = self_attention(X, q, k, v)
        if _gap(swapped[0], u_b - u_c) <= atol and _gap(swapped[1], u_b) <= atol:
            message += ". With K and Q exchanged it would pass: K makes the keys (k_i = K x_i), Q the queries"
        return [message]

    problems += _run(check_plain)
    problems += _run(check_kqv)
    return problems


# --- 08 (a): permuting the input -------------------------------------------------------------------

def permutation_problems(P, T: int) -> list[str]:
    """P must be a T x T permutation matrix (any real or integer dtype) that moves every row."""
    def check():
        p = _tensor(P, "P", (T, T), allow_bool=True)
        ones = torch.ones(T, dtype=DTYPE)
        if not bool(((p == 0) | (p == 1)).all()):
            raise _Problem("P should hold only 0s and 1s; found other entries")
        if not (torch.equal(p.sum(0), ones) and torch.equal(p.sum(1), ones)):
            raise _Problem(f"P should have exactly one 1 in every row and column; found row sums "
                           f"{p.sum(1).tolist()} and column sums {p.sum(0).tolist()}")
        fixed = int(torch.diagonal(p).sum())
        if fixed:
            raise _Problem(f"P should move every row; it leaves {fixed} of {T} in place")
        return []
    return _run(check)


def calls_08_a(T: int, d: int, seed: int, count: int = 3) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Fresh (P, X) pairs for ``permuted_output``: random permutations moving every row, random inputs."""
    g = torch.Generator().manual_seed(seed)
    calls = []
    for _ in range(count):
        while True:
            order = torch.randperm(T, generator=g)
            if bool((order != torch.arange(T)).all()):
                break
        calls.append((torch.eye(T, dtype=DTYPE)[order], torch.randn(T, d, generator=g, dtype=DTYPE)))
    return calls


def problems_08_a(P, outputs: Sequence, calls: Sequence, params: Sequence[torch.Tensor], T: int) -> list[str]:
    """P is a permutation moving every row; ``outputs[i]`` is the layer applied to the permuted input of
    ``calls[i] = (P_i, X_i)``."""
    problems = permutation_problems(P, T)
    if len(outputs) != len(calls):
        return problems + [f"permuted_output gave {len(outputs)} results for {len(calls)} calls"]
    for (P_i, X_i), out in zip(calls, outputs):
        if isinstance(out, Exception):
            problems.append(f"permuted_output(P, X) {out}")
            break
        try:
            got = _tensor(out, "permuted_output(P, X)", tuple(X_i.shape))
        except _Problem as problem:
            problems.append(str(problem))
            break
        want = P_i @ position_free_layer(X_i, *params)  # equal to the layer on the permuted input: part (a)
        gap = _gap(got, want)
        if gap > 1e-4 * max(1.0, float(want.abs().max())):
            problems.append(f"permuted_output(P, X) for a new P and X differs by up to {gap:.2g} from the layer "
                            "applied to the permuted input; it should be computed from its arguments P and X")
            break
    return problems


def check_08_a(P, permuted_output, params: Sequence[torch.Tensor], T: int, d: int, seed: int) -> list[str]:
    """The notebook's form of the 08 (a) check: calls the student's function itself."""
    calls = calls_08_a(T, d, seed)
    return problems_08_a(P, call_all(permuted_output, calls), calls, params, T)


# --- 08 (b): sinusoidal position embeddings --------------------------------------------------------

def _phi_angles(T: int, d: int) -> torch.Tensor:
    """The angle t / 10000^(2i/d) of the pair (2i, 2i+1) at position t, shape (T, d // 2)."""
    rates = torch.pow(torch.tensor(1e4, dtype=DTYPE), -torch.arange(0, d - 1, 2, dtype=DTYPE) / d)
    return torch.arange(T, dtype=DTYPE)[:, None] * rates


def problems_08_b(calls: Sequence[Sequence[int]], outputs: Sequence, atol: float = PHI_ATOL) -> list[str]:
    """``outputs[i]`` must be Phi for ``calls[i] = (T, d)``: every (even, odd) column pair at position t is the
    point at angle t / 10000^(2i/d) on the unit circle, even column first (within ``atol``)."""
    if len(outputs) != len(calls):
        return [f"position_embeddings gave {len(outputs)} results for {len(calls)} calls"]
    for (T, d), out in zip(calls, outputs):
        what = f"position_embeddings({T}, {d})"
        if isinstance(out, Exception):
            return [f"{what} {out}"]
        try:
            phi = _tensor(out, what, (T, d))
        except _Problem as problem:
            return [str(problem)]
        angles = _phi_angles(T, d)
        pairs = d // 2
        even, odd = phi[:, 0:2 * pairs:2], phi[:, 1:2 * pairs:2]
        radius = torch.sqrt(even ** 2 + odd ** 2)
        # angle of the point (odd, even): atan2 measures from the odd column (cos) towards the even one (sin)
        found = torch.atan2(even, odd)
        turn = torch.remainder(found - angles + math.pi, 2 * math.pi) - math.pi
        bad = ((radius - 1).abs() > atol) | (turn.abs() > atol)
        if bool(bad.any()):
            t, i = (int(x) for x in bad.nonzero()[0])
            swapped = torch.atan2(odd, even)
            hint = ""
            if bool(((torch.remainder(swapped - angles + math.pi, 2 * math.pi) - math.pi).abs() <= atol).all()):
                hint = " (the even and odd columns look exchanged)"
            return [f"{what}: columns {2 * i} and {2 * i + 1} at t={t} are ({float(phi[t, 2 * i]):.5f}, "
                    f"{float(phi[t, 2 * i + 1]):.5f}), a point at angle {float(found[t, i]):.5f} rad and radius "
                    f"{float(radius[t, i]):.5f}; the formula puts it at angle {float(angles[t, i]):.5f} rad "
                    f"(mod 2 pi) on the unit circle{hint}"]
    return []


def check_08_b(position_embeddings, calls: Sequence[Sequence[int]]) -> list[str]:
    """The notebook's form of the 08 (b) check: calls the student's function itself."""
    return problems_08_b(calls, call_all(position_embeddings, calls))
