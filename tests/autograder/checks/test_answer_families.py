"""Families of right answers, drawn by Hypothesis: every one passes its checks on every grading seed drawn.

Where a check accepts a family (any random masked length a quarter of the text on average, a span start
drawn from anywhere, dropout modules registered in any order, a synthesizer or a glue written any of the
ways students write them), a right answer is put together from choices Hypothesis draws, and graded as
``autograder grade`` grades it (``one_check``) on a grading seed it draws too.
"""
from __future__ import annotations

import random

import check_grading
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.checks import registry
from course_lib.gpt.attention import SynthesizerAttentionBase
from course_lib.gpt.model import GPT, GPTConfig

FAMILY = settings(max_examples=15, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
SEEDS = st.integers(0, 5)  # grading seeds whose inputs are made once


J_SPAN = check_grading.part_tests("span")
J_SYNTH = check_grading.part_tests("synth")
prepared = check_grading.prepared  # the fixture, for pytest to find here


@pytest.fixture(scope="module")
def grade(reference, prepared):
    """(grade_id, overrides, seed) -> the problems the grader reports."""
    return check_grading.overrides_grader(reference, prepared)


# --- span corruption: the masked length and the span's start, drawn any right way ------------------------------------

MASKED = {  # n (>= 4) -> a masked length, a quarter of n on average within SPEC's +-1.5, random
    "uniform 1..n/2-1": lambda n: random.randint(1, max(1, n // 2 - 1)),
    "uniform 1..n/2": lambda n: random.randint(1, n // 2),
    "uniform 0..n/2": lambda n: random.randint(0, n // 2),
    "gaussian n/4, sd n/8": lambda n: min(n - 1, max(1, round(random.gauss(n / 4, n / 8)))),
    "triangular around n/4": lambda n: max(1, round(random.triangular(0, n / 2, n / 4))),
    "torch uniform 1..n/2": lambda n: int(torch.randint(1, n // 2 + 1, ())),
}
START = {  # (n, masked) -> where the span starts, drawn from two or more places
    "uniform 0..n-m": lambda n, m: random.randint(0, n - m),
    "uniform 1..n-m": lambda n, m: random.randint(1, n - m) if n - m >= 1 else 0,
    "torch uniform 0..n-m": lambda n, m: int(torch.randint(0, n - m + 1, ())),
    "random() scaled": lambda n, m: int(random.random() * (n - m + 1)),
}
TRUNCATE = {  # (document, cap) -> the kept length
    "randint 4..cap": lambda doc, cap: random.randint(4, cap),
    "within the document": lambda doc, cap: random.randint(4, max(4, min(len(doc), cap))),
    "torch randint": lambda doc, cap: int(torch.randint(4, cap + 1, ())),
}


def span_family(masked: str, start: str, truncate: str, short: str):
    """A right span corruption with the drawn choices; documents under 4 characters kept whole, ``short`` saying
    how their (any) split is made."""

    class Span(J_SPAN.SpanSteps):
        def truncate(self, document):
            return document[: TRUNCATE[truncate](document, int(self.block_size * 7 / 8))]

        def split(self, text):
            n = len(text)
            if n < 4:
                m = {"all masked": n, "none masked": 0, "one masked": min(1, n)}[short]
            else:
                m = min(n, MASKED[masked](n))
            s = START[start](n, m) if n >= 4 else 0
            return text[:s], text[s:s + m], text[s + m:]

    return Span


@FAMILY
@given(st.sampled_from(list(MASKED)), st.sampled_from(list(START)), st.sampled_from(list(TRUNCATE)),
       st.sampled_from(["all masked", "none masked", "one masked"]), SEEDS)
def test_span_family_passes_the_public_check(grade, masked, start, truncate, short, seed):
    """Does every right span corruption put together from these choices pass 03-span-public on a drawn seed?"""
    parts = {"CharCorruptionDataset": span_family(masked, start, truncate, short)}
    assert grade("03-span-public", parts, seed) == []


# --- the synthesizer: every way of writing each step, and modules registered in any order -----------------------------

HEADS = {"view": lambda t, nh: t.view(*t.shape[:2], nh, -1).transpose(1, 2),
         "reshape, permute": lambda t, nh: t.reshape(*t.shape[:2], nh, -1).permute(0, 2, 1, 3)}
MERGE = {"transpose, view": lambda y: y.transpose(1, 2).contiguous().view(y.size(0), y.size(2), -1),
         "permute, reshape": lambda y: y.permute(0, 2, 1, 3).reshape(y.size(0), y.size(2), -1)}
MASK = {"masked_fill": lambda s, causal: s.masked_fill(~causal, float("-inf")),
        "where": lambda s, causal: torch.where(causal, s, torch.full_like(s, float("-inf"))),
        "additive -1e9": lambda s, causal: s + (~causal).to(s.dtype) * -1e9}
SCORES = {"matmul": lambda a, w2, b2: a @ w2 + b2,
          "einsum": lambda a, w2, b2: torch.einsum("bhtd,dl->bhtl", a, w2) + b2}
DROP = {"modules": lambda layer, att: layer.attn_drop(att),
        "F.dropout": lambda layer, att: F.dropout(att, layer.attn_drop.p, layer.training)}


def synth_family(heads: str, merge: str, mask: str, scores: str, drop: str, float64: bool):
    class Synth(SynthesizerAttentionBase):
        def forward(self, x):
            T = x.size(1)
            cast = (lambda t: t.double()) if float64 else (lambda t: t)
            w = {k: cast(v) for k, v in self.state_dict().items()}
            a = HEADS[heads](F.relu(F.linear(cast(x), w["w1.weight"], w["w1.bias"])), self.n_head)
            v = HEADS[heads](F.linear(cast(x), w["value.weight"], w["value.bias"]), self.n_head)
            causal = torch.ones(T, T, dtype=torch.bool).tril()
            s = MASK[mask](SCORES[scores](a, w["w2"][:, :T], w["b2"][:T]), causal)
            y = MERGE[merge](DROP[drop](self, torch.softmax(s, dim=-1)) @ v)
            return self.resid_drop(F.linear(y, w["proj.weight"], w["proj.bias"])).to(x.dtype)

    return Synth


@FAMILY
@given(st.sampled_from(list(HEADS)), st.sampled_from(list(MERGE)), st.sampled_from(list(MASK)),
       st.sampled_from(list(SCORES)), st.sampled_from(list(DROP)), st.booleans(), SEEDS)
def test_synthesizer_family_passes_public_and_hidden(grade, heads, merge, mask, scores, drop, float64, seed):
    """Does every right synthesizer put together from these ways of writing its steps pass the public check (its
    term cases among them) and the hidden one on a drawn seed?"""
    parts = {"SynthesizerAttention": synth_family(heads, merge, mask, scores, drop, float64)}
    assert grade("05-synthesizer-public", parts, seed) == []
    assert grade("05-synthesizer-equivalence", parts, seed) == []


MODULES = ("attn_drop", "resid_drop", "w1", "value", "proj")


def registered_in(order: tuple[str, ...]):
    """The reference's forward on a layer whose modules are registered in ``order``."""

    class Reordered(J_SYNTH.SynthSteps):
        def __init__(self, config):
            super().__init__(config)
            made = {name: getattr(self, name) for name in MODULES}
            for name in MODULES:
                delattr(self, name)
            for name in order:
                setattr(self, name, made[name])

    return Reordered


@FAMILY
@given(st.permutations(MODULES), SEEDS)
def test_synthesizer_model_passes_whatever_order_its_modules_were_made_in(grade, order, seed):
    """Does a synthesizer GPT pass 05-synthesizer-model with its attention's modules registered in any order (the
    dropout rates are compared by name)?"""
    attention = registered_in(tuple(order))
    parts = {"SynthesizerAttention": attention, "initialize_synthesizer_model": lambda mconf: GPT(mconf, attention)}
    assert grade("05-synthesizer-model", parts, seed) == []


def _config(seed: int) -> GPTConfig:
    return GPTConfig(**registry.BY_ID["05-synthesizer-model"].inputs(random.Random(seed))["config"])


# --- the finetuning glue: each choice a student makes, in any combination ---------------------------------------------

@FAMILY
@given(st.sampled_from([512 * 20, 512 * 20.0, 10240]), st.sampled_from(["given", "torch.load", "after the Trainer"]),
       st.sampled_from(["save_params", "torch.save", "trainer.model"]), st.sampled_from(["same", "copy"]), SEEDS)
def test_finetune_family_passes_both_glue_checks(grade, warmup, load, save, config, seed):
    """Does every right finetune and train put together from these choices pass 02-glue-config and
    02-glue-pretrained on a drawn seed?"""
    from course_lib.data_files import read_text
    from course_lib.gpt.checkpoint import load_params, save_params
    from course_lib.gpt.datasets import NameDataset
    from course_lib.gpt.trainer import Trainer, TrainerConfig

    def finetune(reading_params_path, finetune_corpus_path, pretrain_dataset, block_size, model, finetune_lr=6e-4):
        if reading_params_path is not None and load == "given":
            load_params(model, reading_params_path)
        elif reading_params_path is not None and load == "torch.load":
            model.load_state_dict(torch.load(reading_params_path, weights_only=True))
        tconf = TrainerConfig(max_epochs=75 if reading_params_path is None else 10, batch_size=256,
                              learning_rate=finetune_lr, lr_decay=True, warmup_tokens=warmup,
                              final_tokens=200 * len(pretrain_dataset) * block_size, num_workers=4)
        trainer = Trainer(model, NameDataset(pretrain_dataset, read_text(finetune_corpus_path)), None,
                          tconf if config == "same" else TrainerConfig(**vars(tconf)))
        if reading_params_path is not None and load == "after the Trainer":
            load_params(model, reading_params_path)
        return tconf, trainer

    def train(model, writing_params_path, trainer):
        trainer.train()
        if save == "save_params":
            save_params(model, writing_params_path)
        else:
            torch.save((trainer.model if save == "trainer.model" else model).state_dict(), writing_params_path)

    parts = {"finetune": finetune, "train": train}
    assert grade("02-glue-config", parts, seed) == []
    assert grade("02-glue-pretrained", parts, seed) == []


def test_registered_in_gives_the_order_asked_for():
    """Does ``registered_in`` make the modules in the order given (issue 40's: resid_drop before attn_drop)?"""
    order = ("resid_drop", "attn_drop", "w1", "value", "proj")
    assert tuple(name for name, _ in registered_in(order)(_config(0)).named_children()) == order
