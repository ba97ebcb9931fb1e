"""Checks of the checks of the synth part (05: course_lib/checks/synth.py, and the hidden 05-synthesizer-equivalence).

Every judge of a SynthesizerAttention (05-synthesizer-public, 05-synthesizer-equivalence) or of the synthesizer
GPT (05-synthesizer-model) passes right answers written other ways and fails plausible wrong ones with a message
naming the mistake, graded as the grader grades them (tests/check_grading.py). The variants change one step of
SynthSteps, the synthesizer written out step by step; tests/autograder/checks/test_verdicts.py,
tests/autograder/checks/test_answer_families.py and benchmarks/check_false_rejection.py load this file for them.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import random

import check_grading
import pytest
import torch
import torch.nn.functional as F
from check_grading import SEEDS, assert_fails, with_parts
from torch import nn

from autograder.checks import registry
from course_lib.gpt.attention import CausalSelfAttention, SynthesizerAttentionBase
from course_lib.gpt.model import GPT, GPTConfig

# the shared fixtures, bound here for pytest to find them (imported by name, ruff would call them unused, then
# redefined by each test's arguments)
grade, prepared = check_grading.grade, check_grading.prepared


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
ATTN_DROPOUT = "apply self.attn_drop to the attention weights"
POSITION_0 = "check the causal mask, the softmax's dim (the last), the heads' split and merge"
RELU = "apply ReLU to w1's output X A_i + b1, before multiplying by B"
HEADS = "head i is columns i*hs to (i+1)*hs - 1"
NO_B2 = "b2 has no effect on your weights"


def _synth(public, hidden=None):
    """What the public check's message and the hidden check's say (the hidden one the same unless given)."""
    return {"05-synthesizer-public": public, "05-synthesizer-equivalence": public if hidden is None else hidden}


# name: (class, {grade_id: what its message must say in its first 80 characters, or PASSES}); an id not named is not
# asserted. The public
# check names the term, head or position of every mistake here but the dropout-only ones; the hidden messages say
# what differs too (issue 40: "output differs" alone told a student nothing).
SYNTH_WRONG = {
    "no causal mask": (SynthNoMask, _synth("the causal mask is missing or misplaced", POSITION_0)),
    "mask after softmax": (SynthMaskAfterSoftmax, _synth("check how values, heads and the output projection combine",
                                                         POSITION_0)),
    "no ReLU": (SynthNoRelu, _synth(RELU)),
    "ReLU after B": (SynthReluAfterB, _synth(RELU)),
    "no b2": (SynthNoB2, _synth(NO_B2)),
    "b2 added per row": (SynthB2PerRow, _synth(NO_B2)),
    "no b1": (SynthNoB1, _synth("add b1 (w1's bias)")),
    "scores scaled by 1/sqrt(hs)": (SynthScaled, _synth("divided by sqrt(head size)")),
    "scores scaled by 1/sqrt(n_embd)": (SynthScaledByEmbd, _synth("divided by sqrt(n_embd)")),
    "heads interleaved": (SynthHeadsInterleaved, _synth(HEADS)),
    "w2 and b2 sliced from the end": (SynthLastColumns, _synth("shorter sequence", "output differs first at t=1")),
    "softmax over the query dim": (SynthSoftmaxOverQueries, _synth(None, POSITION_0)),
    "no output projection": (SynthNoProjection, _synth("output projection", "before the output projection")),
    "heads merged without transposing": (SynthMergeWithoutTranspose,
                                         _synth("the causal mask is missing or misplaced", POSITION_0)),
    "heads concatenated in reverse": (SynthHeadsReversed, _synth("check how values, heads and the output projection",
                                                                 POSITION_0)),
    "attends over x, not value(x)": (SynthNoValue, _synth("check how values, heads and the output projection",
                                                          "output differs first at t=0")),
    "no attention dropout": (SynthNoAttentionDropout, _synth(ATTN_DROPOUT)),
    "no residual dropout": (SynthNoResidualDropout, {"05-synthesizer-public": "apply self.resid_drop"}),
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
            assert_fails(problems, "initialize_synthesizer_model")


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
    assert_fails(problems, "resid_pdrop and attn_pdrop differ from the config")


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
                 "initialize_synthesizer_model: another attention or other modules")

