"""The span judge spells every example at once: is that exactly what spelling each one in turn gave?"""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.span_checks import _spelled
from course_lib.vocab import MASK_CHAR, PAD_CHAR

ITOS = [PAD_CHAR, MASK_CHAR, *" .aberilnost"]


def spelled_one_by_one(xs: list[list[int]], ys: list[list[int]], itos: list[str]) -> list[str] | None:
    """The judge's spelling before it was vectorised: example by example, Python's indexing."""
    texts = []
    for x, y in zip(xs, ys):
        if max(x + y) >= len(itos):
            return None
        texts.append("".join(map(itos.__getitem__, x)) + itos[y[-1]])
    return texts


def _outcome(spell, *args):
    try:
        return spell(*args)
    except IndexError:
        return IndexError


n = len(ITOS)
ODD = st.sampled_from([-2 * n, -n - 1, -n, -1, n, n + 1, 2 * n])  # each side of both ends


@st.composite
def examples(draw) -> tuple[list[list[int]], list[list[int]]]:
    """x and y rows of ids inside the vocabulary, with up to three odd ids anywhere: a negative one (Python wraps
    those within reach) or one past either end."""
    width, count = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    inside = st.lists(st.integers(0, len(ITOS) - 1), min_size=width, max_size=width)
    xs, ys = draw(st.lists(inside, min_size=count, max_size=count)), draw(st.lists(inside, min_size=count, max_size=count))
    for _ in range(draw(st.integers(0, 4))):
        rows = draw(st.sampled_from([xs, ys]))
        rows[draw(st.integers(0, count - 1))][draw(st.integers(0, width - 1))] = draw(ODD)
    return xs, ys


@settings(max_examples=500, deadline=None)
@given(rows=examples())
def test_every_example_spelled_at_once_is_each_spelled_in_turn(rows):
    """For any ids (a negative one, one past the vocabulary, in any example), are the texts, the None and the
    IndexError what spelling each example in turn gives?"""
    xs, ys = rows
    expected = _outcome(spelled_one_by_one, xs, ys, ITOS)
    assert _outcome(_spelled, torch.tensor(xs), torch.tensor(ys), ITOS) == expected


@pytest.mark.parametrize("itos", [["\0", *ITOS], [*ITOS[:-1], "ab"]], ids=["NUL", "two characters"])
def test_symbols_numpy_cannot_hold_are_spelled_too(itos):
    """Does a vocabulary holding a NUL or a longer symbol still spell each example whole?"""
    xs, ys = [[0, 1, len(itos) - 1], [2, 0, 0]], [[1, len(itos) - 1, 0], [0, 0, len(itos) - 1]]
    assert _spelled(torch.tensor(xs), torch.tensor(ys), itos) == spelled_one_by_one(xs, ys, itos)
