"""Checks of the checks: every judge passes right answers written other ways and fails plausible wrong ones.

Each answer runs as the grader runs it: the check's probe on the inputs the grader
sends (through the wire, as in the sandbox), its output back through the wire, then
the check's judge on the grader's own copy of the inputs. Fresh inputs come from
``registry.prepare`` with a few fixed seeds. The variants subclass or wrap the
reference solutions, or spell the same answer another way. A wrong answer must
fail with a message that says something specific (never the grader's generic
"not of the expected form").
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import math
import random
import types
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from autograder.grading import one_check as check_runner
from autograder.checks import registry
from course_lib.attention import CausalSelfAttention, SynthesizerAttentionBase
from course_lib.checkpoint import load_params
from course_lib.data_files import read_text
from course_lib.datasets import CharCorruptionDatasetBase, NameDataset
from course_lib.model import GPT, GPTConfig
from course_lib.trainer import Trainer, TrainerConfig

GENERIC = check_runner.GENERIC  # autograder.grading.grade's words for a judge that crashed
SEEDS = (0, 1, 2)
MASK, PAD = CharCorruptionDatasetBase.MASK_CHAR, CharCorruptionDatasetBase.PAD_CHAR


# --- grading one answer the way autograder.grading.grade does -----------------------------------------------

@pytest.fixture(scope="session")
def prepared(tmp_path_factory):
    """seed -> (every check's fresh inputs, the folder holding the files they need), made once per seed."""
    cache = {}

    def get(seed: int):
        if seed not in cache:
            folder = tmp_path_factory.mktemp(f"grader-inputs-{seed}")
            cache[seed] = (check_runner.prepare(seed, folder), folder)
        return cache[seed]

    return get


@pytest.fixture
def grade(prepared):
    """(grade_id, parts, seed) -> the problems the grader would report for that answer (autograder.grading.one_check)."""

    def run(grade_id: str, parts, seed: int) -> list[str]:
        inputs, folder = prepared(seed)
        return check_runner.grade_check(registry.BY_ID[grade_id], parts, inputs[grade_id], folder)

    return run


def with_parts(reference, **overrides) -> types.SimpleNamespace:
    """The reference notebooks' definitions with some replaced, as the sandbox's ``parts``."""
    return types.SimpleNamespace(**{**{k: v for k, v in vars(reference).items() if not k.startswith("__")},
                                    **overrides})


def assert_fails(problems: list[str], expect: str | None) -> None:
    assert problems, "a wrong answer passed"
    assert GENERIC not in problems, problems
    text = "; ".join(problems)
    assert all(p.strip() for p in problems), problems
    if expect is not None:
        assert expect in text, text


# --- span corruption ----------------------------------------------------------------------------------

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


# name: (class, {grade_id: what the message must say; None: only that it fails specifically}); a check not
# named may pass the variant (the public check samples one block size and fewer examples)
SPAN_WRONG = {
    "no truncation": (SpanWholeDocument, _both(None)),
    "truncation never random": (SpanFixedTruncation, _both("truncation length should be random")),
    "masked span always L//4": (SpanQuarterAlways, _both("masked span's length should be random")),
    "masked span always round(L/4)": (SpanQuarterRounded, _both("masked span's length should be random")),
    "masked span L/2 on average": (SpanHalfMasked, _both("quarter of the kept text")),
    "padding first": (SpanPadFirst, _both("padding should appear only at the end")),
    "y not shifted": (SpanUnshifted, _both("shifted left by one")),
    "masked span in the middle": (SpanMaskedInMiddle, _both("start of the document")),
    "float tensors": (SpanFloats, _both("LongTensors")),
    "length block_size": (SpanBlockLong, _both("should both have shape")),
    "truncation up to block_size": (SpanTruncateToBlock, _both("int(block_size * 7/8)")),
    "keeps the end of the document": (SpanKeepsEnd, _both("start of the document")),
    "middle mask missing": (SpanMiddleMaskMissing, _both(None)),
    "final mask missing": (SpanFinalMaskMissing, _both(f"prefix{MASK}suffix{MASK}masked{MASK}")),
    "truncation capped at 3/4 of the block": (SpanCapThreeQuarters, _both("truncation length should be random")),
    "longest length never drawn": (SpanLongestNeverDrawn, {"03-span-hidden": "truncation length should be random"}),
    "shortest length (4) never drawn": (SpanShortestNeverDrawn,
                                        {"03-span-hidden": "truncation length should be random"}),
    "masked span a sixth on average": (SpanMaskedSixth, _both("quarter of the kept text on average")),
    "masked span an eighth on average": (SpanMaskedEighth, _both("quarter of the kept text on average")),
    "masked span a third on average": (SpanMaskedThird, _both("quarter of the kept text on average")),
    "crashes on short documents": (SpanCrashesOnShortDocuments,
                                   _both("__getitem__ raised ValueError on an empty document (wiki.txt ends with one)")),
    "masked span always at the end": (SpanMaskedAtTheEnd, _both("where the masked span starts should be random")),
    "masked length from the drawn truncation length": (SpanMaskedFromDrawnLength,
                                                       _both("its length should come from the text kept")),
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


# --- synthesizer attention ----------------------------------------------------------------------------

class SynthSteps(SynthesizerAttentionBase):
    """The synthesizer written out step by step (a right answer); each variant changes one step."""

    def heads(self, t):
        B, T, C = t.size()
        return t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)

    def hidden(self, x):
        return F.relu(self.w1(x))

    def scores(self, a, T):
        return a @ self.w2[:, :T] + self.b2[:T]

    def masked(self, s, T):
        return s.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))

    def weights(self, s):
        return F.softmax(s, dim=-1)

    def values(self, x):
        return self.heads(self.value(x))

    def merge(self, y, B, T, C):
        return y.transpose(1, 2).contiguous().view(B, T, C)

    def drop(self, att):
        return self.attn_drop(att)

    def out(self, y):
        return self.resid_drop(self.proj(y))

    def forward(self, x):
        B, T, C = x.size()
        s = self.scores(self.heads(self.hidden(x)), T)
        att = self.drop(self.weights(self.masked(s, T)))
        return self.out(self.merge(att @ self.values(x), B, T, C))


# right answers in other forms

class SynthEinsum(SynthesizerAttentionBase):
    def forward(self, x):
        B, T, C = x.size()
        nh = self.n_head
        a = F.relu(self.w1(x)).reshape(B, T, nh, C // nh)
        v = self.value(x).reshape(B, T, nh, C // nh)
        s = torch.einsum("bthd,ds->bhts", a, self.w2[:, :T]) + self.b2[:T]
        s = s.masked_fill(self.mask[0, 0, :T, :T] == 0, float("-inf"))
        att = self.attn_drop(torch.softmax(s, dim=-1))
        y = torch.einsum("bhts,bshd->bthd", att, v).reshape(B, T, C)
        return self.resid_drop(self.proj(y))


class SynthFloat64(SynthSteps):
    """Everything in float64, the result cast back to the input's dtype."""

    def forward(self, x):
        B, T, C = x.size()
        d = {k: v.double() for k, v in self.state_dict().items()}
        a = self.heads(F.relu(F.linear(x.double(), d["w1.weight"], d["w1.bias"])))
        v = self.heads(F.linear(x.double(), d["value.weight"], d["value.bias"]))
        s = self.masked(a @ d["w2"][:, :T] + d["b2"][:T], T)
        y = self.merge(self.attn_drop(F.softmax(s, dim=-1)) @ v, B, T, C)
        return self.resid_drop(F.linear(y, d["proj.weight"], d["proj.bias"])).to(x.dtype)


class SynthTrilPerCall(SynthSteps):
    def masked(self, s, T):
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=s.device))
        return s.masked_fill(~causal, float("-inf"))


class SynthAdditiveBias(SynthSteps):
    """A large negative bias above the diagonal instead of -inf."""

    def masked(self, s, T):
        return s + torch.triu(torch.full((T, T), -1e9, dtype=s.dtype), diagonal=1)


class SynthHeadLoop(SynthesizerAttentionBase):
    """One head at a time, outputs concatenated side by side."""

    def forward(self, x):
        B, T, C = x.size()
        hs = C // self.n_head
        a, v = F.relu(self.w1(x)), self.value(x)
        causal = self.mask[0, 0, :T, :T] == 0
        outs = []
        for h in range(self.n_head):
            s = a[..., h * hs:(h + 1) * hs] @ self.w2[:, :T] + self.b2[:T]
            att = self.attn_drop(torch.softmax(s.masked_fill(causal, float("-inf")), dim=-1))
            outs.append(att @ v[..., h * hs:(h + 1) * hs])
        return self.resid_drop(self.proj(torch.cat(outs, dim=-1)))


class SynthPersistentMask(SynthSteps):
    """minGPT's way: the causal mask registered again, as a persistent buffer (so it is in the state_dict)."""

    def __init__(self, config):
        super().__init__(config)
        n = config.block_size
        self.register_buffer("mask", torch.tril(torch.ones(n, n)).view(1, 1, n, n))


class SynthFunctionalDropout(SynthSteps):
    """F.dropout with the modules' rates and the layer's mode instead of calling the modules."""

    def drop(self, att):
        return F.dropout(att, self.attn_drop.p, self.training)

    def out(self, y):
        return F.dropout(self.proj(y), self.resid_drop.p, training=self.training)


class SynthWhereMask(SynthSteps):
    """torch.where on a bool mask, and softmax from torch rather than F."""

    def masked(self, s, T):
        return torch.where(self.mask[:, :, :T, :T].bool(), s, torch.full_like(s, float("-inf")))

    def weights(self, s):
        return torch.softmax(s, -1)


class SynthEinsumScores(SynthSteps):
    """Scores with einsum, values merged with reshape and permute."""

    def scores(self, a, T):
        return torch.einsum("bhtd,dl->bhtl", a, self.w2[:, :T]) + self.b2[:T]

    def merge(self, y, B, T, C):
        return y.permute(0, 2, 1, 3).reshape(B, T, C)


class SynthDropoutsFirst(SynthSteps):
    """Its own __init__ with the same parameters, resid_drop registered before attn_drop (another module order)."""

    def __init__(self, config):
        nn.Module.__init__(self)
        self.resid_drop = nn.Dropout(config.resid_pdrop)
        self.attn_drop = nn.Dropout(config.attn_pdrop)
        self.w1 = nn.Linear(config.n_embd, config.n_embd)
        self.w2 = nn.Parameter(torch.empty(config.n_embd // config.n_head, config.block_size - 1).uniform_(-1e-3, 1e-3))
        self.b2 = nn.Parameter(torch.zeros(config.block_size - 1))
        self.value = nn.Linear(config.n_embd, config.n_embd)
        self.proj = nn.Linear(config.n_embd, config.n_embd)
        n = config.block_size
        self.register_buffer("mask", torch.tril(torch.ones(n, n)).view(1, 1, n, n), persistent=False)
        self.n_head, self.block_size = config.n_head, config.block_size


# wrong answers

class SynthNoMask(SynthSteps):
    def masked(self, s, T):
        return s


class SynthMaskAfterSoftmax(SynthSteps):
    def masked(self, s, T):
        return s

    def weights(self, s):
        T = s.size(-1)
        return F.softmax(s, dim=-1) * self.mask[:, :, :T, :T]


class SynthNoRelu(SynthSteps):
    def hidden(self, x):
        return self.w1(x)


class SynthReluAfterB(SynthSteps):
    """ReLU on the scores, not on w1's output: softmax(ReLU((X A_i + b1) B) + b2)."""

    def hidden(self, x):
        return self.w1(x)

    def scores(self, a, T):
        return F.relu(a @ self.w2[:, :T]) + self.b2[:T]


class SynthHeadsInterleaved(SynthSteps):
    """Heads as every n_head-th column of w1's and value's outputs (view(B, T, hs, nh)), put back the same way."""

    def heads(self, t):
        B, T, C = t.size()
        return t.view(B, T, C // self.n_head, self.n_head).permute(0, 3, 1, 2)  # (B, nh, T, hs)

    def merge(self, y, B, T, C):
        return y.permute(0, 2, 3, 1).reshape(B, T, C)


class SynthB2PerRow(SynthSteps):
    """b2[t] added to row t's scores (a constant for each row: b2 has no effect)."""

    def scores(self, a, T):
        return a @ self.w2[:, :T] + self.b2[:T, None]


class SynthScaledByEmbd(SynthSteps):
    """Scores divided by sqrt(n_embd), as if they were vanilla attention's."""

    def scores(self, a, T):
        return super().scores(a, T) / math.sqrt(self.n_head * a.size(-1))


class SynthNoB2(SynthSteps):
    def scores(self, a, T):
        return a @ self.w2[:, :T]


class SynthNoB1(SynthSteps):
    def hidden(self, x):
        return F.relu(F.linear(x, self.w1.weight))


class SynthScaled(SynthSteps):
    def scores(self, a, T):
        return super().scores(a, T) / math.sqrt(a.size(-1))


class SynthLastColumns(SynthSteps):
    def scores(self, a, T):
        return a @ self.w2[:, -T:] + self.b2[-T:]


class SynthSoftmaxOverQueries(SynthSteps):
    def weights(self, s):
        return F.softmax(s, dim=-2)


class SynthNoProjection(SynthSteps):
    def out(self, y):
        return self.resid_drop(y)


class SynthMergeWithoutTranspose(SynthSteps):
    def merge(self, y, B, T, C):
        return y.contiguous().view(B, T, C)


class SynthHeadsReversed(SynthSteps):
    def merge(self, y, B, T, C):
        return super().merge(y.flip(1), B, T, C)


class SynthNoValue(SynthSteps):
    def values(self, x):
        return self.heads(x)


class SynthNoAttentionDropout(SynthSteps):
    def drop(self, att):
        return att


class SynthNoResidualDropout(SynthSteps):
    def out(self, y):
        return self.proj(y)


class SynthDropoutOnScores(SynthSteps):
    def drop(self, att):
        return att

    def weights(self, s):
        return F.softmax(self.attn_drop(s), dim=-1)


class SynthDropoutOnValues(SynthSteps):
    def drop(self, att):
        return att

    def values(self, x):
        return self.attn_drop(self.heads(self.value(x)))


class SynthDropoutUnscaled(SynthSteps):
    """Weights dropped in training but the rest not scaled up by 1 / (1 - p)."""

    def drop(self, att):
        return att * (torch.rand_like(att) >= self.attn_drop.p) if self.training else att


class SynthDropoutAlwaysOn(SynthSteps):
    """F.dropout left at its default training=True: weights dropped in eval mode too."""

    def drop(self, att):
        return F.dropout(att, self.attn_drop.p)


SYNTH_VALID = {"steps": SynthSteps, "einsum": SynthEinsum, "float64": SynthFloat64, "tril per call": SynthTrilPerCall,
               "additive -1e9 bias": SynthAdditiveBias, "head loop": SynthHeadLoop,
               "persistent mask buffer": SynthPersistentMask, "F.dropout": SynthFunctionalDropout,
               "torch.where mask": SynthWhereMask, "einsum scores, permute": SynthEinsumScores,
               "resid_drop registered before attn_drop": SynthDropoutsFirst}
PASSES = "passes"  # a check that cannot see the mistake (it passes, and must)
ATTN_DROPOUT = "attention dropout"
POSITION_0 = "the first position can only attend to itself"
RELU = "apply ReLU to w1's output X A_i + b1, before multiplying by B"
HEADS = "head i is columns i*hs to (i+1)*hs - 1"
NO_B2 = "b2 has no effect on your weights"


def _synth(public, hidden=None):
    """What the public check's message and the hidden check's say (the hidden one the same unless given)."""
    return {"05-synthesizer-public": public, "05-synthesizer-equivalence": public if hidden is None else hidden}


# name: (class, {grade_id: what its message must say, or PASSES}); an id not named is not asserted. The public
# check names the term, head or position of every mistake here but the dropout-only ones; the hidden messages say
# what differs too (issue 40: "output differs" alone told a student nothing).
SYNTH_WRONG = {
    "no causal mask": (SynthNoMask, _synth("causal mask")),
    "mask after softmax": (SynthMaskAfterSoftmax, _synth(None, "causal mask")),
    "no ReLU": (SynthNoRelu, _synth(RELU)),
    "ReLU after B": (SynthReluAfterB, _synth(RELU)),
    "no b2": (SynthNoB2, _synth(NO_B2)),
    "b2 added per row": (SynthB2PerRow, _synth(NO_B2)),
    "no b1": (SynthNoB1, _synth("add b1 (w1's bias)")),
    "scores scaled by 1/sqrt(hs)": (SynthScaled, _synth("divided by sqrt(head size)")),
    "scores scaled by 1/sqrt(n_embd)": (SynthScaledByEmbd, _synth("divided by sqrt(n_embd)")),
    "heads interleaved": (SynthHeadsInterleaved, _synth(HEADS)),
    "w2 and b2 sliced from the end": (SynthLastColumns, _synth("shorter sequence", "first at position t=1")),
    "softmax over the query dim": (SynthSoftmaxOverQueries, _synth(None, "the softmax over the last dimension")),
    "no output projection": (SynthNoProjection, _synth("output projection", "before the output projection")),
    "heads merged without transposing": (SynthMergeWithoutTranspose,
                                         _synth("changed earlier outputs", "how the heads are split")),
    "heads concatenated in reverse": (SynthHeadsReversed, _synth(POSITION_0)),
    "attends over x, not value(x)": (SynthNoValue, _synth(POSITION_0, "first at position t=0")),
    "no attention dropout": (SynthNoAttentionDropout, _synth(ATTN_DROPOUT)),
    "no residual dropout": (SynthNoResidualDropout, {"05-synthesizer-public": "resid_drop"}),
    "dropout on the scores": (SynthDropoutOnScores, _synth(ATTN_DROPOUT)),
    "dropout on the values": (SynthDropoutOnValues, _synth(ATTN_DROPOUT)),
    "dropout without 1/(1-p)": (SynthDropoutUnscaled, _synth(ATTN_DROPOUT)),
    "dropout in eval mode too": (SynthDropoutAlwaysOn, _synth(None)),
}


@pytest.mark.parametrize("name", ["reference", *SYNTH_VALID])
def test_synthesizer_valid_variant_passes_public_and_equivalence(reference, grade, name):
    """Does a right synthesizer written another way pass the public and the equivalence check on fresh weights?"""
    cls = reference.SynthesizerAttention if name == "reference" else SYNTH_VALID[name]
    parts = with_parts(reference, SynthesizerAttention=cls)
    for seed in SEEDS:
        assert grade("05-synthesizer-public", parts, seed) == [], (name, seed)
        assert grade("05-synthesizer-equivalence", parts, seed) == [], (name, seed)


@pytest.mark.parametrize(("grade_id", "name"), [(g, n) for n, (_, want) in SYNTH_WRONG.items() for g in want])
def test_synthesizer_wrong_variant_fails_as_tabled(reference, grade, grade_id, name):
    """Does a wrong synthesizer fail this check with its hint, or pass it exactly when the check cannot see it?"""
    cls, expected = SYNTH_WRONG[name]
    parts = with_parts(reference, SynthesizerAttention=cls)
    for seed in SEEDS[:2]:
        problems = grade(grade_id, parts, seed)
        if expected[grade_id] == PASSES:
            assert problems == [], (name, seed, problems)
        else:
            assert_fails(problems, expected[grade_id])


# --- the synthesizer model ----------------------------------------------------------------------------

def _synth_model_valid(reference):
    attention = reference.SynthesizerAttention

    class SynthesizerGPT(GPT):
        def __init__(self, config):
            super().__init__(config, attention_class=attention)

    return {
        "reference": reference.initialize_synthesizer_model,
        "GPT subclass": SynthesizerGPT,
        "functools.partial": functools.partial(GPT, attention_class=attention),
        "manual attention_impl": lambda mconf: GPT(dataclasses.replace(mconf, attention_impl="manual"), attention),
    }


def _synth_model_wrong(reference):
    attention = reference.SynthesizerAttention

    def first_block_only(mconf):
        model = GPT(mconf)
        model.blocks[0].attn = attention(mconf)
        return model

    return {
        "vanilla GPT": lambda mconf: GPT(mconf),
        "vanilla GPT, CausalSelfAttention named": lambda mconf: GPT(mconf, attention_class=CausalSelfAttention),
        "one layer fewer (one more when there is one)":
            lambda mconf: GPT(dataclasses.replace(mconf, n_layer=mconf.n_layer - 1 if mconf.n_layer > 1 else 2),
                              attention),
        "synthesizer in the first block only": first_block_only,
        "default sizes": lambda mconf: GPT(GPTConfig(mconf.vocab_size, mconf.block_size), attention),
        "config rebuilt without its dropout rates":
            lambda mconf: GPT(GPTConfig(mconf.vocab_size, mconf.block_size, n_layer=mconf.n_layer,
                                        n_head=mconf.n_head, n_embd=mconf.n_embd), attention),
        "blocks of another synthesizer class": lambda mconf: GPT(mconf, SynthNoRelu),
    }


def test_synthesizer_model_valid_variants_pass(reference, grade):
    """Does every right way to build the synthesizer GPT pass 05-synthesizer-model on fresh configs?"""
    for name, init in _synth_model_valid(reference).items():
        parts = with_parts(reference, initialize_synthesizer_model=init)
        for seed in SEEDS:
            assert grade("05-synthesizer-model", parts, seed) == [], (name, seed)


def test_synthesizer_model_wrong_variants_fail(reference, grade, prepared):
    """Does a GPT that is not the synthesizer GPT of the given config fail 05-synthesizer-model with its hint?"""
    for seed in SEEDS:  # all with n_layer >= 2 (see the next test)
        assert prepared(seed)[0]["05-synthesizer-model"]["config"]["n_layer"] >= 2
    for name, init in _synth_model_wrong(reference).items():
        for seed in SEEDS:
            problems = grade("05-synthesizer-model", with_parts(reference, initialize_synthesizer_model=init), seed)
            assert_fails(problems, "initialize_synthesizer_model should")


def test_synthesizer_model_compares_dropout_rates_whatever_their_order(reference, grade):
    """Does a model whose SynthesizerAttention registers resid_drop before attn_drop pass 05-synthesizer-model (the
    rates are compared by module name), while one whose two rates are swapped fails, naming them?"""
    parts = with_parts(reference, SynthesizerAttention=SynthDropoutsFirst,
                       initialize_synthesizer_model=functools.partial(GPT, attention_class=SynthDropoutsFirst))
    for seed in SEEDS:
        assert grade("05-synthesizer-model", parts, seed) == [], seed

    def swapped(mconf):
        return GPT(dataclasses.replace(mconf, attn_pdrop=mconf.resid_pdrop, resid_pdrop=mconf.attn_pdrop),
                   reference.SynthesizerAttention)

    problems = grade("05-synthesizer-model", with_parts(reference, initialize_synthesizer_model=swapped), 0)
    assert_fails(problems, "its dropout rates are not that config's (resid_pdrop, attn_pdrop)")


def test_synthesizer_model_with_a_persistent_mask_passes(reference, grade):
    """Does a model whose SynthesizerAttention registers its mask as a persistent buffer pass 05-synthesizer-model?"""
    parts = with_parts(reference, SynthesizerAttention=SynthPersistentMask,
                       initialize_synthesizer_model=functools.partial(GPT, attention_class=SynthPersistentMask))
    for seed in SEEDS:
        assert grade("05-synthesizer-model", parts, seed) == [], seed


def test_synthesizer_in_the_first_block_only_fails_on_every_fresh_config(reference, grade, prepared):
    """Is every fresh config at least two layers deep, so a synthesizer in the first block only always fails?"""
    inputs = registry.BY_ID["05-synthesizer-model"].inputs
    assert all(inputs(random.Random(seed))["config"]["n_layer"] >= 2 for seed in range(30))
    init = _synth_model_wrong(reference)["synthesizer in the first block only"]
    assert_fails(grade("05-synthesizer-model", with_parts(reference, initialize_synthesizer_model=init), 3),
                 "SynthesizerAttention in every block")


# --- the glue: finetune (02) and pretrain (04) --------------------------------------------------------

def finetune_written_by_hand(reading_params_path, finetune_corpus_path, pretrain_dataset, block_size, model,
                             finetune_lr=6e-4, *, epochs=(75, 10), lr=None, batch_size=256, warmup_tokens=512 * 20,
                             lr_decay=True, num_workers=4, final_tokens=None, dataset="name", load="given",
                             trainer_config="same", after=None):
    """The finetune glue with each choice a parameter; the defaults are a right answer. ``after``: TrainerConfig
    fields that differ after pretraining only (given a params path)."""
    if reading_params_path is not None and load == "given":
        load_params(model, reading_params_path)
    elif reading_params_path is not None and load == "copy":
        load_params(copy.deepcopy(model), reading_params_path)
    name_dataset = NameDataset(pretrain_dataset, read_text(finetune_corpus_path))
    if final_tokens is None:
        final_tokens = 200 * len(pretrain_dataset) * block_size
    elif final_tokens == "finetuning file":
        final_tokens = 200 * len(name_dataset) * block_size
    elif final_tokens == "block size typed in":
        final_tokens = 200 * len(pretrain_dataset) * 128
    config = TrainerConfig(max_epochs=epochs[reading_params_path is not None], batch_size=batch_size,
                           learning_rate=finetune_lr if lr is None else lr, lr_decay=lr_decay,
                           warmup_tokens=warmup_tokens, final_tokens=final_tokens, num_workers=num_workers)
    if reading_params_path is not None and after:
        config = dataclasses.replace(config, **after)
    train_dataset = name_dataset if dataset == "name" else pretrain_dataset
    trainer = Trainer(model, train_dataset, None, config if trainer_config == "same" else TrainerConfig())
    return config, trainer


def finetune_reordered(reading_params_path, finetune_corpus_path, pretrain_dataset, block_size, model,
                       finetune_lr=0.0006):
    """Keywords in another order, final_tokens from .data, the file read with open(), the Trainer with keywords."""
    tconf = TrainerConfig(num_workers=4, final_tokens=200 * len(pretrain_dataset.data) * block_size,
                          warmup_tokens=10240, lr_decay=True, learning_rate=finetune_lr, batch_size=256,
                          max_epochs=75 if reading_params_path is None else 10)
    with open(finetune_corpus_path, encoding="utf-8") as f:
        questions = NameDataset(pretrain_dataset, f.read())
    trainer = Trainer(model=model, train_dataset=questions, test_dataset=None, config=tconf)
    if reading_params_path:  # after the trainer is built: still before any training
        model.load_state_dict(torch.load(reading_params_path, map_location="cpu", weights_only=True))
    return tconf, trainer


def finetune_fields_set_later(reading_params_path, finetune_corpus_path, pretrain_dataset, block_size, model,
                              finetune_lr=6e-4):
    """A default TrainerConfig with its fields set one by one; block size read from the dataset."""
    tconf = TrainerConfig()
    tconf.max_epochs = 10 if reading_params_path else 75
    tconf.batch_size, tconf.learning_rate, tconf.lr_decay = 256, finetune_lr, True
    tconf.warmup_tokens = 512 * 20
    tconf.final_tokens = 200 * len(pretrain_dataset) * pretrain_dataset.block_size
    tconf.num_workers = 4
    if reading_params_path:
        model.load_state_dict(torch.load(reading_params_path, weights_only=True))
    return tconf, Trainer(model, NameDataset(pretrain_dataset, Path(finetune_corpus_path).read_text()), None, tconf)


def train_with_torch_save(model, writing_params_path, trainer):
    trainer.train()
    torch.save(model.state_dict(), writing_params_path)


def train_without_saving(model, writing_params_path, trainer):
    trainer.train()


def train_saving_trainer_model(model, writing_params_path, trainer):
    """The trainer's own model (the same object), saved with its tensors moved to the CPU by hand."""
    trainer.train()
    torch.save({k: v.cpu() for k, v in trainer.model.state_dict().items()}, writing_params_path)


def train_a_copy(model, writing_params_path, trainer):
    """A fresh Trainer on a copy of the model: the copy is trained and saved, the model given is not."""
    twin = Trainer(copy.deepcopy(model), trainer.train_dataset, None, trainer.config)
    twin.train()
    torch.save(twin.model.state_dict(), writing_params_path)


def train_twice(model, writing_params_path, trainer):
    """trainer.train() called twice (a second run of every epoch)."""
    trainer.train()
    trainer.train()
    torch.save(model.state_dict(), writing_params_path)


def init_without_dropout(mconf):
    return GPT(dataclasses.replace(mconf, embd_pdrop=0.0, resid_pdrop=0.0, attn_pdrop=0.0))


def init_of_the_handout(mconf):
    """The handout's model (block 128, 4 layers of 256) whatever the config says."""
    return GPT(GPTConfig(mconf.vocab_size, 128))


def init_in_eval_mode(mconf):
    return GPT(mconf).eval()


def train_saving_first(model, writing_params_path, trainer):
    torch.save(model.state_dict(), writing_params_path)
    trainer.train()


def train_saving_the_module(model, writing_params_path, trainer):
    trainer.train()
    torch.save(model, writing_params_path)


INIT_VALID = {
    "GPT(mconf)": lambda mconf: GPT(mconf),
    "keywords, CausalSelfAttention named": lambda mconf: GPT(config=mconf, attention_class=CausalSelfAttention),
    "manual attention_impl": lambda mconf: GPT(dataclasses.replace(mconf, attention_impl="manual")),
}
GLUE_VALID = {  # name: overrides of the reference parts
    "reference": {},
    "reordered keywords, Trainer by keyword, lr 0.0006": {"finetune": finetune_reordered},
    "fields set one by one": {"finetune": finetune_fields_set_later},
    "spelled out by hand": {"finetune": finetune_written_by_hand},
    "train saves with torch.save": {"train": train_with_torch_save},
    "train saves trainer.model": {"train": train_saving_trainer_model},
    "warmup tokens as a whole float (512 * 20.0)": {"finetune": functools.partial(finetune_written_by_hand,
                                                                                   warmup_tokens=512 * 20.0)},
    **{f"init {k}": {"initialize_vanilla_model": v} for k, v in INIT_VALID.items()},
}
FT = finetune_written_by_hand
# name: (overrides, {grade_id: what the message must say}); a grade_id not listed is not asserted for that variant
GLUE_WRONG = {
    "lr 6e-3 for finetuning": ({"finetune": functools.partial(FT, finetune_lr=6e-3)},
                               {"02-glue-config": "learning_rate", "02-glue-pretrained": "learning_rate"}),
    "75 epochs after pretraining": ({"finetune": functools.partial(FT, epochs=(75, 75))},
                                    {"02-glue-config": "after pretraining (given a params file): these TrainerConfig "
                                                       "fields differ from the handout: max_epochs",
                                     "02-glue-pretrained": "max_epochs"}),
    "10 epochs without pretraining": ({"finetune": functools.partial(FT, epochs=(10, 10))},
                                      {"02-glue-config": "max_epochs"}),
    "final_tokens from the finetuning file": ({"finetune": functools.partial(FT, final_tokens="finetuning file")},
                                              {"02-glue-config": "final_tokens", "02-glue-pretrained": "final_tokens"}),
    "warmup 512*2": ({"finetune": functools.partial(FT, warmup_tokens=512 * 2)},
                     {"02-glue-config": "warmup_tokens", "02-glue-pretrained": "warmup_tokens"}),
    "lr_decay forgotten": ({"finetune": functools.partial(FT, lr_decay=False)},
                           {"02-glue-config": "lr_decay", "02-glue-pretrained": "lr_decay"}),
    "batch 128": ({"finetune": functools.partial(FT, batch_size=128)},
                  {"02-glue-config": "batch_size", "02-glue-pretrained": "batch_size"}),
    "no loader workers": ({"finetune": functools.partial(FT, num_workers=0)}, {"02-glue-config": "num_workers"}),
    "trains on the pretraining dataset": ({"finetune": functools.partial(FT, dataset="pretrain")},
                                          {"02-glue-config": "NameDataset", "02-glue-pretrained": "NameDataset"}),
    "Trainer given a default config": ({"finetune": functools.partial(FT, trainer_config="default")},
                                       {"02-glue-config": "the Trainer's config",
                                        "02-glue-pretrained": "the Trainer's config"}),
    "params not loaded": ({"finetune": functools.partial(FT, load="never")},
                          {"02-glue-pretrained": "did not load the pretrained params"}),
    "params loaded into a copy": ({"finetune": functools.partial(FT, load="copy")},
                                  {"02-glue-pretrained": "did not load the pretrained params"}),
    "train() does not save": ({"train": train_without_saving}, {"02-glue-pretrained": "train() should save"}),
    "train() trains a copy of the model": ({"train": train_a_copy},
                                           {"02-glue-pretrained": "train() should train the model it is given"}),
    "train() saves before training": ({"train": train_saving_first}, {"02-glue-pretrained": "after training"}),
    "train() saves the module": ({"train": train_saving_the_module}, {"02-glue-pretrained": "raised"}),
    "init builds a synthesizer GPT": ({"initialize_vanilla_model": None}, {"02-glue-config": "another attention"}),
    "init turns dropout off": ({"initialize_vanilla_model": init_without_dropout},
                               {"02-glue-config": "dropout rates are not that config's (embd_pdrop, resid_pdrop, "
                                                 "attn_pdrop)"}),
    "init ignores the config (the handout's model)": (
        {"initialize_vanilla_model": init_of_the_handout},
        {"02-glue-config": "initialize_vanilla_model should build the course's GPT from the config it is given: the "
                           "model it returned has another block_size, n_layer and n_embd than that config"}),
    "final_tokens with the block size typed in (128)": (
        {"finetune": functools.partial(FT, final_tokens="block size typed in")},
        {"02-glue-config": "final_tokens", "02-glue-pretrained": "final_tokens"}),
    "lr 6e-3 after pretraining": ({"finetune": functools.partial(FT, after={"learning_rate": 6e-3})},
                                  {"02-glue-config": "finetune after pretraining (given a params file): these "
                                                     "TrainerConfig fields differ from the handout: learning_rate",
                                   "02-glue-pretrained": "learning_rate"}),
    "batch 128 after pretraining": ({"finetune": functools.partial(FT, after={"batch_size": 128})},
                                    {"02-glue-config": "after pretraining (given a params file): these TrainerConfig "
                                                       "fields differ from the handout: batch_size",
                                     "02-glue-pretrained": "batch_size"}),
    "train() trains twice": ({"train": train_twice}, {"02-glue-pretrained": "train the model once"}),
}
GLUE_IDS = ("02-glue-config", "02-glue-pretrained")
# seeds whose toy worlds have a corpus and a finetuning file of different lengths (see the final_tokens test below)
GLUE_WRONG_SEEDS = (1, 3)
GLUE_MESSAGE_BUGS: dict[str, str] = {}  # wrong answers told the wrong thing (none now)


@pytest.mark.parametrize("name", list(GLUE_VALID))
def test_finetune_valid_variant_passes_both_glue_checks(reference, grade, name):
    """Does a right finetune glue written another way pass 02-glue-config and 02-glue-pretrained?"""
    parts = with_parts(reference, **GLUE_VALID[name])
    for grade_id in GLUE_IDS:
        for seed in SEEDS:
            assert grade(grade_id, parts, seed) == [], (grade_id, name, seed)


def _glue_wrong_params():
    for name, (_, expected) in GLUE_WRONG.items():
        marks = [pytest.mark.xfail(strict=True, reason=GLUE_MESSAGE_BUGS[name])] if name in GLUE_MESSAGE_BUGS else []
        for grade_id, expect in expected.items():
            yield pytest.param(grade_id, name, expect, marks=marks, id=f"{grade_id}-{name}")


@pytest.mark.parametrize(("grade_id", "name", "expect"), list(_glue_wrong_params()))
def test_finetune_wrong_variant_fails_with_its_hint(reference, grade, grade_id, name, expect):
    """Does a plausible wrong finetune glue fail the check it breaks, naming what is wrong?"""
    overrides = dict(GLUE_WRONG[name][0])
    if overrides.get("initialize_vanilla_model", 0) is None:
        overrides["initialize_vanilla_model"] = lambda mconf: GPT(mconf, reference.SynthesizerAttention)
    parts = with_parts(reference, **overrides)
    for seed in GLUE_WRONG_SEEDS:
        assert_fails(grade(grade_id, parts, seed), expect)


@pytest.mark.parametrize(("grade_id", "seed"), [("02-glue-config", 15), ("02-glue-pretrained", 0)])
def test_final_tokens_from_the_finetuning_file_fails_on_every_fresh_input(reference, grade, prepared, grade_id, seed):
    """Does a fresh corpus never have as many documents as the finetuning file has questions, so that mistake fails?"""
    world = prepared(seed)[0][grade_id]
    assert len(world["corpus"].split("\n")) != len(world["train_text"].split("\n")) - 1
    parts = with_parts(reference, **GLUE_WRONG["final_tokens from the finetuning file"][0])
    assert_fails(grade(grade_id, parts, seed), "final_tokens")


def test_finetune_config_check_leaves_loading_and_train_to_the_hidden_check(reference, grade):
    """Do the wrong answers about loading params, training and saving still pass 02-glue-config (which calls
    finetune with a params file only for its config)?"""
    for name in ("params not loaded", "params loaded into a copy", "train() does not save", "train() saves the module",
                 "train() trains twice", "train() trains a copy of the model"):
        assert grade("02-glue-config", with_parts(reference, **GLUE_WRONG[name][0]), 0) == [], name


def test_the_model_in_eval_mode_passes(reference, grade):
    """Does an init that returns the model in eval mode pass (the trainer puts it in training mode itself)?"""
    parts = with_parts(reference, initialize_vanilla_model=init_in_eval_mode)
    for grade_id in GLUE_IDS:
        assert grade(grade_id, parts, 0) == [], grade_id


def pretrain_written_by_hand(pretrain_dataset, block_size, model, pretrain_lr=6e-3, *, epochs=650, batch_size=128,
                             lr=None, warmup_tokens=512 * 20, lr_decay=True, num_workers=4, final_tokens=None,
                             dataset=None, trainer_config="same", model_copy=False):
    """The pretrain glue with each choice a parameter; the defaults are a right answer."""
    config = TrainerConfig(max_epochs=epochs, batch_size=batch_size, learning_rate=pretrain_lr if lr is None else lr,
                           lr_decay=lr_decay, warmup_tokens=warmup_tokens,
                           final_tokens=200 * len(pretrain_dataset) * block_size if final_tokens is None
                           else final_tokens, num_workers=num_workers)
    train_dataset = pretrain_dataset if dataset is None else dataset(pretrain_dataset, block_size)
    trained = copy.deepcopy(model) if model_copy else model
    return config, Trainer(trained, train_dataset, None, config if trainer_config == "same" else TrainerConfig())


def pretrain_reordered(pretrain_dataset, block_size, model, pretrain_lr=0.006):
    tconf = TrainerConfig(num_workers=4, final_tokens=200 * len(pretrain_dataset.data) * block_size,
                          warmup_tokens=10240, lr_decay=True, learning_rate=pretrain_lr, batch_size=128,
                          max_epochs=650)
    return tconf, Trainer(model=model, train_dataset=pretrain_dataset, test_dataset=None, config=tconf)


def pretrain_config_copy(pretrain_dataset, block_size, model, pretrain_lr=6e-3):
    """The Trainer gets its own copy of the config."""
    tconf = TrainerConfig(max_epochs=650, batch_size=128, learning_rate=pretrain_lr, lr_decay=True,
                          warmup_tokens=512 * 20, final_tokens=200 * len(pretrain_dataset) * block_size,
                          num_workers=4)
    return tconf, Trainer(model, pretrain_dataset, None, dataclasses.replace(tconf))


def _another_text(pretrain_dataset, block_size):
    """A span-corruption dataset the glue builds itself from another text."""
    return CharCorruptionDatasetBase("Some other text\nthat is not the corpus given", block_size)


PT = pretrain_written_by_hand
PRETRAIN_VALID = {"reference": {}, "reordered keywords, Trainer by keyword, lr 0.006": {"pretrain": pretrain_reordered},
                  "spelled out by hand": {"pretrain": pretrain_written_by_hand},
                  "config copied for the Trainer": {"pretrain": pretrain_config_copy}}
PRETRAIN_WRONG = {
    "lr 6e-4 (the finetuning rate)": (functools.partial(PT, pretrain_lr=6e-4), "learning_rate"),
    "batch 256": (functools.partial(PT, batch_size=256), "batch_size"),
    "75 epochs": (functools.partial(PT, epochs=75), "max_epochs"),
    "warmup 512*2": (functools.partial(PT, warmup_tokens=512 * 2), "warmup_tokens"),
    "lr_decay forgotten": (functools.partial(PT, lr_decay=False), "lr_decay"),
    "final_tokens of the original corpus hard-coded": (functools.partial(PT, final_tokens=75_212_800), "final_tokens"),
    "no loader workers": (functools.partial(PT, num_workers=0), "num_workers"),
    "Trainer given a default config": (functools.partial(PT, trainer_config="default"), "the Trainer's config"),
    "trains on a dataset of another text": (functools.partial(PT, dataset=_another_text),
                                            "should train on the pretraining dataset it is given"),
    "final_tokens with the block size typed in (128)": (
        lambda dataset, block_size, model, pretrain_lr=6e-3: PT(dataset, block_size, model, pretrain_lr,
                                                               final_tokens=200 * len(dataset) * 128),
        "final_tokens"),
    "trains a deep copy of the model": (functools.partial(PT, model_copy=True), "does it train a copy?"),
}


@pytest.mark.parametrize("name", list(PRETRAIN_VALID))
def test_pretrain_valid_variant_passes(reference, grade, name):
    """Does a right pretrain glue written another way pass 04-pretrain-config on fresh inputs?"""
    parts = with_parts(reference, **PRETRAIN_VALID[name])
    for seed in SEEDS:
        assert grade("04-pretrain-config", parts, seed) == [], (name, seed)


@pytest.mark.parametrize("name", list(PRETRAIN_WRONG))
def test_pretrain_wrong_variant_fails_with_its_hint(reference, grade, name):
    """Does a plausible wrong pretrain glue fail 04-pretrain-config, naming what is wrong?"""
    pretrain, expect = PRETRAIN_WRONG[name]
    for seed in SEEDS[:2]:
        assert_fails(grade("04-pretrain-config", with_parts(reference, pretrain=pretrain), seed), expect)
