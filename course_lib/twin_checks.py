"""The checks of the numeric twins (notebooks 07 and 08), written once.

The same functions run in two places: the notebooks' locked test cells call them
with the notebook's own values, and the grader's judges (``autograder.checks.judges``)
call them with the solution notebook's values and the raw tensors a submission
sent back. Each ``problems_*`` function returns a list of messages (empty: the
twin passes). A message says what was found and what was expected, never what
the answer is. Anything may come in (a list, an int tensor, the wrong shape):
the checks turn it into a message instead of raising.

The checks judge the *effect* of an answer (the output ``c``, ``M`` applied to
vectors, the rows of ``Phi``), so any answer the maths accepts passes, in
float32 as well as float64. The 07 checks sample nothing: where a question takes
a limit (a vanishing covariance) the check evaluates the limit itself, and where
it asks about a random stretch it evaluates chosen stretches, so the verdict is
the same on every run and at every scale of the answer. The 08 checks call the
student's functions on inputs a seed draws (the grader draws fresh ones).

Nothing here computes a graded answer: the 08 (b) check looks at properties
every right Phi has (its pairs on the unit circle, turning at rates that shrink
by 10000^(-2/d)); the comparison with the formula entry by entry is a hidden
check that lives with the grader.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from .attention_math import DTYPE, attend, attention_weights, position_free_layer, self_attention
from .check_common import type_found
from .check_failed import CheckFailed

# Two scores whose gap is rounding-sized (at most this fraction of the larger one) are read two ways, as a tie
# and as they stand, and the answer passes if either reading does. A query built as beta (k_i + k_j) ties them
# in exact arithmetic; stored in float32 (or scaled far up) its own rounding parts them by about 1e-7 of their
# size (1e-6 with large parts no key sees), which a large beta turns into a lopsided softmax. The maths accepts
# that query at every scale, so the rounding must not count; reading the scores as they stand as well means a
# query that rightly separates two keys is never judged as a tie.
TIE_RTOL = 1e-5
# (d): the lengths of k_a (k_a = eps mu_a) the check tries. eps ~ N(1, 1/2) in the question; it says to ignore
# eps < 0, and just above 0 no finite factor copies (the score eps * beta is small), so the check tries the
# bulk of the distribution, on both sides of 1: one head that averages fails at every one of them
STRETCHES = (0.5, 0.75, 1.25, 1.5, 2.0, 3.0)
HEADS_ATOL = 0.05  # at a stretched length "stays near the average" is a behaviour, not a value
PHI_ATOL = 1e-4  # accepts a right Phi computed in float32 (positions up to 512)
RATIO_RTOL = 1e-2  # the pairs' rates must shrink by one factor, 10000^(-2/d), to this relative precision
BASE = 10000.0  # the formula's base: pair i turns by BASE^(-2i/d) radians per position


class _Problem(Exception):
    """One message ends the check early (later checks would only repeat it)."""


# An answer still None (the placeholder its cell sets, `q_copy = None`, until it is written) or a function that
# still raises NotImplementedError is "not written yet", in the notebook and at grading alike
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


def assert_passes(problems: Sequence[str]) -> None:
    """For the notebooks' test cells: fail with every message, or pass silently.

    What is not written yet comes first, in one line ("M and q_avg are not written yet: ..."), then the
    other messages, one line each."""
    if not problems:
        return
    suffix = f" {NOT_WRITTEN}"
    unwritten = list(dict.fromkeys(p.removesuffix(suffix) for p in problems if p.endswith(suffix)))
    lines = [f"- {p}" for p in problems if not p.endswith(suffix)]
    if unwritten:
        one = len(unwritten) == 1
        lines.insert(0, f"{_and(unwritten)} {'is' if one else 'are'} not written yet: write {'it' if one else 'them'} "
                        "in the cell above and run it")
    raise CheckFailed("\n".join(lines))


def _shape(t) -> str:
    return "x".join(str(n) for n in t.shape) if t.dim() else "a scalar"


def _tensor(value, name: str, shape: tuple[int, ...] | None = None, *, allow_bool: bool = False) -> torch.Tensor:
    """``value`` as a float64 tensor of ``shape``, or a _Problem saying what it is instead."""
    if value is None:
        raise _Problem(f"{name} {NOT_WRITTEN}")
    if not isinstance(value, torch.Tensor):
        # the type only: a reason never echoes what a submission sent back
        raise _Problem(f"{name} should be a torch tensor; found {type_found(value)}")
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
    when only rounding parts them (see TIE_RTOL); any other gap, and every other score, counts as it is."""
    scores = keys @ q
    readings = [torch.softmax(scores, dim=0) @ values]
    i, j = pair
    if abs(float(scores[i] - scores[j])) <= TIE_RTOL * max(abs(float(scores[i])), abs(float(scores[j]))):
        tied = scores.clone()
        tied[i] = tied[j] = (scores[i] + scores[j]) / 2
        readings.append(torch.softmax(tied, dim=0) @ values)
    return readings


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

def m_problems(M, basis_a: torch.Tensor, basis_b: torch.Tensor, atol: float = 1e-5) -> list[str]:
    """M must leave every basis vector of A unchanged and send every basis vector of B to 0.

    By linearity that is exactly "M(v_a + v_b) = v_a for every v_a in A and v_b in B", checked without
    sampling: any pair is a combination of these basis vectors.
    """
    def check():
        d = basis_a.size(1)
        m = _tensor(M, "M", (d, d))
        moved = _gap(basis_a @ m.T, basis_a)  # rows: M a_j - a_j
        if moved > atol:
            return [f"M changes a basis vector of A by up to {moved:.2g} (allowed: {atol:g}); M(v_a + v_b) = v_a for "
                    "every pair needs M v_a = v_a for every v_a in A"]
        kept = _gap(basis_b @ m.T, torch.zeros_like(basis_b))
        if kept > atol:
            return [f"M sends a basis vector of B to a vector with a coordinate as large as {kept:.2g} (allowed: "
                    f"{atol:g}); M(v_a + v_b) = v_a for every pair needs M v_b = 0 for every v_b in B"]
        return []
    return _run(check)


def average_problems(q, name: str, keys: torch.Tensor, values: torch.Tensor, pair: tuple[int, int], atol: float,
                     where: str = "", target: str | None = None) -> list[str]:
    """c for the query must be within ``atol`` of the average of the two values of ``pair`` (named ``target``)."""
    def check():
        v = _tensor(q, name, (keys.size(1),))
        i, j = pair
        target_c = 0.5 * (values[i] + values[j])
        gap = min(_gap(c, target_c) for c in _readings(v, keys, values, pair))
        if gap > atol:
            label = target or f"(values[{i}] + values[{j}]) / 2"
            return [f"with {name}{where}, c differs from {label} by up to {gap:.2g} (allowed: {atol:g}); its "
                    f"largest attention weights are {_weights_summary(v, keys)}"]
        return []
    return _run(check)


def problems_07_b(M, q_avg, keys: torch.Tensor, values: torch.Tensor, basis_a: torch.Tensor, basis_b: torch.Tensor,
                  pair: tuple[int, int] = (1, 4), atol: float = 1e-3) -> list[str]:
    """M(v_a + v_b) = v_a on A and B (see m_problems); attend(q_avg) = the average of the pair's values."""
    return m_problems(M, basis_a, basis_b) + average_problems(q_avg, "q_avg", keys, values, pair, atol)


# --- 07 (c): one head, a vanishing covariance ------------------------------------------------------

def problems_07_c(q_single, means: torch.Tensor, values: torch.Tensor, a: int, b: int,
                  atol: float = 1e-3) -> list[str]:
    """In the limit the question takes (the covariance alpha I with alpha -> 0) every key is its mean, so c is
    attend(q_single, means, values); it must be within ``atol`` of (v_a + v_b) / 2.

    No keys are sampled: for a fixed query c is continuous in the keys, so its limit as alpha -> 0 is its value
    at the means, whatever the query's scale (sampling at a small alpha instead adds noise that grows with the
    scale, and rejects right answers with a large factor).
    """
    return average_problems(q_single, "q_single", means, values, (a, b), atol, target="(values[a] + values[b]) / 2",
                            where=" and every key at its mean (the limit of a vanishing covariance)")


# --- 07 (d): two heads, a stretched k_a -------------------------------------------------------------

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
        q1, q2 = _tensor(q_1, "q_1", (d,)), _tensor(q_2, "q_2", (d,))
        target = 0.5 * (values[a] + values[b])
        for eps in (1.0, *stretches):
            keys = stretched_keys(means, a, eps)
            gap = min(_gap(0.5 * (c1 + c2), target) for c1 in _readings(q1, keys, values, (a, b))
                      for c2 in _readings(q2, keys, values, (a, b)))
            allowed = atol if eps == 1.0 else stretch_atol
            if gap > allowed:
                where = "with every key at its mean" if eps == 1.0 else f"with k_a stretched to {eps:g} times its mean"
                return [f"{where}, (c_1 + c_2) / 2 differs from (values[a] + values[b]) / 2 by up to {gap:.2g} "
                        f"(allowed: {allowed:g}); head 1's largest attention weights are "
                        f"{_weights_summary(q1, keys)}, head 2's are {_weights_summary(q2, keys)}"]
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
        missing = _not_written(("K", K), ("Q", Q), ("V", V))
        if missing:
            return missing
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
    ``calls[i] = (P_i, X_i)``.

    The seed only chooses where the layer is evaluated; nothing is judged by frequency. A right answer differs
    from ``P_i @ layer(X_i)`` by rounding alone, about 1e-15 of the output's size in float64 and 1e-6 in float32,
    far inside the 1e-4 allowed on any draw (benchmarks/check_false_rejection.py measures it on 1000 seeds).
    """
    problems = permutation_problems(P, T)
    if len(outputs) != len(calls):
        return problems + [f"permuted_output gave {len(outputs)} results for {len(calls)} calls"]
    for (P_i, X_i), out in zip(calls, outputs):
        if isinstance(out, NotWritten):
            problems.append(f"permuted_output {NOT_WRITTEN}")
            break
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


# --- 08 (b): sinusoidal position embeddings (public: properties only) ------------------------------

PhiJudge = Callable[[torch.Tensor, int, int], "str | None"]


def phi_call_problems(calls: Sequence[Sequence[int]], outputs: Sequence, judge: PhiJudge) -> list[str]:
    """Each ``outputs[i]`` must be a real (T, d) tensor for ``calls[i] = (T, d)``, and ``judge(phi, T, d)`` must
    find nothing wrong with it (it returns a message or None). The first problem ends the check."""
    if len(outputs) != len(calls):
        return [f"position_embeddings gave {len(outputs)} results for {len(calls)} calls"]
    for (T, d), out in zip(calls, outputs):
        what = f"position_embeddings({T}, {d})"
        if isinstance(out, NotWritten):
            return [f"position_embeddings {NOT_WRITTEN}"]
        if isinstance(out, Exception):
            return [f"{what} {out}"]
        try:
            phi = _tensor(out, what, (T, d))
        except _Problem as problem:
            return [str(problem)]
        message = judge(phi, T, d)
        if message:
            return [f"{what}: {message}"]
    return []


def _turns(phi: torch.Tensor) -> torch.Tensor:
    """The angle each column pair turns through from one position to the next, shape (T - 1, d // 2).

    A pair (sin of an angle, cos of it) is the point (cos, sin) on the unit circle; the turn between two points
    is atan2 of their cross and dot products, in (-pi, pi]. Measured from the student's rows, nothing else.
    """
    s, c = phi[:, 0::2], phi[:, 1::2]
    cross = c[:-1] * s[1:] - s[:-1] * c[1:]
    dot = c[:-1] * c[1:] + s[:-1] * s[1:]
    return torch.atan2(cross, dot)


def phi_properties(phi: torch.Tensor, T: int, d: int, atol: float = PHI_ATOL) -> str | None:
    """What every right Phi shows, whatever the formula's constants (None: all of it holds).

    Each (even, odd) column pair is the sine and cosine of one angle, a point on the unit circle; every angle
    is 0 at t = 0; each pair's angle grows by the same turn at every step (it is t times a rate of its own);
    the first pair turns by one radian per position; and the rates shrink by one factor from pair to pair, the
    formula's 10000^(-2/d) (so another base, a missing factor 2 or a d typed in shows here). Whether every entry
    is the formula's is left to the hidden check (which a table of the public sizes' values would not pass).

    Nothing is sampled. A right Phi in float32 rounds each angle t / 10000^(2i/d) by at most half a float32 step
    of 511 (3e-5) for the 512 positions the checks ask for, so a pair's point stays on the circle, and each turn
    within twice that of the pair's mean turn, inside ``atol`` and ``2 * atol`` at every size.
    """
    s, c = phi[:, 0::2], phi[:, 1::2]
    radius = torch.sqrt(s ** 2 + c ** 2)
    off = (radius - 1).abs() > atol
    if bool(off.any()):
        t, i = (int(x) for x in off.nonzero()[0])
        return (f"columns {2 * i} and {2 * i + 1} at t={t} are ({float(s[t, i]):.5f}, {float(c[t, i]):.5f}), at "
                f"distance {float(radius[t, i]):.5f} from 0: the two columns of a pair are the sine and the cosine "
                "of one angle, a point on the unit circle")
    start = torch.cat([s[0].abs(), (c[0] - 1).abs()])
    if bool((start > atol).any()):
        return ("at t=0 every angle is 0, so every even column should start at sin 0 and every odd column at cos 0; "
                f"row 0 starts at {[round(float(x), 5) for x in phi[0, :4]]}{' ...' if d > 4 else ''}")
    if T < 2:
        return None
    turns = _turns(phi)
    rates = turns.mean(0)
    # a float32 Phi rounds its angles by up to atol/3 at t = 511: one step may then differ by twice that
    uneven = (turns - rates).abs() > 2 * atol
    if bool(uneven.any()):
        t, i = (int(x) for x in uneven.nonzero()[0])
        return (f"columns {2 * i} and {2 * i + 1} turn by {float(turns[t, i]):.5f} rad from t={t} to t={t + 1} but by "
                f"{float(rates[i]):.5f} rad per step on average: a pair's angle should grow by the same amount at "
                "every step (it is t times a rate of the pair's own)")
    if abs(float(rates[0]) - 1) > atol:
        return (f"columns 0 and 1 turn by {float(rates[0]):.5f} rad per position; their angle is t / 10000^0, "
                "so they should turn by one radian per position (in radians, not degrees)")
    if rates.numel() >= 2:
        ratios = rates[1:] / rates[:-1]
        if not bool(((ratios > 0) & (ratios < 1)).all()):
            i = int((~((ratios > 0) & (ratios < 1))).nonzero()[0])
            return (f"pair {i} (columns {2 * i}, {2 * i + 1}) turns by {float(rates[i]):.5f} rad per position and "
                    f"pair {i + 1} by {float(rates[i + 1]):.5f}: the turning rates should shrink from each pair to "
                    "the next (a larger power of 10000 divides t)")
        spread = (ratios - ratios[0]).abs() / ratios[0]
        if bool((spread > RATIO_RTOL).any()):
            i = int((spread > RATIO_RTOL).nonzero()[0])
            return (f"the turning rates shrink by {float(ratios[0]):.5f} from pair 0 to pair 1 but by "
                    f"{float(ratios[i]):.5f} from pair {i} to pair {i + 1}: the exponent grows by the same step from "
                    "pair to pair, so the rates should shrink by the same factor each time")
        factor, want = float(ratios[0]), BASE ** (-2 / d)
        if abs(factor / want - 1) > RATIO_RTOL:
            return (f"the turning rates shrink by {factor:.5f} from each pair to the next; pair i's angle is "
                    f"t / 10000^(2i/d), so at d={d} they should shrink by 10000^(-2/d) = {want:.5f}: look at the base "
                    "10000, the factor 2 in the exponent 2i/d, and the d the function is given")
    return None


def problems_08_b(calls: Sequence[Sequence[int]], outputs: Sequence, atol: float = PHI_ATOL) -> list[str]:
    """``outputs[i]`` for ``calls[i] = (T, d)`` must have the properties of a sinusoidal Phi (phi_properties)."""
    return phi_call_problems(calls, outputs, lambda phi, T, d: phi_properties(phi, T, d, atol))


def check_08_b(position_embeddings, calls: Sequence[Sequence[int]]) -> list[str]:
    """The notebook's form of the public 08 (b) check: calls the student's function itself."""
    return problems_08_b(calls, call_all(position_embeddings, calls))
