"""The character vocabulary: decoding ids given as a tensor or as plain ints."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.gpt.vocab import Vocabulary

VOCAB = Vocabulary("Where was Ada born?\tParis\nÉmile, Zoë\n")


@settings(max_examples=60, deadline=None)
@given(ids=st.lists(st.integers(0, len(VOCAB.itos) - 1), max_size=80),
       dtype=st.sampled_from([torch.int64, torch.int32, torch.int16, torch.uint8]))
def test_decoding_a_tensor_gives_the_text_its_ints_give(ids, dtype):
    """Does decode give the same text for a 1-D tensor of ids, of any integer dtype, as for its list of ints?"""
    ids = [i for i in ids if i <= torch.iinfo(dtype).max]
    assert VOCAB.decode(torch.tensor(ids, dtype=dtype)) == VOCAB.decode(ids) == "".join(VOCAB.itos[i] for i in ids)


def test_decoding_a_slice_or_a_strided_tensor_reads_only_its_own_ids():
    """Does decode read a view (a slice, a stride) as the ids it shows, not the storage under it?"""
    ids = torch.arange(len(VOCAB.itos))
    assert VOCAB.decode(ids[2:9:3]) == "".join(VOCAB.itos[i] for i in (2, 5, 8))


def test_decoding_a_table_of_ids_is_refused_as_before():
    """Is a 2-D tensor (a batch, not one text) still refused, as when each row was read as one id?"""
    with pytest.raises((RuntimeError, ValueError, TypeError)):
        VOCAB.decode(torch.zeros(2, 3, dtype=torch.long))
