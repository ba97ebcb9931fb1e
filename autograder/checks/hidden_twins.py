"""The hidden checks of the numeric twins: the grader's, never shipped to students.

08 (b)'s public check (``course_lib.twin_checks.phi_properties``) looks at what every
right Phi shows without computing Phi; the check here compares the student's Phi
with the formula itself, entry by entry. It runs in two places, like every check:
the hidden test cell ``08-b-hidden`` (in the grading kernel, sizes fixed below) and
the grader's judge (``autograder.checks.judges.twin_08_b_hidden``, fresh sizes per grading).
Its messages say where Phi differs and which way, never the formula's value.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch

from course_lib.attention_math import DTYPE
from course_lib.twin_checks import (
    PHI_ATOL,
    assert_passes,
    call_all,
    phi_call_problems,
    phi_properties,
)

HIDDEN_SIZES = ((512, 16), (7, 6), (40, 10), (3, 2), (100, 64))  # the hidden cell's (T, d)


def sinusoidal_phi(T: int, d: int) -> torch.Tensor:
    """Phi[t, 2i] = sin(t / 10000^(2i/d)), Phi[t, 2i+1] = cos(t / 10000^(2i/d)), in float64."""
    angles = torch.arange(T, dtype=DTYPE)[:, None] / torch.pow(
        torch.tensor(10000.0, dtype=DTYPE), torch.arange(0, d, 2, dtype=DTYPE) / d)
    phi = torch.empty(T, d, dtype=DTYPE)
    phi[:, 0::2], phi[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return phi


def _rate_hint(phi: torch.Tensor, want: torch.Tensor) -> str:
    """Which way the pairs' rates are off, from the second pair's turn (the first pair's is checked in public)."""
    if phi.size(0) < 2 or phi.size(1) < 4:
        return ""
    got_turn = float(torch.atan2(phi[1, 2], phi[1, 3]))
    want_turn = float(torch.atan2(want[1, 2], want[1, 3]))
    if abs(got_turn - want_turn) <= PHI_ATOL:
        return ""
    way = "quickly" if got_turn < want_turn else "slowly"
    return (f"; the pairs' turning rates shrink too {way} from one pair to the next (look at the base and the "
            "exponent of the formula)")


def phi_exact(phi: torch.Tensor, T: int, d: int, atol: float = PHI_ATOL) -> str | None:
    """The public properties first (their messages are the most helpful), then Phi against the formula."""
    message = phi_properties(phi, T, d, atol)
    if message:
        return message
    want = sinusoidal_phi(T, d)
    off = (phi - want).abs() > atol
    if not bool(off.any()):
        return None
    # where and how often, not by how much: the size of a gap next to the student's own value would give the
    # formula's value away
    t, j = (int(x) for x in off.nonzero()[0])
    return (f"differs from the formula by more than {atol:g} in {int(off.sum())} of {T * d} entries, first in "
            f"column {j} at t={t}{_rate_hint(phi, want)}")


def problems_08_b_exact(calls: Sequence[Sequence[int]], outputs: Sequence, atol: float = PHI_ATOL) -> list[str]:
    """``outputs[i]`` must be Phi for ``calls[i] = (T, d)`` within ``atol`` in every entry."""
    return phi_call_problems(calls, outputs, lambda phi, T, d: phi_exact(phi, T, d, atol))


def check_08_b_hidden(position_embeddings, sizes: Sequence[Sequence[int]] = HIDDEN_SIZES) -> None:
    """The hidden test cell 08-b-hidden: Phi against the formula, entry by entry, at several sizes."""
    from autograder.checks.hidden import judged_outside

    judged_outside()
    assert_passes(problems_08_b_exact(sizes, call_all(position_embeddings, sizes)))
