import pytest
import torch.nn.functional as F

from autograder.hidden_checks import (check_finetune_after_pretraining, check_span_corruption_hidden,
                                      check_synthesizer_hidden)


def test_reference_passes_every_hidden_check(reference):
    """Do the reference solutions pass every hidden check?"""
    check_span_corruption_hidden(reference.CharCorruptionDataset, samples=200)
    check_synthesizer_hidden(reference.SynthesizerAttention)
    check_finetune_after_pretraining(reference.initialize_vanilla_model, reference.finetune, reference.train)


def test_synthesizer_without_mask_fails(reference):
    """Does a synthesizer that forgets the causal mask fail with a hint about causality or outputs?"""

    class NoMask(reference.SynthesizerAttention):
        def forward(self, x):
            B, T, C = x.size()
            hs = C // self.n_head
            a = self.w1(x).view(B, T, self.n_head, hs).transpose(1, 2)
            v = self.value(x).view(B, T, self.n_head, hs).transpose(1, 2)
            att = F.softmax(F.relu(a) @ self.w2[:, :T] + self.b2[:T], dim=-1)
            return self.proj((att @ v).transpose(1, 2).reshape(B, T, C))

    with pytest.raises(AssertionError, match="differs|causal"):
        check_synthesizer_hidden(NoMask)


def test_span_corruption_with_fixed_mask_length_fails(reference):
    """Does a span corruption whose masked span never varies fail the hidden check?"""

    class FixedSpan(reference.CharCorruptionDataset):
        def __getitem__(self, idx):
            import random

            doc = self.data[idx][: random.randint(4, int(self.block_size * 7 / 8))]
            text = doc[:1] + self.MASK_CHAR + doc[2:] + self.MASK_CHAR + doc[1:2] + self.MASK_CHAR
            text += self.PAD_CHAR * (self.block_size - len(text))
            return self.vocab.encode(text[:-1]), self.vocab.encode(text[1:])

    with pytest.raises(AssertionError, match="quarter|random"):
        check_span_corruption_hidden(FixedSpan, samples=100)


def test_finetune_that_ignores_the_params_fails(reference):
    """Does a finetune that never loads the pretrained params fail with that hint?"""

    def lazy_finetune(reading_params_path, *args, **kwargs):
        return reference.finetune(None, *args, **kwargs)

    with pytest.raises(AssertionError):
        check_finetune_after_pretraining(reference.initialize_vanilla_model, lazy_finetune, reference.train)
