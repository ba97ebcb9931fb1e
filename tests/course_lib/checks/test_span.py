"""The span part's tests (03: course_lib/checks/span.py, and the hidden 03-span-hidden).

The judge spells every example at once: is that exactly what spelling each one in turn gave? And the checks of
the checks: 03-span-public and 03-span-hidden pass right span corruptions written other ways and fail plausible
wrong ones with a message naming the mistake, graded as the grader grades them (tests/check_grading.py). The
variants change one step of SpanSteps, span corruption written out step by step;
tests/autograder/checks/test_verdicts.py, tests/autograder/checks/test_answer_families.py and
benchmarks/check_false_rejection.py load this file for them.
"""
from __future__ import annotations

import random

import check_grading
import pytest
import torch
from check_grading import SEEDS, assert_fails, with_parts
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.checks.span import _spelled
from course_lib.gpt.datasets import CharCorruptionDatasetBase
from course_lib.gpt.vocab import MASK_CHAR, PAD_CHAR

ITOS = [PAD_CHAR, MASK_CHAR, *" .aberilnost"]
MASK, PAD = MASK_CHAR, PAD_CHAR

# the shared fixtures, bound here for pytest to find them (imported by name, ruff would call them unused, then
# redefined by each test's arguments)
grade, prepared = check_grading.grade, check_grading.prepared


# --- the judge's spelling: every example at once, as each one in turn ------------------------------------

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
    rows_of = st.lists(inside, min_size=count, max_size=count)
    xs, ys = draw(rows_of), draw(rows_of)
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


# --- checks of the checks: span corruption graded the way autograder.grading.grade does ------------------

class SpanSteps(CharCorruptionDatasetBase):
    """Span corruption written out step by step (a right answer); each variant changes one step."""

    def __init__(self, data: str, block_size: int):
        super().__init__(data, block_size)
        # each character's id at its code point: encode's table (-1 where no character of the vocabulary is)
        self.ids = torch.full((max(map(ord, self.stoi)) + 1,), -1, dtype=torch.long)
        self.ids[torch.tensor([ord(c) for c in self.stoi])] = torch.tensor(list(self.stoi.values()))

    def kept_length(self, document: str) -> int:
        return random.randint(4, int(self.block_size * 7 / 8))

    def truncate(self, document: str) -> str:
        return document[: self.kept_length(document)]

    def masked_length(self, n: int) -> int:
        return random.randint(1, max(1, n // 2 - 1))

    def split(self, text: str) -> tuple[str, str, str]:
        n = len(text)
        masked_len = min(n, self.masked_length(n))
        start = random.randint(0, n - masked_len)
        return text[:start], text[start:start + masked_len], text[start + masked_len:]

    def arrange(self, prefix: str, masked: str, suffix: str) -> str:
        return prefix + MASK + suffix + MASK + masked + MASK

    def pad(self, text: str) -> str:
        return text + PAD * (self.block_size - len(text))

    def encode(self, text: str) -> torch.Tensor:
        # one table lookup over the code points (a student's vectorised spelling of torch.tensor([stoi[c] for c in
        # text]): the same ids, a fifth of the time over a check's 11,200 examples)
        return self.ids[torch.frombuffer(bytearray(text.encode("utf-32-le")), dtype=torch.int32).long()]

    def pair(self, text: str) -> tuple[torch.Tensor, torch.Tensor]:
        whole = self.encode(text)  # (block_size,): encoded once, x and y its two views
        return whole[:-1], whole[1:]

    def __getitem__(self, idx):
        return self.pair(self.pad(self.arrange(*self.split(self.truncate(self.data[idx])))))


# right answers in other forms

class SpanTorchDraws(SpanSteps):
    """Every draw with torch's generator; tensors from a list with torch.LongTensor."""

    def kept_length(self, document):
        return int(torch.randint(4, int(self.block_size * 7 / 8) + 1, ()))

    def split(self, text):
        n = len(text)
        masked_len = min(n, int(torch.randint(1, max(2, n // 2), ())))  # an empty document masks nothing
        start = int(torch.randint(0, n - masked_len + 1, ()))
        return text[:start], text[start:start + masked_len], text[start + masked_len:]

    def encode(self, text):
        return torch.LongTensor([self.stoi[c] for c in text])


class SpanUniformFloats(SpanSteps):
    """Lengths from random.random(): masked length uniform on 1..L//2 (mean L/4 + 1/2); torch.tensor of a list."""

    def kept_length(self, document):
        upper = int(self.block_size * 7 / 8)
        return 4 + int(random.random() * (upper - 3))

    def masked_length(self, n):
        return 1 + int(random.random() * (n // 2))

    def encode(self, text):
        return torch.tensor([self.stoi[c] for c in text])  # int64 by default


class SpanGaussianMask(SpanSteps):
    """Masked length normal around L/4 (sd L/8), rounded and clipped to 1..L-1; the base's vocab.encode."""

    def masked_length(self, n):
        return min(max(1, n - 1), max(1, round(random.gauss(n / 4, n / 8))))

    def encode(self, text):
        return self.vocab.encode(text)


class SpanWithinDocument(SpanSteps):
    """Kept length uniform over the lengths the document allows (4 .. min(len, 7/8 block)); mask from range()."""

    def kept_length(self, document):
        return random.randint(4, max(4, min(len(document), int(self.block_size * 7 / 8))))

    def masked_length(self, n):
        return random.choice(range(1, max(2, n // 2)))


class SpanTwoTensors(SpanSteps):
    """x and y encoded apart, each a tensor of its own (the base encodes the example once and takes two views)."""

    def pair(self, text):
        return self.encode(text[:-1]), self.encode(text[1:])


# wrong answers

class SpanWholeDocument(SpanSteps):
    def truncate(self, document):
        return document


class SpanFixedTruncation(SpanSteps):
    def kept_length(self, document):
        return int(self.block_size * 7 / 8)


class SpanQuarterAlways(SpanSteps):
    def masked_length(self, n):
        return n // 4


class SpanQuarterRounded(SpanSteps):
    def masked_length(self, n):
        return round(n / 4)


class SpanHalfMasked(SpanSteps):
    def masked_length(self, n):
        return random.randint(1, max(1, n - 1))


class SpanPadFirst(SpanSteps):
    def pad(self, text):
        return PAD * (self.block_size - len(text)) + text


class SpanUnshifted(SpanSteps):
    def pair(self, text):
        x = self.encode(text[:-1])
        return x, x.clone()


class SpanMaskedInMiddle(SpanSteps):
    def arrange(self, prefix, masked, suffix):
        return prefix + MASK + masked + MASK + suffix + MASK


class SpanFloats(SpanSteps):
    def pair(self, text):
        x, y = super().pair(text)
        return x.float(), y.float()


class SpanBlockLong(SpanSteps):
    def pad(self, text):
        return text + PAD * (self.block_size + 1 - len(text))


class SpanTruncateToBlock(SpanSteps):
    def kept_length(self, document):
        return random.randint(4, self.block_size - 3)  # as much as fits with the three masks


class SpanKeepsEnd(SpanSteps):
    def truncate(self, document):
        return document[-self.kept_length(document):]


class SpanMiddleMaskMissing(SpanSteps):
    def arrange(self, prefix, masked, suffix):
        return prefix + suffix + MASK + masked + MASK


class SpanFinalMaskMissing(SpanSteps):
    def arrange(self, prefix, masked, suffix):
        return prefix + MASK + suffix + MASK + masked


class SpanCapThreeQuarters(SpanSteps):
    def kept_length(self, document):
        return random.randint(4, int(self.block_size * 3 / 4))


class SpanLongestNeverDrawn(SpanSteps):
    """randrange's end is exclusive: int(block_size * 7/8) itself is never kept."""

    def kept_length(self, document):
        return random.randrange(4, int(self.block_size * 7 / 8))


class SpanShortestNeverDrawn(SpanSteps):
    def kept_length(self, document):
        return random.randint(5, int(self.block_size * 7 / 8))


class SpanMaskedSixth(SpanSteps):
    """A masked span a sixth of the text on average (uniform on 1 .. L/3)."""

    def masked_length(self, n):
        return random.randint(1, max(1, n // 3 - 1))


class SpanMaskedEighth(SpanSteps):
    """A masked span an eighth of the text on average (uniform on 1 .. L/4)."""

    def masked_length(self, n):
        return random.randint(1, max(1, n // 4))


class SpanMaskedThird(SpanSteps):
    """A masked span a third of the text on average (uniform on 1 .. 2L/3)."""

    def masked_length(self, n):
        return random.randint(1, max(1, 2 * n // 3 - 1))


class SpanCrashesOnShortDocuments(SpanSteps):
    """random.randint(1, n // 2): an empty range for the empty last document of wiki.txt (and any of 1 character)."""

    def masked_length(self, n):
        return random.randint(1, n // 2)


class SpanMaskedAtTheEnd(SpanSteps):
    """The masked span always the end of the kept text."""

    def split(self, text):
        n = len(text)
        masked_len = min(n, self.masked_length(n))
        return text[: n - masked_len], text[n - masked_len:], ""


class SpanMaskedFromDrawnLength(SpanSteps):
    """The masked length drawn from the truncation length L, not from the text kept (shorter for short documents)."""

    def __getitem__(self, idx):
        document = self.data[idx]
        drawn = random.randint(4, int(self.block_size * 7 / 8))
        text = document[:drawn]
        masked_len = random.randint(1, max(1, drawn // 2 - 1))
        start = random.randint(0, max(0, len(text) - masked_len))
        prefix, masked, suffix = text[:start], text[start:start + masked_len], text[start + masked_len:]
        return self.pair(self.pad(self.arrange(prefix, masked, suffix)))


SPAN_VALID = {"steps": SpanSteps, "torch draws": SpanTorchDraws, "uniform floats": SpanUniformFloats,
              "gaussian mask": SpanGaussianMask, "within document": SpanWithinDocument, "two tensors": SpanTwoTensors}
SPAN_IDS = ("03-span-public", "03-span-hidden")


def _both(expect):
    return dict.fromkeys(SPAN_IDS, expect)


class SpanRoundedCap(SpanSteps):
    """round() for int() of block_size * 7/8: one character more than the cap whenever 7/8 of the block ends in .5
    or more (issue 51: it passed the grader's public part on the seed that drew a block without)."""

    def kept_length(self, document):
        return random.randint(4, round(self.block_size * 7 / 8))


# name: (class, {grade_id: what the message must say in its first 80 characters; None: only that it fails
# specifically}); a check not named may pass the variant (the public check samples fewer examples)
NEVER = "the truncation length never took"
SPAN_WRONG = {
    "no truncation": (SpanWholeDocument, _both(None)),
    "truncation never random": (SpanFixedTruncation, _both(NEVER)),
    "masked span always L//4": (SpanQuarterAlways, _both("masked span's length should be random")),
    "masked span always round(L/4)": (SpanQuarterRounded, _both("masked span's length should be random")),
    "masked span L/2 on average": (SpanHalfMasked, _both("quarter of the kept text")),
    "padding first": (SpanPadFirst, _both("padding should appear only at the end")),
    "y not shifted": (SpanUnshifted, _both("shifted left by one")),
    "masked span in the middle": (SpanMaskedInMiddle, _both("start of the document")),
    "float tensors": (SpanFloats, _both("LongTensors")),
    "length block_size": (SpanBlockLong, _both("should both have shape")),
    "truncation up to block_size": (SpanTruncateToBlock, _both("keep 4 to int(block_size * 7/8)")),
    "truncation cap rounded": (SpanRoundedCap, {"03-span-public": "keep 4 to int(block_size * 7/8)",
                                                "03-span-hidden": None}),
    "keeps the end of the document": (SpanKeepsEnd, _both("start of the document")),
    "middle mask missing": (SpanMiddleMaskMissing, _both(f"prefix{MASK}suffix{MASK}masked{MASK}")),
    "final mask missing": (SpanFinalMaskMissing, _both(f"prefix{MASK}suffix{MASK}masked{MASK}")),
    "truncation capped at 3/4 of the block": (SpanCapThreeQuarters, _both(NEVER)),
    "longest length never drawn": (SpanLongestNeverDrawn, {"03-span-public": NEVER}),
    "shortest length (4) never drawn": (SpanShortestNeverDrawn, _both(f"{NEVER} 4:")),
    "masked span a sixth on average": (SpanMaskedSixth, _both("quarter of the kept text on average")),
    "masked span an eighth on average": (SpanMaskedEighth, _both("quarter of the kept text on average")),
    "masked span a third on average": (SpanMaskedThird, _both("quarter of the kept text on average")),
    "crashes on short documents": (SpanCrashesOnShortDocuments, _both("__getitem__ raised ValueError on an empty "
                                                                      "document (wiki.txt ends with one)")),
    "masked span always at the end": (SpanMaskedAtTheEnd, _both("where the masked span starts should be random")),
    "masked length from the drawn truncation length": (SpanMaskedFromDrawnLength,
                                                       _both("draw the masked length from the text kept")),
}


def _span_seeds(grade_id: str) -> tuple[int, ...]:
    return SEEDS if grade_id == "03-span-public" else SEEDS[:1]  # the hidden check samples 2400 examples


def test_span_reference_passes_both_checks(reference, grade):
    """Does the reference span corruption pass the public and the hidden check on fresh inputs?"""
    for grade_id in SPAN_IDS:
        for seed in _span_seeds(grade_id):
            assert grade(grade_id, with_parts(reference), seed) == [], (grade_id, seed)


@pytest.mark.parametrize("name", list(SPAN_VALID))
@pytest.mark.parametrize("grade_id", SPAN_IDS)
def test_span_valid_variant_passes(reference, grade, grade_id, name):
    """Does a right span corruption written another way pass this check on fresh inputs?"""
    parts = with_parts(reference, CharCorruptionDataset=SPAN_VALID[name])
    for seed in _span_seeds(grade_id):
        assert grade(grade_id, parts, seed) == [], (name, seed)


@pytest.mark.parametrize(("grade_id", "name"), [(g, n) for n, (_, want) in SPAN_WRONG.items() for g in want])
def test_span_wrong_variant_fails_with_its_hint(reference, grade, grade_id, name):
    """Does a plausible wrong span corruption fail this check with a message naming what is wrong?"""
    cls, expected = SPAN_WRONG[name]
    assert_fails(grade(grade_id, with_parts(reference, CharCorruptionDataset=cls), 0), expected[grade_id])

