"""Is a grade a function of the submission alone? Every registered check gives the same verdict on every grading seed.

Issue 40: ``final_tokens = 200 * len(pretrain_dataset) * 128`` passed whenever a check's toy world drew
a block size of 128, so one unchanged submission scored 45, 52 and 48 on three gradings. Here each
check of ``registry.CHECKS`` grades wrong submissions the way students write them (numbers of the handout
typed in, the issue's mistakes) on 10 grading seeds, as ``autograder grade`` does (``one_check``), and
must fail every one on every seed; the reference must pass on every seed (the span checks' right answers:
benchmarks/check_false_rejection.py, over 1,000). ``benchmarks/verdict_seeds.py`` runs this file on 40 seeds.
"""
from __future__ import annotations

import dataclasses
import functools
import os
import random

import check_grading
import pytest
import torch

from autograder.checks import registry
from course_lib.gpt.model import GPT

# issue 40's answers passed on 9 and 14 of 20 seeds: one that passes on 45% of seeds fails all 10 (and goes unseen)
# with chance 0.55^10 = 0.25%; benchmarks/verdict_seeds.py sets VERDICT_SEEDS to run the same table on 40
SEEDS = range(int(os.environ.get("VERDICT_SEEDS", "10")))


J_GLUE = check_grading.part_tests("glue")
J_SPAN = check_grading.part_tests("span")
J_SYNTH = check_grading.part_tests("synth")
prepared = check_grading.prepared  # the fixture, for pytest to find here


@pytest.fixture(scope="module")
def graded(reference, prepared):
    """(grade_id, overrides) -> the verdict (passed?) on each grading seed of SEEDS, inputs made once per seed."""
    grade = check_grading.overrides_grader(reference, prepared)
    return lambda grade_id, overrides: [grade(grade_id, overrides, seed) == [] for seed in SEEDS]


# --- wrong answers, each a typed-in number or a mistake of issue 40 --------------------------------------------------

def _finetune_typed_block(reading_params_path, finetune_corpus_path, pretrain_dataset, block_size, model,
                          finetune_lr=6e-4):
    return J_GLUE.finetune_written_by_hand(reading_params_path, finetune_corpus_path, pretrain_dataset, block_size,
                                           model, finetune_lr, final_tokens="block size typed in")


def _pretrain_typed_block(pretrain_dataset, block_size, model, pretrain_lr=6e-3):
    return J_GLUE.pretrain_written_by_hand(pretrain_dataset, block_size, model, pretrain_lr,
                                           final_tokens=200 * len(pretrain_dataset) * 128)


class SpanTypedCap(J_SPAN.SpanSteps):
    """The cap of the notebook's block of 128 typed in: random.randint(4, int(128 * 7 / 8))."""

    def kept_length(self, document):
        return random.randint(4, int(128 * 7 / 8))


class SynthTypedHeads(J_SYNTH.SynthSteps):
    """The handout's 8 heads typed in where self.n_head belongs."""

    def heads(self, t):
        B, T, C = t.size()
        return t.view(B, T, 8, C // 8).transpose(1, 2)  # (B, 8, T, C // 8)


J_TWINS = check_grading.part_tests("twins")


def _phi_typed_width(T, d):
    return J_TWINS._phi(T, d, exponent=lambda i, _: 2 * i / 16)


WRONG_TWIN = torch.zeros(6, dtype=torch.float64)  # no query a twin asks for is 0

SPAN = {"crashes on the empty document": {"CharCorruptionDataset": J_SPAN.SpanCrashesOnShortDocuments},
        "masked span always at the end": {"CharCorruptionDataset": J_SPAN.SpanMaskedAtTheEnd},
        "masked length from the drawn truncation length": {"CharCorruptionDataset": J_SPAN.SpanMaskedFromDrawnLength},
        # the statistical mistakes nearest a mean test's tolerance (issue 40: a verdict must not flip by seed)
        "masked span a sixth on average": {"CharCorruptionDataset": J_SPAN.SpanMaskedSixth},
        "masked span a third on average": {"CharCorruptionDataset": J_SPAN.SpanMaskedThird},
        "the cap of block 128 typed in": {"CharCorruptionDataset": SpanTypedCap}}
# issue 51: mistakes the public cells missed (the hidden checks took their points), now public on every seed
SPAN_PUBLIC = {**SPAN, "kept length never 4": {"CharCorruptionDataset": J_SPAN.SpanShortestNeverDrawn},
               "kept length never int(block_size * 7/8)": {"CharCorruptionDataset": J_SPAN.SpanLongestNeverDrawn},
               "round() for int() of the cap": {"CharCorruptionDataset": J_SPAN.SpanRoundedCap}}
TRAIN = {"params never loaded": {"finetune": functools.partial(J_GLUE.FT, load="never")},
         "train() trains twice": {"train": J_GLUE.train_twice},
         "train() trains a copy": {"train": J_GLUE.train_a_copy},
         "train() saves without training": {"train": J_GLUE.train_saving_untrained},
         "train() saves to another path": {"train": J_GLUE.train_saving_elsewhere}}
SYNTH = {"ReLU after B": {"SynthesizerAttention": J_SYNTH.SynthReluAfterB},
         "heads interleaved": {"SynthesizerAttention": J_SYNTH.SynthHeadsInterleaved},
         "b2 per row": {"SynthesizerAttention": J_SYNTH.SynthB2PerRow},
         "scaled by sqrt(n_embd)": {"SynthesizerAttention": J_SYNTH.SynthScaledByEmbd},
         "8 heads typed in": {"SynthesizerAttention": SynthTypedHeads}}
WRONG: dict[str, dict[str, dict]] = {
    "02-glue-config": {
        "final_tokens with block size 128 typed in": {"finetune": _finetune_typed_block},
        "init turns dropout off": {"initialize_vanilla_model": J_GLUE.init_without_dropout},
        "init builds the handout's model": {"initialize_vanilla_model": J_GLUE.init_of_the_handout},
        "lr 6e-3 after pretraining": {"finetune": functools.partial(J_GLUE.FT, after={"learning_rate": 6e-3})},
        "batch 128 after pretraining": {"finetune": functools.partial(J_GLUE.FT, after={"batch_size": 128})},
        "75 epochs after pretraining": {"finetune": functools.partial(J_GLUE.FT, epochs=(75, 75))},
        **TRAIN,
    },
    "02-glue-pretrained": {
        "final_tokens with block size 128 typed in": {"finetune": _finetune_typed_block},
        **TRAIN,
    },
    "03-span-public": SPAN_PUBLIC,
    # the hidden check samples 11,200 examples a grading: its deterministic failures (a crash, a typed-in cap, a fixed
    # position) are left to the public check, to keep this file near a minute
    "03-span-hidden": {k: v for k, v in SPAN.items() if k in ("masked length from the drawn truncation length",
                                                               "masked span a sixth on average",
                                                               "masked span a third on average")},
    "04-pretrain-config": {
        "final_tokens with block size 128 typed in": {"pretrain": _pretrain_typed_block},
        "trains a deep copy of the model": {"pretrain": functools.partial(J_GLUE.PT, model_copy=True)},
    },
    "05-synthesizer-public": SYNTH,
    "05-synthesizer-equivalence": SYNTH,
    "05-synthesizer-model": {
        "4 layers typed in": {"initialize_synthesizer_model": lambda mconf: GPT(dataclasses.replace(mconf, n_layer=4),
                                                                                  J_SYNTH.SynthSteps)},
        "dropout off": {"initialize_synthesizer_model": lambda mconf: GPT(
            dataclasses.replace(mconf, embd_pdrop=0.0, resid_pdrop=0.0, attn_pdrop=0.0), J_SYNTH.SynthSteps)},
    },
    "07-a-test": {"zero query": {"q_copy": WRONG_TWIN}},
    "07-b-test": {"identity M": {"M": torch.eye(6, dtype=torch.float64)}},
    "07-c-test": {"zero query": {"q_single": WRONG_TWIN}},
    "07-d-test": {"zero queries": {"q_1": WRONG_TWIN, "q_2": WRONG_TWIN}},
    "07-e-test": {"identity K, Q, V": {n: torch.eye(6, dtype=torch.float64) for n in ("K", "Q", "V")}},
    "08-a-test": {"identity P": {"P": torch.eye(5, dtype=torch.float64)}},
    "08-b-test": {"d typed in as 16": {"position_embeddings": _phi_typed_width},
                  "base 1000": {"position_embeddings": lambda T, d: J_TWINS._phi(T, d, base=1000.0)}},
    "08-b-hidden": {"d typed in as 16": {"position_embeddings": _phi_typed_width}},
}
def test_every_registered_check_has_wrong_answers_here():
    """Is every check of the registry graded here, so no check's verdict can depend on its seed unseen?"""
    assert set(WRONG) == {c.grade_id for c in registry.CHECKS}


# the span checks grade 7,500 and 11,200 examples: their right answers are measured over 1,000 seeds by
# benchmarks/check_false_rejection.py (FINDINGS.md), and test_span.py grades them on a few
@pytest.mark.parametrize("grade_id", [c.grade_id for c in registry.CHECKS if not c.grade_id.startswith("03")])
def test_the_reference_passes_on_every_seed(graded, grade_id):
    """Does the reference pass this check on each grading seed?"""
    assert graded(grade_id, {}) == [True] * len(SEEDS)


@pytest.mark.parametrize(("grade_id", "name"), [(g, n) for g, answers in WRONG.items() for n in answers])
def test_a_wrong_answer_fails_on_every_seed(graded, grade_id, name):
    """Does this wrong answer (a number of the handout typed in, or a mistake of issue 40) fail this check on each
    grading seed, never passing by the luck of a draw?"""
    verdicts = graded(grade_id, WRONG[grade_id][name])
    assert verdicts == [False] * len(SEEDS), [seed for seed, passed in zip(SEEDS, verdicts) if passed]
