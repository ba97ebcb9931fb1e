"""The hidden test cells: the grader's own hidden checks (inputs, probe, judge), run in a notebook's kernel."""
import pytest
import torch.nn.functional as F

from autograder.checks import hidden as hidden_checks
from autograder.checks import registry
from autograder.checks.hidden import (
    check_finetune_after_pretraining,
    check_span_corruption_hidden,
    check_synthesizer_hidden,
)
from autograder.inside.probes import PROBES


def test_reference_passes_every_hidden_check(reference):
    """Do the reference solutions pass every hidden cell's check?"""
    check_span_corruption_hidden(reference.CharCorruptionDataset, seed=1)
    check_synthesizer_hidden(reference.SynthesizerAttention, seed=1)
    check_finetune_after_pretraining(reference.initialize_vanilla_model, reference.finetune, reference.train, seed=1)


def test_hidden_cells_run_the_graders_checks():
    """Does each hidden cell run exactly the inputs, probe and judge the grader runs under its grade_id?"""
    for grade_id, (inputs, probe, judge) in hidden_checks.HIDDEN.items():
        check = registry.BY_ID[grade_id]
        assert (check.inputs, PROBES[check.probe], check.judge) == (inputs, probe, judge), grade_id


def test_synthesizer_without_mask_fails(reference):
    """Does a synthesizer that forgets the causal mask fail with a hint about causality or outputs?"""

    class NoMask(reference.SynthesizerAttention):
        def forward(self, x):
            B, T, C = x.size()
            hs = C // self.n_head
            a = self.w1(x).view(B, T, self.n_head, hs).transpose(1, 2)
            v = self.value(x).view(B, T, self.n_head, hs).transpose(1, 2)
            att = self.attn_drop(F.softmax(F.relu(a) @ self.w2[:, :T] + self.b2[:T], dim=-1))
            return self.resid_drop(self.proj((att @ v).transpose(1, 2).reshape(B, T, C)))

    with pytest.raises(AssertionError, match="differs|causal"):
        check_synthesizer_hidden(NoMask, seed=2)


def test_span_corruption_with_fixed_mask_length_fails_naming_the_seed(reference):
    """Does a span corruption whose masked span never varies fail the hidden cell, naming the seed to replay?"""

    class FixedSpan(reference.CharCorruptionDataset):
        def __getitem__(self, idx):
            import random

            doc = self.data[idx][: random.randint(4, int(self.block_size * 7 / 8))]
            text = doc[:1] + self.MASK_CHAR + doc[2:] + self.MASK_CHAR + doc[1:2] + self.MASK_CHAR
            text += self.PAD_CHAR * (self.block_size - len(text))
            return self.vocab.encode(text[:-1]), self.vocab.encode(text[1:])

    with pytest.raises(AssertionError, match=r"(quarter|random).*seed 3"):
        check_span_corruption_hidden(FixedSpan, seed=3)


def test_finetune_that_ignores_the_params_fails(reference):
    """Does a finetune that never loads the pretrained params fail with that hint?"""

    def lazy_finetune(reading_params_path, *args, **kwargs):
        return reference.finetune(None, *args, **kwargs)

    with pytest.raises(AssertionError, match="max_epochs|did not load the pretrained params"):
        check_finetune_after_pretraining(reference.initialize_vanilla_model, lazy_finetune, reference.train, seed=4)
