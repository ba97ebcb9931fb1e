"""The numeric twins (07, 08) as the grader judges them, and 08 (b)'s hidden check; never shipped.

A twin's check is written once, in ``course_lib.checks.twins`` (08's in
``course_lib.checks.twins_positions``): the notebook's test cell runs it on the notebook's own
values, and the judges here run it on the solution notebook's given values (``given``) and the raw
values a submission sent back. The 07 judges sample nothing (no grading seed enters them); the 08
judges call the student's functions on inputs drawn from the grading's seed (``*_inputs``).

08 (b) has two cells. The public one (``08-b-test``) checks properties every right Phi has without
computing Phi; the hidden one (``08-b-hidden``, ``phi_exact``) compares Phi with the formula entry
by entry. The hidden cell runs in nbgrader's grading kernel too, so this module imports only
course_lib and ``autograder.checks.hidden``. Messages say where Phi differs and which way, never
the formula's value.
"""
from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence

import torch

from course_lib.checks.inputs import HANDOUT_NUMBERS, draw_size
from course_lib.checks.twins import (
    assert_passes,
    call_all,
    problems_07_a,
    problems_07_b,
    problems_07_c,
    problems_07_d,
    problems_07_e,
)
from course_lib.checks.twins_positions import (
    PHI_ATOL,
    calls_08_a,
    phi_call_problems,
    phi_properties,
    problems_08_a,
    problems_08_b,
)
from course_lib.gpt.attention_math import DTYPE
from course_lib.layout import SOLUTIONS_DIR
from course_lib.loader.load import load_notebook

NB07, NB08 = "07_attention_exploration.ipynb", "08_position_embeddings.ipynb"
HIDDEN_SIZES = ((512, 16), (7, 6), (40, 10), (3, 2), (100, 64))  # the hidden cell's (T, d)


@functools.lru_cache(maxsize=4)
def given(notebook: str):
    """A solution notebook's own values (keys, X, ...), which the twins are judged on."""
    return load_notebook(SOLUTIONS_DIR / notebook, module_name=f"judge_given_{notebook[:2]}")


# --- inputs: the names a twin sends back, and the calls of the student's functions ---------------

def names_inputs(*names: str, calls: Callable[[int], dict] | None = None) -> Callable[[random.Random], dict]:
    """Names to send back, a fresh seed, and optionally fresh calls of the student's functions."""
    def inputs(rng: random.Random) -> dict:
        seed = rng.randrange(2 ** 31)
        return {"names": list(names), "seed": seed, **({"calls": calls(seed)} if calls else {})}
    return inputs


def permuted_output_calls(seed: int) -> dict:
    """08 (a)'s calls of ``permuted_output``, drawn from ``seed``."""
    g = given(NB08)
    return {"permuted_output": [list(c) for c in calls_08_a(g.T, g.d, seed)]}


def _phi_sizes(rng: random.Random, positions: int, dimensions: int) -> list[list[int]]:
    """The notebook's (512, 16) and three (T, d) the handout never shows: T from 9 to ``positions``,
    d even from 14 to ``dimensions`` (a typed-in d, say 16, is wrong at all three)."""
    evens = [d for d in range(14, dimensions + 1, 2) if d not in HANDOUT_NUMBERS]
    return [[512, 16], *([draw_size(rng, 9, positions), rng.choice(evens)] for _ in range(3))]


def phi_inputs(rng: random.Random) -> dict:
    """The public check's sizes: the notebook's (512, 16) and three drawn ones up to 80 x 24."""
    return {"calls": {"position_embeddings": _phi_sizes(rng, 80, 24)}}


def phi_hidden_inputs(rng: random.Random) -> dict:
    """The hidden check's sizes: drawn up to 300 x 64 (float32 stays within 1e-4 there)."""
    return {"calls": {"position_embeddings": _phi_sizes(rng, 300, 64)}}


# --- judges: course_lib's checks on the solution's given values and the values sent back ---------

def _output(output) -> dict:
    return output if isinstance(output, dict) else {}


def _results(output, name: str, calls: list) -> list:
    got = _output(output).get(name)
    if not isinstance(got, list):
        return [RuntimeError(f"did not come back ({type(got).__name__})")] * len(calls)
    return got


def twin_07_a(inputs: dict, output) -> list[str]:
    """07 (a)'s check of the values sent back, on the solution's given values."""
    g = given(NB07)
    return problems_07_a(_output(output).get("q_copy"), g.keys, g.values)


def twin_07_b(inputs: dict, output) -> list[str]:
    """07 (b)'s check of the values sent back, on the solution's given values."""
    g, got = given(NB07), _output(output)
    return problems_07_b(got.get("M"), got.get("q_avg"), g.keys, g.values, g.basis_a, g.basis_b)


def twin_07_c(inputs: dict, output) -> list[str]:
    """07 (c)'s check of the values sent back, on the solution's given values."""
    g = given(NB07)
    return problems_07_c(_output(output).get("q_single"), g.means, g.values, g.a, g.b)


def twin_07_d(inputs: dict, output) -> list[str]:
    """07 (d)'s check of the values sent back, on the solution's given values."""
    g, got = given(NB07), _output(output)
    return problems_07_d(got.get("q_1"), got.get("q_2"), g.means, g.values, g.a, g.b)


def twin_07_e(inputs: dict, output) -> list[str]:
    """07 (e)'s check of the values sent back, on the solution's given values."""
    g, got = given(NB07), _output(output)
    return problems_07_e(got.get("c2_plain"), got.get("K"), got.get("Q"), got.get("V"), g.X, g.u_b, g.u_c)


def twin_08_a(inputs: dict, output) -> list[str]:
    """08 (a)'s check of ``P`` and of the fresh calls of ``permuted_output``."""
    g = given(NB08)
    calls = [tuple(c) for c in inputs["calls"]["permuted_output"]]
    return problems_08_a(_output(output).get("P"), _results(output, "permuted_output", calls), calls, g.params, g.T)


def twin_08_b(inputs: dict, output) -> list[str]:
    """The public check's properties of Phi, on fresh sizes."""
    calls = [tuple(c) for c in inputs["calls"]["position_embeddings"]]
    return problems_08_b(calls, _results(output, "position_embeddings", calls))


def twin_08_b_hidden(inputs: dict, output) -> list[str]:
    """Phi against the formula itself, entry by entry, on fresh sizes (the hidden cell's check)."""
    calls = [tuple(c) for c in inputs["calls"]["position_embeddings"]]
    return problems_08_b_exact(calls, _results(output, "position_embeddings", calls))


# --- 08 (b)'s hidden check: Phi against the formula ----------------------------------------------

def sinusoidal_phi(T: int, d: int) -> torch.Tensor:
    """Phi[t, 2i] = sin(t / 10000^(2i/d)), Phi[t, 2i+1] = cos(t / 10000^(2i/d)), in float64."""
    angles = torch.arange(T, dtype=DTYPE)[:, None] / torch.pow(
        torch.tensor(10000.0, dtype=DTYPE), torch.arange(0, d, 2, dtype=DTYPE) / d)  # (T, d/2)
    phi = torch.empty(T, d, dtype=DTYPE)
    phi[:, 0::2], phi[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return phi


def _rate_hint(phi: torch.Tensor, want: torch.Tensor) -> str:
    """Which way the pairs' rates are off, from the second pair's turn (public checks the first); "" if neither."""
    if phi.size(0) < 2 or phi.size(1) < 4:
        return ""
    got_turn = float(torch.atan2(phi[1, 2], phi[1, 3]))
    want_turn = float(torch.atan2(want[1, 2], want[1, 3]))
    if abs(got_turn - want_turn) <= PHI_ATOL:
        return ""
    way = "quickly" if got_turn < want_turn else "slowly"
    return f"the turning rates shrink too {way} from pair to pair (check the formula's base and exponent): "


def phi_exact(phi: torch.Tensor, T: int, d: int, atol: float = PHI_ATOL) -> str | None:
    """The public properties first (their messages help most), then Phi against the formula."""
    message = phi_properties(phi, T, d, atol)
    if message:
        return message
    want = sinusoidal_phi(T, d)
    off = (phi - want).abs() > atol
    if not bool(off.any()):
        return None
    # where and how often, never by how much: the gap plus the student's value gives the formula's
    t, j = (int(x) for x in off.nonzero()[0])
    return (f"{_rate_hint(phi, want)}differs from the formula by more than {atol:g} in {int(off.sum())} of {T * d} "
            f"entries, first in column {j} at t={t}")


def problems_08_b_exact(calls: Sequence[Sequence[int]], outputs: Sequence, atol: float = PHI_ATOL) -> list[str]:
    """``outputs[i]`` must be Phi for ``calls[i] = (T, d)`` within ``atol`` in every entry."""
    return phi_call_problems(calls, outputs, lambda phi, T, d: phi_exact(phi, T, d, atol))


def check_08_b_hidden(position_embeddings, sizes: Sequence[Sequence[int]] = HIDDEN_SIZES) -> None:
    """The hidden test cell 08-b-hidden: Phi against the formula, entry by entry, at ``sizes``."""
    from autograder.checks.hidden import judged_outside

    judged_outside()
    assert_passes(problems_08_b_exact(sizes, call_all(position_embeddings, sizes)))
