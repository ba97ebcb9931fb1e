"""The checks of notebook 08's numeric twins: permuting the input (a) and sinusoidal position embeddings (b).

Written once, as ``twins`` is for 07: the notebook's test cells call them on the notebook's own values, and the
grader calls them on the solution notebook's values and what a submission sent back. They call the student's
functions on inputs a seed draws. Nothing here computes a graded answer: (b)'s check looks at properties every
right Phi has (its pairs on the unit circle, turning at rates that shrink by 10000^(-2/d)); the comparison with
the formula entry by entry is a hidden check that lives with the grader.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from course_lib.checks.twins import NOT_WRITTEN, NotWritten, Problem, as_tensor, call_all, max_gap, run_check
from course_lib.gpt.attention_math import DTYPE, position_free_layer

PHI_ATOL = 1e-4  # accepts a right Phi computed in float32 (positions up to 512)
RATIO_RTOL = 1e-2  # relative precision of the one factor the rates shrink by, 10000^(-2/d)
BASE = 10000.0  # the formula's base: pair i turns by BASE^(-2i/d) radians per position


# --- 08 (a): permuting the input -----------------------------------------------------------------

def permutation_problems(P, T: int) -> list[str]:
    """P must be a T x T permutation matrix (any real or integer dtype) that moves every row."""
    def check():
        p = as_tensor(P, "P", (T, T), allow_bool=True)
        ones = torch.ones(T, dtype=DTYPE)
        if not bool(((p == 0) | (p == 1)).all()):
            raise Problem("P should hold only 0s and 1s; found other entries")
        if not (torch.equal(p.sum(0), ones) and torch.equal(p.sum(1), ones)):
            raise Problem(f"P should have exactly one 1 in every row and column; found row sums "
                           f"{p.sum(1).tolist()} and column sums {p.sum(0).tolist()}")
        fixed = int(torch.diagonal(p).sum())
        if fixed:
            raise Problem(f"P should move every row; it leaves {fixed} of {T} in place")
        return []
    return run_check(check)


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
            got = as_tensor(out, "permuted_output(P, X)", tuple(X_i.shape))
        except Problem as problem:
            problems.append(str(problem))
            break
        want = P_i @ position_free_layer(X_i, *params)  # part (a): the layer on the permuted input
        gap = max_gap(got, want)
        if gap > 1e-4 * max(1.0, float(want.abs().max())):
            problems.append(f"permuted_output(P, X) should compute the layer on the permuted input from its "
                            f"arguments P and X: for a new P and X it is off by up to {gap:.2g}")
            break
    return problems


def check_08_a(P, permuted_output, params: Sequence[torch.Tensor], T: int, d: int, seed: int) -> list[str]:
    """The notebook's form of the 08 (a) check: calls the student's function itself."""
    calls = calls_08_a(T, d, seed)
    return problems_08_a(P, call_all(permuted_output, calls), calls, params, T)


# --- 08 (b): sinusoidal position embeddings (public: properties only) ----------------------------

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
            phi = as_tensor(out, what, (T, d))
        except Problem as problem:
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
        return (f"a column pair should be the sine and cosine of one angle (on the unit circle): columns {2 * i} "
                f"and {2 * i + 1} at t={t} are ({float(s[t, i]):.5f}, {float(c[t, i]):.5f}), at distance "
                f"{float(radius[t, i]):.5f} from 0")
    start = torch.cat([s[0].abs(), (c[0] - 1).abs()])
    if bool((start > atol).any()):
        return ("row 0 should be sin 0, cos 0, sin 0, ... (even columns sine, odd cosine, every angle 0 at t=0); it "
                f"starts at {[round(float(x), 5) for x in phi[0, :4]]}{' ...' if d > 4 else ''}")
    if T < 2:
        return None
    turns = _turns(phi)
    rates = turns.mean(0)
    # a float32 Phi rounds angles by up to atol/3 at t = 511, so one step may differ by twice that
    uneven = (turns - rates).abs() > 2 * atol
    if bool(uneven.any()):
        t, i = (int(x) for x in uneven.nonzero()[0])
        return (f"a pair's angle should grow by the same amount at every step (t times the pair's rate): columns "
                f"{2 * i} and {2 * i + 1} turn by {float(turns[t, i]):.5f} rad from t={t} to t={t + 1}, "
                f"{float(rates[i]):.5f} on average")
    if abs(float(rates[0]) - 1) > atol:
        return (f"columns 0 and 1 should turn by one radian per position (angle t / 10000^0, in radians, not "
                f"degrees); they turn by {float(rates[0]):.5f}")
    if rates.numel() >= 2:
        ratios = rates[1:] / rates[:-1]
        if not bool(((ratios > 0) & (ratios < 1)).all()):
            i = int((~((ratios > 0) & (ratios < 1))).nonzero()[0])
            return (f"the turning rates should shrink from each pair to the next (a larger power of 10000 divides t): "
                    f"pair {i} (columns {2 * i}, {2 * i + 1}) turns by {float(rates[i]):.5f} rad per position, pair "
                    f"{i + 1} by {float(rates[i + 1]):.5f}")
        spread = (ratios - ratios[0]).abs() / ratios[0]
        if bool((spread > RATIO_RTOL).any()):
            i = int((spread > RATIO_RTOL).nonzero()[0])
            return (f"the rates should shrink by one factor from pair to pair (the exponent grows by one step): "
                    f"{float(ratios[0]):.5f} from pair 0 to pair 1 but {float(ratios[i]):.5f} from pair {i} to "
                    f"pair {i + 1}")
        factor, want = float(ratios[0]), BASE ** (-2 / d)
        if abs(factor / want - 1) > RATIO_RTOL:
            return (f"check the base 10000, the 2 in the exponent 2i/d and the d given: pair i's angle is "
                    f"t / 10000^(2i/d), so at d={d} the rates should shrink by 10000^(-2/d) = {want:.5f} a pair, not "
                    f"{factor:.5f}")
    return None


def problems_08_b(calls: Sequence[Sequence[int]], outputs: Sequence, atol: float = PHI_ATOL) -> list[str]:
    """``outputs[i]`` for ``calls[i] = (T, d)`` must have the properties of a sinusoidal Phi (phi_properties)."""
    return phi_call_problems(calls, outputs, lambda phi, T, d: phi_properties(phi, T, d, atol))


def check_08_b(position_embeddings, calls: Sequence[Sequence[int]]) -> list[str]:
    """The notebook's form of the public 08 (b) check: calls the student's function itself."""
    return problems_08_b(calls, call_all(position_embeddings, calls))
