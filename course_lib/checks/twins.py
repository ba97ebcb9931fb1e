"""The checks of the numeric twins, written once: notebook 07's here, with what every twin check shares.

The same functions run in two places: the notebooks' locked test cells call them with the notebook's own values,
and the grader calls them with the solution notebook's values and the raw tensors a submission sent back. Each
``problems_*`` function returns a list of messages (empty: the twin passes). A message says what was found and
what was expected, never what the answer is. Anything may come in (a list, an int tensor, the wrong shape): the
checks turn it into a message instead of raising.

The checks judge the *effect* of an answer (the output ``c``, ``M`` applied to vectors), so any answer the maths
accepts passes, in float32 as well as float64. The 07 checks sample nothing: where a question takes a limit (a
vanishing covariance) the check evaluates the limit itself, and where it asks about a random stretch it evaluates
chosen stretches, so the verdict is the same on every run and at every scale of the answer. Notebook 08's checks
are in ``twins_positions``.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from course_lib.checks.common import type_found
from course_lib.gpt.attention_math import DTYPE, attend, attention_weights, self_attention
from course_lib.notebook.check_failed import BULLET, CheckFailed

# two scores this close (relative to the larger) are read both as a tie and as they stand: rounding
# must not part a tie the maths accepts (see _readings)
TIE_RTOL = 1e-5
# (d): the eps of k_a = eps mu_a tried, eps ~ N(1, 1/2): its bulk on both sides of 1, where one
# averaging head fails (eps < 0 is ignored; near 0 no finite factor copies: eps * beta is small)
STRETCHES = (0.5, 0.75, 1.25, 1.5, 2.0, 3.0)
HEADS_ATOL = 0.05  # at a stretched length "stays near the average" is a behaviour, not a value


class Problem(Exception):
    """One message ends the check early (later checks would only repeat it)."""


# an answer still None (its cell's placeholder, `q_copy = None`) or a function that still raises
# NotImplementedError is "not written yet", in the notebook and at grading alike
NOT_WRITTEN = "is not written yet"


class NotWritten(RuntimeError):
    """``call_all``'s result for a call of a function that still raises NotImplementedError."""

    def __init__(self) -> None:
        super().__init__(NOT_WRITTEN)


def _not_written(*named: tuple[str, object]) -> list[str]:
    """A message for each (name, value) whose value is still None."""
    return [f"{name} {NOT_WRITTEN}" for name, value in named if value is None]


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def assert_passes(problems: Sequence[str], subject: str = "") -> None:
    """For the notebooks' test cells: fail with every message, or (given the ``subject`` it checks) print in one
    line that it passed ("(a) q_copy: all public checks passed").

    What is not written yet comes first, in one line ("M and q_avg are not written yet: ..."), then the
    other messages, one line each."""
    if not problems:
        if subject:
            print(f"{subject}: all public checks passed")
        return
    suffix = f" {NOT_WRITTEN}"
    unwritten = list(dict.fromkeys(p.removesuffix(suffix) for p in problems if p.endswith(suffix)))
    lines = [f"{BULLET}{p}" for p in problems if not p.endswith(suffix)]
    if unwritten:
        one = len(unwritten) == 1
        lines.insert(0, f"{_and(unwritten)} {'is' if one else 'are'} not written yet: write {'it' if one else 'them'} "
                        "in the cell above and run it")
    raise CheckFailed("\n".join(lines))


def _shape(t) -> str:
    return "x".join(str(n) for n in t.shape) if t.dim() else "a scalar"


def as_tensor(value, name: str, shape: tuple[int, ...] | None = None, *, allow_bool: bool = False) -> torch.Tensor:
    """``value`` as a float64 tensor of ``shape``, or a Problem saying what it is instead."""
    if value is None:
        raise Problem(f"{name} {NOT_WRITTEN}")
    if not isinstance(value, torch.Tensor):
        # the type only: a reason never echoes what a submission sent back
        raise Problem(f"{name} should be a torch tensor; found {type_found(value)}")
    if value.is_complex() or (value.dtype == torch.bool and not allow_bool):
        raise Problem(f"{name} should hold real numbers; found dtype {value.dtype}")
    if shape is not None and tuple(value.shape) != tuple(shape):
        want = "x".join(map(str, shape)) if len(shape) > 1 else f"a vector of length {shape[0]}"
        raise Problem(f"{name} should be {want}; found shape {_shape(value)}")
    out = value.detach().to("cpu", DTYPE)
    if not bool(torch.isfinite(out).all()):
        raise Problem(f"{name} holds NaN or infinite values")
    return out


def max_gap(got: torch.Tensor, want: torch.Tensor) -> float:
    return float((got - want).abs().max())


def run_check(check: Callable[[], list[str]]) -> list[str]:
    try:
        return check()
    except Problem as problem:
        return [str(problem)]


def call_all(fn, calls: Sequence[Sequence]) -> list:
    """Call ``fn(*args)`` for every call; an exception becomes a ``RuntimeError`` the checks report (``NotWritten``
    for NotImplementedError)."""
    if not callable(fn):
        return [RuntimeError(f"should be a function; found {type_found(fn)}")] * len(calls)
    results = []
    for args in calls:
        try:
            results.append(fn(*args))
        except NotImplementedError:
            results.append(NotWritten())
        except Exception as err:  # the student's code: report it, do not crash the check
            results.append(RuntimeError(f"raised {type(err).__name__}: {err}"))
    return results


def _weights_summary(q: torch.Tensor, keys: torch.Tensor) -> str:
    w = attention_weights(q, keys)
    top = torch.argsort(w, descending=True)[:2].tolist()
    return ", ".join(f"alpha[{i}] = {float(w[i]):.3f}" for i in top)


def _readings(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, pair: tuple[int, int]) -> list[torch.Tensor]:
    """c for the query ``q`` as its scores stand, and also with the scores of the two keys of ``pair`` made equal
    when only rounding parts them (TIE_RTOL); any other gap, and every other score, counts as it is.

    The answer passes if either reading does. A query built as beta (k_i + k_j) ties the two in exact arithmetic;
    stored in float32 (or scaled far up) its own rounding parts them by about 1e-7 of their size (1e-6 with large
    parts no key sees), which a large beta turns into a lopsided softmax. The maths accepts that query at every
    scale, so the rounding must not count; reading the scores as they stand as well means a query that rightly
    separates two keys is never judged as a tie.
    """
    scores = keys @ q
    readings = [torch.softmax(scores, dim=0) @ values]
    i, j = pair
    if abs(float(scores[i] - scores[j])) <= TIE_RTOL * max(abs(float(scores[i])), abs(float(scores[j]))):
        tied = scores.clone()
        tied[i] = tied[j] = (scores[i] + scores[j]) / 2
        readings.append(torch.softmax(tied, dim=0) @ values)
    return readings


# --- 07 (a): copying -----------------------------------------------------------------------------

def problems_07_a(q_copy, keys: torch.Tensor, values: torch.Tensor, target: int = 2, atol: float = 1e-3) -> list[str]:
    """c = attend(q_copy, keys, values) must be within ``atol`` of values[target]."""
    def check():
        q = as_tensor(q_copy, "q_copy", (keys.size(1),))
        c = attend(q, keys, values)
        gap = max_gap(c, values[target])
        if gap > atol:
            return [f"with q_copy, c differs from values[{target}] by up to {gap:.2g} in a coordinate "
                    f"(allowed: {atol:g}); its largest attention weights are {_weights_summary(q, keys)}"]
        return []
    return run_check(check)


# --- 07 (b): an average of two -------------------------------------------------------------------

def m_problems(M, basis_a: torch.Tensor, basis_b: torch.Tensor, atol: float = 1e-5) -> list[str]:
    """M must leave every basis vector of A unchanged and send every basis vector of B to 0.

    By linearity that is exactly "M(v_a + v_b) = v_a for every v_a in A and v_b in B", checked without
    sampling: any pair is a combination of these basis vectors.
    """
    def check():
        d = basis_a.size(1)
        m = as_tensor(M, "M", (d, d))
        moved = max_gap(basis_a @ m.T, basis_a)  # rows: M a_j - a_j
        if moved > atol:
            return [f"M changes a basis vector of A by up to {moved:.2g} (allowed: {atol:g}); M(v_a + v_b) = v_a for "
                    "every pair needs M v_a = v_a for every v_a in A"]
        kept = max_gap(basis_b @ m.T, torch.zeros_like(basis_b))
        if kept > atol:
            return [f"M sends a basis vector of B to a vector with a coordinate as large as {kept:.2g} (allowed: "
                    f"{atol:g}); M(v_a + v_b) = v_a for every pair needs M v_b = 0 for every v_b in B"]
        return []
    return run_check(check)


def average_problems(q, name: str, keys: torch.Tensor, values: torch.Tensor, pair: tuple[int, int], atol: float,
                     where: str = "", target: str | None = None) -> list[str]:
    """c for the query must be within ``atol`` of the average of the two values of ``pair`` (named ``target``)."""
    def check():
        v = as_tensor(q, name, (keys.size(1),))
        i, j = pair
        target_c = 0.5 * (values[i] + values[j])
        gap = min(max_gap(c, target_c) for c in _readings(v, keys, values, pair))
        if gap > atol:
            label = target or f"(values[{i}] + values[{j}]) / 2"
            return [f"with {name}, c differs from {label} by up to {gap:.2g} (allowed: {atol:g}){where}; its "
                    f"largest attention weights are {_weights_summary(v, keys)}"]
        return []
    return run_check(check)


def problems_07_b(M, q_avg, keys: torch.Tensor, values: torch.Tensor, basis_a: torch.Tensor, basis_b: torch.Tensor,
                  pair: tuple[int, int] = (1, 4), atol: float = 1e-3) -> list[str]:
    """M(v_a + v_b) = v_a on A and B (see m_problems); attend(q_avg) = the average of the pair's values."""
    return m_problems(M, basis_a, basis_b) + average_problems(q_avg, "q_avg", keys, values, pair, atol)


# --- 07 (c): one head, a vanishing covariance ----------------------------------------------------

def problems_07_c(q_single, means: torch.Tensor, values: torch.Tensor, a: int, b: int,
                  atol: float = 1e-3) -> list[str]:
    """In the limit the question takes (the covariance alpha I with alpha -> 0) every key is its mean, so c is
    attend(q_single, means, values); it must be within ``atol`` of (v_a + v_b) / 2.

    No keys are sampled: for a fixed query c is continuous in the keys, so its limit as alpha -> 0 is its value
    at the means, whatever the query's scale (sampling at a small alpha instead adds noise that grows with the
    scale, and rejects right answers with a large factor).
    """
    return average_problems(q_single, "q_single", means, values, (a, b), atol, target="(values[a] + values[b]) / 2",
                            where=", every key at its mean (the limit of a vanishing covariance)")


# --- 07 (d): two heads, a stretched k_a ----------------------------------------------------------

def stretched_keys(means: torch.Tensor, index: int, eps: float) -> torch.Tensor:
    """The keys at their means, except k_index = eps * mu_index (one outcome of the stretched covariance)."""
    keys = means.clone()
    keys[index] = eps * means[index]
    return keys


def problems_07_d(q_1, q_2, means: torch.Tensor, values: torch.Tensor, a: int, b: int, atol: float = 1e-3,
                  stretches: Sequence[float] = STRETCHES, stretch_atol: float = HEADS_ATOL) -> list[str]:
    """The two-head output (c_1 + c_2) / 2 with the keys at their means (the vanishing covariance of (i)) must be
    within ``atol`` of (v_a + v_b) / 2, and stay within ``stretch_atol`` of it with k_a stretched to eps mu_a for
    every eps in ``stretches`` (the low variance of (ii)).

    Deterministic: instead of sampling eps ~ N(1, 1/2) and counting near misses, the check tries chosen values of
    eps. Two heads that each copy one value pass at every one of them; one head that averages passes at eps = 1
    only, and one head averaging beside one copying fails at eps = 1 already.
    """
    def check():
        d = means.size(1)
        missing = _not_written(("q_1", q_1), ("q_2", q_2))
        if missing:
            return missing
        q1, q2 = as_tensor(q_1, "q_1", (d,)), as_tensor(q_2, "q_2", (d,))
        target = 0.5 * (values[a] + values[b])
        for eps in (1.0, *stretches):
            keys = stretched_keys(means, a, eps)
            gap = min(max_gap(0.5 * (c1 + c2), target) for c1 in _readings(q1, keys, values, (a, b))
                      for c2 in _readings(q2, keys, values, (a, b)))
            allowed = atol if eps == 1.0 else stretch_atol
            if gap > allowed:
                where = "every key at its mean" if eps == 1.0 else f"k_a stretched to {eps:g} times its mean"
                return [f"with q_1 and q_2, (c_1 + c_2) / 2 differs from (values[a] + values[b]) / 2 by up to "
                        f"{gap:.2g} (allowed: {allowed:g}) with {where}; head 1's largest attention weights are "
                        f"{_weights_summary(q1, keys)}, head 2's are {_weights_summary(q2, keys)}"]
        return []
    return run_check(check)


# --- 07 (e): keys, queries and values ------------------------------------------------------------

def problems_07_e(c2_plain, K, Q, V, X: torch.Tensor, u_b: torch.Tensor, u_c: torch.Tensor,
                  atol: float = 1e-3) -> list[str]:
    """c2_plain: c_2 with k = q = v = x; self_attention(X, K, Q, V) must give c_1 ~ u_b - u_c and c_2 ~ u_b."""
    d = X.size(1)
    problems = []

    def check_plain():
        got = as_tensor(c2_plain, "c2_plain", (d,))
        want = attend(X[1], X, X)  # x_2 attending over the x's, each its own key and value
        gap = max_gap(got, want)
        if gap > atol:
            return [f"c2_plain differs from c_2 of plain self-attention (k_i = q_i = v_i = x_i) by up to {gap:.2g} "
                    f"(allowed: {atol:g})"]
        return []

    def check_kqv():
        missing = _not_written(("K", K), ("Q", Q), ("V", V))
        if missing:
            return missing
        k, q, v = (as_tensor(m, name, (d, d)) for m, name in ((K, "K"), (Q, "Q"), (V, "V")))
        C = self_attention(X, k, q, v)
        wants = (("c_1", C[0], u_b - u_c, "u_b - u_c"), ("c_2", C[1], u_b, "u_b"))
        wrong = [f"{name} differs from {label} by up to {max_gap(got, want):.2g}" for name, got, want, label in wants
                 if max_gap(got, want) > atol]
        if not wrong:
            return []
        message = "with K, Q, V, self_attention(X, K, Q, V): " + "; ".join(wrong) + f" (allowed: {atol:g})"
        swapped = self_attention(X, q, k, v)
        if max_gap(swapped[0], u_b - u_c) <= atol and max_gap(swapped[1], u_b) <= atol:
            message = ("K and Q are exchanged (with them swapped it passes): K makes the keys (k_i = K x_i), Q the "
                       "queries; " + message)
        return [message]

    problems += run_check(check_plain)
    problems += run_check(check_kqv)
    return problems
